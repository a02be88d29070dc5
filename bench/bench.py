#!/usr/bin/env python3
"""make bench: boot each benchmark case in QEMU (vm/run), collect raw data in
bench/results/<kernel>-<date>/raw/, then write report.md with bench/report.py.
Usage: bench/bench.py [--quick] [--set all|images] | --resume RESULTS_DIR
--resume runs again only the cases of RESULTS_DIR that failed, with its mode;
--set images runs only the cases on real images (bench/images.py).
Every case is a bench/guest/case.py Case: written as raw/NAME.case.json, read
by the guest script (--case) and by the report."""
import argparse
import gzip
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time

BENCH = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(BENCH)
sys.path.insert(0, os.path.join(BENCH, "guest"))
from case import Case  # noqa: E402
import images  # noqa: E402

BUILD = os.path.join(REPO, "build/bench")
KERNELS = {"patched": "build/kernel-patched/arch/x86/boot/bzImage",
           "security": "build/kernel-security/arch/x86/boot/bzImage",
           "stock": "build/kernel-stock/arch/x86/boot/bzImage"}
IMAGE = os.path.join(BUILD, "bench.img")
GUEST_OUT = "/run/pcdedup/out"
# fio's data: 4 files of this size, each reader's snapshot holds all 4 (cold
# runs: one file per reader, 4 x 64 MiB of distinct content, well over what
# the page cache keeps of it under the runs' memory pressure).
FIO_FILE_MIB = 64

# QUICK: the density figure on a smaller N, fio and one A/B boot round; the
# start-time and page-cache targets then come from the density cases.
QUICK = {"versions": 24, "container_n": 0, "container_samples": [],
         "density_n": 32, "density_samples": [2, 4, 8, 12, 16, 20, 24, 28, 32],
         "density_mem": "384M", "density_window_s": 2, "density_max_s": 420,
         "density_budget_s": 1800,
         "density_hot": [], "density_operator": [], "density_boots": 1,
         "fio_n": 4, "fio_modes": ["off", "full"], "fio_boots": 1,
         "micro_boots": 1, "micro_files": 300, "stock_scenarios": [],
         "container_cases": [], "tag": False, "micro_profile": False,
         "fio_one_cpu": False, "pairs": images.SETS["quick"], "pairs_rounds": 2,
         "services": [("redis", "off"), ("redis", "full")],
         "ramp_arms": [], "ramp_boots": 0, "ramp_mem": "768M"}
# FULL: idle containers up to N=50 (a crun start costs about 2-3 s under
# TCG: 100 per case would not fit the hour). Density: containers are added
# until a sample fails, in 384 MiB (in 512 MiB the limits lie near N=30:
# the first four arms of the 1428 run took 1229 s there, which with the
# other three as in the 0201 run puts three boots near 85 minutes; in 384
# MiB one set of seven took 1210 s); density_n and density_max_s (one
# case's ramp) only bound a runaway case,
# far above the limits measured, and density_budget_s the whole density job
# (boots included: see density_max_s()); a case that reaches any of them is
# reported as capped, with no verdict. Coarse samples every 4, then every N
# near the limit.
FULL = {"versions": 50, "container_n": 50, "container_samples": [1, 10, 25, 50],
        "density_n": 64, "density_samples": [2, 4] + list(range(8, 65, 4)),
        "density_mem": "384M", "density_window_s": 4, "density_max_s": 1500,
        "density_budget_s": 4800, "density_boots": 3,
        "density_hot": [("thin", "off"), ("thin", "default"), ("shared", "off")],
        "density_hot_mem": "256M",
        "density_operator": [("thin", "default")],
        "fio_n": 4,
        "fio_modes": ["off", "full", "trust"], "fio_boots": 3, "micro_boots": 3,
        "micro_files": 500, "stock_scenarios": ["thin"],
        "container_cases": [("shared", "off"), ("distinct", "off"), ("thin", "off"),
                            ("distinct", "full"), ("thin", "full"), ("thin", "trust")],
        "tag": True, "micro_profile": True, "fio_one_cpu": True,
        "pairs": images.SETS["bench"], "pairs_rounds": 2,
        "services": [(s, v) for s in images.SETS["bench"] for v in ("off", "full", "trust")],
        "ramp_arms": [(s, v) for s in ("thin", "overlay") for v in ("off", "full")],
        "ramp_boots": 3, "ramp_mem": "768M"}
