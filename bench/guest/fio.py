#!/usr/bin/env python3
"""fio: N readers, each on its own thin snapshot of the same 4 data files,
each read whole (fio's size is the files' size: a verify=full hash of a
member costs what reading it does, not more).
Usage: fio.py --case CASE.json --out NAME.json  (case.verify: off | full | trust,
case.n readers)
For each engine (psync, mmap) and pattern (seq 128k, random 4k): a cold pass
(after drop_caches) and a cached pass, all N jobs at once."""
import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common as c  # noqa: E402
from case import add_case_argument  # noqa: E402

PATTERNS = (("seq", "read", "128k"), ("rand4k", "randread", "4k"))


def fio(n, file_mb, engine, rw, bs):
    cmd = ["fio", "--output-format=json", "--readonly", "--invalidate=0",
           "--fadvise_hint=0", "--direct=0", f"--ioengine={engine}", f"--rw={rw}",
           f"--bs={bs}", f"--filesize={file_mb}m", f"--size={4 * file_mb}m",
           "--file_service_type=sequential", "--group_reporting", "--runtime=60",
           "--randrepeat=1"]
    for i in range(1, n + 1):
        files = ":".join(f"/mnt/snap{i}/data/f{k}" for k in range(1, 5))
        cmd += [f"--name=reader{i}", f"--filename={files}"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        raise RuntimeError(f"fio exit {p.returncode}: {p.stderr.strip()[-400:]}")
    out = p.stdout
    read = json.loads(out[out.index("{"):])["jobs"][0]["read"]
    pct = read["clat_ns"].get("percentile", {})
    return {"bw_kib_s": read["bw"], "iops": round(read["iops"], 1),
            "io_kib": read["io_kbytes"],
            # raw nanoseconds; None when fio gave none. The report decides
            # whether the guest clock can tell them (clock_step_ns).
            "lat_ns": {p: pct.get(f"{p}.000000") for p in ("50", "90", "99")},
            "lat_mean_ns": read["clat_ns"]["mean"]}


def main():
    ap = argparse.ArgumentParser(description="fio readers on thin snapshots")
    add_case_argument(ap)
    a = ap.parse_args()
    case, outname, n = a.case, a.out, a.case.n
    reps_wanted = case.params.get("repeats", 3)
    c.activate_vg()
    c.thin_snapshots(range(1, n + 1))
    file_mb = os.path.getsize("/mnt/snap1/data/f1") >> 20
    result = {"case": case.name, "guest": c.guest_info(), "n": n, "file_mib": file_mb,
              "runs": [], "error": None}
    c.set_pcdedup(case, os.path.join("/mnt/snap1", c.IMAGE_SECRET))
    try:
        for engine in ("psync", "mmap"):
            for pattern, rw, bs in PATTERNS:
                for phase in ("cold", "cached"):
                    # Single passes spread widely under TCG: the median of the repeats,
                    # each cold one after drop_caches (the last one's cache
                    # and disk reads are reported).
                    reps = []
                    for _ in range(reps_wanted):
                        if phase == "cold":
                            c.drop_caches()
                            time.sleep(1)
                        m0, d0 = c.meminfo(), c.disk_sectors_read()
                        reps.append(fio(n, file_mb, engine, rw, bs))
                    r = sorted(reps, key=lambda x: x["bw_kib_s"])[len(reps) // 2]
                    r.update({"engine": engine, "pattern": pattern, "phase": phase,
                              "repeats_bw_kib_s": [x["bw_kib_s"] for x in reps],
                              "cached_kb_after": c.meminfo()["Cached"] - m0["Cached"]
                              if phase == "cold" else None,
                              "disk_read_kb": (c.disk_sectors_read() - d0) // 2,
                              "pcdedup": c.pcdedup_status()})
                    result["runs"].append(r)
                    c.log(f"fio {case.verify} {engine} {pattern} {phase}: "
                          f"{r['bw_kib_s'] / 1024:.1f} MiB/s")
                    c.write_json(outname, result)
    except Exception as e:
        result["error"] = f"{type(e).__name__}: {e}"
        c.log(f"FAILED: {result['error']}")
    c.write_json(outname, result)
    return 1 if result["error"] else 0


if __name__ == "__main__":
    sys.exit(main())
