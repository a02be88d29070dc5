// SPDX-License-Identifier: GPL-2.0
/* Key encoding and decoding: round trips, byte layout, every malformed form. */
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "key.h"

static void fill_digest(struct content_key *k, unsigned seed)
{
	for (size_t i = 0; i < sizeof(k->digest); i++)
		k->digest[i] = (uint8_t)(seed * 31 + i * 7);
}

static void test_roundtrip(void)
{
	static const uint64_t sizes[] = { 0, 1, 4095, 4096, 1ull << 32,
					  (1ull << 40) + 3, UINT64_MAX };
	char why[256];

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct content_key in = { .size = sizes[i] }, out;
		uint8_t buf[KEY_SHA256_LEN];
		char name[64];
		size_t len;

		fill_digest(&in, (unsigned)i);
		len = key_encode(&in, buf);
		snprintf(name, sizeof(name), "key-roundtrip-size-%llu",
			 (unsigned long long)sizes[i]);
		memset(&out, 0xaa, sizeof(out));
		if (len != 48)
			fail(name, "encoded length %zu, want 48", len);
		else if (!key_decode(buf, len, &out, why, sizeof(why)))
			fail(name, "decode refused its own encoding: %s", why);
		else
			expect(name, key_equal(&in, &out), "decoded key differs");
	}
}

/* The header bytes as docs/interface.md lists them, written out by hand. */
static void test_layout(void)
{
	struct content_key k = { .size = 0x0102030405060708ull };
	static const uint8_t want_hdr[16] = {
		1, 1, 32, 0, 0, 0, 0, 0,			/* version algo len flags reserved */
		0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01,	/* le64 size */
	};
	uint8_t buf[KEY_SHA256_LEN];

	fill_digest(&k, 5);
	key_encode(&k, buf);
	expect("key-layout-header", memcmp(buf, want_hdr, 16) == 0,
	       "header bytes differ from the documented layout");
	expect("key-layout-digest", memcmp(buf + 16, k.digest, 32) == 0,
	       "digest not stored verbatim after the header");
}

static void test_digest_text(void)
{
	struct content_key k = { .size = 1 };
	char text[KEY_TEXT_LEN], want[KEY_TEXT_LEN];

	fill_digest(&k, 9);
	strcpy(want, "sha256:");
	for (size_t i = 0; i < 32; i++)
		sprintf(want + 7 + 2 * i, "%02x", k.digest[i]);
	key_digest_text(&k, text);
	expect("key-digest-text", strcmp(text, want) == 0, "got '%s', want '%s'",
	       text, want);
}

/* Decode @buf (@len bytes); it must be refused with a reason naming @word. */
static void expect_malformed(const char *name, const uint8_t *buf, size_t len,
			     const char *word)
{
	struct content_key k;
	char why[256] = "";

	if (key_decode(buf, len, &k, why, sizeof(why)))
		fail(name, "malformed key accepted");
	else
		expect(name, strstr(why, word) != NULL,
		       "reason '%s' does not mention '%s'", why, word);
}

static void test_malformed(void)
{
	struct content_key k = { .size = 12345 };
	uint8_t good[KEY_SHA256_LEN], buf[KEY_SHA256_LEN + 16];
	char name[64];

	fill_digest(&k, 1);
	key_encode(&k, good);

	expect_malformed("key-malformed-empty", good, 0, "too short");
	expect_malformed("key-malformed-short-15", good, 15, "too short");
	expect_malformed("key-malformed-header-only", good, 16, "expected 48");
	expect_malformed("key-malformed-short-47", good, 47, "expected 48");
	memcpy(buf, good, sizeof(good));
	buf[48] = 0;
	expect_malformed("key-malformed-long-49", buf, 49, "expected 48");
	memset(buf + 48, 0, 16);
	expect_malformed("key-malformed-long-64", buf, 64, "expected 48");

	static const uint8_t versions[] = { 0, 2, 255 };
	for (size_t i = 0; i < sizeof(versions); i++) {
		memcpy(buf, good, sizeof(good));
		buf[0] = versions[i];
		snprintf(name, sizeof(name), "key-malformed-version-%u", versions[i]);
		expect_malformed(name, buf, 48, "version");
	}
	static const uint8_t algos[] = { 0, 2, 255 };
	for (size_t i = 0; i < sizeof(algos); i++) {
		memcpy(buf, good, sizeof(good));
		buf[1] = algos[i];
		snprintf(name, sizeof(name), "key-malformed-algo-%u", algos[i]);
		expect_malformed(name, buf, 48, "algorithm");
	}
	static const uint8_t lens[] = { 0, 31, 33, 64 };
	for (size_t i = 0; i < sizeof(lens); i++) {
		memcpy(buf, good, sizeof(good));
		buf[2] = lens[i];
		snprintf(name, sizeof(name), "key-malformed-digest-len-%u", lens[i]);
		/* Even with a total length that fits the wrong digest_len. */
		expect_malformed(name, buf, 16 + (lens[i] <= 32 ? lens[i] : 32u),
				 "digest length");
	}
	static const uint8_t flags[] = { 1, 0x80 };
	for (size_t i = 0; i < sizeof(flags); i++) {
		memcpy(buf, good, sizeof(good));
		buf[3] = flags[i];
		snprintf(name, sizeof(name), "key-malformed-flags-0x%02x", flags[i]);
		expect_malformed(name, buf, 48, "flags");
	}
	for (int byte = 4; byte < 8; byte++) {
		memcpy(buf, good, sizeof(good));
		buf[byte] = 1;
		snprintf(name, sizeof(name), "key-malformed-reserved-byte-%d", byte);
		expect_malformed(name, buf, 48, "reserved");
	}
}

int main(void)
{
	test_roundtrip();
	test_layout();
	test_digest_text();
	test_malformed();
	return harness_exit();
}
