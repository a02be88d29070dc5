#!/usr/bin/env python3
"""make bench: boot each benchmark case in QEMU (vm/run), collect raw data in
bench/results/<kernel>-<date>/raw/, then write report.md with bench/report.py.
Usage: bench/bench.py [--quick] | --resume RESULTS_DIR
--resume runs again only the cases of RESULTS_DIR that failed, with its mode."""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time

BENCH = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(BENCH)
BUILD = os.path.join(REPO, "build/bench")
PATCHED = "build/kernel-patched/arch/x86/boot/bzImage"
STOCK = "build/kernel-stock/arch/x86/boot/bzImage"
IMAGE = os.path.join(BUILD, "bench.img")
# fio reads these files whole: 4 per reader.
FIO_FILE_MB_IMAGE = 16

QUICK = {"max_n": 20, "samples": [1, 5, 10, 20], "container_mem": "3G", "fio_n": 4,
         "fio_modes": ["off", "full"], "micro_boots": 1, "micro_files": 300,
         "stock_scenarios": []}
FULL = {"max_n": 100, "samples": [1, 10, 25, 50, 100], "container_mem": "6G", "fio_n": 4,
        "fio_modes": ["off", "full", "trust"], "micro_boots": 3, "micro_files": 500,
        "stock_scenarios": ["shared", "thin"]}
# (scenario, pcdedup mode) on the patched kernel; "off" boots with pcdedup=off.
CONTAINER_CASES = [("shared", "off"), ("distinct", "off"), ("thin", "off"),
                   ("distinct", "full"), ("thin", "full"), ("thin", "trust")]

t_start = time.monotonic()
# --resume: the passed cases of the earlier run, by name, kept as they are.
KEPT = {}


def progress(what, line=""):
    el = int(time.monotonic() - t_start)
    print(f"[bench {el // 60:02d}:{el % 60:02d}] {what}{': ' + line if line else ''}",
          flush=True)


