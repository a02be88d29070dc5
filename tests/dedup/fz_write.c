/*
 * fuzz: everything that changes the file's data or size: write, pwrite,
 * pwritev2 (RWF flags but NOWAIT), O_DIRECT writes (an fd opened so),
 * splice from a pipe, copy_file_range and reflink into it, fallocate,
 * ftruncate and truncate, and the data-exchanging ioctls (XFS exchange
 * range and swapext, ext4 move extents) with a donor made per side. Never
 * before the run's write onset. See fuzz.c.
 */
#include "fuzz.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

/* From fs/xfs/libxfs/xfs_fs.h and include/uapi/linux/ext4.h (6.12). */
struct xfs_bstime_fz {
	long tv_sec;
	int32_t tv_nsec;
};
struct xfs_bstat_fz {
	uint64_t bs_ino;
	uint16_t bs_mode, bs_nlink;
	uint32_t bs_uid, bs_gid, bs_rdev;
	int32_t bs_blksize;
	int64_t bs_size;
	struct xfs_bstime_fz bs_atime, bs_mtime, bs_ctime;
	int64_t bs_blocks;
	uint32_t bs_xflags;
	int32_t bs_extsize, bs_extents;
	uint32_t bs_gen;
	uint16_t bs_projid_lo, bs_forkoff, bs_projid_hi, bs_sick, bs_checked;
	unsigned char bs_pad[2];
	uint32_t bs_cowextsize, bs_dmevmask;
	uint16_t bs_dmstate, bs_aextents;
};
struct xfs_swapext_fz {
	int64_t sx_version, sx_fdtarget, sx_fdtmp;
	int64_t sx_offset, sx_length;
	char sx_pad[16];
	struct xfs_bstat_fz sx_stat;
};
struct xfs_exchange_range_fz {
	int32_t file1_fd;
	uint32_t pad;
	uint64_t file1_offset, file2_offset, length, flags;
};
struct move_extent_fz {
	uint32_t reserved, donor_fd;
	uint64_t orig_start, donor_start, len, moved_len;
};
#define XFS_IOC_SWAPEXT_FZ _IOWR('X', 109, struct xfs_swapext_fz)
#define XFS_IOC_EXCHANGE_RANGE_FZ _IOW('X', 129, struct xfs_exchange_range_fz)
#define EXT4_IOC_MOVE_EXT_FZ _IOWR('f', 15, struct move_extent_fz)
#define XCHG_TO_EOF 1ULL
#define XCHG_DSYNC 2ULL
#define XCHG_DRY_RUN 4ULL
#define XCHG_FILE1_WRITTEN 8ULL

_Static_assert(sizeof(struct xfs_bstat_fz) == 136, "struct xfs_bstat layout");

/* A write's length: the file stays under MAXSIZE. */
static size_t wlen(struct fz *z)
{
	size_t len = z_len(z);

	if (len > MiB)
		len = z_rand(z, MiB) + 1;
	if (z_size(z) > MAXSIZE - 4 * MiB && len > 64 * KiB)
		len = z_rand(z, 64 * KiB) + 1;
	return len;
}

static off_t woff(struct fz *z)
{
	off_t off = z_off(z);

	return off > (off_t)(MAXSIZE - 2 * MiB) ? (off_t)z_rand(z, MAXSIZE / 2) : off;
}

/* Both sides did the same: a change of data when it changed anything. */
static void done(struct fz *z, struct res r[NSIDE], int changed)
{
	if (z_same(z, r) && changed)
		z_data_event(z);
}

static int wslot(struct fz *z, const char *what)
{
	int slot = z_pick_wfd(z);

	if (slot < 0)
		z_desc(z, "%s (no fd)", what);
	return slot;
}

