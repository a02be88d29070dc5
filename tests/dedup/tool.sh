#!/bin/bash
# vm: --disk data:2G --mem 1G
# timeout: 600
# The pcdedup tool on a real tree in the guest: tag a copy of the Python
# standard library, verify it, then make verify fail; a key copied onto
# another file is unauthenticated until tag gives it its own MAC; status
# --json parses; a member lying about its content while its claimed
# content is cached is found by verify and given its own key by tag.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

plan 18
mkfs.xfs -q /dev/disk/by-name/data
mkdir -p /mnt/data
mount /dev/disk/by-name/data /mnt/data
cp -a /usr/lib/python3.11 /mnt/data/py
# Keys need the secret (the kernel need not hold it to tag and verify).
check tool-secret-new secret_new
expect_eq tool-secret-root-only 600 "$(stat -c %a "$PCDEDUP_SECRET_FILE")"
check tool-tag-python-tree "$pcdedup" tag -q /mnt/data/py
check tool-verify-all-correct "$pcdedup" verify -q /mnt/data/py
check tool-tag-again-unchanged sh -c "'$pcdedup' tag /mnt/data/py 2>&1 | grep -qE '^tagged: +0$'"
f=$(find /mnt/data/py -name json -prune -o -type f -size +8k -print -quit)
printf 'x' | dd of="$f" bs=1 seek=100 conv=notrunc status=none
out=$("$pcdedup" verify -q /mnt/data/py 2>&1) && rc=0 || rc=$?
expect_eq tool-verify-exit-on-problem 1 "$rc"
# The kernel dropped the key when the file was written.
check tool-verify-reports-modified grep -qF "missing	$f" <<<"$out"
# A key copied as it is onto another file of the same content: its MAC is
# the first file's; tag gives the copy its own.
g=$(find /mnt/data/py -name json -prune -o -type f -size +8k -print | sed -n 2p)
cp "$g" /mnt/data/copy
setfattr -n trusted.pcdedup -v "0x$(key_hex "$g")" /mnt/data/copy
out=$("$pcdedup" verify -q /mnt/data/copy 2>/dev/null) && rc=0 || rc=$?
expect_eq tool-verify-copied-key-unauthenticated "1 unauthenticated	/mnt/data/copy" "$rc $out"
check tool-tag-reauthenticates sh -c "'$pcdedup' tag /mnt/data/copy | grep -qE '^reauthenticated: +1 '"
check tool-verify-copy-correct "$pcdedup" verify -q /mnt/data/copy
# Every readable knob read (the write-only secret is not one): exit 0.
check tool-status-exit-0 sh -c "'$pcdedup' status --json >/dev/null"
check tool-status-json sh -c "'$pcdedup' status --json | python3 -m json.tool >/dev/null"
check tool-status-human sh -c "'$pcdedup' status | grep -q 'enabled'"

# A member whose bytes are not its key's content (content A under a
# host-made key of content B) while B's share is cached from a true
# member: a plain read-only open of it is served from B's share, so a tool
# that hashed it through such an open would call it correct. verify finds
# the mismatch, and tag gives it its own key: the tool reads tagged files
# with O_DIRECT, which is never shared.
pcdedup_on
head -c $((1 << 20)) /dev/urandom >/mnt/data/true-b
head -c $((1 << 20)) /dev/urandom >/mnt/data/liar
check tool-lying-setup "$pcdedup" tag -q --min-size 0 /mnt/data/true-b
# The liar's own digest, read while it has no key (never shared).
own=$(python3 "$(dirname "$0")/mkkey.py" --digest /mnt/data/liar)
check tool-lying-forge-key python3 "$(dirname "$0")/mkkey.py" /mnt/data/true-b --set \
	--target /mnt/data/liar --mac-for /mnt/data/liar
cat /mnt/data/true-b >/dev/null
out=$("$pcdedup" verify -q /mnt/data/liar 2>/dev/null) && rc=0 || rc=$?
expect_eq tool-verify-lying-member-mismatch "1 mismatch	/mnt/data/liar" "$rc $out"
check tool-tag-lying-member "$pcdedup" tag -q --min-size 0 /mnt/data/liar
expect_eq tool-tag-lying-member-own-key "$own" "$(key_field /mnt/data/liar digest)"
