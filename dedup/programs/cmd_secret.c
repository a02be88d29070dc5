// SPDX-License-Identifier: GPL-2.0
/* pcdedup secret new | load: make the secret file, hand it to the kernel. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "action.h"
#include "commands.h"
#include "exitcode.h"
#include "kstate.h"
#include "msg.h"
#include "secret.h"
#include "util.h"

/* The sysfs file the secret is written to, in the sysfs directory. */
#define SECRET_KNOB	"secret"

struct secret_opts {
	const char *file;	/* --secret-file */
	const char *sysfs;	/* --sysfs */
	bool force;
};

static int secret_option(int c, const char *arg, void *ctx)
{
	struct secret_opts *o = ctx;

	switch (c) {
	case OPT_SECRET_FILE:
		o->file = arg;
		return -1;
	case OPT_SYSFS:
		o->sysfs = arg;
		return -1;
	case 'f':
		o->force = true;
		return -1;
	default:
		return EXIT_USAGE;
	}
}

static int random_secret(struct secret *s, char *why, size_t whylen)
{
	size_t got = 0;

	while (got < sizeof(s->bytes)) {
		ssize_t n = getrandom(s->bytes + got, sizeof(s->bytes) - got, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			snprintf(why, whylen, "getrandom: %s", errstr(errno));
			return -1;
		}
		got += (size_t)n;
	}
	return 0;
}

/* Make the directory entry of @path durable; failure there is not fatal. */
static void sync_dir(const char *path)
{
	char *copy = xstrdup(path);
	int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd >= 0) {
		(void)fsync(fd);
		close(fd);
	}
	free(copy);
}

/*
 * A new secret in a temporary file beside @path (mode 0600, written and
 * synced), then linked to @path, which must not exist, or renamed over it
 * (@force): the file at @path is never seen half written.
 */
static int write_secret(const char *path, bool force, char *why, size_t whylen)
{
	char tmp[PATH_MAX], text[SECRET_TEXT_LEN + 1];
	struct secret s;
	int fd, err = 0;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= sizeof(tmp)) {
		snprintf(why, whylen, "file name too long");
		return -1;
	}
	if (!force && access(path, F_OK) == 0) {
		snprintf(why, whylen, "exists; --force replaces it (every key made with the "
			 "old secret is then refused until pcdedup tag rewrites it)");
		return -1;
	}
	if (random_secret(&s, why, whylen) != 0)
		return -1;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, whylen, "cannot create a file in its directory: %s%s", errstr(errno),
			 errno == ENOENT ? " (the directory must exist)" : "");
		return -1;
	}
	secret_text(&s, text);
	if (fchmod(fd, 0600) != 0 || write_all(fd, text, SECRET_TEXT_LEN) != 0 || fsync(fd) != 0)
		err = errno;
	if (close(fd) != 0 && !err)
		err = errno;
	memset(text, 0, sizeof(text));
	memset(&s, 0, sizeof(s));
	if (err) {
		unlink(tmp);
		snprintf(why, whylen, "cannot write a new secret beside it: %s", errstr(err));
		return -1;
	}
	if ((force ? rename(tmp, path) : link(tmp, path)) != 0) {
		err = errno;
		unlink(tmp);
		if (err == EEXIST)
			snprintf(why, whylen, "exists; --force replaces it");
		else
			snprintf(why, whylen, "cannot %s: %s", force ? "replace" : "create",
				 errstr(err));
		return -1;
	}
	if (!force)
		unlink(tmp);
	sync_dir(path);
	return 0;
}

static const struct opt_spec new_opts[] = {
	OPT_SPEC_SECRET_FILE,
	{ "force", 'f', NULL, "replace an existing secret file" },
	OPT_SPEC_END,
};

static const struct exit_spec new_exits[] = {
	{ 0, "a new secret was written" },
	{ 1, "the file exists (without --force) or could not be written" },
	EXIT_SPEC_USAGE,
	EXIT_SPEC_FATAL,
	EXIT_SPEC_END,
};

static const struct cmd_spec new_spec = {
	.name = "secret new",
	.summary = "make a new secret file",
	.args = NULL,
	.intro =
	"Make a new secret: 32 random bytes (getrandom), written as 64 hex digits\n"
	"and a newline to the secret file, mode 0600 (only its owner may read it).\n"
	"The file's directory must exist. An existing file is left alone unless\n"
	"--force: keys made with the old secret are then refused by the kernel\n"
	"(once the new one is loaded) until 'pcdedup tag' rewrites them.",
	.opts = new_opts,
	.notes = "Prints nothing on success.",
	.exits = new_exits,
};

static int secret_new(int argc, char **argv)
{
	struct secret_opts o = { .file = NULL };
	char why[512];
	const char *path;
	int r = action_cmdline(&new_spec, argc, argv, 0, secret_option, &o);

	if (r >= 0)
		return r;
	path = secret_path(o.file);
	if (write_secret(path, o.force, why, sizeof(why)) != 0) {
		path_error(path, "%s", why);
		return EXIT_PROBLEMS;
	}
	return EXIT_OK;
}

