// SPDX-License-Identifier: GPL-2.0
/* pcdedup: command dispatch, top-level help and version. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "exitcode.h"
#include "key.h"
#include "util.h"

#ifndef PCDEDUP_VERSION
#define PCDEDUP_VERSION "unknown"
#endif

static const struct command *const commands[] = {
	&cmd_tag, &cmd_untag, &cmd_verify, &cmd_status, &cmd_secret, &cmd_domain,
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

/* Every status some command can return; each command's help lists its own. */
static const struct exit_spec all_exits[] = {
	{ 0, "success" },
	{ 1, "verify found problems, or some files failed" },
	EXIT_SPEC_USAGE,
	{ 3, "the kernel has no pcdedup support (status), or no secret (secret load)" },
	EXIT_SPEC_FATAL,
	{ 5, "needs CAP_SYS_ADMIN for trusted.* attributes (tag, untag, verify, domain),\n"
	     "     or root (secret load)" },
	{ 6, "no valid secret file (tag, verify, secret load, domain)" },
	EXIT_SPEC_END,
};

static void main_help(void)
{
	printf("Usage: pcdedup COMMAND [OPTION]... [PATH]...\n"
	       "Manage the content keys (" PCDEDUP_XATTR_NAME ") that let the kernel share\n"
	       "page-cache pages between files with identical content, the secret that\n"
	       "makes their MACs, and the sharing domains of filesystems.\n"
	       "\nCommands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		printf("  %-8s %s\n", commands[i]->spec->name, commands[i]->spec->summary);
	printf("  %-8s %s\n", "help", "this help, or 'pcdedup help COMMAND'");
	printf("\n'pcdedup COMMAND --help' describes each command; see also pcdedup(8).\n"
	       "  -h, --help      this help\n"
	       "  -V, --version   print the version\n\n");
	print_exits(stdout, all_exits);
	check_stdout();
}

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (strcmp(commands[i]->spec->name, name) == 0)
			return commands[i];
	return NULL;
}

static int run_command(const struct command *c, int argc, char **argv)
{
	static char argv0[64];

	/* What getopt and usage errors call us. */
	snprintf(argv0, sizeof(argv0), "pcdedup %s", c->spec->name);
	argv[0] = argv0;
	return c->run(argc, argv);
}

static int help(int argc, char **argv)
{
	const struct command *c;
	char *sub_argv[3];

	if (argc < 2) {
		main_help();
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
