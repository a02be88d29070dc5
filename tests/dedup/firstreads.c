/*
 * firstreads FILE ROUNDS THREADS
 *
 * ROUNDS times: open FILE read-only, let THREADS threads, released at
 * once, each make the first pread() of that open (its whole content, up
 * to 64 KiB), then close it. Every thread of every round must read what
 * a private O_DIRECT-free read of FILE read before the first round (the
 * reference is read through a separate open that is closed at once).
 *
 * For pcdedup a tagged file's first read through an open opens the
 * open's share file: the threads race to publish theirs, and the losers
 * drop what they opened. Exit status: 0 when every read matched, 1 on a
 * mismatch or an error (with a message), 2 on bad usage.
 */
#include "common.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_THREADS 16
#define MAX_BYTES 65536

static char ref[MAX_BYTES];
static ssize_t ref_len;
static atomic_int fd_now = -1;
static atomic_uint round_now;
static atomic_uint arrived;
static atomic_int bad;

struct reader {
	pthread_t thread;
	char buf[MAX_BYTES];
};

static void *reader_main(void *arg)
{
	struct reader *r = arg;
	unsigned int seen = 0, round;

	for (;;) {
		/* Spin, so that all threads leave at the same moment. */
		while ((round = atomic_load(&round_now)) == seen)
			;
		seen = round;
		if (round == ~0u)
			return NULL;
		ssize_t n = pread(atomic_load(&fd_now), r->buf, sizeof(r->buf), 0);

		if (n != ref_len || memcmp(r->buf, ref, ref_len)) {
			fprintf(stderr, "round %u: a first read returned %zd bytes%s\n",
				round, n, n == ref_len ? ", other bytes" : "");
			atomic_store(&bad, 1);
		}
		atomic_fetch_add(&arrived, 1);
	}
}

int main(int argc, char **argv)
{
	static struct reader readers[MAX_THREADS];
	unsigned int rounds, threads, i, r;
	int fd;

	if (argc != 4 || (rounds = atoi(argv[2])) == 0 ||
	    (threads = atoi(argv[3])) < 2 || threads > MAX_THREADS) {
		fprintf(stderr, "usage: firstreads FILE ROUNDS THREADS (2-%d)\n", MAX_THREADS);
		return 2;
	}
	fd = open(argv[1], O_RDONLY);
	if (fd < 0 || (ref_len = pread(fd, ref, sizeof(ref), 0)) < 0) {
		perror(argv[1]);
		return 1;
	}
	close(fd);
	for (i = 0; i < threads; i++)
		if (pthread_create(&readers[i].thread, NULL, reader_main, &readers[i])) {
			perror("pthread_create");
			return 1;
		}
	for (r = 1; r <= rounds && !atomic_load(&bad); r++) {
		fd = open(argv[1], O_RDONLY);
		if (fd < 0) {
			perror(argv[1]);
			return 1;
		}
		atomic_store(&fd_now, fd);
		atomic_store(&arrived, 0);
		atomic_store(&round_now, r);
		while (atomic_load(&arrived) < threads)
			sched_yield();
		close(fd);
	}
	atomic_store(&round_now, ~0u);
	for (i = 0; i < threads; i++)
		pthread_join(readers[i].thread, NULL);
	return atomic_load(&bad);
}
