// SPDX-License-Identifier: GPL-2.0
/*
 * tag, verify and untag end to end on temporary trees: round trips, every
 * problem verify must find (old version 1 and 2 keys, wrong MACs, keys
 * copied from another file and forged tree hashes included), key digests
 * against `fsverity digest`, whole keys and their MACs against the oracle,
 * the tree level chosen and forced (never above 2), the secret (missing,
 * open to others, another one), files that change while hashed,
 * unreadable files, missing privileges, errors injected with LD_PRELOAD
 * (no xattr support, read-only filesystem, values too large, ETXTBSY), and
 * many files through the workers.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "oracle.h"

static bool have_xattrs;
static const char *no_xattr_why;

struct tree {
	char *dir;
	char *big, *copy, *mib2, *exact, *small, *empty, *nl, *deep;
	char *link, *fifo;
	int nbig;		/* regular files of at least 4096 bytes */
	int nkeyed;		/* non-empty regular files: what tag keys by default */
};

static void make_tree(struct tree *t, const char *tag)
{
	t->dir = make_tmpdir(tag);
	t->big = path_join(t->dir, "big");
	write_pattern(t->big, 100000, 1);
	t->copy = path_join(t->dir, "copy-of-big");
	write_pattern(t->copy, 100000, 1);
	t->mib2 = path_join(t->dir, "two-mib-plus-one");
	write_pattern(t->mib2, 2 * 1024 * 1024 + 1, 2);
	t->exact = path_join(t->dir, "exactly-4096");
	write_pattern(t->exact, 4096, 3);
	t->small = path_join(t->dir, "small");
	write_pattern(t->small, 4095, 4);
	t->empty = path_join(t->dir, "empty");
	write_pattern(t->empty, 0, 5);
	t->nl = path_join(t->dir, "new\nline");
	write_pattern(t->nl, 5000, 6);
	mkdir(path_join(t->dir, "sub"), 0755);
	t->deep = path_join(t->dir, "sub/deep");
	write_pattern(t->deep, 70000, 7);
	t->link = path_join(t->dir, "link-to-big");
	if (symlink("big", t->link) != 0)
		fprintf(stderr, "symlink: %s\n", strerror(errno));
	t->fifo = path_join(t->dir, "fifo");
	if (mkfifo(t->fifo, 0644) != 0)
		fprintf(stderr, "mkfifo: %s\n", strerror(errno));
	t->nbig = 6;
	t->nkeyed = 7;
}

/* Bytes hashed when every non-empty file of the tree is, and above 4095. */
#define TREE_BYTES_BIG (100000 * 2 + 2 * 1024 * 1024 + 1 + 4096 + 5000 + 70000)
#define TREE_BYTES_ALL (TREE_BYTES_BIG + 4095)

static void test_tag_verify_roundtrip(void)
{
	struct tree t;
	struct run_result r;
	char escaped[PATH_MAX];

	make_tree(&t, "roundtrip");
	pcd(&r, "tag", "-j", "3", t.dir);
	expect("tag-exit-0", r.status == 0 && r.err[0] == '\0', "exit %d: %s",
	       r.status, r.err);
	/* Skipped: the empty file (below the default min size 1), link, fifo. */
	expect("tag-summary-counts",
	       counter(r.out, "tagged:") == t.nkeyed && counter(r.out, "unchanged:") == 0 &&
	       counter(r.out, "failed:") == 0 && counter(r.out, "skipped:") == 3 &&
	       contains(r.out, "(1 below min size, 2 not regular files"),
	       "summary: %s", r.out);
	expect("tag-summary-rate", contains(r.out, "MB/s") &&
	       counter(r.out, "hashed:") == TREE_BYTES_ALL, "summary: %s", r.out);
	free_result(&r);

	expect("tag-keys-match-sha256sum",
	       key_state(t.big) == 1 && key_state(t.copy) == 1 &&
	       key_state(t.mib2) == 1 && key_state(t.exact) == 1 &&
	       key_state(t.nl) == 1 && key_state(t.deep) == 1 && key_state(t.small) == 1,
	       "big %d copy %d mib2 %d exact %d nl %d deep %d small %d", key_state(t.big),
	       key_state(t.copy), key_state(t.mib2), key_state(t.exact),
	       key_state(t.nl), key_state(t.deep), key_state(t.small));
	{
		uint8_t *a = malloc(65536), *b = malloc(65536);
		ssize_t na = getxattr(t.big, XATTR, a, 65536);
		ssize_t nb = getxattr(t.copy, XATTR, b, 65536);

		/* Identical content, two inodes: the same key but for the MAC. */
		expect("tag-identical-files-same-key-but-mac", na > 80 && na == nb &&
		       memcmp(a, b, 48) == 0 && memcmp(a + 80, b + 80, (size_t)na - 80) == 0,
		       "keys differ outside the MAC");
		expect("tag-identical-files-own-macs", na > 80 && na == nb &&
		       memcmp(a + 48, b + 48, 32) != 0, "one MAC for two files");
		free(a);
		free(b);
	}
	/* By default a file below one page gets a key too; an empty one never. */
	expect("tag-small-file-tagged-by-default", key_state(t.small) == 1 && !has_key(t.empty),
	       "small %d, empty file has a key: %d", key_state(t.small), has_key(t.empty));
	expect("tag-symlink-not-tagged", !has_key(t.link), "symlink itself got a key");

	pcd(&r, "tag", t.dir);
	expect("tag-again-unchanged", r.status == 0 && counter(r.out, "tagged:") == 0 &&
	       counter(r.out, "unchanged:") == t.nkeyed, "exit %d: %s", r.status, r.out);
	free_result(&r);

	pcd(&r, "verify", t.dir);
	expect("verify-clean-tree", r.status == 0 && problem_lines(r.out) == 0 &&
	       counter(r.out, "correct:") == t.nkeyed && counter(r.out, "untagged:") == 1,
	       "exit %d, out '%s', err '%s'", r.status, r.out, r.err);
	free_result(&r);
	pcd(&r, "verify", "--quiet", t.dir);
	expect("verify-quiet", r.status == 0 && r.out[0] == '\0' && r.err[0] == '\0',
	       "exit %d, err '%s'", r.status, r.err);
	free_result(&r);

	/* Missing key on the file with a newline in its name: escaped output. */
	removexattr(t.nl, XATTR);
	snprintf(escaped, sizeof(escaped), "%s/new\\nline", t.dir);
	pcd(&r, "verify", t.dir);
	expect("verify-missing-escaped-name", r.status == 1 &&
	       has_line(r.out, "missing", escaped) && problem_lines(r.out) == 1,
	       "exit %d, out '%s'", r.status, r.out);
	free_result(&r);
	pcd(&r, "verify", "--missing-ok", t.dir);
	expect("verify-missing-ok", r.status == 0 && problem_lines(r.out) == 0,
	       "exit %d, out '%s'", r.status, r.out);
	free_result(&r);

	/*
	 * Every non-empty file needs a key by default, a small one too; with
	 * --min-size the smaller ones need none; empty ones never.
	 */
	removexattr(t.small, XATTR);
	pcd(&r, "verify", t.dir);
	expect("verify-default-reports-small", r.status == 1 &&
	       has_line(r.out, "missing", t.small) && problem_lines(r.out) == 2 &&
	       !contains(r.out, t.empty) && counter(r.out, "untagged:") == 1,
	       "out '%s'", r.out);
	free_result(&r);
	pcd(&r, "verify", "--min-size", "4096", t.dir);
	expect("verify-min-size-4096-small-needs-no-key", r.status == 1 &&
	       !contains(r.out, t.small) && problem_lines(r.out) == 1 &&
	       counter(r.out, "untagged:") == 2, "out '%s'", r.out);
	free_result(&r);
	pcd(&r, "verify", "--min-size", "0", t.dir);
	expect("verify-min-size-0-reports-small", r.status == 1 &&
	       has_line(r.out, "missing", t.small) && !contains(r.out, t.empty),
	       "out '%s'", r.out);
	free_result(&r);

	pcd(&r, "tag", "--quiet", t.dir);
	expect("tag-quiet", r.status == 0 && r.out[0] == '\0' && key_state(t.nl) == 1 &&
	       key_state(t.small) == 1, "exit %d, out '%s'", r.status, r.out);
	free_result(&r);

	pcd(&r, "untag", t.link);
	expect("untag-symlink-not-followed", r.status == 0 && key_state(t.big) == 1,
	       "exit %d, key on target %d", r.status, key_state(t.big));
	free_result(&r);
	pcd(&r, "untag", t.dir);
	expect("untag-removes-all", r.status == 0 &&
	       counter(r.out, "removed:") == t.nkeyed && !has_key(t.big) &&
	       !has_key(t.deep) && !has_key(t.nl) && !has_key(t.small),
	       "exit %d: %s", r.status, r.out);
	free_result(&r);
	pcd(&r, "untag", t.dir);
	expect("untag-no-key-not-an-error", r.status == 0 && r.err[0] == '\0' &&
	       counter(r.out, "removed:") == 0 && counter(r.out, "no key:") == t.nkeyed + 1,
	       "exit %d: %s %s", r.status, r.out, r.err);
	free_result(&r);
	pcd(&r, "verify", t.dir);
	expect("verify-after-untag-all-missing", r.status == 1 &&
	       problem_lines(r.out) == t.nkeyed && has_line(r.out, "missing", t.small),
	       "out '%s'", r.out);
	free_result(&r);
}

static void test_dry_run(void)
{
	struct tree t;
	struct run_result r;

	make_tree(&t, "dryrun");
	pcd(&r, "tag", "--dry-run", t.dir);
	expect("tag-dry-run-writes-nothing", r.status == 0 &&
	       counter(r.out, "tagged:") == t.nkeyed && contains(r.out, "dry run") &&
	       !has_key(t.big) && !has_key(t.deep) && !has_key(t.small),
	       "exit %d: %s", r.status, r.out);
	free_result(&r);
	pcd(&r, "tag", "-q", t.dir);
	free_result(&r);
	pcd(&r, "untag", "--dry-run", t.dir);
	expect("untag-dry-run-removes-nothing", r.status == 0 &&
	       counter(r.out, "would remove:") == t.nkeyed && !contains(r.out, "removed:") &&
	       has_key(t.big) && has_key(t.small),
	       "exit %d: %s", r.status, r.out);
	free_result(&r);
}

