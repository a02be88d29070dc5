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

# The security series: the patches of patches/series before the first
# pcdedup one (the A/B benchmark's middle arm).
security_series() {
	series_files | sed '/pcdedup/,$d'
}

# Bring worktree DIR to the base tree with the security series applied,
# re-applying only when the series changed.
security_tree() { # DIR
	local dir=$1 want p
	want=$(security_series | while read -r p; do cat "$repo/patches/$p"; done | sha256sum | cut -d' ' -f1)
	[ -d "$dir" ] || git_tree worktree add -q --detach "$dir" base
	[ "$(cat "$dir/.pcdedup-applied" 2>/dev/null)" != "$want" ] || return 0
	git -C "$dir" reset -q --hard base
	git -C "$dir" clean -qfd
	while read -r p; do
		git -C "$dir" -c user.name=pcdedup -c user.email=pcdedup@localhost \
			am -q --committer-date-is-author-date "$repo/patches/$p"
	done < <(security_series)
	echo "$want" >"$dir/.pcdedup-applied"
}
