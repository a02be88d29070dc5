#!/usr/bin/env python3
"""Real Debian images for the benchmark and the tests, built on the host
from Debian's archive with mmdebstrap (no registry): minbase, merged /usr,
no recommends, one server package each (the tests' pair: a few libraries
alone). Each image of a version pair is
built on its own, so that its files are inodes of their own when unpacked:
  older  bookworm alone
  newer  bookworm + bookworm-updates + bookworm-security
The archive is the one this host's apt uses (its deb822 or one-line
sources, filtered to those suites): nothing here names a mirror.

Each image is written to build/bench/images/NAME-VERSION/:
  oci/           an OCI image layout (tag NAME-VERSION), one uncompressed layer
  files.tsv      every file of the layer: path, type, size, SHA-256 (regular
                 files), the path it links to (hard links): the ceiling of
                 what sharing can save is computed from these
  packages.tsv   dpkg-query -W of the image (package, version)
  info.json      what was asked (packages, suites), when, and how long it took
An image that is there is used as it is: a second run downloads nothing
(--rebuild to build again).

Usage: bench/images.py [--set bench|quick|test] [--rebuild] [--list] [--json]"""
import argparse
import glob
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.parse

BENCH = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(BENCH)
IMAGES = os.path.join(REPO, "build/bench/images")
sys.path.insert(0, os.path.join(BENCH, "guest"))
import oci  # noqa: E402

RELEASE = "bookworm"
APT_CACHE = "./var/cache/apt/archives/"
VERSIONS = {"older": (RELEASE,),
            "newer": (RELEASE, f"{RELEASE}-updates", f"{RELEASE}-security")}
# name: the packages installed on minbase.
PAIRS = {"redis": ("redis-server",), "postgres": ("postgresql-15",),
         "mariadb": ("mariadb-server",), "nginx": ("nginx",)}
# The tests' small pair: no minbase (under TCG umoci takes minutes for it),
# only these packages and what they need: glibc, the same in both versions
# when built, and libraries Debian's security and point updates have
# changed since bookworm's release (the test checks both kinds are there).
CUSTOM = {"libs": ("libc6", "zlib1g", "liblzma5", "libzstd1", "libpcre2-8-0")}
SETS = {"bench": ("redis", "postgres", "mariadb", "nginx"), "quick": ("redis",),
        "test": ("libs",)}


def image_dir(pair, version):
    return os.path.join(IMAGES, f"{pair}-{version}")


def host_sources():
    """The host's apt sources as deb822 stanzas (dicts), one-line entries
    converted."""
    stanzas = []
    for path in sorted(glob.glob("/etc/apt/sources.list.d/*.sources")):
        with open(path) as f:
            for block in f.read().split("\n\n"):
                st = {}
                for line in block.splitlines():
                    if line.startswith("#") or ":" not in line or line[:1].isspace():
                        continue
                    k, v = line.split(":", 1)
                    st[k.strip()] = v.strip()
                if st.get("Enabled", "yes") != "no" and "URIs" in st:
                    stanzas.append(st)
    for path in ["/etc/apt/sources.list"] + sorted(glob.glob("/etc/apt/sources.list.d/*.list")):
        try:
            with open(path) as f:
                lines = f.read().splitlines()
        except OSError:
            continue
        for line in lines:
            w = line.split("#", 1)[0].split()
            if len(w) >= 4 and w[0] == "deb" and not w[1].startswith("["):
                stanzas.append({"Types": "deb", "URIs": w[1], "Suites": w[2],
                                "Components": " ".join(w[3:])})
    return stanzas


def sources_for(suites):
    """deb822 text of the host's sources restricted to SUITES (and to main);
    an error when one of them is not in the host's sources."""
    out, found = [], set()
    for st in host_sources():
        if "deb" not in st.get("Types", "").split():
            continue
        want = [s for s in st.get("Suites", "").split() if s in suites]
        if not want or "main" not in st.get("Components", "").split():
            continue
        found.update(want)
        st = dict(st, Types="deb", Suites=" ".join(want), Components="main")
        out.append("\n".join(f"{k}: {v}" for k, v in st.items()))
    missing = [s for s in suites if s not in found]
    if missing:
        raise SystemExit(f"images: the host's apt sources have no {', '.join(missing)} "
                         "(main): add them, then run again")
    return "\n\n".join(out) + "\n"


def layer_from_rootfs_tar(src, dst):
    """Copy mmdebstrap's tarball SRC to DST as the image's layer, without
    the device nodes it makes in /dev (an image carries none: the runtime
    mounts /dev); return the file list rows for files.tsv."""
    rows = []
    with tarfile.open(src) as tin, tarfile.open(dst, "w", format=tarfile.PAX_FORMAT) as tout:
        for m in tin:
            if m.ischr() or m.isblk() or m.isfifo() or m.name.startswith(APT_CACHE):
                continue
            name = m.name[2:] if m.name.startswith("./") else m.name
            if m.isreg():
                f = tin.extractfile(m)
                h = hashlib.sha256()
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    h.update(chunk)
                f.seek(0)
                tout.addfile(m, f)
                rows.append((name, "f", m.size, h.hexdigest(), ""))
                continue
            tout.addfile(m)
            if m.islnk():
                link = m.linkname[2:] if m.linkname.startswith("./") else m.linkname
                rows.append((name, "h", 0, "", link))
            elif m.issym():
                rows.append((name, "l", 0, "", m.linkname))
            elif m.isdir():
                rows.append((name, "d", 0, "", ""))
    return rows


