#!/bin/bash
# vm: --disk a:320M --disk b:320M --mem 1G --cpus 2
# kernels: patched
# timeout: 600
# The key kept with a member (fs/pcdedup/keycache.c) is never used once the
# key may have changed. A tagged file f (content A) is opened so that its
# key is kept (positive control: the next open counts pcdedup_key_cached),
# then its key is removed, replaced by a host-made key of another content
# B, dropped by an open for write and by a truncate, made stale by a new
# secret and by a domain set on its filesystem, and removed while opens
# race with the removal: each time, the next read-only open follows the key
# as it is now (no share; B's share; a private open; the new domain's share),
# not the one kept. Against a cache that is never invalidated, the cases
# of removal, another key, the new secret, the domain and the race fail.
# After the trust mode changed, a kept key still serves opens, and they join
# the share of the new mode that an open which read the key joined (the
# share kept with the key is the old mode's). The share kept with a key
# stays while the member inode is cached, and goes once it is evicted. An
# online UUID change of ext4 applies to keys from the next mount on.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

plan 22
for t in mkfs.xfs getfattr setfattr python3; do
	command -v $t >/dev/null || { fail "$t-present" "no $t (scripts/deps.txt)"; exit 1; }
done
pcdedup_on
echo 0 >"$sysfs/min_size"
mkkey() { python3 "$(dirname "$0")/mkkey.py" "$@"; }
A=/mnt/a B=/mnt/b w=/tmp/keycache holder=""
mkdir -p $A $B $w
cleanup() {
	[ -z "$holder" ] || kill "$holder" 2>/dev/null || true
	umount "$B" "$A" 2>/dev/null || true
}
trap cleanup EXIT
# A counter's value; a missing counter is an error, never 0.
ctr() {
	local v
	v=$(vmstat "$1")
	[ -n "$v" ] || { echo "no counter pcdedup_$1" >&2; return 1; }
	echo "$v"
}
# Open FILE read-only once; print how the open went by the counters:
# "cached shared", "read shared", "cached private", "read private".
open_once() {
	local k0 s0 k1 s1
	k0=$(ctr key_cached) && s0=$(ctr open_shared) || return 1
	python3 -c 'import os, sys; os.close(os.open(sys.argv[1], os.O_RDONLY))' "$1"
	k1=$(ctr key_cached) && s1=$(ctr open_shared) || return 1
	echo "$([ "$k1" -gt "$k0" ] && echo cached || echo read)" \
		"$([ "$s1" -gt "$s0" ] && echo shared || echo private)"
}
# The share lines of DIGEST (hex): one per share of that content.
shares_of() { grep -c "^sha256:$1 " /sys/kernel/debug/pcdedup/shares || true; }
# Openers counted in the share of DIGEST (the sum over its shares).
openers_of() {
	awk -v d="sha256:$1" '$1 == d {n += $4} END {print n + 0}' /sys/kernel/debug/pcdedup/shares
}
# Hold FILE open read-only in the background ($holder) until release.
hold() {
	python3 -c 'import os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
open(sys.argv[2], "w").close()
time.sleep(600)' "$1" $w/held &
	holder=$!
	for _ in $(seq 100); do [ -e $w/held ] && break; sleep 0.1; done
	rm -f $w/held
}
release() { kill "$holder"; wait "$holder" 2>/dev/null || true; holder=""; }
# (The key goes first: the tool reads the file through its share, and f
# may carry the key of another content.)
retag() {
	setfattr -x trusted.pcdedup "$1" 2>/dev/null || true
	"$pcdedup" tag -q --min-size 0 "$1"
}

fs_setup() {
	local n
	for n in a b; do
		mkfs.xfs -q -f "/dev/disk/by-name/$n" && mount "/dev/disk/by-name/$n" "/mnt/$n" || return 1
	done
}
check fs-setup fs_setup
mkfile $w/a $((256 << 10))
mkfile $w/b $((256 << 10))
cp $w/a $A/f
cp $w/a $B/twin
cp $w/b $A/other
for f in $A/f $B/twin $A/other; do retag "$f"; done
dA=$(mkkey --digest $w/a)
dB=$(mkkey --digest $w/b)

