// SPDX-License-Identifier: GPL-2.0
#include "cli.h"
#include "oracle.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

const char *bin;
char fault_lib[PATH_MAX];
bool have_python;
char preload_env[PATH_MAX + 16];
uint8_t test_secret[32];
char secret_file[PATH_MAX];

void write_secret_file(const char *path, const uint8_t secret[32], unsigned mode)
{
	char text[66];
	int fd;

	for (int i = 0; i < 32; i++)
		snprintf(text + 2 * i, 3, "%02x", secret[i]);
	text[64] = '\n';
	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd < 0 || write(fd, text, 65) != 65 || fchmod(fd, mode) != 0)
		fprintf(stderr, "cannot write the secret %s: %s\n", path, strerror(errno));
	if (fd >= 0)
		close(fd);
}

/* A random secret of the tests' own, for every command they run. */
static void make_secret(void)
{
	char *path = path_join(make_tmpdir("secret"), "secret");
	FILE *f = fopen("/dev/urandom", "rb");

	if (!f || fread(test_secret, 1, sizeof(test_secret), f) != sizeof(test_secret))
		fprintf(stderr, "/dev/urandom: %s\n", strerror(errno));
	if (f)
		fclose(f);
	snprintf(secret_file, sizeof(secret_file), "%s", path);
	free(path);
	write_secret_file(secret_file, test_secret, 0600);
	setenv("PCDEDUP_SECRET_FILE", secret_file, 1);
}

bool cli_init(void)
{
	struct run_spec spec = { .env = NULL };
	char *py[] = { (char *)"python3", (char *)"-c", (char *)"", NULL };
	struct run_result r;

	bin = getenv("PCDEDUP_BIN") ? getenv("PCDEDUP_BIN") : "./pcdedup";
	if (access(bin, X_OK) != 0) {
		fail("cli-binary", "%s: %s (run from dedup/ after make)", bin, strerror(errno));
		return false;
	}
	if (!realpath("tests/fault_xattr.so", fault_lib))
		snprintf(fault_lib, sizeof(fault_lib), "tests/fault_xattr.so");
	snprintf(preload_env, sizeof(preload_env), "LD_PRELOAD=%s", fault_lib);
	make_secret();
	run_cmd(&spec, py, &r);
	have_python = r.status == 0;
	free_result(&r);
	/*
	 * Both are the project's own (scripts/deps.txt, make check builds the
	 * library): without them the cases that need them cannot run, which
	 * is a failure, not a skip.
	 */
	if (!have_python) {
		fail("cli-python3", "python3 not available to check JSON output (scripts/deps.txt)");
		return false;
	}
	if (access(fault_lib, R_OK) != 0) {
		fail("cli-fault-lib", "%s: %s (make check builds it)", fault_lib, strerror(errno));
		return false;
	}
	return true;
}

/* Run pcdedup with @env (may be NULL) and the NULL-ended arguments. */
int pcd_env(struct run_result *r, const char *const *env, ...)
{
	char *argv[64];
	struct run_spec spec = { .env = env };
	va_list ap;
	int n = 0;

	argv[n++] = (char *)bin;
	va_start(ap, env);
	while (n < 63 && (argv[n] = va_arg(ap, char *)) != NULL)
		n++;
	va_end(ap);
	argv[n] = NULL;
	return run_cmd(&spec, argv, r);
}

/* The value pcdedup must write for @path at tree @level, from the oracle. */
uint8_t *expected_value(const char *path, unsigned level, size_t *len)
{
	struct oracle_id id;
	struct oracle o;
	uint8_t *v = NULL;

	if (!oracle_identity(path, &id) || !oracle_build(path, &o))
		return NULL;
	if (level <= o.root_level)
		v = oracle_value(&o, level, test_secret, &id, len);
	oracle_free(&o);
	return v;
}

int key_level(const char *path)
{
	uint8_t *v = malloc(65536);
	int level = lgetxattr(path, XATTR, v, 65536) >= 16 ? v[4] : -1;

	free(v);
	return level;
}