static void test_min_size(void)
{
	char *dir = make_tmpdir("minsize");
	char *empty = path_join(dir, "empty");
	char *tiny = path_join(dir, "tiny");
	char *mid = path_join(dir, "mid");
	struct run_result r;

	write_pattern(empty, 0, 1);
	write_pattern(tiny, 1, 2);
	write_pattern(mid, 3000, 3);
	pcd(&r, "tag", "--min-size", "0", dir);
	expect("tag-min-size-0-empty-file-no-key", r.status == 0 && !has_key(empty) &&
	       key_state(tiny) == 1 && key_state(mid) == 1 &&
	       counter(r.out, "tagged:") == 2 && counter(r.out, "skipped:") == 1,
	       "exit %d: %s %s", r.status, r.out, r.err);
	free_result(&r);
	pcd(&r, "verify", "--min-size", "0", dir);
	expect("verify-min-size-0-empty-file", r.status == 0 && problem_lines(r.out) == 0,
	       "exit %d: %s", r.status, r.out);
	free_result(&r);
	pcd(&r, "untag", "-q", dir);
	free_result(&r);
	pcd(&r, "tag", "--min-size", "2K", dir);
	expect("tag-min-size-suffix", r.status == 0 && counter(r.out, "tagged:") == 1 &&
	       key_state(mid) == 1 && !has_key(tiny), "%s", r.out);
	free_result(&r);
	/* The default (1) keys a one-byte file, as --min-size 0 does; never an empty one. */
	pcd(&r, "tag", dir);
	expect("tag-default-min-size-1", r.status == 0 && counter(r.out, "tagged:") == 1 &&
	       counter(r.out, "unchanged:") == 1 && counter(r.out, "skipped:") == 1 &&
	       key_state(tiny) == 1 && !has_key(empty), "exit %d: %s", r.status, r.out);
	free_result(&r);
}

/* --min-size 4096: files below one page are skipped and need no key. */
static void test_min_size_page(void)
{
	struct tree t;
	struct run_result r;

	make_tree(&t, "minpage");
	pcd(&r, "tag", "--min-size", "4096", t.dir);
	expect("tag-min-size-4096-skips-small", r.status == 0 &&
	       counter(r.out, "tagged:") == t.nbig && counter(r.out, "skipped:") == 4 &&
	       contains(r.out, "(2 below min size, 2 not regular files") &&
	       counter(r.out, "hashed:") == TREE_BYTES_BIG && key_state(t.exact) == 1 &&
	       !has_key(t.small) && !has_key(t.empty),
	       "exit %d: %s %s", r.status, r.out, r.err);
	free_result(&r);
	pcd(&r, "verify", "--min-size", "4096", t.dir);
	expect("verify-min-size-4096-clean", r.status == 0 && problem_lines(r.out) == 0 &&
	       counter(r.out, "correct:") == t.nbig && counter(r.out, "untagged:") == 2,
	       "exit %d: %s", r.status, r.out);
	free_result(&r);
	/* The default wants the small file keyed, not the empty one. */
	pcd(&r, "verify", t.dir);
	expect("verify-default-small-missing", r.status == 1 &&
	       has_line(r.out, "missing", t.small) && problem_lines(r.out) == 1 &&
	       counter(r.out, "untagged:") == 1, "exit %d: %s", r.status, r.out);
	free_result(&r);
	pcd(&r, "tag", t.dir);
	expect("tag-default-after-min-size-4096", r.status == 0 &&
	       counter(r.out, "tagged:") == 1 && counter(r.out, "unchanged:") == t.nbig &&
	       key_state(t.small) == 1 && !has_key(t.empty), "exit %d: %s", r.status, r.out);
	free_result(&r);
}

/* Set raw bytes as the key, as a buggy or hostile tagger might. */
static void set_raw(const char *path, const void *v, size_t len)
{
	if (setxattr(path, XATTR, v, len, 0) != 0)
		fprintf(stderr, "setxattr %s: %s\n", path, strerror(errno));
}

/* Overwrite byte @at of @path's key with @value; false if it has none. */
static void poke_key(const char *path, size_t at, uint8_t value)
{
	uint8_t key[1024];
	ssize_t n = getxattr(path, XATTR, key, sizeof(key));

	if (n <= (ssize_t)at) {
		fprintf(stderr, "no key to change on %s\n", path);
		return;
	}
	key[at] = value;
	set_raw(path, key, (size_t)n);
}

/* A version 2 key, as the pcdedup before MACs wrote it: version 3 less its MAC. */
static void set_v2_key(const char *path)
{
	uint8_t *key = malloc(65536);
	ssize_t n = getxattr(path, XATTR, key, 65536);

	if (n < 80) {
		fprintf(stderr, "no key to make a v2 key of on %s\n", path);
	} else {
		key[0] = 2;
		memmove(key + 48, key + 80, (size_t)n - 80);
		set_raw(path, key, (size_t)n - 32);
	}
	free(key);
}

/* Give @to the key @from carries, byte for byte (as cp -a would). */
static void copy_key(const char *from, const char *to)
{
	uint8_t *key = malloc(65536);
	ssize_t n = getxattr(from, XATTR, key, 65536);

	if (n < 0)
		fprintf(stderr, "no key to copy on %s\n", from);
	else
		set_raw(to, key, (size_t)n);
	free(key);
}

/* A version 1 key, as the old pcdedup wrote it: header + sha256sum. */
static void set_v1_key(const char *path)
{
	uint8_t key[48] = { 1, 1, 32 };
	struct stat st;
	char hex[65];

	if (stat(path, &st) != 0 || !sha256sum_hex(path, hex)) {
		fprintf(stderr, "cannot build a v1 key for %s\n", path);
		return;
	}
	for (int i = 0; i < 8; i++)
		key[8 + i] = (uint8_t)((uint64_t)st.st_size >> (8 * i));
	for (int i = 0; i < 32; i++) {
		unsigned byte;

		sscanf(hex + 2 * i, "%2x", &byte);
		key[16 + i] = (uint8_t)byte;
	}
	set_raw(path, key, sizeof(key));
}

