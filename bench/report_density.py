"""The report's density section (bench/guest/containers.py density cases):
how many containers fit per arm, over its boots, and the targets' figures
on it."""
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "guest"))
from case import density_pass, memory_tight  # noqa: E402
from case import density_bracket as density_bracket_rule  # noqa: E402
from report_base import Figure, NA, datablock, gnuplot, mib, table, write_csv  # noqa: E402


def density_state(case, d):
    """(last pass, first fail, capped, why the ramp ended) of a density case
    (case.density_bracket: the rule the guest stopped on)."""
    last, fail, capped = density_bracket_rule(case, d)
    if fail is not None:
        s = next(x for x in d["samples"] if x["n"] == fail)
        if s.get("start_failed"):
            # the guest's message up to the container's log: "container c9
            # not ready (exited or 180s)", "crun run c9 exited 1"
            why = (f"container {fail} did not start ({s['start_failed'].split(': ')[0]}, "
                   f"after {s.get('start_failed_s', NA)} s) at N={fail}")
        elif s.get("alive") != s["n"]:
            why = f"{s['n'] - (s.get('alive') or 0)} container(s) gone at N={fail}"
        elif s["events"].get("oom_kill"):
            why = f"OOM kill at N={fail}"
        elif s.get("refault_fraction") is None:
            why = f"nothing read at N={fail}"
        else:
            fit = case.params.get("fit_fraction", 0.05)
            parts = [f"{what} {s[k] * 100:.1f}% of reads" for what, k in
                     (("refaults", "refault_fraction"), ("disk reads", "disk_fraction"))
                     if (s.get(k) or 0) > fit
                     and (k == "refault_fraction" or memory_tight(s))]
            if s.get("pace") is not None and s["pace"] < case.params.get("min_pace", 0.5):
                parts.append(f"read at {s['pace'] * 100:.0f}% of their pace")
            why = " and ".join(parts) + f" at N={fail}" + \
                (" (two windows)" if s.get("first_window") else "")
    elif d.get("error"):
        why = f"failed: {d['error']}"
    elif capped == "n":
        why = f"capped: every sampled N up to {case.n} (the case's N) passed"
    elif capped == "time":
        why = (f"capped: the case's time budget ({case.params.get('max_s')} s) ran out "
               f"at N={len(d.get('start_s', []))}")
    else:
        # The guest stops on the rule of its day: a rule changed since
        # passes the sample it stopped on.
        why = ("ended without a failing sample by the current rule (case.density_pass): "
               "the guest stopped on an earlier rule; run the case again")
    return last, fail, capped, why


def short(name):
    return name[len("density-"):] if name.startswith("density-") else name


def density_boots(dens):
    """{arm: [(case, result) of each boot, in boot order]}: a density arm's
    first boot has the arm's name, the later ones NAME-bK (params boot)."""
    arms = {}
    for name, (case, d) in sorted(dens.items(), key=lambda kv: kv[1][0].params.get("boot", 1)):
        boot = case.params.get("boot", 1)
        arm = name[:-len(f"-b{boot}")] if boot > 1 else name
        arms.setdefault(arm, []).append((case, d))
    return arms


def density_job_seconds(boots, status_cases):
    """Seconds the density cases of every arm and boot took, from the run's
    status (by case name: the table's labels name boots differently)."""
    secs = {x["case"]: x.get("seconds") or 0 for x in status_cases}
    return round(sum(secs.get(c.name, 0) for cds in boots.values() for c, _ in cds))


def arm_states(cds):
    """density_state of each boot of an arm that has a result."""
    return [density_state(c, d) for c, d in cds if d]


