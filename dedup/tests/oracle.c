// SPDX-License-Identifier: GPL-2.0
#include "oracle.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include "harness.h"

#define BLOCK 4096
#define PER_BLOCK (BLOCK / 32)

/* Level k + 1 from level k: the hashes packed 128 to a zero-padded block. */
static void next_level(struct oracle *o, unsigned k)
{
	uint64_t n = (o->count[k] + PER_BLOCK - 1) / PER_BLOCK;
	uint8_t block[BLOCK];

	o->count[k + 1] = n;
	o->level[k + 1] = malloc(n * 32);
	for (uint64_t b = 0; b < n; b++) {
		uint64_t first = b * PER_BLOCK;
		uint64_t take = o->count[k] - first < PER_BLOCK ? o->count[k] - first
								: PER_BLOCK;

		memset(block, 0, sizeof(block));
		memcpy(block, o->level[k] + first * 32, take * 32);
		SHA256(block, BLOCK, o->level[k + 1] + b * 32);
	}
}

bool oracle_build(const char *path, struct oracle *o)
{
	uint8_t block[BLOCK], desc[256];
	FILE *f = fopen(path, "rb");
	uint64_t n = 0;

	memset(o, 0, sizeof(*o));
	if (!f)
		return false;
	fseek(f, 0, SEEK_END);
	o->size = (uint64_t)ftell(f);
	rewind(f);
	o->count[0] = (o->size + BLOCK - 1) / BLOCK;
	o->level[0] = malloc(o->count[0] * 32 + 1);
	while (n < o->count[0]) {
		memset(block, 0, sizeof(block));
		if (fread(block, 1, BLOCK, f) == 0)
			break;
		SHA256(block, BLOCK, o->level[0] + n * 32);
		n++;
	}
	fclose(f);
	if (o->size == 0 || n != o->count[0]) {
		oracle_free(o);
		return false;
	}
	while (o->count[o->root_level] > 1) {
		next_level(o, o->root_level);
		o->root_level++;
	}
	/* struct fsverity_descriptor, written out field by field. */
	memset(desc, 0, sizeof(desc));
	desc[0] = 1;		/* version */
	desc[1] = 1;		/* SHA-256 */
	desc[2] = 12;		/* log2 of 4096 */
	for (int i = 0; i < 8; i++)
		desc[8 + i] = (uint8_t)(o->size >> (8 * i));
	memcpy(desc + 16, o->level[o->root_level], 32);
	SHA256(desc, sizeof(desc), o->digest);
	return true;
}

void oracle_free(struct oracle *o)
{
	for (int i = 0; i < ORACLE_LEVELS; i++)
		free(o->level[i]);
	memset(o, 0, sizeof(*o));
}

/* Written out here, not taken from a header: _IOR(0x15, 0, 17 bytes), _IOR('v', 1, long). */
#define ORACLE_GETFSUUID	0x80111500u
#define ORACLE_GETVERSION	0x80087601u

bool oracle_identity(const char *path, struct oracle_id *id)
{
	uint8_t u[17] = { 0 }, g[8] = { 0 };
	struct stat st;
	int fd = open(path, O_RDONLY | O_NONBLOCK);
	bool ok;

	memset(id, 0, sizeof(*id));
	if (fd < 0)
		return false;
	ok = fstat(fd, &st) == 0 && ioctl(fd, ORACLE_GETFSUUID, u) == 0 && u[0] <= 16 &&
	     ioctl(fd, ORACLE_GETVERSION, g) == 0;
	close(fd);
	id->uuid_len = u[0];
	memcpy(id->uuid, u + 1, 16);
	id->ino = (uint64_t)st.st_ino;
	id->gen = (uint32_t)g[0] | (uint32_t)g[1] << 8 | (uint32_t)g[2] << 16 |
		  (uint32_t)g[3] << 24;
	return ok;
}

/* One-shot HMAC-SHA256 of @msg (@len bytes). */
static void hmac256(const uint8_t secret[32], const uint8_t *msg, size_t len, uint8_t mac[32])
{
	unsigned int n = 0;

	if (!HMAC(EVP_sha256(), secret, 32, msg, len, mac, &n) || n != 32)
		memset(mac, 0, 32);
}

void oracle_key_mac(const uint8_t secret[32], const uint8_t head[48],
		    const struct oracle_id *id, uint8_t mac[32])
{
	uint8_t msg[14 + 48 + 1 + 16 + 8 + 4 + 1 + 64];
	size_t n = 0, dlen = strlen(id->domain);

	if (dlen > 64) {
		memset(mac, 0, 32);
		return;
	}

	memcpy(msg, "pcdedup-key-v3", 14);
	n = 14;
	memcpy(msg + n, head, 48);
	n += 48;
	msg[n++] = id->uuid_len;
	memcpy(msg + n, id->uuid, id->uuid_len);
	n += id->uuid_len;
	for (int i = 0; i < 8; i++)
		msg[n++] = (uint8_t)(id->ino >> (8 * i));
	for (int i = 0; i < 4; i++)
		msg[n++] = (uint8_t)(id->gen >> (8 * i));
	msg[n++] = (uint8_t)dlen;
	memcpy(msg + n, id->domain, dlen);
	n += dlen;
	hmac256(secret, msg, n, mac);
}

void oracle_domain_mac(const uint8_t secret[32], uint8_t uuid_len, const uint8_t *uuid,
		       const char *name, uint8_t mac[32])
{
	uint8_t msg[17 + 1 + 16 + 64];
	size_t n = 0, len = strlen(name);

	if (uuid_len > 16 || len > 64) {
		memset(mac, 0, 32);
		return;
	}
	memcpy(msg, "pcdedup-domain-v1", 17);
	n = 17;
	msg[n++] = uuid_len;
	memcpy(msg + n, uuid, uuid_len);
	n += uuid_len;
	memcpy(msg + n, name, len);
	n += len;
	hmac256(secret, msg, n, mac);
}

uint8_t *oracle_value(const struct oracle *o, unsigned level, const uint8_t secret[32],
		      const struct oracle_id *id, size_t *len)
{
	uint8_t *v;

	*len = 16 + 32 + 32 + o->count[level] * 32;
	v = calloc(1, *len);
	v[0] = 3;		/* version */
	v[1] = 1;		/* SHA-256 */
	v[2] = 32;		/* digest length */
	v[3] = 12;		/* log2 block size */
	v[4] = (uint8_t)level;
	for (int i = 0; i < 8; i++)
		v[8 + i] = (uint8_t)(o->size >> (8 * i));
	memcpy(v + 16, o->digest, 32);
	oracle_key_mac(secret, v, id, v + 48);
	memcpy(v + 80, o->level[level], o->count[level] * 32);
	return v;
}

bool fsverity_cli_digest(const char *path, uint8_t digest[32])
{
	char *argv[] = { (char *)"fsverity", (char *)"digest", (char *)"--compact",
			 (char *)path, NULL };
	struct run_spec spec = { .env = NULL };
	struct run_result r;
	bool ok;

	run_cmd(&spec, argv, &r);
	ok = r.status == 0 && strlen(r.out) >= 64;
	for (int i = 0; ok && i < 32; i++) {
		unsigned byte;

		ok = sscanf(r.out + 2 * i, "%2x", &byte) == 1;
		digest[i] = (uint8_t)byte;
	}
	free_result(&r);
	return ok;
}
