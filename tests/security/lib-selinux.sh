# shellcheck shell=bash
# The cases of the SELinux/overlayfs suites (selinux.sh, selinux-off.sh,
# selinux-xfs.sh, selinux-ext4.sh), sourced by them in the guest with the
# repository as the working directory.
#
# A minimal policy is built from the kernel's own scripts/selinux/mdp output
# and tests/security/ovl.te, compiled with checkpolicy, loaded and enforced.
# Files are labelled through security.selinux, test domains are entered
# through /proc/self/attr/exec (tests/security/seh.c does both).  Each case
# asserts the outcome and the AVC records that the kernel logs for it.
#
# The series' checks are turned on by the policy capability
# overlayfs_lower_checks.  Debian's checkpolicy 3.4 does not know its name, so
# the suite sets its bit in the compiled policy (seh polcap).  The kernel runs
# in one of three modes, read back from selinuxfs after the policy load:
#   on     the series is there and the policy declares the capability
#   off    the series is there, the policy does not declare the capability
#   stock  the kernel lacks the series (it does not know the capability)
# A case of the series' new behaviour passes in "on"; on a stock kernel it is
# an expected failure (XFAIL) when the stock behaviour shows, and a FAIL when
# it passes; in "off" the stock behaviour must return (case switch-off-NAME).
#
# The overlays' lower layers are on tmpfs, or on XFS or ext4 (selinux-xfs.sh,
# selinux-ext4.sh): then every lower file is tagged for pcdedup, so that its
# opens through the overlays are served from shares, and every case must
# still hold; case lowers-served-by-shares shows that they were.
. "$(dirname "${BASH_SOURCE[0]}")/../dedup/lib.sh"

here=tests/security
w=/tmp/seltest
seh=$w/seh
ctx_prefix=user_u:base_r
obj_prefix=user_u:object_r
A=$w/a
B=$w/b
C=$w/c
lower_fs=tmpfs
shared0=0
# A tracing instance of the suite's own: pcdedup_open events of the run
seltrace=/sys/kernel/tracing/instances/seltest

die() {
	fail "${1:-setup}" "${2:-}"
	exit 1
}

# The build directory of the running kernel: PCDEDUP_KBUILD when the runner
# gives a directory (not so for a bzImage outside a build tree), else the
# build/kernel-* whose version string matches, else build/kernel-patched
# (only its mdp and its policy capability names are used).
kernel_build() {
	local d
	if [ -d "${PCDEDUP_KBUILD:-}" ]; then
		echo "$PCDEDUP_KBUILD"
		return
	fi
	for d in build/kernel-*/; do
		if grep -qF "\"$(uname -v)\"" "$d/include/generated/utsversion.h" 2>/dev/null; then
			echo "${d%/}"
			return
		fi
	done
	[ -d build/kernel-patched ] && echo build/kernel-patched
}

# The policy capability of the series, and its bit: the index of its name in
# the running kernel's policycap_names.h (nothing on a stock kernel).
polcap=overlayfs_lower_checks
polcap_bit() {
	awk -v name="\"$polcap\"," '
		/selinux_policycap_names\[/ { on = 1; next }
		on && /^};/ { exit }
		on && $1 == name { print n; exit }
		on && /^[ \t]*"/ { n++ }' "$1/security/selinux/include/policycap_names.h"
}

# Which mode the running kernel is in (see above), once the policy is loaded.
kernel_mode() {
	local f=/sys/fs/selinux/policy_capabilities/$polcap
	if [ ! -e "$f" ]; then
		echo stock
	elif [ "$(cat "$f")" = 1 ]; then
		echo on
	else
		echo off
	fi
}

