#!/bin/bash
# vm: --disk a:320M --mem 1G --cpus 2
# kernels: patched
# timeout: 600
# pcdedup's own memory per member and per open is what the admin guide
# says (Documentation/admin-guide/mm/pcdedup.rst, "Memory": its table of
# bytes per pcdedup_member, pcdedup_open and backing_file, read from the
# tree the kernel was built from). N tagged files of one content, each its
# own inode, are opened by a holder in one memory cgroup, and N untagged
# twins (same content, same XFS, an attribute of the same size) by a
# holder in another; each holder opens its files once (members and opens),
# then once more (opens only), then reads a byte through each second open
# (a tagged open's backing file is opened by its first read, so an open
# that only looks at a file costs no backing file). What the tagged side
# takes beyond the twin
# side, per file, is pcdedup's: in the cgroups' memory.stat ("slab": what
# its caches charge, 8 bytes more per object for the cgroup pointer) and
# in /proc/meminfo's Slab (everything, the uncharged backing files too).
# Each must be at most the guide's figure, and the charged part at least
# the objects' size (charged to the opener's cgroup); once the holders
# are gone and the inodes evicted, the tagged group's charge falls back to
# the twins'. A member made larger (the struct padded) fails the member
# cases, a backing file opened at open time open-in-all; a missing cgroup file or table row fails its case, never reads
# as 0.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

plan 13
doc=$(dirname "$0")/../../build/linux/Documentation/admin-guide/mm/pcdedup.rst
N=3000
cg=/sys/fs/cgroup
A=/mnt/a w=/tmp/memory
# Each object is charged with the pointer to its cgroup; per-CPU stocks
# and flushing leave a few bytes per file unread.
objcg=8 slack=8
# What /proc/meminfo's Slab sees beyond the objects, per file: the unused
# tail of each slab page and the slabs' vectors of cgroup pointers (about
# 20 bytes per member and 12 per open here), and slab pages that other
# objects, made and freed meanwhile, keep or free: the per-member figure
# ranged from 402 to 528 bytes in four runs of one kernel at N = 3000
# with 408-byte members, 191 with 128-byte ones. The charged figures
# above are exact; these catch what no cgroup pays (a backing file per
# read).
gslack=128
# XFS frees the inodes a cache drop left it in the background, every
# xfssyncd_centisecs (30 s by default): megabytes of slab that would go
# in the middle of some later measure. Every second, measure() outwaits.
syncd=/proc/sys/fs/xfs/xfssyncd_centisecs
syncd_was=$(cat "$syncd")
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null
	echo "$syncd_was" >"$syncd"
	umount "$A" 2>/dev/null || true
	rmdir "$cg/mem-tagged" "$cg/mem-twin" 2>/dev/null || true
}
trap cleanup EXIT
die() { fail "$1" "${2:-setup failed}"; exit 1; }

# fig NAME: bytes per NAME in the guide's table; a missing guide or row
# fails the case that reads it.
fig() {
	local v
	v=$(awk -v n="\`\`$1\`\`" '$1 == n && $2 ~ /^[0-9]+$/ {print $2; exit}' "$doc" 2>/dev/null)
	[ -n "$v" ] || { ktap_error "no row \`\`$1\`\` with a number of bytes in $doc"; return 1; }
	echo "$v"
}
# cg_slab GROUP: the bytes of slab memory.stat charges to GROUP.
cg_slab() {
	local v
	v=$(awk '$1 == "slab" {print $2}' "$cg/$1/memory.stat" 2>/dev/null)
	[ -n "$v" ] || { ktap_error "no slab in $cg/$1/memory.stat"; return 1; }
	echo "$v"
}
# sys_slab: Slab in /proc/meminfo, in bytes, the per-CPU counts folded in.
sys_slab() {
	local v
	echo 1 >/proc/sys/vm/stat_refresh 2>/dev/null || true
	v=$(awk '$1 == "Slab:" {printf "%d\n", $2 * 1024}' /proc/meminfo)
	[ -n "$v" ] || { ktap_error "no Slab in /proc/meminfo"; return 1; }
	echo "$v"
}

for t in mkfs.xfs python3; do
	command -v $t >/dev/null || die "$t-present" "no $t (scripts/deps.txt)"
done
pcdedup_on
echo 0 >"$sysfs/min_size"
if m_fig=$(fig pcdedup_member) && o_fig=$(fig pcdedup_open) && b_fig=$(fig backing_file); then
	pass guide-figures
else
	die guide-figures "the admin guide's table of pcdedup's memory"
fi
echo "# the guide: pcdedup_member $m_fig, pcdedup_open $o_fig, backing_file $b_fig bytes"

