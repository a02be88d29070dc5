#!/bin/bash
# Every shell script of the project is shellcheck-clean.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
cd "$(dirname "$0")/../.."
for f in $(git ls-files | grep -E '(^vm/|^tests/|^bench/|^scripts/|^\.ci/)' ); do
	[ -f "$f" ] || continue
	head -n 1 "$f" | grep -qE '^#!.*(ba)?sh|shell=bash' || [[ $f == *.sh ]] || continue
	check "shellcheck-$f" shellcheck "$f"
done
