#!/bin/bash
# Run the tree's checkpatch.pl --strict on every patch of the series.
set -euo pipefail
. "$(dirname "$0")/common.sh"
status=0
n=0
for p in $(series_files); do
	n=$((n + 1))
	# FILE_PATH_CHANGES: new files under fs/pcdedup/, which MAINTAINERS
	# covers as a whole (F: fs/pcdedup/) since the patch that adds it.
	if ! "$tree/scripts/checkpatch.pl" --strict --quiet --no-tree --show-types \
		--ignore FILE_PATH_CHANGES "$repo/patches/$p"; then
		echo "checkpatch: $p has problems (above)"
		status=1
	fi
done
[ $status != 0 ] || echo "checkpatch: $n patches clean (--strict)"
exit $status
