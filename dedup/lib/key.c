// SPDX-License-Identifier: GPL-2.0
/* Encode, decode and validate content keys (see key.h). */
#include "key.h"

#include <assert.h>
#include <endian.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

/* The kernel reads the header at these offsets; fail the build if not. */
static_assert(sizeof(struct pcdedup_key) == 16, "pcdedup_key header is 16 bytes");
static_assert(offsetof(struct pcdedup_key, tree_level) == 4, "tree_level at offset 4");
static_assert(offsetof(struct pcdedup_key, size) == 8, "size field at offset 8");
static_assert(offsetof(struct pcdedup_key, digest) == 16, "digest at offset 16");
static_assert(KEY_HASHES_OFFSET == 80, "hashes after header, digest and MAC");
static_assert(KEY_MAX_HASHES == 2045, "a 64 KiB value holds 2045 level hashes");

uint64_t key_level_count(uint64_t size, unsigned level)
{
	uint64_t n;

	if (size == 0)
		return 0;
	n = (size - 1) / KEY_BLOCK_SIZE + 1;
	for (unsigned l = 0; l < level; l++) {
		if (n == 1)
			return 0;	/* above the root */
		n = (n - 1) / KEY_HASHES_PER_BLOCK + 1;
	}
	return n;
}

unsigned key_root_level(uint64_t size)
{
	unsigned level = 0;

	while (key_level_count(size, level) > 1)
		level++;
	return level;
}

uint64_t key_value_len(uint64_t size, unsigned level)
{
	return KEY_HASHES_OFFSET + key_level_count(size, level) * KEY_HASH_LEN;
}

uint8_t *key_encode(const struct content_key *key, size_t *len)
{
	uint64_t count = key_level_count(key->size, key->level);
	struct pcdedup_key hdr;
	uint8_t *buf;

	*len = (size_t)key_value_len(key->size, key->level);
	buf = xmalloc(*len);
	memset(&hdr, 0, sizeof(hdr));
	hdr.version = PCDEDUP_KEY_VERSION;
	hdr.algo = PCDEDUP_HASH_SHA256;
	hdr.digest_len = KEY_HASH_LEN;
	hdr.log_blocksize = PCDEDUP_LOG_BLOCKSIZE;
	hdr.tree_level = (uint8_t)key->level;
	hdr.size = htole64(key->size);
	/* memcpy, not a cast: @buf need not be aligned for the __le64 field. */
	memcpy(buf, &hdr, sizeof(hdr));
	memcpy(buf + KEY_HDR_LEN, key->digest, KEY_HASH_LEN);
	memcpy(buf + KEY_MAC_OFFSET, key->mac, KEY_MAC_LEN);
	memcpy(buf + KEY_HASHES_OFFSET, key->hashes, count * KEY_HASH_LEN);
	return buf;
}

/* The header fields that do not depend on the size; false with a reason. */
static bool header_ok(const struct pcdedup_key *hdr, char *why, size_t whylen)
{
	if (hdr->version != PCDEDUP_KEY_VERSION) {
		snprintf(why, whylen, "unknown key version %u (expected %u)",
			 hdr->version, (unsigned)PCDEDUP_KEY_VERSION);
		return false;
	}
	if (hdr->algo != PCDEDUP_HASH_SHA256) {
		snprintf(why, whylen, "unknown hash algorithm %u (expected %u, sha256)",
			 hdr->algo, (unsigned)PCDEDUP_HASH_SHA256);
		return false;
	}
	if (hdr->digest_len != KEY_HASH_LEN) {
		snprintf(why, whylen, "digest length %u does not match sha256 (%u)",
			 hdr->digest_len, (unsigned)KEY_HASH_LEN);
		return false;
	}
	if (hdr->log_blocksize != PCDEDUP_LOG_BLOCKSIZE) {
		snprintf(why, whylen, "log_blocksize %u (expected %u, 4096-byte blocks)",
			 hdr->log_blocksize, (unsigned)PCDEDUP_LOG_BLOCKSIZE);
		return false;
	}
	for (size_t i = 0; i < sizeof(hdr->reserved); i++) {
		if (hdr->reserved[i] != 0) {
			snprintf(why, whylen, "nonzero reserved byte %zu (0x%02x)",
				 offsetof(struct pcdedup_key, reserved) + i,
				 hdr->reserved[i]);
			return false;
		}
	}
	return true;
}

enum key_status key_decode(const void *buf, size_t len, struct content_key *key,
			   char *why, size_t whylen)
{
	struct pcdedup_key hdr;
	uint64_t size, want;

	if (len < sizeof(hdr)) {
		snprintf(why, whylen, "key too short: %zu bytes, header alone is %zu",
			 len, sizeof(hdr));
		return KEY_MALFORMED;
	}
	memcpy(&hdr, buf, sizeof(hdr));
	if (hdr.version == KEY_V1_VERSION || hdr.version == KEY_V2_VERSION) {
		snprintf(why, whylen, "version %u key%s, run pcdedup tag to rewrite it",
			 hdr.version, hdr.version == KEY_V2_VERSION ? " (no MAC)" : "");
		return KEY_OLD;
	}
	if (!header_ok(&hdr, why, whylen))
		return KEY_MALFORMED;
	size = le64toh(hdr.size);
	if (size == 0) {
		snprintf(why, whylen, "size 0 (empty files have no key)");
		return KEY_MALFORMED;
	}
	if (hdr.tree_level > key_root_level(size)) {
		snprintf(why, whylen, "tree level %u above the root (level %u for %llu bytes)",
			 hdr.tree_level, key_root_level(size), (unsigned long long)size);
		return KEY_MALFORMED;
	}
	if (hdr.tree_level > KEY_MAX_KEY_LEVEL) {
		snprintf(why, whylen, "tree level %u: the kernel honours levels 0 to %u only",
			 hdr.tree_level, (unsigned)KEY_MAX_KEY_LEVEL);
		return KEY_MALFORMED;
	}
	want = key_value_len(size, hdr.tree_level);
	if (len != want) {
		snprintf(why, whylen, "key is %zu bytes, expected %llu for level %u of %llu bytes",
			 len, (unsigned long long)want, hdr.tree_level,
			 (unsigned long long)size);
		return KEY_MALFORMED;
	}
	key->size = size;
	key->level = hdr.tree_level;
	memcpy(key->digest, (const uint8_t *)buf + KEY_HDR_LEN, KEY_HASH_LEN);
	memcpy(key->mac, (const uint8_t *)buf + KEY_MAC_OFFSET, KEY_MAC_LEN);
	key->hashes = (const uint8_t *)buf + KEY_HASHES_OFFSET;
	return KEY_OK;
}

void key_digest_text(const struct content_key *key, char out[KEY_TEXT_LEN])
{
	static const char hex[] = "0123456789abcdef";
	char *p = out;

	memcpy(p, "sha256:", 7);
	p += 7;
	for (size_t i = 0; i < KEY_HASH_LEN; i++) {
		*p++ = hex[key->digest[i] >> 4];
		*p++ = hex[key->digest[i] & 15];
	}
	*p = '\0';
}

bool key_equal(const struct content_key *a, const struct content_key *b)
{
	return a->size == b->size && a->level == b->level &&
	       memcmp(a->digest, b->digest, sizeof(a->digest)) == 0 &&
	       memcmp(a->mac, b->mac, sizeof(a->mac)) == 0 &&
	       memcmp(a->hashes, b->hashes,
		      key_level_count(a->size, a->level) * KEY_HASH_LEN) == 0;
}
