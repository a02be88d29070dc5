#!/bin/bash
# vm: --disk aa:1G --mem 1G --append lsm=apparmor
# timeout: 600
# AppArmor decides about a tagged file what it decides about the same file
# untagged. Two byte-identical files on one XFS, t (tagged: opens are served
# from a share, the mappings' vm_file a backing file on it) and u (untagged),
# are read, mapped, mprotect-ed and run under profiles loaded with
# apparmor_parser and entered by change_profile (tests/security/aah.c):
# on the XFS (xfs), through an overlayfs whose lower is that directory
# mounted by the suite (ovl), and one mounted by a confined task (ovlc).
# Every case of the tagged file must give the expected outcome, be really
# shared (open_shared grows), and give what the untagged file gives.
set -euo pipefail
. "$(dirname "$0")/../dedup/lib.sh"

here=tests/security
w=/tmp/aa
aah=$w/aah
aafs=/sys/kernel/security/apparmor

die() {
	fail "${1:-setup}" "${2:-}"
	exit 1
}
# Setup 6 (apparmor-is-an-lsm, profile-change, the keys 2, files-identical,
# confined-mount); then 3 filesystems x 14 pairs x 3 cases (pair below).
fss=(xfs ovl ovlc) npairs=14
plan $((6 + ${#fss[@]} * npairs * 3))

[ -d "$aafs" ] || mount -t securityfs securityfs /sys/kernel/security 2>/dev/null || true
[ -d "$aafs" ] || die apparmor-enabled "no $aafs, lsm: $(cat /sys/kernel/security/lsm 2>/dev/null)"
check apparmor-is-an-lsm grep -qw apparmor /sys/kernel/security/lsm
pcdedup_on
[ ! -w "$sysfs/min_size" ] || echo 0 >"$sysfs/min_size"

mkdir -p $w
gcc -std=c11 -O2 -Wall -Wextra -Werror -o $aah $here/aah.c || die setup "cannot compile aah.c"
# Files under /mnt, and /d: the real files of the overlayfs that a confined
# task mounts have no path from the root (its layers are private mounts),
# attach_disconnected names them /d/t and /d/u. aah-r also lets aah read its
# label, aah-ix lets it run aah, which is dynamically linked. aah-dm tells
# the two names apart: m on the real files only. A file that aah-mnt (the
# mounter) opened is checked against aah-mnt too, which grants rm.
cat >$w/profiles <<'EOF'
abi <abi/3.0>,
profile aah-none flags=(attach_disconnected) {
}
profile aah-r flags=(attach_disconnected) {
  /{mnt/**,d/*} r,
  /proc/*/attr/** r,
}
profile aah-rm flags=(attach_disconnected) {
  /{mnt/**,d/*} rm,
}
profile aah-ix flags=(attach_disconnected) {
  /{mnt/**,d/*} ix,
  /{usr/,}lib{,32,64}/** mr,
  /etc/ld.so.cache r,
}
profile aah-dm flags=(attach_disconnected) {
  /mnt/** r,
  /d/* rm,
}
profile aah-mnt flags=(attach_disconnected) {
  capability sys_admin,
  capability dac_read_search,
  mount fstype=overlay,
  /{mnt/**,d/*} rm,
  /tmp/aa/** r,
}
EOF
out=$(apparmor_parser -r -K $w/profiles 2>&1) || die profiles-load "$out"
expect_eq profile-change "aah-r (enforce)" "$($aah -p aah-r label)"

mkfs.xfs -q -f /dev/disk/by-name/aa
mkdir -p /mnt/x /mnt/ovl /mnt/ovlc $w/empty
mount /dev/disk/by-name/aa /mnt/x
mkdir /mnt/x/d
cp $aah /mnt/x/d/t
cp $aah /mnt/x/d/u
"$pcdedup" tag -q --min-size 0 /mnt/x/d/t
check tagged-has-key test -n "$(key_hex /mnt/x/d/t)"
check untagged-has-no-key test -z "$(key_hex /mnt/x/d/u)"
check files-identical cmp /mnt/x/d/t /mnt/x/d/u
mkdir -p /tmp/ovl/upper /tmp/ovl/work
mount -t overlay overlay -o lowerdir=/mnt/x/d,upperdir=/tmp/ovl/upper,workdir=/tmp/ovl/work /mnt/ovl
# The same directory through an overlayfs mounted by a confined task.
out=$($aah -p aah-mnt mount overlay /mnt/ovlc overlay lowerdir=/mnt/x/d:$w/empty 2>&1)
expect_eq confined-mount ok "$out"

# try PROFILE OP FILE [ARG...]: aah's result in res (one line), the growth of
# open_shared in shared. PROFILE fd:P: the shell opens FILE, unconfined, and
# aah uses that descriptor under P.
try() {
	local p=$1 op=$2 f=$3 s0
	shift 3
	s0=$(vmstat open_shared)
	if [[ $p == fd:* ]]; then
		if exec 3<"$f"; then
			res=$("$aah" -p "${p#fd:}" "$op" fd:3 "$@" 2>&1) || true
			exec 3<&-
		else
			res="shell cannot open"
		fi
	else
		res=$("$aah" -p "$p" "$op" "$f" "$@" 2>&1) || true
	fi
	res=${res//$'\n'/; }
	res=${res//"$f"/FILE}
	shared=$(($(vmstat open_shared) - s0))
}

# pair PROFILE OP WANT [ARG...]: OP under PROFILE on $dir/t and $dir/u; the
# cases are named $fs-PROFILE-OP-tagged, -untagged, -tagged-eq-untagged.
# With $gap set (a known gap of the stock kernel), an untagged outcome other
# than WANT is an XFAIL, and so is the same outcome on the tagged file.
pair() {
	local p=$1 op=$2 want=$3 name t ts
	shift 3
	name=$fs-${p/:/-}-$op
	try "$p" "$op" "$dir/t" "$@"
	t=$res ts=$shared
	try "$p" "$op" "$dir/u" "$@"
	if [ "$t" != "EACCES open" ] && [ "$ts" -lt 1 ]; then
		fail "$name-tagged" "got '$t', not served from a share (open_shared +$ts)"
	elif [ "$t" = "$want" ]; then
		pass "$name-tagged"
	elif [ -n "${gap:-}" ] && [ "$t" = "$res" ]; then
		xfail "$name-tagged" "got '$t' as untagged: $gap"
	else
		fail "$name-tagged" "want '$want', got '$t'"
	fi
	if [ "$shared" != 0 ]; then
		fail "$name-untagged" "an untagged file was shared (open_shared +$shared)"
	elif [ "$res" != "$want" ] && [ -n "${gap:-}" ]; then
		xfail "$name-untagged" "got '$res': $gap"
	else
		expect_eq "$name-untagged" "$want" "$res"
	fi
	expect_eq "$name-tagged-eq-untagged" "$res" "$t"
}

# Known gaps of stock AppArmor on overlayfs, tagged or not. A mapping's
# vm_file is the real file, opened with the mounter's credentials: mounted
# by an unconfined task (ovl), it counts as delegated and mprotect may add
# PROT_EXEC; mounted by a confined task (ovlc), it is checked against its
# real path, which needs r for the loader's mprotect (ix grants none), and
# it is the mounter's, not the task's that delegated the descriptor.
ovlgap="overlayfs real file opened by the unconfined mounter, delegated"
execgap="the loader's mprotect checks r on the real file, ix grants none"
fdgap="the real file is the confined mounter's, not delegated"
for fs in "${fss[@]}"; do
	dir=/mnt/$fs g1='' g2='' g3='' dm="EACCES mprotect"
	case $fs in
	xfs) dir=/mnt/x/d ;;
	ovl) g1=$ovlgap ;;
	ovlc) g2=$execgap g3=$fdgap dm=ok ;;
	esac
	pair aah-none read "EACCES open"
	pair aah-r read ok
	pair aah-r mmapx "EACCES mmap"
	gap=$g1 pair aah-r mprotx "EACCES mprotect"
	gap=$g1 pair aah-r mprotx-shared "EACCES mprotect"
	pair aah-r exec "EACCES exec" noop
	pair aah-rm read ok
	pair aah-rm mmapx ok
	pair aah-rm mprotx ok
	pair aah-rm mprotx-shared ok
	# A mapping of an overlayfs file is one of its real file: /d/u on ovlc.
	gap=$g1 pair aah-dm mprotx "$dm"
	gap=$g2 pair aah-ix exec ok noop
	# Opened by an unconfined task: AppArmor lets the descriptor be used.
	pair fd:aah-r mmapx ok
	gap=$g3 pair fd:aah-r mprotx ok
done
umount /mnt/ovlc /mnt/ovl /mnt/x
