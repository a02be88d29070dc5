#!/bin/bash
# The harness itself: bad input is refused with a clear error, and the
# guest command's exit status comes back (so a failing command fails a run).
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
cd "$(dirname "$0")/../.."

# 9 refused, 6 in a guest
plan 15
refused() { # NAME EXPECTED-MESSAGE-PART ARGS...
	local name=$1 msg=$2 out rc=0
	shift 2
	out=$(vm/run "$@" 2>&1) || rc=$?
	if [ $rc = 2 ] && [[ $out == *"$msg"* ]]; then pass "$name"; else fail "$name" "rc=$rc: $out"; fi
}
refused usage-missing-kernel "not found" --kernel /nonexistent -- true
refused usage-unknown-option "unknown option" --frobnicate -- true
refused usage-bad-disk-size "bad --disk" --disk data:lots -- true
refused usage-zero-disk-size "must not be zero" --disk data:0 -- true
refused usage-bad-mem "bad --mem" --mem 2X -- true
refused usage-no-command "no command" --mem 1G
refused usage-duplicate-disk "given twice" --disk a:1M --disk a:1M -- true
refused usage-bad-accel "bad --accel" --accel warp -- true
refused usage-bad-boot-timeout "bad --boot-timeout" --boot-timeout soon -- true

kernel=${PCDEDUP_KERNEL:-build/kernel-patched/arch/x86/boot/bzImage}
# tests/run gives the kernel make test builds: without it nothing is checked.
if [ ! -f "$kernel" ]; then
	fail guest-exit-status-returned "no kernel at $kernel (make kernel)"
	exit 1
fi
rc=0
out=$(vm/run --kernel "$kernel" --mem 256M --timeout 120 -- sh -c 'echo from-guest; exit 3' 2>&1) || rc=$?
expect_eq guest-exit-status-returned 3 "$rc"
if [[ $out == *from-guest* ]]; then pass guest-output-shown; else fail guest-output-shown "$out"; fi
rc=0
vm/run --kernel "$kernel" --mem 256M --timeout 120 -- false >/dev/null 2>&1 || rc=$?
expect_eq guest-failing-command-fails-run 1 "$rc"
rc=0
vm/run --kernel "$kernel" --mem 256M --timeout 20 -- sleep 100 >/dev/null 2>&1 || rc=$?
expect_eq guest-timeout-detected 124 "$rc"
rc=0
# No kernel reaches init one second after QEMU starts.
vm/run --kernel "$kernel" --mem 256M --boot-timeout 1 -- true >/dev/null 2>&1 || rc=$?
expect_eq guest-boot-hang-detected 123 "$rc"
# icount: the guest clock counts instructions, so a busy loop of a fixed
# length reads the same time in two runs (bench/ relies on it). The loop
# reads the clock with bash's EPOCHREALTIME and runs no program: an exec
# from the host's root (9p) would wait for the host, and an idle guest's
# clock follows the host's.
# shellcheck disable=SC2016 # expanded by the guest's shell
busy='t=$EPOCHREALTIME; i=0; while ((i < 20000)); do ((i++)); done; u=$EPOCHREALTIME; echo $(( (${u/./} - ${t/./}) * 1000 ))'
ns=()
for _ in 1 2; do
	ns+=("$(vm/run --kernel "$kernel" --mem 256M --cpus 1 --accel icount --timeout 120 -- bash -c "$busy" 2>/dev/null | tail -n 1)")
done
if [[ ${ns[0]} =~ ^[0-9]+$ ]] && [[ ${ns[1]} =~ ^[0-9]+$ ]] &&
	(( ns[0] > 0 && (ns[0] - ns[1]) * 100 / ns[0] < 2 && (ns[1] - ns[0]) * 100 / ns[0] < 2 )); then
	pass guest-icount-repeatable
else
	fail guest-icount-repeatable "busy loop took ${ns[*]} ns"
fi
