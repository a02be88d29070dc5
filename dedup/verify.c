// SPDX-License-Identifier: GPL-2.0
/* pcdedup verify: check that every key still describes its file. */
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
#include "pool.h"
#include "util.h"
#include "walk.h"

struct verify_run {
	bool missing_ok;
	struct pool *pool;
	atomic_ullong correct, untagged, missing, old, malformed, mismatch, errors;
	atomic_ullong skipped, bytes;
};

/*
 * One problem: "<status>\t<path>" on stdout for scripts, and the reason,
 * when there is more to say than the status, on stderr for humans.
 */
static void problem(atomic_ullong *counter, const char *status,
		    const char *path, const char *why)
{
	status_line(status, path);
	if (why)
		path_error(path, "%s", why);
	atomic_fetch_add(counter, 1);
}

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

/* Check the key in attribute value @buf (@len bytes) against the file. */
static void verify_key(struct verify_run *run, struct hasher *h, int fd,
		       const struct work_item *it, const struct stat *st,
		       const uint8_t *buf, size_t len)
{
	struct content_key want;
	struct file_tree tree;
	char why[512];

	switch (key_decode(buf, len, &want, why, sizeof(why))) {
	case KEY_OLD:
		problem(&run->old, "old-format", it->path, why);
		return;
	case KEY_MALFORMED:
		problem(&run->malformed, "malformed", it->path, why);
		return;
	case KEY_OK:
		break;
	}
	/* The size is part of the key: a different size needs no hashing. */
	if (want.size != (uint64_t)st->st_size) {
		snprintf(why, sizeof(why), "size differs: key says %llu bytes, file has %llu",
			 (unsigned long long)want.size,
			 (unsigned long long)st->st_size);
		problem(&run->mismatch, "mismatch", it->path, why);
		return;
	}
	if (hash_fd(h, fd, &tree, NULL, why, sizeof(why)) != 0) {
		problem(&run->errors, "error", it->path, why);
		return;
	}
	atomic_fetch_add(&run->bytes, tree.size);
	if (tree.size != want.size || !tree_has_level(&tree, want.level)) {
		snprintf(why, sizeof(why), "file changed while verified");
		problem(&run->errors, "error", it->path, why);
	} else if (!key_matches(&want, &tree, why, sizeof(why))) {
		problem(&run->mismatch, "mismatch", it->path, why);
	} else {
		atomic_fetch_add(&run->correct, 1);
	}
	tree_free(&tree);
}

static void verify_file(void *ctx, struct hasher *h, const struct work_item *it)
{
	struct verify_run *run = ctx;
	uint8_t *buf = xmalloc(KEY_MAX_LEN);
	struct stat st;
	char why[256];
	ssize_t got;
	int fd;

	fd = open_walked(it, &st, why, sizeof(why));
	if (fd < 0) {
		problem(&run->errors, "error", it->path, why);
		free(buf);
		return;
	}
	got = fgetxattr(fd, PCDEDUP_XATTR_NAME, buf, KEY_MAX_LEN);
	if (got >= 0) {
		verify_key(run, h, fd, it, &st, buf, (size_t)got);
	} else if (errno == ENODATA) {
		/* Small files need no key; --missing-ok: none needs one. */
		if (it->small || run->missing_ok)
			atomic_fetch_add(&run->untagged, 1);
		else
			problem(&run->missing, "missing", it->path, NULL);
	} else if (errno == ERANGE) {
		snprintf(why, sizeof(why), "key longer than %d bytes", KEY_MAX_LEN);
		problem(&run->malformed, "malformed", it->path, why);
	} else {
		snprintf(why, sizeof(why), "cannot read %s: %s",
			 PCDEDUP_XATTR_NAME, xattr_reason(errno));
		problem(&run->errors, "error", it->path, why);
	}
	close(fd);
	free(buf);
}

static void verify_walked(void *ctx, enum walk_event ev, const char *path,
			  const struct stat *st, int err)
{
	struct verify_run *run = ctx;

	switch (ev) {
	case WALK_FILE:
	case WALK_SMALL:
		/* Small files too: a key they carry must still be right. */
		pool_submit(run->pool, path, st, ev == WALK_SMALL || st->st_size == 0);
		break;
	case WALK_SYMLINK:
	case WALK_SPECIAL:
	case WALK_OTHER_FS:
		atomic_fetch_add(&run->skipped, 1);
		break;
	case WALK_ERROR:
		problem(&run->errors, "error", path, errstr(err));
		break;
	}
}

