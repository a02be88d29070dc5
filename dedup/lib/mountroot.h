/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The root directory of the filesystem a path is on, where its domain
 * attribute lives: the root of the path's mount, checked to show the
 * filesystem's own root and not a directory inside it (a bind mount, a
 * btrfs subvolume), whose attributes the kernel would never look at.
 */
#ifndef PCDEDUP_MOUNTROOT_H
#define PCDEDUP_MOUNTROOT_H

#include <stddef.h>

/*
 * The root of the filesystem of @path (a directory, or a file: its
 * directory) as an absolute path in @root. Returns 0, or -1 with a reason
 * in @why.
 */
int fs_root_dir(const char *path, char *root, size_t rootlen, char *why, size_t whylen);

#endif
