"""bench/targets.csv: each target's row with its figure, bracket and
verdict, and why the open ones are open."""
import csv
import os

import report_pairs
from report_base import NA
from report_containers import containers_figures, start_reasons
from report_density import density_figures
from report_fio import fio_figures, fio_reasons
from report_memory import density_reasons, memory_figures
from report_micro import cached_reasons, micro_figures, micro_reasons


TARGETS_CSV = os.path.join(os.path.dirname(os.path.abspath(__file__)), "targets.csv")


def load_targets(path=TARGETS_CSV):
    """The rows of bench/targets.csv (comment lines start with #)."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    for r in rows:
        r["limit"] = float(r["limit"])
    return rows


def target_row(t, f):
    """(target, want, measured, verdict) for target row T and Figure F. The
    verdict rests on the bracket: met or missed when all of it lies on one
    side of the limit (by how much: the median's distance), inconclusive when
    the limit lies inside it, n/a without a figure or without a bracket."""
    pct, kib = t["unit"] == "%", t["unit"] == "KiB"
    lim = t["limit"]
    want = (f"{t['want']} {lim:.0f} KiB" if kib else
            f"within {lim:.1f}%" if t["want"] == "within" else
            f"{t['want']} {lim:+.1f}%" if pct else f"{t['want']} {lim:.2f}x")
    if f is None or f.value is None:
        why = (f and f.why) or "not measured"
        return (t["target"], want, NA, f"{NA} ({why})")
    # A ratio that rounds to the limit but is not it (0.1011 against 0.10),
    # or KiB that do (150.4 against 150), is printed with the digits that
    # tell them apart.
    near = (lambda d: any(x is not None and x != float("inf") and x != lim and
                          round(x, d) == round(lim, d) for x in (f.value, f.lo, f.hi)))
    nd = (1 if near(0) else 0) if kib else 4 if not pct and near(2) else 2
    fmt = (lambda x: f"{x:+.{nd}f}%") if pct else (lambda x: f"{x:.{nd}f} KiB") if kib \
        else (lambda x: f"{x:.{nd}f}x")
    measured = fmt(f.value)
    if f.lo is not None:
        measured += f" [{fmt(f.lo)}, {fmt(f.hi)}]" if pct else \
            f" [{f.lo:.{nd}f}-{f.hi:.{nd}f} KiB]" if kib else \
            f" [{f.lo:.{nd}f}-{f.hi:.{nd}f}x]" if f.hi != float("inf") else \
            f" [>= {f.lo:.{nd}f}x]" if f.lo > 0 else " [unbounded]"
    if f.note:
        measured += f" {f.note}"
    if f.lo is None:
        return (t["target"], want, measured, f"{NA} ({f.why or 'no spread'})")
    if t["want"] == ">=":
        ok = True if f.lo >= lim else False if f.hi < lim else None
        by = f.value - lim
    elif t["want"] == "<=":
        ok = True if f.hi <= lim else False if f.lo > lim else None
        by = lim - f.value
    else:
        ok = True if -lim <= f.lo and f.hi <= lim else \
            False if f.hi < -lim or f.lo > lim else None
        by = lim - abs(f.value)
    unit = " points" if pct else " KiB" if kib else "x"
    size = f"{abs(by):.{nd}f}" if kib else f"{abs(by):.2f}"
    if ok is None:
        return (t["target"], want, measured, "inconclusive (the limit lies within the spread)")
    side = "to spare" if ok else ("short" if t["want"] == ">=" else "over")
    return (t["target"], want, measured,
            f"{'**met**' if ok else '**missed**'} ({size}{unit} {side})")


def targets(cont, boots, fio, micro, pairs=None):
    """(target, want, measured, verdict): one row for every row of
    bench/targets.csv, n/a where its figure is missing; and {id: verdict}.
    BOOTS: the density arms, each a list of its boots (the first boot's
    traced container gives the memory targets, as in the memory section)."""
    figs = {}
    dens = {arm: cds[0] for arm, cds in boots.items()}
    figs.update(report_pairs.pairs_figures(pairs or {}))
    figs.update(density_figures(boots))
    figs.update(containers_figures(cont, dens))
    figs.update(micro_figures(micro))
    figs.update(fio_figures(fio))
    figs.update(memory_figures(dens))
    rows = [(t["id"], target_row(t, figs.get(t["id"]))) for t in load_targets()]
    return [r for _, r in rows], {i: r[3] for i, r in rows}


def why_missed(verdicts, dens, cont, fio, micro, control=None):
    """Bullets: what this run's own figures say a missed target misses by."""
    lines = density_reasons(verdicts, dens) + start_reasons(verdicts, cont) + \
        micro_reasons(verdicts, micro) + fio_reasons(verdicts, fio, control) + \
        cached_reasons(verdicts, micro)
    if not lines:
        return []
    return ["### What the missed targets miss by", "",
            "Targets above that are missed or inconclusive, with what this run's own "
            "figures say the rest goes to (from the section named).", ""] + \
        [f"- {x}" for x in lines] + [""]


def targets_intro():
    return ["Every row of `bench/targets.csv`. A figure is printed with its spread or "
            "bracket in [ ]: over boots (fio: each boot's mode against that boot's "
            "pcdedup off, the lowest and highest of those ratios; A/B icount, where the "
            "kernels run in different boots: the lowest over the highest to the highest "
            "over the lowest; tagged vs untagged: the per-boot ratios), N reached up to "
            "the N before the first failing sample (density), "
            "Cached delta and the containers' memcg file charge (page cache), the 95% "
            "intervals of the medians (container starts), the one traced container's "
            "count on both sides (pcdedup's own kernel memory: one exact count, no "
            "spread to take). **met** / **missed** when the "
            "whole bracket lies on one side of the limit (by how much: the median's "
            "distance from it); *inconclusive* when the limit lies inside it; `n/a` "
            "without a figure or without a spread.", ""]
