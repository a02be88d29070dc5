// SPDX-License-Identifier: GPL-2.0
/* The command line: usage errors exit 2, help and version exit 0. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static void test_usage(void)
{
	static const struct { const char *name; const char *args[7]; } cases[] = {
		{ "usage-no-command", { NULL } },
		{ "usage-unknown-command", { "frobnicate", NULL } },
		{ "usage-unknown-option", { "tag", "--no-such-option", "/tmp", NULL } },
		{ "usage-tag-no-path", { "tag", NULL } },
		{ "usage-untag-no-path", { "untag", NULL } },
		{ "usage-verify-no-path", { "verify", NULL } },
		{ "usage-bad-jobs", { "tag", "-j", "0", "/tmp", NULL } },
		{ "usage-bad-jobs-text", { "verify", "--jobs", "many", "/tmp", NULL } },
		{ "usage-bad-min-size", { "tag", "--min-size", "1X", "/tmp", NULL } },
		{ "usage-bad-tree-level", { "tag", "--tree-level", "9", "/tmp", NULL } },
		{ "usage-bad-tree-level-text", { "tag", "--tree-level", "-1", "/tmp", NULL } },
		{ "usage-tree-level-3", { "tag", "--tree-level", "3", "/tmp", NULL } },
		{ "usage-verify-tree-level", { "verify", "--tree-level", "0", "/tmp", NULL } },
		{ "usage-missing-argument", { "tag", "/tmp", "-j", NULL } },
		{ "usage-status-extra-argument", { "status", "extra", NULL } },
		{ "usage-help-unknown-command", { "help", "frobnicate", NULL } },
		{ "usage-verify-option-of-tag", { "verify", "--dry-run", "/tmp", NULL } },
		{ "usage-tag-empty-path", { "tag", "", NULL } },
		{ "usage-verify-empty-path-among-others", { "verify", "/tmp", "", NULL } },
		{ "usage-untag-empty-path", { "untag", "-n", "", NULL } },
		{ "usage-untag-option-of-tag", { "untag", "-j", "2", "/tmp", NULL } },
		{ "usage-untag-secret-file", { "untag", "--secret-file", "/x", "/tmp", NULL } },
		{ "usage-secret-no-action", { "secret", NULL } },
		{ "usage-secret-unknown-action", { "secret", "show", NULL } },
		{ "usage-secret-new-argument", { "secret", "new", "/tmp/x", NULL } },
		{ "usage-secret-load-force", { "secret", "load", "--force", NULL } },
		{ "usage-secret-new-sysfs", { "secret", "new", "--sysfs", "/tmp", NULL } },
		{ "usage-domain-no-action", { "domain", NULL } },
		{ "usage-domain-set-no-name", { "domain", "set", "/tmp", NULL } },
		{ "usage-domain-set-long-name", { "domain", "set", "/tmp",
			"12345678901234567890123456789012345678901234567890123456789012345", NULL } },
		{ "usage-domain-show-two-paths", { "domain", "show", "/tmp", "/", NULL } },
		{ "usage-domain-show-json-value", { "domain", "show", "--json=1", "/tmp", NULL } },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *argv[8] = { (char *)bin };
		struct run_spec spec = { .env = NULL };
		struct run_result r;
		int n = 1;

		for (const char *const *a = cases[i].args; *a; a++)
			argv[n++] = (char *)*a;
		argv[n] = NULL;
		run_cmd(&spec, argv, &r);
		expect(cases[i].name, r.status == 2 && r.err[0] != '\0' && r.out[0] == '\0',
		       "exit %d, stderr '%s', stdout '%s'", r.status, r.err, r.out);
		free_result(&r);
	}
}

/* An empty path is a usage error, said as such, before any work. */
static void test_empty_path(void)
{
	struct run_result r;

	pcd(&r, "tag", "/nonexistent-pcdedup", "");
	expect("usage-empty-path-message", r.status == 2 &&
	       strcmp(r.err, "pcdedup tag: empty path\nTry 'pcdedup tag --help'.\n") == 0,
	       "exit %d: '%s'", r.status, r.err);
	free_result(&r);
}

