// SPDX-License-Identifier: GPL-2.0
/*
 * The secret file (parse, read, which file), 'pcdedup secret new' and
 * 'pcdedup secret load' (into a directory standing in for sysfs), and the
 * parts of 'pcdedup domain' a host can check without setting an attribute
 * on one of its own filesystem roots: usage, privilege, no secret, the
 * root of a path's filesystem, a bind mount of a directory refused (in a
 * private mount namespace), the default domain of "/". Setting domains is
 * checked in the guest (tests/dedup/citizen.sh).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "cli.h"
#include "exitcode.h"
#include "mountroot.h"
#include "secret.h"

static const char hex64[] =
	"00112233445566778899aabbccddeeff0123456789abcdefFEDCBA9876543210";

static void parse_ok(const char *name, const char *text, size_t len)
{
	struct secret s;
	char why[256] = "";

	expect(name, secret_parse(text, len, &s, why, sizeof(why)) == 0 && s.bytes[0] == 0x00 &&
	       s.bytes[1] == 0x11 && s.bytes[15] == 0xff && s.bytes[31] == 0x10,
	       "refused: %s", why);
}

static void parse_bad(const char *name, const char *text, size_t len, const char *word)
{
	struct secret s;
	char why[256] = "";

	expect(name, secret_parse(text, len, &s, why, sizeof(why)) != 0 && strstr(why, word),
	       "accepted, or reason '%s' without '%s'", why, word);
}

static void test_parse(void)
{
	char buf[200];

	parse_ok("secret-parse-64-digits", hex64, 64);
	snprintf(buf, sizeof(buf), "%s\n", hex64);
	parse_ok("secret-parse-newline", buf, 65);
	parse_bad("secret-parse-empty", "x", 0, "0 bytes");
	snprintf(buf, sizeof(buf), "%s\n\n", hex64);
	parse_bad("secret-parse-two-newlines", buf, 66, "66 bytes");
	parse_bad("secret-parse-63-digits", hex64, 63, "63 bytes");
	snprintf(buf, sizeof(buf), "%s0", hex64);
	parse_bad("secret-parse-65-digits", buf, 65, "65 bytes");
	snprintf(buf, sizeof(buf), "%s", hex64);
	buf[10] = 'g';
	parse_bad("secret-parse-not-hex", buf, 64, "byte 10 is not a hex digit");
	snprintf(buf, sizeof(buf), " %s", hex64);
	parse_bad("secret-parse-blank", buf, 64, "byte 0 is not a hex digit");
	{
		struct secret s;
		char text[SECRET_TEXT_LEN + 1], why[128];

		secret_parse(hex64, 64, &s, why, sizeof(why));
		secret_text(&s, text);
		expect("secret-text-lowercase-newline",
		       strncmp(text, "00112233445566778899aabbccddeeff0123456789abcdeffedcba9876543210\n",
			       65) == 0 && text[65] == '\0', "'%s'", text);
	}
}

static void test_read(void)
{
	char *dir = make_tmpdir("secretread");
	char *good = path_join(dir, "good"), *open_ = path_join(dir, "group-readable");
	char *none = path_join(dir, "none"), *sub = path_join(dir, "sub");
	uint8_t bytes[32];
	struct secret s;
	char why[256] = "";

	for (int i = 0; i < 32; i++)
		bytes[i] = (uint8_t)(i * 7 + 1);
	write_secret_file(good, bytes, 0600);
	expect("secret-read-good", secret_read(good, &s, why, sizeof(why)) == 0 &&
	       memcmp(s.bytes, bytes, 32) == 0, "%s", why);
	write_secret_file(open_, bytes, 0640);
	expect("secret-read-refuses-group-access", secret_read(open_, &s, why, sizeof(why)) != 0 &&
	       strstr(why, "mode 0640") && strstr(why, "chmod 600"), "'%s'", why);
	chmod(open_, 0604);
	expect("secret-read-refuses-other-access", secret_read(open_, &s, why, sizeof(why)) != 0 &&
	       strstr(why, "mode 0604"), "'%s'", why);
	expect("secret-read-missing", secret_read(none, &s, why, sizeof(why)) != 0 &&
	       strstr(why, "No such file") && strstr(why, "pcdedup secret new"), "'%s'", why);
	mkdir(sub, 0700);
	expect("secret-read-directory", secret_read(sub, &s, why, sizeof(why)) != 0 &&
	       strstr(why, "not a regular file"), "'%s'", why);
	write_bytes(none, "short\n", 6);
	chmod(none, 0600);
	expect("secret-read-short", secret_read(none, &s, why, sizeof(why)) != 0 &&
	       strstr(why, "not a secret"), "'%s'", why);
}

static void test_path(void)
{
	const char *saved = getenv("PCDEDUP_SECRET_FILE");
	char *keep = saved ? strdup(saved) : NULL;

	expect("secret-path-option-first", strcmp(secret_path("/x"), "/x") == 0, "%s",
	       secret_path("/x"));
	setenv("PCDEDUP_SECRET_FILE", "/from/env", 1);
	expect("secret-path-env-second", strcmp(secret_path(NULL), "/from/env") == 0, "%s",
	       secret_path(NULL));
	setenv("PCDEDUP_SECRET_FILE", "", 1);
	expect("secret-path-empty-env-is-default",
	       strcmp(secret_path(NULL), "/etc/pcdedup/secret") == 0, "%s", secret_path(NULL));
	unsetenv("PCDEDUP_SECRET_FILE");
	expect("secret-path-default", strcmp(secret_path(NULL), "/etc/pcdedup/secret") == 0,
	       "%s", secret_path(NULL));
	if (keep)
		setenv("PCDEDUP_SECRET_FILE", keep, 1);
	free(keep);
}

/* The file's secret as text, or "" if unreadable. */
static char *file_text(const char *path)
{
	char *t = read_text(path);

	return t ? t : strdup("");
}

