#!/bin/bash
# bench/report.py on a small fixture of raw results: the report is written,
# its tables are well formed (one cell per column, numbers right-aligned),
# every target has a row, a missing figure prints as n/a (never 0), latencies
# finer than the guest clock print as n/a, and no machine path leaks in.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
cd "$(dirname "$0")/../.."
repo=$PWD
tmp=$(mktemp -d)
# BENCH_REPORT_KEEP=DIR: copy the fixture's report there (to look at it).
trap 'if [ -n "${BENCH_REPORT_KEEP:-}" ]; then cp -r "$tmp/pcdedup-fixture" "$BENCH_REPORT_KEEP"; fi; rm -rf "$tmp"' EXIT
res=$tmp/pcdedup-fixture
mkdir -p "$res/raw"
plan 70

python3 - "$res/raw" <<'EOF_PY'
import json, os, sys
sys.path.insert(0, "bench/guest")
from case import Case
raw = sys.argv[1]
def save(case, data):
    case.save(os.path.join(raw, f"{case.name}.case.json"))
    if data is not None:
        with open(os.path.join(raw, f"{case.name}.json"), "w") as f:
            json.dump(data, f)
guest = {"release": "6.12.118+", "clocksource": "tsc", "clock_step_ns": 2000, "cpus": 2,
         "mem_total_kb": 480000}
coarse = dict(guest, clocksource="refined-jiffies", clock_step_ns=4000000)
# Density: each sample carries /proc/meminfo and object counts (memprof.py)
# and the containers' memcg sums. Per container: 10 MiB anon, 128 KiB
# stacks, 96 KiB page tables; slab 4 MiB (thin) or 1 MiB (overlay); 1 MiB
# "other kernel" (thin); page cache shared (48000 kB in all) with pcdedup or
# overlayfs' one lower, private (48000 kB each) otherwise.
BEFORE = {"MemTotal": 500000, "MemFree": 400000, "MemAvailable": 420000, "Buffers": 0,
          "Cached": 10000, "Shmem": 100, "AnonPages": 1000, "Slab": 5000,
          "SReclaimable": 0, "SUnreclaim": 5000, "KernelStack": 800, "PageTables": 400,
          "Percpu": 400, "VmallocUsed": 20}
def snap(n, slab, other, cached):
    m = dict(BEFORE)
    grow = {"AnonPages": 10240 * n, "Slab": slab * n, "KernelStack": 128 * n,
            "PageTables": 96 * n, "Cached": cached}
    for k, v in grow.items():
        m[k] += v
    m["SUnreclaim"] = m["Slab"]
    m["MemFree"] -= sum(grow.values()) + other * n
    m["MemAvailable"] = m["MemFree"] + 20000
    return {"meminfo": m, "objects": {"inodes": 5000 + 1100 * n, "inodes_unused": 0,
                                      "dentries": 4000 + 1300 * n, "dentries_unused": 0,
                                      "files": 96}}
def dsample(n, frac, alive=None, slab=4096, other=1024, shared=False):
    cached = 48000 if shared else 48000 * n
    mem = snap(n, slab, other, cached)
    return {"n": n, "read_mib_s": 32.0 * n, "pace": 1.0, "passes_per_s": 2.0,
            "refault_pages_s": frac * 6400,
            "refault_fraction": frac, "disk_fraction": frac, "disk_read_kb_window": 0,
            "alive": n if alive is None else alive,
            "events": {"oom_kill": 0}, "memavailable_kb": mem["meminfo"]["MemAvailable"],
            "memfree_kb": mem["meminfo"]["MemFree"],
            "cached_kb": cached, "memavailable_drop_kb": 50000 * n, "elapsed_s": 10.0 * n,
            "memcg_file_kb": [48000] * n, "memcg_anon_kb": [3000] * n,
            "memcg_file_total_kb": cached, "disk_read_kb": 48000 * n,
            "frames": [{"file": "python3.11", "pages_per_container": 800,
                        "distinct_frames": 800 * n}],
            "pcdedup": {"sysfs": {"pages_saved": 0}, "n_shares": 0},
            "memcg": {"anon": 10240 * n, "slab_reclaimable": 0, "slab_unreclaimable": 512 * n},
            "mem": mem}
params = {"window_s": 3, "settle_s": 1, "fit_fraction": 0.05, "max_s": 900, "pass_s": 1.5}
hot = dict(params, hot_fraction=0.15)
# thin off: N=4 fails (20% refaults): reached 2, first fail 4. thin +
# pcdedup: every N from 6 on, N=8 fails in two windows on disk reads (30%;
# refaults 1%): reached 7. shared
# lower: reached 10, first fail 11. Hot set: thin + pcdedup capped (all 6
# fit), the shared lower reached 4 (at N=6 its containers kept 30% of their
# pace).
traced = {"container": 3, "before": snap(0, 0, 0, 0), "after": snap(1, 4096, 1024, 0),
          "memcg": {"slab_reclaimable": 0, "slab_unreclaimable": 1500}, "passes": 2,
          "trace": {"events": 9000, "lost_events": 0, "seconds": 5.0, "old_frees": {"filp": 3},
                    "pages": [{"caller": "xfs_buf_alloc_pages < xfs_buf_get_map", "pages": 256},
                              {"caller": "allocate_slab < ___slab_alloc", "pages": 400}],
                    "old_page_frees": 10,
                    "live": [{"site": "pcdedup_member_get", "cache": "kmalloc-256",
                              "size": 256, "objects": 1000},
                             {"site": "xfs_inode_alloc", "cache": "xfs_inode", "size": 1024,
                              "objects": 1000},
                             {"site": "__d_alloc", "cache": "dentry", "size": 192,
                              "objects": 1024}]}}
# The shared lower's container 3: overlayfs inodes and the same dentries,
# no XFS buffer pages. Thin + pcdedup's extra: XFS 1000 KiB of inodes and
# 1024 KiB of buffer pages, pcdedup's 250 KiB, less overlayfs' 664 KiB:
# +1610 KiB, pcdedup's 16% of it.
traced_ovl = dict(traced, trace=dict(
    traced["trace"], pages=[{"caller": "allocate_slab < ___slab_alloc", "pages": 200}],
    live=[{"site": "ovl_alloc_inode", "cache": "ovl_inode", "size": 680, "objects": 1000},
          {"site": "__d_alloc", "cache": "dentry", "size": 192, "objects": 1024}]))
