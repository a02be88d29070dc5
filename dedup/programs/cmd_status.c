// SPDX-License-Identifier: GPL-2.0
/* pcdedup status: the kernel's pcdedup state, for humans or as JSON. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmdline.h"
#include "commands.h"
#include "exitcode.h"
#include "json.h"
#include "kstate.h"
#include "msg.h"
#include "util.h"

static void print_json(const struct kstate *s)
{
	char *verify = kstate_verify_mode(kstate_get(&s->sysfs, "verify"));
	int enabled = kstate_enabled(s);
	struct json j;

	json_init(&j, stdout);
	json_begin_object(&j);
	json_key(&j, "enabled");
	if (enabled < 0)
		json_null(&j);
	else
		json_bool(&j, enabled);
	json_key(&j, "verify");
	if (verify)
		json_string(&j, verify);
	else
		json_null(&j);
	json_key(&j, "sysfs");
	json_begin_object(&j);
	for (size_t i = 0; i < s->sysfs.n; i++) {
		json_key(&j, s->sysfs.v[i].name);
		if (s->sysfs.v[i].value)
			json_value_text(&j, s->sysfs.v[i].value);
		else
			json_null(&j);
	}
	json_end_object(&j);
	json_key(&j, "vmstat");
	if (s->vmstat_err) {
		json_null(&j);
	} else {
		json_begin_object(&j);
		for (size_t i = 0; i < s->vmstat.n; i++) {
			json_key(&j, s->vmstat.v[i].name);
			json_value_text(&j, s->vmstat.v[i].value);
		}
		json_end_object(&j);
	}
	json_key(&j, "shares");
	if (s->shares_err) {
		json_null(&j);
	} else {
		json_begin_array(&j);
		for (size_t i = 0; i < s->nshares; i++) {
			const struct share *sh = &s->shares[i];

			json_begin_object(&j);
			json_key(&j, "key");
			json_string(&j, sh->key);
			json_key(&j, "size");
			json_uint(&j, sh->size);
			json_key(&j, "members");
			json_uint(&j, sh->members);
			json_key(&j, "openers");
			json_uint(&j, sh->openers);
			json_key(&j, "cached_pages");
			json_uint(&j, sh->cached_pages);
			json_end_object(&j);
		}
		json_end_array(&j);
	}
	json_end_object(&j);
	putchar('\n');
	free(verify);
}

/* A summary value, C-escaped, or "?" when the kernel does not provide it. */
static void print_summary_line(const struct kstate *s, const char *label,
			       const char *name)
{
	const char *v = kstate_get(&s->sysfs, name);

	printf("%-14s ", label);
	put_escaped(stdout, v ? v : "?");
	putchar('\n');
}

static void print_entries(const char *title, const char *source,
			  const struct entries *e)
{
	printf("\n%s (%s):\n", title, source);
	if (e->n == 0)
		printf("  (none)\n");
	for (size_t i = 0; i < e->n; i++) {
		char name[256];

		printf("  %-28s ", escape_into(e->v[i].name, name, sizeof(name)));
		put_escaped(stdout, e->v[i].value ? e->v[i].value : "(unreadable)");
		putchar('\n');
	}
}

static void print_human(const struct kstate *s)
{
	char *verify = kstate_verify_mode(kstate_get(&s->sysfs, "verify"));
	const char *saved = kstate_get(&s->sysfs, "pages_saved");
	int enabled = kstate_enabled(s);
	long page = sysconf(_SC_PAGESIZE);
	uint64_t pages;

	printf("%-14s %s\n", "enabled:",
	       enabled < 0 ? "?" : enabled ? "yes" : "no");
	printf("%-14s ", "verify:");
	put_escaped(stdout, verify ? verify : "?");
	putchar('\n');
	print_summary_line(s, "shares:", "shares");
	print_summary_line(s, "members:", "members");
	print_summary_line(s, "openers:", "openers");
	print_summary_line(s, "pages shared:", "pages_shared");
	if (saved && kstate_parse_u64(saved, &pages))
		printf("%-14s %.1f MiB (%" PRIu64 " pages of %ld bytes)\n",
		       "memory saved:", (double)pages * (double)page / (1024.0 * 1024.0),
		       pages, page);
	else
		printf("%-14s ?\n", "memory saved:");

	print_entries("sysfs", s->sysfs_dir, &s->sysfs);
	if (s->vmstat_err)
		printf("\nvmstat (%s): unreadable: %s\n", s->vmstat_path,
		       errstr(s->vmstat_err));
	else
		print_entries("vmstat", s->vmstat_path, &s->vmstat);

	printf("\nshares (%s):\n", s->shares_path);
	if (s->shares_err) {
		printf("  unavailable: %s (is debugfs mounted on /sys/kernel/debug?)\n",
		       errstr(s->shares_err));
	} else if (s->nshares == 0) {
		printf("  (none)\n");
	} else {
		printf("  %-71s %12s %8s %8s %12s\n", "KEY", "SIZE", "MEMBERS",
		       "OPENERS", "CACHED_PAGES");
		for (size_t i = 0; i < s->nshares; i++) {
			const struct share *sh = &s->shares[i];
			char key[160];

			printf("  %-71s %12" PRIu64 " %8" PRIu64 " %8" PRIu64 " %12" PRIu64 "\n",
			       escape_into(sh->key, key, sizeof(key)), sh->size,
			       sh->members, sh->openers, sh->cached_pages);
		}
	}
	free(verify);
}

