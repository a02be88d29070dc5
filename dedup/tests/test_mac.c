// SPDX-License-Identifier: GPL-2.0
/*
 * The MACs against the oracle's one-shot HMAC (tests/oracle.c) over the
 * bytes docs/interface.md lists; every input of a key's MAC (each byte of
 * header and digest, the UUID and its length, the inode number, the
 * generation, the secret) changes it; a domain's MAC likewise; the file
 * identity read through the tool's code is the one read independently.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include "harness.h"
#include "mac.h"
#include "oracle.h"

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed * 131 + i * 17 + (i >> 3));
}

static struct secret secret;
static uint8_t head[KEY_MACED_LEN];
static struct file_identity id;

static void to_oracle(const struct file_identity *in, struct oracle_id *out)
{
	memset(out, 0, sizeof(*out));
	out->uuid_len = in->uuid_len;
	memcpy(out->uuid, in->uuid, sizeof(out->uuid));
	out->ino = in->ino;
	out->gen = in->generation;
	memcpy(out->domain, in->domain, in->domain_len);
}

/* The tool's MAC of @h for @i under @s. */
static void tool_mac(const struct secret *s, const uint8_t *h, const struct file_identity *i,
		     uint8_t mac[KEY_MAC_LEN])
{
	key_mac(s, h, i, mac);
}

static void test_key_mac_oracle(void)
{
	static const struct {
		uint8_t uuid_len;
		uint64_t ino;
		uint32_t gen;
		const char *domain;
	} cases[] = {
		{ 16, 131, 0x12345678, "" }, { 16, 0xfedcba9876543210ull, 0xffffffff, "" },
		{ 0, 2, 0, "" }, { 8, 1ull << 40, 1, "" }, { 16, 131, 0x12345678, "tenantA" },
		{ 16, 131, 0x12345678,
		  "a-domain-name-of-sixty-four-bytes-the-longest-the-kernel-reads.." },
	};
	char name[64];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct file_identity fi = { .uuid_len = cases[i].uuid_len, .ino = cases[i].ino,
					    .generation = cases[i].gen,
					    .domain_len = (uint8_t)strlen(cases[i].domain) };
		struct oracle_id oi;
		uint8_t got[32], want[32];

		fill(fi.uuid, fi.uuid_len, (unsigned)i + 9);
		memcpy(fi.domain, cases[i].domain, fi.domain_len);
		to_oracle(&fi, &oi);
		tool_mac(&secret, head, &fi, got);
		oracle_key_mac(secret.bytes, head, &oi, want);
		snprintf(name, sizeof(name), "mac-key-is-oracle-hmac-%zu", i);
		expect(name, memcmp(got, want, 32) == 0, "uuid_len %u ino %llu gen %u",
		       fi.uuid_len, (unsigned long long)fi.ino, fi.generation);
	}
}

