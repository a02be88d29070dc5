#!/usr/bin/env python3
"""Write report.md, CSVs and gnuplot PNGs for one results folder and print
the targets. Every figure comes from raw/ of that run: NAME.case.json (the
case, bench/guest/case.py) and NAME.json (what the guest measured). Each
section is a module of its own: report_pairs, report_services,
report_serverramp (real images), report_density, report_memory,
report_containers, report_fio, report_micro, report_targets; report_base
holds what they share.
Usage: bench/report.py RESULTS_DIR"""
import glob
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "guest"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from case import Case  # noqa: E402
import report_pairs  # noqa: E402
import report_serverramp  # noqa: E402
import report_services  # noqa: E402
from report_base import NA, read_json, table  # noqa: E402
from report_containers import containers_section, start_notes  # noqa: E402
from report_density import density_boots, density_section  # noqa: E402
from report_fio import fio_section, hash_section  # noqa: E402
from report_memory import memory_section  # noqa: E402
from report_micro import micro_section  # noqa: E402
from report_targets import targets, targets_intro, why_missed  # noqa: E402


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


def status_notes(status):
    """{note: how many cases carry it} of the cases' statuses (a status
    rebuilt after the fact says how)."""
    notes = {}
    for x in status.get("cases", []):
        if x.get("note"):
            notes[x["note"]] = notes.get(x["note"], 0) + 1
    return notes


def host_load(status):
    """[load before->after, busy %] of a case's boot (status.json)."""
    h = (status or {}).get("host")
    if not h:
        return [None, None]
    return [f"{h['loadavg_before'][0]:.2f}->{h['loadavg_after'][0]:.2f}",
            h["cpu_busy"] * 100]


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
                  if image else "")
               + (" Tagged with `--tree-store`: keys of the short level (at most 255 "
                  "bytes, in the inode), level 0 of every content in the image's tree "
                  "store, which each case names to the kernel (a copy in /run)."
                  if image and image.get("tree_store") else ""), ""]
    head, body = [], []
    pairs = report_pairs.load_pairs(raw, cases)
    report_pairs.pairs_section(results, pairs, head)
    report_services.services_section(results, report_services.load_services(cases), head,
                                     pairs)
    report_serverramp.serverramp_section(
        results, report_serverramp.load_ramps(cases), head,
        next((c.mem for c, _ in cases.values() if c.kind == "serverramp"), None))
    density_section(results, boots, head, status.get("cases", []))
    memory_section(results, dens, head)
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
