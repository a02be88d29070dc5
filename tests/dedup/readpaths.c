/*
 * readpaths FILE REFERENCE: every read path of FILE must return exactly the
 * bytes of REFERENCE (same content, read with O_DIRECT where possible so it
 * does not share the page cache under test).
 *
 * With pcdedup a read-only open of a tagged file serves buffered read, mmap,
 * splice and fadvise from a shared cache and everything else from the real
 * file, so each path is exercised on its own fresh open, and the mixed ones
 * (lseek then read, O_DIRECT, copy_file_range) are checked too.
 *
 * Output: "PASS: <check>", "FAIL: <check>: <detail>", "SKIP: <check>: <why>";
 * last line on stderr "readpaths: N checks, N failed". Exit 1 on a FAIL.
 */
#include "common.h"

#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/uio.h>
#include <unistd.h>

static struct {
	const char *path, *refpath, *prefix;
	int quiet;
	unsigned char *ref;	/* expected bytes */
	size_t n;		/* file size */
	size_t pg;
	int checks, failed;
} g;

/* One check: remembers its first failure, counts the rest. */
struct check {
	char name[128];
	char detail[384];
	int fails;
	int skipped;
};

static void ck_begin(struct check *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void ck_begin(struct check *c, const char *fmt, ...)
{
	va_list ap;

	memset(c, 0, sizeof(*c));
	va_start(ap, fmt);
	vsnprintf(c->name, sizeof(c->name), fmt, ap);
	va_end(ap);
}

static void ck_fail(struct check *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void ck_fail(struct check *c, const char *fmt, ...)
{
	va_list ap;

	if (c->fails++ == 0) {
		va_start(ap, fmt);
		vsnprintf(c->detail, sizeof(c->detail), fmt, ap);
		va_end(ap);
	}
}

static void ck_skip(struct check *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void ck_skip(struct check *c, const char *fmt, ...)
{
	va_list ap;

	c->skipped = 1;
	va_start(ap, fmt);
	vsnprintf(c->detail, sizeof(c->detail), fmt, ap);
	va_end(ap);
}

static void ck_end(struct check *c)
{
	const char *p = g.prefix ? g.prefix : "", *sep = g.prefix ? "/" : "";

	g.checks++;
	if (c->fails) {
		g.failed++;
		if (c->fails > 1)
			printf("FAIL: %s%s%s: %s (and %d more)\n", p, sep, c->name,
			       c->detail, c->fails - 1);
		else
			printf("FAIL: %s%s%s: %s\n", p, sep, c->name, c->detail);
	} else if (!g.quiet) {
		if (c->skipped)
			printf("SKIP: %s%s%s: %s\n", p, sep, c->name, c->detail);
		else
			printf("PASS: %s%s%s\n", p, sep, c->name);
	}
	fflush(stdout);
}

/* Bytes a read of len at off must return. */
static size_t expect_len(size_t off, size_t len)
{
	return off >= g.n ? 0 : len < g.n - off ? len : g.n - off;
}

/* Compare got[0..len) with the file at off; returns 0 when equal. */
static int cmp_ref(struct check *c, const char *what, size_t off,
		   const void *got, size_t len)
{
	ssize_t d = first_diff(got, g.ref + off, len);

	if (d < 0)
		return 0;
	ck_fail(c, "%s: offset %zu: expected 0x%02x got 0x%02x", what,
		off + d, g.ref[off + d], ((const unsigned char *)got)[d]);
	return -1;
}

/* Same for a mapping: a SIGBUS/SIGSEGV is a failure, not a crash. */
static int cmp_map(struct check *c, const char *what, size_t off,
		   const void *map, size_t len)
{
	ssize_t d;
	size_t fault;

	if (guarded_diff(map, g.ref + off, len, &d, &fault)) {
		ck_fail(c, "%s: fault (SIGBUS/SIGSEGV) at offset %zu", what, off + fault);
		return -1;
	}
	if (d < 0)
		return 0;
	ck_fail(c, "%s: offset %zu: expected 0x%02x got 0x%02x", what,
		off + d, g.ref[off + d], ((const unsigned char *)map)[d]);
	return -1;
}

static int open_file(struct check *c, int flags)
{
	int fd = open(g.path, O_RDONLY | O_CLOEXEC | flags);

	if (fd < 0)
		ck_fail(c, "open: %s", strerror(errno));
	return fd;
}

/* ---- read() ---- */

/*
 * Sequential read() with a repeating pattern of chunk sizes. Tiny chunks
 * cover only the first 1 MiB and the last 64 KiB; the middle goes in
 * 64 KiB+3 chunks, or a 1-byte pass over tens of MiB would take minutes
 * in a debug (KASAN) guest.
 */
static void check_read(const char *name, const size_t *sizes, int nsizes)
{
	struct check c;
	size_t off = 0, max = 0;
	unsigned char *buf;
	int fd, i = 0;

	ck_begin(&c, "read %s", name);
	for (int k = 0; k < nsizes; k++)
		max = sizes[k] > max ? sizes[k] : max;
	max = max > 65539 ? max : 65539;
	buf = xmalloc(max);
	fd = open_file(&c, 0);
	while (fd >= 0) {
		size_t want = sizes[i++ % nsizes];
		ssize_t r;

		if (want < 16 && off >= 1 * MiB && off + 64 * KiB < g.n)
			want = 65539 < g.n - 64 * KiB - off ? 65539 : g.n - 64 * KiB - off;
		r = read(fd, buf, want);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			ck_fail(&c, "read(%zu) at offset %zu: %s", want, off, strerror(errno));
			break;
		}
		if (r == 0)
			break;
		if ((size_t)r > expect_len(off, want)) {
			ck_fail(&c, "read(%zu) at offset %zu returned %zd, past EOF %zu",
				want, off, r, g.n);
			break;
		}
		if (cmp_ref(&c, "data", off, buf, r))
			break;
		off += r;
	}
	if (fd >= 0) {
		if (!c.fails && off != g.n)
			ck_fail(&c, "EOF at offset %zu, file size %zu", off, g.n);
		if (!c.fails && read(fd, buf, 1) != 0)
			ck_fail(&c, "read after EOF did not return 0");
		close(fd);
	}
	free(buf);
	ck_end(&c);
}

/* ---- pread() ---- */

static void pread_one(struct check *c, int fd, unsigned char *buf, size_t off, size_t len)
{
	ssize_t r = pread(fd, buf, len, off);
	char what[64];

	if (r < 0) {
		ck_fail(c, "pread(off %zu, len %zu): %s", off, len, strerror(errno));
		return;
	}
	if ((size_t)r != expect_len(off, len)) {
		ck_fail(c, "pread(off %zu, len %zu) returned %zd, expected %zu",
			off, len, r, expect_len(off, len));
		return;
	}
	snprintf(what, sizeof(what), "pread(off %zu, len %zu)", off, len);
	cmp_ref(c, what, off, buf, r);
}

static void check_pread(void)
{
	static const size_t lens[] = { 1, 4096, 8192 };
	unsigned char buf[8192];
	struct check c;
	int fd;

	/* Every 4 KiB boundary (2 MiB ones included) up to one page past EOF. */
	ck_begin(&c, "pread boundaries");
	fd = open_file(&c, 0);
	if (fd >= 0) {
		for (size_t b = 0; b <= g.n + 4096; b += 4096)
			for (size_t d = 0; d < 3; d++) {
				if (b + d < 1)
					continue;
				for (size_t l = 0; l < 3; l++)
					pread_one(&c, fd, buf, b + d - 1, lens[l]);
			}
		close(fd);
	}
	ck_end(&c);

	ck_begin(&c, "pread at EOF");
	fd = open_file(&c, 0);
	if (fd >= 0) {
		if (g.n) {
			pread_one(&c, fd, buf, g.n - 1, 1);
			pread_one(&c, fd, buf, g.n - 1, 100);	/* short read: 1 */
		}
		pread_one(&c, fd, buf, g.n, 1);			/* 0 */
		pread_one(&c, fd, buf, g.n + 100, 4096);	/* 0 */
		close(fd);
	}
	ck_end(&c);
}

/* ---- readv() / preadv() / preadv2(RWF_NOWAIT) ---- */

#define NIOV 8
static const size_t iov_sizes[NIOV] = { 1, 4095, 3, 8192, 12289, 65539, 7, 2 * MiB + 1 };
#define FILL 0xa5	/* bytes the kernel must not touch stay FILL */

static void iov_setup(struct iovec *iov, unsigned char **bufs)
{
	for (int i = 0; i < NIOV; i++) {
		memset(bufs[i], FILL, iov_sizes[i]);
		iov[i].iov_base = bufs[i];
		iov[i].iov_len = iov_sizes[i];
	}
}

/* Check r bytes scattered over the iovecs, and that the rest is untouched. */
static int iov_verify(struct check *c, const char *what, size_t off,
		      unsigned char **bufs, size_t r)
{
	for (int i = 0; i < NIOV; i++) {
		size_t got = r < iov_sizes[i] ? r : iov_sizes[i];

		if (cmp_ref(c, what, off, bufs[i], got))
			return -1;
		for (size_t k = got; k < iov_sizes[i]; k++)
			if (bufs[i][k] != FILL) {
				ck_fail(c, "%s: iovec %d byte %zu written past the %zu returned bytes",
					what, i, k, r);
				return -1;
			}
		off += got;
		r -= got;
	}
	return 0;
}

static void check_readv(void)
{
	unsigned char *bufs[NIOV];
	struct iovec iov[NIOV];
	struct check c;
	size_t tot = 0, off;
	int fd;

	for (int i = 0; i < NIOV; i++) {
		bufs[i] = xmalloc(iov_sizes[i]);
		tot += iov_sizes[i];
	}

	ck_begin(&c, "readv");
	fd = open_file(&c, 0);
	for (off = 0; fd >= 0;) {
		ssize_t r;

		iov_setup(iov, bufs);
		r = readv(fd, iov, NIOV);
		if (r < 0) {
			ck_fail(&c, "readv at offset %zu: %s", off, strerror(errno));
			break;
		}
		if ((size_t)r != expect_len(off, tot)) {
			ck_fail(&c, "readv at offset %zu returned %zd, expected %zu",
				off, r, expect_len(off, tot));
			break;
		}
		if (r == 0 || iov_verify(&c, "readv", off, bufs, r))
			break;
		off += r;
	}
	if (fd >= 0)
		close(fd);
	ck_end(&c);

	ck_begin(&c, "preadv");
	fd = open_file(&c, 0);
	if (fd >= 0) {
		size_t offs[] = { 0, 1, 4095, 4096, 4097, 2 * MiB - 1, 2 * MiB,
				  g.n / 2 + 3, g.n ? g.n - 1 : 0, g.n, g.n + 100 };

		for (size_t k = 0; k < sizeof(offs) / sizeof(offs[0]); k++) {
			char what[48];
			ssize_t r;

			iov_setup(iov, bufs);
			r = preadv(fd, iov, NIOV, offs[k]);
			snprintf(what, sizeof(what), "preadv(off %zu)", offs[k]);
			if (r < 0)
				ck_fail(&c, "%s: %s", what, strerror(errno));
			else if ((size_t)r != expect_len(offs[k], tot))
				ck_fail(&c, "%s returned %zd, expected %zu", what, r,
					expect_len(offs[k], tot));
			else
				iov_verify(&c, what, offs[k], bufs, r);
		}
		close(fd);
	}
	ck_end(&c);
	for (int i = 0; i < NIOV; i++)
		free(bufs[i]);
}

/* Offsets for the NOWAIT pass: dense, then sparse, always EOF-100 and EOF. */
static size_t nowait_next(size_t off)
{
	size_t next = off + (off < 4 * MiB ? 65537 : 1 * MiB + 1);
	size_t tail = g.n > 100 ? g.n - 100 : 0;

	if (off < tail && next > tail)
		return tail;
	if (off < g.n && next > g.n)
		return g.n;
	return next;
}

/*
 * FILE refuses RWF_NOWAIT. Fine if the fs cannot do it (tmpfs), but if
 * REFERENCE on the same fs type accepts it, FILE lost FMODE_NOWAIT.
 */
static void nowait_refused(struct check *c, int fd)
{
	struct statfs sf, sr;
	unsigned char b;
	struct iovec iov = { &b, 1 };
	int rfd = open(g.refpath, O_RDONLY | O_CLOEXEC), ok = 0, same = 0;

	if (rfd >= 0) {
		ok = preadv2(rfd, &iov, 1, 0, RWF_NOWAIT) >= 0 || errno == EAGAIN;
		same = fstatfs(fd, &sf) == 0 && fstatfs(rfd, &sr) == 0 &&
		       sf.f_type == sr.f_type;
		close(rfd);
	}
	if (ok && same)
		ck_fail(c, "FILE refuses RWF_NOWAIT (EOPNOTSUPP), REFERENCE on the same fs type accepts it");
	else
		ck_skip(c, "RWF_NOWAIT not supported on this fs");
}

/*
 * RWF_NOWAIT may return EAGAIN or a short read when data is not cached;
 * whatever it does return must be right. One pass after DONTNEED (cold,
 * mostly EAGAIN) and one warm pass.
 */
static void check_nowait(void)
{
	const size_t len = 65536 + 3;
	unsigned char *buf = xmalloc(len);
	struct check c;
	int fd;

	ck_begin(&c, "preadv2 RWF_NOWAIT");
	fd = open_file(&c, 0);
	if (fd >= 0)
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	for (int pass = 0; fd >= 0 && pass < 2 && !c.fails && !c.skipped; pass++) {
		for (size_t off = 0; off <= g.n; off = nowait_next(off)) {
			size_t want = expect_len(off, len), got = 0;
			struct iovec iov = { buf, len };
			char what[64];
			ssize_t r;

			r = preadv2(fd, &iov, 1, off, RWF_NOWAIT);
			if (r < 0 && errno == EOPNOTSUPP) {
				nowait_refused(&c, fd);
				break;
			}
			if (r < 0 && errno != EAGAIN) {
				ck_fail(&c, "preadv2(off %zu, NOWAIT): %s", off, strerror(errno));
				continue;
			}
			if (r > 0) {
				snprintf(what, sizeof(what), "preadv2(off %zu, NOWAIT)", off);
				if ((size_t)r > want) {
					ck_fail(&c, "%s returned %zd, past EOF", what, r);
					continue;
				}
				if (cmp_ref(&c, what, off, buf, r))
					continue;
				got = r;
			} else if (r == 0 && want) {
				ck_fail(&c, "preadv2(off %zu, NOWAIT) returned 0 before EOF %zu",
					off, g.n);
				continue;
			}
			if (got == len)
				continue;
			/* EAGAIN or short: fetch the rest blocking (0 at EOF). */
			iov.iov_base = buf + got;
			iov.iov_len = len - got;
			r = preadv2(fd, &iov, 1, off + got, 0);
			snprintf(what, sizeof(what), "preadv2(off %zu) after NOWAIT", off + got);
			if (r < 0)
				ck_fail(&c, "%s: %s", what, strerror(errno));
			else if ((size_t)r != want - got)
				ck_fail(&c, "%s returned %zd, expected %zu", what, r, want - got);
			else
				cmp_ref(&c, what, off + got, buf + got, r);
		}
	}
	if (fd >= 0)
		close(fd);
	free(buf);
	ck_end(&c);
}

/* ---- mmap ---- */

static size_t page_up(size_t n)
{
	return (n + g.pg - 1) / g.pg * g.pg;
}

static void check_mmap_shared(void)
{
	struct check c;
	void *m;
	int fd;

	ck_begin(&c, "mmap shared");
	fd = open_file(&c, 0);
	if (fd < 0)
		goto out;
	m = mmap(NULL, g.n, PROT_READ, MAP_SHARED, fd, 0);
	if (g.n == 0) {
		/* Nothing to map; the kernel must refuse a 0-length mapping. */
		if (m != MAP_FAILED || errno != EINVAL)
			ck_fail(&c, "mmap of 0 bytes: expected EINVAL");
		goto out;
	}
	if (m == MAP_FAILED) {
		ck_fail(&c, "mmap: %s", strerror(errno));
		goto out;
	}
	cmp_map(&c, "mapping", 0, m, g.n);
	/* The rest of the last page beyond EOF reads as zeros. */
	if (page_up(g.n) > g.n) {
		ssize_t nz;
		size_t fault;

		if (guarded_nonzero((char *)m + g.n, page_up(g.n) - g.n, &nz, &fault))
			ck_fail(&c, "fault at offset %zu in the last page past EOF", g.n + fault);
		else if (nz >= 0)
			ck_fail(&c, "offset %zu (past EOF in the last page): 0x%02x, expected 0",
				g.n + nz, ((unsigned char *)m)[g.n + nz]);
	}
	munmap(m, g.n);
out:
	if (fd >= 0)
		close(fd);
	ck_end(&c);
}

/* A fresh open and shared mapping of FILE must still hold the original bytes. */
static void recheck_file(struct check *c, const char *when)
{
	unsigned char *buf = xmalloc(g.n);
	char what[96];
	void *m;
	int fd = open_file(c, 0);

	if (fd < 0)
		goto out;
	snprintf(what, sizeof(what), "pread %s", when);
	if (pread_full(fd, buf, g.n, 0) != (ssize_t)g.n)
		ck_fail(c, "%s: short or failed", what);
	else
		cmp_ref(c, what, 0, buf, g.n);
	m = mmap(NULL, g.n, PROT_READ, MAP_SHARED, fd, 0);
	snprintf(what, sizeof(what), "fresh mapping %s", when);
	if (m == MAP_FAILED) {
		ck_fail(c, "%s: %s", what, strerror(errno));
	} else {
		cmp_map(c, what, 0, m, g.n);
		munmap(m, g.n);
	}
	close(fd);
out:
	free(buf);
}

static void check_mmap_private(void)
{
	struct check c;
	unsigned char *m;
	int fd;

	ck_begin(&c, "mmap private COW");
	if (g.n == 0) {
		ck_skip(&c, "empty file");
		ck_end(&c);
		return;
	}
	fd = open_file(&c, 0);
	if (fd < 0)
		goto out;
	m = mmap(NULL, g.n, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED) {
		ck_fail(&c, "mmap: %s", strerror(errno));
		goto out;
	}
	/* Read first (maps the cache page), then write (breaks COW). */
	if (cmp_map(&c, "private mapping before write", 0, m, g.n) == 0) {
		size_t pos[] = { 0, g.n / 2, g.n - 1 };

		for (int i = 0; i < 3; i++)
			m[pos[i]] = ~g.ref[pos[i]];
		for (int i = 0; i < 3; i++)
			if (m[pos[i]] != (unsigned char)~g.ref[pos[i]])
				ck_fail(&c, "write to the private copy at offset %zu did not stick",
					pos[i]);
		recheck_file(&c, "after writing a private copy");
		/* Restored, the copy must equal the file again (rest of COW pages). */
		for (int i = 0; i < 3; i++)
			m[pos[i]] = g.ref[pos[i]];
		cmp_map(&c, "private copy after restore", 0, m, g.n);
	}
	munmap(m, g.n);
out:
	if (fd >= 0)
		close(fd);
	ck_end(&c);
}

static void check_mmap_offset(void)
{
	size_t offs[] = { g.pg, 2 * MiB, g.n / 2 / g.pg * g.pg,
			  g.n ? (g.n - 1) / g.pg * g.pg : 0 };
	struct check c;
	int fd, tried = 0;

	ck_begin(&c, "mmap at offset");
	fd = open_file(&c, 0);
	for (size_t k = 0; fd >= 0 && k < sizeof(offs) / sizeof(offs[0]); k++) {
		size_t off = offs[k], len = g.n - off;
		char what[48];
		void *m;

		if (off == 0 || off >= g.n)
			continue;
		tried++;
		m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, off);
		if (m == MAP_FAILED) {
			ck_fail(&c, "mmap at offset %zu: %s", off, strerror(errno));
			continue;
		}
		snprintf(what, sizeof(what), "mapping at offset %zu", off);
		cmp_map(&c, what, off, m, len);
		munmap(m, len);
	}
	if (fd >= 0)
		close(fd);
	if (!tried && !c.fails)
		ck_skip(&c, "file has only one page");
	ck_end(&c);
}

/* ---- sendfile / splice / copy_file_range ---- */

static int make_pipe(int p[2], size_t *cap)
{
	int r;

	if (pipe2(p, O_CLOEXEC))
		return -1;
	r = fcntl(p[1], F_SETPIPE_SZ, 1 * MiB);	/* fewer round trips */
	if (r < 0)
		r = fcntl(p[1], F_GETPIPE_SZ);
	*cap = r > 0 ? r : 65536;
	return 0;
}

/*
 * Move FILE from `start` through a pipe with sendfile or splice and compare.
 * Each call asks for at most the pipe capacity, so it never blocks.
 */
static void pipe_copy(struct check *c, int use_splice, size_t start)
{
	unsigned char *buf;
	size_t cap, off = start;
	int p[2], fd;

	fd = open_file(c, 0);
	if (fd < 0)
		return;
	if (make_pipe(p, &cap)) {
		ck_fail(c, "pipe: %s", strerror(errno));
		close(fd);
		return;
	}
	buf = xmalloc(cap);
	for (;;) {
		loff_t lo = off;
		off_t so = off;
		size_t ask = cap - 3;	/* odd lengths on purpose */
		ssize_t r = use_splice ? splice(fd, &lo, p[1], NULL, ask, 0)
				       : sendfile(p[1], fd, &so, ask);
		char what[64];

		snprintf(what, sizeof(what), "%s at offset %zu",
			 use_splice ? "splice" : "sendfile", off);
		if (r < 0) {
			ck_fail(c, "%s: %s", what, strerror(errno));
			break;
		}
		/* Short counts are legal (pipe slots run out), 0 only at EOF. */
		if ((size_t)r > expect_len(off, ask) || (r == 0 && off < g.n)) {
			ck_fail(c, "%s moved %zd bytes, expected up to %zu", what, r,
				expect_len(off, ask));
			break;
		}
		if (r == 0)
			break;
		if (read_full(p[0], buf, r) != r) {
			ck_fail(c, "%s: short read from the pipe", what);
			break;
		}
		if (cmp_ref(c, what, off, buf, r))
			break;
		off += r;
	}
	free(buf);
	close(p[0]);
	close(p[1]);
	close(fd);
}

/* Compare a temp file's content with FILE from `start` to EOF. */
static void verify_temp(struct check *c, int tmp, size_t start, const char *what)
{
	size_t len = start < g.n ? g.n - start : 0;
	unsigned char *buf = xmalloc(len + 1);
	ssize_t r = pread_full(tmp, buf, len + 1, 0);

	if (r != (ssize_t)len)
		ck_fail(c, "%s: temp file holds %zd bytes, expected %zu", what, r, len);
	else
		cmp_ref(c, what, start, buf, len);
	free(buf);
}

static void check_sendfile_splice(void)
{
	struct check c;
	int fd, tmp;

	ck_begin(&c, "sendfile to pipe");
	pipe_copy(&c, 0, 0);
	pipe_copy(&c, 0, 4095);
	ck_end(&c);

	/* To a file, using and advancing FILE's own position. */
	ck_begin(&c, "sendfile to file");
	fd = open_file(&c, 0);
	tmp = fd >= 0 ? temp_file(NULL) : -1;
	if (fd >= 0 && tmp < 0)
		ck_fail(&c, "temp file: %s", strerror(errno));
	if (tmp >= 0) {
		size_t done = 0;

		for (;;) {
			ssize_t r = sendfile(tmp, fd, NULL, 1 * MiB + 1);

			if (r < 0)
				ck_fail(&c, "sendfile at offset %zu: %s", done, strerror(errno));
			if (r <= 0)
				break;
			done += r;
		}
		if (lseek(fd, 0, SEEK_CUR) != (off_t)g.n)
			ck_fail(&c, "file position %jd after sendfile, expected %zu",
				(intmax_t)lseek(fd, 0, SEEK_CUR), g.n);
		verify_temp(&c, tmp, 0, "sendfile copy");
		close(tmp);
	}
	if (fd >= 0)
		close(fd);
	ck_end(&c);

	ck_begin(&c, "splice to pipe");
	pipe_copy(&c, 1, 0);
	pipe_copy(&c, 1, 4097);
	ck_end(&c);
}

/* copy_file_range needs both files on one fs type; try $TMPDIR, then FILE's dir. */
static void check_copy_file_range(void)
{
	static const size_t starts[] = { 0, 4095 };
	char *dircopy = strdup(g.path);
	const char *dirs[] = { NULL, dirname(dircopy) };
	struct check c;
	int fd;

	ck_begin(&c, "copy_file_range");
	fd = open_file(&c, 0);
	for (int s = 0; fd >= 0 && s < 2; s++) {
		int done_ok = 0, last_err = 0;

		for (int d = 0; d < 2 && !done_ok && !c.fails; d++) {
			int tmp = temp_file(dirs[d]);
			loff_t in = starts[s], out = 0;

			if (tmp < 0) {
				last_err = errno;
				continue;
			}
			for (;;) {
				ssize_t r = copy_file_range(fd, &in, tmp, &out, 1 * MiB + 1, 0);

				if (r < 0 && out == 0 && (errno == EXDEV || errno == EOPNOTSUPP ||
							  errno == ENOSYS || errno == EINVAL)) {
					last_err = errno;	/* try the next directory */
					break;
				}
				if (r < 0) {
					ck_fail(&c, "copy_file_range at offset %jd: %s",
						(intmax_t)in, strerror(errno));
					break;
				}
				if (r == 0) {
					done_ok = 1;
					verify_temp(&c, tmp, starts[s], "copy_file_range copy");
					break;
				}
			}
			close(tmp);
		}
		if (!done_ok && !c.fails)
			ck_skip(&c, "no temp dir on a fs that copies from FILE: %s",
				strerror(last_err));
	}
	if (fd >= 0)
		close(fd);
	free(dircopy);
	ck_end(&c);
}

/* ---- io_uring ---- */

#define QD 64
#define NREQ 512

struct ureq {
	size_t off, len;
	unsigned char *buf;
	struct iovec iov[3];
};

/* Many reads in flight at once, some forced to the async worker (IOSQE_ASYNC). */
static void uring_run(struct check *c, struct io_uring *ring, int fd, int vec)
{
	static const size_t lens[] = { 1, 4095, 4096, 65539, 131072, 2 * MiB + 5 };
	struct ureq *rq = calloc(NREQ, sizeof(*rq));
	uint64_t rs = 42;
	int next = 0, inflight = 0, done = 0;

	if (!rq)
		die("out of memory");
	for (int i = 0; i < NREQ; i++) {
		size_t off;

		/* First b-1, b, b+1 for b = k * 512 KiB, then random; some past EOF. */
		if (i < 33) {
			off = (i / 3) * 512 * KiB + i % 3;
			off = off ? off - 1 : 0;
		} else
			off = rng_below(&rs, g.n + 8192);
		rq[i].off = off;
		rq[i].len = lens[rng_below(&rs, 6)];
		rq[i].buf = xmalloc(rq[i].len);
		memset(rq[i].buf, FILL, rq[i].len);
		/* Uneven thirds for READV. */
		size_t a = rq[i].len / 3, b = rq[i].len / 5;
		rq[i].iov[0] = (struct iovec){ rq[i].buf, a };
		rq[i].iov[1] = (struct iovec){ rq[i].buf + a, b };
		rq[i].iov[2] = (struct iovec){ rq[i].buf + a + b, rq[i].len - a - b };
	}

	while (done < NREQ) {
		struct io_uring_cqe *cqe;
		int ret;

		while (next < NREQ && inflight < QD) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
			struct ureq *r = &rq[next];

			if (!sqe)
				break;
			if (vec)
				io_uring_prep_readv(sqe, fd, r->iov, 3, r->off);
			else
				io_uring_prep_read(sqe, fd, r->buf, r->len, r->off);
			if (next % 4 == 3)
				sqe->flags |= IOSQE_ASYNC;
			io_uring_sqe_set_data64(sqe, next);
			next++;
			inflight++;
		}
		ret = io_uring_submit_and_wait(ring, 1);
		if (ret < 0 && ret != -EINTR) {
			ck_fail(c, "io_uring_submit: %s", strerror(-ret));
			break;
		}
		while (io_uring_peek_cqe(ring, &cqe) == 0) {
			struct ureq *r = &rq[io_uring_cqe_get_data64(cqe)];
			size_t want = expect_len(r->off, r->len);
			char what[64];

			snprintf(what, sizeof(what), "%s(off %zu, len %zu)",
				 vec ? "READV" : "READ", r->off, r->len);
			if (cqe->res < 0)
				ck_fail(c, "%s: %s", what, strerror(-cqe->res));
			else if ((size_t)cqe->res != want)
				ck_fail(c, "%s returned %d, expected %zu", what, cqe->res, want);
			else if (cmp_ref(c, what, r->off, r->buf, want) == 0 &&
				 want < r->len && r->buf[want] != FILL)
				ck_fail(c, "%s: wrote past the returned bytes", what);
			io_uring_cqe_seen(ring, cqe);
			inflight--;
			done++;
		}
	}
	for (int i = 0; i < NREQ; i++)
		free(rq[i].buf);
	free(rq);
}

