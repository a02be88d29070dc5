/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Encoding and validation of trusted.pcdedup values. The layout itself is
 * defined once, in include/linux/pcdedup.h; this module only fills it in and
 * checks it, so the tool and the kernel cannot disagree about the format.
 */
#ifndef PCDEDUP_KEY_H
#define PCDEDUP_KEY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/pcdedup.h>

/* Header plus a SHA-256 digest: the only well-formed length today. */
#define KEY_SHA256_LEN	(sizeof(struct pcdedup_key) + PCDEDUP_SHA256_DIGEST_SIZE)
/* Room for any value a key could have, to read an attribute in one call. */
#define KEY_MAX_LEN	(sizeof(struct pcdedup_key) + PCDEDUP_MAX_DIGEST_SIZE)
/* "sha256:" plus two hex digits per byte plus NUL. */
#define KEY_TEXT_LEN	(7 + 2 * PCDEDUP_SHA256_DIGEST_SIZE + 1)

/* A key in host form, after decoding and validation. */
struct content_key {
	uint64_t size;
	uint8_t digest[PCDEDUP_SHA256_DIGEST_SIZE];
};

/* Write the attribute value for @key into @buf; returns its length. */
size_t key_encode(const struct content_key *key, uint8_t buf[KEY_SHA256_LEN]);

/*
 * Parse an attribute value. On success fill @key and return true; on a
 * malformed value return false and put a one-line reason in @why.
 */
bool key_decode(const void *buf, size_t len, struct content_key *key,
		char *why, size_t whylen);

/* "sha256:<hex>" form of the digest, as the kernel's share listing shows it. */
void key_digest_text(const struct content_key *key, char out[KEY_TEXT_LEN]);

bool key_equal(const struct content_key *a, const struct content_key *b);

#endif