static void test_verify_problems(void)
{
	/*
	 * 50000 bytes: 13 blocks, a level 0 key of 16 + 32 + 32 + 13 * 32 =
	 * 496 bytes (fits any filesystem), the root on level 1. @byte -1: only
	 * the length changes; @zero_size: the size field becomes 0.
	 */
	static const struct {
		const char *name; int byte; uint8_t value; size_t len; bool zero_size;
	} bad[] = {
		{ "short", -1, 0, 20, false },
		{ "long", -1, 0, 496 + 32, false },
		{ "version", 0, 4, 496, false },
		{ "algo", 1, 7, 496, false },
		{ "digest-len", 2, 31, 496, false },
		{ "log-blocksize", 3, 13, 496, false },
		{ "level-above-root", 4, 2, 496, false },
		{ "reserved", 5, 1, 496, false },
		{ "size-0", -1, 0, 496, true },
	};
	const int nbad = (int)(sizeof(bad) / sizeof(bad[0]));
	char *dir = make_tmpdir("problems");
	char *same = path_join(dir, "same-size-changed");
	char *grown = path_join(dir, "grown");
	char *missing = path_join(dir, "missing");
	char *good = path_join(dir, "good");
	char *old = path_join(dir, "old-v1-key");
	char *old2 = path_join(dir, "old-v2-key");
	char *badmac = path_join(dir, "bad-mac");
	char *copied = path_join(dir, "copied-key");
	char *forged = path_join(dir, "forged-tree-hash");
	struct run_result r;
	uint8_t key[1024];
	char name[64];

	write_pattern(same, 50000, 1);
	write_pattern(grown, 50000, 2);
	write_pattern(missing, 50000, 3);
	write_pattern(good, 50000, 4);
	write_pattern(old, 50000, 5);
	write_pattern(old2, 50000, 30);
	write_pattern(badmac, 50000, 31);
	write_pattern(copied, 50000, 32);
	write_pattern(forged, 50000, 6);
	for (int i = 0; i < nbad; i++) {
		char file[64];

		snprintf(file, sizeof(file), "malformed-%s", bad[i].name);
		write_pattern(path_join(dir, file), 50000, 10 + (unsigned)i);
	}
	pcd(&r, "tag", dir);
	free_result(&r);

	/* Same size, one byte different: only the digest can tell. */
	{
		int fd = open(same, O_WRONLY);

		if (fd < 0 || pwrite(fd, "!", 1, 25000) != 1)
			fprintf(stderr, "modify: %s\n", strerror(errno));
		if (fd >= 0)
			close(fd);
	}
	{
		int fd = open(grown, O_WRONLY | O_APPEND);

		if (fd < 0 || write(fd, "more", 4) != 4)
			fprintf(stderr, "append: %s\n", strerror(errno));
		if (fd >= 0)
			close(fd);
	}
	removexattr(missing, XATTR);
	set_v1_key(old);
	set_v2_key(old2);
	/* One bit of the MAC; and a whole key of another file, MAC and all. */
	{
		uint8_t mac[1024];

		if (getxattr(badmac, XATTR, mac, sizeof(mac)) == 496)
			poke_key(badmac, 48 + 9, mac[48 + 9] ^ 0x04);
	}
	copy_key(good, copied);
	/* The digest is right, one block hash is not: what a forger would try. */
	poke_key(forged, 80 + 5 * 32 + 7, 0x5a);
	for (int i = 0; i < nbad; i++) {
		char file[64], *path;

		snprintf(file, sizeof(file), "malformed-%s", bad[i].name);
		path = path_join(dir, file);
		memset(key, 0, sizeof(key));
		if (getxattr(path, XATTR, key, sizeof(key)) != 496)
			fprintf(stderr, "no level 0 key on %s\n", path);
		if (bad[i].byte >= 0)
			key[bad[i].byte] = bad[i].value;
		if (bad[i].zero_size)
			memset(key + 8, 0, 8);
		set_raw(path, key, bad[i].len);
		free(path);
	}

	pcd(&r, "verify", "-j", "4", dir);
	expect("verify-problems-exit-1", r.status == 1, "exit %d", r.status);
	expect("verify-mismatch-digest", has_line(r.out, "mismatch", same) &&
	       contains(r.err, "content differs"), "out '%s'", r.out);
	expect("verify-mismatch-size", has_line(r.out, "mismatch", grown) &&
	       contains(r.err, "size differs"), "out '%s'", r.out);
	expect("verify-mismatch-tree-hash", has_line(r.out, "mismatch", forged) &&
	       contains(r.err, "forged-tree-hash: tree level 0 hash 5 of 13 differs"),
	       "out '%s' err '%s'", r.out, r.err);
	expect("verify-missing", has_line(r.out, "missing", missing), "out '%s'", r.out);
	expect("verify-old-format", has_line(r.out, "old-format", old) &&
	       contains(r.err, "old-v1-key: version 1 key, run pcdedup tag to rewrite it") &&
	       has_line(r.out, "old-format", old2) &&
	       contains(r.err, "old-v2-key: version 2 key (no MAC), run pcdedup tag to rewrite it") &&
	       counter(r.out, "old-format:") == 2, "out '%s' err '%s'", r.out, r.err);
	expect("verify-unauthenticated-bad-mac", has_line(r.out, "unauthenticated", badmac) &&
	       contains(r.err, "bad-mac: the MAC is not this file's under the secret"),
	       "out '%s' err '%s'", r.out, r.err);
	/* Another file's content too, but the MAC says it first. */
	expect("verify-unauthenticated-copied-key", has_line(r.out, "unauthenticated", copied) &&
	       counter(r.out, "unauthenticated:") == 2, "out '%s' err '%s'", r.out, r.err);
	expect("verify-good-not-listed", !contains(r.out, good), "out '%s'", r.out);
	for (int i = 0; i < nbad; i++) {
		char file[64], *path;

		snprintf(file, sizeof(file), "malformed-%s", bad[i].name);
		path = path_join(dir, file);
		snprintf(name, sizeof(name), "verify-malformed-%s", bad[i].name);
		expect(name, has_line(r.out, "malformed", path), "out '%s'", r.out);
		free(path);
	}
	expect("verify-malformed-reasons",
	       contains(r.err, "key is 20 bytes, expected 496") &&
	       contains(r.err, "version 4") && contains(r.err, "algorithm 7") &&
	       contains(r.err, "digest length 31") && contains(r.err, "log_blocksize 13") &&
	       contains(r.err, "tree level 2 above the root") &&
	       contains(r.err, "reserved byte 5") && contains(r.err, "size 0"),
	       "stderr '%s'", r.err);
	expect("verify-one-line-per-problem",
	       problem_lines(r.out) == 8 + nbad && counter(r.out, "correct:") == 1,
	       "out '%s'", r.out);
	free_result(&r);

	/*
	 * tag repairs all of it: stale, malformed and copied keys replaced, v1
	 * and v2 migrated, the wrong MAC of a right key made right.
	 */
	pcd(&r, "tag", dir);
	expect("tag-replaces-stale-and-malformed-keys", r.status == 0 &&
	       counter(r.out, "tagged:") == 5 + nbad &&
	       counter(r.out, "migrated:") == 2 &&
	       counter(r.out, "reauthenticated:") == 1 &&
	       counter(r.out, "unchanged:") == 1, "exit %d: %s", r.status, r.out);
	expect("tag-migrates-v1-key", key_state(old) == 1 && key_level(old) == 0,
	       "key state %d level %d", key_state(old), key_level(old));
	expect("tag-migrates-v2-key", key_state(old2) == 1 && key_level(old2) == 0,
	       "key state %d level %d", key_state(old2), key_level(old2));
	expect("tag-reauthenticates-bad-mac", key_state(badmac) == 1, "key state %d",
	       key_state(badmac));
	expect("tag-replaces-copied-key", key_state(copied) == 1, "key state %d",
	       key_state(copied));
	free_result(&r);
	pcd(&r, "verify", dir);
	expect("verify-after-repair", r.status == 0 && problem_lines(r.out) == 0,
	       "exit %d: %s", r.status, r.out);
	free_result(&r);
}

static void test_bad_paths(void)
{
	char *dir = make_tmpdir("badpath");
	char *file = path_join(dir, "file");
	char *nothing = path_join(dir, "does-not-exist");
	struct run_result r;

	write_pattern(file, 10000, 1);
	pcd(&r, "tag", nothing, dir);
	expect("tag-nonexistent-path-goes-on", r.status == 1 && key_state(file) == 1 &&
	       contains(r.err, "does-not-exist: No such file or directory") &&
	       counter(r.out, "failed:") == 1, "exit %d: %s %s", r.status, r.out, r.err);
	free_result(&r);
	pcd(&r, "verify", nothing, dir);
	expect("verify-nonexistent-path-is-error", r.status == 1 &&
	       has_line(r.out, "error", nothing), "exit %d: %s", r.status, r.out);
	free_result(&r);
	pcd(&r, "untag", nothing, dir);
	expect("untag-nonexistent-path-goes-on", r.status == 1 && !has_key(file),
	       "exit %d", r.status);
	free_result(&r);
}

/* The file descriptor number pcdedup process @pid has open on @path, or -1. */
static int fd_of(pid_t pid, const char *path)
{
	char dirname[64], link[PATH_MAX + 64], target[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int found = -1;

	snprintf(dirname, sizeof(dirname), "/proc/%d/fd", (int)pid);
	d = opendir(dirname);
	if (!d)
		return -1;
	while ((de = readdir(d)) != NULL && found < 0) {
		ssize_t n;

		snprintf(link, sizeof(link), "%s/%s", dirname, de->d_name);
		n = readlink(link, target, sizeof(target) - 1);
		if (n > 0) {
			target[n] = '\0';
			if (strcmp(target, path) == 0)
				found = atoi(de->d_name);
		}
	}
	closedir(d);
	return found;
}

/* Read position of @fd in process @pid, from /proc/PID/fdinfo. */
static long long fd_pos(pid_t pid, int fd)
{
	char path[64], *text;
	long long pos = -1;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", (int)pid, fd);
	text = read_text(path);
	if (text && strncmp(text, "pos:", 4) == 0)
		pos = strtoll(text + 4, NULL, 10);
	free(text);
	return pos;
}

/*
 * A file appended to while it is hashed must not get a key. The shim's
 * delay (PCDEDUP_TEST_HASH_DELAY_US) sleeps after each read, 1 MiB each;
 * we watch the read position in /proc and append once the first chunk is
 * in, which leaves the hasher two more chunks and delays before its end.
 */
static void test_changed_while_hashed(void)
{
	/* Without trusted.* a dry run still hashes, as if we had the capability. */
	const char *const env[] = { preload_env, "PCDEDUP_TEST_HASH_DELAY_US=400000",
				    have_xattrs ? NULL : "PCDEDUP_FAULT_CAP_SYS_ADMIN=1", NULL };
	char *dir = make_tmpdir("changing");
	char *victim, *bystander, real[PATH_MAX];
	char *argv[] = { (char *)bin, (char *)"tag", (char *)"-j", (char *)"2",
			 (char *)(have_xattrs ? "--quiet" : "--dry-run"), NULL, NULL };
	struct run_spec spec = { .env = env };
	struct run_result r;
	const struct timespec poll = { .tv_nsec = 2 * 1000 * 1000 };
	bool appended = false;
	pid_t pid;

	victim = path_join(dir, "victim");
	bystander = path_join(dir, "bystander");
	write_pattern(victim, 3 * 1024 * 1024, 1);
	write_pattern(bystander, 8192, 2);
	if (!realpath(victim, real)) {
		fail("tag-changed-while-hashed", "realpath: %s", strerror(errno));
		return;
	}
	argv[5] = dir;
	pid = spawn_cmd(&spec, argv, &r);
	for (int i = 0; i < 5000 && !appended; i++) {
		int fd = fd_of(pid, real);

		if (fd >= 0 && fd_pos(pid, fd) >= 1024 * 1024) {
			int w = open(victim, O_WRONLY | O_APPEND);

			appended = w >= 0 && write(w, "late", 4) == 4;
			if (w >= 0)
				close(w);
		}
		nanosleep(&poll, NULL);
	}
	wait_cmd(pid, &r);
	if (!appended) {
		fail("tag-changed-while-hashed", "never saw the hash in progress; exit %d: %s",
		     r.status, r.err);
	} else {
		expect("tag-changed-while-hashed", r.status == 1 &&
		       contains(r.err, "victim: file changed while hashed") &&
		       count_lines(r.err) == 1, "exit %d, err '%s'", r.status, r.err);
		expect("tag-changed-no-key-written", !has_key(victim), "key was set");
		if (have_xattrs)
			expect("tag-changed-run-goes-on", key_state(bystander) == 1,
			       "other file not tagged");
		else
			expect("tag-changed-run-goes-on", counter(r.out, "tagged:") == 1 &&
			       counter(r.out, "failed:") == 1, "summary '%s'", r.out);
	}
	free_result(&r);
}

/* ---- runs without privileges ---- */

#define NOBODY 65534

/* As root, run as nobody (a forked child drops its ids); else as ourselves. */
static void unprivileged_spec(struct run_spec *spec)
{
	memset(spec, 0, sizeof(*spec));
	if (geteuid() == 0) {
		spec->as_user = true;
		spec->uid = NOBODY;
	}
}

#define NO_CAP_LINE "pcdedup: needs CAP_SYS_ADMIN (trusted.* attributes): run as root\n"

/*
 * Without CAP_SYS_ADMIN tag, untag and verify stop at once, with one line
 * and exit status 5. With the shim claiming the capability, the files
 * themselves are worked on: an unreadable one fails alone, and the first
 * EPERM from the kernel on trusted.* stops the run with the same line.
 */
static void test_unprivileged(void)
{
	static const char *const cmds[] = { "tag", "untag", "verify" };
	char *dir = make_tmpdir("unpriv");
	char *tool = copy_of(dir, "pcdedup", bin);
	char *shim = copy_of(dir, "shim.so", fault_lib);
	char *tree = path_join(dir, "tree");
	char *readable, *secret, shim_env[PATH_MAX + 16], secret_env[PATH_MAX + 32];
	char *own_secret = path_join(dir, "the-secret");
	const char *pretend[] = { shim_env, "PCDEDUP_FAULT_CAP_SYS_ADMIN=1", secret_env, NULL };
	char *argv[8];
	char name[64];
	struct run_spec spec;
	struct run_result r;

	/* Copies in a world-readable place, for nobody to run. */
	chmod(tool, 0755);
	chmod(shim, 0755);
	snprintf(shim_env, sizeof(shim_env), "LD_PRELOAD=%s", shim);
	mkdir(tree, 0755);
	readable = path_join(tree, "readable");
	secret = path_join(tree, "secret");
	write_pattern(readable, 10000, 1);
	write_pattern(secret, 10000, 2);
	chmod(secret, 0);
	unprivileged_spec(&spec);
	/* The secret file, the running user's own, as it must be. */
	write_secret_file(own_secret, test_secret, 0600);
	if (spec.as_user && chown(own_secret, spec.uid, spec.uid) != 0)
		fprintf(stderr, "chown %s: %s\n", own_secret, strerror(errno));
	snprintf(secret_env, sizeof(secret_env), "PCDEDUP_SECRET_FILE=%s", own_secret);

	argv[0] = tool;
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		argv[1] = (char *)cmds[i];
		argv[2] = tree;
		argv[3] = NULL;
		run_cmd(&spec, argv, &r);
		if (r.status >= 125) {
			skip("unprivileged", "cannot run as an unprivileged user (exit %d)",
			     r.status);
			free_result(&r);
			return;
		}
		snprintf(name, sizeof(name), "%s-without-cap-sys-admin-stops-at-once", cmds[i]);
		expect(name, r.status == 5 && r.out[0] == '\0' && strcmp(r.err, NO_CAP_LINE) == 0,
		       "exit %d: '%s' '%s'", r.status, r.out, r.err);
		free_result(&r);
	}
	if (access(shim, R_OK) != 0) {
		skip("tag-unreadable-file", "%s not built", fault_lib);
		return;
	}

	spec.env = pretend;
	argv[1] = (char *)"tag";
	argv[2] = (char *)"--dry-run";
	argv[3] = tree;
	argv[4] = NULL;
	run_cmd(&spec, argv, &r);
	expect("tag-unreadable-file", r.status == 1 &&
	       contains(r.err, "secret: cannot open: Permission denied") &&
	       count_lines(r.err) == 1 && counter(r.out, "tagged:") == 1 &&
	       counter(r.out, "failed:") == 1, "exit %d: %s %s", r.status, r.out, r.err);
	free_result(&r);

	argv[1] = (char *)"verify";
	argv[2] = tree;
	argv[3] = NULL;
	run_cmd(&spec, argv, &r);
	expect("verify-unreadable-file", r.status == 1 && has_line(r.out, "error", secret),
	       "exit %d: %s", r.status, r.out);
	free_result(&r);

	/* The kernel says no after all: stop at the first EPERM, write nothing. */
	chmod(secret, 0644);
	argv[1] = (char *)"tag";
	argv[2] = (char *)"-j";
	argv[3] = (char *)"1";
	argv[4] = tree;
	argv[5] = NULL;
	run_cmd(&spec, argv, &r);
	expect("tag-first-eperm-stops", r.status == 5 && strcmp(r.err, NO_CAP_LINE) == 0 &&
	       r.out[0] == '\0' && !has_key(readable) && !has_key(secret),
	       "exit %d: '%s' '%s'", r.status, r.out, r.err);
	free_result(&r);
}

