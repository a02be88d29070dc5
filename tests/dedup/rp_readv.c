/* readpaths: readv(), preadv() and preadv2(RWF_NOWAIT); see readpaths.c. */
#include "readpaths.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/uio.h>
#include <unistd.h>

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

void check_readv(void)
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

/* fd accepts RWF_NOWAIT: data, or EAGAIN when not cached. */
static int nowait_ok(int fd)
{
	unsigned char b;
	struct iovec iov = { &b, 1 };

	return preadv2(fd, &iov, 1, 0, RWF_NOWAIT) >= 0 || errno == EAGAIN;
}

/*
 * FILE refuses RWF_NOWAIT (EOPNOTSUPP). Right only where an untagged file
 * is refused too: on overlayfs, which in 6.12 opens no file with
 * FMODE_NOWAIT, whichever layer its real file is on. The untagged file is
 * an O_TMPFILE in FILE's own directory (on overlayfs, an overlay file of
 * that mount): refused as FILE is, the check passes (FILE behaves as its
 * untagged twin); accepted, FILE lost FMODE_NOWAIT. Without one to tell, or
 * on any other fs (XFS, ext4 and tmpfs take RWF_NOWAIT), a failure; so is
 * REFERENCE accepting it on the same fs type. REFERENCE alone does not
 * tell: a tagged REFERENCE (share.sh's are) refuses it as FILE does.
 * Returns 1 when FILE is refused as the untagged file is.
 */
static int nowait_refused(struct check *c, int fd)
{
	struct statfs sf = { 0 }, sr;
	char *dircopy = strdup(g.path);
	int tfd = dircopy ? temp_file(dirname(dircopy)) : -1;
	int terr = errno, rfd, ok = 0, same = 0;

	free(dircopy);
	if (tfd < 0) {
		ck_fail(c, "FILE refuses RWF_NOWAIT (EOPNOTSUPP); no untagged file in its directory to tell whether its fs does: %s",
			strerror(terr));
		return 0;
	}
	ok = nowait_ok(tfd);
	close(tfd);
	if (ok) {
		ck_fail(c, "FILE refuses RWF_NOWAIT (EOPNOTSUPP), an untagged file in its directory accepts it");
		return 0;
	}
	rfd = open(g.refpath, O_RDONLY | O_CLOEXEC);
	if (rfd >= 0) {
		ok = nowait_ok(rfd);
		same = fstatfs(fd, &sf) == 0 && fstatfs(rfd, &sr) == 0 &&
		       sf.f_type == sr.f_type;
		close(rfd);
	}
	if (ok && same) {
		ck_fail(c, "FILE refuses RWF_NOWAIT (EOPNOTSUPP), REFERENCE on the same fs type accepts it");
		return 0;
	}
	if (statfs(g.path, &sf) != 0 || sf.f_type != OVERLAYFS_SUPER_MAGIC) {
		ck_fail(c, "FILE and an untagged file in its directory (fs type 0x%lx, not overlayfs) refuse RWF_NOWAIT",
			(unsigned long)sf.f_type);
		return 0;
	}
	return 1;
}

/*
 * RWF_NOWAIT may return EAGAIN or a short read when data is not cached;
 * whatever it does return must be right. One pass after DONTNEED (cold,
 * mostly EAGAIN) and one warm pass.
 */
void check_nowait(void)
{
	const size_t len = 65536 + 3;
	unsigned char *buf = xmalloc(len);
	struct check c;
	int fd, refused = 0;

	ck_begin(&c, "preadv2 RWF_NOWAIT");
	fd = open_file(&c, 0);
	if (fd >= 0)
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	for (int pass = 0; fd >= 0 && pass < 2 && !c.fails && !refused; pass++) {
		for (size_t off = 0; off <= g.n; off = nowait_next(off)) {
			size_t want = expect_len(off, len), got = 0;
			struct iovec iov = { buf, len };
			char what[64];
			ssize_t r;

			r = preadv2(fd, &iov, 1, off, RWF_NOWAIT);
			if (r < 0 && errno == EOPNOTSUPP) {
				/* Refused as an untagged file is: nothing more to read. */
				if (nowait_refused(&c, fd))
					refused = 1;
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