static void test_new(void)
{
	char *dir = make_tmpdir("secretnew");
	char *f = path_join(dir, "secret"), *g = path_join(dir, "other");
	char *missing = path_join(dir, "no-such-dir/secret");
	char *a, *b;
	struct run_result r;
	struct secret s;
	struct stat st;
	char why[256] = "";

	pcd(&r, "secret", "new", "--secret-file", f);
	expect("secret-new-writes", r.status == 0 && r.out[0] == '\0' && r.err[0] == '\0' &&
	       stat(f, &st) == 0 && (st.st_mode & 07777) == 0600 &&
	       secret_read(f, &s, why, sizeof(why)) == 0,
	       "exit %d: %s %s; mode %o; %s", r.status, r.out, r.err, st.st_mode & 07777, why);
	free_result(&r);
	a = file_text(f);
	expect("secret-new-format", strlen(a) == 65 && a[64] == '\n' &&
	       strspn(a, "0123456789abcdef") == 64, "'%s'", a);
	pcd(&r, "secret", "new", "--secret-file", f);
	b = file_text(f);
	expect("secret-new-keeps-existing", r.status == 1 && strcmp(a, b) == 0 &&
	       contains(r.err, "exists; --force replaces it"), "exit %d: %s", r.status, r.err);
	free_result(&r);
	free(b);
	pcd(&r, "secret", "new", "-f", "--secret-file", f);
	b = file_text(f);
	expect("secret-new-force-replaces", r.status == 0 && strlen(b) == 65 && strcmp(a, b) != 0,
	       "exit %d: %s", r.status, r.err);
	free_result(&r);
	free(a);
	free(b);
	{
		const char *env[] = { "PCDEDUP_SECRET_FILE=", NULL, NULL };
		char e[PATH_MAX + 32];

		snprintf(e, sizeof(e), "PCDEDUP_SECRET_FILE=%s", g);
		env[0] = e;
		pcd_with(&r, env, "secret", "new");
		expect("secret-new-env-file", r.status == 0 && access(g, F_OK) == 0,
		       "exit %d: %s", r.status, r.err);
		free_result(&r);
	}
	pcd(&r, "secret", "new", "--secret-file", missing);
	expect("secret-new-needs-directory", r.status == 1 &&
	       contains(r.err, "the directory must exist"), "exit %d: %s", r.status, r.err);
	free_result(&r);
	/* Nothing but the two secrets is left in the directory. */
	{
		char cmd[PATH_MAX + 64];
		int extra = 0;
		FILE *p;

		snprintf(cmd, sizeof(cmd), "ls -A '%s' | grep -v -x -e secret -e other", dir);
		p = popen(cmd, "r");
		while (p && fgetc(p) != EOF)
			extra++;
		if (p)
			pclose(p);
		expect("secret-new-no-temporary-left", extra == 0, "other files in %s", dir);
	}
	pcd(&r, "secret", "new", "extra-argument");
	expect("secret-new-usage", r.status == 2 && contains(r.err, "unexpected argument"),
	       "exit %d: %s", r.status, r.err);
	free_result(&r);
}

