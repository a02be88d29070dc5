#!/usr/bin/env python3
"""Write report.md, CSVs and gnuplot PNGs for one results folder and print
the targets. Every figure comes from raw/ of that run: NAME.case.json (the
case, bench/guest/case.py) and NAME.json (what the guest measured).
Usage: bench/report.py RESULTS_DIR"""
import csv
import glob
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "guest"))
from case import Case  # noqa: E402

NA = "n/a"
# A latency is printed only when it spans at least this many clock steps.
MIN_CLOCK_STEPS = 10


def mib(kb):
    return None if kb is None else kb / 1024


def table(cols, rows):
    """A markdown table. COLS: (header, decimals) with decimals None for text
    (left-aligned) or an int for numbers (right-aligned, fixed decimals).
    None, or a missing cell, prints as n/a."""
    out = ["| " + " | ".join(h for h, _ in cols) + " |",
           "|" + "|".join("---" if d is None else "---:" for _, d in cols) + "|"]
    for r in rows:
        cells = []
        for (_, d), v in zip(cols, list(r) + [None] * (len(cols) - len(r))):
            if v is None or v == "":
                cells.append(NA)
            elif d is None or isinstance(v, str):
                cells.append(str(v).replace("|", "\\|"))
            else:
                s = f"{v:.{d}f}"
                cells.append(s[1:] if s.startswith("-") and float(s) == 0 else s)
        out.append("| " + " | ".join(cells) + " |")
    return out + [""]


def load_cases(raw):
    """(Case, result or None) by name, in run order (Case.order)."""
    out = {}
    for case in sorted((Case.load(p) for p in glob.glob(os.path.join(raw, "*.case.json"))),
                       key=lambda c: (c.order, c.name)):
        res = os.path.join(raw, f"{case.name}.json")
        data = None
        if os.path.exists(res):
            with open(res) as f:
                data = json.load(f)
        out[case.name] = (case, data)
    return out


def read_json(path, default=None):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return default


def gnuplot(results, script):
    p = subprocess.run(["gnuplot"], input=script, text=True, cwd=results,
                       capture_output=True)
    if p.returncode:
        print(f"report: gnuplot failed: {p.stderr.strip()}", file=sys.stderr)


def datablock(name, rows):
    return f"${name} << EOD\n" + "\n".join(" ".join(str(x) for x in r) for r in rows) + \
        "\nEOD\n"


def write_csv(results, name, header, rows):
    with open(os.path.join(results, name), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)


# ---- density ---------------------------------------------------------------

def density_fit(case, d):
    """(N reached, why the case stopped): the largest sampled N at which every
    container ran, nothing was OOM-killed and refaults stayed below
    fit_fraction of what the containers read."""
    fit = case.params.get("fit_fraction", 0.05)
    reached = 0
    for s in d["samples"]:
        ok = (s.get("alive") == s["n"] and not s["events"].get("oom_kill")
              and s.get("refault_fraction") is not None and s["refault_fraction"] <= fit)
        if not ok:
            break
        reached = s["n"]
    if d.get("error"):
        why = f"failed: {d['error']}"
    elif d.get("stopped"):
        why = f"stopped at {d['stopped']}"
    elif d["samples"] and d["samples"][-1]["n"] >= case.n and reached == case.n:
        why = f"all {case.n} fit (the case's cap)"
    else:
        why = "refaults above the limit from the N after"
    return reached, why


