/*
 * writes: one write path on a tagged member, done the same way to its
 * untagged twin, with readers opened before it; see README.md.
 *
 *   writes OP FILE TWIN OTHER [--key PATH] [--aux FILE] [--aux2 FILE]
 *
 * FILE is a tagged member, TWIN an untagged copy of it on the same
 * filesystem, OTHER another member of the same key (read-only here). OP
 * is done to FILE (with --aux) and to TWIN (with --aux2); --key is where
 * FILE's key lives (the real upper file of an overlay), FILE by default.
 * Prints one line per check, "NAME ok" or "NAME fail WHY", and "# "
 * diagnostics; the suite (writes.sh) turns them into its cases. Exit 0
 * when every check passed, 1 when one failed, 2 on a usage error or when
 * the files are not what the suite set up.
 */
#include "common.h"

#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#define KEY_XATTR "trusted.pcdedup"
#define PAGE 4096UL

/* XFS and ext4 ioctls, as the kernel defines them (host headers lack some). */
struct w_xfs_bstime {
	long tv_sec;
	int32_t tv_nsec;
};

struct w_xfs_bstat {
	uint64_t bs_ino;
	uint16_t bs_mode, bs_nlink;
	uint32_t bs_uid, bs_gid, bs_rdev;
	int32_t bs_blksize;
	int64_t bs_size;
	struct w_xfs_bstime bs_atime, bs_mtime, bs_ctime;
	int64_t bs_blocks;
	uint32_t bs_xflags;
	int32_t bs_extsize, bs_extents;
	uint32_t bs_gen;
	uint16_t bs_projid_lo, bs_forkoff, bs_projid_hi, bs_sick, bs_checked;
	unsigned char bs_pad[2];
	uint32_t bs_cowextsize, bs_dmevmask;
	uint16_t bs_dmstate, bs_aextents;
};

struct w_xfs_swapext {
	int64_t sx_version, sx_fdtarget, sx_fdtmp, sx_offset, sx_length;
	char sx_pad[16];
	struct w_xfs_bstat sx_stat;
};
#define W_XFS_IOC_SWAPEXT _IOWR('X', 109, struct w_xfs_swapext)

struct w_xfs_exchange_range {
	int32_t file1_fd;
	uint32_t pad;
	uint64_t file1_offset, file2_offset, length, flags;
};
#define W_XFS_IOC_EXCHANGE_RANGE _IOW('X', 129, struct w_xfs_exchange_range)

struct w_move_extent {
	uint32_t reserved, donor_fd;
	uint64_t orig_start, donor_start, len, moved_len;
};
#define W_EXT4_IOC_MOVE_EXT _IOWR('f', 15, struct w_move_extent)

static int failed;

__attribute__((format(printf, 2, 3)))
static void result(const char *name, const char *fmt, ...)
{
	char why[1024];
	va_list ap;

	if (!fmt) {
		printf("%s ok\n", name);
	} else {
		va_start(ap, fmt);
		vsnprintf(why, sizeof(why), fmt, ap);
		va_end(ap);
		for (char *p = why; *p; p++)
			if (*p == '\n')
				*p = ' ';
		printf("%s fail %s\n", name, why);
		failed = 1;
	}
	fflush(stdout);
}
#define PASS(name) result(name, NULL)

__attribute__((format(printf, 1, 2)))
static void note(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

/* 1: the key is set, 0: it is not, -errno: getxattr failed otherwise. */
static int key_state(const char *path)
{
	if (getxattr(path, KEY_XATTR, NULL, 0) >= 0)
		return 1;
	return errno == ENODATA ? 0 : -errno;
}

static const char *key_word(int k)
{
	static char buf[64];

	if (k == 1)
		return "set";
	if (k == 0)
		return "gone";
	snprintf(buf, sizeof(buf), "getxattr: %s", strerror(-k));
	return buf;
}

/* An event counter, or -1 when it cannot be read (a failed check). */
static long event(const char *name)
{
	const char *files[] = { "/sys/kernel/mm/pcdedup/events", "/proc/vmstat" };
	char line[256], want[128];
	long v = -1;

	snprintf(want, sizeof(want), "pcdedup_%s ", name);
	for (size_t i = 0; i < 2 && v < 0; i++) {
		FILE *f = fopen(files[i], "r");

		if (!f)
			continue;
		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, want, strlen(want)))
				v = atol(line + strlen(want));
		fclose(f);
	}
	return v;
}