# setup_policy with-cap|without-cap: compile the helpers and mdp against the
# running kernel's tree, build the policy (with or without the capability of
# the series), load it and switch to enforcing.
setup_policy() {
	local kb src classes c cap i bit
	kb=$(kernel_build) || die setup "no build directory for kernel $(uname -v)"
	src=$(readlink -f "$kb/source" 2>/dev/null || true)
	# The link is a host path; a repository under a guest tmpfs (/tmp)
	# reaches the same tree through its own build/.
	[ -f "$src/scripts/selinux/mdp/mdp.c" ] || src=build/$(basename "$(readlink "$kb/source")")
	[ -f "$src/scripts/selinux/mdp/mdp.c" ] || src=$kb
	mkdir -p "$w"
	gcc -std=c11 -O2 -Wall -Wextra -Werror -o "$seh" "$here/seh.c" || die setup "cannot compile seh.c"
	gcc -O2 -I"$src/include/uapi" -I"$src/include" \
		-I"$src/security/selinux/include" -I"$kb/include" \
		-o "$w/mdp" "$src/scripts/selinux/mdp/mdp.c" || die setup "cannot compile mdp"
	(cd "$w" && ./mdp policy.mdp file_contexts) || die setup "mdp failed"

	classes=$(sed -n 's/^class \([a-z0-9_]*\)$/\1/p' "$w/policy.mdp" | sort -u)
	{
		sed '/^user user_u roles/,$d' "$w/policy.mdp"
		cat "$here/ovl.te"
		for c in $classes; do
			echo "allow base_t { test_domain test_file }:$c *;"
			[ "$c" = security ] || echo "allow test_domain { base_t self }:$c *;"
		done
		sed -n '/^user user_u roles/,$p' "$w/policy.mdp"
	} | grep -vx "policycap $polcap;" >"$w/policy.conf"

	# checkpolicy may not know every capability this kernel has: drop those
	for i in 1 2 3 4 5 6 7 8; do
		if checkpolicy -c 33 -o "$w/policy.33" "$w/policy.conf" >"$w/checkpolicy.log" 2>&1; then
			break
		fi
		cap=$(sed -n 's/.*invalid policy capability name \([a-z0-9_]*\).*/\1/p' "$w/checkpolicy.log" | head -n 1)
		[ -n "$cap" ] || die setup "checkpolicy: $(tail -n 3 "$w/checkpolicy.log" | tr '\n' ' ')"
		grep -vx "policycap $cap;" "$w/policy.conf" >"$w/policy.conf.new"
		mv "$w/policy.conf.new" "$w/policy.conf"
		[ "$i" != 8 ] || die setup "checkpolicy: too many unknown capabilities"
	done

	# the capability of the series, which checkpolicy cannot name (see the
	# cover letter), left out above: set its bit in the binary policy
	bit=$(polcap_bit "$src")
	cp "$w/policy.33" "$w/policy-without-cap.33"
	if [ "$1" = with-cap ] && [ -n "$bit" ]; then
		"$seh" polcap "$w/policy.33" "$bit" >/dev/null || die setup "cannot set policy capability $polcap"
	fi

	[ -e /sys/fs/selinux/load ] || die setup "selinuxfs is not mounted"
	cat "$w/policy.33" >/sys/fs/selinux/load || die setup "policy load failed"
	trap 'cleanup' EXIT
	echo 1 >/sys/fs/selinux/enforce
	expect_eq selinux-enforcing 1 "$(cat /sys/fs/selinux/enforce)"
	expect_eq selinux-suite-context "$ctx_prefix:base_t" "$("$seh" context)"
	expect_eq selinux-domain-transition "$ctx_prefix:test_a_t" "$(run_as test_a_t context)"
}

cleanup() {
	echo 0 >/sys/fs/selinux/enforce 2>/dev/null || true
	umount "$A/merged" "$B/merged" "$C/merged" 2>/dev/null || true
	umount "$A/lower" "$B/lower" "$C/lower" 2>/dev/null || true
}

# run_as DOMAIN SEH-OPERATION...: run seh in DOMAIN, print its result line
run_as() {
	local dom=$1
	shift
	"$seh" exec "$ctx_prefix:$dom" "$seh" "$@" || true
}

label() { "$seh" setlabel "$1" "$obj_prefix:$2" >/dev/null; }

setbool() {
	echo "$2" >"/sys/fs/selinux/booleans/$1"
	echo 1 >/sys/fs/selinux/commit_pending_bools
}

# lower_layer NAME DIR: make DIR a lower layer.  On tmpfs, A's and B's are
# directories of /tmp, C's a tmpfs of its own; on xfs or ext4, each is a
# file system of its own on the scratch disk lower-NAME (see the suite's
# "# vm:" line).  ext4 gets ea_inode, so that the 128 MiB files of the
# copy-up race take a tree level 1 key, as on XFS: with ext4's one-block
# values they would take level 2, whose 64 MiB granules are read and hashed
# anew for every readahead window (minutes per file in the guest).
lower_layer() {
	local dev
	mkdir -p "$2" || return
	if [ "$lower_fs" = tmpfs ]; then
		[ "$1" != c ] || mount -t tmpfs -o rw,size=16m seltest-lower "$2"
		return
	fi
	dev=$(realpath "/dev/disk/by-name/lower-$1") || return
	case $lower_fs in
	xfs) mkfs.xfs -q -f "$dev" ;;
	ext4) mkfs.ext4 -q -F -O ea_inode "$dev" ;;
	*) return 1 ;;
	esac >/dev/null && mount -t "$lower_fs" "$dev" "$2"
}

# tag_lower PATH...: on xfs or ext4, give every lower file under PATH its pcdedup
# key, after its content and its label (a write would drop the key, setting
# security.selinux does not)
tag_lower() {
	[ "$lower_fs" = tmpfs ] || "$pcdedup" tag -q --min-size 0 "$@" || die setup "cannot tag $*"
}