/*
 * EPERM injected on each xattr call: one message, exit 5, no summary; an
 * immutable file (EPERM for everyone) fails alone instead.
 */
static void test_eperm_injected(void)
{
	const char *env_set[] = { preload_env, "PCDEDUP_FAULT_FSETXATTR=1", NULL };
	const char *env_get[] = { preload_env, "PCDEDUP_FAULT_FGETXATTR=1", NULL };
	const char *env_rm[] = { preload_env, "PCDEDUP_FAULT_LREMOVEXATTR=1", NULL };
	const char *env_nocap[] = { preload_env, "PCDEDUP_FAULT_CAP_SYS_ADMIN=0", NULL };
	char *dir = make_tmpdir("eperm");
	char *files[12];
	struct run_result r;
	int keyed = 0;

	if (access(fault_lib, R_OK) != 0) {
		skip("tag-eperm-stops", "%s not built", fault_lib);
		return;
	}
	for (int i = 0; i < 12; i++) {
		char n[16];

		snprintf(n, sizeof(n), "f%d", i);
		files[i] = path_join(dir, n);
		write_pattern(files[i], 10000 + (uint64_t)i, (unsigned)i);
	}
	pcd_with(&r, env_set, "tag", "-j", "4", dir);
	for (int i = 0; i < 12; i++)
		keyed += has_key(files[i]);
	expect("tag-eperm-stops", r.status == 5 && strcmp(r.err, NO_CAP_LINE) == 0 &&
	       r.out[0] == '\0' && keyed == 0, "exit %d: '%s' '%s'", r.status, r.out, r.err);
	free_result(&r);
	pcd_with(&r, env_nocap, "tag", dir);
	expect("tag-no-cap-checked-up-front", r.status == 5 &&
	       strcmp(r.err, NO_CAP_LINE) == 0 && r.out[0] == '\0' && !has_key(files[0]),
	       "exit %d: '%s' '%s'", r.status, r.out, r.err);
	free_result(&r);
	pcd_with(&r, env_nocap, "tag", "--json", dir);
	expect("tag-no-cap-no-json", r.status == 5 && r.out[0] == '\0',
	       "exit %d: '%s'", r.status, r.out);
	free_result(&r);

	pcd(&r, "tag", "-q", dir);
	free_result(&r);
	pcd_with(&r, env_get, "verify", dir);
	expect("verify-eperm-stops", r.status == 5 && strcmp(r.err, NO_CAP_LINE) == 0 &&
	       problem_lines(r.out) == 0, "exit %d: '%s' '%s'", r.status, r.out, r.err);
	free_result(&r);
	pcd_with(&r, env_nocap, "verify", dir);
	expect("verify-no-cap-not-all-missing", r.status == 5 &&
	       strcmp(r.err, NO_CAP_LINE) == 0 && r.out[0] == '\0',
	       "exit %d: '%s' '%s'", r.status, r.out, r.err);
	free_result(&r);
	pcd_with(&r, env_rm, "untag", dir);
	expect("untag-eperm-stops", r.status == 5 && strcmp(r.err, NO_CAP_LINE) == 0 &&
	       has_key(files[0]), "exit %d: '%s'", r.status, r.err);
	free_result(&r);
	pcd_with(&r, env_nocap, "untag", dir);
	expect("untag-no-cap-checked-up-front", r.status == 5 &&
	       strcmp(r.err, NO_CAP_LINE) == 0 && has_key(files[0]),
	       "exit %d: '%s'", r.status, r.err);
	free_result(&r);

	/* chattr +i: EPERM that is about the file, not about us. */
	{
		int fd = open(files[0], O_RDONLY), flags = 0;
		bool immutable = fd >= 0 && ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0 &&
				 (flags |= FS_IMMUTABLE_FL, ioctl(fd, FS_IOC_SETFLAGS, &flags) == 0);

		if (!immutable) {
			skip("tag-immutable-file-fails-alone", "cannot make a file immutable here");
		} else {
			pcd(&r, "untag", dir);
			expect("untag-immutable-file-fails-alone", r.status == 1 &&
			       count_lines(r.err) == 1 && contains(r.err, "immutable") &&
			       counter(r.out, "removed:") == 11 && has_key(files[0]),
			       "exit %d: %s %s", r.status, r.out, r.err);
			free_result(&r);
			flags &= ~FS_IMMUTABLE_FL;
			ioctl(fd, FS_IOC_SETFLAGS, &flags);
		}
		if (fd >= 0)
			close(fd);
	}
}

/* Paths named on the command line that are neither files nor directories. */
static void test_explicit_non_regular(void)
{
	struct tree t;
	struct run_result r;
	char want[PATH_MAX + 64];

	make_tree(&t, "explicit");
	pcd(&r, "tag", t.fifo, t.link, t.big);
	snprintf(want, sizeof(want), "pcdedup: %s: skipped: not a regular file or directory\n",
		 t.fifo);
	expect("tag-explicit-fifo-warned", r.status == 0 && contains(r.err, want) &&
	       contains(r.err, "link-to-big: skipped: not a regular file or directory") &&
	       count_lines(r.err) == 2 && counter(r.out, "skipped:") == 2 &&
	       counter(r.out, "tagged:") == 1, "exit %d: %s %s", r.status, r.out, r.err);
	free_result(&r);
	pcd(&r, "verify", t.fifo);
	expect("verify-explicit-fifo-warned", r.status == 0 && contains(r.err, want) &&
	       counter(r.out, "skipped:") == 1, "exit %d: %s %s", r.status, r.out, r.err);
	free_result(&r);
	pcd(&r, "untag", t.link);
	expect("untag-explicit-symlink-warned", r.status == 0 &&
	       contains(r.err, "skipped: not a regular file or directory") &&
	       key_state(t.big) == 1, "exit %d: %s", r.status, r.err);
	free_result(&r);
	/* Inside a tree they are expected: counted, no warning. */
	pcd(&r, "tag", t.dir);
	expect("tag-non-regular-in-tree-silent", r.status == 0 && r.err[0] == '\0',
	       "exit %d: %s", r.status, r.err);
	free_result(&r);
}

/*
 * A bind mount that makes a directory its own descendant, in a mount
 * namespace of the test's own (unshare -m): reported once, by name, and
 * every file tagged once.
 */
