"""What every section of the benchmark report uses: tables, figures with
their brackets, JSON, CSV and gnuplot."""
import csv
import json
import os
import subprocess
import sys
from dataclasses import dataclass
import statistics
from typing import Optional

NA = "n/a"


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


@dataclass
class Figure:
    """A target's figure: VALUE (a ratio, a change in %, or KiB) with its bracket
    LO..HI (None: the figure has no spread, so no verdict), NOTE printed
    after it, WHY: why there is no figure or no bracket."""
    value: Optional[float] = None
    lo: Optional[float] = None
    hi: Optional[float] = None
    note: str = ""
    why: str = ""


def paired_figure(ratios, note=""):
    """The median of per-boot ratios, bracketed by their min and max."""
    r = [x for x in ratios if x is not None]
    if not r:
        return Figure(note=note, why="not measured")
    f = Figure(statistics.median(r), note=note)
    if len(r) < 2:
        f.why = "no spread: 1 boot"
    else:
        f.lo, f.hi = min(r), max(r)
    return f


def mib(kb):
    return None if kb is None else kb / 1024


def spread_text(vals, fmt="{:.1f}"):
    """min-max of VALS as text, None with fewer than two."""
    vals = [v for v in vals if v is not None]
    if len(vals) < 2:
        return None
    return f"{fmt.format(min(vals))}-{fmt.format(max(vals))}"


def ratio_figure(a, b, note=""):
    """The ratio of the medians of A and B (lists over boots), bracketed by
    min(A)/max(B) .. max(A)/min(B): no bracket with fewer than two of each."""
    a, b = [x for x in a if x is not None], [x for x in b if x is not None]
    if not a or not b or min(b) <= 0:
        return Figure(note=note, why="not measured")
    f = Figure(statistics.median(a) / statistics.median(b), note=note)
    if len(a) < 2 or len(b) < 2:
        f.why = f"no spread: {len(a)} and {len(b)} boots"
    else:
        f.lo, f.hi = min(a) / max(b), max(a) / min(b)
    return f


def as_change(f):
    """A ratio figure as a change in percent."""
    pct = (lambda x: None if x is None else (x - 1) * 100)
    return Figure(pct(f.value), pct(f.lo), pct(f.hi), f.note, f.why)


def median_ci(xs):
    """A distribution-free 95% interval of the median of XS (order
    statistics n/2 -+ 0.98 sqrt(n)); None for fewer than 6 values."""
    xs = sorted(x for x in xs if x is not None)
    n = len(xs)
    if n < 6:
        return None
    j = max(int(n / 2 - 0.98 * n ** 0.5), 1)
    k = min(int(n / 2 + 1 + 0.98 * n ** 0.5 + 0.999), n)
    return xs[j - 1], xs[k - 1]


def short_of(verdict):
    """Whether a verdict leaves its target open: missed or inconclusive."""
    return verdict.startswith(("**missed**", "inconclusive"))
