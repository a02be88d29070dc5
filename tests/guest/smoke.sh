#!/bin/bash
# vm: --disk scratch:2G --disk thin:4G --mem 1G
# timeout: 300
# Smoke test of the workbench: the booted kernel is the one just built, and
# the filesystems and facilities that every other suite needs work.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
# The build tree of the kernel (tests/run), empty for a bare image such as
# build/bzImage-cur, which is then read itself.
kbuild=${PCDEDUP_KBUILD-} image=${PCDEDUP_KERNEL_IMAGE:?}
# kernel 5, overlayfs 2, XFS and ext4 2, lvm2 thin 4, memcg 1, pcdedup 1
plan 15

if [ -n "$kbuild" ]; then
	uts=$(sed -n 's/^#define UTS_VERSION "\(.*\)"$/\1/p' "$kbuild/include/generated/utsversion.h")
	release=$(sed -n 's/^#define UTS_RELEASE "\(.*\)"$/\1/p' "$kbuild/include/generated/utsrelease.h")
	config() { cat "$kbuild/.config"; }
else
	# The image's version string, "RELEASE (USER@HOST) VERSION" (the boot
	# protocol's kernel_version: an offset from 0x200, at 0x20e), and its
	# configuration (CONFIG_IKCONFIG), as scripts/extract-ikconfig finds it.
	ver=$(python3 -c 'import struct, sys
b = open(sys.argv[1], "rb").read()
assert b[0x202:0x206] == b"HdrS", "not a bzImage"
o = struct.unpack_from("<H", b, 0x20e)[0] + 0x200
print(b[o:o + 256].split(b"\0")[0].decode())' "$image")
	release=${ver%% *} uts=${ver#*) }
	config() { build/linux/scripts/extract-ikconfig "$image"; }
fi
expect_eq kernel-release "$release" "$(uname -r)"
expect_eq kernel-build-version "$uts" "$(uname -v)"
check kernel-config-matches-build cmp <(zcat /proc/config.gz) <(config)
check config-overlayfs grep -qx CONFIG_OVERLAY_FS=y <(zcat /proc/config.gz)
expect_eq cpus 2 "$(nproc)"

# overlayfs mounts and copies up
o=/tmp/ovl
mkdir -p $o/lower $o/upper $o/work $o/merged
echo lower >$o/lower/file
mount -t overlay overlay -o lowerdir=$o/lower,upperdir=$o/upper,workdir=$o/work $o/merged
echo changed >>$o/merged/file
expect_eq overlay-copy-up "lower changed" "$(tr '\n' ' ' <$o/upper/file | sed 's/ $//')"
expect_eq overlay-lower-untouched lower "$(cat $o/lower/file)"
umount $o/merged

# XFS and ext4 on a scratch disk
disk=/dev/disk/by-name/scratch
for fs in xfs ext4; do
	mkdir -p /mnt/$fs
	if mkfs.$fs -q "$(realpath $disk)" >/dev/null 2>&1 || mkfs.$fs -F -q "$(realpath $disk)" >/dev/null 2>&1; then
		mount "$disk" /mnt/$fs
		head -c 1M /dev/urandom >/mnt/$fs/data
		sum=$(sha256sum </mnt/$fs/data)
		umount /mnt/$fs
		mount "$disk" /mnt/$fs
		expect_eq "$fs-mount-write-read" "$sum" "$(sha256sum </mnt/$fs/data)"
		umount /mnt/$fs
	else
		fail "$fs-mkfs" "mkfs.$fs failed"
	fi
done

# lvm2 thin pool, thin volume, thin snapshot; XFS on both, mounted nouuid
thin=$(realpath /dev/disk/by-name/thin)
lvm() { command lvm "$@" >/dev/null 2>&1; }
if lvm pvcreate -q "$thin" && lvm vgcreate -q smoke "$thin" &&
	lvm lvcreate -q -L 1G -T smoke/pool && lvm lvcreate -q -V 2G -T smoke/pool -n origin; then
	pass lvm-thin-volume
	mkfs.xfs -q /dev/smoke/origin
	mkdir -p /mnt/origin /mnt/snap
	mount /dev/smoke/origin /mnt/origin
	cp /usr/bin/bash /mnt/origin/bash
	umount /mnt/origin
	if lvm lvcreate -q -s smoke/origin -n snap && lvm lvchange -q -ay -K smoke/snap; then
		pass lvm-thin-snapshot
		mount /dev/smoke/origin /mnt/origin
		mount -o nouuid /dev/smoke/snap /mnt/snap
		check xfs-on-snapshot-same-bytes cmp /mnt/origin/bash /mnt/snap/bash
		check xfs-snapshot-distinct-inode-device test "$(stat -c %d /mnt/origin/bash)" != "$(stat -c %d /mnt/snap/bash)"
		umount /mnt/snap /mnt/origin
	else
		fail lvm-thin-snapshot "lvcreate -s / lvchange -K failed"
	fi
	lvm vgchange -q -an smoke || true
else
	fail lvm-thin-volume "$(command lvm lvcreate -L 1G -T smoke/pool 2>&1 | tail -n 1)"
fi

# cgroup v2 memory statistics
echo +memory >/sys/fs/cgroup/cgroup.subtree_control
mkdir -p /sys/fs/cgroup/smoke
# A file written from inside the group is charged to it (tmpfs: shmem is file).
sh -c 'echo $$ >/sys/fs/cgroup/smoke/cgroup.procs; head -c 4M /dev/zero >/tmp/memcg-probe'
file=$(awk '$1 == "file" {print $2}' /sys/fs/cgroup/smoke/memory.stat)
check memcg-file-stat-counts test "${file:-0}" -ge 4194304

# pcdedup's knob: a kernel that has it must boot with sharing off (0),
# unless told otherwise. make series-check boots kernels built from every
# prefix of the series (in build/kernel-series), and the knob comes with
# the patch that switches sharing on: only there may it be missing (a
# skip); any other build of the series without it fails.
if [ -e /sys/kernel/mm/pcdedup/enabled ]; then
	want=0
	grep -qw 'pcdedup=\(on\|1\)' /proc/cmdline && want=1
	expect_eq pcdedup-off-after-boot "$want" "$(cat /sys/kernel/mm/pcdedup/enabled)"
elif [ "$(basename "$kbuild")" = kernel-series ]; then
	skip pcdedup-off-after-boot "a prefix of the series without pcdedup's knob (make series-check)"
else
	fail pcdedup-off-after-boot "no /sys/kernel/mm/pcdedup/enabled in this kernel ($kbuild)"
fi