def density_section(results, dens, md):
    if not dens:
        return
    c0 = next(iter(dens.values()))[0]
    fit = c0.params.get("fit_fraction", 0.05)
    md += ["## Density: how many containers fit", "",
           f"Guest memory {c0.mem}, {c0.cpus} CPUs. Each container (crun, cgroup v2) "
           "imports the standard modules, then reads every file of its image in a "
           "loop: its hot set is the whole image. Containers start one after another; "
           f"at each N, after {c0.params.get('settle_s')} s, a window of "
           f"{c0.params.get('window_s')} s measures the containers' aggregate read "
           "throughput and the file refaults (`workingset_refault_file` in "
           "/proc/vmstat: pages read again from disk soon after reclaim). "
           f"**N reached**: the largest N at which refaults stayed at or below "
           f"{fit:.0%} of the bytes read, every container ran and nothing was "
           "OOM-killed. A case stops once refaults pass "
           f"{c0.params.get('stop_fraction', 0.5):.0%}.", "",
           "![density](density.png)", ""]
    rows, csvrows, plot = [], [], []
    for name, (case, d) in dens.items():
        if not d:
            rows.append([case.label(), None, "no result (case failed before writing)"])
            continue
        reached, why = density_fit(case, d)
        last = next((s for s in d["samples"] if s["n"] == reached), None)
        rows.append([case.label(), reached, why,
                     last["read_mib_s"] if last else None])
        pts = []
        for s in d["samples"]:
            csvrows.append([name, s["n"], s["read_mib_s"], s["refault_pages_s"],
                            s["refault_fraction"], s["alive"], s["events"].get("oom_kill"),
                            s["memavailable_kb"], s["cached_kb"]])
            pts.append((s["n"], s["read_mib_s"], max(s["refault_pages_s"], 0.1)))
        plot.append((case.label(), pts))
    md += table([("case", None), ("N reached", 0), ("limit", None),
                 ("read MiB/s at N reached", 1)], rows)
    write_csv(results, "density.csv", ["case", "n", "read_mib_s", "refault_pages_s",
                                       "refault_fraction", "alive", "oom_kills",
                                       "memavailable_kb", "cached_kb"], csvrows)
    detail = []
    for name, (case, d) in dens.items():
        for s in (d or {}).get("samples", []):
            frac = s["refault_fraction"]
            detail.append([case.label(), s["n"], s["read_mib_s"], s["refault_pages_s"],
                           None if frac is None else frac * 100, s["alive"],
                           mib(s["memavailable_kb"]), mib(s["cached_kb"]),
                           statistics.median(d["start_s"][:s["n"]])])
    md += ["Every sample:", ""]
    md += table([("case", None), ("N", 0), ("read MiB/s", 1), ("refaults pages/s", 1),
                 ("refaulted % of read", 2), ("containers running", 0),
                 ("MemAvailable MiB", 1), ("Cached delta MiB", 1),
                 ("start median s", 2)], detail)
    blocks = "".join(datablock(f"d{i}", pts) for i, (_, pts) in enumerate(plot))
    thr = ", ".join(f"$d{i} using 1:2 with linespoints lw 2 title '{t}'"
                    for i, (t, _) in enumerate(plot))
    ref = ", ".join(f"$d{i} using 1:3 with linespoints lw 2 notitle"
                    for i, (t, _) in enumerate(plot))
    gnuplot(results, blocks + f"""set terminal pngcairo size 1100,800 noenhanced
set output 'density.png'
set multiplot layout 2,1 title 'Containers in {c0.mem} of guest memory (crun, TCG)'
set key outside right top vertical
set grid
set lmargin 12; set rmargin 52
set xrange [0:*]
set ylabel 'aggregate read MiB/s'
set yrange [0:*]
plot {thr}
set logscale y
set yrange [0.1:*]
set ylabel 'file refaults / s (log; 0 drawn at 0.1)'
set xlabel 'containers (N)'
plot {ref}
unset multiplot
""")


# ---- memory and start --------------------------------------------------------

