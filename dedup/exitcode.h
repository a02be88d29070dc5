/* SPDX-License-Identifier: GPL-2.0 */
/* Exit status of pcdedup; documented in --help and pcdedup(8). */
#ifndef PCDEDUP_EXITCODE_H
#define PCDEDUP_EXITCODE_H

enum pcdedup_exit {
	EXIT_OK = 0,		/* success, nothing to report */
	EXIT_PROBLEMS = 1,	/* verify found problems, or some files failed */
	EXIT_USAGE = 2,		/* bad command line */
	EXIT_NO_KERNEL = 3,	/* status: the running kernel has no pcdedup */
	EXIT_FATAL = 4,		/* cannot go on: out of memory, no threads, ... */
};

#endif
