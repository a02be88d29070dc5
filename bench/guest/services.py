#!/usr/bin/env python3
"""Real servers from both versions of a real image (bench/images.py), in
containers on thin snapshots, serving a small client load from the guest:
what they take in memory, each and in all, without and with pcdedup, and
what each start costs.

Each version is unpacked with `umoci` into a thin volume of its own and
tagged, once, on the images disk (imagedisk.py); every container runs on a
thin snapshot of its version's volume (as a node runs many containers of
each image), with `crun run` from a bundle whose config.json is umoci's and
its own cgroup v2 group, the server (servers.py) listening on a unix socket
in a folder bind-mounted from the guest (/ctl: the container keeps its
network namespace, loopback only). The
containers start one after another, older and newer alternating; each is
ready when its server answers a first request, then serves
params.requests requests. Measured per container: the time from `crun
run` to the first answer, the disk read meanwhile, memory.stat, the
servers' smaps_rollup (PSS); in all: /proc/meminfo against before the
first container.
Usage: services.py --case CASE.json --out NAME.json
  case.verify     off (pcdedup off) | full | trust
  case.params     pair (redis | nginx | postgres | mariadb), per_version, requests"""
import argparse
import http.client
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common as c  # noqa: E402
import oci  # noqa: E402
from case import add_case_argument  # noqa: E402
import thinpool  # noqa: E402
from servers import SERVERS, passwd_ids  # noqa: E402

VERSIONS = ("older", "newer")
CGROOT = "/sys/fs/cgroup/services"
WORK = "/run/services"


def snapshot_volumes(volume, ids):
    """Thin snapshots c{I} of VOLUME, one for each of IDS, in one lvm run."""
    cmds = "".join(f"lvcreate -q -kn -s {c.VG}/{volume} -n c{i}\n" for i in ids)
    p = subprocess.run(["lvm"], input=cmds, capture_output=True, text=True)
    if p.returncode:
        raise RuntimeError(f"lvm snapshots of {volume}: {p.stderr.strip()[-300:]}")


def pids_of(i):
    try:
        with open(f"{CGROOT}/c{i}/cgroup.procs") as f:
            return [int(x) for x in f.read().split()]
    except FileNotFoundError:
        return []


def smaps_pss_kb(pids):
    """Pss, Pss_Anon, Pss_File of PIDS summed (smaps_rollup, kB)."""
    out = {"Pss": 0, "Pss_Anon": 0, "Pss_File": 0, "Rss": 0}
    for pid in pids:
        try:
            with open(f"/proc/{pid}/smaps_rollup") as f:
                for line in f:
                    k, _, v = line.partition(":")
                    if k in out:
                        out[k] += int(v.split()[0])
        except OSError:
            continue
    return out


def memory_stat(path):
    with open(f"{path}/memory.stat") as f:
        return {k: int(v) for k, v in (line.split() for line in f)}


def prepare(config_volume):
    """The work folders, the base config.json (umoci's, from
    CONFIG_VOLUME's bundle) and the cgroup the containers go under (memory
    and pids); returns the config's path."""
    for d in ("ctl", "bundles"):
        os.makedirs(f"{WORK}/{d}", exist_ok=True)
    base_config = f"{WORK}/config.json"
    with open(f"/mnt/{config_volume}/bundle/config.json") as fin, \
            open(base_config, "w") as fout:
        fout.write(fin.read())
    with open("/sys/fs/cgroup/cgroup.subtree_control", "w") as f:
        f.write("+memory +pids")
    os.makedirs(CGROOT)
    with open(f"{CGROOT}/cgroup.subtree_control", "w") as f:
        f.write("+memory +pids")
    return base_config


def delete(ids):
    """crun delete -f each container cI of IDS."""
    for i in ids:
        subprocess.run(["crun", "delete", "-f", f"c{i}"], capture_output=True)


