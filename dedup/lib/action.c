// SPDX-License-Identifier: GPL-2.0
#include "action.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "exitcode.h"
#include "util.h"

/* The action's own name: what follows "COMMAND " in its spec's name. */
static const char *action_name(const struct action *a)
{
	const char *sp = strchr(a->spec->name, ' ');

	return sp ? sp + 1 : a->spec->name;
}

static void group_help(const struct action_group *g)
{
	const struct cmd_spec *c = g->spec;

	printf("Usage: pcdedup %s ACTION [OPTION]...%s%s\n%s\n\nActions:\n", c->name,
	       c->args ? " " : "", c->args ? c->args : "", c->intro);
	for (size_t i = 0; i < g->nactions; i++)
		printf("  %-8s %s\n", action_name(&g->actions[i]), g->actions[i].spec->summary);
	printf("\n'pcdedup %s ACTION --help' describes each.\n", c->name);
	if (c->notes)
		printf("\n%s\n", c->notes);
	putchar('\n');
	print_exits(stdout, c->exits);
	check_stdout();
}

int run_action(const struct action_group *g, int argc, char **argv)
{
	static char argv0[64];
	const char *name = g->spec->name;

	if (argc < 2)
		return usage_error(name, "no action given");
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		group_help(g);
		return EXIT_OK;
	}
	for (size_t i = 0; i < g->nactions; i++) {
		const struct action *a = &g->actions[i];

		if (strcmp(action_name(a), argv[1]) != 0)
			continue;
		snprintf(argv0, sizeof(argv0), "pcdedup %s", a->spec->name);
		argv[1] = argv0;
		return a->run(argc - 1, argv + 1);
	}
	return usage_error(name, "unknown action '%s'", argv[1]);
}

int action_cmdline(const struct cmd_spec *spec, int argc, char **argv, int nargs,
		   int (*option)(int opt, const char *arg, void *ctx), void *ctx)
{
	int c;

	while ((c = next_option(spec, argc, argv)) != -1) {
		int r;

		if (c == 'h') {
			print_help(stdout, spec);
			check_stdout();
			return EXIT_OK;
		}
		if (c == '?' || c == ':')
			return usage_hint(spec->name);
		r = option(c, optarg, ctx);
		if (r >= 0)
			return r;
	}
	if (argc - optind < nargs)
		return usage_error(spec->name, "%s", nargs == 1 ? "an argument is missing" :
				   "arguments are missing");
	if (argc - optind > nargs)
		return usage_error(spec->name, "unexpected argument '%s'", argv[optind + nargs]);
	for (int i = optind; i < argc; i++)
		if (argv[i][0] == '\0')
			return usage_error(spec->name, "empty argument");
	return -1;
}
