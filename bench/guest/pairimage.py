#!/usr/bin/env python3
"""The disk of one version pair of real images (bench/images.py), built once
and kept (build/bench/pairs/NAME.img): an lvm2 thin pool with a volume per
version (XFS, reflink), the version's OCI layout unpacked on it with `umoci
unpack` (bundle/: config.json and rootfs/) and tagged with `pcdedup tag`'s
defaults, with the secret the keys were made with at the root of the older
volume (root's alone). Under TCG umoci takes minutes for one image: the
boots that read a pair attach a sparse copy of this disk instead
(common.attach_pair).
Usage: pairimage.py --case CASE.json --out NAME.json
  (case.params: pair, images (the images' folder, relative to the
  repository), pool_size)"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common as c  # noqa: E402
from case import add_case_argument  # noqa: E402
import thinpool  # noqa: E402

VERSIONS = ("older", "newer")


def main():
    ap = argparse.ArgumentParser(description="the disk of one version pair of real images")
    add_case_argument(ap)
    a = ap.parse_args()
    p = a.case.params
    info = {"guest": c.guest_info(), "pair": p["pair"], "versions": {}}
    thinpool.pool(c.DISK, c.VG, p.get("pool_size", "11G"))
    for v in VERSIONS:
        thinpool.volume(c.VG, v, "4G", f"/mnt/{v}")
    c.use_secret(os.path.join("/mnt/older", c.IMAGE_SECRET))
    for v in VERSIONS:
        tag = f"{p['pair']}-{v}"
        layout = os.path.join(c.SRC, p["images"], tag, "oci")
        if not os.path.isfile(os.path.join(layout, "index.json")):
            raise RuntimeError(f"no image {layout}: run bench/images.py on the host")
        t0 = time.monotonic()
        c.run("umoci", "unpack", "--image", f"{layout}:{tag}", f"/mnt/{v}/bundle")
        t1 = time.monotonic()
        c.run(c.PCDEDUP_TOOL, "tag", "-q", f"/mnt/{v}/bundle/rootfs")
        t2 = time.monotonic()
        info["versions"][v] = {"unpack_s": round(t1 - t0, 1), "tag_s": round(t2 - t1, 1)}
        c.log(f"{tag}: unpacked in {t1 - t0:.0f} s, tagged in {t2 - t1:.0f} s")
    os.sync()
    for v in VERSIONS:
        thinpool.umount(f"/mnt/{v}")
    c.run("lvm", "vgchange", "-q", "-an", c.VG)
    c.write_json(a.out, info)


if __name__ == "__main__":
    main()
