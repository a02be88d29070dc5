"""The fio cases (bench/guest/fio.py): throughput per mode over boots, the
hashing limit against the guest's SHA-256 rate, their targets."""
import statistics

from report_base import NA, datablock, gnuplot, paired_figure, short_of, spread_text, table, write_csv


# A latency is printed only when it spans at least this many clock steps.
MIN_CLOCK_STEPS = 10


def latency_us(ns, step_ns):
    """NS in microseconds, or None when the guest clock cannot tell it."""
    if ns is None or ns <= 0 or step_ns is None or ns < MIN_CLOCK_STEPS * step_ns:
        return None
    return ns / 1000


FIO_ROWS = [("cold", e, p) for e in ("psync", "mmap") for p in ("seq", "rand4k-10pct")] + \
    [("cached", e, p) for e in ("psync", "mmap") for p in ("seq", "rand4k")]


FIO_MODES = ("off", "full", "trust")


def fio_modes(fio):
    """The pcdedup modes the fio boots ran, in the report's order."""
    have = {r.get("verify", c.verify) for c, d in fio.values()
            for r in (d or {}).get("runs", [])}
    return [m for m in FIO_MODES if m in have] + sorted(have - set(FIO_MODES))


def fio_runs(boots, verify, phase, engine, pattern):
    """The run VERIFY PHASE ENGINE PATTERN of each boot (case, result) in
    BOOTS that has it: [(run, result)]. A run without its own verify is the
    case's (one mode per boot)."""
    return [(r, d) for c, d in boots for r in (d or {}).get("runs", [])
            if (r.get("verify", c.verify), r["phase"], r["engine"], r["pattern"]) ==
            (verify, phase, engine, pattern)]


def run_seconds(r):
    """The whole run, ramp included: what the disk and fill counters cover."""
    return r["ramp_s"] + r["runtime_ms"] / 1000


