/*
 * fuzz: a differential fuzzer for pcdedup (tests/dedup/README.md).
 *
 * A tagged file (trusted.pcdedup, set by the pcdedup tool; opened through
 * a share when opened read-only) must behave exactly as its untagged twin,
 * a file of the same content on the same filesystem, except in memory.
 * For one seed this program makes the pair (and a third file of the same
 * content, tagged too: a peer member of the same share), then runs a
 * seeded random sequence of operations, each applied to both files with
 * the same arguments (open, read, io_uring, AIO, mmap and faults, madvise,
 * fadvise, splice, sendfile, copy_file_range, reflink, exchange ioctls,
 * fallocate, truncate, writes, xattrs, drop_caches, freeze, remount: the
 * table below), and compares results, errno and bytes after every step.
 * It also checks what the documentation promises: the key is gone after a
 * write-side operation (with --key open, after any open for write), the
 * peer member always reads the content it was tagged with, and whole-file
 * reads of both files agree every few steps.
 *
 * Any difference ends the run with the seed, the step, the reason and the
 * operation log; `--seed S --steps N` replays it. Exit 0 when no step
 * differed, 1 on a difference, 2 on a usage or setup error.
 */
#include "fuzz.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#ifndef RWF_NOWAIT
#define RWF_NOWAIT 0x8
#endif

enum { K_READ, K_WRITE, K_SYS };
enum { N_XFS = 1, N_EXT4 = 2, N_MNT = 4, N_URING = 8, N_AIO = 16, N_FD = 32, N_MAP = 64 };

struct op {
	const char *name;
	void (*fn)(struct fz *z);
	int weight;
	int kind;	/* K_WRITE: never before the write onset */
	int need;
};

/* Weights are per mille, roughly. */
static const struct op ops[] = {
	{ "open", op_open, 70, K_READ, 0 },	/* write modes after the onset */
	{ "close", op_close, 40, K_READ, N_FD },
	{ "read", op_read, 50, K_READ, N_FD },
	{ "pread", op_pread, 60, K_READ, N_FD },
	{ "readv", op_readv, 40, K_READ, N_FD },
	{ "preadv2", op_preadv2, 60, K_READ, N_FD },
	{ "lseek", op_lseek, 20, K_READ, N_FD },
	{ "fstat", op_fstat, 10, K_READ, N_FD },
	{ "fadvise", op_fadvise, 35, K_READ, N_FD },
	{ "readahead", op_readahead, 10, K_READ, N_FD },
	{ "cachestat", op_cachestat, 15, K_READ, N_FD },
	{ "splice_out", op_splice_out, 25, K_READ, N_FD },
	{ "sendfile", op_sendfile, 25, K_READ, N_FD },
	{ "cfr_from", op_cfr_from, 20, K_READ, N_FD },
	{ "clone_from", op_clone_from, 15, K_READ, N_XFS | N_FD },
	{ "uring_read", op_uring_read, 60, K_READ, N_URING | N_FD },
	{ "aio_read", op_aio_read, 30, K_READ, N_AIO | N_FD },
	{ "mmap", op_mmap, 45, K_READ, N_FD },
	{ "munmap", op_munmap, 15, K_READ, N_MAP },
	{ "fault_read", op_fault_read, 70, K_READ, N_MAP },
	{ "fault_write", op_fault_write, 25, K_READ, N_MAP },	/* shared ones after the onset */
	{ "madvise", op_madvise, 35, K_READ, N_MAP },
	{ "mincore", op_mincore, 10, K_READ, N_MAP },
	{ "msync", op_msync, 8, K_READ, N_MAP },
	{ "fsync", op_fsync, 8, K_READ, N_FD },
	{ "xattr", op_xattr, 15, K_READ, 0 },
	{ "peer", op_peer, 20, K_READ, 0 },
	{ "drop_caches", op_drop_caches, 15, K_SYS, N_MNT },
	{ "freeze", op_freeze, 3, K_SYS, N_MNT },
	{ "remount", op_remount, 3, K_SYS, N_MNT },
	{ "write", op_write, 25, K_WRITE, N_FD },
	{ "pwrite", op_pwrite, 30, K_WRITE, N_FD },
	{ "pwritev2", op_pwritev2, 20, K_WRITE, N_FD },
	{ "uring_write", op_uring_write, 20, K_WRITE, N_URING | N_FD },
	{ "aio_write", op_aio_write, 10, K_WRITE, N_AIO | N_FD },
	{ "splice_in", op_splice_in, 10, K_WRITE, N_FD },
	{ "cfr_into", op_cfr_into, 10, K_WRITE, N_FD },
	{ "clone_into", op_clone_into, 10, K_WRITE, N_XFS | N_FD },
	{ "fallocate", op_fallocate, 25, K_WRITE, N_FD },
	{ "ftruncate", op_ftruncate, 15, K_WRITE, N_FD },
	{ "truncate", op_truncate, 8, K_WRITE, 0 },
	{ "exchange", op_exchange, 8, K_WRITE, N_XFS | N_FD },
	{ "swapext", op_swapext, 6, K_WRITE, N_XFS | N_FD },
	{ "move_ext", op_move_ext, 8, K_WRITE, N_EXT4 | N_FD },
};
#define NOPS (sizeof(ops) / sizeof(ops[0]))
#define OP_MMAP 17

static struct fz Z;

/* ---- drawing arguments ------------------------------------------------ */

