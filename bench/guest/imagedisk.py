#!/usr/bin/env python3
"""The disk of the real images (bench/images.py) a run reads, built once and
kept (build/bench/disks/): an lvm2 thin pool with a thin volume per image
version, PAIR-VERSION (XFS, reflink), the version's OCI layout unpacked on
it with `umoci unpack` (bundle/: config.json and rootfs/) and tagged with
`pcdedup tag`'s defaults. One secret makes every key on the disk (sharing
across images needs that, as on a node whose host tags every image), and
each volume keeps a copy at its root (root's alone). Under TCG umoci takes
minutes for one image: the boots that read the images attach a sparse copy
of this disk instead (common.attach_images).
Usage: imagedisk.py --case CASE.json --out NAME.json
  (case.params: pairs, images (the images' folder, relative to the
  repository), pool_size)"""
import argparse
import os
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common as c  # noqa: E402
from case import add_case_argument  # noqa: E402
import thinpool  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description="the disk of the real images a run reads")
    add_case_argument(ap)
    a = ap.parse_args()
    p = a.case.params
    info = {"guest": c.guest_info(), "pairs": p["pairs"], "volumes": {}}
    thinpool.pool(c.DISK, c.VG, p.get("pool_size", "11G"))
    secret = None
    for name in c.image_volumes(p["pairs"]):
        mnt = f"/mnt/{name}"
        thinpool.volume(c.VG, name, "4G", mnt)
        if secret is None:
            secret = os.path.join(mnt, c.IMAGE_SECRET)
            c.use_secret(secret)
        else:
            shutil.copy2(secret, os.path.join(mnt, c.IMAGE_SECRET))
        layout = os.path.join(c.SRC, p["images"], name, "oci")
        if not os.path.isfile(os.path.join(layout, "index.json")):
            raise RuntimeError(f"no image {layout}: run bench/images.py on the host")
        t0 = time.monotonic()
        c.run("umoci", "unpack", "--image", f"{layout}:{name}", f"{mnt}/bundle")
        t1 = time.monotonic()
        c.run(c.PCDEDUP_TOOL, "tag", "-q", f"{mnt}/bundle/rootfs")
        t2 = time.monotonic()
        info["volumes"][name] = {"unpack_s": round(t1 - t0, 1), "tag_s": round(t2 - t1, 1)}
        c.log(f"{name}: unpacked in {t1 - t0:.0f} s, tagged in {t2 - t1:.0f} s")
        c.write_json(a.out, info)
    os.sync()
    for name in c.image_volumes(p["pairs"]):
        thinpool.umount(f"/mnt/{name}")
    c.run("lvm", "vgchange", "-q", "-an", c.VG)
    c.write_json(a.out, info)


if __name__ == "__main__":
    main()
