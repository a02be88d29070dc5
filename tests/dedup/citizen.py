#!/usr/bin/env python3
"""Helper of tests/dedup/citizen.sh: one process that opens FILE and runs STEPs.

citizen.py FILE [--old OLD] [--new NEW] STEP...
  open        open FILE read-only
  read        read it all through the fd
  map         mmap the whole file MAP_PRIVATE, PROT_READ
  touch[:N]   touch every page of the mapping (the first N pages)
  closefd     close the fd (a mapping lives on)
  dontneed    posix_fadvise(DONTNEED) on the whole file
  lease       F_SETLEASE F_WRLCK on the fd, then F_UNLCK: "lease=0|ERRNO"
  write:DATA  open(FILE, O_WRONLY), pwrite DATA's bytes at 0: "write=0|ERRNO"
  wait:NAME   create NAME.ready, wait for NAME.go
  mapcheck    classify each page of the mapping, read through /proc/self/mem
              (a fault that fails is EIO there, not SIGBUS), against the
              bytes of OLD and NEW: "map old=N new=N err=N other=N"
  readcheck   the same for pread through the fd: "read old=N ..."
"""
import ctypes
import errno
import fcntl
import os
import sys
import time

PAGE = 4096
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                      ctypes.c_int, ctypes.c_int, ctypes.c_long]


def ename(e):
    return errno.errorcode.get(e.errno, str(e.errno))


def classify(what, get, size, old, new):
    n = {"old": 0, "new": 0, "err": 0, "other": 0}
    for off in range(0, size, PAGE):
        try:
            b = get(off, min(PAGE, size - off))
        except OSError:
            n["err"] += 1
            continue
        if b == old[off:off + len(b)]:
            n["old"] += 1
        elif new is not None and b == new[off:off + len(b)]:
            n["new"] += 1
        else:
            n["other"] += 1
    print(what, " ".join("%s=%d" % kv for kv in n.items()), flush=True)


def main(args):
    path = args.pop(0)
    old = new = None
    while args and args[0] in ("--old", "--new"):
        opt, f = args.pop(0), args.pop(0)
        with open(f, "rb") as fh:
            data = fh.read()
        old, new = (data, new) if opt == "--old" else (old, data)
    fd, addr, size = -1, None, os.stat(path).st_size
    for step in args:
        name, _, arg = step.partition(":")
        if name == "open":
            fd = os.open(path, os.O_RDONLY)
        elif name == "read":
            off = 0
            while True:
                b = os.pread(fd, 1 << 20, off)
                if not b:
                    break
                off += len(b)
        elif name == "map":
            addr = libc.mmap(None, size, 1, 2, fd, 0)  # PROT_READ, MAP_PRIVATE
            if addr in (None, ctypes.c_void_p(-1).value):
                sys.exit("mmap: " + os.strerror(ctypes.get_errno()))
        elif name == "touch":
            pages = int(arg) if arg else (size + PAGE - 1) // PAGE
            for off in range(0, pages * PAGE, PAGE):
                ctypes.string_at(addr + off, 1)
        elif name == "closefd":
            os.close(fd)
        elif name == "dontneed":
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        elif name == "lease":
            try:
                fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_WRLCK)
                fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)
                print("lease=0", flush=True)
            except OSError as e:
                print("lease=" + ename(e), flush=True)
        elif name == "write":
            with open(arg, "rb") as fh:
                data = fh.read()
            try:
                wfd = os.open(path, os.O_WRONLY)
                try:
                    if os.pwrite(wfd, data, 0) != len(data):
                        sys.exit("short write")
                finally:
                    os.close(wfd)
                print("write=0", flush=True)
            except OSError as e:
                print("write=" + ename(e), flush=True)
        elif name == "wait":
            open(arg + ".ready", "w").close()
            while not os.path.exists(arg + ".go"):
                time.sleep(0.05)
        elif name == "mapcheck":
            mem = os.open("/proc/self/mem", os.O_RDONLY)
            classify("map", lambda o, n: os.pread(mem, n, addr + o), size, old, new)
            os.close(mem)
        elif name == "readcheck":
            classify("read", lambda o, n: os.pread(fd, n, o), size, old, new)
        else:
            sys.exit("unknown step " + step)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
