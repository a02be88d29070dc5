#!/bin/bash
# vm: --disk img:6G --mem 2G --cpus 2
# timeout: 900
# pcdedup integrity: a member whose bytes change underneath its filesystem
# never poisons a share (every fill is checked against the key's Merkle
# tree), malformed keys are refused, and the key is dropped wherever data or
# size change. Keys come from tests/dedup/mkkey.py, not from the tool,
# with their MACs (this boot's secret, loaded by pcdedup_on).
#
# Two XFS filesystems on loop devices over image files (on an ext4 scratch
# disk) hold the same files; a member is "rewritten" by writing random bytes
# into its image file at the physical offset of its extents (filefrag), the
# image's bytes being checked first to hold the file's bytes there.
set -uo pipefail
. "$(dirname "$0")/lib-integrity.sh"

die() { fail "$1" "${2:-setup failed}"; exit 1; }
# a 13, b 9, bm 3, c 4, d 7, e 12, f 4 per bad key (13) and 1, g 2 per
# dropcase (17) and 23, g frozen owner 6, h 4, i 7
plan $((13 + 9 + 3 + 4 + 7 + 12 + 13 * 4 + 1 + 17 * 2 + 23 + 6 + 4 + 7))
pcdedup_on
echo 0 >"$sysfs/min_size"

mkfs.ext4 -q -F "$(realpath /dev/disk/by-name/img)" || die setup-img-disk
mkdir -p /mnt/img
mount /dev/disk/by-name/img /mnt/img || die setup-img-mount
i1=/mnt/img/m1.img i2=/mnt/img/m2.img
l1=$(loopfs $i1 1G /mnt/m1) || die setup-m1
l2=$(loopfs $i2 1G /mnt/m2) || die setup-m2
m1=/mnt/m1 m2=/mnt/m2

# 8 MiB - 70000 bytes: 2031 blocks, so that the level 0 key (80 + 2031 * 32
# bytes) fits in an xattr value (64 KiB; a whole 8 MiB needs 65616 bytes).
S=8318608
T=/tmp/true
mkfile $T $S
if [ "$(keyver)" = 1 ]; then
	dig=$(sha256sum <$T | cut -d' ' -f1)
else
	dig=$(python3 "$mkkey" --digest $T)
fi
MiB=1048576

# Two members of the true content, tagged at LEVEL: NAME on m1 and m2.
pair() { # NAME LEVEL
	cp $T "$m1/$1" && cp $T "$m2/$1" && tag "$m1/$1" "$2" && tag "$m2/$1" "$2"
}
# Expect a reader result LINE to hold no wrong bytes; NAME-... cases.
no_wrong() { # NAME LINE
	if [ -n "$2" ] && [ "$(field "$2" wrong)" = 0 ] && [ "$(field "$2" err)" = - ]; then
		pass "$1"
	else
		fail "$1" "${2:-no reader output}"
	fi
}
all_true() { # NAME LINE SIZE: every byte read, all true, no EIO
	if [ "$(field "$2" good)" = "$3" ] && [ "$(field "$2" eio)" = 0 ] && [ "$(field "$2" wrong)" = 0 ]; then
		pass "$1"
	else
		fail "$1" "${2:-no reader output}"
	fi
}
grew() { # NAME BEFORE AFTER
	if [ "$3" -gt "$2" ]; then pass "$1"; else fail "$1" "stayed at $2"; fi
}
mm_count() { dmesg_count 'does not match its key'; }

