# shellcheck shell=bash
# Helpers for the pcdedup guest suites.
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

# shellcheck disable=SC2034 # used by the suites
bin=$(dirname "${BASH_SOURCE[0]}")/bin
# shellcheck disable=SC2034
pcdedup=$(dirname "${BASH_SOURCE[0]}")/../../dedup/pcdedup
sysfs=/sys/kernel/mm/pcdedup

# An event counter: in sysfs (root only), or /proc/vmstat on older kernels.
events=$sysfs/events
[ -e "$events" ] || events=/proc/vmstat
vmstat() { awk -v k="pcdedup_$1" '$1 == k {print $2}' "$events"; }
knob() { cat "$sysfs/$1"; }
# This boot's secret (docs/interface.md, "The secret"): a root-only file on
# /run (a tmpfs: a fresh secret each boot), made by the tool. Everything run
# after this file is sourced (the tool, mkkey.py) makes and checks MACs
# with it.
export PCDEDUP_SECRET_FILE=/run/pcdedup-secret
# Make this boot's secret unless it exists: it is made once, so that keys
# made before pcdedup_on (a suite that tags first) stay right after it.
# Needed before `pcdedup tag` or mkkey.py where pcdedup_on has not run yet.
secret_new() {
	[ -s "$PCDEDUP_SECRET_FILE" ] || "$pcdedup" secret new
}
# The reason secret_load would fail, empty when it loaded the secret.
_secret_load_why() {
	local out
	if ! out=$(secret_new 2>&1); then
		echo "cannot make $PCDEDUP_SECRET_FILE: $out"
	elif [ ! -e "$sysfs/secret" ]; then
		echo "no $sysfs/secret: this kernel's pcdedup takes no secret (keys without MACs)"
	elif ! out=$("$pcdedup" secret load 2>&1); then
		echo "pcdedup secret load: $out"
	fi
}
# Load this boot's secret into the kernel (making it first if need be),
# so that it honours the keys and domains the tool makes: pcdedup_on does,
# and a suite booted with pcdedup=on calls it before it reads tagged files.
# When it fails it fails case pcdedup-on with the reason and ends the suite.
secret_load() {
	local why
	why=$(_secret_load_why)
	[ -n "$why" ] || return 0
	fail pcdedup-on "$why"
	exit 1
}
# Switch sharing on. It is off after boot (enabled reads 0, as KSM's run
# does, unless booted with pcdedup=on), so every suite that expects sharing
# calls this first, from its own shell (not a subshell): it loads this
# boot's secret (secret_load) and writes 1 to enabled. On a kernel without
# the knob or the secret, or when either does not take its value, it fails
# case pcdedup-on with the reason and ends the suite (exit 1).
pcdedup_on() {
	local why=""
	if [ ! -e "$sysfs/enabled" ]; then
		why="no $sysfs/enabled: this kernel has no pcdedup"
	elif why=$(_secret_load_why) && [ -n "$why" ]; then
		:
	elif ! { echo 1 >"$sysfs/enabled"; } 2>/dev/null; then
		why="cannot write 1 to $sysfs/enabled"
	elif [ "$(cat "$sysfs/enabled")" != 1 ]; then
		why="$sysfs/enabled reads '$(cat "$sysfs/enabled")' after writing 1"
	fi
	[ -n "$why" ] || return 0
	fail pcdedup-on "$why"
	exit 1
}
drop_caches() { sync; echo 3 >/proc/sys/vm/drop_caches; }
cached_kb() { awk '$1 == "Cached:" {print $2}' /proc/meminfo; }
# The listing line of the share whose key is FILE's key (the digest is
# bytes 16-47 of the key).
share_line() {
	grep "^sha256:$(key_hex "$1" | cut -c33-96) " /sys/kernel/debug/pcdedup/shares
}
# FILE's key as hex digits, empty without a key.
key_hex() {
	getfattr -n trusted.pcdedup -e hex "$1" 2>/dev/null | sed -n 's/^trusted.pcdedup=0x//p'
}
share_field() { # FILE FIELD(2=size 3=members 4=openers 5=cached_pages)
	share_line "$1" | cut -d' ' -f"$2"
}

# Random file of SIZE bytes.
mkfile() { head -c "$2" /dev/urandom >"$1"; }

# The thin pool has one owner, shared with the bench: bench/guest/thinpool.py.
thinpool=$(dirname "${BASH_SOURCE[0]}")/../../bench/guest/thinpool.py
# An lvm2 thin pool on disk NAME with an XFS origin volume mounted at
# /mnt/origin; snapshots with thin_snapshots.
thin_setup() { python3 "$thinpool" setup "$1" "$2"; } # DISK VG
# VG N: snapshots snap1..snapN mounted at /mnt/snapI
thin_snapshots() { python3 "$thinpool" snapshots "$1" "$2"; }
