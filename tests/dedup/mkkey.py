#!/usr/bin/env python3
"""Compute the pcdedup content key (trusted.pcdedup, version 2) of a file.

Independent of the pcdedup tool: the fs-verity Merkle tree (SHA-256,
4096-byte blocks, no salt) and the fs-verity file digest are computed here
with hashlib, after dedup/include/linux/pcdedup.h:

  16-byte header: u8 version (2), u8 algo (1), u8 digest_len (32),
                  u8 log_blocksize (12), u8 tree_level, u8 reserved[3],
                  le64 size
  the fs-verity file digest (what `fsverity digest FILE` prints)
  every hash of Merkle tree level tree_level, in order

Level 0 holds the hashes of the data blocks (the last one zero-padded);
level k + 1 the hashes of the blocks formed by packing the hashes of level
k, 128 to a block (zero-padded). The first level with one hash is the root.

The corruption options build the malformed values the kernel must refuse.
Output: the raw key on stdout, or --hex (0x..., for setfattr -v), or
--digest (the fs-verity digest in hex), or --set (setxattr on FILE).
"""
import argparse
import hashlib
import os
import struct
import sys

BLOCK = 4096
DIGEST = 32
PER_BLOCK = BLOCK // DIGEST


def sha256(data):
    return hashlib.sha256(data).digest()


def pack_level(hashes):
    """Hashes of the 4096-byte blocks formed by packing HASHES."""
    out = []
    for i in range(0, len(hashes), PER_BLOCK):
        blk = b"".join(hashes[i:i + PER_BLOCK])
        out.append(sha256(blk.ljust(BLOCK, b"\0")))
    return out


def merkle_levels(path):
    """(size, [level0 hashes, level1 hashes, ..., [root]])."""
    level0 = []
    size = 0
    with open(path, "rb") as f:
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
    hdr = struct.pack("<BBBBB3sQ", 2, 1, DIGEST, 12, level, reserved,
                      size if args.size is None else args.size)
    return hdr + digest + bytes(tree), digest


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
                   help="with --set: the file to set the key on")
    c = p.add_argument_group("malformed keys")
    c.add_argument("--version", type=int, choices=(1, 2), default=2,
                   help="1: the old format (SHA-256 of the whole file)")
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
    key, digest = build(args)
    if args.truncate_bytes:
        key = key[:-args.truncate_bytes]
    key += b"\0" * args.extra_bytes
    if args.digest:
        if digest is None:
            sys.exit("mkkey: --digest needs a version 2 key")
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
