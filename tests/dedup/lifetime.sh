#!/bin/bash
# vm: --disk img:3G --mem 2G --cpus 2
# kernels: patched
# timeout: 1500
# pcdedup fills and what they hold, cost and charge:
#  1. lifetimes: a fill pins the member file (and mount) it reads. The
#     member's filesystem is unmounted (plainly, then lazily) while a slow
#     fill (dm-delay) reads it: its own reader's, and one that reads another
#     member B for a mapping whose own member A dropped its key. No busy
#     inodes, no KASAN/oops, right bytes or a clean error. In verify=trust,
#     B closed and rewritten while such a fill reads it puts none of its
#     new bytes into the share (1c).
#  2. bounded fills: a level-3 key is refused (private, key_invalid); a
#     reader of a level-2 file SIGKILLed during its first cold read is
#     reaped at once, and the fill's work stops with it, before the end of
#     its 64 MiB granule (pcdedup_fill_cancelled).
#  3. memory: what a fill allocates is charged to the reader's memory
#     cgroup: the share's pages (the first reader pays), and the member's
#     page cache that a level-2 granule is read through (memory.peak).
#     Under a limit of 16 MiB, fio's cold readers of four 64 MiB files (by
#     read() and by mmap) end, four readers read true bytes three times over
#     and mmap readers twice, and the kernel log stays clean: reclaim takes
#     share folios the moment a fill unlocks them. A level-2 share's copy
#     of the level below (1 MiB for a 16 GiB file) is charged to the
#     opener's cgroup.
#  4. a failing fill never fails another member's read: a reader of a good
#     member that waited for a fill from a bad member (x3), and whose retry
#     then meets another bad member's fill (x4) owning its granule, reads
#     true bytes, by read() and by mmap faults (no SIGBUS).
#  5. tenants take turns: while another tenant (its own memory cgroup)
#     floods the fill checks with 16 cold readers, a tenant's cold read
#     reads true bytes through its share and checks wait for their turn
#     (pcdedup_fill_queued). The order of turns is KUnit's
#     pcdedup_fillq_turns; the times are printed, not judged: under TCG,
#     the flood's own CPU (loop I/O, copies) dominates them either way.
#  6. a slow member stalls no other member's reader: while a fill reads a
#     member on dm-delay (8 s), a reader of another member of the share
#     reads within its own cold read's time (twice over, or +2 s), by
#     read() and by a fault, level 1 and level 2: it reads its own member
#     once fill_wait_ms has passed (pcdedup_fill_rescue). A rescue from a
#     member whose blocks changed underneath ends nothing: the slow fill
#     still fills its folios with true bytes. fill_wait_ms=60000 keeps the
#     reader waiting for the slow fill (so the timing check can fail).
#     Groups 1 and 4, which need readers to wait for slow fills, set it.
# LIFETIME_GROUPS="1 2 3 4 5 6" (the default) selects the groups run.
#
# Keys come from tests/dedup/mkkey.py (lib-integrity.sh's tag). On a kernel
# of the series before keys carried MACs (no /sys/kernel/mm/pcdedup/secret:
# build/bzImage-old), version 2 keys are written and sharing is switched
# on directly, so that the same cases show that kernel's behaviour.
set -uo pipefail
. "$(dirname "$0")/lib-integrity.sh"

groups=${LIFETIME_GROUPS:-1 2 3 4 5 6}
declare -A ncases=([1]=27 [2]=12 [3]=13 [4]=18 [5]=4 [6]=25)
n=0
for g in $groups; do n=$((n + ${ncases[$g]:?unknown group $g})); done
plan $n
die() { fail "$1" "${2:-setup failed}"; exit 1; }
if [ -e "$sysfs/secret" ]; then
	pcdedup_on
else
	echo "# no $sysfs/secret: a kernel before MACs; version 2 keys, enabled=1"
	export PCDEDUP_INTEGRITY_KEYS=v2
	echo 1 >"$sysfs/enabled" || die pcdedup-on "cannot write $sysfs/enabled"
fi
echo 0 >"$sysfs/min_size"
MiB=1048576
# Readers wait this long for another member's fill before reading their own
# (a kernel before rescues has no such knob: its readers always wait).
wait_default=
[ -e "$sysfs/fill_wait_ms" ] && wait_default=$(knobc fill_wait_ms)
wait_long() { # GROUP: until the group's end, readers wait for slow fills
	if [ -n "$wait_default" ]; then
		echo 60000 >"$sysfs/fill_wait_ms" || die "$1-setup" "cannot set fill_wait_ms"
	fi
}

# Kernel log lines that must never appear (vm/log-check's, and busy inodes).
klog_pat='Busy inodes|Kernel panic|Oops|BUG:|WARNING:|KASAN|UBSAN|general protection fault|'
klog_pat+='kernel BUG at|list_add corruption|list_del corruption|INFO: task .* blocked'
klog_n() { dmesg | grep -cE "$klog_pat" || true; }
log_clean() { # NAME LINES-BEFORE
	local now
	now=$(klog_n)
	if [ "$now" = "$2" ]; then
		pass "$1"
	else
		fail "$1" "$(dmesg | grep -E "$klog_pat" | tail -n +$(($2 + 1)) | head -n 5)"
	fi
}
# SHA-256 of FILE read with O_DIRECT: never through a share.
direct_sum() { dd if="$1" iflag=direct bs=1M status=none | sha256sum; }
# Drop what is cached and not mapped, shares' pages (and so idle shares)
# included, after draining every CPU's LRU batches (drop_caches does not: a
# folio still in one stays cached, and keeps its share). fadvise(DONTNEED)
# drains them all (lru_add_drain_all()) when it finds a page it cannot
# drop: here a mapped page of a file of its own.
drop_unmapped() {
	sync
	python3 -c 'import mmap, os, sys
with open(sys.argv[1], "wb") as f:
    f.write(b"x" * 4096)
fd = os.open(sys.argv[1], os.O_RDONLY)
m = mmap.mmap(fd, 4096, prot=mmap.PROT_READ)
m[0]
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)' /mnt/img/drain
	echo 3 >/proc/sys/vm/drop_caches
}
all_true() { # NAME LINE SIZE: a reader.py line: every byte read, all true
	if [ "$(field "$2" good)" = "$3" ] && [ "$(field "$2" eio)" = 0 ] && [ "$(field "$2" wrong)" = 0 ]; then
		pass "$1"
	else
		fail "$1" "${2:-no reader output}"
	fi
}
# Fills that finished reading (counted when their check runs).
fills_done() { echo $(($(vmc fill_direct) + $(vmc fill_cached))); }
now_ms() { echo $((${EPOCHREALTIME/./} / 1000)); }
pstate() { awk '{print $3}' "/proc/$1/stat" 2>/dev/null; }
# Wait up to TENTHS tenths of a second for PID to sleep in D state (or to
# be gone). 0 when it sleeps in D.
wait_d() { # PID TENTHS
	local _
	for _ in $(seq "$2"); do
		case $(pstate "$1") in D) return 0 ;; "" | Z) return 1 ;; esac
		sleep 0.1
	done
	return 1
}
# Wait up to SECONDS for PID to end; kill it then. Sets $rc to its status.
reap() { # PID SECONDS
	local _
	for _ in $(seq $(($2 * 10))); do
		case $(pstate "$1") in "" | Z) break ;; esac
		sleep 0.1
	done
	case $(pstate "$1") in "" | Z) ;; *) kill -9 "$1" 2>/dev/null ;; esac
	{ wait "$1"; } 2>/dev/null
	rc=$?
}

