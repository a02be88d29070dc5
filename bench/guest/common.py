"""Helpers shared by the in-guest benchmark scripts (standard library only)."""
import ctypes
import json
import os
import subprocess
import sys
import time

SRC = os.environ.get("PCDEDUP_SRC", "/run/pcdedup/src")
OUT = os.environ.get("PCDEDUP_OUT", "/run/pcdedup/out")
PCDEDUP_TOOL = os.path.join(SRC, "dedup/pcdedup")
SYSFS = "/sys/kernel/mm/pcdedup"
VG = "bench"
DISK = "/dev/disk/by-name/bench"
ORIGIN_MNT = "/mnt/origin"


_libc = ctypes.CDLL(None, use_errno=True)


def log(msg):
    print(f"[guest {time.monotonic():7.1f}s] {msg}", file=sys.stderr, flush=True)


def run(*cmd):
    """Run CMD quietly; its output is shown only when it fails."""
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip()[-300:]}")


def meminfo():
    out = {}
    with open("/proc/meminfo") as f:
        for line in f:
            key, val = line.split(":")
            out[key] = int(val.split()[0])
    return out


def pcdedup_counters():
    """sysfs knobs and /proc/vmstat pcdedup_* lines; empty on a stock kernel."""
    out = {}
    if os.path.isdir(SYSFS):
        for name in sorted(os.listdir(SYSFS)):
            with open(os.path.join(SYSFS, name)) as f:
                val = f.read().strip()
            out[name] = int(val) if val.lstrip("-").isdigit() else val
    with open("/proc/vmstat") as f:
        for line in f:
            key, val = line.split()
            if key.startswith("pcdedup_"):
                out[key] = int(val)
    return out


def set_pcdedup(enabled, verify=None):
    if verify:
        with open(os.path.join(SYSFS, "verify"), "w") as f:
            f.write(verify)
    if enabled is not None:
        with open(os.path.join(SYSFS, "enabled"), "w") as f:
            f.write("1" if enabled else "0")


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
    run("lvm", "vgchange", "-q", "-ay", VG)


def mount_origin():
    mount(f"/dev/{VG}/origin", ORIGIN_MNT, "xfs")


def mount(source, target, fstype, options=""):
    """mount(2) without a mount(8) process: under TCG, a hundred process
    starts cost more than the mounts themselves."""
    os.makedirs(target, exist_ok=True)
    if _libc.mount(source.encode(), target.encode(), fstype.encode(), 0,
                   options.encode()) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"mount {source} on {target}: {os.strerror(err)}")


def thin_snapshots(ids):
    """Thin snapshots snapI of the origin, for I in IDS, each mounted (nouuid)
    at /mnt/snapI. One lvm process makes them all (lvm reads commands from
    stdin): starting lvm once per snapshot takes seconds under TCG."""
    cmds = "".join(f"lvcreate -q -kn -s {VG}/origin -n snap{i}\n" for i in ids)
    p = subprocess.run(["lvm"], input=cmds, capture_output=True, text=True)
    missing = [i for i in ids if not os.path.exists(f"/dev/{VG}/snap{i}")]
    if p.returncode or missing:
        raise RuntimeError(f"lvm: snapshots {missing} not made (exit {p.returncode}): "
                           f"{p.stderr.strip()[-300:]}")
    for i in ids:
        mount(f"/dev/{VG}/snap{i}", f"/mnt/snap{i}", "xfs", "nouuid")


def kernel_name():
    return os.uname().release + " " + open("/proc/cmdline").read().strip()


def write_json(name, data):
    path = os.path.join(OUT, name)
    with open(path, "w") as f:
        json.dump(data, f, indent=1)
    log(f"wrote {path}")
