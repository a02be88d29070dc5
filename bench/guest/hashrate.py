#!/usr/bin/env python3
"""The guest's SHA-256 rate through the kernel's crypto API (AF_ALG "hash",
"sha256": the driver pcdedup's fills hash with too, the highest-priority
one the kernel has, named in the result with what pcdedup logged it
uses), on one CPU and on all guest CPUs at once (one process per CPU,
each pinned to its CPU).
Needs CONFIG_CRYPTO_USER_API_HASH; without it every figure is None and
"error" says why. Standard library only.
Usage: hashrate.py [--seconds S]   (prints one JSON object)
fio.py imports measure() for the verify=full cases."""
import argparse
import json
import os
import re
import socket
import subprocess
import sys
import time

# One send of this many bytes: AF_ALG maps the user pages of a send (up to 16
# pages a call), so the per-call cost is small against hashing it.
CHUNK = 1 << 20


def _open_sha256():
    alg = socket.socket(socket.AF_ALG, socket.SOCK_SEQPACKET, 0)
    alg.bind(("hash", "sha256"))
    op, _ = alg.accept()
    return alg, op


def _hash_for(seconds, buf):
    """Hash BUF over and over for SECONDS; (bytes, seconds taken)."""
    alg, op = _open_sha256()
    try:
        done, t0 = 0, time.monotonic()
        while True:
            op.sendall(buf, socket.MSG_MORE)
            done += len(buf)
            t = time.monotonic() - t0
            if t >= seconds:
                break
        op.send(b"")
        if len(op.recv(32)) != 32:
            raise RuntimeError("AF_ALG sha256: short digest")
        return done, time.monotonic() - t0
    finally:
        op.close()
        alg.close()


def _check():
    """The digest of a known input against hashlib: the socket hashes what
    we think it hashes (raises when AF_ALG or sha256 is missing)."""
    import hashlib
    data = bytes(range(256)) * 64
    alg, op = _open_sha256()
    try:
        op.sendall(data)
        got = op.recv(32)
    finally:
        op.close()
        alg.close()
    if got != hashlib.sha256(data).digest():
        raise RuntimeError("AF_ALG sha256 digest differs from hashlib's")


def _parallel(cpus, seconds, buf):
    """One child per CPU in CPUS, started together; total bytes / the
    longest child's time."""
    kids = []
    for cpu in cpus:
        r, w = os.pipe()
        go_r, go_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            rc = 0
            try:
                os.close(r)
                os.close(go_w)
                os.sched_setaffinity(0, {cpu})
                os.read(go_r, 1)
                n, t = _hash_for(seconds, buf)
                os.write(w, f"{n} {t}".encode())
            except BaseException as e:  # noqa: BLE001  (reported by the parent)
                os.write(w, f"error {type(e).__name__}: {e}".encode())
                rc = 1
            os._exit(rc)
        os.close(w)
        os.close(go_r)
        kids.append((pid, r, go_w))
    for _, _, go_w in kids:
        os.write(go_w, b"g")
    total, longest, err = 0, 0.0, None
    for pid, r, go_w in kids:
        out = b""
        while True:
            part = os.read(r, 256)
            if not part:
                break
            out += part
        os.close(r)
        os.close(go_w)
        os.waitpid(pid, 0)
        words = out.decode().split(" ", 1)
        if words[0] == "error" or len(words) != 2:
            err = out.decode() or "child wrote nothing"
            continue
        total += int(words[0])
        longest = max(longest, float(words[1]))
    if err:
        raise RuntimeError(err)
    return total, longest


def crypto_driver(name="sha256"):
    """The driver the crypto API gives NAME to (AF_ALG and the kernel's own
    users alike): the highest-priority one in /proc/crypto that passed its
    self-test; None when there is none."""
    best = None
    try:
        with open("/proc/crypto") as f:
            blocks = f.read().split("\n\n")
    except OSError:
        return None
    for block in blocks:
        fields = dict(tuple(x.strip() for x in line.split(":", 1))
                      for line in block.splitlines() if ":" in line)
        if fields.get("name") != name or fields.get("selftest", "passed") != "passed":
            continue
        prio = int(fields.get("priority", 0))
        if best is None or prio > best[0]:
            best = (prio, fields.get("driver"))
    return best and best[1]


def pcdedup_driver():
    """The implementation pcdedup logged (at its first fill check) that it
    hashes with; None before that, or when the kernel does not say."""
    try:
        log = subprocess.run(["dmesg"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    m = re.findall(r'pcdedup: sha256 using implementation "([^"]+)"', log)
    return m[-1] if m else None


def measure(seconds=3.0):
    """{"one_cpu_mib_s", "all_cpus_mib_s", "cpus", "seconds", "driver",
    "pcdedup_driver", "error"}."""
    cpus = sorted(os.sched_getaffinity(0))
    out = {"method": "AF_ALG hash sha256", "cpus": len(cpus), "seconds": seconds,
           "chunk_bytes": CHUNK, "one_cpu_mib_s": None, "all_cpus_mib_s": None,
           "driver": crypto_driver(), "pcdedup_driver": pcdedup_driver(),
           "error": None}
    try:
        _check()
        buf = os.urandom(CHUNK)
        n, t = _parallel(cpus[:1], seconds, buf)
        out["one_cpu_mib_s"] = round(n / t / (1 << 20), 2)
        n, t = _parallel(cpus, seconds, buf)
        out["all_cpus_mib_s"] = round(n / t / (1 << 20), 2)
    except (OSError, RuntimeError, AttributeError) as e:
        # AttributeError: a Python without socket.AF_ALG; OSError
        # EAFNOSUPPORT: a kernel without CONFIG_CRYPTO_USER_API_HASH.
        out["error"] = f"{type(e).__name__}: {e}"
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=3.0)
    a = ap.parse_args()
    r = measure(a.seconds)
    print(json.dumps(r))
    return 1 if r["error"] else 0


if __name__ == "__main__":
    sys.exit(main())
