/* SPDX-License-Identifier: GPL-2.0 */
/*
 * trusted.* attributes need CAP_SYS_ADMIN in the initial user namespace.
 * Without it the kernel refuses to set or remove them (EPERM) and hides
 * them from reads (ENODATA, as if no file had a key), so tag, untag and
 * verify check up front and stop at once instead of failing file by file.
 */
#ifndef PCDEDUP_PRIVILEGE_H
#define PCDEDUP_PRIVILEGE_H

#include <stdbool.h>

/* The one message for it, after "pcdedup: ". */
#define NO_CAP_MESSAGE "needs CAP_SYS_ADMIN (trusted.* attributes): run as root"

/*
 * Does this process hold CAP_SYS_ADMIN in its effective set (capget(2)),
 * in the initial user namespace (/proc/self/uid_map maps all ids)?
 */
bool may_use_trusted(void);

/*
 * An xattr call on the open file @fd failed with EPERM: true if for lack
 * of privilege, false if the file is immutable or append-only (chattr +i,
 * +a), which refuses attribute changes to everyone.
 */
bool eperm_is_privilege(int fd);

#endif
