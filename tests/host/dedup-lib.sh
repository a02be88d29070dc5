#!/bin/bash
# tests/dedup/lib.sh reads the kernel's state by name, through the tool's
# JSON (pcdedup status --json), and what is missing fails the case that
# reads it, never reads as 0: fake suites on a fake sysfs directory, event
# counters and share listing (the tool's --sysfs, --vmstat, --shares), run
# by tests/run. A counter read from a file that lacks it, a renamed one, a
# missing events file, knob, share listing or disk fail their case; what is
# there reads right. Host side: no attribute is set, nothing is mounted.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
plan "$(grep -c '^suite ' "$0")"
cd "$(dirname "$0")/../.."
make -s -C dedup pcdedup
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dedup-lib.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export DEDUP_LIB=$PWD/tests/dedup/lib.sh FAKE=$tmp/fake
# What the libraries write (lib-integrity.sh's helpers) stays in $tmp.
export TMPDIR=$tmp

# fake: a sysfs directory, its events file and a share listing.
fake() {
	rm -rf "$FAKE"
	mkdir -p "$FAKE/sys"
	printf '%s\n' 1 >"$FAKE/sys/enabled"
	printf '%s\n' full >"$FAKE/sys/verify"
	printf '%s\n' 1 >"$FAKE/sys/shares"
	printf '%s\n' 512 >"$FAKE/sys/pages_saved"
	printf '%s\n' pcdedup_open_shared 7 pcdedup_fill_bad 0 | paste -d' ' - - >"$FAKE/sys/events"
	printf '%s\n' "# key size members openers cached_pages" \
		"sha256:$(printf 'ab%.0s' {1..32}) 4096 3 2 1" >"$FAKE/shares"
}

# suite NAME WANT-STATUS WANT-LAST-LINE [WANT-TEXT] [SETUP]: a fake host
# suite from stdin, on a fresh fake (then SETUP run on it), through tests/run.
suite() {
	local d=$tmp/$1 out rc=0 why=""
	fake
	[ -z "${5:-}" ] || (cd "$FAKE" && eval "$5")
	mkdir -p "$d/host"
	{
		# shellcheck disable=SC2016 # the fake suite's own text
		printf '%s\n' '#!/bin/bash' 'set -euo pipefail' '. "$DEDUP_LIB"' \
			'sysfs=$FAKE/sys events=$FAKE/sys/events shares_list=$FAKE/shares'
		cat
	} >"$d/host/$1.sh"
	chmod +x "$d/host/$1.sh"
	out=$(tests/run --suites-dir "$d" --log-dir "$d/logs" 2>&1) || rc=$?
	[ "$rc" = "$2" ] || why+="status $rc, want $2; "
	[ "$(tail -n 1 <<<"$out")" = "$3" ] || why+="last line is not '$3'; "
	[[ $out == *"${4:-}"* ]] || why+="no '$4' in the output; "
	if [ -z "$why" ]; then pass "lib-$1"; else fail "lib-$1" "$why"$'\n'"$out"; fi
}
digest=$(printf 'ab%.0s' {1..32})
export digest

# What is there reads right, by name.
suite reads 0 "6 passed, 0 failed" <<'EOF'
plan 6
expect_eq counter 7 "$(vmstat open_shared)"
expect_eq counter-zero 0 "$(vmstat fill_bad)"
expect_eq knob full "$(knob verify)"
expect_eq share-members 3 "$(_kread share "$digest" members)"
expect_eq no-such-share "" "$(_kread share "$(printf 'cd%.0s' {1..32})" members)"
expect_eq shares-total 1 "$(shares_total cached_pages)"
EOF
# A renamed counter: a delta of it used to read 0 - 0 and pass.
suite counter-renamed 1 "1 passed, 1 failed" "# fill-bad-delta-zero: no counter pcdedup_fill_bad_renamed" <<'EOF'
plan 2
expect_eq fill-bad-delta-zero 0 $(($(vmstat fill_bad_renamed) - 0))
pass after
EOF
# The counter missing from the events file (a kernel that lacks it).
suite counter-missing 1 "0 passed, 1 failed" "no counter pcdedup_fill_bad in" "sed -i /fill_bad/d sys/events" <<'EOF'
plan 1
check fill-bad-bounded test "$(vmstat fill_bad)" -le 0
EOF
# No events file: no /proc/vmstat or other place instead.
suite events-missing 1 "0 passed, 1 failed" "# open-shared-delta: reading counter open_shared: pcdedup status --json exited" "rm sys/events" <<'EOF'
plan 1
expect_eq open-shared-delta 0 "$(($(vmstat open_shared) - 0))"
EOF
suite knob-missing 1 "0 passed, 1 failed" "no readable /sys/kernel/mm/pcdedup/pages_saved" "rm sys/pages_saved" <<'EOF'
plan 1
check pages-saved test "$(knob pages_saved)" -ge 0
EOF
# No share listing (debugfs): a share's field is not "no share".
suite listing-missing 1 "0 passed, 2 failed" "no share listing" "rm shares" <<'EOF'
plan 2
expect_eq no-share-members "" "$(_kread share "$digest" members)"
expect_eq total-zero 0 "$(shares_total cached_pages)"
EOF
suite share-field-unknown 1 "0 passed, 1 failed" "no share field 'cached'" <<'EOF'
plan 1
expect_eq cached 1 "$(_kread share "$digest" cached)"
EOF
# A disk statistic of a disk that is not there (a wrong name or path).
suite disk-missing 1 "0 passed, 1 failed" "disk_stat no-such-disk read_ios" <<'EOF'
plan 1
check reads-bounded test $(($(disk_stat no-such-disk read_ios) - 0)) -lt 640
EOF
# In a suite under set -e, an assignment from a missing counter ends it.
suite assign-missing 1 "0 passed, 1 failed" "suite exited with status 1" <<'EOF'
plan 1
s0=$(vmstat gone)
expect_eq delta 0 $(($(vmstat gone) - s0))
EOF
# A key read from a path that is not there is not "no key" (a wrong path
# made a "the key is gone" case pass); a file without a key reads "".
suite key-hex-missing-file 1 "1 passed, 1 failed" "# copy-up-no-key: key_hex: /no/such/upper/f: cannot read trusted.pcdedup" <<'EOF'
plan 2
check copy-up-no-key test -z "$(key_hex /no/such/upper/f)"
expect_eq no-key "" "$(key_hex "$FAKE/sys/enabled")"
EOF
# A key field of a file without a key, as share_field looks the share up.
suite share-field-no-key 1 "0 passed, 1 failed" "no trusted.pcdedup" <<'EOF'
plan 1
expect_eq members "" "$(share_field "$FAKE/sys/enabled" members)"
EOF
# lib-integrity.sh's readers (integrity.sh): a missing knob or counter is
# not 0 there either.
suite integrity-readers-missing 1 "0 passed, 2 failed" "no readable /sys/kernel/mm/pcdedup/min_size" <<'EOF'
. "${DEDUP_LIB%/lib.sh}/lib-integrity.sh"
sysfs=$FAKE/sys events=$FAKE/sys/events shares_list=$FAKE/shares
plan 2
expect_eq min-size-zero 0 "$(knobc min_size)"
check refills-bounded test "$(vmc fill_bad_renamed)" -le 0
EOF
