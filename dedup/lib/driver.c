// SPDX-License-Identifier: GPL-2.0
#include "driver.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exitcode.h"
#include "msg.h"
#include "parse.h"
#include "privilege.h"
#include "util.h"

void driver_problem(struct driver *d, atomic_ullong *counter, const char *status,
		    const char *path, const char *why)
{
	if (counter)
		atomic_fetch_add(counter, 1);
	atomic_fetch_add(&d->problems, 1);
	if (d->cmd->lists_problems && d->json) {
		pthread_mutex_lock(&d->lock);
		if (d->nlist == d->caplist) {
			d->caplist = d->caplist ? 2 * d->caplist : 64;
			d->list = realloc(d->list, d->caplist * sizeof(*d->list));
			if (!d->list)
				fatal("out of memory");
		}
		d->list[d->nlist++] = (struct problem_file){
			.path = xstrdup(path), .status = xstrdup(status),
			.why = why ? xstrdup(why) : NULL,
		};
		pthread_mutex_unlock(&d->lock);
	} else if (d->cmd->lists_problems) {
		status_line(status, path);
	}
	if (why)
		path_error(path, "%s", why);
}

void driver_error(struct driver *d, const char *path, const char *why)
{
	driver_problem(d, &d->errors, "error", path, why);
}

bool driver_denied(struct driver *d, int fd, int err)
{
	if (err != EPERM || !eperm_is_privilege(fd))
		return false;
	if (!atomic_exchange(&d->denied, true))
		msg_line("%s", NO_CAP_MESSAGE);
	return true;
}

/* Bytes read so far by a worker's hasher, for the progress line. */
static void chunk_read(void *arg, uint64_t done, size_t chunk)
{
	(void)done;
	progress_bytes(arg, chunk);
}

static void driver_work(void *ctx, struct hasher *h, const struct work_item *it)
{
	struct driver *d = ctx;

	if (atomic_load(&d->denied))
		return;
	if (d->progress.on) {
		h->after_chunk = chunk_read;
		h->after_chunk_arg = &d->progress;
	}
	d->cmd->work(d, h, it);
	progress_file_done(&d->progress);
}

static bool driver_walked(void *ctx, const struct walk_entry *e)
{
	struct driver *d = ctx;
	char path[PATH_MAX], ancestor[PATH_MAX];
	bool small;

	if (atomic_load(&d->denied))
		return false;
	switch (e->ev) {
	case WALK_FILE:
	case WALK_SMALL:
		small = e->ev == WALK_SMALL || e->st->st_size == 0;
		if (small && d->cmd->keyable_only) {
			atomic_fetch_add(&d->small, 1);
			break;
		}
		if (e->st->st_nlink > 1 &&
		    !inodeset_add(&d->seen, e->st->st_dev, e->st->st_ino)) {
			atomic_fetch_add(&d->links, 1);
			break;
		}
		progress_found(&d->progress, (uint64_t)e->st->st_size);
		pool_submit(d->pool, e->path, e->st, small);
		break;
	case WALK_SYMLINK:
	case WALK_SPECIAL:
		/* Inside a tree that is expected; named on the command line, say so. */
		if (e->root)
			path_error(e->path, "skipped: not a regular file or directory");
		atomic_fetch_add(&d->not_regular, 1);
		break;
	case WALK_OTHER_FS:
		atomic_fetch_add(&d->other_fs, 1);
		break;
	case WALK_LOOP:
		msg_line("filesystem loop detected at %s (same directory as %s)",
			 escape_into(e->path, path, sizeof(path)),
			 escape_into(e->ancestor, ancestor, sizeof(ancestor)));
		atomic_fetch_add(&d->loops, 1);
		break;
	case WALK_ERROR:
		driver_error(d, e->path, errstr(e->err));
		break;
	}
	return true;
}

void driver_summary_skipped(struct driver *d, struct summary *s)
{
	unsigned long long small = d->small, not_regular = d->not_regular;
	unsigned long long other_fs = d->other_fs, loops = d->loops, links = d->links;
	char note[256];
	int n = 0;

	n += snprintf(note + n, sizeof(note) - (size_t)n, "(");
	if (d->cmd->keyable_only)
		n += snprintf(note + n, sizeof(note) - (size_t)n, "%llu below min size, ", small);
	n += snprintf(note + n, sizeof(note) - (size_t)n,
		      "%llu not regular files, %llu directories on other filesystems",
		      not_regular, other_fs);
	if (loops)
		n += snprintf(note + n, sizeof(note) - (size_t)n, ", %llu filesystem loops", loops);
	if (links)
		snprintf(note + n, sizeof(note) - (size_t)n,
			 ", %llu more links to files done through another", links);
	strncat(note, ")", sizeof(note) - strlen(note) - 1);
	summary_count(s, "skipped", "skipped:", small + not_regular + other_fs + loops + links,
		      note);
	if (d->cmd->keyable_only)
		summary_json_count(s, "skipped_small", small);
	summary_json_count(s, "skipped_not_regular", not_regular);
	summary_json_count(s, "skipped_other_fs", other_fs);
	summary_json_count(s, "skipped_loops", loops);
	summary_json_count(s, "skipped_links", links);
}

