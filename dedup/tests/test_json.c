// SPDX-License-Identifier: GPL-2.0
/*
 * The JSON writer: Python's json module is the oracle. Every string written
 * must decode back to the same text, and bytes that are not UTF-8 must come
 * back as U+FFFD, so the output is always valid JSON.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "json.h"

static char *dir;

/* Python prints the UTF-8 hex of each decoded string, one per line. */
static const char decode_py[] =
	"import json, sys\n"
	"for s in json.load(open(sys.argv[1], encoding='utf-8', errors='strict')):\n"
	"    print(s.encode('utf-8').hex())\n";

static void hex_of(const char *s, char *out)
{
	for (; *s; s++, out += 2)
		sprintf(out, "%02x", (unsigned char)*s);
	*out = '\0';
}

static void test_strings(void)
{
	static const struct { const char *name, *in, *want; } cases[] = {
		{ "json-string-plain", "hello", "hello" },
		{ "json-string-quote-backslash", "a\"b\\c", "a\"b\\c" },
		{ "json-string-controls", "\n\t\r\b\f\001\037\177", "\n\t\r\b\f\001\037\177" },
		{ "json-string-utf8", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
		  "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80" },
		{ "json-string-invalid-byte", "a\xff" "b", "a\xef\xbf\xbd" "b" },
		{ "json-string-truncated-utf8", "x\xe2\x82", "x\xef\xbf\xbd\xef\xbf\xbd" },
		{ "json-string-overlong", "\xc0\xaf", "\xef\xbf\xbd\xef\xbf\xbd" },
		{ "json-string-surrogate", "\xed\xa0\x80",
		  "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" },
	};
	size_t n = sizeof(cases) / sizeof(cases[0]);
	char *path = path_join(dir, "strings.json");
	char *script = path_join(dir, "decode.py");
	char *argv[] = { (char *)"python3", script, path, NULL };
	struct run_spec spec = { .env = NULL };
	struct run_result r;
	char want[256], *line, *save = NULL;
	FILE *f = fopen(path, "w");
	struct json j;

	json_init(&j, f);
	json_begin_array(&j);
	for (size_t i = 0; i < n; i++)
		json_string(&j, cases[i].in);
	json_end_array(&j);
	fclose(f);
	write_bytes(script, decode_py, strlen(decode_py));

	if (run_cmd(&spec, argv, &r) != 0) {
		fail("json-strings-decode", "python3 could not decode: %s", r.err);
		free_result(&r);
		return;
	}
	line = strtok_r(r.out, "\n", &save);
	for (size_t i = 0; i < n; i++) {
		hex_of(cases[i].want, want);
		if (!line)
			fail(cases[i].name, "no output from python3");
		else
			expect(cases[i].name, strcmp(line, want) == 0,
			       "decoded to %s, want %s", line, want);
		line = strtok_r(NULL, "\n", &save);
	}
	free_result(&r);
}

/* Nested containers, keys, numbers, booleans and null, checked by Python. */
static const char structure_py[] =
	"import json, sys\n"
	"d = json.load(open(sys.argv[1]))\n"
	"assert d == {'a': 2**64 - 1, 'list': [{}, [], True, None, '0042', 42],\n"
	"             'k\"ey\\n': 'v'}, d\n";

static void test_structure(void)
{
	char *path = path_join(dir, "structure.json");
	char *tool_argv[] = { (char *)"python3", (char *)"-m", (char *)"json.tool", path, NULL };
	char *check_argv[] = { (char *)"python3", (char *)"-c", (char *)structure_py, path, NULL };
	struct run_spec spec = { .env = NULL };
	struct run_result r;
	FILE *f = fopen(path, "w");
	struct json j;

	json_init(&j, f);
	json_begin_object(&j);
	json_key(&j, "a");
	json_uint(&j, UINT64_MAX);
	json_key(&j, "list");
	json_begin_array(&j);
	json_begin_object(&j);
	json_end_object(&j);
	json_begin_array(&j);
	json_end_array(&j);
	json_bool(&j, true);
	json_null(&j);
	json_value_text(&j, "0042");
	json_value_text(&j, "42");
	json_end_array(&j);
	json_key(&j, "k\"ey\n");
	json_string(&j, "v");
	json_end_object(&j);
	fclose(f);
	run_cmd(&spec, tool_argv, &r);
	expect("json-structure-json-tool", r.status == 0, "json.tool exit %d: %s",
	       r.status, r.err);
	free_result(&r);
	run_cmd(&spec, check_argv, &r);
	expect("json-structure-values", r.status == 0, "%s", r.err);
	free_result(&r);
}

static void test_plain_uint(void)
{
	expect("json-plain-uint",
	       json_is_plain_uint("0") && json_is_plain_uint("4096") &&
	       !json_is_plain_uint("") && !json_is_plain_uint("007") &&
	       !json_is_plain_uint("-1") && !json_is_plain_uint("1e3") &&
	       !json_is_plain_uint("full") && !json_is_plain_uint("123456789012345678901"),
	       "wrong classification");
}

int main(void)
{
	struct run_spec spec = { .env = NULL };
	char *argv[] = { (char *)"python3", (char *)"-c", (char *)"", NULL };
	struct run_result r;

	/* The number of cases the tests below run (kept with them). */
	harness_plan(11);
	dir = make_tmpdir("json");
	test_plain_uint();
	if (run_cmd(&spec, argv, &r) != 0) {
		/* python3 is a dependency (scripts/deps.txt): a failure, not a skip. */
		fail("json-python", "python3 not available to check JSON output");
	} else {
		test_strings();
		test_structure();
	}
	free_result(&r);
	return harness_exit();
}
