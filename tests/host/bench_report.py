#!/usr/bin/env python3
"""Host tests of bench/report.py and its sections on a small fixture of raw
results (bench_fixture.py): the report is written, its tables are well
formed (one cell per column, numbers right-aligned), every target has a
row, a missing figure prints as n/a (never 0), latencies finer than the
guest clock print as n/a, no machine path leaks in; and the figures,
brackets and verdicts the fixture's comments predict. Also bench.py's plan
(density budget, resumed statuses). Prints KTAP; tests/host/bench-report.sh
runs it. BENCH_REPORT_KEEP=DIR: copy the fixture's report there."""
import atexit
import csv
import functools
import os
import re
import shutil
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(REPO, "bench")
sys.path[:0] = [BENCH, os.path.join(BENCH, "guest")]
import bench  # noqa: E402
import bench_fixture  # noqa: E402
from case import Case, density_pass  # noqa: E402
from ktap import expect, expect_eq, main, test  # noqa: E402
import report  # noqa: E402
from report_base import Figure, ratio_figure  # noqa: E402
from report_containers import start_notes, start_reasons  # noqa: E402
from report_density import density_boots, density_figures, density_job_seconds, \
    density_section, density_state  # noqa: E402
from report_fio import fio_figures  # noqa: E402
from report_memory import memory_figures  # noqa: E402
from report_micro import cached_reasons  # noqa: E402
import report_serverramp  # noqa: E402
from report_targets import target_row  # noqa: E402


@functools.cache
def fixture():
    """The fixture's results folder, its report written (once)."""
    tmp = tempfile.mkdtemp()
    atexit.register(shutil.rmtree, tmp, True)
    res = os.path.join(tmp, "pcdedup-fixture")
    os.makedirs(os.path.join(res, "raw"))
    bench_fixture.write(os.path.join(res, "raw"))
    p = subprocess.run([sys.executable, os.path.join(BENCH, "report.py"), res],
                       capture_output=True, text=True)
    if os.environ.get("BENCH_REPORT_KEEP"):
        shutil.copytree(res, os.environ["BENCH_REPORT_KEEP"], dirs_exist_ok=True)
    return res, p


def md():
    with open(os.path.join(fixture()[0], "report.md")) as f:
        return f.read()


def cells(line):
    return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]


def row(prefix):
    """The cells of the report's first row that starts with PREFIX's cell."""
    line = next((x for x in md().split("\n") if x.startswith(f"| {prefix} |")), None)
    return cells(line) if line else None


def dens_row(label):
    r = row(label)
    return "|".join(r[1:5]) if r else None


def target(label):
    r = next((cells(x) for x in md().split("\n") if f"| {label} |" in x), None)
    return f"{r[2]}|{r[3]}" if r else None


def has_line(pattern):
    return re.search(pattern, md(), re.M) is not None


def case_json(n):
    """Density samples 1..N+1 passing up to N, the last failing on refaults."""
    return {"samples": [{"n": k, "alive": k, "events": {}, "pace": 1.0,
                         "refault_fraction": 0.5 if k == n + 1 else 0.0,
                         "disk_fraction": 0.0} for k in range(1, n + 2)],
            "capped": None, "start_s": [1.0] * (n + 1), "error": None}


# ---- the report, written -------------------------------------------------------

@test
def report_runs():
    _, p = fixture()
    expect(p.returncode == 0, f"exit {p.returncode}: {p.stderr[-500:]}")


@test
def report_written():
    expect(os.path.getsize(os.path.join(fixture()[0], "report.md")) > 0, "empty report")


@test
def report_tables_well_formed():
    """Every row has as many cells as the header; numeric columns are
    right-aligned (---:) and hold numbers or n/a."""
    lines = md().split("\n")
    bad, i, ntables = [], 0, 0
    while i < len(lines):
        if lines[i].startswith("|") and i + 1 < len(lines) and lines[i + 1].startswith("|---"):
            ntables += 1
            head, sep = cells(lines[i]), cells(lines[i + 1])
            if len(sep) != len(head):
                bad.append(f"line {i + 2}: separator has {len(sep)} cells, header {len(head)}")
            i += 2
            numeric, hasnum = [True] * len(head), [False] * len(head)
            while i < len(lines) and lines[i].startswith("|"):
                r = cells(lines[i])
                if len(r) != len(head):
                    bad.append(f"line {i + 1}: {len(r)} cells, header {len(head)}")
                for k, (s, c) in enumerate(zip(sep, r)):
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
    expect(not bad and ntables >= 5, "\n".join(bad) or f"only {ntables} tables")