# Two overlays, both with the overlay label ovl_t: A mounted by the suite
# (base_t), B by the restricted mounter_t.
setup_overlays() {
	local d
	if [ "$lower_fs" != tmpfs ]; then
		[ -x "$pcdedup" ] || die setup "no $pcdedup (make tool)"
		pcdedup_on
		echo 0 >"$sysfs/min_size" || die setup "cannot set $sysfs/min_size"
		shared0=$(vmstat open_shared)
	fi
	for d in "$A" "$B"; do
		lower_layer "$(basename "$d")" "$d/lower" || die setup "cannot make the lower layer of $d"
		mkdir -p "$d/upper" "$d/work" "$d/merged"
	done
	echo plain >"$A/lower/plain"
	label "$A/lower/plain" lower_t
	"$seh" setxattr "$A/lower/plain" user.seltest keep >/dev/null
	echo readme >"$A/lower/readme"
	label "$A/lower/readme" lower_t
	echo secret >"$A/lower/secret"
	label "$A/lower/secret" secret_t
	echo secret >"$A/lower/secret-cu"
	label "$A/lower/secret-cu" secret_t
	head -c 8192 /dev/zero >"$A/lower/code"
	label "$A/lower/code" lower_t
	echo secret >"$B/lower/secret"
	label "$B/lower/secret" secret_t
	label "$A/lower" lower_t
	label "$B/lower" lower_t
	echo sentinel >"$w/sentinel"
	label "$w/sentinel" sentinel_t
	tag_lower "$A/lower" "$B/lower"

	local opts=lowerdir=%s/lower,upperdir=%s/upper,workdir=%s/work,context=$obj_prefix:ovl_t
	# shellcheck disable=SC2059 # the format is ours
	expect_eq overlay-mount-by-suite ok \
		"$("$seh" mount overlay "$A/merged" overlay "$(printf "$opts" "$A" "$A" "$A")")"
	# shellcheck disable=SC2059
	expect_eq overlay-mount-by-mounter_t ok \
		"$(run_as mounter_t mount overlay "$B/merged" overlay "$(printf "$opts" "$B" "$B" "$B")")"

	# C: the lower layer is a file system of its own, mounted read-write
	lower_layer c "$C/lower" || die setup "cannot make the lower layer of $C"
	mkdir -p "$C/upper" "$C/work" "$C/merged"
	echo secret >"$C/lower/secret"
	label "$C/lower/secret" secret_t
	label "$C/lower" lower_t
	tag_lower "$C/lower"
	# shellcheck disable=SC2059
	expect_eq overlay-mount-rw-lower ok \
		"$("$seh" mount overlay "$C/merged" overlay "$(printf "$opts" "$C" "$C" "$C")")"
	# from here on, every open of a tagged file is traced with its result
	# (case lowers-served-by-shares reads them)
	if [ "$lower_fs" != tmpfs ]; then
		[ -e "${seltrace%/*}" ] || mount -t tracefs nodev /sys/kernel/tracing || die setup "cannot mount tracefs"
		if ! { mkdir -p "$seltrace" && echo 1 >"$seltrace/events/pcdedup/pcdedup_open/enable"; }; then
			die setup "cannot trace pcdedup_open"
		fi
	fi
}

# AVC capture: avc_begin writes a mark to the kernel log; avc_end provokes a
# denial on sentinel_t, waits until it is logged (audit records are printed
# by kauditd, in order, but later) and leaves in $avcs the AVC denials logged
# between the mark and the sentinel's.
nmark=0
avcs=
avc_begin() {
	nmark=$((nmark + 1))
	echo "seltest-mark-$nmark" >/dev/kmsg
}

avc_end() {
	local i log
	run_as test_n_t cat "$w/sentinel" >/dev/null
	for i in $(seq 1 100); do
		log=$(dmesg | sed -n "/seltest-mark-$nmark\$/,\$p")
		if grep -q "tcontext=$obj_prefix:sentinel_t " <<<"$log"; then
			avcs=$(grep 'avc:  denied' <<<"$log" | grep -v "tcontext=$obj_prefix:sentinel_t " || true)
			return 0
		fi
		[ "$i" = 100 ] || sleep 0.1
	done
	avcs="no sentinel AVC (audit records lost?)"
}

# has_avc PERMS SOURCE-TYPE TARGET-TYPE [EXTRA]: an AVC denial of exactly
# PERMS to SOURCE-TYPE on TARGET-TYPE (a file) was captured, containing EXTRA
has_avc() {
	grep -E "avc:  denied  \{ $1 \} for .* scontext=$ctx_prefix:$2 tcontext=$obj_prefix:$3 tclass=file " <<<"$avcs" |
		grep -qF -- "${4:-avc}"
}

no_avc() { [ -z "$avcs" ]; }

