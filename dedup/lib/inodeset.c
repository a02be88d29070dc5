// SPDX-License-Identifier: GPL-2.0
#include "inodeset.h"

#include <search.h>
#include <stdlib.h>

#include "util.h"

struct inode_id {
	dev_t dev;
	ino_t ino;
};

static int compare(const void *a, const void *b)
{
	const struct inode_id *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return 0;
}

bool inodeset_add(struct inodeset *set, dev_t dev, ino_t ino)
{
	struct inode_id *id = malloc(sizeof(*id));
	struct inode_id **found;

	if (!id)
		fatal("out of memory");
	id->dev = dev;
	id->ino = ino;
	found = tsearch(id, &set->root, compare);
	if (!found)
		fatal("out of memory");
	if (*found != id) {
		free(id);
		return false;
	}
	return true;
}

void inodeset_clear(struct inodeset *set)
{
	tdestroy(set->root, free);
	set->root = NULL;
}
