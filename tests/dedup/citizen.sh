#!/bin/bash
# vm: --disk thin:5G --mem 2G --cpus 2
# timeout: 600
# pcdedup as a good citizen: counters only root reads (A), fadvise that
# spares other openers' pages (B), writers not blocked by readers, no poison
# after a write, leases as on any file (C), overlays over overlays (D),
# share domains (E). The helper process is tests/dedup/citizen.py.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

# residency as cachestat(2) and mincore(2) report it (F).
# 44 cases of their own, 6 per verify mode of poison (full, trust).
plan $((44 + 2 * 6))
pcdedup_on
py() { python3 "$(dirname "$0")/citizen.py" "$@"; }
field() { tr ' ' '\n' <<<"$1" | sed -n "s/^$2=//p"; }
w=/tmp/citizen r=/tmp/citizen/ref
mkdir -p $r
# A helper started with "wait:$w/NAME" in the background: await NAME PID
# (until it waits there), finish NAME PID (let it go on, wait for its end).
await() {
	local _
	for _ in $(seq 600); do
		[ ! -e "$w/$1.ready" ] || return 0
		kill -0 "$2" 2>/dev/null || break
		sleep 0.1
	done
	_ktap_diag "helper $1 did not get there"
}
finish() { touch "$w/$1.go"; wait "$2" || echo "exit $?" >>"$w/$1.out"; }
helper() { # NAME FILE STEP...: the helper, output in $w/NAME.out
	local n=$1
	shift
	py "$@" >"$w/$n.out" 2>&1 &
}
between() { [ "$1" -gt "$2" ] && [ "$1" -lt "$3" ]; }
frames() { "$bin/pagecount" "$@" | python3 -c 'import json,sys; print(json.load(sys.stdin)["distinct_frames"])'; }
trap 'echo full >"$sysfs/verify" || true' EXIT
echo 0 >"$sysfs/min_size"
warn0=$(dmesg | grep -cE 'WARNING:|BUG:' || true)

thin_setup thin pcd
o=/mnt/origin
mkdir $o/f $o/d
for n in a1 b1 b2 b3 c1 pfull ptrust l1 x1 cs; do mkfile $r/$n $((1 << 20)); done
mkfile $r/e $((4 << 20))
mkfile $r/o $((1 << 20))
cp $r/a1 $r/b1 $r/b2 $r/b3 $r/c1 $r/pfull $r/ptrust $r/l1 $r/x1 $r/cs $r/e $o/f/
cp $r/o $o/d/o
"$pcdedup" tag -q --min-size 0 $o/f $o/d
thin_snapshots pcd 7
# E: domains set once the snapshots are mounted, before any open, by the
# tool: the name and its MAC, made with this boot's secret for the
# filesystem's UUID (the snapshots keep the origin's). A key's MAC binds
# its filesystem's domain: the files of a snapshot moved to another domain
# are tagged again there.
domains_set() {
	"$pcdedup" domain set /mnt/snap4 tenantA && "$pcdedup" domain set /mnt/snap5/f tenantA &&
		"$pcdedup" domain set /mnt/snap6 tenantB && "$pcdedup" domain set /mnt/snap7 none &&
		"$pcdedup" tag -q --min-size 0 /mnt/snap4/f/e /mnt/snap5/f/e /mnt/snap6/f/e
}
check domains-set domains_set
domain_status() { "$pcdedup" domain show --json "$1" | python3 -c 'import json, sys; d = json.load(sys.stdin); print(d["domain"], d["status"])'; }
expect_eq domain-show-authenticated "tenantA authenticated" "$(domain_status /mnt/snap5)"

# --- A: the counters are root's alone ---------------------------------
stats=(events shares members openers pages_shared pages_saved verify_failures)
bad=""
for s in "${stats[@]}"; do
	m=$(stat -c %a "$sysfs/$s" 2>/dev/null || echo missing)
	[ "$m" = 400 ] || bad+=" $s:$m"