void op_write(struct fz *z)
{
	int slot = wslot(z, "write");
	off_t off = 0;
	size_t len = wlen(z), bo;
	struct res r[NSIDE];

	if (slot < 0)
		return;
	z_align(z, slot, &off, &len, &bo);
	z_wdata(z, len + bo);
	z_desc(z, "write %s len %zu buf+%zu", z_fdname(z, slot), len, bo);
	for (int i = 0; i < NSIDE; i++)
		res_set(&r[i], write(z->s[i].fds[slot].fd, z->wbuf + bo, len));
	done(z, r, r[0].ret > 0);
}

void op_pwrite(struct fz *z)
{
	int slot = wslot(z, "pwrite");
	off_t off = woff(z);
	size_t len = wlen(z), bo;
	struct res r[NSIDE];

	if (slot < 0)
		return;
	z_align(z, slot, &off, &len, &bo);
	z_wdata(z, len + bo);
	z_desc(z, "pwrite %s off %lld len %zu buf+%zu", z_fdname(z, slot), (long long)off, len, bo);
	for (int i = 0; i < NSIDE; i++)
		res_set(&r[i], pwrite(z->s[i].fds[slot].fd, z->wbuf + bo, len, off));
	done(z, r, r[0].ret > 0);
}

void op_pwritev2(struct fz *z)
{
	int slot = wslot(z, "pwritev2"), flags = z_rwf(z, 1), n = z_rand(z, 3) + 1;
	off_t off = z_pct(z, 15) ? -1 : woff(z);
	size_t len = wlen(z), bo = 0, left;
	struct iovec iov[3];
	unsigned char *b;
	struct res r[NSIDE];

	if (slot < 0)
		return;
	if (off >= 0)
		z_align(z, slot, &off, &len, &bo);
	z_wdata(z, len + bo);
	b = z->wbuf + bo;
	left = len;
	for (int k = 0; k < n; k++) {
		size_t l = k == n - 1 ? left : z_rand(z, left + 1);

		iov[k] = (struct iovec){ b, l };
		b += l;
		left -= l;
	}
	z_desc(z, "pwritev2 %s off %lld len %zu in %d iovecs flags %s", z_fdname(z, slot),
	       (long long)off, len, n, rwf_name(flags));
	for (int i = 0; i < NSIDE; i++)
		res_set(&r[i], pwritev2(z->s[i].fds[slot].fd, iov, n, off, flags));
	done(z, r, r[0].ret > 0);
}

void op_splice_in(struct fz *z)
{
	int slot = wslot(z, "splice_in"), use_off = z_pct(z, 70);
	off_t off = woff(z);
	size_t len = z_rand(z, 64 * KiB) + 1;
	struct res r[NSIDE];

	if (slot < 0)
		return;
	z_wdata(z, len);
	z_desc(z, "splice a pipe of %zu bytes into %s off %lld", len, z_fdname(z, slot),
	       use_off ? (long long)off : -1LL);
	for (int i = 0; i < NSIDE; i++) {
		loff_t o = off;
		int p[2];

		if (pipe2(p, O_CLOEXEC | O_NONBLOCK) || write(p[1], z->wbuf, len) != (ssize_t)len)
			die("fuzz: filling a pipe: %s", strerror(errno));
		res_set(&r[i], splice(p[0], NULL, z->s[i].fds[slot].fd, use_off ? &o : NULL, len, 0));
		close(p[0]);
		close(p[1]);
	}
	done(z, r, r[0].ret > 0);
}

void op_cfr_into(struct fz *z)
{
	int slot = wslot(z, "cfr_into"), use_off = z_pct(z, 80);
	off_t oin = z_rand(z, MiB), off = woff(z);
	size_t len = wlen(z);
	struct res r[NSIDE];

	if (slot < 0)
		return;
	z_desc(z, "copy_file_range src off %lld len %zu into %s off %lld", (long long)oin, len,
	       z_fdname(z, slot), use_off ? (long long)off : -1LL);
	for (int i = 0; i < NSIDE; i++) {
		loff_t oi = oin, oo = off;

		res_set(&r[i], copy_file_range(z->s[i].src_fd, &oi, z->s[i].fds[slot].fd,
					       use_off ? &oo : NULL, len, 0));
	}
	done(z, r, r[0].ret > 0);
}