void driver_summary_errors(struct driver *d, struct summary *s, const char *key,
			   const char *label)
{
	summary_count(s, key, label, d->errors, NULL);
}

static void print_summary(struct driver *d)
{
	struct summary s;

	summary_begin(&s, d->json, d->cmd->spec->name);
	if (d->dry_run)
		summary_json_bool(&s, "dry_run", true);
	d->cmd->summary(d, &s);
	if (d->cmd->hashes)
		summary_hashed(&s, d->bytes, now_seconds() - d->start);
	if (d->json && d->cmd->lists_problems) {
		json_key(&s.j, "problems");
		json_begin_array(&s.j);
		for (size_t i = 0; i < d->nlist; i++) {
			json_begin_object(&s.j);
			json_key(&s.j, "path");
			json_string(&s.j, d->list[i].path);
			json_key(&s.j, "status");
			json_string(&s.j, d->list[i].status);
			json_key(&s.j, "reason");
			if (d->list[i].why)
				json_string(&s.j, d->list[i].why);
			else
				json_null(&s.j);
			json_end_object(&s.j);
		}
		json_end_array(&s.j);
	}
	summary_end(&s);
}

/* A shared option: 1 if handled, 0 if not one, -1 after a usage error. */
static int shared_option(struct driver *d, int c, const char *arg)
{
	const char *name = d->cmd->spec->name;

	switch (c) {
	case 'j':
		if (!parse_jobs(arg, &d->jobs)) {
			usage_error(name, "bad job count '%s' (1 to %d)", arg, MAX_JOBS);
			return -1;
		}
		return 1;
	case OPT_MIN_SIZE:
		if (!parse_size(arg, &d->min_size)) {
			usage_error(name, "bad size '%s' (bytes, or with K, M, G, T)", arg);
			return -1;
		}
		return 1;
	case 'x':
		d->cross_fs = true;
		return 1;
	case 'q':
		d->quiet = true;
		return 1;
	case 'n':
		d->dry_run = true;
		return 1;
	case OPT_JSON:
		d->json = true;
		return 1;
	case OPT_SECRET_FILE:
		d->secret_file = arg;
		return 1;
	default:
		return 0;
	}
}

/* Options and paths; -1 to go on, else the exit status. */
static int parse_cmdline(struct driver *d, int argc, char **argv)
{
	const struct cmd_spec *spec = d->cmd->spec;
	int c;

	while ((c = next_option(spec, argc, argv)) != -1) {
		int r;

		if (c == 'h') {
			print_help(stdout, spec);
			check_stdout();
			return EXIT_OK;
		}
		if (c == '?' || c == ':')
			return usage_hint(spec->name);
		r = shared_option(d, c, optarg);
		if (r < 0)
			return EXIT_USAGE;
		if (r == 0 && (r = d->cmd->option(d, c, optarg)) != 0)
			return r;
	}
	if (optind >= argc)
		return usage_error(spec->name, "no PATH given");
	for (int i = optind; i < argc; i++)
		if (argv[i][0] == '\0')
			return usage_error(spec->name, "empty path");
	return -1;
}

int driver_main(const struct walk_cmd *cmd, void *ctx, int argc, char **argv)
{
	struct driver d = { .cmd = cmd, .ctx = ctx, .min_size = cmd->min_size,
			    .jobs = default_jobs() };
	struct walk_options wo;
	int status = parse_cmdline(&d, argc, argv);

	if (status >= 0)
		return status;
	if (!may_use_trusted()) {
		msg_line("%s", NO_CAP_MESSAGE);
		return EXIT_NO_CAP;
	}
	if (cmd->needs_secret) {
		const char *path = secret_path(d.secret_file);
		char why[256];

		if (secret_read(path, &d.secret, why, sizeof(why)) != 0) {
			path_error(path, "no secret: %s", why);
			return EXIT_NO_SECRET;
		}
	}
	pthread_mutex_init(&d.lock, NULL);
	progress_init(&d.progress, cmd->hashes && !d.quiet && isatty(STDERR_FILENO));
	wo.min_size = d.min_size;
	wo.cross_fs = d.cross_fs;
	d.start = now_seconds();
	d.pool = pool_start(d.jobs, driver_work, &d);
	if (walk_paths(argv + optind, &wo, driver_walked, &d) != 0)
		fatal("cannot walk: %s", errstr(errno));
	progress_walk_done(&d.progress);
	pool_finish(d.pool);
	inodeset_clear(&d.seen);
	progress_end(&d.progress);
	if (atomic_load(&d.denied)) {
		status = EXIT_NO_CAP;
	} else {
		if (d.json || !d.quiet)
			print_summary(&d);
		check_stdout();
		status = d.problems ? EXIT_PROBLEMS : EXIT_OK;
	}
	for (size_t i = 0; i < d.nlist; i++) {
		free(d.list[i].path);
		free(d.list[i].status);
		free(d.list[i].why);
	}
	free(d.list);
	pthread_mutex_destroy(&d.lock);
	memset(&d.secret, 0, sizeof(d.secret));
	return status;
}
