#!/bin/bash
# vm: --disk thin:4G --mem 1G
# timeout: 600
# A uprobe on a tagged file counts what it counts on an untagged one: a
# probe on snap1's copy of a shared library fires for the processes that
# mapped snap1's copy, whether registered before or after they mapped it,
# and never for those that mapped snap2's or snap3's, though all of them
# map one share. Each scenario runs on an untagged copy too ("untagged-",
# the reference) and on the tagged one ("tagged-"), and the counts must
# match. A third probe goes through /proc/PID/map_files, the one way a
# mapping's file can be reached by path: if that reached the share, a
# probe there would count every snapshot's callers.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

# setup 2, untagged 4, tagged 9
plan 15
pcdedup_on
echo 0 >"$sysfs/min_size"
tr=/sys/kernel/tracing
[ -e $tr/uprobe_events ] || mount -t tracefs nodev $tr
k=7 m=5 # calls through snap1's copy; through snap2's and snap3's, each

# pcd_target's file offset: its address less its PT_LOAD segment's
# address, plus the segment's file offset.
lib=$bin/libuprobe_target.so
v=$((16#$(nm -D --defined-only "$lib" | awk '$3 == "pcd_target" {print $1}')))
off=
while read -r t o a _ n _; do
	if [ "$t" = LOAD ] && ((v >= a && v < a + n)); then off=$(printf '0x%x' $((v - a + o))); fi
done < <(readelf -lW "$lib")
check target-offset-found test -n "$off"

thin_setup thin upr
mkdir /mnt/origin/tagged /mnt/origin/untagged
cp "$lib" /mnt/origin/tagged/lib.so
cp "$lib" /mnt/origin/untagged/lib.so
"$pcdedup" tag -q --min-size 0 /mnt/origin/tagged
check tagged-copy-has-key test -n "$(key_hex /mnt/origin/tagged/lib.so)"
thin_snapshots upr 3
drop_caches

# probe NAME PATH: uprobes/NAME at pcd_target in PATH, enabled.
probe() {
	echo "p:uprobes/$1 $2:$off" >>$tr/uprobe_events
	echo 1 >"$tr/events/uprobes/$1/enable"
}
hits() { awk -v e="$1" '$2 == e {print $3}' $tr/uprobe_profile; }
unprobe() {
	echo 0 >"$tr/events/uprobes/$1/enable" || true
	echo "-:uprobes/$1" >>$tr/uprobe_events || true
} 2>/dev/null
bad=() # callers that failed
call() { # LIB N
	local out
	out=$("$bin/uprobe_call" "$@" 2>&1) || bad+=("$* ($out)")
}
# start LIB N: a caller that maps LIB, then waits; sets pid and addr (of
# pcd_target).
start() {
	local f _
	f=$(mktemp)
	"$bin/uprobe_call" -w "$@" >"$f" &
	for _ in $(seq 600); do grep -q '^ready' "$f" && break; sleep 0.1; done
	read -r _ pid addr <"$f"
	rm -f "$f"
}
go() { kill -USR1 "$1"; wait "$1" || bad+=("waiting caller $1 exited $?"); }
# The map_files name of PID's mapping that holds address ADDR.
map_file() {
	local r
	while read -r r _; do
		if (($2 >= 0x${r%-*} && $2 < 0x${r#*-})); then
			printf '/proc/%s/map_files/%x-%x\n' "$1" $((0x${r%-*})) $((0x${r#*-}))
		fi
	done <"/proc/$1/maps"
}

declare -A r # KIND-WHAT: counts and notes of each scenario
scenario() { # KIND: the copies in /mnt/snapI/KIND/lib.so
	local d=$1 s0 p1 p2 mf
	s0=$(vmstat open_shared)
	# Probe first, then K calls through snap1's copy, M through the others.
	probe "${d}_before" "/mnt/snap1/$d/lib.so"
	call "/mnt/snap1/$d/lib.so" $k
	call "/mnt/snap2/$d/lib.so" $m
	call "/mnt/snap3/$d/lib.so" $m
	r[$d-before]=$(hits "${d}_before")
	unprobe "${d}_before"
	# (a) Callers of snap1's and snap2's copies map them, then the probe.
	start "/mnt/snap1/$d/lib.so" $k
	p1=$pid
	start "/mnt/snap2/$d/lib.so" $m
	p2=$pid
	probe "${d}_after" "/mnt/snap1/$d/lib.so"
	go "$p1"
	go "$p2"
	r[$d-after]=$(hits "${d}_after")
	unprobe "${d}_after"
	# (c) A probe on the file of snap1's caller's mapping, besides the
	# member's own probe.
	start "/mnt/snap1/$d/lib.so" $k
	p1=$pid
	mf=$(map_file "$p1" "$addr")
	start "/mnt/snap2/$d/lib.so" $m
	p2=$pid
	r[$d-resolves]="$mf -> $(stat -L -c %d:%i "$mf" 2>&1 || true), member $(stat -c %d:%i "/mnt/snap1/$d/lib.so")"
	r[$d-same]=$([ "$(stat -L -c %d:%i "$mf" 2>&1)" = "$(stat -c %d:%i "/mnt/snap1/$d/lib.so")" ] && echo 1 || echo 0)
	probe "${d}_member" "/mnt/snap1/$d/lib.so"
	r[$d-via-error]=$(probe "${d}_via" "$mf" 2>&1 && echo ok) || true
	go "$p1"
	go "$p2"
	call "/mnt/snap3/$d/lib.so" $m
	r[$d-bytes]=$(cmp "/mnt/snap2/$d/lib.so" "$lib" 2>&1 && echo same) || true
	r[$d-member]=$(hits "${d}_member")
	r[$d-via]=$(hits "${d}_via")
	unprobe "${d}_member"
	unprobe "${d}_via"
	r[$d-shared]=$(($(vmstat open_shared) - s0))
	_ktap_diag "$d: hits before-map ${r[$d-before]}, after-map ${r[$d-after]}," \
		"member ${r[$d-member]} and map_files ${r[$d-via]:-none} (registering: ${r[$d-via-error]})," \
		"open_shared +${r[$d-shared]}, map_files: ${r[$d-resolves]}"
}

scenario untagged
expect_eq untagged-opens-private 0 "${r[untagged-shared]}"
expect_eq untagged-probe-before-map-counts-own-copy $k "${r[untagged-before]}"
expect_eq untagged-probe-after-map-counts-own-copy $k "${r[untagged-after]}"
# map_files names the member's own inode; a probe registered through it
# counts the member's callers: "registered, same inode, K hits".
expect_eq untagged-probe-via-map-files-counts-own-copy "ok 1 $k" "${r[untagged-via-error]} ${r[untagged-same]} ${r[untagged-via]}"

scenario tagged
# 8 callers: each dlopen() opens its copy once.
check tagged-opens-shared test "${r[tagged-shared]}" -ge 8
expect_eq tagged-probe-before-map-counts-own-copy $k "${r[tagged-before]}"
expect_eq tagged-probe-after-map-counts-own-copy $k "${r[tagged-after]}"
expect_eq tagged-probe-before-map-same-as-untagged "${r[untagged-before]}" "${r[tagged-before]}"
expect_eq tagged-probe-after-map-same-as-untagged "${r[untagged-after]}" "${r[tagged-after]}"
expect_eq tagged-member-probe-beside-map-files-probe $k "${r[tagged-member]}"
# (c) map_files leads to the member, as on the untagged copy: a probe
# registers there and counts the member's callers, neither the share's
# (every snapshot's) nor none. Anything else (not registrable, another
# inode, other counts) is the asymmetry this case exists to catch.
expect_eq tagged-probe-via-map-files-same-as-untagged "${r[untagged-via-error]} ${r[untagged-same]} ${r[untagged-via]}" \
	"${r[tagged-via-error]} ${r[tagged-same]} ${r[tagged-via]}"
expect_eq tagged-share-bytes-unchanged-under-probe same "${r[tagged-bytes]}"
expect_eq callers-all-returned-right "" "${bad[*]}"
