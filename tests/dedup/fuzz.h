/*
 * Shared by the parts of fuzz (see fuzz.c): the two sides (the tagged file
 * and its untagged twin), their open fds and mappings, the run's state, and
 * the helpers every operation uses to draw arguments and compare results.
 * Each fz_*.c file holds the operations of one kind; the table of all of
 * them is in fuzz.c.
 */
#ifndef DEDUP_FUZZ_H
#define DEDUP_FUZZ_H

#include "common.h"

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define NSIDE 2		/* 0: the tagged file, 1: its untagged twin */
#define NFD 6		/* fd slots per side */
#define NMAP 6		/* mapping slots per side */
#define BUFMAX (4 * MiB + 64 * KiB)	/* the longest single transfer */
#define MAXSIZE (12 * MiB)		/* writes keep the file under this */
#define PG 4096UL
/* On the twin while the tagged file has its key: as big as the key. */
#define TWIN_ATTR "user.pcdedup"

struct fd_slot {
	int fd;		/* -1 when closed */
	int flags;	/* open flags */
	int keyed;	/* the tagged file had its key at open: maybe a share open */
};

struct map_slot {
	unsigned char *p;	/* NULL when unmapped */
	size_t len;
	off_t off;
	int prot, flags;
	int keyed;		/* made from a keyed fd */
	long wgen;		/* data changes before it was made */
	long step;
	int cow;		/* private, and written through: its own pages */
};

struct side {
	const char *name;	/* "tagged", "twin" */
	char path[PATH_MAX];	/* the file under test */
	char src[PATH_MAX];	/* a companion to copy and clone from */
	char scr[PATH_MAX];	/* a companion to copy and clone into */
	char donor[PATH_MAX];	/* exchanged with the file (swapext, ...) */
	struct fd_slot fds[NFD];
	struct map_slot maps[NMAP];
	int src_fd, scr_fd;	/* companions, O_RDWR */
	int tmp_fd;		/* a tmpfs file for sendfile */
	unsigned char *buf;	/* what an operation read (BUFMAX, aligned) */
	unsigned char *aux;	/* a second buffer (BUFMAX, aligned) */
};

/* One side's result of one operation. */
struct res {
	long ret;		/* >= 0, or -1 with err */
	int err;
	const unsigned char *data;	/* bytes to compare, len of them */
	size_t len;
	int sig;		/* a mapping access faulted: the signal ... */
	size_t fault;		/* ... at this offset */
	int skip;		/* not compared (a relaxed mapping) */
};

enum { MAPS_LOOSE, MAPS_SHARE, MAPS_STRICT };
enum { KEY_OPEN, KEY_DATA, KEY_NONE };

struct fz {
	/* options */
	uint64_t seed;
	long steps;
	const char *dir, *mnt, *tool, *trace;
	int maps_mode, key_mode;
	int share_check;
	int level2;		/* tag at tree level 2 where the file has one */
	int verbose;		/* print every step */
	int keep;		/* leave the files behind */
	long log_lines;
	long fixed_size;	/* --size, or -1 */
	int rwf_mask;		/* RWF_* flags drawn at most */
	char only[1024], skip[1024];

	/* the run */
	uint64_t rng;
	long step;
	long onset;		/* no write-side operation before this step */
	long wgen;		/* data changes so far (successful on both) */
	int key_gone;		/* the key must be gone: a write-side event */
	int wopened;		/* the tagged file was opened for write */
	long key_lost_step;	/* first step that found the key gone */
	int twin_attr;		/* the twin still has TWIN_ATTR */
	long relaxed;		/* mapping compares skipped */
	long modelled;		/* of those, checked against the share model */
	long uncompared;	/* swapext steps skipped: layouts differ */
	char fstype[32], dev[PATH_MAX];
	int is_xfs, is_ext4;
	char wdir[PATH_MAX - 64];	/* DIR/fz-SEED */
	char peer[PATH_MAX];	/* another tagged member of the same content */
	int peer_fd;
	unsigned char *orig;	/* the content the files were tagged with */
	size_t orig_len;
	unsigned char *wbuf;	/* data to write (BUFMAX, aligned) */
	int trace_fd;

	void *ring;		/* struct io_uring, when available */
	unsigned long aio;	/* aio_context_t, 0 when unavailable */

	struct side s[NSIDE];

	/* the current step */
	char desc[512];
	char out[1024];
	int failed;
	char why[2048];
	char **log;
	long nlog, caplog;
};