# Thin without pcdedup's container 3: the same XFS inodes and dentries,
# 64 KiB of buffer pages (no key attribute blocks), no pcdedup objects:
# what pcdedup causes is its 250 KiB and 960 KiB of buffer pages, 75% of
# the 1610 KiB against the shared lower.
traced_thin_off = dict(traced, trace=dict(
    traced["trace"], pages=[{"caller": "xfs_buf_alloc_pages < xfs_buf_get_map", "pages": 16},
                            {"caller": "allocate_slab < ___slab_alloc", "pages": 400}],
    live=[x for x in traced["trace"]["live"] if x["site"] != "pcdedup_member_get"]))
for name, scen, verify, prm, ns, fr, kw, extra in (
        ("density-thin-off", "thin", "off", params, [1, 2, 4], [0, 0, 0.2], {},
         {"profile": traced_thin_off}),
        ("density-thin-default", "thin", "default", params, [2, 4, 6, 7, 8],
         [0, 0, 0, 0, 0.3], {"shared": True}, {"profile": traced}),
        ("density-shared-off", "shared", "off", params, [2, 4, 8, 9, 10, 11],
         [0, 0, 0, 0, 0, 0.6], {"shared": True, "slab": 1024, "other": 0},
         {"profile": traced_ovl}),
        ("density-distinct-off", "distinct", "off", params, [1, 2, 4], [0, 0.01, 0.6], {}, {}),
        ("density-thin-default-hot", "thin", "default", hot, [2, 4, 6], [0, 0, 0],
         {"shared": True}, {"capped": "n"}),
        ("density-shared-off-hot", "shared", "off", hot, [2, 4, 6], [0, 0, 0.4],
         {"shared": True, "slab": 1024, "other": 0}, {})):
    samples = [dsample(n, f, **kw) for n, f in zip(ns, fr)]
    if fr[-1] and fr[-1] < 0.5:
        samples[-1]["first_window"] = {"refault_fraction": fr[-1]}
    if name == "density-thin-default":
        samples[-1].update(refault_fraction=0.01, refault_pages_s=64.0)
    if name == "density-distinct-off":  # container 4 never got ready
        samples[-1].update(refault_fraction=0, refault_pages_s=0, disk_fraction=0,
                           start_failed="container c4 not ready (exited or 180s): "
                           "Traceback", start_failed_s=180.2)
    if name == "density-shared-off-hot":  # stalled: 30% of their pace
        samples[-1].update(refault_fraction=0, refault_pages_s=0, disk_fraction=0, pace=0.3,
                           first_window={"pace": 0.3})
    data = {"case": name, "guest": guest, "error": None, "capped": None,
            "pcdedup_before": {"enabled": verify != "off", "verify": "full"},
            "start_s": [2.5, 3.0, 3.1, 3.2, 3.3, 3.4, 3.4, 3.5, 3.5, 3.6, 3.6],
            "before": snap(0, 0, 0, 0), "watermark_high_kb": 4000,
            "hot_set": {"files": 900, "bytes": (7 if prm.get("hot_fraction") else 48) << 20,
                        "image_files": 1100, "image_bytes": 48 << 20,
                        "fraction": prm.get("hot_fraction")},
            "samples": samples}
    data.update(extra)
    save(Case(name, "density", scen, verify, n=6 if extra.get("capped") else 64,
              samples=ns, launcher="crun", mem="256M" if name.endswith("-hot") else "512M",
              params=prm), data)
# distinct + pcdedup: the case failed before writing anything
save(Case("density-distinct-default", "density", "distinct", "default", n=50,
          samples=[1, 2, 4, 6], launcher="crun", mem="512M", params=params), None)
# fio: 2 boots, each running every mode. A run: time_based, 2 s ramp + 10 s.
def run(verify, ph, pat, bw, eng="psync", fill=None, lat=(4014000, 8028000)):
    return {"verify": verify, "engine": eng, "pattern": pat, "phase": ph, "bw_kib_s": bw,
            "iops": 100.0, "io_kib": bw * 10, "runtime_ms": 10000, "ramp_s": 2,
            "wall_s": 13.0, "lat_ns": {"50": lat[0], "90": lat[0], "99": lat[1]},
            "lat_mean_ns": 5e6, "disk_read_kib": bw * 12,
            "cpu": {"busy": 0.5, "iowait": 0.1, "steal": 0.0, "jiffies": 2400},
            "cached_kb_delta": 0, "fill_kib": fill}
# cold psync seq (KiB/s), boot 1 / boot 2: off 100000/110000, full
# 45000/50000 (0.45x, missed), trust 95000/96800 (0.95x, 0.88x: 0.92x
# [0.88-0.95x], inconclusive for >= 0.90x). verify=full fills 64 and 72 MiB/s
# (x 12 s) against SHA-256 on all CPUs at 80 MiB/s: 0.85x [0.80-0.90x]; mmap
# 76 and 80: 0.97x [0.95-1.00x]. Latencies: boot 1 has a 4 ms clock (none
# printable), boot 2 a 2 us one: trust's p50 of 250 us prints, its p99 of
# 1.5 us and off's 1.5 us do not.
cold = {"off": [100000, 110000], "full": [45000, 50000], "trust": [95000, 96800]}
for b in (1, 2):
    runs = []
    for verify in ("off", "full", "trust"):
        fill = None if verify == "off" else [64 * 1024 * 12, 72 * 1024 * 12][b - 1]
        mfill = None if verify == "off" else [76 * 1024 * 12, 80 * 1024 * 12][b - 1]
        lat = (250000, 1500) if verify == "trust" else (1500, 1500) if verify == "off" \
            else (4014000, 8028000)
        runs += [run(verify, "cold", "seq", cold[verify][b - 1], fill=fill, lat=lat),
                 run(verify, "cold", "seq", 60000, "mmap", fill=mfill),
                 run(verify, "cached", "seq", 900000)]
    name = f"fio-thin-boot{b}"
    save(Case(name, "fio", "thin", "default", n=4,
              params={"modes": ["off", "full", "trust"]}),
         {"case": name, "guest": coarse if b == 1 else guest, "n": 4, "file_mib": 16,
          "ramp_s": 2, "runtime_s": 10, "cold_free_kib": 49152, "error": None,
          "modes": ["off", "full", "trust"],
          "hashrate": [{"one_cpu_mib_s": 41.0, "all_cpus_mib_s": 80.0, "error": None},
                       {"one_cpu_mib_s": 39.0, "all_cpus_mib_s": 80.0, "error": None}],
          "runs": runs})