def fio_section(results, fio, md):
    if not fio:
        return
    first = next((d for _, d in fio.values() if d), None) or {}
    n, fmib = first.get("n"), first.get("file_mib")
    ramp, runtime = first.get("ramp_s"), first.get("runtime_s")
    free = first.get("cold_free_kib")
    free_mib = f"{free / 1024:.0f}" if free else NA
    memcg = first.get("cold_pressure") == "memcg"
    boots = list(fio.values())
    md += ["## fio: readers on their own thin snapshot of the same files", "",
           f"{n} readers, each on its own thin snapshot of the same 4 files of {fmib} MiB; "
           "`--readonly --invalidate=0 --fadvise_hint=0`; figures aggregate all jobs. "
           f"Every run is `time_based`: {ramp} s of ramp, then {runtime} s measured. "
           "**cached**: every reader reads all 4 files (the same content on every "
           "snapshot: one shared copy with pcdedup, one per snapshot without), with no "
           "memory limit, after one read of every file; `rand4k`: 4 KiB reads at random "
           "over all of every file. **cold**: reader I reads file I of its snapshot, so "
           "no two readers read the same content and every mode reads the same bytes from "
           "disk (what a fill and its checks cost per byte, not what sharing saves); "
           "after drop_caches, "
           + (f"the readers in a cgroup whose `memory.max` is {free_mib} MiB"
              if memcg else
              f"with all of the guest's memory but about {free_mib} MiB (for the page "
              "cache, fio and the kernel's reserves) taken by a locked anonymous "
              "allocation") +
           ", less than the files they read, so no pass finds what the one before read "
           "and the whole run reads from disk (`disk/read` shows it; with "
           "verify=full every block a fill brings in is hashed, nothing at open). `seq`: "
           "128 KiB reads; `rand4k-10pct`: 4 KiB reads of a random 10% of the file's blocks "
           "per pass, each once (about 13 in each 512 KiB; a fresh random 10% each pass): "
           "a 4 KiB miss through a share fills its whole 512 KiB granule. Each boot ran each "
           "run in every mode, one right after the other (the order of the modes rotating "
           f"from boot to boot); boots: {len(boots)}. A figure is the median over boots, "
           "with its spread (min-max); a target compares each mode with pcdedup off in the "
           "same boot (the runs a minute apart), the median of those ratios and their "
           "spread. `disk/read`: "
           "MiB read from disk per MiB the readers got (ramp "
           "included); `filled MiB/s`: what pcdedup filled into shares per second (each "
           "page hashed, with verify=full); `guest CPU busy %`: both guest CPUs, from "
           "/proc/stat over the run. Latency percentiles (medians over boots) are `n/a` "
           f"when they span fewer than {MIN_CLOCK_STEPS} steps of the guest's clock "
           "(measured in the guest: the smallest nonzero difference of CLOCK_MONOTONIC "
           "over 20000 readings).", ""]
    rows, csvrows = [], []
    for verify in fio_modes(fio):
        for phase, engine, pattern in FIO_ROWS:
            rs = fio_runs(boots, verify, phase, engine, pattern)
            if not rs:
                continue
            bw = [r["bw_kib_s"] / 1024 for r, _ in rs]
            disk = [r["disk_read_kib"] / (r["bw_kib_s"] * run_seconds(r))
                    for r, _ in rs if r["bw_kib_s"]]
            filled = [r["fill_kib"] / 1024 / run_seconds(r) for r, _ in rs
                      if r.get("fill_kib") is not None]
            busy = [r["cpu"]["busy"] * 100 for r, _ in rs if r.get("cpu")]
            # each boot's latencies as its own clock can tell them
            lat = [[latency_us(r["lat_ns"].get(p), d["guest"]["clock_step_ns"])
                    for r, d in rs] for p in ("50", "99")]
            lat = [statistics.median([x for x in v if x is not None])
                   if any(x is not None for x in v) else None for v in lat]
            vals = [statistics.median(bw), spread_text(bw), len(rs),
                    statistics.median(disk) if disk else None,
                    statistics.median(filled) if filled else None] + lat + \
                [statistics.median(busy) if busy else None]
            rows.append([verify, phase, engine, pattern] + vals)
            csvrows.append([verify, phase, engine, pattern] + vals)
    for case, d in boots:
        if not d:
            rows.append([case.name, "no result (case failed before writing)"])
        elif d.get("error"):
            rows.append([case.name, f"FAILED: {d['error']}"])
    md += table([("pcdedup", None), ("phase", None), ("engine", None), ("pattern", None),
                 ("MiB/s", 1), ("spread MiB/s", None), ("boots", 0), ("disk/read", 2),
                 ("filled MiB/s", 1), ("p50 us", 1), ("p99 us", 1),
                 ("guest CPU busy %", 0)], rows)
    write_csv(results, "fio.csv", ["pcdedup", "phase", "engine", "pattern", "mib_s",
                                   "spread_mib_s", "boots", "disk_per_read",
                                   "filled_mib_s", "p50_us", "p99_us", "guest_busy_pct"],
              csvrows)
    modes = list(dict.fromkeys(r[0] for r in csvrows))
    keys = list(dict.fromkeys(f"{r[1]} {r[2]} {r[3]}" for r in csvrows))
    data = [[f'"{k}"'] + [next((r[4] for r in csvrows if r[0] == m and
                                f"{r[1]} {r[2]} {r[3]}" == k), "NaN") for m in modes]
            for k in keys]
    cols = ", ".join(f"$f using {i + 2}:xtic(1) title 'pcdedup {m}'"
                     for i, m in enumerate(modes))
    gnuplot(results, datablock("f", data) + f"""set terminal pngcairo size 1100,600 noenhanced
set output 'fio.png'
set title 'fio aggregate throughput (median over boots), TCG'
set ylabel 'MiB/s (log scale)'
set style data histograms; set style fill solid border -1
set logscale y; set grid y; set xtics rotate by -30
set key outside right top vertical
plot {cols}
""")
    md += ["![fio throughput](fio.png)", ""]