def containers_section(results, cont, md, from_density=False):
    if not cont:
        return
    md += ["## Page cache vs N", ""]
    if from_density:
        md += ["This run has no idle containers cases (QUICK): the figures below come "
               "from the density cases, whose containers keep reading their files.", ""]
    md += [
           "Deltas from before the first container (fresh boot, caches dropped after "
           "all roots were mounted). `memcg file`: the sum of the containers' cgroup v2 "
           "`memory.stat` `file`; `2nd+ file`: the median of containers 2..N (a page is "
           "charged to the first cgroup that reads it). Shares: `pcdedup status --json`. "
           "Launcher: crun for every case.", ""]
    rows, csvrows = [], []
    for name, (case, d) in cont.items():
        for s in (d or {}).get("samples", []):
            later = s["memcg_file_kb"][1:]
            p = s.get("pcdedup") or {}
            sysfs = p.get("sysfs") or {}
            vals = [s["n"], mib(s["cached_kb"]), mib(s["memavailable_drop_kb"]),
                    mib(s["memcg_file_total_kb"]), mib(s["memcg_file_kb"][0]),
                    mib(statistics.median(later)) if later else None,
                    mib(s["disk_read_kb"]), p.get("n_shares"), sysfs.get("pages_saved")]
            rows.append([case.label()] + vals)
            csvrows.append([name] + vals)
        if d and d.get("error"):
            rows.append([case.label(), len(d["start_s"]), f"FAILED: {d['error']}"])
    md += table([("case", None), ("N", 0), ("Cached MiB", 1), ("MemAvailable drop MiB", 1),
                 ("memcg file MiB", 1), ("1st file MiB", 2), ("2nd+ file MiB", 2),
                 ("disk read MiB", 1), ("shares", 0), ("pages saved", 0)], rows)
    write_csv(results, "containers.csv", ["case", "n", "cached_mib", "memavailable_drop_mib",
                                          "memcg_file_mib", "first_file_mib",
                                          "median_later_file_mib", "disk_read_mib",
                                          "shares", "pages_saved"], csvrows)
    write_csv(results, "start.csv", ["case", "container", "start_s"],
              [[n, i, t] for n, (c, d) in cont.items()
               for i, t in enumerate((d or {}).get("start_s", []), 1)])
    series = [(c.label(), [(s["n"], max(mib(s["cached_kb"]), 0.1)) for s in d["samples"]])
              for c, d in cont.values() if d and d["samples"]]
    starts = [(c.label(), d["start_s"]) for c, d in cont.values() if d and d["start_s"]]
    if series:
        blocks = "".join(datablock(f"m{i}", p) for i, (_, p) in enumerate(series))
        plots = ", ".join(f"$m{i} using 1:2 with linespoints lw 2 title '{t}'"
                          for i, (t, _) in enumerate(series))
        gnuplot(results, blocks + f"""set terminal pngcairo size 1100,600 noenhanced
set output 'memory_vs_n.png'
set title 'Page cache growth (Cached delta) vs number of containers'
set key outside right top vertical
set rmargin 52
set grid; set logscale y
set xlabel 'containers (N)'; set ylabel 'MiB (log scale)'
plot {plots}
""")
        md += ["![memory vs N](memory_vs_n.png)", ""]
    if starts:
        blocks = "".join(datablock(f"s{i}", [(t,) for t in ts]) for i, (_, ts) in
                         enumerate(starts))
        xt = ", ".join(f"'{i + 1}' {i + 1}" for i in range(len(starts)))
        plots = ", ".join(f"$s{i} using ({i + 1}):1 with boxplot notitle"
                          for i in range(len(starts)))
        gnuplot(results, blocks + f"""set terminal pngcairo size 1000,500 noenhanced
set output 'start.png'
set title 'Container start (crun run until imports done), one box per case, TCG'
set style fill solid 0.3; set style boxplot outliers pointtype 7
set xtics ({xt}); set xrange [0.3:{len(starts) + 0.7}]
set grid y; set yrange [0:*]
set xlabel 'case (see the table below)'; set ylabel 'seconds'
plot {plots}
""")
        md += ["![start times](start.png)", ""]
        md += table([("box", 0), ("case", None), ("containers", 0), ("median s", 2),
                     ("p90 s", 2), ("first s", 2)],
                    [[i + 1, t, len(ts), statistics.median(ts),
                      sorted(ts)[int(0.9 * (len(ts) - 1))], ts[0]]
                     for i, (t, ts) in enumerate(starts)])
    frames = []
    for case, d in cont.values():
        s = d["samples"][-1] if d and d["samples"] else None
        for f in (s or {}).get("frames", []):
            per = f["pages_per_container"]
            frames.append([case.label(), s["n"], f["file"], per, f["distinct_frames"],
                           f["distinct_frames"] / per if per else None])
    if frames:
        md += ["### Physical copies: frames behind the containers' mappings", "",
               "At the largest N, the resident file pages the containers map from "
               "`python3.11` and `libc.so.6`, traced through `/proc/PID/pagemap` to "
               "physical frames. One copy in memory: `copies` 1.00; N private copies: N.",
               ""]
        md += table([("case", None), ("N", 0), ("file", None), ("pages per container", 0),
                     ("distinct frames", 0), ("copies", 2)], frames)


