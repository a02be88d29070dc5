// SPDX-License-Identifier: GPL-2.0
#include "walk.h"

#include <errno.h>
#include <fts.h>
#include <stddef.h>
#include <string.h>

static void visit(FTS *fts, FTSENT *e, dev_t root_dev,
		  const struct walk_options *opt, walk_fn fn, void *ctx)
{
	const struct stat *st = e->fts_statp;

	switch (e->fts_info) {
	case FTS_D:
		if (!opt->cross_fs && st->st_dev != root_dev) {
			fts_set(fts, e, FTS_SKIP);
			fn(ctx, WALK_OTHER_FS, e->fts_path, st, 0);
		}
		break;
	case FTS_DP:		/* directory again, after its children */
		break;
	case FTS_DC:		/* a cycle: only possible through bind mounts */
		fn(ctx, WALK_ERROR, e->fts_path, NULL, ELOOP);
		break;
	case FTS_F:
		if ((uint64_t)st->st_size < opt->min_size)
			fn(ctx, WALK_SMALL, e->fts_path, st, 0);
		else
			fn(ctx, WALK_FILE, e->fts_path, st, 0);
		break;
	case FTS_SL:
	case FTS_SLNONE:
		fn(ctx, WALK_SYMLINK, e->fts_path, st, 0);
		break;
	case FTS_DEFAULT:
		fn(ctx, WALK_SPECIAL, e->fts_path, st, 0);
		break;
	case FTS_DNR:		/* directory we cannot read */
	case FTS_ERR:
	case FTS_NS:		/* cannot stat */
	default:
		fn(ctx, WALK_ERROR, e->fts_path, NULL, e->fts_errno ? e->fts_errno : EIO);
		break;
	}
}

/* Walk one starting path; its device is the one we stay on. */
static int walk_one(char *path, const struct walk_options *opt,
		    walk_fn fn, void *ctx)
{
	char *argv[2] = { path, NULL };
	/*
	 * FTS_PHYSICAL: lstat, never follow links, not even the starting path.
	 * FTS_NOCHDIR: workers open the reported paths relative to our working
	 * directory while the walk goes on, so it must never change.
	 */
	FTS *fts = fts_open(argv, FTS_PHYSICAL | FTS_NOCHDIR, NULL);
	dev_t root_dev = 0;
	FTSENT *e;
	int err;

	if (!fts)
		return -1;
	while ((e = fts_read(fts)) != NULL) {
		if (e->fts_level == FTS_ROOTLEVEL && e->fts_info != FTS_DP)
			root_dev = e->fts_statp->st_dev;
		visit(fts, e, root_dev, opt, fn, ctx);
	}
	err = errno;
	fts_close(fts);
	if (err) {
		/* fts_read() ends with errno set only when the walk broke off. */
		fn(ctx, WALK_ERROR, path, NULL, err);
	}
	return 0;
}

int walk_paths(char *const *paths, const struct walk_options *opt,
	       walk_fn fn, void *ctx)
{
	for (; *paths; paths++) {
		/* fts_open() refuses "" for the whole list; report it alone. */
		if (**paths == '\0') {
			fn(ctx, WALK_ERROR, *paths, NULL, ENOENT);
			continue;
		}
		if (walk_one(*paths, opt, fn, ctx) != 0)
			return -1;
	}
	return 0;
}
