/*
 * stackio [--quiet] [--name PREFIX] --state drop|fadvise|warm FILE TWIN
 *
 * The asynchronous and non-blocking reads of a stacked file. FILE is a
 * tagged file (a read-only open of it is served through its share: a
 * stacked file forwarding to a backing file), TWIN an untagged file with
 * the same bytes on the same filesystem. Each case runs one list of reads
 * on TWIN, then on FILE, and wants the same result or errno for every
 * read, and every returned byte right (the expected bytes are TWIN's,
 * read with O_DIRECT before any case):
 *
 *   io_uring READ, READV, READ_FIXED (registered buffers), inline and
 *   with IOSQE_ASYNC, READ with RWF_NOWAIT, 16 in flight; a ring set up
 *   with IORING_SETUP_IOPOLL reading buffered and through an O_DIRECT
 *   open; Linux AIO (io_submit, raw syscalls) buffered, with RWF_NOWAIT,
 *   and O_DIRECT; preadv2 with 0, RWF_NOWAIT, RWF_HIPRI,
 *   RWF_NOWAIT|RWF_HIPRI and a flag bit no kernel defines.
 *
 * Reads straddle 4 KiB and 512 KiB boundaries and EOF, and start past it.
 * --state says what both files' caches hold when a case starts: drop
 * (sync and drop_caches, then opened), fadvise (opened, then
 * POSIX_FADV_DONTNEED) or warm (read whole); mincore() on a mapping of
 * each must show it (a mapping of FILE shows the share's cache). With
 * RWF_NOWAIT on cold files FILE may return EAGAIN or a short read where
 * TWIN returned data (and the other way round), as readahead decides;
 * never another errno, and what it returns must be right. Warm, it must
 * return what TWIN returns.
 *
 * Each case runs in a child process, whose result comes back through a
 * pipe: a child killed by a kernel oops, or stuck, fails its case and the
 * next case runs. KTAP through the test harness (dedup/tests/harness.c),
 * its plan first, one case each; with --quiet only the failed ones. Last line on stderr
 * "stackio: N cases, N failed". Exit 1 on a failed case, 2 on a usage
 * error or an unreadable TWIN.
 */
#include "common.h"

#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/aio_abi.h>
#include <liburing.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define QD 16			/* io_uring reads in flight */
#define MAXREQ 80
#define FILL 0xa5		/* bytes past a read's result stay FILL */
#define CASE_SECS 30		/* a case that reports nothing by then is stuck */
#define EXIT_SECS 10		/* and one that reported must be gone by then */
#define NORES LONG_MIN		/* no completion seen */
#define RWF_UNDEFINED ((int)(1u << 30))	/* no kernel defines this bit */

enum state { DROP, FADVISE, WARM };

static struct {
	const char *path, *twin, *prefix;
	enum state state;
	bool quiet;
	unsigned char *ref;	/* expected bytes */
	size_t n, pg;
	struct rq { size_t off, len; } breq[MAXREQ], dreq[MAXREQ];
	int nbreq, ndreq;
	int cases, failed;
} g;

/* One case's result, written by its child through a pipe (< PIPE_BUF). */
struct ck {
	int fails;
	char detail[1536];
	char note[512];
};

