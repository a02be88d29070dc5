/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Writing a file's key at the lowest Merkle tree level its filesystem
 * takes. Level 0 lets the kernel check every 4 KiB block on its own but
 * needs 32 bytes per block; filesystems cap attribute values (ext4 without
 * ea_inode: one block; XFS and the VFS: 64 KiB), so when a value is refused
 * as too large (E2BIG, ENOSPC, ERANGE) the next level up is tried, up to
 * level 2: the kernel honours no higher one, so a file whose level 2 does
 * not fit is not tagged. Every value carries its MAC for the file.
 */
#ifndef PCDEDUP_SETKEY_H
#define PCDEDUP_SETKEY_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "mac.h"
#include "secret.h"
#include "tree.h"

/* setkey_opts.level: the lowest level that fits */
#define SETKEY_LEVEL_LOWEST	(-1)
/*
 * setkey_opts.level: level 0 while its value stays in the inode, else the
 * lowest level above it that fits. XFS keeps an attribute value in the
 * inode's literal area only up to 255 bytes (its short form counts value
 * lengths in a byte); a longer one takes a 4 KiB attribute block, read
 * and cached by every first open of the file in every snapshot of it.
 */
#define SETKEY_LEVEL_INLINE	(-2)
#define SETKEY_INLINE_MAX	255
/*
 * setkey_opts.level: the lowest level whose value stays in the inode (at
 * most SETKEY_INLINE_MAX bytes), else level 2: for a host that keeps level
 * 0 in a tree store (treestore.h), from which the kernel checks every
 * block however coarse the key's level.
 */
#define SETKEY_LEVEL_SHORT	(-3)

struct setkey_opts {
	int level;		/* force this tree level, or SETKEY_LEVEL_* */
	bool dry_run;		/* compare only, write nothing */
	const struct secret *secret;		/* the MAC's */
	const struct file_identity *id;		/* the file's */
};

enum setkey_result {
	SETKEY_WRITTEN,		/* a new value was set (or would be, dry run) */
	SETKEY_UNCHANGED,	/* the current value is already right */
	SETKEY_FAILED,		/* reason in @why */
};

/*
 * Give the open file @fd the key for @tree. @have is its current value,
 * @have_len bytes (negative: none). The level written or found goes to
 * @level; on SETKEY_FAILED the errno of the refused call (0 if none) to
 * @err and the reason to @why.
 */
enum setkey_result set_key(int fd, const struct file_tree *tree,
			   const struct setkey_opts *o, const void *have,
			   ssize_t have_len, unsigned *level, int *err, char *why,
			   size_t whylen);

/* The value, MAC included, for tree level @level (kept) of @tree: free() it. */
uint8_t *setkey_value(const struct file_tree *tree, unsigned level,
		      const struct setkey_opts *o, size_t *len);

#endif
