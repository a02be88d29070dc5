/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The closing summary of tag, untag and verify, on standard output: one
 * "label:      N (note)" line per count for humans, or with --json one
 * JSON object {"command": ..., "key": N, ...} on one line.
 */
#ifndef PCDEDUP_SUMMARY_H
#define PCDEDUP_SUMMARY_H

#include <stdbool.h>

#include "json.h"

struct summary {
	bool json;
	struct json j;
};

void summary_begin(struct summary *s, bool json, const char *command);
/* A count: @label (with its colon) and @note (or NULL) for humans, @key in JSON. */
void summary_count(struct summary *s, const char *key, const char *label,
		   unsigned long long v, const char *note);
/* JSON only: details the human form gives in a note. */
void summary_json_count(struct summary *s, const char *key, unsigned long long v);
void summary_json_bool(struct summary *s, const char *key, bool v);
/* "hashed: B bytes in S s (R MB/s)"; JSON "bytes" and "seconds". */
void summary_hashed(struct summary *s, unsigned long long bytes, double secs);
/* Close the JSON object; exits EXIT_FATAL if stdout could not be written. */
void summary_end(struct summary *s);

#endif
