# shellcheck shell=bash
# Helpers for tests/dedup/integrity.sh: XFS filesystems on loop devices over
# image files, rewriting a member's blocks underneath its filesystem, and a
# reader that classifies every chunk it gets (true bytes, EIO, wrong bytes).
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

mkkey=$(dirname "${BASH_SOURCE[0]}")/mkkey.py
ipy=${TMPDIR:-/tmp}/integrity-py
mkdir -p "$ipy"

# A counter or knob, as lib.sh reads it: one that is missing fails the
# case that reads it (it never reads as 0).
vmc() { vmstat "$1"; }
knobc() { knob "$1"; }
dmesg_count() { dmesg | grep -c -- "$1" || true; }

# Tag FILE with its key (level LEVEL, default 0), a version 3 key with its
# MAC, made with this boot's secret (lib.sh). PCDEDUP_INTEGRITY_KEYS=v1 or
# v2 writes keys of that older version instead: on a kernel of an older
# series that shares them, the poisoning cases show the bug itself.
keyver() { local v=${PCDEDUP_INTEGRITY_KEYS:-v3}; echo "${v#v}"; }
tag() { # FILE [LEVEL]
	if [ "$(keyver)" = 1 ]; then
		python3 "$mkkey" --version 1 --set "$1"
	else
		python3 "$mkkey" --version "$(keyver)" --level "${2:-0}" --set "$1"
	fi
}
# Set the key of SOURCE's content (level 0, or of the version above) on
# TARGET, its MAC made for TARGET: a key the host made wrongly, which the
# kernel takes, not a copied one, which it would refuse before any check.
tagfrom() { # SOURCE TARGET
	case $(keyver) in
	1 | 2) python3 "$mkkey" --version "$(keyver)" --set --target "$2" "$1" ;;
	*) python3 "$mkkey" --set --target "$2" --mac-for "$2" "$1" ;;
	esac
}
# share_of DIGEST FIELD: FIELD (size, members, openers, cached_pages) of
# each share of the fs-verity digest DIGEST, one line each (pcdedup status
# --json, lib.sh); nothing when none has it.
share_of() { _kread share "$1" "$2"; }

# Wait (up to 300 s) for NAME.ready, written by a reader's "wait:NAME" step.
await() { # NAME [PID]: fails early when PID exits
	local _
	for _ in $(seq 3000); do
		[ -e "$1.ready" ] && return 0
		if [ -n "${2:-}" ] && ! kill -0 "$2" 2>/dev/null; then
			echo "await: process $2 exited before $1.ready" >&2
			return 1
		fi
		sleep 0.1
	done
	echo "await: $1.ready never appeared" >&2
	return 1
}
go() { touch "$1.go"; }

# An XFS filesystem on a loop device over IMAGE, mounted at MNT. Prints the
# loop device.
loopfs() { # IMAGE SIZE MNT
	local dev
	truncate -s "$2" "$1"
	dev=$(losetup -f --show "$1") || return 1
	mkfs.xfs -q -f "$dev" >/dev/null || return 1
	mkdir -p "$3"
	mount "$dev" "$3" || return 1
	echo "$dev"
}

# reader FILE TRUE [--own OWN] [--chunk N] STEP...
# Opens FILE once; steps: read[:START:END] (pread in chunks, each compared
# with TRUE; prints "readN good=BYTES eio=CHUNKS wrong=CHUNKS own=CHUNKS
# zeros=CHUNKS eof=OFF size=ST_SIZE err=..."), dontneed (fadvise), wait:NAME
# (create NAME.ready, wait for NAME.go), mmap (compare page by page through
# a shared mapping; a SIGBUS ends the process, "mmap-progress" lines tell
# how far it got).
cat >"$ipy/reader.py" <<'EOF'
import errno, mmap, os, sys, time
args = sys.argv[1:]
path, truef = args.pop(0), args.pop(0)
ownf, own, chunk = None, None, 4096
while args and args[0].startswith("--"):
    opt = args.pop(0)
    if opt == "--own":
        ownf = args.pop(0)
    elif opt == "--chunk":
        chunk = int(args.pop(0))
