/* readpaths: sendfile, splice and copy_file_range; see readpaths.c. */
#include "readpaths.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <linux/magic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/statfs.h>
#include <unistd.h>

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

void check_sendfile_splice(void)
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

/*
 * copy_file_range needs both files on one filesystem (overlayfs: both real
 * files): to a temp file in $TMPDIR, else in FILE's own directory (always
 * writable in the suites), the first where the kernel copies.
 */
void check_copy_file_range(void)
{
	static const size_t starts[] = { 0, 4095 };
	char *dircopy = strdup(g.path);
	const char *dirs[] = { NULL, dircopy ? dirname(dircopy) : "." };
	struct check c;
	int fd;

	ck_begin(&c, "copy_file_range");
	fd = open_file(&c, 0);
	for (int s = 0; fd >= 0 && s < 2 && !c.fails && !c.skipped; s++) {
		int done_ok = 0, exdev = 0, tried = 0, other = 0;
		const char *why = "";

		for (int d = 0; d < 2 && !done_ok && !c.fails; d++) {
			int tmp = temp_file(dirs[d]);
			loff_t in = starts[s], out = 0;

			if (tmp < 0) {
				other = errno;
				why = d ? "no temp file in FILE's directory" : "no temp file in $TMPDIR";
				continue;
			}
			tried++;
			for (;;) {
				ssize_t r = copy_file_range(fd, &in, tmp, &out, 1 * MiB + 1, 0);

				if (r < 0 && out == 0 && errno == EXDEV) {
					exdev++;	/* another fs: the next directory */
					break;
				}
				if (r < 0) {
					ck_fail(&c, "copy_file_range from offset %zu to a temp file in %s, at offset %jd: %s",
						starts[s], d ? "FILE's directory" : "$TMPDIR",
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
		if (done_ok || c.fails)
			continue;
		if (other) {
			ck_fail(&c, "%s: %s", why, strerror(other));
			continue;
		}
		/*
		 * Every place refused with EXDEV. Only overlayfs may: its real
		 * (lower) file and every writable place (its upper layer,
		 * $TMPDIR) can lie on other filesystems, EXDEV for an untagged
		 * lower file too. Anywhere else FILE's own directory is on
		 * FILE's filesystem, where the copy must work.
		 */
		struct statfs sf;

		if (tried == 2 && exdev == 2 && statfs(g.path, &sf) == 0 &&
		    sf.f_type == OVERLAYFS_SUPER_MAGIC)
			ck_skip(&c, "overlayfs whose real file is on another fs than its upper layer and $TMPDIR: EXDEV for any lower file");
		else
			ck_fail(&c, "EXDEV copying to a temp file in $TMPDIR and in FILE's directory (fs type 0x%lx)",
				statfs(g.path, &sf) == 0 ? (unsigned long)sf.f_type : 0UL);
	}
	if (fd >= 0)
		close(fd);
	free(dircopy);
	ck_end(&c);
}
