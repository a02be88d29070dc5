// SPDX-License-Identifier: GPL-2.0
/* pcdedup tag: hash regular files and set their trusted.pcdedup keys. */
#include <errno.h>
#include <fcntl.h>
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
#include "lease.h"
#include "mac.h"
#include "parse.h"
#include "setkey.h"
#include "treestore.h"
#include "util.h"

struct tag_run {
	int level;		/* --tree-level, or SETKEY_LEVEL_* */
	bool level_given;	/* --tree-level was given */
	int store_fd;		/* --tree-store's directory, or -1 */
	atomic_ullong tagged, migrated, reauthenticated, unchanged;
	atomic_ullong stored, store_too_large;
};

/* Put level 0 of a file whose key is right into the tree store, if any. */
static void store_tree(struct driver *d, const struct work_item *it,
		       const struct file_tree *tree)
{
	struct tag_run *run = d->ctx;
	char why[256];

	if (run->store_fd < 0 || d->dry_run)
		return;
	switch (tree_store_put(run->store_fd, tree, why, sizeof(why))) {
	case TREE_STORE_WRITTEN:
		atomic_fetch_add(&run->stored, 1);
		break;
	case TREE_STORE_UNCHANGED:
		break;
	case TREE_STORE_TOO_LARGE:
		atomic_fetch_add(&run->store_too_large, 1);
		break;
	case TREE_STORE_FAILED:
		driver_error(d, it->path, why);
		break;
	}
}

/*
 * Did the content change between the end of the hash and the set? The
 * read lease says whether anyone opened the file for writing meanwhile;
 * size and mtime are checked besides (setting the attribute moves ctime).
 */
static bool changed_since(int fd, const struct stat *seen)
{
	struct stat now;

	if (lease_broken(fd) || fstat(fd, &now) != 0)
		return true;
	return now.st_size != seen->st_size ||
	       now.st_mtim.tv_sec != seen->st_mtim.tv_sec ||
	       now.st_mtim.tv_nsec != seen->st_mtim.tv_nsec;
}

/*
 * What writing the level @level value over @have (@len bytes, negative:
 * none) did: migrated a version 1 or 2 key, gave a key that was right but
 * for its MAC (copied from another file, or made with another secret) its
 * MAC, or put a key where there was none or a wrong one.
 */
static atomic_ullong *outcome(struct tag_run *run, const uint8_t *have, ssize_t len,
			      const struct file_tree *tree, unsigned level,
			      const struct setkey_opts *set)
{
	struct content_key key;
	atomic_ullong *counter = &run->tagged;
	char why[128];
	size_t wlen;
	uint8_t *want;

	if (len < 0)
		return counter;
	switch (key_decode(have, (size_t)len, &key, why, sizeof(why))) {
	case KEY_OLD:
		return &run->migrated;
	case KEY_MALFORMED:
		return counter;
	case KEY_OK:
		break;
	}
	want = setkey_value(tree, level, set, &wlen);
	if (wlen == (size_t)len && memcmp(want, have, KEY_MAC_OFFSET) == 0 &&
	    memcmp(want + KEY_HASHES_OFFSET, have + KEY_HASHES_OFFSET,
		   wlen - KEY_HASHES_OFFSET) == 0)
		counter = &run->reauthenticated;
	free(want);
	return counter;
}

