#!/bin/bash
# tests/run reads KTAP: fake suites that pass, fail a case, die after part
# of their plan, print no plan or print it after their first result, nest
# KUnit-style subtests, skip and xfail, or print no KTAP at all; tests/lib.sh
# refuses a case before the plan and fails the case after a helper's
# ktap_error; tests/run refuses a --suite that names nothing, and lists
# every skip with its reason; its exit status and closing line.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
# The cases: one per call of suite, cquiet and run_typo below.
plan "$(grep -cE '^(suite|run_typo|cquiet)( |$)' "$0")"
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d "${TMPDIR:-/tmp}/run-ktap.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export KTAP_LIB=$PWD/tests/lib.sh

# suite NAME WANT-STATUS WANT-LAST-LINE [WANT-TEXT]: run tests/run on one
# fake host suite, read from stdin.
suite() {
	local d=$tmp/$1 out rc=0 why=""
	mkdir -p "$d/host"
	cat >"$d/host/$1.sh"
	chmod +x "$d/host/$1.sh"
	out=$(tests/run --suites-dir "$d" --log-dir "$d/logs" 2>&1) || rc=$?
	[ "$rc" = "$2" ] || why+="status $rc, want $2; "
	[ "$(tail -n 1 <<<"$out")" = "$3" ] || why+="last line is not '$3'; "
	[[ $out == *"${4:-}"* ]] || why+="no '$4' in the output; "
	if [ -z "$why" ]; then pass "run-$1"; else fail "run-$1" "$why"$'\n'"$out"; fi
}