def hash_boots(fio):
    """Per boot that ran verify=full: (case, result, SHA-256 MiB/s on one CPU
    and on all CPUs, the medians of the boot's measurements; the error when
    there are none)."""
    out = []
    for case, d in fio.values():
        if not fio_runs([(case, d)], "full", "cold", "psync", "seq") and \
                "full" not in (d or {}).get("modes", [case.verify]):
            continue
        hr = (d or {}).get("hashrate") or []
        one = [h["one_cpu_mib_s"] for h in hr if h.get("one_cpu_mib_s")]
        alls = [h["all_cpus_mib_s"] for h in hr if h.get("all_cpus_mib_s")]
        err = next((h["error"] for h in hr if h.get("error")), None)
        out.append((case, d, statistics.median(one) if one else None,
                    statistics.median(alls) if alls else None,
                    err or (None if hr else "not measured")))
    return out


def hash_fractions(fio, engine):
    """Per verify=full boot, cold ENGINE seq: filled (so hashed) MiB/s over
    the boot's SHA-256 rate on all CPUs."""
    out = []
    for case, d, one, alls, err in hash_boots(fio):
        r = next((r for r, _ in fio_runs([(case, d)], "full", "cold", engine, "seq")), None)
        if r is None or r.get("fill_kib") is None or not alls:
            continue
        out.append(r["fill_kib"] / 1024 / run_seconds(r) / alls)
    return out


def hash_ceiling(case, d, alls, engine):
    """What hashing allows once the read's own work is paid: the guest CPU
    time per MiB of the same cold ENGINE seq run without hashing (its
    verify=trust run: the same fills, unhashed; else pcdedup off), busy
    fraction over MiB/s, plus a MiB hashed on all CPUs, 1 / alls. Returns
    (that own cost in CPU ms per MiB, over all CPUs; the ceiling in MiB/s;
    the mode it came from), or None."""
    for mode in ("trust", "off"):
        r = next((r for r, _ in fio_runs([(case, d)], mode, "cold", engine, "seq")), None)
        if r and r.get("cpu") and r["bw_kib_s"] and alls:
            own = r["cpu"]["busy"] / (r["bw_kib_s"] / 1024)
            return own * 1000, 1 / (own + 1 / alls), mode
    return None


def ceiling_fractions(fio, engine):
    """Per verify=full boot, cold ENGINE seq: (filled MiB/s over the
    hash_ceiling(), the guest CPUs' busy %)."""
    out = []
    for case, d, _, alls, _ in hash_boots(fio):
        full = next((r for r, _ in fio_runs([(case, d)], "full", "cold", engine, "seq")),
                    None)
        c = hash_ceiling(case, d, alls, engine)
        if full and full.get("fill_kib") is not None and full.get("cpu") and c:
            out.append((full["fill_kib"] / 1024 / run_seconds(full) / c[1],
                        full["cpu"]["busy"] * 100))
    return out


def sha256_drivers(*runs):
    """What the boots' hash rate measurements say about the SHA-256 driver:
    the crypto API's (what AF_ALG used) and the one pcdedup logged."""
    seen = sorted({(h.get("driver") or "", h.get("pcdedup_driver") or "")
                   for fio in runs for _, d in fio.values()
                   for h in (d or {}).get("hashrate") or []})
    # Boots that recorded it speak for a run that mixes older results in.
    if any(api for api, _ in seen):
        seen = [x for x in seen if x[0]]
    if not seen or not any(api for api, _ in seen):
        return ("the driver was not recorded in this run; its kernel's fills hash with "
                "lib/crypto's sha256, the generic C code the crypto API's sha256-generic "
                "also runs")
    out = []
    for api, own in seen:
        out.append(f"driver `{api}`; pcdedup's fills "
                   + (f"logged `{own}`" if own else
                      "logged no driver (a kernel whose fills hash with lib/crypto's "
                      "sha256, the same generic C code)"))
    return "; ".join(out)


