"""Helpers shared by the in-guest benchmark scripts (standard library only)."""
import json
import os
import shutil
import subprocess
import sys
import time

import thinpool
from thinpool import ORIGIN_MNT, mount, run  # noqa: F401  (re-exported)

SRC = os.environ.get("PCDEDUP_SRC", "/run/pcdedup/src")
OUT = os.environ.get("PCDEDUP_OUT", "/run/pcdedup/out")
PCDEDUP_TOOL = os.path.join(SRC, "dedup/pcdedup")
SYSFS = "/sys/kernel/mm/pcdedup"
# The secret keys are made with (their MACs), in a root-only file. The
# image's is kept on the image, at the root of its origin volume (so also
# of every thin snapshot; containers see only image/rootfs below it): each
# boot that reads the image loads it. A boot that tags files of its own
# makes one on /run (tmpfs: one per boot).
IMAGE_SECRET = "pcdedup-secret"
# The image's tree store (`pcdedup tag --tree-store`): level 0 of every
# content, on the image's root beside its secret; named to the kernel from
# a copy in /run, since the knob holds the filesystem it names busy and
# thin cases unmount snapshot 1 once their roots are set up.
TREE_STORE = "pcdedup-trees"
RUN_TREE_STORE = "/run/pcdedup-trees"
BOOT_SECRET = "/run/pcdedup-secret"
VG = "bench"
DISK = "/dev/disk/by-name/bench"


def log(msg):
    print(f"[guest {time.monotonic():7.1f}s] {msg}", file=sys.stderr, flush=True)


def meminfo():
    out = {}
    with open("/proc/meminfo") as f:
        for line in f:
            key, val = line.split(":")
            out[key] = int(val.split()[0])
    return out


def vmstat(*keys):
    out = {}
    with open("/proc/vmstat") as f:
        for line in f:
            k, v = line.split()
            if k in keys:
                out[k] = int(v)
    return out


def pcdedup_status():
    """`pcdedup status --json` (the tool owns the parsing of the kernel's
    counters); None on a kernel without pcdedup."""
    if not os.path.isdir(SYSFS):
        return None
    p = subprocess.run([PCDEDUP_TOOL, "status", "--json"], capture_output=True, text=True)
    if p.returncode:
        raise RuntimeError(f"pcdedup status --json: exit {p.returncode}: {p.stderr.strip()}")
    st = json.loads(p.stdout)
    shares = st.get("shares")
    st["n_shares"] = len(shares) if shares is not None else None
    st.pop("shares", None)  # the listing itself is not kept: only its length
    return st


def use_secret(path):
    """Make the secret file PATH with the tool unless it exists, and make it
    the one every later `pcdedup` command of this process uses."""
    if not os.path.exists(path):
        run(PCDEDUP_TOOL, "secret", "new", "--secret-file", path)
    os.environ["PCDEDUP_SECRET_FILE"] = path
    return path


def set_pcdedup(case, secret=None):
    """Switch pcdedup explicitly as CASE says: on with its verify mode (and
    min_size), after loading the secret the tagged files' keys were made with
    (SECRET, else the one use_secret() chose), or off. Sharing is off after
    boot, so every case that reads tagged files calls this before it does.
    Nothing to do on a kernel without it (an error when the case wants it)."""
    if not os.path.isdir(SYSFS):
        if case.dedup:
            raise RuntimeError("case wants pcdedup but the kernel has no " + SYSFS)
        return
    if case.dedup:
        secret = secret or os.environ.get("PCDEDUP_SECRET_FILE")
        if not secret:
            raise RuntimeError("case wants pcdedup but no secret was made or named")
        run(PCDEDUP_TOOL, "secret", "load", "--secret-file", secret)
    if case.dedup and case.verify != "default":
        with open(os.path.join(SYSFS, "verify"), "w") as f:
            f.write(case.verify)
    if case.dedup and case.min_size is not None:
        with open(os.path.join(SYSFS, "min_size"), "w") as f:
            f.write(str(case.min_size))
    if case.dedup:
        use_tree_store(secret)
    with open(os.path.join(SYSFS, "enabled"), "w") as f:
        f.write("1" if case.dedup else "0")


def use_tree_store(secret):
    """Name the tree store of the image whose secret is SECRET, if it has
    one and the kernel takes one; else name none."""
    knob = os.path.join(SYSFS, "tree_store")
    if not os.path.exists(knob):
        return
    src = os.path.join(os.path.dirname(secret), TREE_STORE)
    name = ""
    if os.path.isdir(src):
        with open(knob, "w") as f:  # the copy in /run may be replaced
            f.write("\n")
        shutil.rmtree(RUN_TREE_STORE, ignore_errors=True)
        shutil.copytree(src, RUN_TREE_STORE)
        name = RUN_TREE_STORE
    with open(knob, "w") as f:
        f.write(name + "\n")


def disk_sectors_read(dev=DISK):
    """Sectors read from the whole virtio disk behind DEV (field 3 of stat)."""
    name = os.path.basename(os.path.realpath(dev))
    with open(f"/sys/block/{name}/stat") as f:
        return int(f.read().split()[2])


def drop_caches():
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3")


def activate_vg():
    thinpool.activate(VG)


def image_volumes(pairs):
    """The thin volumes of the images disk (imagedisk.py) that holds PAIRS:
    PAIR-older and PAIR-newer of each."""
    return [f"{pair}-{v}" for pair in pairs for v in ("older", "newer")]


def attach_images(volumes=()):
    """The images disk (bench/guest/imagedisk.py), attached as disk 'bench':
    its volume group activated, each of VOLUMES mounted at /mnt/VOLUME,
    the disk's secret made the one `pcdedup` commands use; returns the
    secret's path."""
    activate_vg()
    first = sorted(n for n in os.listdir(f"/dev/{VG}") if n != "pool")[0]
    mount(f"/dev/{VG}/{first}", "/mnt/secret-volume", "xfs", "ro")
    secret = BOOT_SECRET + "-images"
    with open(os.path.join("/mnt/secret-volume", IMAGE_SECRET), "rb") as f:
        data = f.read()
    thinpool.umount("/mnt/secret-volume")
    fd = os.open(secret, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.environ["PCDEDUP_SECRET_FILE"] = secret
    for name in volumes:
        mount(f"/dev/{VG}/{name}", f"/mnt/{name}", "xfs")
    return secret


def mount_origin():
    mount(f"/dev/{VG}/origin", ORIGIN_MNT, "xfs")


def thin_snapshots(ids):
    thinpool.snapshots(VG, ids)


def clock_step_ns(calls=20000):
    """The smallest nonzero step of CLOCK_MONOTONIC over CALLS readings: an
    upper bound of the clock's resolution (it includes one call's cost)."""
    step, prev = None, time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    for _ in range(calls):
        t = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        if t != prev and (step is None or t - prev < step):
            step = t - prev
        prev = t
    return step


def guest_info():
    """Kernel release, clocksource and clock step; no command line (it holds
    host paths)."""
    cs = "/sys/devices/system/clocksource/clocksource0/current_clocksource"
    with open(cs) as f:
        source = f.read().strip()
    return {"release": os.uname().release, "clocksource": source,
            "clock_step_ns": clock_step_ns(), "cpus": os.cpu_count(),
            "mem_total_kb": meminfo()["MemTotal"]}


def write_json(name, data):
    path = os.path.join(OUT, name)
    with open(path + ".tmp", "w") as f:
        json.dump(data, f, indent=1)
    os.replace(path + ".tmp", path)