static const struct opt_spec load_opts[] = {
	OPT_SPEC_SECRET_FILE,
	{ "sysfs", OPT_SYSFS, "DIR", "write DIR/" SECRET_KNOB " instead of\n"
	  DEFAULT_SYSFS "/" SECRET_KNOB },
	OPT_SPEC_END,
};

static const struct exit_spec load_exits[] = {
	{ 0, "the kernel took the secret" },
	{ 1, "the kernel refused it, or it could not be written" },
	EXIT_SPEC_USAGE,
	{ 3, "the kernel has no pcdedup, or a pcdedup without a secret" },
	EXIT_SPEC_FATAL,
	{ 5, "permission denied: the kernel's secret file is root's" },
	EXIT_SPEC_NO_SECRET,
	EXIT_SPEC_END,
};

static const struct cmd_spec load_spec = {
	.name = "secret load",
	.summary = "hand the secret to the kernel",
	.args = NULL,
	.intro =
	"Write the secret file's 64 hex digits to " DEFAULT_SYSFS "/" SECRET_KNOB ",\n"
	"replacing the secret the kernel holds: from then on it honours only the\n"
	"keys and domains whose MAC was made with it. Run it at boot, before\n"
	"sharing is switched on.",
	.opts = load_opts,
	.notes = "Prints nothing on success.",
	.exits = load_exits,
};

static int secret_load(int argc, char **argv)
{
	struct secret_opts o = { .sysfs = DEFAULT_SYSFS };
	char why[512], knob[PATH_MAX], text[SECRET_TEXT_LEN + 1];
	struct secret s;
	const char *path;
	int r = action_cmdline(&load_spec, argc, argv, 0, secret_option, &o), fd, err = 0;
	ssize_t n;

	if (r >= 0)
		return r;
	path = secret_path(o.file);
	if (secret_read(path, &s, why, sizeof(why)) != 0) {
		path_error(path, "no secret: %s", why);
		return EXIT_NO_SECRET;
	}
	snprintf(knob, sizeof(knob), "%s/%s", o.sysfs, SECRET_KNOB);
	fd = open(knob, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		err = errno;
		memset(&s, 0, sizeof(s));
		if (err == ENOENT && access(o.sysfs, F_OK) != 0) {
			path_error(o.sysfs, "this kernel has no pcdedup support");
			return EXIT_NO_KERNEL;
		}
		if (err == ENOENT) {
			path_error(knob, "this kernel's pcdedup takes no secret (its keys carry "
				   "no MAC)");
			return EXIT_NO_KERNEL;
		}
		path_error(knob, "cannot open: %s", errstr(err));
		return err == EACCES || err == EPERM ? EXIT_NO_CAP : EXIT_PROBLEMS;
	}
	secret_text(&s, text);
	memset(&s, 0, sizeof(s));
	/* One write: the kernel takes the whole value or nothing. */
	n = write(fd, text, SECRET_TEXT_LEN);
	if (n < 0)
		err = errno;
	memset(text, 0, sizeof(text));
	if (close(fd) != 0 && n >= 0 && !err)
		err = errno;
	if (err || n != SECRET_TEXT_LEN) {
		if (err == EINVAL)
			path_error(knob, "the kernel refused the secret: %s", errstr(err));
		else if (err)
			path_error(knob, "cannot write: %s", errstr(err));
		else
			path_error(knob, "short write: %zd of %d bytes", n, SECRET_TEXT_LEN);
		return err == EACCES || err == EPERM ? EXIT_NO_CAP : EXIT_PROBLEMS;
	}
	return EXIT_OK;
}

static const struct action secret_actions[] = {
	{ &new_spec, secret_new },
	{ &load_spec, secret_load },
};

static const struct exit_spec secret_exits[] = {
	{ 0, "success" },
	{ 1, "new: the file exists or could not be written; load: not taken" },
	EXIT_SPEC_USAGE,
	{ 3, "load: the kernel has no pcdedup, or a pcdedup without a secret" },
	EXIT_SPEC_FATAL,
	{ 5, "load: permission denied" },
	{ 6, "load: no valid secret file" },
	EXIT_SPEC_END,
};

static const struct cmd_spec secret_spec = {
	.name = "secret",
	.summary = "make the secret, or load it into the kernel",
	.args = NULL,
	.intro =
	"The secret (32 bytes) makes the MACs that bind keys to their files and\n"
	"domains to their filesystems; the kernel honours a key or a domain only\n"
	"when its MAC was made with the secret it holds. It is kept in a file\n"
	"only root may read: --secret-file FILE, else $" SECRET_FILE_ENV ", else\n"
	DEFAULT_SECRET_FILE ".",
	.opts = NULL,
	.notes = NULL,
	.exits = secret_exits,
};

static int secret_main(int argc, char **argv)
{
	static const struct action_group g = {
		&secret_spec, secret_actions, sizeof(secret_actions) / sizeof(secret_actions[0]),
	};

	return run_action(&g, argc, argv);
}

const struct command cmd_secret = { &secret_spec, secret_main };