def dpkg_packages(rootfs_tar):
    """dpkg-query -W of the image: its dpkg status file, read by the host's
    dpkg-query."""
    with tempfile.TemporaryDirectory() as tmp, tarfile.open(rootfs_tar) as t:
        admin = os.path.join(tmp, "dpkg")
        os.makedirs(os.path.join(admin, "updates"))
        os.makedirs(os.path.join(admin, "info"))
        status = t.extractfile("./var/lib/dpkg/status").read()
        with open(os.path.join(admin, "status"), "wb") as f:
            f.write(status)
        out = subprocess.run(["dpkg-query", f"--admindir={admin}", "-W",
                              "-f", "${Package}\t${Version}\n"],
                             check=True, capture_output=True, text=True).stdout
    return sorted(tuple(line.split("\t")) for line in out.splitlines())


def cached_packages(rootfs_tar):
    """(package, version) of the packages in apt's cache in the tarball, by
    the names apt gives them (NAME_VERSION_ARCH.deb, the version's ':'
    quoted)."""
    out = []
    with tarfile.open(rootfs_tar) as t:
        for m in t:
            if m.name.startswith(APT_CACHE) and m.name.endswith(".deb"):
                name, version, _ = os.path.basename(m.name).split("_")
                out.append((name, urllib.parse.unquote(version)))
    return sorted(out)


def build(pair, version, log=print):
    """Build one image (mmdebstrap, then the OCI layout); returns its info."""
    out = image_dir(pair, version)
    suites = VERSIONS[version]
    tag = f"{pair}-{version}"
    t0 = time.monotonic()
    shutil.rmtree(out, ignore_errors=True)
    work = out + ".tmp"
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    src = os.path.join(work, "sources.sources")
    with open(src, "w") as f:
        f.write(sources_for(suites))
    rootfs = os.path.join(work, "rootfs.tar")
    packages = CUSTOM.get(pair) or PAIRS[pair]
    cmd = ["mmdebstrap", "--quiet", "--format=tar", "--include=" + ",".join(packages)]
    listed = os.path.join(work, "packages.tsv")
    if pair in CUSTOM:
        # Unpacked, not installed (no dpkg in it to install with); the
        # packages are kept in apt's cache to tell their versions, and
        # left out of the layer.
        cmd += ["--variant=extract", "--skip=cleanup/apt/cache"]
    else:
        cmd.append("--variant=minbase")
    cmd += [RELEASE, rootfs, src]
    log(f"{tag}: mmdebstrap {RELEASE} ({' + '.join(suites)}) with {', '.join(packages)}")
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        raise SystemExit(f"images: {tag}: mmdebstrap exited {p.returncode}: "
                         f"{p.stderr.strip()[-600:]}")
    layer = os.path.join(work, "layer.tar")
    rows = layer_from_rootfs_tar(rootfs, layer)
    with open(listed, "w") as f:
        f.writelines(f"{p}\t{v}\n" for p, v in (cached_packages(rootfs) if pair in CUSTOM
                                                 else dpkg_packages(rootfs)))
    os.remove(rootfs)
    layout = os.path.join(work, "oci")
    info = oci.layout_from_layer(layout, tag, layer, ["/bin/sh"])
    with open(os.path.join(work, "files.tsv"), "w") as f:
        f.write("path\ttype\tsize\tsha256\tlink\n")
        f.writelines("\t".join(str(x) for x in r) + "\n" for r in rows)
    with open(listed) as f:
        npackages = sum(1 for line in f if "\t" in line)
    info = {"image": tag, "pair": pair, "version": version, "release": RELEASE,
            "suites": list(suites), "packages_asked": list(packages),
            "variant": "custom" if pair in CUSTOM else "minbase",
            "built": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "build_seconds": round(time.monotonic() - t0, 1),
            "layer_bytes": info["layer_bytes"], "manifest": info["manifest"],
            "files": sum(1 for r in rows if r[1] == "f"),
            "file_bytes": sum(r[2] for r in rows if r[1] == "f"),
            "packages": npackages}
    with open(os.path.join(work, "info.json"), "w") as f:
        json.dump(info, f, indent=1)
    os.rename(work, out)
    return info


def load_info(pair, version):
    try:
        with open(os.path.join(image_dir(pair, version), "info.json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def ensure(pairs, rebuild=False, log=print):
    """Every image of PAIRS, built unless there; their infos."""
    infos = []
    for pair in pairs:
        for version in VERSIONS:
            info = None if rebuild else load_info(pair, version)
            if info:
                log(f"{pair}-{version}: cached ({info['built']})")
            else:
                info = build(pair, version, log)
                log(f"{pair}-{version}: {info['files']} files, "
                    f"{info['file_bytes'] / 2**20:.1f} MiB, {info['build_seconds']} s")
            infos.append(info)
    return infos


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--set", choices=sorted(SETS), default="bench",
                    help="which pairs: %(choices)s (default %(default)s)")
    ap.add_argument("--rebuild", action="store_true", help="build even what is cached")
    ap.add_argument("--list", action="store_true", help="print the images and exit")
    ap.add_argument("--json", action="store_true", help="print the infos as JSON")
    a = ap.parse_args()
    if os.geteuid() != 0 and not a.list:
        sys.exit("images: mmdebstrap builds as root here (run as root)")
    if a.list:
        for pair in SETS[a.set]:
            for version in VERSIONS:
                print(f"{pair}-{version}\t{image_dir(pair, version)}")
        return 0
    log = (lambda m: print(f"[images] {m}", file=sys.stderr, flush=True))
    infos = ensure(SETS[a.set], a.rebuild, log)
    if a.json:
        json.dump(infos, sys.stdout, indent=1)
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
