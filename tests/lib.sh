# shellcheck shell=bash
# Helpers for test suites: one result line per case (see tests/run).

# check NAME CMD...: PASS when CMD succeeds, FAIL with its output otherwise.
check() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then
		echo "PASS: $name"
	else
		echo "FAIL: $name: $* -> $(echo "$out" | tail -n 3 | tr '\n' ' ')"
	fi
}

pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1: ${2:-}"; }
skip() { echo "SKIP: $1: ${2:-}"; }

# expect_eq NAME WANT GOT
expect_eq() {
	if [ "$2" = "$3" ]; then pass "$1"; else fail "$1" "want '$2', got '$3'"; fi
}
