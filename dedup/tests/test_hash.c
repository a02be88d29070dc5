// SPDX-License-Identifier: GPL-2.0
/*
 * File hashing against sha256sum at sizes around page and buffer
 * boundaries, a sparse file, and files that change while they are hashed
 * (driven by the hasher's per-chunk hook, so every case is deterministic).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "hash.h"

static char *dir;

static void to_hex(const uint8_t *d, char hex[65])
{
	for (int i = 0; i < 32; i++)
		sprintf(hex + 2 * i, "%02x", d[i]);
}

/* Hash @path with a buffer of @bufsize bytes; hex digest or NULL + @why. */
static bool hash_path(const char *path, size_t bufsize, char hex[65],
		      uint64_t *size, char *why, size_t whylen)
{
	struct content_key key;
	struct hasher h;
	int fd = open(path, O_RDONLY);
	int r;

	if (fd < 0) {
		snprintf(why, whylen, "open: %s", strerror(errno));
		return false;
	}
	if (hasher_init(&h, bufsize) != 0) {
		snprintf(why, whylen, "hasher_init failed");
		close(fd);
		return false;
	}
	r = hash_fd(&h, fd, &key, NULL, why, whylen);
	hasher_free(&h);
	close(fd);
	if (r != 0)
		return false;
	to_hex(key.digest, hex);
	*size = key.size;
	return true;
}

/* Hash with the default buffer and with small odd ones; all must agree. */
static void check_against_sha256sum(const char *name, const char *path,
				    uint64_t want_size)
{
	static const size_t bufsizes[] = { HASH_DEFAULT_BUFSIZE, 4096, 1000 };
	char want[65], got[65], why[256];
	uint64_t size;

	if (!sha256sum_hex(path, want)) {
		fail(name, "sha256sum failed");
		return;
	}
	for (size_t i = 0; i < sizeof(bufsizes) / sizeof(bufsizes[0]); i++) {
		if (!hash_path(path, bufsizes[i], got, &size, why, sizeof(why))) {
			fail(name, "buffer %zu: %s", bufsizes[i], why);
			return;
		}
		if (strcmp(got, want) != 0 || size != want_size) {
			fail(name, "buffer %zu: got %s size %llu, sha256sum %s size %llu",
			     bufsizes[i], got, (unsigned long long)size, want,
			     (unsigned long long)want_size);
			return;
		}
	}
	pass(name);
}

static void test_sizes(void)
{
	static const uint64_t mib2 = 2 * 1024 * 1024;
	static const uint64_t sizes[] = { 0, 1, 4095, 4096, 4097, 65535, 65536,
					  65537, mib2 - 1, mib2, mib2 + 1 };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		char name[64], file[64], *path;

		snprintf(file, sizeof(file), "size-%llu", (unsigned long long)sizes[i]);
		snprintf(name, sizeof(name), "hash-size-%llu", (unsigned long long)sizes[i]);
		path = path_join(dir, file);
		write_pattern(path, sizes[i], (unsigned)i);
		check_against_sha256sum(name, path, sizes[i]);
		free(path);
	}
}

/* Holes read as zeros; data at the start, in the middle and at the end. */
static void test_sparse(void)
{
	const off_t size = 5 * 1024 * 1024 + 123;
	char *path = path_join(dir, "sparse");
	struct stat st;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0 || ftruncate(fd, size) != 0 ||
	    pwrite(fd, "head", 4, 0) != 4 ||
	    pwrite(fd, "middle", 6, 2 * 1024 * 1024 + 7) != 6 ||
	    pwrite(fd, "tail", 4, size - 4) != 4 || fstat(fd, &st) != 0) {
		fail("hash-sparse", "cannot create sparse file: %s", strerror(errno));
		return;
	}
	close(fd);
	if ((off_t)st.st_blocks * 512 >= size)
		skip("hash-sparse-is-sparse", "filesystem allocated the holes");
	else
		pass("hash-sparse-is-sparse");
	check_against_sha256sum("hash-sparse", path, (uint64_t)size);
	free(path);
}

/* What the per-chunk hook does to the file being hashed, and when. */
struct meddle {
	const char *path;
	uint64_t at;		/* act once this many bytes were hashed */
	void (*act)(const char *path);
	bool done;
};

static void meddle_hook(void *arg, uint64_t done)
{
	struct meddle *m = arg;

	if (!m->done && done >= m->at) {
		m->act(m->path);
		m->done = true;
	}
}

