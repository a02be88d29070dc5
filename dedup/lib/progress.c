// SPDX-License-Identifier: GPL-2.0
#include "progress.h"

#include <stdio.h>
#include <string.h>

#include "msg.h"
#include "util.h"

/* Unit for a byte count: the largest power of 1000 not above @v. */
static void byte_unit(uint64_t v, double *div, const char **name)
{
	static const char *const names[] = { "B", "kB", "MB", "GB", "TB", "PB" };
	unsigned i = 0;

	*div = 1;
	while (i + 1 < sizeof(names) / sizeof(names[0]) && (double)v >= *div * 1000) {
		*div *= 1000;
		i++;
	}
	*name = names[i];
}

/* "1.5 MB", or "1.5/9.0 MB" with a total, both in the total's unit. */
static int put_bytes(char *buf, size_t len, uint64_t done, const uint64_t *total)
{
	const char *unit;
	double div;

	byte_unit(total && *total > done ? *total : done, &div, &unit);
	if (div == 1)
		return total ? snprintf(buf, len, "%llu/%llu B", (unsigned long long)done,
					(unsigned long long)*total)
			     : snprintf(buf, len, "%llu B", (unsigned long long)done);
	if (total)
		return snprintf(buf, len, "%.1f/%.1f %s", (double)done / div,
				(double)*total / div, unit);
	return snprintf(buf, len, "%.1f %s", (double)done / div, unit);
}

char *progress_format(char *buf, size_t len, const struct progress_view *v)
{
	double rate = v->elapsed > 0 ? (double)v->bytes_done / v->elapsed : 0;
	char bytes[64];
	int n;

	put_bytes(bytes, sizeof(bytes), v->bytes_done, v->total_known ? &v->bytes_total : NULL);
	if (v->total_known)
		n = snprintf(buf, len, "%llu/%llu files, %s, %.1f MB/s",
			     (unsigned long long)v->files_done,
			     (unsigned long long)v->files_total, bytes, rate / 1e6);
	else
		n = snprintf(buf, len, "%llu files, %s, %.1f MB/s",
			     (unsigned long long)v->files_done, bytes, rate / 1e6);
	if (!v->total_known || n < 0 || (size_t)n >= len)
		return buf;
	if (rate <= 0) {
		snprintf(buf + n, len - (size_t)n, ", ETA ?");
	} else {
		uint64_t left = v->bytes_total > v->bytes_done ? v->bytes_total - v->bytes_done : 0;
		unsigned long long s = (unsigned long long)((double)left / rate + 0.5);

		if (s >= 3600)
			snprintf(buf + n, len - (size_t)n, ", ETA %llu:%02llu:%02llu",
				 s / 3600, s / 60 % 60, s % 60);
		else
			snprintf(buf + n, len - (size_t)n, ", ETA %llu:%02llu", s / 60, s % 60);
	}
	return buf;
}

static long long now_ms(void)
{
	return (long long)(now_seconds() * 1000);
}

void progress_init(struct progress *p, bool on)
{
	memset(p, 0, sizeof(*p));
	p->on = on;
	p->start = now_seconds();
	atomic_init(&p->next_draw_ms, now_ms() + PROGRESS_INTERVAL_MS);
}

static void draw(struct progress *p)
{
	struct progress_view v = {
		.files_done = atomic_load(&p->files_done),
		.files_total = atomic_load(&p->files_total),
		.bytes_done = atomic_load(&p->bytes_done),
		.bytes_total = atomic_load(&p->bytes_total),
		.total_known = atomic_load(&p->total_known),
		.elapsed = now_seconds() - p->start,
	};
	char line[160];

	progress_format(line, sizeof(line), &v);
	msg_progress(line);
}

/* Draw if the line is older than the interval; one thread wins the turn. */
static void maybe_draw(struct progress *p)
{
	long long due, now;

	if (!p->on)
		return;
	now = now_ms();
	due = atomic_load(&p->next_draw_ms);
	if (now < due ||
	    !atomic_compare_exchange_strong(&p->next_draw_ms, &due, now + PROGRESS_INTERVAL_MS))
		return;
	draw(p);
}

void progress_found(struct progress *p, uint64_t bytes)
{
	atomic_fetch_add(&p->files_total, 1);
	atomic_fetch_add(&p->bytes_total, bytes);
}

void progress_walk_done(struct progress *p)
{
	atomic_store(&p->total_known, true);
	maybe_draw(p);
}

void progress_bytes(struct progress *p, uint64_t bytes)
{
	atomic_fetch_add(&p->bytes_done, bytes);
	maybe_draw(p);
}

void progress_file_done(struct progress *p)
{
	atomic_fetch_add(&p->files_done, 1);
	maybe_draw(p);
}

void progress_end(struct progress *p)
{
	if (p->on)
		msg_progress(NULL);
	p->on = false;
}
