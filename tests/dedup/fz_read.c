/*
 * fuzz: synchronous reads of the file (read, pread, readv, preadv,
 * preadv2 with RWF flags), lseek, fadvise, readahead, cachestat, and the
 * copies out of it (splice to a pipe, sendfile to a tmpfs file,
 * copy_file_range and reflink into a companion). See fuzz.c.
 */
#include "fuzz.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#ifndef RWF_NOWAIT
#define RWF_NOWAIT 0x8
#endif

/* Split [buf, buf + len) into n uneven iovecs. */
static int make_iov(struct fz *z, struct iovec *iov, int n, unsigned char *buf, size_t len)
{
	size_t left = len;

	for (int i = 0; i < n; i++) {
		size_t l = i == n - 1 ? left : z_rand(z, left + 1);

		iov[i] = (struct iovec){ buf, l };
		buf += l;
		left -= l;
	}
	return n;
}

static void res_data(struct res *r, long ret, const unsigned char *data)
{
	res_set(r, ret);
	r->data = data;
	r->len = ret > 0 ? ret : 0;
}

void op_read(struct fz *z)
{
	int slot = z_pick_fd(z);
	off_t off = 0;
	size_t len = z_len(z), bo;
	struct res r[NSIDE];

	if (slot < 0) {
		z_desc(z, "read (no fd)");
		return;
	}
	z_align(z, slot, &off, &len, &bo);
	z_dio_clamp(z, slot, -1, &len);
	z_desc(z, "read %s len %zu buf+%zu", z_fdname(z, slot), len, bo);
	for (int i = 0; i < NSIDE; i++) {
		struct side *s = &z->s[i];

		res_data(&r[i], read(s->fds[slot].fd, s->buf + bo, len), s->buf + bo);
	}
	z_same(z, r);
}

void op_pread(struct fz *z)
{
	int slot = z_pick_fd(z);
	off_t off = z_off(z);
	size_t len = z_len(z), bo;
	struct res r[NSIDE];

	if (slot < 0) {
		z_desc(z, "pread (no fd)");
		return;
	}
	z_align(z, slot, &off, &len, &bo);
	z_dio_clamp(z, slot, off, &len);
	z_desc(z, "pread %s off %lld len %zu buf+%zu", z_fdname(z, slot), (long long)off, len, bo);
	for (int i = 0; i < NSIDE; i++) {
		struct side *s = &z->s[i];

		res_data(&r[i], pread(s->fds[slot].fd, s->buf + bo, len, off), s->buf + bo);
	}
	z_same(z, r);
}

void op_readv(struct fz *z)
{
	int slot = z_pick_fd(z), n = z_rand(z, 4) + 1, positional = z_pct(z, 50);
	off_t off = z_off(z);
	size_t len = z_len(z), bo;
	struct iovec iov[NSIDE][4];
	uint64_t rs;
	struct res r[NSIDE];

	if (slot < 0) {
		z_desc(z, "readv (no fd)");
		return;
	}
	z_align(z, slot, &off, &len, &bo);
	z_dio_clamp(z, slot, positional ? off : -1, &len);
	z_desc(z, "%s %s off %lld len %zu in %d iovecs", positional ? "preadv" : "readv",
	       z_fdname(z, slot), positional ? (long long)off : -1LL, len, n);
	rs = z->rng;
	for (int i = 0; i < NSIDE; i++) {
		struct side *s = &z->s[i];

		z->rng = rs;	/* the same split on both sides */
		make_iov(z, iov[i], n, s->buf + bo, len);
		res_data(&r[i], positional ? preadv(s->fds[slot].fd, iov[i], n, off) :
				readv(s->fds[slot].fd, iov[i], n), s->buf + bo);
	}
	z_same(z, r);
}

struct pread_arg {
	int slot;
	off_t off;
	size_t len;
};

