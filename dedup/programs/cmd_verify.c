// SPDX-License-Identifier: GPL-2.0
/* pcdedup verify: check that every key still describes its file. */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "commands.h"
#include "driver.h"
#include "exitcode.h"
#include "fileops.h"
#include "fsdomain.h"
#include "key.h"
#include "mac.h"
#include "util.h"

struct verify_run {
	bool missing_ok;
	atomic_ullong correct, untagged, missing, old, malformed, unauthenticated, mismatch;
};

/* Compare the decoded key @want with the file's @tree; false with a reason. */
static bool key_matches(const struct content_key *want, const struct file_tree *tree,
			char *why, size_t whylen)
{
	uint64_t count = key_level_count(want->size, want->level);
	struct content_key got;

	if (memcmp(want->digest, tree->digest, KEY_HASH_LEN) != 0) {
		char wtext[KEY_TEXT_LEN], gtext[KEY_TEXT_LEN];

		tree_key(tree, tree->root_level, &got);
		key_digest_text(want, wtext);
		key_digest_text(&got, gtext);
		snprintf(why, whylen, "content differs: key %s, file %s", wtext, gtext);
		return false;
	}
	/* A value that fits an attribute always has its level kept. */
	tree_key(tree, want->level, &got);
	for (uint64_t i = 0; i < count; i++) {
		if (memcmp(want->hashes + i * KEY_HASH_LEN, got.hashes + i * KEY_HASH_LEN,
			   KEY_HASH_LEN) != 0) {
			snprintf(why, whylen, "tree level %u hash %llu of %llu differs "
				 "from the file (the digest matches: a forged key?)",
				 want->level, (unsigned long long)i,
				 (unsigned long long)count);
			return false;
		}
	}
	return true;
}

/*
 * Is the MAC of the key in @buf right for the open file @fd (@it, @st), in
 * its filesystem's domain? -1: cannot tell.
 */
static int mac_right(struct driver *d, int fd, const struct work_item *it,
		     const struct stat *st, const uint8_t *buf,
		     const struct content_key *key, char *why, size_t whylen)
{
	struct file_identity id;
	uint8_t mac[KEY_MAC_LEN];

	if (file_identity(fd, &id, why, whylen) != 0 ||
	    file_domain(it->path, st->st_dev, &d->secret, &id, why, whylen) != 0)
		return -1;
	key_mac(&d->secret, buf, &id, mac);
	return mac_equal(mac, key->mac);
}

/* Check the key in attribute value @buf (@len bytes) against the file. */
static void verify_key(struct driver *d, struct hasher *h, int fd,
		       const struct work_item *it, const struct stat *st,
		       const uint8_t *buf, size_t len)
{
	struct verify_run *run = d->ctx;
	struct content_key want;
	struct file_tree tree;
	char why[512];

	switch (key_decode(buf, len, &want, why, sizeof(why))) {
	case KEY_OLD:
		driver_problem(d, &run->old, "old-format", it->path, why);
		return;
	case KEY_MALFORMED:
		driver_problem(d, &run->malformed, "malformed", it->path, why);
		return;
	case KEY_OK:
		break;
	}
	/* The kernel ignores a key whose MAC is wrong, whatever it says. */
	switch (mac_right(d, fd, it, st, buf, &want, why, sizeof(why))) {
	case -1:
		driver_error(d, it->path, why);
		return;
	case 0:
		driver_problem(d, &run->unauthenticated, "unauthenticated", it->path,
			       "the MAC is not this file's under the secret (a key copied "
			       "from another file, or made with another secret): the kernel "
			       "does not honour it, pcdedup tag rewrites it");
		return;
	default:
		break;
	}
	/* The size is part of the key: a different size needs no hashing. */
	if (want.size != (uint64_t)st->st_size) {
		snprintf(why, sizeof(why), "size differs: key says %llu bytes, file has %llu",
			 (unsigned long long)want.size,
			 (unsigned long long)st->st_size);
		driver_problem(d, &run->mismatch, "mismatch", it->path, why);
		return;
	}
	if (hash_fd(h, fd, &tree, NULL, why, sizeof(why)) != 0) {
		driver_error(d, it->path, why);
		return;
	}
	atomic_fetch_add(&d->bytes, tree.size);
	if (tree.size != want.size || !tree_has_level(&tree, want.level)) {
		snprintf(why, sizeof(why), "file changed while verified");
		driver_error(d, it->path, why);
	} else if (!key_matches(&want, &tree, why, sizeof(why))) {
		driver_problem(d, &run->mismatch, "mismatch", it->path, why);
	} else {
		atomic_fetch_add(&run->correct, 1);
	}
	tree_free(&tree);
}