static void check_io_uring(void)
{
	static const int ops[2] = { IORING_OP_READ, IORING_OP_READV };
	struct io_uring ring;
	struct io_uring_probe *probe;
	struct check c;
	int ret;

	ret = io_uring_queue_init(QD, &ring, 0);
	for (int v = 0; v < 2; v++) {
		ck_begin(&c, "io_uring %s", v ? "READV" : "READ");
		if (ret == -ENOSYS || ret == -EPERM) {
			ck_skip(&c, "io_uring_queue_init: %s", strerror(-ret));
		} else if (ret < 0) {
			ck_fail(&c, "io_uring_queue_init: %s", strerror(-ret));
		} else {
			probe = io_uring_get_probe_ring(&ring);
			if (probe && !io_uring_opcode_supported(probe, ops[v])) {
				ck_skip(&c, "opcode not supported by this kernel");
			} else {
				int fd = open_file(&c, 0);

				if (fd >= 0) {
					uring_run(&c, &ring, fd, v);
					close(fd);
				}
			}
			if (probe)
				io_uring_free_probe(probe);
		}
		ck_end(&c);
	}
	if (ret == 0)
		io_uring_queue_exit(&ring);
}

/* ---- readahead / fadvise ---- */

/* Whole file with read() in 64 KiB+3 chunks, or pread backwards for RANDOM. */
static void read_back(struct check *c, int fd, int backwards)
{
	unsigned char *buf = xmalloc(g.n + 1);
	const size_t chunk = 65539;
	ssize_t r;

	if (!backwards) {
		if (lseek(fd, 0, SEEK_SET) < 0)
			ck_fail(c, "lseek: %s", strerror(errno));
		r = read_full(fd, buf, g.n + 1);
		if (r != (ssize_t)g.n)
			ck_fail(c, "read returned %zd of %zu bytes", r, g.n);
		else
			cmp_ref(c, "read", 0, buf, g.n);
	} else {
		for (size_t end = g.n; end > 0;) {
			size_t off = end > chunk ? end - chunk : 0;

			r = pread(fd, buf, end - off, off);
			if (r != (ssize_t)(end - off)) {
				ck_fail(c, "pread(off %zu) returned %zd", off, r);
				break;
			}
			if (cmp_ref(c, "pread backwards", off, buf, r))
				break;
			end = off;
		}
	}
	free(buf);
}

