// SPDX-License-Identifier: GPL-2.0
/*
 * File hashing (fs-verity digest and Merkle tree levels) against an
 * independent SHA-256 tree and `fsverity digest`, at sizes around block,
 * tree-block, buffer and attribute-size boundaries, a 3-level tree, a
 * sparse file, an empty file, and files that change while they are hashed
 * (driven by the hasher's per-chunk hook, so every case is deterministic).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "hash.h"
#include "oracle.h"

static char *dir;

/* Hash @path with a buffer of @bufsize bytes into @tree; false + @why. */
static bool hash_path(const char *path, size_t bufsize, struct file_tree *tree,
		      char *why, size_t whylen)
{
	struct hasher h;
	int fd = open(path, O_RDONLY);
	int r;

	if (fd < 0) {
		snprintf(why, whylen, "open: %s", strerror(errno));
		return false;
	}
	if (hasher_init(&h, bufsize) != 0) {
		snprintf(why, whylen, "hasher_init failed");
		close(fd);
		return false;
	}
	r = hash_fd(&h, fd, tree, NULL, why, whylen);
	hasher_free(&h);
	close(fd);
	return r == 0;
}

/* @tree against the oracle: digest, root level, every level a key can hold. */
static bool same_tree(const struct file_tree *tree, const struct oracle *o,
		      char *why, size_t whylen)
{
	if (tree->size != o->size || tree->root_level != o->root_level) {
		snprintf(why, whylen, "size %llu root %u, oracle size %llu root %u",
			 (unsigned long long)tree->size, tree->root_level,
			 (unsigned long long)o->size, o->root_level);
		return false;
	}
	if (memcmp(tree->digest, o->digest, 32) != 0) {
		snprintf(why, whylen, "digest differs from the oracle's");
		return false;
	}
	for (unsigned l = 0; l <= o->root_level; l++) {
		bool fits = o->count[l] <= KEY_MAX_HASHES;

		if (fits != tree_has_level(tree, l)) {
			snprintf(why, whylen, "level %u (%llu hashes) %s", l,
				 (unsigned long long)o->count[l],
				 fits ? "missing" : "kept though no key can hold it");
			return false;
		}
		if (fits && memcmp(tree->level[l], o->level[l], o->count[l] * 32) != 0) {
			snprintf(why, whylen, "level %u hashes differ from the oracle's", l);
			return false;
		}
	}
	return true;
}

/*
 * The oracle's digest must be what `fsverity digest` prints; the tool's
 * tree, with the default buffer and with small odd ones, the oracle's.
 */
static void check_against_oracle(const char *name, const char *path)
{
	static const size_t bufsizes[] = { HASH_DEFAULT_BUFSIZE, 4096, 1000 };
	struct file_tree tree;
	struct oracle o;
	uint8_t cli[32];
	char why[256];

	if (!oracle_build(path, &o)) {
		fail(name, "oracle cannot read %s", path);
		return;
	}
	if (!fsverity_cli_digest(path, cli)) {
		fail(name, "fsverity digest failed (is the fsverity package installed?)");
		goto out;
	}
	if (memcmp(cli, o.digest, 32) != 0) {
		fail(name, "the oracle's digest is not what fsverity digest prints");
		goto out;
	}
	for (size_t i = 0; i < sizeof(bufsizes) / sizeof(bufsizes[0]); i++) {
		if (!hash_path(path, bufsizes[i], &tree, why, sizeof(why))) {
			fail(name, "buffer %zu: %s", bufsizes[i], why);
			goto out;
		}
		if (!same_tree(&tree, &o, why, sizeof(why))) {
			fail(name, "buffer %zu: %s", bufsizes[i], why);
			tree_free(&tree);
			goto out;
		}
		tree_free(&tree);
	}
	pass(name);
out:
	oracle_free(&o);
}

static void test_sizes(void)
{
	static const uint64_t mib2 = 2 * 1024 * 1024, b = 4096, lvl = 128 * 4096;
	static const uint64_t sizes[] = { 1, 4095, 4096, 4097, 65535, 65536, 65537,
					  lvl, lvl + 1, 3 * lvl + 5, mib2 - 1, mib2,
					  mib2 + 1, 2046 * b, 2047 * b,
					  128 * 128 * 4096 + 1 };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		char name[64], file[64], *path;

		snprintf(file, sizeof(file), "size-%llu", (unsigned long long)sizes[i]);
		snprintf(name, sizeof(name), "hash-size-%llu", (unsigned long long)sizes[i]);
		path = path_join(dir, file);
		write_pattern(path, sizes[i], (unsigned)i);
		check_against_oracle(name, path);
		unlink(path);
		free(path);
	}
}

/* An empty file has no tree to key. */
static void test_empty(void)
{
	char *path = path_join(dir, "empty");
	struct file_tree tree;
	char why[256] = "";

	write_pattern(path, 0, 1);
	expect("hash-empty-refused", !hash_path(path, 4096, &tree, why, sizeof(why)) &&
	       strstr(why, "empty"), "empty file hashed: '%s'", why);
	free(path);
}

/* Holes read as zeros; data at the start, in the middle and at the end. */
static void test_sparse(void)
{
	const off_t size = 5 * 1024 * 1024 + 123;
	char *path = path_join(dir, "sparse");
	struct stat st;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0 || ftruncate(fd, size) != 0 ||
	    pwrite(fd, "head", 4, 0) != 4 ||
	    pwrite(fd, "middle", 6, 2 * 1024 * 1024 + 7) != 6 ||
	    pwrite(fd, "tail", 4, size - 4) != 4 || fstat(fd, &st) != 0) {
		fail("hash-sparse", "cannot create sparse file: %s", strerror(errno));
		return;
	}
	close(fd);
	if ((off_t)st.st_blocks * 512 >= size)
		skip("hash-sparse-is-sparse", "filesystem allocated the holes");
	else
		pass("hash-sparse-is-sparse");
	check_against_oracle("hash-sparse", path);
	free(path);
}

