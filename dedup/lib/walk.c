// SPDX-License-Identifier: GPL-2.0
#include "walk.h"

#include <errno.h>
#include <fts.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* The directories above the current entry: device, inode and path. */
struct ancestor {
	dev_t dev;
	ino_t ino;
	char *path;
};

struct walk {
	const struct walk_options *opt;
	walk_fn fn;
	void *ctx;
	dev_t root_dev;
	struct ancestor *up;
	size_t depth, cap;
	bool stop;
};

static void report(struct walk *w, enum walk_event ev, const FTSENT *e,
		   int err, const char *ancestor)
{
	struct walk_entry we = {
		.ev = ev,
		.path = e->fts_path,
		.st = ev == WALK_ERROR ? NULL : e->fts_statp,
		.err = err,
		.root = e->fts_level == FTS_ROOTLEVEL,
		.ancestor = ancestor,
	};

	if (!w->fn(w->ctx, &we))
		w->stop = true;
}

/* The ancestor with the device and inode of @st, or NULL. */
static const char *same_as_ancestor(const struct walk *w, const struct stat *st)
{
	for (size_t i = 0; i < w->depth; i++)
		if (w->up[i].dev == st->st_dev && w->up[i].ino == st->st_ino)
			return w->up[i].path;
	return NULL;
}

static void push(struct walk *w, const FTSENT *e)
{
	if (w->depth == w->cap) {
		w->cap = w->cap ? 2 * w->cap : 16;
		w->up = realloc(w->up, w->cap * sizeof(*w->up));
		if (!w->up)
			fatal("out of memory");
	}
	w->up[w->depth].dev = e->fts_statp->st_dev;
	w->up[w->depth].ino = e->fts_statp->st_ino;
	w->up[w->depth].path = xstrdup(e->fts_path);
	w->depth++;
}

static void pop(struct walk *w)
{
	if (w->depth > 0)
		free(w->up[--w->depth].path);
}

static void visit(FTS *fts, FTSENT *e, struct walk *w)
{
	const struct stat *st = e->fts_statp;
	const char *ancestor;

	switch (e->fts_info) {
	case FTS_D:
		/*
		 * fts reports the cycles it sees as FTS_DC; this check is
		 * ours, so that no directory is ever entered twice.
		 */
		ancestor = same_as_ancestor(w, st);
		push(w, e);	/* a skipped directory still comes back as FTS_DP */
		if (ancestor) {
			fts_set(fts, e, FTS_SKIP);
			report(w, WALK_LOOP, e, 0, ancestor);
		} else if (!w->opt->cross_fs && st->st_dev != w->root_dev) {
			fts_set(fts, e, FTS_SKIP);
			report(w, WALK_OTHER_FS, e, 0, NULL);
		}
		break;
	case FTS_DP:		/* directory again, after its children */
		pop(w);
		break;
	case FTS_DC:		/* a cycle: only possible through bind mounts */
		ancestor = same_as_ancestor(w, st);
		report(w, WALK_LOOP, e, 0, ancestor ? ancestor :
		       e->fts_cycle ? e->fts_cycle->fts_path : "?");
		break;
	case FTS_F:
		report(w, (uint64_t)st->st_size < w->opt->min_size ? WALK_SMALL : WALK_FILE,
		       e, 0, NULL);
		break;
	case FTS_SL:
	case FTS_SLNONE:
		report(w, WALK_SYMLINK, e, 0, NULL);
		break;
	case FTS_DEFAULT:
		report(w, WALK_SPECIAL, e, 0, NULL);
		break;
	case FTS_DNR:		/* directory we cannot read */
	case FTS_ERR:
	case FTS_NS:		/* cannot stat */
	default:
		report(w, WALK_ERROR, e, e->fts_errno ? e->fts_errno : EIO, NULL);
		break;
	}
}

/* Walk one starting path; its device is the one we stay on. */
static int walk_one(char *path, struct walk *w)
{
	char *argv[2] = { path, NULL };
	/*
	 * FTS_PHYSICAL: lstat, never follow links, not even the starting path.
	 * FTS_NOCHDIR: workers open the reported paths relative to our working
	 * directory while the walk goes on, so it must never change.
	 */
	FTS *fts = fts_open(argv, FTS_PHYSICAL | FTS_NOCHDIR, NULL);
	FTSENT *e;
	int err;

	if (!fts)
		return -1;
	while (!w->stop && (e = fts_read(fts)) != NULL) {
		if (e->fts_level == FTS_ROOTLEVEL && e->fts_info != FTS_DP)
			w->root_dev = e->fts_statp->st_dev;
		visit(fts, e, w);
	}
	err = w->stop ? 0 : errno;
	fts_close(fts);
	while (w->depth > 0)
		pop(w);
	if (err) {
		/* fts_read() ends with errno set only when the walk broke off. */
		struct walk_entry we = { .ev = WALK_ERROR, .path = path, .err = err,
					 .root = true };

		if (!w->fn(w->ctx, &we))
			w->stop = true;
	}
	return 0;
}

int walk_paths(char *const *paths, const struct walk_options *opt,
	       walk_fn fn, void *ctx)
{
	struct walk w = { .opt = opt, .fn = fn, .ctx = ctx };
	int r = 0;

	for (; *paths && !w.stop && r == 0; paths++) {
		/* fts_open() refuses "" for the whole list; report it alone. */
		if (**paths == '\0') {
			struct walk_entry we = { .ev = WALK_ERROR, .path = *paths,
						 .err = ENOENT, .root = true };

			w.stop = !fn(ctx, &we);
			continue;
		}
		r = walk_one(*paths, &w);
	}
	free(w.up);
	return r;
}
