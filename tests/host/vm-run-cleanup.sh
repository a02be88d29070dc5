#!/bin/bash
# vm/run stops the guest (QEMU under timeout(1)) and its helpers when it is
# interrupted: Ctrl-C (SIGINT to its process group, as a terminal sends it)
# and SIGTERM (to vm/run alone), and dies of the signal: status 130 / 143.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
cd "$(dirname "$0")/../.."
sigs=(INT TERM)
# Per signal: the guest started, vm/run exits, its status, nothing left.
plan $((${#sigs[@]} * 4))
kernel=${PCDEDUP_KERNEL:-build/kernel-patched/arch/x86/boot/bzImage}
# tests/run gives the kernel make test builds: without it nothing is checked.
if [ ! -f "$kernel" ]; then
	fail vm-run-cleanup-kernel "no kernel at $kernel (make kernel)"
	exit 1
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vm-run-cleanup.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# Our processes: every one whose command line names its --out folder
# (vm/run and its forks, timeout, QEMU, tail).
ours() { pgrep -f -- "$1" || true; }

interrupt() { # SIGNAL STATUS TARGET(group|process)
	local sig=$1 want=$2 out=$tmp/${1,,} pid rc=0 i left
	# Job control: vm/run gets a process group of its own with SIGINT not
	# ignored, as under an interactive shell (env: not ignored either when
	# this suite was started in the background, which ignores it).
	set -m
	env --default-signal=INT vm/run --kernel "$kernel" --mem 256M --timeout 900 --out "$out" -- \
		sh -c 'echo guest-started; sleep 600' </dev/null >"$tmp/$sig.log" 2>&1 &
	pid=$!
	set +m
	for ((i = 0; i < 600; i++)); do
		grep -q guest-started "$out/output" 2>/dev/null && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.5
	done
	if grep -q guest-started "$out/output" 2>/dev/null; then
		pass "sig$sig-guest-started"
	else
		fail "sig$sig-guest-started" "$(tail -n 5 "$tmp/$sig.log")"
	fi
	if [ "$3" = group ]; then kill -s "$sig" -- "-$pid"; else kill -s "$sig" "$pid"; fi
	for ((i = 0; i < 20; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.5
	done
	if kill -0 "$pid" 2>/dev/null; then
		fail "sig$sig-vm-run-exits" "vm/run still runs 10 s after SIG$sig"
		kill -KILL "$pid" 2>/dev/null || true
	else
		pass "sig$sig-vm-run-exits"
	fi
	wait "$pid" || rc=$?
	expect_eq "sig$sig-exit-status" "$want" "$rc"
	for ((i = 0; i < 10; i++)); do
		left=$(ours "$out")
		[ -n "$left" ] || break
		sleep 0.5
	done
	if [ -z "$left" ]; then
		pass "sig$sig-nothing-left"
	else
		fail "sig$sig-nothing-left" "left running: $(ps -o pid=,args= -p "${left//$'\n'/,}" | cut -c1-100)"
		# shellcheck disable=SC2086 # one pid a word
		kill -KILL $left 2>/dev/null || true
	fi
}
for sig in "${sigs[@]}"; do
	case $sig in
	INT) interrupt INT 130 group ;;
	TERM) interrupt TERM 143 process ;;
	esac
done
