/* SPDX-License-Identifier: GPL-2.0 */
/* A read lease over hashing a file and setting its key. */
#ifndef PCDEDUP_LEASE_H
#define PCDEDUP_LEASE_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Ignore SIGIO, the signal a lease break sends its holder: the tag path
 * polls the lease instead (lease_broken()). Call once, before any lease.
 */
void lease_setup(void);

/*
 * Take a read lease on @fd (open read-only). While it is held no one can
 * open the file for writing, truncate it or map it writably without the
 * lease breaking first, and the opener waits until we let go. Returns 0,
 * or the errno with a reason in @why: the file is open for writing
 * elsewhere (EAGAIN), we neither own it nor have CAP_LEASE (EACCES), or its
 * filesystem (or fs.leases-enable) gives no leases.
 */
int lease_take(int fd, char *why, size_t whylen);

/* Has the lease on @fd been broken (someone asked to write) or lost? */
bool lease_broken(int fd);

#endif
