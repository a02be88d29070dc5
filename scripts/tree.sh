#!/bin/bash
# Unpack the packaged kernel under build/linux as a git repository (pristine
# tarball, then a local base commit) and apply patches/series on top. When
# patches/ changes, bring the tree back in line, but never throw away work
# that was not exported.
set -euo pipefail
. "$(dirname "$0")/common.sh"

if [ ! -d "$tree/.git" ]; then
	[ -f "$tarball" ] || { echo "tree: $tarball missing (make deps)" >&2; exit 1; }
	echo "tree: unpacking $tarball"
	rm -rf "$tree.tmp"
	mkdir -p "$tree.tmp"
	tar -xf "$tarball" -C "$tree.tmp" --strip-components=1
	git -C "$tree.tmp" init -q
	tree=$tree.tmp
	git_tree add -A -f
	git_tree commit -qm "Linux $(make -s -C "$tree" kernelversion) (Debian linux-source-6.12, pristine)"
	git_tree tag pristine
	# Debian's .gitignore ignores every top-level entry, which would hide
	# new files from git status; the series is applied on top of this.
	sed -i '/^# Debian packaging/,$d' "$tree/.gitignore"
	sed -i '$d' "$tree/.gitignore"
	git_tree commit -qam "base: stop ignoring top-level entries (Debian packaging stanza)"
	git_tree tag base
	mv "$tree" "${tree%.tmp}"
	tree=${tree%.tmp}
fi

want=$(patches_hash)
have_hash=none have_head=none
[ ! -f "$applied" ] || read -r have_hash have_head <"$applied"
[ "$want" != "$have_hash" ] || exit 0

if [ "$have_head" != none ] &&
	{ [ -n "$(tree_dirt)" ] || [ "$(git_tree rev-parse HEAD)" != "$have_head" ]; }; then
	echo "tree: patches/ changed, but build/linux holds work that is not in patches/." >&2
	echo "tree: export it (make export-patches) or drop it (git -C build/linux reset --hard base)." >&2
	exit 1
fi

echo "tree: applying patches/series"
git_tree reset -q --hard base
git_tree clean -qfd
series_files | while read -r p; do
	if ! git_tree am -q --committer-date-is-author-date "$repo/patches/$p"; then
		git_tree am --abort || true
		echo "tree: patches/$p does not apply" >&2
		exit 1
	fi
done
record_applied
echo "tree: $(series_files | wc -l) patches applied"
