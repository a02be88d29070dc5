/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The progress line of tag and verify: on a terminal only, one line on
 * stderr rewritten in place ("\r"): files done (of the total once the walk
 * has found them all), bytes hashed, MB/s and, with the total known, the
 * time left. Workers add to atomic counters; whichever one finds the line
 * older than PROGRESS_INTERVAL draws it, so it is drawn at most about four
 * times a second, never by two threads at once. Error lines on stderr clear
 * it first (msg.c), so they never land on the end of it.
 */
#ifndef PCDEDUP_PROGRESS_H
#define PCDEDUP_PROGRESS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROGRESS_INTERVAL_MS 250

/* What one line shows. */
struct progress_view {
	uint64_t files_done, files_total;
	uint64_t bytes_done, bytes_total;
	bool total_known;	/* the walk is over: the totals are final */
	double elapsed;		/* seconds since the start */
};

/*
 * Format one line into @buf (at most @len bytes with the NUL), e.g.
 *   "12 files, 1.5 MB, 3.0 MB/s"  while the walk goes on;
 *   "12/40 files, 1.5/9.0 MB, 3.0 MB/s, ETA 0:03"  after it.
 * Byte counts in kB, MB, GB, TB (powers of 1000); the ETA as M:SS or
 * H:MM:SS, "ETA ?" until something has been hashed. Returns @buf.
 */
char *progress_format(char *buf, size_t len, const struct progress_view *v);

struct progress {
	bool on;
	double start;
	atomic_ullong files_done, files_total, bytes_done, bytes_total;
	atomic_bool total_known;
	atomic_llong next_draw_ms;	/* monotonic milliseconds */
};

/* Start counting; the line is shown only if @on (stderr a tty, not quiet). */
void progress_init(struct progress *p, bool on);
/* The walk found one more file of @bytes bytes, queued for the workers. */
void progress_found(struct progress *p, uint64_t bytes);
/* The walk is over: the totals are final. */
void progress_walk_done(struct progress *p);
/* A worker hashed @bytes more bytes / finished one file. */
void progress_bytes(struct progress *p, uint64_t bytes);
void progress_file_done(struct progress *p);
/* Erase the line for good, before the summary. */
void progress_end(struct progress *p);

#endif
