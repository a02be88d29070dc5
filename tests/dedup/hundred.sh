#!/bin/bash
# vm: --disk thin:4G --mem 2G
# timeout: 900
# A hundred XFS-on-dm-thin snapshots open the same tagged file: the
# listing and the counters show one share with a hundred members, and the
# page cache holds one copy.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
n=100
plan 9
pcdedup_on

thin_setup thin hun
mkfile /mnt/origin/lib 1048576
"$pcdedup" tag -q /mnt/origin
thin_snapshots hun $n
drop_caches

cached0=$(cached_kb)
fds=()
for i in $(seq $n); do
	exec {fd}</mnt/snap"$i"/lib
	fds+=("$fd")
	cat "/dev/fd/$fd" >/dev/null
done
grow=$(($(cached_kb) - cached0))
expect_eq hundred-members "$n" "$(share_field /mnt/snap1/lib members)"
expect_eq hundred-openers "$n" "$(share_field /mnt/snap1/lib openers)"
expect_eq hundred-one-share 1 "$(knob shares)"
expect_eq hundred-cached-pages-one-copy 256 "$(share_field /mnt/snap1/lib cached_pages)"
expect_eq hundred-pages-saved $((256 * (n - 1))) "$(knob pages_saved)"
# One copy is 1024 KiB; a hundred private copies would be 100 MiB.
check hundred-page-cache-one-copy test "$grow" -lt 4096
check hundred-every-member-exact sh -c "for i in \$(seq $n); do cmp /mnt/snap\$i/lib /mnt/origin/lib || exit 1; done"
check status-json-hundred-members sh -c "'$pcdedup' status --json | python3 -c 'import json,sys; d=json.load(sys.stdin); s=d[\"shares\"]; assert len(s) == 1 and s[0][\"members\"] == $n, s'"
for fd in "${fds[@]}"; do exec {fd}<&-; done
expect_eq hundred-members-after-close 0 "$(share_field /mnt/snap1/lib members)"
