// SPDX-License-Identifier: GPL-2.0
/* Reading and checking the secret file (see secret.h). */
#include "secret.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

/* Longer than any valid file: enough to tell "too long". */
#define READ_MAX	256

const char *secret_path(const char *option)
{
	const char *env = getenv(SECRET_FILE_ENV);

	if (option)
		return option;
	if (env && *env)
		return env;
	return DEFAULT_SECRET_FILE;
}

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int secret_parse(const char *text, size_t len, struct secret *s, char *why, size_t whylen)
{
	const size_t digits = 2 * PCDEDUP_SECRET_SIZE;

	if (len == digits + 1 && text[digits] == '\n')
		len--;
	if (len != digits) {
		snprintf(why, whylen, "not a secret: %zu bytes, want %zu hex digits and a newline",
			 len, digits);
		return -1;
	}
	for (size_t i = 0; i < PCDEDUP_SECRET_SIZE; i++) {
		int hi = hex_value(text[2 * i]), lo = hex_value(text[2 * i + 1]);

		if (hi < 0 || lo < 0) {
			snprintf(why, whylen, "not a secret: byte %zu is not a hex digit",
				 hi < 0 ? 2 * i : 2 * i + 1);
			return -1;
		}
		s->bytes[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

int secret_read(const char *path, struct secret *s, char *why, size_t whylen)
{
	char buf[READ_MAX];
	struct stat st;
	size_t len = 0;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK), r;

	if (fd < 0) {
		snprintf(why, whylen, "cannot open: %s%s", errstr(errno),
			 errno == ENOENT ? " (make one with 'pcdedup secret new')" : "");
		return -1;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(why, whylen, "not a regular file");
		close(fd);
		return -1;
	}
	if (st.st_mode & (S_IRWXG | S_IRWXO)) {
		snprintf(why, whylen, "group or others may access it (mode %04o): "
			 "a secret must be its owner's alone (chmod 600)",
			 (unsigned)(st.st_mode & 07777));
		close(fd);
		return -1;
	}
	while (len < sizeof(buf) && (n = read(fd, buf + len, sizeof(buf) - len)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			snprintf(why, whylen, "cannot read: %s", errstr(errno));
			close(fd);
			return -1;
		}
		len += (size_t)n;
	}
	close(fd);
	r = secret_parse(buf, len, s, why, whylen);
	memset(buf, 0, sizeof(buf));
	return r;
}

void secret_text(const struct secret *s, char out[SECRET_TEXT_LEN + 1])
{
	static const char hex[] = "0123456789abcdef";

	for (size_t i = 0; i < PCDEDUP_SECRET_SIZE; i++) {
		out[2 * i] = hex[s->bytes[i] >> 4];
		out[2 * i + 1] = hex[s->bytes[i] & 15];
	}
	out[2 * PCDEDUP_SECRET_SIZE] = '\n';
	out[2 * PCDEDUP_SECRET_SIZE + 1] = '\0';
}