@test
def report_every_target_row():
    with open(os.path.join(BENCH, "targets.csv")) as f:
        names = [r["target"] for r in csv.DictReader(x for x in f if not x.startswith("#"))]
    expect(len(names) >= 40, f"{len(names)} targets")
    missing = [t for t in names if f"| {t} |" not in md()]
    expect(not missing, f"no row for {missing}")


# ---- density ---------------------------------------------------------------------

@test
def report_density_thin_off_fits():
    """Thin without pcdedup reached 2, N=4 failed (20% refaults, two windows)."""
    expect_eq("48.0|2|4|refaults 20.0% of reads and disk reads 20.0% of reads at N=4 "
              "(two windows)", dens_row("XFS on dm-thin snapshots, pcdedup off"))


@test
def report_density_bracket():
    expect_eq("48.0|7|8|disk reads 30.0% of reads at N=8 (two windows)",
              dens_row("XFS on dm-thin snapshots, pcdedup on, defaults"))


@test
def report_density_capped():
    """Every N up to its 6 passed: no first fail."""
    expect_eq("7.0|6|n/a|capped: every sampled N up to 6 (the case's N) passed",
              dens_row("XFS on dm-thin snapshots, pcdedup on, defaults, hot set 15% of the "
                       "image"))


@test
def report_density_missing_is_na():
    """distinct + pcdedup has no result: n/a, not 0."""
    r = row("overlayfs, distinct lowers, pcdedup on, defaults")
    expect_eq("n/a|n/a", r and f"{r[2]}|{r[3]}")


@test
def report_density_memory_per_case():
    """The hot cases run in less memory (bench.py: density_hot_mem): said."""
    expect("Guest memory 512M (256M: shared-off-hot, thin-default-hot), " in md(),
           "no memory per case")


@test
def report_status_note():
    expect("; 1 case(s): status rebuilt." in md(), "no status note")


@test
def report_rerun_said():
    expect("density-thin-off run again (its first run: 58.3 s, status 0); " in md(),
           "rerun not said")


@test
def report_density_job_time():
    expect(has_line(r"^The density job took 15 s in all, boots included\.$"), "no job time")


@test
def report_density_sample_fail():
    expect(has_line(r"^\| thin-default \| 8 \| FAIL \| 256\.0 \| 100 \| 64\.0 \| 1\.00 \| 30\.00 \|"),
           "no failing sample row")


@test
def report_density_pace():
    expect_eq("7.0|4|6|read at 30% of their pace at N=6 (two windows)",
              dens_row("overlayfs, one shared lower, pcdedup off, hot set 15% of the image"))


@test
def report_density_start_failed():
    """A container that never got ready is the limit: a failing sample."""
    expect_eq("48.0|2|4|container 4 did not start (container c4 not ready (exited or 180s), "
              "after 180.2 s) at N=4", dens_row("overlayfs, distinct lowers, pcdedup off"))


@test
def report_density_time_capped():
    """A case whose time budget ran out is capped: no first fail, no verdict
    on a target it is an arm of (the other arm failed at N=9)."""
    def res(ns, fail_at=None):
        return {"samples": [{"n": n, "alive": n, "events": {}, "pace": 1.0,
                             "refault_fraction": 0.5 if n == fail_at else 0.0,
                             "disk_fraction": 0.0} for n in ns],
                "capped": None if fail_at else "time", "start_s": [1.0] * ns[-1],
                "error": None}
    p = {"fit_fraction": 0.01, "min_pace": 0.2, "max_s": 300}
    on = Case("density-thin-default", "density", "thin", "default", n=64, params=p)
    off = Case("density-thin-off", "density", "thin", "off", n=64, params=p)
    dens = {on.name: (on, res([4, 8, 12, 13])), off.name: (off, res([2, 4, 8, 9], fail_at=9))}
    expect_eq("13|None|time|capped: the case's time budget (300 s) ran out at N=13",
              "|".join(str(x) for x in density_state(*dens[on.name])))
    t = {"target": "t", "want": ">=", "limit": 2.0, "unit": "x"}
    fig = density_figures({n: [cd] for n, cd in dens.items()})["density/thin/on-vs-off"]
    expect_eq("1.62x (N 13 vs 8; first fail n/a vs 9)|n/a (capped: thin-default (no failing N))",
              "|".join(target_row(t, fig)[2:]))


