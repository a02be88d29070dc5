/* readpaths: lseek (SEEK_DATA/SEEK_HOLE too) and lseek then read; see readpaths.c. */
#include "readpaths.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/statfs.h>
#include <unistd.h>

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

void check_lseek(void)
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
void check_lseek_read(void)
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
