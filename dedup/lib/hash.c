// SPDX-License-Identifier: GPL-2.0
#include "hash.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libfsverity.h>
#include <linux/fsverity.h>

#include "util.h"

/* What O_DIRECT asks of a buffer, its length and the file offset. */
#define DIRECT_ALIGN	4096

int hasher_init(struct hasher *h, size_t bufsize)
{
	memset(h, 0, sizeof(*h));
	h->bufsize = bufsize;
	h->buf = aligned_alloc(DIRECT_ALIGN,
			       (bufsize + DIRECT_ALIGN - 1) / DIRECT_ALIGN * DIRECT_ALIGN);
	if (!h->buf) {
		hasher_free(h);
		return -1;
	}
	return 0;
}

void hasher_free(struct hasher *h)
{
	free(h->buf);
	memset(h, 0, sizeof(*h));
}

static bool same_time(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

/* What moved between @before and @after, or NULL if the file is the same. */
static const char *what_changed(const struct stat *before,
				const struct stat *after)
{
	if (before->st_size != after->st_size)
		return "size";
	if (!same_time(&before->st_mtim, &after->st_mtim))
		return "modification time";
	if (!same_time(&before->st_ctim, &after->st_ctim))
		return "change time";
	return NULL;
}

/*
 * read() that retries on EINTR; returns bytes read, 0 at EOF, -1 on error.
 * Plain read(), not pread(): the file position in /proc/PID/fdinfo then
 * shows how far a hash got, which the tests use to time a concurrent write.
 */
static ssize_t read_retry(int fd, void *buf, size_t len)
{
	ssize_t n;

	do
		n = read(fd, buf, len);
	while (n < 0 && errno == EINTR);
	return n;
}

/*
 * libfsverity asks for the data a block at a time; this serves it from
 * reads of up to h->bufsize bytes, and remembers why a read failed.
 */
struct reader {
	struct hasher *h;
	int fd;
	uint64_t size;		/* what fstat() said before the hash */
	uint64_t done;		/* bytes read from the file so far */
	size_t pos, fill;	/* served and valid bytes of h->buf */
	char *why;
	size_t whylen;
	bool failed;		/* @why holds the reason */
	bool direct;		/* @fd was opened with O_DIRECT */
	bool eof;		/* a direct read came back short: the end */
};

static int refill(struct reader *rd)
{
	struct hasher *h = rd->h;
	uint64_t left = rd->size - rd->done;
	/* A direct read's length stays aligned: the last one comes back short. */
	size_t want = left < h->bufsize && !rd->direct ? (size_t)left : h->bufsize;
	ssize_t n = read_retry(rd->fd, h->buf, want);

	if (n < 0) {
		snprintf(rd->why, rd->whylen, "read error at offset %llu: %s",
			 (unsigned long long)rd->done, errstr(errno));
		rd->failed = true;
		return -EIO;
	}
	if (n == 0) {
		snprintf(rd->why, rd->whylen,
			 "file changed while hashed (ended at %llu of %llu bytes)",
			 (unsigned long long)rd->done, (unsigned long long)rd->size);
		rd->failed = true;
		return -EIO;
	}
	if (rd->direct && (size_t)n < want)
		rd->eof = true;
	rd->done += (uint64_t)n;
	rd->pos = 0;
	rd->fill = (size_t)n;
	if (h->after_chunk)
		h->after_chunk(h->after_chunk_arg, rd->done, (size_t)n);
	return 0;
}

static int read_data(void *arg, void *buf, size_t count)
{
	struct reader *rd = arg;
	uint8_t *out = buf;

	while (count > 0) {
		size_t n;

		if (rd->pos == rd->fill) {
			int err = refill(rd);

			if (err)
				return err;
		}
		n = rd->fill - rd->pos < count ? rd->fill - rd->pos : count;
		memcpy(out, rd->h->buf + rd->pos, n);
		rd->pos += n;
		out += n;
		count -= n;
	}
	return 0;
}

static int take_block(void *ctx, const void *block, size_t size, uint64_t offset)
{
	return tree_add_block(ctx, block, size, offset);
}

static int take_descriptor(void *ctx, const void *desc, size_t size)
{
	if (size < sizeof(struct fsverity_descriptor))
		return -EINVAL;
	tree_set_root(ctx, (const uint8_t *)desc +
		      offsetof(struct fsverity_descriptor, root_hash));
	return 0;
}

/* Build @tree from the file @rd reads; 0 or -1 with a reason. */
static int compute_tree(struct reader *rd, struct file_tree *tree)
{
	const struct libfsverity_metadata_callbacks cbs = {
		.ctx = tree,
		.merkle_tree_block = take_block,
		.descriptor = take_descriptor,
	};
	struct libfsverity_merkle_tree_params params = {
		.version = 1,
		.hash_algorithm = FS_VERITY_HASH_ALG_SHA256,
		.file_size = rd->size,
		.block_size = KEY_BLOCK_SIZE,
		.metadata_callbacks = &cbs,
	};
	struct libfsverity_digest *d = NULL;
	int err = libfsverity_compute_digest(rd, read_data, &params, &d);

	if (err == 0 && d->digest_size != KEY_HASH_LEN)
		err = -EINVAL;
	if (err) {
		if (!rd->failed)
			snprintf(rd->why, rd->whylen, "fs-verity digest failed: %s",
				 errstr(-err));
		free(d);
		return -1;
	}
	memcpy(tree->digest, d->digest, KEY_HASH_LEN);
	free(d);
	return 0;
}

int hash_fd(struct hasher *h, int fd, struct file_tree *tree,
	    struct stat *seen, char *why, size_t whylen)
{
	struct reader rd = { .h = h, .fd = fd, .why = why, .whylen = whylen };
	struct stat before, after;
	const char *moved;
	ssize_t n;

	if (fstat(fd, &before) != 0) {
		snprintf(why, whylen, "cannot stat: %s", errstr(errno));
		return -1;
	}
	if (!S_ISREG(before.st_mode)) {
		snprintf(why, whylen, "not a regular file");
		return -1;
	}
	if (before.st_size == 0) {
		snprintf(why, whylen, "empty file: nothing to key");
		return -1;
	}
	rd.size = (uint64_t)before.st_size;
	rd.direct = (fcntl(fd, F_GETFL) & O_DIRECT) && h->bufsize % DIRECT_ALIGN == 0;
	if (lseek(fd, 0, SEEK_SET) != 0) {
		snprintf(why, whylen, "cannot seek: %s", errstr(errno));
		return -1;
	}
	/* Advice only; a failure changes nothing about the result. */
	(void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	/*
	 * libfsverity reads exactly the size fstat() reported, so a file that
	 * keeps growing cannot keep us here; one more read below proves that
	 * was the end.
	 */
	tree_init(tree, rd.size, h->leaves);
	if (compute_tree(&rd, tree) != 0)
		goto fail;
	/* A direct read that came back short was the end; else read on. */
	n = rd.eof ? 0 : read_retry(fd, h->buf, rd.direct ? h->bufsize : 1);
	if (n < 0) {
		snprintf(why, whylen, "read error at offset %llu: %s",
			 (unsigned long long)rd.done, errstr(errno));
		goto fail;
	}
	if (n > 0) {
		snprintf(why, whylen, "file changed while hashed (grew past %llu bytes)",
			 (unsigned long long)rd.size);
		goto fail;
	}
	if (fstat(fd, &after) != 0) {
		snprintf(why, whylen, "cannot stat: %s", errstr(errno));
		goto fail;
	}
	moved = what_changed(&before, &after);
	if (moved) {
		snprintf(why, whylen, "file changed while hashed (%s moved)", moved);
		goto fail;
	}
	if (seen)
		*seen = after;
	return 0;
fail:
	tree_free(tree);
	return -1;
}
