// SPDX-License-Identifier: GPL-2.0
/*
 * pcdedup domain set | show: the sharing domain of a filesystem, the
 * attribute trusted.pcdedup.domain on its root directory: the name and
 * its MAC, which binds it to the filesystem's UUID.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "action.h"
#include "commands.h"
#include "exitcode.h"
#include "fileops.h"
#include "json.h"
#include "mac.h"
#include "mountroot.h"
#include "msg.h"
#include "privilege.h"
#include "secret.h"
#include "util.h"

/* The longest value: the longest name and its MAC. */
#define DOMAIN_VALUE_MAX	(PCDEDUP_DOMAIN_MAX + KEY_MAC_LEN)

struct domain_opts {
	const char *file;	/* --secret-file */
	bool json;
};

static int domain_option(int c, const char *arg, void *ctx)
{
	struct domain_opts *o = ctx;

	switch (c) {
	case OPT_SECRET_FILE:
		o->file = arg;
		return -1;
	case OPT_JSON:
		o->json = true;
		return -1;
	default:
		return EXIT_USAGE;
	}
}

/*
 * Open the root directory of @path's filesystem (its path into @root) and
 * read its UUID. Returns the fd, or -1 after saying why.
 */
static int open_root(const char *path, char root[PATH_MAX], uint8_t *uuid_len,
		     uint8_t uuid[FS_UUID_MAX])
{
	char why[PATH_MAX + 256];
	int fd;

	if (fs_root_dir(path, root, PATH_MAX, why, sizeof(why)) != 0) {
		path_error(path, "%s", why);
		return -1;
	}
	fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		path_error(root, "cannot open: %s", errstr(errno));
		return -1;
	}
	if (fs_uuid(fd, uuid_len, uuid, why, sizeof(why)) != 0) {
		path_error(root, "%s", why);
		close(fd);
		return -1;
	}
	return fd;
}

static int read_secret(const char *option, struct secret *s, char *why, size_t whylen)
{
	const char *path = secret_path(option);
	char reason[256];

	if (secret_read(path, s, reason, sizeof(reason)) == 0)
		return 0;
	snprintf(why, whylen, "%s: no secret: %s", path, reason);
	return -1;
}

static const struct opt_spec set_opts[] = {
	OPT_SPEC_SECRET_FILE,
	OPT_SPEC_END,
};

static const struct exit_spec set_exits[] = {
	{ 0, "the domain was set" },
	{ 1, "it could not be set (no filesystem root, no xattr support, ...)" },
	EXIT_SPEC_USAGE,
	EXIT_SPEC_FATAL,
	EXIT_SPEC_NO_CAP,
	EXIT_SPEC_NO_SECRET,
	EXIT_SPEC_END,
};

static const struct cmd_spec set_spec = {
	.name = "domain set",
	.summary = "put a filesystem in a sharing domain",
	.args = "PATH NAME",
	.intro =
	"Set the sharing domain of the filesystem PATH is on: write\n"
	PCDEDUP_DOMAIN_XATTR_NAME " on its root directory (the root of PATH's\n"
	"mount, which must show the filesystem's root, not a directory in it):\n"
	"NAME (1 to 64 bytes) followed by its MAC, made with the secret for the\n"
	"filesystem's UUID. Files share only with files of filesystems in the\n"
	"same domain; '" PCDEDUP_DOMAIN_NONE "' keeps the filesystem's files private.",
	.opts = set_opts,
	.notes = "Needs CAP_SYS_ADMIN (trusted.* attributes) and the secret file.\n"
		 "Prints nothing on success. 'pcdedup untag' does not remove it:\n"
		 "setfattr -x " PCDEDUP_DOMAIN_XATTR_NAME " ROOT does.",
	.exits = set_exits,
};

static int domain_set(int argc, char **argv)
{
	struct domain_opts o = { .file = NULL };
	uint8_t value[DOMAIN_VALUE_MAX], uuid[FS_UUID_MAX], uuid_len;
	char root[PATH_MAX], why[PATH_MAX + 256];
	const char *path, *name;
	struct secret s;
	size_t len;
	int r = action_cmdline(&set_spec, argc, argv, 2, domain_option, &o), fd, err;

	if (r >= 0)
		return r;
	path = argv[optind];
	name = argv[optind + 1];
	len = strlen(name);
	if (len > PCDEDUP_DOMAIN_MAX)
		return usage_error(set_spec.name, "domain name of %zu bytes (1 to %d)", len,
				   PCDEDUP_DOMAIN_MAX);
	if (!may_use_trusted()) {
		msg_line("%s", NO_CAP_MESSAGE);
		return EXIT_NO_CAP;
	}
	if (read_secret(o.file, &s, why, sizeof(why)) != 0) {
		msg_line("%s", why);
		return EXIT_NO_SECRET;
	}
	fd = open_root(path, root, &uuid_len, uuid);
	if (fd < 0)
		return EXIT_PROBLEMS;
	memcpy(value, name, len);
	domain_mac(&s, uuid_len, uuid, name, len, value + len);
	memset(&s, 0, sizeof(s));
	r = fsetxattr(fd, PCDEDUP_DOMAIN_XATTR_NAME, value, len + KEY_MAC_LEN, 0);
	err = errno;
	if (r != 0 && err == EPERM && eperm_is_privilege(fd)) {
		msg_line("%s", NO_CAP_MESSAGE);
		r = EXIT_NO_CAP;
	} else if (r != 0) {
		path_error(root, "cannot set %s: %s", PCDEDUP_DOMAIN_XATTR_NAME, xattr_reason(err));
		r = EXIT_PROBLEMS;
	}
	close(fd);
	return r;
}

