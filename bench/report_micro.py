"""The A/B micro-benchmark (bench/guest/micro.py) under icount, its perf
profile, `pcdedup tag` vs sha256sum, their targets."""
import statistics

from report_base import as_change, paired_figure, ratio_figure, short_of, spread_text, table


AB_ARMS = (("stock", "stock"), ("security", "security series only"),
           ("on", "whole series, pcdedup on"))


AB_OPS = ("open_close", "stat", "read", "mmap_fault", "open_fadvise", "reread")


# A tagged read's extra cost on the whole series, split by the ops that
# isolate its parts: (row, how it is computed from the per-boot
# tagged-minus-untagged differences D of those ops).
READ_SPLIT = (
    ("open+close", lambda d: d["open_close"]),
    ("the share file: opened by the first read and put at close "
     "(open_fadvise less open_close)", lambda d: d["open_fadvise"] - d["open_close"]),
    ("the reads through it (reread: a 16 KiB read and one at EOF on an fd "
     "read before)", lambda d: d["reread"]),
    ("open+read+close (read)", lambda d: d["read"]),
    ("read less the three parts above",
     lambda d: d["read"] - d["open_fadvise"] - d["reread"]),
)


def micro_per(micro):
    """{(label, files, op): [ns_per_op of each boot]} and, for the whole
    series, {op: [tagged-b / untagged of each boot]}."""
    per, paired = {}, {}
    for case, d in micro.values():
        ops = {(o["files"], o["op"]): o["ns_per_op"] for o in (d or {}).get("ops", [])}
        for (files, op), v in ops.items():
            per.setdefault((d["label"], files, op), []).append(v)
        if d and d["label"] == "on":
            for op in AB_OPS:
                u, t = ops.get(("untagged", op)), ops.get(("tagged-b", op))
                if u and t:
                    paired.setdefault(op, []).append(t / u)
    return per, paired


def read_split(micro):
    """READ_SPLIT's rows: (row, [its value in each whole-series boot])."""
    deltas = []
    for case, d in micro.values():
        if not d or d["label"] != "on":
            continue
        ops = {(o["files"], o["op"]): o["ns_per_op"] for o in d.get("ops", [])}
        delta = {op: ops[("tagged-b", op)] - ops[("untagged", op)] for op in AB_OPS
                 if ("tagged-b", op) in ops and ("untagged", op) in ops}
        if all(op in delta for op in ("open_close", "open_fadvise", "reread", "read")):
            deltas.append(delta)
    return [(row, [f(d) for d in deltas]) for row, f in READ_SPLIT]


PERF_TOP = 15


def perf_rows(d, op):
    """Rows of OP's profile in micro-profile result D: per function the
    untagged and tagged-b instructions per op (its share of the samples
    times the op's figure under perf) and the difference, the largest
    differences first (PERF_TOP of them), then the rest and the total;
    None without both profiles."""
    runs = {o["files"]: o for o in d.get("ops", []) if o.get("op") == op and o.get("samples")}
    if set(runs) != {"untagged", "tagged-b"}:
        return None
    per = {f: {sym: n / r["samples"] * r["ns_per_op"] for sym, n in r["by_symbol"].items()}
           for f, r in runs.items()}
    u, t = per["untagged"], per["tagged-b"]
    diff = sorted(set(u) | set(t), key=lambda k: (-(t.get(k, 0) - u.get(k, 0)), k))
    rows = [[k, u.get(k, 0), t.get(k, 0), t.get(k, 0) - u.get(k, 0)]
            for k in diff[:PERF_TOP]]
    rest = diff[PERF_TOP:]
    ru, rt = sum(u.get(k, 0) for k in rest), sum(t.get(k, 0) for k in rest)
    rows.append([f"the other {len(rest)} functions", ru, rt, rt - ru])
    rows.append(["total (the op under perf)", runs["untagged"]["ns_per_op"],
                 runs["tagged-b"]["ns_per_op"],
                 runs["tagged-b"]["ns_per_op"] - runs["untagged"]["ns_per_op"]])
    return rows


