#!/usr/bin/env python3
"""Host tests of the real-image pairs: bench/images.py's layer and file
list, bench.py's copy of the lists into raw/, and bench/report_pairs.py (the
ceiling, the pairs table first in the report, its targets, its picture),
and how a target's figure is printed next to its limit. Prints KTAP;
tests/host/bench-pairs.sh runs it."""
import gzip
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path[:0] = [os.path.join(REPO, "bench"), os.path.join(REPO, "bench/guest")]
import bench  # noqa: E402
import images  # noqa: E402
from case import Case  # noqa: E402
from ktap import expect, main, test  # noqa: E402
from report_base import Figure  # noqa: E402
from report_containers import containers_section  # noqa: E402
import report_pairs  # noqa: E402
import report_services  # noqa: E402
from report_targets import target_row  # noqa: E402




def rows_tsv(rows):
    return "path\ttype\tsize\tsha256\tlink\n" + "".join(
        "\t".join(str(x) for x in r) + "\n" for r in rows)


OLDER = [("usr/lib/a.so", "f", 5000, "aa" * 32, ""), ("etc/b", "f", 100, "bb" * 32, ""),
         ("etc/empty", "f", 0, "e3" * 32, ""), ("usr/bin", "d", 0, "", "")]
NEWER = [("usr/lib/a.so", "f", 5000, "aa" * 32, ""), ("usr/lib/d.so", "f", 8192, "dd" * 32, ""),
         ("usr/lib/d2.so", "h", 0, "", "usr/lib/d.so"), ("etc/empty", "f", 0, "e3" * 32, ""),
         ("usr/share/b-moved", "f", 100, "bb" * 32, "")]


@test
def ceiling_counts_each_content_once():
    c = report_pairs.ceiling({"older": OLDER, "newer": NEWER})
    # without: a 2 + b 1 + a 2 + d 2 + b-moved 1 pages (empty files none, a
    # hard link none); b's content under another path counts once
    expect(c["pages_without"] == 8, f"pages_without {c['pages_without']}, want 8")
    expect(c["pages_distinct"] == 5, f"pages_distinct {c['pages_distinct']}, want 5")
    expect(abs(c["saving"] - 3 / 8) < 1e-9, f"saving {c['saving']}, want 3/8")
    expect(c["files_in_both"] == 3, f"files_in_both {c['files_in_both']} (a.so, empty, b-moved)")