uint64_t z_rand(struct fz *z, uint64_t n)
{
	return rng_below(&z->rng, n);
}

int z_pct(struct fz *z, int pct)
{
	return (int)z_rand(z, 100) < pct;
}

size_t z_size(struct fz *z)
{
	struct stat st;

	return stat(z->s[1].path, &st) ? 0 : (size_t)st.st_size;
}

off_t z_off(struct fz *z)
{
	size_t size = z_size(z), pages = size / PG + 2;
	long off;

	switch (z_rand(z, 9)) {
	case 0: off = 0; break;
	case 1: off = size; break;
	case 2: off = (long)size - 1; break;
	case 3: off = z_rand(z, size + 1); break;
	case 4: off = z_rand(z, pages) * PG + (long)z_rand(z, 3) - 1; break;
	case 5: off = z_rand(z, size / (2 * MiB) + 2) * 2 * MiB + (long)z_rand(z, 3) - 1; break;
	case 6: off = size + z_rand(z, 64 * KiB); break;
	case 7: off = z_rand(z, size + 1) & ~(PG - 1); break;
	default: off = z_rand(z, size + 1) & ~(512 * KiB - 1); break;
	}
	return off < 0 ? 0 : off;
}

size_t z_len(struct fz *z)
{
	static const size_t fixed[] = { 1, 4095, 4096, 4097, 65536, 131072, 2 * MiB + 5 };
	size_t len;

	switch (z_rand(z, 7)) {
	case 0: len = fixed[z_rand(z, 7)]; break;
	case 1: len = z_rand(z, 16) + 1; break;
	case 2: len = z_rand(z, 64 * KiB) + 1; break;
	case 3: len = z_rand(z, MiB) + 1; break;
	case 4: len = z_size(z) + z_rand(z, 2) * 4096; break;
	case 5: len = (z_rand(z, 64) + 1) * PG; break;
	default: len = z_rand(z, 8 * KiB) + 1; break;
	}
	if (len == 0)
		len = 1;
	return len < BUFMAX - 2 * PG ? len : BUFMAX - 2 * PG;
}

/*
 * For an O_DIRECT fd, most transfers are aligned (so they happen); the
 * rest, and buffered ones now and then, use an odd buffer address.
 */
void z_align(struct fz *z, int slot, off_t *off, size_t *len, size_t *bufoff)
{
	int direct = slot >= 0 && (z->s[1].fds[slot].flags & O_DIRECT);

	*bufoff = 0;
	if (direct && z_pct(z, 70)) {
		*off &= ~(off_t)(PG - 1);
		*len = (*len + PG - 1) & ~(PG - 1);
		if (*len > BUFMAX - 2 * PG)
			*len = BUFMAX - 2 * PG;
	} else if (z_pct(z, 30)) {
		*bufoff = z_rand(z, 16);
	}
}

/*
 * An O_DIRECT read stops at the end of the block that holds EOF. Past it
 * XFS may keep speculative preallocation (delalloc blocks, trimmed on its
 * own schedule), and a direct read that reaches one fails with EIO
 * ("Direct I/O collision with buffered writes!") on any file: whether it
 * does depends on timing, not on the file. off < 0: the fd's position.
 */
void z_dio_clamp(struct fz *z, int slot, off_t off, size_t *len)
{
	off_t end;

	if (slot < 0 || !(z->s[1].fds[slot].flags & O_DIRECT))
		return;
	if (off < 0)
		off = lseek(z->s[1].fds[slot].fd, 0, SEEK_CUR);
	end = (z_size(z) + PG - 1) & ~(PG - 1);
	if (off >= 0 && off < end && off + (off_t)*len > end)
		*len = end - off;
}

void z_wdata(struct fz *z, size_t n)
{
	uint64_t v = 0;

	if (z_pct(z, 10)) {	/* zeros now and then */
		memset(z->wbuf, 0, n);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		if (i % 8 == 0)
			v = rng_next(&z->rng);
		z->wbuf[i] = v >> (8 * (i % 8));
	}
}

int z_pick_fd(struct fz *z)
{
	int open[NFD], n = 0;

	for (int i = 0; i < NFD; i++)
		if (z->s[1].fds[i].fd >= 0)
			open[n++] = i;
	return n ? open[z_rand(z, n)] : -1;
}

/*
 * A writable slot mostly. Not an O_DIRECT one while a writable shared
 * mapping exists: the page cache a direct write cannot invalidate (the
 * kernel's "Direct I/O collision with buffered writes") makes any file's
 * later reads undefined, tagged or not.
 */
int z_pick_wfd(struct fz *z)
{
	int w[NFD], n = 0, wmap = 0;

	for (int i = 0; i < NMAP; i++)
		if (z->s[1].maps[i].p && (z->s[1].maps[i].prot & PROT_WRITE) &&
		    (z->s[1].maps[i].flags & MAP_SHARED))
			wmap = 1;
	for (int i = 0; i < NFD; i++)
		if (z->s[1].fds[i].fd >= 0 && (z->s[1].fds[i].flags & O_ACCMODE) != O_RDONLY &&
		    !(wmap && (z->s[1].fds[i].flags & O_DIRECT)))
			w[n++] = i;
	return n && z_pct(z, 85) ? w[z_rand(z, n)] : z_pick_fd(z);
}

/*
 * RWF_* flags: none, one, two, or NOWAIT alone; DONTCACHE (0x80, later
 * kernels) and an unknown bit must fail alike. Writes never get NOWAIT
 * (one side writing and the other not would fork the files).
 */
