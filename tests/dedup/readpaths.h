/*
 * Shared by the parts of readpaths (see readpaths.c): the file under test,
 * the expected bytes, and one check's bookkeeping. Each rp_*.c file holds
 * the checks of one read path; main() in readpaths.c runs them in order.
 */
#ifndef DEDUP_READPATHS_H
#define DEDUP_READPATHS_H

#include "common.h"

#include <stddef.h>

struct readpaths {
	const char *path, *refpath, *prefix;
	unsigned char *ref;	/* expected bytes */
	size_t n;		/* file size */
	size_t pg;
	int checks, failed;
};
extern struct readpaths g;

/*
 * One check, one KTAP case: remembers its first failure and counts the
 * rest. ck_begin() names it, ck_end() reports it (tests/dedup/README.md).
 */
struct check {
	char name[128];
	char detail[384];
	int fails;
	int skipped;
};

void ck_begin(struct check *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void ck_fail(struct check *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void ck_skip(struct check *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void ck_end(struct check *c);

/* Bytes a read of len at off must return. */
static inline size_t expect_len(size_t off, size_t len)
{
	return off >= g.n ? 0 : len < g.n - off ? len : g.n - off;
}

static inline size_t page_up(size_t n)
{
	return (n + g.pg - 1) / g.pg * g.pg;
}

/* Compare got[0..len) with the file at off; returns 0 when equal. */
int cmp_ref(struct check *c, const char *what, size_t off,
	    const void *got, size_t len);
/* Same for a mapping: a SIGBUS/SIGSEGV is a failure, not a crash. */
int cmp_map(struct check *c, const char *what, size_t off,
	    const void *map, size_t len);
/* FILE opened read-only anew (plus flags); a failure fails the check. */
int open_file(struct check *c, int flags);

#define FILL 0xa5	/* bytes the kernel must not touch stay FILL */

/* rp_read.c: read(), pread(), O_DIRECT */
void check_read(const char *name, const size_t *sizes, int nsizes);
void check_pread(void);
void check_direct(void);
/* rp_readv.c: readv(), preadv(), preadv2(RWF_NOWAIT) */
void check_readv(void);
void check_nowait(void);
/* rp_mmap.c */
void check_mmap_shared(void);
void check_mmap_private(void);
void check_mmap_offset(void);
/* rp_splice.c: sendfile, splice, copy_file_range */
void check_sendfile_splice(void);
void check_copy_file_range(void);
/* rp_uring.c: io_uring READ and READV */
void check_io_uring(void);
/* rp_advise.c: readahead, posix_fadvise */
void check_advice(void);
/* rp_seek.c: lseek, SEEK_DATA/SEEK_HOLE, lseek then read */
void check_lseek(void);
void check_lseek_read(void);

#endif
