#!/bin/bash
# tests/dedup/mkkey.py, the guest suites' independent key builder: its
# digest is what `fsverity digest` prints, its key has the layout of
# dedup/include/linux/pcdedup.h, its MAC is what `openssl dgst -mac HMAC`
# makes of what docs/interface.md says it covers, and its corruption
# options do what they say. Host side, on temporary files: no attribute is
# set here.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
cd "$(dirname "$0")/../.."
mkkey=tests/dedup/mkkey.py
sizes=(1 4096 4097 600000 70000000)
# 4 per size, then the 37 cases after the loop
plan $((${#sizes[@]} * 4 + 37))
# fsverity is a dependency (scripts/deps.txt): without it, a failure.
if ! command -v fsverity >/dev/null; then
	fail mkkey-fsverity "no fsverity tool (Debian package fsverity, scripts/deps.txt)"
	exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A secret of the suite's own, as `pcdedup secret new` writes one.
newsecret() { (umask 077 && od -An -N32 -tx1 /dev/urandom | tr -d ' \n' >"$1" && echo >>"$1"); }
newsecret "$tmp/secret"
export PCDEDUP_SECRET_FILE=$tmp/secret

# Field FIELD of a key (python struct of the 16-byte header).
keyfield() { # KEYFILE FIELD
	python3 - "$1" "$2" <<'EOF'
import struct, sys
k = open(sys.argv[1], "rb").read()
v, a, dl, lb, lvl, r0, r1, r2, size = struct.unpack_from("<8BQ", k)
print({"version": v, "algo": a, "digest_len": dl, "log_blocksize": lb,
       "level": lvl, "reserved": r0 | r1 | r2, "size": size,
       "len": len(k), "digest": k[16:48].hex(), "mac": k[48:80].hex()}[sys.argv[2]])
EOF
}

for s in "${sizes[@]}"; do
	head -c "$s" /dev/urandom >"$tmp/f"
	check "mkkey-digest-is-fsverity-$s" test "$(python3 $mkkey --digest "$tmp/f")" = "$(fsverity digest --compact "$tmp/f")"
	python3 $mkkey "$tmp/f" >"$tmp/k0"
	blocks=$(((s + 4095) / 4096))
	expect_eq "mkkey-level0-length-$s" $((80 + 32 * blocks)) "$(keyfield "$tmp/k0" len)"
	expect_eq "mkkey-header-$s" "3 1 32 12 0 0 $s" "$(for f in version algo digest_len log_blocksize level reserved size; do keyfield "$tmp/k0" $f; done | xargs)"
	expect_eq "mkkey-key-digest-$s" "$(fsverity digest --compact "$tmp/f")" "$(keyfield "$tmp/k0" digest)"
done

# 70000000 bytes: 17090 blocks, 134 hashes on level 1, 2 on level 2, root on 3.
python3 $mkkey --level 1 "$tmp/f" >"$tmp/k1"
expect_eq mkkey-level1-length $((80 + 32 * 134)) "$(keyfield "$tmp/k1" len)"
python3 $mkkey --level 3 "$tmp/f" >"$tmp/k3"
expect_eq mkkey-root-level-length 112 "$(keyfield "$tmp/k3" len)"
check mkkey-level-above-root-refused sh -c "! python3 $mkkey --level 4 '$tmp/f' 2>/dev/null"
python3 $mkkey --level-above-root "$tmp/f" >"$tmp/ka"
expect_eq mkkey-level-above-root "4 112" "$(keyfield "$tmp/ka" level) $(keyfield "$tmp/ka" len)"
# The root-level hash, packed in one block and hashed, is the digest's root.
check mkkey-root-hash-is-fsverity-root python3 - "$tmp/k3" "$tmp/k1" <<'EOF'
import hashlib, struct, sys
k3, k1 = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read()
root = k3[80:112]
desc = struct.pack("<BBBBIQ", 1, 1, 12, 0, 0, 70000000) + root.ljust(64, b"\0") + bytes(176)
assert hashlib.sha256(desc).digest() == k3[16:48], "digest"
# level 1 -> level 2 -> root
lvl = [k1[80 + i:112 + i] for i in range(0, len(k1) - 80, 32)]
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
assert k[80:112] == hashlib.sha256(d[:4096]).digest()
assert k[112:144] == hashlib.sha256(d[4096:].ljust(4096, b"\0")).digest()
assert len(k) == 144
EOF
check mkkey-hex-is-raw test "$(python3 $mkkey --hex "$tmp/g")" = "0x$(od -An -v -tx1 "$tmp/kg" | tr -d ' \n')"

# The MAC: HMAC-SHA256 with the secret over "pcdedup-key-v3", the header
# and digest, the filesystem UUID (its length first), the inode number
# (le64) and generation (le32), the domain (its length first; none: the
# default domain), made here with openssl; the generation as lsattr prints
# it.
macmsg() { # KEYFILE FILE [DOMAIN]: the bytes the MAC covers, to stdout
	python3 - "$1" "$2" "$(lsattr -v "$2" | cut -d' ' -f1)" "${3:-}" <<'EOF'
import fcntl, os, struct, sys
k = open(sys.argv[1], "rb").read()
fd = os.open(sys.argv[2], os.O_RDONLY)
u = fcntl.ioctl(fd, 0x80111500, bytes(17))
d = sys.argv[4].encode()
sys.stdout.buffer.write(b"pcdedup-key-v3" + k[:48] + u[:1 + u[0]] +
                        struct.pack("<QI", os.fstat(fd).st_ino, int(sys.argv[3])) +
                        bytes([len(d)]) + d)
EOF
}
hmac() { # KEYFILE FILE [DOMAIN]: the MAC it should carry, in hex
	macmsg "$@" | openssl dgst -sha256 -mac HMAC \
		-macopt "hexkey:$(head -c 64 "$PCDEDUP_SECRET_FILE")" -r | cut -d' ' -f1
}
# Offsets (from 1, as cmp -l prints them) outside the MAC where A and B differ.
outside_mac() { cmp -l "$1" "$2" | awk '$1 <= 48 || $1 > 80 {print $1}' | xargs; }
expect_eq mkkey-mac-is-hmac "$(hmac "$tmp/kg" "$tmp/g")" "$(keyfield "$tmp/kg" mac)"
# In a named domain the MAC binds the name: another MAC, and only it.
python3 $mkkey --domain tenantA "$tmp/g" >"$tmp/kgd"
expect_eq mkkey-domain-mac-is-hmac "$(hmac "$tmp/kgd" "$tmp/g" tenantA)" "$(keyfield "$tmp/kgd" mac)"
check mkkey-domain-other-mac test "$(keyfield "$tmp/kgd" mac)" != "$(keyfield "$tmp/kg" mac)"
expect_eq mkkey-level1-mac-is-hmac "$(hmac "$tmp/k1" "$tmp/f")" "$(keyfield "$tmp/k1" mac)"
# The same content in another inode: only the MAC differs.
cp "$tmp/g" "$tmp/g2"
python3 $mkkey "$tmp/g2" >"$tmp/kg2"
expect_eq mkkey-other-inode-mac-is-hmac "$(hmac "$tmp/kg2" "$tmp/g2")" "$(keyfield "$tmp/kg2" mac)"
check mkkey-other-inode-other-mac test "$(keyfield "$tmp/kg" mac)" != "$(keyfield "$tmp/kg2" mac)"
expect_eq mkkey-other-inode-only-mac-differs "" "$(outside_mac "$tmp/kg" "$tmp/kg2")"
# --mac-for: FILE's content, the other file's identity.
python3 $mkkey --mac-for "$tmp/g2" "$tmp/g" >"$tmp/kmf"
check mkkey-mac-for-other-file cmp "$tmp/kmf" "$tmp/kg2"
# The secret from --secret-file as from the environment; another secret
# changes the MAC alone.
check mkkey-secret-file-option sh -c "PCDEDUP_SECRET_FILE=/nonexistent python3 $mkkey --secret-file '$tmp/secret' '$tmp/g' | cmp - '$tmp/kg'"
newsecret "$tmp/secret2"
python3 $mkkey --secret-file "$tmp/secret2" "$tmp/g" >"$tmp/ks2"
expect_eq mkkey-other-secret-only-mac-differs "" "$(outside_mac "$tmp/kg" "$tmp/ks2")"
check mkkey-other-secret-other-mac test "$(keyfield "$tmp/kg" mac)" != "$(keyfield "$tmp/ks2" mac)"
check mkkey-no-secret-refused sh -c "! PCDEDUP_SECRET_FILE=/nonexistent python3 $mkkey '$tmp/g' >/dev/null 2>&1"
check mkkey-digest-needs-no-secret sh -c "PCDEDUP_SECRET_FILE=/nonexistent python3 $mkkey --digest '$tmp/g' >/dev/null"
# --bad-mac: one bit of the MAC.
python3 $mkkey --bad-mac "$tmp/g" >"$tmp/kbm"
expect_eq mkkey-bad-mac-one-bit "49 1" "$(cmp -l "$tmp/kg" "$tmp/kbm" | while read -r at x y; do echo "$at $((8#$x ^ 8#$y))"; done | xargs)"

# The old formats: version 1, SHA-256 of the whole file; version 2,
# version 3 without the MAC.
python3 $mkkey --version 1 "$tmp/g" >"$tmp/kv1"
expect_eq mkkey-v1-layout "48 1 4097" "$(keyfield "$tmp/kv1" len) $(keyfield "$tmp/kv1" version) $(keyfield "$tmp/kv1" size)"
expect_eq mkkey-v1-digest "$(sha256sum <"$tmp/g" | cut -d' ' -f1)" "$(keyfield "$tmp/kv1" digest)"
check mkkey-v2-needs-no-secret sh -c "PCDEDUP_SECRET_FILE=/nonexistent python3 $mkkey --version 2 '$tmp/g' >'$tmp/kv2'"
expect_eq mkkey-v2-layout "112 2 4097" "$(keyfield "$tmp/kv2" len) $(keyfield "$tmp/kv2" version) $(keyfield "$tmp/kv2" size)"
check mkkey-v2-is-v3-without-mac python3 - "$tmp/kv2" "$tmp/kg" <<'EOF'
import sys
v2, v3 = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read()
assert v2[0] == 2 and v3[0] == 3
assert v2[1:48] == v3[1:48] and v2[48:] == v3[80:]
EOF

# Corruptions change only what they name.
python3 $mkkey --truncate-bytes 5 "$tmp/g" >"$tmp/kt"
expect_eq mkkey-truncate-bytes 139 "$(keyfield "$tmp/kt" len)"
python3 $mkkey --extra-bytes 32 "$tmp/g" >"$tmp/ke"
expect_eq mkkey-extra-bytes 176 "$(keyfield "$tmp/ke" len)"
python3 $mkkey --reserved "$tmp/g" >"$tmp/kr"
expect_eq mkkey-reserved "1 144" "$(keyfield "$tmp/kr" reserved) $(keyfield "$tmp/kr" len)"
# The header is in the MAC: a corrupted header gets the MAC that fits it,
# so that what the kernel refuses is the header itself.
expect_eq mkkey-reserved-mac-is-hmac "$(hmac "$tmp/kr" "$tmp/g")" "$(keyfield "$tmp/kr" mac)"
python3 $mkkey --flip-tree-byte 40 "$tmp/g" >"$tmp/kf"
expect_eq mkkey-flip-tree-byte-one-byte 1 "$(cmp -l "$tmp/kg" "$tmp/kf" | wc -l)"
expect_eq mkkey-flip-tree-byte-offset 121 "$(cmp -l "$tmp/kg" "$tmp/kf" | awk '{print $1}')"
python3 $mkkey --size 5000 "$tmp/g" >"$tmp/ks"
expect_eq mkkey-size-override 5000 "$(keyfield "$tmp/ks" size)"
expect_eq mkkey-size-override-mac-is-hmac "$(hmac "$tmp/ks" "$tmp/g")" "$(keyfield "$tmp/ks" mac)"
check mkkey-target-needs-set sh -c "! python3 $mkkey --target '$tmp/g2' '$tmp/g' >/dev/null 2>&1"
# A sparse file's holes are hashed as zero blocks without being read: its
# digest is fs-verity's, and its levels are those of the same bytes read
# whole (through a pipe: no holes to skip).
truncate -s $((1024 * 1024 * 1024 + 5)) "$tmp/sp"
head -c 100000 /dev/urandom | dd of="$tmp/sp" bs=1 seek=1234567 conv=notrunc status=none
check mkkey-sparse-digest-is-fsverity test "$(python3 $mkkey --digest "$tmp/sp")" = "$(fsverity digest --compact "$tmp/sp")"
check mkkey-sparse-levels-as-read-whole python3 - "$tmp/sp" <<'EOF'
import subprocess, sys
sys.path.insert(0, "tests/dedup")
import mkkey
fast = mkkey.merkle_levels(sys.argv[1])
cat = subprocess.Popen(["cat", sys.argv[1]], stdout=subprocess.PIPE)
slow = mkkey.merkle_levels("/dev/fd/%d" % cat.stdout.fileno())
cat.wait()
sys.exit(fast != slow)
EOF
