// SPDX-License-Identifier: GPL-2.0
/* pcdedup tag: hash regular files and set their trusted.pcdedup keys. */
#include <errno.h>
#include <getopt.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "cmdline.h"
#include "commands.h"
#include "exitcode.h"
#include "fileops.h"
#include "key.h"
#include "msg.h"
#include "parse.h"
#include "pool.h"
#include "setkey.h"
#include "util.h"
#include "walk.h"

struct tag_run {
	struct setkey_opts set;
	struct pool *pool;
	atomic_ullong tagged, migrated, unchanged, small, not_regular, other_fs, failed;
	atomic_ullong bytes;
};

static void tag_failed(struct tag_run *run, const char *path, const char *why)
{
	path_error(path, "%s", why);
	atomic_fetch_add(&run->failed, 1);
}

/*
 * Setting the attribute moves ctime, so only size and mtime can tell us
 * that the content changed between the end of the hash and the set.
 */
static bool changed_since(int fd, const struct stat *seen)
{
	struct stat now;

	if (fstat(fd, &now) != 0)
		return true;
	return now.st_size != seen->st_size ||
	       now.st_mtim.tv_sec != seen->st_mtim.tv_sec ||
	       now.st_mtim.tv_nsec != seen->st_mtim.tv_nsec;
}

/* Is @value (@len bytes, negative: none) a version 1 key? */
static bool old_format(const uint8_t *value, ssize_t len)
{
	struct content_key key;
	char why[128];

	return len >= 0 && key_decode(value, (size_t)len, &key, why, sizeof(why)) == KEY_OLD;
}

/* Set the key of the open file @fd, hashed into @tree, and count the outcome. */
static void tag_tree(struct tag_run *run, int fd, const struct work_item *it,
		     const struct file_tree *tree, const struct stat *seen)
{
	uint8_t *have = xmalloc(KEY_MAX_LEN);
	char why[256];
	unsigned level;
	ssize_t got;

	/* No key yet (ENODATA) or one too long to be valid (ERANGE): replace. */
	got = fgetxattr(fd, PCDEDUP_XATTR_NAME, have, KEY_MAX_LEN);
	if (got < 0 && errno != ENODATA && errno != ERANGE) {
		snprintf(why, sizeof(why), "cannot read %s: %s",
			 PCDEDUP_XATTR_NAME, xattr_reason(errno));
		tag_failed(run, it->path, why);
		goto out;
	}
	switch (set_key(fd, tree, &run->set, have, got, &level, why, sizeof(why))) {
	case SETKEY_UNCHANGED:
		atomic_fetch_add(&run->unchanged, 1);
		goto out;
	case SETKEY_FAILED:
		tag_failed(run, it->path, why);
		goto out;
	case SETKEY_WRITTEN:
		break;
	}
	/* A write that slipped in after the hash: do not leave a wrong key. */
	if (!run->set.dry_run && changed_since(fd, seen)) {
		(void)fremovexattr(fd, PCDEDUP_XATTR_NAME);
		tag_failed(run, it->path, "file changed while tagged; key removed");
		goto out;
	}
	atomic_fetch_add(old_format(have, got) ? &run->migrated : &run->tagged, 1);
out:
	free(have);
}

static void tag_file(void *ctx, struct hasher *h, const struct work_item *it)
{
	struct tag_run *run = ctx;
	struct file_tree tree;
	struct stat seen;
	char why[256];
	int fd;

	fd = open_walked(it, NULL, why, sizeof(why));
	if (fd < 0) {
		tag_failed(run, it->path, why);
		return;
	}
	if (hash_fd(h, fd, &tree, &seen, why, sizeof(why)) != 0) {
		tag_failed(run, it->path, why);
	} else {
		atomic_fetch_add(&run->bytes, tree.size);
		tag_tree(run, fd, it, &tree, &seen);
		tree_free(&tree);
	}
	close(fd);
}

static void tag_walked(void *ctx, enum walk_event ev, const char *path,
		       const struct stat *st, int err)
{
	struct tag_run *run = ctx;

	switch (ev) {
	case WALK_FILE:
		/* An empty file has no content to key, whatever the min size. */
		if (st->st_size > 0) {
			pool_submit(run->pool, path, st, false);
			break;
		}
		/* fall through */
	case WALK_SMALL:
		atomic_fetch_add(&run->small, 1);
		break;
	case WALK_SYMLINK:
	case WALK_SPECIAL:
		atomic_fetch_add(&run->not_regular, 1);
		break;
	case WALK_OTHER_FS:
		atomic_fetch_add(&run->other_fs, 1);
		break;
	case WALK_ERROR:
		tag_failed(run, path, errstr(err));
		break;
	}
}

