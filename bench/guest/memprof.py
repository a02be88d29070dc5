"""Where the kernel's memory goes, for the density cases (standard library
only, in the guest).

snapshot(): /proc/meminfo fields by category, object counts (inodes,
dentries, files), and /proc/slabinfo by cache when the kernel has it (it
does not when built with SLUB_TINY, as tinyconfig picks: then the by-cache
figures come from KmemTrace).

KmemTrace: the kmem tracepoints (kmalloc, kmem_cache_alloc, kfree,
kmem_cache_free; mm_page_alloc with a stack trace, mm_page_free) over a
window, in a tracefs instance of its own: what was allocated in the window
and not freed in it, by allocation site (the function that called the
allocator), object size and cache (learnt from frees of objects from the
same site: kmem_cache_alloc does not name its cache; with merged caches,
without slab_nomerge, a free names the cache it was merged into), and the
count of frees of objects older than the window; pages taken from the page
allocator and not freed, by the first frames of the allocation's stack
outside the allocator (the guest kernel's unwinder guesses, so a frame may
be stale). The capture is `cat trace_pipe` into a file: a Python reader
would churn mappings (vm_area, maple nodes) whose RCU frees lag behind the
window."""
import collections
import os
import re
import subprocess
import time

TRACEFS = "/sys/kernel/tracing"
EVENTS = ("kmalloc", "kmem_cache_alloc", "kfree", "kmem_cache_free")
# Pages straight from the page allocator (with a stack trace each: the
# event names no caller); slab pages among them are counted as slab.
PAGE_EVENTS = ("mm_page_alloc", "mm_page_free", "mm_page_free_batched")
# Stack frames of the page allocator itself, skipped to find its caller.
ALLOCATOR = ("__alloc_pages", "alloc_pages", "__folio_alloc", "folio_alloc", "alloc_frozen",
             "__alloc_frozen", "get_page_from_freelist", "__get_free_pages", "__alloc_pages_bulk",
             "alloc_pages_bulk", "trace_", "event_triggers", "__trace", "ftrace",
             "stack_trace", "__ftrace", "_raw_spin", "rmqueue", "prep_new_page",
             "post_alloc_hook", "__traceiter", "__stack", "save_stack", "arch_stack",
             "__folio_alloc_noprof", "vma_alloc_folio", "alloc_pages_mpol")
# /proc/meminfo fields a snapshot keeps (kB).
MEMINFO = ("MemTotal", "MemFree", "MemAvailable", "Buffers", "Cached", "Shmem",
           "AnonPages", "Slab", "SReclaimable", "SUnreclaim", "KernelStack",
           "PageTables", "Percpu", "VmallocUsed")


def meminfo():
    out = {}
    with open("/proc/meminfo") as f:
        for line in f:
            key, val = line.split(":")
            if key in MEMINFO:
                out[key] = int(val.split()[0])
    return out


def _ints(path):
    with open(path) as f:
        return [int(x) for x in f.read().split()]


def fs_objects():
    """Inodes and dentries in the caches, files allocated (all filesystems)."""
    inodes = _ints("/proc/sys/fs/inode-nr")
    dentries = _ints("/proc/sys/fs/dentry-state")
    files = _ints("/proc/sys/fs/file-nr")
    return {"inodes": inodes[0], "inodes_unused": inodes[1], "dentries": dentries[0],
            "dentries_unused": dentries[1], "files": files[0]}


def slabinfo():
    """{cache: bytes in its slabs (num_objs x objsize)}, or None without
    /proc/slabinfo (a kernel without SLUB_DEBUG)."""
    try:
        with open("/proc/slabinfo") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    out = {}
    for line in lines[2:]:
        f = line.split()
        out[f[0]] = int(f[2]) * int(f[3])
    return out


def watermark_high_kb():
    """Sum of the zones' high watermarks: kswapd reclaims until free memory
    is above it."""
    pages = 0
    with open("/proc/zoneinfo") as f:
        for line in f:
            k = line.split()
            if len(k) == 2 and k[0] == "high":
                pages += int(k[1])
    return pages * os.sysconf("SC_PAGE_SIZE") // 1024


def snapshot():
    snap = {"meminfo": meminfo(), "objects": fs_objects()}
    slabs = slabinfo()
    if slabs is not None:
        snap["slab"] = slabs
    return snap


def _w(path, value):
    with open(path, "w") as f:
        f.write(value)


_PAGE = re.compile(r"(mm_page_alloc|mm_page_free_batched|mm_page_free): page=\S+ "
                   r"pfn=0x([0-9a-f]+) order=(\d+)")
_LINE = re.compile(r"(kmalloc|kmem_cache_alloc|kfree|kmem_cache_free): call_site=([^+ ]+)\S* "
                   r"ptr=(\S+)(?: bytes_req=\d+ bytes_alloc=(\d+) \S+ \S+ accounted=(\w+))?"
                   r"(?: name=(\S+))?")


