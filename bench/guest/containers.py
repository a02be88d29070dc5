#!/usr/bin/env python3
"""Start OCI containers with crun, one after another, on one scenario and
sample memory (and, for a density case, throughput and refaults).
Usage: containers.py --case CASE.json --out NAME.json
  case.scenario  shared (overlayfs, one lower) | distinct (overlayfs, one lower
                 per container: reflink copies) | thin (XFS on dm-thin snapshots)
  case.kind      containers: each container imports standard modules, then sleeps
                 density:    each container imports them, then re-reads its hot
                             set in a loop (every file of its image, or with
                             params.hot_fraction a fixed part of it, the same in
                             every container); containers are added until a
                             sample fails (case.density_pass) or case.n; at each
                             sample the throughput and refaults over a window and
                             where the kernel's memory went (memprof.py)
Each container: `crun run -d` of a bundle whose config.json is the one
`umoci unpack` wrote, its root the container's snapshot or overlay mount, its
cgroup /sys/fs/cgroup/bench/cI (cgroup v2, memory controller). Start time:
`crun run` spawned until the container's process reports its imports done.
A density case makes each container's root when it starts it (a thin
snapshot is made in a batch ahead, mounted only then): a root's cost counts
from the container that uses it."""
import argparse
import os
import random
import shutil
import statistics
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common as c  # noqa: E402
import memprof  # noqa: E402
import oci  # noqa: E402
from case import add_case_argument, density_pass  # noqa: E402

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
if os.path.exists('/ctl/files'):
    with open('/ctl/files') as f:
        files = f.read().splitlines()
else:
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
    """The processes of container I: none when its cgroup is gone or was
    never made (crun failed)."""
    try:
        with open(f"{CGROOT}/c{i}/cgroup.procs") as f:
            return [int(x) for x in f.read().split()]
    except FileNotFoundError:
        return []


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
    os.makedirs(ctl, exist_ok=True)
    bundle = f"{WORK}/bundles/c{i}"
    oci.bundle(bundle, base_config, root, ["/usr/bin/python3.11", "-c", PROGRAM, workload, str(pass_s)],
               f"/bench/c{i}", binds=[(ctl, "/ctl")], env=["PYTHONDONTWRITEBYTECODE=1"])
    t0 = time.monotonic()
    with open(f"{WORK}/logs/c{i}.log", "w") as log:
        p = subprocess.run(["crun", "run", "-d", "-b", bundle, f"c{i}"],
                           stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    if p.returncode:
        raise RuntimeError(f"crun run c{i} exited {p.returncode}: {tail(i)}")
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
          "pgscan_direct", "slabs_scanned")


def window(n, seconds, nominal=None):
    """Throughput and reclaim over SECONDS with N containers running;
    NOMINAL: what one container reads per second at its pace (bytes)."""
    t0, v0, k0, d0 = time.monotonic(), c.vmstat(*EVENTS), counts(n), c.disk_sectors_read()
    time.sleep(seconds)
    t1, v1, k1, d1 = time.monotonic(), c.vmstat(*EVENTS), counts(n), c.disk_sectors_read()
    dt = t1 - t0
    read = sum(b[1] - a[1] for a, b in zip(k0, k1))
    ev = {k: v1.get(k, 0) - v0.get(k, 0) for k in EVENTS}
    return {"window_s": round(dt, 2), "read_mib_s": round(read / dt / 2**20, 2),
            "passes_per_s": round(sum(b[0] - a[0] for a, b in zip(k0, k1)) / dt, 3),
            "refault_pages_s": round(ev["workingset_refault_file"] / dt, 1),
            "refault_fraction": (round(ev["workingset_refault_file"] * PAGE / read, 4)
                                 if read else None),
            # Everything read from the disk meanwhile: file pages read again
            # (refaults, share fills) and metadata (inodes, directories
            # evicted and read again), which no refault counter shows.
            "disk_read_kb_window": (d1 - d0) // 2,
            "disk_fraction": round((d1 - d0) * 512 / read, 4) if read else None,
            "pace": round(read / dt / (n * nominal), 3) if nominal else None,
            "events": ev,
            "alive": sum(1 for i in range(1, n + 1) if cgroup_pids(i))}