# the AVC denials, short, for failure messages
avc_summary() {
	if [ -z "$avcs" ]; then
		echo none
	else
		sed -E 's/.*(avc:  denied  \{[^}]*\}).*(scontext=[^ ]*) (tcontext=[^ ]*).*/\1 \2 \3/' <<<"$avcs" | tr '\n' ';'
	fi
}

# report NAME OK WHY: a case whose outcome is the same on every kernel
report() {
	if [ "$2" = 1 ]; then pass "$1"; else fail "$1" "$3"; fi
}

# report_new NAME NEW_OK STOCK_OK OBSERVED: a case of the series' new
# behaviour; NEW_OK / STOCK_OK say whether the outcome and the AVCs are those
# of the new / of the stock behaviour
report_new() {
	local name=$1 new_ok=$2 stock_ok=$3 observed=$4
	case $mode in
	on) report "$name" "$new_ok" "$observed" ;;
	off) report "switch-off-$name" "$stock_ok" "not the stock behaviour: $observed" ;;
	stock)
		if [ "$new_ok" = 1 ]; then
			fail "$name" "passed on the stock kernel, which lacks the check: $observed"
		elif [ "$stock_ok" = 1 ]; then
			xfail "$name" "stock kernel: $observed"
		else
			fail "$name" "neither the new nor the stock behaviour: $observed"
		fi
		;;
	esac
}

# --- the cases ---------------------------------------------------------------

# Seed patches 1-3, upstream since v4.8: a copy-up gives the upper file the
# overlay label, does not copy security.selinux, and copies other xattrs.
case_copy_up_relabel() {
	local out up=$A/upper/plain lbl xattr ok=0
	avc_begin
	out=$(run_as test_a_t append "$A/merged/plain" more)
	avc_end
	lbl=$("$seh" getlabel "$up" || true)
	xattr=$("$seh" getxattr "$up" user.seltest || true)
	if [ "$out" = ok ] && [ -f "$up" ] && [ "$lbl" = "$obj_prefix:ovl_t" ] && no_avc; then
		ok=1
	fi
	report copyup-relabel "$ok" "append '$out', upper label '$lbl', AVCs: $(avc_summary)"
	ok=0
	if [ "$lbl" = "$obj_prefix:ovl_t" ] && [ "$xattr" = keep ] &&
		[ "$("$seh" getlabel "$A/lower/plain")" = "$obj_prefix:lower_t" ]; then
		ok=1
	fi
	report copyup-xattr-filter "$ok" \
		"upper security.selinux '$lbl' (want ovl_t, not the lower's), user.seltest '$xattr' (want keep)"
}

# The overlay label denies: test_n_t may read the lower file but not ovl_t.
case_overlay_denies() {
	local out ok=0
	avc_begin
	out=$(run_as test_n_t cat "$A/merged/readme")
	avc_end
	if [ "$out" = "EACCES open" ] && has_avc read test_n_t ovl_t &&
		! grep -q "tcontext=$obj_prefix:lower_t " <<<"$avcs"; then
		ok=1
	fi
	report overlay-label-denies "$ok" "read '$out', AVCs: $(avc_summary)"
}

# New (seed 5/7, cover letter item 8): the lower label denies the opener,
# although the overlay label and the mounter would allow it.
case_lower_denies_open() {
	local out ino new=0 old=0
	ino=$(stat -c %i "$A/lower/secret")
	avc_begin
	out=$(run_as test_b_t cat "$A/merged/secret")
	avc_end
	if [ "$out" = "EACCES open" ] && has_avc "read open" test_b_t secret_t " ino=$ino " &&
		! grep -q "tcontext=$obj_prefix:ovl_t " <<<"$avcs"; then
		new=1
	fi
	if [ "$out" = ok:secret ] && no_avc; then old=1; fi
	report_new lower-label-denies-open "$new" "$old" \
		"test_b_t read of a secret_t lower file: '$out', AVCs: $(avc_summary)"
}

# Run CMD... with b_reads_secret on until it stops itself (SIGSTOP after
# its open), turn the boolean off, let it go on; its output is left in
# $w/hold.out.  The AVCs of the whole run are collected (avc_begin/avc_end),
# so this runs in the suite's shell, not in a $(...) subshell.
revoked_midway() {
	local pid i state
	setbool b_reads_secret 1
	avc_begin
	"$@" >"$w/hold.out" &
	pid=$!
	for i in $(seq 1 100); do
		state=$(awk '{ print $3 }' "/proc/$pid/stat" 2>/dev/null || echo gone)
		case $state in T | gone) break ;; esac
		sleep 0.1
	done
	setbool b_reads_secret 0
	kill -CONT "$pid" 2>/dev/null || true
	wait "$pid" || true
	avc_end
}

