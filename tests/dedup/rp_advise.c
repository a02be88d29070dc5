/* readpaths: readahead and posix_fadvise; see readpaths.c. */
#include "readpaths.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

void check_advice(void)
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
