#!/usr/bin/env python3
"""Write report.md, CSVs and gnuplot PNGs for one results folder and print
the targets. Every figure comes from raw/ of that run: NAME.case.json (the
case, bench/guest/case.py) and NAME.json (what the guest measured).
Usage: bench/report.py RESULTS_DIR"""
import csv
import glob
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "guest"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from case import Case, density_pass, memory_tight  # noqa: E402
from case import density_bracket as density_bracket_rule  # noqa: E402
import report_pairs  # noqa: E402
import report_serverramp  # noqa: E402
import report_services  # noqa: E402
from report_base import (NA, Figure, datablock, gnuplot, paired_figure, read_json,  # noqa: E402,F401
                         table, write_csv)

# A latency is printed only when it spans at least this many clock steps.
MIN_CLOCK_STEPS = 10


def mib(kb):
    return None if kb is None else kb / 1024


def load_cases(raw):
    """(Case, result or None) by name, in run order (Case.order)."""
    out = {}
    for case in sorted((Case.load(p) for p in glob.glob(os.path.join(raw, "*.case.json"))),
                       key=lambda c: (c.order, c.name)):
        res = os.path.join(raw, f"{case.name}.json")
        data = None
        if os.path.exists(res):
            with open(res) as f:
                data = json.load(f)
        out[case.name] = (case, data)
    return out