@test
def report_density_first_start_fails():
    """The first container never got ready: N reached 0, and the section is
    still written (no start time to take a median of)."""
    c = Case("density-shared-off", "density", "shared", "off", n=64,
             params={"fit_fraction": 0.01, "min_pace": 0.2, "max_s": 60})
    s = {"n": 1, "alive": 1, "pace": 0.7, "refault_fraction": 0.0, "disk_fraction": 0.0,
         "refault_pages_s": 0.0, "read_mib_s": 22.0, "memfree_kb": 390000,
         "memavailable_kb": 440000, "cached_kb": 52000, "events": {"oom_kill": 0},
         "start_failed": "container c1 not ready (exited or 0.2s): ", "start_failed_s": 5.6}
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        density_section(tmp, {c.name: [(c, {"samples": [s], "start_s": [], "error": None,
                                            "capped": None})]}, out)
    r = next(x for x in out if x.startswith("| overlayfs, one shared lower"))
    expect_eq("0|1|container 1 did not start (container c1 not ready (exited or 0.2s), "
              "after 5.6 s) at N=1", "|".join(x.strip() for x in r.split("|")[3:6]))


def passes(base, change):
    s = dict(base, events=dict(base["events"]))
    for k, v in change.items():
        (s["events"] if k in s["events"] else s)[k] = v
    return "pass" if density_pass(s, 0.01, 0.2) else "fail"


@test
def report_density_pace_needs_tight_memory():
    """A slow pace fails a sample only when memory is tight (reclaim in the
    window, or free memory under twice the high watermarks)."""
    base = {"n": 12, "alive": 12, "pace": 0.1, "refault_fraction": 0.0, "disk_fraction": 0.0,
            "memfree_kb": 200000, "watermark_high_kb": 4000,
            "events": {"oom_kill": 0, "pgscan_kswapd": 0, "pgscan_direct": 0,
                       "slabs_scanned": 0}}
    got = {what: passes(base, ch) for what, ch in (
        ("spare", {}), ("slab shrinkers", {"slabs_scanned": 10}),
        ("direct reclaim", {"pgscan_direct": 3}), ("low free", {"memfree_kb": 7000}),
        ("no watermark", {"watermark_high_kb": None}),
        ("fast", {"pace": 0.9, "memfree_kb": 7000}))}
    expect_eq({"spare": "pass", "slab shrinkers": "fail", "direct reclaim": "fail",
               "low free": "fail", "no watermark": "fail", "fast": "pass"}, got)


@test
def report_density_disk_needs_tight_memory():
    """Disk reads over the limit fail a sample only when memory is tight;
    refaults fail it always."""
    base = {"n": 4, "alive": 4, "pace": 1.1, "refault_fraction": 0.0, "disk_fraction": 0.0117,
            "memfree_kb": 367000, "watermark_high_kb": 4000,
            "events": {"oom_kill": 0, "pgscan_kswapd": 0, "pgscan_direct": 0,
                       "slabs_scanned": 0}}
    got = {what: passes(base, ch) for what, ch in (
        ("spare", {}), ("kswapd", {"pgscan_kswapd": 40}), ("low free", {"memfree_kb": 7000}),
        ("refaults spare", {"refault_fraction": 0.02, "disk_fraction": 0.0}))}
    expect_eq({"spare": "pass", "kswapd": "fail", "low free": "fail",
               "refaults spare": "fail"}, got)


@test
def report_density_boots_bracket():
    """Later boots (NAME-bK) join their arm; the figure is the ratio of the
    medians of N reached, bracketed by the lowest N reached and the highest
    first fail - 1 over the boots."""
    p = {"fit_fraction": 0.01, "min_pace": 0.2, "max_s": 300}
    dens = {}
    for verify, lasts in (("default", (27, 29, 28)), ("off", (7, 8, 7))):
        for boot, last in enumerate(lasts, 1):
            name = f"density-thin-{verify}" + (f"-b{boot}" if boot > 1 else "")
            c = Case(name, "density", "thin", verify, n=64, params=dict(p, boot=boot))
            dens[name] = (c, case_json(last))
    boots = density_boots(dens)
    expect_eq({"density-thin-default": 3, "density-thin-off": 3},
              {a: len(cds) for a, cds in boots.items()})
    t = {"target": "t", "want": ">=", "limit": 2.0, "unit": "x"}
    expect_eq("4.00x [3.38-4.14x] (N 27/29/28 vs 7/8/7; first fail 28/30/29 vs 8/9/8)|"
              "**met** (2.00x to spare)",
              "|".join(target_row(t, density_figures(boots)["density/thin/on-vs-off"])[2:]))
    # The job's time is the sum over every boot's case, by case name (the
    # table's labels, "ARM (boot K)", are not case names).
    status = [{"case": name, "rc": 0, "seconds": 100 + i} for i, name in enumerate(sorted(dens))]
    expect_eq(615, density_job_seconds(boots, status))


