// SPDX-License-Identifier: GPL-2.0
/*
 * Hashing through an O_DIRECT file (what the tool does for a tagged file,
 * whose plain open the kernel may serve from its share): the digest of
 * every size around block and buffer boundaries matches the oracle's,
 * and a file that grows or shrinks while it is hashed is still caught.
 * Skipped where the temporary directory's filesystem refuses O_DIRECT.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "hash.h"
#include "oracle.h"

static const uint64_t sizes[] = {
	1, 4095, 4096, 4097, HASH_DEFAULT_BUFSIZE - 1, HASH_DEFAULT_BUFSIZE,
	HASH_DEFAULT_BUFSIZE + 1, 3 * HASH_DEFAULT_BUFSIZE + 4096 + 5,
};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

static char *dir;

static int open_direct(const char *path)
{
	return open(path, O_RDONLY | O_DIRECT);
}

static void test_size(uint64_t size)
{
	char name[64], why[256];
	struct file_tree tree;
	struct oracle o;
	struct hasher h;
	char *path;
	int fd;

	snprintf(name, sizeof(name), "direct-hash-%llu", (unsigned long long)size);
	path = path_join(dir, name);
	write_pattern(path, size, (unsigned)size);
	fd = open_direct(path);
	if (fd < 0 || hasher_init(&h, HASH_DEFAULT_BUFSIZE) != 0 || !oracle_build(path, &o)) {
		fail(name, "setup failed: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		free(path);
		return;
	}
	if (hash_fd(&h, fd, &tree, NULL, why, sizeof(why)) != 0) {
		fail(name, "%s", why);
	} else {
		expect(name, memcmp(tree.digest, o.digest, 32) == 0,
		       "digest differs from the oracle's");
		tree_free(&tree);
	}
	oracle_free(&o);
	hasher_free(&h);
	close(fd);
	free(path);
}

struct grow {
	const char *path;
	long delta;
	bool done;
};

/* After the first read, make the file longer or shorter by g->delta. */
static void change_once(void *arg, uint64_t done, size_t chunk)
{
	struct grow *g = arg;
	struct stat st;

	(void)done;
	(void)chunk;
	if (g->done || stat(g->path, &st) != 0)
		return;
	g->done = true;
	if (truncate(g->path, st.st_size + g->delta) != 0)
		g->done = false;
}

static void test_changed(const char *name, long delta, const char *want)
{
	struct grow g = { .delta = delta };
	char why[256] = "";
	struct file_tree tree;
	struct hasher h;
	char *path = path_join(dir, name);
	int fd, r;

	write_pattern(path, 2 * HASH_DEFAULT_BUFSIZE + 100, 7);
	g.path = path;
	fd = open_direct(path);
	if (fd < 0 || hasher_init(&h, HASH_DEFAULT_BUFSIZE) != 0) {
		fail(name, "setup failed: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		free(path);
		return;
	}
	h.after_chunk = change_once;
	h.after_chunk_arg = &g;
	r = hash_fd(&h, fd, &tree, NULL, why, sizeof(why));
	if (r == 0)
		tree_free(&tree);
	expect(name, r != 0 && g.done && contains(why, want),
	       "hash_fd returned %d (%s), changed %d, want '%s'", r, why, g.done, want);
	hasher_free(&h);
	close(fd);
	free(path);
}

int main(void)
{
	char *probe;
	int fd;

	harness_plan((int)NSIZES + 2);
	dir = make_tmpdir("direct");
	probe = path_join(dir, "probe");
	write_pattern(probe, 4096, 1);
	fd = open_direct(probe);
	if (fd < 0) {
		for (size_t i = 0; i < NSIZES + 2; i++)
			skip("direct-hash", "%s refuses O_DIRECT: %s", dir, strerror(errno));
		return harness_exit();
	}
	close(fd);
	free(probe);
	for (size_t i = 0; i < NSIZES; i++)
		test_size(sizes[i]);
	test_changed("direct-hash-grew", 3 * 4096, "changed while hashed");
	test_changed("direct-hash-shrank", -(long)HASH_DEFAULT_BUFSIZE, "changed while hashed");
	return harness_exit();
}