/* The blocking read of z_nowait_retry(): into aux. */
static long blocking_pread(struct fz *z, int side, void *arg)
{
	struct pread_arg *a = arg;

	return pread(z->s[side].fds[a->slot].fd, z->s[side].aux, a->len, a->off);
}

void op_preadv2(struct fz *z)
{
	int slot = z_pick_fd(z), n = z_rand(z, 3) + 1, flags = z_rwf(z, 0);
	off_t off = z_pct(z, 15) && !(flags & RWF_NOWAIT) ? -1 : z_off(z);
	size_t len = z_len(z), bo;
	struct iovec iov[NSIDE][3];
	uint64_t rs;
	struct res r[NSIDE];
	struct pread_arg a;

	if (slot < 0) {
		z_desc(z, "preadv2 (no fd)");
		return;
	}
	if (off >= 0)
		z_align(z, slot, &off, &len, &bo);
	else
		bo = 0;
	z_dio_clamp(z, slot, off, &len);
	z_desc(z, "preadv2 %s off %lld len %zu in %d iovecs flags %s", z_fdname(z, slot),
	       (long long)off, len, n, rwf_name(flags));
	rs = z->rng;
	for (int i = 0; i < NSIDE; i++) {
		struct side *s = &z->s[i];

		z->rng = rs;
		make_iov(z, iov[i], n, s->buf + bo, len);
		res_data(&r[i], preadv2(s->fds[slot].fd, iov[i], n, off, flags), s->buf + bo);
	}
	a = (struct pread_arg){ slot, off, len };
	z_nowait_retry(z, r, flags, blocking_pread, &a);
}

void op_lseek(struct fz *z)
{
	static const char *names[] = { "SET", "CUR", "END", "DATA", "HOLE" };
	static const int whences[] = { SEEK_SET, SEEK_CUR, SEEK_END, SEEK_DATA, SEEK_HOLE };
	int slot = z_pick_fd(z), w = z_rand(z, 5);
	long size = z_size(z);
	off_t off = w == 1 ? (long)z_rand(z, 16385) - 8192 : w == 2 ? (long)z_rand(z, size + 8300) - size - 8192 : z_off(z);
	struct res r[NSIDE];

	if (slot < 0) {
		z_desc(z, "lseek (no fd)");
		return;
	}
	z_desc(z, "lseek %s %lld SEEK_%s", z_fdname(z, slot), (long long)off, names[w]);
	for (int i = 0; i < NSIDE; i++)
		res_set(&r[i], lseek(z->s[i].fds[slot].fd, off, whences[w]));
	z_same(z, r);
}

void op_fadvise(struct fz *z)
{
	static const int adv[] = { POSIX_FADV_DONTNEED, POSIX_FADV_WILLNEED, POSIX_FADV_NOREUSE,
				   POSIX_FADV_NORMAL, POSIX_FADV_SEQUENTIAL, POSIX_FADV_RANDOM, 42 };
	static const char *names[] = { "DONTNEED", "WILLNEED", "NOREUSE", "NORMAL",
				       "SEQUENTIAL", "RANDOM", "42" };
	int slot = z_pick_fd(z), a = z_rand(z, 10);
	off_t off = z_pct(z, 40) ? 0 : z_off(z);
	size_t len = z_pct(z, 40) ? 0 : z_len(z);
	struct res r[NSIDE];

	a = a < 3 ? 0 : a < 5 ? 1 : a - 3;	/* DONTNEED and WILLNEED most */
	if (slot < 0) {
		z_desc(z, "fadvise (no fd)");
		return;
	}
	z_desc(z, "fadvise %s off %lld len %zu %s", z_fdname(z, slot), (long long)off, len, names[a]);
	for (int i = 0; i < NSIDE; i++) {
		int e = posix_fadvise(z->s[i].fds[slot].fd, off, len, adv[a]);

		errno = e;
		res_set(&r[i], e ? -1 : 0);
	}
	z_same(z, r);
}

