// SPDX-License-Identifier: GPL-2.0
#include "json.h"

#include <ctype.h>
#include <inttypes.h>
#include <string.h>

void json_init(struct json *j, FILE *f)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
	j->first[0] = true;
}

/* Separator before a value: a comma unless it is first or follows a key. */
static void before_value(struct json *j)
{
	if (j->after_key) {
		j->after_key = false;
		return;
	}
	if (!j->first[j->depth])
		fputc(',', j->f);
	j->first[j->depth] = false;
}

static void open_container(struct json *j, char c)
{
	before_value(j);
	fputc(c, j->f);
	if (j->depth + 1 < JSON_MAX_DEPTH)
		j->depth++;
	j->first[j->depth] = true;
}

static void close_container(struct json *j, char c)
{
	if (j->depth > 0)
		j->depth--;
	fputc(c, j->f);
}

void json_begin_object(struct json *j) { open_container(j, '{'); }
void json_end_object(struct json *j) { close_container(j, '}'); }
void json_begin_array(struct json *j) { open_container(j, '['); }
void json_end_array(struct json *j) { close_container(j, ']'); }

void json_key(struct json *j, const char *name)
{
	before_value(j);
	json_put_string(j->f, name);
	fputc(':', j->f);
	j->after_key = true;
}

void json_string(struct json *j, const char *s)
{
	before_value(j);
	json_put_string(j->f, s);
}

void json_uint(struct json *j, uint64_t v)
{
	before_value(j);
	fprintf(j->f, "%" PRIu64, v);
}

void json_fixed3(struct json *j, double v)
{
	before_value(j);
	fprintf(j->f, "%.3f", v);
}

void json_bool(struct json *j, bool v)
{
	before_value(j);
	fputs(v ? "true" : "false", j->f);
}

void json_null(struct json *j)
{
	before_value(j);
	fputs("null", j->f);
}

bool json_is_plain_uint(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 20 || (s[0] == '0' && n > 1))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isdigit((unsigned char)s[i]))
			return false;
	return true;
}

void json_value_text(struct json *j, const char *s)
{
	before_value(j);
	if (json_is_plain_uint(s))
		fputs(s, j->f);
	else
		json_put_string(j->f, s);
}

/*
 * Length of the valid UTF-8 sequence at @s, or 0 if it is not one
 * (overlong forms, surrogates and code points past U+10FFFF included).
 */
static size_t utf8_len(const unsigned char *s)
{
	size_t len;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;	/* also stops at the NUL */
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return len;
}

void json_put_string(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	fputc('"', f);
	while (*s) {
		size_t len = utf8_len(s);

		if (len == 0) {
			fputs("\\ufffd", f);
			s++;
			continue;
		}
		if (len > 1) {
			fwrite(s, 1, len, f);
			s += len;
			continue;
		}
		switch (*s) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\t': fputs("\\t", f); break;
		case '\r': fputs("\\r", f); break;
		case '\b': fputs("\\b", f); break;
		case '\f': fputs("\\f", f); break;
		default:
			if (*s < 0x20 || *s == 0x7f)
				fprintf(f, "\\u%04x", *s);
			else
				fputc(*s, f);
		}
		s++;
	}
	fputc('"', f);
}
