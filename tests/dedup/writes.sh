#!/bin/bash
# vm: --disk thin:5G --disk ext:1G --mem 1G --cpus 2
# kernels: patched
# timeout: 600
# pcdedup and writes. Whatever changes a tagged file's data needs an open
# for write (or is truncate(2) by path), and the key goes at that open,
# before the data change, on every write path: so no other member ever
# reads the changed bytes, even with verify=trust after the changed member
# is evicted and read again. Readers that opened it through a share before
# the write read what was written (read, pread, splice, sendfile, a new
# mapping), as its untagged twin's readers do; a mapping made before keeps
# the share's bytes (documented). One run of tests/dedup/bin/writes per
# write path (README.md), each of its checks one case here.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

# NAME OP: the write paths, on XFS thin snapshots (ext4: move-ext, an
# overlay whose upper is on a snapshot: overlay-mmap-write).
paths=(write:write o-trunc:o-trunc truncate-path:truncate-path punch-hole:punch-hole
	ficlonerange:ficlonerange copy-file-range:copy-file-range odirect:odirect
	io-uring:io-uring mmap-write:mmap-write swapext:swapext exchange-range:exchange-range
	move-ext:move-ext overlay-mmap-write:mmap-write)
checks=(shared-before key-gone-at-open key-gone-after read-after-write pread-after-write
	splice-sendfile-after-write new-mapping-sees-new old-mapping-keeps-old
	other-member-reads-original changed-reads-own)
# Every path has every check but truncate-path, which has no open.
plan $((${#paths[@]} * ${#checks[@]} - 1 + 1)) # and no-kernel-warnings

# Keys: a kernel that takes a secret honours version 3 keys (with MACs),
# which the tool makes with this boot's secret (pcdedup_on loads it). The
# kernel of the series before it (build/bzImage-old) takes version 2 keys
# only, made by mkkey.py, and has no secret: it is switched on by hand.
if [ -e "$sysfs/secret" ] || [ ! -e "$sysfs/enabled" ]; then
	pcdedup_on
	tag() { "$pcdedup" tag -q --min-size 0 "$@"; }
else
	echo 1 >"$sysfs/enabled"
	echo "# no $sysfs/secret: version 2 keys (mkkey.py)"
	tag() {
		local f
		for f; do python3 "$(dirname "$0")/mkkey.py" --version 2 --set "$f"; done
	}
fi
echo 0 >"$sysfs/min_size"
warn0=$(dmesg | grep -cE 'WARNING:|BUG:' || true)

# wcase NAME OP FILE TWIN OTHER [OPTIONS]: one run of writes, its checks
# as cases NAME-CHECK; a check it did not report fails with its output.
wcase() {
	local name=$1 op=$2 out rc=0 c line
	shift 2
	out=$("$bin/writes" "$op" "$@" 2>&1) || rc=$?
	grep '^# ' <<<"$out" || true
	for c in "${checks[@]}"; do
		[ "$c:$op" != key-gone-at-open:truncate-path ] || continue
		line=$(grep -m 1 "^$c " <<<"$out" || true)
		case $line in
		"$c ok") pass "$name-$c" ;;
		"$c fail "*) fail "$name-$c" "${line#"$c fail "}" ;;
		*) fail "$name-$c" "not reported (writes exited $rc): $(grep -vE '^# | (ok|fail)( |$)' <<<"$out" | tail -n 3)" ;;
		esac
	done
}

# --- an XFS origin on a thin pool, two snapshots ----------------------
# Each path has its file (tagged), an untagged twin, and two copies of
# other bytes of the same size (the donor or source for FILE and for its
# twin). The overlay's upper is on the origin too.
thin_setup thin pcd
o=/mnt/origin
S=200000
mkdir -p $o/f $o/ovl/lower $o/ovl/upper $o/ovl/work
tagged=()
for pe in "${paths[@]}"; do
	p=${pe%%:*}
	mkfile "$o/f/$p" $S
	cp "$o/f/$p" "$o/f/$p.twin"
	mkfile "$o/f/$p.aux" $S
	cp "$o/f/$p.aux" "$o/f/$p.aux2"
	tagged+=("$o/f/$p")
done
cp $o/f/overlay-mmap-write $o/ovl/upper/om
cp $o/f/overlay-mmap-write $o/ovl/upper/om.twin
tag "${tagged[@]}" $o/ovl/upper/om
# XFS_IOC_EXCHANGE_RANGE needs the exchange-range feature (mkfs.xfs -i
# exchange=1 from xfsprogs 6.10); the xfsprogs here predates it: set the
# feature's incompat bit (0x40) by hand, past xfs_db's verifier, which
# does not know it (it warns so).
umount $o
incompat=$(xfs_db -r -c 'sb 0' -c 'print features_incompat' /dev/pcd/origin | awk '{print $3}')
xfs_db -x -c 'sb 0' -c "write -d features_incompat $((incompat | 0x40))" /dev/pcd/origin >/dev/null 2>&1
echo "# origin: $(xfs_db -r -c 'sb 0' -c 'print features_incompat' /dev/pcd/origin 2>/dev/null) (0x40: exchange-range)"
mount /dev/pcd/origin $o
thin_snapshots pcd 2
s1=/mnt/snap1/f s2=/mnt/snap2/f

# ext4: the donor of EXT4_IOC_MOVE_EXT is tagged (its data changes).
mkfs.ext4 -q -F "$(realpath /dev/disk/by-name/ext)"
mkdir -p /mnt/ext
mount /dev/disk/by-name/ext /mnt/ext
cp $o/f/move-ext /mnt/ext/mv
cp $o/f/move-ext /mnt/ext/mv.twin
cp $o/f/move-ext.aux /mnt/ext/mv.orig
cp $o/f/move-ext.aux /mnt/ext/mv.orig2
tag /mnt/ext/mv

mkdir -p /mnt/ovl
mount -t overlay overlay -o lowerdir=/mnt/snap1/ovl/lower,upperdir=/mnt/snap1/ovl/upper,workdir=/mnt/snap1/ovl/work /mnt/ovl
trap 'echo full >"$sysfs/verify" || true; umount /mnt/ovl /mnt/ext || true' EXIT

# --- every path, verify=trust (fills unchecked) -----------------------
echo trust >"$sysfs/verify"
drop_caches
for pe in "${paths[@]}"; do
	p=${pe%%:*} op=${pe#*:}
	case $p in
	move-ext)
		wcase "$p" "$op" /mnt/ext/mv /mnt/ext/mv.twin "$s2/$p" --aux /mnt/ext/mv.orig --aux2 /mnt/ext/mv.orig2 ;;
	overlay-mmap-write)
		wcase "$p" "$op" /mnt/ovl/om /mnt/ovl/om.twin "$s2/$p" --key /mnt/snap1/ovl/upper/om ;;
	ficlonerange | copy-file-range | swapext | exchange-range)
		wcase "$p" "$op" "$s1/$p" "$s1/$p.twin" "$s2/$p" --aux "$s1/$p.aux" --aux2 "$s1/$p.aux2" ;;
	*)
		wcase "$p" "$op" "$s1/$p" "$s1/$p.twin" "$s2/$p" ;;
	esac
done

expect_eq no-kernel-warnings "$warn0" "$(dmesg | grep -cE 'WARNING:|BUG:' || true)"
