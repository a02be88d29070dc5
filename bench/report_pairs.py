"""The report's first section: version pairs of real images
(bench/images.py, bench/guest/pairs.py), every file of both versions read
once, page cache without and with pcdedup, beside the ceiling the images
allow and EROFS page-cache sharing's published figures (bench/ishare.csv).

The ceiling comes from the images' own file lists (raw/images/*.files.tsv.gz):
without sharing each regular file of each image takes its pages (a hard
link is its target's inode: no pages of its own); with ideal sharing by
content, each distinct SHA-256 takes its pages once. Pages are whole 4 KiB
pages per file, as the page cache holds them."""
import csv
import gzip
import os
import statistics

from report_base import NA, Figure, datablock, gnuplot, read_json, table, write_csv

PAGE = 4096
VERSIONS = ("older", "newer")
SCENARIOS = (("thin", "thin volumes"), ("overlay", "overlay lowers"))
ISHARE_CSV = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ishare.csv")
# the server package each pair is named for (its version goes in the table)
SERVER = {"redis": "redis-server", "postgres": "postgresql-15", "mariadb": "mariadb-server-core",
          "nginx": "nginx-common", "minbase": "libc6"}


def pages(size):
    return -(-size // PAGE)


def read_files(path):
    """(path, type, size, sha256) rows of a files.tsv or files.tsv.gz."""
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt", newline="") as f:
        return [(r["path"], r["type"], int(r["size"]), r["sha256"])
                for r in csv.DictReader(f, delimiter="\t")]


def ceiling(files):
    """What the two images' files allow, FILES: {version: rows}. Pages
    without sharing, with every distinct content once, and in the files
    whose content the other version has too."""
    regular = {v: [r for r in rows if r[1] == "f"] for v, rows in files.items()}
    without = sum(pages(r[2]) for rows in regular.values() for r in rows)
    distinct = {}
    for rows in regular.values():
        for r in rows:
            distinct[r[3]] = r[2]
    shared_digests = {r[3] for r in regular["older"]} & {r[3] for r in regular["newer"]}
    both = [r for r in regular["newer"] if r[3] in shared_digests]
    return {"pages_without": without,
            "pages_distinct": sum(pages(z) for z in distinct.values()),
            "files": {v: len(rows) for v, rows in regular.items()},
            "bytes": {v: sum(r[2] for r in rows) for v, rows in regular.items()},
            "files_in_both": len(both), "pages_in_both": sum(pages(r[2]) for r in both),
            "saving": (1 - sum(pages(z) for z in distinct.values()) / without
                       if without else None)}


def read_packages(path):
    try:
        with open(path) as f:
            return dict(line.rstrip("\n").split("\t", 1) for line in f if "\t" in line)
    except OSError:
        return {}


def load_ishare(path=ISHARE_CSV):
    """EROFS page-cache sharing's published pairs, by our pair name."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    for r in rows:
        r["before_mb"], r["after_mb"] = float(r["before_mb"]), float(r["after_mb"])
        r["saving"] = 1 - r["after_mb"] / r["before_mb"]
    return rows


def load_pairs(raw, cases):
    """{pair: dict} for each pairs case of the run: its guest result, its
    images' infos, packages and ceiling (None where a file is missing)."""
    out = {}
    for name, (case, d) in cases.items():
        if case.kind != "pairs":
            continue
        pair = case.params["pair"]
        img = os.path.join(raw, "images")
        files, infos, pkgs = {}, {}, {}
        for v in VERSIONS:
            base = os.path.join(img, f"{pair}-{v}")
            infos[v] = read_json(base + ".info.json")
            pkgs[v] = read_packages(base + ".packages.tsv")
            if os.path.exists(base + ".files.tsv.gz"):
                files[v] = read_files(base + ".files.tsv.gz")
        out[pair] = {"case": case, "result": d, "infos": infos, "packages": pkgs,
                     "ceiling": ceiling(files) if len(files) == 2 else None}
    return out


def runs(p, scenario, dedup):
    d = p["result"] or {}
    return [r for r in d.get("runs", []) if r["scenario"] == scenario and r["pcdedup"] == dedup]


def savings(p, scenario, key="cached_kb"):
    """Per round: 1 - (page cache with) / (without), from the same round."""
    off = {r["round"]: r[key] for r in runs(p, scenario, False)}
    on = {r["round"]: r[key] for r in runs(p, scenario, True)}
    return [1 - on[k] / off[k] for k in sorted(off) if k in on and off[k] > 0]


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def of_ceiling_figure(p, scenario):
    """The saving measured over the ceiling's, per round, with its bracket."""
    c = p["ceiling"]
    if not c or not c["saving"]:
        return Figure(why="no ceiling (image file lists missing)")
    s = savings(p, scenario)
    if not s:
        return Figure(why="not measured")
    r = [x / c["saving"] for x in s]
    f = Figure(statistics.median(r))
    if len(r) < 2:
        f.why = "no spread: 1 round"
    else:
        f.lo, f.hi = min(r), max(r)
    return f


def pairs_figures(pairs):
    return {f"pairs/{pair}/{scen}/of-ceiling": of_ceiling_figure(p, scen)
            for pair, p in pairs.items() for scen, _ in SCENARIOS}


def server_versions(p, pair):
    pkg = SERVER.get(pair)
    vs = [p["packages"][v].get(pkg) for v in VERSIONS]
    if not pkg or not all(vs):
        return NA
    return f"{pkg} {vs[0]}" + (" (both)" if vs[0] == vs[1] else f" -> {vs[1]}")


def pct(x):
    return None if x is None else 100 * x


def pairs_section(results, pairs, md):
    """The pairs table (first in the report), the bars, and per pair what
    differs between its versions."""
    if not pairs:
        return
    ishare = {r["ours"]: r for r in load_ishare() if r["ours"]}
    md += ["## Real images: version pairs, every file read once", "",
           "Debian images built with mmdebstrap from the archive (minbase, merged /usr, no "
           "recommends, one server package): *older* from bookworm alone, *newer* from "
           "bookworm + bookworm-updates + bookworm-security; each unpacked with `umoci` "
           "into a thin volume of its own (distinct inodes), tagged with `pcdedup tag`'s "
           "defaults, then every regular file of the older and of the newer version read "
           "once, caches dropped before each run, directly from the volumes (thin) and "
           "through an overlay mount per version (overlay). Page cache: /proc/meminfo "
           "Cached after - before. *Ceiling*: the saving if every distinct content were "
           "cached once (the images' own SHA-256 lists, whole pages per file); *of "
           "ceiling*: the saving measured over it, median of the rounds [their range]. "
           "EROFS page-cache sharing's figures are its own images and versions "
           "(`bench/ishare.csv`), not a run here.", ""]
    rows, csv_rows, plot = [], [], []
    for pair, p in pairs.items():
        c = p["ceiling"] or {}
        off = med(r["cached_kb"] for r in runs(p, "thin", False))
        row = [pair, server_versions(p, pair),
               None if off is None else off / 1024]
        csv_row = [pair, off]
        bars = [pair]
        for scen, _ in SCENARIOS:
            on = med(r["cached_kb"] for r in runs(p, scen, True))
            s = savings(p, scen)
            f = of_ceiling_figure(p, scen)
            row += [None if on is None else on / 1024, pct(med(s)),
                    None if f.value is None else
                    (f"{f.value:.2f}" + (f" [{f.lo:.2f}-{f.hi:.2f}]" if f.lo is not None else ""))]
            csv_row += [on, med(s), f.value, f.lo, f.hi]
            bars.append(pct(med(s)) if s else 0)
        row.append(pct(c.get("saving")))
        csv_row.append(c.get("saving"))
        bars.append(pct(c.get("saving")) or 0)
        ish = ishare.get(pair)
        row += [f"{ish['image']} {ish['versions']}".strip() if ish else "",
                f"{ish['before_mb']:.0f} -> {ish['after_mb']:.0f} MB" if ish else "",
                pct(ish["saving"]) if ish else None]
        bars.append(pct(ish["saving"]) if ish else 0)
        rows.append(row)
        csv_rows.append(csv_row)
        plot.append(bars)
    md += table([("pair", None), ("server package", None), ("without (MiB)", 1),
                 ("thin: with (MiB)", 1), ("thin: saving %", 1), ("thin: of ceiling", None),
                 ("overlay: with (MiB)", 1), ("overlay: saving %", 1),
                 ("overlay: of ceiling", None), ("ceiling %", 1), ("EROFS ishare pair", None),
                 ("ishare page cache", None), ("ishare saving %", 1)], rows)
    md += ["![saving per pair](pairs.png)", ""]
    write_csv(results, "pairs.csv",
              ["pair", "without_kb", "thin_with_kb", "thin_saving", "thin_of_ceiling",
               "thin_of_ceiling_lo", "thin_of_ceiling_hi", "overlay_with_kb", "overlay_saving",
               "overlay_of_ceiling", "overlay_of_ceiling_lo", "overlay_of_ceiling_hi",
               "ceiling_saving"], csv_rows)
    pairs_plot(results, plot)
    md += pairs_detail(pairs)


def pairs_detail(pairs):
    """Where each pair's page cache goes, and what its versions hold."""
    md = ["### What the pairs hold", "",
          "*files*, *MiB*: regular files of each version (the images' lists); *in both*: "
          "files of the newer version whose content the older has; *without, computed*: "
          "the pages the lists give without sharing, beside the page cache measured "
          "without: what the measured holds beyond the files' pages is the reads' own "
          "(*overhead*); *unshared*: page cache with pcdedup (thin) less the ceiling's "
          "pages and that overhead, what sharing left unshared. *Read*: seconds to read "
          "both versions once, pcdedup off / on (thin, median).", ""]
    rows = []
    for pair, p in pairs.items():
        c = p["ceiling"] or {}
        on = med(r["cached_kb"] for r in runs(p, "thin", True))
        off = med(r["cached_kb"] for r in runs(p, "thin", False))
        distinct_kb = c.get("pages_distinct", 0) * PAGE / 1024 if c else None
        rows.append([pair,
                     "/".join(str(c["files"][v]) for v in VERSIONS) if c else None,
                     "/".join(f"{c['bytes'][v] / 2**20:.1f}" for v in VERSIONS) if c else None,
                     c.get("files_in_both"),
                     c["pages_without"] * PAGE / 2**20 if c else None,
                     None if off is None else off / 1024,
                     None if off is None or not c else
                     (off - c["pages_without"] * PAGE / 1024) / 1024,
                     None if on is None or off is None or distinct_kb is None else
                     (on - distinct_kb - (off - c["pages_without"] * PAGE / 1024)) / 1024,
                     med(r["read_s"] for r in runs(p, "thin", False)),
                     med(r["read_s"] for r in runs(p, "thin", True)),
                     changed_packages(p) if any(p["packages"].values()) else None])
    md += table([("pair", None), ("files older/newer", None), ("MiB older/newer", None),
                 ("in both", 0), ("without, computed (MiB)", 1), ("without, measured (MiB)", 1),
                 ("overhead (MiB)", 1), ("unshared (MiB)", 1), ("read off (s)", 1),
                 ("read on (s)", 1),
                 ("packages that differ", None)], rows)
    for pair, p in pairs.items():
        pk = p["packages"]
        if not pk["older"] and not pk["newer"]:
            continue
        infos = p["infos"]
        built = ", ".join(f"{v} built {infos[v]['built']}" for v in VERSIONS if infos.get(v))
        md += [f"<details><summary>{pair}: every package (dpkg-query -W), {built}</summary>",
               "", "| package | older | newer |", "|---|---|---|"]
        for name in sorted(set(pk["older"]) | set(pk["newer"])):
            a, b = pk["older"].get(name, NA), pk["newer"].get(name, NA)
            md.append(f"| {name} | {a} | {'**' + b + '**' if a != b else b} |")
        md += ["", "</details>", ""]
    return md


def changed_packages(p):
    pk = p["packages"]
    names = sorted(n for n in set(pk["older"]) | set(pk["newer"])
                   if pk["older"].get(n) != pk["newer"].get(n))
    return f"{len(names)} of {len(set(pk['older']) | set(pk['newer']))}"


def pairs_plot(results, plot):
    """Bars per pair: the saving on thin volumes, on overlay lowers, the
    ceiling, EROFS ishare's published saving (0 where it has no such pair)."""
    script = datablock("P", [[f'"{b[0]}"'] + [f"{x:.1f}" for x in b[1:]] for b in plot])
    script += """set terminal pngcairo size 900,420 font ",11"
set output "pairs.png"
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.9 border -1
set boxwidth 0.9
set ylabel "page cache saved, %"
set yrange [0:55]
set grid ytics
set key outside below center horizontal
set label 1 "two versions: at most 50%" at graph 0.01, first 52 left font ",9"
set title "Two versions of each image, every file read once"
plot $P using 2:xtic(1) title "pcdedup, thin" lc rgb "#1f77b4", \\
     '' using 3 title "pcdedup, overlay" lc rgb "#6baed6", \\
     '' using 4 title "ceiling" lc rgb "#999999", \\
     '' using 5 title "EROFS ishare (published)" lc rgb "#e6550d"
"""
    gnuplot(results, script)
