// SPDX-License-Identifier: GPL-2.0
/*
 * LD_PRELOAD shim for the command-line tests: errors and conditions a host
 * cannot produce on demand, kept out of the product.
 *
 * PCDEDUP_FAULT_FSETXATTR, PCDEDUP_FAULT_FGETXATTR,
 * PCDEDUP_FAULT_LREMOVEXATTR=ERRNO make that call fail with ERRNO (a
 * filesystem without xattr support, say); unset, the real call runs.
 * PCDEDUP_FAULT_SETXATTR_MAX=N makes every fsetxattr() with a value longer
 * than N bytes fail with E2BIG, as a filesystem with a small limit on
 * attribute values would.
 * PCDEDUP_FAULT_CAP_SYS_ADMIN=0 or 1: capget() reports CAP_SYS_ADMIN as
 * absent or present in the effective set, whatever the truth (the tool's
 * up-front check reads its capabilities with capget()).
 * PCDEDUP_TEST_HASH_DELAY_US=N: every read() or pread() of a regular file
 * that returns data sleeps N microseconds after it, so that a test can
 * change a file while it is being hashed.
 * PCDEDUP_FAULT_SETLEASE=ERRNO makes fcntl(F_SETLEASE) fail with ERRNO (a
 * filesystem without leases, or fs.leases-enable 0).
 * PCDEDUP_TEST_SET_MARK=PATH, PCDEDUP_TEST_SET_DELAY_US=N: fsetxattr() of
 * trusted.pcdedup creates PATH, then sleeps N microseconds before the real
 * call, so that a test can act between the end of a hash and the key.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

typedef int (*fsetxattr_fn)(int, const char *, const void *, size_t, int);
typedef ssize_t (*fgetxattr_fn)(int, const char *, void *, size_t);
typedef int (*lremovexattr_fn)(const char *, const char *);
typedef int (*capget_fn)(cap_user_header_t, cap_user_data_t);
typedef ssize_t (*read_fn)(int, void *, size_t);
typedef ssize_t (*pread_fn)(int, void *, size_t, off_t);
typedef int (*fcntl_fn)(int, int, ...);

static fsetxattr_fn real_fsetxattr;
static fgetxattr_fn real_fgetxattr;
static lremovexattr_fn real_lremovexattr;
static capget_fn real_capget;
static read_fn real_read;
static pread_fn real_pread;
static fcntl_fn real_fcntl, real_fcntl64;
static unsigned long delay_us;

int capget(cap_user_header_t hdrp, cap_user_data_t datap);

/* Resolve the real calls before main(), so worker threads never race on it. */
__attribute__((constructor)) static void resolve(void)
{
	const char *delay = getenv("PCDEDUP_TEST_HASH_DELAY_US");

	real_fsetxattr = (fsetxattr_fn)dlsym(RTLD_NEXT, "fsetxattr");
	real_fgetxattr = (fgetxattr_fn)dlsym(RTLD_NEXT, "fgetxattr");
	real_lremovexattr = (lremovexattr_fn)dlsym(RTLD_NEXT, "lremovexattr");
	real_capget = (capget_fn)dlsym(RTLD_NEXT, "capget");
	real_read = (read_fn)dlsym(RTLD_NEXT, "read");
	real_pread = (pread_fn)dlsym(RTLD_NEXT, "pread");
	real_fcntl = (fcntl_fn)dlsym(RTLD_NEXT, "fcntl");
	real_fcntl64 = (fcntl_fn)dlsym(RTLD_NEXT, "fcntl64");
	delay_us = delay ? strtoul(delay, NULL, 10) : 0;
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
	const char *mark = getenv("PCDEDUP_TEST_SET_MARK");

	if (err) {
		errno = err;
		return -1;
	}
	if (mark && strcmp(name, "trusted.pcdedup") == 0) {
		const char *delay = getenv("PCDEDUP_TEST_SET_DELAY_US");
		unsigned long us = delay ? strtoul(delay, NULL, 10) : 0;
		struct timespec ts = { .tv_sec = (time_t)(us / 1000000),
				       .tv_nsec = (long)(us % 1000000) * 1000 };
		int m = open(mark, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);

		if (m >= 0)
			close(m);
		while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
			;
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

int capget(cap_user_header_t hdrp, cap_user_data_t datap)
{
	const char *want = getenv("PCDEDUP_FAULT_CAP_SYS_ADMIN");
	int r = real_capget(hdrp, datap);

	if (r == 0 && want && datap) {
		__u32 *eff = &datap[CAP_TO_INDEX(CAP_SYS_ADMIN)].effective;

		if (atoi(want))
			*eff |= CAP_TO_MASK(CAP_SYS_ADMIN);
		else
			*eff &= ~CAP_TO_MASK(CAP_SYS_ADMIN);
	}
	return r;
}

static void delay_after(int fd, ssize_t n)
{
	struct timespec ts = {
		.tv_sec = (time_t)(delay_us / 1000000),
		.tv_nsec = (long)(delay_us % 1000000) * 1000,
	};
	struct stat st;
	int saved = errno;

	if (n > 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
			;
	errno = saved;
}

ssize_t read(int fd, void *buf, size_t count)
{
	ssize_t n = real_read(fd, buf, count);

	if (delay_us)
		delay_after(fd, n);
	return n;
}

ssize_t pread(int fd, void *buf, size_t count, off_t offset)
{
	ssize_t n = real_pread(fd, buf, count, offset);

	if (delay_us)
		delay_after(fd, n);
	return n;
}

/* fcntl() passes its third argument on as a long or a pointer, alike here. */
static int fcntl_via(fcntl_fn real, int fd, int cmd, void *arg)
{
	int err = injected("PCDEDUP_FAULT_SETLEASE");

	if (cmd == F_SETLEASE && err) {
		errno = err;
		return -1;
	}
	return real(fd, cmd, arg);
}

int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	return fcntl_via(real_fcntl, fd, cmd, arg);
}

int fcntl64(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	return fcntl_via(real_fcntl64 ? real_fcntl64 : real_fcntl, fd, cmd, arg);
}
