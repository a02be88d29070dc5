// SPDX-License-Identifier: GPL-2.0
/*
 * Key encoding and decoding: level counts, round trips (the MAC carried as
 * it is), byte layout, old (version 1 and 2) keys, levels above 2 and
 * every malformed form; set_key() never writes a level above 2.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "key.h"
#include "setkey.h"

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
	 * The documented limits: 64 KiB holds header, digest, MAC and level 0
	 * up to 2045 blocks (8 MiB less 12 KiB), level 1 up to 2045 * 128
	 * blocks (1 GiB less 1.5 MiB), level 2 up to 2045 * 128 * 128 blocks.
	 */
	expect("key-len-64k-limits", key_value_len(2045 * 4096, 0) <= KEY_MAX_LEN &&
	       key_value_len(2045 * 4096 + 1, 0) > KEY_MAX_LEN &&
	       key_value_len(2045ull * 128 * 4096, 1) <= KEY_MAX_LEN &&
	       key_value_len(2045ull * 128 * 4096 + 1, 1) > KEY_MAX_LEN &&
	       key_value_len(2045ull * 128 * 128 * 4096, 2) <= KEY_MAX_LEN &&
	       key_value_len(2045ull * 128 * 128 * 4096 + 1, 2) > KEY_MAX_LEN,
	       "length rule disagrees with the 8 MiB / 1 GiB / 128 GiB limits");
	expect("key-len-formula", key_value_len(100000, 0) == 16 + 32 + 32 + 25 * 32 &&
	       key_value_len(1, 0) == 112 && KEY_MAX_HASHES == 2045,
	       "value of 100000 bytes at level 0: %llu",
	       (unsigned long long)key_value_len(100000, 0));
}

static void test_roundtrip(void)
{
	static const struct { uint64_t size; unsigned level; } cases[] = {
		{ 1, 0 }, { 4095, 0 }, { 4096, 0 }, { 4097, 0 }, { 4097, 1 },
		{ 100000, 0 }, { 8 * MIB, 0 }, { 8 * MIB, 1 }, { 8 * MIB, 2 },
		{ 1ull << 40, 2 }, { 1ull << 30, 1 },
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
		fill(in.mac, sizeof(in.mac), (unsigned)i + 50);
		fill(hashes, count * KEY_HASH_LEN, (unsigned)i + 100);
		buf = key_encode(&in, &len);
		snprintf(name, sizeof(name), "key-roundtrip-size-%llu-level-%u",
			 (unsigned long long)cases[i].size, cases[i].level);
		memset(&out, 0xaa, sizeof(out));
		if (len != 16 + 32 + 32 * (1 + count))
			fail(name, "encoded length %zu, want %llu", len,
			     (unsigned long long)(16 + 32 + 32 * (1 + count)));
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
		3, 1, 32, 12, 1, 0, 0, 0,	/* version algo len log_bs level reserved */
		0x01, 0x00, 0x08, 0, 0, 0, 0, 0,	/* le64 size 0x80001 */
	};
	size_t len;

	fill(k.digest, sizeof(k.digest), 5);
	fill(k.mac, sizeof(k.mac), 7);
	fill(hashes, sizeof(hashes), 6);
	buf = key_encode(&k, &len);
	expect("key-layout-header", len == 16 + 4 * 32 && memcmp(buf, want_hdr, 16) == 0,
	       "header bytes differ from the documented layout");
	expect("key-layout-digest-mac-hashes", memcmp(buf + 16, k.digest, 32) == 0 &&
	       memcmp(buf + 48, k.mac, 32) == 0 && memcmp(buf + 80, hashes, sizeof(hashes)) == 0,
	       "digest, MAC and level hashes not stored verbatim after the header");
	expect("key-layout-offsets", KEY_MACED_LEN == 48 && KEY_MAC_OFFSET == 48 &&
	       KEY_HASHES_OFFSET == 80, "MAC at %zu covering %zu bytes, hashes at %zu",
	       (size_t)KEY_MAC_OFFSET, (size_t)KEY_MACED_LEN, (size_t)KEY_HASHES_OFFSET);
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

/*
 * A version 1 key: 16-byte header, version 1, then a whole-file SHA-256.
 * A version 2 key: version 3 without the MAC (here a well-formed one of
 * 100000 bytes at level 0), refused whatever its length.
 */
static void test_old(void)
{
	uint8_t v1[48] = { 1, 1, 32, 0, 0, 0, 0, 0, 0x39, 0x30 };
	uint8_t v2[16 + 26 * 32] = { 2, 1, 32, 12, 0, 0, 0, 0, 0xa0, 0x86, 0x01 };

	fill(v1 + 16, 32, 3);
	fill(v2 + 16, sizeof(v2) - 16, 4);
	expect_refused("key-old-version-1", v1, sizeof(v1), KEY_OLD, "version 1");
	expect_refused("key-old-version-1-says-retag", v1, sizeof(v1), KEY_OLD,
		       "pcdedup tag");
	expect_refused("key-old-version-2", v2, sizeof(v2), KEY_OLD, "version 2 key (no MAC)");
	expect_refused("key-old-version-2-says-retag", v2, sizeof(v2), KEY_OLD, "pcdedup tag");
	expect_refused("key-old-version-2-with-room-for-a-mac", v2, sizeof(v2) - 32, KEY_OLD,
		       "version 2");
}

/* Levels 3 and up are refused, as the kernel refuses them, even at the root. */
static void test_level_above_2(void)
{
	static const struct { uint64_t size; unsigned level; } cases[] = {
		{ 128ull * 128 * 4096 + 1, 3 },		/* the root of a 64 MiB + 1 file */
		{ 1ull << 40, 3 }, { (1ull << 40) + 3, 4 }, { UINT64_MAX, 8 },
	};
	char name[80];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t count = key_level_count(cases[i].size, cases[i].level);
		uint8_t *hashes = calloc(count, KEY_HASH_LEN), *buf;
		struct content_key k = { .size = cases[i].size, .level = cases[i].level,
					 .hashes = hashes };
		size_t len;

		buf = key_encode(&k, &len);
		snprintf(name, sizeof(name), "key-level-%u-malformed-size-%llu", cases[i].level,
			 (unsigned long long)cases[i].size);
		expect_refused(name, buf, len, KEY_MALFORMED, "levels 0 to 2 only");
		free(buf);
		free(hashes);
	}
}

