// SPDX-License-Identifier: GPL-2.0
/*
 * LD_PRELOAD fault injection for the command-line tests: errors a host
 * cannot produce on demand (a filesystem without xattr support, say). Set
 * PCDEDUP_FAULT_FSETXATTR, PCDEDUP_FAULT_FGETXATTR or
 * PCDEDUP_FAULT_LREMOVEXATTR to an errno number to make that call fail;
 * unset, the real call runs. PCDEDUP_FAULT_SETXATTR_MAX=N makes every
 * fsetxattr() with a value longer than N bytes fail with E2BIG, as a
 * filesystem with a small limit on attribute values would.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/xattr.h>

typedef int (*fsetxattr_fn)(int, const char *, const void *, size_t, int);
typedef ssize_t (*fgetxattr_fn)(int, const char *, void *, size_t);
typedef int (*lremovexattr_fn)(const char *, const char *);

static fsetxattr_fn real_fsetxattr;
static fgetxattr_fn real_fgetxattr;
static lremovexattr_fn real_lremovexattr;

/* Resolve the real calls before main(), so worker threads never race on it. */
__attribute__((constructor)) static void resolve(void)
{
	real_fsetxattr = (fsetxattr_fn)dlsym(RTLD_NEXT, "fsetxattr");
	real_fgetxattr = (fgetxattr_fn)dlsym(RTLD_NEXT, "fgetxattr");
	real_lremovexattr = (lremovexattr_fn)dlsym(RTLD_NEXT, "lremovexattr");
}

static int injected(const char *var)
{
	const char *v = getenv(var);

	return v ? atoi(v) : 0;
}

int fsetxattr(int fd, const char *name, const void *value, size_t size, int flags)
{
	int err = injected("PCDEDUP_FAULT_FSETXATTR");
	const char *max = getenv("PCDEDUP_FAULT_SETXATTR_MAX");

	if (!err && max && size > strtoul(max, NULL, 10))
		err = E2BIG;
	if (err) {
		errno = err;
		return -1;
	}
	return real_fsetxattr(fd, name, value, size, flags);
}

ssize_t fgetxattr(int fd, const char *name, void *value, size_t size)
{
	int err = injected("PCDEDUP_FAULT_FGETXATTR");

	if (err) {
		errno = err;
		return -1;
	}
	return real_fgetxattr(fd, name, value, size);
}

int lremovexattr(const char *path, const char *name)
{
	int err = injected("PCDEDUP_FAULT_LREMOVEXATTR");

	if (err) {
		errno = err;
		return -1;
	}
	return real_lremovexattr(path, name);
}
