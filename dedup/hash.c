// SPDX-License-Identifier: GPL-2.0
#include "hash.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "util.h"

int hasher_init(struct hasher *h, size_t bufsize)
{
	const char *delay = getenv(HASH_DELAY_ENV);

	memset(h, 0, sizeof(*h));
	h->bufsize = bufsize;
	h->buf = malloc(bufsize);
	h->ctx = EVP_MD_CTX_new();
	/* An explicit fetch once per thread, not an implicit one per file. */
	h->md = EVP_MD_fetch(NULL, "SHA256", NULL);
	if (delay)
		h->delay_us = strtoul(delay, NULL, 10);
	if (!h->buf || !h->ctx || !h->md) {
		hasher_free(h);
		return -1;
	}
	return 0;
}

void hasher_free(struct hasher *h)
{
	EVP_MD_CTX_free(h->ctx);
	EVP_MD_free(h->md);
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

static void test_delay(const struct hasher *h)
{
	struct timespec ts = {
		.tv_sec = (time_t)(h->delay_us / 1000000),
		.tv_nsec = (long)(h->delay_us % 1000000) * 1000,
	};

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
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

int hash_fd(struct hasher *h, int fd, struct content_key *key,
	    struct stat *seen, char *why, size_t whylen)
{
	struct stat before, after;
	uint64_t done = 0, size;
	unsigned int mdlen = 0;
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
	size = (uint64_t)before.st_size;
	if (lseek(fd, 0, SEEK_SET) != 0) {
		snprintf(why, whylen, "cannot seek: %s", errstr(errno));
		return -1;
	}
	/* Advice only; a failure changes nothing about the result. */
	(void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	if (!EVP_DigestInit_ex(h->ctx, h->md, NULL)) {
		snprintf(why, whylen, "cannot start sha256 (OpenSSL error)");
		return -1;
	}
	/*
	 * Read exactly the size fstat() reported, so a file that keeps growing
	 * cannot keep us here; one more read below proves that was the end.
	 */
	while (done < size) {
		uint64_t left = size - done;
		size_t want = left < h->bufsize ? (size_t)left : h->bufsize;

		n = read_retry(fd, h->buf, want);
		if (n < 0) {
			snprintf(why, whylen, "read error at offset %llu: %s",
				 (unsigned long long)done, errstr(errno));
			return -1;
		}
		if (n == 0) {
			snprintf(why, whylen,
				 "file changed while hashed (ended at %llu of %llu bytes)",
				 (unsigned long long)done, (unsigned long long)size);
			return -1;
		}
		if (!EVP_DigestUpdate(h->ctx, h->buf, (size_t)n)) {
			snprintf(why, whylen, "sha256 failed (OpenSSL error)");
			return -1;
		}
		done += (uint64_t)n;
		if (h->delay_us)
			test_delay(h);
		if (h->after_chunk)
			h->after_chunk(h->after_chunk_arg, done);
	}
	n = read_retry(fd, h->buf, 1);
	if (n < 0) {
		snprintf(why, whylen, "read error at offset %llu: %s",
			 (unsigned long long)done, errstr(errno));
		return -1;
	}
	if (n > 0) {
		snprintf(why, whylen, "file changed while hashed (grew past %llu bytes)",
			 (unsigned long long)size);
		return -1;
	}
	if (fstat(fd, &after) != 0) {
		snprintf(why, whylen, "cannot stat: %s", errstr(errno));
		return -1;
	}
	moved = what_changed(&before, &after);
	if (moved) {
		snprintf(why, whylen, "file changed while hashed (%s moved)", moved);
		return -1;
	}
	if (!EVP_DigestFinal_ex(h->ctx, key->digest, &mdlen) ||
	    mdlen != sizeof(key->digest)) {
		snprintf(why, whylen, "sha256 failed (OpenSSL error)");
		return -1;
	}
	key->size = size;
	if (seen)
		*seen = after;
	return 0;
}