int z_rwf(struct fz *z, int write)
{
	static const int bits[] = { 0x1, 0x2, 0x4, RWF_NOWAIT, 0x10, 0x20, 0x40, 0x80, 0x100 };
	int f = 0;

	switch (z_rand(z, 5)) {
	case 0:
	case 1:
		return write ? 0 : RWF_NOWAIT & z->rwf_mask;
	case 2:
		f |= bits[z_rand(z, 9)];
		/* fall through */
	default:
		f |= bits[z_rand(z, 9)];
		break;
	}
	if (z_pct(z, 10))
		f = 0;
	f &= z->rwf_mask;
	return write ? f & ~RWF_NOWAIT : f;
}

int z_same_files(struct fz *z, int fd0, int fd1, const char *what)
{
	int fds[NSIDE] = { fd0, fd1 };
	unsigned char *d[NSIDE];
	ssize_t n[NSIDE];
	long diff;
	int ok = 1;

	for (int i = 0; i < NSIDE; i++) {
		if (lseek(fds[i], 0, SEEK_SET) < 0 || (n[i] = slurp_fd(fds[i], &d[i])) < 0)
			die("fuzz: reading the %s %s: %s", z->s[i].name, what, strerror(errno));
	}
	if (n[0] != n[1]) {
		z_note(z, "; %s: tagged %zd bytes, twin %zd", what, n[0], n[1]);
		z_fail(z, "%s: the %s files differ in size: tagged %zd, twin %zd", z->desc, what, n[0], n[1]);
		ok = 0;
	} else if ((diff = first_diff(d[0], d[1], n[0])) >= 0) {
		z_note(z, "; %s differ at +%ld", what, diff);
		z_fail(z, "%s: the %s files differ at +%ld", z->desc, what, diff);
		ok = 0;
	}
	free(d[0]);
	free(d[1]);
	return ok;
}

int z_pick_map(struct fz *z)
{
	int m[NMAP], n = 0;

	for (int i = 0; i < NMAP; i++)
		if (z->s[1].maps[i].p)
			m[n++] = i;
	return n ? m[z_rand(z, n)] : -1;
}

const char *z_fdname(struct fz *z, int slot)
{
	static char b[4][80];
	static int k;
	char *p = b[k++ % 4];
	int f = z->s[1].fds[slot].flags;

	snprintf(p, 80, "fd%d(%s%s%s%s%s)", slot,
		 (f & O_ACCMODE) == O_RDONLY ? "RDONLY" : (f & O_ACCMODE) == O_WRONLY ? "WRONLY" : "RDWR",
		 f & O_DIRECT ? "|DIRECT" : "", f & O_APPEND ? "|APPEND" : "",
		 f & O_TRUNC ? "|TRUNC" : "", z->s[1].fds[slot].keyed ? ",keyed" : "");
	return p;
}

const char *rwf_name(int flags)
{
	static const char *names[] = { "HIPRI", "DSYNC", "SYNC", "NOWAIT", "APPEND",
				       "NOAPPEND", "ATOMIC", "DONTCACHE" };
	static char b[4][128];
	static int k;
	char *p = b[k++ % 4];
	size_t n = 0;

	if (!flags)
		return "0";
	p[0] = 0;
	for (int i = 0; i < 31; i++) {
		if (!(flags & (1 << i)))
			continue;
		if (i < 8)
			n += snprintf(p + n, 128 - n, "%s%s", n ? "|" : "", names[i]);
		else
			n += snprintf(p + n, 128 - n, "%s0x%x", n ? "|" : "", 1 << i);
		if (n >= 100)
			break;
	}
	return p;
}

/* ---- describing, comparing, failing ------------------------------------ */

void z_desc(struct fz *z, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(z->desc, sizeof(z->desc), fmt, ap);
	va_end(ap);
	/* Before the operation runs: a kernel crash leaves it as the last line. */
	if (z->trace_fd >= 0)
		dprintf(z->trace_fd, "seed %llu step %ld: %s\n",
			(unsigned long long)z->seed, z->step, z->desc);
}

void z_note(struct fz *z, const char *fmt, ...)
{
	size_t n = strlen(z->out);
	va_list ap;

	if (n >= sizeof(z->out) - 1)
		return;
	va_start(ap, fmt);
	vsnprintf(z->out + n, sizeof(z->out) - n, fmt, ap);
	va_end(ap);
}

void z_fail(struct fz *z, const char *fmt, ...)
{
	va_list ap;

	if (z->failed)
		return;
	z->failed = 1;
	va_start(ap, fmt);
	vsnprintf(z->why, sizeof(z->why), fmt, ap);
	va_end(ap);
}

void res_set(struct res *r, long ret)
{
	memset(r, 0, sizeof(*r));
	r->ret = ret < 0 ? -1 : ret;
	r->err = ret < 0 ? errno : 0;
}

static const char *errname(int e)
{
	const char *n = strerrorname_np(e);

	return n ? n : "E?";
}

static void res_str(const struct res *r, char *b, size_t n)
{
	if (r->sig)
		snprintf(b, n, "%s at +%zu", r->sig == SIGBUS ? "SIGBUS" : "SIGSEGV", r->fault);
	else if (r->ret < 0)
		snprintf(b, n, "%s", errname(r->err));
	else
		snprintf(b, n, "%ld", r->ret);
}