void op_clone_into(struct fz *z)
{
	int slot = wslot(z, "clone_into"), whole = z_pct(z, 20), aligned = z_pct(z, 85);
	struct file_clone_range fcr = {
		.src_offset = z_rand(z, MiB / PG) * PG,
		.src_length = z_pct(z, 15) ? 0 : (z_rand(z, 64) + 1) * PG,
		.dest_offset = woff(z),
	};
	struct res r[NSIDE];

	if (slot < 0)
		return;
	if (aligned)
		fcr.dest_offset &= ~(PG - 1);
	if (whole)
		z_desc(z, "FICLONE %s from src", z_fdname(z, slot));
	else
		z_desc(z, "FICLONERANGE %s off %llu from src off %llu len %llu", z_fdname(z, slot),
		       (unsigned long long)fcr.dest_offset, (unsigned long long)fcr.src_offset,
		       (unsigned long long)fcr.src_length);
	for (int i = 0; i < NSIDE; i++) {
		fcr.src_fd = z->s[i].src_fd;
		res_set(&r[i], whole ? ioctl(z->s[i].fds[slot].fd, FICLONE, z->s[i].src_fd) :
				ioctl(z->s[i].fds[slot].fd, FICLONERANGE, &fcr));
	}
	done(z, r, r[0].ret == 0);
}

void op_fallocate(struct fz *z)
{
	static const int modes[] = {
		0, FALLOC_FL_KEEP_SIZE, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
		FALLOC_FL_ZERO_RANGE, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE,
		FALLOC_FL_COLLAPSE_RANGE, FALLOC_FL_INSERT_RANGE, FALLOC_FL_UNSHARE_RANGE,
		FALLOC_FL_PUNCH_HOLE, 0x1000,
	};
	static const char *names[] = { "0", "KEEP_SIZE", "PUNCH_HOLE|KEEP_SIZE", "ZERO_RANGE",
				       "ZERO_RANGE|KEEP_SIZE", "COLLAPSE_RANGE", "INSERT_RANGE",
				       "UNSHARE_RANGE", "PUNCH_HOLE", "0x1000" };
	int slot = wslot(z, "fallocate"), m = z_rand(z, 10);
	off_t off = woff(z);
	size_t len = wlen(z);
	struct res r[NSIDE];

	if (slot < 0)
		return;
	if (z_pct(z, 70)) {	/* COLLAPSE and INSERT want whole blocks */
		off &= ~(PG - 1);
		len = (len + PG - 1) & ~(PG - 1);
	}
	if (modes[m] == FALLOC_FL_INSERT_RANGE && z_size(z) + len > MAXSIZE)
		len = PG;
	z_desc(z, "fallocate %s %s off %lld len %zu", z_fdname(z, slot), names[m], (long long)off, len);
	for (int i = 0; i < NSIDE; i++)
		res_set(&r[i], fallocate(z->s[i].fds[slot].fd, modes[m], off, len));
	done(z, r, r[0].ret == 0);
}

static off_t new_size(struct fz *z)
{
	long size = z_size(z);

	switch (z_rand(z, 6)) {
	case 0: return z_pct(z, 50) ? 0 : size;
	case 1: return size - (long)z_rand(z, 8192) > 0 ? size - (long)z_rand(z, 8192) : 0;
	case 2: return size + z_rand(z, 8192);
	case 3: return z_rand(z, size + 1) & ~(PG - 1);
	case 4: return z_pct(z, 10) ? -1 : (off_t)z_rand(z, 4 * MiB);
	default: return z_rand(z, size + 1);
	}
}