static void check_advice(void)
{
	static const struct { int adv; const char *name; } advs[] = {
		{ POSIX_FADV_WILLNEED, "WILLNEED" },
		{ POSIX_FADV_SEQUENTIAL, "SEQUENTIAL" },
		{ POSIX_FADV_RANDOM, "RANDOM" },
		{ POSIX_FADV_DONTNEED, "DONTNEED" },
	};
	struct check c;
	int fd, e;

	ck_begin(&c, "readahead");
	fd = open_file(&c, 0);
	if (fd >= 0) {
		if (readahead(fd, 0, g.n) != 0)
			ck_fail(&c, "readahead(0, %zu): %s", g.n, strerror(errno));
		if (readahead(fd, 4097, 2 * MiB) != 0)
			ck_fail(&c, "readahead(4097, 2 MiB): %s", strerror(errno));
		read_back(&c, fd, 0);
		close(fd);
	}
	ck_end(&c);

	for (size_t i = 0; i < sizeof(advs) / sizeof(advs[0]); i++) {
		ck_begin(&c, "fadvise %s", advs[i].name);
		fd = open_file(&c, 0);
		if (fd >= 0) {
			/* Read once, advise (whole file and a range), read again. */
			read_back(&c, fd, 0);
			e = posix_fadvise(fd, 0, 0, advs[i].adv);
			if (e)
				ck_fail(&c, "posix_fadvise(0, 0): %s", strerror(e));
			e = posix_fadvise(fd, 4096, 2 * MiB + 1, advs[i].adv);
			if (e)
				ck_fail(&c, "posix_fadvise(4096, 2 MiB+1): %s", strerror(e));
			read_back(&c, fd, advs[i].adv == POSIX_FADV_RANDOM);
			close(fd);
		}
		ck_end(&c);
	}
}

