// SPDX-License-Identifier: GPL-2.0
/* pcdedup tag: hash regular files and set their trusted.pcdedup keys. */
#include <errno.h>
#include <getopt.h>
#include <stdatomic.h>
#include <stdio.h>
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

struct tag_run {
	bool dry_run;
	struct pool *pool;
	atomic_ullong tagged, unchanged, small, not_regular, other_fs, failed;
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

static void tag_file(void *ctx, struct hasher *h, const struct work_item *it)
{
	struct tag_run *run = ctx;
	uint8_t want[KEY_SHA256_LEN], have[KEY_MAX_LEN];
	struct content_key key;
	struct stat seen;
	char why[256];
	size_t len;
	ssize_t got;
	int fd;

	fd = open_walked(it, NULL, why, sizeof(why));
	if (fd < 0) {
		tag_failed(run, it->path, why);
		return;
	}
	if (hash_fd(h, fd, &key, &seen, why, sizeof(why)) != 0) {
		tag_failed(run, it->path, why);
		goto out;
	}
	atomic_fetch_add(&run->bytes, key.size);
	len = key_encode(&key, want);

	got = fgetxattr(fd, PCDEDUP_XATTR_NAME, have, sizeof(have));
	if (got == (ssize_t)len && memcmp(have, want, len) == 0) {
		atomic_fetch_add(&run->unchanged, 1);
		goto out;
	}
	/* No key yet (ENODATA) or one too long to be valid (ERANGE): replace. */
	if (got < 0 && errno != ENODATA && errno != ERANGE) {
		snprintf(why, sizeof(why), "cannot read %s: %s",
			 PCDEDUP_XATTR_NAME, xattr_reason(errno));
		tag_failed(run, it->path, why);
		goto out;
	}
	if (run->dry_run) {
		atomic_fetch_add(&run->tagged, 1);
		goto out;
	}
	if (fsetxattr(fd, PCDEDUP_XATTR_NAME, want, len, 0) != 0) {
		snprintf(why, sizeof(why), "cannot set %s: %s",
			 PCDEDUP_XATTR_NAME, xattr_reason(errno));
		tag_failed(run, it->path, why);
		goto out;
	}
	/* A write that slipped in after the hash: do not leave a wrong key. */
	if (changed_since(fd, &seen)) {
		(void)fremovexattr(fd, PCDEDUP_XATTR_NAME);
		tag_failed(run, it->path, "file changed while tagged; key removed");
		goto out;
	}
	atomic_fetch_add(&run->tagged, 1);
out:
	close(fd);
}

static void tag_walked(void *ctx, enum walk_event ev, const char *path,
		       const struct stat *st, int err)
{
	struct tag_run *run = ctx;

	switch (ev) {
	case WALK_FILE:
		pool_submit(run->pool, path, st, false);
		break;
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

	printf("tagged:     %llu%s\n", (unsigned long long)run->tagged,
	       run->dry_run ? " (dry run: no key written)" : "");
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
	"Hash every regular file under PATH (SHA-256) and set its content key,\n"
	"the extended attribute " PCDEDUP_XATTR_NAME ". Symbolic links are never\n"
	"followed; a key that is already correct is left alone (\"unchanged\").\n"
	"\n"
	"  -j, --jobs N        hash N files at once (default: online CPUs)\n"
	"      --min-size S    skip files below S bytes (default 4096; K, M, G, T)\n"
	"  -n, --dry-run       hash and compare, but write no key\n"
	"  -x, --cross-fs      descend into other mounted filesystems\n"
	"  -q, --quiet         no summary, only errors\n"
	"  -h, --help          this help\n"
	"\n"
	"Needs CAP_SYS_ADMIN to set trusted.* attributes. Prints a summary on\n"
	"standard output (tagged, unchanged, skipped, failed, bytes, MB/s);\n"
	"every file that fails gets one line 'pcdedup: PATH: REASON' on stderr.\n";

int cmd_tag(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "jobs", required_argument, NULL, 'j' },
		{ "min-size", required_argument, NULL, OPT_MIN_SIZE },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "cross-fs", no_argument, NULL, 'x' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct tag_run run = { .dry_run = false };
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
			run.dry_run = true;
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
