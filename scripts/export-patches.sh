#!/bin/bash
# Write the tree's commits since base into patches/ and patches/series.
set -euo pipefail
. "$(dirname "$0")/common.sh"

if [ -n "$(tree_dirt)" ]; then
	echo "export-patches: build/linux has uncommitted changes; commit them in the tree first:" >&2
	tree_dirt >&2
	exit 1
fi
series_files | while read -r p; do rm -f "$repo/patches/$p"; done
git_tree format-patch --zero-commit --no-signature --no-numbered \
	-o "$repo/patches" base..HEAD | sed 's|.*/||' >"$series"
record_applied
echo "export-patches: $(series_files | wc -l) patches in patches/series"
