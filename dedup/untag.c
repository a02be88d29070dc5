// SPDX-License-Identifier: GPL-2.0
/* pcdedup untag: remove trusted.pcdedup from every regular file. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/xattr.h>

#include "cmdline.h"
#include "commands.h"
#include "exitcode.h"
#include "fileops.h"
#include "key.h"
#include "msg.h"
#include "util.h"
#include "walk.h"

struct untag_run {
	bool dry_run;
	unsigned long long removed, no_key, skipped, failed;
};

/*
 * Removing an attribute is one cheap system call, so this runs in the walk
 * itself, no workers. The l*xattr calls act on a link, never through it,
 * should a symlink have replaced the file since the walk saw it.
 */
static void untag_one(struct untag_run *run, const char *path)
{
	int r;

	if (run->dry_run)
		r = lgetxattr(path, PCDEDUP_XATTR_NAME, NULL, 0) < 0 ? -1 : 0;
	else
		r = lremovexattr(path, PCDEDUP_XATTR_NAME);
	if (r == 0)
		run->removed++;
	else if (errno == ENODATA)
		run->no_key++;	/* nothing to remove is not an error */
	else {
		path_error(path, "cannot remove %s: %s", PCDEDUP_XATTR_NAME,
			   xattr_reason(errno));
		run->failed++;
	}
}

static void untag_walked(void *ctx, enum walk_event ev, const char *path,
			 const struct stat *st, int err)
{
	struct untag_run *run = ctx;

	(void)st;
	switch (ev) {
	case WALK_FILE:
	case WALK_SMALL:
		untag_one(run, path);
		break;
	case WALK_SYMLINK:
	case WALK_SPECIAL:
	case WALK_OTHER_FS:
		run->skipped++;
		break;
	case WALK_ERROR:
		path_error(path, "%s", errstr(err));
		run->failed++;
		break;
	}
}

static const char untag_help[] =
	"Usage: pcdedup untag [OPTION]... PATH...\n"
	"Remove the content key " PCDEDUP_XATTR_NAME " from every regular file\n"
	"under PATH, whatever its size. Files without a key are not an error.\n"
	"Symbolic links are never followed.\n"
	"\n"
	"  -n, --dry-run       count the keys that would be removed, remove none\n"
	"  -x, --cross-fs      descend into other mounted filesystems\n"
	"  -q, --quiet         no summary, only errors\n"
	"  -h, --help          this help\n";

int cmd_untag(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "dry-run", no_argument, NULL, 'n' },
		{ "cross-fs", no_argument, NULL, 'x' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct untag_run run = { .dry_run = false };
	struct walk_options wo = { .min_size = 0 };
	struct run_opts o;
	int c;

	run_opts_init(&o);
	while ((c = getopt_long(argc, argv, "nxqh", longopts, NULL)) != -1) {
		int r = run_opt("untag", c, optarg, &o);
		if (r < 0)
			return EXIT_USAGE;
		if (r > 0)
			continue;
		switch (c) {
		case 'n':
			run.dry_run = true;
			break;
		case 'h':
			printf("%s\n%s", untag_help, exit_status_help);
			return EXIT_OK;
		default:
			return usage_hint("untag");
		}
	}
	if (optind >= argc)
		return usage_error("untag", "no PATH given");

	wo.cross_fs = o.cross_fs;
	if (walk_paths(argv + optind, &wo, untag_walked, &run) != 0)
		fatal("cannot walk: %s", errstr(errno));
	if (!o.quiet) {
		printf("removed:    %llu%s\n", run.removed,
		       run.dry_run ? " (dry run: none removed)" : "");
		printf("no key:     %llu\n", run.no_key);
		printf("skipped:    %llu (not regular files, other filesystems)\n",
		       run.skipped);
		printf("failed:     %llu\n", run.failed);
	}
	check_stdout();
	return run.failed ? EXIT_PROBLEMS : EXIT_OK;
}