static void tag_report(struct tag_run *run, double secs)
{
	unsigned long long skipped = run->small + run->not_regular + run->other_fs;
	double mbps = secs > 0 ? (double)run->bytes / 1e6 / secs : 0;

	const char *dry = run->set.dry_run ? " (dry run: no key written)" : "";

	printf("tagged:     %llu%s\n", (unsigned long long)run->tagged, dry);
	printf("migrated:   %llu (version 1 keys rewritten)\n",
	       (unsigned long long)run->migrated);
	printf("unchanged:  %llu\n", (unsigned long long)run->unchanged);
	printf("skipped:    %llu (%llu below min size, %llu not regular files, "
	       "%llu directories on other filesystems)\n", skipped,
	       (unsigned long long)run->small, (unsigned long long)run->not_regular,
	       (unsigned long long)run->other_fs);
	printf("failed:     %llu\n", (unsigned long long)run->failed);
	printf("hashed:     %llu bytes in %.3f s (%.1f MB/s)\n",
	       (unsigned long long)run->bytes, secs, mbps);
}

static const char tag_help[] =
	"Usage: pcdedup tag [OPTION]... PATH...\n"
	"Hash every regular file under PATH (its fs-verity digest and Merkle tree,\n"
	"SHA-256) and set its content key, the extended attribute\n"
	PCDEDUP_XATTR_NAME ": the digest and one level of the tree, the lowest\n"
	"level whose value the filesystem accepts. Symbolic links are never\n"
	"followed; empty files get no key; a key that is already correct is left\n"
	"alone (\"unchanged\"); version 1 keys are rewritten (\"migrated\").\n"
	"\n"
	"  -j, --jobs N        hash N files at once (default: online CPUs)\n"
	"      --min-size S    skip files below S bytes (default 4096; K, M, G, T)\n"
	"      --tree-level N  write tree level N (0 to 8), never another one\n"
	"  -n, --dry-run       hash and compare, but write no key\n"
	"  -x, --cross-fs      descend into other mounted filesystems\n"
	"  -q, --quiet         no summary, only errors\n"
	"  -h, --help          this help\n"
	"\n"
	"Needs CAP_SYS_ADMIN to set trusted.* attributes. Prints a summary on\n"
	"standard output (tagged, migrated, unchanged, skipped, failed, bytes,\n"
	"MB/s); every file that fails gets one line 'pcdedup: PATH: REASON' on\n"
	"stderr, 'in use (open for write or shared), not tagged' when the\n"
	"kernel refuses a key to a file open for write or shared.\n";

int cmd_tag(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "jobs", required_argument, NULL, 'j' },
		{ "min-size", required_argument, NULL, OPT_MIN_SIZE },
		{ "tree-level", required_argument, NULL, OPT_TREE_LEVEL },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "cross-fs", no_argument, NULL, 'x' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct tag_run run = { .set = { .level = -1, .dry_run = false } };
	unsigned level;
	struct walk_options wo;
	struct run_opts o;
	double start;
	int c;

	run_opts_init(&o);
	while ((c = getopt_long(argc, argv, "j:nxqh", longopts, NULL)) != -1) {
		int r = run_opt("tag", c, optarg, &o);
		if (r < 0)
			return EXIT_USAGE;
		if (r > 0)
			continue;
		switch (c) {
		case 'n':
			run.set.dry_run = true;
			break;
		case OPT_TREE_LEVEL:
			if (!parse_tree_level(optarg, &level))
				return usage_error("tag", "bad tree level '%s' (0 to %d)",
						   optarg, KEY_MAX_LEVEL);
			run.set.level = (int)level;
			break;
		case 'h':
			printf("%s\n%s", tag_help, exit_status_help);
			return EXIT_OK;
		default:
			return usage_hint("tag");
		}
	}
	if (optind >= argc)
		return usage_error("tag", "no PATH given");

	wo.min_size = o.min_size;
	wo.cross_fs = o.cross_fs;
	start = now_seconds();
	run.pool = pool_start(o.jobs, tag_file, &run);
	if (walk_paths(argv + optind, &wo, tag_walked, &run) != 0)
		fatal("cannot walk: %s", errstr(errno));
	pool_finish(run.pool);
	if (!o.quiet)
		tag_report(&run, now_seconds() - start);
	check_stdout();
	return run.failed ? EXIT_PROBLEMS : EXIT_OK;
}