# === a. poisoning through fadvise(DONTNEED) ============================
pair a 0 || die a-setup
drop_caches
sh0=$(vmc open_shared) fb0=$(vmc fill_bad) vf0=$(knobc verify_failures) dm0=$(mm_count)
exec 3<$m1/a
r=$(python3 "$ipy/reader.py" $m1/a $T read)
all_true a-reader1-first-read-true "$r" $S
rm -f /tmp/a.ready /tmp/a.go
python3 "$ipy/reader.py" $m2/a $T --own /tmp/a.own read wait:/tmp/a dontneed read >/tmp/a.r2 2>&1 &
pid=$!
await /tmp/a $pid
all_true a-reader2-first-read-true "$(sed -n 1p /tmp/a.r2)" $S
check a-both-opens-shared test $(($(vmc open_shared) - sh0)) -ge 3
expect_eq a-one-share "1" "$(share_of "$dig" size | wc -l)"
expect_eq a-share-two-members 2 "$(share_of "$dig" members)"
# 2 MiB from 1 MiB on: four level 1 granules, 512 level 0 blocks.
check a-rewrite-member2-on-disk rewrite_member $m2/a $i2 "$l2" $MiB $((2 * MiB)) $T /tmp/a.own
go /tmp/a
wait $pid
# Reader 1 has the share open: reader 2's DONTNEED leaves its pages.
all_true a-reader2-dontneed-shared-keeps-true "$(sed -n 2p /tmp/a.r2)" $S
expect_eq a-dontneed-shared-no-fill-bad 0 $(($(vmc fill_bad) - fb0))
exec 3<&-
# Alone on the share, reader 2 drops its pages and fills from its member.
r=$(python3 "$ipy/reader.py" $m2/a $T dontneed read)
no_wrong a-reader2-eio-or-true-never-rewritten "$r"
echo "# a: reader 2 alone after rewrite+DONTNEED: $r"
r=$(python3 "$ipy/reader.py" $m1/a $T read)
all_true a-reader1-fresh-read-true "$r" $S
grew a-fill-bad-counted "$fb0" "$(vmc fill_bad)"
grew a-verify-failures-counted "$vf0" "$(knobc verify_failures)"
grew a-logged-does-not-match "$dm0" "$(mm_count)"

# === b. the same through reclaim (drop_caches), level 1 keys ===========
pair b 1 || die b-setup
drop_caches
fb0=$(vmc fill_bad) vf0=$(knobc verify_failures) dm0=$(mm_count)
exec 3<$m1/b
all_true b-reader1-first-read-true "$(python3 "$ipy/reader.py" $m1/b $T read)" $S
rm -f /tmp/b.ready /tmp/b.go
python3 "$ipy/reader.py" $m2/b $T --own /tmp/b.own read wait:/tmp/b read >/tmp/b.r2 2>&1 &
pid=$!
await /tmp/b $pid
all_true b-reader2-first-read-true "$(sed -n 1p /tmp/b.r2)" $S
expect_eq b-share-two-members 2 "$(share_of "$dig" members)"
check b-rewrite-member2-on-disk rewrite_member $m2/b $i2 "$l2" $((3 * MiB)) $((2 * MiB)) $T /tmp/b.own
sync
echo 1 >/proc/sys/vm/drop_caches
go /tmp/b
wait $pid
r=$(sed -n 2p /tmp/b.r2)
no_wrong b-reader2-eio-or-true-never-rewritten "$r"
echo "# b: reader 2 after rewrite+reclaim: $r"
all_true b-reader1-fresh-read-true "$(python3 "$ipy/reader.py" $m1/b $T read)" $S
grew b-fill-bad-counted "$fb0" "$(vmc fill_bad)"
grew b-verify-failures-counted "$vf0" "$(knobc verify_failures)"
grew b-logged-does-not-match "$dm0" "$(mm_count)"
exec 3<&-
# The mapping path, on a pair whose member 2 is not caught yet (a caught
# member's new opens are private and read its own bytes, as documented):
# after reclaim, pages of the rewritten range through a shared mapping of
# member 2 are true or SIGBUS, never the rewritten bytes.
pair bm 1 || die bm-setup
drop_caches
exec 3<$m1/bm
all_true bm-reader1-first-read-true "$(python3 "$ipy/reader.py" $m1/bm $T read)" $S
exec 4<$m2/bm
check bm-rewrite-member2-on-disk rewrite_member $m2/bm $i2 "$l2" $((3 * MiB)) $((2 * MiB)) $T /tmp/b.own
sync
echo 1 >/proc/sys/vm/drop_caches
python3 "$ipy/reader.py" $m2/bm $T --own /tmp/b.own mmap >/tmp/b.mm 2>&1
rc=$?
r=$(grep mmap /tmp/b.mm | tail -n 1)
echo "# b: mmap of member 2: rc=$rc $r"
if [ -n "$r" ] && [ "$(field "$r" wrong)" = 0 ] && { [ $rc = 0 ] || [ $rc = 135 ]; }; then
	pass b-mmap-sigbus-or-true
else
	fail b-mmap-sigbus-or-true "rc=$rc $r"
fi
exec 3<&- 4<&-

