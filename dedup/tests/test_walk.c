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
#include <sched.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "walk.h"

#define MAX_SEEN 4096

struct seen {
	int n;
	enum walk_event ev[MAX_SEEN];
	char *path[MAX_SEEN];
	int err[MAX_SEEN];
	bool root[MAX_SEEN];
	char *ancestor[MAX_SEEN];
	int stop_after;		/* end the walk after this many events; 0: never */
};

static bool record(void *ctx, const struct walk_entry *e)
{
	struct seen *s = ctx;

	/* Events other than errors must carry the entry's lstat(). */
	if ((e->ev == WALK_ERROR) != (e->st == NULL))
		fprintf(stderr, "walk: stat pointer wrong for %s\n", e->path);
	if (s->n < MAX_SEEN) {
		s->ev[s->n] = e->ev;
		s->path[s->n] = strdup(e->path);
		s->err[s->n] = e->err;
		s->root[s->n] = e->root;
		s->ancestor[s->n] = e->ancestor ? strdup(e->ancestor) : NULL;
		s->n++;
	}
	return s->stop_after == 0 || s->n < s->stop_after;
}

static void forget(struct seen *s)
{
	for (int i = 0; i < s->n; i++) {
		free(s->path[i]);
		free(s->ancestor[i]);
	}
	s->n = 0;
	s->stop_after = 0;
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
	expect("walk-root-flag", s.n == 1 && s.root[0], "named path not marked as root");
	forget(&s);

	{
		char *tree_root[] = { root, NULL };
		int roots = 0;

		walk_paths(tree_root, &wo, record, &s);
		for (int i = 0; i < s.n; i++)
			roots += s.root[i];
		expect("walk-root-flag-only-on-roots", s.n > 5 && roots == 0,
		       "%d of %d entries inside the tree marked as roots", roots, s.n);
		forget(&s);
		s.stop_after = 2;
		walk_paths(tree_root, &wo, record, &s);
		expect("walk-callback-stops-walk", s.n == 2, "%d events after a stop", s.n);
		forget(&s);
	}

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

/*
 * A directory that is its own descendant, as a bind mount makes it: in a
 * child with a mount namespace of its own, bind the tree onto one of its
 * subdirectories. The walk must report the loop, with the ancestor it
 * repeats, and never go round. The child's exit status carries the verdict
 * (0 right, 1 wrong, 77 no mount namespace here).
 */
static void test_loop(void)
{
	char *top = make_tmpdir("loop");
	char *inner = path_join(top, "a/b/loop");
	char *file = path_join(top, "a/file");
	int st;
	pid_t pid;

	mkdir(path_join(top, "a"), 0755);
	mkdir(path_join(top, "a/b"), 0755);
	mkdir(inner, 0755);
	write_pattern(file, 5000, 1);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		struct walk_options wo = { .min_size = 0 };
		char *paths[] = { top, NULL };
		struct seen s = { .n = 0 };
		char *a = path_join(top, "a");
		int loops = 0, files = 0, where = -1;

		if (unshare(CLONE_NEWNS) != 0 ||
		    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
		    mount(a, inner, NULL, MS_BIND, NULL) != 0)
			_exit(77);
		walk_paths(paths, &wo, record, &s);
		umount(inner);
		for (int i = 0; i < s.n; i++) {
			loops += s.ev[i] == WALK_LOOP;
			files += s.ev[i] == WALK_FILE;
			if (s.ev[i] == WALK_LOOP)
				where = i;
		}
		if (loops != 1 || files != 1 || strcmp(s.path[where], inner) != 0 ||
		    !s.ancestor[where] || strcmp(s.ancestor[where], a) != 0) {
			fprintf(stderr, "loop walk: %d loops, %d files, at %s, ancestor %s\n",
				loops, files, where >= 0 ? s.path[where] : "-",
				where >= 0 && s.ancestor[where] ? s.ancestor[where] : "-");
			_exit(1);
		}
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st)) {
		fail("walk-loop-detected", "child did not finish");
		return;
	}
	if (WEXITSTATUS(st) == 77)
		skip("walk-loop-detected", "no private mount namespace for a bind mount here");
	else
		expect("walk-loop-detected", WEXITSTATUS(st) == 0,
		       "loop reported wrongly (see stderr)");
}

int main(void)
{
	/* The number of cases the tests below run (kept with them). */
	harness_plan(17);
	build_tree();
	test_tree();
	test_roots();
	test_cross_fs();
	test_loop();
	return harness_exit();
}