def density_section(results, boots, md, status_cases=()):
    if not boots:
        return
    dens = {f"{arm}" + (f" (boot {c.params.get('boot', 1)})" if len(cds) > 1 else ""): (c, d)
            for arm, cds in boots.items() for c, d in cds}
    c0 = next(iter(dens.values()))[0]
    p0 = c0.params
    other_mem = {}
    for arm, cds in boots.items():
        if cds[0][0].mem != c0.mem:
            other_mem.setdefault(cds[0][0].mem, []).append(short(arm))
    fit = p0.get("fit_fraction", 0.05)
    hot = next((c.params["hot_fraction"] for c, _ in dens.values()
                if c.params.get("hot_fraction")), None)
    md += ["## Density: how many containers fit", "",
           f"Guest memory {c0.mem}"
           + "".join(f" ({m}: {', '.join(arms)})" for m, arms in other_mem.items())
           + f", {c0.cpus} CPUs. Each container (crun, cgroup v2) "
           "imports the standard modules, then reads its hot set in a loop (a pass at "
           f"most every {p0.get('pass_s')} s): every file of its image, or in the `hot set` "
           + (f"cases {hot:.0%} of the image's bytes (files picked by a seeded shuffle, "
              "the same in every container; the imports read more). " if hot else "cases "
              "part of it. ")
           + "Containers start one after another, each on a root made for it then (a thin "
           "snapshot, or an overlay mount), until a sample fails. Samples at the N of "
           "the table, coarse at first, then at every N once free memory above the "
           "zones' high watermarks is less than the next coarse step would take, "
           f"anything refaults or disk reads pass half the limit. At each sample, after "
           f"{p0.get('settle_s')} s, a window of "
           f"{p0.get('window_s')} s measures the containers' aggregate read throughput and "
           "the file refaults (`workingset_refault_file` in /proc/vmstat: pages read "
           "again from disk soon after reclaim) and everything read from the disk (data "
           "and metadata: inodes and directories evicted and read again show in no "
           "refault counter). A sample **passes** when refaults stayed at or below "
           f"{fit:.0%} of the bytes the containers read and, while memory was tight "
           "(reclaim in the window, or MemFree under twice the zones' high watermarks), "
           f"so did disk reads, and the containers kept at least "
           f"{p0.get('min_pace', 0.5):.0%} of their pace (`pace`: "
           "the aggregate read rate over N hot sets per pass time: under memory "
           "pressure they stall on reclaim and on small synchronous re-reads of "
           "metadata long before those add up to a share of the bytes; with memory to "
           "spare, a slow pace is the host's load and a disk read a new snapshot read "
           "cold, no density limit), every container "
           "ran, nothing was OOM-killed and the newest container started (crun did not "
           "fail, ready within 180 s); one that fails on its window alone is "
           "measured once more and fails only when the second window fails too. "
           "**N reached**: the "
           "last N that passed; **first fail**: the N of the first sample that failed "
           "(the ramp stops there). The limit lies in [N reached, first fail - 1]: one "
           "N when both were sampled. A case that passed every N up to its N or its time "
           "budget (`ramp budget s`: the density job's budget, shared out as the cases "
           "run) is *capped*: its N reached is a lower bound and the targets on it "
           "give no verdict. Each arm is booted "
           + (f"{max(len(x) for x in boots.values())} times, the arms' boots "
              "interleaved (every arm once, then again): `N reached` and `first fail` per "
              "boot, the limits' range over them in the picture."
              if max(len(x) for x in boots.values()) > 1 else "once.")
           + " Their per-container memory and traces below are the first boot's.", "",
           "![density](density.png)", ""]
    md += [f"The density job took {density_job_seconds(boots, status_cases)} s in all, "
           "boots included.", ""]
    rows, csvrows, plot = [], [], []
    for arm, cds in boots.items():
        case = cds[0][0]
        got = [(c, d) for c, d in cds if d]
        if not got:
            rows.append([case.label(), None, None, None, "no result (case failed before "
                         "writing)"])
            continue
        states = [density_state(c, d) for c, d in got]
        ats = [next((s for s in d["samples"] if s["n"] == st[0]), None)
               for (c, d), st in zip(got, states)]
        hs = got[0][1].get("hot_set") or {}
        reached = [st[0] for st in states]
        rows.append([case.label(), mib(hs["bytes"] / 1024) if hs else None,
                     " / ".join(str(x) for x in reached),
                     " / ".join(str(st[1] or NA) for st in states),
                     "; ".join(st[3] for st in states),
                     " / ".join(f"{at['read_mib_s']:.1f}" if at else NA for at in ats),
                     " / ".join(f"{at['memavailable_kb'] / 1024:.1f}" if at else NA
                                for at in ats),
                     " / ".join(str(d["samples"][-1].get("elapsed_s") if d["samples"] else NA)
                                for _, d in got),
                     case.params.get("max_s")])
        for c, d in got:
            for s in d["samples"]:
                csvrows.append([c.name, s["n"], s["read_mib_s"], s["refault_pages_s"],
                                s["refault_fraction"], s.get("disk_fraction"), s["alive"],
                                s["events"].get("oom_kill"),
                                s.get("memfree_kb"), s["memavailable_kb"], s["cached_kb"],
                                int(density_pass(s, fit, c.params.get("min_pace", 0.5)))])
        uncapped = [st for st in states if st[1] is not None]
        plot.append((short(arm), statistics.median(reached), min(reached),
                     max(st[1] - 1 for st in uncapped) if len(uncapped) == len(states)
                     else max(reached)))
    md += table([("case", None), ("hot set MiB", 1), ("N reached", 0),
                 ("first fail", 0), ("limit", None), ("read MiB/s at N reached", 0),
                 ("MemAvailable MiB at N reached", 0), ("ramp s", 0),
                 ("ramp budget s", 0)], rows)
    write_csv(results, "density.csv", ["case", "n", "read_mib_s", "refault_pages_s",
                                       "refault_fraction", "disk_fraction", "alive",
                                       "oom_kills",
                                       "memfree_kb", "memavailable_kb", "cached_kb",
                                       "passed"], csvrows)
    detail = []
    for name, (case, d) in dens.items():
        for s in (d or {}).get("samples", []):
            frac = s["refault_fraction"]
            pace = s.get("pace")
            disk = s.get("disk_fraction")
            ok = density_pass(s, fit, case.params.get("min_pace", 0.5))
            detail.append([short(name), s["n"], "pass" if ok else "FAIL",
                           s["read_mib_s"], None if pace is None else pace * 100,
                           s["refault_pages_s"], None if frac is None else frac * 100,
                           None if disk is None else disk * 100, s["alive"],
                           mib(s.get("memfree_kb")), mib(s["memavailable_kb"]),
                           mib(s["cached_kb"]),
                           statistics.median(d["start_s"][:s["n"]]) if d["start_s"] else None])
    md += ["Every sample (case names without `density-`; the labels above):", ""]
    md += table([("case", None), ("N", 0), ("sample", None), ("read MiB/s", 1),
                 ("pace %", 0), ("refaults pages/s", 1),
                 ("refaulted % of read", 2), ("disk read % of read", 2),
                 ("containers running", 0), ("MemFree MiB", 1), ("MemAvailable MiB", 1),
                 ("Cached delta MiB", 1), ("start median s", 2)], detail)
    mems = sorted({c.mem for c, _ in dens.values()})
    gnuplot(results, datablock("D", [[f'"{a}"', *x] for a, *x in plot])
            + f"""set terminal pngcairo size 1000,450 font ",11" noenhanced
set output 'density.png'
set style fill solid 0.8 border -1
set boxwidth 0.6
set ylabel 'containers that fit'
set yrange [0:*]
set grid ytics
set xtics rotate by -25
unset key
set title 'Containers that fit in {" / ".join(mems)} of guest memory: median of the boots, bars their limits range'
plot $D using 0:2:xtic(1) with boxes lc rgb '#1f77b4', '' using 0:2:3:4 with yerrorbars lc rgb 'black' pt -1
""")