def perf_section(micro, unit, md):
    prof = [(case, d) for case, d in micro.values() if d and d.get("label") == "profile"]
    for case, d in prof:
        period = next((o.get("period_ns") for o in d.get("ops", []) if o.get("period_ns")),
                      None)
        md += ["", f"### Where tagged-b costs more: perf samples by function ({case.name})", "",
               "The whole series, pcdedup on: each operation of bench/micro run under "
               f"`perf record -e cpu-clock -c {period}` (a sample every {period} ns of guest "
               "time" + (": under icount, every that many guest instructions" if
                         case.accel == "icount" else "") + "), on the untagged files and on "
               "tagged-b. A function's figure is its share of the samples (where they "
               f"fell, not its callees) times the op's {unit} under perf (the sampling's "
               "own cost included, so the totals exceed the A/B table's). Functions are "
               "from /proc/kallsyms (`[k]`) or the binary (`[.]`).", ""]
        for op in ("open_close", "read"):
            rows = perf_rows(d, op)
            if rows is None:
                md += [f"{op}: not profiled.", ""]
                continue
            md += table([(f"{op}: function", None), (f"untagged {unit}", 0),
                         (f"tagged-b {unit}", 0), ("tagged-b more", 0)], rows) + [""]


def change_text(f):
    """+0.53% [+0.41, +0.66] (a change figure with its bracket)."""
    if f.value is None:
        return None
    s = f"{f.value:+.2f}%"
    return s + (f" [{f.lo:+.2f}, {f.hi:+.2f}]" if f.lo is not None else "")


def micro_section(micro, tags, md):
    accel = next((case.accel for case, _ in micro.values()), None)
    unit = "instructions/op" if accel == "icount" else "ns/op"
    per, _ = micro_per(micro)
    if micro:
        md += ["## A/B kernels: micro-benchmark (bench/micro.c)", "",
               "Cost per operation on files already in page cache (16 KiB files on XFS), "
               "one guest CPU. " +
               ("Under QEMU `-icount shift=0` the guest clock advances 1 ns per guest "
                "instruction: the figures are guest instructions per operation, free of "
                "host noise (they do not model cache misses). " if accel == "icount" else
                "") +
               "Three kernels: stock (Debian's 6.12 without any patch), the security "
               "series only (the patches before the first pcdedup one) and the whole "
               "series with pcdedup on; boots interleave them, the order rotating. Per "
               "boot the median of 5 rounds; here the median over boots and the spread "
               "(min-max over boots). The changes stock->security and security->whole "
               "are of the medians, bracketed by the spreads (lowest over highest, "
               "highest over lowest). `tagged-b` files carry keys (served through a share "
               "on the whole series; plain files on the others).", ""]
        rows = []
        for files in ("untagged", "tagged-b"):
            for op in AB_OPS:
                vals = {k: per.get((k, files, op), []) for k, _ in AB_ARMS}
                med = {k: statistics.median(v) if v else None for k, v in vals.items()}
                sec = as_change(ratio_figure(vals["security"], vals["stock"]))
                whole = as_change(ratio_figure(vals["on"], vals["security"]))
                rows.append([files, op, med["stock"], med["security"], med["on"],
                             spread_text(vals["stock"], "{:.0f}"),
                             spread_text(vals["security"], "{:.0f}"),
                             spread_text(vals["on"], "{:.0f}"),
                             change_text(sec), change_text(whole),
                             "/".join(str(len(vals[k])) for k, _ in AB_ARMS)])
        md += table([("files", None), ("op", None), (f"stock {unit}", 0),
                     (f"security {unit}", 0), (f"whole {unit}", 0), ("stock spread", None),
                     ("security spread", None), ("whole spread", None),
                     ("stock->security", None), ("security->whole", None),
                     ("boots", None)], rows)
        split = read_split(micro)
        if split[0][1]:
            md += ["", "Where a tagged read's extra cost goes, on the whole series: per boot "
                   f"the tagged-b figure less the untagged one ({unit}), the median over "
                   "boots and the spread. `open_fadvise` opens, advises POSIX_FADV_NORMAL and "
                   "closes: on a tagged file the advice opens the share file as a first read "
                   "does; `reread` reads an fd opened and read before (a 16 KiB read and one "
                   "at EOF, as `read` does), so only the reads remain.", ""]
            md += table([("part of the tagged-b - untagged difference", None),
                         (f"{unit} more", 0), ("spread", None), ("boots", 0)],
                        [[row, statistics.median(v),
                          f"{min(v):.0f} to {max(v):.0f}" if len(v) > 1 else None, len(v)]
                         for row, v in split])
        perf_section(micro, unit, md)
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


