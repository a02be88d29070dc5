/* SPDX-License-Identifier: GPL-2.0 */
/* Small helpers every command needs: allocation that cannot fail, a clock. */
#ifndef PCDEDUP_UTIL_H
#define PCDEDUP_UTIL_H

#include <stddef.h>
#include <sys/types.h>

/* Print "pcdedup: <message>" and exit with EXIT_FATAL. */
__attribute__((noreturn, format(printf, 1, 2)))
void fatal(const char *fmt, ...);

void *xmalloc(size_t size);
void *xcalloc(size_t n, size_t size);
char *xstrdup(const char *s);

/*
 * strerror() for worker threads: glibc's strerror() may share one buffer
 * between threads for unusual errors; this one keeps a buffer per thread.
 */
const char *errstr(int err);

/* Write all @len bytes (retrying on EINTR); 0, or -1 with errno set. */
int write_all(int fd, const void *buf, size_t len);

/*
 * Read up to @len bytes, until EOF (retrying on EINTR and short reads):
 * the bytes read, or -1 with errno set.
 */
ssize_t read_full(int fd, void *buf, size_t len);

/* Seconds on the monotonic clock, for elapsed times and rates. */
double now_seconds(void);

/* Flush stdout and exit EXIT_FATAL if any output was lost (full disk, ...). */
void check_stdout(void);

#endif
