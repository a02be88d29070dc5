/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The tree store: level 0 of each content's Merkle tree, kept by the host
 * in a directory of its own, one file per content named by the hex digest
 * of its key, holding the level's hashes and nothing else. The kernel
 * reads it when a share's key carries a coarser level
 * (/sys/kernel/mm/pcdedup/tree_store), and checks that it hashes up to
 * the digest: a file here is never trusted, only used.
 */
#ifndef PCDEDUP_TREESTORE_H
#define PCDEDUP_TREESTORE_H

#include <stddef.h>

#include "tree.h"

enum tree_store_result {
	TREE_STORE_WRITTEN,	/* the file was written (or replaced) */
	TREE_STORE_UNCHANGED,	/* it held the right hashes already */
	TREE_STORE_TOO_LARGE,	/* level 0 is over TREE_STORE_MAX_BYTES */
	TREE_STORE_FAILED,	/* reason in @why */
};

/*
 * Put level 0 of @tree (hashed with leaves kept) into the store open at
 * @dirfd: written to a temporary file and renamed into place, so that
 * the kernel never reads half a file.
 */
enum tree_store_result tree_store_put(int dirfd, const struct file_tree *tree,
				      char *why, size_t whylen);

#endif