static void ck_fail(struct ck *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void ck_fail(struct ck *c, const char *fmt, ...)
{
	va_list ap;

	if (c->fails++ == 0) {
		va_start(ap, fmt);
		vsnprintf(c->detail, sizeof(c->detail), fmt, ap);
		va_end(ap);
	}
}

/* "12345 bytes" or "EAGAIN". */
static const char *res_str(long r, char *buf, size_t len)
{
	const char *name;

	if (r == NORES)
		snprintf(buf, len, "no completion");
	else if (r >= 0)
		snprintf(buf, len, "%ld bytes", r);
	else if ((name = strerrorname_np(-r)))
		snprintf(buf, len, "%s", name);
	else
		snprintf(buf, len, "errno %ld", -r);
	return buf;
}

static size_t expect_len(size_t off, size_t len)
{
	return off >= g.n ? 0 : len < g.n - off ? len : g.n - off;
}

/* ---- the reads ------------------------------------------------------- */

static void add(struct rq *rq, int *n, size_t off, size_t len)
{
	if (*n < MAXREQ)
		rq[(*n)++] = (struct rq){ off, len };
}

static size_t before(size_t b, size_t k)
{
	return b > k ? b - k : 0;
}

/* Buffered reads: boundaries, EOF, past EOF, a few at random. */
static void build_reqs(void)
{
	static const size_t lens[] = { 1, 4095, 8193, 65539, 131072, 1 * MiB };
	const size_t n = g.n, down = n / 4096 * 4096, up = (n + 4095) / 4096 * 4096;
	uint64_t rs = 7;
	struct rq *b = g.breq, *d = g.dreq;
	int *nb = &g.nbreq, *nd = &g.ndreq;

	add(b, nb, 0, 1);
	add(b, nb, 0, 4096);
	add(b, nb, 0, 1 * MiB);
	for (size_t k = 4096; k <= 3 * 4096; k += 4096) {
		add(b, nb, k - 7, 4096 + 14);
		add(b, nb, k - 1, 2);
		add(b, nb, k, 4096);
		add(b, nb, k + 1, 4095);
	}
	for (size_t k = 512 * KiB; k < n; k += 512 * KiB) {
		add(b, nb, k - 1, 2);
		add(b, nb, k - 4099, 8198);
		add(b, nb, k - 100, 65536 + 3);
		add(b, nb, k + 1, 512 * KiB + 1);
	}
	add(b, nb, before(n, 1), 1);
	add(b, nb, before(n, 1), 4096);
	add(b, nb, before(n, 4097), 8192);
	add(b, nb, before(n, 700 * KiB), 1 * MiB);
	add(b, nb, n, 100);
	add(b, nb, n + 1, 4096);
	add(b, nb, n + 12345, 65536);
	for (int i = 0; i < 8; i++)
		add(b, nb, rng_below(&rs, n + 8192), lens[rng_below(&rs, 6)]);

	/* O_DIRECT: 4 KiB aligned. */
	add(d, nd, 0, 4096);
	add(d, nd, 4096, 8192);
	add(d, nd, 0, 1 * MiB);
	for (size_t k = 512 * KiB; k < n; k += 512 * KiB)
		add(d, nd, k - 4096, 65536);
	add(d, nd, 1 * MiB, 512 * KiB);
	add(d, nd, before(down, 4096), 16384);
	add(d, nd, down, 4096);
	add(d, nd, up, 4096);
	add(d, nd, up + 1 * MiB, 8192);
}

/* One file's results and buffers for a list of reads. */
struct io {
	long res[MAXREQ];
	unsigned char *buf[MAXREQ];
};

static struct io *io_new(const struct rq *rq, int nrq)
{
	struct io *io = xmalloc(sizeof(*io));

	for (int i = 0; i < nrq; i++) {
		size_t cap = (rq[i].len + 4095) / 4096 * 4096;

		if (posix_memalign((void **)&io->buf[i], 4096, cap))
			die("out of memory");
		memset(io->buf[i], FILL, cap);
		io->res[i] = NORES;
	}
	return io;
}

/* How a case reads. */
struct kase {
	const char *name;
	enum { URING, AIO, PREADV2 } how;
	int op;			/* io_uring opcode */
	bool async;		/* IOSQE_ASYNC */
	unsigned setup;		/* io_uring_queue_init() flags */
	int rwf;		/* RWF_* flags */
	bool direct;		/* an O_DIRECT open */
};

static void run_uring(struct ck *c, const char *who, int fd, const struct kase *k,
		      const struct rq *rq, int nrq, struct io *io)
{
	struct iovec (*vec)[3] = xmalloc(sizeof(*vec) * nrq);
	struct iovec *fixed = xmalloc(sizeof(*fixed) * nrq);
	int next = 0, inflight = 0, done = 0, ret;
	struct io_uring ring;

	ret = io_uring_queue_init(QD, &ring, k->setup);
	if (ret < 0) {
		ck_fail(c, "%s: io_uring_queue_init: %s", who, strerror(-ret));
		goto out;
	}
	for (int i = 0; i < nrq; i++) {
		size_t a = rq[i].len / 3, b = rq[i].len / 5;

		/* Uneven thirds for READV. */
		vec[i][0] = (struct iovec){ io->buf[i], a };
		vec[i][1] = (struct iovec){ io->buf[i] + a, b };
		vec[i][2] = (struct iovec){ io->buf[i] + a + b, rq[i].len - a - b };
		fixed[i] = (struct iovec){ io->buf[i], rq[i].len };
	}
	if (k->op == IORING_OP_READ_FIXED) {
		ret = io_uring_register_buffers(&ring, fixed, nrq);
		if (ret < 0) {
			ck_fail(c, "%s: io_uring_register_buffers: %s", who, strerror(-ret));
			goto exit;
		}
	}
	while (done < nrq) {
		struct io_uring_cqe *cqe;

		while (next < nrq && inflight < QD) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
			const struct rq *r = &rq[next];

			if (!sqe)
				break;
			if (k->op == IORING_OP_READV)
				io_uring_prep_readv(sqe, fd, vec[next], 3, r->off);
			else if (k->op == IORING_OP_READ_FIXED)
				io_uring_prep_read_fixed(sqe, fd, io->buf[next], r->len,
							 r->off, next);
			else
				io_uring_prep_read(sqe, fd, io->buf[next], r->len, r->off);
			if (k->async)
				sqe->flags |= IOSQE_ASYNC;
			sqe->rw_flags = k->rwf;
			io_uring_sqe_set_data64(sqe, next);
			next++;
			inflight++;
		}
		ret = io_uring_submit_and_wait(&ring, 1);
		if (ret < 0 && ret != -EINTR) {
			ck_fail(c, "%s: io_uring_submit_and_wait: %s", who, strerror(-ret));
			break;
		}
		while (io_uring_peek_cqe(&ring, &cqe) == 0) {
			uint64_t i = io_uring_cqe_get_data64(cqe);

			if (i < (uint64_t)nrq)
				io->res[i] = cqe->res;
			io_uring_cqe_seen(&ring, cqe);
			inflight--;
			done++;
		}
	}
exit:
	io_uring_queue_exit(&ring);
out:
	free(vec);
	free(fixed);
}

