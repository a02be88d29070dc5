"""Where a container's memory goes (the density cases' samples and the
traced container, bench/guest/memprof.py): per container at equal N, by
slab cache and owner, what pcdedup causes, and where the memory of an arm
that missed its density target went."""
import os

from report_base import Figure, short_of, table, write_csv
from report_density import density_state, short


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


def traced_profiles(dens):
    """{case: its traced container's profile} of the density cases that
    traced one (DENS: each arm's first boot)."""
    return {n: d["profile"] for n, (c, d) in dens.items()
            if d and (d.get("profile") or {}).get("trace")}


def slab_by_owner(profs):
    """{case: {owner: bytes}} of the traced container's live slab objects."""
    by = {n: {} for n in profs}
    for n, prof in profs.items():
        for site, cache, size, objs, nbytes, owner in profile_rows(prof):
            by[n][owner] = by[n].get(owner, 0) + nbytes
    return by


def traced_section(results, dens, md):
    profs = traced_profiles(dens)
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
    by = slab_by_owner(profs)
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


def kernel_kib(profs, slab_by_owner):
    """{case: {"slab: OWNER" or "pages: OWNER": KiB}}: the kernel's own
    memory the traced container keeps (NOT_KERNEL_PAGES left out)."""
    kernel = {}
    for n, prof in profs.items():
        k = {f"slab: {o}": v / 1024 for o, v in slab_by_owner[n].items()
             if o != "tracing (this measurement)"}
        for o, v in held_pages(prof).items():
            if o not in NOT_KERNEL_PAGES and not o.startswith("other"):
                k[f"pages: {o}"] = v
        kernel[n] = k
    return kernel


def key_buffers(kernel, a, off):
    """KiB of XFS buffer pages case A keeps beyond OFF (the same case
    without pcdedup): what sharing makes the filesystem keep besides
    pcdedup's own objects, the blocks that hold the keys (XFS attribute
    buffers)."""
    return kernel[a].get(KEY_BUFFERS, 0) - kernel[off].get(KEY_BUFFERS, 0)


def extra_memory(profs, slab_by_owner):
    """Where a pcdedup case's extra kernel memory goes, against the case it
    is compared with (GAPS), from the traced container: slab objects by
    owner and pages outside the slab, the page cache and anonymous memory,
    and pcdedup's own part of the difference."""
    kernel = kernel_kib(profs, slab_by_owner)
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
            bufs = key_buffers(kernel, a, off)
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


# The targets on what pcdedup makes the kernel keep per container: the
# traced container of a pcdedup case against its PCDEDUP_OFF twin.
MEMORY_TARGETS = (("memory/thin/pcdedup-own-per-container", "density-thin-default"),
                  ("memory/thin-operator/pcdedup-own-per-container",
                   "density-thin-default-operator"))


def memory_figures(dens):
    """{target id: Figure}: pcdedup's own kernel memory per container, in
    KiB: its slab objects and the XFS buffer pages beyond the same case
    without it (extra_memory's "what pcdedup causes"). One traced container
    is one exact count, not a sample: its bracket is the value itself. No
    figure when either case has no trace, or no page trace (the buffer
    pages would count as 0)."""
    profs = traced_profiles(dens)
    kernel = kernel_kib(profs, slab_by_owner(profs))
    figs = {}
    for tid, a in MEMORY_TARGETS:
        off = PCDEDUP_OFF[a]
        if a not in profs or off not in profs:
            figs[tid] = Figure(why="not traced")
            continue
        if any("pages" not in profs[n]["trace"] for n in (a, off)):
            figs[tid] = Figure(why="pages not traced")
            continue
        own = kernel[a].get("slab: pcdedup", 0) - kernel[off].get("slab: pcdedup", 0)
        bufs = key_buffers(kernel, a, off)
        v = own + max(bufs, 0)
        figs[tid] = Figure(v, v, v, note=f"(one traced container: slab {own:.0f} + XFS "
                           f"buffers {max(bufs, 0):.0f} KiB, against {short(off)})")
    return figs


MEM_PARTS = ("anonymous (AnonPages)", "page cache (Cached - Shmem)", "tmpfs (Shmem)",
             "slab (Slab)", "kernel stacks (KernelStack)", "page tables (PageTables)",
             "percpu (Percpu)", "vmalloc (VmallocUsed)", "block device cache (Buffers)",
             "other kernel (in no field above)")


USED = "total used (MemTotal - MemFree)"


DENSITY_GAPS = (("density/thin/on-vs-shared", "density-thin-default", "density-shared-off"),
                ("density/thin-hot/on-vs-shared", "density-thin-default-hot",
                 "density-shared-off-hot"))


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