# ---- bench.py's plan -------------------------------------------------------------

@test
def bench_density_plan():
    """Every density case's coarse samples end at its N, and the density job
    stays within its budget when each case stops within its ramp budget and
    overhead, whatever the cases before it took."""
    got = []
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
        got.append(f"{label}: samples end at N: {bad or 'yes'}; within budget: "
                   f"{over or 'yes'}; first case's budget {first} s of {cfg['density_max_s']}")
    expect_eq(["full: samples end at N: yes; within budget: yes; first case's budget "
               "1500 s of 1500",
               "quick: samples end at N: yes; within budget: yes; first case's budget "
               "420 s of 420"], got)


@test
def bench_resume_keeps_statuses():
    """A resumed run that selected one case keeps the others' statuses, in
    their order, the one it ran in its place, a new one last."""
    m = bench.merge_statuses([{"case": "a", "rc": 0}, {"case": "b", "rc": 0},
                              {"case": "c", "rc": 0}],
                             [{"case": "b", "rc": 1}, {"case": "d", "rc": 0}])
    expect_eq("a:0 b:1 c:0 d:0", " ".join(f"{s['case']}:{s['rc']}" for s in m))


# ---- targets ---------------------------------------------------------------------

@test
def report_target_missing_is_na():
    expect_eq("n/a|n/a (not measured)",
              target("density, thin, hot set 15% of the image: containers that fit with "
                     "pcdedup vs without"))


@test
def report_target_met_by():
    """Thin + pcdedup fits 7 exactly, without it 2 to 3: 7/3 to 7/2."""
    expect_eq("3.50x [2.33-3.50x] (N 7 vs 2; first fail 8 vs 4)|**met** (1.50x to spare)",
              target("density, thin: containers that fit with pcdedup vs without"))


@test
def report_target_density_missed():
    expect_eq("0.70x [0.70-0.70x] (N 7 vs 10; first fail 8 vs 11)|**missed** (0.25x short)",
              target("density, thin: containers that fit with pcdedup vs overlayfs shared "
                     "lower"))


@test
def report_target_density_capped():
    expect_eq("1.50x (N 6 vs 4; first fail n/a vs 6)|n/a (capped: thin-default-hot (no "
              "failing N))",
              target("density, thin, hot set 15% of the image: containers that fit with "
                     "pcdedup vs overlayfs shared lower"))


def memcell(row_name, col):
    lines = md().split("\n")
    i = next(i for i, x in enumerate(lines) if x.startswith("| MiB per container |"))
    head = cells(lines[i])
    r = next(cells(x) for x in lines[i + 2:] if x.startswith(f"| {row_name} |"))
    return r[head.index(col)]


@test
def report_memory_slab():
    """Slab 4 MiB (thin) against 1 MiB (shared lower), at the same N."""
    expect_eq(["4.00", "1.00", "3.00"],
              [memcell("slab (Slab)", "thin-default (N=7)"),
               memcell("slab (Slab)", "shared-off (N=10)"),
               memcell("slab (Slab)", "thin-default - shared-off (both at N=4)")])


@test
def report_memory_other_and_objects():
    expect_eq(["1.00", "1100", "0.00"],
              [memcell("other kernel (in no field above)", "thin-default (N=7)"),
               memcell("inodes", "thin-default (N=7)"),
               memcell("other kernel (in no field above)", "shared-off (N=10)")])


@test
def report_traced_pcdedup():
    expect(has_line(r"^\| pcdedup \| 0 \| 250 \| 0 \|$"), "no pcdedup row")


@test
def report_traced_xfs_buffer_pages():
    expect(has_line(r"^\| XFS buffers \(metadata, directories\) \| 0 \| 1024 \| 64 \|$"),
           "no XFS buffers row")


@test
def report_traced_caused_by_pcdedup():
    expect("What pcdedup causes, against thin-off (the same case without it): its own "
           "objects (+250 KiB) and XFS buffer pages (+960 KiB: the blocks holding the keys, "
           "read by every root), +1210 KiB (75% of the difference)." in md(), "not said")


@test
def report_traced_extra_memory():
    expect("**thin-default against shared-off**, the traced container: +1610 KiB of the "
           "kernel's own memory (slab objects, and pages of a known owner outside the slab, "
           "the page cache and anonymous memory): pages: XFS buffers (metadata, directories) "
           "+1024, slab: XFS +1000, slab: pcdedup +250, slab: overlayfs -664. pcdedup's own "
           "objects: +250 KiB (16% of the difference)." in md(), "not said")