# --- N tagged files t/1..N and N twins u/1..N of one 4 KiB content; t/0
# and u/0 are held in the root cgroup throughout, so that the share, the
# directories and the first bucket of everything are not the holders'. ---
setup() {
	mkdir -p $A $w && mkfs.xfs -q -f /dev/disk/by-name/a && mount /dev/disk/by-name/a $A &&
		mkdir $A/t $A/u && head -c 4096 /dev/urandom >$w/c &&
		python3 -c 'import shutil, sys
for d in ("t", "u"):
    for i in range(int(sys.argv[2]) + 1):
        shutil.copyfile(sys.argv[3], "%s/%s/%d" % (sys.argv[1], d, i))' $A "$N" $w/c &&
		"$pcdedup" tag -q --min-size 0 $A/t &&
		# The twins carry an attribute as long as the key, so that the
		# filesystem holds as much for each (its inode's attribute fork).
		python3 -c 'import os, sys
for i in range(int(sys.argv[2]) + 1):
    v = os.getxattr("%s/t/%d" % (sys.argv[1], i), "trusted.pcdedup")
    os.setxattr("%s/u/%d" % (sys.argv[1], i), "user.pcdedup", v)' $A "$N" &&
		echo +memory >$cg/cgroup.subtree_control &&
		mkdir -p $cg/mem-tagged $cg/mem-twin
}
if setup && echo 100 >"$syncd"; then pass setup; else die setup; fi
drop_caches

# A holder: python in GROUP that, at each of two SIGUSR1, opens FILES...
# once more and keeps them open, at a third reads a byte of each file
# through its second fd, and each time writes the number of rounds done
# to its fifo (0 once it is ready).
holder_py='import os, resource, signal, sys
fifo, files = sys.argv[1], sys.argv[2:]
resource.setrlimit(resource.RLIMIT_NOFILE, (2 * len(files) + 64,) * 2)
fds = [0] * (2 * len(files))
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
out = open(fifo, "w", buffering=1)
k = 0
for rnd in range(4):
    if rnd:
        signal.sigwait({signal.SIGUSR1})
    if rnd == 3:
        for fd in fds[len(files):]:
            os.pread(fd, 1, 0)
    elif rnd:
        for f in files:
            fds[k] = os.open(f, os.O_RDONLY)
            k += 1
    out.write("%d\n" % rnd)
signal.sigwait({signal.SIGUSR1})'
declare -A hpid hfd
# start_holder NAME GROUP FILES...: holder NAME, in GROUP ("": this one)
start_holder() {
	local name=$1 group=$2 fd
	shift 2
	rm -f "$w/$name.fifo"
	mkfifo "$w/$name.fifo" || return 1
	# shellcheck disable=SC2016
	sh -c '[ -z "$0" ] || echo $$ >"$0/cgroup.procs" && exec "$@"' "$group" \
		python3 -c "$holder_py" "$w/$name.fifo" "$@" &
	pids+=($!)
	hpid[$name]=$!
	# Read-write: the open does not wait for the holder to open it.
	exec {fd}<>"$w/$name.fifo"
	hfd[$name]=$fd
	round "$name" 0
}
# round NAME R: wait for holder NAME to report round R
round() {
	local line=""
	read -r -t 600 line <&"${hfd[$1]}"
	[ "$line" = "$2" ] || { echo "holder $1: '$line', not round $2" >&2; return 1; }
}
# next NAME R: make holder NAME open its files once more (round R)
next() { kill -USR1 "${hpid[$1]}" && round "$1" "$2"; }
files() { local i; for ((i = 1; i <= N; i++)); do echo "$A/$1/$i"; done; }
mapfile -t tfiles < <(files t)
mapfile -t ufiles < <(files u)
if ! { start_holder root "" $A/t/0 $A/u/0 && next root 1 &&
	start_holder t $cg/mem-tagged "${tfiles[@]}" &&
	start_holder u $cg/mem-twin "${ufiles[@]}"; }; then
	die holders "a holder did not start"
fi

# measure: let the memory cgroups' statistics be flushed (every 2 s) and
# the system's slab settle (objects freed after an RCU grace period, slabs
# emptied by them), then read both groups' charged slab and the system's.
measure() {
	local a b i
	sleep 3
	b=$(sys_slab) || return 1
	for i in $(seq 30); do
		a=$b
		sleep 1
		b=$(sys_slab) || return 1
		[ $((a - b)) -gt 16384 ] || [ $((b - a)) -gt 16384 ] || break
	done
	cg_slab mem-tagged && cg_slab mem-twin && sys_slab
}
# Each measure is three numbers: the tagged and the twin group's charged
# slab, the system's slab.
# Round 1: every file opened once, each side in turn. Round 2: opened
# once more: opens, no new members.
if ! { s0=$(measure) && o0=$(vmstat open_shared) &&
	next t 1 && s1=$(measure) && next u 1 && s2=$(measure) &&
	o1=$(vmstat open_shared) && m1=$(knob members) &&
	next t 2 && s3=$(measure) && next u 2 && s4=$(measure) &&
	next t 3 && s5=$(measure) && next u 3 && s6=$(measure) &&
	o2=$(vmstat open_shared); }; then
	die measure "a holder or a reading failed"