mkfs.ext4 -q -F "$(realpath /dev/disk/by-name/img)" || die setup-img-disk
mkdir -p /mnt/img
mount /dev/disk/by-name/img /mnt/img || die setup-img-mount
img_sectors() { disk_stat img read_sectors; }
l1=$(loopfs /mnt/img/m1.img 1G /mnt/m1) || die setup-m1
m1=/mnt/m1

# The slow member filesystem: XFS on dm-delay over a loop device over an
# image file; reads are delayed by `delay MS`, writes never.
simg=/mnt/img/slow.img slow=pcdedup-life smnt=/mnt/slow
truncate -s 1G $simg
sloop=$(losetup -f --show $simg) || die setup-slow-loop
delay() { # READ_DELAY_MS
	dmsetup suspend "$slow" &&
		dmsetup reload "$slow" --table "0 $(blockdev --getsz "$sloop") delay $sloop 0 $1 $sloop 0 0" &&
		dmsetup resume "$slow"
}
{ dmsetup create $slow --table "0 $(blockdev --getsz "$sloop") delay $sloop 0 0 $sloop 0 0" &&
	dmsetup mknodes $slow && mkfs.xfs -q -f /dev/mapper/$slow >/dev/null &&
	mkdir -p $smnt && mount /dev/mapper/$slow $smnt; } || die setup-slow
slow_open() { dmsetup info -c --noheadings -o open "$slow" | tr -d ' '; }
# Wait up to 30 s for the slow device to be closed (its filesystem shut
# down); 0 when it is.
slow_released() {
	local _
	for _ in $(seq 300); do
		[ "$(slow_open)" = 0 ] && return 0
		sleep 0.1
	done
	return 1
}
# Mount it again, reads undelayed (mount probes many blocks, one by one).
remount_slow() { mountpoint -q "$smnt" || { delay 0 && mount "/dev/mapper/$slow" "$smnt"; }; }

# A process that maps FILE (MAP_SHARED, PROT_READ), waits for NAME.go and
# then reads page PAGE of the mapping, comparing it with TRUE: prints
# "mmap page=N true", "... wrong" or "... error ERRNO". MODE random: a load
# from an MADV_RANDOM mapping (a fault reads that page alone, through
# ->read_folio; a SIGBUS kills the process, status 135); mem: the same
# page read through /proc/self/mem, a fault of get_user_pages() that is
# never retried (a SIGBUS there fails the read with EIO).
cat >"$ipy/mapper.py" <<'EOF'
import ctypes, errno, mmap, os, sys, time
path, truef, page, mode, name = sys.argv[1:6]
page = int(page)
with open(truef, "rb") as f:
    f.seek(page * 4096)
    want = f.read(4096)
fd = os.open(path, os.O_RDONLY)
size = os.fstat(fd).st_size
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                      ctypes.c_int, ctypes.c_int, ctypes.c_long]
libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
addr = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
if addr in (None, ctypes.c_void_p(-1).value):
    sys.exit("mmap: " + os.strerror(ctypes.get_errno()))
libc.madvise(addr, size, mmap.MADV_RANDOM)
open(name + ".ready", "w").close()
while not os.path.exists(name + ".go"):
    time.sleep(0.05)
res = "wrong"
if mode == "mem":
    mem = os.open("/proc/self/mem", os.O_RDONLY)
    try:
        if os.pread(mem, 4096, addr + page * 4096) == want:
            res = "true"
    except OSError as e:
        res = "error " + errno.errorcode.get(e.errno, str(e.errno))
elif ctypes.string_at(addr + page * 4096, 4096) == want:
    res = "true"
print("mmap page=%d %s" % (page, res), flush=True)
EOF
mapper=$ipy/mapper.py