/* What the per-chunk hook does to the file being hashed, and when. */
struct meddle {
	const char *path;
	uint64_t at;		/* act once this many bytes were hashed */
	void (*act)(const char *path);
	bool done;
};

static void meddle_hook(void *arg, uint64_t done, size_t chunk)
{
	struct meddle *m = arg;

	(void)chunk;
	if (!m->done && done >= m->at) {
		m->act(m->path);
		m->done = true;
	}
}

static void act_append(const char *path)
{
	int fd = open(path, O_WRONLY | O_APPEND);

	if (fd >= 0) {
		if (write(fd, "more", 4) != 4)
			perror("append");
		close(fd);
	}
}

static void act_truncate(const char *path)
{
	if (truncate(path, 8192) != 0)
		perror("truncate");
}

/* Same size, new bytes: only the timestamps can tell. */
static void act_overwrite(const char *path)
{
	int fd = open(path, O_WRONLY);

	if (fd >= 0) {
		if (pwrite(fd, "XXXX", 4, 100) != 4)
			perror("pwrite");
		close(fd);
	}
}

/* Metadata only: ctime moves, mtime and size do not. */
static void act_chmod(const char *path)
{
	if (chmod(path, 0600) != 0)
		perror("chmod");
}

static void test_changed(const char *name, void (*act)(const char *path),
			 const char *want_reason)
{
	const size_t bufsize = 65536;
	struct meddle m = { .at = bufsize, .act = act };
	struct file_tree tree;
	char why[256] = "";
	struct hasher h;
	char *path = path_join(dir, name);
	/* Let the coarse kernel clock tick past the file's creation time. */
	const struct timespec tick = { .tv_nsec = 50 * 1000 * 1000 };
	int fd, r;

	write_pattern(path, 4 * bufsize, 7);
	nanosleep(&tick, NULL);
	m.path = path;
	fd = open(path, O_RDONLY);
	if (fd < 0 || hasher_init(&h, bufsize) != 0) {
		fail(name, "setup failed");
		return;
	}
	h.after_chunk = meddle_hook;
	h.after_chunk_arg = &m;
	r = hash_fd(&h, fd, &tree, NULL, why, sizeof(why));
	hasher_free(&h);
	close(fd);
	if (r == 0)
		tree_free(&tree);
	if (!m.done)
		fail(name, "hook never ran");
	else if (r == 0)
		fail(name, "hash succeeded on a file that changed");
	else
		expect(name, strstr(why, "changed while hashed") && strstr(why, want_reason),
		       "reason '%s' lacks 'changed while hashed' and '%s'", why, want_reason);
	free(path);
}

static void test_not_regular(void)
{
	struct file_tree tree;
	struct hasher h;
	char why[256] = "";
	int p[2];

	if (pipe(p) != 0 || hasher_init(&h, 4096) != 0) {
		fail("hash-not-regular", "setup failed");
		return;
	}
	expect("hash-not-regular", hash_fd(&h, p[0], &tree, NULL, why, sizeof(why)) != 0 &&
	       strstr(why, "not a regular file"), "pipe accepted: '%s'", why);
	hasher_free(&h);
	close(p[0]);
	close(p[1]);
}

/*
 * The chunk hook (what the progress line counts) sees every byte once:
 * the chunks add up to the file size, and "done" is their running sum.
 */
struct chunks {
	uint64_t sum, calls;
	bool consistent;
};

static void count_chunk(void *arg, uint64_t done, size_t chunk)
{
	struct chunks *c = arg;

	c->sum += chunk;
	c->calls++;
	if (done != c->sum)
		c->consistent = false;
}

static void test_chunk_hook(void)
{
	char *path = path_join(dir, "chunks");
	struct chunks c = { .consistent = true };
	struct file_tree tree;
	struct hasher h;
	char why[256];
	int fd;

	write_pattern(path, 10 * 4096 + 17, 3);
	fd = open(path, O_RDONLY);
	if (fd < 0 || hasher_init(&h, 4096) != 0) {
		fail("hash-chunk-hook-bytes", "setup failed");
		return;
	}
	h.after_chunk = count_chunk;
	h.after_chunk_arg = &c;
	if (hash_fd(&h, fd, &tree, NULL, why, sizeof(why)) != 0) {
		fail("hash-chunk-hook-bytes", "%s", why);
	} else {
		tree_free(&tree);
		expect("hash-chunk-hook-bytes", c.sum == 10 * 4096 + 17 && c.calls == 11 &&
		       c.consistent, "%llu bytes in %llu calls, consistent %d",
		       (unsigned long long)c.sum, (unsigned long long)c.calls, c.consistent);
	}
	hasher_free(&h);
	close(fd);
	free(path);
}

int main(void)
{
	/* The number of cases the tests below run (kept with them). */
	harness_plan(25);
	dir = make_tmpdir("hash");
	test_sizes();
	test_empty();
	test_sparse();
	test_changed("hash-changed-append", act_append, "grew");
	test_changed("hash-changed-truncate", act_truncate, "ended at");
	test_changed("hash-changed-overwrite", act_overwrite, "modification time");
	test_changed("hash-changed-chmod", act_chmod, "change time");
	test_not_regular();
	test_chunk_hook();
	return harness_exit();
}