# New (seed 7/7, item 8): a read is revalidated against the lower label too.
# The open is allowed by a boolean, which is turned off before the read.
case_lower_denies_read() {
	local out ino new=0 old=0
	ino=$(stat -c %i "$A/lower/secret")
	revoked_midway "$seh" exec "$ctx_prefix:test_b_t" "$seh" hold-read "$A/merged/secret"
	out=$(cat "$w/hold.out")
	if [ "$out" = "EACCES read" ] && has_avc read test_b_t secret_t " ino=$ino "; then
		new=1
	fi
	if [ "$out" = ok:secret ] && no_avc; then old=1; fi
	report_new lower-label-denies-read "$new" "$old" \
		"test_b_t read after its read permission on secret_t was revoked: '$out', AVCs: $(avc_summary)"
}

# New (seed 6/7): a copy-up needs the caller's read permission on the lower
# file, and a refused one leaves nothing on the upper layer.
case_copy_up_needs_read() {
	local out ino up=$A/upper/secret-cu left leak="" new=0 old=0
	ino=$(stat -c %i "$A/lower/secret-cu")
	avc_begin
	out=$(run_as test_b_t append "$A/merged/secret-cu" leak)
	avc_end
	left=$({ find "$A/upper" -name 'secret-cu*'; find "$A/work/work" -mindepth 1; } | tr '\n' ' ')
	if [ "$out" = "EACCES open" ] && [ -z "$left" ] &&
		has_avc read test_b_t secret_t " ino=$ino "; then
		new=1
	fi
	if [ "$out" = ok ] && [ -f "$up" ] && no_avc; then
		old=1
		leak=", then test_b_t reads the upper copy: '$(run_as test_b_t cat "$A/merged/secret-cu" | tr '\n' ' ')'"
	fi
	report_new copyup-needs-caller-read "$new" "$old" \
		"test_b_t append to a secret_t lower file: '$out', left on upper/work: '${left:-nothing}'$leak, AVCs: $(avc_summary)"
}

# The mounter check still holds: mounter_t may not read secret_t, so nobody
# reads or copies up a secret_t file through its overlay, not even test_a_t,
# which may read it through the suite's overlay.
case_mounter_check() {
	local out ctl cu ino ok=0
	ino=$(stat -c %i "$B/lower/secret")
	avc_begin
	ctl=$(run_as test_a_t cat "$A/merged/secret")
	out=$(run_as test_a_t cat "$B/merged/secret")
	cu=$(run_as test_a_t append "$B/merged/secret" leak)
	avc_end
	if [ "$ctl" = ok:secret ] && [ "$out" = "EACCES open" ] && [ "$cu" = "EACCES open" ] &&
		[ ! -e "$B/upper/secret" ] && has_avc read mounter_t secret_t " ino=$ino " &&
		! grep -q "scontext=$ctx_prefix:test_a_t " <<<"$avcs"; then
		ok=1
	fi
	report mounter-check-holds "$ok" \
		"test_a_t read via the suite's overlay '$ctl', via mounter_t's '$out', append '$cu', AVCs: $(avc_summary)"
}

# mmap and mprotect of a lower file: test_a_t may map and execute ovl_t but
# only map (not execute) lower_t.
case_mmap_mprotect() {
	local out ino ok=0 new=0 old=0
	ino=$(stat -c %i "$A/lower/code")
	avc_begin
	out=$(run_as test_a_t mmap "$A/merged/code" r)
	avc_end
	if [ "$out" = ok ] && no_avc; then ok=1; fi
	report mmap-lower-read "$ok" "read-only mmap '$out', AVCs: $(avc_summary)"

	avc_begin
	out=$(run_as test_a_t mmap "$A/merged/code" rx)
	avc_end
	if [ "$out" = "EACCES mmap" ] && has_avc execute test_a_t lower_t " ino=$ino "; then new=1; fi
	if [ "$out" = ok ] && no_avc; then old=1; fi
	report_new mmap-lower-exec-denied "$new" "$old" \
		"executable mmap of a lower_t file: '$out', AVCs: $(avc_summary)"

	new=0 old=0
	avc_begin
	out=$(run_as test_a_t mprotect "$A/merged/code")
	avc_end
	if [ "$out" = "EACCES mprotect" ] && has_avc execute test_a_t lower_t " ino=$ino "; then new=1; fi
	if [ "$out" = ok ] && no_avc; then old=1; fi
	report_new mprotect-lower-exec-denied "$new" "$old" \
		"mprotect to r-x of a lower_t file: '$out', AVCs: $(avc_summary)"
}