# === 1. lifetimes =========================================================
group1() {
	local T=/tmp/t1 f="$smnt/a" k0 kpid rpid t0 t1 f0 f1 out urc r p q qrc qalive c v b a
	# Readers here wait for the slow fills whose lifetimes are tested.
	wait_long 1
	mkfile "$T" $((8 * MiB))
	# --- 1a. the fill's own member: its reader killed, then unmounted ---
	cp "$T" "$f" || die 1a-setup
	tag "$f" 1 || die 1a-setup
	sync
	drop_unmapped
	k0=$(klog_n)
	rm -f /tmp/1k.ready /tmp/1k.go
	python3 "$ipy/reader.py" "$f" "$T" wait:/tmp/1k read:$((4 * MiB)):$((5 * MiB)) >/dev/null 2>&1 &
	kpid=$!
	await /tmp/1k $kpid || die 1a-setup-reader
	delay 6000 || die 1a-setup-delay
	f0=$(fills_done)
	go /tmp/1k
	if wait_d $kpid 30; then
		pass 1a-reader-waits-on-slow-fill
	else
		fail 1a-reader-waits-on-slow-fill "state $(pstate $kpid)"
	fi
	t0=$(now_ms)
	kill -9 $kpid
	{ wait $kpid; } 2>/dev/null
	t1=$(now_ms)
	echo "# 1a: reader reaped $((t1 - t0)) ms after SIGKILL"
	# Only the fill holds the member now: a plain unmount must fail, or
	# wait for the fill (its reads take 6 s).
	out=$(umount "$smnt" 2>&1)
	urc=$?
	f1=$(fills_done)
	echo "# 1a: umount: status $urc, $(($(now_ms) - t0)) ms after the reader was seen waiting, fills done meanwhile $((f1 - f0)): $out"
	if [ $urc != 0 ] || [ "$f1" != "$f0" ]; then
		pass 1a-umount-busy-while-fill-reads
	else
		fail 1a-umount-busy-while-fill-reads "unmounted while the fill was reading"
	fi
	check 1a-lazy-umount sh -c "! mountpoint -q $smnt || umount -l $smnt"
	check 1a-device-released-after-fill slow_released
	log_clean 1a-kernel-log-clean "$k0"
	# --- 1a'. a reader keeps reading through a lazy unmount ---
	remount_slow || die 1a-remount
	delay 0
	drop_unmapped
	k0=$(klog_n)
	rm -f /tmp/1r.ready /tmp/1r.go
	python3 "$ipy/reader.py" "$f" "$T" wait:/tmp/1r read:0:524288 >/tmp/1r.out 2>&1 &
	rpid=$!
	await /tmp/1r $rpid || die 1a-setup-reader2
	delay 3000
	go /tmp/1r
	wait_d $rpid 30 || echo "# 1a: reader 2 not seen waiting: $(pstate $rpid)"
	check 1a-lazy-umount-under-reader umount -l "$smnt"
	reap $rpid 30
	r=$(cat /tmp/1r.out)
	echo "# 1a: reader after lazy umount: $r"
	all_true 1a-reader-true-after-lazy-umount "$r" 524288
	check 1a-device-released-after-reader slow_released
	log_clean 1a-reader-kernel-log-clean "$k0"
	remount_slow || die 1a-remount2
	delay 0

	# --- 1b. a fill that reads another member B ---
	# A (on m1) is opened through the share and mapped, then its key is
	# dropped (opened for write and written, the same byte): its mapping
	# faults through the share, filled from another member, B, on the slow
	# filesystem. With B's opener gone, B's filesystem is unmounted during
	# that fill. Variant "file": B was read through the share before (it
	# has a direct I/O file of its own); "nofile": B was only opened (a
	# kernel may read it all the same, and must then pin it as well, or
	# not read it: then the fault's SIGBUS is the clean error, the
	# mapping's content having no other source).
	for v in file nofile; do
		T=/tmp/t1$v a="$m1/b$v" b="$smnt/b$v"
		mkfile "$T" $((8 * MiB))
		{ cp "$T" "$a" && cp "$T" "$b"; } || die "1b-$v-setup"
		{ tag "$a" 1 && tag "$b" 1; } || die "1b-$v-setup"
		sync
		drop_unmapped
		k0=$(klog_n)
		rm -f /tmp/1p.ready /tmp/1p.go /tmp/1q.ready /tmp/1q.go
		if [ $v = file ]; then
			python3 "$ipy/reader.py" "$b" "$T" read wait:/tmp/1p >/tmp/1p.out 2>&1 &
		else
			python3 "$ipy/reader.py" "$b" "$T" wait:/tmp/1p >/tmp/1p.out 2>&1 &
		fi
		p=$!
		await /tmp/1p $p || die "1b-$v-setup-b"
		python3 "$mapper" "$a" "$T" 300 random /tmp/1q >/tmp/1q.out 2>&1 &
		q=$!
		await /tmp/1q $q || die "1b-$v-setup-a"
		[ $v = nofile ] || all_true "1b-$v-b-read-through-share" "$(sed -n 1p /tmp/1p.out)" $((8 * MiB))
		drop_unmapped
		python3 -c 'import os, sys
byte = os.pread(os.open(sys.argv[1], os.O_RDONLY), 1, 0)
os.pwrite(os.open(sys.argv[1], os.O_WRONLY), byte, 0)' "$a"
		check "1b-$v-a-key-dropped" test -z "$(key_hex "$a")"
		delay 6000 || die "1b-$v-delay"
		go /tmp/1q
		wait_d $q 30 || echo "# 1b-$v: mapping not seen waiting: $(pstate $q)"
		go /tmp/1p
		reap $p 10
		t0=$(now_ms)
		qalive=$(case $(pstate $q) in "" | Z) echo 0 ;; *) echo 1 ;; esac)
		out=$(umount "$smnt" 2>&1)
		urc=$?
		t1=$(now_ms)
		c=$(case $(pstate $q) in "" | Z) echo 0 ;; *) echo 1 ;; esac)
		echo "# 1b-$v: fault in flight before/after umount: $qalive/$c; umount status $urc after $((t1 - t0)) ms: $out"
		# What the case is about: the fill was still reading B at the umount.
		expect_eq "1b-$v-fault-in-flight-at-umount" 1 "$qalive"
		if [ $urc != 0 ] || [ "$c" = 0 ]; then
			pass "1b-$v-umount-busy-while-fill-reads-b"
		else
			fail "1b-$v-umount-busy-while-fill-reads-b" "B's filesystem unmounted while the fault's fill was reading it"
		fi
		check "1b-$v-lazy-umount" sh -c "! mountpoint -q $smnt || umount -l $smnt"
		reap $q 30
		qrc=$rc
		r=$(cat /tmp/1q.out)
		echo "# 1b-$v: mapping of A: status $qrc: $r"
		if [ $v = file ]; then
			if [ "$qrc" = 0 ] && [ "$r" = "mmap page=300 true" ]; then
				pass "1b-$v-mapping-true"
			else
				fail "1b-$v-mapping-true" "status $qrc: $r"
			fi
		elif { [ "$qrc" = 0 ] && [ "$r" = "mmap page=300 true" ]; } || [ "$qrc" = 135 ]; then
			pass "1b-$v-mapping-true-or-sigbus"
		else
			fail "1b-$v-mapping-true-or-sigbus" "status $qrc: $r"
		fi
		check "1b-$v-device-released" slow_released
		log_clean "1b-$v-kernel-log-clean" "$k0"
		remount_slow || die "1b-$v-remount"
		delay 0
	done

	# --- 1c. verify=trust: the member a fill reads is written after its
	# last close. As in 1b, A's mapping faults through the share, filled
	# from B on the slow filesystem; while that fill waits for B's read,
	# B's opener closes (B has no open through the share left) and B's
	# owner rewrites it with other bytes, direct to the disk the read
	# comes from. Nothing checks a trusted fill's bytes: the fill must see
	# the writer and keep them out of the share, so that the fault reads
	# the content or dies with SIGBUS (no member is left), never B's new
	# bytes. ---
	echo trust >"$sysfs/verify"
	T=/tmp/t1c a="$m1/bc" b="$smnt/bc"
	mkfile "$T" $((8 * MiB))
	mkfile "$T.new" $((8 * MiB))
	{ cp "$T" "$a" && cp "$T" "$b"; } || die 1c-setup
	{ tag "$a" 1 && tag "$b" 1; } || die 1c-setup
	sync
	drop_unmapped
	k0=$(klog_n)
	rm -f /tmp/1p.ready /tmp/1p.go /tmp/1q.ready /tmp/1q.go
	python3 "$ipy/reader.py" "$b" "$T" read wait:/tmp/1p >/tmp/1p.out 2>&1 &
	p=$!
	await /tmp/1p $p || die 1c-setup-b
	python3 "$mapper" "$a" "$T" 300 random /tmp/1q >/tmp/1q.out 2>&1 &
	q=$!
	await /tmp/1q $q || die 1c-setup-a
	drop_unmapped
	python3 -c 'import os, sys
byte = os.pread(os.open(sys.argv[1], os.O_RDONLY), 1, 0)
os.pwrite(os.open(sys.argv[1], os.O_WRONLY), byte, 0)' "$a" || die 1c-a-write
	# B's key, and the free-space metadata an attribute block's removal
	# reads (an attribute block set and removed beside B), back in the
	# buffer cache before reads slow down: the rewrite's key drop reads
	# nothing from the slow disk.
	getfattr -n trusted.pcdedup "$b" >/dev/null || die 1c-b-key
	{ : >"$b.w" && setfattr -n user.w -v "$(printf '%03000d' 0)" "$b.w" &&
		setfattr -x user.w "$b.w" && rm "$b.w"; } || die 1c-warm
	# and the reflink metadata a write into B's extents looks up (FIEMAP
	# asks whether they are shared)
	filefrag -v "$b" >/dev/null || die 1c-warm-refcount
	# and B's inode cluster buffer, which the key drop's transaction logs
	# B's inode into (a timestamp set by path logs it too; touch would open
	# B for write and drop its key)
	python3 -c 'import os, sys
