/*
 * uprobe_call [-w] LIB N: dlopen() the library at path LIB and call its
 * pcd_target() N times, checking each result; print "called N".
 * With -w, after mapping LIB print "ready PID ADDR" (ADDR: pcd_target's
 * address, hex) and wait for SIGUSR1 before calling.
 * Exit 0, 1 on a wrong result, 2 on a usage or load error.
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int wait = argc > 1 && !strcmp(argv[1], "-w");
	int (*fn)(int);
	sigset_t usr1;
	void *lib;
	long i, n;
	int sig;

	if (argc != 3 + wait) {
		fprintf(stderr, "usage: uprobe_call [-w] LIB N\n");
		return 2;
	}
	n = atol(argv[2 + wait]);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	if (sigprocmask(SIG_BLOCK, &usr1, NULL))
		return 2;
	lib = dlopen(argv[1 + wait], RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "uprobe_call: %s\n", dlerror());
		return 2;
	}
	*(void **)&fn = dlsym(lib, "pcd_target");
	if (!fn) {
		fprintf(stderr, "uprobe_call: %s\n", dlerror());
		return 2;
	}
	if (wait) {
		printf("ready %d %#jx\n", (int)getpid(), (uintmax_t)(uintptr_t)fn);
		fflush(stdout);
		if (sigwait(&usr1, &sig))
			return 2;
	}
	for (i = 0; i < n; i++) {
		if (fn((int)i) != 3 * (int)i + 1) {
			fprintf(stderr, "uprobe_call: call %ld returned %d\n", i, fn((int)i));
			return 1;
		}
	}
	printf("called %ld\n", n);
	return 0;
}