true = open(truef, "rb").read()
fd = os.open(path, os.O_RDONLY)
size = os.fstat(fd).st_size
n = 0
for step in args:
    if step.startswith("read"):
        n += 1
        parts = step.split(":")
        start = int(parts[1]) if len(parts) > 1 else 0
        end = int(parts[2]) if len(parts) > 2 else max(size, len(true)) + chunk
        good = eio = wrong = owns = zeros = 0
        eof, err, first_wrong = -1, "", -1
        off = start
        while off < end:
            want = min(chunk, end - off)
            try:
                b = os.pread(fd, want, off)
            except OSError as e:
                if e.errno != errno.EIO:
                    err = errno.errorcode.get(e.errno, str(e.errno))
                    break
                eio += 1
                off += want
                continue
            if not b:
                eof = off
                break
            t = true[off:off + len(b)]
            if b == t:
                good += len(b)
            else:
                wrong += 1
                if first_wrong < 0:
                    first_wrong = off
                if ownf and own is None:
                    own = open(ownf, "rb").read()
                if own is not None and b == own[off:off + len(b)]:
                    owns += 1
                # Zeros presented as data: a zero chunk, or zeros past the
                # end of the true content.
                if b == bytes(len(b)) or (len(b) > len(t) and
                                          b[len(t):] == bytes(len(b) - len(t))):
                    zeros += 1
            off += len(b)
        print("read%d good=%d eio=%d wrong=%d own=%d zeros=%d eof=%d size=%d "
              "first_wrong=%d err=%s" % (n, good, eio, wrong, owns, zeros, eof,
                                        size, first_wrong, err or "-"),
              flush=True)
    elif step == "dontneed":
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    elif step.startswith("wait:"):
        name = step[5:]
        open(name + ".ready", "w").close()
        while not os.path.exists(name + ".go"):
            time.sleep(0.05)
    elif step == "mmap":
        m = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ)
        good = wrong = owns = 0
        for off in range(0, size, 4096):
            b = m[off:off + 4096]
            if b == true[off:off + 4096]:
                good += 1
            else:
                wrong += 1
                if ownf and own is None:
                    own = open(ownf, "rb").read()
                if own is not None and b == own[off:off + len(b)]:
                    owns += 1
            if off % (256 * 4096) == 0 or wrong:
                print("mmap-progress good=%d wrong=%d own=%d" % (good, wrong, owns), flush=True)
        print("mmap good=%d wrong=%d own=%d" % (good, wrong, owns), flush=True)
EOF
# field LINE KEY: the value of KEY=VALUE in LINE.
field() { tr ' ' '\n' <<<"$1" | sed -n "s/^$2=//p"; }

# rewrite.py map FILE: FILE's extents (filefrag) as "logical physical length"
# in 4 KiB blocks. rewrite.py write MAPFILE IMAGE OFFSET DATAFILE TRUEFILE:
# check that IMAGE holds TRUEFILE's bytes where the map says (the mapping is
# right), write DATAFILE's bytes there (the same range of the file, block
# aligned OFFSET), fsync, read back.
cat >"$ipy/rewrite.py" <<'EOF'
import os, re, subprocess, sys
B = 4096
if sys.argv[1] == "map":
    out = subprocess.run(["filefrag", "-s", "-v", "-b4096", sys.argv[2]],
                         check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        m = re.match(r"\s*\d+:\s+(\d+)\.\.\s*(\d+):\s+(\d+)\.\.\s*(\d+):\s+(\d+):(.*)", line)
        if m:
            if "unknown" in m.group(6) or "delalloc" in m.group(6):
                sys.exit("extent not allocated: " + line)
            print(m.group(1), m.group(3), m.group(5))
    sys.exit(0)
_, _, mapf, image, offset, dataf, truef = sys.argv
ext = [tuple(map(int, l.split())) for l in open(mapf)]
offset = int(offset)
data = open(dataf, "rb").read()
true = open(truef, "rb").read()
assert offset % B == 0
def phys(lblk):
    for lo, po, n in ext:
        if lo <= lblk < lo + n:
            return po + lblk - lo
    sys.exit("block %d not mapped" % lblk)
fd = os.open(image, os.O_RDWR)
for i in range(0, len(data), B):
    p = phys((offset + i) // B) * B
    n = min(B, len(data) - i)
    if os.pread(fd, n, p) != true[offset + i:offset + i + n]:
        sys.exit("image at %d does not hold the file's bytes at %d" % (p, offset + i))
for i in range(0, len(data), B):
    os.pwrite(fd, data[i:i + B], phys((offset + i) // B) * B)
os.fsync(fd)
for i in range(0, len(data), B):
    if os.pread(fd, min(B, len(data) - i), phys((offset + i) // B) * B) != data[i:i + B]:
        sys.exit("read back differs at %d" % (offset + i))
print("rewrote %d bytes at file offset %d" % (len(data), offset))
EOF

# FILE's extents, saved to MAP (while it is mounted).
member_map() { # FILE MAP
	sync
	python3 "$ipy/rewrite.py" map "$1" >"$2"
}
# Rewrite LEN random bytes at OFFSET (block aligned) of the file whose
# extents are in MAP, in IMAGE, underneath the filesystem; OWN becomes TRUE
# with those bytes, i.e. what the file now holds on disk.
rewrite_at() { # MAP IMAGE LOOPDEV OFFSET LEN TRUE OWN
	local data=$ipy/data.$$
	head -c "$5" /dev/urandom >"$data"
	python3 "$ipy/rewrite.py" write "$1" "$2" "$4" "$data" "$6" || return 1
	cp "$6" "$7"
	dd if="$data" of="$7" bs=4096 seek=$(($4 / 4096)) conv=notrunc status=none
	# The loop device reads the image through its page cache, which the
	# write above went through; its own buffer cache is dropped too.
	blockdev --flushbufs "$3"
	rm -f "$data"
}
# The same on a mounted member: FILE IMAGE LOOPDEV OFFSET LEN TRUE OWN.
rewrite_member() {
	member_map "$1" "$ipy/map.$$" || return 1
	rewrite_at "$ipy/map.$$" "${@:2}"
}
