/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The MACs that make keys and domains count (docs/interface.md, "Only the
 * host makes keys"): HMAC-SHA256 with the host's secret over a context
 * string and what the MAC binds. A key's MAC binds its header and digest
 * to one inode: the filesystem's UUID (FS_IOC_GETFSUUID), the inode
 * number (st_ino) and its generation (FS_IOC_GETVERSION), and to the
 * filesystem's sharing domain (fsdomain.h). A domain's MAC binds its name
 * to the filesystem's UUID.
 */
#ifndef PCDEDUP_MAC_H
#define PCDEDUP_MAC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "key.h"
#include "secret.h"

/* sizeof(struct fsuuid2.uuid): the longest UUID the ioctl returns. */
#define FS_UUID_MAX	16

/* What a key's MAC binds it to. */
struct file_identity {
	uint8_t uuid_len;		/* 0: the filesystem has no UUID */
	uint8_t uuid[FS_UUID_MAX];
	uint64_t ino;
	uint32_t generation;
	uint8_t domain_len;		/* 0: the default domain */
	char domain[PCDEDUP_DOMAIN_MAX];
};

/*
 * The UUID of the filesystem of the open file @fd, as the kernel has it
 * (sb->s_uuid, s_uuid_len bytes). A filesystem without one (the ioctl
 * says ENOTTY) has @len 0. Returns 0, or -1 with a reason in @why.
 */
int fs_uuid(int fd, uint8_t *len, uint8_t uuid[FS_UUID_MAX], char *why, size_t whylen);

/*
 * The identity of the open file @fd, in the default domain (file_domain()
 * sets the filesystem's); 0, or -1 with a reason in @why.
 */
int file_identity(int fd, struct file_identity *id, char *why, size_t whylen);

/* The MAC of a key whose value starts with @value (KEY_MACED_LEN bytes). */
void key_mac(const struct secret *s, const uint8_t value[KEY_MACED_LEN],
	     const struct file_identity *id, uint8_t mac[KEY_MAC_LEN]);

/* The MAC of domain @name (@len bytes) on the filesystem of UUID @uuid. */
void domain_mac(const struct secret *s, uint8_t uuid_len, const uint8_t *uuid,
		const void *name, size_t len, uint8_t mac[KEY_MAC_LEN]);

/* Compare two MACs in constant time. */
bool mac_equal(const uint8_t a[KEY_MAC_LEN], const uint8_t b[KEY_MAC_LEN]);

#endif
