/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Worker threads fed by the tree walk through a bounded queue. The walk
 * (one thread) only stats; the workers open, hash and set attributes, so N
 * files are read at once and the walk never holds more than a queue's worth
 * of paths in memory.
 */
#ifndef PCDEDUP_POOL_H
#define PCDEDUP_POOL_H

#include <stdbool.h>
#include <sys/stat.h>

#include "hash.h"

/* One file to process: the path and what the walk saw there. */
struct work_item {
	char *path;
	struct stat st;
	bool small;		/* below the command's min-size */
};

/* Runs on a worker thread with that thread's own hasher. */
typedef void (*work_fn)(void *ctx, struct hasher *h, const struct work_item *it);

struct pool;

/* Start @jobs workers. Exits with EXIT_FATAL if threads cannot be had. */
struct pool *pool_start(unsigned jobs, work_fn fn, void *ctx);

/* Queue a copy of @path; blocks while the queue is full. */
void pool_submit(struct pool *p, const char *path, const struct stat *st,
		 bool small);

/* Let the workers drain the queue, wait for them and free the pool. */
void pool_finish(struct pool *p);

#endif