MEM_TARGET = ("pcdedup's own kernel memory per container (thin, traced container: its slab "
              "objects and the XFS buffer pages holding keys, beyond thin without pcdedup)")


@test
def report_target_pcdedup_own_memory():
    """The fixture's traced thin + pcdedup container against thin off: its
    250 KiB and 960 KiB of buffer pages, one count (its own bracket); the
    operator case was not traced (not run): n/a."""
    expect_eq(["1210 KiB [1210-1210 KiB] (one traced container: slab 250 + XFS buffers "
               "960 KiB, against thin-off)|**missed** (1060 KiB over)",
               "n/a|n/a (not traced)"],
              [target(MEM_TARGET),
               target("pcdedup's own kernel memory per container (thin as an operator sets "
                      "it up: noatime, two log buffers, keys inline; traced container: its "
                      "slab objects and the XFS buffer pages holding keys, beyond thin "
                      "without pcdedup)")])


def traced_case(members, buf_pages, pages=True):
    """A density result whose traced container holds MEMBERS 128-byte
    pcdedup objects and BUF_PAGES XFS buffer pages (PAGES: the page trace
    ran)."""
    trace = {"live": [{"site": "pcdedup_member_get", "cache": "kmalloc-128", "size": 128,
                       "objects": members},
                      {"site": "xfs_inode_alloc", "cache": "xfs_inode", "size": 1024,
                       "objects": 100}]}
    if pages:
        trace["pages"] = [{"caller": "xfs_buf_alloc_pages < xfs_buf_get_map",
                           "pages": buf_pages}]
    return (None, {"profile": {"container": 3, "trace": trace}})


@test
def report_memory_figure_synthetic():
    """pcdedup's slab (800 x 128 B: 100 KiB) and its buffer pages beyond
    thin off (30 - 10 pages: 80 KiB): 180 KiB; the operator case holds
    fewer buffer pages than thin off, which count as none, not as less."""
    page_kib = os.sysconf("SC_PAGE_SIZE") // 1024
    figs = memory_figures({"density-thin-default": traced_case(800, 30),
                           "density-thin-default-operator": traced_case(800, 5),
                           "density-thin-off": traced_case(0, 10)})
    f, g = (figs[f"memory/{s}/pcdedup-own-per-container"] for s in ("thin", "thin-operator"))
    expect_eq([100 + 20 * page_kib] * 3 + [100.0] * 3,
              [f.value, f.lo, f.hi, g.value, g.lo, g.hi])
    t = {"target": "t", "want": "<=", "limit": 150, "unit": "KiB"}
    expect_eq(["<= 150 KiB", "120 KiB [120-120 KiB] (one)", "**met** (30 KiB to spare)",
               "150.4 KiB [150.4-150.4 KiB]", "**missed** (0.4 KiB over)"],
              list(target_row(t, Figure(120, 120, 120, "(one)"))[1:]) +
              list(target_row(t, Figure(150.4, 150.4, 150.4))[2:]))


@test
def report_memory_figure_missing_is_na():
    """Without the traced container of thin off, or without its page trace,
    the figure is missing (n/a), never 0."""
    tid = "memory/thin/pcdedup-own-per-container"
    t = {"target": "t", "want": "<=", "limit": 150, "unit": "KiB"}
    figs = [memory_figures(d)[tid] for d in (
        {"density-thin-default": traced_case(800, 30)},
        {"density-thin-default": traced_case(800, 30), "density-thin-off": (None, {})},
        {"density-thin-default": traced_case(800, 30),
         "density-thin-off": traced_case(0, 10, pages=False)},
        {})]
    expect_eq([None] * 4, [f.value for f in figs])
    expect_eq(["n/a|n/a (not traced)"] * 2 + ["n/a|n/a (pages not traced)",
                                               "n/a|n/a (not traced)"],
              ["|".join(target_row(t, f)[2:]) for f in figs])


@test
def report_traced_top_site():
    expect(has_line(r"^\| xfs_inode_alloc \| xfs_inode \| 1024 \| 1000 \| 1000\.0 \| XFS \|$"),
           "no top site")


@test
def report_target_missed_by():
    expect_eq("+3.00% [+2.79%, +3.20%]|**missed** (1.00 points over)",
              target("untagged stat, whole series (pcdedup on) vs stock"))


@test
def report_target_inconclusive_change():
    expect_eq("+0.30% [+0.10%, +0.50%]|inconclusive (the limit lies within the spread)",
              target("untagged open+close, security series only vs stock"))


@test
def report_target_inconclusive_ratio():
    expect_eq("0.92x [0.88-0.95x]|inconclusive (the limit lies within the spread)",
              target("fio cold psync seq: verify=trust vs pcdedup off"))