/* ---- lseek ---- */

struct seekop { int whence; off_t off; };

static const char *whence_name(int w)
{
	switch (w) {
	case SEEK_SET: return "SET";
	case SEEK_CUR: return "CUR";
	case SEEK_END: return "END";
	case SEEK_DATA: return "DATA";
	case SEEK_HOLE: return "HOLE";
	}
	return "?";
}

static void check_lseek(void)
{
	const off_t n = g.n;
	const struct seekop ops[] = {
		{ SEEK_SET, 0 }, { SEEK_SET, 1 }, { SEEK_SET, n }, { SEEK_SET, n + 4096 },
		{ SEEK_SET, -1 }, { SEEK_SET, 100 }, { SEEK_CUR, 5 }, { SEEK_CUR, -3 },
		{ SEEK_CUR, -1000 }, { SEEK_CUR, 0 }, { SEEK_END, 0 }, { SEEK_END, -1 },
		{ SEEK_END, 100 }, { SEEK_END, -(n + 1) },
		{ SEEK_DATA, 0 }, { SEEK_DATA, 1 }, { SEEK_DATA, 4095 }, { SEEK_DATA, 4096 },
		{ SEEK_DATA, 2 * MiB }, { SEEK_DATA, n - 1 }, { SEEK_DATA, n },
		{ SEEK_DATA, n + 1 }, { SEEK_DATA, -1 },
		{ SEEK_HOLE, 0 }, { SEEK_HOLE, 1 }, { SEEK_HOLE, 4095 }, { SEEK_HOLE, 4096 },
		{ SEEK_HOLE, 2 * MiB }, { SEEK_HOLE, n - 1 }, { SEEK_HOLE, n },
		{ SEEK_HOLE, n + 1 },
	};
	struct statfs sf, sr;
	struct check c;
	int fd, rfd;

	ck_begin(&c, "lseek");
	fd = open_file(&c, 0);
	rfd = open(g.refpath, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && rfd < 0)
		ck_fail(&c, "open REFERENCE: %s", strerror(errno));
	if (fd >= 0 && rfd >= 0) {
		int mismatch = 0;
		char first[256] = "";

		/* Same sequence on both (SEEK_CUR depends on the previous op). */
		for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
			off_t a, b;
			int ea, eb;

			errno = 0;
			a = lseek(fd, ops[i].off, ops[i].whence);
			ea = a < 0 ? errno : 0;
			errno = 0;
			b = lseek(rfd, ops[i].off, ops[i].whence);
			eb = b < 0 ? errno : 0;
			if (a != b || ea != eb) {
				if (!mismatch++)
					snprintf(first, sizeof(first),
						 "SEEK_%s %jd: FILE %jd (%s), REFERENCE %jd (%s)",
						 whence_name(ops[i].whence), (intmax_t)ops[i].off,
						 (intmax_t)a, ea ? strerror(ea) : "ok",
						 (intmax_t)b, eb ? strerror(eb) : "ok");
				/* Resync so later SEEK_CURs compare like with like. */
				lseek(fd, 0, SEEK_SET);
				lseek(rfd, 0, SEEK_SET);
			}
		}
		if (mismatch) {
			if (fstatfs(fd, &sf) == 0 && fstatfs(rfd, &sr) == 0 &&
			    sf.f_type != sr.f_type)
				ck_skip(&c, "fs types differ (0x%lx vs 0x%lx): %s",
					(unsigned long)sf.f_type, (unsigned long)sr.f_type, first);
			else
				ck_fail(&c, "%s (%d ops differ)", first, mismatch);
		}
	}
	if (rfd >= 0)
		close(rfd);
	if (fd >= 0)
		close(fd);
	ck_end(&c);
}