class KmemTrace:
    """start() ... stop(): the slab objects allocated in between and still
    live at stop()."""

    def __init__(self, workdir, buffer_kb=8192, pages=True):
        self.inst = os.path.join(TRACEFS, "instances", "memprof")
        self.file = os.path.join(workdir, "kmem.trace")
        self.buffer_kb = buffer_kb
        self.cat = None
        self.events = EVENTS + (PAGE_EVENTS if pages else ())

    @staticmethod
    def available():
        if not os.path.isdir(os.path.join(TRACEFS, "events")):
            subprocess.run(["mount", "-t", "tracefs", "tracefs", TRACEFS],
                           capture_output=True)
        return os.path.isdir(os.path.join(TRACEFS, "events", "kmem", "kmalloc"))

    def start(self):
        os.mkdir(self.inst)
        _w(f"{self.inst}/buffer_size_kb", str(self.buffer_kb))
        # Real addresses (alloc and free pair by pointer) and no task,
        # CPU or time stamp columns: shorter lines.
        for opt, v in (("hash-ptr", "0"), ("context-info", "0")):
            if os.path.exists(f"{self.inst}/options/{opt}"):
                _w(f"{self.inst}/options/{opt}", v)
        with open(self.file, "wb") as out:
            self.cat = subprocess.Popen(["cat", f"{self.inst}/trace_pipe"], stdout=out)
        if "mm_page_alloc" in self.events:
            _w(f"{self.inst}/events/kmem/mm_page_alloc/trigger", "stacktrace")
        for e in self.events:
            _w(f"{self.inst}/events/kmem/{e}/enable", "1")
        self.t0 = time.monotonic()

    def stop(self):
        """Stop tracing, drain, parse; the instance and the file are removed."""
        _w(f"{self.inst}/tracing_on", "0")
        seconds = time.monotonic() - self.t0
        lost = 0
        for _ in range(100):
            time.sleep(0.2)
            left = lost = 0
            for cpu in os.listdir(f"{self.inst}/per_cpu"):
                with open(f"{self.inst}/per_cpu/{cpu}/stats") as f:
                    st = dict(line.split(":", 1) for line in f if ":" in line)
                left += int(st["entries"])
                lost += int(st["overrun"]) + int(st["dropped events"])
            if not left:
                break
        time.sleep(0.5)
        self.cat.kill()
        self.cat.wait()
        for e in self.events:
            _w(f"{self.inst}/events/kmem/{e}/enable", "0")
        if "mm_page_alloc" in self.events:
            _w(f"{self.inst}/events/kmem/mm_page_alloc/trigger", "!stacktrace")
        _w(f"{self.inst}/buffer_size_kb", "4")
        try:
            os.rmdir(self.inst)
        except OSError:
            pass  # still busy: left in place, its buffer shrunk
        out = self._parse()
        out["trace_file_kb"] = os.path.getsize(self.file) // 1024
        os.remove(self.file)
        out.update(seconds=round(seconds, 1), lost_events=lost)
        return out

    def _parse(self):
        live = {}                                   # ptr -> (site, size, kmalloc?, accounted)
        names = collections.defaultdict(collections.Counter)   # site -> cache names
        old = collections.Counter()                 # frees of objects older than the window
        pages = {}                                  # pfn -> (order, [caller frames])
        old_pages = 0
        frames = None                               # the stack of the last page allocation
        raw = None                                  # its first frames, whatever they are
        unknown = []                                # a few stacks with no caller found
        events = 0
        with open(self.file, errors="replace") as f:
            for line in f:
                t = line.strip()
                if t.startswith("=>"):
                    fn = t[2:].strip().split("+")[0]
                    if raw is not None and len(raw) < 8:
                        raw.append(fn)
                    if frames is not None and len(frames) < 6:
                        if frames or not fn.startswith(ALLOCATOR):
                            frames.append(fn)
                    continue
                if t.startswith("<stack trace>"):
                    continue
                if raw is not None and not frames and len(unknown) < 8:
                    unknown.append(" < ".join(raw) or "(no stack)")
                frames = raw = None
                m = _PAGE.search(line)
                if m:
                    events += 1
                    ev, pfn, order = m.group(1), m.group(2), int(m.group(3))
                    if ev == "mm_page_alloc":
                        frames, raw = [], []
                        pages[pfn] = (order, frames)
                    elif pages.pop(pfn, None) is None:
                        old_pages += 1 << order
                    continue
                m = _LINE.search(line)
                if not m:
                    continue
                events += 1
                ev, site, ptr, size, acc, name = m.groups()
                if ev == "kmalloc" or ev == "kmem_cache_alloc":
                    live[ptr] = (site, int(size), ev == "kmalloc", acc == "true")
                elif ptr.lstrip("0") in ("", "10"):
                    continue  # kfree(NULL) or of ZERO_SIZE_PTR: traced, frees nothing
                else:
                    obj = live.pop(ptr, None)
                    if obj is None:
                        old[name or "kfree"] += 1
                    elif name and not obj[2]:
                        names[obj[0]][name] += 1
        agg = collections.Counter()
        for site, size, is_kmalloc, acc in live.values():
            if is_kmalloc:
                cache = (f"kmalloc-{'cg-' if acc else ''}{size}" if size <= 8192
                         else "kmalloc (pages)")
            else:
                cache = names[site].most_common(1)[0][0] if names[site] else ""
            agg[(site, cache, size)] += 1
        by_caller = collections.Counter()
        for order, fr in pages.values():
            by_caller[" < ".join(fr) or "?"] += 1 << order
        return {"events": events,
                "live": [{"site": s, "cache": c, "size": z, "objects": n}
                         for (s, c, z), n in agg.most_common()],
                "old_frees": dict(old.most_common(20)),
                "pages": [{"caller": k, "pages": n} for k, n in by_caller.most_common()],
                "old_page_frees": old_pages, "unknown_stacks": unknown}
