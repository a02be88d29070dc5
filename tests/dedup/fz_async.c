/*
 * fuzz: io_uring (READ, READV, READ_FIXED and the writes, IOSQE_ASYNC and
 * RWF flags at random) and Linux AIO (raw syscalls: PREAD, PREADV, PWRITE,
 * PWRITEV with aio_rw_flags). One request in flight at a time, side by
 * side. See fuzz.c.
 */
#include "fuzz.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#ifndef RWF_NOWAIT
#define RWF_NOWAIT 0x8
#endif

static int fixed_ok;	/* buffers registered: 0, 1 the sides' bufs, 2 wbuf */

int async_setup(struct fz *z)
{
	struct io_uring *ring = calloc(1, sizeof(*ring));
	aio_context_t ctx = 0;
	int ret;

	if (!ring)
		die("out of memory");
	ret = io_uring_queue_init(8, ring, 0);
	if (ret < 0) {
		printf("fuzz: io_uring unavailable (%s): no io_uring operations\n", strerror(-ret));
		free(ring);
	} else {
		struct iovec iov[3] = {
			{ z->s[0].buf, BUFMAX }, { z->s[1].buf, BUFMAX }, { z->wbuf, BUFMAX },
		};

		z->ring = ring;
		fixed_ok = io_uring_register_buffers(ring, iov, 3) == 0;
	}
	if (syscall(SYS_io_setup, 8, &ctx))
		printf("fuzz: Linux AIO unavailable (%s): no AIO operations\n", strerror(errno));
	else
		z->aio = ctx;
	return 0;
}

void async_teardown(struct fz *z)
{
	if (z->ring) {
		io_uring_queue_exit(z->ring);
		free(z->ring);
		z->ring = NULL;
	}
	if (z->aio)
		syscall(SYS_io_destroy, (aio_context_t)z->aio);
	z->aio = 0;
}

struct uring_arg {
	int slot, kind, flags, async;
	off_t off;
	size_t len, bo;
	int n;			/* iovecs */
	struct iovec iov[NSIDE][3];
};

static const char *kinds[] = { "READ", "READV", "READ_FIXED", "WRITE", "WRITEV", "WRITE_FIXED" };

/* Submit one request for a side and wait for it: its res, errno style. */
static long uring_one(struct fz *z, int side, struct uring_arg *a)
{
	struct io_uring *ring = z->ring;
	struct side *s = &z->s[side];
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	struct io_uring_cqe *cqe;
	int fd = s->fds[a->slot].fd, ret;
	unsigned char *buf = a->kind < 3 ? s->buf + a->bo : z->wbuf + a->bo;

	if (!sqe)
		die("fuzz: no io_uring sqe");
	switch (a->kind) {
	case 0: io_uring_prep_read(sqe, fd, buf, a->len, a->off); break;
	case 1: io_uring_prep_readv(sqe, fd, a->iov[side], a->n, a->off); break;
	case 2: io_uring_prep_read_fixed(sqe, fd, buf, a->len, a->off, side); break;
	case 3: io_uring_prep_write(sqe, fd, buf, a->len, a->off); break;
	case 4: io_uring_prep_writev(sqe, fd, a->iov[side], a->n, a->off); break;
	default: io_uring_prep_write_fixed(sqe, fd, buf, a->len, a->off, 2); break;
	}
	sqe->rw_flags = a->flags;
	if (a->async)
		sqe->flags |= IOSQE_ASYNC;
	ret = io_uring_submit(ring);
	if (ret != 1)
		die("fuzz: io_uring_submit: %s", strerror(-ret));
	do
		ret = io_uring_wait_cqe(ring, &cqe);
	while (ret == -EINTR);
	if (ret < 0)
		die("fuzz: io_uring_wait_cqe: %s", strerror(-ret));
	ret = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	if (ret < 0) {
		errno = -ret;
		return -1;
	}
	return ret;
}

static long blocking_pread(struct fz *z, int side, void *arg)
{
	struct uring_arg *a = arg;

	return pread(z->s[side].fds[a->slot].fd, z->s[side].aux, a->len, a->off);
}

