/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Encoding and validation of trusted.pcdedup values. The layout itself is
 * defined once, in include/linux/pcdedup.h; this module only fills it in and
 * checks it, so the tool and the kernel cannot disagree about the format.
 *
 * A version 3 value is the 16-byte header, the fs-verity file digest, the
 * MAC that binds the key to its file (mac.h makes it) and every hash of
 * one level of the file's Merkle tree (level 0: one hash per 4096-byte
 * data block; level k + 1: one hash per 128 hashes of level k).
 */
#ifndef PCDEDUP_KEY_H
#define PCDEDUP_KEY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/pcdedup.h>

#define KEY_HDR_LEN		sizeof(struct pcdedup_key)
#define KEY_HASH_LEN		PCDEDUP_SHA256_DIGEST_SIZE
#define KEY_MAC_LEN		PCDEDUP_MAC_SIZE
/* The bytes the MAC covers: the header and the digest. */
#define KEY_MACED_LEN		(KEY_HDR_LEN + KEY_HASH_LEN)
/* Where the MAC is, and where the tree level's hashes start. */
#define KEY_MAC_OFFSET		KEY_MACED_LEN
#define KEY_HASHES_OFFSET	(KEY_MAC_OFFSET + KEY_MAC_LEN)
#define KEY_BLOCK_SIZE		(1u << PCDEDUP_LOG_BLOCKSIZE)
/* Hashes packed into one Merkle tree block. */
#define KEY_HASHES_PER_BLOCK	(KEY_BLOCK_SIZE / KEY_HASH_LEN)
/* Highest root level any 64-bit size can have (2^52 blocks, 128 a block). */
#define KEY_MAX_LEVEL		8
/* Highest level a key may carry: the kernel refuses the others. */
#define KEY_MAX_KEY_LEVEL	PCDEDUP_MAX_TREE_LEVEL
/* The VFS limit on one attribute value (XATTR_SIZE_MAX): no key is longer. */
#define KEY_MAX_LEN		65536
/* Hashes of one level that still fit in KEY_MAX_LEN with header, digest, MAC. */
#define KEY_MAX_HASHES		((KEY_MAX_LEN - KEY_HASHES_OFFSET) / KEY_HASH_LEN)
/* The old formats: version 1 (a SHA-256 of the whole file), version 2 (no MAC). */
#define KEY_V1_VERSION		1
#define KEY_V1_LEN		(KEY_HDR_LEN + KEY_HASH_LEN)
#define KEY_V2_VERSION		2
/* "sha256:" plus two hex digits per byte plus NUL. */
#define KEY_TEXT_LEN		(7 + 2 * KEY_HASH_LEN + 1)

/*
 * A key in host form. @hashes points at count(@level) hashes of
 * KEY_HASH_LEN bytes, owned by whoever filled the key in (the decoded
 * attribute value, or the hashed tree). @mac is whatever the value holds
 * or is to hold: key_encode() writes it as it is, key_decode() reads it
 * and checks nothing about it (that needs the file and the secret: mac.h).
 */
struct content_key {
	uint64_t size;
	unsigned level;
	uint8_t digest[KEY_HASH_LEN];	/* the fs-verity file digest */
	uint8_t mac[KEY_MAC_LEN];
	const uint8_t *hashes;
};

enum key_status {
	KEY_OK,			/* a well-formed version 3 key (MAC unchecked) */
	KEY_OLD,		/* a version 1 or 2 key: no longer accepted */
	KEY_MALFORMED,		/* anything else, a tree level above 2 included */
};

/* Hashes on tree @level of a file of @size bytes; 0 above its root (or size 0). */
uint64_t key_level_count(uint64_t size, unsigned level);

/* Level of the root hash (the first level with one hash); @size > 0. */
unsigned key_root_level(uint64_t size);

/* Length of the value for @size at @level, which must exist. */
uint64_t key_value_len(uint64_t size, unsigned level);

/*
 * Write the attribute value for @key into a new buffer (free() it); its
 * length goes to @len. @key->size must be > 0 and @key->level exist.
 */
uint8_t *key_encode(const struct content_key *key, size_t *len);

/*
 * Parse an attribute value. KEY_OK fills @key (its hashes point into @buf);
 * KEY_OLD and KEY_MALFORMED put a one-line reason in @why. A level above
 * KEY_MAX_KEY_LEVEL is malformed, as the kernel counts it.
 */
enum key_status key_decode(const void *buf, size_t len, struct content_key *key,
			   char *why, size_t whylen);

/* "sha256:<hex>" form of the digest, as the kernel's share listing shows it. */
void key_digest_text(const struct content_key *key, char out[KEY_TEXT_LEN]);

/* Same size, digest, MAC, level and level hashes. */
bool key_equal(const struct content_key *a, const struct content_key *b);

#endif
