// SPDX-License-Identifier: GPL-2.0-only
/*
 * seh: the SELinux test helper of tests/security.
 *
 * One operation per run; it prints one result line, "ok" (for cat and
 * hold-read "ok:" and the data) or the errno name and the failing call, e.g.
 * "EACCES open", and exits 0 on success, 1 on failure, 2 on bad usage.
 *
 *   seh exec CONTEXT PROG [ARG...]  enter CONTEXT through /proc/self/attr/exec
 *   seh context                     print the current context
 *   seh setlabel FILE CONTEXT       set security.selinux
 *   seh getlabel FILE               print security.selinux
 *   seh setxattr FILE NAME VALUE
 *   seh getxattr FILE NAME
 *   seh cat FILE                    open read-only and read
 *   seh append FILE TEXT            open write-only for appending and write
 *   seh hold-read FILE              open, stop (SIGSTOP) until continued, read
 *   seh mmap FILE r|rx              map the first page privately
 *   seh mprotect FILE               map read-only, then mprotect to r-x
 *   seh mount SOURCE TARGET TYPE OPTIONS
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/xattr.h>
#include <unistd.h>

static int failed(const char *call)
{
	const char *name = strerrorname_np(errno);

	printf("%s %s\n", name ? name : "E?", call);
	return 1;
}

static int usage(void)
{
	fprintf(stderr, "usage: seh OPERATION ARG... (see tests/security/seh.c)\n");
	return 2;
}

static int print_data(const char *prefix, const char *buf, ssize_t len)
{
	/* one line: drop a trailing newline */
	if (len > 0 && buf[len - 1] == '\n')
		len--;
	printf("%s%.*s\n", prefix, (int)len, buf);
	return 0;
}

static int do_exec(char *context, char **argv)
{
	int fd = open("/proc/self/attr/exec", O_WRONLY);

	if (fd < 0)
		return failed("open-attr-exec");
	if (write(fd, context, strlen(context)) < 0)
		return failed("write-attr-exec");
	close(fd);
	execv(argv[0], argv);
	return failed("execv");
}

static int do_context(void)
{
	char buf[256];
	ssize_t len;
	int fd = open("/proc/self/attr/current", O_RDONLY);

	if (fd < 0)
		return failed("open");
	len = read(fd, buf, sizeof(buf) - 1);
	if (len < 0)
		return failed("read");
	while (len > 0 && (buf[len - 1] == '\0' || buf[len - 1] == '\n'))
		len--;
	return print_data("", buf, len);
}

static int do_getxattr(const char *file, const char *name)
{
	char buf[256];
	ssize_t len = lgetxattr(file, name, buf, sizeof(buf));

	if (len < 0)
		return failed("getxattr");
	while (len > 0 && buf[len - 1] == '\0')
		len--;
	return print_data("", buf, len);
}

static int do_setxattr(const char *file, const char *name, const char *value)
{
	if (lsetxattr(file, name, value, strlen(value), 0))
		return failed("setxattr");
	puts("ok");
	return 0;
}

static int read_and_print(int fd)
{
	char buf[4096];
	ssize_t len = read(fd, buf, sizeof(buf));

	if (len < 0)
		return failed("read");
	return print_data("ok:", buf, len);
}

static int do_cat(const char *file, int hold)
{
	int fd = open(file, O_RDONLY);

	if (fd < 0)
		return failed("open");
	/* hold-read: the suite changes the policy while we are stopped */
	if (hold && raise(SIGSTOP))
		return failed("raise");
	return read_and_print(fd);
}

static int do_append(const char *file, const char *text)
{
	int fd = open(file, O_WRONLY | O_APPEND);

	if (fd < 0)
		return failed("open");
	if (write(fd, text, strlen(text)) < 0)
		return failed("write");
	if (close(fd))
		return failed("close");
	puts("ok");
	return 0;
}

static int do_mmap(const char *file, const char *prot_name, int then_exec)
{
	int prot = PROT_READ;
	void *p;
	int fd;

	if (!strcmp(prot_name, "rx"))
		prot |= PROT_EXEC;
	else if (strcmp(prot_name, "r"))
		return usage();
	fd = open(file, O_RDONLY);
	if (fd < 0)
		return failed("open");
	p = mmap(NULL, 4096, prot, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		return failed("mmap");
	if (then_exec && mprotect(p, 4096, PROT_READ | PROT_EXEC))
		return failed("mprotect");
	puts("ok");
	return 0;
}

int main(int argc, char **argv)
{
	const char *op = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(op, "exec") && argc >= 4)
		return do_exec(argv[2], argv + 3);
	if (!strcmp(op, "context") && argc == 2)
		return do_context();
	if (!strcmp(op, "setlabel") && argc == 4)
		return do_setxattr(argv[2], "security.selinux", argv[3]);
	if (!strcmp(op, "getlabel") && argc == 3)
		return do_getxattr(argv[2], "security.selinux");
	if (!strcmp(op, "setxattr") && argc == 5)
		return do_setxattr(argv[2], argv[3], argv[4]);
	if (!strcmp(op, "getxattr") && argc == 4)
		return do_getxattr(argv[2], argv[3]);
	if (!strcmp(op, "cat") && argc == 3)
		return do_cat(argv[2], 0);
	if (!strcmp(op, "hold-read") && argc == 3)
		return do_cat(argv[2], 1);
	if (!strcmp(op, "append") && argc == 4)
		return do_append(argv[2], argv[3]);
	if (!strcmp(op, "mmap") && argc == 4)
		return do_mmap(argv[2], argv[3], 0);
	if (!strcmp(op, "mprotect") && argc == 3)
		return do_mmap(argv[2], "r", 1);
	if (!strcmp(op, "mount") && argc == 6) {
		if (mount(argv[2], argv[3], argv[4], 0, argv[5]))
			return failed("mount");
		puts("ok");
		return 0;
	}
	return usage();
}