static void uring_op(struct fz *z, int write)
{
	struct uring_arg a = { .slot = write ? z_pick_wfd(z) : z_pick_fd(z) };
	struct res r[NSIDE];

	a.kind = z_rand(z, fixed_ok ? 3 : 2) + (write ? 3 : 0);
	a.flags = z_pct(z, 50) ? 0 : z_rwf(z, write);
	a.async = z_pct(z, 30);
	a.off = z_pct(z, 10) && !(a.flags & RWF_NOWAIT) ? -1 : z_off(z);
	a.len = z_len(z);
	a.n = z_rand(z, 3) + 1;
	if (write && a.len > MiB)
		a.len = z_rand(z, MiB) + 1;
	if (a.slot < 0) {
		z_desc(z, "io_uring %s (no fd)", write ? "write" : "read");
		return;
	}
	if (a.off >= 0)
		z_align(z, a.slot, &a.off, &a.len, &a.bo);
	if (!write)
		z_dio_clamp(z, a.slot, a.off, &a.len);
	if (write)
		z_wdata(z, a.len + a.bo);
	for (int i = 0; i < NSIDE; i++) {
		uint64_t rs = z->rng;
		unsigned char *b = write ? z->wbuf + a.bo : z->s[i].buf + a.bo;
		size_t left = a.len;

		for (int k = 0; k < a.n; k++) {
			size_t l = k == a.n - 1 ? left : z_rand(z, left + 1);

			a.iov[i][k] = (struct iovec){ b, l };
			b += l;
			left -= l;
		}
		if (i == 0)
			z->rng = rs;
	}
	z_desc(z, "io_uring %s %s off %lld len %zu%s flags %s%s", kinds[a.kind], z_fdname(z, a.slot),
	       (long long)a.off, a.len, a.kind % 3 == 1 ? " (iovecs)" : "", rwf_name(a.flags),
	       a.async ? " IOSQE_ASYNC" : "");
	for (int i = 0; i < NSIDE; i++) {
		long ret = uring_one(z, i, &a);

		res_set(&r[i], ret);
		if (!write) {
			r[i].data = z->s[i].buf + a.bo;
			r[i].len = ret > 0 ? ret : 0;
		}
	}
	if (write) {
		if (z_same(z, r) && r[0].ret > 0)
			z_data_event(z);
	} else {
		z_nowait_retry(z, r, a.flags, blocking_pread, &a);
	}
}

void op_uring_read(struct fz *z)
{
	uring_op(z, 0);
}

void op_uring_write(struct fz *z)
{
	uring_op(z, 1);
}

/* One AIO request: io_submit's error, or the event's res. */
static long aio_one(struct fz *z, int fd, int cmd, void *buf, size_t len, off_t off, int flags)
{
	struct iocb cb = {
		.aio_fildes = fd,
		.aio_lio_opcode = cmd,
		.aio_buf = (uintptr_t)buf,
		.aio_nbytes = len,
		.aio_offset = off,
		.aio_rw_flags = flags,
	};
	struct iocb *cbs[1] = { &cb };
	struct io_event ev;
	long ret = syscall(SYS_io_submit, (aio_context_t)z->aio, 1, cbs);

	if (ret != 1)
		return ret < 0 ? -1 : (errno = EIO, -1);
	do
		ret = syscall(SYS_io_getevents, (aio_context_t)z->aio, 1, 1, &ev, NULL);
	while (ret < 0 && errno == EINTR);
	if (ret != 1)
		die("fuzz: io_getevents: %s", strerror(errno));
	if (ev.res < 0) {
		errno = -ev.res;
		return -1;
	}
	return ev.res;
}

struct aio_arg {
	int slot;
	off_t off;
	size_t len;
};

static long blocking_aio(struct fz *z, int side, void *arg)
{
	struct aio_arg *a = arg;

	return pread(z->s[side].fds[a->slot].fd, z->s[side].aux, a->len, a->off);
}

static void aio_op(struct fz *z, int write)
{
	int slot = write ? z_pick_wfd(z) : z_pick_fd(z), vec = z_pct(z, 40);
	int flags = z_pct(z, 50) ? 0 : z_rwf(z, write);
	off_t off = z_off(z);
	size_t len = z_len(z), bo;
	struct res r[NSIDE];
	struct aio_arg a;

	if (write && len > MiB)
		len = z_rand(z, MiB) + 1;
	if (slot < 0) {
		z_desc(z, "aio %s (no fd)", write ? "write" : "read");
		return;
	}
	z_align(z, slot, &off, &len, &bo);
	if (write)
		z_wdata(z, len + bo);
	else
		z_dio_clamp(z, slot, off, &len);
	z_desc(z, "aio %s%s %s off %lld len %zu flags %s", write ? "PWRITE" : "PREAD", vec ? "V" : "",
	       z_fdname(z, slot), (long long)off, len, rwf_name(flags));
	for (int i = 0; i < NSIDE; i++) {
		struct side *s = &z->s[i];
		unsigned char *b = write ? z->wbuf + bo : s->buf + bo;
		struct iovec iov[2] = { { b, len / 3 }, { b + len / 3, len - len / 3 } };
		int cmd = write ? (vec ? IOCB_CMD_PWRITEV : IOCB_CMD_PWRITE) :
				  (vec ? IOCB_CMD_PREADV : IOCB_CMD_PREAD);
		long ret = vec ? aio_one(z, s->fds[slot].fd, cmd, iov, 2, off, flags) :
				 aio_one(z, s->fds[slot].fd, cmd, b, len, off, flags);

		res_set(&r[i], ret);
		if (!write) {
			r[i].data = b;
			r[i].len = ret > 0 ? ret : 0;
		}
	}
	if (write) {
		if (z_same(z, r) && r[0].ret > 0)
			z_data_event(z);
	} else {
		a = (struct aio_arg){ slot, off, len };
		z_nowait_retry(z, r, flags, blocking_aio, &a);
	}
}

void op_aio_read(struct fz *z)
{
	aio_op(z, 0);
}

void op_aio_write(struct fz *z)
{
	aio_op(z, 1);
}
