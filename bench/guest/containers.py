#!/usr/bin/env python3
"""Start OCI containers with crun, one after another, on one scenario and
sample memory (and, for a density case, throughput and refaults).
Usage: containers.py --case CASE.json --out NAME.json
  case.scenario  shared (overlayfs, one lower) | distinct (overlayfs, one lower
                 per container: reflink copies) | thin (XFS on dm-thin snapshots)
  case.kind      containers: each container imports standard modules, then sleeps
                 density:    each container imports them, then re-reads every file
                             of its image in a loop (its hot set); at each sample
                             the throughput and refaults over a window
Each container: `crun run -d` of a bundle whose config.json is the one
`umoci unpack` wrote, its root the container's snapshot or overlay mount, its
cgroup /sys/fs/cgroup/bench/cI (cgroup v2, memory controller). Start time:
`crun run` spawned until the container's process reports its imports done."""
import argparse
import os
import statistics
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common as c  # noqa: E402
import oci  # noqa: E402
from case import add_case_argument  # noqa: E402

CGROOT = "/sys/fs/cgroup/bench"
WORK = "/run/bench"
PAGE = os.sysconf("SC_PAGE_SIZE")
# Files whose mapped pages are traced to physical frames at each sample.
FRAME_FILES = ("python3.11", "libc.so.6")
IMPORTS = "json, email.parser, email.policy, http.client, decimal, sqlite3, " \
          "urllib.parse, xml.etree.ElementTree, logging, argparse, csv, datetime"
PROGRAM = f"""import os, sys, time
import {IMPORTS}
sqlite3.connect(':memory:').execute('select 1')
open('/ctl/ready', 'w').close()
if sys.argv[1] == 'idle':
    time.sleep(1e9)
files = sorted(os.path.join(d, n) for d, _, ns in os.walk('/usr') for n in ns
               if os.path.isfile(os.path.join(d, n)) and not os.path.islink(os.path.join(d, n)))
buf = bytearray(1 << 18)
ctl = os.open('/ctl/count', os.O_WRONLY | os.O_CREAT, 0o644)
it = total = 0
pass_s = float(sys.argv[2])  # a pass takes at least this: a fixed load per container
while True:
    t_pass = time.monotonic()
    for f in files:
        fd = os.open(f, os.O_RDONLY)
        while True:
            k = os.readv(fd, [buf])
            if not k:
                break
            total += k
        os.close(fd)
        os.pwrite(ctl, b'%20d %20d\\n' % (it, total), 0)
    it += 1
    time.sleep(max(0.0, pass_s - (time.monotonic() - t_pass)))
"""


def setup_roots(scenario, n):
    if scenario == "thin":
        c.thin_snapshots(range(1, n + 1))
        return [f"/mnt/snap{i}/image/rootfs" for i in range(1, n + 1)]
    c.mount_origin()
    roots = []
    for i in range(1, n + 1):
        lower = (f"{c.ORIGIN_MNT}/image/rootfs" if scenario == "shared"
                 else f"{c.ORIGIN_MNT}/versions/v{i}")
        t, root = f"/mnt/c{i}/upper", f"/mnt/c{i}/root"
        c.mount("tmpfs", t, "tmpfs")
        os.makedirs(f"{t}/u")
        os.makedirs(f"{t}/w")
        c.mount("overlay", root, "overlay", f"lowerdir={lower},upperdir={t}/u,workdir={t}/w")
        roots.append(root)
    return roots


def cgroup_pids(i):
    with open(f"{CGROOT}/c{i}/cgroup.procs") as f:
        return [int(x) for x in f.read().split()]


