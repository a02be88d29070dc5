/*
 * stress [-p PROCS] [-t SECONDS] [-s SEED] FILE...
 *
 * PROCS processes hammer files of identical content with random opens,
 * reads, mmaps, sendfiles and closes, some fds and mappings held across
 * iterations, so that with pcdedup members join and leave the shared cache
 * while others read from it. Every byte read is compared with the first
 * FILE's content, loaded once (O_DIRECT where possible) before forking.
 * Each process's sequence of operations is fixed by the seed.
 *
 * Output: a KTAP document with one case, "stress" (its plan first), through the test harness
 * (dedup/tests/harness.c); each mismatch is a "# stress: FILE offset N: ..."
 * diagnostic line before it. Exit 1 on a mismatch, 2 on a usage error.
 */
#include "common.h"
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static unsigned char *ref;
static size_t n, pg;
static char **files;
static int nfiles;

struct counters { unsigned long ops, fails; };

/* One process's state. */
struct worker {
	uint64_t rng;
	unsigned long ops, fails;
	unsigned char *buf;
#define NHELD 8
	struct { int fd, file; } fds[NHELD];
	struct { unsigned char *map; size_t off, len; int file; } maps[NHELD];
};

#define MAX_FAIL_LINES 20	/* per process, so a broken kernel does not flood */

static void failf(struct worker *w, int file, size_t off, const char *what)
{
	if (w->fails++ < MAX_FAIL_LINES)
		diag("stress: %s offset %zu: %s", files[file], off, what);
}

static void fail_errno(struct worker *w, int file, size_t off, const char *call)
{
	char what[128];

	snprintf(what, sizeof(what), "%s: %s", call, strerror(errno));
	failf(w, file, off, what);
}

/* Compare bytes read at off; on mismatch name the first bad offset. */
static void check_bytes(struct worker *w, int file, size_t off, const unsigned char *got,
			size_t len, const char *how)
{
	ssize_t d = first_diff(got, ref + off, len);
	char what[128];

	if (d < 0)
		return;
	snprintf(what, sizeof(what), "%s: expected 0x%02x got 0x%02x", how,
		 ref[off + d], got[d]);
	failf(w, file, off + d, what);
}

static void check_map(struct worker *w, int file, const unsigned char *map, size_t off,
		      size_t len)
{
	size_t in = len, fault;
	char what[128];
	ssize_t d;

	/* Bytes within the file, then zeros up to the end of the last page. */
	if (off + len > n)
		in = off < n ? n - off : 0;
	if (guarded_diff(map, ref + off, in, &d, &fault)) {
		failf(w, file, off + fault, "mmap: SIGBUS/SIGSEGV");
		return;
	}
	if (d >= 0) {
		snprintf(what, sizeof(what), "mmap: expected 0x%02x got 0x%02x",
			 ref[off + d], map[d]);
		failf(w, file, off + d, what);
		return;
	}
	if (guarded_nonzero(map + in, len - in, &d, &fault))
		failf(w, file, off + in + fault, "mmap past EOF: SIGBUS/SIGSEGV");
	else if (d >= 0)
		failf(w, file, off + in + d, "mmap past EOF: not zero");
}

/*
 * A random range: half uniform, half hugging a 4 KiB / 2 MiB boundary or
 * EOF, where off-by-one bugs live. May start or end past EOF.
 */
static void pick_range(struct worker *w, size_t *off, size_t *len)
{
	static const size_t lens[] = { 1, 4096, 256 * KiB, 2 * MiB + 7 };
	size_t o;

	if (rng_below(&w->rng, 2)) {
		o = rng_below(&w->rng, n + 1);
	} else {
		size_t unit = rng_below(&w->rng, 2) ? 4096 : 2 * MiB;
		size_t b = rng_below(&w->rng, 4) == 0 ? n
			   : rng_below(&w->rng, n / unit + 1) * unit;

		o = b + rng_below(&w->rng, 5);
		o = o >= 2 ? o - 2 : 0;
	}
	*off = o;
	*len = 1 + rng_below(&w->rng, lens[rng_below(&w->rng, 4)]);
}

static size_t expect_len(size_t off, size_t len)
{
	return off >= n ? 0 : len < n - off ? len : n - off;
}

