// micro: per-operation cost of open+close, stat, small-file read and mmap
// page faults on the files of one directory (all already in page cache),
// and two that split a read's cost: open+fadvise+close (on a tagged file
// the advice opens the share file, as a first read does) and a read of an
// fd that stays open and was read before (the read alone).
// Usage: micro LABEL DIR ROUNDS [MIN_ROUND_MS [OPS]]  (OPS: comma-separated
// names of the operations to run; default all)
// Prints one JSON object per operation: the median over ROUNDS of ns/op.
// The first pass of each operation is a warm-up and is not timed.
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_FILES 4096
/* A round repeats passes over all files for at least this long (default):
 * under plain TCG the guest clock may tick only every few milliseconds. */
#define MIN_ROUND_MS 300

static char *paths[MAX_FILES];
static size_t sizes[MAX_FILES];
static int nfiles;
static char buf[1 << 20];
static volatile unsigned long sink;

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void die(const char *what, const char *path)
{
	fprintf(stderr, "micro: %s %s: ", what, path);
	perror(NULL);
	exit(1);
}

static void load(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	struct stat st;

	if (!d)
		die("opendir", dir);
	while ((e = readdir(d)) && nfiles < MAX_FILES) {
		if (e->d_name[0] == '.')
			continue;
		if (asprintf(&paths[nfiles], "%s/%s", dir, e->d_name) < 0)
			die("asprintf", dir);
		if (stat(paths[nfiles], &st))
			die("stat", paths[nfiles]);
		sizes[nfiles++] = st.st_size;
	}
	closedir(d);
	if (!nfiles)
		die("no files in", dir);
}

/* Each returns the number of operations it did. */
static long op_open_close(void)
{
	for (int i = 0; i < nfiles; i++) {
		int fd = open(paths[i], O_RDONLY);

		if (fd < 0)
			die("open", paths[i]);
		close(fd);
	}
	return nfiles;
}

static long op_stat(void)
{
	struct stat st;

	for (int i = 0; i < nfiles; i++)
		if (stat(paths[i], &st))
			die("stat", paths[i]);
	return nfiles;
}

static long op_read(void)
{
	for (int i = 0; i < nfiles; i++) {
		int fd = open(paths[i], O_RDONLY);
		ssize_t n;

		if (fd < 0)
			die("open", paths[i]);
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			sink += buf[0];
		if (n < 0)
			die("read", paths[i]);
		close(fd);
	}
	return nfiles;
}

static long op_open_fadvise(void)
{
	for (int i = 0; i < nfiles; i++) {
		int fd = open(paths[i], O_RDONLY), err;

		if (fd < 0)
			die("open", paths[i]);
		err = posix_fadvise(fd, 0, 0, POSIX_FADV_NORMAL);
		if (err) {
			errno = err;
			die("posix_fadvise", paths[i]);
		}
		close(fd);
	}
	return nfiles;
}

/* The same reads as op_read(), to EOF, on fds opened by its warm-up. */
static long op_reread(void)
{
	static int fds[MAX_FILES];
	static bool opened;

	for (int i = 0; i < nfiles && !opened; i++) {
		fds[i] = open(paths[i], O_RDONLY);
		if (fds[i] < 0)
			die("open", paths[i]);
	}
	opened = true;
	for (int i = 0; i < nfiles; i++) {
		off_t off = 0;
		ssize_t n;

		while ((n = pread(fds[i], buf, sizeof(buf), off)) > 0) {
			sink += buf[0];
			off += n;
		}
		if (n < 0)
			die("pread", paths[i]);
	}
	return nfiles;
}

static long op_mmap_fault(void)
{
	long pages = 0, pg = sysconf(_SC_PAGESIZE);

	for (int i = 0; i < nfiles; i++) {
		int fd = open(paths[i], O_RDONLY);
		char *p;

		if (fd < 0)
			die("open", paths[i]);
		p = mmap(NULL, sizes[i], PROT_READ, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED)
			die("mmap", paths[i]);
		for (size_t off = 0; off < sizes[i]; off += pg, pages++)
			sink += p[off];
		munmap(p, sizes[i]);
		close(fd);
	}
	return pages;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Is NAME one of the comma-separated names of LIST? */
static bool listed(const char *list, const char *name)
{
	size_t len = strlen(name);

	for (const char *p = list; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (!strncmp(p, name, len) && (p[len] == ',' || !p[len]))
			return true;
	return false;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		long (*fn)(void);
	} ops[] = {
		{ "open_close", op_open_close },
		{ "stat", op_stat },
		{ "read", op_read },
		{ "mmap_fault", op_mmap_fault },
		{ "open_fadvise", op_open_fadvise },
		{ "reread", op_reread },
	};
	int rounds, min_round_ms = MIN_ROUND_MS;

	const char *only = argc == 6 ? argv[5] : NULL;

	if (argc >= 5)
		min_round_ms = atoi(argv[4]);
	if (argc < 4 || argc > 6 || (rounds = atoi(argv[3])) < 1 || rounds > 99 ||
	    min_round_ms < 1 || min_round_ms > 60000) {
		fprintf(stderr, "usage: micro LABEL DIR ROUNDS(1-99) [MIN_ROUND_MS(1-60000) "
			"[OPS]]\n");
		return 2;
	}
	load(argv[2]);
	for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); o++) {
		double ns[99];

		if (only && !listed(only, ops[o].name))
			continue;
		ops[o].fn(); /* warm up: fills the caches */
		for (int r = 0; r < rounds; r++) {
			double t0 = now_ns(), t;
			long n = 0;

			do
				n += ops[o].fn();
			while ((t = now_ns() - t0) < min_round_ms * 1e6);
			ns[r] = t / n;
		}
		qsort(ns, rounds, sizeof(ns[0]), cmp);
		printf("{\"files\": \"%s\", \"op\": \"%s\", \"ns_per_op\": %.1f, "
		       "\"min\": %.1f, \"max\": %.1f, \"rounds\": %d}\n",
		       argv[1], ops[o].name, ns[rounds / 2], ns[0], ns[rounds - 1],
		       rounds);
	}
	return 0;
}