done
if [ -z "$bad" ]; then pass counters-mode-0400; else fail counters-mode-0400 "$bad"; fi
unreadable() { # NAME CMD...: reading each counter file through CMD fails with EACCES
	local name=$1 s out bad=""
	shift
	# setpriv and user namespaces are in our config and deps: a reader
	# that cannot run is a failure, not a reason to skip.
	if ! out=$("$@" true 2>&1); then fail "$name" "cannot run: $out"; return; fi
	for s in "${stats[@]}"; do
		if out=$("$@" cat "$sysfs/$s" 2>&1 >/dev/null); then
			bad+=" $s:readable"
		elif ! grep -q 'Permission denied' <<<"$out"; then
			bad+=" $s:${out##*: }"
		fi
	done
	if [ -z "$bad" ]; then pass "$name"; else fail "$name" "$bad"; fi
}
nobody=(setpriv --reuid 65534 --regid 65534 --clear-groups)
unreadable counters-eacces-nobody "${nobody[@]}"
# A container's root in a user namespace that maps it to an unprivileged
# host uid. (One whose root is the host's uid 0, without a user namespace
# or with 0 mapped to 0, is the host administrator: the admin guide's
# threat model says so, and DAC lets it read them as any 0400 root file.)
unreadable counters-eacces-userns-root "${nobody[@]}" unshare -Ur
check proc-vmstat-no-pcdedup-lines sh -c '! grep ^pcdedup_ /proc/vmstat'
if [ -e "$sysfs/events" ]; then
	check events-lines-format sh -c "! grep -vE '^pcdedup_[a-z_]+ [0-9]+\$' $sysfs/events"
	s0=$(vmstat open_shared)
	cat /mnt/snap1/f/a1 >/dev/null
	expect_eq events-count-opens 1 $(($(vmstat open_shared) - s0))
else
	fail events-lines-format "no $sysfs/events"
	fail events-count-opens "no $sysfs/events"
fi

# --- E: shares are per (domain, key) ------------------------------------
e=f/e
drop_caches
sh0=$(knob shares) s0=$(vmstat open_shared) c0=$(cached_kb)
exec 3</mnt/snap4/$e 4</mnt/snap5/$e 5</mnt/snap6/$e
cat <&3 >/dev/null
cat <&4 >/dev/null
cat <&5 >/dev/null
grow=$(($(cached_kb) - c0))
_ktap_diag "domains: 3 opens, open_shared +$(($(vmstat open_shared) - s0)), cached +$grow KiB (one copy 4096)"
expect_eq domain-two-shares 2 $(($(knob shares) - sh0))
expect_eq domain-members-2-and-1 "1 2" "$(share_field /mnt/snap4/$e members | sort -n | xargs)"
check domain-cache-two-copies between "$grow" 6144 10240
exec 3<&- 4<&- 5<&-
expect_eq domain-same-one-copy 1024 "$(frames /mnt/snap4/$e /mnt/snap5/$e)"
expect_eq domain-apart-two-copies 2048 "$(frames /mnt/snap4/$e /mnt/snap6/$e)"
s0=$(vmstat open_shared)
cat /mnt/snap7/$e >/dev/null
expect_eq domain-none-never-shares 0 $(($(vmstat open_shared) - s0))
# A domain change applies to the opens that follow: the keys made in the
# old domain are not honoured in the new one until tagged there again.
"$pcdedup" domain set /mnt/snap6 tenantA
u0=$(vmstat key_unauthenticated) s0=$(vmstat open_shared)
cat /mnt/snap6/$e >/dev/null
expect_eq domain-change-old-key-not-honoured "0 1" \
	"$(($(vmstat open_shared) - s0)) $(($(vmstat key_unauthenticated) - u0))"