void op_readahead(struct fz *z)
{
	int slot = z_pick_fd(z);
	off_t off = z_off(z);
	size_t len = z_len(z);
	struct res r[NSIDE];

	if (slot < 0) {
		z_desc(z, "readahead (no fd)");
		return;
	}
	z_desc(z, "readahead %s off %lld len %zu", z_fdname(z, slot), (long long)off, len);
	for (int i = 0; i < NSIDE; i++)
		res_set(&r[i], readahead(z->s[i].fds[slot].fd, off, len));
	z_same(z, r);
}

/* cachestat(2), syscall 451 (6.5): only its success or errno compares. */
struct cs_range {
	uint64_t off, len;
};
struct cs_stat {
	uint64_t cache, dirty, writeback, evicted, recently_evicted;
};

void op_cachestat(struct fz *z)
{
	int slot = z_pick_fd(z), flags = z_pct(z, 10);
	struct cs_range range = { z_off(z), z_pct(z, 30) ? 0 : z_len(z) };
	struct res r[NSIDE];

	if (slot < 0) {
		z_desc(z, "cachestat (no fd)");
		return;
	}
	z_desc(z, "cachestat %s off %llu len %llu flags %d", z_fdname(z, slot),
	       (unsigned long long)range.off, (unsigned long long)range.len, flags);
	for (int i = 0; i < NSIDE; i++) {
		struct cs_stat cs;

		res_set(&r[i], syscall(451, z->s[i].fds[slot].fd, &range, &cs, flags));
	}
	z_same(z, r);
}

void op_splice_out(struct fz *z)
{
	int slot = z_pick_fd(z), use_off = z_pct(z, 75);
	int flags = (z_pct(z, 20) ? SPLICE_F_NONBLOCK : 0) | (z_pct(z, 20) ? SPLICE_F_MOVE : 0);
	off_t off = z_off(z);
	size_t len = z_len(z);
	struct res r[NSIDE];

	if (len > MiB)
		len = MiB;
	if (slot < 0) {
		z_desc(z, "splice_out (no fd)");
		return;
	}
	z_dio_clamp(z, slot, use_off ? off : -1, &len);
	z_desc(z, "splice %s off %lld len %zu to a pipe, flags %#x", z_fdname(z, slot),
	       use_off ? (long long)off : -1LL, len, flags);
	for (int i = 0; i < NSIDE; i++) {
		struct side *s = &z->s[i];
		loff_t o = off;
		int p[2];
		long ret;

		if (pipe2(p, O_CLOEXEC | O_NONBLOCK))
			die("fuzz: pipe: %s", strerror(errno));
		fcntl(p[1], F_SETPIPE_SZ, (int)MiB);
		ret = splice(s->fds[slot].fd, use_off ? &o : NULL, p[1], NULL, len, flags);
		res_data(&r[i], ret, s->buf);
		for (long got = 0; ret > 0 && got < ret;) {
			long n = read(p[0], s->buf + got, ret - got);

			if (n <= 0) {
				z_fail(z, "%s: the pipe held %ld of the %ld bytes spliced", z->desc, got, ret);
				break;
			}
			got += n;
		}
		close(p[0]);
		close(p[1]);
	}
	z_same(z, r);
}

void op_sendfile(struct fz *z)
{
	int slot = z_pick_fd(z), use_off = z_pct(z, 75);
	off_t off = z_off(z);
	size_t len = z_len(z);
	struct res r[NSIDE];

	if (slot < 0) {
		z_desc(z, "sendfile (no fd)");
		return;
	}
	z_dio_clamp(z, slot, use_off ? off : -1, &len);
	z_desc(z, "sendfile %s off %lld len %zu to a tmpfs file", z_fdname(z, slot),
	       use_off ? (long long)off : -1LL, len);
	for (int i = 0; i < NSIDE; i++) {
		struct side *s = &z->s[i];
		off_t o = off;
		long ret;

		if (ftruncate(s->tmp_fd, 0) || lseek(s->tmp_fd, 0, SEEK_SET))
			die("fuzz: the tmpfs file: %s", strerror(errno));
		ret = sendfile(s->tmp_fd, s->fds[slot].fd, use_off ? &o : NULL, len);
		res_data(&r[i], ret, s->buf);
		if (ret > 0 && pread_full(s->tmp_fd, s->buf, ret, 0) != ret)
			die("fuzz: reading the tmpfs file: %s", strerror(errno));
	}
	z_same(z, r);
}

