#!/usr/bin/env python3
"""Compute the pcdedup content key (trusted.pcdedup, version 3) of a file.

Independent of the pcdedup tool: the fs-verity Merkle tree (SHA-256,
4096-byte blocks, no salt), the fs-verity file digest and the MAC are
computed here with hashlib, hmac and fcntl.ioctl, after
dedup/include/linux/pcdedup.h and docs/interface.md:

  16-byte header: u8 version (3), u8 algo (1), u8 digest_len (32),
                  u8 log_blocksize (12), u8 tree_level, u8 reserved[3],
                  le64 size
  the fs-verity file digest (what `fsverity digest FILE` prints)
  the MAC: HMAC-SHA256(secret, "pcdedup-key-v3" || header || digest ||
           u8 uuid_len || uuid || le64 inode number || le32 generation ||
           u8 domain_len || domain)
  every hash of Merkle tree level tree_level, in order

The MAC's identity is the file's (FS_IOC_GETFSUUID, st_ino,
FS_IOC_GETVERSION), or --mac-for's, in the default domain or --domain's
(the name on the filesystem's root, which this script does not read); the
secret comes from --secret-file,
else $PCDEDUP_SECRET_FILE, else /etc/pcdedup/secret (64 hex digits).
Level 0 holds the hashes of the data blocks (the last one zero-padded);
level k + 1 the hashes of the blocks formed by packing the hashes of level
k, 128 to a block (zero-padded). The first level with one hash is the root.

The corruption options build the malformed, old and unauthenticated values
the kernel must refuse. Output: the raw key on stdout, or --hex (0x..., for
setfattr -v), or --digest (the fs-verity digest in hex), or --set
(setxattr on FILE, or on --target).
"""
import argparse
import errno
import fcntl
import hashlib
import hmac
import os
import stat
import struct
import sys

BLOCK = 4096
DIGEST = 32
PER_BLOCK = BLOCK // DIGEST
MAC_CONTEXT = b"pcdedup-key-v3"
SECRET_FILE = "/etc/pcdedup/secret"
# _IOR(0x15, 0, struct fsuuid2): struct fsuuid2 is u8 len, u8 uuid[16].
FS_IOC_GETFSUUID = 0x80111500
# _IOR('v', 1, long): filesystems store a 32-bit int there.
FS_IOC_GETVERSION = 0x80087601


def sha256(data):
    return hashlib.sha256(data).digest()


def pack_level(hashes):
    """Hashes of the 4096-byte blocks formed by packing HASHES."""
    out = []
    seen = {}  # the blocks of a file's holes repeat: hash each once
    for i in range(0, len(hashes), PER_BLOCK):
        blk = b"".join(hashes[i:i + PER_BLOCK]).ljust(BLOCK, b"\0")
        h = seen.get(blk)
        if h is None:
            h = sha256(blk)
            if len(seen) < 64:
                seen[blk] = h
        out.append(h)
    return out


