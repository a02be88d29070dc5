#!/bin/bash
# vm: --disk thin:4G --mem 2G --cpus 2
# timeout: 300
# Two OCI containers started with crun on thin snapshots of a tagged image
# (built and unpacked the way the benchmark does: bench/guest/oci.py, umoci,
# bench/guest/thinpool.py): their opens of the image's tagged file share one
# page cache, and each container's processes read the right bytes.
set -euo pipefail
. "$(dirname "$0")/../dedup/lib.sh"

# umoci and tag 2, per container: run, right bytes, own memcg 3 x 2, the
# share 3, delete 2
plan 13
for t in crun umoci; do
	command -v $t >/dev/null || { fail "$t-present" "no $t (scripts/deps.txt)"; exit 1; }
done
pcdedup_on

thin_setup thin ct
o=/mnt/origin
head -c 3000000 /dev/urandom >/tmp/blob
want=$(sha256sum </tmp/blob | cut -d' ' -f1)
python3 - "$o/oci" <<'PY'
import sys
sys.path.insert(0, "bench/guest")
import oci
m = [("usr", None, None), ("usr/bin", None, None), ("bin", None, "usr/bin"),
     ("usr/bin/busybox", "/bin/busybox", None), ("usr/bin/sh", None, "busybox"),
     ("data", None, None), ("data/blob", "/tmp/blob", None),
     ("proc", None, None), ("dev", None, None), ("sys", None, None), ("ctl", None, None)]
oci.build_layout(sys.argv[1], "test", m, ["/bin/sh"])
PY
check umoci-unpack umoci unpack --image "$o/oci:test" "$o/image"
check tag "$pcdedup" tag -q "$o/image/rootfs"
thin_snapshots ct 2
drop_caches

crun_run() {
	crun run -d -b "/run/ct/b$1" "c$1" </dev/null >"/run/ct/c$1.log" 2>&1 ||
		{ cat "/run/ct/c$1.log"; return 1; }
}
cleanup() {
	for i in 1 2; do crun delete -f "c$i" >/dev/null 2>&1 || true; done
}
trap cleanup EXIT
echo "+memory" >/sys/fs/cgroup/cgroup.subtree_control
for i in 1 2; do
	mkdir -p "/run/ct/ctl$i"
	python3 - "$i" <<'PY'
import sys
sys.path.insert(0, "bench/guest")
import oci
i = sys.argv[1]
oci.bundle(f"/run/ct/b{i}", "/mnt/snap1/image/config.json", f"/mnt/snap{i}/image/rootfs",
           ["/bin/sh", "-c", "exec 3</data/blob; busybox sha256sum /data/blob >/ctl/sum; "
            "exec busybox sleep 1000"], f"/crun-test/c{i}", binds=[(f"/run/ct/ctl{i}", "/ctl")])
PY
	# crun run -d leaves the container holding its stdio: not a pipe, or
	# the command substitution in check would wait for the container's end.
	check "crun-run-c$i" crun_run "$i"
done
in_own_cgroup() { # I: the container's process is in its cgroup, which charges memory
	local pid
	pid=$(crun state "c$1" | python3 -c 'import json, sys; print(json.load(sys.stdin)["pid"])')
	grep -qx "0::/crun-test/c$1" "/proc/$pid/cgroup" &&
		[ "$(cat "/sys/fs/cgroup/crun-test/c$1/memory.current")" -gt 0 ]
}
for i in 1 2; do
	for _ in $(seq 600); do [ -s "/run/ct/ctl$i/sum" ] && break; sleep 0.1; done
	expect_eq "c$i-reads-right-bytes" "$want" "$(cut -d' ' -f1 "/run/ct/ctl$i/sum" 2>/dev/null)"
	check "c$i-own-memcg" in_own_cgroup "$i"
done
# The blob's share (pcdedup status --json): both containers' files joined
# it, both hold it open (fd 3), and its pages are cached once.
read -r members openers cached < <("$pcdedup" status --json | python3 -c '
import json, sys
s = [x for x in json.load(sys.stdin)["shares"] or [] if x["size"] == 3000000]
print(*(s[0]["members"], s[0]["openers"], s[0]["cached_pages"]) if len(s) == 1 else (0, 0, 0))')
expect_eq share-has-both-containers 2 "$members"
expect_eq share-open-in-both-containers 2 "$openers"
expect_eq share-cached-once $(((3000000 + 4095) / 4096)) "$cached"
for i in 1 2; do
	check "crun-delete-c$i" crun delete -f "c$i"
done