@test
def report_target_tagged_vs_untagged():
    expect_eq("2.09x [2.08-2.10x]|**missed** (0.89x over)",
              target("cached open+close, tagged (through a share) vs untagged"))


@test
def report_target_from_density():
    """QUICK has no containers cases: page cache from the density cases, named."""
    expect_eq("1.00x [1.00-1.00x] (density-thin-default, N=7)|**met** (0.10x to spare)",
              target("page cache, thin + pcdedup (verify=full) vs overlayfs shared lower"))


@test
def report_target_hash_limit():
    """Filled 64 and 72 MiB/s against 80 MiB/s (psync)."""
    expect_eq("0.85x [0.80-0.90x]|inconclusive (the limit lies within the spread)",
              target("verify=full cold psync seq: bytes hashed per second vs the guest's "
                     "SHA-256 rate on all CPUs"))


@test
def report_hash_driver():
    """The driver a boot recorded is named (the control's), not the older
    boots' missing one."""
    expect(has_line(r".*`sha256`: driver `sha256-ni`; pcdedup's fills logged `sha256-ni`\), "),
           "the SHA-256 driver is not named")


@test
def report_hash_row():
    """The read's own cost from the boot's trust run: 5.39 ms/MiB; with a
    MiB hashed at 80 MiB/s, a ceiling of 55.9 MiB/s."""
    r = row("fio-thin-boot1 | cold psync seq")
    expect_eq("40.0|80.0|43.9|64.0|0.80|5.39|55.9|1.14|50|10|none", r and "|".join(r[2:13]))


def why(tid, pattern):
    line = next((x for x in md().split("\n") if x.startswith(f"- `{tid}`:")), "")
    m = re.search(pattern, line)
    return m.group(0) if m else f"no line for {tid} with {pattern}"


@test
def report_why_density():
    """At the same N a thin container takes what the fixture gives it beyond
    a shared-lower one: slab 3 MiB, other kernel 1."""
    expect_eq("at N=4, the largest N both sampled, a container of thin-default uses 26.94 MiB, "
              "4.00 MiB more than one of shared-off (22.94 MiB): slab +3.00, other kernel "
              "+1.00", why("density/thin/on-vs-shared", r"at N=[0-9]*, .*other kernel [+0-9.]*"))


@test
def report_why_read():
    """Without its share file a tagged read would cost (2001 + 1514 - 310) / 2001."""
    expect_eq("it would be 1.60x", why("ab/tagged-vs-untagged/read", r"it would be [0-9.]*x"))


@test
def report_why_hash_bound():
    expect_eq("all CPUs is 0.78x", why("fio/cold/psync/seq/full-vs-off", r"all CPUs is [0-9.]*x"))


@test
def report_why_hash_ceiling():
    expect_eq("used 1.21x (1.14-1.28)", why("hash/cold/psync/seq", r"used [0-9.]*x \([0-9.-]*\)"))


@test
def report_why_not_when_met():
    expect(not any(x.startswith("- `hash/cold/mmap/seq`:") for x in md().split("\n")),
           "a met target has a line")


@test
def report_control_hash_row():
    """The one-CPU control: its own row, out of the targets."""
    r = row("fio-thin-1cpu | cold psync seq")
    expect_eq("40.0|40.0|19.5|24.0|0.60|12.50|26.7|0.90|50|10|none", r and "|".join(r[2:13]))


@test
def report_why_control():
    expect_eq("they used 0.90x of that CPU's ceiling, the CPU 50% busy",
              why("hash/cold/psync/seq",
                  r"they used [0-9.]*x of that CPU's ceiling, the CPU [0-9]*% busy"))


@test
def report_ab_three_arms():
    """A/B: three arms, the changes stock->security and security->whole."""
    r = row("untagged | open_close")
    expect_eq("1001|1004|1011|+0.30% [+0.10, +0.50]|+0.70% [+0.50, +0.90]|2/2/2",
              r and "|".join(r[2:5] + r[8:11]))


@test
def report_read_split():
    """Where a tagged read's extra cost goes: medians over the two boots."""
    got = []
    for prefix in ("open+close", "the share file:", "the reads through it",
                   "open+read+close (read)", "read less the three"):
        line = next((x for x in md().split("\n") if f"| {prefix}" in x), None)
        got.append("|".join(c.replace(" ", "") for c in cells(line)[1:4]) if line else None)
    expect_eq(["1104|1090to1118|2", "310|310to310|2", "105|100to110|2", "1514|1500to1528|2",
               "-5|-10to0|2"], got)


