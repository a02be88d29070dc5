// SPDX-License-Identifier: GPL-2.0
#include "fileops.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <linux/pcdedup.h>

#include "util.h"

/*
 * A read-only open of a tagged file may be served from its share, the one
 * page cache of every file with its key: then its reads give what another
 * member filled, not this file's own bytes, and a file whose key lies
 * would hash to its key. Opens with O_DIRECT are never shared: hash those.
 * Returns @fd, or a direct open of the same file in its place; a
 * filesystem that refuses O_DIRECT keeps @fd (pcdedup shares no file of
 * such a filesystem).
 */
static int direct_if_tagged(const struct work_item *it, int fd, int flags,
			    struct stat *st)
{
	struct stat dst;
	int dfd;

	if (fgetxattr(fd, PCDEDUP_XATTR_NAME, NULL, 0) < 0 && errno != ERANGE)
		return fd;
	dfd = open(it->path, flags | O_DIRECT);
	if (dfd < 0)
		return fd;
	if (fstat(dfd, &dst) != 0 || dst.st_dev != st->st_dev ||
	    dst.st_ino != st->st_ino) {
		close(dfd);
		return fd;
	}
	close(fd);
	*st = dst;
	return dfd;
}

int open_walked(const struct work_item *it, struct stat *stp,
		char *why, size_t whylen)
{
	/*
	 * O_NOFOLLOW and O_NONBLOCK: if a symlink or a FIFO took the file's
	 * place since the walk, fail or return at once instead of following
	 * or hanging. O_NOATIME: hashing a tree should not write every inode;
	 * only the owner (or CAP_FOWNER) may ask for it, so retry without.
	 */
	int flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
	struct stat st;
	int fd = open(it->path, flags | O_NOATIME);

	if (fd >= 0)
		flags |= O_NOATIME;
	else if (errno == EPERM)
		fd = open(it->path, flags);
	if (fd < 0) {
		snprintf(why, whylen, "cannot open: %s", errstr(errno));
		return -1;
	}
	if (fstat(fd, &st) != 0) {
		snprintf(why, whylen, "cannot stat: %s", errstr(errno));
		close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode) || st.st_dev != it->st.st_dev ||
	    st.st_ino != it->st.st_ino) {
		snprintf(why, whylen, "replaced by another file during the walk");
		close(fd);
		return -1;
	}
	fd = direct_if_tagged(it, fd, flags, &st);
	if (stp)
		*stp = st;
	return fd;
}

const char *xattr_reason(int err)
{
	switch (err) {
	case EPERM:
		/* Without privilege the run stops first (driver_denied()). */
		return "operation not permitted (immutable or append-only file)";
	case EACCES:
		return "permission denied (trusted.* needs CAP_SYS_ADMIN)";
	case ENOTSUP:
		return "the filesystem does not support extended attributes";
	case EROFS:
		return "read-only filesystem";
	default:
		return errstr(err);
	}
}
