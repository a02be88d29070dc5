/*
 * fuzz: opens and closes, the companion files, and what acts on the whole
 * filesystem (drop_caches, freeze, unmount and mount again); also fstat,
 * fsync, xattrs and reads of the peer member. See fuzz.c.
 */
#include "fuzz.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#define XFS_MAGIC 0x58465342
#define EXT4_MAGIC 0xEF53

/* The filesystem of DIR; with --mnt, the device and type to mount again. */
int fs_detect(struct fz *z)
{
	struct statfs sf;

	if (statfs(z->dir, &sf)) {
		fprintf(stderr, "fuzz: %s: %s\n", z->dir, strerror(errno));
		return -1;
	}
	z->is_xfs = sf.f_type == XFS_MAGIC;
	z->is_ext4 = sf.f_type == EXT4_MAGIC;
	if (z->mnt) {
		FILE *f = fopen("/proc/self/mountinfo", "r");
		char line[4096];
		size_t ml = strlen(z->mnt);

		if (strncmp(z->dir, z->mnt, ml) || (z->dir[ml] && z->dir[ml] != '/')) {
			fprintf(stderr, "fuzz: %s is not under --mnt %s\n", z->dir, z->mnt);
			return -1;
		}
		while (f && fgets(line, sizeof(line), f)) {
			char mp[PATH_MAX], *sep = strstr(line, " - ");

			if (sscanf(line, "%*s %*s %*s %*s %4095s", mp) != 1 || strcmp(mp, z->mnt) || !sep)
				continue;
			if (sscanf(sep + 3, "%31s %4095s", z->fstype, z->dev) != 2)
				z->dev[0] = 0;
		}
		if (f)
			fclose(f);
		if (!z->dev[0]) {
			fprintf(stderr, "fuzz: --mnt %s is not a mount point\n", z->mnt);
			return -1;
		}
	}
	return 0;
}

static void fd_close_side(struct side *s, int slot)
{
	if (s->fds[slot].fd >= 0)
		close(s->fds[slot].fd);
	s->fds[slot].fd = -1;
}

/* Open slot on both sides (closing what it held), comparing the outcome. */
void fd_open_slot(struct fz *z, int slot, int flags)
{
	int acc = flags & O_ACCMODE;
	int keyed = acc == O_RDONLY && !(flags & O_TRUNC) && z_key_present(z->s[0].path) == 1;
	/*
	 * A read-only open of the tagged file with its key, never opened for
	 * write (an open for write on a frozen filesystem leaves the key
	 * until the thaw), goes through its share: at every such open, not
	 * only the first, or a regression that makes later opens private
	 * compares two plain files unnoticed.
	 */
	int must_share = z->share_check && keyed && !z->wopened && !(flags & O_DIRECT);
	long shared0 = must_share ? z_counter("pcdedup_open_shared") : 0;
	struct res r[NSIDE];

	if (!z->desc[0])
		z_desc(z, "open fd%d %s%s%s%s%s%s", slot,
		       acc == O_RDONLY ? "O_RDONLY" : acc == O_WRONLY ? "O_WRONLY" : "O_RDWR",
		       flags & O_DIRECT ? "|O_DIRECT" : "", flags & O_APPEND ? "|O_APPEND" : "",
		       flags & O_TRUNC ? "|O_TRUNC" : "", flags & O_NOATIME ? "|O_NOATIME" : "",
		       flags & O_SYNC ? "|O_SYNC" : "");
	for (int i = 0; i < NSIDE; i++) {
		struct side *s = &z->s[i];
		int fd;

		fd_close_side(s, slot);
		fd = open(s->path, flags | O_CLOEXEC);
		res_set(&r[i], fd < 0 ? -1 : 0);
		s->fds[slot].fd = fd;
		s->fds[slot].flags = flags;
		s->fds[slot].keyed = keyed;
	}
	if (!z_same(z, r) || r[0].ret < 0) {
		for (int i = 0; i < NSIDE; i++)
			fd_close_side(&z->s[i], slot);
		return;
	}
	if (must_share && z_counter("pcdedup_open_shared") <= shared0) {
		z_fail(z, "the tagged file, with its key and no writer, opened privately (pcdedup_open_shared %ld -> %ld)",
		       shared0, z_counter("pcdedup_open_shared"));
		return;
	}
	if (acc != O_RDONLY) {
		z->wopened = 1;
		if (z->key_mode == KEY_OPEN)
			z_key_event(z);
	}
	if (flags & O_TRUNC)
		z_data_event(z);
}