# The control: cold seq again on one guest CPU (SHA-256 at 40 MiB/s), out of
# the targets. trust 40 MiB/s at 50% busy: 12.5 ms/MiB of its own; the
# ceiling 1 / (0.0125 + 1 / 40) = 26.7 MiB/s; full fills 24 MiB/s: 0.90x.
save(Case("fio-thin-1cpu", "fio", "thin", "default", n=4, cpus=1,
          params={"modes": ["off", "full", "trust"], "only": ["cold/seq"],
                  "control": "one guest CPU"}),
     {"case": "fio-thin-1cpu", "guest": guest, "n": 4, "file_mib": 16, "ramp_s": 2,
      "runtime_s": 10, "cold_free_kib": 49152, "error": None,
      "modes": ["off", "full", "trust"],
      "hashrate": [{"one_cpu_mib_s": 40.0, "all_cpus_mib_s": 40.0, "error": None}],
      "runs": [run("off", "cold", "seq", 300000),
               run("full", "cold", "seq", 20000, fill=24 * 1024 * 12),
               run("trust", "cold", "seq", 40960, fill=40960 * 12)]})
# A/B micro, 3 arms x 2 boots (icount). untagged open_close: stock 1000/1002,
# security 1003/1005, whole 1010/1012: whole vs stock +1.0% [+0.8, +1.2]
# (within 2%: met; no increase: missed), whole vs security +0.7% [+0.5,
# +0.9] (within 0.3%: missed), security vs stock +0.3% [+0.1, +0.5]
# (inconclusive). stat: whole vs stock +3.0% (missed). read: not measured.
# tagged-b open_close on the whole series: 2100/2130 (2.08x, 2.10x).
# The read split (whole series only), tagged-b - untagged per boot: read
# 3500-2000 / 3530-2002, open_fadvise 2500-1100 / 2530-1102, reread
# 1000-900 / 1010-900: open+close 1090/1118, share file 310/310, reads
# 100/110, read 1500/1528, rest 0/-10.
SPLIT = {"untagged": {"read": [2000, 2002], "open_fadvise": [1100, 1102],
                      "reread": [900, 900]},
         "tagged-b": {"read": [3500, 3530], "open_fadvise": [2500, 2530],
                      "reread": [1000, 1010]}}
ab = {"stock": ("stock", "off", [1000, 1002], [500, 501]),
      "security": ("security", "off", [1003, 1005], [500, 501]),
      "on": ("patched", "full", [1010, 1012], [515, 516])}
for label, (kernel, verify, oc, st) in ab.items():
    for b in (1, 2):
        ops = [{"files": "untagged", "op": "open_close", "ns_per_op": oc[b - 1]},
               {"files": "untagged", "op": "stat", "ns_per_op": st[b - 1]}]
        if label == "on":
            ops.append({"files": "tagged-b", "op": "open_close",
                        "ns_per_op": [2100, 2130][b - 1]})
            ops += [{"files": files, "op": op, "ns_per_op": v[b - 1]}
                    for files, by_op in SPLIT.items() for op, v in by_op.items()]
        save(Case(f"micro-{label}-boot{b}", "micro", "", verify, None, kernel,
                  accel="icount", params={"label": label}),
             {"case": f"micro-{label}-boot{b}", "label": label, "guest": guest,
              "error": None, "ops": ops})
# The profile (whole series): per op untagged 1000 ns, samples a 60, b 40;
# tagged-b 1500 ns, a 50, b 30, pcdedup_x 20 (of 100): per op untagged a
# 600, b 400; tagged-b a 750, b 450, pcdedup_x 300.
prof = [{"files": f, "op": op, "ns_per_op": ns, "period_ns": 20000, "samples": 100,
         "by_symbol": by} for op in ("open_close", "read")
        for f, ns, by in (("untagged", 1000, {"[k] a": 60, "[k] b": 40}),
                          ("tagged-b", 1500, {"[k] a": 50, "[k] b": 30,
                                              "[k] pcdedup_x": 20}))]
save(Case("micro-profile", "micro", "", "full", None, "patched", accel="icount",
          params={"label": "profile"}),
     {"case": "micro-profile", "label": "profile", "guest": guest, "error": None,
      "ops": prof})
with open(os.path.join(raw, "config.json"), "w") as f:
    json.dump({"quick": True, "accel": "tcg", "host_cpus": 2}, f)
host = {"loadavg_before": [1.5, 1.0, 0.5], "loadavg_after": [2.25, 1.2, 0.6],
        "cpu_busy": 0.95, "cpus": 2}
with open(os.path.join(raw, "status.json"), "w") as f:
    json.dump({"cases": [{"case": "density-thin-off", "rc": 0, "seconds": 10, "tail": [],
                          "host": host, "replaces": {"rc": 0, "seconds": 58.3},
                          "note": "status rebuilt"},
                         {"case": "density-distinct-default", "rc": 1, "seconds": 5,
                          "tail": ["boom"]}], "total_seconds": 15, "runs_seconds": [15]}, f)
EOF_PY

check report-runs python3 bench/report.py "$res"
md=$res/report.md
check report-written test -s "$md"

# Tables: every row has as many cells as the header; numeric columns are
# right-aligned (---:) and hold numbers or n/a.
tables_ok() {
	python3 - "$1" <<'EOF_PY'
import re, sys
lines = open(sys.argv[1]).read().split("\n")
bad, i, ntables = [], 0, 0
cells = lambda l: [c.strip() for c in re.split(r"(?<!\\)\|", l.strip())[1:-1]]
while i < len(lines):
    if lines[i].startswith("|") and i + 1 < len(lines) and lines[i + 1].startswith("|---"):
        ntables += 1
        head, sep = cells(lines[i]), cells(lines[i + 1])
        if len(sep) != len(head):
            bad.append(f"line {i + 2}: separator has {len(sep)} cells, header {len(head)}")
        i += 2
        numeric, hasnum = [True] * len(head), [False] * len(head)
        while i < len(lines) and lines[i].startswith("|"):
            row = cells(lines[i])
            if len(row) != len(head):
                bad.append(f"line {i + 1}: {len(row)} cells, header {len(head)}")
            for k, (s, c) in enumerate(zip(sep, row)):
                isnum = c == "n/a" or re.fullmatch(r"-?\d+(\.\d+)?", c)
                numeric[k] = numeric[k] and bool(isnum)
                hasnum[k] = hasnum[k] or (bool(isnum) and c != "n/a")
                if s == "---:" and not isnum:
                    bad.append(f"line {i + 1}: '{c}' in a numeric column")
            i += 1
        for k, s in enumerate(sep):
            if numeric[k] and hasnum[k] and s != "---:":
                bad.append(f"table before line {i + 1}: column '{head[k]}' holds numbers "
                           "but is not right-aligned")
        if i < len(lines) and lines[i].strip():
            bad.append(f"line {i + 1}: text right after a table")
    elif lines[i].startswith("|"):
        bad.append(f"line {i + 1}: table row outside a table")
        i += 1
    else:
        i += 1
print("\n".join(bad) or f"{ntables} tables")
sys.exit(1 if bad or ntables < 5 else 0)
EOF_PY
}
check report-tables-well-formed tables_ok "$md"

