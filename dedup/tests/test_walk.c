// SPDX-License-Identifier: GPL-2.0
/*
 * The tree walk: what it reports for regular files, small files, symlinks
 * (never followed), special files, odd names, bad paths and mount points.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "harness.h"
#include "walk.h"

#define MAX_SEEN 4096

struct seen {
	int n;
	enum walk_event ev[MAX_SEEN];
	char *path[MAX_SEEN];
	int err[MAX_SEEN];
};

static void record(void *ctx, enum walk_event ev, const char *path,
		   const struct stat *st, int err)
{
	struct seen *s = ctx;

	/* Events other than errors must carry the entry's lstat(). */
	if ((ev == WALK_ERROR) != (st == NULL))
		fprintf(stderr, "walk: stat pointer wrong for %s\n", path);
	if (s->n < MAX_SEEN) {
		s->ev[s->n] = ev;
		s->path[s->n] = strdup(path);
		s->err[s->n] = err;
		s->n++;
	}
}

static void forget(struct seen *s)
{
	for (int i = 0; i < s->n; i++)
		free(s->path[i]);
	s->n = 0;
}

/* Event recorded for @path, or -1 if the walk never reported it. */
static int event_of(const struct seen *s, const char *path)
{
	int found = -1;

	for (int i = 0; i < s->n; i++) {
		if (strcmp(s->path[i], path) == 0) {
			if (found >= 0)
				return -2;	/* reported twice */
			found = (int)s->ev[i];
		}
	}
	return found;
}

static int count(const struct seen *s, enum walk_event ev)
{
	int n = 0;

	for (int i = 0; i < s->n; i++)
		n += s->ev[i] == ev;
	return n;
}

static bool any_under(const struct seen *s, const char *prefix)
{
	size_t len = strlen(prefix);

	for (int i = 0; i < s->n; i++)
		if (strncmp(s->path[i], prefix, len) == 0)
			return true;
	return false;
}

static char *root;

static char *at(const char *name)
{
	return path_join(root, name);
}

static void build_tree(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int sock;

	root = make_tmpdir("walk");
	write_pattern(at("big"), 8192, 1);
	write_pattern(at("exact"), 4096, 2);
	write_pattern(at("below"), 4095, 3);
	write_pattern(at("empty"), 0, 4);
	mkdir(at("sub"), 0755);
	mkdir(at("sub/deeper"), 0755);
	write_pattern(at("sub/deeper/file"), 5000, 5);
	write_pattern(at("new\nline"), 5000, 6);
	write_pattern(at("tab\tand space"), 5000, 7);
	if (symlink("big", at("link-to-file")) != 0 ||
	    symlink("sub", at("link-to-dir")) != 0 ||
	    symlink("/nonexistent/pcdedup", at("dangling")) != 0 ||
	    mkfifo(at("fifo"), 0644) != 0)
		fprintf(stderr, "build_tree: %s\n", strerror(errno));
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", at("socket"));
	sock = socket(AF_UNIX, SOCK_STREAM, 0);
	if (sock < 0 || bind(sock, (struct sockaddr *)&sa, sizeof(sa)) != 0)
		fprintf(stderr, "build_tree: socket: %s\n", strerror(errno));
	if (sock >= 0)
		close(sock);
}