@test
def report_profile():
    """The profile: the largest differences first, then the rest and the total."""
    lines, on, got = md().split("\n"), False, []
    for i, x in enumerate(lines):
        if x.startswith("| read: function "):
            on, start = True, i + 2
            break
    expect(on, "no read profile table")
    for x in lines[start:]:
        if not x.startswith("|"):
            break
        got.append("|".join(c.replace(" ", "") for c in cells(x)[:4]))
    expect_eq(["[k]pcdedup_x|0|300|300", "[k]a|600|750|150", "[k]b|400|450|50",
               "theother0functions|0|0|0", "total(theopunderperf)|1000|1500|500"], got)


@test
def report_fio_median_spread():
    r = row("off | cold | psync | seq")
    expect_eq("102.5|97.7-107.4|2", r and "|".join(r[4:7]))


@test
def report_fio_coarse_clock_na():
    """A 4 ms clock gives no percentiles."""
    r = row("off | cold | psync | seq")
    expect_eq("n/a|n/a", r and "|".join(r[9:11]))


@test
def report_fio_fine_clock():
    """A 2 us clock gives p50 250.0 and no p99 of 1.5 us (below 10 steps)."""
    r = row("trust | cold | psync | seq")
    expect_eq("250.0|n/a", r and "|".join(r[9:11]))


@test
def report_no_zero_latency():
    bad = [x for x in md().split("\n") if re.match(r"^\| (off|trust) \|", x)
           and any(re.fullmatch(r"0(\.0)?", c) for c in cells(x)[9:11])]
    expect(not bad, f"zero latencies: {bad}")


# ---- the rest of the report ------------------------------------------------------

@test
def report_host_load():
    expect("| density-thin-off | density | crun | patched | 512M | ok | 10.0 | 1.50->2.25 | 95 |"
           in md(), "no host load")


@test
def report_no_negative_zero():
    expect(not has_line(r"(^|[ |])-0(\.0+)?( |$)"), "a -0 printed")


@test
def report_no_machine_paths():
    expect(not re.search(re.escape(REPO) + r"|/work/|/home/|/tmp/|init=", md()),
           "a machine path in the report")


@test
def report_plots():
    """gnuplot-nox is a dependency (scripts/deps.txt): no picture fails."""
    res = fixture()[0]
    missing = [p for p in ("density.png", "memory_vs_n.png", "start.png")
               if not os.path.exists(os.path.join(res, p))
               or not os.path.getsize(os.path.join(res, p))]
    expect(not missing, f"not drawn: {missing}")


@test
def report_no_dat_files():
    expect(not [f for f in os.listdir(fixture()[0]) if f.endswith(".dat")], ".dat files left")


@test
def report_start_reads_outside_shares():
    """20 MiB read, the page cache grown by 12 MiB (4 MiB of it filled into
    shares, 1024 pages), over 2 containers: 4 MiB of metadata each."""
    c = Case("containers-thin-full-patched", "containers", "thin", "full", None, "patched", n=2)
    d = {"start_s": [1.0, 3.0], "samples": [{"n": 2, "disk_read_kb": 20480,
                                             "cached_kb": 12288,
                                             "pcdedup": {"vmstat": {"pcdedup_fill": 1024}}}]}
    rows = [x for x in start_notes({c.name: (c, d)}) if x.startswith("| containers")]
    expect_eq("|containers-thin-full-patched|2|2.00|20.0|12.0|4.0|4.00|",
              rows[0].replace(" ", "") if rows else "none")


@test
def report_why_start():
    """An open start target says what each start reads besides file data
    against what one on the shared lower reads besides its data (80 KiB over
    2 containers: 0.04 MiB, not the 4 MiB its data adds); a met one says
    nothing."""
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
    expect_eq(["each start of containers-thin-full-patched read 4.00 MiB from disk besides "
               "file data (its own inodes, directories and keys), one on the shared lower "
               "0.04 MiB, 102x (What a container start reads outside the shares)."],
              [x.split(": ", 1)[1] for x in start_reasons(v, cont)])


@test
def report_why_cached():
    """An open cached psync target quotes micro's reread: 1000/900 and
    1010/900 on the whole series, 1.12x; a met one, and an open mmap one,
    are not listed."""
    micro = {n: cd for n, cd in report.load_cases(os.path.join(fixture()[0], "raw")).items()
             if cd[0].kind == "micro"}
    v = {"fio/cached/psync/rand4k/trust-vs-off": "inconclusive (the limit lies within the "
         "spread)",
         "fio/cached/psync/seq/trust-vs-off": "**met** (0.01x to spare)",
         "fio/cached/mmap/seq/full-vs-off-no-slower": "**missed** (0.01x short)"}
    expect_eq(["`fio/cached/psync/rand4k/trust-vs-off`: a cached read through a share costs "
               "1.12x a plain one"], [x.split(" (")[0] for x in cached_reasons(v, micro)])