def data_blocks(f, size):
    """Ranges [first, last) of blocks that may hold data; the rest are holes."""
    fd, pos, out = f.fileno(), 0, []
    while pos < size:
        try:
            start = os.lseek(fd, pos, os.SEEK_DATA)
        except OSError as e:
            if e.errno == errno.ENXIO:
                break  # only holes after pos
            return [(0, -(-size // BLOCK))]  # no SEEK_DATA: read it all
        end = os.lseek(fd, start, os.SEEK_HOLE)
        out.append((start // BLOCK, -(-end // BLOCK)))
        pos = end
    return out


def merkle_levels(path):
    """(size, [level0 hashes, level1 hashes, ..., [root]])."""
    with open(path, "rb") as f:
        st = os.fstat(f.fileno())
        if stat.S_ISREG(st.st_mode) and st.st_blocks * 512 < st.st_size:
            return st.st_size, sparse_levels(f, st.st_size)
        level0 = []
        size = 0
        while True:
            blk = f.read(BLOCK)
            if not blk:
                break
            size += len(blk)
            if len(blk) < BLOCK:
                # A short read before EOF (pipes) would misalign blocks.
                rest = f.read(BLOCK - len(blk))
                while rest:
                    blk += rest
                    size += len(rest)
                    if len(blk) == BLOCK:
                        break
                    rest = f.read(BLOCK - len(blk))
            level0.append(sha256(blk.ljust(BLOCK, b"\0")))
    levels = [level0]
    while len(levels[-1]) > 1:
        levels.append(pack_level(levels[-1]))
    return size, levels


def sparse_levels(f, size):
    """merkle_levels() of a sparse regular file: holes hash as zero blocks
    without being read, so that keys of large sparse files are quick."""
    zero = sha256(bytes(BLOCK))
    level0 = [zero] * -(-size // BLOCK)
    for first, last in data_blocks(f, size):
        f.seek(first * BLOCK)
        for i in range(first, min(last, len(level0))):
            blk = f.read(BLOCK)
            level0[i] = sha256(blk.ljust(BLOCK, b"\0"))
    levels = [level0]
    while len(levels[-1]) > 1:
        levels.append(pack_level(levels[-1]))
    return levels


def verity_digest(size, root):
    """SHA-256 of struct fsverity_descriptor (256 bytes)."""
    desc = struct.pack("<BBBBIQ", 1, 1, 12, 0, 0, size)
    desc += root.ljust(64, b"\0")   # root_hash[64]
    desc += b"\0" * 32             # salt[32]
    desc += b"\0" * 144            # reserved[144]
    assert len(desc) == 256
    return sha256(desc)


def whole_sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.digest()


def read_secret(path):
    """The 32 bytes of a secret file: 64 hex digits, maybe a newline."""
    try:
        with open(path, "rb") as f:
            text = f.read(200)
    except OSError as e:
        sys.exit("mkkey: secret %s: %s" % (path, e.strerror))
    if text.endswith(b"\n"):
        text = text[:-1]
    try:
        secret = bytes.fromhex(text.decode("ascii"))
    except ValueError:
        secret = b""
    if len(text) != 64 or len(secret) != 32:
        sys.exit("mkkey: secret %s: not 64 hex digits" % path)
    return secret


def identity(path):
    """(uuid, inode number, generation) of PATH: what a key's MAC binds."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        try:
            u = fcntl.ioctl(fd, FS_IOC_GETFSUUID, bytes(17))
            uuid = u[1:1 + u[0]]
        except OSError as e:
            if e.errno != 25:   # ENOTTY: the filesystem has no UUID
                sys.exit("mkkey: FS_IOC_GETFSUUID %s: %s" % (path, e.strerror))
            uuid = b""
        try:
            gen = struct.unpack_from("<I", fcntl.ioctl(fd, FS_IOC_GETVERSION, bytes(8)))[0]
        except OSError as e:
            sys.exit("mkkey: FS_IOC_GETVERSION %s: %s" % (path, e.strerror))
        return uuid, os.fstat(fd).st_ino, gen
    finally:
        os.close(fd)


def key_mac(secret, head, ident, domain=b""):
    """The MAC of a key whose header and digest are HEAD (48 bytes), in
    DOMAIN (b"": the default domain)."""
    uuid, ino, gen = ident
    msg = MAC_CONTEXT + head + bytes([len(uuid)]) + uuid + struct.pack("<QI", ino, gen) + \
        bytes([len(domain)]) + domain
    return hmac.new(secret, msg, hashlib.sha256).digest()


def build(args):
    if args.version == 1:
        size = os.stat(args.file).st_size
        key = struct.pack("<BBBBIQ", 1, 1, DIGEST, 0, 0, size)
        key += whole_sha256(args.file)
        return key, None
    size, levels = merkle_levels(args.file)
    if size == 0:
        # fs-verity: an empty file's root hash is all zeros; there is no
        # tree level to carry (the kernel refuses size 0 anyway).
        root, levels = b"\0" * DIGEST, [[]]
    else:
        root = levels[-1][0]
    digest = verity_digest(size, root)
    root_level = len(levels) - 1
    level = args.level
    if args.level_above_root:
        level = root_level + 1
        # count(root + 1) = DIV_ROUND_UP(1, 128) = 1: the length is right
        # for that level, only the level is out of range.
        hashes = pack_level(levels[-1]) if size else [b"\0" * DIGEST]
    else:
        if level > root_level:
            sys.exit("mkkey: level %d is above the root level %d of %s"
                     % (level, root_level, args.file))
        hashes = levels[level]
    tree = bytearray(b"".join(hashes))
    if args.flip_tree_byte is not None:
        if not 0 <= args.flip_tree_byte < len(tree):
            sys.exit("mkkey: --flip-tree-byte %d outside the %d tree bytes"
                     % (args.flip_tree_byte, len(tree)))
        tree[args.flip_tree_byte] ^= 0xff
    reserved = b"\1\0\0" if args.reserved else b"\0\0\0"
    head = struct.pack("<BBBBB3sQ", args.version, 1, DIGEST, 12, level, reserved,
                       size if args.size is None else args.size) + digest
    if args.version == 2 or args.digest:
        # --digest needs no MAC: no secret, no identity.
        return head + bytes(tree), digest
    secret = read_secret(args.secret_file or os.environ.get("PCDEDUP_SECRET_FILE")
                         or SECRET_FILE)
    mac = bytearray(key_mac(secret, head, identity(args.mac_for or args.file),
                            args.domain.encode()))
    if args.bad_mac:
        mac[0] ^= 1
    return head + bytes(mac) + bytes(tree), digest


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("file")
    p.add_argument("--level", type=int, default=0,
                   help="Merkle tree level carried in the key (default 0)")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--hex", action="store_true",
                     help="print 0x<hex> (for setfattr -v)")
    out.add_argument("--digest", action="store_true",
                     help="print the fs-verity file digest in hex")
    out.add_argument("--set", action="store_true",
                     help="set the key as trusted.pcdedup of FILE, or of "
                          "--target")
    p.add_argument("--target", metavar="PATH",
                   help="with --set: the file to set the key on (the MAC "
                        "is still FILE's unless --mac-for)")
    p.add_argument("--mac-for", metavar="PATH",
                   help="make the MAC for PATH's identity (its filesystem "
                        "UUID, inode number and generation), not FILE's")
    p.add_argument("--domain", metavar="NAME", default="",
                   help="the sharing domain the MAC binds (default: the default domain)")
    p.add_argument("--secret-file", metavar="PATH",
                   help="the secret (default: $PCDEDUP_SECRET_FILE, else %s)"
                        % SECRET_FILE)
    c = p.add_argument_group("malformed, old and unauthenticated keys")
    c.add_argument("--version", type=int, choices=(1, 2, 3), default=3,
                   help="1: the first format (SHA-256 of the whole file); "
                        "2: version 3 without the MAC")
    c.add_argument("--bad-mac", action="store_true",
                   help="flip a bit of the MAC")
    c.add_argument("--truncate-bytes", type=int, default=0, metavar="N",
                   help="drop the last N bytes of the value")
    c.add_argument("--extra-bytes", type=int, default=0, metavar="N",
                   help="append N zero bytes to the value")
    c.add_argument("--flip-tree-byte", type=int, metavar="I",
                   help="invert byte I of the tree hashes")
    c.add_argument("--reserved", action="store_true",
                   help="a nonzero reserved byte")
    c.add_argument("--level-above-root", action="store_true",
                   help="tree_level one above the root level")
    c.add_argument("--size", type=int,
                   help="write SIZE into the header instead of the file's")
    args = p.parse_args()
    if args.target and not args.set:
        p.error("--target needs --set")
    if args.version != 3 and (args.bad_mac or args.mac_for):
        p.error("--bad-mac and --mac-for need a version 3 key")
    key, digest = build(args)
    if args.truncate_bytes:
        key = key[:-args.truncate_bytes]
    key += b"\0" * args.extra_bytes
    if args.digest:
        if digest is None:
            sys.exit("mkkey: --digest needs a version 2 or 3 key")
        print(digest.hex())
    elif args.hex:
        print("0x" + key.hex())
    elif args.set:
        target = args.target or args.file
        try:
            os.setxattr(target, "trusted.pcdedup", key)
        except OSError as e:
            sys.exit("mkkey: setxattr %s: %s" % (target, e.strerror))
    else:
        sys.stdout.buffer.write(key)


if __name__ == "__main__":
    main()
