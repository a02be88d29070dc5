/* Helpers shared by the dedup test programs. */
#ifndef DEDUP_COMMON_H
#define DEDUP_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define KiB 1024UL
#define MiB (1024UL * 1024UL)

void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void *xmalloc(size_t n);

/*
 * Read a whole file into memory. Tries O_DIRECT first, so loading the
 * expected bytes does not go through (or populate) the page cache that is
 * under test; falls back to buffered reads when the fs refuses O_DIRECT.
 * Returns 0 or -errno; *direct tells which way was used.
 */
int load_file(const char *path, unsigned char **data, size_t *len, int *direct);

/* Offset of the first differing byte, or -1 if the ranges are equal. */
ssize_t first_diff(const void *a, const void *b, size_t n);

/* Offset of the first non-zero byte, or -1. */
ssize_t first_nonzero(const void *p, size_t n);

/*
 * Like first_diff, but survives SIGBUS/SIGSEGV while reading `map` (a bad
 * mapping must become a failed check, not a crashed test). Returns 0 and sets
 * *diff, or -1 and sets *fault to the offset into `map` that faulted.
 */
int guarded_diff(const void *map, const void *expect, size_t n,
		 ssize_t *diff, size_t *fault);
/* Same for "must be zeros" (the tail of the last page beyond EOF). */
int guarded_nonzero(const void *map, size_t n, ssize_t *nz, size_t *fault);

/* Read until len bytes or EOF; returns bytes read or -1 (errno set). */
ssize_t read_full(int fd, void *buf, size_t len);
ssize_t pread_full(int fd, void *buf, size_t len, off_t off);

/*
 * An unnamed temp file (O_TMPFILE, else mkstemp + unlink) in dir, or in
 * $TMPDIR (default /tmp) when dir is NULL. Returns an fd or -1.
 */
int temp_file(const char *dir);

/* Small deterministic PRNG (splitmix64), so runs repeat per seed. */
uint64_t rng_next(uint64_t *state);
uint64_t rng_below(uint64_t *state, uint64_t n); /* [0, n), 0 if n == 0 */

#endif