suite pass 0 "3 passed, 0 failed" "-- host-pass: 3 passed, 0 failed in" <<'EOF'
#!/bin/bash
set -euo pipefail
. "$KTAP_LIB"
plan 3
pass one
check two true
expect_eq three 1 1
EOF
suite fail-one 1 "2 passed, 1 failed" "# two: broken" <<'EOF'
#!/bin/bash
set -euo pipefail
. "$KTAP_LIB"
plan 3
pass one
fail two broken
pass three
EOF
# set -e ends the suite after 2 of its 5 cases: lib.sh adds a "not ok".
suite die-midway 1 "2 passed, 1 failed" "3 results for a plan of 5" <<'EOF'
#!/bin/bash
set -euo pipefail
. "$KTAP_LIB"
plan 5
pass one
pass two
false
pass three
EOF
suite short-of-plan 1 "2 passed, 1 failed" "2 results for a plan of 5" <<'EOF'
#!/bin/bash
printf '%s\n' "KTAP version 1" "1..5" "ok 1 one" "ok 2 two"
EOF
suite no-plan 1 "1 passed, 1 failed" "no plan" <<'EOF'
#!/bin/bash
printf '%s\n' "KTAP version 1" "ok 1 one"
EOF
# Nothing at all, or results without a version line: not a KTAP document.
suite silent 1 "0 passed, 1 failed" "no KTAP version line" <<'EOF'
#!/bin/bash
exit 0
EOF
suite no-version 1 "1 passed, 1 failed" "no KTAP version line" <<'EOF'
#!/bin/bash
printf '%s\n' "1..1" "ok 1 one"
EOF
suite nonzero-exit 1 "1 passed, 1 failed" "exited with status 3" <<'EOF'
#!/bin/bash
printf '%s\n' "KTAP version 1" "1..1" "ok 1 one"
exit 3
EOF
# A plan printed last is a count of what ran: every run would match it.
suite plan-last 1 "1 passed, 1 failed" "plan 1..1 printed after 1 results" <<'EOF'
#!/bin/bash
printf '%s\n' "KTAP version 1" "ok 1 one" "1..1"
EOF
suite plan-mid 1 "2 passed, 1 failed" "plan 1..2 printed after 1 results" <<'EOF'
#!/bin/bash
printf '%s\n' "KTAP version 1" "ok 1 one" "1..2" "ok 2 two"
EOF
# lib.sh: a case before the plan fails, and no plan is made up at the end.
suite lib-result-before-plan 1 "0 passed, 1 failed" "no plan declared before the first case" <<'EOF'
#!/bin/bash
set -euo pipefail
. "$KTAP_LIB"
pass one
EOF
suite lib-plan-after-result 1 "1 passed, 1 failed" "plan 1..2 printed after 1 results" <<'EOF'
#!/bin/bash
set -euo pipefail
. "$KTAP_LIB"
pass one
plan 2
pass two
EOF
# A suite that ends early without an error still runs short of its plan.
suite lib-short-of-plan 1 "2 passed, 1 failed" "2 results for a plan of 3" <<'EOF'
#!/bin/bash
set -euo pipefail
. "$KTAP_LIB"
plan 3
pass one
pass two
exit 0
EOF
# A helper that finds its counter missing, in a subshell: the case that
# used it fails with the reason, whatever it compared.
suite lib-ktap-error 1 "1 passed, 1 failed" "# zero-delta: no counter pcdedup_renamed" <<'EOF'
#!/bin/bash
set -euo pipefail
. "$KTAP_LIB"
plan 2
counter() { ktap_error "no counter pcdedup_$1"; echo 0; }
expect_eq zero-delta 0 "$(counter renamed)"
pass after
EOF
suite lib-ktap-error-at-end 1 "1 passed, 1 failed" "# errors after the last case: no file /x" <<'EOF'
#!/bin/bash
set -euo pipefail
. "$KTAP_LIB"
plan 1
pass one
v=$(ktap_error "no file /x")
EOF
suite lib-bad-plan 1 "0 passed, 1 failed" "plan 'some' is not a number" <<'EOF'
#!/bin/bash
set -euo pipefail
. "$KTAP_LIB"
plan some
pass one
EOF
# Two programs, two KTAP documents, each with its own plan.
suite two-documents 0 "3 passed, 0 failed" <<'EOF'
#!/bin/bash
printf '%s\n' "KTAP version 1" "1..1" "ok 1 one" "KTAP version 1" "1..2" "ok 1 two" "ok 2 three"
EOF
suite two-documents-short 1 "2 passed, 1 failed" "1 results for a plan of 2" <<'EOF'
#!/bin/bash
printf '%s\n' "KTAP version 1" "1..2" "ok 1 one" "KTAP version 1" "1..1" "ok 1 two"
EOF
# KUnit's own output as a subtest: its cases count, a parameterized case
# counts its parameters, the parent's result does not count again.
suite nested 0 "6 passed, 0 failed" "        ok 2 param-b" <<'EOF'
#!/bin/bash
set -euo pipefail
. "$KTAP_LIB"
plan 3
pass before
cat <<'K'
    KTAP version 1
    # Subtest: pcdedup
    1..3
    ok 1 key_parse
        KTAP version 1
        # Subtest: key_cmp
        ok 1 param-a
        ok 2 param-b
    # key_cmp: pass:2 fail:0 skip:0 total:2
    ok 2 key_cmp
    ok 3 boot_param
# pcdedup: pass:3 fail:0 skip:0 total:3
K
pass kunit-pcdedup
pass after
EOF
suite nested-fail 1 "2 passed, 1 failed" "    not ok 2 key_cmp" <<'EOF'
#!/bin/bash
printf '%s\n' "KTAP version 1" "1..1" "    KTAP version 1" "    # Subtest: pcdedup" "    1..3" \
	"    ok 1 key_parse" "    not ok 2 key_cmp" "    ok 3 boot_param" "not ok 1 pcdedup"
