#!/usr/bin/env python3
"""Version pairs of real images (bench/images.py): what sharing saves when
every file of both versions is read once, the metric EROFS page-cache
sharing publishes (page cache before -> after).

Each version of the pair is unpacked with `umoci unpack` into a thin volume
of its own (XFS on an lvm2 thin pool: its files are inodes of their own) and
tagged with `pcdedup tag` as an operator would (the tool's defaults), once,
on the images disk (imagedisk.py), attached here as disk 'bench'. Then,
for each way of reading it (the volumes directly, "thin"; an overlay mount
with the version as its lower and a tmpfs upper, "overlay") and each
pcdedup state (off: `enabled` 0; on: 1, the kernel's verify mode), in an
order that turns every round: caches dropped, every regular file of the
older version read once, then every one of the newer, by this process in
a memory cgroup of its own. Measured: /proc/meminfo Cached and the
cgroup's file pages (memory.stat `file`) before and after, the bytes read,
and with pcdedup on its counters.
Usage: pairs.py --case CASE.json --out NAME.json
  (case.params: pair, rounds)"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common as c  # noqa: E402
from case import add_case_argument  # noqa: E402

VERSIONS = ("older", "newer")
CGROUP = "/sys/fs/cgroup/pairs"
BUF = bytearray(1 << 20)


def overlay(lower, name):
    t, root = f"/mnt/ovl-{name}/upper", f"/mnt/ovl-{name}/root"
    c.mount("tmpfs", t, "tmpfs")
    os.makedirs(f"{t}/u")
    os.makedirs(f"{t}/w")
    c.mount("overlay", root, "overlay", f"lowerdir={lower},upperdir={t}/u,workdir={t}/w")
    return root


def read_all(root):
    """Read every regular file under ROOT once; (files, bytes)."""
    files = nbytes = 0
    for d, dirs, names in os.walk(root):
        dirs.sort()
        for n in sorted(names):
            p = os.path.join(d, n)
            if os.path.islink(p) or not os.path.isfile(p):
                continue
            fd = os.open(p, os.O_RDONLY)
            try:
                while True:
                    k = os.readv(fd, [BUF])
                    if not k:
                        break
                    nbytes += k
            finally:
                os.close(fd)
            files += 1
    return files, nbytes


def cgroup_file_kb():
    with open(f"{CGROUP}/memory.stat") as f:
        for line in f:
            k, v = line.split()
            if k == "file":
                return int(v) // 1024
    raise RuntimeError(f"no 'file' in {CGROUP}/memory.stat")


def set_enabled(on):
    with open(os.path.join(c.SYSFS, "enabled"), "w") as f:
        f.write("1" if on else "0")


def snapshot():
    m = c.meminfo()
    return {"cached_kb": m["Cached"], "buffers_kb": m["Buffers"], "slab_kb": m["Slab"],
            "memfree_kb": m["MemFree"], "cgroup_file_kb": cgroup_file_kb(),
            "disk_kb": c.disk_sectors_read() // 2}


def measure(roots, scenario, dedup):
    """One run: caches dropped, every file of both versions read once."""
    set_enabled(dedup)
    c.drop_caches()
    time.sleep(1)
    c.drop_caches()
    before = snapshot()
    st0 = c.pcdedup_status()
    t0 = time.monotonic()
    per = {}
    for v in VERSIONS:
        files, nbytes = read_all(roots[scenario][v])
        per[v] = {"files": files, "bytes": nbytes}
    secs = time.monotonic() - t0
    after = snapshot()
    st1 = c.pcdedup_status()
    run = {"scenario": scenario, "pcdedup": dedup, "read_s": round(secs, 2),
           "read": per, "before": before, "after": after,
           "cached_kb": after["cached_kb"] - before["cached_kb"],
           "cgroup_file_kb": after["cgroup_file_kb"] - before["cgroup_file_kb"],
           "disk_kb": after["disk_kb"] - before["disk_kb"]}
    ev0, ev1 = st0.get("vmstat") or {}, st1.get("vmstat") or {}
    run["events"] = {k: int(v) - int(ev0.get(k, 0)) for k, v in ev1.items()
                     if str(v).isdigit() and v != ev0.get(k)}
    # Shares left from an earlier run would serve this one from memory and
    # make it look cheaper: their pages before the run must be none.
    run["pages_shared_before"] = (st0.get("sysfs") or {}).get("pages_shared")
    run["pages_shared_after"] = (st1.get("sysfs") or {}).get("pages_shared")
    run["shares"] = st1.get("n_shares")
    c.log(f"{scenario} pcdedup {'on' if dedup else 'off'}: Cached +{run['cached_kb'] / 1024:.1f}"
          f" MiB, cgroup file +{run['cgroup_file_kb'] / 1024:.1f} MiB, "
          f"{(per['older']['bytes'] + per['newer']['bytes']) / 2**20:.1f} MiB read in "
          f"{secs:.1f} s")
    return run


def main():
    ap = argparse.ArgumentParser(description="version pairs of real images, every file read once")
    add_case_argument(ap)
    a = ap.parse_args()
    p = a.case.params
    info = {"guest": c.guest_info(), "pair": p["pair"], "runs": []}
    vols = {v: f"{p['pair']}-{v}" for v in VERSIONS}
    c.attach_images(vols.values())
    c.run(c.PCDEDUP_TOOL, "secret", "load")
    os.makedirs(CGROUP, exist_ok=True)
    with open("/sys/fs/cgroup/cgroup.subtree_control", "w") as f:
        f.write("+memory")
    with open(f"{CGROUP}/cgroup.procs", "w") as f:
        f.write(str(os.getpid()))
    roots = {"thin": {v: f"/mnt/{vols[v]}/bundle/rootfs" for v in VERSIONS}, "overlay": {}}
    for v in VERSIONS:
        roots["overlay"][v] = overlay(roots["thin"][v], v)
    os.sync()
    info["verify"] = open(os.path.join(c.SYSFS, "verify")).read().strip()
    arms = [(s, d) for s in ("thin", "overlay") for d in (False, True)]
    for r in range(p.get("rounds", 2)):
        k = r % len(arms)
        for scenario, dedup in arms[k:] + arms[:k]:
            run = measure(roots, scenario, dedup)
            run["round"] = r + 1
            info["runs"].append(run)
            c.write_json(a.out, info)
    set_enabled(False)
    c.write_json(a.out, info)


if __name__ == "__main__":
    main()
