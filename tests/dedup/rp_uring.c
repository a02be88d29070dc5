/* readpaths: io_uring READ and READV (liburing); see readpaths.c. */
#include "readpaths.h"

#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#define QD 64
#define NREQ 512

struct ureq {
	size_t off, len;
	unsigned char *buf;
	struct iovec iov[3];
};

/*
 * Many reads in flight at once, some forced to the async worker
 * (IOSQE_ASYNC), the first ones on a cold file (check_io_uring()).
 */
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

void check_io_uring(void)
{
	static const int ops[2] = { IORING_OP_READ, IORING_OP_READV };
	struct io_uring ring;
	struct io_uring_probe *probe;
	struct check c;
	int ret;

	ret = io_uring_queue_init(QD, &ring, 0);
	for (int v = 0; v < 2; v++) {
		ck_begin(&c, "io_uring %s", v ? "READV" : "READ");
		/* The guest kernel has io_uring (vm/kernel.config): no skip. */
		if (ret < 0) {
			ck_fail(&c, "io_uring_queue_init: %s", strerror(-ret));
		} else {
			probe = io_uring_get_probe_ring(&ring);
			if (probe && !io_uring_opcode_supported(probe, ops[v])) {
				ck_fail(&c, "opcode not supported by this kernel");
			} else {
				int fd = open_file(&c, 0);

				if (fd >= 0) {
					/* Cold: uncached reads retry with IOCB_WAITQ. */
					posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
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
