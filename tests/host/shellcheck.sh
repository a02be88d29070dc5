#!/bin/bash
# Every shell script of the project is shellcheck-clean.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
cd "$(dirname "$0")/../.."
files=()
for f in $(git ls-files | grep -E '(^vm/|^tests/|^bench/|^scripts/|^\.ci/)' ); do
	[ -f "$f" ] || continue
	head -n 1 "$f" | grep -qE '^#!.*(ba)?sh|shell=bash' || [[ $f == *.sh ]] || continue
	files+=("$f")
done
plan ${#files[@]}
for f in "${files[@]}"; do check "shellcheck-$f" shellcheck "$f"; done
