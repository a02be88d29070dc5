#!/usr/bin/env python3
"""Write report.md, CSVs and gnuplot PNGs for one results folder and print
the summary. Every figure comes from raw/*.json of that run.
Usage: bench/report.py RESULTS_DIR"""
import csv
import glob
import json
import os
import statistics
import subprocess
import sys

LABELS = {("shared", "off"): "overlayfs shared lower, pcdedup off",
          ("distinct", "off"): "overlayfs distinct lowers, pcdedup off",
          ("thin", "off"): "XFS on dm-thin snapshots, pcdedup off",
          ("distinct", "full"): "overlayfs distinct lowers, pcdedup on (verify=full)",
          ("thin", "full"): "XFS on dm-thin, pcdedup on (verify=full)",
          ("thin", "trust"): "XFS on dm-thin, pcdedup on (verify=trust)",
          ("thin", "trust-min0"): "XFS on dm-thin, pcdedup on (verify=trust, min_size=0)",
          ("distinct", "full-min0"): "overlayfs distinct lowers, pcdedup on (verify=full, "
                                     "min_size=0)"}


def load(raw, pattern):
    out = {}
    for path in sorted(glob.glob(os.path.join(raw, pattern))):
        with open(path) as f:
            out[os.path.basename(path)[:-5]] = json.load(f)
    return out


def mb(kb):
    return f"{kb / 1024:.1f}"


def label(case, d):
    name = LABELS.get((d["scenario"], d["dedup"]), case)
    return name + (" [stock kernel]" if case.endswith("-stock") else "")


def gnuplot(results, script):
    p = subprocess.run(["gnuplot"], input=script, text=True, cwd=results,
                       capture_output=True)
    if p.returncode:
        print(f"report: gnuplot failed: {p.stderr.strip()}", file=sys.stderr)