/* What 'domain show' found. */
enum domain_state {
	DOMAIN_DEFAULT,		/* no attribute */
	DOMAIN_AUTHENTICATED,	/* its MAC is right */
	DOMAIN_UNAUTHENTICATED,	/* its MAC is wrong */
	DOMAIN_MALFORMED,	/* not a name and a MAC */
	DOMAIN_UNKNOWN,		/* no secret to tell */
};

static const char *const state_word[] = {
	[DOMAIN_DEFAULT] = "default",
	[DOMAIN_AUTHENTICATED] = "authenticated",
	[DOMAIN_UNAUTHENTICATED] = "unauthenticated",
	[DOMAIN_MALFORMED] = "malformed",
	[DOMAIN_UNKNOWN] = "unknown",
};

static void show_json(const char *root, const char *name, enum domain_state st,
		      const char *why)
{
	struct json j;

	json_init(&j, stdout);
	json_begin_object(&j);
	json_key(&j, "root");
	json_string(&j, root);
	json_key(&j, "domain");
	if (name)
		json_string(&j, name);
	else
		json_null(&j);
	json_key(&j, "status");
	json_string(&j, state_word[st]);
	json_key(&j, "authenticated");
	if (st == DOMAIN_AUTHENTICATED || st == DOMAIN_UNAUTHENTICATED)
		json_bool(&j, st == DOMAIN_AUTHENTICATED);
	else
		json_null(&j);
	json_key(&j, "reason");
	if (why)
		json_string(&j, why);
	else
		json_null(&j);
	json_end_object(&j);
	putchar('\n');
}

static void show_human(const char *root, const char *name, enum domain_state st,
		       const char *why)
{
	printf("%-8s ", "root:");
	put_escaped(stdout, root);
	printf("\n%-8s ", "domain:");
	if (name) {
		put_escaped(stdout, name);
		if (strcmp(name, PCDEDUP_DOMAIN_NONE) == 0)
			printf(" (its files never share)");
	} else {
		printf(st == DOMAIN_DEFAULT ? "(default: no %s)" : "?",
		       PCDEDUP_DOMAIN_XATTR_NAME);
	}
	printf("\n%-8s %s", "status:", state_word[st]);
	switch (st) {
	case DOMAIN_AUTHENTICATED:
		printf(" (its MAC is right under the secret)");
		break;
	case DOMAIN_UNAUTHENTICATED:
		printf(" (its MAC is wrong under the secret: the kernel keeps the files "
		       "of this filesystem private)");
		break;
	default:
		if (why) {
			printf(": ");
			put_escaped(stdout, why);
		}
		break;
	}
	putchar('\n');
}

static const struct opt_spec show_opts[] = {
	OPT_SPEC_SECRET_FILE,
	OPT_SPEC_JSON("one JSON object: root, domain (null: none),\n"
		      "status, authenticated (null: cannot tell), reason"),
	OPT_SPEC_END,
};

static const struct exit_spec show_exits[] = {
	{ 0, "no domain set (the default domain), or one whose MAC is right" },
	{ 1, "its MAC is wrong, the attribute is malformed, or it cannot be read" },
	EXIT_SPEC_USAGE,
	EXIT_SPEC_FATAL,
	EXIT_SPEC_NO_CAP,
	{ 6, "no valid secret file: whether the MAC is right is unknown" },
	EXIT_SPEC_END,
};

static const struct cmd_spec show_spec = {
	.name = "domain show",
	.summary = "show a filesystem's sharing domain",
	.args = "PATH",
	.intro =
	"Show the sharing domain of the filesystem PATH is on (the attribute\n"
	PCDEDUP_DOMAIN_XATTR_NAME " on its root directory) and its status:\n"
	"  default          no domain set: the default domain\n"
	"  authenticated    its MAC is right under the secret\n"
	"  unauthenticated  its MAC is wrong (set with another secret, for another\n"
	"                   filesystem, or by hand): the kernel keeps the files\n"
	"                   of this filesystem private\n"
	"  malformed        not a name of 1 to 64 bytes and a MAC\n"
	"  unknown          no secret file to tell",
	.opts = show_opts,
	.notes = "Needs CAP_SYS_ADMIN (trusted.* attributes) and the secret file.",
	.exits = show_exits,
};