MOUNT_FLAGS = {"ro": 1, "noatime": 1024, "nodiratime": 2048, "relatime": 1 << 21}


class Roots:
    """A density case's container roots, each made when its container
    starts: an overlay mount (tmpfs upper) on the shared lower or on the
    container's own reflink copy, or a thin snapshot; lvm makes snapshots in
    batches ahead (one lvm start per snapshot costs seconds under TCG),
    unmounted until their container starts."""

    def __init__(self, scenario, batch, options="nouuid", tag_level=None):
        self.scenario, self.batch, self.made = scenario, batch, 0
        self.options = options  # a snapshot's XFS mount options
        self.tag_level = tag_level  # the image tagged again at this level

    def prepare(self):
        """Mount what the roots need before the first container; return
        (the image's config.json, the image's secret, the image's rootfs),
        read from the origin, or snapshot 1 (unmounted again) for thin."""
        if self.tag_level is not None:
            self._retag()
        if self.scenario != "thin":
            c.mount_origin()
            return (f"{c.ORIGIN_MNT}/image/config.json",
                    os.path.join(c.ORIGIN_MNT, c.IMAGE_SECRET), f"{c.ORIGIN_MNT}/image/rootfs")
        self._make(1)
        c.mount(f"/dev/{c.VG}/snap1", "/mnt/snap1", "xfs", "nouuid")
        return "/mnt/snap1/image/config.json", f"/mnt/snap1/{c.IMAGE_SECRET}", \
            "/mnt/snap1/image/rootfs"

    def _retag(self):
        """Tag the image's rootfs again at tree level self.tag_level, on the
        origin, before any snapshot is made of it (the keys of a snapshot
        are the origin's: same filesystem UUID, inodes and generations)."""
        c.mount_origin()
        c.use_secret(os.path.join(c.ORIGIN_MNT, c.IMAGE_SECRET))
        c.log(f"tagging the image again: --tree-level {self.tag_level}")
        c.run(c.PCDEDUP_TOOL, "tag", "-q", "--min-size", "0", "--tree-level",
              str(self.tag_level), f"{c.ORIGIN_MNT}/image/rootfs")
        c.thinpool.umount(c.ORIGIN_MNT)

    def make(self, i):
        """Have lvm make snapshot I (and the batch after it) if not yet."""
        if self.scenario == "thin":
            self._make(i)

    def _make(self, i):
        if i <= self.made:
            return
        ids = range(self.made + 1, self.made + self.batch + 1)
        c.thin_snapshots(ids)
        for j in ids:
            c.thinpool.umount(f"/mnt/snap{j}")
        self.made = ids[-1]

    def get(self, i):
        if self.scenario == "thin":
            self._make(i)
            if not os.path.ismount(f"/mnt/snap{i}"):
                # noatime and the like are mount(2) flags, the rest XFS's options
                opts = self.options.split(",")
                flags = sum(MOUNT_FLAGS.get(o, 0) for o in opts)
                c.mount(f"/dev/{c.VG}/snap{i}", f"/mnt/snap{i}", "xfs",
                        ",".join(o for o in opts if o not in MOUNT_FLAGS), flags)
            return f"/mnt/snap{i}/image/rootfs"
        lower = (f"{c.ORIGIN_MNT}/image/rootfs" if self.scenario == "shared"
                 else f"{c.ORIGIN_MNT}/versions/v{i}")
        if not os.path.isdir(lower):
            raise RuntimeError(f"no lower {lower} for container {i} (image versions)")
        t, root = f"/mnt/c{i}/upper", f"/mnt/c{i}/root"
        c.mount("tmpfs", t, "tmpfs")
        os.makedirs(f"{t}/u")
        os.makedirs(f"{t}/w")
        c.mount("overlay", root, "overlay", f"lowerdir={lower},upperdir={t}/u,workdir={t}/w")
        return root