def density_figures(boots):
    """Ratios of N reached with their bracket: each boot's limit lies in
    [N reached, first fail - 1], an arm's in [the lowest N reached, the
    highest first fail - 1] over its boots, so the ratio of two arms lies in
    [a_lo / b_hi, a_hi / b_lo]; the figure is the ratio of the medians of N
    reached. No verdict when a boot of either arm is capped (it passed every
    N it was given) or no boot has a result."""
    figs = {}
    st = {n: arm_states(cds) for n, cds in boots.items()}
    for key, on_name, refs in (
            ("thin", "density-thin-default", ("density-thin-off", "density-shared-off")),
            ("thin-hot", "density-thin-default-hot",
             ("density-thin-off-hot", "density-shared-off-hot"))):
        for what, ref_name in zip(("on-vs-off", "on-vs-shared"), refs):
            fid = f"density/{key}/{what}"
            on, ref = st.get(on_name), st.get(ref_name)
            if not on or not ref or not all(x[0] for x in ref):
                figs[fid] = Figure(why="not measured")
                continue
            on_n = statistics.median(x[0] for x in on)
            ref_n = statistics.median(x[0] for x in ref)
            note = (f"(N {'/'.join(str(x[0]) for x in on)} vs "
                    f"{'/'.join(str(x[0]) for x in ref)}; first fail "
                    f"{'/'.join(str(x[1] or NA) for x in on)} vs "
                    f"{'/'.join(str(x[1] or NA) for x in ref)})")
            capped = [short(n) for n, xs in ((on_name, on), (ref_name, ref))
                      if any(x[1] is None for x in xs)]
            if capped:
                figs[fid] = Figure(on_n / ref_n, note=note,
                                   why=f"capped: {', '.join(capped)} (no failing N)")
                continue
            on_lo, on_hi = min(x[0] for x in on), max(x[1] - 1 for x in on)
            ref_lo, ref_hi = min(x[0] for x in ref), max(x[1] - 1 for x in ref)
            figs[fid] = Figure(on_n / ref_n, on_lo / ref_hi, on_hi / ref_lo, note=note)
    return figs
