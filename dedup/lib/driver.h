/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one skeleton of tag, untag and verify: parse the command line from
 * the command's table (the shared options here, its own through a
 * callback), check for CAP_SYS_ADMIN, read the secret (for the commands
 * that make or check MACs), walk the paths feeding a worker pool,
 * show progress, count what the walk skips, report problems, print the
 * summary (human or JSON) and choose the exit status. A command is a small
 * struct of callbacks and its own counters.
 */
#ifndef PCDEDUP_DRIVER_H
#define PCDEDUP_DRIVER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "cmdline.h"
#include "inodeset.h"
#include "pool.h"
#include "progress.h"
#include "secret.h"
#include "summary.h"
#include "walk.h"

struct driver;

struct walk_cmd {
	const struct cmd_spec *spec;
	uint64_t min_size;	/* default --min-size (0: the command has none) */
	bool keyable_only;	/* queue only non-empty files of min_size bytes */
	bool hashes;		/* reads whole files: progress line, bytes hashed */
	bool lists_problems;	/* "status\tpath" lines; a problem list in JSON */
	bool needs_secret;	/* makes or checks MACs: --secret-file, the secret read */
	/* One of the command's own options: 0, or the exit status (usage error). */
	int (*option)(struct driver *d, int opt, const char *arg);
	/* On a worker thread: process one file. */
	void (*work)(struct driver *d, struct hasher *h, const struct work_item *it);
	/* The command's summary lines; driver_summary_*() give the shared ones. */
	void (*summary)(struct driver *d, struct summary *s);
};

/* A problem file, kept for the JSON summary. */
struct problem_file {
	char *path, *status, *why;
};

struct driver {
	const struct walk_cmd *cmd;
	void *ctx;		/* the command's own state */
	/* The shared options. */
	unsigned jobs;
	uint64_t min_size;
	bool cross_fs, quiet, json, dry_run;
	const char *secret_file;	/* --secret-file, or NULL */
	struct secret secret;		/* read before the walk, if needs_secret */

	struct pool *pool;
	struct progress progress;
	double start;
	atomic_bool denied;	/* no CAP_SYS_ADMIN after all: stop */
	atomic_ullong problems;	/* every problem reported, errors included */
	atomic_ullong errors;	/* files that could not be processed */
	atomic_ullong small, not_regular, other_fs, loops;
	atomic_ullong links;	/* more paths to a file already handed out */
	struct inodeset seen;	/* the files with several links handed out */
	atomic_ullong bytes;	/* bytes hashed */

	pthread_mutex_t lock;	/* for the list below */
	struct problem_file *list;
	size_t nlist, caplist;
};

/* Run @cmd with state @ctx on the command line @argc/@argv; the exit status. */
int driver_main(const struct walk_cmd *cmd, void *ctx, int argc, char **argv);

/*
 * One problem with @path: counted in @counter (if not NULL) and in the
 * problems; with lists_problems a "@status\t@path" line (or a JSON list
 * entry); @why (if not NULL) as "pcdedup: PATH: WHY" on stderr.
 */
void driver_problem(struct driver *d, atomic_ullong *counter, const char *status,
		    const char *path, const char *why);

/* A file that could not be processed: driver_problem() as an "error". */
void driver_error(struct driver *d, const char *path, const char *why);

/*
 * An xattr call on @fd (-1: unknown) failed with @err. If that means we
 * lack the privilege for trusted.* (EPERM, not an immutable file), print
 * the one message, stop the run and return true; the caller drops the file.
 */
bool driver_denied(struct driver *d, int fd, int err);

/* "skipped:" and "failed:" (@label) summary lines from the shared counters. */
void driver_summary_skipped(struct driver *d, struct summary *s);
void driver_summary_errors(struct driver *d, struct summary *s, const char *key,
			   const char *label);

#endif
