// SPDX-License-Identifier: GPL-2.0
/*
 * Key encoding and decoding: level counts, round trips, byte layout, old
 * (version 1) keys and every malformed form.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "key.h"

#define MIB (1024ull * 1024)

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed * 31 + i * 7);
}

/* Level counts by hand: 4096-byte blocks, 128 hashes a tree block. */
static void test_counts(void)
{
	static const struct { uint64_t size; unsigned root; uint64_t c0, c1, c2; } cases[] = {
		{ 0, 0, 0, 0, 0 },
		{ 1, 0, 1, 0, 0 },
		{ 4096, 0, 1, 0, 0 },
		{ 4097, 1, 2, 1, 0 },
		{ 128 * 4096, 1, 128, 1, 0 },
		{ 128 * 4096 + 1, 2, 129, 2, 1 },
		{ 8 * MIB, 2, 2048, 16, 1 },
		{ 128 * 128 * 4096, 2, 16384, 128, 1 },
		{ 128 * 128 * 4096 + 1, 3, 16385, 129, 2 },
	};
	char name[64];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t s = cases[i].size;

		snprintf(name, sizeof(name), "key-level-counts-%llu", (unsigned long long)s);
		expect(name, key_level_count(s, 0) == cases[i].c0 &&
		       key_level_count(s, 1) == cases[i].c1 &&
		       key_level_count(s, 2) == cases[i].c2 &&
		       key_level_count(s, cases[i].root + 1) == 0 &&
		       (s == 0 || key_root_level(s) == cases[i].root),
		       "counts %llu %llu %llu, root %u", (unsigned long long)key_level_count(s, 0),
		       (unsigned long long)key_level_count(s, 1),
		       (unsigned long long)key_level_count(s, 2), key_root_level(s));
	}
	expect("key-level-max-size", key_root_level(UINT64_MAX) == KEY_MAX_LEVEL,
	       "root of the largest size is level %u", key_root_level(UINT64_MAX));
	/*
	 * The documented limits: 64 KiB holds level 0 up to 2046 blocks (8 MiB
	 * less 8 KiB), level 1 up to 2046 * 128 blocks (1 GiB less 1 MiB).
	 */
	expect("key-len-64k-limits", key_value_len(2046 * 4096, 0) <= KEY_MAX_LEN &&
	       key_value_len(2046 * 4096 + 1, 0) > KEY_MAX_LEN &&
	       key_value_len(2046ull * 128 * 4096, 1) <= KEY_MAX_LEN &&
	       key_value_len(2046ull * 128 * 4096 + 1, 1) > KEY_MAX_LEN,
	       "length rule disagrees with the 8 MiB / 1 GiB limits");
}

static void test_roundtrip(void)
{
	static const struct { uint64_t size; unsigned level; } cases[] = {
		{ 1, 0 }, { 4095, 0 }, { 4096, 0 }, { 4097, 0 }, { 4097, 1 },
		{ 100000, 0 }, { 8 * MIB, 0 }, { 8 * MIB, 1 }, { 8 * MIB, 2 },
		{ 1ull << 40, 3 }, { (1ull << 40) + 3, 4 }, { UINT64_MAX, 7 },
		{ UINT64_MAX, 8 },
	};
	char why[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t count = key_level_count(cases[i].size, cases[i].level);
		uint8_t *hashes = malloc(count * KEY_HASH_LEN), *buf;
		struct content_key in = { .size = cases[i].size, .level = cases[i].level,
					  .hashes = hashes }, out;
		char name[80];
		size_t len;

		fill(in.digest, sizeof(in.digest), (unsigned)i);
		fill(hashes, count * KEY_HASH_LEN, (unsigned)i + 100);
		buf = key_encode(&in, &len);
		snprintf(name, sizeof(name), "key-roundtrip-size-%llu-level-%u",
			 (unsigned long long)cases[i].size, cases[i].level);
		memset(&out, 0xaa, sizeof(out));
		if (len != 16 + 32 * (1 + count))
			fail(name, "encoded length %zu, want %llu", len,
			     (unsigned long long)(16 + 32 * (1 + count)));
		else if (key_decode(buf, len, &out, why, sizeof(why)) != KEY_OK)
			fail(name, "decode refused its own encoding: %s", why);
		else
			expect(name, key_equal(&in, &out), "decoded key differs");
		free(buf);
		free(hashes);
	}
}

/* The header bytes as docs/interface.md lists them, written out by hand. */
static void test_layout(void)
{
	uint8_t hashes[2 * KEY_HASH_LEN], *buf;
	struct content_key k = { .size = 128 * 4096 + 1, .level = 1, .hashes = hashes };
	static const uint8_t want_hdr[16] = {
		2, 1, 32, 12, 1, 0, 0, 0,	/* version algo len log_bs level reserved */
		0x01, 0x00, 0x08, 0, 0, 0, 0, 0,	/* le64 size 0x80001 */
	};
	size_t len;

	fill(k.digest, sizeof(k.digest), 5);
	fill(hashes, sizeof(hashes), 6);
	buf = key_encode(&k, &len);
	expect("key-layout-header", len == 16 + 3 * 32 && memcmp(buf, want_hdr, 16) == 0,
	       "header bytes differ from the documented layout");
	expect("key-layout-digest-then-hashes", memcmp(buf + 16, k.digest, 32) == 0 &&
	       memcmp(buf + 48, hashes, sizeof(hashes)) == 0,
	       "digest and level hashes not stored verbatim after the header");
	free(buf);
}