# Every row of the one table of targets, by its name.
mapfile -t targets < <(python3 -c '
import csv, sys
rows = csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith("#"))
print("\n".join(r["target"] for r in rows))' bench/targets.csv)
check report-targets-table test "${#targets[@]}" -ge 50
missing=()
for t in "${targets[@]}"; do grep -qF "| $t |" "$md" || missing+=("$t"); done
expect_eq report-every-target-row "" "${missing[*]}"

# The density headline: N reached and first fail. Thin without pcdedup
# reached 2, N=4 failed (20% refaults in two windows); with it 7, N=8
# failed; hot set: capped (every N up to its 6 passed: no first fail);
# distinct + pcdedup has no result: n/a, not 0.
dens_row() { grep -m1 "^| $1 |" "$md" | cut -d'|' -f3-6 | sed 's/ *| */|/g; s/^ *//; s/ *$//'; }
expect_eq report-density-thin-off-fits "48.0|2|4|refaults 20.0% of reads and disk reads 20.0% of reads at N=4 (two windows)" \
	"$(dens_row 'XFS on dm-thin snapshots, pcdedup off')"
expect_eq report-density-bracket "48.0|7|8|disk reads 30.0% of reads at N=8 (two windows)" \
	"$(dens_row 'XFS on dm-thin snapshots, pcdedup on, defaults')"
expect_eq report-density-capped "7.0|6|n/a|capped: every sampled N up to 6 (the case's N) passed" \
	"$(dens_row 'XFS on dm-thin snapshots, pcdedup on, defaults, hot set 15% of the image')"
expect_eq report-density-missing-is-na "n/a|n/a" \
	"$(grep -m1 '^| overlayfs, distinct lowers, pcdedup on, defaults |' "$md" |
		cut -d'|' -f4,5 | tr -d ' ')"
# The hot cases run in less memory (bench.py: density_hot_mem): said.
check report-density-memory-per-case grep -qF 'Guest memory 512M (256M: shared-off-hot, thin-default-hot), ' "$md"
# A case run again (bench.py --resume --rerun) says so, with its first
# run; the density job's time is that of the runs kept.
check report-status-note grep -qF "; 1 case(s): status rebuilt." "$md"
check report-rerun-said grep -qF 'density-thin-off run again (its first run: 58.3 s, status 0); ' "$md"
check report-density-job-time grep -qx 'The density job took 15 s in all, boots included.' "$md"
check report-density-sample-fail grep -q '^| thin-default | 8 | FAIL | 256.0 | 100 | 64.0 | 1.00 | 30.00 |' "$md"
expect_eq report-density-pace "7.0|4|6|read at 30% of their pace at N=6 (two windows)" \
	"$(dens_row 'overlayfs, one shared lower, pcdedup off, hot set 15% of the image')"
# A container that never got ready is the limit: a failing sample, not an
# error that ends the case without a bracket.
expect_eq report-density-start-failed "48.0|2|4|container 4 did not start (container c4 not ready (exited or 180s), after 180.2 s) at N=4" \
	"$(dens_row 'overlayfs, distinct lowers, pcdedup off')"
# A case whose time budget ran out is capped: no first fail, and no verdict
# on a target it is an arm of (the other arm failed at N=9).
time_capped() {
	python3 - "$repo/bench" <<'EOF_PY'
import sys
sys.path[:0] = [sys.argv[1], sys.argv[1] + "/guest"]
import report
from case import Case
def res(ns, fail_at=None):
    return {"samples": [{"n": n, "alive": n, "events": {}, "pace": 1.0,
                         "refault_fraction": 0.5 if n == fail_at else 0.0,
                         "disk_fraction": 0.0} for n in ns],
            "capped": None if fail_at else "time", "start_s": [1.0] * ns[-1], "error": None}
p = {"fit_fraction": 0.01, "min_pace": 0.2, "max_s": 300}
on = Case("density-thin-default", "density", "thin", "default", n=64, params=p)
off = Case("density-thin-off", "density", "thin", "off", n=64, params=p)
dens = {on.name: (on, res([4, 8, 12, 13])), off.name: (off, res([2, 4, 8, 9], fail_at=9))}
print("|".join(str(x) for x in report.density_state(*dens[on.name])))
t = {"target": "t", "want": ">=", "limit": 2.0, "unit": "x"}
print("|".join(report.target_row(t, report.density_figures(
    {n: [cd] for n, cd in dens.items()})["density/thin/on-vs-off"])[2:]))
EOF_PY
}
expect_eq report-density-time-capped "13|None|time|capped: the case's time budget (300 s) ran out at N=13
1.62x (N 13 vs 8; first fail n/a vs 9)|n/a (capped: thin-default (no failing N))" "$(time_capped)"
# The first container never got ready: N reached 0, and the report is
# still written (no start time to take a median of).
first_start_fails() {
	python3 - "$repo/bench" <<'EOF_PY'
import sys, tempfile
sys.path[:0] = [sys.argv[1], sys.argv[1] + "/guest"]
import report
from case import Case
c = Case("density-shared-off", "density", "shared", "off", n=64,
         params={"fit_fraction": 0.01, "min_pace": 0.2, "max_s": 60})
s = {"n": 1, "alive": 1, "pace": 0.7, "refault_fraction": 0.0, "disk_fraction": 0.0,
     "refault_pages_s": 0.0, "read_mib_s": 22.0, "memfree_kb": 390000,
     "memavailable_kb": 440000, "cached_kb": 52000, "events": {"oom_kill": 0},
     "start_failed": "container c1 not ready (exited or 0.2s): ", "start_failed_s": 5.6}
md = []
with tempfile.TemporaryDirectory() as out:
    report.density_section(out, {c.name: [(c, {"samples": [s], "start_s": [], "error": None,
                                               "capped": None})]}, md)
row = next(l for l in md if l.startswith("| overlayfs, one shared lower"))
print("|".join(x.strip() for x in row.split("|")[3:6]))
EOF_PY
}
expect_eq report-density-first-start-fails "0|1|container 1 did not start (container c1 not ready (exited or 0.2s), after 5.6 s) at N=1" \
	"$(first_start_fails 2>&1)"