st = os.stat(sys.argv[1])
os.utime(sys.argv[1], ns=(st.st_atime_ns, st.st_mtime_ns))' "$b" || die 1c-warm-inode
	# Without freezing B's filesystem, which would drain the buffers above.
	{ dmsetup suspend --nolockfs "$slow" &&
		dmsetup reload "$slow" --table "0 $(blockdev --getsz "$sloop") delay $sloop 0 20000 $sloop 0 0" &&
		dmsetup resume "$slow"; } || die 1c-delay
	t0=$(now_ms)
	go /tmp/1q
	wait_d $q 30 || echo "# 1c: mapping not seen waiting: $(pstate $q)"
	t1=$(now_ms)
	go /tmp/1p
	reap $p 10
	t2=$(now_ms)
	dd if="$T.new" of="$b" bs=1M oflag=direct conv=notrunc status=none || die 1c-b-rewrite
	t3=$(now_ms)
	qalive=$(case $(pstate $q) in "" | Z) echo 0 ;; *) echo 1 ;; esac)
	echo "# 1c: fault seen waiting after $((t1 - t0)) ms, B closed after $((t2 - t0)), rewritten after $((t3 - t0)); fault in flight then: $qalive"
	# What the case is about: the fill was still reading B when it was rewritten.
	expect_eq 1c-fault-in-flight-at-rewrite 1 "$qalive"
	reap $q 30
	r=$(cat /tmp/1q.out)
	echo "# 1c: mapping of A: status $rc: $r"
	if { [ "$rc" = 0 ] && [ "$r" = "mmap page=300 true" ]; } || [ "$rc" = 135 ]; then
		pass 1c-no-rewritten-bytes-in-share
	else
		fail 1c-no-rewritten-bytes-in-share "status $rc: $r"
	fi
	log_clean 1c-kernel-log-clean "$k0"
	delay 0
	echo full >"$sysfs/verify"
	rm -f "$T" "$T.new"
}

