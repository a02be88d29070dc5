/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tree walk over the command-line paths. It never follows a symbolic link
 * (not even one named on the command line), stays on the filesystem of each
 * starting path unless asked to cross, never enters a directory twice (a
 * bind mount can make a directory its own descendant: the walk keeps the
 * device and inode of every ancestor), and sorts what it finds into regular
 * files, small regular files and things that are skipped, so each command
 * decides what to do with them.
 */
#ifndef PCDEDUP_WALK_H
#define PCDEDUP_WALK_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

struct walk_options {
	uint64_t min_size;	/* regular files below this are WALK_SMALL */
	bool cross_fs;		/* descend into other mounted filesystems */
};

enum walk_event {
	WALK_FILE,		/* regular file of at least min_size bytes */
	WALK_SMALL,		/* regular file below min_size */
	WALK_SYMLINK,		/* symbolic link, not followed */
	WALK_SPECIAL,		/* device, FIFO, socket: not a regular file */
	WALK_OTHER_FS,		/* directory on another filesystem, not entered */
	WALK_LOOP,		/* directory that is one of its own ancestors */
	WALK_ERROR,		/* cannot stat or read; @err holds the errno */
};

/* One entry the walk reports. Directories themselves are not reported. */
struct walk_entry {
	enum walk_event ev;
	const char *path;
	const struct stat *st;	/* lstat() of @path; NULL for WALK_ERROR */
	int err;		/* WALK_ERROR: the errno */
	bool root;		/* @path was named on the command line */
	const char *ancestor;	/* WALK_LOOP: the directory @path repeats */
};

/* Called once per entry; returning false ends the whole walk. */
typedef bool (*walk_fn)(void *ctx, const struct walk_entry *e);

/*
 * Walk every path in @paths (NULL-terminated). Returns 0, or -1 with errno
 * set when the walk itself cannot run (out of memory); per-entry problems
 * go to @fn as WALK_ERROR.
 */
int walk_paths(char *const *paths, const struct walk_options *opt,
	       walk_fn fn, void *ctx);

#endif
