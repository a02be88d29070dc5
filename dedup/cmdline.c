// SPDX-License-Identifier: GPL-2.0
#include "cmdline.h"
#include "commands.h"

#include <stdarg.h>
#include <stdio.h>

#include "exitcode.h"
#include "parse.h"

const char exit_status_help[] =
	"Exit status:\n"
	"  0  success\n"
	"  1  verify found problems, or some files failed\n"
	"  2  usage error\n"
	"  3  the kernel has no pcdedup support (status)\n"
	"  4  fatal error (out of memory, cannot start threads, ...)\n";

void run_opts_init(struct run_opts *o)
{
	o->jobs = default_jobs();
	o->min_size = DEFAULT_MIN_SIZE;
	o->cross_fs = false;
	o->quiet = false;
}

int run_opt(const char *cmd, int c, const char *arg, struct run_opts *o)
{
	switch (c) {
	case 'j':
		if (!parse_jobs(arg, &o->jobs)) {
			usage_error(cmd, "bad job count '%s' (1 to %d)", arg, MAX_JOBS);
			return -1;
		}
		return 1;
	case OPT_MIN_SIZE:
		if (!parse_size(arg, &o->min_size)) {
			usage_error(cmd, "bad size '%s' (bytes, or with K, M, G, T)", arg);
			return -1;
		}
		return 1;
	case 'x':
		o->cross_fs = true;
		return 1;
	case 'q':
		o->quiet = true;
		return 1;
	default:
		return 0;
	}
}

int usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "pcdedup %s: ", cmd);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\nTry 'pcdedup %s --help'.\n", cmd);
	va_end(ap);
	return EXIT_USAGE;
}

int usage_hint(const char *cmd)
{
	fprintf(stderr, "Try 'pcdedup %s --help'.\n", cmd);
	return EXIT_USAGE;
}
