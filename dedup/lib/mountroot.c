// SPDX-License-Identifier: GPL-2.0
#include "mountroot.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util.h"

#define MOUNTINFO "/proc/self/mountinfo"

/* Drop the last component of the absolute path @p ("/a/b" -> "/a" -> "/"). */
static void to_parent(char *p)
{
	char *slash = strrchr(p, '/');

	if (slash == p)
		p[1] = '\0';
	else if (slash)
		*slash = '\0';
}

/* Is the directory @p the root of its mount? -1 (with errno) if it cannot be told. */
static int is_mount_root(const char *p)
{
	struct statx sx, up;
	char parent[PATH_MAX];

	if (statx(AT_FDCWD, p, AT_NO_AUTOMOUNT, STATX_INO, &sx) != 0)
		return -1;
	if (sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT)
		return !!(sx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
	/* Before Linux 5.8: where the device changes (or at "/"). */
	if (strcmp(p, "/") == 0)
		return 1;
	snprintf(parent, sizeof(parent), "%s", p);
	to_parent(parent);
	if (statx(AT_FDCWD, parent, AT_NO_AUTOMOUNT, STATX_INO, &up) != 0)
		return -1;
	return sx.stx_dev_major != up.stx_dev_major || sx.stx_dev_minor != up.stx_dev_minor;
}

/* mountinfo's octal escapes (\040 for a blank, ...), in place. */
static void unescape(char *s)
{
	char *out = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*out++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 3;
		} else {
			*out++ = *s;
		}
	}
	*out = '\0';
}

/*
 * What the topmost mount at @mnt shows of its filesystem (mountinfo's
 * field 4, "/" for its root), into @what; false if no line names @mnt.
 */
static bool mount_shows(const char *mnt, char *what, size_t len)
{
	FILE *f = fopen(MOUNTINFO, "re");
	char *line = NULL;
	size_t cap = 0;
	bool found = false;

	if (!f)
		return false;
	while (getline(&line, &cap, f) != -1) {
		char *field[5], *save = NULL;
		int n = 0;

		for (char *t = strtok_r(line, " ", &save); t && n < 5; t = strtok_r(NULL, " ", &save))
			field[n++] = t;
		if (n < 5)
			continue;
		unescape(field[3]);
		unescape(field[4]);
		/* A later line at the same place is mounted over the earlier one. */
		if (strcmp(field[4], mnt) == 0) {
			snprintf(what, len, "%s", field[3]);
			found = true;
		}
	}
	free(line);
	fclose(f);
	return found;
}

int fs_root_dir(const char *path, char *root, size_t rootlen, char *why, size_t whylen)
{
	char *p = realpath(path, NULL), shows[PATH_MAX];
	struct stat st;
	int r;

	if (!p || stat(p, &st) != 0) {
		snprintf(why, whylen, "%s", errstr(errno));
		free(p);
		return -1;
	}
	if (!S_ISDIR(st.st_mode))
		to_parent(p);
	/* "/" ends the walk even when it is no mount's root (a chroot). */
	while ((r = is_mount_root(p)) == 0 && strcmp(p, "/") != 0)
		to_parent(p);
	if (r < 0) {
		snprintf(why, whylen, "cannot stat %s: %s", p, errstr(errno));
		free(p);
		return -1;
	}
	if (mount_shows(p, shows, sizeof(shows)) && strcmp(shows, "/") != 0) {
		snprintf(why, whylen, "%s is a mount of %s inside its filesystem, not of the "
			 "filesystem's root: name a path on a mount of its root", p, shows);
		free(p);
		return -1;
	}
	if ((size_t)snprintf(root, rootlen, "%s", p) >= rootlen) {
		snprintf(why, whylen, "path too long");
		free(p);
		return -1;
	}
	free(p);
	return 0;
}
