/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The files a walk has already handed out, by device and inode: a file with
 * several hard links is reached by several paths, and must be worked on
 * through one of them only (tagging a link sets the key, which moves the
 * inode's change time under a worker still hashing another link of it).
 */
#ifndef PCDEDUP_INODESET_H
#define PCDEDUP_INODESET_H

#include <stdbool.h>
#include <sys/types.h>

struct inodeset {
	void *root;		/* tsearch(3) tree of struct inode_id */
};

/* Add (@dev, @ino); false when it was there already. Aborts when out of memory. */
bool inodeset_add(struct inodeset *set, dev_t dev, ino_t ino);

/* Free everything the set holds; it is empty again. */
void inodeset_clear(struct inodeset *set);

#endif
