// SPDX-License-Identifier: GPL-2.0
#include "treestore.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "key.h"
#include "util.h"

/* Does the store file @name hold exactly @len bytes of @want? */
static bool holds(int dirfd, const char *name, const uint8_t *want, size_t len)
{
	uint8_t *have;
	struct stat st;
	bool same = false;
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return false;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size != len)
		goto out;
	have = xmalloc(len);
	same = read_full(fd, have, len) == (ssize_t)len && memcmp(have, want, len) == 0;
	free(have);
out:
	close(fd);
	return same;
}

enum tree_store_result tree_store_put(int dirfd, const struct file_tree *tree,
				      char *why, size_t whylen)
{
	uint64_t len = key_level_count(tree->size, 0) * KEY_HASH_LEN;
	char name[2 * KEY_HASH_LEN + 1], tmp[sizeof(name) + 48];
	int fd, err;

	if (len > TREE_STORE_MAX_BYTES || !tree->level[0])
		return TREE_STORE_TOO_LARGE;
	for (size_t i = 0; i < KEY_HASH_LEN; i++)
		snprintf(name + 2 * i, 3, "%02x", tree->digest[i]);
	if (holds(dirfd, name, tree->level[0], (size_t)len))
		return TREE_STORE_UNCHANGED;
	/* Workers may store the same content at once: a name each. */
	snprintf(tmp, sizeof(tmp), ".%s.%ld.%lx", name, (long)getpid(),
		 (unsigned long)pthread_self());
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		snprintf(why, whylen, "tree store: cannot create %s: %s", tmp, errstr(errno));
		return TREE_STORE_FAILED;
	}
	err = write_all(fd, tree->level[0], (size_t)len) ? errno : 0;
	if (close(fd) != 0 && !err)
		err = errno;
	if (!err && renameat(dirfd, tmp, dirfd, name) != 0)
		err = errno;
	if (err) {
		(void)unlinkat(dirfd, tmp, 0);
		snprintf(why, whylen, "tree store: cannot write %s: %s", name, errstr(err));
		return TREE_STORE_FAILED;
	}
	return TREE_STORE_WRITTEN;
}
