#!/bin/bash
# tests/dedup/mkkey.py, the guest suites' independent key builder: its
# digest is what `fsverity digest` prints, its key has the layout of
# dedup/include/linux/pcdedup.h, and its corruption options do what they say.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
cd "$(dirname "$0")/../.."
mkkey=tests/dedup/mkkey.py
if ! command -v fsverity >/dev/null; then
	skip mkkey-fsverity "no fsverity tool (Debian package fsverity)"
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Field FIELD of a key (python struct of the 16-byte header).
keyfield() { # KEYFILE FIELD
	python3 - "$1" "$2" <<'EOF'
import struct, sys
k = open(sys.argv[1], "rb").read()
v, a, dl, lb, lvl, r0, r1, r2, size = struct.unpack_from("<8BQ", k)
print({"version": v, "algo": a, "digest_len": dl, "log_blocksize": lb,
       "level": lvl, "reserved": r0 | r1 | r2, "size": size,
       "len": len(k), "digest": k[16:48].hex()}[sys.argv[2]])
EOF
}

for s in 1 4096 4097 600000 70000000; do
	head -c "$s" /dev/urandom >"$tmp/f"
	check "mkkey-digest-is-fsverity-$s" test "$(python3 $mkkey --digest "$tmp/f")" = "$(fsverity digest --compact "$tmp/f")"
	python3 $mkkey "$tmp/f" >"$tmp/k0"
	blocks=$(((s + 4095) / 4096))
	expect_eq "mkkey-level0-length-$s" $((48 + 32 * blocks)) "$(keyfield "$tmp/k0" len)"
	expect_eq "mkkey-header-$s" "2 1 32 12 0 0 $s" "$(for f in version algo digest_len log_blocksize level reserved size; do keyfield "$tmp/k0" $f; done | xargs)"
	expect_eq "mkkey-key-digest-$s" "$(fsverity digest --compact "$tmp/f")" "$(keyfield "$tmp/k0" digest)"
done

# 70000000 bytes: 17090 blocks, 134 hashes on level 1, 2 on level 2, root on 3.
python3 $mkkey --level 1 "$tmp/f" >"$tmp/k1"
expect_eq mkkey-level1-length $((48 + 32 * 134)) "$(keyfield "$tmp/k1" len)"
python3 $mkkey --level 3 "$tmp/f" >"$tmp/k3"
expect_eq mkkey-root-level-length 80 "$(keyfield "$tmp/k3" len)"
check mkkey-level-above-root-refused sh -c "! python3 $mkkey --level 4 '$tmp/f' 2>/dev/null"
python3 $mkkey --level-above-root "$tmp/f" >"$tmp/ka"
expect_eq mkkey-level-above-root "4 80" "$(keyfield "$tmp/ka" level) $(keyfield "$tmp/ka" len)"
# The root-level hash, packed in one block and hashed, is the digest's root.
check mkkey-root-hash-is-fsverity-root python3 - "$tmp/k3" "$tmp/k1" <<'EOF'
import hashlib, struct, sys
k3, k1 = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read()
root = k3[48:80]
desc = struct.pack("<BBBBIQ", 1, 1, 12, 0, 0, 70000000) + root.ljust(64, b"\0") + bytes(176)
assert hashlib.sha256(desc).digest() == k3[16:48], "digest"
# level 1 -> level 2 -> root
lvl = [k1[48 + i:80 + i] for i in range(0, len(k1) - 48, 32)]
while len(lvl) > 1:
    lvl = [hashlib.sha256(b"".join(lvl[i:i + 128]).ljust(4096, b"\0")).digest() for i in range(0, len(lvl), 128)]
assert lvl[0] == root, "tree"
EOF

# Level 0 hashes are the hashes of the zero-padded data blocks.
head -c 4097 /dev/urandom >"$tmp/g"
python3 $mkkey "$tmp/g" >"$tmp/kg"
check mkkey-level0-block-hashes python3 - "$tmp/g" "$tmp/kg" <<'EOF'
import hashlib, sys
d, k = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read()
assert k[48:80] == hashlib.sha256(d[:4096]).digest()
assert k[80:112] == hashlib.sha256(d[4096:].ljust(4096, b"\0")).digest()
assert len(k) == 112
EOF
check mkkey-hex-is-raw test "$(python3 $mkkey --hex "$tmp/g")" = "0x$(od -An -v -tx1 "$tmp/kg" | tr -d ' \n')"

# The old format: version 1, SHA-256 of the whole file.
python3 $mkkey --version 1 "$tmp/g" >"$tmp/kv1"
expect_eq mkkey-v1-layout "48 1 4097" "$(keyfield "$tmp/kv1" len) $(keyfield "$tmp/kv1" version) $(keyfield "$tmp/kv1" size)"
expect_eq mkkey-v1-digest "$(sha256sum <"$tmp/g" | cut -d' ' -f1)" "$(keyfield "$tmp/kv1" digest)"

# Corruptions change only what they name.
python3 $mkkey --truncate-bytes 5 "$tmp/g" >"$tmp/kt"
expect_eq mkkey-truncate-bytes 107 "$(keyfield "$tmp/kt" len)"
python3 $mkkey --extra-bytes 32 "$tmp/g" >"$tmp/ke"
expect_eq mkkey-extra-bytes 144 "$(keyfield "$tmp/ke" len)"
python3 $mkkey --reserved "$tmp/g" >"$tmp/kr"
expect_eq mkkey-reserved "1 112" "$(keyfield "$tmp/kr" reserved) $(keyfield "$tmp/kr" len)"
python3 $mkkey --flip-tree-byte 40 "$tmp/g" >"$tmp/kf"
expect_eq mkkey-flip-tree-byte-one-byte 1 "$(cmp -l "$tmp/kg" "$tmp/kf" | wc -l)"
expect_eq mkkey-flip-tree-byte-offset 89 "$(cmp -l "$tmp/kg" "$tmp/kf" | awk '{print $1}')"
python3 $mkkey --size 5000 "$tmp/g" >"$tmp/ks"
expect_eq mkkey-size-override 5000 "$(keyfield "$tmp/ks" size)"
