#!/bin/bash
# vm: --mem 512M --append kunit.enable=1
# timeout: 300
# The pcdedup KUnit suite (key parsing, key comparison, boot parameter),
# run at boot; each KTAP result of the suite becomes a result line.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

ktap=$(dmesg | sed -n 's/^\[[^]]*\] //p' | sed -n '/^ *# Subtest: pcdedup$/,/^ *\(not \)\?ok [0-9]* pcdedup$/p')
if [ -z "$ktap" ]; then
	fail kunit-pcdedup-ran "no KTAP output for the pcdedup suite in the kernel log"
	exit 0
fi
cases=0
while read -r status _ name; do
	cases=$((cases + 1))
	if [ "$status" = ok ]; then pass "kunit-$name"; else fail "kunit-$name" "see the kernel log"; fi
done < <(echo "$ktap" | sed -n 's/^ \{4\}\(ok\|not ok\) \([0-9]*\) \([a-z_0-9]*\).*/\1 \2 \3/p' | sed 's/^not ok/not_ok/')
check kunit-pcdedup-cases-found test "$cases" -ge 4
check kunit-pcdedup-suite-ok grep -qE '^ *ok [0-9]+ pcdedup$' <<<"$ktap"
