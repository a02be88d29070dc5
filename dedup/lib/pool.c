// SPDX-License-Identifier: GPL-2.0
#include "pool.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* Paths queued per worker: enough that no worker waits for the walk. */
#define QUEUE_PER_WORKER 64

struct pool {
	pthread_mutex_t lock;
	pthread_cond_t not_empty;
	pthread_cond_t not_full;
	struct work_item *ring;
	size_t cap, head, count;
	bool closed;

	work_fn fn;
	void *ctx;
	pthread_t *threads;
	unsigned nthreads;
};

/* Take the next item into @out; false once the queue is closed and empty. */
static bool pool_take(struct pool *p, struct work_item *out)
{
	pthread_mutex_lock(&p->lock);
	while (p->count == 0 && !p->closed)
		pthread_cond_wait(&p->not_empty, &p->lock);
	if (p->count == 0) {
		pthread_mutex_unlock(&p->lock);
		return false;
	}
	*out = p->ring[p->head];
	p->head = (p->head + 1) % p->cap;
	p->count--;
	pthread_cond_signal(&p->not_full);
	pthread_mutex_unlock(&p->lock);
	return true;
}

static void *worker_main(void *arg)
{
	struct pool *p = arg;
	struct hasher h;
	struct work_item it;

	if (hasher_init(&h, HASH_DEFAULT_BUFSIZE) != 0)
		fatal("cannot allocate the read buffer for hashing");
	while (pool_take(p, &it)) {
		p->fn(p->ctx, &h, &it);
		free(it.path);
	}
	hasher_free(&h);
	return NULL;
}

struct pool *pool_start(unsigned jobs, work_fn fn, void *ctx)
{
	struct pool *p = xcalloc(1, sizeof(*p));

	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->not_empty, NULL);
	pthread_cond_init(&p->not_full, NULL);
	p->cap = (size_t)jobs * QUEUE_PER_WORKER;
	p->ring = xcalloc(p->cap, sizeof(*p->ring));
	p->fn = fn;
	p->ctx = ctx;
	p->threads = xcalloc(jobs, sizeof(*p->threads));
	for (unsigned i = 0; i < jobs; i++) {
		int err = pthread_create(&p->threads[i], NULL, worker_main, p);

		if (err)
			fatal("cannot start worker thread: %s", errstr(err));
		p->nthreads++;
	}
	return p;
}

void pool_submit(struct pool *p, const char *path, const struct stat *st,
		 bool small)
{
	struct work_item it = { .path = xstrdup(path), .st = *st, .small = small };

	pthread_mutex_lock(&p->lock);
	while (p->count == p->cap)
		pthread_cond_wait(&p->not_full, &p->lock);
	p->ring[(p->head + p->count) % p->cap] = it;
	p->count++;
	pthread_cond_signal(&p->not_empty);
	pthread_mutex_unlock(&p->lock);
}

void pool_finish(struct pool *p)
{
	pthread_mutex_lock(&p->lock);
	p->closed = true;
	pthread_cond_broadcast(&p->not_empty);
	pthread_mutex_unlock(&p->lock);
	for (unsigned i = 0; i < p->nthreads; i++)
		pthread_join(p->threads[i], NULL);
	pthread_cond_destroy(&p->not_full);
	pthread_cond_destroy(&p->not_empty);
	pthread_mutex_destroy(&p->lock);
	free(p->threads);
	free(p->ring);
	free(p);
}