static void verify_file(struct driver *d, struct hasher *h, const struct work_item *it)
{
	struct verify_run *run = d->ctx;
	uint8_t *buf = xmalloc(KEY_MAX_LEN);
	struct stat st;
	char why[256];
	ssize_t got;
	int fd, err;

	fd = open_walked(it, &st, why, sizeof(why));
	if (fd < 0) {
		driver_error(d, it->path, why);
		free(buf);
		return;
	}
	got = fgetxattr(fd, PCDEDUP_XATTR_NAME, buf, KEY_MAX_LEN);
	err = errno;
	if (got >= 0) {
		verify_key(d, h, fd, it, &st, buf, (size_t)got);
	} else if (err == ENODATA) {
		/* Small files need no key; --missing-ok: none needs one. */
		if (it->small || run->missing_ok)
			atomic_fetch_add(&run->untagged, 1);
		else
			driver_problem(d, &run->missing, "missing", it->path, NULL);
	} else if (err == ERANGE) {
		snprintf(why, sizeof(why), "key longer than %d bytes", KEY_MAX_LEN);
		driver_problem(d, &run->malformed, "malformed", it->path, why);
	} else if (!driver_denied(d, fd, err)) {
		snprintf(why, sizeof(why), "cannot read %s: %s",
			 PCDEDUP_XATTR_NAME, xattr_reason(err));
		driver_error(d, it->path, why);
	}
	close(fd);
	free(buf);
}

static void verify_summary(struct driver *d, struct summary *s)
{
	struct verify_run *run = d->ctx;

	summary_count(s, "correct", "correct:", run->correct, NULL);
	summary_count(s, "missing", "missing:", run->missing, NULL);
	summary_count(s, "old_format", "old-format:", run->old, NULL);
	summary_count(s, "malformed", "malformed:", run->malformed, NULL);
	summary_count(s, "unauthenticated", "unauthenticated:", run->unauthenticated, NULL);
	summary_count(s, "mismatch", "mismatch:", run->mismatch, NULL);
	driver_summary_errors(d, s, "error", "error:");
	summary_count(s, "untagged", "untagged:", run->untagged,
		      "(no key needed: below min size, empty or --missing-ok)");
	driver_summary_skipped(d, s);
}

static int verify_option(struct driver *d, int c, const char *arg)
{
	struct verify_run *run = d->ctx;

	(void)arg;
	if (c != OPT_MISSING_OK)
		return usage_hint("verify");
	run->missing_ok = true;
	return 0;
}

static const struct opt_spec verify_opts[] = {
	OPT_SPEC_JOBS,
	{ "min-size", OPT_MIN_SIZE, "S", "files below S bytes need no key (K, M, G, T;\n"
	  "default 1: every non-empty file needs one);\n"
	  "empty files never need one" },
	{ "missing-ok", OPT_MISSING_OK, NULL, "do not report files without a key" },
	OPT_SPEC_CROSS_FS,
	OPT_SPEC_SECRET_FILE,
	OPT_SPEC_JSON("the summary and the problem files as one JSON\n"
		      "object, instead of the problem lines"),
	{ "quiet", 'q', NULL, "no summary, no progress line" },
	OPT_SPEC_END,
};

static const struct exit_spec verify_exits[] = {
	{ 0, "every key is correct" },
	{ 1, "problems found (a problem line was printed)" },
	EXIT_SPEC_USAGE,
	EXIT_SPEC_FATAL,
	EXIT_SPEC_NO_CAP,
	EXIT_SPEC_NO_SECRET,
	EXIT_SPEC_END,
};

static const struct cmd_spec verify_spec = {
	.name = "verify",
	.summary = "check that keys still match their files",
	.args = "PATH...",
	.intro =
	"Re-hash every regular file under PATH and check its content key: the\n"
	"MAC (with the secret, for this file), the size, the fs-verity digest and\n"
	"every hash of the key's tree level.\n"
	"Prints one line per problem on standard output, '<status>\\t<path>',\n"
	"with the path C-escaped (\\n, \\t, \\\\, \\ooo); status is one of\n"
	"  missing     no key on a non-empty file of at least --min-size bytes\n"
	"  old-format  a version 1 or 2 key: the kernel ignores it, pcdedup\n"
	"              tag rewrites it\n"
	"  malformed   the key is not a valid pcdedup key, or carries a tree\n"
	"              level above 2 (reason on stderr)\n"
	"  unauthenticated  the key's MAC is wrong for this file under the\n"
	"              secret (copied from another file, or made with another\n"
	"              secret): the kernel ignores it, pcdedup tag rewrites it\n"
	"  mismatch    the key's size, digest or tree hashes no longer match\n"
	"              (details on stderr)\n"
	"  error       the file or its key could not be read (reason on stderr)",
	.opts = verify_opts,
	.notes =
	"The summary follows the problem lines on standard output; on a terminal\n"
	"a progress line shows on stderr meanwhile. Reading trusted.* attributes\n"
	"needs CAP_SYS_ADMIN (without it every key would look missing), checking\n"
	"MACs the secret file: verify stops at once without either.",
	.exits = verify_exits,
};

static int verify_main(int argc, char **argv)
{
	static const struct walk_cmd cmd = {
		.spec = &verify_spec,
		.min_size = DEFAULT_MIN_SIZE,
		.hashes = true,
		.lists_problems = true,
		.needs_secret = true,
		.option = verify_option,
		.work = verify_file,
		.summary = verify_summary,
	};
	struct verify_run run = { .missing_ok = false };

	return driver_main(&cmd, &run, argc, argv);
}

const struct command cmd_verify = { &verify_spec, verify_main };