static const struct opt_spec status_opts[] = {
	OPT_SPEC_JSON("one JSON object: enabled, verify, sysfs, vmstat, shares"),
	{ "sysfs", OPT_SYSFS, "DIR", "read DIR instead of " DEFAULT_SYSFS },
	{ "vmstat", OPT_VMSTAT, "FILE", "read FILE instead of " DEFAULT_VMSTAT },
	{ "shares", OPT_SHARES, "FILE", "read FILE instead of " DEFAULT_SHARES },
	OPT_SPEC_END,
};

static const struct exit_spec status_exits[] = {
	{ 0, "success" },
	{ 1, "a kernel file could not be read or parsed" },
	EXIT_SPEC_USAGE,
	{ 3, "the kernel has no pcdedup support" },
	EXIT_SPEC_FATAL,
	EXIT_SPEC_END,
};

static const struct cmd_spec status_spec = {
	.name = "status",
	.summary = "show the kernel's sharing state and counters",
	.args = NULL,
	.intro =
	"Show the kernel's page-cache sharing state: the files of\n"
	DEFAULT_SYSFS "/, the pcdedup_* counters of " DEFAULT_VMSTAT "\n"
	"and the per-share listing " DEFAULT_SHARES "\n"
	"(needs debugfs; without it the rest is still shown).",
	.opts = status_opts,
	.exits = status_exits,
};

/*
 * SYSFS/events where the kernel has it (the counters are kept to the
 * administrator there), /proc/vmstat on kernels that still count there.
 */
static const char *events_path(const char *sysfs_dir, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/%s", sysfs_dir, EVENTS_FILE);

	if (n < 0 || (size_t)n >= len || access(buf, F_OK) != 0)
		return DEFAULT_VMSTAT;
	return buf;
}

static int status_main(int argc, char **argv)
{
	struct kstate s = {
		.sysfs_dir = DEFAULT_SYSFS,
		.vmstat_path = DEFAULT_VMSTAT,
		.shares_path = DEFAULT_SHARES,
	};
	char events[PATH_MAX];
	bool json = false, vmstat_given = false;
	int c;

	while ((c = next_option(&status_spec, argc, argv)) != -1) {
		switch (c) {
		case OPT_JSON:
			json = true;
			break;
		case OPT_SYSFS:
			s.sysfs_dir = optarg;
			break;
		case OPT_VMSTAT:
			s.vmstat_path = optarg;
			vmstat_given = true;
			break;
		case OPT_SHARES:
			s.shares_path = optarg;
			break;
		case 'h':
			print_help(stdout, &status_spec);
			check_stdout();
			return EXIT_OK;
		default:
			return usage_hint("status");
		}
	}
	if (optind < argc)
		return usage_error("status", "unexpected argument '%s'", argv[optind]);

	if (kstate_read_sysfs(&s) != 0) {
		if (errno == ENOENT || errno == ENOTDIR) {
			fprintf(stderr, "pcdedup: this kernel has no pcdedup support (no %s)\n",
				s.sysfs_dir);
			return EXIT_NO_KERNEL;
		}
		fatal("cannot read %s: %s", s.sysfs_dir, errstr(errno));
	}
	if (!vmstat_given)
		s.vmstat_path = events_path(s.sysfs_dir, events, sizeof(events));
	kstate_read_vmstat(&s);
	kstate_read_shares(&s);
	/* The human form says so in its shares section; JSON only has null. */
	if (s.shares_err && json)
		fprintf(stderr, "pcdedup: share listing unavailable: %s: %s%s\n",
			s.shares_path, errstr(s.shares_err),
			s.shares_err == ENOENT ? " (is debugfs mounted?)" : "");
	if (json)
		print_json(&s);
	else
		print_human(&s);
	check_stdout();

	kstate_free(&s);
	return s.problems ? EXIT_PROBLEMS : EXIT_OK;
}

const struct command cmd_status = { &status_spec, status_main };
