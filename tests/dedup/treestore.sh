#!/bin/bash
# vm: --mem 1G --cpus 2
# kernels: patched
# timeout: 600
# The tree store (fs/pcdedup/store.c): level 0 of a content's Merkle tree,
# kept by the host apart from its files, lets a share whose key carries a
# coarse level (a key short enough to stay in the inode) check every 4 KiB
# block on its own. 4 MiB files are tagged with `pcdedup tag --tree-store`
# (keys of level 2: one granule of 64 MiB, the whole file). The knob takes
# an absolute directory and nothing else, and holds its filesystem. Without a store a cold random
# 4 KiB read reads (and hashes) the whole granule; with it, a block. The store is not
# trusted: a store file with one hash changed, one cut short and one that
# is missing leave the share with its key's level, are counted, and every
# byte read is still true. A member whose one block changed underneath,
# read cold at random through a share that took level 0 from the store, is
# caught (EIO, never the changed bytes). Against a kernel that took the
# store's level without checking it against the digest, the hostile store
# cases fail (its wrong hash makes a true block read as bad).
set -uo pipefail
. "$(dirname "$0")/lib-integrity.sh"

plan 22
MiB=1048576 S=$((4 * MiB))
img=/tmp/treestore.img mnt=/mnt/ts store=/mnt/ts/store w=/tmp/treestore
cleanup() {
	echo >"$sysfs/tree_store" 2>/dev/null || true
	umount "$mnt" 2>/dev/null || true
	[ -z "${dev:-}" ] || losetup -d "$dev" 2>/dev/null || true
	rm -rf "$img" "$w"
}
trap cleanup EXIT
die() { fail "$1" "${2:-setup failed}"; exit 1; }
for t in mkfs.xfs getfattr filefrag python3; do
	command -v $t >/dev/null || die "$t-present" "no $t (scripts/deps.txt)"
done
pcdedup_on
echo 0 >"$sysfs/min_size"
[ -e "$sysfs/tree_store" ] || die tree-store-knob "no $sysfs/tree_store"
mkdir -p "$w"
dev=$(loopfs "$img" 320M "$mnt") || die setup "no XFS on a loop device"
mkdir "$store" || die setup

# rand_read FILE PAGE TRUE: read page PAGE of FILE alone (POSIX_FADV_RANDOM:
# no readahead) and say what came back: true, wrong or EIO.
rand_read() {
	python3 - "$@" <<'EOF'
import os, sys
path, page, true = sys.argv[1], int(sys.argv[2]), sys.argv[3]
fd = os.open(path, os.O_RDONLY)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
try:
    got = os.pread(fd, 4096, page * 4096)
except OSError as e:
    print("EIO" if e.errno == 5 else "errno %d" % e.errno)
    sys.exit(0)
with open(true, "rb") as f:
    f.seek(page * 4096)
    print("true" if got == f.read(4096) else "wrong")
EOF
}
# member_reads: pages fills read from members (direct and cached).
member_reads() {
	local d c
	d=$(vmc fill_direct) && c=$(vmc fill_cached) || return 1
	echo $((d + c))
}
# fills_for CMD...: run CMD; print its output, then the pages fills read
# from members meanwhile (what a granule costs: a level-2 fill reads and
# hashes its whole granule, though it fills only what was asked for).
fills_for() {
	local r0 out
	r0=$(member_reads) || return 1
	out=$("$@")
	echo "$out $(($(member_reads) - r0))"
}
store_file() { echo "$store/$(key_hex "$1" | cut -c33-96)"; }

# Five contents of 4 MiB, each its own file, tagged with the store.
for n in f h s x c; do
	{ head -c $S /dev/urandom >"$w/$n.true" && cp "$w/$n.true" "$mnt/$n"; } || die setup
done
echo >"$sysfs/tree_store"
"$pcdedup" tag -q --min-size 0 --tree-store "$store" "$mnt"/[fhsxc] || die setup "pcdedup tag"
sf=$(store_file "$mnt/f")
expect_eq store-file-written $((S * 32 / 4096)) "$(stat -c %s "$sf" 2>/dev/null)"
klen=$(getfattr --only-values -n trusted.pcdedup "$mnt/f" 2>/dev/null | wc -c)
check key-stays-inline test "$klen" -gt 0 -a "$klen" -le 255

