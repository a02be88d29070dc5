/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fs-verity digest and Merkle tree of a whole file (SHA-256, 4096-byte
 * blocks, no salt), computed by libfsverity from large reads, with a check
 * that the file did not change while it was read: a key must describe one
 * consistent version of the content or none at all.
 */
#ifndef PCDEDUP_HASH_H
#define PCDEDUP_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "tree.h"

/* Read size per call: large, so hashing, not system calls, sets the pace. */
#define HASH_DEFAULT_BUFSIZE	(1024 * 1024)

/* Per-thread hashing state; not shared between threads. */
struct hasher {
	uint8_t *buf;
	size_t bufsize;
	/*
	 * Called after each read with the file's bytes read so far and the
	 * bytes of this read: the progress line, and unit tests.
	 */
	void (*after_chunk)(void *arg, uint64_t done, size_t chunk);
	void *after_chunk_arg;
	/* Keep level 0 beyond what a key holds, for the tree store. */
	bool leaves;
};

/*
 * Set up @h with a read buffer of @bufsize bytes. Returns 0, or -1 if
 * there is no memory for the buffer.
 */
int hasher_init(struct hasher *h, size_t bufsize);
void hasher_free(struct hasher *h);

/*
 * Hash the open regular file @fd from offset 0 to its end into @tree
 * (size, digest, the levels a key can carry; tree_free() it after a
 * success). Fails, with a reason in @why, on an empty file (no key), a
 * read error and when the file changed while it was read (size, mtime or
 * ctime moved, or it did not hold as many bytes as its size said). On
 * success @seen, if not NULL, gets the file's status as of the hash, to
 * compare with later.
 */
int hash_fd(struct hasher *h, int fd, struct file_tree *tree,
	    struct stat *seen, char *why, size_t whylen);

#endif