static void test_tree(void)
{
	struct walk_options wo = { .min_size = 4096 };
	char *paths[] = { root, NULL };
	struct seen s = { .n = 0 };

	walk_paths(paths, &wo, record, &s);
	expect("walk-regular-files",
	       event_of(&s, at("big")) == WALK_FILE &&
	       event_of(&s, at("exact")) == WALK_FILE &&
	       event_of(&s, at("sub/deeper/file")) == WALK_FILE &&
	       count(&s, WALK_FILE) == 5, "%d files reported", count(&s, WALK_FILE));
	expect("walk-min-size",
	       event_of(&s, at("below")) == WALK_SMALL &&
	       event_of(&s, at("empty")) == WALK_SMALL && count(&s, WALK_SMALL) == 2,
	       "below=%d empty=%d", event_of(&s, at("below")), event_of(&s, at("empty")));
	expect("walk-symlinks-not-followed",
	       event_of(&s, at("link-to-file")) == WALK_SYMLINK &&
	       event_of(&s, at("link-to-dir")) == WALK_SYMLINK &&
	       event_of(&s, at("dangling")) == WALK_SYMLINK &&
	       !any_under(&s, at("link-to-dir/")) && count(&s, WALK_SYMLINK) == 3,
	       "symlink events wrong or walked through a link");
	expect("walk-special-files",
	       event_of(&s, at("fifo")) == WALK_SPECIAL &&
	       event_of(&s, at("socket")) == WALK_SPECIAL,
	       "fifo=%d socket=%d", event_of(&s, at("fifo")), event_of(&s, at("socket")));
	expect("walk-name-with-newline", event_of(&s, at("new\nline")) == WALK_FILE,
	       "not reported under its exact name");
	expect("walk-name-with-blanks", event_of(&s, at("tab\tand space")) == WALK_FILE,
	       "not reported under its exact name");
	expect("walk-no-errors-no-dirs", count(&s, WALK_ERROR) == 0 &&
	       event_of(&s, at("sub")) == -1 && event_of(&s, root) == -1,
	       "errors %d, directories reported", count(&s, WALK_ERROR));
	forget(&s);

	wo.min_size = 0;
	walk_paths(paths, &wo, record, &s);
	expect("walk-min-size-0", count(&s, WALK_SMALL) == 0 && count(&s, WALK_FILE) == 7 &&
	       event_of(&s, at("empty")) == WALK_FILE, "%d files, %d small",
	       count(&s, WALK_FILE), count(&s, WALK_SMALL));
	forget(&s);
}

static void test_roots(void)
{
	struct walk_options wo = { .min_size = 4096 };
	char *link_root[] = { at("link-to-dir"), NULL };
	char *file_root[] = { at("big"), NULL };
	char *bad[] = { at("missing"), (char *)"", at("big"), NULL };
	struct seen s = { .n = 0 };

	walk_paths(link_root, &wo, record, &s);
	expect("walk-root-symlink-not-followed", s.n == 1 && s.ev[0] == WALK_SYMLINK,
	       "%d events, first %d", s.n, s.n ? (int)s.ev[0] : -1);
	forget(&s);

	walk_paths(file_root, &wo, record, &s);
	expect("walk-root-regular-file", s.n == 1 && s.ev[0] == WALK_FILE &&
	       strcmp(s.path[0], file_root[0]) == 0, "%d events", s.n);
	forget(&s);

	/* A bad path is reported and the walk goes on with the next one. */
	walk_paths(bad, &wo, record, &s);
	expect("walk-bad-paths-reported-and-skipped",
	       s.n == 3 && s.ev[0] == WALK_ERROR && s.err[0] == ENOENT &&
	       s.ev[1] == WALK_ERROR && s.err[1] == ENOENT && s.ev[2] == WALK_FILE,
	       "%d events", s.n);
	forget(&s);
}

/*
 * Mount points: /dev/shm is a tmpfs of its own under /dev on most hosts.
 * We may not mount anything, so use it if it is there.
 */
static void test_cross_fs(void)
{
	struct walk_options wo = { .min_size = 0 };
	char *paths[] = { (char *)"/dev", NULL };
	struct stat dev, shm;
	struct seen s = { .n = 0 };
	char marker[] = "/dev/shm/pcdedup-walk-XXXXXX";
	char *file;
	int fd;

	if (lstat("/dev", &dev) != 0 || lstat("/dev/shm", &shm) != 0 ||
	    !S_ISDIR(shm.st_mode) || dev.st_dev == shm.st_dev) {
		skip("walk-cross-fs", "/dev/shm is not a separate filesystem here");
		return;
	}
	if (!mkdtemp(marker)) {
		skip("walk-cross-fs", "cannot write in /dev/shm: %s", strerror(errno));
		return;
	}
	file = path_join(marker, "file");
	fd = open(file, O_WRONLY | O_CREAT, 0644);
	if (fd >= 0)
		close(fd);

	walk_paths(paths, &wo, record, &s);
	expect("walk-stays-on-fs", event_of(&s, "/dev/shm") == WALK_OTHER_FS &&
	       event_of(&s, file) == -1, "shm=%d marker=%d", event_of(&s, "/dev/shm"),
	       event_of(&s, file));
	forget(&s);
	wo.cross_fs = true;
	walk_paths(paths, &wo, record, &s);
	expect("walk-cross-fs", event_of(&s, file) == WALK_FILE &&
	       count(&s, WALK_OTHER_FS) == 0, "marker=%d", event_of(&s, file));
	forget(&s);
	unlink(file);
	rmdir(marker);
	free(file);
}

int main(void)
{
	build_tree();
	test_tree();
	test_roots();
	test_cross_fs();
	return harness_exit();
}