# ---- fio ---------------------------------------------------------------------

def latency_us(ns, step_ns):
    """NS in microseconds, or None when the guest clock cannot tell it."""
    if ns is None or ns <= 0 or step_ns is None or ns < MIN_CLOCK_STEPS * step_ns:
        return None
    return ns / 1000


def fio_section(results, fio, md):
    if not fio:
        return
    first = next((d for _, d in fio.values() if d), None)
    n, fmib = (first["n"], first["file_mib"]) if first else (None, None)
    md += ["## fio: readers on their own thin snapshot of the same files", "",
           f"{n} readers, each on its own thin snapshot, each reading 4 files of "
           f"{fmib} MiB whole; `--readonly --invalidate=0 --fadvise_hint=0`; figures "
           "aggregate all jobs. `cold` runs right after drop_caches (with verify=full "
           "every block is hashed as a fill brings it into a share, nothing at open), "
           "`cached` right after it. "
           "Each figure is the median of the case's repeats. Latency percentiles are "
           f"`n/a` when they span fewer than {MIN_CLOCK_STEPS} steps of the guest's "
           "clock (the step is measured in the guest: smallest nonzero difference of "
           "CLOCK_MONOTONIC over 20000 readings).", ""]
    rows, csvrows = [], []
    for name, (case, d) in fio.items():
        if not d:
            rows.append([case.verify, None, None, None, None, None, None, None, None,
                         None, None])
            continue
        step = d["guest"]["clock_step_ns"]
        for r in d["runs"]:
            lat = [latency_us(r["lat_ns"].get(p), step) for p in ("50", "99")]
            vals = [r["bw_kib_s"] / 1024, r["iops"],
                    latency_us(r["lat_mean_ns"], step)] + lat + \
                [mib(r["cached_kb_after"]), mib(r["disk_read_kb"])]
            rows.append([case.verify, r["engine"], r["pattern"], r["phase"]] + vals)
            csvrows.append([case.verify, r["engine"], r["pattern"], r["phase"]] + vals)
        if d.get("error"):
            rows.append([case.verify, f"FAILED: {d['error']}"])
    md += table([("pcdedup", None), ("engine", None), ("pattern", None), ("phase", None),
                 ("MiB/s", 1), ("IOPS", 0), ("lat mean us", 1), ("p50 us", 1),
                 ("p99 us", 1), ("Cached after MiB", 1), ("disk read MiB", 1)], rows)
    write_csv(results, "fio.csv", ["pcdedup", "engine", "pattern", "phase", "mib_s", "iops",
                                   "lat_mean_us", "p50_us", "p99_us", "cached_after_mib",
                                   "disk_read_mib"], csvrows)
    modes = list(dict.fromkeys(r[0] for r in csvrows))
    keys = list(dict.fromkeys(f"{r[1]} {r[2]} {r[3]}" for r in csvrows))
    data = [[f'"{k}"'] + [next((r[4] for r in csvrows if r[0] == m and
                                f"{r[1]} {r[2]} {r[3]}" == k), "NaN") for m in modes]
            for k in keys]
    cols = ", ".join(f"$f using {i + 2}:xtic(1) title 'pcdedup {m}'"
                     for i, m in enumerate(modes))
    gnuplot(results, datablock("f", data) + f"""set terminal pngcairo size 1100,600 noenhanced
set output 'fio.png'
set title 'fio aggregate throughput, TCG'
set ylabel 'MiB/s (log scale)'
set style data histograms; set style fill solid border -1
set logscale y; set grid y; set xtics rotate by -30
set key outside right top vertical
plot {cols}
""")
    md += ["![fio throughput](fio.png)", ""]


# ---- micro -------------------------------------------------------------------