# A slow pace fails a sample only when memory is tight (reclaim in the
# window, or free memory under twice the high watermarks): a guest slowed by
# other work on the host's cores, with memory to spare, is no limit.
pace_rule() {
	python3 - "$repo/bench" <<'EOF_PY'
import sys
sys.path[:0] = [sys.argv[1], sys.argv[1] + "/guest"]
from case import density_pass
base = {"n": 12, "alive": 12, "pace": 0.1, "refault_fraction": 0.0, "disk_fraction": 0.0,
        "memfree_kb": 200000, "watermark_high_kb": 4000,
        "events": {"oom_kill": 0, "pgscan_kswapd": 0, "pgscan_direct": 0, "slabs_scanned": 0}}
for what, change in (("spare", {}), ("slab shrinkers", {"slabs_scanned": 10}),
                     ("direct reclaim", {"pgscan_direct": 3}),
                     ("low free", {"memfree_kb": 7000}), ("no watermark", {"watermark_high_kb": None}),
                     ("fast", {"pace": 0.9, "memfree_kb": 7000})):
    s = dict(base, events=dict(base["events"]))
    for k, v in change.items():
        (s["events"] if k in s["events"] else s)[k] = v
    print(f"{what}: {'pass' if density_pass(s, 0.01, 0.2) else 'fail'}")
EOF_PY
}
expect_eq report-density-pace-needs-tight-memory "spare: pass
slab shrinkers: fail
direct reclaim: fail
low free: fail
no watermark: fail
fast: pass" "$(pace_rule)"
# Disk reads over the limit fail a sample only when memory is tight: with
# memory to spare they are a new snapshot read cold (its mount reads about
# 1 MiB, over 1% of a small hot set's reads). Refaults fail it always.
disk_rule() {
	python3 - "$repo/bench" <<'EOF_PY'
import sys
sys.path[:0] = [sys.argv[1], sys.argv[1] + "/guest"]
from case import density_pass
base = {"n": 4, "alive": 4, "pace": 1.1, "refault_fraction": 0.0, "disk_fraction": 0.0117,
        "memfree_kb": 367000, "watermark_high_kb": 4000,
        "events": {"oom_kill": 0, "pgscan_kswapd": 0, "pgscan_direct": 0, "slabs_scanned": 0}}
for what, change in (("spare", {}), ("kswapd", {"pgscan_kswapd": 40}),
                     ("low free", {"memfree_kb": 7000}),
                     ("refaults spare", {"refault_fraction": 0.02, "disk_fraction": 0.0})):
    s = dict(base, events=dict(base["events"]))
    for k, v in change.items():
        (s["events"] if k in s["events"] else s)[k] = v
    print(f"{what}: {'pass' if density_pass(s, 0.01, 0.2) else 'fail'}")
EOF_PY
}
expect_eq report-density-disk-needs-tight-memory "spare: pass
kswapd: fail
low free: fail
refaults spare: fail" "$(disk_rule)"
# bench.py: every density case's coarse samples end at its N (a case that
# passes them all is capped at N, not at the last sample below it), and the
# density job stays within its time budget when each case stops within its
# ramp budget and overhead, whatever the cases before it took.
bench_density() {
	python3 - "$repo/bench" <<'EOF_PY'
import sys
sys.path[:0] = [sys.argv[1], sys.argv[1] + "/guest"]
import bench
for label, cfg in (("full", bench.FULL), ("quick", bench.QUICK)):
    dens = [c for c in bench.make_cases(cfg, "tcg") if c.kind == "density"]
    bad = [c.name for c in dens if c.samples[-1] != c.n or max(c.samples) > c.n]
    over = []
    for took in (0, 60, 600, 10 ** 4):  # what each case takes beyond its budget
        used = 0
        for k in range(len(dens)):
            m = bench.density_max_s(cfg, used, len(dens) - k - 1)
            used += min(m + bench.DENSITY_OVERHEAD_S, m + took)
        if used > cfg["density_budget_s"]:
            over.append(f"{used} s > {cfg['density_budget_s']} s")
    first = bench.density_max_s(cfg, 0, len(dens) - 1)
    print(f"{label}: samples end at N: {bad or 'yes'}; within budget: {over or 'yes'}; "
          f"first case's budget {first} s of {cfg['density_max_s']}")
EOF_PY
}
expect_eq bench-density-plan "full: samples end at N: yes; within budget: yes; first case's budget 1500 s of 1500
quick: samples end at N: yes; within budget: yes; first case's budget 420 s of 420" "$(bench_density)"
# A resumed run that selected one case keeps the others' statuses, in
# their order, the one it ran in its place, a new one last.
expect_eq bench-resume-keeps-statuses "a:0 b:1 c:0 d:0" "$(python3 - <<'EOF_PY'
import sys
sys.path.insert(0, "bench")
import bench
m = bench.merge_statuses([{"case": "a", "rc": 0}, {"case": "b", "rc": 0}, {"case": "c", "rc": 0}],
                         [{"case": "b", "rc": 1}, {"case": "d", "rc": 0}])
print(" ".join(f"{s['case']}:{s['rc']}" for s in m))
EOF_PY
)"
target() { grep -F "| $1 |" "$md" | cut -d'|' -f4,5 | sed 's/^ *//; s/ *| */|/; s/ *$//'; }
expect_eq report-target-missing-is-na "n/a|n/a (not measured)" \
	"$(target 'density, thin, hot set 15% of the image: containers that fit with pcdedup vs without')"
# Met or missed, and by how much, on a bracket: thin + pcdedup fits 7
# exactly (7 passed, 8 failed), without it 2 to 3 (N=4 failed): 7/3 to 7/2;
# the shared lower fits 10: 0.70x. A capped arm gives no verdict.
expect_eq report-target-met-by "3.50x [2.33-3.50x] (N 7 vs 2; first fail 8 vs 4)|**met** (1.50x to spare)" \
	"$(target 'density, thin: containers that fit with pcdedup vs without')"
expect_eq report-target-density-missed "0.70x [0.70-0.70x] (N 7 vs 10; first fail 8 vs 11)|**missed** (0.25x short)" \
	"$(target 'density, thin: containers that fit with pcdedup vs overlayfs shared lower')"
expect_eq report-target-density-capped "1.50x (N 6 vs 4; first fail n/a vs 6)|n/a (capped: thin-default-hot (no failing N))" \
	"$(target 'density, thin, hot set 15% of the image: containers that fit with pcdedup vs overlayfs shared lower')"
