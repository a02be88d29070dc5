#!/bin/bash
# vm: --disk a:320M --disk b:320M --disk c:320M --disk d:320M --disk f:320M --mem 1G --cpus 2
# kernels: patched
# timeout: 600
# Keys and domains carried in by an image are never honoured: an OCI layer
# (unpacked with umoci as root, which applies the layer's trusted.* xattrs)
# and a user-owned XFS image file, loop-mounted, carry keys copied from
# files tagged on this boot (a right MAC, but for another inode), keys made
# with another secret, version 2 keys, keys with a flipped MAC, and a
# domain copied from another filesystem. None opens through a share, each
# file reads its own bytes, the copied domain does not authenticate, and the
# tool will not tag under it. A filesystem whose domain attribute is removed
# offline (an ext4 image its owner rewrites with debugfs) does not join the
# default domain: its keys' MACs bind the domain they were made in. Positive
# control: two files the administrator tagged with the tool do share.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

plan 22
for t in umoci mkfs.xfs mkfs.ext4 debugfs getfattr setfattr; do
	command -v $t >/dev/null || { fail "$t-present" "no $t (scripts/deps.txt)"; exit 1; }
done
pcdedup_on
echo 0 >"$sysfs/min_size"
mkkey() { python3 "$(dirname "$0")/mkkey.py" "$@"; }
A=/mnt/a B=/mnt/b C=/mnt/c D=/mnt/d E=/mnt/e F=/mnt/f G=/mnt/g w=/tmp/hostile
mkdir -p $A $B $C $D $E $F $G $w
cleanup() {
	exec 7<&- 8<&- 9<&- || true
	umount "$G" "$E" "$F" "$D" "$C" "$B" "$A" 2>/dev/null || true
}
trap cleanup EXIT
# A counter's value; a missing counter is an error, never 0.
ctr() {
	local v
	v=$(vmstat "$1")
	[ -n "$v" ] || { echo "no counter pcdedup_$1" >&2; return 1; }
	echo "$v"
}
sha() { sha256sum <"$1" | cut -d' ' -f1; }

fs_setup() {
	local n
	for n in a b c d f; do
		mkfs.xfs -q -f "/dev/disk/by-name/$n" && mount "/dev/disk/by-name/$n" "/mnt/$n" || return 1
	done
}
check fs-setup fs_setup

# --- positive control: the administrator's keys share -------------------
mkfile $w/ref $((1 << 20))
mkfile $w/other $((1 << 20))
want=$(sha $w/ref)
cp $w/ref $A/f
cp $w/ref $B/f
cp $w/ref $F/f
# A, B, C (the layer) and E (the image) are in the default domain: a
# honoured copied key would join A's share. F is in domain tenantA (set by
# the tool): the domain the attacker copies onto D's root.
check control-domain "$pcdedup" domain set $F tenantA
check control-tag "$pcdedup" tag -q --min-size 0 $A/f $B/f $F/f
drop_caches
s0=$(ctr open_shared) || s0=missing
# A/f and B/f held open (fds 7 and 9) to the end: the share a honoured
# forged key would join.
exec 7<"$A/f" 9<"$B/f"
# The members of the shares with FILE's key (one per domain), sorted.
members() { share_field "$1" members | sort -n | xargs; }
max_members() { members "$1" | tr ' ' '\n' | tail -n 1; }
control() {
	local s1
	s1=$(ctr open_shared) || return 1
	if [ "$s0" = missing ] || [ "$s1" -le "$s0" ]; then
		echo "open_shared did not grow ($s0 -> $s1)"
		return 1
	fi
	[ "$(sha "$B/f")" = "$want" ] || { echo "B/f reads other bytes"; return 1; }
	[ "$(max_members "$A/f")" = 2 ] || { echo "share members '$(members "$A/f")', want 2"; return 1; }
}
check control-shares control

# NAME FILE WANT_SHA COUNTER...: opening FILE read-only does not open through
# a share (open_shared does not grow), one of the COUNTERs grows, and FILE
# reads WANT_SHA.
not_honoured() {
	local name=$1 f=$2 want=$3 s0 s1 c0=0 c1=0 c got why=""
	shift 3
	if ! s0=$(ctr open_shared 2>&1); then fail "$name" "$s0"; return; fi
	for c in "$@"; do
		if ! got=$(ctr "$c" 2>&1); then fail "$name" "$got"; return; fi
		c0=$((c0 + got))
	done
	got=$(sha "$f" 2>&1) || got="read failed: $got"
	s1=$(ctr open_shared)
	for c in "$@"; do c1=$((c1 + $(ctr "$c"))); done
	[ "$got" = "$want" ] || why+=" reads other bytes ($got)"
	[ "$s1" = "$s0" ] || why+=" opened through a share (open_shared +$((s1 - s0)))"
	[ "$c1" -gt "$c0" ] || why+=" none of $* grew"
	if [ -z "$why" ]; then pass "$name"; else fail "$name" "$why"; fi
}