def micro_section(micro, tags, md):
    per, accel = {}, None
    for case, d in micro.values():
        accel = case.accel
        for o in (d or {}).get("ops", []):
            per.setdefault((d["label"], o["files"], o["op"]), []).append(o["ns_per_op"])
    unit = "instructions/op" if accel == "icount" else "ns/op"
    ratios = {}
    if micro:
        md += ["## A/B kernels: micro-benchmark (bench/micro.c)", "",
               "Cost per operation on files already in page cache (16 KiB files on XFS), "
               "one guest CPU. " +
               ("Under QEMU `-icount shift=0` the guest clock advances 1 ns per guest "
                "instruction: the figures are guest instructions per operation, free of "
                "host noise (they do not model cache misses). " if accel == "icount" else
                "") +
               "Per boot the median of 5 rounds; here the median over boots, and the "
               "spread (min-max over boots). Boots interleave stock / patched with "
               "pcdedup off / patched with pcdedup on. `tagged-b` files carry keys.", ""]
        rows = []
        for files in ("untagged", "tagged-b"):
            for op in ("open_close", "stat", "read", "mmap_fault"):
                vals = {k: per.get((k, files, op), []) for k in ("stock", "off", "on")}
                med = {k: statistics.median(v) if v else None for k, v in vals.items()}
                spread = {k: f"{min(v):.0f}-{max(v):.0f}" if v else None
                          for k, v in vals.items()}
                r = [med["off"] / med["stock"] if med["off"] and med["stock"] else None,
                     med["on"] / med["stock"] if med["on"] and med["stock"] else None]
                ratios[(files, op)] = r
                rows.append([files, op, med["stock"], med["off"], med["on"],
                             spread["stock"], spread["off"], spread["on"], r[0], r[1],
                             "/".join(str(len(vals[k])) for k in ("stock", "off", "on"))])
        md += table([("files", None), ("op", None), (f"stock {unit}", 0),
                     (f"off {unit}", 0), (f"on {unit}", 0), ("stock spread", None),
                     ("off spread", None), ("on spread", None), ("off/stock", 3),
                     ("on/stock", 3), ("boots", None)], rows)
    for case, d in tags.values():
        t = (d or {}).get("tag")
        md += ["### `pcdedup tag` vs `sha256sum`", "",
               "Guest, cold cache, the python3.11 tree copied onto XFS"
               + (f" ({t['tree_mb'] / 1.048576:.1f} MiB)." if t else "."), ""]
        md += table([("tool", None), ("MiB/s", 1)],
                    [["sha256sum (find + xargs, 1 process)",
                      t and t["sha256sum_mb_s"] / 1.048576],
                     ["pcdedup tag -j 1", t and t["tag_j1_mb_s"] / 1.048576],
                     ["pcdedup tag (default jobs)", t and t["tag_mb_s"] / 1.048576]])
    return ratios


# ---- targets -----------------------------------------------------------------

def verdict(ok, margin=""):
    """**met** / **missed** with by how much; n/a when not measured."""
    if ok is None:
        return NA
    return ("**met**" if ok else "**missed**") + (f" ({margin})" if margin else "")


def ratio_row(target, got, ref, limit, at_most, what=""):
    """A target on the ratio GOT/REF: at most (or at least) LIMIT. The verdict
    says by how much it is met or missed, in the ratio's own unit."""
    want = f"{'<=' if at_most else '>='} {limit:.2f}x"
    if got is None or ref is None or ref <= 0:
        return (target, want, NA, verdict(None))
    q = got / ref
    ok = q <= limit if at_most else q >= limit
    by = abs(limit - q)
    margin = f"{by:.2f}x {'to spare' if ok else 'over' if at_most else 'short'}"
    return (target, want, f"{q:.2f}x{what}", verdict(ok, margin))


class Pick:
    """The case a target reads: the containers case (scenario, verify) when
    the run has it, else the density case of that scenario with the same
    verify mode (a QUICK run has only density cases; `default` is whatever
    verify the kernel defaults to, which the case's status records)."""

    def __init__(self, cont, dens):
        self.cont, self.dens = cont, dens

    def __call__(self, scen, verify):
        name = f"containers-{scen}-{verify}-patched"
        if name in self.cont:
            return self._last(name, self.cont[name])
        for dname in (f"density-{scen}-{verify}", f"density-{scen}-default"):
            if dname not in self.dens:
                continue
            case, d = self.dens[dname]
            kverify = ((d or {}).get("pcdedup_before") or {}).get("verify")
            if dname.endswith("-default") and verify != "off" and kverify != verify:
                continue
            return self._last(dname, self.dens[dname])
        return None, None, None

    @staticmethod
    def _last(name, cd):
        case, d = cd
        if not d or not d["samples"] or d.get("error"):
            return name, None, None
        s = d["samples"][-1]
        return name, s, d["start_s"][:s["n"]]


