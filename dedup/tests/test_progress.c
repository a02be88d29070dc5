// SPDX-License-Identifier: GPL-2.0
/* The progress line's text, for every state it can be in. */
#include <string.h>

#include "harness.h"
#include "progress.h"

static void check(const char *name, const struct progress_view *v, const char *want)
{
	char buf[160];

	progress_format(buf, sizeof(buf), v);
	expect(name, strcmp(buf, want) == 0, "got '%s', want '%s'", buf, want);
}

int main(void)
{
	/* The number of cases the tests below run (kept with them). */
	harness_plan(7);
	check("progress-walk-going-on",
	      &(struct progress_view){ .files_done = 12, .bytes_done = 1500000,
				       .elapsed = 0.5 },
	      "12 files, 1.5 MB, 3.0 MB/s");
	check("progress-total-known-eta",
	      &(struct progress_view){ .files_done = 12, .files_total = 40,
				       .bytes_done = 1500000, .bytes_total = 9000000,
				       .total_known = true, .elapsed = 0.5 },
	      "12/40 files, 1.5/9.0 MB, 3.0 MB/s, ETA 0:03");
	check("progress-eta-hours",
	      &(struct progress_view){ .files_done = 1, .files_total = 2,
				       .bytes_done = 1000000, .bytes_total = 7201000000ULL,
				       .total_known = true, .elapsed = 1 },
	      "1/2 files, 0.0/7.2 GB, 1.0 MB/s, ETA 2:00:00");
	check("progress-eta-unknown-before-first-byte",
	      &(struct progress_view){ .files_total = 3, .bytes_total = 5000,
				       .total_known = true, .elapsed = 0.2 },
	      "0/3 files, 0.0/5.0 kB, 0.0 MB/s, ETA ?");
	check("progress-small-byte-counts",
	      &(struct progress_view){ .files_done = 1, .bytes_done = 999, .elapsed = 0 },
	      "1 files, 999 B, 0.0 MB/s");
	check("progress-bytes-total-in-bytes",
	      &(struct progress_view){ .files_done = 1, .files_total = 1, .bytes_done = 10,
				       .bytes_total = 10, .total_known = true, .elapsed = 1 },
	      "1/1 files, 10/10 B, 0.0 MB/s, ETA 0:00");
	{
		char small[16];

		progress_format(small, sizeof(small), &(struct progress_view){
			.files_done = 123456, .files_total = 999999, .bytes_done = 1,
			.bytes_total = 2, .total_known = true, .elapsed = 1 });
		expect("progress-truncated-safely", strlen(small) == sizeof(small) - 1,
		       "'%s'", small);
	}
	return harness_exit();
}
