// SPDX-License-Identifier: GPL-2.0
/*
 * pcdedup status on fake kernel files: JSON that Python parses with the
 * right values, the human form, no debugfs, no pcdedup in the kernel.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

struct fake {
	char *sysfs, *vmstat, *shares;
};

static void make_fake(struct fake *f)
{
	static const char *const files[][2] = {
		{ "enabled", "1\n" }, { "verify", "full\n" }, { "min_size", "4096\n" },
		{ "shares", "2\n" }, { "members", "5\n" }, { "openers", "1\n" },
		{ "pages_shared", "100\n" }, { "pages_saved", "300\n" },
		{ "verify_failures", "0\n" },
		/* Names and values a JSON writer must escape. */
		{ "we\"ird\\name", "tab\there \"quoted\"\n" },
		{ "multi", "line one\nline two\n" },
	};
	static const char vmstat[] =
		"nr_free_pages 12345\n"
		"pcdedup_opens_shared 17\n"
		"nr_inactive_file 99\n"
		"pcdedup_opens_refused_nokey 3\n"
		"pcdedup_verify_failed 0\n";
	static const char shares[] =
		"# key size members openers cached_pages\n"
		"sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 65536 3 1 16\n"
		"sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824 1048576 2 0 256\n";
	char *dir = make_tmpdir("status");

	f->sysfs = path_join(dir, "sysfs");
	mkdir(f->sysfs, 0755);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char *p = path_join(f->sysfs, files[i][0]);

		write_bytes(p, files[i][1], strlen(files[i][1]));
		free(p);
	}
	mkdir(path_join(f->sysfs, "subdir"), 0755);	/* not a value: ignored */
	{
		/* Write-only, as the kernel's secret (0200): nothing to show. */
		char *p = path_join(f->sysfs, "secret");

		write_bytes(p, "not-shown\n", 10);
		chmod(p, 0200);
		free(p);
	}
	f->vmstat = path_join(dir, "vmstat");
	write_bytes(f->vmstat, vmstat, strlen(vmstat));
	f->shares = path_join(dir, "shares");
	write_bytes(f->shares, shares, strlen(shares));
}

static const char status_check_py[] =
	"assert d['enabled'] is True, d['enabled']\n"
	"assert d['verify'] == 'full', d['verify']\n"
	"s = d['sysfs']\n"
	"assert 'secret' not in s, s\n"
	"assert s['min_size'] == 4096 and s['pages_saved'] == 300, s\n"
	"assert s['we\"ird\\\\name'] == 'tab\\there \"quoted\"', s\n"
	"assert s['multi'] == 'line one\\nline two', s\n"
	"assert 'subdir' not in s, s\n"
	"assert len(s) == 11, sorted(s)\n"
	"assert d['vmstat'] == {'pcdedup_opens_shared': 17,\n"
	"    'pcdedup_opens_refused_nokey': 3, 'pcdedup_verify_failed': 0}, d['vmstat']\n"
	"sh = d['shares']\n"
	"if sys.argv[2] == 'none':\n"
	"    assert sh is None, sh\n"
	"else:\n"
	"    assert len(sh) == 2, sh\n"
	"    assert sh[0] == {'key': 'sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',\n"
	"        'size': 65536, 'members': 3, 'openers': 1, 'cached_pages': 16}, sh[0]\n"
	"    assert sh[1]['size'] == 1048576 and sh[1]['cached_pages'] == 256, sh[1]\n";

static void check_status_json(const char *name, const char *json, const char *shares)
{
	check_json(name, json, status_check_py, shares);
}