# === c. rewrite during a sequential read of the other member ===========
pair c 1 || die c-setup
drop_caches
H=$((S / 2 / 4096 * 4096))
rm -f /tmp/c.ready /tmp/c.go /tmp/c2.ready /tmp/c2.go
python3 "$ipy/reader.py" $m1/c $T --chunk 65536 read:0:$H wait:/tmp/c read:$H:$((S + 4096)) >/tmp/c.r1 2>&1 &
pid=$!
# Member 2 is opened (joined) before its blocks change, as in a and b: a
# kernel that checks a member only when it is opened does not catch it.
python3 "$ipy/reader.py" $m2/c $T --own /tmp/c.own wait:/tmp/c2 read:$H:$S >/tmp/c.r2 2>&1 &
pid2=$!
await /tmp/c $pid
await /tmp/c2 $pid2
all_true c-good-reader-first-half "$(sed -n 1p /tmp/c.r1)" $H
check c-rewrite-member2-second-half rewrite_member $m2/c $i2 "$l2" $H $((2 * MiB)) $T /tmp/c.own
drop_caches
# Member 2 is read first over the rewritten range: its fills come from it.
go /tmp/c2
wait $pid2
r=$(sed -n 1p /tmp/c.r2)
no_wrong c-bad-member-reader-eio-or-true "$r"
echo "# c: member 2 reader: $r"
go /tmp/c
wait $pid
r=$(sed -n 2p /tmp/c.r1)
all_true c-good-reader-rest-all-true "$r" $((S - H))
echo "# c: good reader, second half: $r"

# === d. a member changed offline ========================================
pair d 0 || die d-setup
member_map $m2/d /tmp/d.map || die d-map
umount $m2 || die d-umount
check d-rewrite-offline rewrite_at /tmp/d.map $i2 "$l2" $((2 * MiB)) $MiB $T /tmp/d.own
mount "$l2" $m2 || die d-mount
drop_caches
fb0=$(vmc fill_bad) rm0=$(vmc open_refused_mismatch)
exec 3<$m1/d
r=$(python3 "$ipy/reader.py" $m2/d $T --own /tmp/d.own read)
no_wrong d-bad-member-eio-or-true "$r"
echo "# d: bad member reader: $r"
all_true d-good-member-all-true "$(python3 "$ipy/reader.py" $m1/d $T read)" $S
grew d-fill-bad-counted "$fb0" "$(vmc fill_bad)"
r=$(python3 "$ipy/reader.py" $m2/d /tmp/d.own read)
grew d-later-open-private "$rm0" "$(vmc open_refused_mismatch)"
all_true d-later-open-reads-own-bytes "$r" $S
all_true d-good-member-still-true "$(python3 "$ipy/reader.py" $m1/d $T read)" $S
exec 3<&-

# === e. a member shorter than its key ===================================
# e1: i_size cut offline with xfs_db; the key still names the whole file.
X=$((S - 100000))
pair e 0 || die e-setup
ino=$(stat -c %i $m2/e)
umount $m2 || die e-umount
xfs_db -x -c "inode $ino" -c "write core.size $X" "$l2" >/dev/null || fail e1-xfs-db "write core.size failed"
blockdev --flushbufs "$l2"
mount "$l2" $m2 || die e-mount
drop_caches
rs0=$(vmc open_refused_size)
exec 3<$m1/e
cat $m1/e >/dev/null
r=$(python3 "$ipy/reader.py" $m2/e $T read)
expect_eq e1-short-member-size $X "$(field "$r" size)"
expect_eq e1-short-member-eof-at-size $X "$(field "$r" eof)"
no_wrong e1-short-member-true-prefix "$r"
expect_eq e1-short-member-no-zeros 0 "$(field "$r" zeros)"
grew e1-refused-size-counted "$rs0" "$(vmc open_refused_size)"
all_true e1-good-member-true "$(python3 "$ipy/reader.py" $m1/e $T read)" $S
exec 3<&-
# e2: a key built for a longer file, set on a shorter one.
head -c $X $T >$m2/e2
cp $T $m1/e2
tag $m1/e2 0
tagfrom $T $m2/e2
rs0=$(vmc open_refused_size)
exec 3<$m1/e2
cat $m1/e2 >/dev/null
r=$(python3 "$ipy/reader.py" $m2/e2 $T read)
expect_eq e2-longer-key-eof-at-size "$X $X" "$(field "$r" size) $(field "$r" eof)"
no_wrong e2-longer-key-true-prefix "$r"
grew e2-refused-size-counted "$rs0" "$(vmc open_refused_size)"
exec 3<&-
# e3: the right size, but the last 1 MiB + 70000 bytes are a hole.
head -c $((7 * MiB)) $T >$m2/e3
truncate -s $S $m2/e3
cp $T $m1/e3
tag $m1/e3 0
tagfrom $T $m2/e3 || fail e3-set-key "setxattr failed"
drop_caches
exec 3<$m1/e3
r=$(python3 "$ipy/reader.py" $m2/e3 $T read)
no_wrong e3-hole-member-eio-or-true "$r"
expect_eq e3-hole-member-no-zeros-as-data 0 "$(field "$r" zeros)"
echo "# e3: hole member reader: $r"
all_true e3-good-member-true "$(python3 "$ipy/reader.py" $m1/e3 $T read)" $S
exec 3<&-