static long sys_io_setup(unsigned nr, aio_context_t *ctx)
{
	return syscall(SYS_io_setup, nr, ctx);
}

static long sys_io_submit(aio_context_t ctx, long nr, struct iocb **cbs)
{
	return syscall(SYS_io_submit, ctx, nr, cbs);
}

static long sys_io_getevents(aio_context_t ctx, long min, long max,
			     struct io_event *ev, struct timespec *ts)
{
	return syscall(SYS_io_getevents, ctx, min, max, ev, ts);
}

static long sys_io_destroy(aio_context_t ctx)
{
	return syscall(SYS_io_destroy, ctx);
}

/* All reads submitted at once; a read refused at submission is its result. */
static void run_aio(struct ck *c, const char *who, int fd, const struct kase *k,
		    const struct rq *rq, int nrq, struct io *io)
{
	struct iocb cb[MAXREQ], *cbp[MAXREQ];
	struct io_event ev[MAXREQ];
	aio_context_t ctx = 0;
	int next = 0, pending = 0;

	if (sys_io_setup(nrq, &ctx) < 0) {
		ck_fail(c, "%s: io_setup: %s", who, strerror(errno));
		return;
	}
	for (int i = 0; i < nrq; i++) {
		memset(&cb[i], 0, sizeof(cb[i]));
		cb[i].aio_fildes = fd;
		cb[i].aio_lio_opcode = IOCB_CMD_PREAD;
		cb[i].aio_buf = (uintptr_t)io->buf[i];
		cb[i].aio_nbytes = rq[i].len;
		cb[i].aio_offset = rq[i].off;
		cb[i].aio_data = i;
		cb[i].aio_rw_flags = k->rwf;
		cbp[i] = &cb[i];
	}
	while (next < nrq) {
		long r = sys_io_submit(ctx, nrq - next, cbp + next);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			io->res[next++] = r < 0 ? -errno : NORES;
			continue;
		}
		next += r;
		pending += r;
	}
	while (pending > 0) {
		struct timespec ts = { CASE_SECS / 2, 0 };
		long r = sys_io_getevents(ctx, 1, pending, ev, &ts);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			ck_fail(c, "%s: io_getevents: %s, %d reads pending", who,
				r < 0 ? strerror(errno) : "timed out", pending);
			return;	/* io_destroy() would wait for them */
		}
		for (long j = 0; j < r; j++)
			if (ev[j].data < (uint64_t)nrq)
				io->res[ev[j].data] = ev[j].res;
		pending -= r;
	}
	sys_io_destroy(ctx);
}

