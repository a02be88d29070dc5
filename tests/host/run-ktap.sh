#!/bin/bash
# tests/run reads KTAP: fake suites that pass, fail a case, die after part
# of their plan, print no plan, nest KUnit-style subtests, skip and xfail, or
# print the old PASS:/FAIL: lines; tests/run's exit status and closing line.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
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
pass one
check two true
expect_eq three 1 1
EOF
suite fail-one 1 "2 passed, 1 failed" "# two: broken" <<'EOF'
#!/bin/bash
set -euo pipefail
. "$KTAP_LIB"
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
suite nonzero-exit 1 "1 passed, 1 failed" "exited with status 3" <<'EOF'
#!/bin/bash
printf '%s\n' "KTAP version 1" "ok 1 one" "1..1"
exit 3
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
suite skip-xfail 0 "1 passed, 0 failed, 1 skipped, 1 xfail" "not ok 3 gap # XFAIL stock kernel" <<'EOF'
#!/bin/bash
set -euo pipefail
. "$KTAP_LIB"
pass one
skip two "no tool"
xfail gap "stock kernel"
EOF
suite directives 0 "1 passed, 0 failed, 2 skipped, 1 xfail" <<'EOF'
#!/bin/bash
printf '%s\n' "TAP version 13" "1..4" "not ok 1 todo # TODO later" "ok 2 skipped # SKIP not here" \
	"not ok 3 skipped-too # skip not here either" "ok 4 passed # a comment"
EOF
# A suite's own EXIT trap does not lose the plan.
suite own-exit-trap 0 "1 passed, 0 failed" "cleaned-up" <<'EOF'
#!/bin/bash
set -euo pipefail
. "$KTAP_LIB"
trap 'echo "# cleaned-up"' EXIT
pass one
EOF
# Suites not converted yet: the old lines still count.
suite legacy 0 "2 passed, 0 failed, 1 skipped, 1 xfail" <<'EOF'
#!/bin/bash
printf '%s\n' "PASS: one" "PASS: two" "SKIP: three: no tool" "XFAIL: four: stock kernel"
EOF
suite legacy-fail 1 "1 passed, 1 failed" <<'EOF'
#!/bin/bash
printf '%s\n' "PASS: one" "FAIL: two: broken"
EOF
suite durations 0 "2 passed, 0 failed" "slowest cases:"$'\n'"       0.3 s  host-durations: slow" <<'EOF'
#!/bin/bash
set -euo pipefail
. "$KTAP_LIB"
pass fast
sleep 0.3
pass slow
EOF
# More cases than the 10 slowest shown (a pipe closed early must not end the run).
suite many-cases 0 "2000 passed, 0 failed" <<'EOF'
#!/bin/bash
set -euo pipefail
. "$KTAP_LIB"
for i in $(seq 2000); do pass "case-with-a-rather-long-name-to-fill-a-pipe-buffer-$i"; done
EOF