# === f. old, malformed and inconsistent keys ============================
head -c 300000 /dev/urandom >/tmp/f.true
# 300000 bytes: 74 blocks, root on level 1.
badkey() { # NAME COUNTER MKKEY-OPTIONS...
	local n=$1 c=$2 c0 s0
	shift 2
	cp /tmp/f.true "$m1/f-$n"
	cp /tmp/f.true "$m2/f-$n"
	if ! python3 "$mkkey" "$@" --set "$m1/f-$n" || ! python3 "$mkkey" "$@" --set "$m2/f-$n"; then
		fail "f-$n-set" "setxattr refused"
		return
	fi
	drop_caches
	c0=$(vmc "$c") s0=$(vmc open_shared)
	check "f-$n-member1-own-bytes" cmp "$m1/f-$n" /tmp/f.true
	check "f-$n-member2-own-bytes" cmp "$m2/f-$n" /tmp/f.true
	expect_eq "f-$n-not-shared" 0 $(($(vmc open_shared) - s0))
	grew "f-$n-counted-$c" "$c0" "$(vmc "$c")"
}
badkey v1 key_old --version 1
badkey v2 key_old --version 2
badkey bad-mac key_unauthenticated --bad-mac
badkey short key_invalid --truncate-bytes 1
badkey short-hash key_invalid --truncate-bytes 32
badkey long key_invalid --extra-bytes 32
badkey long-byte key_invalid --extra-bytes 1
badkey above-root key_invalid --level-above-root
badkey reserved key_invalid --reserved
badkey size-zero key_invalid --size 0
badkey tree-flip-l0 tree_invalid --flip-tree-byte 100
badkey tree-flip-l0-last tree_invalid --flip-tree-byte $((74 * 32 - 1))
badkey tree-flip-root tree_invalid --level 1 --flip-tree-byte 0
# A v1 key with the right size and digest over an own-byte member: the
# same content under a current key elsewhere never joins it.
cp /tmp/f.true $m1/f-v2
tag $m1/f-v2 0
s0=$(vmc open_shared)
exec 3<$m1/f-v2
s1=$(vmc open_shared)
cat $m2/f-v1 >/dev/null
# The current key's open is shared (the share is there), the v1 one not.
expect_eq f-v1-beside-v2-share-not-shared "v2 1, v1 0" "v2 $((s1 - s0)), v1 $(($(vmc open_shared) - s1))"
exec 3<&-