EOF
suite nested-short 1 "1 passed, 1 failed" "subtest pcdedup: 1 results for a plan of 3" <<'EOF'
#!/bin/bash
printf '%s\n' "KTAP version 1" "1..1" "    KTAP version 1" "    1..3" "    ok 1 key_parse" "ok 1 pcdedup"
EOF
suite nested-plan-last 1 "2 passed, 1 failed" "plan 1..2 printed after 2 results (subtest)" <<'EOF'
#!/bin/bash
printf '%s\n' "KTAP version 1" "1..1" "    KTAP version 1" "    ok 1 a" "    ok 2 b" "    1..2" "ok 1 prog"
EOF
suite skip-xfail 0 "1 passed, 0 failed, 1 skipped, 1 xfail" "not ok 3 gap # XFAIL stock kernel" <<'EOF'
#!/bin/bash
set -euo pipefail
. "$KTAP_LIB"
plan 3
pass one
skip two "no tool"
xfail gap "stock kernel"
EOF
suite directives 0 "1 passed, 0 failed, 2 skipped, 1 xfail" <<'EOF'
#!/bin/bash
printf '%s\n' "TAP version 13" "1..4" "not ok 1 todo # TODO later" "ok 2 skipped # SKIP not here" \
	"not ok 3 skipped-too # skip not here either" "ok 4 passed # a comment"
EOF
# Every skip is listed at the end with its reason, subtests' too.
suite skips-listed 0 "1 passed, 0 failed, 2 skipped" "skipped cases:
  host-skips-listed: ok 2 two # SKIP no tool here
  host-skips-listed: subtest: ok 1 inner # SKIP no device" <<'EOF'
#!/bin/bash
printf '%s\n' "KTAP version 1" "1..3" "ok 1 one" "ok 2 two # SKIP no tool here" \
	"    KTAP version 1" "    1..1" "    ok 1 inner # SKIP no device" "ok 3 prog"
EOF
# A skip for want of what the project provides (vm/kernel.config,
# scripts/deps.txt) is a failure, in a suite or a program's subtest, as
# the test programs used to print them; a skip of something else is not.
suite skip-provided-python 1 "1 passed, 1 failed" "case json: skipped (python3 not available), but the project provides it" <<'EOF'
#!/bin/bash
printf '%s\n' "KTAP version 1" "1..2" "ok 1 one" "ok 2 json # SKIP python3 not available"
EOF
suite skip-provided-subtest 1 "2 passed, 3 failed" "subtest case rp/io_uring READ: skipped (io_uring_queue_init: Function not implemented)" <<'EOF'
#!/bin/bash
printf '%s\n' "KTAP version 1" "1..1" "    KTAP version 1" "    1..5" "    ok 1 rp/read" \
	"    ok 2 rp/io_uring READ # SKIP io_uring_queue_init: Function not implemented" \
	"    ok 3 rp/O_DIRECT read # SKIP O_DIRECT not supported on this fs" \
	"    ok 4 rp/preadv2 RWF_NOWAIT # SKIP RWF_NOWAIT not supported on this fs" "    ok 5 rp/mmap" "ok 1 rp"
EOF
suite skip-provided-lib 1 "0 passed, 2 failed" "user namespaces" <<'EOF'
#!/bin/bash
set -euo pipefail
. "$KTAP_LIB"
plan 2
skip userns-refused "no user namespaces (unshare -U: Operation not permitted)"
skip key-matches-fsverity "no fsverity tool"
EOF
suite skip-not-provided 0 "1 passed, 0 failed, 1 skipped" "skipped cases:
  host-skip-not-provided: ok 2 copy_file_range # SKIP overlayfs: EXDEV for any lower file" <<'EOF'