/* read() must follow the file position that lseek sets, and advance it. */
static void check_lseek_read(void)
{
	const off_t n = g.n;
	const struct seekop ops[] = {
		{ SEEK_SET, 4095 }, { SEEK_CUR, 0 }, { SEEK_CUR, 4097 }, { SEEK_SET, 2 * MiB - 1 },
		{ SEEK_END, -(n > 0) }, { SEEK_END, -(n < 5000 ? n : 5000) }, { SEEK_SET, n / 2 },
		{ SEEK_CUR, -(n / 4) }, { SEEK_END, 0 }, { SEEK_SET, n + 10 },
	};
	unsigned char buf[8191];
	struct check c;
	int fd;

	ck_begin(&c, "lseek then read");
	fd = open_file(&c, 0);
	for (size_t i = 0; fd >= 0 && i < sizeof(ops) / sizeof(ops[0]); i++) {
		off_t pos = lseek(fd, ops[i].off, ops[i].whence), now;
		char what[64];
		ssize_t r;

		if (pos < 0) {
			ck_fail(&c, "lseek(%jd, SEEK_%s): %s", (intmax_t)ops[i].off,
				whence_name(ops[i].whence), strerror(errno));
			continue;
		}
		r = read(fd, buf, sizeof(buf));
		snprintf(what, sizeof(what), "read after SEEK_%s to %jd",
			 whence_name(ops[i].whence), (intmax_t)pos);
		if (r < 0) {
			ck_fail(&c, "%s: %s", what, strerror(errno));
			continue;
		}
		if ((size_t)r != expect_len(pos, sizeof(buf))) {
			ck_fail(&c, "%s returned %zd, expected %zu", what, r,
				expect_len(pos, sizeof(buf)));
			continue;
		}
		cmp_ref(&c, what, pos, buf, r);
		now = lseek(fd, 0, SEEK_CUR);
		if (now != pos + r)
			ck_fail(&c, "%s: position %jd, expected %jd", what, (intmax_t)now,
				(intmax_t)(pos + r));
	}
	if (fd >= 0)
		close(fd);
	ck_end(&c);
}

