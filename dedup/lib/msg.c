// SPDX-License-Identifier: GPL-2.0
#include "msg.h"

#include <stdarg.h>
#include <stdbool.h>
#include <string.h>

/* Escape sequence for byte @c into @seq (at most 5 bytes), or NULL if none. */
static const char *escape_byte(unsigned char c, char seq[5])
{
	switch (c) {
	case '\\': return "\\\\";
	case '\n': return "\\n";
	case '\t': return "\\t";
	case '\r': return "\\r";
	default:
		break;
	}
	if (c < 0x20 || c == 0x7f) {
		snprintf(seq, 5, "\\%03o", c);
		return seq;
	}
	return NULL;
}

void put_escaped(FILE *f, const char *s)
{
	char seq[5];

	for (; *s; s++) {
		const char *e = escape_byte((unsigned char)*s, seq);

		if (e)
			fputs_unlocked(e, f);
		else
			putc_unlocked(*s, f);
	}
}

char *escape_into(const char *s, char *out, size_t outlen)
{
	size_t n = 0;
	char seq[5];

	if (outlen == 0)
		return out;
	for (; *s; s++) {
		const char *e = escape_byte((unsigned char)*s, seq);
		char one[2] = { *s, '\0' };
		size_t len;

		if (!e)
			e = one;
		len = strlen(e);
		if (n + len >= outlen)
			break;
		memcpy(out + n, e, len);
		n += len;
	}
	out[n] = '\0';
	return out;
}

/* A progress line is on the terminal; only changed with stderr locked. */
static bool progress_shown;

/* Erase the progress line, if any; caller holds stderr's lock. */
static void erase_progress_locked(void)
{
	if (progress_shown) {
		fputs_unlocked("\r\033[K", stderr);
		progress_shown = false;
	}
}

void msg_progress(const char *line)
{
	flockfile(stderr);
	if (line) {
		/* Over the old line; erasing the rest covers a longer old one. */
		fputs_unlocked("\r", stderr);
		fputs_unlocked(line, stderr);
		fputs_unlocked("\033[K", stderr);
		progress_shown = true;
	} else {
		erase_progress_locked();
	}
	fflush_unlocked(stderr);
	funlockfile(stderr);
}

void msg_line(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	flockfile(stderr);
	erase_progress_locked();
	fputs_unlocked("pcdedup: ", stderr);
	vfprintf(stderr, fmt, ap);
	putc_unlocked('\n', stderr);
	funlockfile(stderr);
	va_end(ap);
}

void path_error(const char *path, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	flockfile(stderr);
	erase_progress_locked();
	fputs_unlocked("pcdedup: ", stderr);
	put_escaped(stderr, path);
	fputs_unlocked(": ", stderr);
	vfprintf(stderr, fmt, ap);
	putc_unlocked('\n', stderr);
	funlockfile(stderr);
	va_end(ap);
}

void status_line(const char *status, const char *path)
{
	/* stdout may be the same terminal. */
	flockfile(stderr);
	erase_progress_locked();
	funlockfile(stderr);
	flockfile(stdout);
	fputs_unlocked(status, stdout);
	putc_unlocked('\t', stdout);
	put_escaped(stdout, path);
	putc_unlocked('\n', stdout);
	funlockfile(stdout);
}
