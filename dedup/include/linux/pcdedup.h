/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * pcdedup: content keys for page-cache sharing between identical files.
 *
 * This header is the single definition of the key format; the pcdedup
 * user tool builds against a copy of it that a test keeps identical.
 */
#ifndef _UAPI_LINUX_PCDEDUP_H
#define _UAPI_LINUX_PCDEDUP_H

#include <linux/types.h>

/* Extended attribute that holds the content key of a regular file. */
#define PCDEDUP_XATTR_NAME	"trusted.pcdedup"

/* Current (and only) key format version. */
#define PCDEDUP_KEY_VERSION	1

/* Hash algorithms a key may name. */
enum pcdedup_hash_algo {
	PCDEDUP_HASH_SHA256 = 1,
};

#define PCDEDUP_SHA256_DIGEST_SIZE	32
#define PCDEDUP_MAX_DIGEST_SIZE		64

/**
 * struct pcdedup_key - value of the trusted.pcdedup extended attribute
 * @version: format version, %PCDEDUP_KEY_VERSION
 * @algo: hash algorithm of @digest, one of enum pcdedup_hash_algo
 * @digest_len: length of @digest in bytes; must match @algo
 * @flags: reserved, must be zero
 * @reserved: reserved, must be zero
 * @size: size in bytes of the content that @digest covers, little endian
 * @digest: hash of the file's whole content (bytes 0 to @size - 1)
 *
 * The attribute value is exactly sizeof(struct pcdedup_key) + @digest_len
 * bytes long. A key only matches a file whose size equals @size.
 */
struct pcdedup_key {
	__u8	version;
	__u8	algo;
	__u8	digest_len;
	__u8	flags;
	__le32	reserved;
	__le64	size;
	__u8	digest[];
};

#endif /* _UAPI_LINUX_PCDEDUP_H */
