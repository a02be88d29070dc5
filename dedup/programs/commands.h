/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The commands. Each takes argv with argv[0] set to "pcdedup <command>"
 * (so getopt's messages name the command) and returns the exit status;
 * its spec (options, help, exit statuses) is the one description of its
 * command line.
 */
#ifndef PCDEDUP_COMMANDS_H
#define PCDEDUP_COMMANDS_H

#include "cmdline.h"

struct command {
	const struct cmd_spec *spec;
	int (*run)(int argc, char **argv);
};

extern const struct command cmd_tag, cmd_untag, cmd_verify, cmd_status, cmd_secret,
	cmd_domain;

#endif
