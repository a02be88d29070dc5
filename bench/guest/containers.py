#!/usr/bin/env python3
"""Start containers one after another on one scenario and sample memory.
Usage: containers.py SCENARIO DEDUP MAX_N SAMPLES OUTNAME
  SCENARIO  shared (overlayfs, one lower) | distinct (overlayfs, one lower
            per container, reflink copies) | thin (XFS on dm-thin snapshots)
  DEDUP     off | full | trust   (pcdedup verify mode; off = leave disabled),
            optionally with -minS: sysfs min_size S (e.g. trust-min0)
  SAMPLES   comma list of N at which to sample, e.g. 1,5,10,20
Each container: own mount namespace (unshare CLONE_NEWNS) and chroot root,
own cgroup v2 group with the memory controller, python3 importing standard
modules, then sleeping. Start time: spawn until it writes to its pipe."""
import ctypes
import os
import statistics
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common as c  # noqa: E402

CGROOT = "/sys/fs/cgroup/bench"
CLONE_NEWNS = 0x00020000
PAGE = os.sysconf("SC_PAGE_SIZE")
# Files whose mapped pages are traced to physical frames at each sample.
FRAME_FILES = ("python3.11", "libc.so.6")
IMPORTS = "json, email.parser, email.policy, http.client, decimal, sqlite3, " \
          "urllib.parse, xml.etree.ElementTree, logging, argparse, csv, datetime"
PROGRAM = (f"import os, time\nimport {IMPORTS}\n"
           "sqlite3.connect(':memory:').execute('select 1')\n"
           "os.write(int(os.environ['READY_FD']), b'r')\ntime.sleep(1e9)\n")
libc = ctypes.CDLL(None, use_errno=True)


def setup_roots(scenario, n):
    if scenario == "thin":
        c.thin_snapshots(range(1, n + 1))
        return [f"/mnt/snap{i}/rootfs" for i in range(1, n + 1)]
    c.mount_origin()
    roots = []
    for i in range(1, n + 1):
        lower = (f"{c.ORIGIN_MNT}/rootfs" if scenario == "shared"
                 else f"{c.ORIGIN_MNT}/versions/v{i}")
        t, root = f"/mnt/c{i}/upper", f"/mnt/c{i}/root"
        c.mount("tmpfs", t, "tmpfs")
        os.makedirs(f"{t}/u")
        os.makedirs(f"{t}/w")
        c.mount("overlay", root, "overlay",
                f"lowerdir={lower},upperdir={t}/u,workdir={t}/w")
        roots.append(root)
    return roots


def mapped_frames(pids, name):
    """The physical frames behind the resident file pages that PIDS map from
    files called NAME (/proc/PID/maps, then /proc/PID/pagemap: bit 63 present,
    bit 61 file page, bits 0-54 the frame). One copy in memory shows as
    distinct_frames equal to pages_per_container."""
    per, frames = [], set()
    for pid in pids:
        n = 0
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
        per.append(n)
    return {"file": name, "pages_per_container": statistics.median(per),
            "distinct_frames": len(frames)}


def cgroup_file_kb(path):
    with open(f"{path}/memory.stat") as f:
        for line in f:
            k, v = line.split()
            if k == "file":
                return int(v) // 1024
    raise RuntimeError("no file line in memory.stat")


def spawn(i, root):
    cg = f"{CGROOT}/c{i}"
    os.makedirs(cg)
    r, w = os.pipe()

    def enter():
        with open(f"{cg}/cgroup.procs", "w") as f:
            f.write("0")
        if libc.unshare(CLONE_NEWNS) != 0:
            raise OSError(ctypes.get_errno(), "unshare")
        os.chroot(root)
        os.chdir("/")

    env = {"PATH": "/usr/bin", "READY_FD": str(w), "PYTHONDONTWRITEBYTECODE": "1"}
    t0 = time.monotonic()
    proc = subprocess.Popen(["/usr/bin/python3.11", "-c", PROGRAM], env=env,
                            pass_fds=(w,), preexec_fn=enter, stdin=subprocess.DEVNULL)
    os.close(w)
    got = os.read(r, 1)
    dt = time.monotonic() - t0
    os.close(r)
    if got != b"r":
        raise RuntimeError(f"container {i} exited ({proc.wait()}) before it was ready")
    return proc, dt


def main():
    scenario, dedup, max_n, samples, outname = sys.argv[1:6]
    max_n, samples = int(max_n), [int(s) for s in samples.split(",")]
    result = {"scenario": scenario, "dedup": dedup, "kernel": c.kernel_name(),
              "max_n": max_n, "samples": [], "start_s": [], "error": None}
    c.activate_vg()
    t = time.monotonic()
    roots = setup_roots(scenario, max_n)
    result["setup_s"] = round(time.monotonic() - t, 1)
    c.log(f"{scenario}: {max_n} roots ready in {result['setup_s']}s")
    if dedup != "off":
        verify, _, min_size = dedup.partition("-min")
        if min_size:
            with open(f"{c.SYSFS}/min_size", "w") as f:
                f.write(min_size)
        c.set_pcdedup(True, verify)
    with open("/sys/fs/cgroup/cgroup.subtree_control", "w") as f:
        f.write("+memory")
    os.makedirs(CGROOT)
    with open(f"{CGROOT}/cgroup.subtree_control", "w") as f:
        f.write("+memory")
    c.drop_caches()
    time.sleep(1)
    m0, d0, p0 = c.meminfo(), c.disk_sectors_read(), c.pcdedup_counters()
    result["pcdedup_before"] = p0
    procs, t_all = [], time.monotonic()
    try:
        for i in range(1, max_n + 1):
            proc, dt = spawn(i, roots[i - 1])
            procs.append(proc)
            result["start_s"].append(round(dt, 4))
            if i in samples:
                m = c.meminfo()
                per = [cgroup_file_kb(f"{CGROOT}/c{j}") for j in range(1, i + 1)]
                result["samples"].append({
                    "n": i, "elapsed_s": round(time.monotonic() - t_all, 2),
                    "cached_kb": m["Cached"] - m0["Cached"],
                    "memavailable_drop_kb": m0["MemAvailable"] - m["MemAvailable"],
                    "memcg_file_total_kb": cgroup_file_kb(CGROOT),
                    "memcg_file_kb": per,
                    "disk_read_kb": (c.disk_sectors_read() - d0) // 2,
                    "frames": [mapped_frames([p.pid for p in procs], f)
                               for f in FRAME_FILES],
                    "pcdedup": c.pcdedup_counters()})
                s = result["samples"][-1]
                c.log(f"{scenario}/{dedup} N={i}: cached +{s['cached_kb']} KB, "
                      f"memcg file {s['memcg_file_total_kb']} KB, "
                      f"disk read {s['disk_read_kb']} KB, start {dt:.2f}s, frames " +
                      ", ".join(f"{f['file']} {f['distinct_frames']}" for f in s["frames"]))
                c.write_json(outname, result)
    except Exception as e:  # a failed container ends the case; the data so far stays
        result["error"] = f"{type(e).__name__}: {e}"
        c.log(f"FAILED: {result['error']}")
    c.write_json(outname, result)
    for p in procs:
        p.kill()
    return 1 if result["error"] else 0


if __name__ == "__main__":
    sys.exit(main())
