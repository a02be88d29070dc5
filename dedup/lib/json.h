/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A minimal streaming JSON writer: it tracks where commas go and escapes
 * strings (control bytes, quotes, backslashes; bytes that are not valid
 * UTF-8 become U+FFFD so the output is always valid JSON text).
 */
#ifndef PCDEDUP_JSON_H
#define PCDEDUP_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 16

struct json {
	FILE *f;
	int depth;
	bool first[JSON_MAX_DEPTH];	/* no comma before the next value */
	bool after_key;			/* a key was written, its value is next */
};

void json_init(struct json *j, FILE *f);
void json_begin_object(struct json *j);
void json_end_object(struct json *j);
void json_begin_array(struct json *j);
void json_end_array(struct json *j);
void json_key(struct json *j, const char *name);
void json_string(struct json *j, const char *s);
void json_uint(struct json *j, uint64_t v);
void json_bool(struct json *j, bool v);
/* A finite number with three decimals (seconds, say). */
void json_fixed3(struct json *j, double v);
void json_null(struct json *j);
/* A sysfs-style value: a JSON number if it is a plain decimal, else a string. */
void json_value_text(struct json *j, const char *s);

/* Write @s as a quoted, escaped JSON string (also used for object keys). */
void json_put_string(FILE *f, const char *s);

/* True when @s is a decimal integer JSON can carry as is (no sign, no 007). */
bool json_is_plain_uint(const char *s);

#endif
