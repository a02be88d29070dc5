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
 *   seh hold-append FILE TEXT       stop (SIGSTOP) until continued, then append
 *   seh hold-read FILE              open, stop (SIGSTOP) until continued, read
 *   seh mmap FILE r|rx              map the first page privately
 *   seh mprotect FILE               map read-only, then mprotect to r-x
 *   seh mount SOURCE TARGET TYPE OPTIONS
 *   seh lock FILE                   open read-only, flock(LOCK_SH)
 *   seh fcntl-lock FILE             open read-only, fcntl(F_SETLK, F_RDLCK)
 *   seh ioctl FILE                  open read-only, ioctl(FS_IOC_FSGETXATTR)
 *   seh fdpass FILE CONTEXT USE     start a child in CONTEXT, open FILE and
 *                                   pass the child the fd over SCM_RIGHTS;
 *                                   the child runs "seh recvfd"
 *   seh fdexec FILE CONTEXT USE     open FILE and exec "seh usefd" in CONTEXT
 *                                   with the fd inherited
 *   seh recvfd SOCKFD FILE USE      receive an fd on SOCKFD, then as usefd
 *   seh usefd FD FILE USE           check that FD is still FILE, then USE it:
 *                                   "use" reads and maps it, "hold" stops
 *                                   (SIGSTOP) first; prints the two results,
 *                                   e.g. "ok:secret, ok" or "EACCES read,
 *                                   EACCES mmap"; "ENOFD recvmsg" when no fd
 *                                   arrived, "replaced fd" when FD is no
 *                                   longer FILE
 *   seh polcap POLICY BIT           set policy capability BIT in the binary
 *                                   policy file POLICY
 *
 * fdpass forwards a stop of its child: when the child stops, it stops too,
 * and continues the child when it is continued.
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "outcome.h"

static const char *self;

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

/* enter CONTEXT at the next exec, and run PATH with ARGV */
static int exec_in(const char *context, const char *path, char **argv)
{
	int fd = open("/proc/self/attr/exec", O_WRONLY);

	if (fd < 0)
		return failed("open-attr-exec");
	if (write(fd, context, strlen(context)) < 0)
		return failed("write-attr-exec");
	close(fd);
	execv(path, argv);
	return failed("execv");
}

static int do_exec(char *context, char **argv)
{
	return exec_in(context, argv[0], argv);
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

static int do_lock(const char *file, int use_fcntl)
{
	struct flock fl = { .l_type = F_RDLCK, .l_whence = SEEK_SET };
	int fd = open(file, O_RDONLY);

	if (fd < 0)
		return failed("open");
	if (use_fcntl) {
		if (fcntl(fd, F_SETLK, &fl))
			return failed("fcntl");
	} else if (flock(fd, LOCK_SH)) {
		return failed("flock");
	}
	puts("ok");
	return 0;
}

static int do_ioctl(const char *file)
{
	struct fsxattr fa;
	int fd = open(file, O_RDONLY);

	if (fd < 0)
		return failed("open");
	/* not one of the commands SELinux checks as getattr: the ioctl perm */
	if (ioctl(fd, FS_IOC_FSGETXATTR, &fa))
		return failed("ioctl");
	puts("ok");
	return 0;
}

/* enter CONTEXT and run seh with ARGS (NULL-terminated after OP) */
static int exec_self_in(const char *context, char **args)
{
	return exec_in(context, self, args);
}

/* USE an fd: read it, then map it; one line with both results */
static int use_fd(int fd, const char *file, const char *use)
{
	char buf[4096], rres[4200];
	struct stat a, b;
	ssize_t len;
	void *p;
	int ok = 1;

	if (strcmp(use, "use") && strcmp(use, "hold"))
		return usage();
	if (fstat(fd, &a))
		return failed("fstat");
	if (stat(file, &b))
		return failed("stat");
	if (a.st_dev != b.st_dev || a.st_ino != b.st_ino) {
		puts("replaced fd");
		return 1;
	}
	/* hold: the suite changes the policy while we are stopped */
	if (!strcmp(use, "hold") && raise(SIGSTOP))
		return failed("raise");
	len = pread(fd, buf, sizeof(buf), 0);
	if (len < 0) {
		snprintf(rres, sizeof(rres), "%s read", errname(errno));
		ok = 0;
	} else {
		if (len > 0 && buf[len - 1] == '\n')
			len--;
		snprintf(rres, sizeof(rres), "ok:%.*s", (int)len, buf);
	}
	p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED) {
		printf("%s, %s mmap\n", rres, errname(errno));
		return 1;
	}
	printf("%s, ok\n", rres);
	return ok ? 0 : 1;
}

static int do_usefd(const char *fdname, const char *file, const char *use)
{
	return use_fd(atoi(fdname), file, use);
}

static int do_recvfd(const char *sockname, const char *file, const char *use)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	char byte;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = u.buf,
		.msg_controllen = sizeof(u.buf),
	};
	struct cmsghdr *cmsg;
	int fd;

	if (recvmsg(atoi(sockname), &msg, 0) < 0)
		return failed("recvmsg");
	cmsg = CMSG_FIRSTHDR(&msg);
	if (!cmsg || cmsg->cmsg_level != SOL_SOCKET ||
	    cmsg->cmsg_type != SCM_RIGHTS ||
	    cmsg->cmsg_len != CMSG_LEN(sizeof(int))) {
		/* the kernel refused the fd (security_file_receive) */
		puts("ENOFD recvmsg");
		return 1;
	}
	memcpy(&fd, CMSG_DATA(cmsg), sizeof(fd));
	return use_fd(fd, file, use);
}

