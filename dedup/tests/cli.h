/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for the tests that run the pcdedup binary: running it, reading
 * its summaries and problem lines, and checking keys byte by byte against
 * the layout written out by the oracle (tests/oracle.c), not through the
 * tool's own code.
 */
#ifndef PCDEDUP_TEST_CLI_H
#define PCDEDUP_TEST_CLI_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "harness.h"

#define XATTR "trusted.pcdedup"

extern const char *bin;			/* the pcdedup under test */
extern char fault_lib[PATH_MAX];	/* tests/fault_xattr.so, absolute */
extern bool have_python;
extern char preload_env[PATH_MAX + 16];	/* "LD_PRELOAD=" fault_lib */
/*
 * The tests' secret, in a file of their own (secret_file, mode 0600) that
 * cli_init() names in $PCDEDUP_SECRET_FILE for every command run after it.
 */
extern uint8_t test_secret[32];
extern char secret_file[PATH_MAX];

/* Find the binary and the tools, make the secret; false (after a FAIL line) if no binary. */
bool cli_init(void);

/* Write @secret as a secret file at @path, mode @mode: 64 hex digits and a newline. */
void write_secret_file(const char *path, const uint8_t secret[32], unsigned mode);

/* Run pcdedup with @env (may be NULL) and the NULL-ended arguments. */
int pcd_env(struct run_result *r, const char *const *env, ...);
#define pcd(r, ...) pcd_env(r, NULL, __VA_ARGS__, (char *)NULL)
#define pcd_with(r, env, ...) pcd_env(r, env, __VA_ARGS__, (char *)NULL)

/* The value pcdedup must write for @path at tree @level (malloc'd), its MAC made with test_secret. */
uint8_t *expected_value(const char *path, unsigned level, size_t *len);
/* The tree level of @path's key, or -1 if it has none. */
int key_level(const char *path);
/*
 * 1 if @path carries exactly the right key (for the tree level it names),
 * 0 if none, -1 if a wrong one.
 */
int key_state(const char *path);
bool has_key(const char *path);

/* "label:   N" from a summary; -1 if the label is not there. */
long long counter(const char *text, const char *label);
/* A line "label<blanks>value..." in @text: the human summary format. */
bool field_is(const char *text, const char *label, const char *value);
/* One "status\tpath" line of verify's output, path as printed (escaped). */
bool has_line(const char *out, const char *status, const char *path);
int count_lines(const char *s);
/* verify's problem lines in @out: the lines with a tab (the summary has none). */
int problem_lines(const char *out);
/*
 * @json must parse (python3 -m json.tool) and the Python statements @py
 * must succeed with d the parsed value and sys.argv[2] = @arg: the cases
 * @name and @name-values.
 */
void check_json(const char *name, const char *json, const char *py, const char *arg);
/* Copy file @from to @dir/@name; returns the new path. */
char *copy_of(const char *dir, const char *name, const char *from);

#endif