# --- the knob: an absolute path to a directory, shown as written; "" clears
check knob-rejects-relative-path sh -c "! echo store >$sysfs/tree_store"
check knob-rejects-missing-dir sh -c "! echo /nonexistent >$sysfs/tree_store"
echo "$store" >"$sysfs/tree_store"
expect_eq knob-shows-path "$store" "$(cat "$sysfs/tree_store")"
echo >"$sysfs/tree_store"
expect_eq knob-clears "" "$(cat "$sysfs/tree_store")"

# --- without a store a 4 KiB miss fills the key's granule, with it a block
drop_caches
r=$(fills_for rand_read "$mnt/f" 700 "$w/f.true")
echo "# no store: page 700 $r pages read from the member"
check no-store-reads-the-granule test "${r#* }" -ge $((S / 4096))
echo "$store" >"$sysfs/tree_store"
a0=$(vmc store_adopted)
drop_caches
r=$(fills_for rand_read "$mnt/f" 300 "$w/f.true")
echo "# store: page 300 $r pages read from the member"
expect_eq store-adopted 1 $(($(vmc store_adopted) - a0))
expect_eq store-random-read-true true "${r% *}"
check store-random-read-reads-a-block test "${r#* }" -le 4
expect_eq store-whole-read-true "$(sha256sum <"$w/f.true")" "$(sha256sum <"$mnt/f")"

# --- a hostile store: one hash changed (h), cut short (s), missing (x) ---
python3 -c 'import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(300 * 32)
    b = f.read(1)
    f.seek(300 * 32)
    f.write(bytes([b[0] ^ 1]))' "$(store_file "$mnt/h")" || die hostile-setup
truncate -s 100 "$(store_file "$mnt/s")" || die hostile-setup
rm "$(store_file "$mnt/x")" || die hostile-setup
i0=$(vmc store_invalid) m0=$(vmc store_missing) b0=$(vmc fill_bad)
drop_caches
r=$(fills_for rand_read "$mnt/h" 300 "$w/h.true")
echo "# one hash changed: page 300 $r pages read from the member"
expect_eq hostile-store-read-true true "${r% *}"
check hostile-store-keeps-key-level test "${r#* }" -ge $((S / 4096))
r=$(fills_for rand_read "$mnt/s" 300 "$w/s.true")
expect_eq short-store-read-true true "${r% *}"
expect_eq hostile-and-short-counted-invalid 2 $(($(vmc store_invalid) - i0))
r=$(fills_for rand_read "$mnt/x" 300 "$w/x.true")
expect_eq missing-store-read-true true "${r% *}"
expect_eq missing-store-counted 1 $(($(vmc store_missing) - m0))
expect_eq hostile-store-no-bad-fill 0 $(($(vmc fill_bad) - b0))

# --- c: one block rewritten underneath, offline; read cold at random ---
member_map "$mnt/c" "$w/c.map" || die c-map
# A named store holds its directory, and so its filesystem, as a mount
# point's users do.
check knob-holds-store-mount sh -c "! umount $mnt 2>/dev/null"
echo >"$sysfs/tree_store"
for _ in $(seq 50); do umount "$mnt" 2>/dev/null && break; sleep 0.1; done
mountpoint -q "$mnt" && die c-umount "$mnt still mounted with no store named"
check c-rewrite-block-offline rewrite_at "$w/c.map" "$img" "$dev" $((300 * 4096)) 4096 \
	"$w/c.true" "$w/c.own"
mount "$dev" "$mnt" || die c-mount
echo "$store" >"$sysfs/tree_store"
b0=$(vmc fill_bad)
r=$(rand_read "$mnt/c" 300 "$w/c.true")
echo "# c: page 300 (rewritten) read: $r"
expect_eq c-changed-block-caught EIO "$r"
check c-changed-block-counted-bad test $(($(vmc fill_bad) - b0)) -ge 1
