/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A file's fs-verity digest and the levels of its Merkle tree that a key
 * can carry, gathered from the tree blocks libfsverity hands out. Those
 * come in the FS_IOC_READ_VERITY_METADATA layout: one level after the
 * other, the level just below the root first, the leaf level (the hashes
 * of the data blocks, our level 0) last, each level's last block padded
 * with zeros. The root hash itself comes from the fs-verity descriptor.
 */
#ifndef PCDEDUP_TREE_H
#define PCDEDUP_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "key.h"

struct file_tree {
	uint64_t size;
	unsigned root_level;
	uint8_t digest[KEY_HASH_LEN];	/* the fs-verity file digest */
	/*
	 * The hashes of each level up to the root; NULL for a level of more
	 * than KEY_MAX_HASHES hashes: no attribute could hold it (level 0 is
	 * kept up to TREE_STORE_MAX_BYTES when asked for, for the tree store).
	 */
	uint8_t *level[KEY_MAX_LEVEL + 1];
	/* First tree block of each level below the root, in that layout. */
	uint64_t first_block[KEY_MAX_LEVEL];
};

/*
 * The most level-0 hashes a tree store file holds: the kernel takes level
 * 0 from the store for contents of up to 1 GiB (fs/pcdedup/store.c).
 */
#define TREE_STORE_MAX_BYTES	(8u << 20)

/*
 * Set up @t for a file of @size > 0 bytes, with room for the kept levels;
 * with @leaves, level 0 is kept up to TREE_STORE_MAX_BYTES.
 */
void tree_init(struct file_tree *t, uint64_t size, bool leaves);
void tree_free(struct file_tree *t);

/* Is @level kept and can a key carry it (it fits in an attribute)? */
bool tree_has_level(const struct file_tree *t, unsigned level);

/*
 * Take the hashes in tree block @block (@len bytes) at byte @offset of the
 * tree. Returns 0, or -EINVAL for a block that is not where the layout
 * has one.
 */
int tree_add_block(struct file_tree *t, const void *block, size_t len,
		   uint64_t offset);

/* The root hash, from the descriptor; it is the one hash of the root level. */
void tree_set_root(struct file_tree *t, const uint8_t root[KEY_HASH_LEN]);

/*
 * @key for tree level @level, which must be kept; its hashes point into @t.
 * Its MAC is zero: only the file and the secret make it (setkey.h).
 */
void tree_key(const struct file_tree *t, unsigned level, struct content_key *key);

#endif
