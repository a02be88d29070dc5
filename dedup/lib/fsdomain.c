// SPDX-License-Identifier: GPL-2.0
/*
 * A key's MAC binds its filesystem's sharing domain (docs/interface.md), so
 * that a filesystem whose domain attribute is removed or replaced offline
 * cannot take its files into another domain's shares. The tool reads the
 * domain where the kernel does, on the filesystem's root, once for each
 * filesystem a run meets.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "fsdomain.h"
#include "mountroot.h"
#include "util.h"

/* Filesystems a run keeps the domain of; more are read each time. */
#define KEPT_DOMAINS	16

struct kept_domain {
	dev_t dev;
	uint8_t len;
	char name[PCDEDUP_DOMAIN_MAX];
};

static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;
static struct kept_domain kept[KEPT_DOMAINS];
static size_t nkept;

static bool find_kept(dev_t dev, struct file_identity *id)
{
	bool found = false;

	pthread_mutex_lock(&kept_lock);
	for (size_t i = 0; i < nkept && !found; i++) {
		if (kept[i].dev == dev) {
			id->domain_len = kept[i].len;
			memcpy(id->domain, kept[i].name, kept[i].len);
			found = true;
		}
	}
	pthread_mutex_unlock(&kept_lock);
	return found;
}

static void keep(dev_t dev, const struct file_identity *id)
{
	pthread_mutex_lock(&kept_lock);
	if (nkept < KEPT_DOMAINS) {
		kept[nkept].dev = dev;
		kept[nkept].len = id->domain_len;
		memcpy(kept[nkept].name, id->domain, id->domain_len);
		nkept++;
	}
	pthread_mutex_unlock(&kept_lock);
}

/* The attribute on @root (open), checked with @s; 0, or -1 with a reason. */
static int read_domain(int fd, const char *root, const struct secret *s,
		       struct file_identity *id, char *why, size_t whylen)
{
	uint8_t value[PCDEDUP_DOMAIN_MAX + KEY_MAC_LEN], mac[KEY_MAC_LEN];
	ssize_t len = fgetxattr(fd, PCDEDUP_DOMAIN_XATTR_NAME, value, sizeof(value));

	id->domain_len = 0;
	if (len < 0 && (errno == ENODATA || errno == ENOTSUP))
		return 0;
	if (len < 0 && errno != ERANGE) {
		snprintf(why, whylen, "cannot read %s on %s: %s", PCDEDUP_DOMAIN_XATTR_NAME,
			 root, errstr(errno));
		return -1;
	}
	if (len <= KEY_MAC_LEN || len > (ssize_t)sizeof(value)) {
		snprintf(why, whylen, "%s on %s is malformed: the kernel shares nothing "
			 "there; set it again ('pcdedup domain set')", PCDEDUP_DOMAIN_XATTR_NAME,
			 root);
		return -1;
	}
	len -= KEY_MAC_LEN;
	domain_mac(s, id->uuid_len, id->uuid, value, (size_t)len, mac);
	if (!mac_equal(mac, value + len)) {
		snprintf(why, whylen, "%s on %s was not made with this secret: the kernel "
			 "shares nothing there; set it again ('pcdedup domain set')",
			 PCDEDUP_DOMAIN_XATTR_NAME, root);
		return -1;
	}
	id->domain_len = (uint8_t)len;
	memcpy(id->domain, value, (size_t)len);
	return 0;
}

int file_domain(const char *path, dev_t dev, const struct secret *s,
		struct file_identity *id, char *why, size_t whylen)
{
	char root[PATH_MAX];
	int fd, r;

	if (find_kept(dev, id))
		return 0;
	if (fs_root_dir(path, root, sizeof(root), why, whylen) != 0)
		return -1;
	fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		snprintf(why, whylen, "cannot open the filesystem's root %s: %s", root,
			 errstr(errno));
		return -1;
	}
	r = read_domain(fd, root, s, id, why, whylen);
	close(fd);
	if (r == 0)
		keep(dev, id);
	return r;
}
