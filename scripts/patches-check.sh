#!/bin/bash
# Fail, naming what is missing, when build/linux holds commits or changes
# that are not in patches/, or when a patch in the series does not apply.
set -euo pipefail
. "$(dirname "$0")/common.sh"
status=0

for p in $(series_files); do
	[ -f "$repo/patches/$p" ] || { echo "patches-check: patches/series lists missing $p"; status=1; }
done
[ $status = 0 ] || exit 1

if [ -d "$tree/.git" ]; then
	dirt=$(tree_dirt)
	if [ -n "$dirt" ]; then
		echo "patches-check: uncommitted changes in build/linux:"
		echo "$dirt"
		status=1
	fi
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	git_tree format-patch -q --zero-commit --no-signature --no-numbered \
		-o "$tmp" base..HEAD >/dev/null
	for f in "$tmp"/*.patch; do
		[ -e "$f" ] || continue
		n=${f##*/}
		if ! cmp -s "$f" "$repo/patches/$n"; then
			echo "patches-check: not exported (or differs): $(sed -n 's/^Subject: //p' "$f" | head -1) [$n]"
			status=1
		fi
	done
	for p in $(series_files); do
		[ -e "$tmp/$p" ] || { echo "patches-check: patches/$p is not in build/linux (run make tree)"; status=1; }
	done
fi

# Every patch applies, in order, to the base tree (index only: fast).
if [ -d "$tree/.git" ]; then
	index=$(mktemp)
	GIT_INDEX_FILE=$index git_tree read-tree base
	for p in $(series_files); do
		if ! GIT_INDEX_FILE=$index git_tree apply --cached "$repo/patches/$p" 2>/dev/null; then
			echo "patches-check: patches/$p does not apply"
			status=1
			break
		fi
	done
	rm -f "$index"
fi
[ $status != 0 ] || echo "patches-check: build/linux and patches/ agree ($(series_files | wc -l) patches)"
exit $status