/*
 * Each command's help lists its own exit statuses and no other; the
 * overview lists them all and every command, each once.
 */
static void test_help_exits(void)
{
	static const struct { const char *cmd, *has, *lacks; } cases[] = {
		{ "tag", "  5  needs CAP_SYS_ADMIN", "  3  " },
		{ "untag", "  5  needs CAP_SYS_ADMIN", "  3  " },
		{ "verify", "  5  needs CAP_SYS_ADMIN", "  3  " },
		{ "status", "  3  the kernel has no pcdedup support", "  5  " },
		{ "tag", "  6  no valid secret file", "  3  " },
		{ "verify", "  6  no valid secret file", "  3  " },
		{ "untag", "  5  needs CAP_SYS_ADMIN", "  6  " },
		{ "status", "  1  ", "  6  " },
	};
	struct run_result r;
	char name[64];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(name, sizeof(name), "cli-help-own-exit-codes-%s", cases[i].cmd);
		pcd(&r, cases[i].cmd, "--help");
		expect(name, contains(r.out, cases[i].has) && !contains(r.out, cases[i].lacks) &&
		       contains(r.out, "  2  usage error"), "%s", r.out);
		free_result(&r);
	}
	pcd(&r, "help");
	expect("cli-help-all-exit-codes", contains(r.out, "  3  ") && contains(r.out, "  5  ") &&
	       contains(r.out, "  6  ") &&
	       contains(r.out, "  tag      hash") && contains(r.out, "  status   show") &&
	       contains(r.out, "  secret   make") && contains(r.out, "  domain   set"),
	       "%s", r.out);
	free_result(&r);
	/* --json is in the help of the commands that take it, generated from one table. */
	pcd(&r, "verify", "--help");
	expect("cli-help-verify-json", contains(r.out, "      --json          the summary") &&
	       contains(r.out, "  -j, --jobs N        hash N files") &&
	       !contains(r.out, "--dry-run"), "%s", r.out);
	free_result(&r);
}

static void test_help(void)
{
	static const char *const cmds[] = { "tag", "untag", "verify", "status", "secret",
					    "domain" };
	struct run_result r;
	char name[64];

	pcd(&r, "--version");
	expect("cli-version", r.status == 0 && strncmp(r.out, "pcdedup ", 8) == 0,
	       "exit %d: %s", r.status, r.out);
	free_result(&r);
	pcd(&r, "help");
	expect("cli-help", r.status == 0 && contains(r.out, "verify") &&
	       contains(r.out, "Exit status"), "exit %d", r.status);
	free_result(&r);
	pcd(&r, "--help");
	expect("cli-dash-dash-help", r.status == 0 && contains(r.out, "Commands:"),
	       "exit %d", r.status);
	free_result(&r);
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		snprintf(name, sizeof(name), "cli-help-%s", cmds[i]);
		pcd(&r, cmds[i], "--help");
		/* Every command's help documents the exit codes 0 to 4. */
		if (!expect(name, r.status == 0 && contains(r.out, "Usage: pcdedup ") &&
			    contains(r.out, "  4  fatal"), "exit %d: %s", r.status, r.out)) {
			free_result(&r);
			continue;
		}
		free_result(&r);
		snprintf(name, sizeof(name), "cli-help-command-%s", cmds[i]);
		pcd(&r, "help", cmds[i]);
		expect(name, r.status == 0 && contains(r.out, cmds[i]), "exit %d", r.status);
		free_result(&r);
	}
}

int main(void)
{
	/* The number of cases the tests below run (kept with them). */
	harness_plan(58);
	if (cli_init()) {
		test_usage();
		test_empty_path();
		test_help();
		test_help_exits();
	}
	return harness_exit();
}