def hash_section(fio, md, control=None):
    """The hashing limit, per verify=full boot; CONTROL: boots of the same
    runs on one guest CPU, shown apart, out of the targets."""
    control = control or {}
    hb = hash_boots(fio) + hash_boots(control)
    if not hb:
        return
    md += ["## The hashing limit: verify=full cold reads against SHA-256", "",
           "In each verify=full boot the guest's SHA-256 rate is measured through the "
           "kernel crypto API (an AF_ALG `hash` socket, `sha256`: "
           + sha256_drivers(fio, control) + "), 1 MiB sends for 3 s, on one CPU and on all guest "
           "CPUs at once (one process pinned to each), before the cold runs and after them "
           "(the median of the two). A verify=full fill hashes every block it brings in, "
           "once: `filled MiB/s` (pcdedup's fill counter over the run) is the bytes "
           "hashed per second, and `hashed / all-CPU rate` the share of what SHA-256 on "
           "all CPUs allows that the cold sequential reads used (the readers read "
           "distinct content: `read MiB/s` is what they got, about what was filled). "
           "fs-verity's "
           "4 KiB blocks hash one padding block per 64 data blocks and one tree block per "
           "128: about 2.3% more work per byte than these streaming sends. `guest CPU "
           "busy %` and `iowait %`: both guest CPUs over the run (/proc/stat): what the "
           "fills left of the CPUs that hashing could have used. A read costs CPU "
           "besides its hashing: `own CPU ms/MiB` is the guest CPU time per MiB of the "
           "same run without hashing (the boot's verify=trust run: the same fills, "
           "unhashed), the busy fraction of all CPUs over its MiB/s; `ceiling MiB/s` what "
           "all CPUs allow for that work plus the hashing, 1 / (own + 1 / all-CPU rate); "
           "`filled / ceiling` how much of it the fills used: what is left is CPU time "
           "the fills did not use (compare `guest CPU busy %`)."
           + (" " + ", ".join(f"`{n}`" for n in control) + ": the control, the same "
              "cold sequential runs on one guest CPU (its SHA-256 columns that CPU's), "
              "which leaves the host's second core to QEMU's own I/O work: under TCG "
              "two guest CPUs and QEMU's I/O share the host's 2 cores. Its figures "
              "stay out of the targets." if control else ""), ""]
    rows = []
    for case, d, one, alls, err in hb:
        for engine in ("psync", "mmap"):
            r = next((r for r, _ in fio_runs([(case, d)], "full", "cold", engine, "seq")),
                     None)
            filled = None if r is None or r.get("fill_kib") is None else \
                r["fill_kib"] / 1024 / run_seconds(r)
            ceil = hash_ceiling(case, d, alls, engine)
            rows.append([case.name, f"cold {engine} seq", one, alls,
                         r and r["bw_kib_s"] / 1024, filled,
                         filled / alls if filled is not None and alls else None,
                         ceil and ceil[0], ceil and ceil[1],
                         filled / ceil[1] if filled is not None and ceil else None,
                         r and r.get("cpu") and r["cpu"]["busy"] * 100,
                         r and r.get("cpu") and r["cpu"]["iowait"] * 100,
                         err or "none"])
    md += table([("boot", None), ("run", None), ("SHA-256 1 CPU MiB/s", 1),
                 ("SHA-256 all CPUs MiB/s", 1), ("read MiB/s", 1), ("filled MiB/s", 1),
                 ("hashed / all-CPU rate", 2), ("own CPU ms/MiB", 2),
                 ("ceiling MiB/s", 1), ("filled / ceiling", 2), ("guest CPU busy %", 0),
                 ("iowait %", 0), ("hash rate error", None)], rows)