# === g. key lifecycle ====================================================
mkdir -p $m1/g
head -c 65659 /dev/urandom >$m1/g/src
G=$m1/g
fresh() { # FILE: a tagged copy of $G/src
	rm -f "$1"
	cp $G/src "$1" && tag "$1" 0
}
# FILE exists and has no key (getfattr says so: not any other failure).
nokey() {
	local out
	! out=$(getfattr -n trusted.pcdedup "$1" 2>&1) && grep -q 'No such attribute' <<<"$out"
}
# dropcase NAME CMD...: CMD (with the file as last argument) drops the key.
dropcase() {
	local n=$1 f=$G/$1 d0 out
	shift
	fresh "$f" || { fail "g-$n-setup" "tag failed"; return; }
	d0=$(vmc key_dropped)
	if ! out=$("$@" "$f" 2>&1); then
		fail "g-$n-op" "$* -> $out"
		return
	fi
	if nokey "$f"; then pass "g-$n-drops-key"; else fail "g-$n-drops-key" "key still set, or no file: $(getfattr -n trusted.pcdedup "$f" 2>&1)"; fi
	grew "g-$n-key-dropped-counted" "$d0" "$(vmc key_dropped)"
}
py() { python3 -c "import fcntl, mmap, os, struct, sys; f = sys.argv[-1]; $1" "${@:2}"; }
# shellcheck disable=SC2016 # expanded by sh -c
dropcase write sh -c 'echo x >>"$1"' _
dropcase pwrite py 'fd = os.open(f, os.O_WRONLY); os.pwrite(fd, b"x", 100)'
dropcase writev py 'fd = os.open(f, os.O_WRONLY); os.writev(fd, [b"ab", b"cd"])'
# shellcheck disable=SC2016
dropcase o-trunc sh -c ': >"$1"' _
dropcase truncate-path py 'os.truncate(f, 100)'
dropcase ftruncate py 'fd = os.open(f, os.O_RDWR); os.ftruncate(fd, 100)'
dropcase truncate-cmd truncate -s 100
dropcase fallocate-extend fallocate -o 65659 -l 65536
dropcase fallocate-keep-size fallocate -n -o 65659 -l 65536
dropcase fallocate-punch-hole fallocate -p -o 4096 -l 4096
dropcase fallocate-zero-range fallocate -z -o 4096 -l 4096
dropcase fallocate-collapse fallocate -c -o 4096 -l 4096
dropcase fallocate-insert fallocate -i -o 4096 -l 4096
dropcase copy-file-range-into py "s = os.open('$G/src', os.O_RDONLY); d = os.open(f, os.O_WRONLY); assert os.copy_file_range(s, d, 4096, 0, 0) == 4096"
dropcase ficlone-into py "s = os.open('$G/src', os.O_RDONLY); d = os.open(f, os.O_WRONLY); fcntl.ioctl(d, 0x40049409, s)"
dropcase ficlonerange-into py "s = os.open('$G/src', os.O_RDONLY); d = os.open(f, os.O_WRONLY); fcntl.ioctl(d, 0x4020940d, struct.pack('qQQQ', s, 0, 4096, 4096))"
# A writable shared mapping drops the key when it is created.
dropcase mmap-shared-write py '
fd = os.open(f, os.O_RDWR)
m = mmap.mmap(fd, 0, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
try:
    os.getxattr(f, "trusted.pcdedup")
    sys.exit("key still set with a writable shared mapping (before any write)")
except OSError:
    pass
m[0:1] = b"z"
m.flush()'
# An open for write alone, writing nothing.
fresh $G/wo
d0=$(vmc key_dropped)
py 'os.close(os.open(f, os.O_WRONLY))' $G/wo
py 'os.close(os.open(f, os.O_RDWR))' $G/wo
# An open for write is where data changes start: it drops the key, once.
if nokey $G/wo; then
	pass g-open-for-write-alone-drops-key
else
	fail g-open-for-write-alone-drops-key "key still set, or no file"
fi
expect_eq g-open-for-write-alone-dropped-once 1 $(($(vmc key_dropped) - d0))
check g-open-for-write-alone-same-bytes cmp $G/wo $G/src
# setfattr of the key: ETXTBSY while open for write, through a writable
# shared mapping whose fd is closed, or through a share.
settag() { setfattr -n trusted.pcdedup -v "$(python3 "$mkkey" --hex "$1")" "$1"; }
cp $G/src $G/busy
exec 4>>$G/busy
if out=$(settag $G/busy 2>&1); then
	fail g-setfattr-open-for-write-etxtbsy "set"
else
	check g-setfattr-open-for-write-etxtbsy grep -q 'Text file busy' <<<"$out"
fi
echo more >&4
exec 4>&-
check g-early-fd-write-no-key nokey $G/busy
check g-early-fd-write-reads-own-bytes cmp $G/busy <(cat $G/src; echo more)
cp $G/src $G/mapped
rm -f /tmp/g.ready /tmp/g.go
py '
fd = os.open(f, os.O_RDWR)
m = mmap.mmap(fd, 0, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
os.close(fd)
open("/tmp/g.ready", "w").close()
while not os.path.exists("/tmp/g.go"):
    pass' $G/mapped &
pid=$!
await /tmp/g $pid
if out=$(settag $G/mapped 2>&1); then
	fail g-setfattr-shared-mapping-etxtbsy "set"
else
	check g-setfattr-shared-mapping-etxtbsy grep -q 'Text file busy' <<<"$out"
fi
go /tmp/g
wait $pid
fresh $G/viashare
exec 4<$G/viashare
if out=$(settag $G/viashare 2>&1); then
	fail g-setfattr-open-through-share-etxtbsy "set"
else
	check g-setfattr-open-through-share-etxtbsy grep -q 'Text file busy' <<<"$out"
fi
# Removing it too: the member would leave its share unseen by later writes.
if out=$(setfattr -x trusted.pcdedup $G/viashare 2>&1); then
	fail g-removexattr-open-through-share-etxtbsy "removed"
else
	check g-removexattr-open-through-share-etxtbsy grep -q 'Text file busy' <<<"$out"
fi
exec 4<&-
check g-setfattr-idle-succeeds settag $G/viashare
# open(O_RDONLY | O_TRUNC) of an idle tagged file truncates it.
fresh $G/rotrunc
check g-rdonly-otrunc-succeeds py 'os.close(os.open(f, os.O_RDONLY | os.O_TRUNC))' $G/rotrunc
expect_eq g-rdonly-otrunc-truncates 0 "$(stat -c %s $G/rotrunc)"
check g-rdonly-otrunc-no-key nokey $G/rotrunc
# overlayfs: truncate by path of an upper file carrying a key.
mkdir -p $m1/ovl/lower $m1/ovl/upper $m1/ovl/work /mnt/ovl
cp $G/src $m1/ovl/upper/u1
cp $G/src $m1/ovl/upper/u2
tag $m1/ovl/upper/u1 0
tag $m1/ovl/upper/u2 0
if mount -t overlay overlay -o lowerdir=$m1/ovl/lower,upperdir=$m1/ovl/upper,workdir=$m1/ovl/work /mnt/ovl; then
	d0=$(vmc key_dropped)
	check g-overlay-truncate-path py 'os.truncate(f, 100)' /mnt/ovl/u1
	check g-overlay-truncate-path-drops-upper-key nokey $m1/ovl/upper/u1
	check g-overlay-truncate-cmd truncate -s 100 /mnt/ovl/u2
	check g-overlay-truncate-cmd-drops-upper-key nokey $m1/ovl/upper/u2
	grew g-overlay-key-dropped-counted "$d0" "$(vmc key_dropped)"
	umount /mnt/ovl
else
	fail g-overlay-mount "mount failed"
fi
# O_RDWR open on a frozen filesystem returns at once and is killable.
fresh $G/frozen
w0=$(dmesg_count 'WARNING')
sync
fsfreeze -f $m1
t0=$(date +%s%N)
timeout -s KILL 10 python3 -c 'import os, sys; os.close(os.open(sys.argv[1], os.O_RDWR))' $G/frozen &
pid=$!
for _ in $(seq 50); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
if kill -0 $pid 2>/dev/null; then
	fail g-frozen-ordwr-returns "still in open after 5 s"
	kill -9 $pid
	for _ in $(seq 50); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
	if kill -0 $pid 2>/dev/null; then fail g-frozen-ordwr-killable "alive 5 s after SIGKILL"; else pass g-frozen-ordwr-killable; fi
	fsfreeze -u $m1
	wait $pid
else
	wait $pid
	rc=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
	check g-frozen-ordwr-returns test $ms -lt 5000
	expect_eq g-frozen-ordwr-succeeds 0 $rc
	pass g-frozen-ordwr-killable
	fsfreeze -u $m1
fi
expect_eq g-frozen-no-warning "$w0" "$(dmesg_count 'WARNING')"
check g-thawed-write sh -c "echo x >>$G/frozen"
# The file's owner (uid 1000, 64 descriptors at most) opening its tagged
# file for write 5000 times on a frozen filesystem: one deferred key drop
# for the inode, one file kept, no worker asleep on the filesystem; the key
# is gone soon after the thaw and the kept file released.
fresh $G/frozen2
chown 1000:1000 $G/frozen2
sync
d_workers() { ps -eo stat=,comm= | awk '$1 ~ /^D/ && $2 ~ /^kworker/' | wc -l; }
nr_files() { cut -f1 /proc/sys/fs/file-nr; }
k0=$(d_workers) f0=$(nr_files) t0=$(vmc key_thaw_deferred) || t0=
fsfreeze -f $m1
check g-frozen-owner-opens-return timeout -s KILL 60 setpriv --reuid 1000 --regid 1000 --clear-groups \
	python3 -c 'import os, resource, sys
resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
for _ in range(5000):
    os.close(os.open(sys.argv[1], os.O_WRONLY))' $G/frozen2
sleep 2
k1=$(d_workers) f1=$(nr_files) t1=$(vmc key_thaw_deferred) || t1=
echo "# frozen, after 5000 opens for write: files +$((f1 - f0)), kworkers in D $k0 -> $k1, deferrals ${t0:-?} -> ${t1:-?}"
check g-frozen-owner-keeps-one-file test $((f1 - f0)) -lt 100
check g-frozen-no-worker-asleep test "$k1" -le $((k0 + 1))
if [ -n "$t0" ] && [ -n "$t1" ]; then
	expect_eq g-frozen-one-deferral-per-inode 1 $((t1 - t0))
else
	fail g-frozen-one-deferral-per-inode "no pcdedup_key_thaw_deferred counter"
fi
fsfreeze -u $m1
gone=1
for _ in $(seq 50); do nokey $G/frozen2 && { gone=0; break; }; sleep 0.1; done
check g-thawed-owner-key-dropped test $gone = 0
f2=$(nr_files)
echo "# thawed: files $f0 -> $f2"
check g-thawed-kept-file-released test $((f2 - f0)) -lt 100

# === h. SIGKILL while waiting on a fill of a large member ================
bigsum=$(head -c 200M /dev/urandom | tee $m1/big | sha256sum)
cp $m1/big $m2/big
tag $m1/big 1
tag $m2/big 1
sync
drop_caches
# The reader opens the file (through its share), reads its first MiB,
# says so (/tmp/h.ready), and reads on; it marks the end of the file
# (/tmp/h.done), which it must not reach. SIGKILL comes once it is ready
# and waiting in the kernel (state D: a fill's killable wait).
rm -f /tmp/h.ready /tmp/h.done
sh0=$(vmc open_shared)
python3 -c 'import sys
f = open(sys.argv[1], "rb", buffering=0)
f.read(1 << 20)
open("/tmp/h.ready", "w").close()
while f.read(1 << 20):
    pass
open("/tmp/h.done", "w").close()' $m1/big &
pid=$!
await /tmp/h $pid
shared=$(($(vmc open_shared) - sh0))
state=
for _ in $(seq 200); do
	state=$(awk '{print $3}' /proc/$pid/stat 2>/dev/null)
	[ "$state" != D ] || break
	sleep 0.02
done
kill -9 $pid
t0=$(date +%s%N)
for _ in $(seq 100); do kill -0 $pid 2>/dev/null || break; sleep 0.05; done
if kill -0 $pid 2>/dev/null; then
	fail h-sigkill-reader-exits "alive 5 s after SIGKILL"
	wait $pid
else
	pass h-sigkill-reader-exits
fi
wait $pid
rc=$?
echo "# h: exited $((($(date +%s%N) - t0) / 1000000)) ms after SIGKILL"
# The kill landed where this case means it to: after the open through the
# share, in the kernel, before the end of the file, and it killed.
done=$([ -e /tmp/h.done ] && echo "reached the end" || echo "mid-file")
expect_eq h-killed-mid-fill "ready, shared 1, state D, mid-file, rc 137" \
	"$([ -e /tmp/h.ready ] && echo ready || echo "not ready"), shared $shared, state ${state:-gone}, $done, rc $rc"
# The other member still reads true bytes afterwards.
expect_eq h-other-member-reads-true "$bigsum" "$(sha256sum <$m2/big)"
expect_eq h-killed-member-reads-true "$bigsum" "$(sha256sum <$m1/big)"

# === i. folios handed to a fill from a member that turns out bad =======
# A fill owns the granules it reads: a reader that locks a page in one of
# them while it is in flight hands its folio to it and waits. When the
# owner's member fails its check, that folio is not made uptodate, and its
# reader fills it from its own member. m3's reads are delayed (dm-delay)
# so that the owner is still reading when the second reader comes; a page
# kept mapped splits the owner's granule, so that the second reader finds
# a page of it missing.
i3=/mnt/img/m3.img m3=/mnt/m3 slow=pcdedup-slow
truncate -s 1G $i3
l3=$(losetup -f --show $i3) || die i-setup-loop
delay() { # READ_DELAY_MS
	dmsetup suspend $slow && dmsetup reload $slow --table "0 $(blockdev --getsz "$l3") delay $l3 0 $1" &&
		dmsetup resume $slow
}
slowfs() { # an XFS on dm-delay over l3 at m3, reads not delayed yet
	dmsetup create $slow --table "0 $(blockdev --getsz "$l3") delay $l3 0 0" &&
		dmsetup mknodes $slow && mkfs.xfs -q -f /dev/mapper/$slow >/dev/null &&
		mkdir -p $m3 && mount /dev/mapper/$slow $m3
}
slowfs || die i-setup-m3
tagcopy() { cp $T "$1" && tag "$1" 1; }
tagcopy $m1/i || die i-setup-m1
tagcopy $m3/i || die i-setup-m3-file
# The first 512 KiB, granule 0, rewritten on m3.
check i-rewrite-member3-on-disk rewrite_member $m3/i $i3 "$l3" 0 $((512 * 1024)) $T /tmp/i.own
blockdev --flushbufs /dev/mapper/$slow
drop_caches
hb0=$(vmc fill_handed) fb0=$(vmc fill_bad)
rm -f /tmp/i*.ready /tmp/i*.go
# Page 100 alone, mapped: a fault without read-around fills granule 0 from
# m1 in single pages, and dropping the cache keeps only the mapped one.
python3 -c 'import mmap, os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
m = mmap.mmap(fd, 0, prot=mmap.PROT_READ)
m.madvise(mmap.MADV_RANDOM)
m[100 * 4096]
open("/tmp/im.ready", "w").close()
while not os.path.exists("/tmp/im.go"):
    time.sleep(0.05)' $m1/i &
mpid=$!
python3 "$ipy/reader.py" $m3/i $T --own /tmp/i.own wait:/tmp/ia read:0:4096 >/tmp/i.ra 2>&1 &
apid=$!
await /tmp/im $mpid || die i-setup-mapper
await /tmp/ia $apid || die i-setup-reader
echo 1 >/proc/sys/vm/drop_caches
delay 6000 || die i-setup-delay
# Reader A, on m3, misses page 0: its fill owns granule 0 and waits 6 s
# for m3 (A sleeps in D state on its folio meanwhile). Then page 100 is
# dropped, and reader B, on m1, misses it.
go /tmp/ia
for _ in $(seq 60); do
	[ "$(awk '{print $3}' /proc/$apid/stat 2>/dev/null)" = D ] && break
	sleep 0.05
done
go /tmp/im
wait $mpid
echo 1 >/proc/sys/vm/drop_caches
rb=$(python3 "$ipy/reader.py" $m1/i $T read:409600:413696)
wait $apid
ra=$(cat /tmp/i.ra)
delay 0
echo "# i: reader A (m3): $ra; reader B (m1): $rb; pages handed: $(($(vmc fill_handed) - hb0))"
grew i-folio-handed-to-owner "$hb0" "$(vmc fill_handed)"
all_true i-good-member-reader-true "$rb" 4096
# Its page 0 is EIO, or true when another member's fill took it first.
no_wrong i-bad-member-reader-eio-or-true "$ra"
grew i-fill-bad-counted "$fb0" "$(vmc fill_bad)"
vf0=$(vmc fill_verified)
all_true i-good-member-all-true "$(python3 "$ipy/reader.py" $m1/i $T read)" $S
# The folios the failed fill left not uptodate are taken into the next fill
# of their granule, not each filled alone, reading the granule again: at
# most the file's 16 granules are checked (and one more, when a reader
# held one of those folios locked then); at least 12: before this read
# only the pages around page 0 and page 100 (granules 0 and 1) were read.
vf=$(($(vmc fill_verified) - vf0))
echo "# i: granule checks reading the whole file afterwards: $vf"
check i-left-folios-refilled-once sh -c "[ $vf -ge 12 ] && [ $vf -le 17 ]"
umount $m3
dmsetup remove $slow
losetup -d "$l3"

umount $m1 $m2
losetup -d "$l1" "$l2"
