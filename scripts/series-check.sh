#!/bin/bash
# Bisect check: build every prefix of patches/series (patch 1, 1-2, ..., all)
# and boot each with the smoke suite. The prefixes are applied one at a time
# (git am) in a worktree of the base tree, build/series-src, and built into one
# output dir, build/kernel-series, so that each build is incremental.
# Logs: build/series-check/NN-build.log, NN-boot.log, NN/ (the smoke run).
set -euo pipefail
. "$(dirname "$0")/common.sh"

usage() { echo "usage: scripts/series-check.sh [--from N] [--to N] [--no-boot] [--keep-going]"; }
total=$(series_files | wc -l)
from=1 to=$total boot=1 keep=0
while [ $# -gt 0 ]; do
	case $1 in
	--from) from=${2:?}; shift 2 ;;
	--to) to=${2:?}; shift 2 ;;
	--no-boot) boot=0; shift ;;
	--keep-going) keep=1; shift ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
if ! [[ $from =~ ^[0-9]+$ && $to =~ ^[0-9]+$ ]] || [ "$from" -lt 1 ] || [ "$from" -gt "$to" ] || [ "$to" -gt "$total" ]; then
	echo "series-check: bad range $from..$to (patches/series has $total patches)" >&2
	exit 2
fi
mapfile -t patches < <(series_files)
for p in "${patches[@]:0:to}"; do
	[ -f "$repo/patches/$p" ] || { echo "series-check: patches/$p (in patches/series) does not exist" >&2; exit 1; }
done

src=$repo/build/series-src out=$repo/build/kernel-series logs=$repo/build/series-check
lock=/tmp/pcdedup-vm.lock # the VM lock that other users of the guests hold too
git_src() { git -C "$src" -c user.name=pcdedup -c user.email=pcdedup@localhost "$@"; }

# Each step runs as a process group of its own (set -m): on INT/TERM, stop it all.
set -m
child=
# shellcheck disable=SC2317 # run from the traps
on_signal() { trap - "$1"; [ -z "$child" ] || kill -TERM -- "-$child" 2>/dev/null || true; wait; kill -s "$1" $$; }
trap 'on_signal INT' INT
trap 'on_signal TERM' TERM
run() { local rc=0; "$@" </dev/null & child=$!; wait "$child" || rc=$?; child=; return "$rc"; }

[ -d "$tree/.git" ] || "$repo/scripts/tree.sh"
[ -e "$src/.git" ] || { git_tree worktree prune; git_tree worktree add -q --detach "$src" base; }
git_src am --abort >/dev/null 2>&1 || true
git_src reset -q --hard base
git_src clean -qfdx
mkdir -p "$logs"

apply() { # N
	git_src am -q --committer-date-is-author-date "$repo/patches/${patches[$1 - 1]}" && return
	git_src am --abort || true
	echo "series-check: $(printf %02d "$1") patches/${patches[$1 - 1]} does not apply" >&2
	exit 1
}
build() { # LOG
	PCDEDUP_KSRC=$src PCDEDUP_KOUT=$out run "$repo/scripts/kernel-build.sh" patched >"$1" 2>&1
}
# Lines the patch adds, outside Documentation/ and the patch header.
added() { awk '/^diff --git /{doc = $3 ~ /^a\/Documentation\//; hunk = 0; next} /^@@/{hunk = 1; next}
	hunk && !doc && /^\+/ {n++} END {print n + 0}' "$1"; }

for ((i = 1; i < from; i++)); do apply "$i"; done
if [ "$from" -gt 1 ]; then
	echo "series-check: building patches 1-$((from - 1)) first ($logs/prep-build.log)"
	build "$logs/prep-build.log" || { echo "series-check: FAIL build of 1-$((from - 1)): $logs/prep-build.log" >&2; exit 1; }
	echo "series-check: patches 1-$((from - 1)) built in ${SECONDS}s"
fi

start=$SECONDS ok=0 failed=0
for ((i = from; i <= to; i++)); do
	nn=$(printf %02d "$i")
	rm -rf "${logs:?}/$nn" "$logs/$nn"-*.log
	apply "$i"
	subject=$(git_src log -1 --format=%s)
	n=$(added "$repo/patches/${patches[i - 1]}")
	echo "$nn ${patches[i - 1]}: +$n lines outside Documentation/"
	[ "$n" -le 700 ] || echo "$nn warning: $n added lines, above 700: consider splitting the patch"
	t=$SECONDS status=ok
	if ! build "$logs/$nn-build.log"; then
		status="FAIL build $logs/$nn-build.log"
	fi
	bt=$((SECONDS - t)) t=$SECONDS
	if [ "$status" = ok ] && [ "$boot" = 1 ]; then
		exec {fd}>"$lock"
		flock -n "$fd" || { echo "$nn waiting for $lock"; flock "$fd"; }
		t=$SECONDS
		run "$repo/tests/run" --kernel "$out/arch/x86/boot/bzImage" --suite smoke \
			--log-dir "$logs/$nn" >"$logs/$nn-boot.log" 2>&1 || status="FAIL boot $logs/$nn-boot.log"
		exec {fd}>&-
	fi
	if [ "$status" != ok ]; then
		echo "$nn $status"
		failed=$((failed + 1))
		[ "$keep" = 1 ] || break
	elif [ "$boot" = 1 ]; then
		echo "$nn ok build ${bt}s boot $((SECONDS - t))s  $subject"
	else
		echo "$nn ok build ${bt}s  $subject"
	fi
	[ "$status" != ok ] || ok=$((ok + 1))
done
echo "series-check: $ok ok, $failed failed of prefixes $from-$to in $((SECONDS - start))s"
[ "$failed" = 0 ]
