#!/bin/bash
# Build a guest kernel out of tree: kernel-build.sh patched|stock|security|debug.
#   patched:  build/linux (with the series)   -> build/kernel-patched
#   stock:    the base tree, no patches       -> build/kernel-stock
#   security: the base tree with the security series only (the patches of
#             patches/series before the first pcdedup one) -> build/kernel-security
#   debug:    build/linux + KASAN, lockdep... -> build/kernel-debug
# The config is tinyconfig plus the fragments; .config is only rewritten when
# the result changes, so an unchanged tree rebuilds nothing.
set -euo pipefail
. "$(dirname "$0")/common.sh"

variant=${1:?usage: kernel-build.sh patched|stock|security|debug}
src=$tree
fragments=("$repo/vm/kernel.config")
case $variant in
patched) ;;
stock)
	src=$repo/build/linux-stock
	if [ ! -d "$src" ]; then
		git_tree worktree add -q --detach "$src" base
	fi
	;;
security)
	src=$repo/build/linux-security
	security_tree "$src"
	;;
debug) fragments+=("$repo/vm/kernel-debug.config") ;;
*) echo "kernel-build: unknown variant '$variant'" >&2; exit 2 ;;
esac
# A separate worktree can be built with PCDEDUP_KSRC and PCDEDUP_KOUT.
src=${PCDEDUP_KSRC:-$src}
out=${PCDEDUP_KOUT:-$repo/build/kernel-$variant}
gen=$repo/build/config-$(basename "$out")
mkdir -p "$out" "$gen"

export CCACHE_BASEDIR=$repo/build CCACHE_NOHASHDIR=1 CCACHE_MAXSIZE=10G
kmake=(make -s -C "$src" ARCH=x86_64 CC="ccache gcc" KBUILD_BUILD_USER=pcdedup KBUILD_BUILD_HOST=qemu)

"${kmake[@]}" O="$gen" tinyconfig >/dev/null
"$src/scripts/kconfig/merge_config.sh" -m -O "$gen" "$gen/.config" "${fragments[@]}" >"$gen/merge.log"
"${kmake[@]}" O="$gen" olddefconfig
missing=()
while IFS= read -r line; do
	sym=${line%%=*}
	case $line in
	*=n) want="# $sym is not set" ;;
	*) want=$line ;;
	esac
	grep -qxF "$want" "$gen/.config" && continue
	# Options of the series do not exist in the stock tree.
	git -C "$src" grep -qE "^(menu)?config ${sym#CONFIG_}\$" -- '*Kconfig*' || continue
	missing+=("$line")
done < <(grep -hE '^CONFIG_' "${fragments[@]}")
if [ ${#missing[@]} -gt 0 ]; then
	echo "kernel-build: options that did not take (a dependency is missing):" >&2
	printf '  %s\n' "${missing[@]}" >&2
	exit 1
fi
cmp -s "$gen/.config" "$out/.config" || cp "$gen/.config" "$out/.config"

echo "kernel-build: $variant (O=${out#"$repo"/})"
"${kmake[@]}" O="$out" -j"$(($(nproc) + 1))" bzImage
echo "kernel-build: $out/arch/x86/boot/bzImage"