static void test_loop(void)
{
	static const char script[] =
		"mount --bind \"$1\" \"$2\" || exit 77; \"$3\" tag \"$4\"; s=$?; "
		"\"$3\" verify \"$4\" >&2; exit $s";
	char *dir = make_tmpdir("loop");
	char *a = path_join(dir, "a"), *b = path_join(dir, "a/b");
	char *loop = path_join(dir, "a/b/loop"), *f = path_join(dir, "a/f");
	char *argv[] = { (char *)"unshare", (char *)"-m", (char *)"--propagation",
			 (char *)"private", (char *)"sh", (char *)"-c", (char *)script,
			 (char *)"sh", a, loop, (char *)bin, dir, NULL };
	struct run_spec spec = { .env = NULL };
	struct run_result r;
	char want[3 * PATH_MAX];

	mkdir(a, 0755);
	mkdir(b, 0755);
	mkdir(loop, 0755);
	write_pattern(f, 10000, 1);
	run_cmd(&spec, argv, &r);
	if (r.status == 77 || r.status == 127 || contains(r.err, "unshare failed")) {
		skip("tag-filesystem-loop", "no private mount namespace here: %s", r.err);
		free_result(&r);
		return;
	}
	snprintf(want, sizeof(want),
		 "pcdedup: filesystem loop detected at %s (same directory as %s)\n", loop, a);
	expect("tag-filesystem-loop", r.status == 0 && contains(r.err, want) &&
	       !contains(r.err, "Too many levels") && counter(r.out, "tagged:") == 1 &&
	       contains(r.out, "1 filesystem loops") && key_state(f) == 1,
	       "exit %d: %s %s", r.status, r.out, r.err);
	expect("verify-filesystem-loop", counter(r.err, "correct:") == 1, "%s", r.err);
	free_result(&r);
}

static const char tag_json_py[] =
	"assert d['command'] == 'tag' and d['tagged'] == 7 and d['failed'] == 0, d\n"
	"assert d['skipped'] == 3 and d['skipped_small'] == 1, d\n"
	"assert d['skipped_not_regular'] == 2 and d['skipped_other_fs'] == 0, d\n"
	"assert d['migrated'] == 0 and d['unchanged'] == 0, d\n"
	"assert d['reauthenticated'] == 0, d\n"
	"assert d['bytes'] == int(sys.argv[2]) and d['seconds'] >= 0, d\n"
	"assert 'dry_run' not in d and 'problems' not in d, d\n";

static const char verify_json_py[] =
	"assert d['command'] == 'verify', d\n"
	"assert (d['correct'], d['missing'], d['mismatch'], d['error']) == (5, 1, 1, 0), d\n"
	"assert (d['old_format'], d['malformed'], d['unauthenticated']) == (0, 0, 0), d\n"
	"assert d['untagged'] == 1, d\n"
	"p = sorted(d['problems'], key=lambda x: x['status'])\n"
	"assert [x['status'] for x in p] == ['mismatch', 'missing'], p\n"
	"assert p[0]['path'].endswith('/big') and 'content differs' in p[0]['reason'], p\n"
	"assert p[1]['path'].endswith('/new\\nline') and p[1]['reason'] is None, p\n";

static const char untag_json_py[] =
	"assert d == {'command': 'untag', 'dry_run': True, 'removed': 6, 'no_key': 2,\n"
	"    'skipped': 2, 'skipped_not_regular': 2, 'skipped_other_fs': 0,\n"
	"    'skipped_loops': 0, 'skipped_links': 0, 'failed': 0}, d\n";

/* --json: one JSON object on stdout, nothing else there. */
static void test_json(void)
{
	struct tree t;
	struct run_result r;
	char bytes[32];
	int fd;

	if (!have_python) {
		fail("json-summaries", "python3 not available (scripts/deps.txt)");
		return;
	}
	make_tree(&t, "json");
	snprintf(bytes, sizeof(bytes), "%d", TREE_BYTES_ALL);
	pcd(&r, "tag", "--json", t.dir);
	expect("tag-json-one-line", r.status == 0 && count_lines(r.out) == 1, "%s", r.out);
	check_json("tag-json", r.out, tag_json_py, bytes);
	free_result(&r);

	fd = open(t.big, O_WRONLY);
	if (fd < 0 || pwrite(fd, "!", 1, 5000) != 1)
		fprintf(stderr, "modify: %s\n", strerror(errno));
	if (fd >= 0)
		close(fd);
	removexattr(t.nl, XATTR);
	pcd(&r, "verify", "--json", t.dir);
	expect("verify-json-no-problem-lines", r.status == 1 && count_lines(r.out) == 1 &&
	       problem_lines(r.out) == 0 && contains(r.err, "content differs"),
	       "exit %d: %s", r.status, r.out);
	check_json("verify-json", r.out, verify_json_py, "");
	free_result(&r);

	pcd(&r, "untag", "--json", "--dry-run", t.dir);
	check_json("untag-json", r.out, untag_json_py, "");
	free_result(&r);
}

/*
 * The progress line: on a terminal only (script(1) gives the command one),
 * never with --quiet or when stderr is a file. The shim slows every read
 * so that the run outlasts the 250 ms between two lines.
 */
static void test_progress(void)
{
	const char *slow[] = { preload_env, "PCDEDUP_TEST_HASH_DELAY_US=150000", NULL };
	char *dir = make_tmpdir("progress");
	char *f = path_join(dir, "f");
	char cmd[3 * PATH_MAX];
	char *argv[] = { (char *)"script", (char *)"-qfec", cmd, (char *)"/dev/null", NULL };
	struct run_spec spec = { .env = slow };
	struct run_result r;

	if (access(fault_lib, R_OK) != 0) {
		skip("tag-progress-not-a-tty", "%s not built", fault_lib);
		return;
	}
	write_pattern(f, 4 * 1024 * 1024, 1);
	pcd_with(&r, slow, "tag", "-j", "1", dir);
	expect("tag-progress-not-a-tty", r.status == 0 && r.err[0] == '\0' &&
	       !contains(r.out, "\r"), "exit %d: '%s'", r.status, r.err);
	free_result(&r);
	pcd_with(&r, slow, "verify", "-j", "1", dir);
	expect("verify-progress-not-a-tty", r.status == 0 && r.err[0] == '\0',
	       "exit %d: '%s'", r.status, r.err);
	free_result(&r);

	snprintf(cmd, sizeof(cmd), "'%s' verify -j 1 '%s'", bin, dir);
	if (run_cmd(&spec, argv, &r) == 127 || contains(r.err, "script:")) {
		/* script(1) is util-linux's, a dependency: a failure, not a skip. */
		fail("verify-progress-on-a-tty", "no script(1) to give a terminal: %s", r.err);
		free_result(&r);
		return;
	}
	expect("verify-progress-on-a-tty", r.status == 0 && contains(r.out, "\r0/1 files, ") &&
	       contains(r.out, "MB/s, ETA ") && contains(r.out, "\r\033[K") &&
	       counter(r.out, "correct:") == 1, "exit %d: '%s'", r.status, r.out);
	free_result(&r);
	snprintf(cmd, sizeof(cmd), "'%s' tag -q -j 1 '%s'", bin, dir);
	run_cmd(&spec, argv, &r);
	expect("tag-progress-quiet-on-a-tty", r.status == 0 && !contains(r.out, "\r1") &&
	       !contains(r.out, "MB/s"), "exit %d: '%s'", r.status, r.out);
	free_result(&r);
}

/* ---- errors injected with LD_PRELOAD ---- */

static void test_injected(void)
{
	const char *env_set[3] = { preload_env, "PCDEDUP_FAULT_FSETXATTR=95", NULL };
	const char *env_get[3] = { preload_env, "PCDEDUP_FAULT_FGETXATTR=95", NULL };
	const char *env_rm[3] = { preload_env, "PCDEDUP_FAULT_LREMOVEXATTR=30", NULL };
	char *dir = make_tmpdir("inject");
	char *a = path_join(dir, "a"), *b = path_join(dir, "b");
	struct run_result r;

	if (access(fault_lib, R_OK) != 0) {
		skip("tag-no-xattr-support", "%s not built", fault_lib);
		return;
	}
	write_pattern(a, 10000, 1);
	write_pattern(b, 20000, 2);

	pcd_with(&r, env_set, "tag", dir);
	expect("tag-no-xattr-support", r.status == 1 && count_lines(r.err) == 2 &&
	       contains(r.err, "a: cannot set trusted.pcdedup: the filesystem does not "
			"support extended attributes") &&
	       counter(r.out, "failed:") == 2 && !has_key(a) && !has_key(b),
	       "exit %d: %s %s", r.status, r.out, r.err);
	free_result(&r);

	pcd(&r, "tag", "-q", dir);
	free_result(&r);
	pcd_with(&r, env_get, "verify", dir);
	expect("verify-no-xattr-support", r.status == 1 && has_line(r.out, "error", a) &&
	       has_line(r.out, "error", b) && contains(r.err, "extended attributes"),
	       "exit %d: %s %s", r.status, r.out, r.err);
	free_result(&r);
	pcd_with(&r, env_get, "tag", dir);
	expect("tag-cannot-read-key", r.status == 1 && contains(r.err, "cannot read") &&
	       key_state(a) == 1, "exit %d: %s", r.status, r.err);
	free_result(&r);
	pcd_with(&r, env_rm, "untag", dir);
	expect("untag-read-only-fs", r.status == 1 && contains(r.err, "read-only") &&
	       counter(r.out, "failed:") == 2 && has_key(a),
	       "exit %d: %s %s", r.status, r.out, r.err);
	free_result(&r);
}

/* Does this filesystem refuse a key of @len bytes as too large? */
static bool fs_refuses(const char *dir, size_t len)
{
	char *probe = path_join(dir, ".size-probe");
	uint8_t *v = calloc(1, len);
	bool refused;

	write_bytes(probe, "x", 1);
	refused = setxattr(probe, XATTR, v, len, 0) != 0 &&
		  (errno == E2BIG || errno == ENOSPC || errno == ERANGE);
	unlink(probe);
	free(v);
	free(probe);
	return refused;
}

/*
 * The key digest is what `fsverity digest` prints, the whole value what the
 * oracle builds for the level written, and that level the lowest this
 * filesystem takes: the value one level lower must be refused here.
 */