# Per container at N reached (differences at the same N), by category: slab 4 MiB (thin) against 1 MiB
# (shared lower), 1 MiB in no meminfo field; 1100 inodes each. The traced
# container: pcdedup's members (1000 x 256 B), XFS inodes, dentries.
memcell() {
	python3 - "$md" "$1" "$2" <<'EOF_PY'
import re, sys
lines = open(sys.argv[1]).read().split("\n")
cells = lambda l: [c.strip() for c in l.strip().strip("|").split("|")]
i = next(i for i, l in enumerate(lines) if l.startswith("| MiB per container |"))
head = cells(lines[i])
row = next(cells(l) for l in lines[i + 2:] if l.startswith(f"| {sys.argv[2]} |"))
print(row[head.index(sys.argv[3])])
EOF_PY
}
expect_eq report-memory-slab "4.00|1.00|3.00" \
	"$(memcell 'slab (Slab)' 'thin-default (N=7)')|$(memcell 'slab (Slab)' 'shared-off (N=10)')|$(memcell 'slab (Slab)' 'thin-default - shared-off (both at N=4)')"
expect_eq report-memory-other-and-objects "1.00|1100|0.00" \
	"$(memcell 'other kernel (in no field above)' 'thin-default (N=7)')|$(memcell inodes 'thin-default (N=7)')|$(memcell 'other kernel (in no field above)' 'shared-off (N=10)')"
check report-traced-pcdedup grep -q '^| pcdedup | 0 | 250 | 0 |$' "$md"
check report-traced-xfs-buffer-pages grep -q '^| XFS buffers (metadata, directories) | 0 | 1024 | 64 |$' "$md"
check report-traced-caused-by-pcdedup grep -qF "What pcdedup causes, against thin-off (the same case without it): its own objects (+250 KiB) and XFS buffer pages (+960 KiB: the blocks holding the keys, read by every root), +1210 KiB (75% of the difference)." "$md"
check report-traced-extra-memory grep -qF "**thin-default against shared-off**, the traced container: +1610 KiB of the kernel's own memory (slab objects, and pages of a known owner outside the slab, the page cache and anonymous memory): pages: XFS buffers (metadata, directories) +1024, slab: XFS +1000, slab: pcdedup +250, slab: overlayfs -664. pcdedup's own objects: +250 KiB (16% of the difference)." "$md"
check report-traced-top-site grep -q '^| xfs_inode_alloc | xfs_inode | 1024 | 1000 | 1000.0 | XFS |$' "$md"
expect_eq report-target-missed-by "+3.00% [+2.79%, +3.20%]|**missed** (1.00 points over)" \
	"$(target 'untagged stat, whole series (pcdedup on) vs stock')"
# The limit inside the bracket: inconclusive, for a change and for a ratio.
expect_eq report-target-inconclusive-change "+0.30% [+0.10%, +0.50%]|inconclusive (the limit lies within the spread)" \
	"$(target 'untagged open+close, security series only vs stock')"
expect_eq report-target-inconclusive-ratio "0.92x [0.88-0.95x]|inconclusive (the limit lies within the spread)" \
	"$(target 'fio cold psync seq: verify=trust vs pcdedup off')"
expect_eq report-target-tagged-vs-untagged "2.09x [2.08-2.10x]|**missed** (0.89x over)" \
	"$(target 'cached open+close, tagged (through a share) vs untagged')"
# QUICK has no containers cases: page cache from the density cases, named.
expect_eq report-target-from-density "1.00x [1.00-1.00x] (density-thin-default, N=7)|**met** (0.10x to spare)" \
	"$(target 'page cache, thin + pcdedup (verify=full) vs overlayfs shared lower')"
# The hashing limit: filled 64 and 72 MiB/s against 80 MiB/s (psync), 76 and
# 80 (mmap).
expect_eq report-target-hash-limit "0.85x [0.80-0.90x]|inconclusive (the limit lies within the spread)" \
	"$(target 'verify=full cold psync seq: bytes hashed per second vs the guest'"'"'s SHA-256 rate on all CPUs')"
# The read's own cost from the boot's trust run (92.8 MiB/s, CPUs 50% busy):
# 5.39 ms/MiB; with a MiB hashed at 80 MiB/s, a ceiling of 55.9 MiB/s.
expect_eq report-hash-row "40.0|80.0|43.9|64.0|0.80|5.39|55.9|1.14|50|10|none" \
	"$(grep -m1 '^| fio-thin-boot1 | cold psync seq |' "$md" | cut -d'|' -f4-14 | tr -d ' ')"
# What the missed targets miss by, from the run's own figures. Without its share file a tagged read would
# cost (2001 + 1514 - 310) / 2001. SHA-256 on all CPUs (80 MiB/s) against off's
# 97.7 / 107.4 MiB/s; the fills against the ceilings of 55.9 / 56.2 MiB/s.
# A target met (hash, mmap) gets no line.
why() { grep -F -- "- \`$1\`:" "$md" | grep -o "$2" || echo "no line for $1 with $2"; }
# At the same N (4, the largest both sampled) a thin container takes what
# the fixture gives it beyond a shared-lower one: slab 3 MiB, other kernel
# 1 (at each case's own limit the figure would be usable memory over N).
expect_eq report-why-density "at N=4, the largest N both sampled, a container of thin-default uses 26.94 MiB, 4.00 MiB more than one of shared-off (22.94 MiB): slab +3.00, other kernel +1.00" \
	"$(why density/thin/on-vs-shared 'at N=[0-9]*, .*other kernel [+0-9.]*')"
expect_eq report-why-read "it would be 1.60x" \
	"$(why ab/tagged-vs-untagged/read 'it would be [0-9.]*x')"
expect_eq report-why-hash-bound "all CPUs is 0.78x" \
	"$(why fio/cold/psync/seq/full-vs-off 'all CPUs is [0-9.]*x')"
expect_eq report-why-hash-ceiling "used 1.21x (1.14-1.28)" \
	"$(why hash/cold/psync/seq 'used [0-9.]*x ([0-9.-]*)')"
no_why() { ! grep -qF -- "- \`$1\`:" "$md"; }
check report-why-not-when-met no_why hash/cold/mmap/seq
# The one-CPU control: its own row, a line of its own, out of the targets
# (report-target-hash-limit above would move with it).
expect_eq report-control-hash-row "40.0|40.0|19.5|24.0|0.60|12.50|26.7|0.90|50|10|none" \
	"$(grep -m1 '^| fio-thin-1cpu | cold psync seq |' "$md" | cut -d'|' -f4-14 | tr -d ' ')"
expect_eq report-why-control "they used 0.90x of that CPU's ceiling, the CPU 50% busy" \
	"$(why hash/cold/psync/seq "they used [0-9.]*x of that CPU's ceiling, the CPU [0-9]*% busy")"
# A/B: three arms, the changes stock->security and security->whole.
expect_eq report-ab-three-arms "1001|1004|1011|+0.30%[+0.10,+0.50]|+0.70%[+0.50,+0.90]|2/2/2" \
	"$(grep -m1 '^| untagged | open_close |' "$md" | cut -d'|' -f4-6,10-12 | tr -d ' ')"
