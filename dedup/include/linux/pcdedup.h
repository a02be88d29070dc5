/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * pcdedup: content keys for page-cache sharing between identical files.
 *
 * This header is the single definition of the key format; the pcdedup
 * user tool builds against a copy of it that a test keeps identical.
 *
 * A key names a file's content by its fs-verity file digest (SHA-256,
 * 4096-byte blocks, no salt: what `fsverity digest FILE` prints) and
 * carries one level of the file's fs-verity Merkle tree, so that the
 * kernel can check every block it caches against the digest without
 * reading the rest of the file. It also carries a MAC made with a secret
 * only the host knows (the kernel holds a copy), which binds it to the
 * one file it was made for: a key copied onto another file, carried in by
 * an image or made without the secret is never honoured.
 *
 * Merkle tree levels are numbered from the data up: the hashes of level 0
 * are the hashes of the file's 4096-byte data blocks (the last one
 * zero-padded); the hashes of level k + 1 are the hashes of the 4096-byte
 * blocks formed by packing the hashes of level k, 128 to a block (the
 * last block zero-padded). A file of n > 0 data blocks has n hashes on
 * level 0 and DIV_ROUND_UP(count(k), 128) on level k + 1; the first level
 * with a single hash holds the root hash. The digest is the SHA-256 of
 * the fs-verity descriptor (version 1, hash algorithm 1, log_blocksize
 * 12, no salt, data_size = @size, the root hash).
 */
#ifndef _UAPI_LINUX_PCDEDUP_H
#define _UAPI_LINUX_PCDEDUP_H

#include <linux/types.h>

/* Extended attribute that holds the content key of a regular file. */
#define PCDEDUP_XATTR_NAME	"trusted.pcdedup"

/*
 * The secret the MACs are made with: PCDEDUP_SECRET_SIZE bytes, written to
 * /sys/kernel/mm/pcdedup/secret as 2 * PCDEDUP_SECRET_SIZE hex digits. A
 * MAC is HMAC-SHA256 with it (PCDEDUP_MAC_SIZE bytes); each kind of MAC
 * starts with its own context string (no NUL), so that one can never be
 * taken for the other.
 */
#define PCDEDUP_SECRET_SIZE		32
#define PCDEDUP_MAC_SIZE		32
#define PCDEDUP_KEY_MAC_CONTEXT		"pcdedup-key-v3"
#define PCDEDUP_DOMAIN_MAC_CONTEXT	"pcdedup-domain-v1"

/*
 * The sharing domain of a filesystem, on its root directory: a name of 1
 * to PCDEDUP_DOMAIN_MAX bytes (no NUL) followed by its MAC,
 *
 *	HMAC-SHA256(secret, PCDEDUP_DOMAIN_MAC_CONTEXT || uuid_len (u8) ||
 *		    uuid (uuid_len bytes) || name)
 *
 * where uuid is the filesystem's UUID as FS_IOC_GETFSUUID returns it
 * (sb->s_uuid, sb->s_uuid_len bytes). Files share only with files of
 * filesystems in the same domain; without the attribute a filesystem is in
 * the default domain; PCDEDUP_DOMAIN_NONE, or a MAC that is not right,
 * keeps its files private.
 */
#define PCDEDUP_DOMAIN_XATTR_NAME	"trusted.pcdedup.domain"
#define PCDEDUP_DOMAIN_MAX		64
#define PCDEDUP_DOMAIN_NONE		"none"

/*
 * Key format version. Versions 1 (a SHA-256 of the whole file, no tree)
 * and 2 (version 3 without the MAC) are no longer accepted: the kernel
 * counts such keys in pcdedup_key_old and never shares the file;
 * `pcdedup tag` rewrites them.
 */
#define PCDEDUP_KEY_VERSION	3

/*
 * The highest tree level a key may carry: a granule (what the kernel
 * hashes at once) of at most 64 MiB, whatever the key says. A key of a
 * higher level is malformed (pcdedup_key_invalid).
 */
#define PCDEDUP_MAX_TREE_LEVEL	2

/* Hash algorithms a key may name; the values are fs-verity's. */
enum pcdedup_hash_algo {
	PCDEDUP_HASH_SHA256 = 1,
};

#define PCDEDUP_SHA256_DIGEST_SIZE	32
#define PCDEDUP_MAX_DIGEST_SIZE		64

/* Block size of the Merkle tree (and of the data blocks it covers). */
#define PCDEDUP_LOG_BLOCKSIZE		12

/**
 * struct pcdedup_key - value of the trusted.pcdedup extended attribute
 * @version: format version, %PCDEDUP_KEY_VERSION
 * @algo: hash algorithm of the digest and the tree, enum pcdedup_hash_algo
 * @digest_len: length of one hash in bytes; must match @algo
 * @log_blocksize: log2 of the Merkle tree block size, %PCDEDUP_LOG_BLOCKSIZE
 * @tree_level: level of the Merkle tree whose hashes follow the digest
 * @reserved: must be zero
 * @size: size in bytes of the content, little endian; must be > 0
 * @digest: the fs-verity file digest (@digest_len bytes), followed by the
 *	    MAC (PCDEDUP_MAC_SIZE bytes), followed by every hash of level
 *	    @tree_level in order (count(@tree_level) * @digest_len bytes)
 *
 * The attribute value is exactly sizeof(struct pcdedup_key) +
 * PCDEDUP_MAC_SIZE + (1 + count(@tree_level)) * @digest_len bytes long,
 * and @tree_level is at most the level of the root hash and at most
 * PCDEDUP_MAX_TREE_LEVEL. A key only matches a file whose size equals
 * @size. A lower @tree_level lets the kernel check smaller pieces (level
 * 0: each 4 KiB block on its own; level 1: 512 KiB at a time) at the
 * price of a longer attribute.
 *
 * The MAC binds the key to the inode it was made for and to the sharing
 * domain of its filesystem:
 *
 *	HMAC-SHA256(secret, PCDEDUP_KEY_MAC_CONTEXT ||
 *		    the first sizeof(struct pcdedup_key) + @digest_len bytes
 *		    of the value (the header and the digest) ||
 *		    uuid_len (u8) || uuid (uuid_len bytes) ||
 *		    inode number (__le64) || inode generation (__le32) ||
 *		    domain_len (u8) || domain (domain_len bytes))
 *
 * where uuid is the filesystem's UUID as FS_IOC_GETFSUUID returns it
 * (sb->s_uuid, sb->s_uuid_len bytes), the inode number is i_ino (st_ino)
 * and the generation i_generation (what FS_IOC_GETVERSION returns), and
 * domain the name in PCDEDUP_DOMAIN_XATTR_NAME on the filesystem's root
 * (domain_len 0 without the attribute: the default domain). A key made in
 * one domain is not honoured in another, nor after its filesystem's domain
 * attribute is removed: a filesystem's files cannot leave its domain. The
 * tree level's hashes are not in the MAC: the kernel checks that they
 * hash up to the digest, which is. A key whose MAC is not right, or any
 * key while no secret is loaded, is counted in pcdedup_key_unauthenticated
 * and its file is opened privately.
 */
struct pcdedup_key {
	__u8	version;
	__u8	algo;
	__u8	digest_len;
	__u8	log_blocksize;
	__u8	tree_level;
	__u8	reserved[3];
	__le64	size;
	__u8	digest[];
};

#endif /* _UAPI_LINUX_PCDEDUP_H */