# The report's first figure: how many containers fit in a fixed memory size.
# Each re-reads its whole image; the density_hot ones ("-hot" cases) only
# HOT_FRACTION of it, the same files in every container, in density_hot_mem
# (compared with each other only): in 512 MiB their limits lie so far out
# that the ramp to them would not fit the density job's budget (a container
# start takes 20-60 s near a limit under TCG).
# Distinct overlay lowers (reflink copies of one image) are left to the
# containers cases: real images on overlay lowers are the server ramp's.
DENSITY_CASES = [("thin", "off"), ("thin", "default"), ("shared", "off")]
HOT_FRACTION = 0.15
# The density_operator cases ("-operator"): thin snapshots as an operator
# can set them up. noatime (relatime logs an atime update of every file a
# container reads first: an inode log item each, the log written, inode
# clusters written back and copied by dm-thin) and two in-core log buffers
# (8 x 64 KiB on this image's 64 KiB log stripe unit) per snapshot. The
# image's keys are already short (--tree-store: a key longer than 255 bytes
# takes an attribute block that each snapshot's first open reads and
# keeps); until the 20261208 image they were retagged --tree-level inline.
OPERATOR = {"snap_options": "nouuid,noatime,logbufs=2"}

t_start = time.monotonic()
# --resume: the passed cases of the earlier run, by name, kept as they are;
# --rerun: the earlier statuses of the cases run again.
KEPT = {}
REPLACED = {}


def progress(what, line=""):
    el = int(time.monotonic() - t_start)
    print(f"[bench {el // 60:02d}:{el % 60:02d}] {what}{': ' + line if line else ''}",
          flush=True)


def host_load():
    """The host's load averages (1, 5, 15 min) and CPU jiffies (busy, total)
    now: what else ran on the cores the guest was emulated on."""
    with open("/proc/loadavg") as f:
        load = [float(x) for x in f.read().split()[:3]]
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:9]]
    return load, (sum(v) - v[3] - v[4], sum(v))