# Cover letter item 9: a copied-up file is checked against the overlay label
# only (its lower_t would deny the execute).
case_upper_overlay_only() {
	local out1 out2 ok=0
	avc_begin
	out1=$(run_as test_a_t mmap "$A/merged/plain" rx)
	out2=$(run_as test_a_t mprotect "$A/merged/plain")
	avc_end
	if [ -f "$A/upper/plain" ] && [ "$out1" = ok ] && [ "$out2" = ok ] && no_avc; then ok=1; fi
	report upper-file-overlay-label-only "$ok" \
		"copied-up file (lower label lower_t): mmap r-x '$out1', mprotect '$out2', AVCs: $(avc_summary)"
}

# New: the task that uses an fd is checked against the lower label, whoever
# opened it.  The suite (base_t, which may read everything) opens a secret_t
# lower file and passes the fd over SCM_RIGHTS (seh fdpass) or across an exec
# into another domain (seh fdexec); test_a_t may read secret_t, test_b_t may
# not (unless b_reads_secret).  The receiver reads the fd, then maps it.

# fd_case NAME DENIED-OUT SEH-OP: the fd goes to test_b_t and must not be
# usable, with an AVC of test_b_t against the lower file; then the same to
# test_a_t, which uses it.
fd_case() {
	local name=$1 denied=$2 op=$3 out ino ok=0 new=0 old=0
	ino=$(stat -c %i "$A/lower/secret")
	avc_begin
	out=$("$seh" "$op" "$A/merged/secret" "$ctx_prefix:test_b_t" use || true)
	avc_end
	if [ "$out" = "$denied" ] && has_avc read test_b_t secret_t " ino=$ino " &&
		! grep -q "tcontext=$obj_prefix:ovl_t " <<<"$avcs"; then
		new=1
	fi
	if [ "$out" = "ok:secret, ok" ] && no_avc; then old=1; fi
	report_new "$name-lower-denied" "$new" "$old" \
		"base_t's fd of a secret_t lower file, used by test_b_t: '$out', AVCs: $(avc_summary)"

	avc_begin
	out=$("$seh" "$op" "$A/merged/secret" "$ctx_prefix:test_a_t" use || true)
	avc_end
	if [ "$out" = "ok:secret, ok" ] && no_avc; then ok=1; fi
	report "$name-lower-allowed" "$ok" \
		"base_t's fd of a secret_t lower file, used by test_a_t: '$out', AVCs: $(avc_summary)"
}

case_fd_passing() {
	# SCM_RIGHTS: selinux_file_receive() refuses the fd
	fd_case fdpass "ENOFD recvmsg" fdpass
	# exec: flush_unauthorized_files() replaces the fd by the null device
	fd_case exec-fd "replaced fd" fdexec
}

# New: read() and mmap() of a received fd check the receiver, not the opener
# (base_t).  test_b_t receives the fd while b_reads_secret is on, which is
# turned off before it reads and maps it.
case_fd_revoked() {
	local out ino new=0 old=0
	ino=$(stat -c %i "$A/lower/secret")
	revoked_midway "$seh" fdpass "$A/merged/secret" "$ctx_prefix:test_b_t" hold
	out=$(cat "$w/hold.out")
	if [ "$out" = "EACCES read, EACCES mmap" ] && has_avc read test_b_t secret_t " ino=$ino " &&
		has_avc map test_b_t secret_t " ino=$ino "; then
		new=1
	fi
	if [ "$out" = "ok:secret, ok" ] && no_avc; then old=1; fi
	report_new fdpass-read-mmap-revoked "$new" "$old" \
		"test_b_t read and mmap of base_t's fd after its permission on secret_t was revoked: '$out', AVCs: $(avc_summary)"
}

# New: lock (flock, fcntl) and ioctl check the lower label too.  test_b_t may
# lock and ioctl ovl_t but not lower_t.
case_lock_ioctl() {
	local op out ino perm call new old
	ino=$(stat -c %i "$A/lower/readme")
	for op in lock fcntl-lock ioctl; do
		case $op in
		lock) perm=lock call=flock ;;
		fcntl-lock) perm=lock call=fcntl ;;
		ioctl) perm=ioctl call=ioctl ;;
		esac
		new=0 old=0
		avc_begin
		out=$(run_as test_b_t "$op" "$A/merged/readme")
		avc_end
		if [ "$out" = "EACCES $call" ] && has_avc "$perm" test_b_t lower_t " ino=$ino "; then new=1; fi
		# stock: allowed (the ioctl may still be one tmpfs does not know)
		if [ "${out%% *}" != EACCES ] && no_avc; then old=1; fi
		report_new "lower-label-denies-$op" "$new" "$old" \
			"test_b_t $op of a lower_t file: '$out', AVCs: $(avc_summary)"
	done
}