def targets(cont, dens, fio, ratios):
    """(target, want, measured, verdict) rows; every target has a row, n/a
    where its figure is missing. The issue-10 targets and the density ones."""
    rows = []
    fits = {n: density_fit(c, d)[0] for n, (c, d) in dens.items() if d}
    caps = {n: c.n for n, (c, d) in dens.items()}
    for scen in ("thin", "distinct"):
        name = f"density-{scen}-default"
        on, off = fits.get(name), fits.get(f"density-{scen}-off")
        shared = fits.get("density-shared-off")
        for target, ref, limit in (("containers that fit with pcdedup vs without", off, 2.0),
                                   ("containers that fit with pcdedup vs overlayfs shared "
                                    "lower", shared, 0.9)):
            row = ratio_row(f"density, {scen}: {target}", on, ref, limit, False,
                            "" if on is None or ref is None else f" ({on} vs {ref})")
            if on is not None and on >= caps[name] and row[3].startswith("**missed"):
                # every container fitted: the ratio is a lower bound, not a miss
                row = row[:3] + (f"n/a (all {on} fitted: the case's cap; "
                                 "a larger N decides)",)
            rows.append(row)
    pick = Pick(cont, dens)
    rname, ref, ref_starts = pick("shared", "off")
    for scen in ("thin", "distinct"):
        bname, base, _ = pick(scen, "off")
        for mode in ("full", "trust"):
            name, s, starts = pick(scen, mode)
            if name is None and mode == "trust":
                continue  # verify=trust is measured in the full run only
            src = f" ({name}, N={s['n']})" if s else ""
            what = f"{scen} + pcdedup (verify={mode})"
            got = s and s["cached_kb"]
            rows.append(ratio_row(f"page cache, {what} vs overlayfs shared lower", got,
                                  ref and ref["cached_kb"], 1.10, True, src))
            row = ratio_row(f"page cache, {what} vs the same without pcdedup", got,
                            base and base["cached_kb"], 0.05, True, src)
            if s and s["n"] < 20 and row[3].startswith("**missed"):
                # one shared copy is 1/N of N private ones: 1/20 needs N >= 20
                row = row[:3] + (f"n/a (at N={s['n']} one copy is 1/{s['n']}; "
                                 "1/20 needs N >= 20)",)
            rows.append(row)
            rows.append(ratio_row(f"disk read to start them, {what} vs the same without "
                                  "pcdedup", s and s["disk_read_kb"],
                                  base and base["disk_read_kb"], 0.10, True, src))
            rows.append(ratio_row(f"median container start, {what} vs overlayfs shared "
                                  "lower", statistics.median(starts) if starts else None,
                                  statistics.median(ref_starts) if ref_starts else None,
                                  1.15, True, src))
    for op in ("open_close", "stat", "read"):
        r = ratios.get(("untagged", op), [None, None])[1]
        ok = None if r is None else abs(r - 1) <= 0.02
        margin = "" if r is None else \
            f"{abs(0.02 - abs(r - 1)) * 100:.1f} points {'to spare' if ok else 'over'}"
        rows.append((f"micro untagged {op}, patched+on vs stock (icount A/B)", "within 2%",
                     NA if r is None else f"{(r - 1) * 100:+.1f}%", verdict(ok, margin)))
    off = next((d for c, d in fio.values() if c.verify == "off" and d), None)
    for name, (case, d) in fio.items():
        if case.verify == "off":
            continue
        for phase, engine, pattern in [(p, e, q) for p in ("cold", "cached")
                                       for e in ("psync", "mmap") for q in ("seq", "rand4k")]:
            r = next((x for x in (d or {}).get("runs", []) if
                      (x["engine"], x["pattern"], x["phase"]) == (engine, pattern, phase)),
                     None)
            b = next((x for x in (off or {}).get("runs", []) if
                      (x["engine"], x["pattern"], x["phase"]) == (engine, pattern, phase)),
                     None)
            want = 0.95 if phase == "cached" else 0.90
            rows.append(ratio_row(f"fio {phase} {engine} {pattern}: verify={case.verify} vs "
                                  "pcdedup off", r and r["bw_kib_s"], b and b["bw_kib_s"],
                                  want, False))
    # Issue 13 (direct, asynchronous fills; the open hook a static branch):
    # sequential reads through a share at least as fast as private ones, and
    # no untagged cost at all against stock.
    for name, (case, d) in fio.items():
        if case.verify == "off":
            continue
        for phase, engine in (("cold", "psync"), ("cold", "mmap"), ("cached", "mmap")):
            r, b = fio_run(d, engine, "seq", phase), fio_run(off, engine, "seq", phase)
            rows.append(ratio_row(f"issue 13: fio {phase} {engine} seq: verify={case.verify} "
                                  "vs pcdedup off", r and r["bw_kib_s"], b and b["bw_kib_s"],
                                  1.00, False))
    for op in ("open_close", "stat", "read"):
        r = ratios.get(("untagged", op), [None, None])[1]
        ok = None if r is None else r <= 1.0
        margin = "" if r is None else f"{abs(r - 1) * 100:.1f} points {'to spare' if ok else 'over'}"
        rows.append((f"issue 13: micro untagged {op}, patched+on vs stock: no increase",
                     "<= +0.0%", NA if r is None else f"{(r - 1) * 100:+.1f}%",
                     verdict(ok, margin)))
    return rows


