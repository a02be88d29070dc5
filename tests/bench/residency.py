#!/usr/bin/env python3
"""Which files of one unpacked image are in the page cache, judged against
another image's contents by the images' own file lists (bench/images.py
files.tsv: path, type, size, SHA-256).

  residency.py read ROOT                 read every regular file under ROOT once
  residency.py check OLDER.tsv NEWER.tsv ROOT MODE
      for every non-empty regular file of NEWER (unpacked at ROOT): its
      pages in the page cache (mincore(2) on a fresh mapping, before any is
      touched). MODE shared: a file whose content OLDER has must be cached
      whole, any other not at all; MODE none: no file may have a page cached.
      Prints the counts; the mismatches (at most 10) on stderr; exit 1 on one.
  residency.py bytes NEWER.tsv OLDER.tsv ROOT N
      the N largest files of NEWER whose content OLDER has: their SHA-256
      read through ROOT must be the list's; exit 1 otherwise."""
import csv
import ctypes
import hashlib
import mmap
import os
import sys

libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                      ctypes.c_int, ctypes.c_long]
libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
PAGE = mmap.PAGESIZE


def files(tsv):
    with open(tsv, newline="") as f:
        return [r for r in csv.DictReader(f, delimiter="\t")
                if r["type"] == "f" and int(r["size"]) > 0]


def resident(path, size):
    """Pages of PATH in the page cache (mincore), without touching any."""
    fd = os.open(path, os.O_RDONLY)
    try:
        addr = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
        if addr in (None, ctypes.c_void_p(-1).value):
            raise OSError(ctypes.get_errno(), f"mmap {path}")
        try:
            n = (size + PAGE - 1) // PAGE
            vec = ctypes.create_string_buffer(n)
            if libc.mincore(addr, size, vec) != 0:
                raise OSError(ctypes.get_errno(), f"mincore {path}")
            return sum(b & 1 for b in vec.raw), n
        finally:
            libc.munmap(addr, size)
    finally:
        os.close(fd)


def read_all(root):
    n = 0
    for d, _, names in os.walk(root):
        for name in names:
            p = os.path.join(d, name)
            if os.path.isfile(p) and not os.path.islink(p):
                with open(p, "rb") as f:
                    while f.read(1 << 20):
                        pass
                n += 1
    print(f"read {n} files")
    return 0


def check(older_tsv, newer_tsv, root, mode):
    older = {r["sha256"] for r in files(older_tsv)}
    bad, counts = [], {"same": 0, "differ": 0}
    for r in files(newer_tsv):
        same = r["sha256"] in older
        counts["same" if same else "differ"] += 1
        got, pages = resident(os.path.join(root, r["path"]), int(r["size"]))
        want = pages if same and mode == "shared" else 0
        if got != want:
            bad.append(f"{r['path']}: {got} of {pages} pages cached, want {want} "
                       f"({'content in the older image' if same else 'content of its own'})")
    print(f"{counts['same']} files whose content the older image has, "
          f"{counts['differ']} of their own, {len(bad)} wrong")
    for line in bad[:10]:
        print(line, file=sys.stderr)
    return 1 if bad else 0


def right_bytes(newer_tsv, older_tsv, root, n):
    older = {r["sha256"] for r in files(older_tsv)}
    same = sorted((r for r in files(newer_tsv) if r["sha256"] in older),
                  key=lambda r: -int(r["size"]))[:n]
    bad = 0
    for r in same:
        h = hashlib.sha256()
        with open(os.path.join(root, r["path"]), "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        if h.hexdigest() != r["sha256"]:
            print(f"{r['path']}: read {h.hexdigest()}, the image has {r['sha256']}",
                  file=sys.stderr)
            bad += 1
    print(f"{len(same)} files read, {bad} wrong")
    return 1 if bad or not same else 0


def main(argv):
    if argv[:1] == ["read"] and len(argv) == 2:
        return read_all(argv[1])
    if argv[:1] == ["check"] and len(argv) == 5 and argv[4] in ("shared", "none"):
        return check(*argv[1:])
    if argv[:1] == ["bytes"] and len(argv) == 5:
        return right_bytes(argv[1], argv[2], argv[3], int(argv[4]))
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