/* -1 when equal, else the first differing byte (or 0 for a result). */
static long res_diff(const struct res *a, const struct res *b, int *what)
{
	*what = 0;
	if (a->sig != b->sig || (a->sig && a->fault != b->fault) || a->ret != b->ret ||
	    (a->ret < 0 && a->err != b->err))
		return 0;
	*what = 1;
	if (a->len != b->len)
		return a->len < b->len ? a->len : b->len;
	if (a->data && b->data && a->len)
		return first_diff(a->data, b->data, a->len);
	return -1;
}

int z_same(struct fz *z, struct res r[NSIDE])
{
	char a[96], b[96];
	int what;
	long d;

	res_str(&r[0], a, sizeof(a));
	res_str(&r[1], b, sizeof(b));
	if (r[0].skip || r[1].skip) {
		z_note(z, " -> %s | %s (not compared)", a, b);
		return 1;
	}
	d = res_diff(&r[0], &r[1], &what);
	if (d < 0) {
		z_note(z, " -> %s", a);
		return 1;
	}
	if (!what) {
		z_note(z, " -> tagged %s, twin %s", a, b);
		z_fail(z, "%s: tagged %s, twin %s", z->desc, a, b);
	} else {
		z_note(z, " -> %s, bytes differ at +%ld (tagged %02x, twin %02x)", a, d,
		       (size_t)d < r[0].len ? r[0].data[d] : 0, (size_t)d < r[1].len ? r[1].data[d] : 0);
		z_fail(z, "%s: both %s, but the bytes differ at +%ld (tagged %02x, twin %02x)",
		       z->desc, a, d, (size_t)d < r[0].len ? r[0].data[d] : 0,
		       (size_t)d < r[1].len ? r[1].data[d] : 0);
	}
	return 0;
}

/*
 * RWF_NOWAIT may return EAGAIN, or fewer bytes, on one side where the other
 * had the data cached. Then both sides read again blocking (the callback,
 * into aux) and must agree; what each NOWAIT read returned must be a prefix
 * of that. Any other errno (EOPNOTSUPP) must match.
 */
int z_nowait_retry(struct fz *z, struct res r[NSIDE], int flags,
		   long (*blocking)(struct fz *z, int side, void *arg), void *arg)
{
	struct res b[NSIDE];
	int what;

	if (!(flags & RWF_NOWAIT) || res_diff(&r[0], &r[1], &what) < 0)
		return z_same(z, r);
	for (int i = 0; i < NSIDE; i++)
		if (r[i].sig || (r[i].ret < 0 && r[i].err != EAGAIN))
			return z_same(z, r);
	for (int i = 0; i < NSIDE; i++) {
		char s[96];

		res_str(&r[i], s, sizeof(s));
		z_note(z, " nowait %s %s;", z->s[i].name, s);
	}
	z_note(z, " blocking");
	for (int i = 0; i < NSIDE; i++) {
		long ret = blocking(z, i, arg);

		res_set(&b[i], ret);
		b[i].data = z->s[i].aux;
		b[i].len = ret > 0 ? ret : 0;
	}
	if (!z_same(z, b))
		return 0;
	for (int i = 0; i < NSIDE; i++) {
		if (r[i].ret < 0)
			continue;
		if (r[i].ret > b[i].ret || first_diff(r[i].data, b[i].data, r[i].ret) >= 0) {
			z_fail(z, "%s: the %s file's NOWAIT read (%ld bytes) is not a prefix of its blocking read (%ld)",
			       z->desc, z->s[i].name, r[i].ret, b[i].ret);
			return 0;
		}
	}
	return 1;
}

void z_key_event(struct fz *z)
{
	z->key_gone = 1;
}

void z_data_event(struct fz *z)
{
	z->wgen++;
	z->key_gone = 1;
}

int z_key_present(const char *path)
{
	ssize_t n = getxattr(path, "trusted.pcdedup", NULL, 0);

	if (n > 0)
		return 1;
	if (n < 0 && errno == ENODATA)
		return 0;
	return n == 0 ? 0 : -1;
}

ssize_t slurp_fd(int fd, unsigned char **data)
{
	size_t cap = MiB, n = 0;
	unsigned char *p = xmalloc(cap);

	for (;;) {
		ssize_t r;

		if (n == cap) {
			cap *= 2;
			p = realloc(p, cap);
			if (!p)
				die("out of memory");
		}
		r = read(fd, p + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;

			free(p);
			errno = e;
			return -1;
		}
		if (r == 0)
			break;
		n += r;
	}
	*data = p;
	return n;
}

/* ---- the files ------------------------------------------------------- */

static const char *counter_file(void)
{
	return access("/sys/kernel/mm/pcdedup/events", R_OK) == 0 ?
		"/sys/kernel/mm/pcdedup/events" : "/proc/vmstat";
}

/* An event counter; -1 when missing (a missing counter is never 0). */
long z_counter(const char *name)
{
	FILE *f = fopen(counter_file(), "r");
	char k[128];
	long v, found = -1;

	if (!f)
		return -1;
	while (fscanf(f, "%127s %ld", k, &v) == 2)
		if (!strcmp(k, name))
			found = v;
	fclose(f);
	return found;
}

