/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Exit status of pcdedup; each command's --help lists its own (see the
 * exit tables next to each command) and pcdedup(8) lists them per command.
 */
#ifndef PCDEDUP_EXITCODE_H
#define PCDEDUP_EXITCODE_H

enum pcdedup_exit {
	EXIT_OK = 0,		/* success, nothing to report */
	EXIT_PROBLEMS = 1,	/* verify found problems, or some files failed */
	EXIT_USAGE = 2,		/* bad command line */
	EXIT_NO_KERNEL = 3,	/* status, secret load: the kernel has no pcdedup (secret) */
	EXIT_FATAL = 4,		/* cannot go on: out of memory, no threads, ... */
	EXIT_NO_CAP = 5,	/* tag, untag, verify, domain: no CAP_SYS_ADMIN */
	EXIT_NO_SECRET = 6,	/* tag, verify, secret load, domain: no valid secret file */
};

#endif
