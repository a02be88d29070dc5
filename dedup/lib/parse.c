// SPDX-License-Identifier: GPL-2.0
#include "parse.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "key.h"

static int suffix_shift(const char *s)
{
	static const char units[] = "KMGT";
	const char *u;

	if (*s == '\0')
		return 0;
	u = strchr(units, toupper((unsigned char)*s));
	if (!u)
		return -1;
	s++;
	/* "K" or "KiB" only: "KB" might mean 1000 to some readers. */
	if (*s != '\0' && strcmp(s, "iB") != 0)
		return -1;
	return 10 * (int)(u - units + 1);
}

bool parse_size(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;
	int shift;

	/* strtoull accepts leading blanks and '-'; a size has neither. */
	if (!isdigit((unsigned char)*s))
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno == ERANGE)
		return false;
	shift = suffix_shift(end);
	if (shift < 0)
		return false;
	if (shift && v > (UINT64_MAX >> shift))
		return false;
	*out = (uint64_t)v << shift;
	return true;
}

/* A decimal number from @min to @max, digits only. */
static bool parse_uint_range(const char *s, unsigned min, unsigned max,
			     unsigned *out)
{
	unsigned long v;
	char *end;

	if (!isdigit((unsigned char)*s))
		return false;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return false;
	*out = (unsigned)v;
	return true;
}

bool parse_jobs(const char *s, unsigned *out)
{
	return parse_uint_range(s, 1, MAX_JOBS, out);
}

bool parse_tree_level(const char *s, unsigned *out)
{
	return parse_uint_range(s, 0, KEY_MAX_KEY_LEVEL, out);
}

unsigned default_jobs(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	if (n < 1)
		return 1;
	return n > MAX_JOBS ? MAX_JOBS : (unsigned)n;
}