static int domain_show(int argc, char **argv)
{
	struct domain_opts o = { .file = NULL };
	uint8_t value[DOMAIN_VALUE_MAX + 1], uuid[FS_UUID_MAX], uuid_len, mac[KEY_MAC_LEN];
	char root[PATH_MAX], why[PATH_MAX + 256], name[PCDEDUP_DOMAIN_MAX + 1];
	enum domain_state st = DOMAIN_DEFAULT;
	const char *reason = NULL;
	bool named = false;
	struct secret s;
	ssize_t len;
	int r = action_cmdline(&show_spec, argc, argv, 1, domain_option, &o), fd, gerr;

	if (r >= 0)
		return r;
	if (!may_use_trusted()) {
		msg_line("%s", NO_CAP_MESSAGE);
		return EXIT_NO_CAP;
	}
	fd = open_root(argv[optind], root, &uuid_len, uuid);
	if (fd < 0)
		return EXIT_PROBLEMS;
	len = fgetxattr(fd, PCDEDUP_DOMAIN_XATTR_NAME, value, sizeof(value));
	gerr = len < 0 ? errno : 0;
	if (len < 0 && gerr != ENODATA && gerr != ERANGE) {
		int err = gerr;

		if (err == EPERM && eperm_is_privilege(fd)) {
			msg_line("%s", NO_CAP_MESSAGE);
			r = EXIT_NO_CAP;
		} else {
			path_error(root, "cannot read %s: %s", PCDEDUP_DOMAIN_XATTR_NAME,
				   xattr_reason(err));
			r = EXIT_PROBLEMS;
		}
		close(fd);
		return r;
	}
	close(fd);
	if (len < 0 && gerr == ERANGE) {
		st = DOMAIN_MALFORMED;
		reason = "longer than a name of 64 bytes and a MAC";
	} else if (len >= 0 && (len <= KEY_MAC_LEN || len > DOMAIN_VALUE_MAX ||
				memchr(value, 0, (size_t)len - KEY_MAC_LEN))) {
		st = DOMAIN_MALFORMED;
		snprintf(why, sizeof(why), "%zd bytes: not a name of 1 to %d bytes (no NUL) "
			 "and a %d-byte MAC", len, PCDEDUP_DOMAIN_MAX, KEY_MAC_LEN);
		reason = why;
	} else if (len >= 0) {
		size_t nlen = (size_t)len - KEY_MAC_LEN;

		memcpy(name, value, nlen);
		name[nlen] = '\0';
		named = true;
		if (read_secret(o.file, &s, why, sizeof(why)) != 0) {
			st = DOMAIN_UNKNOWN;
			reason = why;
		} else {
			domain_mac(&s, uuid_len, uuid, name, nlen, mac);
			memset(&s, 0, sizeof(s));
			st = mac_equal(mac, value + nlen) ? DOMAIN_AUTHENTICATED
							  : DOMAIN_UNAUTHENTICATED;
		}
	}
	if (o.json)
		show_json(root, named ? name : NULL, st, reason);
	else
		show_human(root, named ? name : NULL, st, reason);
	check_stdout();
	switch (st) {
	case DOMAIN_DEFAULT:
	case DOMAIN_AUTHENTICATED:
		return EXIT_OK;
	case DOMAIN_UNKNOWN:
		msg_line("%s", why);
		return EXIT_NO_SECRET;
	default:
		return EXIT_PROBLEMS;
	}
}

static const struct action domain_actions[] = {
	{ &set_spec, domain_set },
	{ &show_spec, domain_show },
};

static const struct exit_spec domain_exits[] = {
	{ 0, "success (show: the default domain, or a domain whose MAC is right)" },
	{ 1, "set: not set; show: a wrong MAC, a malformed attribute, an error" },
	EXIT_SPEC_USAGE,
	EXIT_SPEC_FATAL,
	EXIT_SPEC_NO_CAP,
	EXIT_SPEC_NO_SECRET,
	EXIT_SPEC_END,
};

static const struct cmd_spec domain_spec = {
	.name = "domain",
	.summary = "set or show a filesystem's sharing domain",
	.args = "PATH [NAME]",
	.intro =
	"A filesystem's sharing domain, on its root directory: files share only\n"
	"with files of filesystems in the same domain. The attribute carries a\n"
	"MAC made with the secret: one copied from another filesystem, or set\n"
	"without the secret, keeps the filesystem's files private.",
	.opts = NULL,
	.notes = NULL,
	.exits = domain_exits,
};

static int domain_main(int argc, char **argv)
{
	static const struct action_group g = {
		&domain_spec, domain_actions, sizeof(domain_actions) / sizeof(domain_actions[0]),
	};

	return run_action(&g, argc, argv);
}

const struct command cmd_domain = { &domain_spec, domain_main };