/*
 * set_key() of a file whose level 2 is too long for any attribute (more
 * than 2045 hashes: over 127.8 GiB) writes nothing, whatever the higher
 * levels: the tree is built without reading a file, and the fd is never
 * used.
 */
static void test_setkey_no_level_above_2(void)
{
	const uint64_t size = 2046ull * 128 * 128 * 4096;
	const struct setkey_opts o = { .level = -1 };
	struct file_tree t;
	unsigned level = 99;
	char why[256] = "";
	int err = -1;
	enum setkey_result r;

	tree_init(&t, size, false);
	r = set_key(-1, &t, &o, NULL, -1, &level, &err, why, sizeof(why));
	expect("setkey-level-2-too-long-not-tagged", r == SETKEY_FAILED &&
	       strstr(why, "levels 0 to 2 only; not tagged") && err == 0,
	       "result %d, err %d: '%s'", r, err, why);
	expect("setkey-level-3-would-fit", tree_has_level(&t, 3) && !tree_has_level(&t, 2),
	       "levels kept: 2 %d, 3 %d", tree_has_level(&t, 2), tree_has_level(&t, 3));
	tree_free(&t);
}

static void test_malformed(void)
{
	/* 100000 bytes: 25 blocks, level 0 has 25 hashes, level 1 is the root. */
	uint8_t hashes[25 * KEY_HASH_LEN], buf[2048], *good;
	struct content_key k = { .size = 100000, .level = 0, .hashes = hashes };
	const size_t glen = 16 + 32 + 26 * 32;
	char name[64];
	size_t len;

	fill(k.digest, sizeof(k.digest), 1);
	fill(hashes, sizeof(hashes), 2);
	good = key_encode(&k, &len);

	expect_malformed("key-malformed-empty", good, 0, "too short");
	expect_malformed("key-malformed-short-15", good, 15, "too short");
	expect_malformed("key-malformed-header-only", good, 16, "expected 880");
	expect_malformed("key-malformed-v1-length", good, 48, "expected 880");
	expect_malformed("key-malformed-no-hashes", good, 80, "expected 880");
	expect_malformed("key-malformed-v2-length", good, glen - 32, "expected 880");
	expect_malformed("key-malformed-byte-short", good, glen - 1, "expected 880");
	memcpy(buf, good, glen);
	memset(buf + glen, 0, 32);
	expect_malformed("key-malformed-one-hash-long", buf, glen + 32, "expected 880");
	/* Level 1 of the same size has one hash: 112 bytes, not 880. */
	buf[4] = 1;
	expect_malformed("key-malformed-length-for-level", buf, glen, "expected 112");
	buf[4] = 2;
	expect_malformed("key-malformed-level-above-root", buf, 112, "above the root");
	buf[4] = 255;
	expect_malformed("key-malformed-level-255", buf, 112, "above the root");

	static const uint8_t versions[] = { 0, 4, 255 }, algos[] = { 0, 2, 255 };
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
	expect_malformed("key-malformed-size-0", buf, 80, "size 0");
	free(good);
}

int main(void)
{
	/* The number of cases the tests below run (kept with them). */
	harness_plan(67);
	test_counts();
	test_roundtrip();
	test_layout();
	test_digest_text();
	test_old();
	test_level_above_2();
	test_setkey_no_level_above_2();
	test_malformed();
	return harness_exit();
}