# --- positive control: a second open uses the kept key ---
open_once $A/f >/dev/null
expect_eq cache-used "cached shared" "$(open_once $A/f)"

# --- the key removed: the next open is private ---
setfattr -x trusted.pcdedup $A/f
expect_eq removed-key-not-used "read private" "$(open_once $A/f)"

# --- another key (a host-made key of content B, as a re-tag would set):
# the next open joins B's share, not A's ---
retag $A/f
open_once $A/f >/dev/null
mkkey $w/b --set --target $A/f --mac-for $A/f
hold $A/f
expect_eq other-key-joins-its-share "1 0" "$(openers_of "$dB") $(openers_of "$dA")"
release

# --- an open for write drops the key: the next open is private ---
retag $A/f
open_once $A/f >/dev/null
: >>$A/f
expect_eq write-open-drops-key "read private" "$(open_once $A/f)"

# --- a truncate (to the same size) drops it too ---
retag $A/f
open_once $A/f >/dev/null
truncate -s $((256 << 10)) $A/f
expect_eq truncate-drops-key "read private" "$(open_once $A/f)"

# --- a new secret: the kept key, made with the old one, is not honoured ---
retag $A/f
open_once $A/f >/dev/null
u0=$(ctr key_unauthenticated)
cp "$PCDEDUP_SECRET_FILE" $w/secret.old
rm -f "$PCDEDUP_SECRET_FILE"
check new-secret-load secret_load
expect_eq new-secret-open-private "read private" "$(open_once $A/f)"
expect_eq new-secret-counted-unauthenticated $((u0 + 1)) "$(ctr key_unauthenticated)"
# Back to this boot's secret: every key made so far is right again.
cp $w/secret.old "$PCDEDUP_SECRET_FILE"
check old-secret-load "$pcdedup" secret load
expect_eq old-secret-honoured-again "read shared" "$(open_once $A/f)"

# --- a domain set on f's filesystem: f, tagged again there (its key's MAC
# binds the domain), shares within it from its next open, apart from the
# twin on B (the default domain) ---
hold $B/twin
open_once $A/f >/dev/null
check domain-set "$pcdedup" domain set $A tenant1
# The kept key was made in the default domain: neither it nor the key read
# again is honoured in tenant1.
expect_eq domain-change-old-key-private "read private" "$(open_once $A/f)"
retag $A/f
open_once $A/f >/dev/null
python3 -c 'import os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
time.sleep(600)' $A/f &
h2=$!
sleep 1
expect_eq domain-change-not-cached "2" "$(shares_of "$dA")"
kill $h2
wait $h2 2>/dev/null || true
release
setfattr -x trusted.pcdedup.domain $A
retag $A/f

# --- the trust mode changes: the kept key (its share's hash included) is
# used, and finds the one share of the new mode that a read key found ---
open_once $A/f >/dev/null
echo trust >"$sysfs/verify"
cp $w/a $B/twin2
retag $B/twin2
hold $B/twin2
expect_eq trust-mode-uses-kept-key "cached shared" "$(open_once $A/f)"
python3 -c 'import os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
time.sleep(600)' $A/f &
h2=$!
sleep 1
expect_eq trust-mode-one-share "2" "$(awk -v d="sha256:$dA" '$1 == d && $4 > m {m = $4} END {print m + 0}' /sys/kernel/debug/pcdedup/shares)"
kill $h2
wait $h2 2>/dev/null || true
release
echo full >"$sysfs/verify"