/* The same layout in each file: the content, with holes. */
static int write_layout(const char *path, const unsigned char *data, size_t size,
			const unsigned char *hole)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	size_t pages = (size + PG - 1) / PG;

	if (fd < 0 || ftruncate(fd, size))
		return -1;
	for (size_t p = 0; p < pages;) {
		size_t q = p;

		if (hole[p]) {
			p++;
			continue;
		}
		while (q < pages && !hole[q])
			q++;
		size_t end = q * PG < size ? q * PG : size;
		if (pwrite_full(fd, data + p * PG, end - p * PG, p * PG))
			return -1;
		p = q;
	}
	if (fsync(fd) || close(fd))
		return -1;
	return 0;
}

int pwrite_full(int fd, const void *buf, size_t len, off_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t r = pwrite(fd, (const char *)buf + done, len - done, off + done);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		done += r;
	}
	return 0;
}

static int tag(struct fz *z, const char *a, const char *b)
{
	int st;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		if (null >= 0)
			dup2(null, 1);
		/* Level 2 needs more than one level-1 hash: over 128 blocks. */
		if (z->level2 && z->orig_len > 128 * PG)
			execl(z->tool, z->tool, "tag", "-q", "--min-size", "0", "--tree-level", "2",
			      a, b, (char *)NULL);
		else
			execl(z->tool, z->tool, "tag", "-q", "--min-size", "0", a, b, (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static const size_t sizes[] = { 1, 100, 4095, 4096, 4097, 12365, 65536, 300001,
				MiB, 2 * MiB + 4097, 3 * MiB + 777, 4 * MiB };

static int setup(struct fz *z)
{
	size_t size, pages;
	unsigned char *hole;

	size = z->fixed_size >= 0 ? (size_t)z->fixed_size : sizes[z_rand(z, sizeof(sizes) / sizeof(sizes[0]))];
	z->orig_len = size;
	z->orig = xmalloc(size);
	pages = (size + PG - 1) / PG;
	hole = calloc(pages + 1, 1);
	if (!hole)
		die("out of memory");
	for (size_t i = 0; i < size; i += 8) {
		uint64_t v = rng_next(&z->rng);

		memcpy(z->orig + i, &v, size - i < 8 ? size - i : 8);
	}
	/* A few holes in larger files (SEEK_HOLE, sparse reads, fills). */
	for (int h = size >= 64 * KiB ? (int)z_rand(z, 4) : 0; h > 0; h--) {
		size_t p = z_rand(z, pages), n = z_rand(z, 16) + 1;

		for (size_t i = p; i < p + n && i < pages; i++) {
			hole[i] = 1;
			memset(z->orig + i * PG, 0, i * PG + PG <= size ? PG : size - i * PG);
		}
	}

	snprintf(z->wdir, sizeof(z->wdir), "%s/fz-%llu", z->dir, (unsigned long long)z->seed);
	mkdir(z->wdir, 0755);
	z->s[0].name = "tagged";
	z->s[1].name = "twin";
	for (int i = 0; i < NSIDE; i++) {
		struct side *s = &z->s[i];
		const char *c = i ? "w" : "t";

		snprintf(s->path, sizeof(s->path), "%s/%s", z->wdir, c);
		snprintf(s->src, sizeof(s->src), "%s/%s.src", z->wdir, c);
		snprintf(s->scr, sizeof(s->scr), "%s/%s.scr", z->wdir, c);
		snprintf(s->donor, sizeof(s->donor), "%s/%s.donor", z->wdir, c);
		for (int k = 0; k < NFD; k++)
			s->fds[k].fd = -1;
		s->src_fd = s->scr_fd = s->tmp_fd = -1;
		if (posix_memalign((void **)&s->buf, PG, BUFMAX) ||
		    posix_memalign((void **)&s->aux, PG, BUFMAX))
			die("out of memory");
		unlink(s->path);
		unlink(s->donor);
		if (write_layout(s->path, z->orig, size, hole)) {
			fprintf(stderr, "fuzz: cannot write %s: %s\n", s->path, strerror(errno));
			return -1;
		}
	}
	snprintf(z->peer, sizeof(z->peer), "%s/p", z->wdir);
	unlink(z->peer);
	if (write_layout(z->peer, z->orig, size, hole)) {
		fprintf(stderr, "fuzz: cannot write %s: %s\n", z->peer, strerror(errno));
		return -1;
	}
	free(hole);

	if (z->tool) {
		if (tag(z, z->s[0].path, z->peer)) {
			fprintf(stderr, "fuzz: %s tag failed on %s\n", z->tool, z->s[0].path);
			return -1;
		}
		if (z_key_present(z->s[0].path) != 1 || z_key_present(z->peer) != 1) {
			fprintf(stderr, "fuzz: %s tag left no trusted.pcdedup on %s\n", z->tool, z->s[0].path);
			return -1;
		}
	}
	/*
	 * The twin carries an attribute of the key's size until the key goes,
	 * so that both inodes' attribute forks are alike (XFS_IOC_SWAPEXT
	 * checks how many extents fit beside them).
	 */
	if (z->tool) {
		ssize_t kn = getxattr(z->s[0].path, "trusted.pcdedup", NULL, 0);
		void *zeros = calloc(kn > 0 ? kn : 1, 1);

		if (kn <= 0 || !zeros || setxattr(z->s[1].path, TWIN_ATTR, zeros, kn, 0)) {
			fprintf(stderr, "fuzz: %s on the twin: %s\n", TWIN_ATTR, strerror(errno));
			return -1;
		}
		free(zeros);
		z->twin_attr = 1;
	}
	if (z_key_present(z->s[1].path) != 0) {
		fprintf(stderr, "fuzz: the twin %s has a key\n", z->s[1].path);
		return -1;
	}
	/* The companions' content is drawn after the files'. */
	if (side_open_companions(z))
		return -1;
	return 0;
}

static void cleanup(struct fz *z)
{
	map_unmap_all(z);
	fd_close_all(z);
	side_close_companions(z);
	for (int i = 0; i < NSIDE; i++) {
		struct side *s = &z->s[i];

		if (s->tmp_fd >= 0)
			close(s->tmp_fd);
		free(s->buf);
		free(s->aux);
		if (z->keep)
			continue;
		unlink(s->path);
		unlink(s->src);
		unlink(s->scr);
		unlink(s->donor);
	}
	if (z->keep)
		return;
	unlink(z->peer);
	rmdir(z->wdir);
}

/* ---- checks between steps -------------------------------------------- */

/*
 * The whole file with O_DIRECT, in aligned reads of at most 1 MiB, up to
 * the end of the block that holds EOF (buffered where the fs refuses
 * O_DIRECT): what the reads returned, up to the first short or failed
 * one; -1 with errno when the first fails.
 */
static ssize_t slurp_direct(const char *path, unsigned char **data)
{
	int fd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
	size_t cap = MiB, n = 0;
	unsigned char *p;

	if (fd < 0 && errno == EINVAL)
		fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (posix_memalign((void **)&p, PG, cap))
		die("out of memory");
	for (;;) {
		ssize_t r;

		if (n == cap) {
			unsigned char *q;

			if (posix_memalign((void **)&q, PG, 2 * cap))
				die("out of memory");
			memcpy(q, p, n);
			free(p);
			p = q;
			cap *= 2;
		}
		/* To the end of the block that holds EOF (z_dio_clamp). */
		struct stat st;
		size_t end = fstat(fd, &st) ? n + MiB : ((size_t)st.st_size + PG - 1) & ~(PG - 1);
		size_t want = MiB < cap - n ? MiB : cap - n;

		if (n >= end)
			break;
		r = pread(fd, p + n, want < end - n ? want : end - n, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && n == 0) {
			int e = errno;

			free(p);
			close(fd);
			errno = e;
			return -1;
		}
		if (r <= 0)
			break;
		n += r;
		if (n % PG)
			break;
	}
	close(fd);
	*data = p;
	return n;
}

static void check_content(struct fz *z, const char *when)
{
	unsigned char *d[NSIDE] = { NULL, NULL };
	ssize_t n[NSIDE];
	long diff;

	for (int direct = 0; direct < 2 && !z->failed; direct++) {
		for (int i = 0; i < NSIDE; i++) {
			int fd = direct ? -1 : open(z->s[i].path, O_RDONLY | O_CLOEXEC);

			n[i] = direct ? slurp_direct(z->s[i].path, &d[i]) : fd >= 0 ? slurp_fd(fd, &d[i]) : -1;
			if (fd >= 0)
				close(fd);
			if (n[i] < 0) {
				z_fail(z, "%s: %s read of the whole %s file: %s", when,
				       direct ? "an O_DIRECT" : "a fresh", z->s[i].name, strerror(errno));
				d[i] = NULL;
			}
		}
		if (!z->failed && n[0] != n[1])
			z_fail(z, "%s: %s read of the whole files: tagged %zd bytes, twin %zd (size %zu)",
			       when, direct ? "an O_DIRECT" : "a fresh", n[0], n[1], z_size(z));
		else if (!z->failed && (diff = first_diff(d[0], d[1], n[0])) >= 0)
			z_fail(z, "%s: %s read of the whole files differs at +%ld (tagged %02x, twin %02x)",
			       when, direct ? "an O_DIRECT" : "a fresh", diff, d[0][diff], d[1][diff]);
		free(d[0]);
		free(d[1]);
		d[0] = d[1] = NULL;
	}
	/* The peer member never sees the tagged file's changes. */
	if (!z->failed) {
		int fd = open(z->peer, O_RDONLY | O_CLOEXEC);
		ssize_t pn = fd >= 0 ? slurp_fd(fd, &d[0]) : -1;

		if (fd >= 0)
			close(fd);
		if (pn < 0)
			z_fail(z, "%s: reading the peer member: %s", when, strerror(errno));
		else if ((size_t)pn != z->orig_len || (diff = first_diff(d[0], z->orig, pn)) >= 0)
			z_fail(z, "%s: the peer member (tagged with the same content) reads %zd bytes, differing from its content at +%ld",
			       when, pn, (size_t)pn != z->orig_len ? 0L : diff);
		if (pn >= 0)
			free(d[0]);
	}
}

static void check_step(struct fz *z)
{
	struct stat st[NSIDE];
	int rc[NSIDE], kp;

	for (int i = 0; i < NSIDE; i++)
		rc[i] = stat(z->s[i].path, &st[i]);
	if (rc[0] || rc[1])
		z_fail(z, "after it: stat: tagged %d, twin %d (%s)", rc[0], rc[1], strerror(errno));
	else if (st[0].st_size != st[1].st_size)
		z_fail(z, "after it: sizes differ: tagged %lld, twin %lld",
		       (long long)st[0].st_size, (long long)st[1].st_size);
	if (z->failed || !z->tool)
		return;
	kp = z_key_present(z->s[0].path);
	if (kp < 0)
		z_fail(z, "after it: getxattr(trusted.pcdedup) of the tagged file: %s", strerror(errno));
	else if (kp == 0 && z->key_lost_step < 0)
		z->key_lost_step = z->step;
	if (kp == 0 && z->twin_attr) {
		if (removexattr(z->s[1].path, TWIN_ATTR))
			z_fail(z, "after it: removing %s from the twin: %s", TWIN_ATTR, strerror(errno));
		z->twin_attr = 0;
	}
	if (z->failed || z->key_mode == KEY_NONE)
		return;
	if (kp == 1 && z->key_gone)
		z_fail(z, "after it: the tagged file still has its key after a write-side operation%s (docs/interface.md: the key is dropped)",
		       z->key_mode == KEY_OPEN ? " or an open for write" : "");
	else if (kp == 0 && !z->key_gone && !z->wopened)
		z_fail(z, "after it: the tagged file lost its key with no write-side operation");
	else if (z_key_present(z->peer) != 1)
		z_fail(z, "after it: the peer member lost its key");
}

/* ---- the run ---------------------------------------------------------- */

static int listed(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; (p = strstr(p, name)); p += n)
		if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == 0))
			return 1;
	return 0;
}

