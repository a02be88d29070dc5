# shellcheck shell=bash
# Helpers for the pcdedup guest suites.
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

# shellcheck disable=SC2034 # used by the suites
bin=$(dirname "${BASH_SOURCE[0]}")/bin
# shellcheck disable=SC2034
pcdedup=$(dirname "${BASH_SOURCE[0]}")/../../dedup/pcdedup
sysfs=/sys/kernel/mm/pcdedup

kstate_py=$(dirname "${BASH_SOURCE[0]}")/kstate.py
# The event counters: /sys/kernel/mm/pcdedup/events (root only), the one
# place this series counts in; the per-share listing (debugfs).
events=$sysfs/events
shares_list=/sys/kernel/debug/pcdedup/shares
# _kread WHAT ARGS...: one value of the kernel's state, read by name from
# the JSON of `pcdedup status --json` (tests/dedup/kstate.py WHAT ARGS).
# Whatever is missing (the tool's output, a counter, a knob, the share
# listing) fails the case that reads it (ktap_error, with the name of what
# is missing), prints nothing and returns 1: it never reads as 0.
_kread() {
	local json rc=0 v
	local args=(status --json --sysfs "$sysfs" --vmstat "$events" --shares "$shares_list")
	json=$("$pcdedup" "${args[@]}" 2>/dev/null) || rc=$?
	if [ "$rc" != 0 ]; then
		ktap_error "reading $*: pcdedup status --json exited $rc:" \
			"$("$pcdedup" "${args[@]}" 2>&1 >/dev/null | head -c 300)"
		return 1
	fi
	if ! v=$(python3 "$kstate_py" "$@" <<<"$json" 2>&1); then
		ktap_error "$v"
		return 1
	fi
	[ -z "$v" ] || printf '%s\n' "$v"
}
# An event counter, NAME without its "pcdedup_" (open_shared, fill_bad...).
vmstat() { _kread counter "$1"; }
# A file of /sys/kernel/mm/pcdedup (enabled, shares, pages_saved...).
knob() { _kread knob "$1"; }
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
# FILE's key as hex digits (to copy it as it is), empty when FILE has no
# key; a FILE that is not there fails the case that reads it (a wrong path
# is not "no key").
key_hex() {
	local v
	if ! v=$(python3 "$kstate_py" keyhex "$1" 2>&1); then
		ktap_error "key_hex: $v"
		return 1
	fi
	[ -z "$v" ] || echo "$v"
}
# key_field FILE FIELD: a field of FILE's key by name (version, tree_level,
# size, digest, mac, len: tests/dedup/kstate.py); a file without a key, or
# a key without the field, fails the case that reads it.
key_field() {
	local v
	if ! v=$(python3 "$kstate_py" key "$1" "$2" 2>&1); then
		ktap_error "$v"
		return 1
	fi
	echo "$v"
}
# share_field FILE FIELD: FIELD (size, members, openers, cached_pages) of
# the share of FILE's key (pcdedup status --json), one line per share with
# that key (one per domain); nothing when no share has it. A file without
# a key, an unknown field or no share listing fails the case that reads it.
share_field() {
	local d
	d=$(key_field "$1" digest) || return 1
	_kread share "$d" "$2"
}
# shares_total FIELD: the sum of FIELD over every share (0 with none).
shares_total() { _kread total "$1"; }
# The share of FILE's key, as its listing key "sha256:DIGEST" ("" when no
# share has it).
share_key() {
	local d n
	d=$(key_field "$1" digest) || return 1
	n=$(_kread share "$d" size) || return 1
	[ -z "$n" ] || echo "sha256:$d"
}

# disk_stat DISK FIELD: FIELD of the I/O statistics of scratch disk DISK
# (/sys/block/DEV/stat, Documentation/block/stat.rst), by name: read_ios,
# read_merges, read_sectors, read_ticks, write_ios, write_merges,
# write_sectors, write_ticks, in_flight, io_ticks, time_in_queue, ... A
# disk, file or field that is not there fails the case that reads it.
disk_stat() {
	local names=(read_ios read_merges read_sectors read_ticks write_ios write_merges
		write_sectors write_ticks in_flight io_ticks time_in_queue discard_ios
		discard_merges discard_sectors discard_ticks flush_ios flush_ticks)
	local dev i v=()
	if ! dev=$(realpath -e "/dev/disk/by-name/$1" 2>&1) ||
		! read -ra v <"/sys/block/${dev##*/}/stat"; then
		ktap_error "disk_stat $1 $2: no /dev/disk/by-name/$1 or no /sys/block/${dev##*/}/stat"
		return 1
	fi
	for i in "${!names[@]}"; do
		if [ "${names[$i]}" = "$2" ]; then
			if [ -n "${v[$i]:-}" ]; then echo "${v[$i]}"; return 0; fi
			break
		fi
	done
	ktap_error "disk_stat $1: no field $2 in /sys/block/${dev##*/}/stat (${#v[@]} fields)"
	return 1
}

# readpaths_case NAME FILE REFERENCE: case NAME, every read path of FILE
# gives the bytes of REFERENCE (bin/readpaths, tests/dedup/README.md). The
# program's KTAP document is this case's subtest (indented, as kunit.sh
# passes KUnit's): its checks, its skips with their reasons, count and show
# in tests/run's summary.
readpaths_case() {
	local out rc=0
	out=$("$bin/readpaths" --name "$1" "$2" "$3" 2>/tmp/readpaths.err) || rc=$?
	echo "    ${out//$'\n'/$'\n'    }"
	if [ "$rc" = 0 ]; then
		pass "$1"
	else
		fail "$1" "readpaths exited $rc: $(tail -n 3 /tmp/readpaths.err)"
	fi
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
