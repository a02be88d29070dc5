/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The test oracle: a file's fs-verity Merkle tree and digest computed here
 * from first principles with OpenSSL's SHA-256 (not libfsverity, which the
 * tool uses), the key value built from it byte by byte, its MAC with
 * OpenSSL's one-shot HMAC() over the bytes docs/interface.md lists (not
 * the tool's EVP_MAC code) and the file's identity read here, and the
 * digest the fsverity program prints, to check the oracle itself.
 */
#ifndef PCDEDUP_TEST_ORACLE_H
#define PCDEDUP_TEST_ORACLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ORACLE_LEVELS 16

struct oracle {
	uint64_t size;
	unsigned root_level;
	uint64_t count[ORACLE_LEVELS];	/* hashes on each level */
	uint8_t *level[ORACLE_LEVELS];	/* 32 bytes per hash */
	uint8_t digest[32];		/* SHA-256 of the fs-verity descriptor */
};

/* Build the tree of the file @path (size > 0); false if unreadable. */
bool oracle_build(const char *path, struct oracle *o);
void oracle_free(struct oracle *o);

/* What a key's MAC binds: the file's filesystem UUID, inode and generation. */
struct oracle_id {
	uint8_t uuid_len;
	uint8_t uuid[16];
	uint64_t ino;
	uint32_t gen;
	char domain[65];	/* its filesystem's domain name; "": the default */
};

/*
 * The identity of @path, from FS_IOC_GETFSUUID, stat and FS_IOC_GETVERSION,
 * in the default domain.
 */
bool oracle_identity(const char *path, struct oracle_id *id);

/*
 * The key MAC: HMAC-SHA256(@secret, "pcdedup-key-v3" || @head (the 48
 * bytes of header and digest) || uuid_len || uuid || le64 ino || le32 gen
 * || domain_len || domain).
 */
void oracle_key_mac(const uint8_t secret[32], const uint8_t head[48],
		    const struct oracle_id *id, uint8_t mac[32]);

/* The domain MAC: HMAC-SHA256(@secret, "pcdedup-domain-v1" || uuid_len || uuid || name). */
void oracle_domain_mac(const uint8_t secret[32], uint8_t uuid_len, const uint8_t *uuid,
		       const char *name, uint8_t mac[32]);

/*
 * The trusted.pcdedup value for @level (malloc'd, @len bytes), its MAC
 * made with @secret for @id.
 */
uint8_t *oracle_value(const struct oracle *o, unsigned level, const uint8_t secret[32],
		      const struct oracle_id *id, size_t *len);

/* The digest `fsverity digest --compact` prints for @path. */
bool fsverity_cli_digest(const char *path, uint8_t digest[32]);

#endif
