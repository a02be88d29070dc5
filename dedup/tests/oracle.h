/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The test oracle: a file's fs-verity Merkle tree and digest computed here
 * from first principles with OpenSSL's SHA-256 (not libfsverity, which the
 * tool uses), the key value built from it byte by byte, and the digest the
 * fsverity program prints, to check the oracle itself.
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

/* The trusted.pcdedup value for @level (malloc'd, @len bytes). */
uint8_t *oracle_value(const struct oracle *o, unsigned level, size_t *len);

/* The digest `fsverity digest --compact` prints for @path. */
bool fsverity_cli_digest(const char *path, uint8_t digest[32]);

#endif