fi
# shellcheck disable=SC2034 # used in per()'s arithmetic strings
read -r -d '' t0 _ g0 t1 u1 g1 t2 u2 g2 t3 u3 g3 t4 u4 g4 t5 u5 g5 _ u6 g6 \
	<<<"$s0 $s1 $s2 $s3 $s4 $s5 $s6"

# The tagged opens did go through the share (else nothing is measured).
expect_eq round1-opens-shared "$N" $((o1 - o0))
expect_eq round1-members "$((N + 1))" "$m1"
expect_eq round2-opens-shared "$N" $((o2 - o1))

# Per file, what the tagged side took beyond the twin side.
per() { echo $((($1) / N)); }
cg_open=$(per "(t3 - t2) - (u4 - u3)")
cg_member=$(($(per "(t1 - t0) - (u2 - u1)") - cg_open))
sys_open=$(per "(g3 - g2) - (g4 - g3)")
sys_member=$(($(per "(g1 - g0) - (g2 - g1)") - sys_open))
cg_read=$(per "(t5 - t4) - (u6 - u5)")
sys_read=$(per "(g5 - g4) - (g6 - g5)")
echo "# memory.stat slab, round 1: tagged +$((t1 - t0)), twins +$((u2 - u1)); round 2: tagged +$((t3 - t2)), twins +$((u4 - u3)) bytes"
echo "# Slab, round 1: tagged +$((g1 - g0)), twins +$((g2 - g1)); round 2: tagged +$((g3 - g2)), twins +$((g4 - g3)) bytes"
echo "# Slab, round 3 (reads): tagged +$((g5 - g4)), twins +$((g6 - g5)) bytes"
echo "# per member: $cg_member charged, $sys_member in all; per open: $cg_open charged, $sys_open in all; per first read of an open: $cg_read charged, $sys_read in all (bytes beyond the twin's)"

# in_range NAME GOT LOW HIGH
in_range() {
	if [ "$2" -ge "$3" ] && [ "$2" -le "$4" ]; then
		pass "$1"
	else
		fail "$1" "$2 bytes per file, not within [$3, $4]"
	fi
}
# Charged to the opener's cgroup: the objects, each with its cgroup pointer.
in_range member-charged "$cg_member" $((m_fig - slack)) $((m_fig + objcg + slack))
in_range open-charged "$cg_open" $((o_fig - slack)) $((o_fig + objcg + slack))
# In all: the guide's figures, the member table's bucket pointers (at
# most 3.3 per member, the guide says) with the members, within what slab
# pages partly used at either end leave (gslack): an object that was not
# made, or not kept, fails. An open that has not read takes no backing file.
in_range member-in-all "$sys_member" $((m_fig - gslack)) $((m_fig + 27 + gslack))
in_range open-in-all "$sys_open" $((o_fig - gslack)) $((o_fig + gslack))
# The first read of an open opens its backing file, which no cgroup pays.
in_range read-charged "$cg_read" $((-slack)) "$slack"
in_range read-in-all "$sys_read" $((b_fig - gslack)) $((b_fig + gslack))
# Two first reads of one open, racing: both read the content, and the
# share file one of them opened and dropped leaves nothing behind (the
# openers counted return to what the holders keep open).
first_reads_race() {
	local before after
	before=$(knob openers) || return 1
	cmp "$A/t/1" "$w/c" || return 1
	"$bin/firstreads" "$A/t/1" 2000 2 || return 1
	after=$(knob openers) || return 1
	[ "$after" = "$before" ] || { echo "openers $before before, $after after" >&2; return 1; }
}
check first-reads-race first_reads_race
# Closing everything gives the memory back: the charged slab of the
# tagged group falls back to what the twins' does (members go when their
# inodes are evicted, after an RCU grace period that kfree_rcu() may put
# off by seconds).
close_all() {
	local s t u i
	kill "${hpid[t]}" "${hpid[u]}" && wait "${hpid[t]}" "${hpid[u]}" 2>/dev/null
	drop_caches
	for i in 1 2 3 4 5 6 7 8 9 10; do
		s=$(measure) || return 1
		read -r -d '' t u _ <<<"$s" || true
		echo "# after closing and dropping caches (${i}): tagged $t, twins $u bytes charged"
		[ $((t - u)) -gt $((N * slack)) ] || return 0
	done
	return 1
}
check freed-on-close close_all