# New: a lower file is recognised as such because overlayfs says so, whatever
# the mount flags of its layer: C's lower layer is a read-write tmpfs mount.
case_rw_lower() {
	local out ino rw new=0 old=0
	ino=$(stat -c %i "$C/lower/secret")
	rw=$(awk -v m="$C/lower" '$2 == m { print $4 }' /proc/mounts | cut -d, -f1)
	avc_begin
	out=$(run_as test_b_t cat "$C/merged/secret")
	avc_end
	if [ "$rw" = rw ] && [ "$out" = "EACCES open" ] &&
		has_avc "read open" test_b_t secret_t " ino=$ino "; then
		new=1
	fi
	if [ "$rw" = rw ] && [ "$out" = ok:secret ] && no_avc; then old=1; fi
	report_new lower-rw-mount-recognised "$new" "$old" \
		"test_b_t read of a secret_t file on a lower layer mounted '$rw': '$out', AVCs: $(avc_summary)"
}

# tmpfs memory in use, in kB, without forking
shmem_kb() {
	local k v _
	while read -r k v _; do
		if [ "$k" = Shmem: ]; then
			echo "$v"
			return
		fi
	done </proc/meminfo
}

# wait_stopped PID: until PID is stopped (or gone)
wait_stopped() {
	local i state
	for i in $(seq 1 100); do
		state=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null || echo gone)
		case $state in T | gone) return ;; esac
		sleep 0.1
	done
}

# A copy-up that another task has finished is no copy-up: test_b_t, which may
# not read the secret_t lower file, opens it for writing while test_a_t's
# copy-up of it is under way, waits for it, and writes to the upper file.
# The copy-up check must not refuse it (it did when it ran before the
# copy-up lock was taken).  Same outcome on every kernel.
case_copy_up_race() {
	local n f apid bpid shm0 i out="" overlap="" ok=0 tries=""
	rm -f "$w/tick"
	mkfifo "$w/tick"
	# a fresh file for each try: overlayfs has seen the last one copied up
	for n in 1 2 3; do
		f=big$n
		head -c 128M /dev/zero >"$A/lower/$f"
		label "$A/lower/$f" secret_t
		tag_lower "$A/lower/$f"
		# test_b_t waits, stopped, in front of its open
		"$seh" exec "$ctx_prefix:test_b_t" "$seh" hold-append "$A/merged/$f" b >"$w/race-b.out" &
		bpid=$!
		wait_stopped "$bpid"
		shm0=$(shmem_kb)
		avc_begin
		# test_a_t at the lowest priority, so that the copy-up lasts
		# and this shell sees it start even on one CPU
		nice -n 19 "$seh" exec "$ctx_prefix:test_a_t" "$seh" append "$A/merged/$f" a >"$w/race-a.out" &
		apid=$!
		# the copy-up is under way once the upper copy takes memory;
		# poll every 10 ms (read times out on a FIFO without a writer)
		for i in $(seq 1 3000); do
			[ $(($(shmem_kb) - shm0)) -lt 2048 ] || break
			kill -0 "$apid" 2>/dev/null || break
			read -rt 0.01 _ <>"$w/tick" || true
		done
		if kill -0 "$apid" 2>/dev/null && [ ! -e "$A/upper/$f" ]; then
			overlap=yes
		fi
		tries+="[polls $i, +$(($(shmem_kb) - shm0)) kB, test_a_t $(kill -0 "$apid" 2>/dev/null && echo running || echo finished)] "
		kill -CONT "$bpid" 2>/dev/null || true
		wait "$bpid" || true
		wait "$apid" || true
		avc_end
		out=$(cat "$w/race-b.out")
		[ -z "$overlap" ] || break
	done
	if [ -z "$overlap" ]; then
		skip copyup-after-racing-copyup "could not start during a copy-up in 3 tries: $tries"
		return
	fi
	if [ "$out" = ok ] && [ "$(cat "$w/race-a.out")" = ok ] && [ -f "$A/upper/$f" ] && no_avc; then
		ok=1
	fi
	report copyup-after-racing-copyup "$ok" \
		"test_b_t append during test_a_t's copy-up of a secret_t file: '$out' (test_a_t: '$(cat "$w/race-a.out")'), AVCs: $(avc_summary)"
}

