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
 * Each check is one case of a KTAP document printed through the test
 * harness (dedup/tests/harness.c), its plan first: "ok N <check>", "not ok
 * N <check>" after "# <check>: <detail>", "ok N <check> # SKIP <why>"; with
 * --quiet only the failed and the skipped cases (a skip is never hidden).
 * Last line on stderr "readpaths: N checks, N failed, N skipped". Exit 1 on
 * a failed check, 2 on a usage error or an unreadable REFERENCE.
 *
 * The checks of each read path are in rp_*.c (readpaths.h lists them).
 */
#include "readpaths.h"

#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct readpaths g;

void ck_begin(struct check *c, const char *fmt, ...)
{
	va_list ap;

	memset(c, 0, sizeof(*c));
	va_start(ap, fmt);
	vsnprintf(c->name, sizeof(c->name), fmt, ap);
	va_end(ap);
}

void ck_fail(struct check *c, const char *fmt, ...)
{
	va_list ap;

	if (c->fails++ == 0) {
		va_start(ap, fmt);
		vsnprintf(c->detail, sizeof(c->detail), fmt, ap);
		va_end(ap);
	}
}

void ck_skip(struct check *c, const char *fmt, ...)
{
	va_list ap;

	c->skipped = 1;
	va_start(ap, fmt);
	vsnprintf(c->detail, sizeof(c->detail), fmt, ap);
	va_end(ap);
}

/* The check's KTAP case, "PREFIX/name" with --name, through the harness. */
void ck_end(struct check *c)
{
	char name[256];

	snprintf(name, sizeof(name), "%s%s%s", g.prefix ? g.prefix : "",
		 g.prefix ? "/" : "", c->name);
	g.checks++;
	if (c->fails) {
		g.failed++;
		if (c->fails > 1)
			fail(name, "%s (and %d more)", c->detail, c->fails - 1);
		else
			fail(name, "%s", c->detail);
	} else if (c->skipped) {
		skip(name, "%s", c->detail);
	} else {
		pass(name);
	}
}

/* Compare got[0..len) with the file at off; returns 0 when equal. */
int cmp_ref(struct check *c, const char *what, size_t off,
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
int cmp_map(struct check *c, const char *what, size_t off,
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

int open_file(struct check *c, int flags)
{
	int fd = open(g.path, O_RDONLY | O_CLOEXEC | flags);

	if (fd < 0)
		ck_fail(c, "open: %s", strerror(errno));
	return fd;
}

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
			harness_quiet();
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

	/*
	 * The plan: fstat 1, read 8, pread 2, readv and preadv 2, NOWAIT 1,
	 * mmap 3, sendfile and splice 3, copy_file_range 1, io_uring 2,
	 * readahead and fadvise 1 + 4, lseek 2, O_DIRECT 1.
	 */
	harness_plan(1 + 8 + 2 + 2 + 1 + 3 + 3 + 1 + 2 + 5 + 2 + 1);
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

	ret = harness_exit();
	fprintf(stderr, "readpaths: %d checks, %d failed, %d skipped\n", g.checks,
		g.failed, harness_skipped());
	return ret;
}