void op_ftruncate(struct fz *z)
{
	int slot = wslot(z, "ftruncate");
	off_t size = new_size(z);
	struct res r[NSIDE];

	if (slot < 0)
		return;
	z_desc(z, "ftruncate %s %lld", z_fdname(z, slot), (long long)size);
	for (int i = 0; i < NSIDE; i++)
		res_set(&r[i], ftruncate(z->s[i].fds[slot].fd, size));
	done(z, r, r[0].ret == 0);
}

void op_truncate(struct fz *z)
{
	off_t size = new_size(z);
	struct res r[NSIDE];

	z_desc(z, "truncate path %lld", (long long)size);
	for (int i = 0; i < NSIDE; i++)
		res_set(&r[i], truncate(z->s[i].path, size));
	done(z, r, r[0].ret == 0);
}

/* A donor per side, the same content: its fds in fd[], or -1. */
static int make_donors(struct fz *z, size_t size, int fd[NSIDE])
{
	if (size > BUFMAX)
		size = BUFMAX;
	z_wdata(z, size);
	for (int i = 0; i < NSIDE; i++) {
		fd[i] = open(z->s[i].donor, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd[i] < 0 || pwrite_full(fd[i], z->wbuf, size, 0))
			die("fuzz: making the donor %s: %s", z->s[i].donor, strerror(errno));
	}
	return 0;
}

static void close_donors(int fd[NSIDE])
{
	for (int i = 0; i < NSIDE; i++)
		close(fd[i]);
}

void op_exchange(struct fz *z)
{
	int slot = wslot(z, "exchange"), dfd[NSIDE];
	size_t size = z_size(z), dsize = z_pct(z, 40) ? size : z_rand(z, 2 * MiB) + 1;
	struct xfs_exchange_range_fz x = {
		.file2_offset = z_off(z) & ~(PG - 1),
		.length = (z_rand(z, 64) + 1) * PG,
		.flags = (z_pct(z, 25) ? XCHG_TO_EOF : 0) | (z_pct(z, 10) ? XCHG_DRY_RUN : 0) |
			 (z_pct(z, 10) ? XCHG_DSYNC : 0) | (z_pct(z, 10) ? XCHG_FILE1_WRITTEN : 0),
	};
	struct res r[NSIDE];

	if (slot < 0)
		return;
	x.file1_offset = z_pct(z, 50) ? x.file2_offset : z_rand(z, dsize / PG + 1) * PG;
	if (z_pct(z, 10))
		x.length += z_rand(z, PG);
	make_donors(z, dsize, dfd);
	z_desc(z, "XFS_IOC_EXCHANGE_RANGE %s off %llu with a donor of %zu bytes off %llu len %llu flags %#llx",
	       z_fdname(z, slot), (unsigned long long)x.file2_offset, dsize,
	       (unsigned long long)x.file1_offset, (unsigned long long)x.length,
	       (unsigned long long)x.flags);
	for (int i = 0; i < NSIDE; i++) {
		x.file1_fd = dfd[i];
		res_set(&r[i], ioctl(z->s[i].fds[slot].fd, XFS_IOC_EXCHANGE_RANGE_FZ, &x));
	}
	done(z, r, r[0].ret == 0 && !(x.flags & XCHG_DRY_RUN));
	if (!z->failed)
		z_same_files(z, dfd[0], dfd[1], "donor");
	close_donors(dfd);
}

/*
 * XFS_IOC_SWAPEXT refuses (EINVAL) files whose forks cannot take each
 * other's extents: that depends on how many extents allocation gave each
 * file and on whether it has an attribute fork, not on its content.
 * True when the two sides differ there, for the targets or the donors.
 */
static int swapext_layouts_differ(struct fz *z, int slot, const int dfd[NSIDE])
{
	struct fsxattr x[NSIDE][2];

	for (int i = 0; i < NSIDE; i++)
		if (ioctl(z->s[i].fds[slot].fd, FS_IOC_FSGETXATTR, &x[i][0]) ||
		    ioctl(dfd[i], FS_IOC_FSGETXATTR, &x[i][1]))
			return 1;
	for (int f = 0; f < 2; f++)
		if (x[0][f].fsx_nextents != x[1][f].fsx_nextents ||
		    (x[0][f].fsx_xflags ^ x[1][f].fsx_xflags) & FS_XFLAG_HASATTR)
			return 1;
	return 0;
}