def start(i, version, server, base_config, requests, rootfs=None):
    """Container I of VERSION (on snapshot cI, or ROOTFS): crun run, then
    its first answer, then REQUESTS more; returns its figures."""
    ctl = f"{WORK}/ctl/c{i}"
    os.makedirs(ctl, exist_ok=True)
    os.chmod(ctl, 0o777)
    server.prepare(ctl)
    if rootfs is None:
        mnt = f"/mnt/c{i}"
        thinpool.mount(f"/dev/{c.VG}/c{i}", mnt, "xfs", "nouuid")
        rootfs = f"{mnt}/bundle/rootfs"
    bundle = f"{WORK}/bundles/c{i}"
    user = passwd_ids(rootfs, server.user) if server.user else None
    oci.bundle(bundle, base_config, rootfs, server.args, f"/services/c{i}",
               binds=[(ctl, "/ctl")], caps=oci.SERVER_CAPS, user=user)
    d0 = c.disk_sectors_read()
    t0 = time.monotonic()
    with open(f"{WORK}/c{i}.log", "w") as log:
        p = subprocess.run(["crun", "run", "-d", "-b", bundle, f"c{i}"],
                           stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    if p.returncode:
        raise RuntimeError(f"crun run c{i}: exit {p.returncode}: {tail(i)}")
    sock = os.path.join(ctl, server.socket)
    while True:
        try:
            server.request(sock, 0)
            break
        except (OSError, RuntimeError, http.client.HTTPException):
            if not pids_of(i) or time.monotonic() - t0 > 120:
                raise RuntimeError(f"c{i} ({version}) not answering: {tail(i)}")
            time.sleep(0.02)
    ready = time.monotonic() - t0
    disk_kb = (c.disk_sectors_read() - d0) // 2
    t1 = time.monotonic()
    for k in range(1, requests + 1):
        try:
            server.request(sock, k)
        except (OSError, RuntimeError, http.client.HTTPException) as e:
            raise RuntimeError(f"c{i} ({version}) ready, then request {k} failed: {e}") from e
    return {"container": i, "version": version, "ready_s": round(ready, 3),
            "start_disk_kb": disk_kb,
            "requests_s": round(time.monotonic() - t1, 3)}


def tail(i):
    try:
        with open(f"{WORK}/c{i}.log") as f:
            return f.read().strip()[-300:]
    except OSError:
        return ""


def main():
    ap = argparse.ArgumentParser(description="real servers of both versions of an image")
    add_case_argument(ap)
    a = ap.parse_args()
    case, p = a.case, a.case.params
    server = SERVERS[p["pair"]]
    result = {"guest": c.guest_info(), "pair": p["pair"], "containers": []}
    vols = {v: f"{p['pair']}-{v}" for v in VERSIONS}
    secret = c.attach_images(vols.values())
    base_config = prepare(vols["older"])
    per = p.get("per_version", 3)
    ids = {v: [2 * k + 1 + j for k in range(per)] for j, v in enumerate(VERSIONS)}
    for v in VERSIONS:
        thinpool.umount(f"/mnt/{vols[v]}")
        snapshot_volumes(vols[v], ids[v])
    c.set_pcdedup(case, secret)
    c.drop_caches()
    time.sleep(1)
    m0 = c.meminfo()
    result["before"] = {k: m0[k] for k in ("MemTotal", "MemFree", "MemAvailable", "Cached",
                                           "Slab", "AnonPages", "Shmem")}
    result["pcdedup_before"] = c.pcdedup_status()
    order = sorted((i, v) for v in VERSIONS for i in ids[v])
    for i, v in order:
        r = start(i, v, server, base_config, p.get("requests", 200))
        result["containers"].append(r)
        c.log(f"c{i} ({v}): ready in {r['ready_s']:.2f} s, {r['start_disk_kb']} KiB read")
        c.write_json(a.out, result)
    time.sleep(2)
    m = c.meminfo()
    for r in result["containers"]:
        i = r["container"]
        st = memory_stat(f"{CGROOT}/c{i}")
        r["memcg"] = {k: st.get(k, 0) // 1024 for k in ("anon", "file", "kernel", "slab",
                                                        "sock", "shmem")}
        r["memory_current_kb"] = int(open(f"{CGROOT}/c{i}/memory.current").read()) // 1024
        r["smaps"] = smaps_pss_kb(pids_of(i))
    result["after"] = {k: m[k] for k in result["before"]}
    result["used_kb"] = (m0["MemFree"] - m["MemFree"])
    result["cached_kb"] = m["Cached"] - m0["Cached"]
    result["memavailable_drop_kb"] = m0["MemAvailable"] - m["MemAvailable"]
    result["pcdedup_after"] = c.pcdedup_status()
    c.write_json(a.out, result)
    delete(i for i, _ in order)


if __name__ == "__main__":
    main()