/* ---- fstat / O_DIRECT ---- */

static void check_fstat(void)
{
	struct stat sf, sr;
	struct check c;
	int fd;

	ck_begin(&c, "fstat");
	fd = open_file(&c, 0);
	if (fd >= 0) {
		if (fstat(fd, &sf) < 0)
			ck_fail(&c, "fstat FILE: %s", strerror(errno));
		else if (stat(g.refpath, &sr) < 0)
			ck_fail(&c, "stat REFERENCE: %s", strerror(errno));
		else if (!S_ISREG(sf.st_mode))
			ck_fail(&c, "FILE is not a regular file (mode 0%o)", sf.st_mode);
		else if (sf.st_size != sr.st_size || (size_t)sf.st_size != g.n)
			ck_fail(&c, "st_size %jd, REFERENCE %jd (read %zu bytes)",
				(intmax_t)sf.st_size, (intmax_t)sr.st_size, g.n);
		close(fd);
	}
	ck_end(&c);
}

static void check_direct(void)
{
	const size_t chunk = 1 * MiB, cap = page_up(g.n) + 4096;
	unsigned char *buf;
	struct check c;
	size_t off = 0;
	int fd;

	ck_begin(&c, "O_DIRECT read");
	fd = open(g.path, O_RDONLY | O_CLOEXEC | O_DIRECT);
	if (fd < 0) {
		if (errno == EINVAL)
			ck_skip(&c, "O_DIRECT not supported on this fs");
		else
			ck_fail(&c, "open O_DIRECT: %s", strerror(errno));
		ck_end(&c);
		return;
	}
	if (posix_memalign((void **)&buf, 4096, cap))
		die("out of memory");
	for (;;) {
		ssize_t r = pread(fd, buf + off, chunk < cap - off ? chunk : cap - off, off);

		if (r < 0 && errno == EINVAL && off == 0) {
			ck_skip(&c, "O_DIRECT read gives EINVAL on this fs");
			break;
		}
		if (r < 0) {
			ck_fail(&c, "pread O_DIRECT at offset %zu: %s", off, strerror(errno));
			break;
		}
		off += r;
		if (r == 0 || off % 4096 || off >= cap)
			break;
	}
	if (!c.skipped && !c.fails) {
		if (off != g.n)
			ck_fail(&c, "read %zu bytes, file size %zu", off, g.n);
		else
			cmp_ref(&c, "O_DIRECT data", 0, buf, g.n);
	}
	free(buf);
	close(fd);
	ck_end(&c);
}

