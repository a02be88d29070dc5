// SPDX-License-Identifier: GPL-2.0
#include "summary.h"

#include <stdio.h>

#include "util.h"

void summary_begin(struct summary *s, bool json, const char *command)
{
	s->json = json;
	if (!json)
		return;
	json_init(&s->j, stdout);
	json_begin_object(&s->j);
	json_key(&s->j, "command");
	json_string(&s->j, command);
}

void summary_count(struct summary *s, const char *key, const char *label,
		   unsigned long long v, const char *note)
{
	if (s->json)
		summary_json_count(s, key, v);
	else
		printf("%-16s %llu%s%s\n", label, v, note ? " " : "", note ? note : "");
}

void summary_json_count(struct summary *s, const char *key, unsigned long long v)
{
	if (!s->json)
		return;
	json_key(&s->j, key);
	json_uint(&s->j, v);
}

void summary_json_bool(struct summary *s, const char *key, bool v)
{
	if (!s->json)
		return;
	json_key(&s->j, key);
	json_bool(&s->j, v);
}

void summary_hashed(struct summary *s, unsigned long long bytes, double secs)
{
	if (!s->json) {
		printf("%-16s %llu bytes in %.3f s (%.1f MB/s)\n", "hashed:", bytes, secs,
		       secs > 0 ? (double)bytes / 1e6 / secs : 0);
		return;
	}
	json_key(&s->j, "bytes");
	json_uint(&s->j, bytes);
	json_key(&s->j, "seconds");
	json_fixed3(&s->j, secs);
}

void summary_end(struct summary *s)
{
	if (s->json) {
		json_end_object(&s->j);
		putchar('\n');
	}
	check_stdout();
}
