#!/bin/bash
# The key format has one definition: the tool's copy of the header must be
# the header the kernel series leaves (every patch that touches it applied).
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
cd "$(dirname "$0")/../.."
plan 1
hdr=include/uapi/linux/pcdedup.h
mapfile -t series < <(sed 's|^|patches/|' patches/series)
mapfile -t touching < <(grep -l "^+++ b/$hdr" "${series[@]}")
if [ ${#touching[@]} = 0 ]; then
	fail key-header-identical "no patch touches $hdr"
	exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for p in "${touching[@]}"; do
	(cd "$work" && git apply --include="$hdr" "$OLDPWD/$p")
done
check key-header-identical cmp dedup/include/linux/pcdedup.h "$work/$hdr"
