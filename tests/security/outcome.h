/* SPDX-License-Identifier: GPL-2.0 */
/*
 * How the security test helpers (seh.c, aah.c) report an outcome: "ok", or
 * the errno's name and the call that failed, on one line of stdout, which
 * the suites compare with what they expect.
 */
#ifndef TESTS_SECURITY_OUTCOME_H
#define TESTS_SECURITY_OUTCOME_H

#include <errno.h>
#include <stdio.h>
#include <string.h>

static inline const char *errname(int err)
{
	const char *name = strerrorname_np(err);

	return name ? name : "E?";
}

static inline int failed(const char *call)
{
	printf("%s %s\n", errname(errno), call);
	return 1;
}

#endif
