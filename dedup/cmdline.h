/* SPDX-License-Identifier: GPL-2.0 */
/* Options that tag and verify share, and how usage errors are reported. */
#ifndef PCDEDUP_CMDLINE_H
#define PCDEDUP_CMDLINE_H

#include <stdbool.h>
#include <stdint.h>

/* Files smaller than this are not worth a key (one page). */
#define DEFAULT_MIN_SIZE 4096

struct run_opts {
	unsigned jobs;
	uint64_t min_size;
	bool cross_fs;
	bool quiet;
};

void run_opts_init(struct run_opts *o);

/* Long option values for the options below that have no short form. */
enum { OPT_MIN_SIZE = 0x100, OPT_MISSING_OK, OPT_JSON, OPT_SYSFS,
	OPT_VMSTAT, OPT_SHARES, OPT_TREE_LEVEL };

/*
 * Handle option @c with argument @arg if it is one of the shared ones
 * (-j, --min-size, -x, -q). Returns 1 if handled, 0 if not ours, and
 * -1 after printing a usage error for a bad argument.
 */
int run_opt(const char *cmd, int c, const char *arg, struct run_opts *o);

/* Print "pcdedup CMD: message" and a --help hint; returns EXIT_USAGE. */
__attribute__((format(printf, 2, 3)))
int usage_error(const char *cmd, const char *fmt, ...);

/* After getopt printed its own complaint: only the --help hint. */
int usage_hint(const char *cmd);

#endif
