// SPDX-License-Identifier: GPL-2.0
#include "tree.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

bool tree_has_level(const struct file_tree *t, unsigned level)
{
	return level <= t->root_level && t->level[level] != NULL &&
	       key_level_count(t->size, level) <= KEY_MAX_HASHES;
}

void tree_init(struct file_tree *t, uint64_t size, bool leaves)
{
	uint64_t block = 0;

	memset(t, 0, sizeof(*t));
	t->size = size;
	t->root_level = key_root_level(size);
	for (unsigned l = 0; l <= t->root_level; l++) {
		uint64_t count = key_level_count(size, l);

		if (count <= KEY_MAX_HASHES ||
		    (l == 0 && leaves && count <= TREE_STORE_MAX_BYTES / KEY_HASH_LEN))
			t->level[l] = xcalloc((size_t)count, KEY_HASH_LEN);
	}
	/* Level l is stored in count(l + 1) blocks, higher levels first. */
	for (unsigned l = t->root_level; l-- > 0;) {
		t->first_block[l] = block;
		block += key_level_count(size, l + 1);
	}
}

void tree_free(struct file_tree *t)
{
	for (unsigned l = 0; l <= KEY_MAX_LEVEL; l++)
		free(t->level[l]);
	memset(t, 0, sizeof(*t));
}

int tree_add_block(struct file_tree *t, const void *block, size_t len,
		   uint64_t offset)
{
	uint64_t b = offset / KEY_BLOCK_SIZE;

	if (len != KEY_BLOCK_SIZE || offset % KEY_BLOCK_SIZE != 0)
		return -EINVAL;
	for (unsigned l = 0; l < t->root_level; l++) {
		uint64_t first = t->first_block[l];
		uint64_t count = key_level_count(t->size, l), index, n;

		if (b < first || b - first >= key_level_count(t->size, l + 1))
			continue;
		if (!t->level[l])
			return 0;	/* a level no key can carry */
		index = (b - first) * KEY_HASHES_PER_BLOCK;
		n = count - index < KEY_HASHES_PER_BLOCK ? count - index
							 : KEY_HASHES_PER_BLOCK;
		memcpy(t->level[l] + index * KEY_HASH_LEN, block, n * KEY_HASH_LEN);
		return 0;
	}
	return -EINVAL;
}

void tree_set_root(struct file_tree *t, const uint8_t root[KEY_HASH_LEN])
{
	memcpy(t->level[t->root_level], root, KEY_HASH_LEN);
}

void tree_key(const struct file_tree *t, unsigned level, struct content_key *key)
{
	key->size = t->size;
	key->level = level;
	memset(key->mac, 0, sizeof(key->mac));
	memcpy(key->digest, t->digest, KEY_HASH_LEN);
	key->hashes = t->level[level];
}
