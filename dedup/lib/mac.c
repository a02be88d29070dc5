// SPDX-License-Identifier: GPL-2.0
/* Key and domain MACs, and the file identity a key's MAC binds (see mac.h). */
#include "mac.h"

#include <errno.h>
#include <linux/fs.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>

#include "util.h"

/* Older uapi headers (before Linux 6.5) lack it; the kernel defines it so. */
#ifndef FS_IOC_GETFSUUID
struct fsuuid2 {
	__u8	len;
	__u8	uuid[16];
};
#define FS_IOC_GETFSUUID	_IOR(0x15, 0, struct fsuuid2)
#endif

_Static_assert(sizeof(((struct fsuuid2 *)0)->uuid) == FS_UUID_MAX, "fsuuid2 holds 16 bytes");
_Static_assert(sizeof(PCDEDUP_KEY_MAC_CONTEXT) - 1 == 14, "key context is 14 bytes");
_Static_assert(sizeof(PCDEDUP_DOMAIN_MAC_CONTEXT) - 1 == 17, "domain context is 17 bytes");

int fs_uuid(int fd, uint8_t *len, uint8_t uuid[FS_UUID_MAX], char *why, size_t whylen)
{
	struct fsuuid2 u;

	memset(&u, 0, sizeof(u));
	memset(uuid, 0, FS_UUID_MAX);
	if (ioctl(fd, FS_IOC_GETFSUUID, &u) != 0) {
		if (errno == ENOTTY) {
			/* The kernel's answer for s_uuid_len 0. */
			*len = 0;
			return 0;
		}
		snprintf(why, whylen, "cannot read the filesystem UUID (FS_IOC_GETFSUUID): %s",
			 errstr(errno));
		return -1;
	}
	if (u.len > FS_UUID_MAX) {
		snprintf(why, whylen, "filesystem UUID of %u bytes (FS_IOC_GETFSUUID)", u.len);
		return -1;
	}
	*len = u.len;
	memcpy(uuid, u.uuid, u.len);
	return 0;
}

int file_identity(int fd, struct file_identity *id, char *why, size_t whylen)
{
	struct stat st;
	/* _IOR('v', 1, long), though filesystems store an int: read it zeroed. */
	long gen = 0;

	memset(id, 0, sizeof(*id));
	if (fs_uuid(fd, &id->uuid_len, id->uuid, why, whylen) != 0)
		return -1;
	if (fstat(fd, &st) != 0) {
		snprintf(why, whylen, "cannot stat: %s", errstr(errno));
		return -1;
	}
	if (ioctl(fd, FS_IOC_GETVERSION, &gen) != 0) {
		snprintf(why, whylen, "cannot read the inode generation (FS_IOC_GETVERSION): %s%s",
			 errstr(errno), errno == ENOTTY ? " (this filesystem does not tell it)" : "");
		return -1;
	}
	id->ino = (uint64_t)st.st_ino;
	id->generation = (uint32_t)gen;
	return 0;
}

static EVP_MAC *hmac;

static void fetch_hmac(void)
{
	hmac = EVP_MAC_fetch(NULL, "HMAC", NULL);
}

/* HMAC-SHA256 with @s over the @n pieces @part[i] of @len[i] bytes. */
static void hmac_sha256(const struct secret *s, const void *const part[],
			const size_t len[], size_t n, uint8_t out[KEY_MAC_LEN])
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	OSSL_PARAM params[] = {
		OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)"SHA256", 0),
		OSSL_PARAM_construct_end(),
	};
	EVP_MAC_CTX *ctx;
	size_t outlen = 0;
	bool ok;

	pthread_once(&once, fetch_hmac);
	ctx = hmac ? EVP_MAC_CTX_new(hmac) : NULL;
	ok = ctx && EVP_MAC_init(ctx, s->bytes, sizeof(s->bytes), params);
	for (size_t i = 0; ok && i < n; i++)
		ok = EVP_MAC_update(ctx, part[i], len[i]);
	ok = ok && EVP_MAC_final(ctx, out, &outlen, KEY_MAC_LEN) && outlen == KEY_MAC_LEN;
	EVP_MAC_CTX_free(ctx);
	if (!ok) {
		const char *reason = ERR_reason_error_string(ERR_get_error());

		fatal("HMAC-SHA256 failed (OpenSSL: %s)", reason ? reason : "no reason given");
	}
}

void key_mac(const struct secret *s, const uint8_t value[KEY_MACED_LEN],
	     const struct file_identity *id, uint8_t mac[KEY_MAC_LEN])
{
	static const char context[] = PCDEDUP_KEY_MAC_CONTEXT;
	uint8_t ino[8], gen[4];

	for (int i = 0; i < 8; i++)
		ino[i] = (uint8_t)(id->ino >> (8 * i));
	for (int i = 0; i < 4; i++)
		gen[i] = (uint8_t)(id->generation >> (8 * i));

	const void *part[] = { context, value, &id->uuid_len, id->uuid, ino, gen,
			       &id->domain_len, id->domain };
	const size_t len[] = { sizeof(context) - 1, KEY_MACED_LEN, 1, id->uuid_len,
			       sizeof(ino), sizeof(gen), 1, id->domain_len };

	hmac_sha256(s, part, len, sizeof(len) / sizeof(len[0]), mac);
}

void domain_mac(const struct secret *s, uint8_t uuid_len, const uint8_t *uuid,
		const void *name, size_t namelen, uint8_t mac[KEY_MAC_LEN])
{
	static const char context[] = PCDEDUP_DOMAIN_MAC_CONTEXT;
	const void *part[] = { context, &uuid_len, uuid, name };
	const size_t len[] = { sizeof(context) - 1, 1, uuid_len, namelen };

	hmac_sha256(s, part, len, sizeof(len) / sizeof(len[0]), mac);
}

bool mac_equal(const uint8_t a[KEY_MAC_LEN], const uint8_t b[KEY_MAC_LEN])
{
	return CRYPTO_memcmp(a, b, KEY_MAC_LEN) == 0;
}