def fio_run(d, engine, pattern, phase):
    return next((x for x in (d or {}).get("runs", []) if
                 (x["engine"], x["pattern"], x["phase"]) == (engine, pattern, phase)), None)


def hashing_notes(fio):
    """What the fio figures say about the cost of verify=full: the same
    stacked reads with verify=trust differ only in hashing, so the time
    between the two is the hashing of the data the readers share, once."""
    by_mode = {c.verify: d for c, d in fio.values() if d}
    full, trust = by_mode.get("full"), by_mode.get("trust")
    if not full or not trust:
        return []
    unique_mib = 4 * full.get("file_mib", 0)
    rows = []
    for engine in ("psync", "mmap"):
        for pattern in ("seq", "rand4k"):
            f, t = fio_run(full, engine, pattern, "cold"), fio_run(trust, engine, pattern, "cold")
            if not f or not t or not f["bw_kib_s"] or not t["bw_kib_s"]:
                continue
            tf, tt = f["io_kib"] / f["bw_kib_s"], t["io_kib"] / t["bw_kib_s"]
            extra = tf - tt
            rows.append((f"{engine} {pattern}", tt, tf, extra,
                         unique_mib / extra if extra > 0 and unique_mib else None))
    if not rows:
        return []
    return ["### Where verify=full loses time on cold reads", "",
            f"verify=trust runs the same stacked reads and fills without hashing; the "
            f"difference is the SHA-256 of the {unique_mib} MiB the readers share, hashed "
            "once per fill. Dividing one by the other gives the hashing rate these runs "
            "imply, all guest CPUs together: a verified cold read of that data cannot "
            "finish sooner than that rate allows.", ""] + table(
        [("cold run", None), ("trust s", 2), ("full s", 2), ("full - trust s", 2),
         ("implied hashing MiB/s", 1)], rows)


def start_notes(cont):
    """What each container reads from disk outside the shares: the page
    cache of tagged files is shared, but every thin snapshot or distinct
    lower is a filesystem of its own."""
    rows = []
    for name, (case, d) in cont.items():
        if not d or not d.get("samples") or d.get("error") or case.kernel != "patched":
            continue
        s = d["samples"][-1]
        vm = ((s.get("pcdedup") or {}).get("vmstat") or {})
        filled_kb = vm.get("pcdedup_fill", 0) * 4
        starts = d["start_s"][:s["n"]]
        rows.append((name, s["n"], statistics.median(starts) if starts else None,
                     mib(s["disk_read_kb"]), mib(filled_kb),
                     mib((s["disk_read_kb"] - filled_kb) / s["n"])))
    if not rows:
        return []
    return ["### What a container start reads outside the shares", "",
            "Disk reads at the largest N, less what was filled into shares "
            "(`pcdedup_fill` pages), per container: what pcdedup does not share. "
            "overlayfs with one shared lower reads its lower's metadata once; a thin "
            "snapshot or a distinct lower has its own inodes, directories and keys "
            "for each container.", ""] + table(
        [("case", None), ("N", 0), ("median start s", 2), ("disk read MiB", 1),
         ("filled into shares MiB", 1), ("other reads per container MiB", 2)], rows)