"$pcdedup" tag -q --min-size 0 /mnt/snap6/$e
expect_eq domain-change-applies 1024 "$(frames /mnt/snap4/$e /mnt/snap6/$e)"
# A domain attribute the tool did not make (a name and a MAC of zeros, as
# an image could carry one) keeps the filesystem's files private.
setfattr -n trusted.pcdedup.domain -v "0x$(printf tenantA | od -An -tx1 | tr -d ' \n')$(printf '%064d' 0)" /mnt/snap7
expect_eq domain-show-unauthenticated "tenantA unauthenticated" "$(domain_status /mnt/snap7 || true)"
s0=$(vmstat open_shared) rd0=$(vmstat open_refused_domain)
cat /mnt/snap7/$e >/dev/null
expect_eq domain-unauthenticated-never-shares 0 $(($(vmstat open_shared) - s0))
expect_eq domain-unauthenticated-refused-counted 1 $(($(vmstat open_refused_domain) - rd0))

# --- B: DONTNEED through a share spares the other openers' pages --------
# dontneed NAME FILE STEP...: run the helper, which opens FILE through a
# share and ends with DONTNEED; prints "BEFORE SHARED-OPENS EXIT AFTER":
# the share's cached pages before and after, the helper's shared opens
# and exit status (a DONTNEED that did not run, or not through the share,
# proves nothing).
dontneed() {
	local n=$1 f=$2 before s0 rc=0
	shift 2
	before=$(share_field "$f" cached_pages)
	s0=$(vmstat open_shared)
	py "$f" "$@" >"$w/$n.dn" 2>&1 || rc=$?
	[ "$rc" = 0 ] || _ktap_diag "$n: $(cat "$w/$n.dn")" >&2
	echo "$before $(($(vmstat open_shared) - s0)) $rc $(share_field "$f" cached_pages)"
}
drop_caches
helper b1 /mnt/snap1/f/b1 open read wait:$w/b1
pa=$!
await b1 $pa
expect_eq fadvise-spares-other-opener "256 1 0 256" "$(dontneed b1 /mnt/snap2/f/b1 open dontneed)"
finish b1 $pa
helper b3 /mnt/snap1/f/b3 open map touch closefd wait:$w/b3
pa=$!
await b3 $pa
expect_eq fadvise-spares-other-mapping "256 1 0 256" "$(dontneed b3 /mnt/snap2/f/b3 open read dontneed)"
finish b3 $pa
helper b2 /mnt/snap3/f/b2 open read wait:$w/b2a dontneed wait:$w/b2b
pa=$!
await b2a $pa
before=$(share_field /mnt/snap3/f/b2 cached_pages) || before=none
touch $w/b2a.go
await b2b $pa
after=$(share_field /mnt/snap3/f/b2 cached_pages) || after=none
touch $w/b2b.go
rc=0
wait $pa || rc=$?
[ "$rc" = 0 ] || _ktap_diag "b2: $(cat $w/b2.out)"
# Cached before, dropped by the only opener's DONTNEED, which ran.
expect_eq fadvise-single-opener-drops "256 0 0" "$before $after $rc"

# --- F: residency, as cachestat(2) and mincore(2) report it -------------
# Each file read whole, then looked at through a mapping (mincore) and its
# descriptor (cachestat). mincore looks at the mapped file's pages: the
# share's for a tagged file, as the twin's own for the twin. cachestat
# looks at the page cache of the file the descriptor names, which an open
# through a share does not fill: it reports a tagged file as not cached
# (the admin guide documents it).
residency() { # FILE: "mincore=PAGES cachestat=PAGES"
	python3 - "$1" <<'EOF'
import ctypes, mmap, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                      ctypes.c_int, ctypes.c_long]
fd = os.open(sys.argv[1], os.O_RDONLY)
size = os.fstat(fd).st_size
while os.read(fd, 1 << 20):
    pass
addr = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
if addr in (None, ctypes.c_void_p(-1).value):
    sys.exit(f"mmap: errno {ctypes.get_errno()}")