/* Each single change of an input must change the MAC. */
static void test_key_mac_tamper(void)
{
	uint8_t base[32], mac[32], h[KEY_MACED_LEN];
	struct file_identity t;
	struct secret s;
	int same = 0;

	tool_mac(&secret, head, &id, base);
	for (size_t i = 0; i < KEY_MACED_LEN; i++) {
		memcpy(h, head, sizeof(h));
		h[i] ^= 0x01;
		tool_mac(&secret, h, &id, mac);
		same += memcmp(mac, base, 32) == 0;
	}
	expect("mac-key-each-header-and-digest-byte", same == 0,
	       "%d of 48 one-bit changes kept the MAC", same);

	same = 0;
	for (size_t i = 0; i < id.uuid_len; i++) {
		t = id;
		t.uuid[i] ^= 0x80;
		tool_mac(&secret, head, &t, mac);
		same += memcmp(mac, base, 32) == 0;
	}
	expect("mac-key-each-uuid-byte", same == 0, "%d of 16 kept the MAC", same);
	t = id;
	t.uuid_len = 15;
	tool_mac(&secret, head, &t, mac);
	expect("mac-key-uuid-length", memcmp(mac, base, 32) != 0, "a shorter UUID kept it");
	/* Bytes past uuid_len are not the UUID. */
	t = id;
	t.uuid_len = 8;
	tool_mac(&secret, head, &t, base);
	t.uuid[12] ^= 0xff;
	tool_mac(&secret, head, &t, mac);
	expect("mac-key-only-uuid-len-bytes", memcmp(mac, base, 32) == 0,
	       "a byte past uuid_len changed the MAC");
	tool_mac(&secret, head, &id, base);

	same = 0;
	for (int bit = 0; bit < 64; bit++) {
		t = id;
		t.ino ^= 1ull << bit;
		tool_mac(&secret, head, &t, mac);
		same += memcmp(mac, base, 32) == 0;
	}
	expect("mac-key-each-inode-bit", same == 0, "%d of 64 kept the MAC", same);
	same = 0;
	for (int bit = 0; bit < 32; bit++) {
		t = id;
		t.generation ^= 1u << bit;
		tool_mac(&secret, head, &t, mac);
		same += memcmp(mac, base, 32) == 0;
	}
	expect("mac-key-each-generation-bit", same == 0, "%d of 32 kept the MAC", same);
	same = 0;
	for (size_t i = 0; i < sizeof(s.bytes); i++) {
		s = secret;
		s.bytes[i] ^= 0x10;
		tool_mac(&s, head, &id, mac);
		same += memcmp(mac, base, 32) == 0;
	}
	expect("mac-key-each-secret-byte", same == 0, "%d of 32 kept the MAC", same);
	/* The inode number and the generation are not interchangeable. */
	t = id;
	t.ino = id.generation;
	t.generation = (uint32_t)id.ino;
	tool_mac(&secret, head, &t, mac);
	expect("mac-key-ino-and-generation-apart", memcmp(mac, base, 32) != 0,
	       "swapping them kept the MAC");
	/*
	 * The domain: a key made in the default domain is not one of any
	 * named domain, nor one domain's of another, nor of a name's prefix.
	 */
	same = 0;
	for (const char *const *d = (const char *const[]){ "tenantA", "tenantB", "tenant",
							     "none", "\0", NULL }; *d; d++) {
		t = id;
		t.domain_len = (uint8_t)(**d ? strlen(*d) : 1);
		memcpy(t.domain, *d, t.domain_len);
		tool_mac(&secret, head, &t, mac);
		same += memcmp(mac, base, 32) == 0;
	}
	t = id;
	t.domain_len = 7;
	memcpy(t.domain, "tenantA", 7);
	tool_mac(&secret, head, &t, base);
	t.domain[6] = 'B';
	tool_mac(&secret, head, &t, mac);
	same += memcmp(mac, base, 32) == 0;
	expect("mac-key-domain", same == 0, "%d of 6 domain changes kept the MAC", same);
	tool_mac(&secret, head, &id, base);
	expect("mac-equal", mac_equal(base, base) && !mac_equal(base, mac), "mac_equal wrong");
}