def main():
    results = os.path.abspath(sys.argv[1])
    raw = os.path.join(results, "raw")
    cases = load_cases(raw)
    by_kind = {}
    for name, (case, d) in cases.items():
        by_kind.setdefault(case.kind, {})[name] = (case, d)
    dens, cont = by_kind.get("density", {}), by_kind.get("containers", {})
    fio, micro, tags = by_kind.get("fio", {}), by_kind.get("micro", {}), by_kind.get("tag", {})
    status = read_json(os.path.join(raw, "status.json"), {"cases": []})
    config = read_json(os.path.join(raw, "config.json"), {})
    image = read_json(os.path.join(raw, "image-build.json"))
    guest = next((d["guest"] for _, d in cases.values() if d and d.get("guest")), {})
    runs = status.get("runs_seconds", [])
    md = [f"# pcdedup benchmark: {os.path.basename(results)}", ""]
    md += [f"Guest kernel {guest.get('release', NA)}, clocksource "
           f"{guest.get('clocksource', NA)} (measured step "
           + (f"{guest['clock_step_ns'] / 1000:.1f} us" if guest.get("clock_step_ns")
              else NA) + f"). Mode: {'QUICK' if config.get('quick') else 'full'}. QEMU "
           f"{config['accel'].upper() if config.get('accel') else NA} on a {config.get('host_cpus', NA)}-core "
           "host: absolute times are emulation times, compare ratios. Run time "
           f"{status.get('total_seconds', NA)} s"
           + (f" over {len(runs)} runs (`bench.py --resume`)" if len(runs) > 1 else "")
           + ".", ""]
    md += ["Container image: an OCI image built locally (no registry) from the host's "
           "python3.11 and its standard library (without test, idlelib, tkinter, ...), "
           "bash, coreutils and the shared libraries they need: one layer, an OCI image "
           "layout, unpacked with `umoci unpack` into the XFS origin of an lvm2 thin pool "
           "and tagged with `pcdedup tag`. Thin cases: a snapshot per container; overlay "
           "cases: the unpacked rootfs as the shared lower, or reflink copies of it as "
           "distinct lowers. Every container is started with `crun run` from a bundle "
           "whose config.json is umoci's, with its root the container's snapshot or "
           "overlay mount and its own cgroup v2 group (memory controller)."
           + (f" Image: {image['files']} files, {image['rootfs_kb'] / 1024:.1f} MiB."
              if image else ""), ""]
    head, body = [], []
    density_section(results, dens, head)
    containers_section(results, cont or dens, body, from_density=not cont)
    fio_section(results, fio, body)
    ratios = micro_section(micro, tags, body)
    rows = targets(cont, dens, fio, ratios)
    summary = table([("target", None), ("want", None), ("measured", None),
                     ("verdict", None)], rows)
    st = {s["case"]: s for s in status["cases"]}
    case_rows = [[name, case.kind, case.launcher or "none", case.kernel, case.mem,
                  "ok" if st.get(name, {}).get("rc") == 0 else
                  (f"FAILED (rc {st[name]['rc']})" if name in st else "not run"),
                  st.get(name, {}).get("seconds")] for name, (case, _) in cases.items()]
    cases_md = ["## Cases", ""] + table(
        [("case", None), ("kind", None), ("launcher", None), ("kernel", None),
         ("guest memory", None), ("result", None), ("seconds", 1)], case_rows)
    for s in status["cases"]:
        if s["rc"]:
            cases_md += [f"`{s['case']}` failed; last lines:", "", "```", *s["tail"], "```", ""]
    md += head + ["## Targets", ""] + summary + start_notes(cont) + hashing_notes(fio) + body
    md += cases_md
    with open(os.path.join(results, "report.md"), "w") as f:
        f.write("\n".join(md).rstrip() + "\n")
    print("\n".join(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