vec = (ctypes.c_ubyte * ((size + 4095) // 4096))()
if libc.mincore(ctypes.c_void_p(addr), ctypes.c_size_t(size), vec) != 0:
    sys.exit(f"mincore: errno {ctypes.get_errno()}")
rng = (ctypes.c_uint64 * 2)(0, 0)  # off 0, len 0: the whole file
cs = (ctypes.c_uint64 * 5)()  # nr_cache first
if libc.syscall(451, fd, rng, cs, 0) != 0:
    sys.exit(f"cachestat: errno {ctypes.get_errno()}")
print(f"mincore={sum(v & 1 for v in vec)} cachestat={cs[0]}")
EOF
}
cp /mnt/snap1/f/cs /mnt/snap1/cs-twin
drop_caches
expect_eq residency-untagged-twin "mincore=256 cachestat=256" "$(residency /mnt/snap1/cs-twin)"
expect_eq residency-tagged "mincore=256 cachestat=0" "$(residency /mnt/snap1/f/cs)"

# --- C: a reader's private mapping does not block the owner's write -----
mkfile $r/c1.new $((1 << 20))
helper c1 /mnt/snap1/f/c1 --old $r/c1 --new $r/c1.new open map touch closefd wait:$w/c1 mapcheck
pa=$!
await c1 $pa
expect_eq write-despite-private-mapping write=0 "$(py /mnt/snap1/f/c1 write:$r/c1.new)"
expect_eq write-drops-key "" "$(key_hex /mnt/snap1/f/c1)"
check write-new-open-reads-new cmp /mnt/snap1/f/c1 $r/c1.new
s0=$(vmstat open_shared)
check write-snap2-reads-old cmp /mnt/snap2/f/c1 $r/c1
check write-snap3-reads-old cmp /mnt/snap3/f/c1 $r/c1
expect_eq write-others-still-share 2 $(($(vmstat open_shared) - s0))
finish c1 $pa
expect_eq write-mapping-keeps-old "map old=256 new=0 err=0 other=0" "$(grep '^map ' $w/c1.out || cat $w/c1.out)"

# A member written while its mapping lives never poisons the share, in
# either verify mode: snap1's mapping (half of it touched) faults the rest
# in after the caches are dropped, then snap2 and snap3 read.
poison() { # MODE
	local m=$1 f=p$1 map pa po cached
	local old=$r/$f new=$r/$f.new h=${f}h o=${f}o
	echo "$m" >"$sysfs/verify"
	mkfile "$new" $((1 << 20))
	drop_caches
	helper "$o" "/mnt/snap2/f/$f" --old "$old" --new "$new" open read "wait:$w/$o" readcheck
	po=$!
	await "$o" $po
	helper "$h" "/mnt/snap1/f/$f" --old "$old" --new "$new" open map touch:128 closefd "wait:$w/$h" mapcheck
	pa=$!
	await "$h" $pa
	expect_eq "poison-$m-write" write=0 "$(py "/mnt/snap1/f/$f" "write:$new")"
	drop_caches
	# The key is gone from snap1's copy: the share is snap2's key's. The
	# 128 pages snap1's mapping touched stay; the rest is dropped.
	cached=$(share_field "/mnt/snap2/f/$f" cached_pages | awk '{n += $1} END {print n + 0}')
	check "poison-$m-unmapped-pages-dropped" sh -c "[ $cached -ge 128 ] && [ $cached -lt 256 ]"
	finish "$h" $pa
	map=$(grep '^map ' "$w/$h.out" || cat "$w/$h.out")
	_ktap_diag "$m: $cached pages left cached after the drop; snap1's mapping: $map"
	if [ "$(field "$map" new)" = 0 ] && [ "$(field "$map" other)" = 0 ]; then
		pass "poison-$m-mapping-old-or-error"
	else
		fail "poison-$m-mapping-old-or-error" "$map"
	fi
	check "poison-$m-snap2-reads-old" cmp "/mnt/snap2/f/$f" "$old"
	check "poison-$m-snap3-reads-old" cmp "/mnt/snap3/f/$f" "$old"
	finish "$o" $po
	expect_eq "poison-$m-older-open-reads-old" "read old=256 new=0 err=0 other=0" "$(grep '^read ' "$w/$o.out" || cat "$w/$o.out")"
}
poison full
poison trust
echo full >"$sysfs/verify"

# The same with no other member open: what the mapping lost cannot be
# filled again from anywhere but the written file, so it reads as errors.
mkfile $r/x1.new $((1 << 20))
helper x1 /mnt/snap1/f/x1 --old $r/x1 --new $r/x1.new open map touch:128 closefd wait:$w/x1 mapcheck
pa=$!
await x1 $pa
expect_eq lone-member-write write=0 "$(py /mnt/snap1/f/x1 write:$r/x1.new)"
drop_caches
finish x1 $pa
map=$(grep '^map ' $w/x1.out || cat $w/x1.out)
_ktap_diag "lone member's mapping after the write and the drop: $map"
if [ "$(field "$map" new)" = 0 ] && [ "$(field "$map" other)" = 0 ] &&
	[ "$(field "$map" old)" -ge 128 ] && [ "$(field "$map" err)" -gt 0 ]; then
	pass lone-member-mapping-old-then-eio
else
	fail lone-member-mapping-old-then-eio "$map"
fi

# A write lease for the only opener, as on an untagged copy.
cp $r/l1 /mnt/snap1/f/l1u
s0=$(vmstat open_shared)
tagged=$(py /mnt/snap1/f/l1 open lease)
expect_eq lease-open-was-shared 1 $(($(vmstat open_shared) - s0))
untagged=$(py /mnt/snap1/f/l1u open lease)
expect_eq lease-untagged lease=0 "$untagged"
expect_eq lease-tagged-as-untagged "$untagged" "$tagged"

# --- D: overlays over tagged lowers, and over overlays ------------------
ovl() { # NAME LOWER: an overlay at /mnt/NAME, its upper on tmpfs
	mkdir -p "/tmp/$1/u" "/tmp/$1/w" "/mnt/$1"
	mount -t overlay overlay -o "lowerdir=$2,upperdir=/tmp/$1/u,workdir=/tmp/$1/w" "/mnt/$1"
}
rp() { readpaths_case "$1" "$2" $r/o; } # NAME FILE: every read path gives $r/o
ovl ovl1 /mnt/snap1/d
s0=$(vmstat open_shared)
rp overlay-readpaths /mnt/ovl1/o
check overlay-shares test $(($(vmstat open_shared) - s0)) -gt 0
ovl ovlm /mnt/snap2/d
ovl ovld /mnt/snap2/d
# An overlay whose lower layer is an overlay over XFS is within
# overlayfs's stacking depth (2): it mounts, as it does over untagged
# files (a key changes nothing at mount). Through it the tagged file reads
# the bytes of its untagged twin, and its opens are private: a share would
# be a third level of stacking (pcdedup_stack_has_room). The same file
# through one overlay (ovld) is shared.
if out=$(ovl ovlt /mnt/ovlm 2>&1); then
	pass nested-overlay-mounts
	s0=$(vmstat open_shared)
	rp nested-overlay-readpaths /mnt/ovlt/o
	n=$(($(vmstat open_shared) - s0))
	exec 7</mnt/ovld/o
	cat <&7 >/dev/null
	expect_eq nested-overlay-private "nested 0, one level 1" "nested $n, one level $(($(vmstat open_shared) - s0 - n))"
	rp two-levels-nested-while-direct-open /mnt/ovlt/o
	exec 8</mnt/ovlt/o
	cat <&8 >/dev/null
	rp two-levels-direct-while-nested-open /mnt/ovld/o
	exec 7<&- 8<&-
	umount /mnt/ovlt
else
	fail nested-overlay-mounts "refused: $out"
	for n in nested-overlay-readpaths nested-overlay-private two-levels-nested-while-direct-open two-levels-direct-while-nested-open; do
		fail $n "the nested overlay did not mount"
	done
fi
umount /mnt/ovlm /mnt/ovld /mnt/ovl1

expect_eq no-kernel-warnings "$warn0" "$(dmesg | grep -cE 'WARNING:|BUG:' || true)"