static void act_append(const char *path)
{
	int fd = open(path, O_WRONLY | O_APPEND);

	if (fd >= 0) {
		if (write(fd, "more", 4) != 4)
			perror("append");
		close(fd);
	}
}

static void act_truncate(const char *path)
{
	if (truncate(path, 8192) != 0)
		perror("truncate");
}

/* Same size, new bytes: only the timestamps can tell. */
static void act_overwrite(const char *path)
{
	int fd = open(path, O_WRONLY);

	if (fd >= 0) {
		if (pwrite(fd, "XXXX", 4, 100) != 4)
			perror("pwrite");
		close(fd);
	}
}

/* Metadata only: ctime moves, mtime and size do not. */
static void act_chmod(const char *path)
{
	if (chmod(path, 0600) != 0)
		perror("chmod");
}

static void test_changed(const char *name, void (*act)(const char *path),
			 const char *want_reason)
{
	const size_t bufsize = 65536;
	struct meddle m = { .at = bufsize, .act = act };
	struct content_key key;
	char why[256] = "";
	struct hasher h;
	char *path = path_join(dir, name);
	/* Let the coarse kernel clock tick past the file's creation time. */
	const struct timespec tick = { .tv_nsec = 50 * 1000 * 1000 };
	int fd, r;

	write_pattern(path, 4 * bufsize, 7);
	nanosleep(&tick, NULL);
	m.path = path;
	fd = open(path, O_RDONLY);
	if (fd < 0 || hasher_init(&h, bufsize) != 0) {
		fail(name, "setup failed");
		return;
	}
	h.after_chunk = meddle_hook;
	h.after_chunk_arg = &m;
	r = hash_fd(&h, fd, &key, NULL, why, sizeof(why));
	hasher_free(&h);
	close(fd);
	if (!m.done)
		fail(name, "hook never ran");
	else if (r == 0)
		fail(name, "hash succeeded on a file that changed");
	else
		expect(name, strstr(why, "changed while hashed") && strstr(why, want_reason),
		       "reason '%s' lacks 'changed while hashed' and '%s'", why, want_reason);
	free(path);
}

static void test_not_regular(void)
{
	struct content_key key;
	struct hasher h;
	char why[256] = "";
	int p[2];

	if (pipe(p) != 0 || hasher_init(&h, 4096) != 0) {
		fail("hash-not-regular", "setup failed");
		return;
	}
	expect("hash-not-regular", hash_fd(&h, p[0], &key, NULL, why, sizeof(why)) != 0 &&
	       strstr(why, "not a regular file"), "pipe accepted: '%s'", why);
	hasher_free(&h);
	close(p[0]);
	close(p[1]);
}

/* The environment hook is read at init and slows each chunk down. */
static void test_delay_env(void)
{
	char *path = path_join(dir, "delay");
	struct content_key key;
	struct hasher h;
	char why[256];
	double t0;
	struct timespec ts;
	int fd;

	write_pattern(path, 4 * 4096, 3);
	setenv(HASH_DELAY_ENV, "20000", 1);
	fd = open(path, O_RDONLY);
	if (fd < 0 || hasher_init(&h, 4096) != 0) {
		fail("hash-delay-env", "setup failed");
		unsetenv(HASH_DELAY_ENV);
		return;
	}
	unsetenv(HASH_DELAY_ENV);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	t0 = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	if (hash_fd(&h, fd, &key, NULL, why, sizeof(why)) != 0) {
		fail("hash-delay-env", "%s", why);
	} else {
		double t1;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		t1 = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
		/* Four chunks of 20 ms each at the very least. */
		expect("hash-delay-env", h.delay_us == 20000 && t1 - t0 >= 0.08,
		       "delay %lu us, took %.3f s", h.delay_us, t1 - t0);
	}
	hasher_free(&h);
	close(fd);
	free(path);
}

int main(void)
{
	dir = make_tmpdir("hash");
	test_sizes();
	test_sparse();
	test_changed("hash-changed-append", act_append, "grew");
	test_changed("hash-changed-truncate", act_truncate, "ended at");
	test_changed("hash-changed-overwrite", act_overwrite, "modification time");
	test_changed("hash-changed-chmod", act_chmod, "change time");
	test_not_regular();
	test_delay_env();
	return harness_exit();
}