# ---- density ---------------------------------------------------------------

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
    secs = {x["case"]: x.get("seconds") or 0 for x in status_cases}
    md += [f"The density job took {round(sum(secs.get(n, 0) for n in dens))} s in all, "
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
    memory_section(results, {a: cds[0] for a, cds in boots.items()}, md)


# ---- per-container memory -----------------------------------------------------

# (row, how to compute it from a meminfo delta D (kB) and the containers'
# memcg sums M). "other" is what the kernel uses outside every other field.
MEM_ROWS = [
    ("anonymous (AnonPages)", lambda D, M: D["AnonPages"]),
    ("page cache (Cached - Shmem)", lambda D, M: D["Cached"] - D["Shmem"]),
    ("tmpfs (Shmem)", lambda D, M: D["Shmem"]),
    ("slab (Slab)", lambda D, M: D["Slab"]),
    ("slab charged to the containers' cgroups", lambda D, M:
        None if M is None else M["slab_reclaimable"] + M["slab_unreclaimable"]),
    ("kernel stacks (KernelStack)", lambda D, M: D["KernelStack"]),
    ("page tables (PageTables)", lambda D, M: D["PageTables"]),
    ("percpu (Percpu)", lambda D, M: D["Percpu"]),
    ("vmalloc (VmallocUsed)", lambda D, M: D["VmallocUsed"]),
    ("block device cache (Buffers)", lambda D, M: D["Buffers"]),
    ("other kernel (in no field above)", lambda D, M: D["used"] - sum(
        D[k] for k in ("AnonPages", "Cached", "Slab", "KernelStack", "PageTables",
                       "Percpu", "VmallocUsed", "Buffers"))),
    ("total used (MemTotal - MemFree)", lambda D, M: D["used"]),
    ("MemAvailable drop", lambda D, M: -D["MemAvailable"]),
]
OBJ_ROWS = [("inodes", "inodes"), ("dentries", "dentries"), ("open files", "files")]


def mem_delta(a, b):
    """Meminfo B - A (kB), with used = MemTotal - MemFree."""
    d = {k: b[k] - a[k] for k in a if k in b}
    d["used"] = (b["MemTotal"] - b["MemFree"]) - (a["MemTotal"] - a["MemFree"])
    return d


# Who allocated a slab object, from the allocating function's name (first
# match wins); the report prints the functions, so the grouping can be read.
OWNERS = [
    ("pcdedup", ("pcdedup",)),
    ("backing files (an open through a share or overlayfs)", ("alloc_empty_backing_file",)),
    ("XFS", ("xfs", "_xfs", "xlog", "xfs_")),
    ("overlayfs", ("ovl_",)),
    ("dentries", ("__d_alloc", "d_alloc", "d_make")),
    ("inodes: VFS, LSM blobs, tmpfs", ("alloc_inode", "security_inode_alloc", "inode_init",
                                       "new_inode", "simple_xattr", "shmem_")),
    ("open files", ("alloc_empty_file", "security_file_alloc", "alloc_file")),
    ("dm, block, bio", ("dm_", "alloc_buffer", "bio", "blk_", "mempool", "thin_", "pool_", "bdev",
                        "alloc_disk", "__alloc_disk", "disk_")),
    ("namespaces (mount, net, ...), sysctl, proc, kernfs",
     ("alloc_vfsmnt", "copy_mnt_ns", "create_new_namespaces", "alloc_mnt_ns", "copy_",
      "alloc_super", "sget", "legacy_", "vfs_parse", "kernfs", "__kernfs", "alloc_fs_context",
      "fs_context", "mnt_", "pid_ns", "create_pid", "create_user_ns", "net_", "ipv4", "ipv6",
      "unix_net", "__devinet", "devinet", "__register_sysctl", "register_sysctl", "sk_",
      "sock_", "netdev", "__proc", "proc_", "neigh", "fib", "inet", "__ip", "ip_", "rtnl",
      "nf_", "setup_net", "ops_init", "__netdev", "alloc_netdev", "loopback", "sysfs")),
    ("cgroups, memcg", ("css_", "cgroup", "mem_cgroup", "memcg", "obj_cgroup",
                        "alloc_slab_obj_exts", "percpu_ref", "rstat", "cgroup_")),
    ("processes, address spaces", ("vm_area", "anon_vma", "mm_alloc", "mas_", "mt_",
                                   "dup_", "alloc_pid", "prepare_creds", "prepare_",
                                   "copy_process", "alloc_task", "__anon_vma",
                                   "mmap_region", "do_brk", "__split_vma", "vma_",
                                   "alloc_fdtable", "expand_files", "signal", "sighand",
                                   "getname", "files_", "fs_struct", "alloc_thread",
                                   "alloc_bprm", "bprm", "taskstats", "sigqueue")),
    ("page cache (xarray nodes, folio state)", ("xas_", "radix_tree", "xa_", "ifs_alloc")),
    ("tracing (this measurement)", ("tracing_", "trace_", "ring_buffer")),
]


# Pages from the page allocator, by the callers on the allocation's stack:
# the first frame when it names an owner, else the first owner named by any
# frame in this order (the unwinder guesses: stale frames come up).
PAGE_OWNERS = [
    ("slab pages (in the slab rows)", ("__slab_alloc", "slab_alloc_node", "allocate_slab",
                                       "new_slab", "___slab_alloc", "__kmalloc_large",
                                       "___kmalloc_large", "kmalloc_large")),
    ("XFS buffers (metadata, directories)", ("xfs_buf",)),
    ("dm-bufio (dm-thin metadata)", ("dm_bufio", "alloc_buffer", "__dm_bufio")),
    ("tmpfs", ("shmem",)),
    ("page cache", ("filemap_", "__filemap", "page_cache_", "ra_alloc_folio", "readahead",
                    "pcdedup_fill", "do_read_cache")),
    ("page tables", ("__pte_alloc", "pte_alloc", "__pmd_alloc", "pmd_alloc", "__pud_alloc",
                     "pud_alloc", "pgd_alloc", "_pgd_alloc", "__p4d_alloc")),
    ("kernel stacks", ("alloc_thread_stack", "dup_task_struct")),
    ("percpu", ("pcpu",)),
    ("vmalloc", ("__vmalloc", "vmalloc", "__vmap")),
    ("anonymous", ("do_anonymous_page", "alloc_anon_folio", "wp_page_copy", "do_cow_fault",
                   "do_wp_page", "folio_prealloc", "do_huge_pmd", "__handle_mm_fault",
                   "handle_mm_fault")),
    ("tracing (this measurement)", ("ring_buffer", "rb_", "tracing", "trace_")),
    ("pipes, sockets", ("pipe", "anon_pipe", "alloc_skb", "__alloc_skb", "skb_", "sock_")),
]


def page_owner(caller):
    frames = caller.split(" < ")
    for owner, markers in PAGE_OWNERS:
        if frames[0].startswith(markers):
            return owner
    for owner, markers in PAGE_OWNERS:
        if any(f.startswith(markers) for f in frames):
            return owner
    return "other: " + frames[0]


def alloc_owner(site):
    for owner, prefixes in OWNERS:
        if site.startswith(prefixes):
            return owner
    return "other"


# The cache of a few allocation sites whose objects the window never sees
# freed (kmem_cache_alloc does not name its cache, kmem_cache_free does),
# from the kernel's source; printed with a `*`.
KNOWN_CACHES = {"xfs_inode_alloc": "xfs_inode", "xfs_inode_item_init": "xfs_ili",
                "_xfs_buf_alloc": "xfs_buf", "xfs_ifork_init_cow": "xfs_ifork",
                "xas_alloc": "radix_tree_node", "xas_nomem": "radix_tree_node",
                "ovl_alloc_inode": "ovl_inode", "__d_alloc": "dentry"}


def profile_rows(prof):
    """Traced live objects of one profiled container: [(site, cache, size,
    objects, bytes, owner)], most bytes first."""
    rows = [(x["site"], x["cache"] or (KNOWN_CACHES[x["site"]] + "*"
                                        if x["site"] in KNOWN_CACHES else "?"),
             x["size"], x["objects"], x["size"] * x["objects"],
             alloc_owner(x["site"])) for x in (prof.get("trace") or {}).get("live", [])]
    return sorted(rows, key=lambda r: -r[4])


# The pairs of density cases whose per-container memory the report sets
# side by side: pcdedup against the shared lower it should match, and
# against the same scenario without it.
GAPS = (("density-thin-default", "density-shared-off"),
        ("density-thin-default-operator", "density-shared-off"),
        ("density-distinct-default", "density-shared-off"),
        ("density-thin-default-hot", "density-shared-off-hot"),
        ("density-thin-default", "density-thin-off"),
        ("density-distinct-default", "density-distinct-off"))


def _per_container(d, s):
    """{MEM_ROWS and OBJ_ROWS label: growth since before the first
    container, per container} at sample S of density result D."""
    D = mem_delta(d["before"]["meminfo"], s["mem"]["meminfo"])
    per = {label: (None if f(D, s.get("memcg")) is None
                   else f(D, s.get("memcg")) / 1024 / s["n"])
           for label, f in MEM_ROWS}
    for label, key in OBJ_ROWS:
        per[label] = (s["mem"]["objects"][key] - d["before"]["objects"][key]) / s["n"]
    return per


def mem_per_container(dens):
    """The density cases measured at their N reached: (their names, {name:
    (case, result, that sample)}, {name: {MEM_ROWS and OBJ_ROWS label: the
    growth since before the first container, per container}})."""
    cols, at, per = [], {}, {}
    for name, (case, d) in dens.items():
        if not d or not d.get("before"):
            continue
        last = density_state(case, d)[0]
        s = next((x for x in d["samples"] if x["n"] == last and x.get("mem")), None)
        if not s:
            continue
        cols.append(name)
        at[name] = (case, d, s)
        per[name] = _per_container(d, s)
    return cols, at, per


def mem_at_equal_n(dens, a, b):
    """Per container memory of density cases A and B at the largest N both
    sampled (with memory) and both passed: (N, per A, per B), or None."""
    if a not in dens or b not in dens or not dens[a][1] or not dens[b][1]:
        return None
    sampled = []
    for name in (a, b):
        case, d = dens[name]
        if not d.get("before"):
            return None
        last = density_state(case, d)[0]
        sampled.append({x["n"]: x for x in d["samples"] if x["n"] <= last and x.get("mem")})
    common = set(sampled[0]) & set(sampled[1])
    if not common:
        return None
    n = max(common)
    return (n, _per_container(dens[a][1], sampled[0][n]),
            _per_container(dens[b][1], sampled[1][n]))


def memory_section(results, dens, md):
    """Per container, at each case's N reached: the kernel's memory by
    /proc/meminfo field, the containers' own charge, object counts, slab
    caches (slabinfo when the kernel has it), and what one container adds,
    traced by allocation site."""
    cols, at, per = mem_per_container(dens)
    if not cols:
        return
    # the differences between two cases are taken at the same N
    eqs = {(on, ref): mem_at_equal_n(dens, on, ref) for on, ref in GAPS
           if on in at and ref in at}
    gaps = [g for g, eq in eqs.items() if eq]
    md += ["## Per-container memory: where it goes", "",
           "At each case's N reached: what the kernel's memory grew by from before the "
           "first container (caches dropped, the shared mounts in place, no container "
           "root yet) to that N, divided by N, in MiB per container (objects: count per "
           "container). Fields of /proc/meminfo; `slab charged to the containers' "
           "cgroups`: the containers' memory.stat `slab` summed (objects from caches "
           "that account to the allocating cgroup: inodes, dentries, files; not XFS "
           "buffers, dm-thin's or pcdedup's kmalloc); `other kernel`: the growth of "
           "MemTotal - MemFree outside every field above (pages the kernel takes "
           "straight from the page allocator: XFS buffer pages and log buffers, "
           "dm-bufio, ...). The `-` columns are differences between two cases, "
           "per container, at the largest N both sampled.", ""]
    heads = [f"{short(n)} (N={at[n][2]['n']})" for n in cols] + \
        [f"{short(a)} - {short(b)} (both at N={eqs[a, b][0]})" for a, b in gaps]
    rows, csvrows = [], []
    objs = [r[0] for r in OBJ_ROWS]
    for label in [r[0] for r in MEM_ROWS] + objs:
        vals = [per[n][label] for n in cols]
        vals += [None if eqs[g][1][label] is None or eqs[g][2][label] is None
                 else eqs[g][1][label] - eqs[g][2][label] for g in gaps]
        csvrows.append([label] + vals)
        if label in objs:  # counts: whole numbers
            vals = [None if v is None else f"{v:.0f}".replace("-0", "0") for v in vals]
        rows.append([label] + vals)
    md += table([("MiB per container", None)] + [(h, 2) for h in heads], rows)
    write_csv(results, "memory_per_container.csv", ["row"] + heads, csvrows)
    parts = ("anonymous (AnonPages)", "page cache (Cached - Shmem)", "tmpfs (Shmem)",
             "slab (Slab)", "kernel stacks (KernelStack)", "page tables (PageTables)",
             "percpu (Percpu)", "vmalloc (VmallocUsed)", "block device cache (Buffers)",
             "other kernel (in no field above)")
    for a, b in gaps:
        n, pa, pb = eqs[a, b]
        diff = sorted(((pa[k] - pb[k], k) for k in parts), reverse=True)
        used = pa["total used (MemTotal - MemFree)"] - pb["total used (MemTotal - MemFree)"]
        md += [f"{short(a)} against {short(b)}, both at N={n}: {used:+.2f} MiB used per "
               "container; "
               + ", ".join(f"{k.split(' (')[0]} {v:+.2f}" for v, k in diff if abs(v) >= 0.05)
               + ".", ""]
    slab_caches(at, cols, md)
    traced_section(results, dens, md)


def slab_caches(at, cols, md):
    """Top slab caches per container from /proc/slabinfo, when the guest
    kernel has it."""
    rows = []
    for n in cols:
        case, d, s = at[n]
        a, b = d["before"].get("slab"), s["mem"].get("slab")
        if a is None or b is None:
            continue
        delta = sorted(((b[k] - a.get(k, 0), k) for k in b), reverse=True)
        rows += [[short(n), k, v / 1024 / 1024 / s["n"]] for v, k in delta[:10] if v > 0]
    if not rows:
        md += ["/proc/slabinfo: not in this guest kernel (SLUB_TINY, as tinyconfig picks, "
               "has no SLUB_DEBUG): slab caches by name come from the traced container "
               "below.", ""]
        return
    md += ["### Slab caches, /proc/slabinfo delta per container (top 10 per case)", ""]
    md += table([("case", None), ("cache", None), ("MiB per container", 3)], rows)


def held_pages(prof):
    """{owner: KiB} of the pages the traced container still held."""
    page_kib = os.sysconf("SC_PAGE_SIZE") // 1024
    by = {}
    for x in prof["trace"].get("pages", []):
        o = page_owner(x["caller"])
        by[o] = by.get(o, 0) + x["pages"] * page_kib
    # The trace itself is written to a file on tmpfs: its pages are the
    # measurement's, not the container's (those taken while the trace
    # was being written have no stack trace of their own: `?`).
    f = prof["trace"].get("trace_file_kb", 0)
    for o in ("tmpfs", "other: ?"):
        take = min(f, by.get(o, 0))
        if take:
            by[o] -= take
            f -= take
            tr = "tracing (this measurement)"
            by[tr] = by.get(tr, 0) + take
    return by


def page_table(profs, cols):
    """The profiled container's pages from the page allocator that it still
    holds, by who took them (KiB)."""
    if not any("pages" in profs[n]["trace"] for n in cols):
        return []
    page_kib = os.sysconf("SC_PAGE_SIZE") // 1024
    by = {n: held_pages(profs[n]) for n in cols}
    owners = [o for o, _ in PAGE_OWNERS] + sorted({o for n in cols for o in by[n]
                                                   if o.startswith("other")})
    rows = [[o] + [by[n].get(o, 0) for n in cols] for o in owners
            if any(by[n].get(o) for n in cols)]
    rows.append(["pages held, total"] + [sum(by[n].values()) for n in cols])
    rows.append(["pages freed that were older than the window"] + [
        profs[n]["trace"].get("old_page_frees", 0) * page_kib for n in cols])
    return (["The same container's pages from the page allocator (`mm_page_alloc` with a "
             "stack trace, `mm_page_free`), still held at the end, by the first functions "
             "outside the allocator on the allocation's stack (the guest kernel's unwinder "
             "guesses: a frame can be stale; `?`: no caller outside the allocator on the "
             "stack). Slab pages are the slab objects above; the rest is what /proc/meminfo "
             "counts as anonymous, page tables, tmpfs, or in no field (`other kernel`); "
             "`tracing`: the trace's own file and buffers. KiB.", ""]
            + table([("KiB, container pages", None)] + [(short(n), 0) for n in cols], rows))


def traced_section(results, dens, md):
    profs = {n: d["profile"] for n, (c, d) in dens.items()
             if d and (d.get("profile") or {}).get("trace")}
    if not profs:
        return
    k = next(iter(profs.values()))["container"]
    md += ["### One container, traced: its kernel objects by who allocated them", "",
           f"Container {k} of each case started with the others frozen (cgroup v2 "
           "freezer), under the kmem tracepoints (`kmalloc`, `kmem_cache_alloc`, `kfree`, "
           "`kmem_cache_free`), until it had read its hot set twice; then frozen too, "
           f"and tracing stopped a few seconds later. The slab objects allocated in "
           "between and not freed, by the function that allocated them: what one more "
           "container keeps in slab memory. Caches are named from frees of objects "
           "from the same function, or for a few functions from the kernel's source "
           "(`*`; `?`: neither), kmalloc ones by size. "
           "`meminfo` rows: the same window's /proc/meminfo deltas. KiB per container.",
           ""]
    owners = [o for o, _ in OWNERS] + ["other"]
    cols = list(profs)
    by = {n: {} for n in cols}
    for n in cols:
        for site, cache, size, objs, nbytes, owner in profile_rows(profs[n]):
            by[n][owner] = by[n].get(owner, 0) + nbytes
    rows = []
    for o in owners:
        vals = [by[n].get(o, 0) / 1024 for n in cols]
        if any(vals):
            rows.append([o] + vals)
    rows.append(["traced slab objects, total"] + [sum(by[n].values()) / 1024 for n in cols])
    for label, key in (("meminfo Slab delta", "Slab"), ("meminfo AnonPages delta", "AnonPages"),
                       ("meminfo KernelStack delta", "KernelStack"),
                       ("meminfo PageTables delta", "PageTables")):
        rows.append([label] + [mem_delta(profs[n]["before"]["meminfo"],
                                         profs[n]["after"]["meminfo"])[key] for n in cols])
    rows.append(["slab charged to the container's cgroup"] + [
        (profs[n].get("memcg") or {}).get("slab_unreclaimable", 0)
        + (profs[n].get("memcg") or {}).get("slab_reclaimable", 0) for n in cols])
    rows.append(["frees of slab objects older than the window (count)"] + [
        sum(profs[n]["trace"].get("old_frees", {}).values()) for n in cols])
    rows.append(["trace events lost"] + [profs[n]["trace"].get("lost_events") for n in cols])
    md += table([("KiB, container " + str(k), None)] + [(short(n), 0) for n in cols], rows)
    md += page_table(profs, cols)
    md += extra_memory(profs, by)
    csvrows = []
    for n in cols:
        for r in profile_rows(profs[n]):
            csvrows.append([n] + list(r))
    write_csv(results, "memory_traced.csv",
              ["case", "site", "cache", "object_bytes", "objects", "bytes", "owner"], csvrows)
    keys = [n for n in ("density-thin-default", "density-shared-off",
                        "density-distinct-default", "density-thin-off") if n in profs]
    for n in keys:
        top = profile_rows(profs[n])[:12]
        md += [f"Top allocation sites, {short(n)} (all: `memory_traced.csv`):", ""]
        md += table([("function", None), ("cache", None), ("object B", 0), ("objects", 0),
                     ("KiB", 1), ("owner", None)],
                    [[s, c, z, o, b / 1024, w] for s, c, z, o, b, w in top])


# Pages that are not the kernel's own memory for a container: slab pages
# (counted as objects), the page cache (shared or not: the tables above),
# anonymous memory and the measurement's; pages of no known owner (`other`)
# are left out too.
NOT_KERNEL_PAGES = ("slab pages (in the slab rows)", "page cache", "anonymous",
                    "tracing (this measurement)")


def extra_memory(profs, slab_by_owner):
    """Where a pcdedup case's extra kernel memory goes, against the case it
    is compared with (GAPS), from the traced container: slab objects by
    owner and pages outside the slab, the page cache and anonymous memory,
    and pcdedup's own part of the difference."""
    kernel = {}
    for n, prof in profs.items():
        k = {f"slab: {o}": v / 1024 for o, v in slab_by_owner[n].items()
             if o != "tracing (this measurement)"}
        for o, v in held_pages(prof).items():
            if o not in NOT_KERNEL_PAGES and not o.startswith("other"):
                k[f"pages: {o}"] = v
        kernel[n] = k
    out = []
    for a, b in GAPS:
        if a not in kernel or b not in kernel:
            continue
        keys = set(kernel[a]) | set(kernel[b])
        diff = sorted(((kernel[a].get(o, 0) - kernel[b].get(o, 0), o) for o in keys),
                      reverse=True)
        total = sum(v for v, _ in diff)
        own = kernel[a].get("slab: pcdedup", 0) - kernel[b].get("slab: pcdedup", 0)
        share = f" ({own / total:.0%} of the difference)" if 0 < own <= total else ""
        caused = ""
        off = PCDEDUP_OFF.get(a)
        if off in kernel:
            # what sharing makes the filesystem keep besides pcdedup's own
            # objects: the blocks that hold the keys (XFS attribute buffers)
            bufs = kernel[a].get(KEY_BUFFERS, 0) - kernel[off].get(KEY_BUFFERS, 0)
            mine = own + max(bufs, 0)
            caused = (f" What pcdedup causes, against {short(off)} (the same case without "
                      f"it): its own objects ({own:+.0f} KiB) and XFS buffer pages "
                      f"({bufs:+.0f} KiB: the blocks holding the keys, read by every root), "
                      f"{mine:+.0f} KiB"
                      + (f" ({mine / total:.0%} of the difference)." if 0 < mine <= total
                         else "."))
        out += [f"**{short(a)} against {short(b)}**, the traced container: {total:+.0f} KiB "
                "of the kernel's own memory (slab objects, and pages of a known owner "
                "outside the slab, the page cache and anonymous memory): "
                + ", ".join(f"{o} {v:+.0f}" for v, o in diff if abs(v) >= 16)
                + f". pcdedup's own objects: {own:+.0f} KiB{share}.{caused}", ""]
    return out


# A pcdedup case and the same case without pcdedup (the traced container's
# XFS buffer pages beyond it are pcdedup's: the keys' attribute blocks).
PCDEDUP_OFF = {"density-thin-default": "density-thin-off",
               "density-thin-default-operator": "density-thin-off",
               "density-thin-default-hot": "density-thin-off-hot",
               "density-distinct-default": "density-distinct-off"}
KEY_BUFFERS = "pages: XFS buffers (metadata, directories)"


# ---- memory and start --------------------------------------------------------

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


# ---- spreads -----------------------------------------------------------------

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


# ---- fio ---------------------------------------------------------------------

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


def hash_section(fio, md, control=None):
    """The hashing limit, per verify=full boot; CONTROL: boots of the same
    runs on one guest CPU, shown apart, out of the targets."""
    control = control or {}
    hb = hash_boots(fio) + hash_boots(control)
    if not hb:
        return
    md += ["## The hashing limit: verify=full cold reads against SHA-256", "",
           "In each verify=full boot the guest's SHA-256 rate is measured through the "
           "kernel crypto API (an AF_ALG `hash` socket, `sha256`: the generic C code "
           "pcdedup's fills hash with), 1 MiB sends for 3 s, on one CPU and on all guest "
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


# ---- micro -------------------------------------------------------------------

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


def status_notes(status):
    """{note: how many cases carry it} of the cases' statuses (a status
    rebuilt after the fact says how)."""
    notes = {}
    for x in status.get("cases", []):
        if x.get("note"):
            notes[x["note"]] = notes.get(x["note"], 0) + 1
    return notes


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


# ---- targets -----------------------------------------------------------------

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
    pct = t["unit"] == "%"
    lim = t["limit"]
    want = (f"within {lim:.1f}%" if t["want"] == "within" else
            f"{t['want']} {lim:+.1f}%" if pct else f"{t['want']} {lim:.2f}x")
    if f is None or f.value is None:
        why = (f and f.why) or "not measured"
        return (t["target"], want, NA, f"{NA} ({why})")
    # A ratio that rounds to the limit but is not it (0.1011 against 0.10)
    # is printed with the digits that tell them apart.
    nd = 4 if not pct and any(x is not None and x != float("inf") and x != lim and
                              round(x, 2) == round(lim, 2)
                              for x in (f.value, f.lo, f.hi)) else 2
    fmt = (lambda x: f"{x:+.{nd}f}%") if pct else (lambda x: f"{x:.{nd}f}x")
    measured = fmt(f.value)
    if f.lo is not None:
        measured += f" [{fmt(f.lo)}, {fmt(f.hi)}]" if pct else \
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
    unit = " points" if pct else "x"
    size = f"{abs(by):.2f}"
    if ok is None:
        return (t["target"], want, measured, "inconclusive (the limit lies within the spread)")
    side = "to spare" if ok else ("short" if t["want"] == ">=" else "over")
    return (t["target"], want, measured,
            f"{'**met**' if ok else '**missed**'} ({size}{unit} {side})")


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


def targets(cont, boots, fio, micro, pairs=None):
    """(target, want, measured, verdict): one row for every row of
    bench/targets.csv, n/a where its figure is missing; and {id: verdict}.
    BOOTS: the density arms, each a list of its boots."""
    figs = {}
    dens = {arm: cds[0] for arm, cds in boots.items()}
    figs.update(report_pairs.pairs_figures(pairs or {}))
    figs.update(density_figures(boots))
    figs.update(containers_figures(cont, dens))
    figs.update(micro_figures(micro))
    figs.update(fio_figures(fio))
    rows = [(t["id"], target_row(t, figs.get(t["id"]))) for t in load_targets()]
    return [r for _, r in rows], {i: r[3] for i, r in rows}


def short_of(verdict):
    """Whether a verdict leaves its target open: missed or inconclusive."""
    return verdict.startswith(("**missed**", "inconclusive"))


DENSITY_GAPS = (("density/thin/on-vs-shared", "density-thin-default", "density-shared-off"),
                ("density/thin-hot/on-vs-shared", "density-thin-default-hot",
                 "density-shared-off-hot"))
MEM_PARTS = ("anonymous (AnonPages)", "page cache (Cached - Shmem)", "tmpfs (Shmem)",
             "slab (Slab)", "kernel stacks (KernelStack)", "page tables (PageTables)",
             "percpu (Percpu)", "vmalloc (VmallocUsed)", "block device cache (Buffers)",
             "other kernel (in no field above)")
USED = "total used (MemTotal - MemFree)"


def density_reasons(verdicts, dens):
    """A missed density target against the shared lower: what a container
    of the other case uses more, by /proc/meminfo field, at the largest N
    both cases sampled (the same N: a per-container figure taken at each
    case's own limit is usable memory over that limit)."""
    out = []
    for tid, on, ref in DENSITY_GAPS:
        if not short_of(verdicts.get(tid, "")):
            continue
        eq = mem_at_equal_n(dens, on, ref)
        if not eq:
            continue
        n, a, b = eq
        more = a[USED] - b[USED]
        parts = sorted(((a[k] - b[k], k) for k in MEM_PARTS), reverse=True)
        out.append(
            f"`{tid}`: at N={n}, the largest N both sampled, a container of {short(on)} "
            f"uses {a[USED]:.2f} MiB, {more:.2f} MiB more than one of {short(ref)} "
            f"({b[USED]:.2f} MiB): "
            + ", ".join(f"{k.split(' (')[0]} {v:+.2f}" for v, k in parts if abs(v) >= 0.05)
            + " (who allocated it: the traced container).")
    return out


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


def host_load(status):
    """[load before->after, busy %] of a case's boot (status.json)."""
    h = (status or {}).get("host")
    if not h:
        return [None, None]
    return [f"{h['loadavg_before'][0]:.2f}->{h['loadavg_after'][0]:.2f}",
            h["cpu_busy"] * 100]


def targets_intro():
    return ["Every row of `bench/targets.csv`. A figure is printed with its spread or "
            "bracket in [ ]: over boots (fio: each boot's mode against that boot's "
            "pcdedup off, the lowest and highest of those ratios; A/B icount, where the "
            "kernels run in different boots: the lowest over the highest to the highest "
            "over the lowest; tagged vs untagged: the per-boot ratios), N reached up to "
            "the N before the first failing sample (density), "
            "Cached delta and the containers' memcg file charge (page cache), the 95% "
            "intervals of the medians (container starts). **met** / **missed** when the "
            "whole bracket lies on one side of the limit (by how much: the median's "
            "distance from it); *inconclusive* when the limit lies inside it; `n/a` "
            "without a figure or without a spread.", ""]


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


def main():
    results = os.path.abspath(sys.argv[1])
    raw = os.path.join(results, "raw")
    cases = load_cases(raw)
    by_kind = {}
    for name, (case, d) in cases.items():
        by_kind.setdefault(case.kind, {})[name] = (case, d)
    boots = density_boots(by_kind.get("density", {}))
    dens = {arm: cds[0] for arm, cds in boots.items()}  # each arm's first boot
    cont = by_kind.get("containers", {})
    micro, tags = by_kind.get("micro", {}), by_kind.get("tag", {})
    # control boots (a fio run again in another setup) explain, never count
    fio = {n: cd for n, cd in by_kind.get("fio", {}).items()
           if not cd[0].params.get("control")}
    control = {n: cd for n, cd in by_kind.get("fio", {}).items() if n not in fio}
    status = read_json(os.path.join(raw, "status.json"), {"cases": []})
    config = read_json(os.path.join(raw, "config.json"), {})
    image = read_json(os.path.join(raw, "image-build.json"))
    guest = next((d["guest"] for _, d in cases.values() if d and d.get("guest")), {})
    runs = status.get("runs_seconds", [])
    md = [f"# pcdedup benchmark: {os.path.basename(results)}", ""]
    md += [f"Guest kernel {guest.get('release', NA)}, clocksource "
           f"{guest.get('clocksource', NA)} (measured step "
           + (f"{guest['clock_step_ns'] / 1000:.1f} us" if guest.get("clock_step_ns")
              else NA) + f"). Mode: {'QUICK' if config.get('quick') else 'full'}. QEMU "
           f"{config['accel'].upper() if config.get('accel') else NA} on a {config.get('host_cpus', NA)}-core "
           "host: absolute times are emulation times, compare ratios. Run time "
           f"{status.get('total_seconds', NA)} s"
           + (f" over {len(runs)} runs (`bench.py --resume`)" if len(runs) > 1 else "")
           + "".join(f"; {x['case']} run again (its first run: {x['replaces'].get('seconds')} s, "
                     f"status {x['replaces'].get('rc')})"
                     for x in status.get("cases", []) if x.get("replaces"))
           + "".join(f"; {n} case(s): {note}" for note, n in status_notes(status).items())
           + ".", ""]
    if dens or cont or fio:
        md += ["Container image: an OCI image built locally (no registry) from the host's "
               "python3.11 and its standard library (without test, idlelib, tkinter, ...), "
               "bash, coreutils and the shared libraries they need: one layer, an OCI image "
               "layout, unpacked with `umoci unpack` into the XFS origin of an lvm2 thin pool "
               "and tagged with `pcdedup tag`. Thin cases: a snapshot per container; overlay "
               "cases: the unpacked rootfs as the shared lower, or reflink copies of it as "
               "distinct lowers. Every container is started with `crun run` from a bundle "
               "whose config.json is umoci's, with its root the container's snapshot or "
               "overlay mount and its own cgroup v2 group (memory controller)."
               + (f" Image: {image['files']} files, {image['rootfs_kb'] / 1024:.1f} MiB."
                  if image else ""), ""]
    head, body = [], []
    pairs = report_pairs.load_pairs(raw, cases)
    report_pairs.pairs_section(results, pairs, head)
    report_services.services_section(results, report_services.load_services(cases), head,
                                     pairs)
    report_serverramp.serverramp_section(results, report_serverramp.load_ramps(cases), head)
    density_section(results, boots, head, status.get("cases", []))
    containers_section(results, cont or dens, body, from_density=not cont)
    fio_section(results, fio, body)
    hash_section(fio, body, control)
    micro_section(micro, tags, body)
    rows, verdicts = targets(cont, boots, fio, micro, pairs)
    summary = table([("target", None), ("want", None), ("measured", None),
                     ("verdict", None)], rows)
    st = {s["case"]: s for s in status["cases"]}
    case_rows = [[name, case.kind, case.launcher or "none", case.kernel, case.mem,
                  "ok" if st.get(name, {}).get("rc") == 0 else
                  (f"FAILED (rc {st[name]['rc']})" if name in st else "not run"),
                  st.get(name, {}).get("seconds")] + host_load(st.get(name))
                 for name, (case, _) in cases.items()]
    cases_md = ["## Cases", ""] + [
        "`host load`: the host's 1-minute load average before and after the case's boot; "
        "`host busy %`: the share of all host CPU time that was busy meanwhile (this "
        f"guest's own emulation included), on {config.get('host_cpus', NA)} host CPUs. "
        + ("The guest's steal time is not visible under TCG (no paravirtual steal "
           "clock); each fio run records the guest's own CPU split (`guest CPU busy %`)."
           if config.get("accel") != "kvm" else
           "Each fio run records the guest's own CPU split, steal included."), ""] + table(
        [("case", None), ("kind", None), ("launcher", None), ("kernel", None),
         ("guest memory", None), ("result", None), ("seconds", 1), ("host load", None),
         ("host busy %", 0)], case_rows)
    for s in status["cases"]:
        if s["rc"]:
            cases_md += [f"`{s['case']}` failed; last lines:", "", "```", *s["tail"], "```", ""]
    md += head + ["## Targets", ""] + targets_intro() + summary + \
        why_missed(verdicts, dens, cont, fio, micro, control) + start_notes(cont) + body
    md += cases_md
    with open(os.path.join(results, "report.md"), "w") as f:
        f.write("\n".join(md).rstrip() + "\n")
    print("\n".join(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
