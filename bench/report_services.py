"""The report's section on real servers (bench/guest/services.py): both
versions of an image running as containers on thin snapshots, without and
with pcdedup: memory in all and per container, and what each start costs."""
import statistics

from report_base import table, write_csv

MODES = ("off", "full", "trust")
MODE_LABEL = {"off": "off", "full": "on, verify=full", "trust": "on, verify=trust"}


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def mib(kb):
    return None if kb is None else kb / 1024


def load_services(cases):
    """{(pair, verify): (case, result)} of the services cases."""
    return {(case.params["pair"], case.verify): (case, d)
            for case, d in cases.values() if case.kind == "services"}


def starts(d):
    """(first start of each version, the later ones): each a list of the
    containers' figures. A version's first container reads its files from
    disk (or, with pcdedup, from the other version's shares); the later
    ones start on other snapshots of the same version."""
    seen, first, later = set(), [], []
    for r in d.get("containers", []):
        (later if r["version"] in seen else first).append(r)
        seen.add(r["version"])
    return first, later


def touched(services, pairs):
    """Rows (server, version, image MiB, MiB its first container brought
    into the page cache, share of the image): what a server touches, from
    the pcdedup-off boot (its memcg's file pages: charged to the container
    that read them first) and the image's regular files (the pairs' lists)."""
    rows = []
    for (pair, mode), (case, d) in sorted(services.items()):
        ceil = ((pairs or {}).get(pair) or {}).get("ceiling")
        if mode != "off" or not d or not ceil:
            continue
        first, _ = starts(d)
        for r in first:
            img = ceil["bytes"].get(r["version"])
            file_kb = (r.get("memcg") or {}).get("file")
            if img and file_kb is not None:
                rows.append([pair, r["version"], img / 2**20, file_kb / 1024,
                             100 * file_kb * 1024 / img])
    return rows


def services_section(results, services, md, pairs=None):
    if not services:
        return
    md += ["## Real servers: both versions of an image, running", "",
           "Three containers of each version of an image (bench/images.py), each on a thin "
           "snapshot of its version's volume, started one after another (older, newer, "
           "older, ...) with `crun run`, the server on a unix socket in a bind-mounted "
           "folder; a container is ready when its server answers a first request (redis: "
           "SET and GET; nginx: GET /; postgres and mariadb: an upsert and a select of a "
           "row, on the database the package made in the image, Debian's configuration), "
           "then serves 200 more. One boot per row, 2 GiB. "
           "*In all*: MemFree's drop from before the first container (caches dropped) to "
           "after the last one's requests; *page cache*: Cached's growth. *Per container*: "
           "medians of memory.current and of the server processes' PSS (smaps_rollup). "
           "*Starts*: the first container of each version, then the later ones (median): "
           "seconds from `crun run` to the first answer, MiB read from disk meanwhile.", ""]
    rows, csv_rows = [], []
    for pair in sorted({p for p, _ in services}):
        for mode in MODES:
            cd = services.get((pair, mode))
            if not cd:
                continue
            case, d = cd
            if not d or not d.get("containers"):
                rows.append([pair, MODE_LABEL[mode], None, None, None, None, None,
                             "no result"])
                continue
            cs = d["containers"]
            first, later = starts(d)
            row = [pair, MODE_LABEL[mode], len(cs), mib(d.get("used_kb")),
                   mib(d.get("cached_kb")),
                   mib(med(r.get("memory_current_kb") for r in cs)),
                   mib(med((r.get("smaps") or {}).get("Pss") for r in cs)),
                   " / ".join(f"{r['ready_s']:.2f}" for r in first),
                   " / ".join(f"{r['start_disk_kb'] / 1024:.1f}" for r in first),
                   med(r["ready_s"] for r in later),
                   mib(med(r["start_disk_kb"] for r in later))]
            rows.append(row)
            csv_rows.append(row)
    cols = [("image", None), ("pcdedup", None), ("containers", 0), ("in all (MiB)", 1),
            ("page cache (MiB)", 1), ("per container (MiB)", 1), ("PSS (MiB)", 1),
            ("first starts: ready s (older / newer)", None),
            ("first starts: disk MiB", None), ("later starts: ready s", 2),
            ("later starts: disk MiB", 1)]
    md += table(cols, rows)
    write_csv(results, "services.csv", [h for h, _ in cols], csv_rows)
    hot = touched(services, pairs)
    if hot:
        md += ["What each server touches: the page cache its version's first container "
               "brought in (its memory cgroup's `file`, charged to the container that "
               "reads a page first; pcdedup off), against its image's regular files. "
               "This is the real hot set the synthetic density's 15% stands in for.", ""]
        md += table([("image", None), ("version", None), ("image files MiB", 1),
                     ("first container's page cache MiB", 1), ("% of the image", 1)], hot)