static void run_preadv2(int fd, const struct kase *k, const struct rq *rq,
			int nrq, struct io *io)
{
	for (int i = 0; i < nrq; i++) {
		size_t a = rq[i].len / 3;
		struct iovec iov[2] = { { io->buf[i], a },
					{ io->buf[i] + a, rq[i].len - a } };
		ssize_t r = preadv2(fd, iov, 2, rq[i].off, k->rwf);

		io->res[i] = r < 0 ? -errno : r;
	}
}

static void run(struct ck *c, const char *who, int fd, const struct kase *k,
		const struct rq *rq, int nrq, struct io *io)
{
	if (k->how == URING)
		run_uring(c, who, fd, k, rq, nrq, io);
	else if (k->how == AIO)
		run_aio(c, who, fd, k, rq, nrq, io);
	else
		run_preadv2(fd, k, rq, nrq, io);
}

/* ---- cache state ----------------------------------------------------- */

/* Pages of fd's file in the page cache it reads from (a share's for FILE). */
static long resident(int fd)
{
	size_t pages = (g.n + g.pg - 1) / g.pg;
	unsigned char *vec;
	long count = 0;
	void *m;

	if (!pages)
		return 0;
	m = mmap(NULL, g.n, PROT_READ, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		return -errno;
	vec = xmalloc(pages);
	if (mincore(m, g.n, vec) < 0)
		count = -errno;
	for (size_t i = 0; count >= 0 && i < pages; i++)
		count += vec[i] & 1;
	munmap(m, g.n);
	free(vec);
	return count;
}

static int drop_caches(struct ck *c)
{
	int fd;

	sync();
	fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, "3", 1) != 1) {
		ck_fail(c, "drop_caches: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

static int read_whole(int fd)
{
	unsigned char *buf = xmalloc(1 * MiB);
	ssize_t r;

	while ((r = read(fd, buf, 1 * MiB)) > 0)
		;
	free(buf);
	return r < 0 ? -1 : 0;
}

/*
 * Open FILE and TWIN read-only (and O_DIRECT too for a direct case),
 * both in --state; the buffered fds are opened first, so that FILE's
 * DONTNEED reaches its share (fadvise(DONTNEED) leaves a share alone
 * while another open of it is live).
 */
static int prepare(struct ck *c, int fd[2], int dfd[2], bool direct)
{
	const char *paths[2] = { g.path, g.twin }, *who[2] = { "FILE", "TWIN" };
	long want = g.state == WARM ? (long)((g.n + g.pg - 1) / g.pg) : 0, got[2] = { 0, 0 };

	if (g.state == DROP && drop_caches(c))
		return -1;
	for (int f = 0; f < 2; f++) {
		fd[f] = open(paths[f], O_RDONLY | O_CLOEXEC);
		if (fd[f] < 0) {
			ck_fail(c, "open %s: %s", who[f], strerror(errno));
			return -1;
		}
	}
	/*
	 * DONTNEED skips folios under I/O (a NOWAIT read's readahead), and
	 * reclaim may take a page from a warm file: retry.
	 */
	for (int t = 0; t < 100; t++) {
		for (int f = 0; f < 2; f++) {
			if (g.state == FADVISE)
				posix_fadvise(fd[f], 0, 0, POSIX_FADV_DONTNEED);
			if (g.state == WARM && read_whole(fd[f])) {
				ck_fail(c, "read %s: %s", who[f], strerror(errno));
				return -1;
			}
		}
		got[0] = resident(fd[0]);
		got[1] = resident(fd[1]);
		if (got[0] == want && got[1] == want)
			break;
		usleep(20000);
		if (g.state == DROP && drop_caches(c))
			return -1;
	}
	for (int f = 0; f < 2; f++) {
		if (got[f] < 0) {
			ck_fail(c, "mmap/mincore %s: %s", who[f], strerror(-got[f]));
			return -1;
		}
		if (got[f] != want) {
			ck_fail(c, "%s not %s: %ld of %ld pages cached", who[f],
				g.state == WARM ? "warm" : "cold", got[f],
				(long)((g.n + g.pg - 1) / g.pg));
			return -1;
		}
	}
	for (int f = 0; direct && f < 2; f++) {
		dfd[f] = open(paths[f], O_RDONLY | O_CLOEXEC | O_DIRECT);
		if (dfd[f] < 0) {
			ck_fail(c, "open %s O_DIRECT: %s", who[f], strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* ---- the comparison -------------------------------------------------- */

static const char *what(const struct kase *k, const struct rq *r, char *buf, size_t len)
{
	snprintf(buf, len, "%s(off %zu, len %zu)", k->name, r->off, r->len);
	return buf;
}

/* Returned bytes right, and (buffered) nothing written past them. */
static void check_bytes(struct ck *c, const char *who, const struct kase *k,
			const struct rq *r, long res, const unsigned char *buf)
{
	size_t want = expect_len(r->off, r->len);
	char w[96];
	ssize_t d;

	if (res < 0 || res == NORES)
		return;
	if ((size_t)res > want) {
		ck_fail(c, "%s: %s returned %ld bytes, %zu before EOF", who,
			what(k, r, w, sizeof(w)), res, want);
		return;
	}
	d = first_diff(buf, g.ref + r->off, res);
	if (d >= 0) {
		ck_fail(c, "%s: %s: offset %zu: expected 0x%02x got 0x%02x", who,
			what(k, r, w, sizeof(w)), r->off + d, g.ref[r->off + d], buf[d]);
		return;
	}
	/* A direct read may fill the rest of its last block. */
	for (size_t i = res; !k->direct && i < r->len; i++)
		if (buf[i] != FILL) {
			ck_fail(c, "%s: %s: byte %zu written past the %ld returned", who,
				what(k, r, w, sizeof(w)), i, res);
			return;
		}
}

struct tally { int full, part, eagain, err; };

static void count(struct tally *t, const struct rq *r, long res)
{
	if (res >= 0 && (size_t)res == expect_len(r->off, r->len))
		t->full++;
	else if (res >= 0)
		t->part++;
	else if (res == -EAGAIN)
		t->eagain++;
	else
		t->err++;
}

static void compare(struct ck *c, const struct kase *k, const struct rq *rq, int nrq,
		    const struct io *tw, const struct io *fi)
{
	/* Cold, a NOWAIT read returns what readahead got to; warm, all of it. */
	bool loose = (k->rwf & RWF_NOWAIT) && g.state != WARM;
	struct tally tf = { 0 }, tt = { 0 };

	for (int i = 0; i < nrq; i++) {
		const struct rq *r = &rq[i];
		long a = fi->res[i], b = tw->res[i];
		char w[96], sa[32], sb[32];

		count(&tf, r, a);
		count(&tt, r, b);
		check_bytes(c, "TWIN", k, r, b, tw->buf[i]);
		if (a == NORES) {
			ck_fail(c, "FILE: %s: no completion", what(k, r, w, sizeof(w)));
			continue;
		}
		if (!loose || (b < 0 && b != -EAGAIN)) {
			if (a != b)
				ck_fail(c, "%s: FILE %s, TWIN %s", what(k, r, w, sizeof(w)),
					res_str(a, sa, sizeof(sa)), res_str(b, sb, sizeof(sb)));
		} else if (a < 0 && a != -EAGAIN) {
			ck_fail(c, "%s: FILE %s, TWIN %s: NOWAIT gives data or EAGAIN",
				what(k, r, w, sizeof(w)), res_str(a, sa, sizeof(sa)),
				res_str(b, sb, sizeof(sb)));
		} else if (a == 0 && expect_len(r->off, r->len)) {
			ck_fail(c, "%s: FILE returned 0 before EOF", what(k, r, w, sizeof(w)));
		}
		check_bytes(c, "FILE", k, r, a, fi->buf[i]);
	}
	snprintf(c->note, sizeof(c->note),
		 "%d reads: FILE %d full %d short %d EAGAIN %d error, TWIN %d full %d short %d EAGAIN %d error",
		 nrq, tf.full, tf.part, tf.eagain, tf.err, tt.full, tt.part, tt.eagain, tt.err);
}

static void do_case(struct ck *c, const struct kase *k)
{
	const struct rq *rq = k->direct ? g.dreq : g.breq;
	int nrq = k->direct ? g.ndreq : g.nbreq;
	int fd[2] = { -1, -1 }, dfd[2] = { -1, -1 };
	struct io *fi = io_new(rq, nrq), *tw = io_new(rq, nrq);

	if (prepare(c, fd, dfd, k->direct))
		return;
	/* TWIN first: FILE is still as cold, its cache is not TWIN's. */
	run(c, "TWIN", k->direct ? dfd[1] : fd[1], k, rq, nrq, tw);
	run(c, "FILE", k->direct ? dfd[0] : fd[0], k, rq, nrq, fi);
	if (!c->fails)
		compare(c, k, rq, nrq, tw, fi);
}

/* ---- one child per case ---------------------------------------------- */

static bool read_result(int fd, struct ck *c)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	size_t got = 0;
	time_t end = time(NULL) + CASE_SECS;

	while (got < sizeof(*c)) {
		int left = (int)(end - time(NULL));
		ssize_t r;

		if (left <= 0)
			return false;
		if (poll(&p, 1, left * 1000) <= 0) {
			if (errno == EINTR)
				continue;
			return false;
		}
		r = read(fd, (char *)c + got, sizeof(*c) - got);
		if (r <= 0)
			return false;
		got += r;
	}
	return true;
}

/* Reaped within secs; *st its status. */
static bool reap(pid_t pid, int *st, int secs)
{
	for (int i = 0; i < secs * 100; i++) {
		if (waitpid(pid, st, WNOHANG) == pid)
			return true;
		usleep(10000);
	}
	return false;
}

static void run_case(const struct kase *k)
{
	char name[256];
	struct ck c;
	int p[2], st = 0;
	bool got, gone;
	pid_t pid;

	snprintf(name, sizeof(name), "%s%s%s", g.prefix ? g.prefix : "",
		 g.prefix ? "/" : "", k->name);
	memset(&c, 0, sizeof(c));
	if (pipe(p))
		die("pipe: %s", strerror(errno));
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		/* A stuck child must not hold the caller's output open. */
		int nul = open("/dev/null", O_RDWR);
		size_t off = 0;

		close(p[0]);
		dup2(nul, 1);
		dup2(nul, 2);
		do_case(&c, k);
		while (off < sizeof(c)) {
			ssize_t r = write(p[1], (char *)&c + off, sizeof(c) - off);

			if (r <= 0)
				_exit(3);
			off += r;
		}
		_exit(0);
	}
	close(p[1]);
	got = read_result(p[0], &c);
	close(p[0]);
	gone = reap(pid, &st, got ? EXIT_SECS : 1);
	g.cases++;
	if (c.note[0] && !g.quiet)
		diag("%s: %s", name, c.note);
	if (!got) {
		g.failed++;
		if (gone && WIFSIGNALED(st))
			fail(name, "killed by signal %d (%s) before it reported: a kernel oops? (dmesg)",
			     WTERMSIG(st), strsignal(WTERMSIG(st)));
		else if (gone)
			fail(name, "exited with status %d before it reported", WEXITSTATUS(st));
		else
			fail(name, "no result after %d s: stuck (pid %d left behind)", CASE_SECS, pid);
	} else if (!gone) {
		g.failed++;
		fail(name, "reported, then did not exit within %d s (pid %d): reads never completed?",
		     EXIT_SECS, pid);
	} else if (c.fails) {
		g.failed++;
		if (c.fails > 1)
			fail(name, "%s (and %d more)", c.detail, c.fails - 1);
		else
			fail(name, "%s", c.detail);
	} else {
		pass(name);
	}
}

/* The cold io_uring reads first: nothing else has touched FILE yet. */
static const struct kase cases[] = {
	{ "io_uring READ", URING, IORING_OP_READ, false, 0, 0, false },
	{ "io_uring READV", URING, IORING_OP_READV, false, 0, 0, false },
	{ "io_uring READ_FIXED", URING, IORING_OP_READ_FIXED, false, 0, 0, false },
	{ "io_uring READ IOSQE_ASYNC", URING, IORING_OP_READ, true, 0, 0, false },
	{ "io_uring READV IOSQE_ASYNC", URING, IORING_OP_READV, true, 0, 0, false },
	{ "io_uring READ_FIXED IOSQE_ASYNC", URING, IORING_OP_READ_FIXED, true, 0, 0, false },
	{ "io_uring READ RWF_NOWAIT", URING, IORING_OP_READ, false, 0, RWF_NOWAIT, false },
	{ "io_uring IOPOLL READ", URING, IORING_OP_READ, false, IORING_SETUP_IOPOLL, 0, false },
	{ "io_uring IOPOLL READ O_DIRECT", URING, IORING_OP_READ, false, IORING_SETUP_IOPOLL, 0, true },
	{ "aio PREAD", AIO, 0, false, 0, 0, false },
	{ "aio PREAD RWF_NOWAIT", AIO, 0, false, 0, RWF_NOWAIT, false },
	{ "aio PREAD O_DIRECT", AIO, 0, false, 0, 0, true },
	{ "preadv2 0", PREADV2, 0, false, 0, 0, false },
	{ "preadv2 RWF_NOWAIT", PREADV2, 0, false, 0, RWF_NOWAIT, false },
	{ "preadv2 RWF_HIPRI", PREADV2, 0, false, 0, RWF_HIPRI, false },
	{ "preadv2 RWF_NOWAIT|RWF_HIPRI", PREADV2, 0, false, 0, RWF_NOWAIT | RWF_HIPRI, false },
	{ "preadv2 undefined flag", PREADV2, 0, false, 0, RWF_UNDEFINED, false },
};

static void usage(void)
{
	die("usage: stackio [--quiet] [--name PREFIX] --state drop|fadvise|warm FILE TWIN");
}

int main(int argc, char **argv)
{
	const char *state = NULL;
	struct stat st;
	int i, direct, ret;

	for (i = 1; i < argc && argv[i][0] == '-' && argv[i][1] == '-'; i++) {
		if (!strcmp(argv[i], "--quiet"))
			g.quiet = true;
		else if (!strcmp(argv[i], "--name") && i + 1 < argc)
			g.prefix = argv[++i];
		else if (!strcmp(argv[i], "--state") && i + 1 < argc)
			state = argv[++i];
		else
			usage();
	}
	if (argc - i != 2 || !state)
		usage();
	if (!strcmp(state, "drop"))
		g.state = DROP;
	else if (!strcmp(state, "fadvise"))
		g.state = FADVISE;
	else if (!strcmp(state, "warm"))
		g.state = WARM;
	else
		usage();
	g.path = argv[i];
	g.twin = argv[i + 1];
	g.pg = sysconf(_SC_PAGESIZE);
	ret = load_file(g.twin, &g.ref, &g.n, &direct);
	if (ret)
		die("stackio: cannot read TWIN %s: %s", g.twin, strerror(-ret));
	if (stat(g.path, &st) < 0)
		die("stackio: %s: %s", g.path, strerror(errno));
	if ((size_t)st.st_size != g.n)
		die("stackio: FILE has %jd bytes, TWIN %zu", (intmax_t)st.st_size, g.n);
	if (g.quiet)
		harness_quiet();
	build_reqs();
	/* The version line and the plan before forking: the children print nothing. */
	harness_plan((int)(sizeof(cases) / sizeof(cases[0])));
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++)
		run_case(&cases[k]);
	ret = harness_exit();
	fprintf(stderr, "stackio: %d cases, %d failed\n", g.cases, g.failed);
	return ret;
}
