/* readpaths: read(), pread() and O_DIRECT reads; see readpaths.c. */
#include "readpaths.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- read() ---- */

/*
 * Sequential read() with a repeating pattern of chunk sizes. Tiny chunks
 * cover only the first 1 MiB and the last 64 KiB; the middle goes in
 * 64 KiB+3 chunks, or a 1-byte pass over tens of MiB would take minutes
 * in a debug (KASAN) guest.
 */
void check_read(const char *name, const size_t *sizes, int nsizes)
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

void check_pread(void)
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

/* ---- O_DIRECT ---- */

void check_direct(void)
{
	const size_t chunk = 1 * MiB, cap = page_up(g.n) + 4096;
	unsigned char *buf;
	struct check c;
	size_t off = 0;
	int fd;

	ck_begin(&c, "O_DIRECT read");
	/*
	 * Every fs the suites read from (XFS, ext4, overlayfs over them, tmpfs)
	 * does O_DIRECT: a refusal is a failure, not a skip.
	 */
	fd = open(g.path, O_RDONLY | O_CLOEXEC | O_DIRECT);
	if (fd < 0) {
		ck_fail(&c, "open O_DIRECT: %s", strerror(errno));
		ck_end(&c);
		return;
	}
	if (posix_memalign((void **)&buf, 4096, cap))
		die("out of memory");
	for (;;) {
		ssize_t r = pread(fd, buf + off, chunk < cap - off ? chunk : cap - off, off);

		if (r < 0) {
			ck_fail(&c, "pread O_DIRECT at offset %zu: %s", off, strerror(errno));
			break;
		}
		off += r;
		if (r == 0 || off % 4096 || off >= cap)
			break;
	}
	if (!c.fails) {
		if (off != g.n)
			ck_fail(&c, "read %zu bytes, file size %zu", off, g.n);
		else
			cmp_ref(&c, "O_DIRECT data", 0, buf, g.n);
	}
	free(buf);
	close(fd);
	ck_end(&c);
}