static void drop_caches(void)
{
	int fd;

	sync();
	fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
	if (fd < 0 || write(fd, "3", 1) != 1)
		die("drop_caches: %s", strerror(errno));
	close(fd);
}

static unsigned char *pattern(size_t len, uint64_t seed)
{
	unsigned char *p = xmalloc(len);

	for (size_t i = 0; i < len; i++)
		p[i] = rng_next(&seed) >> 56;
	return p;
}

static bool writes_all(ssize_t r, size_t len, const char *what, char *err, size_t errlen)
{
	if (r == (ssize_t)len)
		return true;
	if (r < 0)
		snprintf(err, errlen, "%s: %s", what, strerror(errno));
	else
		snprintf(err, errlen, "%s: %zd of %zu bytes", what, r, len);
	return false;
}

/*
 * The write paths. Each opens FILE as it needs (noting the key right
 * after the open, before the data change, when KEYPATH is given), changes
 * FILE's data the same way every time, and closes it. Returns 0, or -1
 * with ERR set.
 */
struct op_ctx {
	const char *file, *aux, *keypath;
	int key_at_open;	/* key_state() after the open; 2: not checked */
	char err[512];
};

#define FAIL_OP(...) do { snprintf(c->err, sizeof(c->err), __VA_ARGS__); goto out; } while (0)

static int open_for_write(struct op_ctx *c, const char *path, int flags)
{
	int fd = open(path, flags);

	if (fd < 0) {
		snprintf(c->err, sizeof(c->err), "open %s: %s", path, strerror(errno));
		return -1;
	}
	if (c->keypath)
		c->key_at_open = key_state(c->keypath);
	return fd;
}

static int op_write(struct op_ctx *c)
{
	unsigned char *a = pattern(10000, 11), *b = pattern(3000, 12);
	struct stat st;
	int fd, ret = -1;

	fd = open_for_write(c, c->file, O_WRONLY);
	if (fd < 0)
		goto out;
	if (!writes_all(pwrite(fd, a, 10000, 5000), 10000, "pwrite", c->err, sizeof(c->err)))
		goto out;
	if (fstat(fd, &st))
		FAIL_OP("fstat: %s", strerror(errno));
	/* Appended: the size grows. */
	if (!writes_all(pwrite(fd, b, 3000, st.st_size), 3000, "append", c->err, sizeof(c->err)))
		goto out;
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
	free(a);
	free(b);
	return ret;
}

static int op_otrunc(struct op_ctx *c)
{
	unsigned char *a = pattern(20000, 13);
	int fd, ret = -1;

	fd = open_for_write(c, c->file, O_WRONLY | O_TRUNC);
	if (fd < 0)
		goto out;
	if (!writes_all(write(fd, a, 20000), 20000, "write", c->err, sizeof(c->err)))
		goto out;
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
	free(a);
	return ret;
}