def rootfs_tar():
    """A tarball as mmdebstrap writes one: ./-prefixed, device nodes in dev/."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as t:
        for name, kind in (("./", tarfile.DIRTYPE), ("./dev/", tarfile.DIRTYPE),
                           ("./dev/null", tarfile.CHRTYPE), ("./usr/", tarfile.DIRTYPE)):
            ti = tarfile.TarInfo(name)
            ti.type = kind
            t.addfile(ti)
        ti = tarfile.TarInfo("./usr/f")
        data = b"hello\n" * 1000
        ti.size = len(data)
        t.addfile(ti, io.BytesIO(data))
        for name, kind, target in (("./usr/g", tarfile.LNKTYPE, "./usr/f"),
                                   ("./usr/s", tarfile.SYMTYPE, "f")):
            ti = tarfile.TarInfo(name)
            ti.type, ti.linkname = kind, target
            t.addfile(ti)
    return buf.getvalue(), data


@test
def layer_drops_device_nodes_and_lists_files():
    import hashlib
    tar, data = rootfs_tar()
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = os.path.join(tmp, "in.tar"), os.path.join(tmp, "layer.tar")
        with open(src, "wb") as f:
            f.write(tar)
        rows = images.layer_from_rootfs_tar(src, dst)
        with tarfile.open(dst) as t:
            names = [m.name for m in t]
            body = t.extractfile("./usr/f").read()
        layout = os.path.join(tmp, "oci")
        info = images.oci.layout_from_layer(layout, "t", dst, ["/bin/sh"])
        with open(os.path.join(layout, "index.json")) as f:
            index = json.load(f)
    expect("./dev/null" not in names, f"device node kept: {names}")
    expect(body == data, "file body changed in the layer")
    by = {r[0]: r for r in rows}
    expect(by["usr/f"] == ("usr/f", "f", len(data), hashlib.sha256(data).hexdigest(), ""),
           f"usr/f row {by.get('usr/f')}")
    expect(by["usr/g"][1:] == ("h", 0, "", "usr/f"), f"hard link row {by.get('usr/g')}")
    expect(by["usr/s"][1] == "l", f"symlink row {by.get('usr/s')}")
    expect(index["manifests"][0]["annotations"]["org.opencontainers.image.ref.name"] == "t"
           and info["layer_bytes"] > 0, f"layout {index}, {info}")


@test
def sources_for_refuses_a_missing_suite():
    try:
        images.sources_for(("no-such-suite-xyz",))
    except SystemExit as e:
        expect("no-such-suite-xyz" in str(e), f"message: {e}")
        return
    raise AssertionError("sources_for accepted a suite the host does not have")


def fixture(raw, with_lists=True, rounds=(1, 2)):
    """A pairs-redis case: without 200 MiB, with 140 (thin) / 150 (overlay)
    in round 1, 141 / 151 in round 2; the lists allow 1 - 130/200."""
    os.makedirs(os.path.join(raw, "images"))
    case = Case("pairs-redis", "pairs", verify="default", params={"pair": "redis"}, order=1)
    case.save(os.path.join(raw, "pairs-redis.case.json"))
    runs = []
    for r in rounds:
        for scen, on_kb in (("thin", 140 * 1024 + (r - 1) * 1024),
                            ("overlay", 150 * 1024 + (r - 1) * 1024)):
            for dedup, kb in ((False, 200 * 1024), (True, on_kb)):
                runs.append({"scenario": scen, "pcdedup": dedup, "round": r, "cached_kb": kb,
                             "read_s": 10.0, "cgroup_file_kb": kb})
    with open(os.path.join(raw, "pairs-redis.json"), "w") as f:
        json.dump({"pair": "redis", "runs": runs,
                   "guest": {"release": "6.12.118+", "clocksource": "tsc",
                             "clock_step_ns": 100, "cpus": 2, "mem_total_kb": 3000000}}, f)
    # 200 MiB without; 130 MiB of distinct contents (whole pages)
    mib = 1 << 20
    older = [("usr/lib/x", "f", 70 * mib, "11" * 8, ""), ("usr/lib/y", "f", 30 * mib, "22" * 8, "")]
    newer = [("usr/lib/x", "f", 70 * mib, "11" * 8, ""), ("usr/lib/z", "f", 30 * mib, "33" * 8, "")]
    for v, rows in (("older", older), ("newer", newer)):
        base = os.path.join(raw, "images", f"redis-{v}")
        if with_lists:
            with gzip.open(base + ".files.tsv.gz", "wt") as f:
                f.write(rows_tsv(rows))
        with open(base + ".packages.tsv", "w") as f:
            f.write("libc6\t2.36-9+deb12u1\nredis-server\t5:7.0.15-1~deb12u"
                    + ("1" if v == "older" else "2") + "\n")
        with open(base + ".info.json", "w") as f:
            json.dump({"built": "2026-12-07T10:00:00Z"}, f)
    with open(os.path.join(raw, "status.json"), "w") as f:
        json.dump({"cases": [{"case": "pairs-redis", "rc": 0, "seconds": 100.0, "tail": []}],
                   "total_seconds": 100, "runs_seconds": [100]}, f)
    with open(os.path.join(raw, "config.json"), "w") as f:
        json.dump({"quick": False, "accel": "tcg", "host_cpus": 2}, f)


def report(with_lists=True, rounds=(1, 2)):
    with tempfile.TemporaryDirectory() as tmp:
        res = os.path.join(tmp, "pcdedup-fixture")
        fixture(os.path.join(res, "raw"), with_lists, rounds)
        p = subprocess.run([sys.executable, os.path.join(REPO, "bench/report.py"), res],
                           capture_output=True, text=True)
        expect(p.returncode == 0, f"report.py exit {p.returncode}: {p.stderr[-500:]}")
        with open(os.path.join(res, "report.md")) as f:
            md = f.read()
        return md, os.path.exists(os.path.join(res, "pairs.png")), \
            os.path.exists(os.path.join(res, "pairs.csv"))


def row(md, start):
    return next((line for line in md.splitlines() if line.startswith(start)), None)


@test
def report_leads_with_the_pairs_table():
    md, png, csvf = report()
    sections = [line for line in md.splitlines() if line.startswith("## ")]
    expect(sections[:1] == ["## Real images: version pairs, every file read once"],
           f"first section {sections[:1]}")
    r = row(md, "| redis |")
    expect(r is not None, "no redis row")
    cells = [c.strip() for c in r.strip("|").split("|")]
    # without 200.0; thin with 140.5 (median of 140, 141), saving 29.75%;
    # ceiling 35%; of ceiling 0.85 [0.84-0.86]; ishare 241 -> 163 MB, 32.4%
    want = {2: "200.0", 3: "140.5", 4: "29.8", 9: "35.0", 11: "241 -> 163 MB", 12: "32.4"}
    for i, w in want.items():
        expect(cells[i] == w, f"cell {i} is {cells[i]!r}, want {w!r}: {r}")
    expect(cells[5].startswith("0.85 [0.84-0.86]"), f"of ceiling {cells[5]!r}")
    expect("redis-server 5:7.0.15-1~deb12u1 -> 5:7.0.15-1~deb12u2" in cells[1], cells[1])
    expect(png and csvf, f"pairs.png written {png}, pairs.csv {csvf}")


@test
def report_pairs_targets_have_verdicts():
    md, _, _ = report()
    r = row(md, "| redis version pair, every file read once, thin volumes")
    expect(r and "**missed**" in r and "0.85x [0.84-0.86x]" in r, f"thin target row: {r}")
    r = row(md, "| postgres version pair, every file read once, thin volumes")
    expect(r and "n/a (not measured)" in r, f"a pair not run reads n/a: {r}")


@test
def report_without_lists_has_no_ceiling():
    md, _, _ = report(with_lists=False)
    r = row(md, "| redis version pair, every file read once, thin volumes")
    expect(r and "n/a (no ceiling" in r, f"target row without the lists: {r}")
    cells = [c.strip() for c in row(md, "| redis |").strip("|").split("|")]
    expect(cells[9] == "n/a", f"ceiling without the lists: {cells[9]!r}")


@test
def report_one_round_gives_no_verdict():
    md, _, _ = report(rounds=(1,))
    r = row(md, "| redis version pair, every file read once, thin volumes")
    expect(r and "no spread" in r and "met" not in r, f"one round: {r}")


@test
def report_lists_every_package_and_marks_changes():
    md, _, _ = report()
    expect("| redis-server | 5:7.0.15-1~deb12u1 | **5:7.0.15-1~deb12u2** |" in md,
           "changed package not marked")
    expect("| libc6 | 2.36-9+deb12u1 | 2.36-9+deb12u1 |" in md, "unchanged package missing")
    expect("| redis | 2/2 |" in md and "| 1 of 2 |" in md, "pairs detail row")


@test
def copy_image_lists_cuts_digests():
    with tempfile.TemporaryDirectory() as tmp:
        saved = images.IMAGES
        images.IMAGES = os.path.join(tmp, "images")
        try:
            for v in images.VERSIONS:
                d = images.image_dir("redis", v)
                os.makedirs(d)
                with open(os.path.join(d, "files.tsv"), "w") as f:
                    f.write(rows_tsv(OLDER))
                for name in ("info.json", "packages.tsv"):
                    with open(os.path.join(d, name), "w") as f:
                        f.write("{}" if name.endswith("json") else "a\t1\n")
            raw = os.path.join(tmp, "raw")
            bench.copy_image_lists(["redis"], raw)
            rows = report_pairs.read_files(os.path.join(raw, "images/redis-newer.files.tsv.gz"))
        finally:
            images.IMAGES = saved
    expect(rows[0] == ("usr/lib/a.so", "f", 5000, "aa" * 8), f"first row {rows[0]}")
    expect(len(rows) == len(OLDER), f"{len(rows)} rows")


@test
def target_row_tells_a_figure_from_its_limit():
    t = {"target": "disk", "want": "<=", "limit": 0.10, "unit": "x"}
    got = target_row(t, Figure(0.1011, why="one boot: no spread"))[2]
    expect(got == "0.1011x", f"0.1011 against 0.10 printed as {got!r}")
    got = target_row(t, Figure(0.5, 0.4, 0.6))[2]
    expect(got == "0.50x [0.40-0.60x]", f"0.5 printed as {got!r}")


@test
def start_table_counts_making_the_roots():
    case = Case("containers-thin-off-patched", "containers", "thin", "off", n=4)
    d = {"start_s": [1.0, 2.0, 2.0, 3.0], "setup_s": 10.0, "samples": [], "error": None}
    with tempfile.TemporaryDirectory() as tmp:
        md = []
        containers_section(tmp, {case.name: (case, d)}, md)
    r = row("\n".join(md), "| 1 |")
    cells = [c.strip() for c in (r or "").strip("|").split("|")]
    expect(cells[-2:] == ["10.0", "2.50"], f"roots s, per root s: {cells[-2:]} in {r}")


@test
def services_table_splits_first_and_later_starts():
    def container(i, version, ready, disk_kb):
        return {"container": i, "version": version, "ready_s": ready,
                "start_disk_kb": disk_kb, "memory_current_kb": 10240 * i,
                "smaps": {"Pss": 2048 * i}}
    d = {"used_kb": 102400, "cached_kb": 20480, "containers": [
        container(1, "older", 3.0, 13 * 1024), container(2, "newer", 2.0, 7 * 1024),
        container(3, "older", 1.0, 512), container(4, "newer", 1.5, 1024)]}
    case = Case("services-redis-full", "services", "thin", "full", params={"pair": "redis"})
    services = report_services.load_services({case.name: (case, d)})
    md = []
    with tempfile.TemporaryDirectory() as tmp:
        report_services.services_section(tmp, services, md)
        csv_written = os.path.exists(os.path.join(tmp, "services.csv"))
    r = row("\n".join(md), "| redis | on, verify=full |")
    cells = [c.strip() for c in (r or "").strip("|").split("|")]
    # in all 100 MiB, page cache 20; per container median of 10..40 MiB: 25;
    # PSS median of 2..8: 5; first starts older 3.00 (13 MiB), newer 2.00
    # (7); later: median 1.25 s, 0.75 MiB
    want = ["redis", "on, verify=full", "4", "100.0", "20.0", "25.0", "5.0",
            "3.00 / 2.00", "13.0 / 7.0", "1.25", "0.8"]
    expect(cells == want, f"row {cells}, want {want}")
    expect(csv_written, "services.csv not written")


@test
def services_touched_is_first_containers_file_pages():
    """What a server touches: each version's first container's memcg file
    pages in the pcdedup-off boot, against that version's image bytes; the
    later containers' and the pcdedup-on boot's figures stay out."""
    def container(i, version, file_kb):
        return {"container": i, "version": version, "ready_s": 1.0, "start_disk_kb": 0,
                "memcg": {"file": file_kb}}
    off = {"containers": [container(1, "older", 10240), container(2, "newer", 5120),
                          container(3, "older", 99999)]}
    on = {"containers": [container(1, "older", 1), container(2, "newer", 1)]}
    cases = {}
    for verify, d in (("off", off), ("full", on)):
        c = Case(f"services-redis-{verify}", "services", "thin", verify, params={"pair": "redis"})
        cases[c.name] = (c, d)
    pairs = {"redis": {"ceiling": {"bytes": {"older": 100 * 2**20, "newer": 50 * 2**20}}}}
    rows = report_services.touched(report_services.load_services(cases), pairs)
    want = [["redis", "older", 100.0, 10.0, 10.0], ["redis", "newer", 50.0, 5.0, 10.0]]
    expect(rows == want, f"rows {rows}, want {want}")


if __name__ == "__main__":
    sys.exit(main())