static void test_domain_mac(void)
{
	static const char *const names[] = { "tenantA", "none", "a",
		"0123456789012345678901234567890123456789012345678901234567890123" };
	uint8_t got[32], want[32], other[32];
	char name[64];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		domain_mac(&secret, id.uuid_len, id.uuid, names[i], strlen(names[i]), got);
		oracle_domain_mac(secret.bytes, id.uuid_len, id.uuid, names[i], want);
		snprintf(name, sizeof(name), "mac-domain-is-oracle-hmac-%zu", strlen(names[i]));
		expect(name, memcmp(got, want, 32) == 0, "name '%s'", names[i]);
	}
	domain_mac(&secret, 0, id.uuid, "tenantA", 7, got);
	oracle_domain_mac(secret.bytes, 0, id.uuid, "tenantA", want);
	expect("mac-domain-no-uuid-is-oracle-hmac", memcmp(got, want, 32) == 0, "differs");
	domain_mac(&secret, id.uuid_len, id.uuid, "tenantA", 7, got);
	domain_mac(&secret, id.uuid_len, id.uuid, "tenantB", 7, other);
	expect("mac-domain-name-changes-it", memcmp(got, other, 32) != 0, "same MAC");
	{
		uint8_t u[16];

		memcpy(u, id.uuid, 16);
		u[3] ^= 1;
		domain_mac(&secret, id.uuid_len, u, "tenantA", 7, other);
		expect("mac-domain-uuid-changes-it", memcmp(got, other, 32) != 0, "same MAC");
	}
	/* A domain's MAC is never a key's: the contexts differ. */
	{
		uint8_t msg[48] = { 0 };

		memcpy(msg, "tenantA", 7);
		domain_mac(&secret, 0, id.uuid, msg, 48, got);
		key_mac(&secret, msg, &(struct file_identity){ .uuid_len = 0 }, other);
		expect("mac-domain-and-key-contexts-apart", memcmp(got, other, 32) != 0,
		       "same MAC for the same bytes");
	}
}

/* file_identity() of real files against the oracle's own ioctls and stat. */
static void test_identity(void)
{
	char *dir = make_tmpdir("identity");
	char *a = path_join(dir, "a"), *b = path_join(dir, "b");
	struct file_identity ia, ib;
	struct oracle_id oa;
	struct stat st;
	char why[256] = "";
	int fa, fb;

	write_pattern(a, 5000, 1);
	write_pattern(b, 5000, 1);
	fa = open(a, O_RDONLY);
	fb = open(b, O_RDONLY);
	if (fa < 0 || fb < 0 || !oracle_identity(a, &oa) || stat(a, &st) != 0) {
		skip("mac-identity-is-oracle", "cannot read the identity of %s here", a);
		goto out;
	}
	if (file_identity(fa, &ia, why, sizeof(why)) != 0 ||
	    file_identity(fb, &ib, why, sizeof(why)) != 0) {
		fail("mac-identity-is-oracle", "%s", why);
		goto out;
	}
	expect("mac-identity-is-oracle", ia.uuid_len == oa.uuid_len &&
	       memcmp(ia.uuid, oa.uuid, ia.uuid_len) == 0 && ia.ino == oa.ino &&
	       ia.generation == oa.gen && ia.ino == (uint64_t)st.st_ino,
	       "tool: len %u ino %llu gen %u; oracle: len %u ino %llu gen %u", ia.uuid_len,
	       (unsigned long long)ia.ino, ia.generation, oa.uuid_len,
	       (unsigned long long)oa.ino, oa.gen);
	expect("mac-identity-two-files", ia.ino != ib.ino && ia.uuid_len == ib.uuid_len &&
	       memcmp(ia.uuid, ib.uuid, ia.uuid_len) == 0, "inodes %llu %llu",
	       (unsigned long long)ia.ino, (unsigned long long)ib.ino);
	{
		uint8_t ma[32], mb[32];

		key_mac(&secret, head, &ia, ma);
		key_mac(&secret, head, &ib, mb);
		expect("mac-same-key-two-files-two-macs", memcmp(ma, mb, 32) != 0,
		       "one MAC for two inodes");
	}
out:
	if (fa >= 0)
		close(fa);
	if (fb >= 0)
		close(fb);
}

int main(void)
{
	/* The number of cases the tests below run (kept with them). */
	harness_plan(27);
	fill(secret.bytes, sizeof(secret.bytes), 1);
	fill(head, sizeof(head), 2);
	head[0] = 3;
	id = (struct file_identity){ .uuid_len = 16, .ino = 0x1234567890ull,
				     .generation = 0xdeadbeef };
	fill(id.uuid, sizeof(id.uuid), 3);
	test_key_mac_oracle();
	test_key_mac_tamper();
	test_domain_mac();
	test_identity();
	return harness_exit();
}
