// SPDX-License-Identifier: GPL-2.0
/* pcdedup: command dispatch, top-level help and version. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "exitcode.h"
#include "key.h"

#ifndef PCDEDUP_VERSION
#define PCDEDUP_VERSION "unknown"
#endif

static const char main_help[] =
	"Usage: pcdedup COMMAND [OPTION]... [PATH]...\n"
	"Manage the content keys (" PCDEDUP_XATTR_NAME ") that let the kernel share\n"
	"page-cache pages between files with identical content.\n"
	"\n"
	"Commands:\n"
	"  tag      hash regular files and set their keys\n"
	"  untag    remove keys\n"
	"  verify   check that keys still match their files\n"
	"  status   show the kernel's sharing state and counters\n"
	"  help     this help, or 'pcdedup help COMMAND'\n"
	"\n"
	"'pcdedup COMMAND --help' describes each command; see also pcdedup(8).\n"
	"  -h, --help      this help\n"
	"  -V, --version   print the version\n";

struct command {
	const char *name;
	const char *argv0;	/* what getopt and usage errors call us */
	int (*run)(int argc, char **argv);
};

static const struct command commands[] = {
	{ "tag", "pcdedup tag", cmd_tag },
	{ "untag", "pcdedup untag", cmd_untag },
	{ "verify", "pcdedup verify", cmd_verify },
	{ "status", "pcdedup status", cmd_status },
};

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

static int run_command(const struct command *c, int argc, char **argv)
{
	argv[0] = (char *)c->argv0;
	return c->run(argc, argv);
}

static int help(int argc, char **argv)
{
	const struct command *c;
	char *sub_argv[3];

	if (argc < 2) {
		printf("%s\n%s", main_help, exit_status_help);
		return EXIT_OK;
	}
	c = find_command(argv[1]);
	if (!c || argc > 2) {
		fprintf(stderr, "pcdedup help: unknown command '%s'\n"
			"Try 'pcdedup help'.\n", argv[1]);
		return EXIT_USAGE;
	}
	sub_argv[0] = argv[1];
	sub_argv[1] = (char *)"--help";
	sub_argv[2] = NULL;
	return run_command(c, 2, sub_argv);
}

int main(int argc, char **argv)
{
	const struct command *c;

	if (argc < 2) {
		fprintf(stderr, "pcdedup: no command given\nTry 'pcdedup help'.\n");
		return EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
		return help(1, argv + 1);
	if (strcmp(argv[1], "help") == 0)
		return help(argc - 1, argv + 1);
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
		printf("pcdedup %s (key format version %d, %s)\n", PCDEDUP_VERSION,
		       PCDEDUP_KEY_VERSION, PCDEDUP_XATTR_NAME);
		return EXIT_OK;
	}
	c = find_command(argv[1]);
	if (!c) {
		fprintf(stderr, "pcdedup: unknown command '%s'\nTry 'pcdedup help'.\n",
			argv[1]);
		return EXIT_USAGE;
	}
	return run_command(c, argc - 1, argv + 1);
}