static void test_load(void)
{
	char *dir = make_tmpdir("secretload");
	char *sys = path_join(dir, "sys"), *knob = path_join(dir, "sys/secret");
	char *nosys = path_join(dir, "nosys"), *bad = path_join(dir, "badsys");
	char *badknob = path_join(dir, "badsys/secret"), *open_ = path_join(dir, "open");
	char want[SECRET_TEXT_LEN + 1], *got;
	struct secret s;
	struct run_result r;

	memcpy(s.bytes, test_secret, 32);
	secret_text(&s, want);
	mkdir(sys, 0755);
	pcd(&r, "secret", "load", "--sysfs", sys);
	expect("secret-load-kernel-without-secret", r.status == 3 &&
	       contains(r.err, "takes no secret"), "exit %d: %s", r.status, r.err);
	free_result(&r);
	pcd(&r, "secret", "load", "--sysfs", nosys);
	expect("secret-load-kernel-without-pcdedup", r.status == 3 &&
	       contains(r.err, "no pcdedup support"), "exit %d: %s", r.status, r.err);
	free_result(&r);
	write_bytes(knob, "", 0);
	pcd(&r, "secret", "load", "--sysfs", sys);
	got = read_text(knob);
	expect("secret-load-writes-hex", r.status == 0 && r.out[0] == '\0' && r.err[0] == '\0' &&
	       got && strcmp(got, want) == 0, "exit %d: %s; wrote '%s'", r.status, r.err,
	       got ? got : "(nothing)");
	free(got);
	free_result(&r);
	write_secret_file(open_, test_secret, 0644);
	pcd(&r, "secret", "load", "--sysfs", sys, "--secret-file", open_);
	expect("secret-load-refuses-open-secret", r.status == 6 && contains(r.err, "mode 0644"),
	       "exit %d: %s", r.status, r.err);
	free_result(&r);
	pcd(&r, "secret", "load", "--sysfs", sys, "--secret-file", nosys);
	expect("secret-load-no-secret", r.status == 6 && contains(r.err, "no secret"),
	       "exit %d: %s", r.status, r.err);
	free_result(&r);
	/* A "secret" the kernel side cannot take (here a directory). */
	mkdir(bad, 0755);
	mkdir(badknob, 0755);
	pcd(&r, "secret", "load", "--sysfs", bad);
	expect("secret-load-not-taken", r.status == 1 && contains(r.err, "badsys/secret"),
	       "exit %d: %s", r.status, r.err);
	free_result(&r);
	if (geteuid() == 0) {
		struct run_spec spec = { .as_user = true, .uid = 65534 };
		char *tool = copy_of(dir, "pcdedup", bin), *sec = path_join(dir, "nobody-secret");
		char env[PATH_MAX + 32];
		const char *envs[] = { env, NULL };
		char *argv[] = { tool, (char *)"secret", (char *)"load", (char *)"--sysfs", sys, NULL };

		chmod(tool, 0755);
		chmod(knob, 0200);
		write_secret_file(sec, test_secret, 0600);
		if (chown(sec, 65534, 65534) != 0)
			fprintf(stderr, "chown: %s\n", strerror(errno));
		snprintf(env, sizeof(env), "PCDEDUP_SECRET_FILE=%s", sec);
		spec.env = envs;
		run_cmd(&spec, argv, &r);
		expect("secret-load-not-root", r.status == 5 && contains(r.err, "Permission denied"),
		       "exit %d: %s", r.status, r.err);
		free_result(&r);
	}
}

static void test_help(void)
{
	static const char *const actions[][2] = {
		{ "secret", "new" }, { "secret", "load" }, { "domain", "set" }, { "domain", "show" },
	};
	struct run_result r;
	char name[64];

	pcd(&r, "secret", "--help");
	expect("secret-help-lists-actions", r.status == 0 && contains(r.out, "  new ") &&
	       contains(r.out, "  load ") && contains(r.out, "  6  "), "%s", r.out);
	free_result(&r);
	pcd(&r, "help", "domain");
	expect("domain-help-lists-actions", r.status == 0 && contains(r.out, "  set ") &&
	       contains(r.out, "  show "), "%s", r.out);
	free_result(&r);
	for (size_t i = 0; i < sizeof(actions) / sizeof(actions[0]); i++) {
		snprintf(name, sizeof(name), "%s-%s-help", actions[i][0], actions[i][1]);
		pcd(&r, actions[i][0], actions[i][1], "--help");
		expect(name, r.status == 0 && contains(r.out, "Usage: pcdedup ") &&
		       contains(r.out, actions[i][1]) && contains(r.out, "  2  usage error") &&
		       contains(r.out, "--secret-file"), "exit %d: %s", r.status, r.out);
		free_result(&r);
	}
	pcd(&r, "secret");
	expect("secret-no-action", r.status == 2 && contains(r.err, "no action"), "%s", r.err);
	free_result(&r);
	pcd(&r, "domain", "frob");
	expect("domain-unknown-action", r.status == 2 && contains(r.err, "unknown action 'frob'"),
	       "%s", r.err);
	free_result(&r);
}

