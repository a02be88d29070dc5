#!/bin/bash
# vm: --disk fz:2G --mem 1G --cpus 2
# timeout: 300
# The differential fuzzer (tests/dedup/bin/fuzz, tests/dedup/README.md): a
# file tagged with the tool and its untagged twin on one XFS take the same
# seeded random operations (reads of every kind, io_uring, AIO, mmap and
# faults, fadvise, splice, sendfile, copy_file_range, reflink, exchange
# ioctls, fallocate, truncate, writes, xattrs, drop_caches, freeze,
# remount) and must give the same results, errors and bytes. One case per
# seed, then the kernel log (no oops, BUG, WARNING, ...); fuzzing for a time
# (below), whose number of seeds is not known up front, one case for all the
# seeds (each seed's outcome a diagnostic line), then the kernel log.
#
# Each seed also picks verify=trust or full, and level-2 keys or not (see
# run_seed); the short run adds four fresh seeds to its fixed ones.
# Environment: PCDEDUP_FUZZ_SECONDS=N fuzzes fresh seeds for N seconds
# instead (make fuzz SECONDS=N), listing the failing ones at the end;
# PCDEDUP_FUZZ_STEPS (steps per seed, default 400, 600 with SECONDS),
# PCDEDUP_FUZZ_SEEDS (the seeds of the short run; make fuzz SEED=N), PCDEDUP_FUZZ_ARGS (more
# fuzz options, e.g. "--maps strict --key data"), PCDEDUP_FUZZ_TOOL (the
# pcdedup tool that tags, by default the repository's; one of an older key
# format, without MACs, fuzzes an older kernel, which has no secret to load:
# sharing is then switched on without one).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

secs=${PCDEDUP_FUZZ_SECONDS:-}
fresh_seed() { od -An -N4 -tu4 /dev/urandom | tr -d ' '; }
# The short run: six fixed seeds and four fresh ones, new at every run.
read -ra seeds <<<"${PCDEDUP_FUZZ_SEEDS:-1 2 3 4 5 6 $(fresh_seed) $(fresh_seed) $(fresh_seed) $(fresh_seed)}"
steps=${PCDEDUP_FUZZ_STEPS:-$([ -n "$secs" ] && echo 600 || echo 400)}
tool=${PCDEDUP_FUZZ_TOOL:-$pcdedup}
read -ra args <<<"${PCDEDUP_FUZZ_ARGS:-}"
logcheck=$(dirname "$0")/../../vm/log-check
limit=$([ -n "$secs" ] && echo 900 || echo 120) # seconds for one seed
if [ -z "$secs" ]; then plan $((${#seeds[@]} + 1)); else plan 2; fi

if [ -n "${PCDEDUP_FUZZ_TOOL:-}" ] && [ -e "$sysfs/enabled" ] && [ ! -e "$sysfs/secret" ]; then
	echo 1 >"$sysfs/enabled"
else
	pcdedup_on
fi
mnt=/mnt/fz
mkdir -p $mnt
mkfs.xfs -q -f "$(realpath /dev/disk/by-name/fz)"
mount /dev/disk/by-name/fz $mnt
kernel_bad=""
# shellcheck disable=SC2317 # run from the EXIT trap
cleanup() { [ -n "$kernel_bad" ] || umount "$mnt" 2>/dev/null || true; }
trap cleanup EXIT

failing=()
# One seed, one case (with a time, one diagnostic line: seed_result). The
# run is watched rather than waited for: after an oops it may never exit (a
# task stuck in the kernel), and then its report is the kernel's and the
# last operations it traced.
seed_result() { # pass|fail|skip SEED [WHY]
	if [ -z "$secs" ]; then
		"$1" "seed-$2" "${@:3}"
	else
		case $1 in
		fail) _ktap_diag "seed-$2 FAILED: ${3:-}" ;;
		skip) _ktap_diag "seed-$2 not run: ${3:-}" ;;
		*) _ktap_diag "seed-$2 ok" ;;
		esac
	fi
}
run_seed() { # SEED
	local out=/tmp/fuzz-out trace=/tmp/fuzz-trace rc="" pid t why k0
	if [ -n "$kernel_bad" ]; then
		# Not run: the kernel-log case below fails the suite.
		seed_result skip "$1" "the kernel already reported a problem"
		return
	fi
	# What the seed fuzzes besides its operations, from the seed alone so
	# that it replays: verify=trust for a third of the seeds, keys at tree
	# level 2 (where the file has one) for half.
	local verify=full level=()
	[ $(($1 % 3)) != 1 ] || verify=trust
	[ $(($1 / 3 % 2)) != 1 ] || level=(--level2)
	echo "# seed $1: $steps steps, verify=$verify${level:+, level 2 keys} (make fuzz SEED=$1 replays it)"
	echo $verify >"$sysfs/verify"
	: >$trace
	k0=$(dmesg | wc -l)
	"$bin/fuzz" --seed "$1" --steps "$steps" --tool "$tool" --mnt $mnt --trace $trace \
		"${level[@]}" "${args[@]}" $mnt >$out 2>&1 &
	pid=$!
	for ((t = 0; ; t++)); do
		if ! kill -0 $pid 2>/dev/null; then
			rc=0
			wait $pid || rc=$?
			break
		fi
		if kernel_bad=$("$logcheck" <(dmesg | tail -n +$((k0 + 1)))); then
			rc="stuck after a kernel problem"
			break
		fi
		if [ $t -ge $((limit * 2)) ]; then
			kill -9 $pid 2>/dev/null || true
			rc="killed after $limit s"
			break
		fi
		sleep 0.5
	done
	if [ "$rc" = 0 ]; then
		sed 's/^/# /' $out
		seed_result pass "$1"
		return
	fi
	failing+=("$1")
	why=$(cat $out)
	[ -n "$kernel_bad" ] || kernel_bad=$("$logcheck" <(dmesg | tail -n +$((k0 + 1))) || true)
	grep -q 'FAILED at step' $out ||
		why+=$'\n'"fuzz: $rc; the last operations it started:"$'\n'"$(tail -n 5 $trace)"
	[ -z "$kernel_bad" ] || why+=$'\n'"kernel: $kernel_bad"
	seed_result fail "$1" "$why"
}

if [ -z "$secs" ]; then
	for s in "${seeds[@]}"; do run_seed "$s"; done
else
	end=$((SECONDS + secs))
	while [ $SECONDS -lt $end ] && [ -z "$kernel_bad" ]; do
		run_seed "$(fresh_seed)"
	done
	if [ ${#failing[@]} = 0 ]; then
		pass "fuzz-for-${secs}s"
	else
		fail "fuzz-for-${secs}s" "${#failing[@]} failing seeds: ${failing[*]}"
	fi
fi

if problem=$("$logcheck" <(dmesg)); then
	fail kernel-log "$problem"
else
	pass kernel-log
fi
# make fuzz: fail when a seed did.
[ -z "$secs" ] || [ ${#failing[@]} = 0 ]