static int op_allowed(struct fz *z, const struct op *o)
{
	if (o->kind == K_WRITE && z->step < z->onset)
		return 0;
	if (((o->need & N_XFS) && !z->is_xfs) || ((o->need & N_EXT4) && !z->is_ext4) ||
	    ((o->need & N_MNT) && !z->mnt) || ((o->need & N_URING) && !z->ring) ||
	    ((o->need & N_AIO) && !z->aio))
		return 0;
	if (z->only[0] && !listed(z->only, o->name))
		return 0;
	return !listed(z->skip, o->name);
}

static const struct op *pick_op(struct fz *z)
{
	long total = 0, r;

	for (size_t i = 0; i < NOPS; i++)
		if (op_allowed(z, &ops[i]))
			total += ops[i].weight;
	if (!total)
		return NULL;
	r = z_rand(z, total);
	for (size_t i = 0; i < NOPS; i++) {
		if (!op_allowed(z, &ops[i]))
			continue;
		if (r < ops[i].weight)
			return &ops[i];
		r -= ops[i].weight;
	}
	return NULL;
}

static void log_step(struct fz *z)
{
	char line[1700];

	snprintf(line, sizeof(line), "%5ld %s%s", z->step, z->desc, z->out);
	if (z->nlog == z->caplog) {
		z->caplog = z->caplog ? 2 * z->caplog : 512;
		z->log = realloc(z->log, z->caplog * sizeof(*z->log));
		if (!z->log)
			die("out of memory");
	}
	if (z->verbose)
		printf("  %s\n", line);
	z->log[z->nlog] = strdup(line);
	if (!z->log[z->nlog])
		die("out of memory");
	z->nlog++;
}

