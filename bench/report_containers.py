"""The idle containers cases (bench/guest/containers.py): memory and start
time against N, their targets, and what a start reads outside the shares."""
import statistics

from report_base import Figure, datablock, gnuplot, median_ci, mib, short_of, table, write_csv
from report_density import density_state


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
    starts = [(c.label(), d["start_s"], d.get("setup_s"), len(d["start_s"]))
              for c, d in cont.values() if d and d["start_s"]]
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
        blocks = "".join(datablock(f"s{i}", [(t,) for t in ts]) for i, (_, ts, _, _) in
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
        md += ["A start is `crun run` until the container's imports are done; the roots "
               "(thin snapshots made by lvm and mounted, or overlay mounts) are made before "
               "the first start, all at once: *roots s* is that time in all, *per root* "
               "that over the containers (a node pays it at each start too).", ""]
        md += table([("box", 0), ("case", None), ("containers", 0), ("median s", 2),
                     ("p90 s", 2), ("first s", 2), ("roots s", 1), ("per root s", 2)],
                    [[i + 1, t, len(ts), statistics.median(ts),
                      sorted(ts)[int(0.9 * (len(ts) - 1))], ts[0], setup,
                      setup / n if setup is not None else None]
                     for i, (t, ts, setup, n) in enumerate(starts)])
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
            # The -default case stands in for a verify mode it ran with,
            # never for pcdedup off.
            if dname != f"density-{scen}-{verify}" and (verify == "off" or kverify != verify):
                continue
            return self._last(dname, self.dens[dname])
        return None, None, None

    @staticmethod
    def _last(name, cd):
        case, d = cd
        if not d or not d["samples"] or d.get("error"):
            return name, None, None
        s = d["samples"][-1]
        if case.kind == "density":  # its last sample failed: the one at N reached
            last = density_state(case, d)[0]
            s = next((x for x in d["samples"] if x["n"] == last), None)
            if s is None:
                return name, None, None
        return name, s, d["start_s"][:s["n"]]


def containers_figures(cont, dens):
    """Page cache: the figure from Cached, bracketed by Cached and the
    containers' memcg file charge (two measures of the same pages); start:
    the ratio of medians, bracketed by their 95% intervals; disk reads: one
    boot, no spread."""
    figs = {}
    pick = Pick(cont, dens)
    rname, ref, ref_starts = pick("shared", "off")
    for scen, modes in (("thin", ("full", "trust")), ("distinct", ("full",))):
        bname, base, _ = pick(scen, "off")
        for mode in modes:
            name, s, starts = pick(scen, mode)
            key = f"containers/{scen}/{mode}"
            src = f"({name}, N={s['n']})" if s else ""
            for what, r in (("shared", ref), ("off", base)):
                if not s or not r or not r["cached_kb"]:
                    figs[f"{key}/cache-vs-{what}"] = Figure(why="not measured")
                    continue
                q = [s["cached_kb"] / r["cached_kb"]]
                if s.get("memcg_file_total_kb") and r.get("memcg_file_total_kb"):
                    q.append(s["memcg_file_total_kb"] / r["memcg_file_total_kb"])
                f = Figure(q[0], min(q), max(q), note=src)
                if len(q) < 2:
                    f.lo = f.hi = None
                    f.why = "no second measure"
                figs[f"{key}/cache-vs-{what}"] = f
            if s and base and base["disk_read_kb"]:
                figs[f"{key}/disk-vs-off"] = Figure(
                    s["disk_read_kb"] / base["disk_read_kb"], note=src,
                    why="one boot: no spread")
            else:
                figs[f"{key}/disk-vs-off"] = Figure(why="not measured")
            a, b = median_ci(starts or []), median_ci(ref_starts or [])
            if starts and ref_starts:
                f = Figure(statistics.median(starts) / statistics.median(ref_starts),
                           note=src)
                if a and b and b[0] > 0:
                    f.lo, f.hi = a[0] / b[1], a[1] / b[0]
                else:
                    f.why = "too few starts for an interval"
                figs[f"{key}/start-vs-shared"] = f
            else:
                figs[f"{key}/start-vs-shared"] = Figure(why="not measured")
    return figs


def outside_reads(cont):
    """Per containers case on the patched kernel, at its largest N: (name,
    N, median start s, disk read MiB, page cache grown MiB, filled into
    shares MiB, the reads outside file data per container MiB). Nothing is
    evicted in a containers case: every page of file data read from the
    disk (the shared lower's, a snapshot's own, a share's fill) is still in
    Cached; what the disk read beyond it is metadata (inodes, directories,
    extents, key attribute blocks), which XFS keeps outside the page cache."""
    rows = []
    for name, (case, d) in cont.items():
        if not d or not d.get("samples") or d.get("error") or case.kernel != "patched":
            continue
        s = d["samples"][-1]
        vm = ((s.get("pcdedup") or {}).get("vmstat") or {})
        filled_kb = vm.get("pcdedup_fill", 0) * 4
        starts = d["start_s"][:s["n"]]
        rows.append((name, s["n"], statistics.median(starts) if starts else None,
                     mib(s["disk_read_kb"]), mib(s["cached_kb"]), mib(filled_kb),
                     mib(max(s["disk_read_kb"] - s["cached_kb"], 0) / s["n"])))
    return rows


def start_reasons(verdicts, cont):
    """An open start target: what each start reads from disk outside the
    shares, against the shared lower's."""
    other = {r[0]: r[6] for r in outside_reads(cont)}
    ref = other.get("containers-shared-off-patched")
    out = []
    for tid in verdicts:
        parts = tid.split("/")
        name = f"containers-{parts[1]}-{parts[2]}-patched" if len(parts) == 4 else ""
        if parts[-1] != "start-vs-shared" or not short_of(verdicts[tid]) or \
                name not in other or ref is None:
            continue
        out.append(f"`{tid}`: each start of {name} read {other[name]:.2f} MiB from disk "
                   f"besides file data (its own inodes, directories and keys), one on the "
                   f"shared lower {ref:.2f} MiB"
                   + (f", {other[name] / ref:.0f}x" if ref >= 0.005 else "")
                   + " (What a container start reads outside the shares).")
    return out


def start_notes(cont):
    """What each container reads from disk outside the shares: the page
    cache of tagged files is shared, but every thin snapshot or distinct
    lower is a filesystem of its own."""
    rows = outside_reads(cont)
    if not rows:
        return []
    return ["### What a container start reads outside the shares", "",
            "Disk reads at the largest N, less the page cache's growth (every page of "
            "file data read from the disk, a share's fill included, is still cached: "
            "nothing is evicted in these cases), per container: the metadata each start "
            "reads, which pcdedup does not share. overlayfs with one shared lower reads "
            "its lower's metadata once; a thin snapshot or a distinct lower has its own "
            "inodes, directories and keys for each container.", ""] + table(
        [("case", None), ("N", 0), ("median start s", 2), ("disk read MiB", 1),
         ("page cache grown MiB", 1), ("filled into shares MiB", 1),
         ("other reads per container MiB", 2)], rows)
