#!/usr/bin/env python3
"""fio: N readers, each on its own thin snapshot of the same 4 data files.
Usage: fio.py --case CASE.json --out NAME.json  (case.n readers; case.params:
modes (pcdedup off | full | trust, all in this boot, each run of every mode
in this order, one right after the other; default [case.verify]), ramp_s,
runtime_s, cold_free_mib, cold_pressure, hash_s; only: the "phase/pattern"
runs to do, all when absent)
Every run is time_based: ramp_s of ramp (not counted), then runtime_s
measured, all N jobs at once, for each engine (psync, mmap) and:
  cold   reader I reads file fI of its snapshot (no two readers read the
         same content: every mode reads the same bytes from disk, and what
         verify costs per byte shows), seq (128k reads) and rand4k-10pct (4k
         random reads of 10% of the file's blocks per pass, about 13 in each
         512 KiB, a fresh random 10% each pass), after drop_caches, with all but
         cold_free_mib of the guest's memory taken by a locked anonymous
         allocation (cold_pressure "mlock"; "memcg": the readers in a cgroup
         whose memory.max is cold_free_mib instead): no pass finds what the
         one before read, every run reads from disk as long as it lasts
         (disk_read_kib says how much)
  cached every reader reads all 4 files (the same content on every
         snapshot), seq and rand4k (4k random reads over all of every file),
         without a memory limit, after one read of every file
For each run: fio's figures, what the disk and pcdedup's fills did, the
guest's CPU time split (/proc/stat: busy, iowait, steal) over the run.
Mode full: the guest's SHA-256 rate (hashrate.py, AF_ALG) before its cold
runs and after them, in the same boot."""
import argparse
import ctypes
import dataclasses
import json
import mmap
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common as c  # noqa: E402
import hashrate  # noqa: E402
from case import add_case_argument  # noqa: E402

CGROUP = "/sys/fs/cgroup/fio-cold"
PARTIAL = 0.10   # rand4k-10pct: this share of the file's 4 KiB blocks a pass
# (phase, pattern, fio rw, bs, reads PARTIAL of the blocks a pass), in this order.
RUNS = (("cached", "seq", "read", "128k", False),
        ("cached", "rand4k", "randread", "4k", False),
        ("cold", "seq", "read", "128k", False),
        ("cold", "rand4k-10pct", "randread", "4k", True))
# A run that has not ended this long after its ramp and runtime: the case
# ends there (a reader stuck in the kernel cannot be killed).
GRACE_S = 60