static void do_pread(struct worker *w, int fd, int file)
{
	size_t off, len;
	ssize_t r;

	pick_range(w, &off, &len);
	r = pread(fd, w->buf, len, off);
	if (r < 0)
		fail_errno(w, file, off, "pread");
	else if ((size_t)r != expect_len(off, len))
		failf(w, file, off, "pread: wrong length");
	else
		check_bytes(w, file, off, w->buf, r, "pread");
}

/* A page-aligned mapping inside the file (its last page may pass EOF). */
static unsigned char *do_map(struct worker *w, int fd, int file, size_t *off, size_t *len)
{
	size_t pages = (n + pg - 1) / pg, first, count;
	void *m;

	if (!pages)
		return NULL;
	first = rng_below(&w->rng, pages);
	count = 1 + rng_below(&w->rng, pages - first < 1024 ? pages - first : 1024);
	*off = first * pg;
	*len = count * pg;
	m = mmap(NULL, *len, PROT_READ, MAP_SHARED, fd, *off);
	if (m == MAP_FAILED) {
		fail_errno(w, file, *off, "mmap");
		return NULL;
	}
	return m;
}

static void do_readall(struct worker *w, int fd, int file)
{
	size_t off = 0;

	for (;;) {
		ssize_t r = read(fd, w->buf, 65536 + 3);

		if (r < 0) {
			fail_errno(w, file, off, "read");
			return;
		}
		if (r == 0)
			break;
		if (off + r > n) {
			failf(w, file, off, "read: past EOF");
			return;
		}
		check_bytes(w, file, off, w->buf, r, "read");
		off += r;
	}
	if (off != n)
		failf(w, file, off, "read: early EOF");
}

static void do_sendfile(struct worker *w, int fd, int file, int devnull)
{
	size_t total = 0;

	for (;;) {
		ssize_t r = sendfile(devnull, fd, NULL, 1 * MiB);

		if (r < 0) {
			fail_errno(w, file, total, "sendfile");
			return;
		}
		if (r == 0)
			break;
		total += r;
	}
	if (total != n)
		failf(w, file, total, "sendfile: wrong total");
}

