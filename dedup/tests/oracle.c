// SPDX-License-Identifier: GPL-2.0
#include "oracle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

uint8_t *oracle_value(const struct oracle *o, unsigned level, size_t *len)
{
	uint8_t *v;

	*len = 16 + 32 + o->count[level] * 32;
	v = calloc(1, *len);
	v[0] = 2;		/* version */
	v[1] = 1;		/* SHA-256 */
	v[2] = 32;		/* digest length */
	v[3] = 12;		/* log2 block size */
	v[4] = (uint8_t)level;
	for (int i = 0; i < 8; i++)
		v[8 + i] = (uint8_t)(o->size >> (8 * i));
	memcpy(v + 16, o->digest, 32);
	memcpy(v + 48, o->level[level], o->count[level] * 32);
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
