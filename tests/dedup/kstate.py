#!/usr/bin/env python3
"""Read kernel state for the guest suites by name (tests/dedup/lib.sh).

  kstate.py counter NAME        pcdedup_NAME of the event counters
  kstate.py knob NAME           the sysfs file NAME of /sys/kernel/mm/pcdedup
  kstate.py share DIGEST FIELD  FIELD (size, members, openers, cached_pages)
                                of each share whose key is sha256:DIGEST,
                                one line each (none when no share has it)
  kstate.py total FIELD         the sum of FIELD over every share (0 when
                                there is none)

read one value of the JSON object `pcdedup status --json` prints (on
stdin), by its name: the tool is the one reader of the kernel's files.

  kstate.py key FILE FIELD      FIELD of FILE's trusted.pcdedup (version,
                                algo, digest_len, log_blocksize, tree_level,
                                size, digest, mac, len), from the layout of
                                dedup/include/linux/pcdedup.h
  kstate.py keyhex FILE         FILE's trusted.pcdedup in hex digits, nothing
                                when FILE has none (ENODATA); a FILE that is
                                not there, or unreadable, is an error

What is asked for and missing (a counter, a knob, the share listing, a
field, a key) is an error: the reason on stderr, exit status 1. A missing
value never reads as 0.
"""
import errno
import json
import os
import struct
import sys

SHARE_FIELDS = ("size", "members", "openers", "cached_pages")


def die(why):
    sys.stderr.write(why + "\n")
    sys.exit(1)


def text(v):
    return str(v)


def status():
    raw = sys.stdin.read()
    try:
        d = json.loads(raw)
    except ValueError as e:
        die("pcdedup status --json printed no JSON object (%s): %r" % (e, raw[:200]))
    if not isinstance(d, dict):
        die("pcdedup status --json printed %r, not an object" % raw[:200])
    return d


def counter(name):
    counters = status().get("vmstat")
    if counters is None:
        die("no event counters in pcdedup status --json (vmstat is null: "
            "/sys/kernel/mm/pcdedup/events unreadable)")
    key = "pcdedup_" + name
    if key not in counters:
        die("no counter %s in /sys/kernel/mm/pcdedup/events (pcdedup status --json)" % key)
    print(text(counters[key]))


def knob(name):
    sysfs = status().get("sysfs") or {}
    if name not in sysfs or sysfs[name] is None:
        die("no readable /sys/kernel/mm/pcdedup/%s (pcdedup status --json)" % name)
    print(text(sysfs[name]))


def share(digest, field):
    if field not in SHARE_FIELDS:
        die("no share field %r (fields: %s)" % (field, ", ".join(SHARE_FIELDS)))
    if not digest:
        die("no key digest to look the share up by")
    shares = status().get("shares")
    if shares is None:
        die("no share listing in pcdedup status --json "
            "(/sys/kernel/debug/pcdedup/shares unreadable)")
    for s in shares:
        if s.get("key") == "sha256:" + digest:
            if field not in s:
                die("share %s has no field %s" % (s.get("key"), field))
            print(text(s[field]))


def total(field):
    if field not in SHARE_FIELDS:
        die("no share field %r (fields: %s)" % (field, ", ".join(SHARE_FIELDS)))
    shares = status().get("shares")
    if shares is None:
        die("no share listing in pcdedup status --json "
            "(/sys/kernel/debug/pcdedup/shares unreadable)")
    n = 0
    for s in shares:
        if field not in s:
            die("share %s has no field %s" % (s.get("key"), field))
        n += s[field]
    print(n)


def key(path, field):
    try:
        k = os.getxattr(path, "trusted.pcdedup")
    except OSError as e:
        die("%s: no trusted.pcdedup: %s" % (path, e.strerror))
    f = {"len": len(k)}
    if len(k) >= 1 and k[0] == 1 and len(k) >= 48:
        # Version 1: a 16-byte header (version, size), the SHA-256 of the file.
        f.update(version=1, size=struct.unpack_from("<Q", k, 8)[0], digest=k[16:48].hex())
    elif len(k) >= 48:
        v, algo, dlen, lbs, level, _, _, _, size = struct.unpack_from("<8BQ", k)
        f.update(version=v, algo=algo, digest_len=dlen, log_blocksize=lbs,
                 tree_level=level, size=size, digest=k[16:48].hex())
        if v >= 3 and len(k) >= 80:
            f["mac"] = k[48:80].hex()
    if field not in f:
        die("%s: its key (%d bytes) has no field %s" % (path, len(k), field))
    print(text(f[field]))


def keyhex(path):
    try:
        k = os.getxattr(path, "trusted.pcdedup")
    except OSError as e:
        if e.errno == errno.ENODATA:
            return
        die("%s: cannot read trusted.pcdedup: %s" % (path, e.strerror))
    print(k.hex())


def main(argv):
    cmds = {"counter": (counter, 1), "knob": (knob, 1), "share": (share, 2),
            "total": (total, 1), "key": (key, 2), "keyhex": (keyhex, 1)}
    if len(argv) < 1 or argv[0] not in cmds or len(argv) - 1 != cmds[argv[0]][1]:
        die(__doc__)
    cmds[argv[0]][0](*argv[1:])


if __name__ == "__main__":
    main(sys.argv[1:])
