// SPDX-License-Identifier: GPL-2.0
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

static int failures;
static int ncases;
static int nskipped;
static int planned = -1;	/* -1: no plan declared yet */
static bool started;
static bool quiet;
static double last_result;
static char *tmpdirs[64];
static int ntmpdirs;
static char *capture_dir;
static unsigned capture_seq;

static double monotonic(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The version line opens the program's KTAP document, before any output. */
static void ktap_start(void)
{
	if (started)
		return;
	started = true;
	last_result = monotonic();
	printf("KTAP version 1\n");
}

void harness_start(void)
{
	ktap_start();
	fflush(stdout);
}

void harness_quiet(void)
{
	quiet = true;
}

/* Names and reasons go on one line; '#' would start a directive. */
static void one_line(char *s, bool hash_too)
{
	for (; *s; s++)
		if (*s == '\n' || *s == '\r' || (hash_too && *s == '#'))
			*s = ' ';
}

/*
 * One result: "ok N name", "not ok N name" (the reason before it as a
 * "# " diagnostic), "ok N name # SKIP why"; then "# duration_ms=N", the
 * time since the previous result, as tests/lib.sh writes it.
 */
static void result(bool ok, const char *directive, const char *name, char *why)
{
	char title[512];
	double now;

	ktap_start();
	snprintf(title, sizeof(title), "%s", name);
	one_line(title, true);
	one_line(why, false);
	if (planned < 0) {
		/* A count made as cases run proves nothing: the plan comes first. */
		printf("# %s: no plan declared before the first case (harness_plan)\n", title);
		ok = false;
		directive = NULL;
	}
	ncases++;
	if (ok && directive)
		nskipped++;
	now = monotonic();
	/* Quiet: the passed cases only are left out; a skip always shows. */
	if (!ok || directive || !quiet) {
		if (!ok && why[0])
			printf("# %s: %s\n", title, why);
		printf("%s %d %s", ok ? "ok" : "not ok", ncases, title);
		if (directive)
			printf(" # %s %s", directive, why);
		printf("\n# duration_ms=%lld\n", (long long)((now - last_result) * 1000));
		fflush(stdout);
	}
	last_result = now;
	if (!ok)
		failures++;
}

#define FORMAT_WHY(why, fmt) do {				\
		va_list ap;					\
								\
		va_start(ap, fmt);				\
		vsnprintf(why, sizeof(why), fmt, ap);		\
		va_end(ap);					\
	} while (0)

void pass(const char *name)
{
	char why[1] = "";

	result(true, NULL, name, why);
}

void fail(const char *name, const char *fmt, ...)
{
	char why[2048];

	FORMAT_WHY(why, fmt);
	result(false, NULL, name, why);
}

void skip(const char *name, const char *fmt, ...)
{
	char why[2048];

	FORMAT_WHY(why, fmt);
	result(true, "SKIP", name, why);
}

void diag(const char *fmt, ...)
{
	char line[2048];

	FORMAT_WHY(line, fmt);
	one_line(line, false);
	ktap_start();
	printf("# %s\n", line);
	fflush(stdout);
}

bool expect(const char *name, bool ok, const char *fmt, ...)
{
	char why[2048] = "";

	if (!ok)
		FORMAT_WHY(why, fmt);
	result(ok, NULL, name, why);
	return ok;
}

static int remove_entry(const char *path, const struct stat *st, int type,
			struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	/* Directories were made unreadable by some tests; give them back. */
	chmod(path, 0700);
	remove(path);
	return 0;
}

static void remove_tmpdirs(void)
{
	for (int i = 0; i < ntmpdirs; i++)
		nftw(tmpdirs[i], remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

void harness_plan(int n)
{
	ktap_start();
	if (planned >= 0 || ncases > 0 || n < 0) {
		printf("# harness_plan(%d): %s\n", n, planned >= 0 ? "a plan was declared already" :
		       ncases > 0 ? "after the first case" : "not a number of cases");
		failures++;
		if (planned >= 0 || n < 0)
			return;
	}
	planned = n;
	printf("1..%d\n", n);
	fflush(stdout);
}

int harness_skipped(void)
{
	return nskipped;
}

int harness_exit(void)
{
	remove_tmpdirs();
	ktap_start();
	if (planned < 0) {
		printf("# no plan declared (harness_plan)\n");
		failures++;
	} else if (planned != ncases) {
		printf("# planned %d cases, ran %d\n", planned, ncases);
		failures++;
	}
	fflush(stdout);
	return failures ? 1 : 0;
}

/* The harness itself cannot go on: one failed case, exit 1. */
static void die(const char *what)
{
	fail("harness", "%s: %s", what, strerror(errno));
	exit(harness_exit());
}

char *make_tmpdir(const char *tag)
{
	const char *base = getenv("TMPDIR");
	char *path;

	if (!base || !*base)
		base = "/tmp";
	if (asprintf(&path, "%s/pcdedup-%s-XXXXXX", base, tag) < 0)
		die("asprintf");
	if (!mkdtemp(path))
		die("mkdtemp");
	/* Readable by others: some cases run the tool as an unprivileged user. */
	chmod(path, 0755);
	if (ntmpdirs < (int)(sizeof(tmpdirs) / sizeof(tmpdirs[0])))
		tmpdirs[ntmpdirs++] = path;
	return path;
}

char *path_join(const char *dir, const char *name)
{
	char *p;

	if (asprintf(&p, "%s/%s", dir, name) < 0)
		die("asprintf");
	return p;
}

void write_bytes(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0 || (len && write(fd, data, len) != (ssize_t)len) || close(fd) != 0)
		die(path);
}

void write_pattern(const char *path, uint64_t len, unsigned seed)
{
	static unsigned char buf[65536];
	uint64_t x = 0x9e3779b97f4a7c15ull * (seed + 1);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0)
		die(path);
	while (len > 0) {
		size_t n = len < sizeof(buf) ? (size_t)len : sizeof(buf);

		for (size_t i = 0; i < n; i++) {
			/* xorshift64: cheap, deterministic, not all zeros. */
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			buf[i] = (unsigned char)x;
		}
		if (write(fd, buf, n) != (ssize_t)n)
			die(path);
		len -= n;
	}
	if (close(fd) != 0)
		die(path);
}