def containers_section(results, cont, md):
    md += ["## Container start: page cache vs N", "",
           "Deltas from before the first container (fresh boot, caches dropped after "
           "all roots were mounted). `memcg file` is the sum of the containers' "
           "cgroup v2 `memory.stat` `file`; `2nd+ file` is the median `file` of "
           "containers 2..N (a page is charged to the first cgroup that reads it).", "",
           "| scenario | N | Cached MB | MemAvailable drop MB | memcg file MB | "
           "1st file MB | 2nd+ file MB | disk read MB | shares | pages_saved | "
           "start median s | start total s |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    rows = []
    for case, d in cont.items():
        for s in d["samples"]:
            n = s["n"]
            later = s["memcg_file_kb"][1:]
            starts = d["start_s"][:n]
            p = s.get("pcdedup", {})
            rows.append([case, n, s["cached_kb"], s["memavailable_drop_kb"],
                         s["memcg_file_total_kb"], s["memcg_file_kb"][0],
                         statistics.median(later) if later else "", s["disk_read_kb"],
                         p.get("shares", ""), p.get("pages_saved", ""),
                         round(statistics.median(starts), 3), round(sum(starts), 2)])
            md.append(f"| {label(case, d)} | {n} | {mb(s['cached_kb'])} | "
                      f"{mb(s['memavailable_drop_kb'])} | {mb(s['memcg_file_total_kb'])} | "
                      f"{mb(s['memcg_file_kb'][0])} | {mb(rows[-1][6]) if later else '-'} | "
                      f"{mb(s['disk_read_kb'])} | {p.get('shares', '-')} | "
                      f"{p.get('pages_saved', '-')} | {rows[-1][10]} | {rows[-1][11]} |")
        if d.get("error"):
            md.append(f"| {label(case, d)} | FAILED after {len(d['start_s'])} containers: "
                      f"{d['error']} |||||||||||")
    with open(os.path.join(results, "containers.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["case", "n", "cached_kb", "memavailable_drop_kb", "memcg_file_total_kb",
                    "first_file_kb", "median_later_file_kb", "disk_read_kb", "shares",
                    "pages_saved", "start_median_s", "start_total_s"])
        w.writerows(rows)
    with open(os.path.join(results, "start.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["case", "container", "start_s"])
        for case, d in cont.items():
            w.writerows([case, i, t] for i, t in enumerate(d["start_s"], 1))
    plots = [(case, label(case, d)) for case, d in cont.items() if d["samples"]]
    mem = ", ".join(f"'containers.csv' using (strcol(1) eq '{c}' ? $2 : 1/0):($3/1024) "
                    f"with linespoints title '{t}'" for c, t in plots)
    start = ", ".join(f"'start.csv' using (strcol(1) eq '{c}' ? $2 : 1/0):3 "
                      f"with lines title '{t}'" for c, t in plots)
    gnuplot(results, f"""set datafile separator ','
set terminal pngcairo size 1000,600 noenhanced
set key top left
set grid
set yrange [0:*]; set xrange [0:*]
set output 'memory_vs_n.png'
set title 'Page cache growth (Cached delta) vs number of containers'
set xlabel 'containers (N)'; set ylabel 'MB'
plot {mem}
set output 'start_vs_n.png'
set title 'Start time of each container (spawn to imports done), TCG'
set xlabel 'container number'; set ylabel 'seconds'
plot {start}
""")
    md += ["", "![memory vs N](memory_vs_n.png)", "", "![start time](start_vs_n.png)", ""]
    excess_note(cont, md)
    frames_table(cont, md)
    start_ab_table(cont, md)


def excess_note(cont, md):
    """Where the page cache of a dedup case goes beyond the shared-lower one."""
    ref = cont.get("containers-shared-off-patched")
    if not ref or not ref["samples"]:
        return
    lines = []
    for case, d in cont.items():
        if d["dedup"] == "off" or not d["samples"]:
            continue
        s = d["samples"][-1]
        excess = s["cached_kb"] - ref["samples"][-1]["cached_kb"]
        later = s["memcg_file_kb"][1:]
        private = statistics.median(later) * len(later) if later else 0
        lines.append(f"- {label(case, d)}, N={s['n']}: {mb(excess)} MB over the shared "
                     f"lower; containers 2..N hold {mb(private)} MB of it as their own "
                     f"`file` pages ({mb(statistics.median(later) if later else 0)} MB "
                     "each, median).")
    if lines:
        md += ["What a dedup case caches beyond the shared-lower reference is mostly "
               "what each container caches privately: files that do not share (by "
               "default files below `min_size` = 4096 bytes; the `min_size=0` cases "
               "share every tagged file).", ""] + lines + [""]


def frames_table(cont, md):
    md += ["### Physical copies: frames behind the containers' mappings", "",
           "At the largest N, the resident file pages each container's python3 maps "
           "from `python3.11` and `libc.so.6`, traced through `/proc/PID/pagemap` to "
           "physical frames. One copy in memory: `distinct frames` equals `pages per "
           "container`; N private copies: N times it.", "",
           "| scenario | N | file | pages per container | distinct frames | copies |",
           "|---|---|---|---|---|---|"]
    for case, d in cont.items():
        s = d["samples"][-1] if d["samples"] else None
        for f in (s or {}).get("frames", []):
            per = f["pages_per_container"]
            md.append(f"| {label(case, d)} | {s['n']} | {f['file']} | {per:g} | "
                      f"{f['distinct_frames']} | {f['distinct_frames'] / per if per else 0:.2f} |")
    md.append("")


def start_ab_table(cont, md):
    """Container start on the stock kernel against the patched one."""
    rows = []
    for scen in ("shared", "thin"):
        stock = cont.get(f"containers-{scen}-off-stock")
        if not stock or not stock["start_s"]:
            continue
        base = statistics.median(stock["start_s"])
        for dedup in ("off", "full", "trust"):
            d = cont.get(f"containers-{scen}-{dedup}-patched")
            if not d or not d["start_s"]:
                continue
            m = statistics.median(d["start_s"])
            rows.append(f"| {scen} | {dedup} | {base:.3f} | {m:.3f} | {m / base:.3f} | "
                        f"{len(stock['start_s'])}/{len(d['start_s'])} |")
    if rows:
        md += ["### A/B kernels: container start", "",
               "Median start time over all containers of a case (one boot per case), "
               "stock kernel (same config, no pcdedup) against the patched kernel with "
               "pcdedup off (`pcdedup=off`) and on. TCG emulation: compare ratios.", "",
               "| scenario | patched pcdedup | stock s | patched s | patched/stock | "
               "containers |", "|---|---|---|---|---|---|"] + rows + [""]


def fio_section(results, fio, md):
    md += ["## fio: readers on their own thin snapshot of the same files", "",
           "`--readonly --invalidate=0 --fadvise_hint=0`; aggregate over all jobs; "
           "each reader reads its 4 files whole. `cold` runs right after drop_caches "
           "(so with verify=full every member is hashed again at its first open: "
           "each reader's first open of a file reads the whole member to hash it, "
           "then the share is filled once; see `disk read MB`), `cached` right after "
           "it. Each figure is the median of 3 passes (`disk read` and `Cached after` "
           "are those of the last pass).", "",
           "| pcdedup | engine | pattern | phase | MiB/s | IOPS | lat mean us | p50 us | "
           "p99 us | Cached after MB | disk read MB |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    rows = []
    for case, d in fio.items():
        for r in d["runs"]:
            rows.append([d["dedup"], r["engine"], r["pattern"], r["phase"], r["bw_kib_s"]])
            md.append(f"| {d['dedup']} | {r['engine']} | {r['pattern']} | {r['phase']} | "
                      f"{r['bw_kib_s'] / 1024:.1f} | {r['iops']} | {r['lat_mean_us']} | "
                      f"{r['lat_us']['50']} | {r['lat_us']['99']} | "
                      f"{mb(r['cached_kb_after']) if r['cached_kb_after'] is not None else '-'} | "
                      f"{mb(r['disk_read_kb'])} |")
        if d.get("error"):
            md.append(f"| {d['dedup']} | FAILED: {d['error']} ||||||||||")
        md.append(f"\n{d['n']} readers, each on 4 files x {d['file_mb']} MB.\n"
                  if case == list(fio)[0] else "")
    md += ["Latency percentiles come from fio's clock in the guest; under TCG the guest "
           "clock is coarse, so sub-tick latencies show as 0.", ""]
    with open(os.path.join(results, "fio.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["dedup", "engine", "pattern", "phase", "bw_kib_s"])
        w.writerows(rows)
    modes = sorted({r[0] for r in rows})
    xt = []
    for r in rows:
        k = f"{r[1]} {r[2]} {r[3]}"
        if k not in xt:
            xt.append(k)
    with open(os.path.join(results, "fio_plot.dat"), "w") as f:
        for k in xt:
            vals = [next((str(r[4] / 1024) for r in rows if f"{r[1]} {r[2]} {r[3]}" == k
                          and r[0] == m), "0") for m in modes]
            f.write(f"\"{k}\" " + " ".join(vals) + "\n")
    cols = ", ".join(f"'fio_plot.dat' using {i + 2}:xtic(1) title 'pcdedup {m}'"
                     for i, m in enumerate(modes))
    gnuplot(results, f"""set terminal pngcairo size 1000,600 noenhanced
set output 'fio.png'
set title 'fio aggregate throughput (MiB/s, log scale), TCG'
set style data histograms; set style fill solid border -1
set logscale y; set grid y; set xtics rotate by -30; set key top left
plot {cols}
""")
    md += ["![fio throughput](fio.png)", ""]


def micro_section(micro, tag, config, md):
    per = {}  # (kernel, files, op) -> [per-boot medians]
    for case, d in micro.items():
        for o in d["ops"]:
            per.setdefault((d["label"], o["files"], o["op"]), []).append(o["ns_per_op"])
    clock = ("QEMU `-icount shift=0`: the guest clock advances 1 ns per guest "
             "instruction, so these figures are guest instructions per operation, "
             "free of host noise (they do not model cache misses)"
             if config.get("micro_accel") == "icount" else
             f"guest clock under {config.get('micro_accel')}")
    md += ["## A/B kernels: micro-benchmark (bench/micro.c)", "",
           "Cost per operation on files already in page cache (16 KB files on XFS), "
           f"one guest CPU, {clock}. Per boot the median of 5 rounds, here the median "
           "over boots and the spread (min-max over boots). Boots interleave stock / "
           "patched pcdedup=off / patched pcdedup on. **Absolute figures come from "
           "emulation on a 2-core host; the ratios are the result.** `tagged-b` files "
           "carry keys (on stock and pcdedup=off the key is just an xattr).", "",
           "| files | op | stock ns | off ns | on ns | off/stock | on/stock | boots |",
           "|---|---|---|---|---|---|---|---|"]
    ratios = {}
    for files in ("untagged", "tagged-b"):
        for op in ("open_close", "stat", "read", "mmap_fault"):
            vals = {k: per.get((k, files, op), []) for k in ("stock", "off", "on")}
            if not all(vals.values()):
                continue
            med = {k: statistics.median(v) for k, v in vals.items()}
            cell = {k: f"{med[k]:.0f} ({min(v):.0f}-{max(v):.0f})" for k, v in vals.items()}
            ratios[(files, op)] = (med["off"] / med["stock"], med["on"] / med["stock"])
            md.append(f"| {files} | {op} | {cell['stock']} | {cell['off']} | {cell['on']} | "
                      f"{ratios[(files, op)][0]:.3f} | {ratios[(files, op)][1]:.3f} | "
                      f"{len(vals['stock'])}/{len(vals['off'])}/{len(vals['on'])} |")
    for case, d in list(micro.items()) + list(tag.items()):
        if d.get("error"):
            md.append(f"\n{case} FAILED: {d['error']}")
        if d.get("tag"):
            t = d["tag"]
            md += ["", "### `pcdedup tag` vs `sha256sum` (guest, cold cache, python3.11 tree "
                   f"of {t['tree_mb']} MB copied onto XFS)", "",
                   "| tool | MB/s |", "|---|---|",
                   f"| sha256sum (find + xargs, 1 process) | {t['sha256sum_mb_s']} |",
                   f"| pcdedup tag -j 1 | {t['tag_j1_mb_s']} |",
                   f"| pcdedup tag (default jobs, {t['cpus']} CPUs) | {t['tag_mb_s']} |"]
    md.append("")
    return ratios


def sample_at_max(cont, scenario, dedup):
    """The last sample (largest N) of a container case, with its start times."""
    d = cont.get(f"containers-{scenario}-{dedup}-patched")
    if not d or not d["samples"] or d.get("error"):
        return None, None
    s = d["samples"][-1]
    return s, d["start_s"][:s["n"]]


def at_max(cont, scenario, dedup):
    s, _ = sample_at_max(cont, scenario, dedup)
    return (s["cached_kb"], s["n"]) if s else (None, None)


def start_and_read_targets(cont, verdict):
    """Disk read to start N containers and their median start time."""
    rows = []
    _, ref_starts = sample_at_max(cont, "shared", "off")
    for scen, name in (("thin", "XFS-on-thinp + dedup"), ("distinct", "distinct lowers + dedup")):
        base, _ = sample_at_max(cont, scen, "off")
        for mode in ("full", "trust"):
            s, starts = sample_at_max(cont, scen, mode)
            how = f"verify={mode}"
            if s is None or base is None or not ref_starts:
                if mode == "full":
                    rows.append((f"{name} ({how}): disk read and start", "-",
                                 "not measured (case failed or missing)",
                                 "**not measured**"))
                continue
            q = s["disk_read_kb"] / max(base["disk_read_kb"], 1)
            rows.append((f"{name} ({how}), N={s['n']}: disk read to start them <= 10% "
                         "of the same scenario without dedup", "<= 10%",
                         f"{mb(s['disk_read_kb'])} MB vs {mb(base['disk_read_kb'])} MB = "
                         f"{q:.1%}", verdict(q <= 0.10)))
            m, r = statistics.median(starts), statistics.median(ref_starts)
            rows.append((f"{name} ({how}), N={s['n']}: median start <= 1.15x overlay "
                         "shared lower", "<= 1.15x", f"{m:.3f} s vs {r:.3f} s = {m / r:.2f}x",
                         verdict(m / r <= 1.15)))
    return rows


def targets(cont, fio, ratios):
    rows = []

    def verdict(ok):
        return "**met**" if ok else "**missed**"

    ref, n = at_max(cont, "shared", "off")
    for scen, name in (("thin", "XFS-on-thinp + dedup"), ("distinct", "distinct lowers + dedup")):
        base = at_max(cont, scen, "off")[0]
        for mode in ("full", "trust"):
            got, gn = at_max(cont, scen, mode)
            how = "verify=" + mode.replace("-min0", ", min_size=0")
            if got is None or ref is None or base is None:
                if f"containers-{scen}-{mode}-patched" in cont or mode == "full":
                    rows.append((f"{name} ({how}) page cache", "-", "not measured "
                                 "(case failed or missing)", "**not measured**"))
                continue
            r1, r2 = got / max(ref, 1), got / max(base, 1)
            rows.append((f"{name} ({how}), N={gn}: Cached <= 1.1x overlay shared "
                         "lower", "<= 1.10x", f"{mb(got)} MB vs {mb(ref)} MB = {r1:.2f}x",
                         verdict(r1 <= 1.1)))
            rows.append((f"{name} ({how}), N={gn}: Cached <= 1/20 of the same "
                         "scenario without dedup", "<= 0.050x at N=100",
                         f"{mb(got)} MB vs {mb(base)} MB = "
                         f"{r2:.3f}x (1/{1 / r2:.1f})" if r2 else "0",
                         verdict(r2 <= 0.05) + ("" if gn >= 100 else
                                                f" at N={gn}, where 1/20 allows less "
                                                "than one copy")))
    rows += start_and_read_targets(cont, verdict)
    for op in ("open_close", "stat", "read"):
        r = ratios.get(("untagged", op))
        if r:
            rows.append((f"untagged {op}, patched+on vs stock", "within 2%",
                         f"{(r[1] - 1) * 100:+.1f}%", verdict(abs(r[1] - 1) <= 0.02)))
        else:
            rows.append((f"untagged {op}, patched+on vs stock", "within 2%", "-",
                         "**not measured**"))
    off = next((d for d in fio.values() if d["dedup"] == "off"), None)
    for d in fio.values():
        if d["dedup"] == "off" or not off:
            continue
        for r in d["runs"]:
            b = next((x for x in off["runs"] if (x["engine"], x["pattern"], x["phase"]) ==
                      (r["engine"], r["pattern"], r["phase"])), None)
            if not b:
                continue
            want = 0.95 if r["phase"] == "cached" else 0.90
            q = r["bw_kib_s"] / max(b["bw_kib_s"], 1)
            rows.append((f"fio {r['phase']} {r['engine']} {r['pattern']}: share "
                         f"(verify={d['dedup']}) vs private", f">= {want:.0%}",
                         f"{q:.0%} ({r['bw_kib_s'] / 1024:.1f} vs {b['bw_kib_s'] / 1024:.1f} "
                         "MiB/s)", verdict(q >= want)))
    return rows


def main():
    results = sys.argv[1]
    raw = os.path.join(results, "raw")
    cont, fio = load(raw, "containers-*.json"), load(raw, "fio-*.json")
    micro, tag = load(raw, "micro-*.json"), load(raw, "tag-*.json")
    status = load(raw, "status.json").get("status", {"cases": []})
    config = load(raw, "config.json").get("config", {})
    image = load(raw, "image.json").get("image")
    md = [f"# pcdedup benchmark: {os.path.basename(results)}", ""]
    kern = next((d["kernel"] for d in cont.values()), "")
    md += [f"Guest kernel (patched): `{kern}`.  Mode: {'QUICK' if config.get('quick') else 'full'}"
           f" (N up to {config.get('max_n')}, samples at {config.get('samples')}). "
           f"QEMU with {str(config.get('accel', '?')).upper()} on a "
           f"{config.get('host_cpus')}-core host; absolute times are emulation times, "
           "compare ratios. Total run time "
           f"{status.get('total_seconds', '?')} s"
           + (f" over {len(status['runs_seconds'])} runs ("
              f"{' + '.join(map(str, status['runs_seconds']))} s): `bench.py --resume` "
              "re-ran the cases that had failed" if len(status.get("runs_seconds", [])) > 1
              else "") + ".", ""]
    md += ["Container image: python3.11 + its standard library (without test, idlelib, "
           "tkinter, ensurepip, ...), bash, coreutils and the glibc/shared libraries "
           "they need, copied from the host into an XFS origin volume of an lvm2 thin "
           "pool, tagged with `pcdedup tag`; the distinct lowers are `cp -a "
           "--reflink=always` copies of it (same content, different inodes). Each "
           "container: own mount namespace + chroot, own cgroup v2 group, python3 "
           "importing json, email, http.client, decimal, sqlite3, urllib, xml.etree, "
           "logging, argparse, csv, datetime, then sleeping."
           + (f" This run's image was built in it: {image['files']} files, "
              f"{mb(image['rootfs_kb'])} MB." if image else
              " (Image reused from an earlier run, build/bench/bench.img.)"), ""]
    failed = [s for s in status["cases"] if s["rc"]]
    md += ["## Cases", "", "| case | result | seconds |", "|---|---|---|"]
    md += [f"| {s['case']} | {'ok' if s['rc'] == 0 else 'FAILED (rc %d)' % s['rc']} | "
           f"{s['seconds']} |" for s in status["cases"]]
    for s in failed:
        md += ["", f"`{s['case']}` failed; last lines:", "", "```", *s["tail"], "```"]
    md.append("")
    body = []
    if cont:
        containers_section(results, cont, body)
    if fio:
        fio_section(results, fio, body)
    ratios = micro_section(micro, tag, config, body) if micro or tag else {}
    rows = targets(cont, fio, ratios)
    summary = ["| target | want | measured | verdict |", "|---|---|---|---|"]
    summary += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows]
    md += ["## Targets", ""] + summary + [""] + body
    with open(os.path.join(results, "report.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    print("\n".join(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