void fd_close_all(struct fz *z)
{
	for (int i = 0; i < NSIDE; i++)
		for (int k = 0; k < NFD; k++)
			fd_close_side(&z->s[i], k);
}

void op_open(struct fz *z)
{
	int slot = z_rand(z, NFD), flags = O_RDONLY;

	if (z->step >= z->onset) {
		int a = z_rand(z, 10);

		flags = a < 5 ? O_RDONLY : a < 8 ? O_RDWR : O_WRONLY;
		if (flags != O_RDONLY && z_pct(z, 15))
			flags |= O_APPEND;
		if (z_pct(z, 6))
			flags |= O_TRUNC;	/* O_RDONLY|O_TRUNC truncates too */
		if (z_pct(z, 5))
			flags |= O_SYNC;
	}
	if (z_pct(z, 25))
		flags |= O_DIRECT;
	if (z_pct(z, 10))
		flags |= O_NOATIME;
	fd_open_slot(z, slot, flags);
}

void op_close(struct fz *z)
{
	int slot = z_pick_fd(z);
	struct res r[NSIDE];

	if (slot < 0) {
		z_desc(z, "close (no fd)");
		return;
	}
	z_desc(z, "close %s", z_fdname(z, slot));
	for (int i = 0; i < NSIDE; i++) {
		res_set(&r[i], close(z->s[i].fds[slot].fd));
		z->s[i].fds[slot].fd = -1;
	}
	z_same(z, r);
}