static unsigned long long problems(struct verify_run *run)
{
	return run->missing + run->old + run->malformed + run->mismatch + run->errors;
}

static void verify_report(struct verify_run *run, double secs)
{
	double mbps = secs > 0 ? (double)run->bytes / 1e6 / secs : 0;

	fprintf(stderr,
		"correct:    %llu\n"
		"missing:    %llu\n"
		"old-format: %llu\n"
		"malformed:  %llu\n"
		"mismatch:   %llu\n"
		"error:      %llu\n"
		"untagged:   %llu (no key needed: below min size, empty or --missing-ok)\n"
		"skipped:    %llu (not regular files, other filesystems)\n"
		"hashed:     %llu bytes in %.3f s (%.1f MB/s)\n",
		(unsigned long long)run->correct, (unsigned long long)run->missing,
		(unsigned long long)run->old, (unsigned long long)run->malformed, (unsigned long long)run->mismatch,
		(unsigned long long)run->errors, (unsigned long long)run->untagged,
		(unsigned long long)run->skipped, (unsigned long long)run->bytes,
		secs, mbps);
}

static const char verify_help[] =
	"Usage: pcdedup verify [OPTION]... PATH...\n"
	"Re-hash every regular file under PATH and check its content key: the\n"
	"size, the fs-verity digest and every hash of the key's tree level.\n"
	"Prints one line per problem on standard output, '<status>\\t<path>',\n"
	"with the path C-escaped (\\n, \\t, \\\\, \\ooo); status is one of\n"
	"  missing     no key on a non-empty file of at least --min-size bytes\n"
	"  old-format  a version 1 key: the kernel ignores it, pcdedup tag\n"
	"              rewrites it\n"
	"  malformed   the key is not a valid pcdedup key (reason on stderr)\n"
	"  mismatch    the key's size, digest or tree hashes no longer match\n"
	"              (details on stderr)\n"
	"  error       the file or its key could not be read (reason on stderr)\n"
	"\n"
	"  -j, --jobs N        hash N files at once (default: online CPUs)\n"
	"      --min-size S    files below S bytes need no key (default 4096);\n"
	"                      empty files never need one\n"
	"      --missing-ok    do not report files without a key\n"
	"  -x, --cross-fs      descend into other mounted filesystems\n"
	"  -q, --quiet         no summary on stderr\n"
	"  -h, --help          this help\n"
	"\n"
	"Reading trusted.* attributes needs CAP_SYS_ADMIN; without it every key\n"
	"looks missing. Exit status 1 when any problem line was printed.\n";

int cmd_verify(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "jobs", required_argument, NULL, 'j' },
		{ "min-size", required_argument, NULL, OPT_MIN_SIZE },
		{ "missing-ok", no_argument, NULL, OPT_MISSING_OK },
		{ "cross-fs", no_argument, NULL, 'x' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct verify_run run = { .missing_ok = false };
	struct walk_options wo;
	struct run_opts o;
	double start;
	int c;

	run_opts_init(&o);
	while ((c = getopt_long(argc, argv, "j:xqh", longopts, NULL)) != -1) {
		int r = run_opt("verify", c, optarg, &o);
		if (r < 0)
			return EXIT_USAGE;
		if (r > 0)
			continue;
		switch (c) {
		case OPT_MISSING_OK:
			run.missing_ok = true;
			break;
		case 'h':
			printf("%s\n%s", verify_help, exit_status_help);
			return EXIT_OK;
		default:
			return usage_hint("verify");
		}
	}
	if (optind >= argc)
		return usage_error("verify", "no PATH given");

	wo.min_size = o.min_size;
	wo.cross_fs = o.cross_fs;
	start = now_seconds();
	run.pool = pool_start(o.jobs, verify_file, &run);
	if (walk_paths(argv + optind, &wo, verify_walked, &run) != 0)
		fatal("cannot walk: %s", errstr(errno));
	pool_finish(run.pool);
	check_stdout();
	if (!o.quiet)
		verify_report(&run, now_seconds() - start);
	return problems(&run) ? EXIT_PROBLEMS : EXIT_OK;
}
