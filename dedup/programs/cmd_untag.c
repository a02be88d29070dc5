// SPDX-License-Identifier: GPL-2.0
/* pcdedup untag: remove trusted.pcdedup from every regular file. */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "commands.h"
#include "driver.h"
#include "exitcode.h"
#include "fileops.h"
#include "key.h"

struct untag_run {
	atomic_ullong removed, no_key;
};

/*
 * The l*xattr calls act on a link, never through it, should a symlink have
 * replaced the file since the walk saw it.
 */
static void untag_file(struct driver *d, struct hasher *h, const struct work_item *it)
{
	struct untag_run *run = d->ctx;
	int r, err, fd;

	(void)h;
	if (d->dry_run)
		r = lgetxattr(it->path, PCDEDUP_XATTR_NAME, NULL, 0) < 0 ? -1 : 0;
	else
		r = lremovexattr(it->path, PCDEDUP_XATTR_NAME);
	err = errno;
	if (r == 0) {
		atomic_fetch_add(&run->removed, 1);
		return;
	}
	if (err == ENODATA) {
		atomic_fetch_add(&run->no_key, 1);	/* nothing to remove is no error */
		return;
	}
	/* EPERM: no privilege, or an immutable file? Its flags tell. */
	fd = open(it->path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (!driver_denied(d, fd, err)) {
		char why[256];

		snprintf(why, sizeof(why), "cannot remove %s: %s", PCDEDUP_XATTR_NAME,
			 xattr_reason(err));
		driver_error(d, it->path, why);
	}
	if (fd >= 0)
		close(fd);
}

static void untag_summary(struct driver *d, struct summary *s)
{
	struct untag_run *run = d->ctx;

	if (d->dry_run)
		summary_count(s, "removed", "would remove:", run->removed, NULL);
	else
		summary_count(s, "removed", "removed:", run->removed, NULL);
	summary_count(s, "no_key", "no key:", run->no_key, NULL);
	driver_summary_skipped(d, s);
	driver_summary_errors(d, s, "failed", "failed:");
}

static int untag_option(struct driver *d, int c, const char *arg)
{
	(void)d;
	(void)c;
	(void)arg;
	return usage_hint("untag");
}

static const struct opt_spec untag_opts[] = {
	{ "dry-run", 'n', NULL, "count the keys that would be removed, remove none" },
	OPT_SPEC_CROSS_FS,
	OPT_SPEC_JSON("the summary as one JSON object"),
	{ "quiet", 'q', NULL, "no summary, only errors" },
	OPT_SPEC_END,
};

static const struct exit_spec untag_exits[] = {
	{ 0, "every key removed (or there was none)" },
	{ 1, "some keys could not be removed" },
	EXIT_SPEC_USAGE,
	EXIT_SPEC_FATAL,
	EXIT_SPEC_NO_CAP,
	EXIT_SPEC_END,
};

static const struct cmd_spec untag_spec = {
	.name = "untag",
	.summary = "remove keys",
	.args = "PATH...",
	.intro =
	"Remove the content key " PCDEDUP_XATTR_NAME " from every regular file\n"
	"under PATH, whatever its size. Files without a key are not an error.\n"
	"Symbolic links are never followed.",
	.opts = untag_opts,
	.notes = "Needs CAP_SYS_ADMIN to remove trusted.* attributes: without it untag\n"
		 "stops at once.",
	.exits = untag_exits,
};

static int untag_main(int argc, char **argv)
{
	static const struct walk_cmd cmd = {
		.spec = &untag_spec,
		.min_size = 0,
		.option = untag_option,
		.work = untag_file,
		.summary = untag_summary,
	};
	struct untag_run run = { .removed = 0 };

	return driver_main(&cmd, &run, argc, argv);
}

const struct command cmd_untag = { &untag_spec, untag_main };