def mapped_frames(pids, name):
    """The physical frames behind the resident file pages that PIDS map from
    files called NAME (/proc/PID/maps, then /proc/PID/pagemap: bit 63 present,
    bit 61 file page, bits 0-54 the frame). One copy in memory shows as
    distinct_frames equal to pages_per_container."""
    per, frames = [], set()
    for pid in pids:
        n = 0
        try:
            with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/pagemap", "rb") as pm:
                for line in maps:
                    f = line.split()
                    if len(f) < 6 or os.path.basename(f[5]) != name:
                        continue
                    lo, hi = (int(x, 16) for x in f[0].split("-"))
                    pm.seek(lo // PAGE * 8)
                    for (e,) in struct.iter_unpack("<Q", pm.read((hi - lo) // PAGE * 8)):
                        if e >> 63 & 1 and e >> 61 & 1:
                            frames.add(e & ((1 << 55) - 1))
                            n += 1
        except OSError:
            continue
        per.append(n)
    return {"file": name, "pages_per_container": statistics.median(per) if per else 0,
            "distinct_frames": len(frames)}


def memory_stat(path):
    out = {}
    with open(f"{path}/memory.stat") as f:
        for line in f:
            k, v = line.split()
            out[k] = int(v)
    return out


def spawn(i, root, base_config, workload, pass_s=0.0, timeout=180):
    ctl = f"{WORK}/ctl/c{i}"
    os.makedirs(ctl)
    bundle = f"{WORK}/bundles/c{i}"
    oci.bundle(bundle, base_config, root, ["/usr/bin/python3.11", "-c", PROGRAM, workload, str(pass_s)],
               f"/bench/c{i}", binds=[(ctl, "/ctl")], env=["PYTHONDONTWRITEBYTECODE=1"])
    t0 = time.monotonic()
    with open(f"{WORK}/logs/c{i}.log", "w") as log:
        p = subprocess.run(["crun", "run", "-d", "-b", bundle, f"c{i}"],
                           stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    if p.returncode:
        raise RuntimeError(f"crun run c{i}: exit {p.returncode}: {tail(i)}")
    while not os.path.exists(f"{ctl}/ready"):
        if not cgroup_pids(i) or time.monotonic() - t0 > timeout:
            raise RuntimeError(f"container c{i} not ready (exited or {timeout}s): {tail(i)}")
        time.sleep(0.01)
    return time.monotonic() - t0


def tail(i):
    try:
        with open(f"{WORK}/logs/c{i}.log") as f:
            return f.read().strip()[-300:]
    except OSError:
        return ""


def counts(n):
    """Iterations and bytes read so far by containers 1..N (0 before the first pass)."""
    out = []
    for i in range(1, n + 1):
        try:
            with open(f"{WORK}/ctl/c{i}/count") as f:
                it, total = (int(x) for x in f.read().split())
        except (OSError, ValueError):
            it = total = 0
        out.append((it, total))
    return out


EVENTS = ("workingset_refault_file", "pgmajfault", "oom_kill", "pgscan_kswapd",
          "pgscan_direct")


def window(n, seconds):
    """Throughput and reclaim over SECONDS with N containers running."""
    t0, v0, k0 = time.monotonic(), c.vmstat(*EVENTS), counts(n)
    time.sleep(seconds)
    t1, v1, k1 = time.monotonic(), c.vmstat(*EVENTS), counts(n)
    dt = t1 - t0
    read = sum(b[1] - a[1] for a, b in zip(k0, k1))
    ev = {k: v1.get(k, 0) - v0.get(k, 0) for k in EVENTS}
    return {"window_s": round(dt, 2), "read_mib_s": round(read / dt / 2**20, 2),
            "passes_per_s": round(sum(b[0] - a[0] for a, b in zip(k0, k1)) / dt, 3),
            "refault_pages_s": round(ev["workingset_refault_file"] / dt, 1),
            "refault_fraction": (round(ev["workingset_refault_file"] * PAGE / read, 4)
                                 if read else None),
            "events": ev,
            "alive": sum(1 for i in range(1, n + 1) if cgroup_pids(i))}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_case_argument(ap)
    a = ap.parse_args()
    case = a.case
    density = case.kind == "density"
    p = case.params
    result = {"case": case.name, "guest": c.guest_info(), "samples": [], "start_s": [],
              "error": None, "stopped": None}
    c.activate_vg()
    t = time.monotonic()
    roots = setup_roots(case.scenario, case.n)
    result["setup_s"] = round(time.monotonic() - t, 1)
    c.log(f"{case.name}: {case.n} roots ready in {result['setup_s']}s")
    base_config = (f"/mnt/snap1/image/config.json" if case.scenario == "thin"
                   else f"{c.ORIGIN_MNT}/image/config.json")
    # The image's secret, from its origin or a snapshot of it.
    c.set_pcdedup(case, os.path.join("/mnt/snap1" if case.scenario == "thin"
                                      else c.ORIGIN_MNT, c.IMAGE_SECRET))
    for d in ("ctl", "bundles", "logs"):
        os.makedirs(f"{WORK}/{d}", exist_ok=True)
    with open("/sys/fs/cgroup/cgroup.subtree_control", "w") as f:
        f.write("+memory +pids")
    os.makedirs(CGROOT)
    with open(f"{CGROOT}/cgroup.subtree_control", "w") as f:
        f.write("+memory +pids")
    c.drop_caches()
    time.sleep(1)
    m0, d0 = c.meminfo(), c.disk_sectors_read()
    result["pcdedup_before"] = c.pcdedup_status()
    t_all = time.monotonic()
    try:
        for i in range(1, case.n + 1):
            dt = spawn(i, roots[i - 1], base_config, "loop" if density else "idle",
                       p.get("pass_s", 0.0))
            result["start_s"].append(round(dt, 4))
            if i not in case.samples:
                continue
            s = {"n": i}
            if density:
                # Wait for the newest container's first pass over its files
                # (cold reads), at most first_pass_s, then settle.
                t1 = time.monotonic()
                while counts(i)[-1][0] < 1 and time.monotonic() - t1 < p.get("first_pass_s", 30):
                    time.sleep(0.2)
                time.sleep(p.get("settle_s", 2))
                s.update(window(i, p.get("window_s", 5)))
            m = c.meminfo()
            stats = [memory_stat(f"{CGROOT}/c{j}") for j in range(1, i + 1)]
            pids = [pid for j in range(1, i + 1) for pid in cgroup_pids(j)]
            s.update({
                "elapsed_s": round(time.monotonic() - t_all, 2),
                "cached_kb": m["Cached"] - m0["Cached"],
                "memavailable_drop_kb": m0["MemAvailable"] - m["MemAvailable"],
                "memavailable_kb": m["MemAvailable"],
                "memcg_file_kb": [st["file"] // 1024 for st in stats],
                "memcg_anon_kb": [st["anon"] // 1024 for st in stats],
                "memcg_file_total_kb": memory_stat(CGROOT)["file"] // 1024,
                "disk_read_kb": (c.disk_sectors_read() - d0) // 2,
                "frames": [mapped_frames(pids, f) for f in FRAME_FILES],
                "pcdedup": c.pcdedup_status()})
            result["samples"].append(s)
            c.log(f"N={i}: cached +{s['cached_kb'] >> 10} MiB, start {dt:.2f}s" +
                  (f", {s['read_mib_s']} MiB/s, refaults {s['refault_pages_s']}/s "
                   f"(fraction {s['refault_fraction']}), alive {s['alive']}"
                   if density else ""))
            c.write_json(a.out, result)
            if density:
                frac = s["refault_fraction"]
                if s["events"]["oom_kill"] or s["alive"] < i:
                    result["stopped"] = f"N={i}: OOM kill or a container died"
                elif frac is not None and frac > p.get("stop_fraction", 0.5):
                    result["stopped"] = f"N={i}: refault fraction {frac} > " \
                                        f"{p.get('stop_fraction', 0.5)}"
                if result["stopped"]:
                    c.log(f"stopping: {result['stopped']}")
                    break
    except Exception as e:  # a failed container ends the case; the data so far stays
        result["error"] = f"{type(e).__name__}: {e}"
        c.log(f"FAILED: {result['error']}")
    c.write_json(a.out, result)
    return 1 if result["error"] else 0


if __name__ == "__main__":
    sys.exit(main())