static void test_fsverity_digest_and_level(void)
{
	static const uint64_t lvl = 128 * 4096;
	static const uint64_t sizes[] = { 1, 4095, 4096, 4097, lvl, lvl + 1,
					  3 * lvl + 5, 128 * lvl + 1 };
	char *dir = make_tmpdir("fsverity");
	char *paths[sizeof(sizes) / sizeof(sizes[0])];
	struct run_result r;

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		char file[64];

		snprintf(file, sizeof(file), "size-%llu", (unsigned long long)sizes[i]);
		paths[i] = path_join(dir, file);
		write_pattern(paths[i], sizes[i], (unsigned)i);
	}
	pcd(&r, "tag", "--min-size", "0", dir);
	expect("tag-fsverity-sizes-exit-0", r.status == 0 &&
	       counter(r.out, "tagged:") == (long long)(sizeof(sizes) / sizeof(sizes[0])),
	       "exit %d: %s %s", r.status, r.out, r.err);
	free_result(&r);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint8_t *v = malloc(65536), cli[32];
		ssize_t n = getxattr(paths[i], XATTR, v, 65536);
		int level = key_level(paths[i]);
		char name[80];

		snprintf(name, sizeof(name), "tag-digest-is-fsverity-digest-%llu",
			 (unsigned long long)sizes[i]);
		expect(name, n >= 48 && fsverity_cli_digest(paths[i], cli) &&
		       memcmp(v + 16, cli, 32) == 0, "key digest differs from fsverity's");
		snprintf(name, sizeof(name), "tag-value-is-oracle-tree-%llu",
			 (unsigned long long)sizes[i]);
		expect(name, key_state(paths[i]) == 1, "value at level %d differs", level);
		snprintf(name, sizeof(name), "tag-lowest-level-that-fits-%llu",
			 (unsigned long long)sizes[i]);
		if (level <= 0) {
			expect(name, level == 0, "no key");
		} else {
			size_t len;
			uint8_t *lower = expected_value(paths[i], (unsigned)level - 1, &len);

			expect(name, lower && (len > 65536 || fs_refuses(dir, len)),
			       "level %d written, but this filesystem takes the %zu-byte "
			       "level %d value", level, len, level - 1);
			free(lower);
		}
		free(v);
	}
	pcd(&r, "verify", "--min-size", "0", dir);
	expect("verify-fsverity-sizes", r.status == 0 && problem_lines(r.out) == 0 &&
	       counter(r.out, "correct:") == (long long)(sizeof(sizes) / sizeof(sizes[0])),
	       "exit %d: %s %s", r.status, r.out, r.err);
	free_result(&r);
	/* 64 MiB + 1 is large; do not leave it for the rest of the run. */
	unlink(paths[sizeof(sizes) / sizeof(sizes[0]) - 1]);
}

/* --tree-level: exactly that level, an error where it does not exist. */
static void test_tree_level(void)
{
	char *dir = make_tmpdir("treelevel");
	char *f = path_join(dir, "f");		/* 25 blocks: levels 0 and 1 */
	struct run_result r;

	write_pattern(f, 100000, 1);
	pcd(&r, "tag", "--tree-level", "1", dir);
	expect("tag-tree-level-1", r.status == 0 && key_level(f) == 1 &&
	       key_state(f) == 1, "exit %d, level %d: %s", r.status, key_level(f), r.err);
	free_result(&r);
	pcd(&r, "tag", "--tree-level", "1", dir);
	expect("tag-tree-level-1-unchanged", r.status == 0 &&
	       counter(r.out, "unchanged:") == 1, "exit %d: %s", r.status, r.out);
	free_result(&r);
	pcd(&r, "verify", dir);
	expect("verify-tree-level-1", r.status == 0 && problem_lines(r.out) == 0,
	       "exit %d: %s", r.status, r.out);
	free_result(&r);
	pcd(&r, "tag", "--tree-level", "2", dir);
	expect("tag-tree-level-above-root", r.status == 1 &&
	       contains(r.err, "no tree level 2 for a file of 100000 bytes") &&
	       counter(r.out, "failed:") == 1 && key_level(f) == 1,
	       "exit %d: %s %s", r.status, r.out, r.err);
	free_result(&r);
	/* Without the option the lowest level wins again. */
	pcd(&r, "tag", dir);
	expect("tag-back-to-level-0", r.status == 0 && counter(r.out, "tagged:") == 1 &&
	       key_level(f) == 0 && key_state(f) == 1, "exit %d, level %d: %s",
	       r.status, key_level(f), r.out);
	free_result(&r);
}

/*
 * --tree-level inline: level 0 while its key is at most 255 bytes (80
 * bytes and 32 per block: up to 5 blocks), else level 1.
 */
static void test_tree_level_inline(void)
{
	static const struct {
		const char *name;
		off_t size;
		int level;
	} cases[] = {
		{ "tag-inline-one-block", 4096, 0 },
		{ "tag-inline-5-blocks-level-0", 20480, 0 },
		{ "tag-inline-6-blocks-level-1", 20481, 1 },
		{ "tag-inline-25-blocks-level-1", 100000, 1 },
	};
	char *dir = make_tmpdir("treeinline");
	char *paths[4];
	struct run_result r;
	size_t i;

	for (i = 0; i < 4; i++) {
		char name[16];

		snprintf(name, sizeof(name), "f%zu", i);
		paths[i] = path_join(dir, name);
		write_pattern(paths[i], cases[i].size, (int)i + 1);
	}
	pcd(&r, "tag", "--tree-level", "inline", dir);
	for (i = 0; i < 4; i++)
		expect(cases[i].name, r.status == 0 && key_state(paths[i]) == 1 &&
		       key_level(paths[i]) == cases[i].level, "exit %d, level %d: %s",
		       r.status, key_level(paths[i]), r.err);
	free_result(&r);
	pcd(&r, "tag", "--tree-level", "inline", dir);
	expect("tag-inline-unchanged", r.status == 0 && counter(r.out, "unchanged:") == 4,
	       "exit %d: %s", r.status, r.out);
	free_result(&r);
	pcd(&r, "verify", dir);
	expect("verify-inline", r.status == 0 && problem_lines(r.out) == 0,
	       "exit %d: %s", r.status, r.out);
	free_result(&r);
	pcd(&r, "tag", "--tree-level", "inlined", dir);
	expect("tag-inline-typo-usage", r.status == 2 && contains(r.err, "bad tree level 'inlined'"),
	       "exit %d: %s", r.status, r.err);
	free_result(&r);
	for (i = 0; i < 4; i++)
		free(paths[i]);
	free(dir);
}

/* Read all of @path into a malloc'd buffer; its length to @len. */
static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	uint8_t *buf = NULL;
	long n;

	if (!fp)
		return NULL;
	if (fseek(fp, 0, SEEK_END) == 0 && (n = ftell(fp)) >= 0 &&
	    fseek(fp, 0, SEEK_SET) == 0) {
		buf = malloc((size_t)n + 1);
		if (buf && fread(buf, 1, (size_t)n, fp) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		*len = (size_t)n;
	}
	fclose(fp);
	return buf;
}

/* The tree store file of @path's content: DIR/<hex digest>. */
static char *store_path(const char *store, const struct oracle *o)
{
	char name[65];

	for (int i = 0; i < 32; i++)
		snprintf(name + 2 * i, 3, "%02x", o->digest[i]);
	return path_join(store, name);
}

/*
 * --tree-store DIR: level 0 of every file (as the oracle computes it) in
 * DIR/<hex digest>, keys at the short level (at most 255 bytes), nothing
 * rewritten on a second run, a damaged store file put right, a file whose
 * level 0 is over 8 MiB not stored, and a store that is no directory a
 * usage error.
 */
static void test_tree_store(void)
{
	static const struct {
		off_t size;
		int level;
	} files[] = {
		{ 20480, 0 },			/* 5 blocks: level 0 is 240 bytes */
		{ 20481, 1 },
		{ 5 * 128 * 4096, 1 },		/* 5 granules: level 1 is 240 bytes */
		{ 5 * 128 * 4096 + 1, 2 },
	};
	const size_t n = sizeof(files) / sizeof(files[0]);
	char *dir = make_tmpdir("treestore"), *store = make_tmpdir("treestore-dir");
	char *paths[4], *stored[4] = { 0 }, *huge = path_join(dir, "huge");
	struct run_result r;
	struct stat before, after;
	bool all = true;
	size_t i, len;
	FILE *fp;

	for (i = 0; i < n; i++) {
		char name[16];

		snprintf(name, sizeof(name), "f%zu", i);
		paths[i] = path_join(dir, name);
		write_pattern(paths[i], files[i].size, (int)i + 11);
	}
	/* 1 GiB + 1 byte, sparse: level 0 is 8 MiB + 32 bytes. */
	fp = fopen(huge, "w");
	if (!fp || ftruncate(fileno(fp), (1ll << 30) + 1) != 0)
		all = false;
	if (fp)
		fclose(fp);
	pcd(&r, "tag", "--tree-store", store, dir);
	expect("tag-store-exit-0", all && r.status == 0 && counter(r.out, "tagged:") == 5 &&
	       counter(r.out, "stored:") == 4 && counter(r.out, "too large to store:") == 1,
	       "exit %d: %s %s", r.status, r.out, r.err);
	free_result(&r);
	for (i = 0; i < n; i++) {
		struct oracle o;
		uint8_t *have = NULL;
		char name[48];

		len = 0;
		snprintf(name, sizeof(name), "tag-store-level-0-%lld", (long long)files[i].size);
		if (oracle_build(paths[i], &o)) {
			stored[i] = store_path(store, &o);
			have = slurp(stored[i], &len);
			expect(name, have && len == o.count[0] * 32 &&
			       memcmp(have, o.level[0], len) == 0,
			       "%s: %zu bytes, not the oracle's %llu of level 0", stored[i], len,
			       (unsigned long long)o.count[0] * 32);
			oracle_free(&o);
		} else {
			fail(name, "no oracle for %s", paths[i]);
		}
		free(have);
		snprintf(name, sizeof(name), "tag-store-short-level-%lld",
			 (long long)files[i].size);
		expect(name, key_level(paths[i]) == files[i].level && key_state(paths[i]) == 1,
		       "level %d, want %d", key_level(paths[i]), files[i].level);
	}
	/* A second run writes nothing; a damaged file is written again. */
	all = stored[0] && stat(stored[0], &before) == 0;
	pcd(&r, "tag", "--tree-store", store, dir);
	expect("tag-store-unchanged", all && r.status == 0 && counter(r.out, "unchanged:") == 5 &&
	       counter(r.out, "stored:") == 0 && stat(stored[0], &after) == 0 &&
	       after.st_ino == before.st_ino,
	       "exit %d: %s %s", r.status, r.out, r.err);
	free_result(&r);
	fp = stored[1] ? fopen(stored[1], "r+") : NULL;
	if (fp) {
		fputc('X', fp);
		fclose(fp);
	}
	pcd(&r, "tag", "--tree-store", store, dir);
	expect("tag-store-repairs", fp && r.status == 0 && counter(r.out, "stored:") == 1,
	       "exit %d: %s %s", r.status, r.out, r.err);
	free_result(&r);
	pcd(&r, "tag", "--tree-store", paths[0], dir);
	expect("tag-store-not-a-directory", r.status == 2 &&
	       contains(r.err, "cannot open tree store"), "exit %d: %s", r.status, r.err);
	free_result(&r);
	unlink(huge);
	for (i = 0; i < n; i++) {
		if (stored[i])
			unlink(stored[i]);
		free(stored[i]);
		unlink(paths[i]);
		free(paths[i]);
	}
	free(huge);
	free(store);
	free(dir);
}