static int open_file(struct worker *w, int file)
{
	int fd = open(files[file], O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		fail_errno(w, file, 0, "open");
	return fd;
}

static void one_op(struct worker *w, int devnull)
{
	int file = rng_below(&w->rng, nfiles), op = rng_below(&w->rng, 100);
	int slot = rng_below(&w->rng, NHELD), fd;
	size_t off, len;
	unsigned char *m;

	if (op < 60) {
		/* A fresh open for one operation, then close. */
		fd = open_file(w, file);
		if (fd < 0)
			return;
		if (op < 25) {
			do_pread(w, fd, file);
		} else if (op < 40) {
			m = do_map(w, fd, file, &off, &len);
			if (m) {
				check_map(w, file, m, off, len);
				munmap(m, len);
			}
		} else if (op < 47) {
			/* open then close immediately */
		} else if (op < 54) {
			do_readall(w, fd, file);
		} else {
			do_sendfile(w, fd, file, devnull);
		}
		close(fd);
	} else if (op < 70) {
		/* Hold an fd across iterations (or close the one in the slot). */
		if (w->fds[slot].fd >= 0) {
			close(w->fds[slot].fd);
			w->fds[slot].fd = -1;
		} else {
			w->fds[slot].fd = open_file(w, file);
			w->fds[slot].file = file;
		}
	} else if (op < 80) {
		if (w->fds[slot].fd >= 0)
			do_pread(w, w->fds[slot].fd, w->fds[slot].file);
	} else if (op < 90) {
		/* Hold a mapping; its fd is closed at once, the mapping stays. */
		if (w->maps[slot].map) {
			munmap(w->maps[slot].map, w->maps[slot].len);
			w->maps[slot].map = NULL;
		} else if ((fd = open_file(w, file)) >= 0) {
			w->maps[slot].map = do_map(w, fd, file, &w->maps[slot].off,
						   &w->maps[slot].len);
			w->maps[slot].file = file;
			close(fd);
		}
	} else {
		if (w->maps[slot].map)
			check_map(w, w->maps[slot].file, w->maps[slot].map,
				  w->maps[slot].off, w->maps[slot].len);
	}
	w->ops++;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int worker(int id, uint64_t seed, double secs, struct counters *out)
{
	struct worker w = { .rng = seed ^ (0x9e3779b97f4a7c15ULL * (id + 1)) };
	double end = now() + secs;
	int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);

	if (devnull < 0)
		die("open /dev/null: %s", strerror(errno));
	w.buf = xmalloc(2 * MiB + 8);
	for (int i = 0; i < NHELD; i++)
		w.fds[i].fd = -1;
	while (now() < end)
		for (int i = 0; i < 64; i++)	/* clock check every 64 ops */
			one_op(&w, devnull);
	for (int i = 0; i < NHELD; i++) {
		if (w.fds[i].fd >= 0)
			close(w.fds[i].fd);
		if (w.maps[i].map) {
			check_map(&w, w.maps[i].file, w.maps[i].map, w.maps[i].off,
				  w.maps[i].len);
			munmap(w.maps[i].map, w.maps[i].len);
		}
	}
	out->ops = w.ops;
	out->fails = w.fails;
	return w.fails ? 1 : 0;
}

int main(int argc, char **argv)
{
	int procs = 8, opt, direct, ret, bad = 0;
	double secs = 10;
	uint64_t seed = 1;
	unsigned long ops = 0, fails = 0;
	struct counters *cnt;

	while ((opt = getopt(argc, argv, "p:t:s:")) != -1) {
		switch (opt) {
		case 'p': procs = atoi(optarg); break;
		case 't': secs = atof(optarg); break;
		case 's': seed = strtoull(optarg, NULL, 0); break;
		default: goto usage;
		}
	}
	if (optind >= argc || procs < 1 || secs < 0)
		goto usage;
	files = argv + optind;
	nfiles = argc - optind;
	pg = sysconf(_SC_PAGESIZE);

	ret = load_file(files[0], &ref, &n, &direct);
	if (ret)
		die("stress: cannot read %s: %s", files[0], strerror(-ret));
	harness_plan(1);
	for (int i = 0; i < nfiles; i++) {
		struct stat st;

		if (stat(files[i], &st) < 0)
			die("stress: %s: %s", files[i], strerror(errno));
		if ((size_t)st.st_size != n) {
			fail("stress", "%s offset 0: size %jd, expected %zu",
			     files[i], (intmax_t)st.st_size, n);
			return harness_exit();
		}
	}
	/* The version line before forking, so that children do not print it. */
	diag("stress: seed %llu, %d processes, %g s, %d files of %zu bytes",
	     (unsigned long long)seed, procs, secs, nfiles, n);

	/* Per-process counters the children fill in before exiting. */
	cnt = mmap(NULL, procs * sizeof(*cnt), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (cnt == MAP_FAILED)
		die("mmap: %s", strerror(errno));
	harness_start();
	for (int i = 0; i < procs; i++) {
		pid_t pid = fork();

		if (pid < 0)
			die("fork: %s", strerror(errno));
		if (pid == 0) {
			ret = worker(i, seed, secs, &cnt[i]);
			fflush(stdout);
			_exit(ret);
		}
	}
	for (int i = 0; i < procs; i++) {
		int status;
		pid_t pid = wait(&status);

		if (pid < 0)
			die("wait: %s", strerror(errno));
		if (WIFSIGNALED(status)) {
			diag("stress: %s offset 0: process %d killed by signal %d",
			     files[0], (int)pid, WTERMSIG(status));
			bad = 1;
		} else if (WEXITSTATUS(status) > 1) {
			diag("stress: %s offset 0: process %d exited %d",
			     files[0], (int)pid, WEXITSTATUS(status));
			bad = 1;
		}
	}
	for (int i = 0; i < procs; i++) {
		ops += cnt[i].ops;
		fails += cnt[i].fails;
	}
	diag("stress: %lu operations, %d processes, %d files", ops, procs, nfiles);
	if (fails || bad)
		fail("stress", "%lu mismatches or errors in %lu operations", fails, ops);
	else
		pass("stress");
	return harness_exit();

usage:
	die("usage: stress [-p PROCS] [-t SECONDS] [-s SEED] FILE...");
}
