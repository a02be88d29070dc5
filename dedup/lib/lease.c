// SPDX-License-Identifier: GPL-2.0
/*
 * A read lease closes the window between hashing a file and setting its
 * key: checking size, mtime and ctime cannot, since the file's owner can
 * write bytes of the same size and put the mtime back (utimensat) after
 * the hash, and setting the attribute moves ctime itself. With the lease
 * held from before the first read to after the set, every open for
 * writing in between breaks it and waits for us: we see the break, take
 * the key off again and let the writer go, and a writer that opened
 * before the lease makes taking it fail.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>

#include "lease.h"
#include "util.h"

void lease_setup(void)
{
	struct sigaction sa = { .sa_handler = SIG_IGN };

	sigemptyset(&sa.sa_mask);
	(void)sigaction(SIGIO, &sa, NULL);
}

int lease_take(int fd, char *why, size_t whylen)
{
	int err;

	if (fcntl(fd, F_SETLEASE, F_RDLCK) == 0)
		return 0;
	err = errno;
	if (err == EAGAIN || err == EBUSY)
		snprintf(why, whylen, "open for writing by another process: not tagged");
	else
		snprintf(why, whylen, "cannot take a read lease (%s): not tagged; "
			 "leases keep the file from changing while it is tagged", errstr(err));
	return err;
}

bool lease_broken(int fd)
{
	/* While a break is pending, F_GETLEASE reports the target, F_UNLCK. */
	return fcntl(fd, F_GETLEASE) != F_RDLCK;
}