char *read_text(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0, cap = 0, n;

	if (!f)
		return NULL;
	do {
		if (cap - len < 4096) {
			cap = cap ? 2 * cap : 8192;
			buf = realloc(buf, cap + 1);
			if (!buf)
				die("realloc");
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
	} while (n > 0);
	fclose(f);
	buf[len] = '\0';
	return buf;
}

bool sha256sum_hex(const char *path, char hex[65])
{
	char *argv[] = { (char *)"sha256sum", (char *)"-b", (char *)"--", (char *)path, NULL };
	struct run_spec spec = { .env = NULL };
	struct run_result r;
	bool ok;

	run_cmd(&spec, argv, &r);
	ok = r.status == 0 && strlen(r.out) >= 64;
	if (ok) {
		/* sha256sum escapes names with newlines: the line then starts '\'. */
		const char *h = r.out[0] == '\\' ? r.out + 1 : r.out;

		memcpy(hex, h, 64);
		hex[64] = '\0';
	}
	free_result(&r);
	return ok;
}

bool trusted_xattrs_work(const char *dir, const char **why)
{
	char *probe = path_join(dir, ".xattr-probe");
	bool ok;

	write_bytes(probe, "", 0);
	ok = setxattr(probe, "trusted.pcdedup-probe", "1", 1, 0) == 0;
	if (!ok)
		*why = errno == EPERM ? "setting trusted.* fails with EPERM (no CAP_SYS_ADMIN)"
				      : "this filesystem has no trusted.* xattrs";
	unlink(probe);
	free(probe);
	return ok;
}

static char *capture_path(const char *what)
{
	char name[64];

	if (!capture_dir)
		capture_dir = make_tmpdir("capture");
	snprintf(name, sizeof(name), "%u.%s", capture_seq, what);
	return path_join(capture_dir, name);
}

/* In the child: become @uid (with its primary group) for good. */
static void drop_to(uid_t uid)
{
	gid_t gid = (gid_t)uid;

	if (setgroups(0, NULL) != 0 || setresgid(gid, gid, gid) != 0 ||
	    setresuid(uid, uid, uid) != 0)
		_exit(125);
}

/* Output files are named after the run; wait_cmd() finds them by pid. */
struct pending {
	pid_t pid;
	char *out, *err;
};
static struct pending pending[16];

pid_t spawn_cmd(const struct run_spec *spec, char *const argv[],
		struct run_result *r)
{
	char *out, *err;
	pid_t pid;
	int slot;

	capture_seq++;
	out = capture_path("out");
	err = capture_path("err");
	for (slot = 0; slot < 16 && pending[slot].pid; slot++)
		;
	if (slot == 16) {
		errno = EAGAIN;
		die("too many running commands");
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0666);
		int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0666);

		if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
			_exit(126);
		for (const char *const *env = spec->env; env && *env; env++)
			putenv((char *)*env);
		if (spec->as_user)
			drop_to(spec->uid);
		execvp(argv[0], argv);
		_exit(127);
	}
	pending[slot] = (struct pending){ .pid = pid, .out = out, .err = err };
	memset(r, 0, sizeof(*r));
	return pid;
}

void wait_cmd(pid_t pid, struct run_result *r)
{
	int st, slot;

	for (slot = 0; slot < 16 && pending[slot].pid != pid; slot++)
		;
	if (slot == 16) {
		errno = ESRCH;
		die("wait_cmd: unknown pid");
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			die("waitpid");
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	r->out = read_text(pending[slot].out);
	r->err = read_text(pending[slot].err);
	if (!r->out)
		r->out = strdup("");
	if (!r->err)
		r->err = strdup("");
	unlink(pending[slot].out);
	unlink(pending[slot].err);
	free(pending[slot].out);
	free(pending[slot].err);
	pending[slot].pid = 0;
}

int run_cmd(const struct run_spec *spec, char *const argv[], struct run_result *r)
{
	wait_cmd(spawn_cmd(spec, argv, r), r);
	return r->status;
}

void free_result(struct run_result *r)
{
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
}

bool contains(const char *hay, const char *needle)
{
	return hay && strstr(hay, needle) != NULL;
}
