/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The command line, described once per command: a table of options (name,
 * argument, description) and of exit statuses, from which both getopt's
 * option list and the command's --help are generated, and the command list
 * of 'pcdedup help'. Also the options that tag, untag and verify share, and
 * how usage errors are reported.
 */
#ifndef PCDEDUP_CMDLINE_H
#define PCDEDUP_CMDLINE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "secret.h"

/*
 * tag and verify: files smaller than this get and need no key. 1: every
 * non-empty file, as the kernel shares every tagged file by default (its
 * min_size is 0): a file below one page still costs a page in every cache.
 */
#define DEFAULT_MIN_SIZE 1

/* Long option values for the options below that have no short form. */
enum { OPT_MIN_SIZE = 0x100, OPT_MISSING_OK, OPT_JSON, OPT_SYSFS,
	OPT_VMSTAT, OPT_SHARES, OPT_TREE_LEVEL, OPT_SECRET_FILE, OPT_TREE_STORE };

/* One option: getopt's value (a letter when it has a short form). */
struct opt_spec {
	const char *name;	/* long name, without "--"; NULL ends a table */
	int val;		/* short option letter, or an OPT_* value */
	const char *arg;	/* argument name, NULL if none */
	const char *help;	/* description; '\n' starts an indented line */
};

struct exit_spec {
	int code;		/* -1 ends a table */
	const char *meaning;
};

struct cmd_spec {
	const char *name;
	const char *summary;		/* one line, for the command list */
	const char *args;		/* after "[OPTION]..." in the usage line */
	const char *intro;		/* before the options */
	const struct opt_spec *opts;	/* --help is added to every table */
	const char *notes;		/* after the options, or NULL */
	const struct exit_spec *exits;
};

/* Options and exit statuses more than one command shares. */
#define OPT_SPEC_JOBS { "jobs", 'j', "N", "hash N files at once (default: online CPUs)" }
#define OPT_SPEC_CROSS_FS { "cross-fs", 'x', NULL, "descend into other mounted filesystems" }
#define OPT_SPEC_JSON(what) { "json", OPT_JSON, NULL, what }
#define OPT_SPEC_SECRET_FILE { "secret-file", OPT_SECRET_FILE, "FILE", "the secret (default: $" \
	SECRET_FILE_ENV ",\nelse " DEFAULT_SECRET_FILE ")" }
#define OPT_SPEC_END { NULL, 0, NULL, NULL }
#define EXIT_SPEC_USAGE { 2, "usage error" }
#define EXIT_SPEC_FATAL { 4, "fatal error (out of memory, cannot start threads, ...)" }
#define EXIT_SPEC_NO_CAP { 5, "needs CAP_SYS_ADMIN (trusted.* attributes): run as root" }
#define EXIT_SPEC_NO_SECRET { 6, "no valid secret file (see --secret-file)" }
#define EXIT_SPEC_END { -1, NULL }

/* Print the command's help, generated from its tables. */
void print_help(FILE *f, const struct cmd_spec *c);
/* The "Exit status:" paragraph alone. */
void print_exits(FILE *f, const struct exit_spec *exits);

/*
 * getopt_long() over @c's table, --help included. Returns the option
 * value, 'h' for --help, '?' after getopt's own complaint, -1 at the end.
 */
int next_option(const struct cmd_spec *c, int argc, char **argv);

/* Print "pcdedup CMD: message" and a --help hint; returns EXIT_USAGE. */
__attribute__((format(printf, 2, 3)))
int usage_error(const char *cmd, const char *fmt, ...);

/* After getopt printed its own complaint: only the --help hint. */
int usage_hint(const char *cmd);

#endif