# Where a tagged read's extra cost goes: medians over the two boots.
split() { grep -F "| $1" "$md" | cut -d'|' -f3-5 | tr -d ' '; }
expect_eq report-read-split "1104|1090to1118|2
310|310to310|2
105|100to110|2
1514|1500to1528|2
-5|-10to0|2" "$(split 'open+close |'; split 'the share file:'; split 'the reads through it'; split 'open+read+close (read)'; split 'read less the three')"
# The profile: the largest differences first, then the rest and the total.
expect_eq report-profile "[k]pcdedup_x|0|300|300
[k]a|600|750|150
[k]b|400|450|50
theother0functions|0|0|0
total(theopunderperf)|1000|1500|500" \
	"$(awk '/^\| read: function /{on=1; getline; next} on && /^\|/{print} on && !/^\|/{exit}' "$md" |
		cut -d'|' -f2-5 | tr -d ' ')"
# fio: median over boots and its spread; a 4 ms clock gives no percentiles;
# a 2 us clock gives p50 250.0 and no p99 of 1.5 us (below 10 steps).
expect_eq report-fio-median-spread "102.5|97.7-107.4|2" \
	"$(grep -m1 '^| off | cold | psync | seq |' "$md" | cut -d'|' -f6-8 | tr -d ' ')"
fio_row() { grep -m1 "^| $1 | cold | psync | seq |" "$md" | cut -d'|' -f11,12 | tr -d ' '; }
expect_eq report-fio-coarse-clock-na "n/a|n/a" "$(fio_row off)"
expect_eq report-fio-fine-clock "250.0|n/a" "$(fio_row trust)"
check report-no-zero-latency bash -c "! grep -E '^\| (off|trust) \|' '$md' | cut -d'|' -f11,12 | grep -qE '(^|\|) *0(\.0)? *(\||$)'"
# Host load per case.
check report-host-load grep -q '| density-thin-off | density | crun | patched | 512M | ok | 10.0 | 1.50->2.25 | 95 |' "$md"
check report-no-negative-zero bash -c "! grep -qE '(^|[ |])-0(\.0+)?( |$)' '$md'"
check report-no-machine-paths bash -c "! grep -qE '$repo|/work/|/home/|/tmp/|init=' '$md'"
check report-launcher-column grep -q '| density-thin-off | density | crun |' "$md"
if command -v gnuplot >/dev/null; then
	check report-density-plot test -s "$res/density.png"
	check report-memory-plot test -s "$res/memory_vs_n.png"
	check report-start-boxplot test -s "$res/start.png"
else
	# gnuplot-nox is a dependency (scripts/deps.txt): a failure, not a skip.
	fail report-density-plot "no gnuplot"
	fail report-memory-plot "no gnuplot"
	fail report-start-boxplot "no gnuplot"
fi
check report-no-dat-files bash -c "! ls '$res' | grep -q '\.dat$'"

# What a start reads outside the shares: 20 MiB read, the page cache grown
# by 12 MiB (4 MiB of it filled into shares, 1024 pages), over 2
# containers: 4 MiB of metadata each.
start_note() {
	python3 - "$repo/bench" <<'EOF_PY'
import sys
sys.path[:0] = [sys.argv[1], sys.argv[1] + "/guest"]
import report
from case import Case
c = Case("containers-thin-full-patched", "containers", "thin", "full", None, "patched", n=2)
d = {"start_s": [1.0, 3.0], "samples": [{"n": 2, "disk_read_kb": 20480, "cached_kb": 12288,
     "pcdedup": {"vmstat": {"pcdedup_fill": 1024}}}]}
rows = [l for l in report.start_notes({c.name: (c, d)}) if l.startswith("| containers")]
print(rows[0].replace(" ", "") if rows else "none")
EOF_PY
}
expect_eq report-start-reads-outside-shares "|containers-thin-full-patched|2|2.00|20.0|12.0|4.0|4.00|" "$(start_note)"

# An open start target says what each start reads besides file data against
# what one on the shared lower reads besides its data (80 KiB over 2
# containers: 0.04 MiB, not the 4 MiB its data adds); a met one says nothing.
start_why() {
	python3 - "$repo/bench" <<'EOF_PY'
import sys
sys.path[:0] = [sys.argv[1], sys.argv[1] + "/guest"]
import report
from case import Case
def case(scen, verify, read_kb, cached_kb):
    c = Case(f"containers-{scen}-{verify}-patched", "containers", scen, verify, None,
             "patched", n=2)
    return c.name, (c, {"start_s": [1.0, 1.0], "samples": [
        {"n": 2, "disk_read_kb": read_kb, "cached_kb": cached_kb,
         "pcdedup": {"vmstat": {"pcdedup_fill": 1024}}}]})
cont = dict([case("thin", "full", 20480, 12288), case("shared", "off", 8192, 8112),
             case("distinct", "full", 8192, 4096)])
v = {"containers/thin/full/start-vs-shared": "**missed** (0.26x over)",
     "containers/distinct/full/start-vs-shared": "**met** (0.01x to spare)"}
for line in report.start_reasons(v, cont):
    print(line.split(": ", 1)[1])
EOF_PY
}
# An open cached psync target quotes micro's reread: 1000/900 and 1010/900
# on the whole series, 1.12x, 105 instructions on 900; a met one, and an
# open mmap one, are not listed.
cached_why() {
	python3 - "$repo/bench" "$res/raw" <<'EOF_PY'
import sys
sys.path[:0] = [sys.argv[1], sys.argv[1] + "/guest"]
import report
micro = {n: cd for n, cd in report.load_cases(sys.argv[2]).items()
         if cd[0].kind == "micro"}
v = {"fio/cached/psync/rand4k/trust-vs-off": "inconclusive (the limit lies within the spread)",
     "fio/cached/psync/seq/trust-vs-off": "**met** (0.01x to spare)",
     "fio/cached/mmap/seq/full-vs-off-no-slower": "**missed** (0.01x short)"}
for line in report.cached_reasons(v, micro):
    print(line.split(" (")[0])
EOF_PY
}
expect_eq report-why-cached "\`fio/cached/psync/rand4k/trust-vs-off\`: a cached read through a share costs 1.12x a plain one" \
	"$(cached_why)"
expect_eq report-why-start "each start of containers-thin-full-patched read 4.00 MiB from disk besides file data (its own inodes, directories and keys), one on the shared lower 0.04 MiB, 102x (What a container start reads outside the shares)." \
	"$(start_why)"