/* XFS_IOC_SWAPEXT: whole files of one size; the target's times must match. */
void op_swapext(struct fz *z)
{
	int slot = wslot(z, "swapext"), dfd[NSIDE], stale = z_pct(z, 10);
	size_t size = z_size(z), dsize = z_pct(z, 85) ? size : size + PG;
	struct res r[NSIDE];

	if (slot < 0)
		return;
	make_donors(z, dsize, dfd);
	z_desc(z, "XFS_IOC_SWAPEXT %s with a donor of %zu bytes%s", z_fdname(z, slot), dsize,
	       stale ? ", stale times" : "");
	if (swapext_layouts_differ(z, slot, dfd)) {
		z_note(z, " -> not compared: the two sides' extent counts or attribute forks differ");
		z->uncompared++;
		close_donors(dfd);
		return;
	}
	for (int i = 0; i < NSIDE; i++) {
		int fd = z->s[i].fds[slot].fd;
		struct xfs_swapext_fz sx = { .sx_fdtarget = fd, .sx_fdtmp = dfd[i], .sx_length = size };
		struct stat st;

		if (fstat(fd, &st) == 0) {
			sx.sx_stat.bs_ctime = (struct xfs_bstime_fz){ st.st_ctim.tv_sec - stale, st.st_ctim.tv_nsec };
			sx.sx_stat.bs_mtime = (struct xfs_bstime_fz){ st.st_mtim.tv_sec, st.st_mtim.tv_nsec };
		}
		res_set(&r[i], ioctl(fd, XFS_IOC_SWAPEXT_FZ, &sx));
	}
	done(z, r, r[0].ret == 0);
	if (!z->failed)
		z_same_files(z, dfd[0], dfd[1], "donor");
	close_donors(dfd);
}

/* EXT4_IOC_MOVE_EXT: the donor's blocks move into the file. */
void op_move_ext(struct fz *z)
{
	int slot = wslot(z, "move_ext"), dfd[NSIDE];
	size_t size = z_size(z), dsize = z_pct(z, 50) ? size : z_rand(z, 2 * MiB) + 1;
	struct move_extent_fz me = {
		.orig_start = z_rand(z, size / PG + 2),
		.len = z_rand(z, 64) + 1,
	};
	uint64_t moved[NSIDE];
	struct res r[NSIDE];

	if (slot < 0)
		return;
	me.donor_start = z_pct(z, 50) ? me.orig_start : z_rand(z, dsize / PG + 1);
	make_donors(z, dsize, dfd);
	for (int i = 0; i < NSIDE; i++)
		if (fsync(dfd[i]))
			die("fuzz: fsync the donor: %s", strerror(errno));
	z_desc(z, "EXT4_IOC_MOVE_EXT %s block %llu from a donor of %zu bytes block %llu, %llu blocks",
	       z_fdname(z, slot), (unsigned long long)me.orig_start, dsize,
	       (unsigned long long)me.donor_start, (unsigned long long)me.len);
	for (int i = 0; i < NSIDE; i++) {
		struct move_extent_fz m = me;

		m.donor_fd = dfd[i];
		res_set(&r[i], ioctl(z->s[i].fds[slot].fd, EXT4_IOC_MOVE_EXT_FZ, &m));
		moved[i] = m.moved_len;
		r[i].data = (unsigned char *)&moved[i];
		r[i].len = sizeof(moved[i]);
	}
	done(z, r, r[0].ret == 0 && moved[0] > 0);
	if (!z->failed)
		z_same_files(z, dfd[0], dfd[1], "donor");
	close_donors(dfd);
}