# --- 1: an OCI layer with keys and a domain in its tar's PAX headers ----
s=$C/stage
mkdir $s
cp $w/ref $s/ref
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >$w/other-secret
getfattr --only-values -n trusted.pcdedup $A/f >$s/key-copied
getfattr --only-values -n trusted.pcdedup.domain $F >$s/domain-copied
mkkey --secret-file $w/other-secret --mac-for $A/f $s/ref >$s/key-other-secret
mkkey --version 2 $s/ref >$s/key-v2
# LAYOUT TAG ROOT_DOMAIN_FILE (NAME SRC KEYFILE)...
mklayer() {
	python3 - "$@" <<'PY'
import hashlib, io, json, os, sys, tarfile
layout, tag, domain, rest = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
def raw(path):  # a binary xattr value as tarfile carries it (hdrcharset=BINARY)
    return open(path, "rb").read().decode("utf-8", "surrogateescape")
buf = io.BytesIO()
with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
    ti = tarfile.TarInfo("./")
    ti.type, ti.mode = tarfile.DIRTYPE, 0o755
    ti.pax_headers = {"SCHILY.xattr.trusted.pcdedup.domain": raw(domain)}
    tar.addfile(ti)
    for i in range(0, len(rest), 3):
        name, src, key = rest[i:i + 3]
        data = open(src, "rb").read()
        ti = tarfile.TarInfo(name)
        ti.size, ti.mode = len(data), 0o644
        ti.pax_headers = {"SCHILY.xattr.trusted.pcdedup": raw(key)}
        tar.addfile(ti, io.BytesIO(data))
layer = buf.getvalue()
def blob(data, media):
    d = hashlib.sha256(data).hexdigest()
    os.makedirs(os.path.join(layout, "blobs", "sha256"), exist_ok=True)
    with open(os.path.join(layout, "blobs", "sha256", d), "wb") as f:
        f.write(data)
    return {"mediaType": media, "digest": "sha256:" + d, "size": len(data)}
config = {"architecture": "amd64", "os": "linux", "config": {},
          "rootfs": {"type": "layers", "diff_ids": ["sha256:" + hashlib.sha256(layer).hexdigest()]}}
manifest = {"schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": blob(json.dumps(config).encode(), "application/vnd.oci.image.config.v1+json"),
            "layers": [blob(layer, "application/vnd.oci.image.layer.v1.tar")]}
m = blob(json.dumps(manifest).encode(), "application/vnd.oci.image.manifest.v1+json")
m["annotations"] = {"org.opencontainers.image.ref.name": tag}
with open(os.path.join(layout, "oci-layout"), "w") as f:
    json.dump({"imageLayoutVersion": "1.0.0"}, f)
with open(os.path.join(layout, "index.json"), "w") as f:
    json.dump({"schemaVersion": 2, "manifests": [m]}, f)
PY
}
check layer-build mklayer $C/oci hostile $s/domain-copied \
	copied $s/ref $s/key-copied \
	copied-other-bytes $w/other $s/key-copied \
	other-secret $s/ref $s/key-other-secret \
	v2 $s/ref $s/key-v2
check umoci-unpack umoci unpack --image $C/oci:hostile $C/bundle
r=$C/bundle/rootfs
# umoci must really have applied the layer's trusted.* xattrs (as root it
# does): a forged key that never reached the file proves nothing.
applied() {
	local f why=""
	for f in copied copied-other-bytes other-secret v2; do
		cmp -s <(getfattr --only-values -n trusted.pcdedup "$r"/$f 2>/dev/null) \
			"$s/key-${f/copied-other-bytes/copied}" || why+=" $f:key-not-applied"
	done
	cmp -s <(getfattr --only-values -n trusted.pcdedup.domain "$r" 2>/dev/null) "$s"/domain-copied ||
		why+=" rootfs:domain-not-applied"
	[ -z "$why" ] || { echo "$why"; return 1; }
}
check unpack-xattrs-applied applied
not_honoured layer-copied-key $r/copied "$want" key_unauthenticated
not_honoured layer-copied-key-other-bytes $r/copied-other-bytes "$(sha $w/other)" key_unauthenticated
not_honoured layer-other-secret-key $r/other-secret "$want" key_unauthenticated
not_honoured layer-v2-key $r/v2 "$want" key_old
expect_eq control-members-still-2 2 "$(max_members $A/f)"