# --- the share kept with a key lives as long as the member inode: reclaim
# does not free it while the member is cached (held by an O_PATH fd, which
# pcdedup does not serve), and frees it once the member is evicted ---
mkfile $w/c $((64 << 10))
cp $w/c $A/solo
retag $A/solo
dC=$(mkkey --digest $w/c)
open_once $A/solo >/dev/null
python3 -c 'import os, sys, time
fd = os.open(sys.argv[1], os.O_PATH)
open(sys.argv[2], "w").close()
time.sleep(600)' $A/solo $w/pinned &
pin=$!
for _ in $(seq 100); do [ -e $w/pinned ] && break; sleep 0.1; done
echo 3 >/proc/sys/vm/drop_caches
expect_eq kept-share-lives-with-member 1 "$(shares_of "$dC")"
kill $pin
wait $pin 2>/dev/null || true
# The member's eviction puts the share on the inode LRU, where reclaim may
# pass over it once (it was referenced): drop until it goes, or ten times.
for _ in $(seq 10); do
	echo 3 >/proc/sys/vm/drop_caches
	[ "$(shares_of "$dC")" != 0 ] || break
	sleep 0.5
done
expect_eq kept-share-goes-with-member 0 "$(shares_of "$dC")"

# --- ext4's UUID changed online (EXT4_IOC_SETFSUUID): the key's MAC binds
# the UUID the kernel knows the filesystem by (sb->s_uuid, what
# FS_IOC_GETFSUUID returns), which the ioctl changes on disk only: kept and
# read keys are honoured alike until the next mount, and refused after it ---
setuuid() {
	python3 -c 'import fcntl, os, struct, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
fcntl.ioctl(fd, 0x4008662C, struct.pack("II16s", 16, 0, os.urandom(16)))' "$1"
}
e4_setup() {
	truncate -s 64M $w/e4.img && mkfs.ext4 -q -F -O metadata_csum_seed $w/e4.img &&
		mkdir -p /mnt/e4 && mount -o loop $w/e4.img /mnt/e4 &&
		cp $w/a /mnt/e4/f && retag /mnt/e4/f && setuuid /mnt/e4
}
if e4_setup; then
	pass uuid-set-online
	open_once /mnt/e4/f >/dev/null
	v=$("$pcdedup" verify -q /mnt/e4/f >/dev/null 2>&1 && echo valid || echo invalid)
	expect_eq uuid-same-until-remount "cached shared valid" "$(open_once /mnt/e4/f) $v"
	u0=$(ctr key_unauthenticated)
	umount /mnt/e4 && mount -o loop $w/e4.img /mnt/e4
	expect_eq uuid-new-after-remount "read private $((u0 + 1))" "$(open_once /mnt/e4/f) $(ctr key_unauthenticated)"
	umount /mnt/e4
else
	fail uuid-set-online "ext4 with metadata_csum_seed, EXT4_IOC_SETFSUUID"
	fail uuid-same-until-remount "no filesystem"
	fail uuid-new-after-remount "no filesystem"
fi

# --- opens racing removals: once a removal succeeded, no later open is
# shared. Up to 40 rounds, bounded by time (at least 5 rounds, then none
# started after 120 s): a loaded host makes each round slower, and the
# suite's budget is the guest's. ---
bad=0 removed=0 i=0 deadline=$((SECONDS + 120))
while [ "$i" -lt 40 ] && { [ "$i" -lt 5 ] || [ "$SECONDS" -lt "$deadline" ]; }; do
	i=$((i + 1))
	retag $A/f 2>/dev/null || continue
	open_once $A/f >/dev/null
	python3 -c 'import os, sys
for _ in range(20):
    os.close(os.open(sys.argv[1], os.O_RDONLY))' $A/f &
	r=$!
	if setfattr -x trusted.pcdedup $A/f 2>/dev/null; then
		removed=$((removed + 1))
		wait $r
		[ "$(open_once $A/f)" = "read private" ] || { bad=$((bad + 1)); echo "# race $i: shared after removal"; }
	else
		wait $r
	fi
done
echo "# race: $removed of $i removals got in between opens ($i rounds)"
if [ "$removed" -gt 0 ] && [ "$bad" = 0 ]; then
	pass racing-removal-never-used
else
	fail racing-removal-never-used "$bad of $removed opens after a removal were shared"
fi
