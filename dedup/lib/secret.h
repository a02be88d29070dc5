/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The host's secret (docs/interface.md, "The secret"): PCDEDUP_SECRET_SIZE
 * random bytes, kept as 2 * PCDEDUP_SECRET_SIZE hex digits and a newline
 * in a file only its owner may read or write: --secret-file FILE, else
 * $PCDEDUP_SECRET_FILE, else /etc/pcdedup/secret. tag and verify make and
 * check MACs with it; 'pcdedup secret load' hands it to the kernel.
 */
#ifndef PCDEDUP_SECRET_H
#define PCDEDUP_SECRET_H

#include <stddef.h>
#include <stdint.h>

#include <linux/pcdedup.h>

#define DEFAULT_SECRET_FILE	"/etc/pcdedup/secret"
#define SECRET_FILE_ENV		"PCDEDUP_SECRET_FILE"
/* Its hex text, with the newline (and the NUL, in buffers). */
#define SECRET_TEXT_LEN		(2 * PCDEDUP_SECRET_SIZE + 1)

struct secret {
	uint8_t bytes[PCDEDUP_SECRET_SIZE];
};

/* The file to use: @option (NULL if not given), $PCDEDUP_SECRET_FILE, the default. */
const char *secret_path(const char *option);

/*
 * Read the secret file @path into @s. It must be a regular file that
 * neither group nor others may access, holding exactly 64 hex digits
 * (either case) and at most one newline after them. Returns 0, or -1 with
 * a reason in @why.
 */
int secret_read(const char *path, struct secret *s, char *why, size_t whylen);

/* @len bytes of @text as a secret (the same rules); 0 or -1 with @why. */
int secret_parse(const char *text, size_t len, struct secret *s, char *why, size_t whylen);

/* @s as lowercase hex digits and a newline, NUL-terminated. */
void secret_text(const struct secret *s, char out[SECRET_TEXT_LEN + 1]);

#endif
