/* Helpers shared by the dedup test programs; see common.h. */
#include "common.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		die("out of memory (%zu bytes)", n);
	return p;
}

#define DIO_ALIGN 4096UL	/* covers every common logical block size */
#define DIO_CHUNK (1 * MiB)

static int load_direct(int fd, unsigned char **data, size_t size)
{
	size_t cap = (size + DIO_ALIGN - 1) / DIO_ALIGN * DIO_ALIGN + DIO_ALIGN;
	unsigned char *buf;
	size_t off = 0;

	if (posix_memalign((void **)&buf, DIO_ALIGN, cap))
		die("out of memory (%zu bytes)", cap);
	/* Aligned offsets and lengths; the last read is short at EOF. */
	for (;;) {
		ssize_t r = pread(fd, buf + off, DIO_CHUNK < cap - off ? DIO_CHUNK : cap - off, off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;

			free(buf);
			return -e;
		}
		off += r;
		if (r == 0 || off % DIO_ALIGN || off >= cap)
			break;
	}
	if (off != size) {
		free(buf);
		return -EIO;
	}
	*data = buf;
	return 0;
}

int load_file(const char *path, unsigned char **data, size_t *len, int *direct)
{
	struct stat st;
	int fd, ret;

	fd = open(path, O_RDONLY | O_DIRECT);
	if (fd >= 0) {
		if (fstat(fd, &st) < 0) {
			ret = -errno;
			close(fd);
			return ret;
		}
		ret = load_direct(fd, data, st.st_size);
		close(fd);
		if (ret == 0) {
			*len = st.st_size;
			*direct = 1;
			return 0;
		}
		if (ret != -EINVAL)
			return ret;
	} else if (errno != EINVAL) {
		return -errno;
	}

	/* The fs does not do O_DIRECT (tmpfs, some overlays): buffered. */
	*direct = 0;
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		close(fd);
		return ret;
	}
	*data = xmalloc(st.st_size);
	ssize_t r = read_full(fd, *data, st.st_size);
	ret = r < 0 ? -errno : (size_t)r != (size_t)st.st_size ? -EIO : 0;
	close(fd);
	if (ret)
		free(*data);
	else
		*len = st.st_size;
	return ret;
}

ssize_t first_diff(const void *a, const void *b, size_t n)
{
	const unsigned char *x = a, *y = b;
	size_t off = 0;

	/* memcmp in blocks is fast; the byte scan only runs on a bad block. */
	while (off < n) {
		size_t blk = n - off < 4096 ? n - off : 4096;

		if (memcmp(x + off, y + off, blk)) {
			for (size_t i = 0; i < blk; i++)
				if (x[off + i] != y[off + i])
					return off + i;
		}
		off += blk;
	}
	return -1;
}

ssize_t first_nonzero(const void *p, size_t n)
{
	const unsigned char *x = p;

	for (size_t i = 0; i < n; i++)
		if (x[i])
			return i;
	return -1;
}

/* SIGBUS/SIGSEGV guard for reads from mappings. */
static sigjmp_buf guard_jmp;
static volatile sig_atomic_t guard_armed;
static void *volatile guard_addr;

static void guard_handler(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (!guard_armed) {
		/* A real bug in the test program: die as usual. */
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	guard_addr = si->si_addr;
	guard_armed = 0;
	siglongjmp(guard_jmp, 1);
}

static void guard_install(void)
{
	static int done;
	struct sigaction sa = { .sa_sigaction = guard_handler, .sa_flags = SA_SIGINFO };

	if (done)
		return;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGSEGV, &sa, NULL);
	done = 1;
}

int guarded_diff(const void *map, const void *expect, size_t n,
		 ssize_t *diff, size_t *fault)
{
	guard_install();
	if (sigsetjmp(guard_jmp, 1)) {
		*fault = (const char *)guard_addr - (const char *)map;
		return -1;
	}
	guard_armed = 1;
	*diff = first_diff(map, expect, n);
	guard_armed = 0;
	return 0;
}

int guarded_nonzero(const void *map, size_t n, ssize_t *nz, size_t *fault)
{
	guard_install();
	if (sigsetjmp(guard_jmp, 1)) {
		*fault = (const char *)guard_addr - (const char *)map;
		return -1;
	}
	guard_armed = 1;
	*nz = first_nonzero(map, n);
	guard_armed = 0;
	return 0;
}

ssize_t read_full(int fd, void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t r = read(fd, (char *)buf + done, len - done);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		done += r;
	}
	return done;
}

ssize_t pread_full(int fd, void *buf, size_t len, off_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t r = pread(fd, (char *)buf + done, len - done, off + done);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		done += r;
	}
	return done;
}

int temp_file(const char *dir)
{
	char path[4096];
	int fd;

	if (!dir) {
		dir = getenv("TMPDIR");
		if (!dir || !*dir)
			dir = "/tmp";
	}
	fd = open(dir, O_RDWR | O_TMPFILE | O_CLOEXEC, 0600);
	if (fd >= 0)
		return fd;
	snprintf(path, sizeof(path), "%s/dedup-test.XXXXXX", dir);
	fd = mkostemp(path, O_CLOEXEC);
	if (fd >= 0)
		unlink(path);
	return fd;
}

uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

uint64_t rng_below(uint64_t *s, uint64_t n)
{
	return n ? rng_next(s) % n : 0;
}
