/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Line-oriented output shared by all commands. File names may hold any byte
 * but '/' and NUL, newlines included, so every name printed for humans or
 * for line-based scripts is escaped C-style; one call writes one whole line,
 * so lines from worker threads never interleave.
 */
#ifndef PCDEDUP_MSG_H
#define PCDEDUP_MSG_H

#include <stddef.h>
#include <stdio.h>

/*
 * Write @s with C-style escapes: \\ \n \t \r and \ooo for other control
 * bytes and DEL; everything else (UTF-8 included) as is. Caller holds the
 * stream lock (flockfile) or does not care about interleaving.
 */
void put_escaped(FILE *f, const char *s);

/* Escape @s into @out (at most @outlen bytes with the NUL); returns @out. */
char *escape_into(const char *s, char *out, size_t outlen);

/* "pcdedup: <path>: <reason>" on stderr, as one line. */
__attribute__((format(printf, 2, 3)))
void path_error(const char *path, const char *fmt, ...);

/* "pcdedup: <message>" on stderr, as one line. */
__attribute__((format(printf, 1, 2)))
void msg_line(const char *fmt, ...);

/* "<status>\t<path>" on stdout, as one line: verify's machine output. */
void status_line(const char *status, const char *path);

/*
 * Show @line as the progress line on stderr ("\r", the text, erase to the
 * end of the line), or erase it (@line NULL). Every other line this module
 * writes erases it first, so that it never ends up in front of them.
 */
void msg_progress(const char *line);

#endif
