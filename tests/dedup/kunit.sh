#!/bin/bash
# vm: --mem 512M --append kunit.enable=1
# timeout: 300
# The pcdedup KUnit suite (key parsing, key comparison, boot parameter),
# run at boot: its KTAP output in the kernel log is passed through as a
# subtest (indented, as KUnit prints it), whose result is case kunit-pcdedup.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

plan 2 # kunit-pcdedup (the suite's own cases are its subtest) and cases-found
ktap=$(dmesg | sed -n 's/^\[[^]]*\] //p' | sed -n '/^ *# Subtest: pcdedup$/,/^ *\(not \)\?ok [0-9]* pcdedup$/p')
if [ -z "$ktap" ]; then
	fail kunit-pcdedup "no KTAP output for the pcdedup suite in the kernel log"
	exit 0
fi
# The suite's lines but its own result, which becomes ours.
echo "    KTAP version 1"
sed '$d' <<<"$ktap"
if grep -qE '^ *ok [0-9]+ pcdedup$' <<<"$ktap"; then
	pass kunit-pcdedup
else
	fail kunit-pcdedup "$(tail -n 1 <<<"$ktap")"
fi
check kunit-pcdedup-cases-found test "$(grep -cE '^ {4}(not )?ok [0-9]+ ' <<<"$ktap")" -ge 4