def fio_figures(fio):
    """Each mode against pcdedup off in the same boot: the median of the
    per-boot ratios and their spread."""
    figs = {}
    for mode in ("full", "trust"):
        for phase, engine, pattern in FIO_ROWS:
            ratios = []
            for cd in fio.values():
                a = fio_runs([cd], mode, phase, engine, pattern)
                b = fio_runs([cd], "off", phase, engine, pattern)
                if a and b and b[0][0]["bw_kib_s"]:
                    ratios.append(a[0][0]["bw_kib_s"] / b[0][0]["bw_kib_s"])
            f = paired_figure(ratios)
            figs[f"fio/{phase}/{engine}/{pattern}/{mode}-vs-off"] = f
            figs[f"fio/{phase}/{engine}/{pattern}/{mode}-vs-off-no-slower"] = f
    for engine in ("psync", "mmap"):
        fr = hash_fractions(fio, engine)
        err = next((e for *_, e in hash_boots(fio) if e), "")
        f = paired_figure(fr)
        if not fr and err:
            f.why = f"hash rate not measured: {err}"
        figs[f"hash/cold/{engine}/seq"] = f
    return figs


def fio_reasons(verdicts, fio, control=None):
    """Missed verify=full cold targets: the hashing limit. Against pcdedup
    off, the guest's SHA-256 rate on all CPUs over off's MiB/s bounds the
    ratio before any other cost; against that rate, the read's own work and
    CPU time the fills left unused."""
    out = []
    hb = hash_boots(fio)
    for engine in ("psync", "mmap"):
        bound = []
        for case, d, _, alls, _ in hb:
            off = next((r for r, _ in fio_runs([(case, d)], "off", "cold", engine, "seq")),
                       None)
            if off and off["bw_kib_s"] and alls:
                bound.append(alls / (off["bw_kib_s"] / 1024))
        ceil = [f for f, _ in ceiling_fractions(fio, engine)]
        busy = [b for _, b in ceiling_fractions(fio, engine)]
        one = ceiling_fractions(control or {}, engine)
        tid = f"fio/cold/{engine}/seq/full-vs-off"
        if short_of(verdicts.get(tid, "")) and bound:
            out.append(f"`{tid}`: hashing alone bounds it: the guest's SHA-256 rate on all "
                       f"CPUs is {statistics.median(bound):.2f}x of what pcdedup off reads "
                       f"cold ({engine} seq, median over boots; The hashing limit).")
        tid = f"fio/cold/{engine}/rand4k-10pct/full-vs-off"
        amp = {mode: [r["disk_read_kib"] / (r["bw_kib_s"] * run_seconds(r))
                      for r, _ in fio_runs(list(fio.values()), mode, "cold", engine,
                                           "rand4k-10pct") if r["bw_kib_s"]]
               for mode in ("full", "off")}
        if short_of(verdicts.get(tid, "")) and amp["full"] and amp["off"]:
            out.append(f"`{tid}`: a 4 KiB miss through a share fills and hashes its whole "
                       f"granule: verify=full read {statistics.median(amp['full']):.1f} MiB "
                       "from disk per MiB the readers got, pcdedup off "
                       f"{statistics.median(amp['off']):.1f} ({engine}, medians over boots; "
                       "fio).")
        tid = f"hash/cold/{engine}/seq"
        if short_of(verdicts.get(tid, "")) and ceil and busy:
            used = statistics.median(ceil)
            out.append(f"`{tid}`: with the read's own work paid, the fills used "
                       f"{used:.2f}x ({min(ceil):.2f}-{max(ceil):.2f}) of what all CPUs "
                       "allow; the guest CPUs were busy "
                       f"{statistics.median(busy):.0f}% of the run"
                       + (": the rest is CPU time no fill was ready to use" if used < 1 else
                          ": the unhashed run's cost per MiB overstates the read's own")
                       + ("" if not one else
                          f". On one guest CPU, the host's second core left to QEMU's "
                          f"I/O (the control), they used {statistics.median(f for f, _ in one):.2f}x "
                          f"of that CPU's ceiling, the CPU {statistics.median(b for _, b in one):.0f}% "
                          "busy")
                       + " (The hashing limit).")
    return out