def vm(case, args, raw, image=None, disks=(), retry=True):
    """One boot of CASE running ARGS (the guest script and its options; the
    case JSON is appended as --case); streams the guest's log; returns its
    status."""
    if case.name in KEPT:
        progress(case.name, "passed in the earlier run, kept")
        return KEPT[case.name]
    out = os.path.join(BUILD, "runs", case.name)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    case.save(os.path.join(out, "case.json"))
    case.save(os.path.join(raw, f"{case.name}.case.json"))
    append = " ".join(filter(None, [
        "pcdedup=off" if case.kernel == "patched" and not case.dedup else None,
        case.params.get("cmdline")])) or None
    cmd = [os.path.join(REPO, "vm/run"), "--kernel", KERNELS[case.kernel], "--mem", case.mem,
           "--accel", case.accel, "--cpus", str(case.cpus), "--timeout", str(case.timeout),
           "--out", out]
    if image:
        cmd += ["--image", f"bench:{image}"]
    for d in disks:
        cmd += ["--disk", d]
    if append:
        cmd += ["--append", append]
    args = args + ["--case", f"{GUEST_OUT}/case.json", "--out", f"{case.name}.json"]
    t = time.monotonic()
    load0, cpu0 = host_load()
    p = subprocess.Popen(cmd + ["--"] + args, cwd=REPO, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    tail = []
    for line in p.stdout:
        line = line.rstrip()
        tail = (tail + [line])[-15:]
        if line.startswith("[guest") or "FAIL" in line or "vm/run" in line:
            progress(case.name, line)
    rc = p.wait()
    if rc == 123 and retry:  # vm/run: the guest hung before init; it never ran
        progress(case.name, "guest hung in early boot; booting it once more")
        return vm(case, args[:-4], raw, image, disks, retry=False)
    for name in os.listdir(out):
        if name == f"{case.name}.json":
            shutil.copy(os.path.join(out, name), os.path.join(raw, name))
        elif name == "output":
            shutil.copy(os.path.join(out, name), os.path.join(raw, f"{case.name}.log"))
    load1, cpu1 = host_load()
    status = {"case": case.name, "rc": rc, "seconds": round(time.monotonic() - t, 1),
              "tail": tail if rc else [],
              # the host's load average before and after the boot, and the
              # share of all host CPU time that was busy meanwhile (this
              # guest's own emulation included)
              "host": {"loadavg_before": load0, "loadavg_after": load1,
                       "cpu_busy": round((cpu1[0] - cpu0[0]) / max(cpu1[1] - cpu0[1], 1), 3),
                       "cpus": os.cpu_count()}}
    if case.name in REPLACED:
        status["replaces"] = {k: REPLACED[case.name].get(k) for k in ("rc", "seconds")}
    progress(case.name, f"{'done' if rc == 0 else 'FAILED (rc %d)' % rc} in "
             f"{status['seconds']}s")
    return status


def files_sha256(*paths):
    """One SHA-256 over the contents of PATHS, in order."""
    h = hashlib.sha256()
    for path in paths:
        with open(path, "rb") as fh:
            h.update(fh.read())
    return h.hexdigest()


def kept_disk(path, size, keep, build):
    """A disk image kept between runs at PATH with its stamp PATH.json:
    used as it is when KEEP(the stamp) says so (returns None); else made
    anew, SIZE bytes sparse, and BUILD() run on it, which returns the
    boot's status and the stamp to write when it passed."""
    stamp = path + ".json"
    try:
        with open(stamp) as f:
            if keep(json.load(f)):
                progress(os.path.basename(path), f"reusing {os.path.relpath(path, REPO)}")
                return None
    except (OSError, ValueError, KeyError):
        pass
    for f in (path, stamp):
        if os.path.exists(f):
            os.remove(f)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.truncate(size)
    st, want = build()
    if st["rc"] == 0:
        with open(stamp, "w") as f:
            json.dump(want, f)
    else:
        os.remove(path)
    return st


def ensure_image(versions, raw):
    """The image is kept between runs; rebuilt when too small or its scripts changed."""
    want = {"mkimage_sha256": files_sha256(*(os.path.join(BENCH, "guest", f) for f in
                                             ("mkimage.py", "oci.py", "thinpool.py"))),
            "fio_file_mib": FIO_FILE_MIB}

    def build():
        case = Case("image-build", "image", timeout=600 + 10 * versions, mem="2G",
                    params={"versions": versions, "fio_file_mib": FIO_FILE_MIB})
        st = vm(case, ["python3", "bench/guest/mkimage.py"], raw, image=IMAGE)
        if st["rc"] == 0:
            shutil.copy(os.path.join(raw, "image-build.json"), IMAGE + ".info.json")
        return st, dict(want, versions=versions)

    return kept_disk(IMAGE, 4 << 30, lambda have: all(have.get(k) == v for k, v in want.items())
                     and have["versions"] >= versions, build)


DISK_SCRIPTS = ("imagedisk.py", "thinpool.py")


def ensure_image_disk(pairs, raw):
    """The disk of the real images of PAIRS (guest/imagedisk.py: each
    version unpacked and tagged on a thin volume of its own), kept between
    runs under build/bench/disks/; built again when its images, its scripts
    or the tool changed. Returns the build's status, or None when the kept
    one is used."""
    want = {"scripts_sha256": files_sha256(
                *(os.path.join(BENCH, "guest", f) for f in DISK_SCRIPTS),
                os.path.join(REPO, "dedup/pcdedup")),
            "manifests": [images.load_info(pair, v)["manifest"]
                          for pair in pairs for v in images.VERSIONS]}
    path = image_disk(pairs)

    def build():
        # umoci under TCG: 2-6 minutes an image, on a busy host
        case = Case("imagedisk-" + "-".join(pairs), "image", verify="off", mem="2G",
                    timeout=900 + 600 * 2 * len(pairs),
                    params={"pairs": list(pairs),
                            "images": os.path.relpath(images.IMAGES, REPO),
                            "pool_size": "11G"})
        return vm(case, ["python3", "bench/guest/imagedisk.py"], raw, image=path), want

    return kept_disk(path, 12 << 30, lambda have: have == want, build)


def image_disk(pairs):
    return os.path.join(BUILD, "disks", "-".join(pairs) + ".img")


def image_copy(src=IMAGE):
    copy = os.path.join(BUILD, "case.img")
    subprocess.run(["cp", "--sparse=always", src, copy], check=True)
    return copy


def make_cases(cfg, accel):
    """Every case of the run, in the order they boot."""
    cases = []
    # Version pairs of real images (bench/images.py), the report's first
    # table: one boot per pair, every round reading both versions four
    # times (thin and overlay, pcdedup off and on), the order turning.
    for pair in cfg["pairs"]:
        cases.append(Case(f"pairs-{pair}", "pairs", verify="default", mem="3G",
                          timeout=2400, params={"pair": pair, "rounds": cfg["pairs_rounds"]}))
    # Real servers of both versions of an image, three containers of each,
    # on thin snapshots: memory each and in all, and what each start costs.
    for pair, verify in cfg["services"]:
        cases.append(Case(f"services-{pair}-{verify}", "services", "thin", verify, mem="2G",
                          launcher="crun",
                          timeout=1500,
                          params={"pair": pair, "per_version": 3, "requests": 200}))
    # How many real server containers fit (every server, both versions,
    # in turn): each arm booted ramp_boots times, the arms interleaved.
    for boot in range(1, cfg["ramp_boots"] + 1):
        for scen, verify in cfg["ramp_arms"]:
            cases.append(Case(f"serverramp-{scen}-{verify}-b{boot}", "serverramp", scen, verify,
                              mem=cfg["ramp_mem"], launcher="crun", timeout=1800,
                              params={"pairs": list(cfg["pairs"]), "requests": 20,
                                      "check_requests": 5, "settle_s": 2, "fit_kb": 64,
                                      "max_n": 48, "max_s": 900, "boot": boot}))
    dens = [(s, v, None, False) for s, v in DENSITY_CASES] + \
        [(s, v, HOT_FRACTION, False) for s, v in cfg["density_hot"]] + \
        [(s, v, None, True) for s, v in cfg["density_operator"]]
    # Each arm density_boots times, the arms interleaved (every arm once,
    # then again): a slow stretch of the host falls on every arm alike.
    dens = [(boot, *arm) for boot in range(1, cfg["density_boots"] + 1) for arm in dens]
    for boot, scen, verify, hot, operator in dens:
        n = min(cfg["density_n"], cfg["versions"]) if scen == "distinct" else cfg["density_n"]
        # slab_nomerge, on every density boot alike: each slab cache keeps
        # its own name, so the traced container's objects are named right
        # (merged, a dentry is a kmalloc-cg-192 object).
        # A sample fails at 1% of the bytes read again from the disk (file
        # refaults or any disk read: metadata thrashing stalls containers on
        # small synchronous reads long before those add up to 5%), or at a
        # fifth of the containers' pace (N hot sets per pass_s).
        params = {"window_s": cfg["density_window_s"], "settle_s": 1, "pass_s": 1.5,
                  "fit_fraction": 0.01, "min_pace": 0.2, "max_s": cfg["density_max_s"],
                  "profile_at": 3, "snap_batch": 8, "cmdline": "slab_nomerge", "boot": boot}
        if hot:
            params["hot_fraction"] = hot
        if operator:
            params.update(OPERATOR)
        suffix = ("-hot" if hot else "") + ("-operator" if operator else "") + \
            (f"-b{boot}" if boot > 1 else "")
        cases.append(Case(f"density-{scen}-{verify}{suffix}", "density", scen,
                          verify, n=n,
                          samples=sorted({x for x in cfg["density_samples"] if x < n} | {n}),
                          launcher="crun",
                          mem=cfg.get("density_hot_mem", cfg["density_mem"]) if hot
                          else cfg["density_mem"],
                          timeout=cfg["density_max_s"] + 900, params=params))
    cont = [(s, v, "patched") for s, v in cfg["container_cases"]]
    cont += [(s, "off", "stock") for s in cfg["stock_scenarios"]]
    for scen, verify, kernel in cont:
        cases.append(Case(f"containers-{scen}-{verify}-{kernel}", "containers", scen, verify,
                          None, kernel,
                          n=cfg["container_n"], samples=cfg["container_samples"],
                          launcher="crun", mem="6G", timeout=600 + 20 * cfg["container_n"]))
    # fio: one boot per round runs every mode (pcdedup off, verify=full,
    # trust: a mode against pcdedup off is a ratio within one boot), the
    # order of the modes rotating every round; the spread is over rounds.
    modes = cfg["fio_modes"]
    for r in range(cfg["fio_boots"]):
        cases.append(Case(f"fio-thin-boot{r + 1}", "fio", "thin", "default",
                          n=cfg["fio_n"], mem="3G", timeout=900,
                          params={"modes": modes[r % len(modes):] + modes[:r % len(modes)],
                                  "ramp_s": 2, "runtime_s": 10,
                                  "cold_free_mib": 48, "hash_s": 3}))
    # The hashing limit's control: the cold sequential runs again on one
    # guest CPU, which leaves the host's second core to QEMU's own I/O work
    # (under TCG it is not free: two vCPUs and the I/O thread share 2 host
    # cores). Its figures stay out of the targets.
    if cfg["fio_one_cpu"]:
        cases.append(Case("fio-thin-1cpu", "fio", "thin", "default", n=cfg["fio_n"],
                          mem="3G", cpus=1, timeout=900,
                          params={"modes": modes, "ramp_s": 2, "runtime_s": 10,
                                  "cold_free_mib": 48, "hash_s": 3, "only": ["cold/seq"],
                                  "control": "one guest CPU"}))
    if cfg["tag"]:
        cases.append(Case("tag-vs-sha256sum", "tag", timeout=600))
    # A/B kernels, interleaved: the order rotates every boot round. Under TCG
    # the micro-benchmark counts guest instructions (icount): wall-clock TCG
    # timings spread more from boot to boot than the 2% asked.
    micro_accel, round_ms = ("kvm", 300) if accel == "kvm" else ("icount", 50)
    # Three arms: stock, the security series alone, the whole series with
    # pcdedup on.
    kernels = [("stock", "stock", "off"), ("security", "security", "off"),
               ("on", "patched", "full")]
    for r in range(cfg["micro_boots"]):
        for label, kernel, verify in kernels[r % 3:] + kernels[:r % 3]:
            cases.append(Case(f"micro-{label}-boot{r + 1}", "micro", "", verify, None, kernel,
                              mem="2G", cpus=1, accel=micro_accel, timeout=900,
                              params={"label": label, "rounds": 5,
                                      "files": cfg["micro_files"],
                                      "min_round_ms": round_ms}))
    # Where the whole series' tagged open+close and read spend what they
    # cost more than untagged: perf's samples by function (under icount,
    # every sample is PERF_PERIOD_NS guest instructions).
    if cfg["micro_profile"]:
        cases.append(Case("micro-profile", "micro", "", "full", None, "patched",
                          mem="2G", cpus=1, accel=micro_accel, timeout=900,
                          params={"label": "profile", "rounds": 5,
                                  "files": cfg["micro_files"],
                                  "min_round_ms": 4 * round_ms}))
    for i, case in enumerate(cases, 1):
        case.order = i
    return cases


# The density job's time budget (cfg density_budget_s, wall clock, boots
# included) is shared out as the cases run: each may use what is left, less
# DENSITY_RESERVE_S for each density case still to run and
# DENSITY_OVERHEAD_S for its own boot, setup and the samples it takes after
# its budget ran out; at most density_max_s, at least DENSITY_MIN_S (the
# reserve covers that floor and the overhead: a job whose cases each stop
# within their budget and overhead ends within its own). Measured here (2
# cores, TCG): a case's boot, setup and last samples take 15-25 s beyond its
# ramp (0201 report); the six arms and the operator case took 1597 s, once
# each, on a quiet host, 5000 s on a loaded one (1136 report).
DENSITY_OVERHEAD_S = 60
DENSITY_MIN_S = 60
DENSITY_RESERVE_S = DENSITY_MIN_S + DENSITY_OVERHEAD_S


def density_max_s(cfg, used_s, later):
    """A density case's ramp budget (its params' max_s): USED_S seconds of
    the density job gone, LATER density cases still to run after it."""
    left = cfg["density_budget_s"] - used_s - later * DENSITY_RESERVE_S - DENSITY_OVERHEAD_S
    return int(max(DENSITY_MIN_S, min(cfg["density_max_s"], left)))


SCRIPTS = {"density": "containers.py", "containers": "containers.py", "fio": "fio.py",
           "micro": "micro.py", "tag": "micro.py", "pairs": "pairs.py",
           "services": "services.py", "serverramp": "serverramp.py"}
# --set: the cases of a set, by kind (all: every kind).
IMAGE_KINDS = ("pairs", "services", "serverramp")  # cases on the images disk
CASE_SETS = {"images": ("pairs", "services", "serverramp")}


def copy_image_lists(pairs, raw):
    """The images' infos, package lists and file lists (gzipped, the
    digests cut to 16 hex digits: enough to tell contents apart) into
    RAW/images: the report's ceiling and package tables are computed from
    them."""
    out = os.path.join(raw, "images")
    os.makedirs(out, exist_ok=True)
    for pair in pairs:
        for version in images.VERSIONS:
            src = images.image_dir(pair, version)
            name = f"{pair}-{version}"
            for f in ("info.json", "packages.tsv"):
                shutil.copy(os.path.join(src, f), os.path.join(out, f"{name}.{f}"))
            with open(os.path.join(src, "files.tsv")) as fin, \
                    gzip.open(os.path.join(out, f"{name}.files.tsv.gz"), "wt") as fout:
                for line in fin:
                    cols = line.rstrip("\n").split("\t")
                    if cols[0] != "path":
                        cols[3] = cols[3][:16]
                    fout.write("\t".join(cols) + "\n")


def named(name, patterns):
    """Does case NAME match one of PATTERNS (comma-separated): a prefix of
    the name, or the whole name when the pattern ends with '$'?"""
    return any(name == p[:-1] if p.endswith("$") else name.startswith(p)
               for p in patterns.split(","))


def merge_statuses(earlier, ran):
    """The statuses of a resumed run: EARLIER's, in their order, each
    replaced by the one of the same case in RAN (this run's), then RAN's
    new cases. A run that selected cases (--only) keeps the others': the
    report's run times, host load and density job time come from them."""
    ran = {s["case"]: s for s in ran}
    return [ran.pop(s["case"], s) for s in earlier] + list(ran.values())


def write_status(raw, earlier, statuses):
    """Writes raw/status.json: the statuses so far (an earlier run's merged
    in) and the run times. Returns the statuses written."""
    if earlier:
        statuses = merge_statuses(earlier["cases"], statuses)
    this_run = round(time.monotonic() - t_start)
    with open(os.path.join(raw, "status.json.tmp"), "w") as f:
        json.dump({"cases": statuses,
                   "total_seconds": this_run + (earlier["total_seconds"] if earlier else 0),
                   "runs_seconds": (earlier.get("runs_seconds", [earlier["total_seconds"]])
                                    if earlier else []) + [this_run]},
                  f, indent=1)
    os.replace(os.path.join(raw, "status.json.tmp"), os.path.join(raw, "status.json"))
    return statuses


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--resume", metavar="RESULTS_DIR")
    ap.add_argument("--only", help="run only the cases whose name starts with this (or "
                    "with one of these, comma-separated; NAME$: that name exactly)")
    ap.add_argument("--density-budget", type=int, metavar="SECONDS",
                    help="the density job's time budget (default: the mode's, 5400 s "
                    "in full); what each case was given is in its results")
    ap.add_argument("--set", choices=["all"] + sorted(CASE_SETS),
                    help="which cases: all (default), or images: the real images' "
                    "pairs, servers and server ramp; with --resume, the run's own set "
                    "unless given (all: the rest of the full run after an images run)")
    ap.add_argument("--rerun", metavar="PREFIXES",
                    help="with --resume: run again the cases whose name starts with one of "
                    "these (comma-separated; NAME$: that name exactly), passed or not; "
                    "the report says so")
    a = ap.parse_args()
    if a.rerun and not a.resume:
        ap.error("--rerun needs --resume")
    earlier = None
    if a.resume:
        results = os.path.abspath(a.resume)
        raw = os.path.join(results, "raw")
        try:
            with open(os.path.join(raw, "status.json")) as f:
                earlier = json.load(f)
            with open(os.path.join(raw, "config.json")) as f:
                config = json.load(f)
            quick = config["quick"]
            # the run's set of cases is the one it was started with, or
            # the one given now (an images run widened to all)
            if a.set is None:
                a.set = config.get("set", "all")
            elif a.set != config.get("set", "all"):
                with open(os.path.join(raw, "config.json"), "w") as f:
                    json.dump(dict(config, set=a.set), f, indent=1)
        except (OSError, ValueError, KeyError) as e:
            sys.exit(f"bench: cannot resume {results}: {e}")
        KEPT.update({s["case"]: s for s in earlier["cases"]
                     if s["rc"] == 0 and not (a.rerun and named(s["case"], a.rerun))})
        # What a rerun replaces stays on record, with the run it came from.
        REPLACED.update({s["case"]: s for s in earlier["cases"]
                         if a.rerun and named(s["case"], a.rerun)})
    else:
        quick = a.quick
        a.set = a.set or "all"
        with open(os.path.join(REPO, "build/kernel-patched/include/config/kernel.release")) as f:
            release = f.read().strip()
        name = (f"pcdedup-{release.rstrip('+')}-{time.strftime('%Y%m%d-%H%M')}"
                f"{'-quick' if quick else ''}")
        results = os.path.join(BENCH, "results", name)
    cfg = dict(QUICK if quick else FULL)
    if a.density_budget:
        cfg["density_budget_s"] = a.density_budget
    raw = os.path.join(results, "raw")
    os.makedirs(raw, exist_ok=earlier is not None)
    subprocess.run(["make", "-s", "-C", BENCH], check=True)
    accel = subprocess.run([os.path.join(REPO, "vm/kvm-probe"), KERNELS["patched"]],
                           check=True, capture_output=True, text=True).stdout.strip()
    cases = make_cases(cfg, accel)
    if a.set != "all":
        cases = [c for c in cases if c.kind in CASE_SETS[a.set]]
    if a.only:
        cases = [c for c in cases if named(c.name, a.only)]
    # One images disk holds every pair of the mode, whichever cases run;
    # none is needed when every image case is kept from the earlier run.
    pairs = (sorted(cfg["pairs"]) if any(c.kind in IMAGE_KINDS and c.name not in KEPT
                                          for c in cases) else [])
    if pairs:
        images.ensure(pairs, log=lambda m: progress("images", m))
        copy_image_lists(pairs, raw)
    if not earlier:
        with open(os.path.join(raw, "config.json"), "w") as f:
            json.dump(dict(cfg, quick=quick, host_cpus=os.cpu_count(), accel=accel,
                           fio_file_mib=FIO_FILE_MIB, set=a.set), f, indent=1)
    statuses = []
    st = None
    if any(c.kind in ("density", "containers", "fio") for c in cases):
        st = ensure_image(cfg["versions"], raw) or KEPT.get("image-build")
    if st:
        statuses.append(st)
    have_image = os.path.exists(IMAGE + ".json")
    if pairs:
        st = KEPT.get("imagedisk-" + "-".join(pairs)) or ensure_image_disk(pairs, raw)
        if st:
            statuses.append(st)
    density = [c.name for c in cases if c.kind == "density"]
    density_s = 0.0  # the density job's seconds so far (kept cases too)
    for i, case in enumerate(cases, 1):
        needs_image = case.kind in ("density", "containers", "fio")
        if needs_image and not have_image:
            continue
        progress(f"case {i}/{len(cases)}", case.name)
        if case.kind == "density":
            later = len(density) - density.index(case.name) - 1
            case.params["max_s"] = density_max_s(cfg, density_s, later)
            case.timeout = case.params["max_s"] + 900
            if case.name not in KEPT:
                progress(case.name, f"ramp budget {case.params['max_s']} s "
                         f"({round(density_s)} s of the density job's "
                         f"{cfg['density_budget_s']} s gone, {later} case(s) after it)")
        script = ["python3", f"bench/guest/{SCRIPTS[case.kind]}"]
        if case.name in KEPT:  # nothing to boot: no disk to copy either
            statuses.append(vm(case, script, raw))
            if case.kind == "density":
                density_s += statuses[-1]["seconds"]
        elif needs_image:
            statuses.append(vm(case, script, raw, image=image_copy()))
            if case.kind == "density":
                density_s += statuses[-1]["seconds"]
        elif case.kind in IMAGE_KINDS:
            if not os.path.exists(image_disk(pairs) + ".json"):
                continue
            statuses.append(vm(case, script, raw, image=image_copy(image_disk(pairs))))
        else:
            statuses.append(vm(case, script, raw, disks=["micro:1G"]))
        # on record after every case: a run stopped midway resumes from here
        write_status(raw, earlier, statuses)
    if os.path.exists(os.path.join(BUILD, "case.img")):
        os.remove(os.path.join(BUILD, "case.img"))
    statuses = write_status(raw, earlier, statuses)
    progress("report", f"writing {os.path.relpath(results, REPO)}/report.md")
    rc = subprocess.run([sys.executable, os.path.join(BENCH, "report.py"), results]).returncode
    failed = [s["case"] for s in statuses if s["rc"]]
    print(f"\n{len(statuses) - len(failed)} cases passed, {len(failed)} failed"
          f"{': ' + ', '.join(failed) if failed else ''}")
    print(f"report: {os.path.relpath(results, REPO)}/report.md")
    return 1 if failed or rc else 0


if __name__ == "__main__":
    sys.exit(main())
