/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The commands. Each takes argv with argv[0] set to "pcdedup <command>"
 * (so getopt's messages name the command) and returns the exit status.
 */
#ifndef PCDEDUP_COMMANDS_H
#define PCDEDUP_COMMANDS_H

int cmd_tag(int argc, char **argv);
int cmd_untag(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_status(int argc, char **argv);

/* The exit status paragraph every --help ends with. */
extern const char exit_status_help[];

#endif