/* fuzz.c: drawing arguments */
uint64_t z_rand(struct fz *z, uint64_t n);	/* [0, n) */
int z_pct(struct fz *z, int pct);		/* true pct% of the time */
size_t z_size(struct fz *z);			/* the twin's size now */
off_t z_off(struct fz *z);			/* an offset near the data */
size_t z_len(struct fz *z);			/* a transfer length */
void z_align(struct fz *z, int slot, off_t *off, size_t *len, size_t *bufoff);
void z_dio_clamp(struct fz *z, int slot, off_t off, size_t *len);
void z_wdata(struct fz *z, size_t n);		/* n random bytes in wbuf */
int z_pick_fd(struct fz *z);			/* an open slot, or -1 */
int z_pick_wfd(struct fz *z);			/* mostly a writable one */
int z_rwf(struct fz *z, int write);		/* RWF_* flags for preadv2 and co */
int z_pick_map(struct fz *z);			/* a mapped slot, or -1 */
const char *z_fdname(struct fz *z, int slot);	/* "fd2(RDWR|DIRECT)" */
const char *rwf_name(int flags);

/* fuzz.c: describing, comparing, failing */
void z_desc(struct fz *z, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void z_note(struct fz *z, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void z_fail(struct fz *z, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void res_set(struct res *r, long ret);	/* ret, and errno when ret < 0 */
int z_same(struct fz *z, struct res r[NSIDE]);
void z_data_event(struct fz *z);	/* the file's data or size changed */
void z_key_event(struct fz *z);		/* the key must be gone from now on */
int z_key_present(const char *path);	/* 1, 0, or -1 (errno) */
long z_counter(const char *name);	/* a pcdedup event counter, -1 if none */
int z_nowait_retry(struct fz *z, struct res r[NSIDE], int flags,
		   long (*blocking)(struct fz *z, int side, void *arg), void *arg);

/* fz_fs.c: opens and the filesystem */
int fs_detect(struct fz *z);
void fd_open_slot(struct fz *z, int slot, int flags);
void fd_close_all(struct fz *z);
void map_unmap_all(struct fz *z);
int side_open_companions(struct fz *z);
void side_close_companions(struct fz *z);
void op_open(struct fz *z);
void op_close(struct fz *z);
void op_drop_caches(struct fz *z);
void op_freeze(struct fz *z);
void op_remount(struct fz *z);
void op_fsync(struct fz *z);
void op_fstat(struct fz *z);
void op_xattr(struct fz *z);
void op_peer(struct fz *z);

/* fz_read.c: synchronous reads and copies out of the file */
void op_read(struct fz *z);
void op_pread(struct fz *z);
void op_readv(struct fz *z);
void op_preadv2(struct fz *z);
void op_lseek(struct fz *z);
void op_fadvise(struct fz *z);
void op_readahead(struct fz *z);
void op_cachestat(struct fz *z);
void op_splice_out(struct fz *z);
void op_sendfile(struct fz *z);
void op_cfr_from(struct fz *z);
void op_clone_from(struct fz *z);

/* fz_async.c: io_uring and Linux AIO */
int async_setup(struct fz *z);
void async_teardown(struct fz *z);
void op_uring_read(struct fz *z);
void op_uring_write(struct fz *z);
void op_aio_read(struct fz *z);
void op_aio_write(struct fz *z);

/* fz_map.c: mappings and page faults */
void op_mmap(struct fz *z);
void op_munmap(struct fz *z);
void op_fault_read(struct fz *z);
void op_fault_write(struct fz *z);
void op_madvise(struct fz *z);
void op_mincore(struct fz *z);
void op_msync(struct fz *z);
/* Copy n bytes of a mapping; 0, or the signal with *fault set. */
int map_copy(void *dst, const void *map, size_t n, size_t *fault);
int map_store(void *map, const void *src, size_t n, size_t *fault);
int map_relaxed(struct fz *z, const struct map_slot *m);

/* fz_write.c: everything that changes the file's data or size */
void op_write(struct fz *z);
void op_pwrite(struct fz *z);
void op_pwritev2(struct fz *z);
void op_splice_in(struct fz *z);
void op_cfr_into(struct fz *z);
void op_clone_into(struct fz *z);
void op_fallocate(struct fz *z);
void op_ftruncate(struct fz *z);
void op_truncate(struct fz *z);
void op_exchange(struct fz *z);
void op_swapext(struct fz *z);
void op_move_ext(struct fz *z);

/* Read a whole file (fd) into a malloc'd buffer; -1 with errno on error. */
ssize_t slurp_fd(int fd, unsigned char **data);
int pwrite_full(int fd, const void *buf, size_t len, off_t off);
/* Compare two companion files (whole, from offset 0); fails the step. */
int z_same_files(struct fz *z, int fd0, int fd1, const char *what);

#endif