def hot_set(rootfs, fraction):
    """The files under /usr of the image (paths as the container sees them),
    all of them, or those that a seeded shuffle picks until FRACTION of the
    bytes (a file that would overshoot is skipped): the same in every
    container. Returns (files, their bytes, image files, image bytes)."""
    files = []
    for d, _, ns in os.walk(os.path.join(rootfs, "usr")):
        for n in ns:
            path = os.path.join(d, n)
            if os.path.isfile(path) and not os.path.islink(path):
                files.append(("/" + os.path.relpath(path, rootfs), os.path.getsize(path)))
    files.sort()
    total = sum(z for _, z in files)
    if not fraction:
        return [f for f, _ in files], total, len(files), total
    order = files[:]
    random.Random(1).shuffle(order)
    pick, got = [], 0
    for f, z in order:
        if got + z <= fraction * total:
            pick.append(f)
            got += z
    return sorted(pick), got, len(files), total


def freeze(ids, on):
    """Freeze (or thaw) the containers IDS (cgroup v2 freezer), waiting until
    each reports it."""
    for i in ids:
        with open(f"{CGROOT}/c{i}/cgroup.freeze", "w") as f:
            f.write("1" if on else "0")
    t = time.monotonic()
    for i in ids:
        while time.monotonic() - t < 10:
            with open(f"{CGROOT}/c{i}/cgroup.events") as f:
                if f"frozen {1 if on else 0}" in f.read():
                    break
            time.sleep(0.05)


def wait_passes(i, passes, limit_s):
    t = time.monotonic()
    while counts(i)[-1][0] < passes and time.monotonic() - t < limit_s:
        time.sleep(0.2)


MEMCG_KEYS = ("anon", "file", "kernel", "kernel_stack", "pagetables", "percpu", "sock",
              "vmalloc", "shmem", "slab_reclaimable", "slab_unreclaimable")