static int op_truncate_path(struct op_ctx *c)
{
	struct stat st;

	if (stat(c->file, &st) || truncate(c->file, st.st_size / 2 + 123)) {
		snprintf(c->err, sizeof(c->err), "truncate: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static int op_punch(struct op_ctx *c)
{
	int fd, ret = -1;

	fd = open_for_write(c, c->file, O_WRONLY);
	if (fd < 0)
		goto out;
	if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 8192, 16384))
		FAIL_OP("fallocate punch hole: %s", strerror(errno));
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
	return ret;
}

static int op_ficlone(struct op_ctx *c)
{
	struct file_clone_range r = { .src_offset = 0, .src_length = 16384, .dest_offset = 8192 };
	int fd = -1, src, ret = -1;

	src = open(c->aux, O_RDONLY);
	if (src < 0)
		FAIL_OP("open %s: %s", c->aux, strerror(errno));
	fd = open_for_write(c, c->file, O_WRONLY);
	if (fd < 0)
		goto out;
	r.src_fd = src;
	if (ioctl(fd, FICLONERANGE, &r))
		FAIL_OP("FICLONERANGE: %s", strerror(errno));
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
	if (src >= 0)
		close(src);
	return ret;
}

static int op_copy_range(struct op_ctx *c)
{
	loff_t in = 1000, out = 3000;
	size_t left = 10000;
	int fd = -1, src, ret = -1;

	src = open(c->aux, O_RDONLY);
	if (src < 0)
		FAIL_OP("open %s: %s", c->aux, strerror(errno));
	fd = open_for_write(c, c->file, O_WRONLY);
	if (fd < 0)
		goto out;
	while (left) {
		ssize_t r = copy_file_range(src, &in, fd, &out, left, 0);

		if (r <= 0)
			FAIL_OP("copy_file_range: %s", r ? strerror(errno) : "0 bytes");
		left -= r;
	}
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
	if (src >= 0)
		close(src);
	return ret;
}

static int op_odirect(struct op_ctx *c)
{
	unsigned char *a = pattern(8192, 14), *buf;
	int fd, ret = -1;

	if (posix_memalign((void **)&buf, PAGE, 8192))
		die("out of memory");
	memcpy(buf, a, 8192);
	fd = open_for_write(c, c->file, O_WRONLY | O_DIRECT);
	if (fd < 0)
		goto out;
	if (!writes_all(pwrite(fd, buf, 8192, 4096), 8192, "O_DIRECT pwrite", c->err, sizeof(c->err)))
		goto out;
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
	free(a);
	free(buf);
	return ret;
}

static int op_uring(struct op_ctx *c)
{
	unsigned char *a = pattern(12345, 15);
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	int fd, r, ret = -1, ring_up = 0;

	fd = open_for_write(c, c->file, O_WRONLY);
	if (fd < 0)
		goto out;
	r = io_uring_queue_init(4, &ring, 0);
	if (r)
		FAIL_OP("io_uring_queue_init: %s", strerror(-r));
	ring_up = 1;
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_write(sqe, fd, a, 12345, 777);
	r = io_uring_submit(&ring);
	if (r != 1)
		FAIL_OP("io_uring_submit: %s", r < 0 ? strerror(-r) : "not submitted");
	r = io_uring_wait_cqe(&ring, &cqe);
	if (r)
		FAIL_OP("io_uring_wait_cqe: %s", strerror(-r));
	r = cqe->res;
	io_uring_cqe_seen(&ring, cqe);
	if (r != 12345)
		FAIL_OP("io_uring write: %s", r < 0 ? strerror(-r) : "short");
	ret = 0;
out:
	if (ring_up)
		io_uring_queue_exit(&ring);
	if (fd >= 0)
		close(fd);
	free(a);
	return ret;
}

static int op_mmap_write(struct op_ctx *c)
{
	unsigned char *a = pattern(9000, 16), *p = MAP_FAILED;
	struct stat st;
	int fd, ret = -1;

	fd = open_for_write(c, c->file, O_RDWR);
	if (fd < 0)
		goto out;
	if (fstat(fd, &st))
		FAIL_OP("fstat: %s", strerror(errno));
	p = mmap(NULL, st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		FAIL_OP("mmap shared writable: %s", strerror(errno));
	memcpy(p + 6000, a, 9000);
	if (msync(p, st.st_size, MS_SYNC))
		FAIL_OP("msync: %s", strerror(errno));
	ret = 0;
out:
	if (p != MAP_FAILED)
		munmap(p, st.st_size);
	if (fd >= 0)
		close(fd);
	free(a);
	return ret;
}

static int op_swapext(struct op_ctx *c)
{
	struct w_xfs_swapext sx = { .sx_version = 0 };
	struct stat st;
	int fd, donor = -1, ret = -1;

	fd = open_for_write(c, c->file, O_RDWR);
	if (fd < 0)
		goto out;
	donor = open(c->aux, O_RDWR);
	if (donor < 0)
		FAIL_OP("open %s: %s", c->aux, strerror(errno));
	/* After the open: dropping a key changes the ctime the ioctl checks. */
	if (fstat(fd, &st))
		FAIL_OP("fstat: %s", strerror(errno));
	sx.sx_fdtarget = fd;
	sx.sx_fdtmp = donor;
	sx.sx_length = st.st_size;
	sx.sx_stat.bs_ctime.tv_sec = st.st_ctim.tv_sec;
	sx.sx_stat.bs_ctime.tv_nsec = st.st_ctim.tv_nsec;
	sx.sx_stat.bs_mtime.tv_sec = st.st_mtim.tv_sec;
	sx.sx_stat.bs_mtime.tv_nsec = st.st_mtim.tv_nsec;
	if (ioctl(fd, W_XFS_IOC_SWAPEXT, &sx))
		FAIL_OP("XFS_IOC_SWAPEXT: %s", strerror(errno));
	ret = 0;
out:
	if (donor >= 0)
		close(donor);
	if (fd >= 0)
		close(fd);
	return ret;
}

static int op_exchange_range(struct op_ctx *c)
{
	struct w_xfs_exchange_range x = {
		.file1_offset = 4096, .file2_offset = 4096, .length = 16384,
	};
	int fd, other = -1, ret = -1;

	fd = open_for_write(c, c->file, O_RDWR);
	if (fd < 0)
		goto out;
	other = open(c->aux, O_RDWR);
	if (other < 0)
		FAIL_OP("open %s: %s", c->aux, strerror(errno));
	x.file1_fd = other;
	if (ioctl(fd, W_XFS_IOC_EXCHANGE_RANGE, &x))
		FAIL_OP("XFS_IOC_EXCHANGE_RANGE: %s", strerror(errno));
	ret = 0;
out:
	if (other >= 0)
		close(other);
	if (fd >= 0)
		close(fd);
	return ret;
}

/* FILE is the donor: its data moves into the original file (--aux), and
 * the original's data into it. */
static int op_move_ext(struct op_ctx *c)
{
	struct w_move_extent me = { .orig_start = 0, .donor_start = 0 };
	struct stat st;
	int fd, orig = -1, ret = -1;

	fd = open_for_write(c, c->file, O_RDWR);
	if (fd < 0)
		goto out;
	orig = open(c->aux, O_RDWR);
	if (orig < 0)
		FAIL_OP("open %s: %s", c->aux, strerror(errno));
	if (fstat(fd, &st))
		FAIL_OP("fstat: %s", strerror(errno));
	me.donor_fd = fd;
	me.len = (st.st_size + PAGE - 1) / PAGE;
	if (ioctl(orig, W_EXT4_IOC_MOVE_EXT, &me))
		FAIL_OP("EXT4_IOC_MOVE_EXT: %s", strerror(errno));
	if (me.moved_len != me.len)
		FAIL_OP("EXT4_IOC_MOVE_EXT moved %llu of %llu blocks",
			(unsigned long long)me.moved_len, (unsigned long long)me.len);
	ret = 0;
out:
	if (orig >= 0)
		close(orig);
	if (fd >= 0)
		close(fd);
	return ret;
}

static const struct {
	const char *name;
	int (*fn)(struct op_ctx *c);
	bool opens;	/* opens FILE for write (else: truncate by path) */
	bool aux;
	/*
	 * ext4 leaves the donor's cached pages as they were (move_extent.c
	 * releases their buffers only): the twin's earlier reader reads them,
	 * stale; FILE's, whose reads went to the share, reads the new bytes.
	 */
	bool twin_cache_stale;
} ops[] = {
	{ "write", op_write, true, false, false },
	{ "o-trunc", op_otrunc, true, false, false },
	{ "truncate-path", op_truncate_path, false, false, false },
	{ "punch-hole", op_punch, true, false, false },
	{ "ficlonerange", op_ficlone, true, true, false },
	{ "copy-file-range", op_copy_range, true, true, false },
	{ "odirect", op_odirect, true, false, false },
	{ "io-uring", op_uring, true, false, false },
	{ "mmap-write", op_mmap_write, true, false, false },
	{ "swapext", op_swapext, true, true, false },
	{ "exchange-range", op_exchange_range, true, true, false },
	{ "move-ext", op_move_ext, true, true, true },
};

/* --- reading through an open made before the write ------------------- */

struct view {
	unsigned char *buf;
	size_t len;
	char err[128];	/* empty when the read worked */
};

static void view_free(struct view *v)
{
	free(v->buf);
	memset(v, 0, sizeof(*v));
}

/* Compare V with WANT[0..WLEN); "" when equal, else why, in WHY. */
static bool same(const struct view *v, const unsigned char *want, size_t wlen,
		 char *why, size_t whylen)
{
	ssize_t d;

	if (v->err[0]) {
		snprintf(why, whylen, "%s", v->err);
		return false;
	}
	d = first_diff(v->buf, want, v->len < wlen ? v->len : wlen);
	if (d >= 0) {
		snprintf(why, whylen, "byte %zd differs (%zu bytes returned, %zu wanted)",
			 d, v->len, wlen);
		return false;
	}
	if (v->len != wlen) {
		snprintf(why, whylen, "%zu bytes returned, %zu wanted", v->len, wlen);
		return false;
	}
	return true;
}

static void read_rest(int fd, size_t cap, struct view *v)
{
	ssize_t r;

	v->buf = xmalloc(cap);
	r = read_full(fd, v->buf, cap);
	if (r < 0)
		snprintf(v->err, sizeof(v->err), "read: %s", strerror(errno));
	else
		v->len = r;
}

static void pread_all(int fd, size_t cap, struct view *v)
{
	ssize_t r;

	v->buf = xmalloc(cap);
	r = pread_full(fd, v->buf, cap, 0);
	if (r < 0)
		snprintf(v->err, sizeof(v->err), "pread: %s", strerror(errno));
	else
		v->len = r;
}

/* The whole file through a pipe: splice (SENDFILE false) or sendfile. */
static void pipe_all(int fd, size_t cap, bool use_sendfile, struct view *v)
{
	int p[2];
	off_t so = 0;
	loff_t lo = 0;

	v->buf = xmalloc(cap);
	if (pipe(p)) {
		snprintf(v->err, sizeof(v->err), "pipe: %s", strerror(errno));
		return;
	}
	for (;;) {
		ssize_t r = use_sendfile ? sendfile(p[1], fd, &so, 16384)
					 : splice(fd, &lo, p[1], NULL, 16384, 0);

		if (r < 0) {
			snprintf(v->err, sizeof(v->err), "%s: %s",
				 use_sendfile ? "sendfile" : "splice", strerror(errno));
			break;
		}
		if (r == 0)
			break;
		if (v->len + r > cap) {
			snprintf(v->err, sizeof(v->err), "more than %zu bytes", cap);
			break;
		}
		if (read_full(p[0], v->buf + v->len, r) != r) {
			snprintf(v->err, sizeof(v->err), "pipe read: %s", strerror(errno));
			break;
		}
		v->len += r;
	}
	close(p[0]);
	close(p[1]);
}

/* A mapping's bytes, read under a SIGBUS guard; "" or why, in WHY. */
static bool map_same(const unsigned char *map, const unsigned char *want, size_t n,
		     char *why, size_t whylen)
{
	ssize_t d;
	size_t fault;

	if (guarded_diff(map, want, n, &d, &fault)) {
		snprintf(why, whylen, "fault at %zu", fault);
		return false;
	}
	if (d >= 0) {
		snprintf(why, whylen, "byte %zd differs", d);
		return false;
	}
	return true;
}

/* What a reader opened before the write gets now. */
struct seen {
	char read[256], pread[256], pipe[256], newmap[256];
};

static void reader_after(int fd, size_t olen, const unsigned char *now, size_t nlen,
			 struct seen *s)
{
	size_t cap = (olen > nlen ? olen : nlen) + 2 * PAGE;
	struct view v = { 0 };
	struct stat st;
	char why[200];
	unsigned char *m;

	memset(s, 0, sizeof(*s));
	/* The next read() where the earlier reads stopped (at the old EOF)... */
	read_rest(fd, cap, &v);
	if (!same(&v, now + (nlen > olen ? olen : nlen), nlen > olen ? nlen - olen : 0,
		  why, sizeof(why)))
		snprintf(s->read, sizeof(s->read), "read() from the old EOF: %s", why);
	view_free(&v);
	/* ...and from the start. */
	if (!s->read[0]) {
		if (lseek(fd, 0, SEEK_SET)) {
			snprintf(s->read, sizeof(s->read), "lseek: %s", strerror(errno));
		} else {
			read_rest(fd, cap, &v);
			if (!same(&v, now, nlen, why, sizeof(why)))
				snprintf(s->read, sizeof(s->read), "read() from 0: %s", why);
			view_free(&v);
		}
	}
	if (!s->read[0] && (fstat(fd, &st) || (size_t)st.st_size != nlen))
		snprintf(s->read, sizeof(s->read), "fstat size %lld, want %zu",
			 (long long)st.st_size, nlen);

	pread_all(fd, cap, &v);
	if (!same(&v, now, nlen, why, sizeof(why)))
		snprintf(s->pread, sizeof(s->pread), "pread from 0: %s", why);
	view_free(&v);

	pipe_all(fd, cap, false, &v);
	if (!same(&v, now, nlen, why, sizeof(why)))
		snprintf(s->pipe, sizeof(s->pipe), "splice: %s", why);
	view_free(&v);
	if (!s->pipe[0]) {
		pipe_all(fd, cap, true, &v);
		if (!same(&v, now, nlen, why, sizeof(why)))
			snprintf(s->pipe, sizeof(s->pipe), "sendfile: %s", why);
		view_free(&v);
	}

	/* A mapping made now, through the same open. */
	m = mmap(NULL, nlen, PROT_READ, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		snprintf(s->newmap, sizeof(s->newmap), "mmap: %s", strerror(errno));
	} else {
		ssize_t nz;
		size_t fault, tail = (PAGE - nlen % PAGE) % PAGE;

		if (!map_same(m, now, nlen, why, sizeof(why)))
			snprintf(s->newmap, sizeof(s->newmap), "new mapping: %s", why);
		/* The last page past the (new) EOF reads as zeros. */
		else if (guarded_nonzero(m + nlen, tail, &nz, &fault))
			snprintf(s->newmap, sizeof(s->newmap), "new mapping: fault at %zu",
				 nlen + fault);
		else if (nz >= 0)
			snprintf(s->newmap, sizeof(s->newmap),
				 "new mapping: byte %zu past EOF %zu is not zero", nlen + nz, nlen);
		munmap(m, nlen);
	}
}

/* One check on FILE's reader, the twin's reader telling what stock does. */
static void judge(const char *name, const char *bad, const char *twin_bad, bool twin_stale)
{
	if (twin_bad[0] && twin_stale)
		note("%s: the twin's reader reads its stale cached pages: %s", name, twin_bad);
	if (twin_bad[0] && !twin_stale)
		result(name, "the untagged twin's reader too (a broken test?): %s; file: %s",
		       twin_bad, bad[0] ? bad : "as wanted");
	else if (bad[0])
		result(name, "%s (%s)", bad, twin_stale ? "not what was written" :
		       "the untagged twin's reader sees what was written");
	else
		PASS(name);
}

static unsigned char *load(const char *path, size_t *len)
{
	unsigned char *data;
	int direct, r = load_file(path, &data, len, &direct);

	if (r)
		die("%s: %s", path, strerror(-r));
	return data;
}

/* Open PATH read-only, read it all; returns the fd (kept open) or -1. */
static int open_read(const char *path, size_t cap, struct view *v)
{
	int fd = open(path, O_RDONLY);

	memset(v, 0, sizeof(*v));
	if (fd < 0) {
		v->buf = xmalloc(1);
		snprintf(v->err, sizeof(v->err), "open %s: %s", path, strerror(errno));
		return -1;
	}
	read_rest(fd, cap, v);
	return fd;
}

static void usage(void)
{
	fprintf(stderr, "usage: writes OP FILE TWIN OTHER [--key PATH] [--aux FILE] [--aux2 FILE]\nOPs:");
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		fprintf(stderr, " %s", ops[i].name);
	fprintf(stderr, "\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *opname, *file, *twin, *other, *keypath = NULL, *aux = NULL, *aux2 = NULL;
	struct op_ctx cf = { 0 }, ct = { 0 };
	struct seen sf, stw;
	struct view v, w;
	unsigned char *orig, *now, *other_orig, *mf, *mt;
	size_t olen, nlen, len2, cap;
	long e0, e1, e2, e3;
	int rf, rt, ro, a, b, k, opi = -1;
	char why[256] = "", why2[256] = "";
	bool op_ok, stale;

	if (argc < 5)
		usage();
	opname = argv[1], file = argv[2], twin = argv[3], other = argv[4];
	for (int i = 5; i < argc; i += 2) {
		if (i + 1 >= argc)
			usage();
		if (!strcmp(argv[i], "--key"))
			keypath = argv[i + 1];
		else if (!strcmp(argv[i], "--aux"))
			aux = argv[i + 1];
		else if (!strcmp(argv[i], "--aux2"))
			aux2 = argv[i + 1];
		else
			usage();
	}
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strcmp(ops[i].name, opname))
			opi = i;
	if (opi < 0 || (ops[opi].aux && (!aux || !aux2)))
		usage();
	if (!keypath)
		keypath = file;

	/* The files are what the suite set up: same bytes, FILE tagged. */
	orig = load(twin, &olen);
	now = load(file, &nlen);
	other_orig = load(other, &len2);
	if (nlen != olen || first_diff(now, orig, olen) >= 0 ||
	    len2 != olen || first_diff(other_orig, orig, olen) >= 0)
		die("%s, %s and %s do not hold the same bytes", file, twin, other);
	free(now);
	free(other_orig);
	if ((k = key_state(keypath)) != 1)
		die("%s: key %s before the write", keypath, key_word(k));
	if (key_state(twin) != 0)
		die("%s: the twin has a key", twin);
	cap = olen + 64 * 1024 + 2 * PAGE;

	/* Readers opened before the write: FILE and OTHER through the share. */
	e0 = event("open_shared");
	rf = open_read(file, cap, &v);
	e1 = event("open_shared");
	rt = open_read(twin, cap, &w);
	e2 = event("open_shared");
	if (rf < 0 || rt < 0)
		die("%s%s", v.err, w.err);
	if (!same(&v, orig, olen, why, sizeof(why)) || !same(&w, orig, olen, why2, sizeof(why2)))
		die("first reads: file: %s; twin: %s", why, why2);
	view_free(&v);
	view_free(&w);
	ro = open_read(other, cap, &v);
	e3 = event("open_shared");
	if (ro < 0 || !same(&v, orig, olen, why, sizeof(why)))
		die("%s: %s", other, v.err[0] ? v.err : why);
	view_free(&v);
	if (e0 < 0)
		result("shared-before", "no pcdedup_open_shared counter");
	else if (e1 - e0 != 1 || e2 - e1 != 0 || e3 - e2 != 1)
		result("shared-before", "open_shared counted %ld for the file, %ld for the twin, "
		       "%ld for the other member (want 1, 0, 1)", e1 - e0, e2 - e1, e3 - e2);
	else
		PASS("shared-before");
	mf = mmap(NULL, olen, PROT_READ, MAP_SHARED, rf, 0);
	mt = mmap(NULL, olen, PROT_READ, MAP_SHARED, rt, 0);
	if (mf == MAP_FAILED || mt == MAP_FAILED)
		die("mmap: %s", strerror(errno));
	if (!map_same(mf, orig, olen, why, sizeof(why)) || !map_same(mt, orig, olen, why, sizeof(why)))
		die("mappings before the write: %s", why);

	/* The write, to FILE and to its twin. */
	cf.file = file, cf.aux = aux, cf.keypath = keypath, cf.key_at_open = 2;
	ct.file = twin, ct.aux = aux2, ct.key_at_open = 2;
	op_ok = !ops[opi].fn(&cf);
	if (!op_ok)
		note("%s on %s: %s", opname, file, cf.err);
	if (ops[opi].fn(&ct))
		die("%s on the twin %s: %s", opname, twin, ct.err);
	if (ops[opi].opens) {
		if (!op_ok && cf.key_at_open == 2)
			result("key-gone-at-open", "%s", cf.err);
		else if (cf.key_at_open)
			result("key-gone-at-open", "key %s right after the open for write, "
			       "before the data changed", key_word(cf.key_at_open));
		else
			PASS("key-gone-at-open");
	}
	k = key_state(keypath);
	if (k)
		result("key-gone-after", "key %s after %s%s%s", key_word(k), opname,
		       op_ok ? "" : " failed: ", op_ok ? "" : cf.err);
	else
		PASS("key-gone-after");
	now = load(twin, &nlen);
	{
		size_t flen;
		unsigned char *fnow = load(file, &flen);

		if (!op_ok || flen != nlen || first_diff(fnow, now, nlen) >= 0)
			die("%s: the file and its twin differ after %s%s%s", file, opname,
			    op_ok ? "" : ": ", op_ok ? "" : cf.err);
		free(fnow);
	}
	note("%s: size %zu -> %zu", opname, olen, nlen);

	/* Readers opened before the write, as the twin's readers on stock. */
	reader_after(rf, olen, now, nlen, &sf);
	reader_after(rt, olen, now, nlen, &stw);
	stale = ops[opi].twin_cache_stale;
	judge("read-after-write", sf.read, stw.read, stale);
	judge("pread-after-write", sf.pread, stw.pread, stale);
	judge("splice-sendfile-after-write", sf.pipe, stw.pipe, stale);
	judge("new-mapping-sees-new", sf.newmap, stw.newmap, stale);
	/* Documented: a mapping made before keeps the share's bytes. */
	if (map_same(mf, orig, olen, why, sizeof(why)))
		PASS("old-mapping-keeps-old");
	else
		result("old-mapping-keeps-old", "mapping made before the write: %s", why);
	note("the twin's mapping made before the write: %s",
	     map_same(mt, now, olen < nlen ? olen : nlen, why, sizeof(why)) ? "new bytes" : why);
	munmap(mf, olen);
	munmap(mt, olen);
	close(rf);
	close(rt);

	/*
	 * The changed member evicted and read again, its earlier opens gone,
	 * OTHER's still open: OTHER reads the key's content, never FILE's
	 * (verify=trust fills unchecked).
	 */
	drop_caches();
	a = open_read(file, cap, &v);
	pread_all(ro, cap, &w);
	if (!same(&v, now, nlen, why, sizeof(why)))
		note("the changed member re-read first: %s", why);
	if (!same(&w, orig, olen, why, sizeof(why))) {
		result("other-member-reads-original", "the other member's earlier open, "
		       "after the changed member re-read its data: %s%s", why,
		       same(&w, now, nlen, why2, sizeof(why2)) ? " (the changed member's bytes)" : "");
	} else {
		view_free(&w);
		b = open_read(other, cap, &w);
		if (!same(&w, orig, olen, why, sizeof(why)))
			result("other-member-reads-original", "a new open of the other member: %s%s",
			       why, same(&w, now, nlen, why2, sizeof(why2)) ?
			       " (the changed member's bytes)" : "");
		else
			PASS("other-member-reads-original");
		if (b >= 0)
			close(b);
	}
	view_free(&v);
	view_free(&w);
	if (a >= 0)
		close(a);

	/* The other member filling first: the changed one reads its own bytes. */
	drop_caches();
	b = open_read(other, cap, &w);
	a = open_read(file, cap, &v);
	if (!same(&v, now, nlen, why, sizeof(why)))
		result("changed-reads-own", "a new open after the other member filled: %s%s", why,
		       same(&v, orig, olen, why2, sizeof(why2)) ? " (the old bytes)" : "");
	else
		PASS("changed-reads-own");
	view_free(&v);
	view_free(&w);
	if (a >= 0)
		close(a);
	if (b >= 0)
		close(b);
	close(ro);
	free(orig);
	free(now);
	return failed;
}