/* A filesystem that takes short values only: tag falls back level by level. */
static void test_fallback(void)
{
	const char *env_500[3] = { preload_env, "PCDEDUP_FAULT_SETXATTR_MAX=500", NULL };
	const char *env_50[3] = { preload_env, "PCDEDUP_FAULT_SETXATTR_MAX=50", NULL };
	const char *env_busy[3] = { preload_env, "PCDEDUP_FAULT_FSETXATTR=26", NULL };
	char *dir = make_tmpdir("fallback");
	char *f = path_join(dir, "f");		/* level 0: 880 bytes, level 1: 112 */
	struct run_result r;

	if (access(fault_lib, R_OK) != 0) {
		skip("tag-e2big-fallback", "%s not built", fault_lib);
		return;
	}
	write_pattern(f, 100000, 1);
	pcd_with(&r, env_500, "tag", dir);
	expect("tag-e2big-fallback", r.status == 0 && r.err[0] == '\0' &&
	       key_level(f) == 1 && key_state(f) == 1, "exit %d, level %d: %s",
	       r.status, key_level(f), r.err);
	free_result(&r);
	pcd_with(&r, env_500, "tag", dir);
	expect("tag-e2big-fallback-unchanged", r.status == 0 &&
	       counter(r.out, "unchanged:") == 1, "exit %d: %s", r.status, r.out);
	free_result(&r);
	pcd_with(&r, env_500, "tag", "--tree-level", "0", dir);
	expect("tag-e2big-forced-level-fails", r.status == 1 &&
	       contains(r.err, "(level 0 key, 880 bytes)") && key_level(f) == 1,
	       "exit %d: %s", r.status, r.err);
	free_result(&r);
	removexattr(f, XATTR);
	pcd_with(&r, env_50, "tag", dir);
	expect("tag-e2big-every-level", r.status == 1 &&
	       contains(r.err, "(level 1 key, 112 bytes)") && !has_key(f) &&
	       !contains(r.err, "no higher level"),
	       "exit %d: %s", r.status, r.err);
	free_result(&r);
	pcd_with(&r, env_busy, "tag", dir);
	expect("tag-etxtbsy-in-use", r.status == 1 &&
	       contains(r.err, "f: in use (open for write or shared), not tagged") &&
	       count_lines(r.err) == 1 && counter(r.out, "failed:") == 1,
	       "exit %d: %s %s", r.status, r.out, r.err);
	free_result(&r);
}

/*
 * The secret: without a valid one tag and verify stop at once (exit 6)
 * and write nothing; under another secret every key is unauthenticated,
 * and tag gives each the MAC of the secret it is given.
 */
static void test_the_secret(void)
{
	char *dir = make_tmpdir("secret");
	char *a = path_join(dir, "a"), *b = path_join(dir, "b");
	char *sdir = make_tmpdir("secret2"), *other = path_join(sdir, "other");
	char *open_ = path_join(sdir, "open");
	const char *none[] = { "PCDEDUP_SECRET_FILE=/nonexistent/secret", NULL };
	uint8_t other_secret[32];
	struct run_result r;

	write_pattern(a, 20000, 1);
	write_pattern(b, 30000, 2);
	pcd_with(&r, none, "tag", dir);
	expect("tag-no-secret-stops", r.status == 6 && r.out[0] == '\0' &&
	       contains(r.err, "pcdedup: /nonexistent/secret: no secret: cannot open: ") &&
	       contains(r.err, "pcdedup secret new") && count_lines(r.err) == 1 &&
	       !has_key(a) && !has_key(b), "exit %d: '%s' '%s'", r.status, r.out, r.err);
	free_result(&r);
	pcd(&r, "tag", "-q", dir);
	free_result(&r);
	pcd_with(&r, none, "verify", dir);
	expect("verify-no-secret-stops", r.status == 6 && r.out[0] == '\0' &&
	       contains(r.err, "no secret"), "exit %d: '%s' '%s'", r.status, r.out, r.err);
	free_result(&r);
	write_secret_file(open_, test_secret, 0644);
	pcd(&r, "verify", "--secret-file", open_, dir);
	expect("verify-secret-open-to-others-refused", r.status == 6 && contains(r.err, "mode 0644"),
	       "exit %d: %s", r.status, r.err);
	free_result(&r);
	/* The tool's own "secret new", then the same keys under it. */
	pcd(&r, "secret", "new", "--secret-file", other);
	free_result(&r);
	{
		char *text = read_text(other);

		for (int i = 0; text && i < 32; i++) {
			unsigned byte = 0;

			sscanf(text + 2 * i, "%2x", &byte);
			other_secret[i] = (uint8_t)byte;
		}
		free(text);
	}
	pcd(&r, "verify", "--secret-file", other, dir);
	expect("verify-other-secret-unauthenticated", r.status == 1 &&
	       has_line(r.out, "unauthenticated", a) && has_line(r.out, "unauthenticated", b) &&
	       counter(r.out, "unauthenticated:") == 2, "exit %d: %s", r.status, r.out);
	free_result(&r);
	pcd(&r, "tag", "--secret-file", other, dir);
	expect("tag-other-secret-reauthenticates", r.status == 0 &&
	       counter(r.out, "reauthenticated:") == 2 && counter(r.out, "tagged:") == 0 &&
	       counter(r.out, "unchanged:") == 0, "exit %d: %s", r.status, r.out);
	free_result(&r);
	{
		/* The key under the other secret, from the oracle. */
		uint8_t *got = malloc(65536), *want = NULL;
		ssize_t n = getxattr(a, XATTR, got, 65536);
		struct oracle_id id;
		struct oracle o;
		size_t len = 0;

		if (oracle_identity(a, &id) && oracle_build(a, &o)) {
			want = oracle_value(&o, 0, other_secret, &id, &len);
			oracle_free(&o);
		}
		expect("tag-other-secret-mac-is-oracle", want && n == (ssize_t)len &&
		       memcmp(got, want, len) == 0, "key of %zd bytes differs", n);
		free(got);
		free(want);
	}
	pcd(&r, "verify", dir);
	expect("verify-first-secret-now-unauthenticated", r.status == 1 &&
	       counter(r.out, "unauthenticated:") == 2, "exit %d: %s", r.status, r.out);
	free_result(&r);
	pcd(&r, "tag", dir);
	expect("tag-back-to-first-secret", r.status == 0 && counter(r.out, "reauthenticated:") == 2 &&
	       key_state(a) == 1 && key_state(b) == 1, "exit %d: %s", r.status, r.out);
	free_result(&r);
	pcd(&r, "tag", "--dry-run", "--secret-file", other, dir);
	expect("tag-dry-run-other-secret-writes-nothing", r.status == 0 &&
	       counter(r.out, "reauthenticated:") == 2 && key_state(a) == 1,
	       "exit %d: %s", r.status, r.out);
	free_result(&r);
}

/*
 * A file whose root is on level 3 (64 MiB + 1 byte, sparse): a level 3
 * key is malformed (the kernel honours levels 0 to 2 only) and tag
 * replaces it; when level 2 does not fit either, tag writes nothing
 * rather than level 3.
 */
static void test_level_above_2(void)
{
	const char *small[] = { preload_env, "PCDEDUP_FAULT_SETXATTR_MAX=120", NULL };
	char *dir = make_tmpdir("level3");
	char *f = path_join(dir, "f");
	struct oracle_id id;
	struct oracle o;
	struct run_result r;
	uint8_t *v = NULL;
	size_t len = 0;
	FILE *fp = fopen(f, "w");

	if (!fp || ftruncate(fileno(fp), 128ll * 128 * 4096 + 1) != 0) {
		fail("verify-level-3-malformed", "cannot make %s", f);
		if (fp)
			fclose(fp);
		return;
	}
	fclose(fp);
	if (oracle_identity(f, &id) && oracle_build(f, &o)) {
		if (o.root_level == 3)
			v = oracle_value(&o, 3, test_secret, &id, &len);
		oracle_free(&o);
	}
	if (!v || setxattr(f, XATTR, v, len, 0) != 0) {
		fail("verify-level-3-malformed", "cannot set a level 3 key: %s", strerror(errno));
		free(v);
		return;
	}
	free(v);
	pcd(&r, "verify", dir);
	expect("verify-level-3-malformed", r.status == 1 && has_line(r.out, "malformed", f) &&
	       contains(r.err, "tree level 3: the kernel honours levels 0 to 2 only"),
	       "exit %d: %s %s", r.status, r.out, r.err);
	free_result(&r);
	pcd(&r, "tag", dir);
	expect("tag-replaces-level-3-key", r.status == 0 && counter(r.out, "tagged:") == 1 &&
	       key_level(f) >= 1 && key_level(f) <= 2 && key_state(f) == 1,
	       "exit %d, level %d: %s %s", r.status, key_level(f), r.out, r.err);
	free_result(&r);
	if (access(fault_lib, R_OK) != 0) {
		skip("tag-never-level-3", "%s not built", fault_lib);
		return;
	}
	/* Level 2 is 144 bytes, the root level 112: only the root would fit. */
	removexattr(f, XATTR);
	pcd_with(&r, small, "tag", dir);
	expect("tag-never-level-3", r.status == 1 && !has_key(f) &&
	       contains(r.err, "(level 2 key, 144 bytes); the kernel honours no higher level: "
			"not tagged") && counter(r.out, "failed:") == 1,
	       "exit %d, level %d: %s %s", r.status, key_level(f), r.out, r.err);
	free_result(&r);
	pcd(&r, "tag", "--tree-level", "3", dir);
	expect("tag-tree-level-3-refused", r.status == 2 && contains(r.err, "0 to 2") && !has_key(f),
	       "exit %d: %s", r.status, r.err);
	free_result(&r);
	unlink(f);
}