def cpu_ticks():
    """(busy, iowait, steal, total) jiffies of all CPUs from /proc/stat."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    user, nice, system, idle, iowait, irq, softirq, steal = v[:8]
    return (user + nice + system + irq + softirq, iowait, steal, sum(v[:8]))


def in_cgroup():
    with open(f"{CGROUP}/cgroup.procs", "w") as f:
        f.write("0")


def fio(n, file_mb, engine, rw, bs, partial, ramp_s, runtime_s, cold, cgroup=False):
    """One time_based run of N jobs. COLD: reader I reads file fI of its
    snapshot; else every reader all 4 files. CGROUP: in the capped cgroup."""
    nfiles = 1 if cold else 4
    cmd = ["fio", "--output-format=json", "--readonly", "--invalidate=0",
           "--fadvise_hint=0", "--direct=0", f"--ioengine={engine}", f"--rw={rw}",
           f"--bs={bs}", f"--filesize={file_mb}m", f"--size={nfiles * file_mb}m",
           "--file_service_type=sequential", "--group_reporting", "--time_based",
           f"--ramp_time={ramp_s}", f"--runtime={runtime_s}", "--randrepeat=1"]
    if partial:
        # a pass reads PARTIAL of the blocks, each once (fio's random map), a
        # fresh random set each pass
        cmd.append(f"--io_size={int(nfiles * file_mb * 256 * PARTIAL) * 4}k")
    for i in range(1, n + 1):
        files = f"/mnt/snap{i}/data/f{(i - 1) % 4 + 1}" if cold else \
            ":".join(f"/mnt/snap{i}/data/f{k}" for k in range(1, 5))
        cmd += [f"--name=reader{i}", f"--filename={files}"]
    t0, d0, k0 = time.monotonic(), c.disk_sectors_read(), cpu_ticks()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True,
                           preexec_fn=in_cgroup if cgroup else None,
                           timeout=ramp_s + runtime_s + GRACE_S)
    except subprocess.TimeoutExpired:
        # The blocked tasks' stacks into the kernel log (the case's dmesg):
        # where the readers are stuck, if they are.
        try:
            with open("/proc/sysrq-trigger", "w") as f:
                f.write("w")
        except OSError:
            pass
        raise RuntimeError(f"fio did not end within {ramp_s + runtime_s + GRACE_S} s "
                           "(a reader stuck in the kernel? blocked tasks are in the "
                           "kernel log)") from None
    wall, d1, k1 = time.monotonic() - t0, c.disk_sectors_read(), cpu_ticks()
    if p.returncode:
        raise RuntimeError(f"fio exit {p.returncode}: {p.stderr.strip()[-400:]}")
    out = p.stdout
    job = json.loads(out[out.index("{"):])["jobs"][0]
    read = job["read"]
    pct = read["clat_ns"].get("percentile", {})
    dk = [b - a for a, b in zip(k0, k1)]
    return {"bw_kib_s": read["bw"], "iops": round(read["iops"], 1),
            "io_kib": read["io_kbytes"], "runtime_ms": read["runtime"],
            "ramp_s": ramp_s, "wall_s": round(wall, 2),
            # raw nanoseconds; None when fio gave none. The report decides
            # whether the guest clock can tell them (clock_step_ns).
            "lat_ns": {p: pct.get(f"{p}.000000") for p in ("50", "90", "99")},
            "lat_mean_ns": read["clat_ns"]["mean"],
            # the whole run, ramp included: what came from disk
            "disk_read_kib": (d1 - d0) // 2,
            "cpu": {"busy": dk[0] / dk[3], "iowait": dk[1] / dk[3],
                    "steal": dk[2] / dk[3], "jiffies": dk[3]} if dk[3] else None}


def fills(status):
    """pcdedup_fill (pages) from `pcdedup status --json`; None without pcdedup,
    an error when the kernel has pcdedup but the counter is missing."""
    if status is None:
        return None
    vm = status.get("vmstat")
    if not isinstance(vm, dict) or "pcdedup_fill" not in vm:
        raise RuntimeError("pcdedup status --json: no vmstat pcdedup_fill")
    return int(vm["pcdedup_fill"])


def warm(n):
    """Read every file of every snapshot once (the cached runs' start)."""
    buf = bytearray(1 << 20)
    for i in range(1, n + 1):
        for k in range(1, 5):
            with open(f"/mnt/snap{i}/data/f{k}", "rb", buffering=0) as f:
                while f.readinto(buf):
                    pass


def setup_cgroup(cap_kib):
    with open("/sys/fs/cgroup/cgroup.subtree_control", "w") as f:
        f.write("+memory")
    os.makedirs(CGROUP, exist_ok=True)
    with open(f"{CGROUP}/memory.max", "w") as f:
        f.write(str(cap_kib * 1024))


class Hog:
    """Anonymous memory, populated and locked, that leaves about FREE_KIB of
    the guest's available memory (after drop_caches) to everything else:
    the page cache, fio and the kernel's reserves."""

    # Watermark boosting (after fragmenting allocations) raises the zones'
    # minimum by up to 150% of the high watermark for a while: with the
    # hog's THP-backed locked memory leaving ~48 MiB, a fault then found the
    # zone under its boosted minimum and the OOM killer took the hog (seen
    # in 2 of 4 boots of 20261207-1428). Off for fio's cold runs.
    BOOST = "/proc/sys/vm/watermark_boost_factor"

    def __init__(self, free_kib):
        with open(self.BOOST, "w") as f:
            f.write("0\n")
        c.drop_caches()
        self.size = max(c.meminfo()["MemAvailable"] - free_kib, 0) * 1024
        self.mm = self.buf = None
        if not self.size:
            return
        self.mm = mmap.mmap(-1, self.size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS |
                            mmap.MAP_POPULATE)
        # fio's fork need not copy its page tables
        self.mm.madvise(mmap.MADV_DONTFORK)
        self.buf = (ctypes.c_char * self.size).from_buffer(self.mm)
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.mlock(ctypes.c_void_p(ctypes.addressof(self.buf)),
                      ctypes.c_size_t(self.size)):
            err = ctypes.get_errno()
            self.close()
            raise OSError(err, f"mlock of {self.size >> 20} MiB: {os.strerror(err)}")

    def close(self):
        self.buf = None
        if self.mm is not None:
            self.mm.close()  # munmap: unlocks
            self.mm = None


def one_run(case, n, file_mb, phase, pattern, rw, bs, partial, engine, ramp_s,
            runtime_s, pressure, free_kib):
    """One fio run in CASE's pcdedup mode (already switched), its start
    state made first: the files cached, or dropped under memory pressure."""
    hog = None
    if phase == "cold":
        if pressure == "mlock":
            hog = Hog(free_kib)
        else:
            c.drop_caches()
        time.sleep(1)
    else:
        warm(n)
    f0 = fills(c.pcdedup_status()) if case.dedup else None
    m0 = c.meminfo()
    r = {"verify": case.verify, "engine": engine, "pattern": pattern, "phase": phase,
         "hog_kib": hog and hog.size >> 10, "mem_available_kib": m0["MemAvailable"]}
    try:
        r.update(fio(n, file_mb, engine, rw, bs, partial, ramp_s, runtime_s,
                     phase == "cold", phase == "cold" and pressure == "memcg"))
    finally:
        if hog:
            hog.close()
    f1 = fills(c.pcdedup_status()) if case.dedup else None
    r.update({"cached_kb_delta": c.meminfo()["Cached"] - m0["Cached"],
              # pages pcdedup filled (and, verify=full, hashed) over the
              # whole run, ramp included
              "fill_kib": None if f0 is None else (f1 - f0) * 4})
    c.log(f"fio {case.verify} {engine} {pattern} {phase}: {r['bw_kib_s'] / 1024:.1f} MiB/s, "
          f"disk {r['disk_read_kib'] >> 10} MiB"
          + ("" if r["fill_kib"] is None else f", filled {r['fill_kib'] >> 10} MiB"))
    return r


def main():
    ap = argparse.ArgumentParser(description="fio readers on thin snapshots")
    add_case_argument(ap)
    a = ap.parse_args()
    case, outname, n = a.case, a.out, a.case.n
    ramp_s, runtime_s = case.params.get("ramp_s", 2), case.params.get("runtime_s", 10)
    modes = case.params.get("modes") or [case.verify]
    c.activate_vg()
    c.thin_snapshots(range(1, n + 1))
    file_mb = os.path.getsize("/mnt/snap1/data/f1") >> 20
    free_kib = case.params.get("cold_free_mib", 48) * 1024
    pressure = case.params.get("cold_pressure", "mlock")
    only = case.params.get("only")
    hash_s = case.params.get("hash_s", 3)
    result = {"case": case.name, "guest": c.guest_info(), "n": n, "file_mib": file_mb,
              "ramp_s": ramp_s, "runtime_s": runtime_s, "cold_free_kib": free_kib,
              "cold_pressure": pressure,
              "modes": modes, "hashrate": [], "runs": [], "error": None}
    try:
        if pressure == "memcg":
            setup_cgroup(free_kib)
        secret = os.path.join("/mnt/snap1", c.IMAGE_SECRET)
        cold_runs = [x for x in RUNS if x[0] == "cold" and
                     (not only or f"{x[0]}/{x[1]}" in only)]
        for phase, pattern, rw, bs, partial in RUNS:
            if only and f"{phase}/{pattern}" not in only:
                continue
            if phase == "cold" and "full" in modes and not result["hashrate"]:
                result["hashrate"].append(hashrate.measure(hash_s))
                c.log(f"sha256 {result['hashrate'][-1]}")
            for engine in ("psync", "mmap"):
                # the modes one right after the other: each ratio to pcdedup
                # off compares runs a minute apart, under the same host load
                for mode in modes:
                    mcase = dataclasses.replace(case, verify=mode)
                    c.set_pcdedup(mcase, secret)
                    result["runs"].append(one_run(mcase, n, file_mb, phase, pattern, rw, bs,
                                                  partial, engine, ramp_s, runtime_s,
                                                  pressure, free_kib))
                    c.write_json(outname, result)
            if (phase, pattern) == cold_runs[-1][:2] and "full" in modes:
                result["hashrate"].append(hashrate.measure(hash_s))
                c.log(f"sha256 {result['hashrate'][-1]}")
        result["pcdedup"] = c.pcdedup_status()
        with open(Hog.BOOST) as f:
            result["watermark_boost_factor"] = int(f.read())
    except Exception as e:
        result["error"] = f"{type(e).__name__}: {e}"
        c.log(f"FAILED: {result['error']}")
    c.write_json(outname, result)
    return 1 if result["error"] else 0


if __name__ == "__main__":
    sys.exit(main())