@test
def report_no_spread_no_verdict():
    """One boot each gives the figure and n/a; a kernel without AF_ALG
    hashing gives n/a and says why."""
    t = {"target": "t", "want": ">=", "limit": 0.9, "unit": "x"}
    c = Case("fio-thin-boot1", "fio", "thin", "default")
    d = {"modes": ["full"],
         "hashrate": [{"one_cpu_mib_s": None, "all_cpus_mib_s": None,
                       "error": "OSError: [Errno 97] Address family not supported"}],
         "runs": [{"verify": "full", "phase": "cold", "engine": "psync", "pattern": "seq",
                   "fill_kib": 1024, "ramp_s": 2, "runtime_ms": 10000, "bw_kib_s": 100}]}
    f = fio_figures({c.name: (c, d)})["hash/cold/psync/seq"]
    expect_eq(["0.95x|n/a (no spread: 1 and 1 boots)",
               "n/a|n/a (hash rate not measured: OSError: [Errno 97] Address family not "
               "supported)"],
              ["|".join(target_row(t, ratio_figure([95], [100]))[2:]),
               "|".join(target_row(t, f)[2:])])


@test
def report_partial_run_no_self_comparison():
    """A run without the cases pcdedup off is compared with (as a partial
    --only run has): the targets against pcdedup off say n/a."""
    res = fixture()[0]
    with tempfile.TemporaryDirectory() as tmp:
        p = os.path.join(tmp, "partial")
        shutil.copytree(res, p)
        for f in os.listdir(os.path.join(p, "raw")):
            if f.startswith(("density-thin-off.", "containers-")):
                os.remove(os.path.join(p, "raw", f))
        r = subprocess.run([sys.executable, os.path.join(BENCH, "report.py"), p],
                           capture_output=True, text=True)
        with open(os.path.join(p, "report.md")) as f:
            line = next((x for x in f if "| page cache, thin + pcdedup (verify=full) vs the "
                         "same without pcdedup |" in x), "")
    expect(r.returncode == 0 and "| n/a |" in line, f"exit {r.returncode}: {line!r}")


# ---- the server ramp -------------------------------------------------------------

def ramp_result(reached, why):
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


@test
def report_serverramp_rows():
    """Each boot's N reached, their median and range, per container at the
    largest N every boot passed, and why each boot stopped, in words."""
    cases = {}
    for verify, lasts in (("off", (9, 10, 9)), ("full", (12, 12, 13))):
        for boot, last in enumerate(lasts, 1):
            c = Case(f"serverramp-thin-{verify}-b{boot}", "serverramp", "thin", verify,
                     params={"boot": boot})
            why = {"disk_read_kb": 3072} if verify == "off" else {"events": {"oom_kill": 1}}
            cases[c.name] = (c, ramp_result(last, why))
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        report_serverramp.serverramp_section(tmp, report_serverramp.load_ramps(cases), out)
    rows = ["|".join(x.strip() for x in line.split("|")[2:9]) for line in out
            if line.startswith("| thin")]
    expect_eq(["pcdedup off|9 / 10 / 9|9.0|9-10|40.0|10.0|N=10: check round read 3.0 MiB; "
               "N=11: check round read 3.0 MiB; N=10: check round read 3.0 MiB",
               "pcdedup on (verify=full)|12 / 12 / 13|12.0|12-13|40.0|10.0|N=13: OOM kill; "
               "N=13: OOM kill; N=14: OOM kill"], rows)


@test
def report_serverramp_reasons():
    """A boot that stopped on nothing says so instead of a reason it does not
    have; a capped one says why; one whose container did not start says the
    first line of what it said."""
    r = report_serverramp.fail_reason
    expect_eq(["no sample failed", "capped (time)", "N=3: did not start and serve (crun: exit 1)",
               "N=19: did not start and serve (c19 (older) not answering: m /var/lib)"],
              [r({"samples": [{"n": 1, "ok": True}]}), r({"capped": "time", "samples": []}),
               r({"samples": [{"n": 3, "ok": False, "start_error": "crun: exit 1"}]}),
               # the server's log after the guest's message: one line of it,
               # never a line break in a table cell
               r({"samples": [{"n": 19, "ok": False, "start_error":
                               "c19 (older) not answering: m /var/lib\n2026-12-07 [Note] x"}]})])


if __name__ == "__main__":
    sys.exit(main())
