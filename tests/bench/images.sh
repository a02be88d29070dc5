#!/bin/bash
# vm: --disk img:1G --mem 2G --cpus 2
# timeout: 400
# Two versions of a small real image (bench/images.py --set test: glibc and
# four libraries from Debian bookworm, and from bookworm + updates +
# security), unpacked with umoci into directories of one XFS (distinct
# inodes) and tagged as an operator tags: once the older version is read, exactly the newer files
# whose content (the images' own SHA-256 lists) the older one has are in
# the page cache, whole, and no other; with sharing off none is; the
# shared files read their own bytes.
set -euo pipefail
. "$(dirname "$0")/../dedup/lib.sh"

images=build/bench/images
residency_py=$(dirname "$0")/residency.py
# counted NAME ARGS...: case NAME, residency.py ARGS; its counts are the
# case's diagnostics, pass or fail.
counted() {
	local name=$1 rc=0 out
	shift
	out=$(python3 "$residency_py" "$@" 2>&1) || rc=$?
	printf '# %s\n' "${out//$'\n'/$'\n'# }"
	if [ "$rc" = 0 ]; then pass "$name"; else fail "$name" "residency.py $1: exit $rc"; fi
}
versions=(older newer)
# built 1, per version unpack and tag 4, both kinds 1, off: read and none
# cached 2, on: read, exactly the matching ones, their bytes 3
plan 11

for v in "${versions[@]}"; do
	if [ ! -s "$images/libs-$v/oci/index.json" ] || [ ! -s "$images/libs-$v/files.tsv" ]; then
		fail images-built "no $images/libs-$v: make test-images (bench/images.py --set test) on the host"
		exit 1
	fi
done
pass images-built
mkfs.xfs -q /dev/disk/by-name/img
mkdir -p /mnt/img
mount /dev/disk/by-name/img /mnt/img
secret_new
for v in "${versions[@]}"; do
	check "umoci-unpack-$v" umoci unpack --image "$images/libs-$v/oci:libs-$v" "/mnt/img/$v"
	check "tag-$v" "$pcdedup" tag -q "/mnt/img/$v/rootfs"
done
older=$images/libs-older/files.tsv newer=$images/libs-newer/files.tsv
# A pair whose versions hold the same files, or nothing in common, would
# leave one half of the check below with nothing to check.
both_kinds() {
	python3 - "$older" "$newer" <<'PY'
import csv, sys
rows = [{r["sha256"] for r in csv.DictReader(open(p), delimiter="\t")
         if r["type"] == "f" and int(r["size"]) > 0} for p in sys.argv[1:]]
same, own = len(rows[1] & rows[0]), len(rows[1] - rows[0])
print(f"# newer: {same} contents the older has, {own} of its own")
sys.exit(0 if same and own else 1)
PY
}
check pair-has-shared-and-own-files both_kinds

echo 0 >"$sysfs/enabled"
drop_caches
counted off-read-older read /mnt/img/older/rootfs
counted off-no-newer-file-cached check "$older" "$newer" /mnt/img/newer/rootfs none

pcdedup_on
drop_caches
counted on-read-older read /mnt/img/older/rootfs
counted on-exactly-matching-contents-cached \
	check "$older" "$newer" /mnt/img/newer/rootfs shared
counted on-shared-files-right-bytes bytes "$newer" "$older" /mnt/img/newer/rootfs 40