static const char *maps_names[] = { "loose", "share", "strict" };
static const char *key_names[] = { "open", "data", "none" };

static void report(struct fz *z, int argc, char **argv)
{
	long from = z->log_lines > 0 && z->nlog > z->log_lines ? z->nlog - z->log_lines : 0;

	printf("fuzz: seed %llu: FAILED at step %ld: %s\n", (unsigned long long)z->seed, z->step, z->why);
	printf("fuzz: replay:");
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--seed") || !strcmp(argv[i], "--steps")) {
			i++;
			continue;
		}
		if (i == argc - 1)
			printf(" --seed %llu --steps %ld", (unsigned long long)z->seed, z->step);
		printf(" %s", argv[i]);
	}
	printf("\nfuzz: %s file %s, twin %s, %zu bytes; writes from step %ld; --maps %s --key %s\n",
	       z->s[0].name, z->s[0].path, z->s[1].path, z->orig_len, z->onset == LONG_MAX ? -1 : z->onset,
	       maps_names[z->maps_mode], key_names[z->key_mode]);
	printf("fuzz: operation log%s (step, operation, result):\n", from ? " (the last steps)" : "");
	for (long i = from; i < z->nlog; i++)
		printf("  %s\n", z->log[i]);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: fuzz [--seed N] [--steps N] [--tool PCDEDUP] [--mnt DIR]\n"
		"            [--maps loose|share|strict] [--key open|data|none] [--size BYTES]\n"
		"            [--only OP,...] [--skip OP,...] [--rwf-mask FLAGS] [--trace FILE]\n"
		"            [--log-lines N] [--no-share-check] [--level2] [--keep] [--verbose]\n"
		"            [--list] DIR\n"
		"(drop_caches, freeze and remount only run with --mnt: in a guest)\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct fz *z = &Z;
	const struct op *o;
	int ret;

	z->seed = 1;
	z->steps = 300;
	z->maps_mode = MAPS_LOOSE;
	z->key_mode = KEY_OPEN;
	z->share_check = 1;
	z->log_lines = 80;
	z->fixed_size = -1;
	z->rwf_mask = -1;
	z->trace_fd = -1;
	z->peer_fd = -1;
	z->key_lost_step = -1;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--list")) {
			for (size_t k = 0; k < NOPS; k++)
				printf("%s\n", ops[k].name);
			return 0;
		} else if (!strcmp(a, "--keep")) {
			z->keep = 1;
			continue;
		} else if (!strcmp(a, "--verbose")) {
			z->verbose = 1;
			continue;
		} else if (!strcmp(a, "--level2")) {
			z->level2 = 1;
			continue;
		} else if (!strcmp(a, "--no-share-check")) {
			z->share_check = 0;
			continue;
		} else if (a[0] != '-') {
			if (z->dir)
				usage();
			z->dir = a;
			continue;
		}
		if (!v)
			usage();
		i++;
		if (!strcmp(a, "--seed"))
			z->seed = strtoull(v, NULL, 0);
		else if (!strcmp(a, "--steps"))
			z->steps = strtol(v, NULL, 0);
		else if (!strcmp(a, "--tool"))
			z->tool = v;
		else if (!strcmp(a, "--mnt"))
			z->mnt = v;
		else if (!strcmp(a, "--trace"))
			z->trace = v;
		else if (!strcmp(a, "--log-lines"))
			z->log_lines = strtol(v, NULL, 0);
		else if (!strcmp(a, "--rwf-mask"))
			z->rwf_mask = strtol(v, NULL, 0);
		else if (!strcmp(a, "--size"))
			z->fixed_size = strtol(v, NULL, 0);
		else if (!strcmp(a, "--only"))
			snprintf(z->only, sizeof(z->only), "%s", v);
		else if (!strcmp(a, "--skip"))
			snprintf(z->skip, sizeof(z->skip), "%s", v);
		else if (!strcmp(a, "--maps"))
			z->maps_mode = !strcmp(v, "loose") ? MAPS_LOOSE : !strcmp(v, "share") ? MAPS_SHARE :
				       !strcmp(v, "strict") ? MAPS_STRICT : (usage(), 0);
		else if (!strcmp(a, "--key"))
			z->key_mode = !strcmp(v, "open") ? KEY_OPEN : !strcmp(v, "data") ? KEY_DATA :
				      !strcmp(v, "none") ? KEY_NONE : (usage(), 0);
		else
			usage();
	}
	if (!z->dir || z->steps < 0 || z->fixed_size == 0)
		usage();
	if (!z->tool) {
		/* Without the tool nothing is tagged: a self-test of the fuzzer. */
		z->key_mode = KEY_NONE;
		z->share_check = 0;
	}
	signal(SIGPIPE, SIG_IGN);
	signal(SIGXFSZ, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (z->trace) {
		z->trace_fd = open(z->trace, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (z->trace_fd < 0)
			die("fuzz: %s: %s", z->trace, strerror(errno));
	}
	if (posix_memalign((void **)&z->wbuf, PG, BUFMAX))
		die("out of memory");

	z->rng = z->seed * 0x9e3779b97f4a7c15ULL + 1;
	/*
	 * Read-only for a while (sometimes the whole run), then anything.
	 * Writes drop the key within a few dozen steps, and a step without
	 * the key compares two plain files: most of a 400-step run keeps it.
	 * Not from --steps: a replay with fewer steps is the same run.
	 */
	z->onset = z_pct(z, 20) ? LONG_MAX : 150 + (long)z_rand(z, 250);
	if (fs_detect(z) || setup(z) || async_setup(z)) {
		cleanup(z);
		return 2;
	}

	/* Step 0: the peer's open, then the first open of each file. */
	z->peer_fd = open(z->peer, O_RDONLY | O_CLOEXEC);
	if (z->peer_fd < 0)
		die("fuzz: %s: %s", z->peer, strerror(errno));
	long shared0 = z->share_check ? z_counter("pcdedup_open_shared") : 0;
	if (shared0 < 0) {
		fprintf(stderr, "fuzz: no pcdedup_open_shared in %s\n", counter_file());
		cleanup(z);
		return 2;
	}
	z->step = 0;
	fd_open_slot(z, 0, O_RDONLY);
	log_step(z);
	if (!z->failed && z->share_check) {
		long shared = z_counter("pcdedup_open_shared");

		if (shared - shared0 < 1)
			z_fail(z, "setup: the tagged file did not open through a share (pcdedup_open_shared %ld -> %ld)",
			       shared0, shared);
	}

	for (z->step = 1; z->step <= z->steps && !z->failed; z->step++) {
		z->desc[0] = z->out[0] = 0;
		o = pick_op(z);
		if (!o)
			break;
		/* Nothing to work on: make it first. */
		if ((o->need & N_FD) && z_pick_fd(z) < 0 && op_allowed(z, &ops[0]))
			o = &ops[0];
		else if ((o->need & N_MAP) && z_pick_map(z) < 0 && op_allowed(z, &ops[OP_MMAP]))
			o = &ops[OP_MMAP];
		o->fn(z);
		if (!z->failed)
			check_step(z);
		if (!z->failed && z->step % 25 == 0)
			check_content(z, "after it");
		log_step(z);
		if (z->failed)
			break;
	}
	if (!z->failed) {
		z->step = z->steps;
		check_content(z, "at the end");
	}
	if (z->failed) {
		report(z, argc, argv);
		ret = 1;
	} else {
		printf("fuzz: seed %llu: %ld steps, no difference (%zu bytes; writes from step %ld; key gone at step %ld; %ld mapping compares relaxed, %ld of them checked against the share model; %ld swapext steps not compared, layouts differ)\n",
		       (unsigned long long)z->seed, z->steps, z->orig_len, z->onset == LONG_MAX ? -1 : z->onset,
		       z->key_lost_step, z->relaxed, z->modelled, z->uncompared);
		ret = 0;
	}
	async_teardown(z);
	if (z->peer_fd >= 0)
		close(z->peer_fd);
	cleanup(z);
	return ret;
}
