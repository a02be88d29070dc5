#!/bin/bash
# vm: --disk thin:5G --disk ext:1G --mem 2G --cpus 2
# timeout: 900
# pcdedup functional tests: XFS on dm-thin snapshots, ext4, overlayfs with
# distinct lowers. Every read path is checked byte for byte against the
# member read with O_DIRECT (tests/dedup/bin/readpaths).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

sizes=(0 1 4095 4096 4097 2097275 5242880)
bad_values=(enabled:2 enabled:yes-please verify:paranoid min_size:-1 min_size:lots)
# 87 cases of their own; per size a readpaths case and, but for the empty
# file, a was-shared case, both for py too; one per bad sysfs value.
plan $((87 + 2 * ${#sizes[@]} - 1 + 2 + ${#bad_values[@]}))
[ -d "$sysfs" ] || { fail pcdedup-present "no $sysfs"; exit 1; }

# --- off after boot: a tagged file opens privately until switched on ---
# Before anything here writes enabled. An XFS of its own on the ext disk
# (mkfs.ext4 -F reuses that disk below), one tagged 1 MiB file, held open
# while the counters and the listing are read.
expect_eq default-off-knob 0 "$(knob enabled)"
# The files and modes of /sys/kernel/mm/pcdedup are those its ABI
# document (in the series) gives: "NAME MODE" lines, sorted, both ways.
abi_doc=$(dirname "$0")/../../build/linux/Documentation/ABI/testing/sysfs-kernel-mm-pcdedup
abi_documented() {
	awk '/^What:/ { if (d) { n = 0; d = 0 } f = $2; sub(".*/pcdedup/", "", f); if (f != "") w[++n] = f }
	     /^Description:/ && match($0, /[(]R[OW]*, 0[0-7]+[)]|[(]WO, 0[0-7]+[)]/) {
		m = substr($0, RSTART, RLENGTH); sub(/.*, 0/, "", m); sub(/[)]/, "", m)
		for (i = 1; i <= n; i++) print w[i], m; d = 1 }' "$abi_doc" | sort
}
if [ -r "$abi_doc" ]; then
	expect_eq abi-doc-is-sysfs "$(abi_documented)" "$(cd "$sysfs" && stat -c '%n %a' -- * | sort)"
else
	fail abi-doc-is-sysfs "no $abi_doc (make tree)"
fi
pre=/mnt/pre
mkdir -p $pre
mkfs.xfs -q -f "$(realpath /dev/disk/by-name/ext)"
mount /dev/disk/by-name/ext $pre
mkfile $pre/t $((1 << 20))
# Tagged before pcdedup_on loads the secret: made here, kept for the boot.
secret_new
"$pcdedup" tag -q --min-size 0 $pre/t
drop_caches
opened_shared() { # FILE: "OPEN_SHARED_DELTA SHARES LISTED_MEMBERS" of one open held
	local s0 out
	s0=$(vmstat open_shared)
	exec 3<"$1"
	cat <&3 >/dev/null
	out="$(($(vmstat open_shared) - s0)) $(knob shares) $(share_field "$1" members || true)"
	exec 3<&-
	echo "${out% }"
}
if [ -z "$(key_hex $pre/t)" ]; then
	fail default-off-open-private "$pre/t has no key: the case would prove nothing"
else
	# No open counted as shared, no share live, none listed for its key.
	expect_eq default-off-open-private "0 0" "$(opened_shared $pre/t)"
fi
pcdedup_on
expect_eq on-after-enable "1 1 1" "$(opened_shared $pre/t)"
umount $pre
drop_caches
echo 0 >"$sysfs/min_size"

# --- an XFS image on a thin volume, tagged, then snapshotted ----------
thin_setup thin pcd
o=/mnt/origin
mkdir $o/f
for s in "${sizes[@]}"; do mkfile "$o/f/r$s" "$s"; done
cp /usr/bin/python3.11 $o/f/py
mkfile $o/f/forged 4097
mkfile /tmp/copied 4097
cp /tmp/copied $o/f/copied
mkfile $o/f/small 100
mkfile $o/f/big $((16 << 20))
mkfile $o/f/big2 $((16 << 20))
"$pcdedup" tag -q --min-size 0 $o/f
# Right format, wrong content, a right MAC: the key of another file of the
# same size, made for this one with the secret (a host that made a wrong
# key), by the tests' own key builder.
python3 "$(dirname "$0")/mkkey.py" --set --target $o/f/forged --mac-for $o/f/forged $o/f/r4097
# The key of another file copied as it is (as cp -a, an image or a hostile
# tenant would carry it): its MAC is that file's.
setfattr -n trusted.pcdedup -v "0x$(key_hex $o/f/r4097)" $o/f/copied
thin_snapshots pcd 3
drop_caches

# --- sharing happens, and only once in memory -------------------------
shared0=$(vmstat open_shared)
cached0=$(cached_kb)
for i in 1 2 3; do cat /mnt/snap$i/f/r5242880 >/dev/null; done
cached1=$(cached_kb)
expect_eq xfs-thin-opens-shared 3 $(($(vmstat open_shared) - shared0))
grow=$((cached1 - cached0))
# One copy is 5120 KiB; three private copies would be 15360 KiB.
check xfs-thin-cache-grows-once sh -c "[ $grow -ge 4608 ] && [ $grow -lt 7680 ]"
expect_eq xfs-thin-share-cached-pages 1280 "$(share_field /mnt/snap1/f/r5242880 cached_pages)"
exec 3</mnt/snap1/f/r5242880 4</mnt/snap2/f/r5242880 5</mnt/snap3/f/r5242880
expect_eq xfs-thin-share-members 3 "$(share_field /mnt/snap1/f/r5242880 members)"
expect_eq xfs-thin-share-openers 3 "$(share_field /mnt/snap1/f/r5242880 openers)"
check xfs-thin-sysfs-pages-saved test "$(knob pages_saved)" -ge 2560
exec 3<&- 4<&- 5<&-
frames=$("$bin/pagecount" /mnt/snap1/f/py /mnt/snap2/f/py /mnt/snap3/f/py |
	python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["distinct_frames"], d["total_pages"] // 3)')
read -r distinct one <<<"$frames"
expect_eq xfs-thin-one-physical-copy "$one" "$distinct"

# --- cold reads through a share read ahead; fadvise reaches it -------
disk_reads() { echo "$(disk_stat thin read_ios) $(disk_stat thin read_sectors)"; }
drop_caches
read -r reads0 sectors0 <<<"$(disk_reads)"
cat /mnt/snap2/f/r5242880 >/dev/null
read -r reads sectors <<<"$(disk_reads)"
# 1280 pages: filling the share a page at a time would take over 1280
# reads; the file's 10240 sectors did come from this disk (it was cold).
check share-cold-read-reads-ahead sh -c "[ $((reads - reads0)) -lt 640 ] && [ $((sectors - sectors0)) -ge 10240 ]"
drop_caches
python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_WILLNEED)' /mnt/snap3/f/r5242880
# WILLNEED reads one readahead window (128 KiB) at most, as on any file.
check share-fadvise-willneed-fills test "$(share_field /mnt/snap1/f/r5242880 cached_pages)" -ge 32

# --- fills read members directly, off the reader, into large folios --
# The member's own page cache is not filled (and dropped again): no folio
# of the member inode enters the page cache during a cold read through the
# share. The check runs on pcdedup's workqueue after the read completes,
# not in the reader, which only waits for the folios it asked for.
tr=/sys/kernel/tracing
[ -e $tr/trace ] || mount -t tracefs nodev $tr
m=/mnt/snap2/f/r5242880
read -r dmaj dmin mino < <(stat -c '%Hd %Ld %i' $m)
add=$tr/events/filemap/mm_filemap_add_to_page_cache
drop_caches
echo >$tr/trace
filt="i_ino == $mino && s_dev == $(((dmaj << 20) | dmin))"
echo "$filt" >$add/filter
echo 1 >$add/enable
echo 1 >$tr/events/pcdedup/pcdedup_fill/enable
direct0=$(vmstat fill_direct)
cat $m >/dev/null
echo 0 >$add/enable
echo 0 >$tr/events/pcdedup/pcdedup_fill/enable
echo 0 >$add/filter
expect_eq fill-member-cache-untouched 0 "$(grep -c mm_filemap_add_to_page_cache $tr/trace)"
check fill-direct-counted test $(($(vmstat fill_direct) - direct0)) -ge 1280
fills=$(grep -c 'pcdedup_fill:' $tr/trace)
check fill-traced test "$fills" -gt 0
expect_eq fill-checked-off-reader 0 "$(grep 'pcdedup_fill:' $tr/trace | grep -c '^ *cat-')"
# The same filter catches the member's own page cache filling: the same
# cold read with sharing off inserts the member's folios. (A filter that
# matched nothing would make fill-member-cache-untouched prove nothing.)
echo 0 >"$sysfs/enabled"
drop_caches
echo >$tr/trace
echo "$filt" >$add/filter
echo 1 >$add/enable
cat $m >/dev/null
echo 0 >$add/enable
echo 0 >$add/filter
pcdedup_on
check fill-member-cache-filter-catches-private-read test "$(grep -c mm_filemap_add_to_page_cache $tr/trace)" -gt 0
drop_caches
echo >$tr/trace
# Share folios are large: some pages of a share mapping are compound.
python3 - $m <<'PY' >/tmp/compound
import mmap, os, struct, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
size = os.fstat(fd).st_size
mm = mmap.mmap(fd, size, prot=mmap.PROT_READ)
for off in range(0, size, 4096):
    mm[off]
addr = None
for line in open("/proc/self/maps"):
    if line.rstrip().endswith(sys.argv[1]):
        addr = int(line.split("-")[0], 16)
        break
pm = os.open("/proc/self/pagemap", os.O_RDONLY)
kf = os.open("/proc/kpageflags", os.O_RDONLY)
compound = 0
for i in range(size // 4096):
    e, = struct.unpack("Q", os.pread(pm, 8, (addr // 4096 + i) * 8))
    if e >> 63:
        f, = struct.unpack("Q", os.pread(kf, 8, (e & ((1 << 55) - 1)) * 8))
        compound += (f >> 15) & 1 or (f >> 16) & 1
print(compound)
PY
check share-folios-large test "$(cat /tmp/compound)" -gt 0
# Mappings of a shared file are placed as private ones are: 2 MiB aligned
# (the whole 5 MiB file; mmap aligns lengths of whole 2 MiB by itself).
mapaddr() {
	python3 -c 'import mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
mm = mmap.mmap(fd, 0, prot=mmap.PROT_READ)
for line in open("/proc/self/maps"):
    if line.rstrip().endswith(sys.argv[1]):
        print(int(line.split("-")[0], 16) % (2 << 20)); break' "$1"
}
mkfile /mnt/snap1/f/untagged $((5 << 20))
expect_eq private-mmap-thp-aligned 0 "$(mapaddr /mnt/snap1/f/untagged)"
expect_eq share-mmap-thp-aligned 0 "$(mapaddr $m)"

# --- a granule is read and hashed once, however many readers race ----
# 16 MiB is past what a level-0 key holds on XFS: its key keeps tree level
# 1, 32 granules of 512 KiB. Three mmap readers fault through two such
# files at once: 64 granules.
expect_eq big-key-tree-level-1 1 "$(key_field $o/f/big tree_level)"
drop_caches
verified0=$(vmstat fill_verified)
handed0=$(vmstat fill_handed)
sectors0=$(disk_stat thin read_sectors)
# One fio, three jobs started together, each through both files in turn;
# no madvise: faults read around, backwards too, as for a binary.
jobs=()
for i in 1 2 3; do jobs+=("--name=r$i" "--filename=/mnt/snap$i/f/big:/mnt/snap$i/f/big2"); done
fio --readonly --invalidate=0 --fadvise_hint=0 --ioengine=mmap --rw=read \
	--bs=128k --filesize=16m --size=32m --file_service_type=sequential \
	--eta=never --output=/dev/null "${jobs[@]}"
verified=$(($(vmstat fill_verified) - verified0))
handed=$(vmstat fill_handed)
echo "# big-racing: $verified granule checks, $((handed - handed0)) pages handed over"
# A fill that finds a granule owned by another hands its folios over; a
# granule is read twice only when a fill's folios straddle another's.
# (Keeping only locked pages hashed 2.7x; each racing fill hashing its
# whole granules, up to 83.) Each of the 64 is checked at least once.
check big-racing-granules-hashed-once sh -c "[ $verified -ge 64 ] && [ $verified -le 68 ]"
sectors=$(($(disk_stat thin read_sectors) - sectors0))
# 65536 sectors are the files once (cold: read at least once); metadata
# and a stray granule fit in 1.25x.
check big-racing-disk-read-once sh -c "[ $sectors -ge 65536 ] && [ $sectors -le 81920 ]"
expect_eq big-racing-share-complete 4096 "$(share_field /mnt/snap1/f/big cached_pages)"
check big-racing-bytes-true cmp <(dd if=/mnt/snap1/f/big iflag=direct bs=1M status=none) /mnt/snap2/f/big

# --- a file read before it was tagged shares once it is -------------
mkfile /mnt/snap1/f/late 65536
cp /mnt/snap1/f/late /mnt/snap2/f/late
cat /mnt/snap1/f/late /mnt/snap2/f/late >/dev/null
"$pcdedup" tag -q --min-size 0 /mnt/snap1/f/late /mnt/snap2/f/late
before=$(vmstat open_shared)
cat /mnt/snap1/f/late /mnt/snap2/f/late >/dev/null
expect_eq tagged-after-first-open-shares 2 $(($(vmstat open_shared) - before))

# --- every read path returns the exact bytes --------------------------
for s in "${sizes[@]}" py; do
	n=r$s
	[ "$s" = py ] && n=py
	before=$(vmstat open_shared)
	# Its KTAP output, skips with their reasons, is this case's subtest.
	readpaths_case "xfs-readpaths-$n" "/mnt/snap1/f/$n" "$o/f/$n"
	# An empty file has no content to share and gets no key.
	[ "$s" = 0 ] || check "xfs-readpaths-$n-was-shared" test $(($(vmstat open_shared) - before)) -gt 0
done
check empty-file-untagged test -z "$(key_hex $o/f/r0)"
check xfs-exec-shared-python /mnt/snap2/f/py -c 'import json, os; print(json.dumps(os.uname().sysname))'

# --- different content never shares; forged keys never poison ----------
# Two shares listed, one per content (not one, nor none).
a=$(share_key /mnt/snap1/f/r4096) || a=""
b=$(share_key /mnt/snap1/f/r4097) || b=""
check different-content-different-shares sh -c "[ -n '$a' ] && [ -n '$b' ] && [ '$a' != '$b' ]"
# A copied key is not honoured: its MAC binds it to the file it was made
# for. The file reads its own bytes, opens privately, and is counted.
drop_caches
ku0=$(vmstat key_unauthenticated) s0=$(vmstat open_shared)
check copied-key-reads-own-bytes cmp /mnt/snap1/f/copied /tmp/copied
expect_eq copied-key-opens-private 0 $(($(vmstat open_shared) - s0))
ku=$(vmstat key_unauthenticated)
if [ -z "$ku0" ] || [ -z "$ku" ]; then
	fail copied-key-unauthenticated-counted "no pcdedup_key_unauthenticated in $events"
else
	expect_eq copied-key-unauthenticated-counted 1 $((ku - ku0))
fi
# A forged member joins the share of the key it carries, unread. Its own
# blocks fail their check when they fill: its reader gets EIO, never them.
drop_caches
fb0=$(vmstat fill_bad)
vf0=$(knob verify_failures)
if out=$(cat /mnt/snap1/f/forged 2>&1); then
	fail forged-fill-fails "read succeeded"
else
	check forged-fill-fails-eio grep -q 'Input/output error' <<<"$out"
fi
expect_eq forged-fill-bad-counted 1 $(($(vmstat fill_bad) - fb0))
expect_eq forged-verify-failure-counted 1 $(($(knob verify_failures) - vf0))
check forged-logged grep -q 'does not match its key' <(dmesg)
# The true member of that key still fills and reads its bytes.
check forged-share-intact cmp /mnt/snap2/f/r4097 $o/f/r4097
# Once caught, a member's opens are private: it reads its own bytes.
mm0=$(vmstat open_refused_mismatch)
check forged-then-reads-own-bytes cmp /mnt/snap1/f/forged <(dd if=$o/f/forged iflag=direct bs=1M status=none)
expect_eq forged-then-refused-counted 1 $(($(vmstat open_refused_mismatch) - mm0))
# A member caught (while its inode is cached) is not let in by trust mode.
echo trust >"$sysfs/verify"
mm0=$(vmstat open_refused_mismatch)
cat /mnt/snap1/f/forged >/dev/null
expect_eq trust-refuses-bad-member 1 $(($(vmstat open_refused_mismatch) - mm0))
echo full >"$sysfs/verify"
# Another snapshot's forged copy serves the key's content from the share
# while it is cached, and EIO when it has to fill: never its own bytes.
cat /mnt/snap1/f/r4097 >/dev/null
check forged-served-key-content cmp /mnt/snap2/f/forged $o/f/r4097
echo 4096 >"$sysfs/min_size"
sm0=$(vmstat open_refused_small)
cat /mnt/snap1/f/r4095 >/dev/null
expect_eq below-min-size-refused 1 $(($(vmstat open_refused_small) - sm0))
echo 0 >"$sysfs/min_size"

# --- verify=trust shares without checking, apart from checked shares ---
drop_caches
echo trust >"$sysfs/verify"
v0=$(vmstat fill_verified)
s0=$(vmstat open_shared)
sh0=$(knob shares)
cat /mnt/snap3/f/r2097275 /mnt/snap2/f/r2097275 >/dev/null
expect_eq trust-no-checking 0 $(($(vmstat fill_verified) - v0))
expect_eq trust-shares 2 $(($(vmstat open_shared) - s0))
exec 3</mnt/snap3/f/r2097275
echo full >"$sysfs/verify"
exec 4</mnt/snap2/f/r2097275
# The checked open does not use what the trusted share filled.
expect_eq trust-and-full-apart $((sh0 + 2)) "$(knob shares)"
check full-after-trust-checks test $(($(vmstat fill_verified) - v0)) -eq 0
cat <&4 >/dev/null
check full-after-trust-fills-checked test $(($(vmstat fill_verified) - v0)) -gt 0
exec 3<&- 4<&-

# --- malformed keys are ignored and counted ---------------------------
cp $o/f/r4097 /mnt/snap1/f/badkey
setfattr -n trusted.pcdedup -v 0x0301200000000000 /mnt/snap1/f/badkey
k0=$(vmstat key_invalid)
check malformed-key-reads cmp /mnt/snap1/f/badkey $o/f/r4097
expect_eq malformed-key-counted 1 $(($(vmstat key_invalid) - k0))

# --- writes: a reader does not hold the owner off (more in citizen.sh) -
f=/mnt/snap1/f/r2097275
exec 3<$f
check write-while-open-through-share sh -c "echo x >>$f"
exec 3<&-
check write-after-close sh -c "echo appended >>$f"
check key-dropped-on-write test -z "$(key_hex $f)"
s0=$(vmstat open_shared)
check modified-reads-new-bytes cmp $f <(dd if=$f iflag=direct bs=1M status=none)
expect_eq modified-not-shared 0 $(($(vmstat open_shared) - s0))
cp $o/f/r4096 /mnt/snap1/f/trunc
"$pcdedup" tag -q --min-size 0 /mnt/snap1/f/trunc
truncate -s 100 /mnt/snap1/f/trunc
check key-dropped-on-truncate test -z "$(key_hex /mnt/snap1/f/trunc)"

# --- unmount a member filesystem while other members keep reading -----
exec 3</mnt/snap2/f/r5242880
cat /mnt/snap1/f/r5242880 >/dev/null
check umount-member-while-shared umount /mnt/snap1
check other-member-still-reads cmp /dev/fd/3 <(dd if=$o/f/r5242880 iflag=direct bs=1M status=none)
exec 3<&-
mount -o nouuid /dev/pcd/snap1 /mnt/snap1

# --- reclaim: caches dropped and memory pressure, then re-read --------
drop_caches
check share-freed-when-empty test "$(knob shares)" -eq 0
readpaths_case reread-after-drop-caches /mnt/snap2/f/r5242880 $o/f/r5242880
echo +memory >/sys/fs/cgroup/cgroup.subtree_control
memstat() { awk -v k="$2" '$1 == k {print $2}' "/sys/fs/cgroup/$1/memory.stat"; } # GROUP KEY
share_pages() { shares_total cached_pages; }
# A share's folios are charged to the memory cgroup of the reader whose
# read filled them (as a lower file's of an overlay), once: a reader alone
# in its group reading one file through three snapshots, cold, is charged
# one copy (5120 KiB), neither three nor none.
mkdir -p /sys/fs/cgroup/reader
drop_caches
# shellcheck disable=SC2016
sh -c 'echo $$ >/sys/fs/cgroup/reader/cgroup.procs; for i in 1 2 3; do cat /mnt/snap$i/f/r5242880 >/dev/null; done'
kb=$(($(memstat reader file) / 1024))
check memcg-share-charged-once-to-reader sh -c "[ $kb -ge 4608 ] && [ $kb -lt 7680 ]"
# A group limited to 24 MiB reads 43 MiB of distinct content (py, r5242880,
# big, big2) through shares, three times: reclaim within the group makes
# room, every byte is right, and the shares keep no more than the group
# may hold. (Folios charged elsewhere, or to nobody, would escape the
# limit: no reclaim in the group, and all 11000 pages kept.)
mkdir -p /sys/fs/cgroup/squeeze
echo 24M >/sys/fs/cgroup/squeeze/memory.max
drop_caches
# shellcheck disable=SC2016
check reread-under-memcg-pressure sh -c 'echo $$ >/sys/fs/cgroup/squeeze/cgroup.procs; for i in 1 2 3; do cat /mnt/snap$i/f/py /mnt/snap$i/f/r5242880 /mnt/snap$i/f/big /mnt/snap$i/f/big2 >/dev/null; done; cmp /mnt/snap3/f/py /usr/bin/python3.11'
pages=$(share_pages) steal=$(memstat squeeze pgsteal)
echo "# memcg: shares hold $pages pages after reading under a 6144-page limit; pgsteal $steal"
check memcg-pressure-share-reclaimed-in-group sh -c "[ $pages -le 6144 ] && [ $steal -gt 0 ]"
# shellcheck disable=SC2016
check memcg-pressure-all-members-exact sh -c 'echo $$ >/sys/fs/cgroup/squeeze/cgroup.procs; for i in 1 2 3; do for f in r5242880 big big2; do cmp /mnt/snap$i/f/$f /mnt/origin/f/$f || exit 1; done; cmp /mnt/snap$i/f/py /usr/bin/python3.11 || exit 1; done'

# --- many processes, many members -------------------------------------
check concurrent-stress "$bin/stress" -p 8 -t 10 $o/f/r5242880 /mnt/snap1/f/r5242880 /mnt/snap2/f/r5242880 /mnt/snap3/f/r5242880
check concurrent-stress-python "$bin/stress" -p 4 -t 5 $o/f/py /mnt/snap1/f/py /mnt/snap2/f/py /mnt/snap3/f/py

# --- ext4 --------------------------------------------------------------
mkfs.ext4 -q -F "$(realpath /dev/disk/by-name/ext)"
mkdir -p /mnt/ext
mount /dev/disk/by-name/ext /mnt/ext
mkdir /mnt/ext/a /mnt/ext/b
cp $o/f/r2097275 /mnt/ext/a/f
cp $o/f/r2097275 /mnt/ext/b/f
"$pcdedup" tag -q --min-size 0 /mnt/ext
drop_caches
s0=$(vmstat open_shared)
readpaths_case ext4-readpaths /mnt/ext/a/f /mnt/ext/b/f
cat /mnt/ext/b/f >/dev/null
check ext4-shared test $(($(vmstat open_shared) - s0)) -gt 1
# The same content on XFS and on ext4 is one share.
exec 3</mnt/ext/a/f 4</mnt/snap2/f/r2097275
check ext4-and-xfs-one-share test "$(share_field /mnt/ext/a/f members)" -ge 2
exec 3<&- 4<&-
# Too big for a level 1 key in ext4's one attribute block: level 2, whose
# granules are 64 MiB. A read checks each granule whole once, then the
# level below it that the check proved, not the whole granule again for
# every readahead window (which read 8.7 GB in 2 minutes for 128 MiB).
big=/mnt/ext/a/big
mkfile $big $((80 << 20))
"$pcdedup" tag -q --min-size 0 $big
expect_eq ext4-big-key-level-2 2 "$(key_field $big tree_level)"
ext_sectors() { disk_stat ext read_sectors; }
drop_caches
r0=$(ext_sectors)
cached0=$(vmstat fill_cached) direct0=$(vmstat fill_direct)
check ext4-level2-read-finishes sh -c "timeout 120 cat $big >/dev/null"
# Once to check granule 0 whole, once more for what it could not keep;
# at least once (it was cold).
rd=$(($(ext_sectors) - r0))
check ext4-level2-read-bounded sh -c "[ $rd -ge $(((80 << 20) / 512)) ] && [ $rd -lt $((3 * (80 << 20) / 512)) ]"
# A 64 MiB granule is read through the member's page cache, the level
# below it directly once the check has proved it.
check ext4-level2-granule-via-page-cache test $(($(vmstat fill_cached) - cached0)) -ge 16384
check ext4-level2-rest-direct test $(($(vmstat fill_direct) - direct0)) -gt 0
check ext4-level2-bytes cmp $big <(dd if=$big iflag=direct bs=1M status=none)
rm $big

# --- overlayfs with distinct lowers holding the same files ------------
for i in 1 2; do
	mkdir -p /tmp/ovl$i/upper /tmp/ovl$i/work /mnt/ovl$i
	mount -t overlay overlay -o "lowerdir=/mnt/snap$i/f,upperdir=/tmp/ovl$i/upper,workdir=/tmp/ovl$i/work" /mnt/ovl$i
done
drop_caches
s0=$(vmstat open_shared)
readpaths_case overlay-readpaths /mnt/ovl1/r5242880 $o/f/r5242880
cat /mnt/ovl2/r5242880 >/dev/null
check overlay-lowers-shared test $(($(vmstat open_shared) - s0)) -ge 2
check overlay-exec-python /mnt/ovl1/py -c 'import os'
check overlay-maps-show-user-path grep -q /mnt/ovl1/py <(/mnt/ovl1/py -c 'print(open("/proc/self/maps").read())')
check xfs-maps-show-user-path grep -q /mnt/snap2/f/py <(/mnt/snap2/f/py -c 'print(open("/proc/self/maps").read())')
check overlay-copy-up-writable sh -c 'echo more >>/mnt/ovl1/r4097'
check overlay-copy-up-no-key test -z "$(key_hex /tmp/ovl1/upper/r4097)"
check overlay-lower-key-kept test -n "$(key_hex /mnt/snap1/f/r4097)"
check overlay-copied-up-bytes cmp /mnt/ovl1/r4097 <(cat $o/f/r4097; echo more)
umount /mnt/ovl1 /mnt/ovl2

# --- switched off again (enabled=0): nothing shares --------------------
echo 0 >"$sysfs/enabled"
s0=$(vmstat open_shared)
cat /mnt/snap1/f/r5242880 /mnt/snap2/f/py >/dev/null
expect_eq disabled-nothing-shares 0 $(($(vmstat open_shared) - s0))
pcdedup_on

# --- sysfs refuses bad values ------------------------------------------
# Refused as a bad value (EINVAL), not for any other reason.
for kv in "${bad_values[@]}"; do
	if out=$( (echo "${kv#*:}" >"$sysfs/${kv%%:*}") 2>&1); then
		fail "sysfs-rejects-${kv/:/-}" "accepted"
	elif grep -q 'Invalid argument' <<<"$out"; then
		pass "sysfs-rejects-${kv/:/-}"
	else
		fail "sysfs-rejects-${kv/:/-}" "refused, but not as a bad value: $out"
	fi
done
# What this suite set last (enabled 1 by pcdedup_on above, verify full,
# min_size 0), not the boot defaults: a refused write changes nothing.
expect_eq sysfs-values-unchanged "1 full 0" "$(knob enabled) $(knob verify) $(knob min_size)"
check status-json-parses sh -c "'$pcdedup' status --json | python3 -m json.tool >/dev/null"
