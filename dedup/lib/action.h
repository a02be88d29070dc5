/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Commands made of actions ('pcdedup secret new', 'pcdedup domain set'):
 * the command picks the action named by its first argument and runs it
 * with argv[0] "pcdedup COMMAND ACTION", so that getopt's and usage
 * messages name both; each action has its own cmd_spec (named "COMMAND
 * ACTION") and thus its own --help. 'pcdedup COMMAND --help' lists the
 * actions.
 */
#ifndef PCDEDUP_ACTION_H
#define PCDEDUP_ACTION_H

#include <stddef.h>

#include "cmdline.h"

struct action {
	const struct cmd_spec *spec;	/* spec->name: "COMMAND ACTION" */
	int (*run)(int argc, char **argv);
};

struct action_group {
	const struct cmd_spec *spec;	/* the command's: name, summary, intro, exits */
	const struct action *actions;
	size_t nactions;
};

/* Run the action @argv[1] of @g; the exit status. */
int run_action(const struct action_group *g, int argc, char **argv);

/*
 * Parse an action's options and check that exactly @nargs arguments
 * follow. @option handles each option but --help: -1 when it took it,
 * else the exit status (a usage error). Returns -1 to go on (the
 * arguments at argv[optind]), else the exit status.
 */
int action_cmdline(const struct cmd_spec *spec, int argc, char **argv, int nargs,
		   int (*option)(int opt, const char *arg, void *ctx), void *ctx);

#endif