/* The companions: made with the same content on both sides, once. */
int side_open_companions(struct fz *z)
{
	int make = access(z->s[0].src, F_OK) != 0;
	size_t srclen = MiB + z_rand(z, 64 * KiB), scrlen = 256 * KiB;

	if (make)
		z_wdata(z, srclen);
	for (int i = 0; i < NSIDE; i++) {
		struct side *s = &z->s[i];

		s->src_fd = open(s->src, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
		s->scr_fd = open(s->scr, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
		if (s->src_fd < 0 || s->scr_fd < 0) {
			fprintf(stderr, "fuzz: %s: %s\n", s->src, strerror(errno));
			return -1;
		}
		if (make && (pwrite_full(s->src_fd, z->wbuf, srclen, 0) ||
			     pwrite_full(s->scr_fd, z->wbuf + 4096, scrlen, 0))) {
			fprintf(stderr, "fuzz: writing %s: %s\n", s->src, strerror(errno));
			return -1;
		}
		if (s->tmp_fd < 0 && (s->tmp_fd = temp_file(NULL)) < 0) {
			fprintf(stderr, "fuzz: a temp file in $TMPDIR: %s\n", strerror(errno));
			return -1;
		}
	}
	return 0;
}

void side_close_companions(struct fz *z)
{
	for (int i = 0; i < NSIDE; i++) {
		struct side *s = &z->s[i];

		if (s->src_fd >= 0)
			close(s->src_fd);
		if (s->scr_fd >= 0)
			close(s->scr_fd);
		s->src_fd = s->scr_fd = -1;
	}
}

static int write_str(const char *path, const char *v)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return -1;
	ret = write(fd, v, strlen(v)) == (ssize_t)strlen(v) ? 0 : -1;
	close(fd);
	return ret;
}

void op_drop_caches(struct fz *z)
{
	char v[2] = { "123"[z_rand(z, 3)], 0 };
	int do_sync = z_pct(z, 50);

	z_desc(z, "%sdrop_caches %s", do_sync ? "sync; " : "", v);
	if (do_sync)
		sync();
	if (write_str("/proc/sys/vm/drop_caches", v))
		z_fail(z, "%s: %s", z->desc, strerror(errno));
}

/*
 * Freeze the filesystem, read through an fd and a mapping of each side
 * while it is frozen (nothing that could wait for the thaw), thaw.
 */
void op_freeze(struct fz *z)
{
	int slot = z_pick_fd(z), m = z_pick_map(z);
	off_t off = z_off(z);
	size_t len = z_len(z), bo;
	int dfd = open(z->mnt ? z->mnt : z->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct res r[NSIDE];

	z_align(z, slot, &off, &len, &bo);
	z_dio_clamp(z, slot, off, &len);
	z_desc(z, "freeze; pread %s off %lld len %zu; read map%d; thaw",
	       slot >= 0 ? z_fdname(z, slot) : "(no fd)", (long long)off, len, m);
	if (dfd < 0 || ioctl(dfd, FIFREEZE, 0)) {
		z_note(z, " -> freeze: %s", strerror(errno));
		if (dfd >= 0)
			close(dfd);
		return;
	}
	if (slot >= 0) {
		for (int i = 0; i < NSIDE; i++) {
			struct side *s = &z->s[i];
			long ret = pread(s->fds[slot].fd, s->buf + bo, len, off);

			res_set(&r[i], ret);
			r[i].data = s->buf + bo;
			r[i].len = ret > 0 ? ret : 0;
		}
		z_same(z, r);
	}
	if (m >= 0 && !z->failed) {
		for (int i = 0; i < NSIDE; i++) {
			struct map_slot *ms = &z->s[i].maps[m];
			size_t n = ms->len < 64 * KiB ? ms->len : 64 * KiB, fault = 0;
			int sig = map_copy(z->s[i].aux, ms->p, n, &fault);

			res_set(&r[i], sig ? (long)fault : (long)n);
			r[i].sig = sig;
			r[i].fault = fault;
			r[i].data = z->s[i].aux;
			r[i].len = sig ? fault : n;
			r[i].skip = map_relaxed(z, ms);
		}
		z_same(z, r);
	}
	if (ioctl(dfd, FITHAW, 0))
		z_fail(z, "%s: thaw: %s", z->desc, strerror(errno));
	close(dfd);
}

/* Unmount and mount again: every fd and mapping goes first. */
void op_remount(struct fz *z)
{
	int tries;

	z_desc(z, "remount %s (%s on %s): close all, unmount, mount, open fd0 O_RDONLY",
	       z->mnt, z->fstype, z->dev);
	map_unmap_all(z);
	fd_close_all(z);
	side_close_companions(z);
	close(z->peer_fd);
	z->peer_fd = -1;
	for (tries = 0; umount(z->mnt); tries++) {
		if (errno != EBUSY || tries == 50) {
			z_fail(z, "%s: umount: %s", z->desc, strerror(errno));
			return;
		}
		usleep(100000);
	}
	if (mount(z->dev, z->mnt, z->fstype, 0, NULL)) {
		z_fail(z, "%s: mount: %s", z->desc, strerror(errno));
		return;
	}
	if (side_open_companions(z))
		die("fuzz: the companions after remount");
	z->peer_fd = open(z->peer, O_RDONLY | O_CLOEXEC);
	if (z->peer_fd < 0) {
		z_fail(z, "%s: open the peer: %s", z->desc, strerror(errno));
		return;
	}
	fd_open_slot(z, 0, O_RDONLY);
}

void op_fsync(struct fz *z)
{
	int slot = z_pick_fd(z), how = z_rand(z, 3);
	off_t off = z_off(z);
	size_t len = z_len(z);
	struct res r[NSIDE];

	if (slot < 0) {
		z_desc(z, "fsync (no fd)");
		return;
	}
	z_desc(z, "%s %s", how == 0 ? "fsync" : how == 1 ? "fdatasync" : "sync_file_range", z_fdname(z, slot));
	for (int i = 0; i < NSIDE; i++) {
		int fd = z->s[i].fds[slot].fd;

		res_set(&r[i], how == 0 ? fsync(fd) : how == 1 ? fdatasync(fd) :
			sync_file_range(fd, off, len, SYNC_FILE_RANGE_WAIT_BEFORE |
					SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER));
	}
	z_same(z, r);
}

/* What fstat says that both files must agree on. */
struct statsum {
	long long size;
	unsigned mode, nlink;
	long blksize;
};

void op_fstat(struct fz *z)
{
	int slot = z_pick_fd(z);
	struct statsum sum[NSIDE];
	struct res r[NSIDE];

	if (slot < 0) {
		z_desc(z, "fstat (no fd)");
		return;
	}
	z_desc(z, "fstat %s", z_fdname(z, slot));
	for (int i = 0; i < NSIDE; i++) {
		struct stat st;

		res_set(&r[i], fstat(z->s[i].fds[slot].fd, &st));
		memset(&sum[i], 0, sizeof(sum[i]));
		sum[i] = (struct statsum){ st.st_size, st.st_mode, st.st_nlink, st.st_blksize };
		r[i].data = (unsigned char *)&sum[i];
		r[i].len = r[i].ret ? 0 : sizeof(sum[i]);
	}
	z_same(z, r);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* listxattr, sorted, without the key and TWIN_ATTR: into buf, as "a\0b\0". */
static long xattr_list(const char *path, unsigned char *buf, size_t cap)
{
	char raw[4096], *names[256];
	long n = listxattr(path, raw, sizeof(raw)), k = 0, out = 0;

	if (n < 0)
		return -1;
	for (long i = 0; i < n && k < 256; i += strlen(raw + i) + 1)
		if (strcmp(raw + i, "trusted.pcdedup") && strcmp(raw + i, TWIN_ATTR))
			names[k++] = raw + i;
	qsort(names, k, sizeof(*names), cmp_str);
	for (long i = 0; i < k; i++) {
		size_t l = strlen(names[i]) + 1;

		if (out + l > cap)
			break;
		memcpy(buf + out, names[i], l);
		out += l;
	}
	return out;
}

/* A user.* attribute set, removed, read or listed, by path or by fd. */
void op_xattr(struct fz *z)
{
	static const char *names[] = { "user.fz", "user.fz2" };
	const char *name = names[z_rand(z, 2)];
	int what = z_rand(z, 4), slot = z_pct(z, 50) ? z_pick_fd(z) : -1;
	int flags = z_pct(z, 70) ? 0 : z_pct(z, 50) ? XATTR_CREATE : XATTR_REPLACE;
	size_t vlen = z_rand(z, 300);
	static const char *whats[] = { "set", "remove", "get", "list" };
	struct res r[NSIDE];

	if (what == 3)
		slot = -1;
	z_wdata(z, vlen);
	z_desc(z, "%sxattr %s %s %s len %zu flags %d", slot >= 0 ? "f" : "", whats[what],
	       slot >= 0 ? z_fdname(z, slot) : "path", what == 3 ? "" : name, vlen, flags);
	for (int i = 0; i < NSIDE; i++) {
		struct side *s = &z->s[i];
		int fd = slot >= 0 ? s->fds[slot].fd : -1;
		long ret;

		switch (what) {
		case 0:
			ret = fd >= 0 ? fsetxattr(fd, name, z->wbuf, vlen, flags) :
					setxattr(s->path, name, z->wbuf, vlen, flags);
			break;
		case 1:
			ret = fd >= 0 ? fremovexattr(fd, name) : removexattr(s->path, name);
			break;
		case 2:
			ret = fd >= 0 ? fgetxattr(fd, name, s->buf, 4096) :
					getxattr(s->path, name, s->buf, 4096);
			break;
		default:
			ret = xattr_list(s->path, s->buf, 4096);
			break;
		}
		res_set(&r[i], ret);
		if (what >= 2) {
			r[i].data = s->buf;
			r[i].len = ret > 0 ? ret : 0;
		}
	}
	z_same(z, r);
}

/*
 * The peer member, another file tagged with the same content, reads that
 * content whatever happens to the tagged file (through its open, or a
 * fresh one).
 */
void op_peer(struct fz *z)
{
	off_t off = z_rand(z, z->orig_len + 1);
	size_t len = z_len(z), want;
	int fresh = z_pct(z, 30), fd = z->peer_fd;
	unsigned char *b = z->s[0].aux;
	long ret, d;

	z_desc(z, "peer %spread off %lld len %zu", fresh ? "fresh open, " : "", (long long)off, len);
	if (fresh)
		fd = open(z->peer, O_RDONLY | O_CLOEXEC);
	ret = fd < 0 ? -1 : pread_full(fd, b, len, off);
	if (fresh && fd >= 0)
		close(fd);
	want = (size_t)off >= z->orig_len ? 0 : len < z->orig_len - off ? len : z->orig_len - off;
	if (ret < 0) {
		z_fail(z, "%s: %s", z->desc, strerror(errno));
		return;
	}
	z_note(z, " -> %ld", ret);
	if ((size_t)ret != want)
		z_fail(z, "%s: the peer member read %ld bytes, its content has %zu there", z->desc, ret, want);
	else if ((d = first_diff(b, z->orig + off, want)) >= 0)
		z_fail(z, "%s: the peer member reads bytes that are not its content at +%ld (%02x, want %02x)",
		       z->desc, (long)off + d, b[d], z->orig[off + d]);
}
