#!/usr/bin/env python3
"""Build the benchmark image on disk 'bench' (in the guest, from host files).
The container image is an OCI image built here (no registry): one layer with
a lean python3 + bash + coreutils userland (glibc), written as an OCI image
layout and unpacked with `umoci unpack` into the XFS origin of an lvm2 thin
pool:
  oci/              the OCI image layout (tag "bench")
  image/            the bundle umoci unpacked: config.json, rootfs/ (tagged)
  data/f1..f4       large random files for fio, tagged
  versions/vI/      reflink copies of image/rootfs: distinct overlay lowers
                    with the same content in other inodes, each tagged
  pcdedup-secret    the secret the keys were made with (root's alone), for
                    the cases to load
Usage: mkimage.py --case CASE.json --out NAME.json
  (case.params: versions, fio_file_mib)"""
import argparse
import glob
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common as c  # noqa: E402
import oci  # noqa: E402
from case import add_case_argument  # noqa: E402
import thinpool  # noqa: E402

TAG = "bench"
PY_SKIP = {"test", "idlelib", "tkinter", "ensurepip", "turtledemo", "lib2to3",
           "unittest", "pydoc_data", "distutils", "site-packages", "dist-packages"}
BINARIES = ["/usr/bin/python3.11", "/usr/bin/bash", "/usr/bin/sleep", "/usr/bin/cat",
            "/usr/bin/ls", "/usr/bin/env", "/usr/bin/true", "/usr/bin/sh"]
LINKS = (("lib", "usr/lib"), ("lib64", "usr/lib64"), ("bin", "usr/bin"), ("sbin", "usr/sbin"))


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


def members(files):
    """(name, source, link) for the layer: directories first, then files."""
    dirs = {"usr/lib64", "usr/sbin", "tmp", "proc", "dev", "sys", "etc"}
    for f in files:
        d = os.path.dirname(f)
        while d:
            dirs.add(d)
            d = os.path.dirname(d)
    out = [(d, None, None) for d in sorted(dirs)]
    out += [(name, None, target) for name, target in LINKS]
    out.append(("usr/lib64/ld-linux-x86-64.so.2", None,
                "/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"))
    for f in files:
        src = "/" + f
        out.append((f, None, os.readlink(src)) if os.path.islink(src) else (f, src, None))
    return out


def main():
    ap = argparse.ArgumentParser(description="build the benchmark image")
    add_case_argument(ap)
    a = ap.parse_args()
    versions, fio_mib = a.case.params["versions"], a.case.params["fio_file_mib"]
    t0 = time.monotonic()
    thinpool.setup(c.DISK, c.VG)
    files = userland_files()
    layout = os.path.join(c.ORIGIN_MNT, "oci")
    c.log(f"OCI image: {len(files)} files")
    info = oci.build_layout(layout, TAG, members(files), ["/usr/bin/python3"])
    image = os.path.join(c.ORIGIN_MNT, "image")
    c.run("umoci", "unpack", "--image", f"{layout}:{TAG}", image)
    rootfs = os.path.join(image, "rootfs")
    data = os.path.join(c.ORIGIN_MNT, "data")
    os.makedirs(data)
    for i in range(1, 5):
        c.run("dd", "if=/dev/urandom", f"of={data}/f{i}", "bs=1M", f"count={fio_mib}",
              "status=none")
    c.log("tagging")
    # The image's own secret, kept on it for the cases that read it.
    c.use_secret(os.path.join(c.ORIGIN_MNT, c.IMAGE_SECRET))
    # Every file gets a key; the kernel's min_size decides which ones share.
    # Level 0 goes to the image's tree store, the keys stay in the inodes
    # (--tree-store's default level, short).
    store = os.path.join(c.ORIGIN_MNT, c.TREE_STORE)
    os.makedirs(store)
    c.run(c.PCDEDUP_TOOL, "tag", "-q", "--min-size", "0", "--tree-store", store, rootfs, data)
    os.makedirs(os.path.join(c.ORIGIN_MNT, "versions"))
    # A key's MAC binds it to its inode: a copy of a key (cp -a, or
    # setfattr --restore of a dump) is not honoured on another inode. cp -a
    # does not even carry them (the kernel refuses to set trusted.pcdedup on
    # a file open for write, as cp's copy is while it copies attributes):
    # the copies are tagged, all at once.
    for v in range(1, versions + 1):
        c.run("cp", "-a", "--reflink=always", rootfs, os.path.join(c.ORIGIN_MNT, f"versions/v{v}"))
        if v % 10 == 0:
            c.log(f"version {v}/{versions}")
    c.log("tagging the versions")
    c.run(c.PCDEDUP_TOOL, "tag", "-q", "--min-size", "0", "--tree-store", store,
          os.path.join(c.ORIGIN_MNT, "versions"))
    du = subprocess.run(["du", "-sk", rootfs], capture_output=True, text=True).stdout
    # The copies' keys are their own: verify finds a key with a right MAC.
    keep_key = subprocess.run([c.PCDEDUP_TOOL, "verify", "-q", os.path.join(
        c.ORIGIN_MNT, "versions/v1/usr/bin/python3.11")]).returncode == 0
    thinpool.umount(c.ORIGIN_MNT)
    c.write_json(a.out, {"files": len(files), "rootfs_kb": int(du.split()[0]),
                         "layer_bytes": info["layer_bytes"], "manifest": info["manifest"],
                         "versions": versions, "fio_file_mib": fio_mib,
                         "version_copies_keep_key": keep_key, "tree_store": True,
                         "build_seconds": round(time.monotonic() - t0, 1)})


if __name__ == "__main__":
    main()