/* Keep the scratch companion small (the same way on both sides). */
static void scr_trim(struct fz *z)
{
	struct stat st;

	if (fstat(z->s[1].scr_fd, &st) == 0 && st.st_size > (off_t)(4 * MiB))
		for (int i = 0; i < NSIDE; i++)
			if (ftruncate(z->s[i].scr_fd, 256 * KiB))
				die("fuzz: truncating the scratch file: %s", strerror(errno));
}

void op_cfr_from(struct fz *z)
{
	int slot = z_pick_fd(z), use_off = z_pct(z, 80), flags = z_pct(z, 5);
	off_t off = z_off(z), oout = z_rand(z, 512 * KiB);
	size_t len = z_len(z);
	struct res r[NSIDE];

	if (slot < 0) {
		z_desc(z, "copy_file_range from (no fd)");
		return;
	}
	z_dio_clamp(z, slot, use_off ? off : -1, &len);
	scr_trim(z);
	z_desc(z, "copy_file_range %s off %lld len %zu to scratch off %lld flags %d", z_fdname(z, slot),
	       use_off ? (long long)off : -1LL, len, (long long)oout, flags);
	for (int i = 0; i < NSIDE; i++) {
		struct side *s = &z->s[i];
		loff_t oi = off, oo = oout;
		long ret = copy_file_range(s->fds[slot].fd, use_off ? &oi : NULL, s->scr_fd, &oo, len, flags);

		res_data(&r[i], ret, s->buf);
		if (ret > 0 && pread_full(s->scr_fd, s->buf, ret, oout) != ret)
			die("fuzz: reading the scratch file: %s", strerror(errno));
	}
	if (z_same(z, r))
		z_same_files(z, z->s[0].scr_fd, z->s[1].scr_fd, "scratch");
}

/* FICLONE / FICLONERANGE with the file as the source. */
void op_clone_from(struct fz *z)
{
	int slot = z_pick_fd(z), whole = z_pct(z, 25), aligned = z_pct(z, 85);
	struct file_clone_range fcr = {
		.src_offset = z_off(z),
		.src_length = z_pct(z, 15) ? 0 : (z_rand(z, 64) + 1) * PG,
		.dest_offset = z_rand(z, 64) * PG,
	};
	struct res r[NSIDE];

	if (slot < 0) {
		z_desc(z, "clone from (no fd)");
		return;
	}
	if (aligned)
		fcr.src_offset &= ~(PG - 1);
	else
		fcr.src_length += z_rand(z, PG);
	scr_trim(z);
	if (whole)
		z_desc(z, "FICLONE scratch from %s", z_fdname(z, slot));
	else
		z_desc(z, "FICLONERANGE scratch off %llu from %s off %llu len %llu", (unsigned long long)fcr.dest_offset,
		       z_fdname(z, slot), (unsigned long long)fcr.src_offset, (unsigned long long)fcr.src_length);
	for (int i = 0; i < NSIDE; i++) {
		struct side *s = &z->s[i];

		fcr.src_fd = s->fds[slot].fd;
		res_set(&r[i], whole ? ioctl(s->scr_fd, FICLONE, s->fds[slot].fd) :
				ioctl(s->scr_fd, FICLONERANGE, &fcr));
	}
	if (z_same(z, r))
		z_same_files(z, z->s[0].scr_fd, z->s[1].scr_fd, "scratch");
}
