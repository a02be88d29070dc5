#!/bin/bash
# vm: --disk data:1G --mem 1G --append pcdedup=on,trust
# timeout: 300
# The boot parameter switches sharing on (it is off after a plain boot,
# share.sh case default-off-knob): booted with pcdedup=on,trust, enabled
# reads 1 and verify trust before anything here writes a knob, and, once
# the secret is loaded, a read-only open of a tagged file on XFS is served
# from a share, filled without checking (trust).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

plan 6
[ -d "$sysfs" ] || { fail pcdedup-present "no $sysfs"; exit 1; }
expect_eq bootparam-on-enabled 1 "$(knob enabled)"
expect_eq bootparam-trust-verify trust "$(knob verify)"
# Keys count only once the kernel holds the secret they are made with: the
# boot parameter switches sharing on, loading the secret stays a boot step.
secret_load

mkfs.xfs -q -f "$(realpath /dev/disk/by-name/data)"
mkdir -p /mnt/data
mount /dev/disk/by-name/data /mnt/data
f=/mnt/data/t
mkfile $f $((1 << 20))
"$pcdedup" tag -q --min-size 0 $f
check bootparam-file-tagged test -n "$(key_hex $f)"
drop_caches
s0=$(vmstat open_shared)
v0=$(vmstat fill_verified)
exec 3<$f
cat <&3 >/dev/null
expect_eq bootparam-on-open-shares "1 1" "$(($(vmstat open_shared) - s0)) $(share_field $f members)"
expect_eq bootparam-trust-fills-unchecked 0 $(($(vmstat fill_verified) - v0))
check bootparam-bytes-true cmp /dev/fd/3 <(dd if=$f iflag=direct bs=1M status=none)
exec 3<&-
umount /mnt/data