static void test_digest_text(void)
{
	struct content_key k = { .size = 1 };
	char text[KEY_TEXT_LEN], want[KEY_TEXT_LEN];

	fill(k.digest, sizeof(k.digest), 9);
	strcpy(want, "sha256:");
	for (size_t i = 0; i < 32; i++)
		sprintf(want + 7 + 2 * i, "%02x", k.digest[i]);
	key_digest_text(&k, text);
	expect("key-digest-text", strcmp(text, want) == 0, "got '%s', want '%s'",
	       text, want);
}

/* Decode @buf (@len bytes); it must give @status with a reason naming @word. */
static void expect_refused(const char *name, const uint8_t *buf, size_t len,
			   enum key_status status, const char *word)
{
	struct content_key k;
	char why[256] = "";
	enum key_status got = key_decode(buf, len, &k, why, sizeof(why));

	if (got != status)
		fail(name, "decode gave %d, want %d (%s)", got, status, why);
	else
		expect(name, strstr(why, word) != NULL,
		       "reason '%s' does not mention '%s'", why, word);
}

static void expect_malformed(const char *name, const uint8_t *buf, size_t len,
			     const char *word)
{
	expect_refused(name, buf, len, KEY_MALFORMED, word);
}

/* @good with header byte @at set to each of @values: malformed, naming @word. */
static void bad_field(const uint8_t *good, size_t len, size_t at,
		      const uint8_t *values, size_t n, const char *field,
		      const char *word)
{
	uint8_t buf[2048];
	char name[64];

	for (size_t i = 0; i < n; i++) {
		memcpy(buf, good, len);
		buf[at] = values[i];
		snprintf(name, sizeof(name), "key-malformed-%s-%u", field, values[i]);
		expect_malformed(name, buf, len, word);
	}
}

/* A version 1 key: 16-byte header, version 1, then a whole-file SHA-256. */
static void test_old(void)
{
	uint8_t v1[48] = { 1, 1, 32, 0, 0, 0, 0, 0, 0x39, 0x30 };

	fill(v1 + 16, 32, 3);
	expect_refused("key-old-version-1", v1, sizeof(v1), KEY_OLD, "version 1");
	expect_refused("key-old-version-1-says-retag", v1, sizeof(v1), KEY_OLD,
		       "pcdedup tag");
}

static void test_malformed(void)
{
	/* 100000 bytes: 25 blocks, level 0 has 25 hashes, level 1 is the root. */
	uint8_t hashes[25 * KEY_HASH_LEN], buf[2048], *good;
	struct content_key k = { .size = 100000, .level = 0, .hashes = hashes };
	const size_t glen = 16 + 26 * 32;
	char name[64];
	size_t len;

	fill(k.digest, sizeof(k.digest), 1);
	fill(hashes, sizeof(hashes), 2);
	good = key_encode(&k, &len);

	expect_malformed("key-malformed-empty", good, 0, "too short");
	expect_malformed("key-malformed-short-15", good, 15, "too short");
	expect_malformed("key-malformed-header-only", good, 16, "expected 848");
	expect_malformed("key-malformed-v1-length", good, 48, "expected 848");
	expect_malformed("key-malformed-one-hash-short", good, glen - 32, "expected 848");
	expect_malformed("key-malformed-byte-short", good, glen - 1, "expected 848");
	memcpy(buf, good, glen);
	memset(buf + glen, 0, 32);
	expect_malformed("key-malformed-one-hash-long", buf, glen + 32, "expected 848");
	/* Level 1 of the same size has one hash: 80 bytes, not 848. */
	buf[4] = 1;
	expect_malformed("key-malformed-length-for-level", buf, glen, "expected 80");
	buf[4] = 2;
	expect_malformed("key-malformed-level-above-root", buf, 80, "above the root");
	buf[4] = 255;
	expect_malformed("key-malformed-level-255", buf, 80, "above the root");

	static const uint8_t versions[] = { 0, 3, 255 }, algos[] = { 0, 2, 255 };
	static const uint8_t lens[] = { 0, 31, 33, 64 }, logs[] = { 0, 9, 13, 16 };
	bad_field(good, glen, 0, versions, sizeof(versions), "version", "version");
	bad_field(good, glen, 1, algos, sizeof(algos), "algo", "algorithm");
	bad_field(good, glen, 2, lens, sizeof(lens), "digest-len", "digest length");
	bad_field(good, glen, 3, logs, sizeof(logs), "log-blocksize", "log_blocksize");
	for (int byte = 5; byte < 8; byte++) {
		memcpy(buf, good, glen);
		buf[byte] = 1;
		snprintf(name, sizeof(name), "key-malformed-reserved-byte-%d", byte);
		expect_malformed(name, buf, glen, "reserved");
	}
	memcpy(buf, good, glen);
	memset(buf + 8, 0, 8);
	expect_malformed("key-malformed-size-0", buf, 48, "size 0");
	free(good);
}

int main(void)
{
	test_counts();
	test_roundtrip();
	test_layout();
	test_digest_text();
	test_old();
	test_malformed();
	return harness_exit();
}