static void usage(void)
{
	die("usage: readpaths [--quiet] [--name PREFIX] FILE REFERENCE");
}

int main(int argc, char **argv)
{
	static const size_t c1[] = { 1 }, c3[] = { 3 }, c4095[] = { 4095 },
		c4096[] = { 4096 }, c4097[] = { 4097 }, c64k[] = { 65536 + 3 },
		c1m[] = { 1 * MiB + 7 },
		mixed[] = { 1, 4095, 4097, 65539, 3, 131072, 2 * MiB + 1, 511 };
	int i, direct, ret;

	for (i = 1; i < argc && argv[i][0] == '-' && argv[i][1] == '-'; i++) {
		if (!strcmp(argv[i], "--quiet"))
			g.quiet = 1;
		else if (!strcmp(argv[i], "--name") && i + 1 < argc)
			g.prefix = argv[++i];
		else
			usage();
	}
	if (argc - i != 2)
		usage();
	g.path = argv[i];
	g.refpath = argv[i + 1];
	g.pg = sysconf(_SC_PAGESIZE);
	ret = load_file(g.refpath, &g.ref, &g.n, &direct);
	if (ret)
		die("readpaths: cannot read REFERENCE %s: %s", g.refpath, strerror(-ret));

	check_fstat();
	check_read("chunks of 1", c1, 1);
	check_read("chunks of 3", c3, 1);
	check_read("chunks of 4095", c4095, 1);
	check_read("chunks of 4096", c4096, 1);
	check_read("chunks of 4097", c4097, 1);
	check_read("chunks of 65539", c64k, 1);
	check_read("chunks of 1 MiB+7", c1m, 1);
	check_read("mixed chunks", mixed, sizeof(mixed) / sizeof(mixed[0]));
	check_pread();
	check_readv();
	check_nowait();
	check_mmap_shared();
	check_mmap_private();
	check_mmap_offset();
	check_sendfile_splice();
	check_copy_file_range();
	check_io_uring();
	check_advice();
	check_lseek();
	check_lseek_read();
	check_direct();

	fprintf(stderr, "readpaths: %d checks, %d failed\n", g.checks, g.failed);
	return g.failed ? 1 : 0;
}