static void test_domain(void)
{
	char *dir = make_tmpdir("domain");
	char long_name[80], root[PATH_MAX], why[512] = "";
	struct run_result r;

	memset(long_name, 'x', 65);
	long_name[65] = '\0';
	pcd(&r, "domain", "set", dir, long_name);
	expect("domain-set-name-too-long", r.status == 2 && contains(r.err, "65 bytes (1 to 64)"),
	       "exit %d: %s", r.status, r.err);
	free_result(&r);
	pcd(&r, "domain", "set", dir, "");
	expect("domain-set-empty-name", r.status == 2, "exit %d: %s", r.status, r.err);
	free_result(&r);
	pcd(&r, "domain", "set", dir);
	expect("domain-set-no-name", r.status == 2 && contains(r.err, "missing"),
	       "exit %d: %s", r.status, r.err);
	free_result(&r);
	pcd(&r, "domain", "show", dir, "extra");
	expect("domain-show-extra-argument", r.status == 2, "exit %d: %s", r.status, r.err);
	free_result(&r);
	{
		const char *env[] = { "PCDEDUP_SECRET_FILE=/nonexistent", NULL };

		pcd_with(&r, env, "domain", "set", dir, "tenantA");
		expect("domain-set-no-secret", r.status == 6 && contains(r.err, "no secret"),
		       "exit %d: %s", r.status, r.err);
		free_result(&r);
	}
	if (access(fault_lib, R_OK) == 0) {
		const char *env[] = { preload_env, "PCDEDUP_FAULT_CAP_SYS_ADMIN=0", NULL };

		pcd_with(&r, env, "domain", "set", dir, "tenantA");
		expect("domain-set-no-cap", r.status == 5 && contains(r.err, "CAP_SYS_ADMIN"),
		       "exit %d: %s", r.status, r.err);
		free_result(&r);
		pcd_with(&r, env, "domain", "show", dir);
		expect("domain-show-no-cap", r.status == 5, "exit %d: %s", r.status, r.err);
		free_result(&r);
	}
	/* Only reads: the domain of this host's root filesystem. */
	expect("domain-root-of-tmpdir", fs_root_dir(dir, root, sizeof(root), why, sizeof(why)) == 0,
	       "%s", why);
	{
		struct stat a, b;

		expect("domain-root-is-a-mount-root", stat(root, &a) == 0 && stat(dir, &b) == 0 &&
		       a.st_dev == b.st_dev && strncmp(dir, root, strlen(root)) == 0,
		       "root %s of %s", root, dir);
	}
	pcd(&r, "domain", "show", "--json", "/");
	if (contains(r.out, "\"status\":\"default\""))
		expect("domain-show-json-default", r.status == 0 &&
		       strcmp(r.out, "{\"root\":\"/\",\"domain\":null,\"status\":\"default\","
			      "\"authenticated\":null,\"reason\":null}\n") == 0, "%s", r.out);
	else
		skip("domain-show-json-default", "this host's / has a domain: %s", r.out);
	free_result(&r);
	pcd(&r, "domain", "show", "/nonexistent-pcdedup");
	expect("domain-show-no-such-path", r.status == 1 && contains(r.err, "No such file"),
	       "exit %d: %s", r.status, r.err);
	free_result(&r);
}

/*
 * A bind mount of a directory, in a mount namespace of the test's own: its
 * root is not the filesystem's, and neither action goes on (nothing is set).
 */
static void test_bind_mount(void)
{
	static const char script[] =
		"mount --bind \"$1\" \"$2\" || exit 77; \"$3\" domain set \"$2\" tenantA; s=$?; "
		"\"$3\" domain show \"$2/x\" >&2; echo \"show $?\" >&2; exit $s";
	char *dir = make_tmpdir("bind");
	char *src = path_join(dir, "src"), *mnt = path_join(dir, "mnt");
	char *argv[] = { (char *)"unshare", (char *)"-m", (char *)"--propagation",
			 (char *)"private", (char *)"sh", (char *)"-c", (char *)script,
			 (char *)"sh", src, mnt, (char *)bin, NULL };
	struct run_spec spec = { .env = NULL };
	struct run_result r;

	mkdir(src, 0755);
	mkdir(mnt, 0755);
	mkdir(path_join(src, "x"), 0755);
	run_cmd(&spec, argv, &r);
	if (r.status == 77 || r.status == 127 || contains(r.err, "unshare failed")) {
		skip("domain-bind-mount-refused", "no private mount namespace here: %s", r.err);
		free_result(&r);
		return;
	}
	expect("domain-bind-mount-refused", r.status == 1 && contains(r.err, "show 1") &&
	       contains(r.err, "inside its filesystem, not of the filesystem's root") &&
	       lgetxattr(src, "trusted.pcdedup.domain", NULL, 0) < 0,
	       "exit %d: %s", r.status, r.err);
	free_result(&r);
}

int main(void)
{
	/* Every case of the tests below; one more as root (secret-load-not-root). */
	harness_plan(53 + (geteuid() == 0));
	test_parse();
	test_read();
	test_path();
	if (cli_init()) {
		test_new();
		test_load();
		test_help();
		test_domain();
		test_bind_mount();
	}
	return harness_exit();
}
