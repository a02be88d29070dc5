#!/usr/bin/env python3
"""A/B micro-benchmark on a fresh XFS scratch disk 'micro': bench/micro on
untagged files and on tagged files (two tagged copies of the same content).
With LABEL "tag" instead: `pcdedup tag` against sha256sum on a copy of the
python tree. With LABEL "profile": the PROFILE_OPS under `perf record`
(cpu-clock every PERF_PERIOD_NS of guest time: under icount, every
PERF_PERIOD_NS guest instructions), samples counted by function.
Usage: micro.py --case CASE.json --out NAME.json
  case.kind tag: pcdedup tag vs sha256sum; case.kind micro: case.params label
  (stock | security | on: the A/B arms, booted on the stock, security-only
  and whole-series kernels; profile: the whole series), rounds, files,
  min_round_ms"""
import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common as c  # noqa: E402
from case import add_case_argument  # noqa: E402

MNT = "/mnt/micro"
FILE_SIZE = 16384
PROFILE_OPS = ("open_close", "read")
PERF_PERIOD_NS = 20000


def make_files(d, n):
    os.makedirs(d)
    for i in range(n):
        with open(f"{d}/f{i:04d}", "wb") as f:
            f.write(os.urandom(FILE_SIZE))


def timed(cmd):
    c.drop_caches()
    t = time.monotonic()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, shell=isinstance(cmd, str))
    return time.monotonic() - t


def tag_bench():
    tree = f"{MNT}/py"
    c.run("cp", "-r", "/usr/lib/python3.11", tree)
    out = subprocess.run(["du", "-sb", tree], capture_output=True, text=True).stdout
    mb = int(out.split()[0]) / 1e6
    sha = timed(f"find {tree} -type f -print0 | xargs -0 sha256sum")
    tag1 = timed([c.PCDEDUP_TOOL, "tag", "-q", "-j", "1", "--min-size", "0", tree])
    c.run(c.PCDEDUP_TOOL, "untag", tree)
    tag2 = timed([c.PCDEDUP_TOOL, "tag", "-q", "--min-size", "0", tree])
    return {"tree_mb": round(mb, 1), "sha256sum_mb_s": round(mb / sha, 1),
            "tag_j1_mb_s": round(mb / tag1, 1), "tag_mb_s": round(mb / tag2, 1),
            "cpus": os.cpu_count()}


def micro(files, rounds, min_round_ms, ops=None):
    """bench/micro's figures for FILES, one dict per operation."""
    cmd = [f"{c.SRC}/bench/micro", files, f"{MNT}/{files}", rounds, min_round_ms]
    out = subprocess.run(cmd + ([",".join(ops)] if ops else []),
                         check=True, capture_output=True, text=True).stdout
    return [json.loads(line) for line in out.splitlines()]


def profile(files, op, rounds, min_round_ms):
    """OP on FILES under perf: its micro figures, and the samples by
    function ("[k] name": kernel; "[.] name": user space)."""
    data = f"/tmp/perf-{files}-{op}.data"
    rec = subprocess.run(["perf", "record", "-q", "-e", "cpu-clock",
                          "-c", str(PERF_PERIOD_NS), "-o", data, "--",
                          f"{c.SRC}/bench/micro", files, f"{MNT}/{files}", rounds,
                          min_round_ms, op],
                         check=True, capture_output=True, text=True)
    out = subprocess.run(["perf", "report", "-i", data, "--stdio", "-q", "--sort", "sym",
                          "--no-children", "-F", "sample,sym"],
                         check=True, capture_output=True, text=True).stdout
    # Its figure under perf (the sampling's own cost included) is what the
    # samples share out: a function's share of them times this.
    result = json.loads(rec.stdout)
    by_symbol = {}
    for line in out.splitlines():
        count, _, sym = line.strip().partition(" ")
        if count.isdigit():
            by_symbol[sym.strip()] = by_symbol.get(sym.strip(), 0) + int(count)
    result.update(period_ns=PERF_PERIOD_NS, samples=sum(by_symbol.values()),
                  by_symbol=by_symbol)
    return result


def main():
    ap = argparse.ArgumentParser(description="A/B micro-benchmark")
    add_case_argument(ap)
    a = ap.parse_args()
    case, outname = a.case, a.out
    label = "tag" if case.kind == "tag" else case.params["label"]
    rounds, nfiles = str(case.params.get("rounds", 5)), case.params.get("files", 300)
    min_round_ms = str(case.params.get("min_round_ms", 50))
    result = {"case": case.name, "label": label, "guest": c.guest_info(), "ops": [],
              "error": None}
    try:
        c.run("mkfs.xfs", "-q", "/dev/disk/by-name/micro")
        c.mount("/dev/disk/by-name/micro", MNT, "xfs")
        # This boot's secret: the keys tagged here are made with it, and
        # set_pcdedup() loads it.
        c.use_secret(c.BOOT_SECRET)
        if case.kind == "tag":
            result["tag"] = tag_bench()
            c.write_json(outname, result)
            return 0
        make_files(f"{MNT}/untagged", int(nfiles))
        make_files(f"{MNT}/tagged-a", int(nfiles))
        c.run("cp", "-a", f"{MNT}/tagged-a", f"{MNT}/tagged-b")
        c.run(c.PCDEDUP_TOOL, "tag", "-q", f"{MNT}/tagged-a", f"{MNT}/tagged-b")
        c.set_pcdedup(case)
        c.drop_caches()
        subprocess.run(f"cat {MNT}/tagged-a/* >/dev/null", shell=True, check=True)
        for files in ("untagged", "tagged-b"):
            if label == "profile":
                result["ops"] += [profile(files, op, rounds, min_round_ms)
                                  for op in PROFILE_OPS]
            else:
                result["ops"] += micro(files, rounds, min_round_ms)
        result["pcdedup"] = c.pcdedup_status()
    except Exception as e:
        result["error"] = f"{type(e).__name__}: {e}"
        c.log(f"FAILED: {result['error']}")
    c.write_json(outname, result)
    for op in result["ops"]:
        c.log(f"{label} {op['files']} {op['op']}: {op['ns_per_op']} ns")
    return 1 if result["error"] else 0


if __name__ == "__main__":
    sys.exit(main())
