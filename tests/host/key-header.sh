#!/bin/bash
# The key format has one definition: the tool's copy of the header must be
# the header the kernel series adds.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
cd "$(dirname "$0")/../.."
patch=$(grep -l '^+++ b/include/uapi/linux/pcdedup.h' patches/*.patch | head -n 1)
if [ -z "$patch" ]; then
	fail key-header-in-series "no patch adds include/uapi/linux/pcdedup.h"
	exit 0
fi
# The new file's lines, as the patch adds them.
check key-header-identical cmp dedup/include/linux/pcdedup.h <(
	awk '/^\+\+\+ b\/include\/uapi\/linux\/pcdedup.h/ {on = 1; next}
	     on && /^diff --git/ {exit}
	     on && /^@@/ {next}
	     on && /^\+/ {print substr($0, 2)}' "$patch")
