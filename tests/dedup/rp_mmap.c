/* readpaths: shared, private (COW) and offset mappings; see readpaths.c. */
#include "readpaths.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

void check_mmap_shared(void)
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

void check_mmap_private(void)
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

void check_mmap_offset(void)
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