/* Set the key of the open file @fd, hashed into @tree, and count the outcome. */
static void tag_tree(struct driver *d, int fd, const struct work_item *it,
		     const struct file_tree *tree, const struct stat *seen)
{
	struct tag_run *run = d->ctx;
	struct file_identity id;
	const struct setkey_opts set = { .level = run->level, .dry_run = d->dry_run,
					 .secret = &d->secret, .id = &id };
	uint8_t *have;
	char why[256];
	unsigned level;
	ssize_t got;
	int err;

	/* What the MAC binds the key to. */
	if (file_identity(fd, &id, why, sizeof(why)) != 0 ||
	    file_domain(it->path, seen->st_dev, &d->secret, &id, why, sizeof(why)) != 0) {
		driver_error(d, it->path, why);
		return;
	}
	have = xmalloc(KEY_MAX_LEN);

	/* No key yet (ENODATA) or one too long to be valid (ERANGE): replace. */
	got = fgetxattr(fd, PCDEDUP_XATTR_NAME, have, KEY_MAX_LEN);
	if (got < 0 && errno != ENODATA && errno != ERANGE) {
		err = errno;
		if (!driver_denied(d, fd, err)) {
			snprintf(why, sizeof(why), "cannot read %s: %s",
				 PCDEDUP_XATTR_NAME, xattr_reason(err));
			driver_error(d, it->path, why);
		}
		goto out;
	}
	switch (set_key(fd, tree, &set, have, got, &level, &err, why, sizeof(why))) {
	case SETKEY_UNCHANGED:
		atomic_fetch_add(&run->unchanged, 1);
		store_tree(d, it, tree);
		goto out;
	case SETKEY_FAILED:
		if (!driver_denied(d, fd, err))
			driver_error(d, it->path, why);
		goto out;
	case SETKEY_WRITTEN:
		break;
	}
	/* A write that slipped in after the hash: do not leave a wrong key. */
	if (!d->dry_run && changed_since(fd, seen)) {
		(void)fremovexattr(fd, PCDEDUP_XATTR_NAME);
		driver_error(d, it->path, "file changed while tagged; key removed");
		goto out;
	}
	atomic_fetch_add(outcome(run, have, got, tree, level, &set), 1);
	store_tree(d, it, tree);
out:
	free(have);
}

static void tag_file(struct driver *d, struct hasher *h, const struct work_item *it)
{
	struct file_tree tree;
	struct stat seen;
	char why[256];
	int fd, err;

	fd = open_walked(it, NULL, why, sizeof(why));
	if (fd < 0) {
		driver_error(d, it->path, why);
		return;
	}
	h->leaves = ((struct tag_run *)d->ctx)->store_fd >= 0;
	/* Held until close(), after the key is set and checked. */
	err = d->dry_run ? 0 : lease_take(fd, why, sizeof(why));
	if (err) {
		/* Not the owner and no CAP_LEASE: root has both. */
		if (!driver_denied(d, fd, err == EACCES ? EPERM : err))
			driver_error(d, it->path, why);
		close(fd);
		return;
	}
	if (hash_fd(h, fd, &tree, &seen, why, sizeof(why)) != 0) {
		driver_error(d, it->path, why);
	} else if (!d->dry_run && lease_broken(fd)) {
		driver_error(d, it->path, "file changed while hashed (opened for writing)");
	} else {
		atomic_fetch_add(&d->bytes, tree.size);
		tag_tree(d, fd, it, &tree, &seen);
		tree_free(&tree);
	}
	close(fd);
}

static void tag_summary(struct driver *d, struct summary *s)
{
	struct tag_run *run = d->ctx;

	summary_count(s, "tagged", "tagged:", run->tagged,
		      d->dry_run ? "(dry run: no key written)" : NULL);
	summary_count(s, "migrated", "migrated:", run->migrated,
		      "(version 1 and 2 keys rewritten)");
	summary_count(s, "reauthenticated", "reauthenticated:", run->reauthenticated,
		      "(keys with a wrong MAC rewritten)");
	summary_count(s, "unchanged", "unchanged:", run->unchanged, NULL);
	if (run->store_fd >= 0) {
		summary_count(s, "stored", "stored:", run->stored,
			      "(level 0 written to the tree store)");
		summary_count(s, "store_too_large", "too large to store:", run->store_too_large,
			      "(level 0 over 8 MiB: contents over 1 GiB)");
	}
	driver_summary_skipped(d, s);
	driver_summary_errors(d, s, "failed", "failed:");
}