def micro_figures(micro):
    figs = {}
    per, paired = micro_per(micro)
    for op in ("open_close", "stat", "read"):
        arm = {k: per.get((k, "untagged", op), []) for k, _ in AB_ARMS}
        on_stock = as_change(ratio_figure(arm["on"], arm["stock"]))
        figs[f"ab/untagged/{op}/on-vs-stock"] = on_stock
        figs[f"ab/untagged/{op}/on-vs-stock-increase"] = on_stock
        figs[f"ab/untagged/{op}/on-vs-security"] = as_change(
            ratio_figure(arm["on"], arm["security"]))
        figs[f"ab/untagged/{op}/security-vs-stock"] = as_change(
            ratio_figure(arm["security"], arm["stock"]))
    for op in ("open_close", "read"):
        figs[f"ab/tagged-vs-untagged/{op}"] = paired_figure(paired.get(op, []))
    return figs


def micro_reasons(verdicts, micro):
    """A missed tagged-vs-untagged read: its parts (READ_SPLIT), and what it
    would be without the share file an open sets up."""
    if not short_of(verdicts.get("ab/tagged-vs-untagged/read", "")):
        return []
    split = dict(read_split(micro))
    per, _ = micro_per(micro)
    untagged = per.get(("on", "untagged", "read"))
    parts = [(row, statistics.median(v)) for row, v in split.items() if v]
    if not untagged or len(parts) < 4:
        return []
    u = statistics.median(untagged)
    total = next(v for row, v in parts if row.startswith("open+read+close"))
    share = next(v for row, v in parts if row.startswith("the share file"))
    named = "; ".join(f"{row.split(' (')[0].split(':')[0]} {v:.0f}" for row, v in parts[:3])
    return [f"`ab/tagged-vs-untagged/read`: a tagged open+read+close costs {total:.0f} "
            f"instructions more than an untagged one ({u:.0f}): {named}. Without the "
            f"share file an open's first read sets up it would be "
            f"{(u + total - share) / u:.2f}x (A/B kernels: where a tagged read's extra "
            "cost goes; by function: micro-profile)."]


def cached_reasons(verdicts, micro):
    """Open cached psync fio targets: what a read(2) through a share costs
    more than a plain one, cached (micro's reread, on the whole series).
    Cached mmap reads fault the share's folios in once and then cost what
    a plain mapping does."""
    ids = [t for t, v in verdicts.items()
           if t.startswith("fio/cached/psync/") and short_of(v)]
    per, paired = micro_per(micro)
    untagged, ratio = per.get(("on", "untagged", "reread")), paired.get("reread")
    if not ids or not untagged or not ratio:
        return []
    u = statistics.median(untagged)
    r = statistics.median(ratio)
    return [", ".join(f"`{t}`" for t in ids) + ": a cached read through a share "
            f"costs {r:.2f}x a plain one ({u * (r - 1):.0f} instructions more on "
            f"{u:.0f}: micro's reread, a 16 KiB read and one at EOF; A/B kernels), "
            "the backing file's read path on top of the user file's."]
