/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The sharing domain a file's key is bound to: the name in
 * trusted.pcdedup.domain on its filesystem's root, as the kernel reads it
 * when the file is opened, checked with the secret as the kernel checks it.
 */
#ifndef PCDEDUP_FSDOMAIN_H
#define PCDEDUP_FSDOMAIN_H

#include <stddef.h>
#include <sys/types.h>

#include "mac.h"
#include "secret.h"

/*
 * Set @id's domain to that of the filesystem of @path (device @dev, UUID
 * in @id): none (the default domain) without the attribute. Read once per
 * filesystem and kept (thread-safe). Returns 0, or -1 with a reason in
 * @why: the root cannot be read, or its attribute was not made with @s (the
 * kernel would refuse every key there).
 */
int file_domain(const char *path, dev_t dev, const struct secret *s,
		struct file_identity *id, char *why, size_t whylen);

#endif