/* Many files through the worker queue at once, every one tagged right. */
static void test_many_files(void)
{
	char *dir = make_tmpdir("many");
	char *paths[300];
	struct run_result r;
	int wrong = 0;
	const int n = 300;

	for (int i = 0; i < n; i++) {
		char name[32];

		snprintf(name, sizeof(name), "f%03d", i);
		paths[i] = path_join(dir, name);
		write_pattern(paths[i], 4096 + (uint64_t)i * 997, (unsigned)i);
	}
	pcd(&r, "tag", "-j", "8", dir);
	for (int i = 0; i < n; i++)
		wrong += key_state(paths[i]) != 1;
	expect("tag-parallel-300-files", r.status == 0 && counter(r.out, "tagged:") == n &&
	       wrong == 0, "exit %d, %d wrong keys: %s", r.status, wrong, r.out);
	free_result(&r);
	pcd(&r, "verify", "-j", "1", dir);
	expect("verify-single-worker", r.status == 0 && counter(r.out, "correct:") == n,
	       "exit %d: %s", r.status, r.err);
	free_result(&r);
}

/* The number after "KEY": in a one-line JSON summary, or -1. */
static long long json_count(const char *json, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(json, pat);
	return p ? strtoll(p + strlen(pat), NULL, 10) : -1;
}

/*
 * A tree where every file has three links (as Debian's images have: perl,
 * and others): each file is tagged once, through one of its paths, and the
 * other links are counted, never hashed again. Hashed slowly on 8 workers,
 * two links of one file worked on at once would see the key set through
 * the other move the change time: "file changed while hashed".
 */
static void test_hard_links(void)
{
	const char *const slow[] = { preload_env, "PCDEDUP_TEST_HASH_DELAY_US=20000", NULL };
	char *dir = make_tmpdir("links");
	char *paths[24];
	struct run_result r;
	int wrong = 0;
	const int n = 24;

	for (int i = 0; i < n; i++) {
		char name[32];

		snprintf(name, sizeof(name), "f%02d", i);
		paths[i] = path_join(dir, name);
		write_pattern(paths[i], 3 * 1024 * 1024 + (uint64_t)i, (unsigned)i + 40);
		for (int k = 1; k <= 2; k++) {
			char *other;

			snprintf(name, sizeof(name), "f%02d.link%d", i, k);
			other = path_join(dir, name);
			if (link(paths[i], other) != 0) {
				fail("tag-hard-links-once-each", "link %s: %s", other,
				     strerror(errno));
				fail("verify-hard-links-once-each", "no tree");
				return;
			}
			free(other);
		}
	}
	pcd_with(&r, slow, "tag", "-j", "8", "--json", dir);
	for (int i = 0; i < n; i++)
		wrong += key_state(paths[i]) != 1;
	expect("tag-hard-links-once-each", r.status == 0 && json_count(r.out, "tagged") == n &&
	       json_count(r.out, "skipped_links") == 2 * n && wrong == 0,
	       "exit %d, %d wrong keys: %s %s", r.status, wrong, r.out, r.err);
	free_result(&r);
	pcd(&r, "verify", "-j", "8", dir);
	expect("verify-hard-links-once-each", r.status == 0 && counter(r.out, "correct:") == n,
	       "exit %d: %s %s", r.status, r.out, r.err);
	free_result(&r);
}

/*
 * The file's owner writes bytes of the same size between the end of the
 * hash and the key, and puts the mtime back (the shim holds the set open
 * for 0.6 s and says when it starts): the read lease makes the writer
 * wait, the tool sees the break and takes the key off again, and the
 * write lands on a file without a key. Without the lease the key for the
 * old bytes stays on the new ones.
 */
static void test_written_before_key(void)
{
	char *dir = make_tmpdir("raced"), *victim = path_join(dir, "victim");
	char *mark = path_join(dir, "..raced-mark"), *mark_env, bytes[2] = { 0 };
	const struct timespec poll = { .tv_nsec = 2 * 1000 * 1000 };
	struct run_result r;
	struct stat st;
	pid_t tool, writer;
	int status = -1, fd;

	if (asprintf(&mark_env, "PCDEDUP_TEST_SET_MARK=%s", mark) < 0)
		abort();
	const char *const env[] = { preload_env, mark_env, "PCDEDUP_TEST_SET_DELAY_US=600000",
				    NULL };
	char *argv[] = { (char *)bin, (char *)"tag", (char *)"--quiet", victim, NULL };
	struct run_spec spec = { .env = env };

	write_pattern(victim, 64 * 1024, 1);
	tool = spawn_cmd(&spec, argv, &r);
	for (int i = 0; i < 5000 && access(mark, F_OK) != 0; i++)
		nanosleep(&poll, NULL);
	writer = fork();
	if (writer == 0) {
		struct timespec times[2];

		if (stat(victim, &st) != 0)
			_exit(2);
		times[0] = st.st_atim;
		times[1] = st.st_mtim;
		fd = open(victim, O_WRONLY);
		if (fd < 0 || pwrite(fd, "XY", 2, 0) != 2 || futimens(fd, times) != 0)
			_exit(3);
		_exit(close(fd) == 0 ? 0 : 4);
	}
	wait_cmd(tool, &r);
	if (writer > 0)
		waitpid(writer, &status, 0);
	fd = open(victim, O_RDONLY);
	if (fd < 0 || pread(fd, bytes, 2, 0) != 2)
		bytes[0] = 0;
	if (fd >= 0)
		close(fd);
	if (access(mark, F_OK) != 0 || status != 0 || memcmp(bytes, "XY", 2) != 0) {
		fail("tag-written-before-key", "the race did not run: mark %s, writer %d, bytes %.2s",
		     access(mark, F_OK) == 0 ? "seen" : "never", status, bytes);
	} else {
		expect("tag-written-before-key", r.status == 1 && !has_key(victim) &&
		       contains(r.err, "victim: file changed while tagged; key removed"),
		       "exit %d, key %s, err '%s'", r.status, has_key(victim) ? "left" : "none",
		       r.err);
	}
	free_result(&r);
}

/* A file someone has open for writing is not tagged (the lease is refused). */
static void test_open_for_write_not_tagged(void)
{
	char *dir = make_tmpdir("held"), *victim = path_join(dir, "victim");
	struct run_result r;
	int fd;

	write_pattern(victim, 64 * 1024, 2);
	fd = open(victim, O_WRONLY);
	pcd(&r, "tag", "--quiet", victim);
	expect("tag-open-for-write-not-tagged", fd >= 0 && r.status == 1 && !has_key(victim) &&
	       contains(r.err, "victim: open for writing by another process: not tagged"),
	       "exit %d, key %s, err '%s'", r.status, has_key(victim) ? "set" : "none", r.err);
	if (fd >= 0)
		close(fd);
	free_result(&r);
	pcd(&r, "tag", "--quiet", victim);
	expect("tag-open-for-write-tagged-after-close", r.status == 0 && key_state(victim) == 1,
	       "exit %d: %s", r.status, r.err);
	free_result(&r);
}

/* Without a read lease (refused by the filesystem), no key is written. */
static void test_no_lease_no_key(void)
{
	const char *const env[] = { preload_env, "PCDEDUP_FAULT_SETLEASE=22", NULL };
	char *dir = make_tmpdir("nolease"), *victim = path_join(dir, "victim");
	struct run_result r;

	write_pattern(victim, 64 * 1024, 3);
	pcd_with(&r, env, "tag", "--quiet", victim);
	expect("tag-no-lease-no-key", r.status == 1 && !has_key(victim) &&
	       contains(r.err, "victim: cannot take a read lease (Invalid argument): not tagged"),
	       "exit %d, key %s, err '%s'", r.status, has_key(victim) ? "set" : "none", r.err);
	free_result(&r);
}

int main(void)
{
	char *probe_dir;

	probe_dir = make_tmpdir("probe");
	have_xattrs = trusted_xattrs_work(probe_dir, &no_xattr_why);
	/*
	 * Every case of the tests below; without trusted.* attributes (not
	 * root) two groups and the five skips below.
	 */
	harness_plan(have_xattrs ? 175 : 14);
	if (!cli_init())
		return harness_exit();
	/* These need no trusted.* attributes, or check they cannot be set. */
	test_changed_while_hashed();
	test_unprivileged();
	if (!have_xattrs) {
		/* Without trusted.* the rest cannot be checked; say so per group. */
		skip("tag-verify-roundtrip", "%s", no_xattr_why);
		skip("tag-verify-problems", "%s", no_xattr_why);
		skip("tag-bad-paths", "%s", no_xattr_why);
		skip("tag-injected-errors", "%s", no_xattr_why);
		skip("tag-parallel-many-files", "%s", no_xattr_why);
		return harness_exit();
	}
	test_tag_verify_roundtrip();
	test_dry_run();
	test_min_size();
	test_min_size_page();
	test_verify_problems();
	test_bad_paths();
	test_injected();
	test_eperm_injected();
	test_explicit_non_regular();
	test_loop();
	test_json();
	test_progress();
	test_fsverity_digest_and_level();
	test_tree_level();
	test_tree_level_inline();
	test_tree_store();
	test_fallback();
	test_the_secret();
	test_level_above_2();
	test_many_files();
	test_hard_links();
	test_written_before_key();
	test_open_for_write_not_tagged();
	test_no_lease_no_key();
	return harness_exit();
}