def memcg_sums(stats):
    """The containers' memory.stat summed (kB)."""
    return {k: sum(st.get(k, 0) for st in stats) // 1024 for k in MEMCG_KEYS}


def sample(i, m0, d0, t_all, density, p):
    s = {"n": i}
    if density:
        # The newest container's first pass over its files (cold reads), at
        # most first_pass_s, then settle.
        wait_passes(i, 1, p.get("first_pass_s", 30))
        time.sleep(p.get("settle_s", 2))
        s.update(window(i, p.get("window_s", 5), p.get("nominal_bytes_s")))
    m = c.meminfo()
    stats = [memory_stat(f"{CGROOT}/c{j}") for j in range(1, i + 1)
             if os.path.isdir(f"{CGROOT}/c{j}")]
    pids = [pid for j in range(1, i + 1) for pid in cgroup_pids(j)]
    s.update({
        "elapsed_s": round(time.monotonic() - t_all, 2),
        "cached_kb": m["Cached"] - m0["Cached"],
        "memavailable_drop_kb": m0["MemAvailable"] - m["MemAvailable"],
        "memavailable_kb": m["MemAvailable"],
        "memfree_kb": m["MemFree"],
        "memcg_file_kb": [st["file"] // 1024 for st in stats],
        "memcg_anon_kb": [st["anon"] // 1024 for st in stats],
        "memcg_file_total_kb": memory_stat(CGROOT)["file"] // 1024,
        "disk_read_kb": (c.disk_sectors_read() - d0) // 2,
        "frames": [mapped_frames(pids, f) for f in FRAME_FILES],
        "pcdedup": c.pcdedup_status()})
    if density:
        s["memcg"] = memcg_sums(stats)
        s["mem"] = memprof.snapshot()
        s["watermark_high_kb"] = memprof.watermark_high_kb()
    return s


def log_sample(s, dt, density):
    c.log(f"N={s['n']}: cached +{s['cached_kb'] >> 10} MiB, free {s['memfree_kb'] >> 10} MiB, "
          f"start {dt:.2f}s" +
          (f", {s['read_mib_s']} MiB/s, refaults {s['refault_pages_s']}/s "
           f"(fraction {s['refault_fraction']}), disk {s['disk_read_kb_window']} KiB "
           f"(fraction {s['disk_fraction']}), pace {s['pace']}, alive {s['alive']}"
           if density else ""))


def setup_cgroups():
    for d in ("ctl", "bundles", "logs"):
        os.makedirs(f"{WORK}/{d}", exist_ok=True)
    with open("/sys/fs/cgroup/cgroup.subtree_control", "w") as f:
        f.write("+memory +pids")
    os.makedirs(CGROOT)
    with open(f"{CGROOT}/cgroup.subtree_control", "w") as f:
        f.write("+memory +pids")


def run_idle(case, a, result):
    """Idle containers: every root made first, samples at case.samples."""
    p = case.params
    t = time.monotonic()
    roots = setup_roots(case.scenario, case.n)
    result["setup_s"] = round(time.monotonic() - t, 1)
    c.log(f"{case.name}: {case.n} roots ready in {result['setup_s']}s")
    base_config = ("/mnt/snap1/image/config.json" if case.scenario == "thin"
                   else f"{c.ORIGIN_MNT}/image/config.json")
    # The image's secret, from its origin or a snapshot of it.
    c.set_pcdedup(case, os.path.join("/mnt/snap1" if case.scenario == "thin"
                                      else c.ORIGIN_MNT, c.IMAGE_SECRET))
    setup_cgroups()
    c.drop_caches()
    time.sleep(1)
    m0, d0 = c.meminfo(), c.disk_sectors_read()
    result["pcdedup_before"] = c.pcdedup_status()
    t_all = time.monotonic()
    for i in range(1, case.n + 1):
        dt = spawn(i, roots[i - 1], base_config, "idle", p.get("pass_s", 0.0))
        result["start_s"].append(round(dt, 4))
        if i not in case.samples:
            continue
        s = sample(i, m0, d0, t_all, False, p)
        result["samples"].append(s)
        log_sample(s, dt, False)
        c.write_json(a.out, result)


def profile_container(i, base_config, make_root, p, result):
    """Container I started alone (the others frozen) under KmemTrace, its
    root mounted (MAKE_ROOT) inside the window: what it adds to the kernel's
    memory, by allocation site, once it has read its hot set twice; then it
    is frozen too while frees settle."""
    others = range(1, i)
    freeze(others, True)
    time.sleep(1)
    trace = memprof.KmemTrace(WORK) if memprof.KmemTrace.available() else None
    prof = {"container": i, "before": memprof.snapshot()}
    if trace:
        trace.start()
    try:
        dt = spawn(i, make_root(), base_config, "loop", p.get("pass_s", 0.0))
    except RuntimeError:
        if trace:
            trace.stop()
        freeze(others, False)
        raise
    wait_passes(i, 2, 3 * p.get("first_pass_s", 30))
    freeze([i], True)
    time.sleep(p.get("profile_drain_s", 3))
    prof["after"] = memprof.snapshot()
    prof["memcg"] = memcg_sums([memory_stat(f"{CGROOT}/c{i}")])
    prof["passes"] = counts(i)[-1][0]
    if trace:
        prof["trace"] = trace.stop()
    freeze(range(1, i + 1), False)
    result["profile"] = prof
    c.log(f"profile of container {i}: {prof['passes']} passes, "
          f"{(prof.get('trace') or {}).get('events')} kmem events")
    return dt


def run_density(case, a, result):
    """Containers added one by one until a sample fails (density_pass), the
    case's N or its time budget. Samples at case.samples, and at every N
    once the headroom (free memory above the high watermarks) is under
    what the next coarse step would take, or once anything refaults or is
    read from the disk in a window. A sample that fails on its window alone
    (reads or pace; no container gone, no OOM kill) is measured once more:
    the case fails there only when the second window fails too."""
    p = case.params
    fit = p.get("fit_fraction", 0.05)
    roots = Roots(case.scenario, p.get("snap_batch", 8), p.get("snap_options", "nouuid"),
                  p.get("tag_level"))
    base_config, secret, rootfs = roots.prepare()
    files, hot_bytes, img_files, img_bytes = hot_set(rootfs, p.get("hot_fraction"))
    result["hot_set"] = {"files": len(files), "bytes": hot_bytes, "image_files": img_files,
                         "image_bytes": img_bytes, "fraction": p.get("hot_fraction")}
    p = dict(p, nominal_bytes_s=hot_bytes / p.get("pass_s", 1.5))
    min_pace = p.get("min_pace", 0.5)
    os.makedirs(WORK, exist_ok=True)
    shutil.copy(base_config, f"{WORK}/config.json")
    base_config = f"{WORK}/config.json"
    c.set_pcdedup(case, secret)
    if case.scenario == "thin":
        c.thinpool.umount("/mnt/snap1")
    setup_cgroups()
    c.drop_caches()
    time.sleep(1)
    m0, d0 = c.meminfo(), c.disk_sectors_read()
    result["before"] = memprof.snapshot()
    result["watermark_high_kb"] = wm = memprof.watermark_high_kb()
    result["pcdedup_before"] = c.pcdedup_status()
    coarse = sorted(case.samples)
    knee, prev = False, None
    t_all = time.monotonic()
    for i in range(1, case.n + 1):
        if time.monotonic() - t_all > p.get("max_s", 1e9):
            result["capped"] = "time"
            break
        if p.get("hot_fraction"):
            os.makedirs(f"{WORK}/ctl/c{i}")
            with open(f"{WORK}/ctl/c{i}/files", "w") as f:
                f.write("".join(x + "\n" for x in files))
        t_start = time.monotonic()
        try:
            if i == p.get("profile_at"):
                roots.make(i)  # a snapshot made by lvm ahead, outside the window
                dt = profile_container(i, base_config, lambda: roots.get(i), p, result)
            else:
                dt = spawn(i, roots.get(i), base_config, "loop", p.get("pass_s", 0.0),
                           p.get("start_timeout_s", 180))
        except RuntimeError as e:
            # crun failed or the container was not ready in time: at the
            # limit, memory is what it lacked. A failing sample, taken now.
            s = sample(i, m0, d0, t_all, True, dict(p, first_pass_s=0))
            s.update(start_failed=str(e)[:300], start_failed_s=round(
                time.monotonic() - t_start, 1), knee=knee)
            result["samples"].append(s)
            c.log(f"N={i}: container {i} did not start ({e}): the limit")
            c.write_json(a.out, result)
            break
        result["start_s"].append(round(dt, 4))
        if not knee and i not in coarse:
            continue
        s = sample(i, m0, d0, t_all, True, p)
        ok = density_pass(s, fit, min_pace)
        if not ok and s["alive"] == i and not s["events"].get("oom_kill"):
            c.log(f"N={i}: refault fraction {s['refault_fraction']}, disk "
                  f"{s['disk_fraction']}, pace {s['pace']}: measuring once more")
            first = {k: s[k] for k in ("window_s", "read_mib_s", "refault_pages_s",
                                        "refault_fraction", "disk_read_kb_window",
                                        "disk_fraction", "pace", "events", "alive")}
            s = sample(i, m0, d0, t_all, True, dict(p, settle_s=0))
            s["first_window"] = first
            ok = density_pass(s, fit, min_pace)
        s["knee"] = knee
        result["samples"].append(s)
        log_sample(s, dt, True)
        c.write_json(a.out, result)
        if not ok:
            c.log(f"N={i}: fails (refaults over {fit:.0%} of reads; disk reads over "
                  f"{fit:.0%} of reads or under {min_pace:.0%} of their pace with memory tight; "
                  "an OOM kill or a container gone): the limit")
            break
        # Sample every N from here when the next coarse step could cross
        # the limit: free memory above the watermarks under what the
        # containers took per container so far times that step, or refaults.
        nxt = next((n for n in coarse if n > i), case.n)
        ref = prev or {"n": 0, "memfree_kb": m0["MemFree"]}
        per = max(0, ref["memfree_kb"] - s["memfree_kb"]) / (i - ref["n"])
        if (s["refault_pages_s"] > 0 or (s["disk_fraction"] or 0) > fit / 2
                or s["memfree_kb"] - wm < (nxt - i + 1) * per):
            if not knee:
                c.log(f"N={i}: near the limit (free {s['memfree_kb'] >> 10} MiB, "
                      f"{per / 1024:.1f} MiB per container): sampling every N")
            knee = True
        prev = s
    else:
        result["capped"] = "n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_case_argument(ap)
    a = ap.parse_args()
    case = a.case
    result = {"case": case.name, "guest": c.guest_info(), "samples": [], "start_s": [],
              "error": None, "capped": None}
    c.activate_vg()
    try:
        if case.kind == "density":
            run_density(case, a, result)
        else:
            run_idle(case, a, result)
    except Exception as e:  # a failed container ends the case; the data so far stays
        result["error"] = f"{type(e).__name__}: {e}"
        c.log(f"FAILED: {result['error']}")
    c.write_json(a.out, result)
    return 1 if result["error"] else 0


if __name__ == "__main__":
    sys.exit(main())