def vm(case, kernel, args, raw, timeout, image=None, disks=(), append=None, mem="3G",
       accel="auto", cpus=2, retry=True):
    """One boot; streams the guest's log with progress; returns its status."""
    if case in KEPT:
        progress(case, "passed in the earlier run, kept")
        return KEPT[case]
    out = os.path.join(BUILD, "runs", case)
    shutil.rmtree(out, ignore_errors=True)
    cmd = [os.path.join(REPO, "vm/run"), "--kernel", kernel, "--mem", mem, "--accel", accel,
           "--cpus", str(cpus), "--timeout", str(timeout), "--out", out]
    if image:
        cmd += ["--image", f"bench:{image}"]
    for d in disks:
        cmd += ["--disk", d]
    if append:
        cmd += ["--append", append]
    t = time.monotonic()
    p = subprocess.Popen(cmd + ["--"] + args, cwd=REPO, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    tail = []
    for line in p.stdout:
        line = line.rstrip()
        tail = (tail + [line])[-15:]
        if line.startswith("[guest") or "FAIL" in line or "vm/run" in line:
            progress(case, line)
    rc = p.wait()
    if rc == 123 and retry:  # vm/run: the guest hung before init; it never ran
        progress(case, "guest hung in early boot; booting it once more")
        return vm(case, kernel, args, raw, timeout, image, disks, append, mem, accel, cpus,
                  retry=False)
    for name in os.listdir(out) if os.path.isdir(out) else []:
        if name.endswith(".json") or name == "output":
            shutil.copy(os.path.join(out, name),
                        os.path.join(raw, f"{case}.log" if name == "output" else name))
    status = {"case": case, "rc": rc, "seconds": round(time.monotonic() - t, 1),
              "kernel": kernel, "append": append, "accel": accel, "cpus": cpus,
              "tail": tail if rc else []}
    progress(case, f"{'done' if rc == 0 else 'FAILED (rc %d)' % rc} in {status['seconds']}s")
    return status


def ensure_image(versions, raw):
    """The image is kept between runs; rebuilt when too small or mkimage changed."""
    with open(os.path.join(BENCH, "guest/mkimage.py"), "rb") as f:
        want = {"mkimage_sha256": hashlib.sha256(f.read()).hexdigest(),
                "fio_file_mb": FIO_FILE_MB_IMAGE}
    stamp = IMAGE + ".json"
    try:
        with open(stamp) as f:
            have = json.load(f)
        if all(have.get(k) == v for k, v in want.items()) and have["versions"] >= versions:
            progress("image", f"reusing {IMAGE} ({have['versions']} versions)")
            return None
    except (OSError, ValueError, KeyError):
        pass
    for f in (IMAGE, stamp):
        if os.path.exists(f):
            os.remove(f)
    os.makedirs(BUILD, exist_ok=True)
    with open(IMAGE, "wb") as f:
        f.truncate(4 << 30)
    st = vm("image-build", PATCHED, ["python3", "bench/guest/mkimage.py", str(versions),
                                     str(FIO_FILE_MB_IMAGE)],
            raw, 600 + 10 * versions, image=IMAGE)
    if st["rc"] == 0:
        with open(stamp, "w") as f:
            json.dump(dict(want, versions=versions), f)
    else:
        os.remove(IMAGE)
    return st


def image_copy():
    copy = os.path.join(BUILD, "case.img")
    subprocess.run(["cp", "--sparse=always", IMAGE, copy], check=True)
    return copy


def resume(results):
    """Load the earlier run of RESULTS: its mode, and the cases that passed."""
    raw = os.path.join(results, "raw")
    try:
        with open(os.path.join(raw, "status.json")) as f:
            earlier = json.load(f)
        with open(os.path.join(raw, "config.json")) as f:
            quick = json.load(f)["quick"]
    except (OSError, ValueError, KeyError) as e:
        sys.exit(f"bench: cannot resume {results}: {e}")
    KEPT.update({s["case"]: s for s in earlier["cases"] if s["rc"] == 0})
    return quick, earlier


def main():
    args = sys.argv[1:]
    earlier = None
    if args[:1] == ["--resume"] and len(args) == 2:
        results = os.path.abspath(args[1])
        quick, earlier = resume(results)
    elif args in ([], ["--quick"]):
        quick = args == ["--quick"]
        with open(os.path.join(REPO, "build/kernel-patched/include/config/kernel.release")) as f:
            release = f.read().strip()
        name = (f"pcdedup-{release.rstrip('+')}-{time.strftime('%Y%m%d-%H%M')}"
                f"{'-quick' if quick else ''}")
        results = os.path.join(BENCH, "results", name)
    else:
        sys.exit(__doc__)
    cfg = QUICK if quick else FULL
    raw = os.path.join(results, "raw")
    os.makedirs(raw, exist_ok=earlier is not None)
    subprocess.run(["make", "-s", "-C", BENCH], check=True)
    statuses = []
    accel = subprocess.run([os.path.join(REPO, "vm/kvm-probe"), PATCHED], check=True,
                           capture_output=True, text=True).stdout.strip()
    # Under TCG, the A/B micro-benchmark counts guest instructions (icount):
    # wall-clock TCG timings spread more from boot to boot than the 2% asked.
    micro_accel, micro_round_ms = ("kvm", 300) if accel == "kvm" else ("icount", 50)
    config = dict(cfg, quick=quick, host_cpus=os.cpu_count(), accel=accel,
                  micro_accel=micro_accel, micro_round_ms=micro_round_ms)
    if not earlier:
        with open(os.path.join(raw, "config.json"), "w") as f:
            json.dump(config, f, indent=1)

    st = ensure_image(cfg["max_n"], raw) or KEPT.get("image-build")
    if st:
        statuses.append(st)
    if os.path.exists(IMAGE + ".json"):
        n, samples = str(cfg["max_n"]), ",".join(map(str, cfg["samples"]))
        cases = [(s, d, PATCHED) for s, d in
                 CONTAINER_CASES]
        cases += [(s, "off", STOCK) for s in cfg["stock_scenarios"]]
        for i, (scenario, dedup, kernel) in enumerate(cases, 1):
            kname = "stock" if kernel == STOCK else "patched"
            case = f"containers-{scenario}-{dedup}-{kname}"
            progress(f"case {i}/{len(cases)}", f"{case}, N up to {n}")
            statuses.append(vm(
                case, kernel, ["python3", "bench/guest/containers.py", scenario, dedup, n,
                               samples, f"{case}.json"],
                raw, 300 + 15 * cfg["max_n"], image=image_copy(), mem=cfg["container_mem"],
                append="pcdedup=off" if dedup == "off" and kernel == PATCHED else None))
        for dedup in cfg["fio_modes"]:
            case = f"fio-thin-{dedup}"
            progress("fio", f"{case}, {cfg['fio_n']} readers x 4 x {FIO_FILE_MB_IMAGE} MB")
            statuses.append(vm(
                case, PATCHED, ["python3", "bench/guest/fio.py", dedup, str(cfg["fio_n"]),
                                f"{case}.json"],
                raw, 1200, image=image_copy(),
                append="pcdedup=off" if dedup == "off" else None))
        os.remove(os.path.join(BUILD, "case.img"))
    progress("tag", "pcdedup tag vs sha256sum")
    statuses.append(vm("tag-vs-sha256sum", PATCHED,
                       ["python3", "bench/guest/micro.py", "tag", "0", "0", "0",
                        "tag-vs-sha256sum.json"], raw, 600, disks=["micro:1G"]))
    # A/B kernels, interleaved: the order rotates every boot round.
    kernels = [("stock", STOCK, None), ("off", PATCHED, "pcdedup=off"), ("on", PATCHED, None)]
    for r in range(cfg["micro_boots"]):
        for label, kernel, append in kernels[r % 3:] + kernels[:r % 3]:
            case = f"micro-{label}-boot{r + 1}"
            progress("A/B", f"{case} (round {r + 1}/{cfg['micro_boots']}, {micro_accel})")
            statuses.append(vm(
                case, kernel, ["python3", "bench/guest/micro.py", label, "5",
                               str(cfg["micro_files"]), str(micro_round_ms), f"{case}.json"],
                raw, 900, disks=["micro:1G"], append=append, accel=micro_accel, cpus=1))
    with open(os.path.join(raw, "status.json"), "w") as f:
        this_run = round(time.monotonic() - t_start)
        json.dump({"cases": statuses,
                   "total_seconds": this_run + (earlier["total_seconds"] if earlier else 0),
                   "runs_seconds": (earlier.get("runs_seconds", [earlier["total_seconds"]])
                                    if earlier else []) + [this_run]},
                  f, indent=1)
    progress("report", f"writing {results}/report.md")
    rc = subprocess.run([sys.executable, os.path.join(BENCH, "report.py"), results]).returncode
    failed = [s["case"] for s in statuses if s["rc"]]
    print(f"\n{len(statuses) - len(failed)} cases passed, {len(failed)} failed"
          f"{': ' + ', '.join(failed) if failed else ''}")
    print(f"report: {os.path.relpath(results, REPO)}/report.md")
    return 1 if failed or rc else 0


if __name__ == "__main__":
    sys.exit(main())
