# shellcheck shell=bash
# Helpers for test suites: KTAP output (see tests/run). Sourcing this file
# prints the version line "KTAP version 1" (as KUnit does); the suite then
# declares its plan, `plan N` (KTAP "1..N"), before its first case, and each
# case prints one result line:
#
#   ok N name                   passed
#   not ok N name               failed; "# " diagnostic lines before it say why
#   ok N name # SKIP why        skipped
#   not ok N name # XFAIL why   an expected failure, a known gap (KTAP's XFAIL
#                               directive, as in kselftest; TAP's TODO is the
#                               same and tests/run accepts it too)
#
# and after it "# duration_ms=N", the time since the previous result (or the
# start). The plan is the number of cases the suite means to run, computed
# before any runs (from the arrays it loops over, when it loops): a case
# reported before the plan fails ("no plan declared before the first case"),
# and no plan is made up at the end, so a suite that stops early or skips
# cases by mistake runs fewer cases than its plan and fails in tests/run.
# When the suite exits non-zero (set -e), the EXIT trap adds "not ok N suite
# exited with status S before its end". A suite may set its own EXIT trap
# as usual: `trap CMD EXIT` is kept and run first.
#
# A helper that finds what it reads missing (a counter, a file) calls
# `ktap_error WHAT`, from any subshell: the next result of the suite is then
# "not ok", with WHAT as its diagnostic, whatever the case would have said
# (a missing counter never reads as 0). Errors left when the suite ends fail
# one more case.
# Call the helpers from the suite's own shell, not from a pipeline or a
# subshell, so that the numbering holds.
[ -z "${_ktap_n:-}" ] || return 0
_ktap_n=0 _ktap_plan="" _ktap_on_exit="" _ktap_subshell=$BASH_SUBSHELL
_ktap_t=${EPOCHREALTIME//[!0-9]/}
# Where ktap_error leaves what helpers found missing, for the next result.
_ktap_errs=$(mktemp "${TMPDIR:-/tmp}/ktap-errors.XXXXXX")
echo "KTAP version 1"

_ktap_diag() { printf '# %s\n' "${@//$'\n'/$'\n'# }"; }
_ktap_result() { # "ok"|"not ok" NAME [DIRECTIVE WHY]
	local now=${EPOCHREALTIME//[!0-9]/} st=$1 name=${2//[$'\n'#]/ } dir=${3:-} why=${4:-} e
	# A case before the plan, or after a helper's error, fails: it cannot
	# pass (nor be skipped, nor be a known gap).
	if [ -z "$_ktap_plan" ]; then
		_ktap_diag "$name: no plan declared before the first case (call plan N before any case)"
		st="not ok" dir="" why=""
	fi
	if [ -s "$_ktap_errs" ]; then
		while IFS= read -r e; do _ktap_diag "$name: $e"; done <"$_ktap_errs"
		: >"$_ktap_errs"
		st="not ok" dir="" why=""
	fi
	local line="$st $((_ktap_n + 1)) $name"
	[ -z "$dir" ] || line+=" # $dir"
	[ -z "$why" ] || line+=" ${why//$'\n'/ }"
	_ktap_n=$((_ktap_n + 1))
	echo "$line"
	echo "# duration_ms=$(((now - _ktap_t) / 1000))"
	_ktap_t=$now
}

# ktap_error WHAT: something a case reads is missing or unreadable (a
# counter, a file): the suite's next result fails with WHAT. Callable from
# a subshell ($(...)), where a helper's exit status is often lost.
ktap_error() {
	printf '%s\n' "$*" >>"$_ktap_errs"
	printf 'ktap_error: %s\n' "$*" >&2
}

pass() { _ktap_result ok "$1"; }
fail() { # NAME [WHY]
	[ -z "${2:-}" ] || _ktap_diag "$1: $2"
	_ktap_result "not ok" "$1"
}
skip() { _ktap_result ok "$1" SKIP "${2:-}"; }
xfail() { _ktap_result "not ok" "$1" XFAIL "${2:-}"; }
# plan N: the number of cases this suite runs, before the first of them.
plan() {
	if [ -n "$_ktap_plan" ]; then
		_ktap_diag "plan $1: a plan of $_ktap_plan was declared already"
		ktap_error "plan declared twice"
		return
	fi
	if ! [[ ${1:-} =~ ^[0-9]+$ ]]; then
		ktap_error "plan '${1:-}' is not a number of cases"
		return
	fi
	# Late: tests/run fails a plan printed after a result.
	[ "$_ktap_n" = 0 ] || _ktap_diag "plan $1 declared after $_ktap_n cases: declare it before the first"
	_ktap_plan=$1
	echo "1..$1"
}

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
	[ ! -s "$_ktap_errs" ] || fail "errors after the last case"
	rm -f "$_ktap_errs"
	# No plan made up here: tests/run fails a suite without one.
	if [ -z "$_ktap_plan" ]; then
		echo "# no plan declared (plan N before the first case)"
	elif [ "$_ktap_plan" != "$_ktap_n" ]; then
		echo "# planned $_ktap_plan cases, ran $_ktap_n"
	fi
}
builtin trap _ktap_exit EXIT
