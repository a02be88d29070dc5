#!/bin/bash
# vm: --disk data:2G --mem 1G
# timeout: 600
# The pcdedup tool on a real tree in the guest: tag a copy of the Python
# standard library, verify it, then make verify fail; status --json parses.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

mkfs.xfs -q /dev/disk/by-name/data
mkdir -p /mnt/data
mount /dev/disk/by-name/data /mnt/data
cp -a /usr/lib/python3.11 /mnt/data/py
check tool-tag-python-tree "$pcdedup" tag -q /mnt/data/py
check tool-verify-all-correct "$pcdedup" verify -q /mnt/data/py
check tool-tag-again-unchanged sh -c "'$pcdedup' tag /mnt/data/py 2>&1 | grep -qE '^tagged: +0$'"
f=$(find /mnt/data/py -name json -prune -o -type f -size +8k -print -quit)
printf 'x' | dd of="$f" bs=1 seek=100 conv=notrunc status=none
out=$("$pcdedup" verify -q /mnt/data/py 2>&1) && rc=0 || rc=$?
expect_eq tool-verify-exit-on-problem 1 "$rc"
# The kernel dropped the key when the file was written.
check tool-verify-reports-modified grep -qF "missing	$f" <<<"$out"
check tool-status-json sh -c "'$pcdedup' status --json | python3 -m json.tool >/dev/null"
check tool-status-human sh -c "'$pcdedup' status | grep -q 'enabled'"