static int tag_option(struct driver *d, int c, const char *arg)
{
	struct tag_run *run = d->ctx;
	unsigned level;

	if (c == OPT_TREE_STORE) {
		if (run->store_fd >= 0)
			close(run->store_fd);
		run->store_fd = open(arg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (run->store_fd < 0)
			return usage_error("tag", "cannot open tree store '%s': %s", arg,
					   errstr(errno));
		if (!run->level_given)
			run->level = SETKEY_LEVEL_SHORT;
		return 0;
	}
	if (c != OPT_TREE_LEVEL)
		return usage_hint("tag");
	run->level_given = true;
	if (strcmp(arg, "inline") == 0) {
		run->level = SETKEY_LEVEL_INLINE;
		return 0;
	}
	if (strcmp(arg, "short") == 0) {
		run->level = SETKEY_LEVEL_SHORT;
		return 0;
	}
	if (!parse_tree_level(arg, &level))
		return usage_error("tag", "bad tree level '%s' (0 to %d, inline or short: the "
				   "kernel honours no other)", arg, KEY_MAX_KEY_LEVEL);
	run->level = (int)level;
	return 0;
}

static const struct opt_spec tag_opts[] = {
	OPT_SPEC_JOBS,
	{ "min-size", OPT_MIN_SIZE, "S", "skip files below S bytes (K, M, G, T; default 1:\n"
	  "every non-empty file); empty files never get a key" },
	{ "tree-level", OPT_TREE_LEVEL, "N", "write tree level N (0 to 2), never another one;\n"
	  "'inline': level 0 while its key is at most 255 bytes\n"
	  "(files up to 20 KiB: XFS keeps it in the inode), else\n"
	  "the lowest level above that fits; 'short': the lowest\n"
	  "level whose key is at most 255 bytes (level 1 up to\n"
	  "2.5 MiB), else 2 (the default with --tree-store)" },
	{ "tree-store", OPT_TREE_STORE, "DIR", "also write level 0 of each file's tree to DIR,\n"
	  "one file per content named by its hex digest, for the\n"
	  "kernel to check every 4 KiB block however coarse the key\n"
	  "(/sys/kernel/mm/pcdedup/tree_store; contents up to 1 GiB)" },
	{ "dry-run", 'n', NULL, "hash and compare, but write no key" },
	OPT_SPEC_CROSS_FS,
	OPT_SPEC_SECRET_FILE,
	OPT_SPEC_JSON("the summary as one JSON object"),
	{ "quiet", 'q', NULL, "no summary, no progress line, only errors" },
	OPT_SPEC_END,
};

static const struct exit_spec tag_exits[] = {
	{ 0, "every file tagged, unchanged or skipped" },
	{ 1, "some files failed" },
	EXIT_SPEC_USAGE,
	EXIT_SPEC_FATAL,
	EXIT_SPEC_NO_CAP,
	EXIT_SPEC_NO_SECRET,
	EXIT_SPEC_END,
};

static const struct cmd_spec tag_spec = {
	.name = "tag",
	.summary = "hash regular files and set their keys",
	.args = "PATH...",
	.intro =
	"Hash every regular file under PATH (its fs-verity digest and Merkle tree,\n"
	"SHA-256) and set its content key, the extended attribute\n"
	PCDEDUP_XATTR_NAME ": the digest, a MAC made with the secret that binds\n"
	"the key to the file (its filesystem's UUID, its inode number and\n"
	"generation) and one level of the tree, the lowest level whose value the\n"
	"filesystem accepts, at most 2 (a file whose level 2 does not fit is not\n"
	"tagged). Symbolic links are never followed; empty files get no key; a\n"
	"key that is already correct is left alone (\"unchanged\"); version 1 and\n"
	"2 keys are rewritten (\"migrated\"), and so are keys whose MAC is wrong\n"
	"(\"reauthenticated\": copied from another file, or made with another\n"
	"secret).",
	.opts = tag_opts,
	.notes =
	"Needs CAP_SYS_ADMIN to set trusted.* attributes and a valid secret file\n"
	"('pcdedup secret new'): without either tag stops at once. Prints a\n"
	"summary on standard output (tagged, migrated, reauthenticated,\n"
	"unchanged, skipped, failed, bytes, MB/s); on a terminal a progress line\n"
	"on stderr meanwhile. Every file that fails gets one line\n"
	"'pcdedup: PATH: REASON' on stderr, 'in use (open for write or shared),\n"
	"not tagged' when the kernel refuses a key to a file open for write or\n"
	"shared. Each file is hashed and keyed under a read lease: a file open\n"
	"for writing elsewhere is not tagged, and one opened for writing before\n"
	"its key is set and checked has the key taken off again ('file changed\n"
	"while tagged; key removed'); the writer waits until then.",
	.exits = tag_exits,
};

static int tag_main(int argc, char **argv)
{
	static const struct walk_cmd cmd = {
		.spec = &tag_spec,
		.min_size = DEFAULT_MIN_SIZE,
		.keyable_only = true,
		.hashes = true,
		.needs_secret = true,
		.option = tag_option,
		.work = tag_file,
		.summary = tag_summary,
	};
	struct tag_run run = { .level = SETKEY_LEVEL_LOWEST, .store_fd = -1 };
	int status;

	lease_setup();
	status = driver_main(&cmd, &run, argc, argv);
	if (run.store_fd >= 0)
		close(run.store_fd);
	return status;
}

const struct command cmd_tag = { &tag_spec, tag_main };