# === 2. bounded fills =====================================================
big=/mnt/img/l2
group2() {
	local f="$m1/l3" k0 s0 t0 tg v0 c0 r0 last cur same stop reads st ms vd cd
	# --- 2a. a level-3 key: 65 MiB and one block (16641 blocks: levels of
	# 16641, 131, 2 and 1 hashes), sparse but for its first 1 MiB ---
	truncate -s $((65 * MiB + 4096)) "$f"
	head -c "$MiB" /dev/urandom >/tmp/l3.head
	dd if=/tmp/l3.head of="$f" conv=notrunc status=none
	t0=$(now_ms)
	tag "$f" 3 || die 2a-setup "mkkey --level 3 failed"
	echo "# 2a: level-3 key made in $(($(now_ms) - t0)) ms"
	expect_eq 2a-key-level-3 3 "$(key_field "$f" tree_level)"
	drop_unmapped
	k0=$(vmstat key_invalid) s0=$(vmstat open_shared)
	t0=$(now_ms)
	check 2a-level3-reads-own-bytes cmp -n "$MiB" "$f" /tmp/l3.head
	echo "# 2a: first 1 MiB read cold in $(($(now_ms) - t0)) ms"
	if [ -z "$s0" ] || [ -z "$k0" ]; then
		fail 2a-level3-not-shared "no pcdedup_open_shared or pcdedup_key_invalid in $events"
		fail 2a-level3-key-invalid-counted "no counters"
	else
		expect_eq 2a-level3-not-shared 0 $(($(vmstat open_shared) - s0))
		expect_eq 2a-level3-key-invalid-counted 1 $(($(vmstat key_invalid) - k0))
	fi
	rm -f "$f"

	# --- 2b. a level-2 key (64 MiB granules) on ext4; the first cold read
	# SIGKILLed ---
	t0=$(now_ms)
	dd if=/dev/zero bs=1M count=64 status=none | sha256sum >/dev/null
	echo "# 2b: guest sha256sum of 64 MiB: $(($(now_ms) - t0)) ms"
	head -c $((80 * MiB)) /dev/urandom >"$big"
	tag "$big" 2 || die 2b-setup "mkkey --level 2 failed"
	expect_eq 2b-key-level-2 2 "$(key_field "$big" tree_level)"
	# What one granule costs here: the first 4 KiB, cold, wait for the
	# whole of granule 0 (64 MiB read through the member's cache, hashed).
	drop_unmapped
	t0=$(now_ms)
	head -c 4096 "$big" >/dev/null
	tg=$(($(now_ms) - t0))
	echo "# 2b: a cold 4 KiB read (one 64 MiB granule) took $tg ms"
	drop_unmapped
	v0=$(vmc fill_verified) c0=$(vmc fill_cached) r0=$(img_sectors) x0=$(vmc fill_cancelled)
	# The reader (cat) is started, seen waiting (D) and its fill seen reading
	# the member (2 MiB of the image's disk read past R0: on a loaded host a
	# fixed delay can end before the fill starts; the fill's own counters
	# move only once its granule is read), killed 0.3 s later and reaped
	# by a parent that polls nothing: "STATE MS KILL-TIME-MS".
	imgstat=/sys/block/$(basename "$(realpath /dev/disk/by-name/img)")/stat
	read -r st ms t0 < <(python3 -c 'import os, subprocess, sys, time
def sectors_read():
    with open(sys.argv[2]) as f:
        return int(f.read().split()[2])
p = subprocess.Popen(["cat", sys.argv[1]], stdout=subprocess.DEVNULL)
st, end = "?", time.monotonic() + 5
while time.monotonic() < end:
    st = open("/proc/%d/stat" % p.pid).read().rsplit(")", 1)[1].split()[0]
    if st == "D":
        break
    time.sleep(0.01)
end = time.monotonic() + 30
while sectors_read() < int(sys.argv[3]) + 4096 and time.monotonic() < end:
    time.sleep(0.01)
time.sleep(0.3)
k, t = time.time(), time.monotonic()
os.kill(p.pid, 9)
p.wait()
print(st, int((time.monotonic() - t) * 1000), int(k * 1000))' "$big" "$imgstat" "$r0")
	echo "# 2b: reader seen in state $st, reaped $ms ms after SIGKILL"
	check 2b-sigkill-reaped-within-1s test "$ms" -lt 1000
	# The fill stops with its reader: its counters and the disk stop (12
	# samples in a row unchanged; the debug kernel reads counters slowly).
	last="" stop=$t0 same=0
	while [ $(($(now_ms) - t0)) -lt 180000 ]; do
		cur="$(vmc fill_verified) $(vmc fill_cached) $(img_sectors)"
		if [ "$cur" = "$last" ]; then
			same=$((same + 1))
			[ $same -ge 12 ] && break
		else
			same=0 last=$cur stop=$(now_ms)
		fi
		sleep 0.25
	done
	reads=$((($(img_sectors) - r0) / 2048)) vd=$(($(vmc fill_verified) - v0)) cd=$(($(vmc fill_cached) - c0))
	echo "# 2b: fill work stopped $((stop - t0)) ms after the kill; member read $reads MiB; granules verified $vd, pages read through the member cache $cd, fills cancelled $(($(vmc fill_cancelled) - x0))"
	# What was killed was the read of a level-2 granule, through the
	# member's cache (not of level-1 granules of a share kept from before),
	# and it stopped there: no granule checked, fewer than its 16384 pages
	# read. The kill came 0.3 s into a granule that takes $tg ms here.
	check 2b-killed-read-was-level2-granule test "$cd" -gt 0
	check 2b-fill-work-stops test $same -ge 12
	expect_eq 2b-fill-cancelled 1 $(($(vmc fill_cancelled) - x0))
	check 2b-fill-work-stopped-in-its-granule test "$vd" = 0 -a "$cd" -lt 16384
	check 2b-member-read-less-than-a-granule test $reads -lt 64
	expect_eq 2b-bytes-after-kill "$(direct_sum "$big")" "$(sha256sum <"$big")"
}

# === 3. memory cgroups ====================================================
cg=/sys/fs/cgroup
tr=/sys/kernel/tracing
[ -e "$tr/trace" ] || mount -t tracefs nodev "$tr"
cg_stat() { awk -v k="$2" '$1 == k {print $2}' "$cg/$1/memory.stat"; } # GROUP KEY
in_cg() { # GROUP CMD...: run CMD in GROUP
	# shellcheck disable=SC2016
	sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$cg/$1" "${@:2}"
}
group3() {
	local T=/tmp/t3 f="$m1/c3" fa fb peak c0 out g
	echo +memory >"$cg/cgroup.subtree_control" || die 3-setup "no memory controller"
	for g in life-a life-b life-c life-d; do
		rmdir "$cg/$g" 2>/dev/null
		mkdir "$cg/$g" || die 3-setup "mkdir $cg/$g"
	done
	# --- 3a. the first reader pays for the share's pages ---
	mkfile "$T" $((8 * MiB))
	{ cp "$T" "$f" && tag "$f" 1; } || die 3a-setup
	drop_unmapped
	check 3a-first-reader-reads in_cg life-a cmp "$f" "$T"
	fa=$(cg_stat life-a file)
	echo "# 3a: file pages charged to the first reader's cgroup: $((fa / 1024)) KiB"
	# The share's 8 MiB ($T is on /tmp: shmem charged when it was written).
	check 3a-first-reader-charged test "${fa:-0}" -ge $((7 * MiB))
	check 3a-second-reader-reads in_cg life-b cmp "$f" "$T"
	fb=$(cg_stat life-b file)
	echo "# 3a: file pages charged to the second reader's cgroup: $((fb / 1024)) KiB"
	check 3a-second-reader-not-charged test "${fb:-$MiB}" -lt "$MiB"
	# --- 3b. a level-2 granule read through the member's page cache ---
	if [ ! -s "$big" ]; then
		head -c $((80 * MiB)) /dev/urandom >"$big" || die 3b-setup
		tag "$big" 2 || die 3b-setup
	fi
	drop_unmapped
	c0=$(vmc fill_cached)
	in_cg life-c dd if="$big" bs=64k count=1 of=/dev/null status=none
	peak=$(cat "$cg/life-c/memory.peak")
	echo "# 3b: peak of the reader's cgroup: $((peak / 1024)) KiB; pages read through the member cache: $(($(vmc fill_cached) - c0))"
	check 3b-granule-read-through-member-cache test $(($(vmc fill_cached) - c0)) -ge 16384
	check 3b-member-cache-charged-to-reader test "$peak" -ge $((32 * MiB))
	# --- 3c. under a limit below one granule, it still reads right ---
	echo $((24 * MiB)) >"$cg/life-d/memory.max"
	drop_unmapped
	out=$(in_cg life-d sha256sum <"$big")
	echo "# 3c: life-d: peak $(($(cat "$cg/life-d/memory.peak") / 1024)) KiB, events: $(tr '\n' ' ' <"$cg/life-d/memory.events")"
	if [ "$out" = "$(direct_sum "$big")" ] &&
		[ "$(awk '$1 == "oom_kill" {print $2}' "$cg/life-d/memory.events")" = 0 ]; then
		pass 3c-level2-read-under-limit
	else
		fail 3c-level2-read-under-limit "sum $out; $(cat "$cg/life-d/memory.events")"
	fi
	for g in life-a life-b life-c life-d; do rmdir "$cg/$g"; done
	group3e
	group3d
}
# --- 3e. a level-2 share's copy of the level below (1 MiB for a 16 GiB
# file: 32768 hashes) is charged to the opener's cgroup. Opened in a
# cgroup of its own, the tagged file costs it 512 KiB to 1.5 MiB more than its
# untagged twin (python's own allocations between the two readings of
# memory.current are in both; charges are batched, up to 256 KiB early).
# Sparse files: mkkey hashes holes unread.
group3e() {
	local t=$m1/tree16g u=$m1/tree16g.twin g dt du
	for g in t u; do
		{ truncate -s $((16 * 1024 * MiB)) "${!g}" &&
			head -c "$MiB" /dev/urandom | dd of="${!g}" conv=notrunc status=none; } || die 3e-setup
	done
	tag "$t" 2 || die 3e-setup "mkkey --level 2 failed"
	rmdir "$cg/life-g" 2>/dev/null
	mkdir "$cg/life-g" || die 3e-setup "mkdir $cg/life-g"
	open_cost() { # FILE: memory.current after opening it less before
		in_cg life-g python3 -c 'import os, sys
cur = lambda: int(open(sys.argv[2]).read())
before = cur()
fd = os.open(sys.argv[1], os.O_RDONLY)
print(cur() - before)' "$1" "$cg/life-g/memory.current"
	}
	du=$(open_cost "$u") dt=$(open_cost "$t")
	echo "# 3e: opening the 16 GiB file charged $((dt / 1024)) KiB tagged (level 2), $((du / 1024)) KiB untagged"
	check 3e-level2-tree-copy-charged test $((dt - du)) -ge $((512 * 1024))
	# Not rounded up to a power of two (kvzalloc's kmalloc made it 2 MiB).
	check 3e-level2-tree-copy-not-doubled test $((dt - du)) -le $((1536 * 1024))
	rm -f "$t" "$u"
	rmdir "$cg/life-g"
}
# --- 3d. cold readers of level-1 files (512 KiB granules, so fills that
# complete granules into scratch pages) under a limit of 16 MiB: reclaim
# takes a share folio as soon as its fill unlocks it, while the fill still
# ends. Four read() readers share one such cgroup, each reading its own
# file three times over (a pass meets what reclaim left of the last one);
# mmap readers have a cgroup each (python's own memory). The kernels
# before the fix crashed here (a fill freed a page it did not own) or
# livelocked in the share's page cache.
group3d() {
	local i k g k0 bad=0 pids=() sums=() status=()
	for i in 1 2 3 4; do
		{ head -c $((64 * MiB)) /dev/urandom >"$m1/e$i" && tag "$m1/e$i" 1; } ||
			die 3d-setup
		sums[i]=$(direct_sum "$m1/e$i")
	done
	for g in life-e life-f1 life-f2 life-f3 life-f4; do
		rmdir "$cg/$g" 2>/dev/null
		mkdir "$cg/$g" || die 3d-setup "mkdir $cg/$g"
	done
	echo $((16 * MiB)) >"$cg/life-e/memory.max" || die 3d-setup
	for i in 1 2 3 4; do
		echo $((32 * MiB)) >"$cg/life-f$i/memory.max" || die 3d-setup
	done
	k0=$(klog_n)
	# fio's four jobs (its own memory too) in the cgroup leave the share a
	# few MiB: by read() and by mmap, 20 s each, every file from its start
	# again as soon as it was read through.
	for k in psync mmap; do
		drop_unmapped
		# shellcheck disable=SC2046
		in_cg life-e timeout 300 fio --output=/dev/null --eta=never --readonly --invalidate=0 \
			--fadvise_hint=0 --ioengine=$k --rw=read --bs=128k --time_based \
			--runtime=20 $(for i in 1 2 3 4; do echo "--name=r$i --filename=$m1/e$i"; done)
		expect_eq "3d-fio-$k-under-16m" 0 $?
	done
	drop_unmapped
	for i in 1 2 3 4; do
		# shellcheck disable=SC2016
		in_cg life-e sh -c 'for p in 1 2 3; do sha256sum <"$1" >"$2.$p"; done' \
			sh "$m1/e$i" "/tmp/3d.$i.read" &
		pids+=($!)
		in_cg "life-f$i" python3 -c 'import hashlib, mmap, sys
with open(sys.argv[1], "rb") as f:
    m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
for p in (1, 2):
    h = hashlib.sha256()
    for off in range(0, len(m), 1 << 20):
        h.update(m[off:off + (1 << 20)])
    with open(sys.argv[2] + "." + str(p), "w") as out:
        out.write(h.hexdigest() + "  -\n")' "$m1/e$i" "/tmp/3d.$i.mmap" &
		pids+=($!)
	done
	for i in "${pids[@]}"; do
		reap "$i" 900
		status+=("$rc")
	done
	for i in 1 2 3 4; do
		for k in read.1 read.2 read.3 mmap.1 mmap.2; do
			if [ "$(cat "/tmp/3d.$i.$k" 2>/dev/null)" != "${sums[i]}" ]; then
				bad=$((bad + 1))
				echo "# 3d: e$i, $k: '$(cat "/tmp/3d.$i.$k" 2>/dev/null)'"
			fi
		done
	done
	for g in life-e life-f1 life-f2 life-f3 life-f4; do
		echo "# 3d: $g: peak $(($(cat "$cg/$g/memory.peak") / 1024)) KiB, events: $(tr '\n' ' ' <"$cg/$g/memory.events")"
	done
	if [ "$bad" = 0 ]; then
		pass 3d-readers-under-16m-read-true
	else
		fail 3d-readers-under-16m-read-true "$bad of 20 reads wrong; reader status ${status[*]}"
	fi
	log_clean 3d-log-clean "$k0"
	rm -f "$m1"/e[1-4] /tmp/3d.*
	for g in life-e life-f1 life-f2 life-f3 life-f4; do rmdir "$cg/$g"; done
}

# === 4. two bad owners in a row ===========================================
# Files of one content T (2 MiB, level 2 keys: level 2 is the root, one
# 2 MiB granule, and its level 1, 512 KiB granules, once that is proved):
# g on m1 (good), x3 and x4 on the slow filesystem, their first 512 KiB
# rewritten underneath.
#  - A asks for pages 0-3 of x3 (fadvise WILLNEED): a fill of the level-2
#    granule, which owns no granule, reads x3 for 8 s holding them locked.
#  - B, on g, reads page 0 and waits for it: it lost the race to A's fill.
#  - V reads page 300 of g: its fill proves the level-2 granule, whose
#    level-1 hashes fills check against from then on.
#  - C reads page 64 of x4: its fill owns level-1 granule 0 (all its pages
#    but B's, which A's fill holds) and reads x4 for 8 s.
#  - A's fill fails. B retries with ->read_folio: it must fill page 0 from
#    g, not hand it to C, whose fill fails too (a second lost race).
# B reads by read(), through /proc/self/mem (a fault of get_user_pages(),
# not retried), and by a load from its mapping (a user fault, which the
# kernel retries after it drops mmap_lock: it survives a second lost race
# on a kernel without the fix too).
group4() {
	# B must lose its races to the bad members' slow fills.
	wait_long 4
	scenario4 1 read
	scenario4 2 mem
	scenario4 3 random
}
scenario4() { # N MODE
	local n="4$1" mode=$2 T g x3 x4 h0 b0 pa pb pc pv p bst r brc k0 t0 tb v
	T="/tmp/$n.true" g="$m1/$n" x3="$smnt/${n}a" x4="$smnt/${n}b"
	mkfile "$T" $((2 * MiB))
	{ cp "$T" "$g" && cp "$T" "$x3" && cp "$T" "$x4"; } || die "$n-setup"
	{ tag "$g" 2 && tag "$x3" 2 && tag "$x4" 2; } || die "$n-setup"
	check "$n-rewrite-x3" rewrite_member "$x3" "$simg" "$sloop" 0 $((512 * 1024)) "$T" "/tmp/$n.own3"
	check "$n-rewrite-x4" rewrite_member "$x4" "$simg" "$sloop" 0 $((512 * 1024)) "$T" "/tmp/$n.own4"
	blockdev --flushbufs "/dev/mapper/$slow"
	rm -f "/tmp/$n"*.ready "/tmp/$n"*.go
	python3 -c 'import os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
open(sys.argv[2] + ".ready", "w").close()
while not os.path.exists(sys.argv[2] + ".go"):
    time.sleep(0.05)
os.posix_fadvise(fd, 0, 16384, os.POSIX_FADV_WILLNEED)
open(sys.argv[2] + ".done", "w").close()
time.sleep(30)' "$x3" "/tmp/${n}a" &
	pa=$!
	if [ "$mode" = read ]; then
		python3 "$ipy/reader.py" "$g" "$T" "wait:/tmp/${n}b" read:0:4096 >"/tmp/$n.b" 2>&1 &
	else
		python3 "$mapper" "$g" "$T" 0 "$mode" "/tmp/${n}b" >"/tmp/$n.b" 2>&1 &
	fi
	pb=$!
	python3 "$ipy/reader.py" "$x4" "$T" "wait:/tmp/${n}c" read:262144:266240 >"/tmp/$n.c" 2>&1 &
	pc=$!
	python3 "$ipy/reader.py" "$g" "$T" "wait:/tmp/${n}v" read:1228800:1232896 >"/tmp/$n.v" 2>&1 &
	pv=$!
	for p in a:$pa b:$pb c:$pc v:$pv; do
		await "/tmp/$n${p%%:*}" "${p#*:}" || die "$n-setup-${p%%:*}"
	done
	# No page of the members' own caches may serve A's fill.
	drop_unmapped
	k0=$(klog_n) b0=$(dmesg_count 'does not match its key') h0=$(vmc fill_handed)
	delay 8000 || die "$n-delay"
	t0=$(now_ms)
	go "/tmp/${n}a"
	for _ in $(seq 50); do [ -e "/tmp/${n}a.done" ] && break; sleep 0.1; done
	go "/tmp/${n}b"
	go "/tmp/${n}v"
	reap $pv 20
	v=$(cat "/tmp/$n.v")
	go "/tmp/${n}c"
	wait_d $pc 30 || echo "# $n: C not seen waiting: $(pstate $pc)"
	bst=$(pstate $pb)
	echo "# $n: B $bst, V $v, C $(pstate $pc), $(($(now_ms) - t0)) ms after A's fill started"
	reap $pb 30
	brc=$rc tb=$(($(now_ms) - t0))
	reap $pc 30
	kill $pa
	wait $pa 2>/dev/null
	delay 0
	r=$(cat "/tmp/$n.b")
	echo "# $n ($mode): B (g): status $brc, $tb ms after A's fill started: $r; C (x4): $(cat "/tmp/$n.c"); pages handed: $(($(vmc fill_handed) - h0))"
	# The scenario holds only if B still waited for A's fill when C's
	# started, and if both bad members were caught.
	expect_eq "$n-b-waits-on-x3-fill-when-x4-fill-starts" D "$bst"
	expect_eq "$n-both-bad-fills-failed" 2 $(($(dmesg_count 'does not match its key') - b0))
	if [ "$mode" = read ]; then
		all_true "$n-read-good-member-true" "$r" 4096
	elif [ "$brc" = 0 ] && [ "$r" = "mmap page=0 true" ]; then
		pass "$n-$mode-fault-good-member-true"
	else
		fail "$n-$mode-fault-good-member-true" "status $brc (135: SIGBUS): $r"
	fi
	log_clean "$n-kernel-log-clean" "$k0"
}

# === 5. tenants take turns =================================================
# Tenant A (memory cgroup life-flood) keeps 16 readers reading 16 files of
# 8 MiB cold, over and over (dd iflag=nocache drops them after each read);
# tenant B (life-one) reads one cold 16 MiB file, alone and then beside A.
# A's files are on XFS on a loop device over tmpfs, so that what A costs
# B is fill checks (CPU), not waits for the same disk. Level-1 keys:
# direct fills, whose checks are queued per tenant. Fairness is judged by
# how long checks waited for their turn (tracepoint
# pcdedup_fill_check_start): B's check waits for at most one of A's, A's
# for all of A's queued before it, so B's median wait is well below A's;
# first come, first served makes them alike.
group5() {
	local f i g t0 t_alone t_flood q0 o0 sum l5 ev waits pids=()
	echo +memory >"$cg/cgroup.subtree_control" || die 5-setup "no memory controller"
	for g in life-flood life-one; do
		rmdir "$cg/$g" 2>/dev/null
		mkdir "$cg/$g" || die 5-setup "mkdir $cg/$g"
	done
	l5=$(loopfs /tmp/flood.img 320M /mnt/flood) || die 5-setup
	for i in $(seq 16); do
		mkfile "/mnt/flood/$i" $((8 * MiB)) || die 5-setup
	done
	mkfile "$m1/one" $((16 * MiB)) || die 5-setup
	for f in /mnt/flood/* "$m1/one"; do tag "$f" 1 || die 5-setup; done
	drop_unmapped
	t0=$(now_ms)
	in_cg life-one sha256sum <"$m1/one" >/dev/null
	t_alone=$(($(now_ms) - t0))
	drop_unmapped
	for i in $(seq 16); do
		# shellcheck disable=SC2016
		in_cg life-flood sh -c 'while :; do dd if="$0" iflag=nocache bs=1M of=/dev/null status=none; done' \
			"/mnt/flood/$i" &
		pids+=($!)
	done
	sleep 2
	ev=$tr/events/pcdedup/pcdedup_fill_check_start
	echo 8192 >"$tr/buffer_size_kb"
	echo >"$tr/trace"
	echo 1 >"$ev/enable"
	q0=$(vmc fill_queued) o0=$(vmc open_shared)
	t0=$(now_ms)
	sum=$(in_cg life-one sha256sum <"$m1/one")
	t_flood=$(($(now_ms) - t0))
	q0=$(($(vmc fill_queued) - q0)) o0=$(($(vmc open_shared) - o0))
	echo 0 >"$ev/enable"
	# Everything in the flood's cgroup: the loops and the dd each may be in.
	echo 1 >"$cg/life-flood/cgroup.kill"
	wait "${pids[@]}" 2>/dev/null
	while [ -s "$cg/life-flood/cgroup.procs" ]; do sleep 0.1; done
	echo "# 5: B's cold 16 MiB read: $t_alone ms alone, $t_flood ms beside A's 16 cold readers; checks that waited for a turn meanwhile: $q0; shared opens: $o0"
	expect_eq 5-read-beside-flood-true "$(direct_sum "$m1/one")" "$sum"
	check 5-flood-read-through-shares test "$o0" -gt 16
	check 5-checks-waited-for-turns test "$q0" -gt 0
	waits=$(check_waits "$(stat -c %i "$cg/life-one")" "$(stat -c %i "$cg/life-flood")" <"$tr/trace")
	echo "# 5: checks' waits for their turn (count, median us): B $waits A"
	# shellcheck disable=SC2086 # four numbers
	check 5-b-checks-wait-less-than-a-checks fair_waits $waits
	# Fills still queued hold the files they read, and so the mount.
	for i in $(seq 300); do umount /mnt/flood 2>/dev/null && break; sleep 0.1; done
	losetup -d "$l5"
	rm -f /tmp/flood.img "$m1/one"
	for g in life-flood life-one; do rmdir "$cg/$g"; done
}

# check_waits B_INO A_INO <TRACE: "count median" of B's checks' waits
# for their turn (us), then A's, from pcdedup_fill_check_start events.
check_waits() {
	local ino waits
	waits=$(sed -n 's/.*pcdedup_fill_check_start: cgroup \([0-9]*\) wait_us \([0-9]*\)$/\1 \2/p')
	for ino in "$1" "$2"; do
		awk -v c="$ino" '$1 == c { print $2 }' <<<"$waits" | sort -n |
			awk '{ v[NR] = $1 } END { print NR, NR ? v[int(NR / 2) + 1] : -1 }'
	done | paste -sd' '
}
# fair_waits NB MEDIAN_B NA MEDIAN_A: both tenants' checks traced, A's
# waited, and B's median wait is under half of A's (measured: a fifth
# with turns, alike (1.2x) first come, first served).
fair_waits() {
	[ "$1" -ge 8 ] && [ "$3" -ge 8 ] && [ "$4" -gt 0 ] && [ $(($2 * 2)) -lt "$4" ]
}

# === 6. a slow member stalls no other member's reader =====================
# T (4 MiB) on the slow filesystem (s) and on m1 (g), same key level. A
# reads s cold, reads delayed 8 s: its fill holds the share folios of the
# first granule locked. Once A sleeps on them, B reads g cold (read(), or a
# fault of page 0 of an MADV_RANDOM mapping). B's time is judged against
# its own cold read of g alone through its share (its fills hash, as a
# rescue does), with twice that or 2 s of slack (the wait, TCG, a debug
# kernel); its time with sharing off is printed beside.
group6() {
	knobc fill_wait_ms >/dev/null || die 6-setup "no fill_wait_ms"
	scenario6 a read 1 50
	scenario6 b random 1 50
	scenario6 c read 2 50
	scenario6 d read 1 60000
	scenario6_bad
	echo "$wait_default" >"$sysfs/fill_wait_ms"
}
scenario6() { # NAME MODE LEVEL WAIT_MS
	local n="6$1" mode=$2 T s g pa pb t0 t_off t_own t_on brc r0 r k0
	T=/tmp/$n.true s=$smnt/$n g=$m1/$n
	mkfile "$T" $((4 * MiB))
	{ cp "$T" "$s" && cp "$T" "$g" && tag "$s" "$3" && tag "$g" "$3"; } || die "$n-setup"
	echo "$4" >"$sysfs/fill_wait_ms" || die "$n-setup" "cannot set fill_wait_ms"
	echo 0 >"$sysfs/enabled"
	drop_unmapped
	t0=$(now_ms)
	cat "$g" >/dev/null
	t_off=$(($(now_ms) - t0))
	echo 1 >"$sysfs/enabled"
	# B alone through its share: its own fills, hashing included.
	drop_unmapped
	t0=$(now_ms)
	cat "$g" >/dev/null
	t_own=$(($(now_ms) - t0))
	rm -f "/tmp/$n"*.ready "/tmp/$n"*.go
	python3 "$ipy/reader.py" "$s" "$T" --chunk 131072 "wait:/tmp/${n}a" read >"/tmp/$n.a" 2>&1 &
	pa=$!
	if [ "$mode" = read ]; then
		python3 "$ipy/reader.py" "$g" "$T" --chunk 131072 "wait:/tmp/${n}b" read >"/tmp/$n.b" 2>&1 &
	else
		python3 "$mapper" "$g" "$T" 0 "$mode" "/tmp/${n}b" >"/tmp/$n.b" 2>&1 &
	fi
	pb=$!
	{ await "/tmp/${n}a" $pa && await "/tmp/${n}b" $pb; } || die "$n-setup-readers"
	drop_unmapped
	k0=$(klog_n) r0=$(vmc fill_rescue)
	delay 8000 || die "$n-delay"
	go "/tmp/${n}a"
	wait_d $pa 50 || echo "# $n: A not seen waiting: $(pstate $pa)"
	t0=$(now_ms)
	go "/tmp/${n}b"
	reap $pb 40
	brc=$rc t_on=$(($(now_ms) - t0))
	reap $pa 90
	delay 0
	r=$(($(vmc fill_rescue) - r0))
	echo "# $n ($mode, level $3, fill_wait_ms $4): B's cold read $t_off ms with sharing off, $t_own ms alone through its share, $t_on ms beside A's slow fill; rescues $r; A: $(cat "/tmp/$n.a")"
	all_true "$n-slow-member-reader-true" "$(cat "/tmp/$n.a")" $((4 * MiB))
	if [ "$mode" = read ]; then
		all_true "$n-other-member-reader-true" "$(cat "/tmp/$n.b")" $((4 * MiB))
	else
		expect_eq "$n-other-member-fault-true" "0 mmap page=0 true" "$brc $(cat "/tmp/$n.b")"
	fi
	if [ "$4" -le 1000 ]; then
		# Within its own read's time, twice over or +2 s (a slow kernel).
		check "$n-other-member-not-stalled" test "$t_on" -le $((t_own + (t_own > 2000 ? t_own : 2000)))
		check "$n-rescued" test "$r" -ge 1
	else
		check "$n-other-member-waits-fill_wait_ms" test "$t_on" -ge 5000
		expect_eq "$n-no-rescue" 0 "$r"
	fi
	log_clean "$n-kernel-log-clean" "$k0"
	rm -f "$s" "$g" "$T"
}
# A is slow and good, B fast and bad (its first 512 KiB rewritten
# underneath): B's rescue fails its check and ends nothing; A's fill fills
# the folios, and both readers get true bytes or EIO, never B's bytes.
scenario6_bad() {
	local n=6e T s g pa pb b0 k0 ra rb
	T=/tmp/$n.true s=$smnt/$n g=$m1/$n
	mkfile "$T" $((2 * MiB))
	{ cp "$T" "$s" && cp "$T" "$g" && tag "$s" 1 && tag "$g" 1; } || die "$n-setup"
	check "$n-rewrite-g" rewrite_member "$g" /mnt/img/m1.img "$l1" 0 $((512 * 1024)) "$T" "/tmp/$n.own"
	echo 50 >"$sysfs/fill_wait_ms"
	rm -f "/tmp/$n"*.ready "/tmp/$n"*.go
	python3 "$ipy/reader.py" "$s" "$T" "wait:/tmp/${n}a" read:0:524288 >"/tmp/$n.a" 2>&1 &
	pa=$!
	python3 "$ipy/reader.py" "$g" "$T" --own "/tmp/$n.own" "wait:/tmp/${n}b" read:0:524288 >"/tmp/$n.b" 2>&1 &
	pb=$!
	{ await "/tmp/${n}a" $pa && await "/tmp/${n}b" $pb; } || die "$n-setup-readers"
	drop_unmapped
	k0=$(klog_n) b0=$(dmesg_count 'does not match its key')
	delay 8000 || die "$n-delay"
	go "/tmp/${n}a"
	wait_d $pa 50 || echo "# $n: A not seen waiting: $(pstate $pa)"
	go "/tmp/${n}b"
	reap $pb 40
	reap $pa 60
	delay 0
	ra=$(cat "/tmp/$n.a") rb=$(cat "/tmp/$n.b")
	echo "# $n: A (slow, good): $ra; B (bad): $rb"
	all_true "$n-slow-good-member-true" "$ra" 524288
	check "$n-bad-member-no-wrong-bytes" test "$(field "$rb" wrong)" = 0 -a "$(field "$rb" own)" = 0
	expect_eq "$n-bad-rescue-caught" 1 $(($(dmesg_count 'does not match its key') - b0))
	log_clean "$n-kernel-log-clean" "$k0"
	rm -f "$s" "$g" "$T"
}

for g in $groups; do
	"group$g"
	[ -z "$wait_default" ] || echo "$wait_default" >"$sysfs/fill_wait_ms"
done
umount "$smnt" 2>/dev/null
dmsetup remove "$slow"
losetup -d "$sloop"
umount "$m1"
losetup -d "$l1"
