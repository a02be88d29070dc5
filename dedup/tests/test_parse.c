// SPDX-License-Identifier: GPL-2.0
/* Size and job-count parsing, and the C-style escaping of names. */
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "msg.h"
#include "parse.h"

/* Result lines are "PASS: name": keep blanks out of case names. */
static void no_blanks(char *s)
{
	for (; *s; s++)
		if (*s == ' ')
			*s = '_';
}

static void test_sizes(void)
{
	static const struct { const char *text; uint64_t want; } good[] = {
		{ "0", 0 }, { "4096", 4096 }, { "4K", 4096 }, { "4k", 4096 },
		{ "1KiB", 1024 }, { "1M", 1ull << 20 }, { "3MiB", 3ull << 20 },
		{ "2G", 2ull << 30 }, { "1T", 1ull << 40 },
		{ "18446744073709551615", UINT64_MAX }, { "16777215T", 16777215ull << 40 },
	};
	static const char *const bad[] = {
		"", "-1", " 1", "+1", "1X", "1KB", "1Ki", "1.5K", "K", "1K ",
		"18446744073709551616", "16777216T", "0x10",
	};
	char name[64];

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		uint64_t v = 0;
		bool ok = parse_size(good[i].text, &v);

		snprintf(name, sizeof(name), "parse-size-'%s'", good[i].text);
		expect(name, ok && v == good[i].want, "ok=%d value %llu, want %llu", ok,
		       (unsigned long long)v, (unsigned long long)good[i].want);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint64_t v;

		snprintf(name, sizeof(name), "parse-size-rejects-'%s'", bad[i]);
		no_blanks(name);
		expect(name, !parse_size(bad[i], &v), "accepted as %llu",
		       (unsigned long long)v);
	}
}

static void test_jobs(void)
{
	static const char *const bad[] = { "0", "1025", "-1", "abc", "4x", "", " 2" };
	unsigned v = 0;
	char name[64];

	expect("parse-jobs-1", parse_jobs("1", &v) && v == 1, "got %u", v);
	expect("parse-jobs-1024", parse_jobs("1024", &v) && v == 1024, "got %u", v);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(name, sizeof(name), "parse-jobs-rejects-'%s'", bad[i]);
		no_blanks(name);
		expect(name, !parse_jobs(bad[i], &v), "accepted as %u", v);
	}
	v = default_jobs();
	expect("parse-default-jobs", v >= 1 && v <= MAX_JOBS, "got %u", v);
}

static void test_tree_level(void)
{
	/* The kernel honours levels 0 to 2 only: 3 and up are refused. */
	static const char *const bad[] = { "3", "8", "9", "-1", "x", "1k", "", " 0" };
	unsigned v = 99;
	char name[64];

	expect("parse-tree-level-0", parse_tree_level("0", &v) && v == 0, "got %u", v);
	expect("parse-tree-level-2", parse_tree_level("2", &v) && v == 2, "got %u", v);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(name, sizeof(name), "parse-tree-level-rejects-'%s'", bad[i]);
		no_blanks(name);
		expect(name, !parse_tree_level(bad[i], &v), "accepted as %u", v);
	}
}

static void test_escape(void)
{
	static const struct { const char *name, *in, *want; } cases[] = {
		{ "escape-plain", "dir/file.txt", "dir/file.txt" },
		{ "escape-newline", "a\nb", "a\\nb" },
		{ "escape-tab-cr", "a\tb\rc", "a\\tb\\rc" },
		{ "escape-backslash", "a\\n", "a\\\\n" },
		{ "escape-control", "\001x\177", "\\001x\\177" },
		{ "escape-utf8-kept", "caf\xc3\xa9", "caf\xc3\xa9" },
	};
	char out[256], small[6];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		escape_into(cases[i].in, out, sizeof(out));
		expect(cases[i].name, strcmp(out, cases[i].want) == 0,
		       "got '%s', want '%s'", out, cases[i].want);
	}
	/* A sequence that does not fit is dropped whole, never cut in half. */
	escape_into("abcd\n", small, sizeof(small));
	expect("escape-truncates-whole-sequences", strcmp(small, "abcd") == 0,
	       "got '%s'", small);
}

int main(void)
{
	/* The number of cases the tests below run (kept with them). */
	harness_plan(51);
	test_sizes();
	test_jobs();
	test_tree_level();
	test_escape();
	return harness_exit();
}
