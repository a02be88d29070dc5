"""The report's section on how many real server containers fit
(bench/guest/serverramp.py): every server and both versions of each image
in turn, on thin snapshots and on overlay lowers, without and with pcdedup,
each arm booted several times, the arms interleaved."""
import statistics

from report_base import datablock, gnuplot, table, write_csv

SCENARIO_LABEL = {"thin": "thin snapshots", "overlay": "overlay, a lower per version"}
MODE_LABEL = {"off": "pcdedup off", "full": "pcdedup on (verify=full)",
              "trust": "pcdedup on (verify=trust)"}


def load_ramps(cases):
    """{(scenario, verify): [result of each boot, in boot order]}."""
    arms = {}
    for case, d in sorted(cases.values(), key=lambda cd: cd[0].params.get("boot", 0)):
        if case.kind == "serverramp":
            arms.setdefault((case.scenario, case.verify), []).append(d)
    return arms


def fail_reason(d):
    """Why the ramp stopped, in words."""
    if d.get("capped"):
        return f"capped ({d['capped']})"
    bad = [s for s in d.get("samples", []) if not s.get("ok")]
    if not bad:
        return "no sample failed"
    s = bad[-1]
    if s.get("start_error"):
        # the guest's message, then the server's log: its first line
        said = " ".join(s["start_error"].splitlines()[0].split())
        return f"N={s['n']}: did not start and serve ({said[:60]})"
    r = s["rounds"][-1]
    parts = []
    if r["errors"]:
        parts.append("a server did not answer")
    if r["alive"] != s["n"]:
        parts.append(f"{s['n'] - r['alive']} container(s) gone")
    if r["events"].get("oom_kill"):
        parts.append("OOM kill")
    if r["disk_read_kb"]:
        parts.append(f"check round read {r['disk_read_kb'] / 1024:.1f} MiB")
    return f"N={s['n']}: " + ", ".join(parts)


def per_container_at(d, n):
    """(MemAvailable's drop, Cached's growth) per container at N containers
    (MiB), or Nones."""
    for s in d.get("samples", []):
        if s["n"] == n and s.get("memavailable_drop_kb") is not None:
            cached = s.get("meminfo", {}).get("Cached")
            before = d.get("before", {}).get("Cached")
            return (s["memavailable_drop_kb"] / 1024 / n,
                    None if cached is None or before is None else (cached - before) / 1024 / n)
    return None, None


def serverramp_section(results, arms, md, mem=None):
    """The section, from ARMS (load_ramps()), in guests of MEM."""
    if not arms:
        return
    any_d = next(d for ds in arms.values() for d in ds if d)
    md += ["## Real servers: how many fit", "",
           "Containers of every server and both versions of its image started one after "
           f"another in turn ({', '.join(any_d.get('pairs', []))}, older, then newer, and "
           "round again), each ready when its server answers, then 20 requests; after 2 s "
           "a *check round* asks every running container for 5 more. With memory to spare "
           "every server's working set stays cached and a check round reads nothing from "
           "the disk: a sample passes when its check round read at most 64 KiB per "
           "container (a round that reads more is repeated once), every server answered "
           "right, every container runs and nothing was OOM-killed. *N reached*: the last "
           "N that passed, on each boot of the arm (the arms' boots interleaved), and "
           "their median; *per container*: MemAvailable's drop and Cached's growth from "
           "before the first container over N, at the largest N that every boot of every "
           "arm passed (medians of the boots).", ""]
    common_n = min((d.get("reached") or 0) for ds in arms.values() for d in ds if d)
    rows, plot = [], []
    for (scen, mode), ds in sorted(arms.items(), key=lambda kv: (kv[0][0], kv[0][1] != "off")):
        reached = [d.get("reached") for d in ds if d]
        at = [per_container_at(d, common_n) for d in ds if d]
        drops = [x[0] for x in at if x[0] is not None]
        cached = [x[1] for x in at if x[1] is not None]
        med = statistics.median(reached) if reached else None
        rows.append([SCENARIO_LABEL.get(scen, scen), MODE_LABEL.get(mode, mode),
                     " / ".join(str(x) for x in reached), med,
                     f"{min(reached)}-{max(reached)}" if reached else None,
                     statistics.median(drops) if drops else None,
                     statistics.median(cached) if cached else None,
                     "; ".join(fail_reason(d) for d in ds if d)])
        if reached:
            plot.append([f'"{scen} {mode}"', med, min(reached), max(reached)])
    cols = [("roots", None), ("pcdedup", None), ("N reached, each boot", None),
            ("median", 1), ("range", None),
            (f"MemAvailable per container at N={common_n} (MiB)", 1),
            (f"page cache per container at N={common_n} (MiB)", 1), ("stopped at", None)]
    md += table(cols, rows)
    write_csv(results, "serverramp.csv", [h for h, _ in cols], rows)
    md += ["![server containers that fit](serverramp.png)", ""]
    title = ("Mixed real servers in one guest" + (f" of {mem}" if mem else "")
             + ": median of the boots, bars their range")
    gnuplot(results, datablock("R", plot) + """set terminal pngcairo size 800,400 font ",11"
set output "serverramp.png"
set style fill solid 0.8 border -1
set boxwidth 0.6
set ylabel "server containers that fit"
set yrange [0:*]
set grid ytics
unset key
set title "TITLE"
plot $R using 0:2:xtic(1) with boxes lc rgb "#1f77b4", \\
     '' using 0:2:3:4 with yerrorbars lc rgb "black" pt -1
""".replace("TITLE", title))