static void test_status(void)
{
	struct fake f;
	struct run_result r;
	char *nowhere;
	char saved[128];
	long page = sysconf(_SC_PAGESIZE);

	make_fake(&f);
	nowhere = path_join(f.sysfs, "../no-such-file");

	pcd(&r, "status", "--json", "--sysfs", f.sysfs, "--vmstat", f.vmstat,
	    "--shares", f.shares);
	if (!expect("status-json-exit-0", r.status == 0 && r.err[0] == '\0',
		    "exit %d: %s", r.status, r.err)) {
		free_result(&r);
	} else if (!have_python) {
		fail("status-json-parses", "python3 not available (scripts/deps.txt)");
		free_result(&r);
	} else {
		expect("status-json-one-line", count_lines(r.out) == 1, "%s", r.out);
		check_status_json("status-json-parses", r.out, "some");
		free_result(&r);
	}

	pcd(&r, "status", "--json", "--sysfs", f.sysfs, "--vmstat", f.vmstat,
	    "--shares", nowhere);
	expect("status-json-no-debugfs-exit-0", r.status == 0 &&
	       contains(r.err, "share listing unavailable"), "exit %d: %s", r.status, r.err);
	if (have_python)
		check_status_json("status-json-no-debugfs-shares-null", r.out, "none");
	free_result(&r);

	pcd(&r, "status", "--sysfs", f.sysfs, "--vmstat", f.vmstat, "--shares", f.shares);
	snprintf(saved, sizeof(saved), "%.1f MiB (300 pages of %ld bytes)",
		 300.0 * (double)page / 1048576.0, page);
	expect("status-human", r.status == 0 && field_is(r.out, "enabled:", "yes") &&
	       field_is(r.out, "verify:", "full") && field_is(r.out, "shares:", "2") &&
	       field_is(r.out, "members:", "5") && field_is(r.out, "openers:", "1") &&
	       field_is(r.out, "pages shared:", "100") &&
	       field_is(r.out, "memory saved:", saved) &&
	       contains(r.out, "pcdedup_opens_refused_nokey") &&
	       !contains(r.out, "nr_free_pages") && !contains(r.out, "secret") &&
	       !contains(r.out, "not-shown") &&
	       contains(r.out, "sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"),
	       "exit %d: %s", r.status, r.out);
	expect("status-human-escapes", contains(r.out, "line one\\nline two") &&
	       contains(r.out, "tab\\there"), "%s", r.out);
	free_result(&r);

	pcd(&r, "status", "--sysfs", f.sysfs, "--vmstat", f.vmstat, "--shares", nowhere);
	expect("status-human-no-debugfs", r.status == 0 &&
	       contains(r.out, "unavailable") && contains(r.out, "memory saved:"),
	       "exit %d: %s", r.status, r.out);
	free_result(&r);

	/* Without --vmstat: SYSFS/events, where the kernel keeps the counters. */
	{
		static const char events[] = "pcdedup_open_shared 42\npcdedup_fill 7\n";
		static const char events_py[] =
			"assert d['vmstat'] == {'pcdedup_open_shared': 42, 'pcdedup_fill': 7}, d['vmstat']\n"
			"assert 'events' not in d['sysfs'], sorted(d['sysfs'])\n";
		char *ev = path_join(f.sysfs, "events");

		write_bytes(ev, events, strlen(events));
		pcd(&r, "status", "--json", "--sysfs", f.sysfs, "--shares", f.shares);
		expect("status-events-exit-0", r.status == 0, "exit %d: %s", r.status, r.err);
		if (have_python)
			check_json("status-reads-sysfs-events", r.out, events_py, "some");
		free_result(&r);
		unlink(ev);
		free(ev);
	}

	pcd(&r, "status", "--sysfs", nowhere);
	expect("status-no-kernel-support", r.status == 3 && r.out[0] == '\0' &&
	       strncmp(r.err, "pcdedup: this kernel has no pcdedup support (no ", 48) == 0,
	       "exit %d: '%s'", r.status, r.err);
	free_result(&r);
	pcd(&r, "status", "--json", "--sysfs", nowhere);
	expect("status-json-no-kernel-support", r.status == 3 && r.out[0] == '\0',
	       "exit %d", r.status);
	free_result(&r);
}

int main(void)
{
	/* The number of cases the tests below run (kept with them). */
	harness_plan(15);
	if (cli_init())
		test_status();
	return harness_exit();
}