static int send_fd(int sock, int fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	char byte = 0;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = u.buf,
		.msg_controllen = sizeof(u.buf),
	};
	struct cmsghdr *cmsg = CMSG_FIRSTHDR(&msg);

	cmsg->cmsg_level = SOL_SOCKET;
	cmsg->cmsg_type = SCM_RIGHTS;
	cmsg->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cmsg), &fd, sizeof(fd));
	return sendmsg(sock, &msg, 0) == 1 ? 0 : -1;
}

static int do_fdpass(const char *file, const char *context, char *use)
{
	char sockname[16];
	char *args[] = { (char *)self, "recvfd", sockname, (char *)file, use,
			 NULL };
	int sv[2], fd, status;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return failed("socketpair");
	pid = fork();
	if (pid < 0)
		return failed("fork");
	if (!pid) {
		close(sv[0]);
		snprintf(sockname, sizeof(sockname), "%d", sv[1]);
		_exit(exec_self_in(context, args));
	}
	close(sv[1]);
	/* opened after the fork: the child gets it over the socket only */
	fd = open(file, O_RDONLY);
	if (fd < 0)
		return failed("open");
	if (send_fd(sv[0], fd))
		return failed("sendmsg");
	close(fd);
	for (;;) {
		if (waitpid(pid, &status, WUNTRACED) < 0)
			return failed("waitpid");
		if (!WIFSTOPPED(status))
			break;
		/* forward the stop to whoever watches us, then continue */
		raise(SIGSTOP);
		kill(pid, SIGCONT);
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

static int do_fdexec(const char *file, const char *context, char *use)
{
	char fdname[16];
	char *args[] = { (char *)self, "usefd", fdname, (char *)file, use,
			 NULL };
	int fd = open(file, O_RDONLY);

	if (fd < 0)
		return failed("open");
	snprintf(fdname, sizeof(fdname), "%d", fd);
	return exec_self_in(context, args);
}

/*
 * Set a policy capability in a binary policy: the capability bitmap (an
 * ebitmap) follows the header, see policydb_read(): magic, length, the
 * "SE Linux" string, version, config, sym_num, ocon_num.  An ebitmap is
 * mapunit (64), highbit, count, then count nodes (startbit, 64-bit map).
 */
static uint32_t get32(const unsigned char *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = v >> (8 * i);
}

static int do_polcap(const char *policy, const char *bitname)
{
	unsigned long bit = strtoul(bitname, NULL, 10);
	uint32_t start = bit & ~63UL, highbit, count, i, j;
	size_t size, off, end, outlen;
	unsigned char *in, *out, *o;
	uint64_t map;
	struct stat st;
	FILE *f;

	f = fopen(policy, "rb");
	if (!f || fstat(fileno(f), &st))
		return failed("open");
	size = st.st_size;
	in = malloc(size);
	out = malloc(size + 12);
	if (!in || !out || fread(in, 1, size, f) != size)
		return failed("read");
	fclose(f);
	if (bit > 1023 || size < 8 || get32(in) != 0xf97cff8c)
		goto bad;
	off = 8 + (size_t)get32(in + 4) + 16;
	if (off + 12 > size || get32(in + off) != 64)
		goto bad;
	highbit = get32(in + off + 4);
	count = get32(in + off + 8);
	end = off + 12 + (size_t)count * 12;
	if (end > size)
		goto bad;
	/* the header, then the nodes in order, ours or-ed in or inserted */
	memcpy(out, in, off + 12);
	o = out + off + 12;
	for (i = 0, j = 0; i < count || j == 0; ) {
		const unsigned char *n = in + off + 12 + (size_t)i * 12;

		if (j == 0 && (i == count || get32(n) >= start)) {
			map = 0;
			if (i < count && get32(n) == start) {
				memcpy(&map, n + 4, 8);
				i++;
			}
			map = htole64(le64toh(map) | 1ULL << (bit - start));
			put32(o, start);
			memcpy(o + 4, &map, 8);
			o += 12;
			j = 1;
			continue;
		}
		memcpy(o, n, 12);
		o += 12;
		i++;
	}
	outlen = o - out;
	put32(out + off + 8, (outlen - off - 12) / 12);
	if (highbit < start + 64)
		put32(out + off + 4, start + 64);
	memcpy(o, in + end, size - end);
	outlen += size - end;
	f = fopen(policy, "wb");
	if (!f || fwrite(out, 1, outlen, f) != outlen || fclose(f))
		return failed("write");
	puts("ok");
	return 0;
bad:
	puts("EINVAL policy");
	return 1;
}

int main(int argc, char **argv)
{
	const char *op = argc > 1 ? argv[1] : "";

	self = argv[0];
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
	if (!strcmp(op, "hold-append") && argc == 4) {
		if (raise(SIGSTOP))
			return failed("raise");
		return do_append(argv[2], argv[3]);
	}
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
	if (!strcmp(op, "lock") && argc == 3)
		return do_lock(argv[2], 0);
	if (!strcmp(op, "fcntl-lock") && argc == 3)
		return do_lock(argv[2], 1);
	if (!strcmp(op, "ioctl") && argc == 3)
		return do_ioctl(argv[2]);
	if (!strcmp(op, "fdpass") && argc == 5)
		return do_fdpass(argv[2], argv[3], argv[4]);
	if (!strcmp(op, "fdexec") && argc == 5)
		return do_fdexec(argv[2], argv[3], argv[4]);
	if (!strcmp(op, "recvfd") && argc == 5)
		return do_recvfd(argv[2], argv[3], argv[4]);
	if (!strcmp(op, "usefd") && argc == 5)
		return do_usefd(argv[2], argv[3], argv[4]);
	if (!strcmp(op, "polcap") && argc == 4)
		return do_polcap(argv[2], argv[3]);
	return usage();
}