#!/bin/bash
printf '%s\n' "KTAP version 1" "1..2" "ok 1 one" "ok 2 copy_file_range # SKIP overlayfs: EXDEV for any lower file"
EOF
# A skip after a helper's error is a failure.
suite lib-skip-after-error 1 "0 passed, 1 failed" "# maybe: no counter pcdedup_x" <<'EOF'
#!/bin/bash
set -euo pipefail
. "$KTAP_LIB"
plan 1
x=$(ktap_error "no counter pcdedup_x") || true
skip maybe "not here"
EOF
# A suite's own EXIT trap does not lose the plan.
suite own-exit-trap 0 "1 passed, 0 failed" "cleaned-up" <<'EOF'
#!/bin/bash
set -euo pipefail
. "$KTAP_LIB"
plan 1
trap 'echo "# cleaned-up"' EXIT
pass one
EOF
# The old PASS:/FAIL: lines are not KTAP: a suite of them fails.
suite legacy 1 "0 passed, 1 failed" "no KTAP version line" <<'EOF'
#!/bin/bash
printf '%s\n' "PASS: one" "PASS: two"
EOF
suite durations 0 "2 passed, 0 failed" "slowest cases:"$'\n'"       0.3 s  host-durations: slow" <<'EOF'
#!/bin/bash
set -euo pipefail
. "$KTAP_LIB"
plan 2
pass fast
sleep 0.3
pass slow
EOF
# More cases than the 10 slowest shown (a pipe closed early must not end the run).
suite many-cases 0 "2000 passed, 0 failed" <<'EOF'
#!/bin/bash
set -euo pipefail
. "$KTAP_LIB"
plan 2000
for i in $(seq 2000); do pass "case-with-a-rather-long-name-to-fill-a-pipe-buffer-$i"; done
EOF

# The C test programs' harness (dedup/tests/harness.c): its plan first; a
# case before it fails, and so does a program that declares none.
cc -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Idedup/tests -o "$tmp/cplan" \
	-x c - dedup/tests/harness.c <<'EOF'
#include "harness.h"
#include <string.h>
int main(int argc, char **argv)
{
	const char *when = argc > 1 ? argv[1] : "never";

	if (!strcmp(when, "quiet")) {
		/* Only the failed and the skipped cases are printed. */
		harness_quiet();
		harness_plan(3);
		pass("one");
		skip("two", "no such device here");
		pass("three");
		return harness_exit();
	}
	if (!strcmp(when, "first"))
		harness_plan(2);
	pass("one");
	if (!strcmp(when, "late"))
		harness_plan(2);
	pass("two");
	return harness_exit();
}
EOF
export CPLAN=$tmp/cplan
suite c-plan-first 0 "2 passed, 0 failed" <<'EOF'
#!/bin/bash
exec "$CPLAN" first
EOF
suite c-plan-late 1 "1 passed, 1 failed" "plan 1..2 printed after 1 results" <<'EOF'
#!/bin/bash
exec "$CPLAN" late
EOF
suite c-no-plan 1 "0 passed, 2 failed" "no plan (1..N) printed" <<'EOF'
#!/bin/bash
exec "$CPLAN" never
EOF
# --quiet (readpaths, stackio) leaves out passed cases, never a skip.
cquiet() {
	local out
	out=$("$CPLAN" quiet 2>&1)
	if [[ $out == *"ok 2 two # SKIP no such device here"* ]] && [[ $out != *"ok 1 one"* ]]; then
		pass c-quiet-shows-skips
	else
		fail c-quiet-shows-skips "$out"
	fi
}
cquiet

# --suite NAME that names no suite: an error (status 2), not a run of
# nothing that passes; a suite's own name still runs it.
run_typo() { # NAME: tests/run --suite NAME on a tree with one host suite
	local d=$tmp/typo out rc=0 why=""
	mkdir -p "$d/host"
	# shellcheck disable=SC2016 # the fake suite's own text
	printf '%s\n' '#!/bin/bash' '. "$KTAP_LIB"' 'plan 1' 'pass one' >"$d/host/real.sh"
	chmod +x "$d/host/real.sh"
	out=$(tests/run --suites-dir "$d" --log-dir "$d/logs" --suite "$1" 2>&1) || rc=$?
	case $1 in
	host-real) [ "$rc" = 0 ] && [ "$(tail -n 1 <<<"$out")" = "1 passed, 0 failed" ] || why="status $rc" ;;
	*) [ "$rc" = 2 ] && [[ $out == *"no suite named $1"* ]] && [[ $out != *"passed"* ]] || why="status $rc, want 2 and 'no suite named $1'" ;;
	esac
	if [ -z "$why" ]; then pass "run-suite-$1"; else fail "run-suite-$1" "$why"$'\n'"$out"; fi
}
run_typo typo
run_typo host-real
run_typo real
