/* SPDX-License-Identifier: GPL-2.0 */
/* Opening the files the walk found, and wording xattr errors for humans. */
#ifndef PCDEDUP_FILEOPS_H
#define PCDEDUP_FILEOPS_H

#include <stddef.h>
#include <sys/stat.h>

#include "pool.h"

/*
 * Open @it->path read-only and check it is still the regular file the walk
 * saw (same device and inode). Returns the fd, and its status in @st if
 * not NULL, or -1 with a reason in @why.
 */
int open_walked(const struct work_item *it, struct stat *st,
		char *why, size_t whylen);

/* Reason text for a failed xattr call on trusted.pcdedup, hints included. */
const char *xattr_reason(int err);

#endif
