#!/usr/bin/env python3
"""Build the benchmark image on disk 'bench' (in the guest, from host files):
an lvm2 thin pool whose XFS origin holds
  rootfs/        a lean python3 + bash + coreutils userland (glibc), tagged
  data/f1..f4    large random files for fio, tagged
  versions/vI/   reflink copies of rootfs ("distinct lowers", same content)
Usage: mkimage.py VERSIONS FIO_FILE_MB"""
import glob
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import DISK, ORIGIN_MNT, PCDEDUP_TOOL, VG, log, run, write_json  # noqa: E402

PY_SKIP = {"test", "idlelib", "tkinter", "ensurepip", "turtledemo", "lib2to3",
           "unittest", "pydoc_data", "distutils", "site-packages", "dist-packages"}
BINARIES = ["/usr/bin/python3.11", "/usr/bin/bash", "/usr/bin/sleep", "/usr/bin/cat",
            "/usr/bin/ls", "/usr/bin/env", "/usr/bin/true", "/usr/bin/sh"]


def userland_files():
    files = set(BINARIES)
    for root, dirs, names in os.walk("/usr/lib/python3.11"):
        dirs[:] = [d for d in dirs if d not in PY_SKIP and not d.startswith("config-")]
        files.update(os.path.join(root, n) for n in names)
    elfs = BINARIES + glob.glob("/usr/lib/python3.11/lib-dynload/*.so")
    ldd = subprocess.run(["ldd"] + elfs, capture_output=True, text=True).stdout
    for lib in set(re.findall(r"(/\S+\.so[.\d]*)", ldd)):
        files.add(lib)
        files.add(os.path.realpath(lib))
    files.update(["/etc/ld.so.cache", "/etc/passwd", "/etc/group", "/usr/bin/python3"])
    # Debian is usr-merged: store every path under usr/.
    out = set()
    for f in files:
        f = os.path.normpath(f)
        for top in ("/lib64/", "/lib/", "/bin/"):
            if f.startswith(top):
                f = "/usr" + f
        if os.path.lexists(f):
            out.add(f.lstrip("/"))
    return sorted(out)


def main():
    versions, fio_mb = int(sys.argv[1]), int(sys.argv[2])
    t0 = time.monotonic()
    dev = os.path.realpath(DISK)
    run("lvm", "pvcreate", "-q", dev)
    run("lvm", "vgcreate", "-q", VG, dev)
    run("lvm", "lvcreate", "-q", "-L", "3G", "-T", f"{VG}/pool")
    subprocess.run(["lvm", "lvcreate", "-q", "-V", "2G", "-T", f"{VG}/pool", "-n", "origin"],
                   check=True, capture_output=True)
    run("mkfs.xfs", "-q", "-m", "reflink=1", f"/dev/{VG}/origin")
    os.makedirs(ORIGIN_MNT, exist_ok=True)
    run("mount", f"/dev/{VG}/origin", ORIGIN_MNT)
    rootfs = os.path.join(ORIGIN_MNT, "rootfs")
    os.makedirs(rootfs)
    for link, target in (("lib", "usr/lib"), ("lib64", "usr/lib64"), ("bin", "usr/bin"),
                         ("sbin", "usr/sbin")):
        os.symlink(target, os.path.join(rootfs, link))
    for d in ("usr/lib64", "usr/sbin", "tmp", "proc", "dev", "etc"):
        os.makedirs(os.path.join(rootfs, d), exist_ok=True)
    os.symlink("/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
               os.path.join(rootfs, "usr/lib64/ld-linux-x86-64.so.2"))
    files = userland_files()
    log(f"copying {len(files)} files into rootfs")
    tar = subprocess.Popen(["tar", "-C", "/", "--no-recursion", "-cf", "-", "-T", "-"],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    untar = subprocess.Popen(["tar", "-C", rootfs, "-xf", "-"], stdin=tar.stdout)
    tar.stdin.write("\n".join(files).encode())
    tar.stdin.close()
    if tar.wait() or untar.wait():
        sys.exit("copy failed")
    data = os.path.join(ORIGIN_MNT, "data")
    os.makedirs(data)
    for i in range(1, 5):
        run("dd", "if=/dev/urandom", f"of={data}/f{i}", "bs=1M", f"count={fio_mb}",
            "status=none")
    log("tagging")
    # Every file gets a key; the kernel's min_size decides which ones share.
    run(PCDEDUP_TOOL, "tag", "-q", "--min-size", "0", rootfs, data)
    os.makedirs(os.path.join(ORIGIN_MNT, "versions"))
    # cp -a cannot carry the keys: the kernel refuses to set trusted.pcdedup
    # on a file open for write, as cp's copy is while it copies attributes.
    # Set them again once each copy is closed, from one dump of the rootfs.
    keys = "/tmp/pcdedup-keys.dump"
    with open(keys, "w") as f:
        subprocess.run(["getfattr", "-R", "-P", "-d", "-m", "^trusted\\.pcdedup$", "-e",
                        "hex", "."], cwd=rootfs, stdout=f, check=True)
    for v in range(1, versions + 1):
        copy = os.path.join(ORIGIN_MNT, f"versions/v{v}")
        run("cp", "-a", "--reflink=always", rootfs, copy)
        subprocess.run(["setfattr", f"--restore={keys}"], cwd=copy, check=True)
        if v % 10 == 0:
            log(f"version {v}/{versions}")
    du = subprocess.run(["du", "-sk", rootfs], capture_output=True, text=True).stdout
    key = subprocess.run(["getfattr", "-n", "trusted.pcdedup", "-e", "hex",
                          os.path.join(ORIGIN_MNT, "versions/v1/usr/bin/python3.11")],
                         capture_output=True, text=True).stdout
    run("umount", ORIGIN_MNT)
    write_json("image.json", {"files": len(files), "rootfs_kb": int(du.split()[0]),
                              "versions": versions, "fio_file_mb": fio_mb,
                              "version_copies_keep_key": "trusted.pcdedup=0x" in key,
                              "build_seconds": round(time.monotonic() - t0, 1)})


if __name__ == "__main__":
    main()
