// SPDX-License-Identifier: GPL-2.0-only
/*
 * aah: the AppArmor test helper of tests/security (apparmor.sh).
 *
 *   aah [-p PROFILE] OP FILE [ARG...]
 *
 * With -p it first changes to PROFILE ("changeprofile" through
 * /proc/self/attr/apparmor/current), so that FILE is opened and used under
 * it. FILE "fd:N" is the inherited descriptor N (opened by the caller). One
 * operation per run; it prints one result line, "ok" or the errno name and
 * the failing call, e.g. "EACCES mprotect", and exits 0 on success, 1 on
 * failure, 2 on bad usage or a failed profile change.
 *
 *   read        open read-only and read it all
 *   mmapx       map the first page PROT_READ|PROT_EXEC, MAP_PRIVATE
 *   mprotx      map it PROT_READ, MAP_PRIVATE, then mprotect to r-x
 *   mprotx-shared  the same with MAP_SHARED
 *   exec        execv FILE with ARG... (FILE a path)
 *   mount       mount(FILE, ARG1, type ARG2, 0, options ARG3)
 *   noop        print "ok" (the program that exec runs)
 *   label       print the current AppArmor label
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <unistd.h>

#include "outcome.h"

static int usage(void)
{
	fputs("usage: aah [-p PROFILE] OP FILE [ARG...]\n", stderr);
	return 2;
}

/* The AppArmor attribute file NAME (current, exec) of this task. */
static const char *attr(const char *name)
{
	static char path[64];

	snprintf(path, sizeof(path), "/proc/self/attr/apparmor/%s", name);
	if (access(path, F_OK))
		snprintf(path, sizeof(path), "/proc/self/attr/%s", name);
	return path;
}

static int label(void)
{
	char buf[256];
	ssize_t n;
	int fd = open(attr("current"), O_RDONLY);

	if (fd < 0)
		return failed("open attr");
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return failed("read attr");
	buf[n] = '\0';
	fputs(buf, stdout);
	return 0;
}

static int change_profile(const char *profile)
{
	char cmd[256];
	int fd = open(attr("current"), O_WRONLY);
	int len = snprintf(cmd, sizeof(cmd), "changeprofile %s", profile);

	if (fd < 0 || write(fd, cmd, len) != len) {
		fprintf(stderr, "aah: changeprofile %s: %s\n", profile, strerror(errno));
		return -1;
	}
	close(fd);
	return 0;
}

static int open_file(const char *file)
{
	if (!strncmp(file, "fd:", 3))
		return atoi(file + 3);
	return open(file, O_RDONLY);
}

static int mprotx(int fd, int flags)
{
	void *p = mmap(NULL, 4096, PROT_READ, flags, fd, 0);

	if (p == MAP_FAILED)
		return failed("mmap");
	if (mprotect(p, 4096, PROT_READ | PROT_EXEC))
		return failed("mprotect");
	return 0;
}

static int run(const char *op, const char *file, int argc, char **argv)
{
	char buf[65536];
	ssize_t n;
	void *p;
	int fd;

	if (!strcmp(op, "exec")) {
		execv(file, argv);
		return failed("exec");
	}
	if (!strcmp(op, "mount")) {
		if (argc != 4)
			return usage();
		return mount(file, argv[1], argv[2], 0, argv[3]) ? failed("mount") : 0;
	}
	fd = open_file(file);
	if (fd < 0)
		return failed("open");
	if (!strcmp(op, "read")) {
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			;
		return n < 0 ? failed("read") : 0;
	}
	if (!strcmp(op, "mmapx")) {
		p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
		return p == MAP_FAILED ? failed("mmap") : 0;
	}
	if (!strcmp(op, "mprotx"))
		return mprotx(fd, MAP_PRIVATE);
	if (!strcmp(op, "mprotx-shared"))
		return mprotx(fd, MAP_SHARED);
	return usage();
}

int main(int argc, char **argv)
{
	int i = 1, rc;

	if (argc > 2 && !strcmp(argv[1], "-p")) {
		if (change_profile(argv[2]))
			return 2;
		i = 3;
	}
	if (i < argc && !strcmp(argv[i], "noop"))
		return puts("ok") < 0;
	if (i < argc && !strcmp(argv[i], "label"))
		return label();
	if (i + 1 >= argc)
		return usage();
	rc = run(argv[i], argv[i + 1], argc - i - 1, argv + i + 1);
	if (!rc)
		puts("ok");
	return rc;
}
