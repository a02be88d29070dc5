#!/usr/bin/env python3
"""How many real server containers fit: a density ramp of mixed containers,
every server and both versions of each image (bench/images.py) in turn
(redis, postgres, mariadb and nginx older, then the same newer, and round
again), each on its own root, until the guest's memory runs out.

A container is started as services.py starts one (crun, its own cgroup,
ready when its server answers) and serves params.requests requests; then,
after params.settle_s, a check round asks every running container for
params.check_requests more, and measures what was read from the disk
meanwhile and the kernel's reclaim events. With memory to spare every
server's working set is cached and the round reads nothing: a sample
**passes** when the round read at most params.fit_kb per container (a
round that reads more is measured once more and fails only when the second
one does too), every server answered right, every container still runs and
nothing was OOM-killed. The ramp stops at the first sample that fails (N
reached: the last that passed), at params.max_n or after params.max_s (then
*capped*: a lower bound).

Roots (case.scenario): thin, a thin snapshot of the version's volume made
when its container starts (as a node runs many containers of each image);
overlay, an overlay mount with the version's volume as its one lower (all
containers of a version share it) and an upper on a thin volume of its own.
Usage: serverramp.py --case CASE.json --out NAME.json
  case.verify     off (pcdedup off) | full | trust
  case.params     pairs, requests, check_requests, settle_s, fit_kb, max_n, max_s"""
import argparse
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common as c  # noqa: E402
from case import add_case_argument  # noqa: E402
import services  # noqa: E402
from servers import SERVERS  # noqa: E402
import thinpool  # noqa: E402

EVENTS = ("workingset_refault_file", "pgmajfault", "oom_kill", "pgscan_kswapd",
          "pgscan_direct")
# AnonHugePages: the guest's THP is "always"; khugepaged collapses more
# anonymous memory where more of it is free.
MEMINFO = ("MemFree", "MemAvailable", "Cached", "AnonPages", "AnonHugePages", "Slab",
           "Shmem")


def order(pairs):
    """(pair, version) of the Kth container, K from 0: every server, older
    first, then every server newer, and round again."""
    n = len(pairs)
    return lambda k: (pairs[k % n], services.VERSIONS[(k // n) % 2])


def make_root(scenario, i, volume):
    """Container I's root on VOLUME's version: a thin snapshot, or an
    overlay mount on the version's lower."""
    if scenario == "thin":
        services.snapshot_volumes(volume, [i])
        return None  # services.start mounts the snapshot
    upper = f"/mnt/uppers/c{i}"
    os.makedirs(f"{upper}/u")
    os.makedirs(f"{upper}/w")
    root = f"/mnt/c{i}"
    c.mount("overlay", root, "overlay",
            f"lowerdir=/mnt/{volume}/bundle/rootfs,upperdir={upper}/u,workdir={upper}/w")
    return root


def check_round(running, requests):
    """Every running container asked for REQUESTS more; what that cost."""
    t0, v0, d0 = time.monotonic(), c.vmstat(*EVENTS), c.disk_sectors_read()
    errors = []
    for i, pair in running:
        sock = os.path.join(services.WORK, "ctl", f"c{i}", SERVERS[pair].socket)
        try:
            for k in range(requests):
                SERVERS[pair].request(sock, 1000 + k)
        except Exception as e:  # noqa: BLE001 - any failure fails the sample
            errors.append(f"c{i} ({pair}): {e}")
    t1, v1, d1 = time.monotonic(), c.vmstat(*EVENTS), c.disk_sectors_read()
    return {"round_s": round(t1 - t0, 2), "disk_read_kb": (d1 - d0) // 2,
            "events": {k: v1.get(k, 0) - v0.get(k, 0) for k in EVENTS},
            "errors": errors[:5],
            "alive": sum(1 for i, _ in running if services.pids_of(i))}


def sample_ok(r, n, fit_kb):
    return (not r["errors"] and r["alive"] == n and not r["events"]["oom_kill"]
            and r["disk_read_kb"] <= fit_kb * n)


def main():
    ap = argparse.ArgumentParser(description="a density ramp of real server containers")
    add_case_argument(ap)
    a = ap.parse_args()
    case, p = a.case, a.case.params
    pairs = p["pairs"]
    volumes = c.image_volumes(pairs)
    secret = c.attach_images(volumes)
    base_config = services.prepare(volumes[0])
    if case.scenario == "thin":
        for v in volumes:
            thinpool.umount(f"/mnt/{v}")
    else:
        thinpool.volume(c.VG, "uppers", "4G", "/mnt/uppers")
    c.set_pcdedup(case, secret)
    c.drop_caches()
    time.sleep(1)
    m0 = c.meminfo()
    result = {"guest": c.guest_info(), "scenario": case.scenario, "pairs": pairs,
              "before": {k: m0[k] for k in MEMINFO + ("MemTotal",)},
              "pcdedup_before": c.pcdedup_status(), "samples": [], "containers": []}
    which = order(pairs)
    running, t_start, reached, first_fail = [], time.monotonic(), 0, None
    for i in range(1, p["max_n"] + 1):
        if time.monotonic() - t_start > p["max_s"]:
            result["capped"] = "time"
            break
        pair, version = which(i - 1)
        try:
            root = make_root(case.scenario, i, f"{pair}-{version}")
            r = services.start(i, version, SERVERS[pair], base_config, p["requests"], root)
        except (OSError, RuntimeError, subprocess.SubprocessError) as e:
            c.log(f"N={i}: c{i} ({pair} {version}) did not start and serve: {e}")
            result["samples"].append({"n": i, "ok": False, "start_error": str(e)[-300:]})
            first_fail = i
            break
        r["pair"] = pair
        result["containers"].append(r)
        running.append((i, pair))
        time.sleep(p["settle_s"])
        rounds = [check_round(running, p["check_requests"])]
        if not sample_ok(rounds[0], i, p["fit_kb"]) and not rounds[0]["errors"]:
            rounds.append(check_round(running, p["check_requests"]))
        m = c.meminfo()
        s = {"n": i, "ok": sample_ok(rounds[-1], i, p["fit_kb"]), "rounds": rounds,
             "meminfo": {k: m[k] for k in MEMINFO}, "t_s": round(time.monotonic() - t_start, 1),
             "used_kb": m0["MemFree"] - m["MemFree"],
             "memavailable_drop_kb": m0["MemAvailable"] - m["MemAvailable"]}
        result["samples"].append(s)
        c.log(f"N={i} ({pair} {version}, ready {r['ready_s']:.1f} s): round "
              f"{rounds[-1]['round_s']} s, disk {rounds[-1]['disk_read_kb']} KiB, "
              f"MemAvailable {m['MemAvailable'] // 1024} MiB: {'pass' if s['ok'] else 'FAIL'}")
        c.write_json(a.out, result)
        if not s["ok"]:
            first_fail = i
            break
        reached = i
    else:
        result["capped"] = "n"
    result["reached"], result["first_fail"] = reached, first_fail
    result["pcdedup_after"] = c.pcdedup_status()
    c.write_json(a.out, result)
    services.delete(i for i, _ in running)


if __name__ == "__main__":
    main()
