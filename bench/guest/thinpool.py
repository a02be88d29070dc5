#!/usr/bin/env python3
"""The thin pool of the benchmark and of the tests: one owner.
  thinpool.py setup DISK VG      pool (3G) + 2G XFS (reflink) origin, mounted at /mnt/origin
  thinpool.py snapshots VG N     snap1..snapN of the origin, mounted (nouuid) at /mnt/snapI
  thinpool.py activate VG        activate an existing pool (an image attached again)
Python callers import setup/snapshots/activate, and pool/volume for
volumes of their own."""
import ctypes
import os
import subprocess
import sys

ORIGIN_MNT = "/mnt/origin"
_libc = ctypes.CDLL(None, use_errno=True)


def run(*cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip()[-300:]}")


def mount(source, target, fstype, options="", flags=0):
    """mount(2) without a mount(8) process: under TCG, a hundred process
    starts cost more than the mounts themselves."""
    os.makedirs(target, exist_ok=True)
    if _libc.mount(source.encode(), target.encode(), fstype.encode(), flags,
                   options.encode()) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"mount {source} on {target}: {os.strerror(err)}")


def umount(target):
    if _libc.umount2(target.encode(), 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"umount {target}: {os.strerror(err)}")


def pool(disk, vg, size="3G"):
    """The volume group VG on DISK and its thin pool of SIZE."""
    dev = os.path.realpath(disk if disk.startswith("/") else f"/dev/disk/by-name/{disk}")
    run("lvm", "pvcreate", "-q", dev)
    run("lvm", "vgcreate", "-q", vg, dev)
    run("lvm", "lvcreate", "-q", "-L", size, "-T", f"{vg}/pool")


def volume(vg, name, size, mnt):
    """A thin volume NAME of SIZE in VG's pool with a new XFS (reflink),
    mounted at MNT."""
    # lvcreate warns that the thin volume overcommits the pool: not an error.
    subprocess.run(["lvm", "lvcreate", "-q", "-V", size, "-T", f"{vg}/pool", "-n", name],
                   check=True, capture_output=True)
    run("mkfs.xfs", "-q", "-m", "reflink=1", f"/dev/{vg}/{name}")
    mount(f"/dev/{vg}/{name}", mnt, "xfs")


def setup(disk, vg):
    pool(disk, vg)
    volume(vg, "origin", "2G", ORIGIN_MNT)


def activate(vg):
    run("lvm", "vgchange", "-q", "-ay", vg)


def snapshots(vg, ids):
    """Snapshots snapI for I in IDS. One lvm process makes them all (lvm reads
    commands from stdin): one lvm start per snapshot takes seconds under TCG.
    The origin is unmounted meanwhile (a clean XFS log in every snapshot) and
    mounted again after, when it was."""
    ids = list(ids)
    was_mounted = os.path.ismount(ORIGIN_MNT)
    if was_mounted:
        os.sync()
        umount(ORIGIN_MNT)
    cmds = "".join(f"lvcreate -q -kn -s {vg}/origin -n snap{i}\n" for i in ids)
    p = subprocess.run(["lvm"], input=cmds, capture_output=True, text=True)
    missing = [i for i in ids if not os.path.exists(f"/dev/{vg}/snap{i}")]
    if p.returncode or missing:
        raise RuntimeError(f"lvm: snapshots {missing} not made (exit {p.returncode}): "
                           f"{p.stderr.strip()[-300:]}")
    for i in ids:
        mount(f"/dev/{vg}/snap{i}", f"/mnt/snap{i}", "xfs", "nouuid")
    if was_mounted:
        mount(f"/dev/{vg}/origin", ORIGIN_MNT, "xfs")


def main(argv):
    if argv[:1] == ["setup"] and len(argv) == 3:
        setup(argv[1], argv[2])
    elif argv[:1] == ["snapshots"] and len(argv) == 3:
        snapshots(argv[1], range(1, int(argv[2]) + 1))
    elif argv[:1] == ["activate"] and len(argv) == 2:
        activate(argv[1])
    else:
        sys.exit(__doc__)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