# No verdict without a spread: one boot each gives the figure and n/a; a
# kernel without AF_ALG hashing gives n/a and says why.
one_boot() {
	python3 - "$repo/bench" <<'EOF_PY'
import sys
sys.path[:0] = [sys.argv[1], sys.argv[1] + "/guest"]
import report
t = {"target": "t", "want": ">=", "limit": 0.9, "unit": "x"}
print("|".join(report.target_row(t, report.ratio_figure([95], [100]))[2:]))
from case import Case
c = Case("fio-thin-boot1", "fio", "thin", "default")
d = {"modes": ["full"],
     "hashrate": [{"one_cpu_mib_s": None, "all_cpus_mib_s": None,
                   "error": "OSError: [Errno 97] Address family not supported"}],
     "runs": [{"verify": "full", "phase": "cold", "engine": "psync", "pattern": "seq",
               "fill_kib": 1024, "ramp_s": 2, "runtime_ms": 10000, "bw_kib_s": 100}]}
f = report.fio_figures({c.name: (c, d)})["hash/cold/psync/seq"]
print("|".join(report.target_row(t, f)[2:]))
EOF_PY
}
expect_eq report-no-spread-no-verdict "0.95x|n/a (no spread: 1 and 1 boots)
n/a|n/a (hash rate not measured: OSError: [Errno 97] Address family not supported)" "$(one_boot)"

# A run without the cases pcdedup off is compared with (only pcdedup on and
# the shared lower, as a partial --only run has): the targets against pcdedup
# off say n/a, never compare the case with itself.
partial_row() {
	local p=$tmp/partial
	cp -r "$res" "$p" && rm -f "$p"/raw/density-thin-off.* "$p"/raw/containers-* &&
		python3 bench/report.py "$p" >/dev/null &&
		grep -F '| page cache, thin + pcdedup (verify=full) vs the same without pcdedup |' "$p/report.md"
}
check report-partial-run-no-self-comparison bash -c "$(declare -f partial_row); tmp='$tmp' res='$res'; partial_row | grep -qF '| n/a |'"

# Density arms booted several times: the later boots (NAME-bK) join their
# arm, the figure is the ratio of the medians of N reached and its bracket
# runs from the lowest N reached to the highest first fail - 1 of the boots.
density_boots() {
	python3 - "$repo/bench" <<'EOF_PY'
import sys
sys.path[:0] = [sys.argv[1], sys.argv[1] + "/guest"]
import report
from case import Case
def res(last):
    return {"samples": [{"n": n, "alive": n, "events": {}, "pace": 1.0,
                         "refault_fraction": 0.5 if n == last + 1 else 0.0,
                         "disk_fraction": 0.0} for n in range(1, last + 2)],
            "capped": None, "start_s": [1.0] * (last + 1), "error": None}
p = {"fit_fraction": 0.01, "min_pace": 0.2, "max_s": 300}
dens = {}
for verify, lasts in (("default", (27, 29, 28)), ("off", (7, 8, 7))):
    for boot, last in enumerate(lasts, 1):
        name = f"density-thin-{verify}" + (f"-b{boot}" if boot > 1 else "")
        c = Case(name, "density", "thin", verify, n=64, params=dict(p, boot=boot))
        dens[name] = (c, res(last))
boots = report.density_boots(dens)
print(" ".join(f"{a}:{len(cds)}" for a, cds in sorted(boots.items())))
t = {"target": "t", "want": ">=", "limit": 2.0, "unit": "x"}
print("|".join(report.target_row(t, report.density_figures(boots)["density/thin/on-vs-off"])[2:]))
EOF_PY
}
expect_eq report-density-boots-bracket "density-thin-default:3 density-thin-off:3
4.00x [3.38-4.14x] (N 27/29/28 vs 7/8/7; first fail 28/30/29 vs 8/9/8)|**met** (2.00x to spare)" \
	"$(density_boots 2>&1)"

# The server ramp's table: each boot's N reached, their median and range,
# and why each boot stopped, in words.
server_ramp() {
	python3 - "$repo/bench" <<'EOF_PY'
import sys, tempfile
sys.path[:0] = [sys.argv[1], sys.argv[1] + "/guest"]
import report_serverramp as r
from case import Case
def res(reached, why):
    rnd = {"round_s": 1.0, "disk_read_kb": 0, "events": {"oom_kill": 0}, "errors": [],
           "alive": 0}
    samples = [{"n": n, "ok": True, "memavailable_drop_kb": 40 * 1024 * n,
                "meminfo": {"Cached": 50000 + 10 * 1024 * n},
                "rounds": [dict(rnd, alive=n)]} for n in range(1, reached + 1)]
    bad = dict(rnd, alive=reached + 1)
    bad.update(why)
    samples.append({"n": reached + 1, "ok": False, "rounds": [bad]})
    return {"pairs": ["redis", "nginx"], "reached": reached, "first_fail": reached + 1,
            "before": {"Cached": 50000}, "samples": samples}
cases = {}
for verify, lasts in (("off", (9, 10, 9)), ("full", (12, 12, 13))):
    for boot, last in enumerate(lasts, 1):
        c = Case(f"serverramp-thin-{verify}-b{boot}", "serverramp", "thin", verify,
                 params={"boot": boot})
        why = {"disk_read_kb": 3072} if verify == "off" else {"events": {"oom_kill": 1}}
        cases[c.name] = (c, res(last, why))
md = []
with tempfile.TemporaryDirectory() as out:
    r.serverramp_section(out, r.load_ramps(cases), md)
for line in md:
    if line.startswith("| thin"):
        print("|".join(x.strip() for x in line.split("|")[2:9]))
EOF_PY
}
expect_eq report-serverramp-rows "pcdedup off|9 / 10 / 9|9.0|9-10|40.0|10.0|N=10: check round read 3.0 MiB; N=11: check round read 3.0 MiB; N=10: check round read 3.0 MiB
pcdedup on (verify=full)|12 / 12 / 13|12.0|12-13|40.0|10.0|N=13: OOM kill; N=13: OOM kill; N=14: OOM kill" \
	"$(server_ramp 2>&1)"

# A ramp boot that stopped on nothing (no failing sample) says so instead
# of a reason it does not have, and a capped one says why.
ramp_reasons() {
	python3 - "$repo/bench" <<'EOF_PY'
import sys
sys.path[:0] = [sys.argv[1], sys.argv[1] + "/guest"]
import report_serverramp as r
print(r.fail_reason({"samples": [{"n": 1, "ok": True}]}))
print(r.fail_reason({"capped": "time", "samples": []}))
print(r.fail_reason({"samples": [{"n": 3, "ok": False, "start_error": "crun: exit 1"}]}))
EOF_PY
}
expect_eq report-serverramp-reasons "no sample failed
capped (time)
N=3: did not start and serve (crun: exit 1)" "$(ramp_reasons 2>&1)"
