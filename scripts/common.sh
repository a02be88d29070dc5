# shellcheck shell=bash
# Shared settings for the kernel-tree scripts (sourced, not run).
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tree=$repo/build/linux
series=$repo/patches/series
export tarball=${PCDEDUP_TARBALL:-/usr/src/linux-source-6.12.tar.xz}
# The tree's own record of which patches/ state it was built from.
applied=$tree/.git/pcdedup-applied

git_tree() { git -C "$tree" -c user.name=pcdedup -c user.email=pcdedup@localhost "$@"; }

# Hash of the series file and every patch it lists.
patches_hash() {
	{
		[ ! -f "$series" ] || cat "$series"
		series_files | while read -r p; do cat "$repo/patches/$p"; done
	} | sha256sum | cut -d' ' -f1
}

series_files() {
	[ ! -f "$series" ] || grep -vE '^[[:space:]]*(#|$)' "$series"
}

# Empty when the tree has no uncommitted changes and no untracked files.
tree_dirt() {
	git_tree status --porcelain
}

record_applied() {
	echo "$(patches_hash) $(git_tree rev-parse HEAD)" >"$applied"
}