# --- 1b: the layer's root domain on a fresh filesystem's root -----------
# umoci raw unpack onto D's root applies the layer root's xattrs to it;
# when umoci will not unpack there, the copied value is set by hand.
if ! out=$(umoci raw unpack --image $C/oci:hostile $D 2>&1); then
	_ktap_diag "umoci raw unpack onto a filesystem root: ${out##*$'\n'}; setting the copied domain with setfattr"
	setfattr -n trusted.pcdedup.domain -v "0x$(od -An -tx1 $s/domain-copied | tr -d ' \n')" $D
fi
cmp -s <(getfattr --only-values -n trusted.pcdedup.domain $D 2>/dev/null) $s/domain-copied &&
	_ktap_diag "$D root carries the copied domain"
status=$("$pcdedup" domain show --json $D 2>/dev/null |
	python3 -c 'import json, sys; d = json.load(sys.stdin); print(d["domain"], d["status"])' || true)
expect_eq domain-copied-unauthenticated "tenantA unauthenticated" "$status"
# the tool does not tag a file on D: its keys would bind a domain the
# kernel does not honour there
cp $w/ref $D/admin
exec 8<$F/f
out=$("$pcdedup" tag -q --min-size 0 $D/admin 2>&1) && rc=0 || rc=$?
expect_eq domain-admin-tag-refused "1 yes" \
	"$rc $(grep -q 'was not made with this secret' <<<"$out" && echo yes || echo "no: $out")"
# a key made for D/admin (by mkkey, in the default domain) stays private:
# the forged domain does not let it into tenantA (F/f's share, held open),
# nor into any share
mkkey --set $D/admin
not_honoured domain-copied-private $D/admin "$want" open_refused_domain

# --- 2: a user-owned XFS image, loop-mounted, forged keys inside --------
img=$w/user.img
image_build() {
	truncate -s 320M "$img" && mkfs.xfs -q -f "$img" && mount -o loop "$img" "$E" || return 1
	cp "$w"/ref "$E"/copied && cp "$w"/ref "$E"/bad-mac && cp "$w"/ref "$E"/other-secret || return 1
	setfattr -n trusted.pcdedup -v "0x$(od -An -tx1 "$s"/key-copied | tr -d ' \n')" "$E"/copied &&
		mkkey --bad-mac --set "$E"/bad-mac &&
		mkkey --secret-file "$w"/other-secret --set "$E"/other-secret || return 1
	umount "$E" && chown 1000:1000 "$img" && chmod 0600 "$img" && mount -o loop "$img" "$E"
}
check image-build image_build
not_honoured image-copied-key $E/copied "$want" key_unauthenticated
not_honoured image-bad-mac-key $E/bad-mac "$want" key_unauthenticated
not_honoured image-other-secret-key $E/other-secret "$want" key_unauthenticated
# --- 3: a domain removed offline ------------------------------------------
# An ext4 image in domain tenantB, its file tagged there by the tool; its
# owner removes the domain attribute with debugfs while it is unmounted.
# Mounted again, the filesystem is in the default domain, where A's share
# (held open) has the same content: the key, made in tenantB, must not let
# the file in.
img2=$w/tenant.img
domain_image() {
	truncate -s 64M "$img2" && mkfs.ext4 -q -F "$img2" && mount -o loop "$img2" "$G" &&
		cp "$w/ref" "$G/f" && "$pcdedup" domain set "$G" tenantB &&
		"$pcdedup" tag -q --min-size 0 "$G/f" && umount "$G" || return 1
	debugfs -w -R "ea_rm / trusted.pcdedup.domain" "$img2" >/dev/null 2>&1 || return 1
	if debugfs -R "ea_list /" "$img2" 2>/dev/null | grep -q pcdedup.domain; then
		echo "debugfs did not remove the domain"
		return 1
	fi
	mount -o loop "$img2" "$G" && getfattr -n trusted.pcdedup "$G/f" >/dev/null
}
check domain-removed-offline-image domain_image
not_honoured domain-removed-offline-private "$G/f" "$want" key_unauthenticated
umount "$G"
# A's share (default domain) has A/f and B/f, F's (tenantA) F/f alone:
# D/admin joined neither, nor did a forged key or the tenantB file
expect_eq control-members-end "1 2" "$(members $A/f)"
