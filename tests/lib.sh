# shellcheck shell=bash
# Helpers for test suites: KTAP output (see tests/run). Sourcing this file
# prints the version line "KTAP version 1" (as KUnit does); then each case
# prints one result line:
#
#   ok N name                   passed
#   not ok N name               failed; "# " diagnostic lines before it say why
#   ok N name # SKIP why        skipped
#   not ok N name # XFAIL why   an expected failure, a known gap (KTAP's XFAIL
#                               directive, as in kselftest; TAP's TODO is the
#                               same and tests/run accepts it too)
#
# and after it "# duration_ms=N", the time since the previous result (or the
# start). The plan "1..N" comes last, from an EXIT trap, unless the suite
# declared it first with `plan N`. When the suite exits non-zero (set -e), the
# trap adds "not ok N suite exited with status S before its end". A suite may
# set its own EXIT trap as usual: `trap CMD EXIT` is kept and run first.
# Call the helpers from the suite's own shell, not from a pipeline or a
# subshell, so that the numbering holds.
[ -z "${_ktap_n:-}" ] || return 0
_ktap_n=0 _ktap_plan="" _ktap_on_exit="" _ktap_subshell=$BASH_SUBSHELL
_ktap_t=${EPOCHREALTIME//[!0-9]/}
echo "KTAP version 1"

_ktap_result() { # "ok"|"not ok" NAME [DIRECTIVE WHY]
	local now=${EPOCHREALTIME//[!0-9]/} line="$1 $((_ktap_n + 1)) ${2//[$'\n'#]/ }"
	[ -z "${3:-}" ] || line+=" # $3"
	[ -z "${4:-}" ] || line+=" ${4//$'\n'/ }"
	_ktap_n=$((_ktap_n + 1))
	echo "$line"
	echo "# duration_ms=$(((now - _ktap_t) / 1000))"
	_ktap_t=$now
}
_ktap_diag() { printf '# %s\n' "${@//$'\n'/$'\n'# }"; }

pass() { _ktap_result ok "$1"; }
fail() { # NAME [WHY]
	[ -z "${2:-}" ] || _ktap_diag "$1: $2"
	_ktap_result "not ok" "$1"
}
skip() { _ktap_result ok "$1" SKIP "${2:-}"; }
xfail() { _ktap_result "not ok" "$1" XFAIL "${2:-}"; }
plan() { _ktap_plan=$1; echo "1..$1"; }

# check NAME CMD...: ok when CMD succeeds, not ok with its last output lines.
check() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then
		pass "$name"
	else
		fail "$name" "$*"$'\n'"$(tail -n 10 <<<"$out")"
	fi
}

# expect_eq NAME WANT GOT
expect_eq() {
	if [ "$2" = "$3" ]; then pass "$1"; else fail "$1" "want '$2', got '$3'"; fi
}

# The suite's own EXIT trap runs from _ktap_exit; other traps, and traps in
# subshells, go to the builtin.
trap() {
	local s sigs=()
	[ "${1:-}" != -- ] || shift
	case $#:${1:-} in 1:EXIT | 1:0 | 1:SIGEXIT) set -- - "$1" ;; esac
	if [ $# -lt 2 ] || [[ $1 == -[lp] ]] || [ "$BASH_SUBSHELL" != "$_ktap_subshell" ]; then
		# shellcheck disable=SC2064 # the caller's own arguments
		builtin trap "$@"
		return
	fi
	for s in "${@:2}"; do
		case $s in EXIT | 0 | SIGEXIT) _ktap_on_exit=$1 ;; *) sigs+=("$s") ;; esac
	done
	[ ${#sigs[@]} = 0 ] || builtin trap -- "$1" "${sigs[@]}"
}
# shellcheck disable=SC2317 # run from the EXIT trap
_ktap_exit() {
	local rc=$?
	[ -z "$_ktap_on_exit" ] || [ "$_ktap_on_exit" = - ] || eval "$_ktap_on_exit" || true
	[ "$rc" = 0 ] || fail "suite exited with status $rc before its end"
	if [ -z "$_ktap_plan" ]; then
		echo "1..$_ktap_n"
	elif [ "$_ktap_plan" != "$_ktap_n" ]; then
		echo "# planned $_ktap_plan cases, ran $_ktap_n"
	fi
}
builtin trap _ktap_exit EXIT
