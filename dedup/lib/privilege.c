// SPDX-License-Identifier: GPL-2.0
#include "privilege.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <linux/fs.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* In glibc, but declared only by libcap's header, which we do not need. */
extern int capget(cap_user_header_t hdrp, cap_user_data_t datap);

/* True unless /proc/self/uid_map shows a user namespace below the initial one. */
static bool initial_user_ns(void)
{
	char map[256] = "";
	unsigned long inside, outside, count;
	int fd = open("/proc/self/uid_map", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return true;	/* no /proc: let the calls themselves say */
	n = read(fd, map, sizeof(map) - 1);
	close(fd);
	if (n <= 0)
		return true;
	map[n] = '\0';
	/* The initial namespace maps all 2^32 ids onto themselves. */
	return sscanf(map, "%lu %lu %lu", &inside, &outside, &count) == 3 &&
	       inside == 0 && outside == 0 && count == 4294967295UL &&
	       strchr(map, '\n') == map + n - 1;
}

bool may_use_trusted(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
		.pid = 0,
	};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

	memset(data, 0, sizeof(data));
	if (capget(&hdr, data) != 0)
		return true;	/* cannot tell: let the calls themselves say */
	if (!(data[CAP_TO_INDEX(CAP_SYS_ADMIN)].effective & CAP_TO_MASK(CAP_SYS_ADMIN)))
		return false;
	return initial_user_ns();
}

bool eperm_is_privilege(int fd)
{
	int flags = 0;

	if (fd < 0 || ioctl(fd, FS_IOC_GETFLAGS, &flags) != 0)
		return true;
	return !(flags & (FS_IMMUTABLE_FL | FS_APPEND_FL));
}
