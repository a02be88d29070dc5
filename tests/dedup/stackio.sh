#!/bin/bash
# vm: --disk d:1G --mem 1G --cpus 2 --append virtio_blk.poll_queues=1
# kernels: patched
# timeout: 600
# Asynchronous and non-blocking reads of a tagged file, served through a
# stacked file on its share, against its untagged twin (same bytes, same
# XFS): io_uring READ/READV/READ_FIXED inline and with IOSQE_ASYNC,
# RWF_NOWAIT, an IOPOLL ring (buffered and O_DIRECT), Linux AIO, preadv2
# with each read flag (tests/dedup/bin/stackio, whose cases are passed
# through as a subtest). Three runs: after drop_caches, after
# fadvise(DONTNEED), warm. The very first reads are cold io_uring reads of
# the share, the ones that retry with IOCB_WAITQ. A kernel oops fails the
# run (vm/run status 125) and the run's -no-oops case here.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

plan 12
pcdedup_on

# IOPOLL O_DIRECT reads are polled, and so comparable, only on a disk with
# poll queues (virtio_blk.poll_queues above); without, both files refuse.
dev=$(realpath /dev/disk/by-name/d)
check disk-polls test "$(cat "/sys/block/$(basename "$dev")/queue/io_poll")" = 1
mkfs.xfs -q -f "$dev"
mkdir -p /mnt/x
mount "$dev" /mnt/x
trap 'umount /mnt/x 2>/dev/null || true' EXIT
# A pair per run, each its own content (its own share): a run that
# breaks a share leaves the next run's alone. Past 6 boundaries of
# 512 KiB, EOF inside a page.
states=(drop fadvise warm)
for state in "${states[@]}"; do
	mkfile "/mnt/x/tagged-$state" $(((3 << 20) + 5000))
	cp "/mnt/x/tagged-$state" "/mnt/x/twin-$state"
done
"$pcdedup" tag -q --min-size 0 /mnt/x/tagged-*
keys() { # tagged|twin: the states whose file has a key
	local s
	for s in "${states[@]}"; do
		if [ -n "$(key_hex "/mnt/x/$1-$s")" ]; then echo "$s"; fi
	done
}
expect_eq tagged-have-keys "${states[*]}" "$(keys tagged | xargs)"
expect_eq twins-untagged "" "$(keys twin | xargs)"

oops='BUG:|Oops|WARNING:|general protection|Kernel panic'
for state in "${states[@]}"; do
	f=/mnt/x/tagged-$state t=/mnt/x/twin-$state
	s0=$(vmstat open_shared)
	d0=$(dmesg | wc -l)
	rc=0
	out=$(timeout 500 "$bin/stackio" --name "$state" --state "$state" "$f" "$t" 2>/tmp/stackio.err) || rc=$?
	# The program's KTAP document, as this case's subtest (as kunit.sh).
	echo "    ${out//$'\n'/$'\n'    }"
	if [ "$rc" = 0 ]; then
		pass "stackio-$state"
	else
		fail "stackio-$state" "exit $rc: $(tail -n 3 /tmp/stackio.err)"
	fi
	check "stackio-$state-through-share" test "$(vmstat open_shared)" -gt "$s0"
	# What the kernel logged during the run.
	log=$(dmesg | tail -n +$((d0 + 1)))
	if grep -qE "$oops" <<<"$log"; then
		fail "stackio-$state-no-oops" "$(grep -E -A8 "$oops" <<<"$log" | head -n 30)"
	else
		pass "stackio-$state-no-oops"
	fi
done
