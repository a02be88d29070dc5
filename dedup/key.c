// SPDX-License-Identifier: GPL-2.0
/* Encode, decode and validate content keys (see key.h). */
#include "key.h"

#include <assert.h>
#include <endian.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* The kernel reads the header at these offsets; fail the build if not. */
static_assert(sizeof(struct pcdedup_key) == 16, "pcdedup_key header is 16 bytes");
static_assert(offsetof(struct pcdedup_key, size) == 8, "size field at offset 8");
static_assert(offsetof(struct pcdedup_key, digest) == 16, "digest at offset 16");

size_t key_encode(const struct content_key *key, uint8_t buf[KEY_SHA256_LEN])
{
	struct pcdedup_key hdr;

	memset(&hdr, 0, sizeof(hdr));
	hdr.version = PCDEDUP_KEY_VERSION;
	hdr.algo = PCDEDUP_HASH_SHA256;
	hdr.digest_len = PCDEDUP_SHA256_DIGEST_SIZE;
	hdr.size = htole64(key->size);
	/* memcpy, not a cast: @buf need not be aligned for the __le64 field. */
	memcpy(buf, &hdr, sizeof(hdr));
	memcpy(buf + sizeof(hdr), key->digest, PCDEDUP_SHA256_DIGEST_SIZE);
	return KEY_SHA256_LEN;
}

bool key_decode(const void *buf, size_t len, struct content_key *key,
		char *why, size_t whylen)
{
	struct pcdedup_key hdr;

	if (len < sizeof(hdr)) {
		snprintf(why, whylen, "key too short: %zu bytes, header alone is %zu",
			 len, sizeof(hdr));
		return false;
	}
	memcpy(&hdr, buf, sizeof(hdr));
	if (hdr.version != PCDEDUP_KEY_VERSION) {
		snprintf(why, whylen, "unknown key version %u (expected %u)",
			 hdr.version, (unsigned)PCDEDUP_KEY_VERSION);
		return false;
	}
	if (hdr.algo != PCDEDUP_HASH_SHA256) {
		snprintf(why, whylen, "unknown hash algorithm %u (expected %u, sha256)",
			 hdr.algo, (unsigned)PCDEDUP_HASH_SHA256);
		return false;
	}
	if (hdr.digest_len != PCDEDUP_SHA256_DIGEST_SIZE) {
		snprintf(why, whylen, "digest length %u does not match sha256 (%u)",
			 hdr.digest_len, (unsigned)PCDEDUP_SHA256_DIGEST_SIZE);
		return false;
	}
	if (hdr.flags != 0) {
		snprintf(why, whylen, "nonzero flags 0x%02x", hdr.flags);
		return false;
	}
	if (hdr.reserved != 0) {
		snprintf(why, whylen, "nonzero reserved field 0x%08x",
			 le32toh(hdr.reserved));
		return false;
	}
	if (len != sizeof(hdr) + hdr.digest_len) {
		snprintf(why, whylen, "key is %zu bytes, expected %zu", len,
			 sizeof(hdr) + hdr.digest_len);
		return false;
	}
	key->size = le64toh(hdr.size);
	memcpy(key->digest, (const uint8_t *)buf + sizeof(hdr),
	       PCDEDUP_SHA256_DIGEST_SIZE);
	return true;
}

void key_digest_text(const struct content_key *key, char out[KEY_TEXT_LEN])
{
	static const char hex[] = "0123456789abcdef";
	char *p = out;

	memcpy(p, "sha256:", 7);
	p += 7;
	for (size_t i = 0; i < PCDEDUP_SHA256_DIGEST_SIZE; i++) {
		*p++ = hex[key->digest[i] >> 4];
		*p++ = hex[key->digest[i] & 15];
	}
	*p = '\0';
}

bool key_equal(const struct content_key *a, const struct content_key *b)
{
	return a->size == b->size &&
	       memcmp(a->digest, b->digest, sizeof(a->digest)) == 0;
}