/* 1 if @path carries exactly the right key, 0 if none, -1 if a wrong one. */
int key_state(const char *path)
{
	uint8_t *got = malloc(65536), *want = NULL;
	ssize_t n = lgetxattr(path, XATTR, got, 65536);
	size_t len = 0;
	int state;

	if (n < 0)
		state = errno == ENODATA ? 0 : -1;
	else if (n < 16 || !(want = expected_value(path, got[4], &len)))
		state = -1;
	else
		state = (size_t)n == len && memcmp(got, want, len) == 0 ? 1 : -1;
	free(got);
	free(want);
	return state;
}

bool has_key(const char *path)
{
	return lgetxattr(path, XATTR, NULL, 0) >= 0;
}

/* "label:   N" from a summary; -1 if the label is not there. */
long long counter(const char *text, const char *label)
{
	const char *p = text ? strstr(text, label) : NULL;

	if (!p)
		return -1;
	p += strlen(label);
	while (*p == ' ')
		p++;
	return strtoll(p, NULL, 10);
}

/* A line "label<blanks>value..." in @text: the human summary format. */
bool field_is(const char *text, const char *label, const char *value)
{
	const char *p = text;
	size_t len = strlen(label);

	while (p && *p) {
		if (strncmp(p, label, len) == 0) {
			const char *v = p + len;

			while (*v == ' ')
				v++;
			if (strncmp(v, value, strlen(value)) == 0)
				return true;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return false;
}

/* One "status\tpath" line of verify's output, path as printed (escaped). */
bool has_line(const char *out, const char *status, const char *path)
{
	char line[PATH_MAX + 64];
	const char *p = out;
	size_t len;

	snprintf(line, sizeof(line), "%s\t%s\n", status, path);
	len = strlen(line);
	while ((p = strstr(p, line)) != NULL) {
		if (p == out || p[-1] == '\n')
			return true;
		p += len;
	}
	return false;
}

int count_lines(const char *s)
{
	int n = 0;

	for (; s && *s; s++)
		n += *s == '\n';
	return n;
}

int problem_lines(const char *out)
{
	int n = 0;

	for (const char *p = out; p && *p; p++) {
		const char *eol = strchr(p, '\n');
		const char *tab = strchr(p, '\t');

		n += tab && (!eol || tab < eol);
		if (!eol)
			break;
		p = eol;
	}
	return n;
}

void check_json(const char *name, const char *json, const char *py, const char *arg)
{
	static const char head[] = "import json, sys\nd = json.load(open(sys.argv[1]))\n";
	char *dir = make_tmpdir("json");
	char *file = path_join(dir, "out.json");
	char *script = malloc(sizeof(head) + strlen(py));
	char *tool[] = { (char *)"python3", (char *)"-m", (char *)"json.tool", file, NULL };
	char *check[] = { (char *)"python3", (char *)"-c", script, file, (char *)arg, NULL };
	struct run_spec spec = { .env = NULL };
	struct run_result r;
	char n2[128];

	strcpy(script, head);
	strcat(script, py);
	write_bytes(file, json, strlen(json));
	run_cmd(&spec, tool, &r);
	expect(name, r.status == 0, "json.tool: %s; output was '%s'", r.err, json);
	free_result(&r);
	snprintf(n2, sizeof(n2), "%s-values", name);
	run_cmd(&spec, check, &r);
	expect(n2, r.status == 0, "%s; output was '%s'", r.err, json);
	free_result(&r);
	free(script);
}

char *copy_of(const char *dir, const char *name, const char *from)
{
	char *path = path_join(dir, name);
	FILE *in = fopen(from, "rb"), *out = fopen(path, "wb");
	if (in && out) {
		char buf[65536];
		size_t n;

		while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
			fwrite(buf, 1, n, out);
	}
	if (in)
		fclose(in);
	if (out)
		fclose(out);
	return path;
}

