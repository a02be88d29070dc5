/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Test harness: each test program writes one KTAP document, as tests/lib.sh
 * does for the shell suites and tests/run reads: "KTAP version 1", the plan
 * "1..N" from harness_plan() before any case, one result line per case
 * ("ok N name", "not ok N name" after a "# name: why" diagnostic, "ok N
 * name # SKIP why"), each followed by "# duration_ms=N". A case reported
 * before the plan fails, and harness_exit() makes no plan up: a program
 * that runs fewer or more cases than it planned fails. A test program
 * exits 1 if any case failed (or the count is not the plan), else 0.
 * Helpers for temporary trees and for running the pcdedup binary with its
 * output captured.
 *
 * This is the one KTAP emitter of the C test programs: the host unit tests
 * here and the guest programs of tests/dedup/ (which compile this file too)
 * both print through it.
 */
#ifndef PCDEDUP_TEST_HARNESS_H
#define PCDEDUP_TEST_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

void pass(const char *name);
__attribute__((format(printf, 2, 3)))
void fail(const char *name, const char *fmt, ...);
__attribute__((format(printf, 2, 3)))
void skip(const char *name, const char *fmt, ...);
/* PASS if @ok, else FAIL with the formatted reason. Returns @ok. */
__attribute__((format(printf, 3, 4)))
bool expect(const char *name, bool ok, const char *fmt, ...);
/*
 * Declare the number of cases the program runs, before the first: prints
 * the plan "1..N". Computed up front (from the tables the program loops
 * over), never counted as the cases run.
 */
void harness_plan(int n);
/*
 * Exit status for main(): 1 if any case failed, or no plan was declared,
 * or the number of cases differs from the plan (said in a diagnostic).
 */
int harness_exit(void);
/* Cases skipped so far. */
int harness_skipped(void);
/* A "# " diagnostic line (newlines become blanks), flushed at once. */
__attribute__((format(printf, 1, 2)))
void diag(const char *fmt, ...);
/*
 * Print the version line now if nothing was printed yet: a program that
 * forks must, so that its children do not each print it.
 */
void harness_start(void);
/*
 * Print only the failed and the skipped cases (their diagnostics, result
 * and duration lines), so that a skip is never hidden; passed cases still
 * count in the numbering and the plan. The document is then incomplete, for
 * a caller that shows it as diagnostics (tests/dedup/README.md).
 */
void harness_quiet(void);

/* A fresh directory under $TMPDIR (or /tmp), removed at exit. */
char *make_tmpdir(const char *tag);
/* "dir/name" as a new heap string. */
char *path_join(const char *dir, const char *name);

/* Write @len bytes of deterministic pseudo-random data seeded by @seed. */
void write_pattern(const char *path, uint64_t len, unsigned seed);
void write_bytes(const char *path, const void *data, size_t len);
/* Whole file into a NUL-terminated heap buffer; NULL if unreadable. */
char *read_text(const char *path);

/* Lowercase hex SHA-256 from the sha256sum program, the independent oracle. */
bool sha256sum_hex(const char *path, char hex[65]);

/* Can we set trusted.* attributes in @dir? If not, why (for SKIP). */
bool trusted_xattrs_work(const char *dir, const char **why);

/* How to run a command. */
struct run_spec {
	const char *const *env;	/* extra "NAME=value" settings, NULL-ended */
	uid_t uid;		/* run as this user (and its gid), if as_user */
	bool as_user;
};

struct run_result {
	int status;		/* exit status, or 128 + signal */
	char *out, *err;	/* captured stdout and stderr */
};

/* Start @argv (NULL-ended) with output captured; returns the pid. */
pid_t spawn_cmd(const struct run_spec *spec, char *const argv[],
		struct run_result *r);
/* Wait for @pid from spawn_cmd() and fill in @r. */
void wait_cmd(pid_t pid, struct run_result *r);
/* spawn_cmd() and wait_cmd() together. */
int run_cmd(const struct run_spec *spec, char *const argv[], struct run_result *r);
void free_result(struct run_result *r);

/* True if @hay contains @needle. */
bool contains(const char *hay, const char *needle);

#endif