# On xfs or ext4, the suite proves nothing unless the lower files were
# served from shares: each still has its key; each lower file that a case
# opens through an overlay (or copies up) was opened by the test helper
# (seh) through a share, and never privately (pcdedup_open events of the
# run, per file); and a mapping of the lower file of the mmap cases
# through the overlay is held through a share (it counts as an opener once
# its fd is closed).
case_lowers_shared() {
	local f nokey="" opened openers why opens di shared other perfile="" bad=""
	opened=$(($(vmstat open_shared) - shared0))
	echo 0 >"$seltrace/events/pcdedup/pcdedup_open/enable"
	# "MAJOR:MINOR INO RESULT" of each open by seh
	opens=$(sed -nE 's/^ *seh-[0-9]+ .* pcdedup_open: dev ([0-9]+:[0-9]+) ino ([0-9]+) size [0-9]+ ([a-z]+)$/\1 \2 \3/p' \
		"$seltrace/trace")
	for f in "$A"/lower/{plain,readme,secret,code} "$A"/lower/big*; do
		di=$(stat -c '%Hd:%Ld %i' "$f") || di=missing
		shared=$(awk -v f="$di" '$1 " " $2 == f && $3 == "shared" { n++ } END { print n + 0 }' <<<"$opens")
		other=$(awk -v f="$di" '$1 " " $2 == f && $3 != "shared" { n++ } END { print n + 0 }' <<<"$opens")
		perfile+=" ${f#"$w"/}:$shared/$other"
		if [ "$shared" = 0 ] || [ "$other" != 0 ]; then bad+=" ${f#"$w"/}"; fi
	done
	openers=$(python3 -c 'import mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
m = mmap.mmap(fd, 4096, mmap.MAP_PRIVATE, mmap.PROT_READ)
os.close(fd)
print(open(sys.argv[2]).read().strip())' "$A/merged/code" "$sysfs/openers") || openers=0
	while IFS= read -r -d '' f; do
		[ -n "$(key_hex "$f")" ] || nokey+=" $f"
	done < <(find "$A/lower" "$B/lower" "$C/lower" -type f -print0)
	why="lower files without a key:${nokey:- none}; opened by seh (shared/private):$perfile; not served by a share:${bad:- none}; shared opens during the run: $opened; openers with $A/merged/code mapped, its fd closed: $openers"
	if [ -z "$nokey" ] && [ -z "$bad" ] && [ "$opened" -gt 0 ] && [ "$openers" -gt 0 ]; then
		echo "# $why"
		pass lowers-served-by-shares
	else
		fail lowers-served-by-shares "$why"
	fi
}

# The capability is asked where the checks are made (a static key that
# each policy load sets as the policy says): in one boot, a policy loaded
# without it turns the checks off, and the policy with it back on.
case_policy_reload() {
	local out off_ok=0 on_ok=0
	cat "$w/policy-without-cap.33" >/sys/fs/selinux/load || die policy-reload "cannot load the policy without $polcap"
	avc_begin
	out=$(run_as test_b_t cat "$A/merged/secret")
	avc_end
	if [ "$(kernel_mode)" = off ] && [ "$out" = ok:secret ] && no_avc; then off_ok=1; fi
	report reload-without-cap-checks-off "$off_ok" \
		"mode $(kernel_mode), test_b_t read of a secret_t lower file: '$out', AVCs: $(avc_summary)"
	cat "$w/policy.33" >/sys/fs/selinux/load || die policy-reload "cannot load the policy with $polcap again"
	avc_begin
	out=$(run_as test_b_t cat "$A/merged/secret")
	avc_end
	if [ "$(kernel_mode)" = on ] && [ "$out" = "EACCES open" ] && has_avc "read open" test_b_t secret_t; then
		on_ok=1
	fi
	report reload-with-cap-checks-on "$on_ok" \
		"mode $(kernel_mode), test_b_t read of a secret_t lower file: '$out', AVCs: $(avc_summary)"
}

# run_selinux_suite WANTED-MODE [LOWER-FS]# run_selinux_suite WANTED-MODE [LOWER-FS]: the whole suite; WANTED-MODE is
# the mode the suite means to test (on or stock for selinux.sh, with the
# capability in the policy; off for selinux-off.sh, without it); LOWER-FS
# the file system of the lower layers: tmpfs (the default), xfs or ext4
run_selinux_suite() {
	lower_fs=${2:-tmpfs}
	# setup_policy 3, kernel-mode 1, setup_overlays 3, the case_ functions
	# below 21 (copy_up_relabel 2, mmap_mprotect 3, fd_passing 4,
	# lock_ioctl 3, the other nine 1 each), lowers_shared 1 (not on tmpfs),
	# policy_reload 2 (in mode on)
	local shared_case=1 reload_cases=0
	[ "$lower_fs" != tmpfs ] || shared_case=0
	[ "$1" != on ] || reload_cases=2
	plan $((3 + 1 + 3 + 21 + shared_case + reload_cases))
	if [ "$1" = off ]; then setup_policy without-cap; else setup_policy with-cap; fi
	mode=$(kernel_mode)
	expect_eq kernel-mode "$1" "$mode"
	[ "$mode" = "$1" ] || exit 1
	setup_overlays
	case_copy_up_relabel
	case_overlay_denies
	case_lower_denies_open
	case_lower_denies_read
	case_copy_up_needs_read
	case_mounter_check
	case_mmap_mprotect
	case_upper_overlay_only
	case_fd_passing
	case_fd_revoked
	case_lock_ioctl
	case_rw_lower
	case_copy_up_race
	[ "$lower_fs" = tmpfs ] || case_lowers_shared
	[ "$1" != on ] || case_policy_reload
}
