// SPDX-License-Identifier: GPL-2.0
#include "cmdline.h"

#include <getopt.h>
#include <stdarg.h>
#include <string.h>

#include "exitcode.h"

#define MAX_OPTS 16
#define HELP_COLUMN 22

static const struct opt_spec help_opt = { "help", 'h', NULL, "this help" };

static bool has_short(const struct opt_spec *o)
{
	return o->val > 0 && o->val < 0x100;
}

/* "  -j, --jobs N        description", continuation lines indented. */
static void print_option(FILE *f, const struct opt_spec *o)
{
	int col;

	if (has_short(o))
		col = fprintf(f, "  -%c, --%s", o->val, o->name);
	else
		col = fprintf(f, "      --%s", o->name);
	if (o->arg)
		col += fprintf(f, " %s", o->arg);
	if (col >= HELP_COLUMN - 1) {
		fputc('\n', f);
		col = 0;
	}
	fprintf(f, "%*s", HELP_COLUMN - col, "");
	for (const char *s = o->help; *s; s++) {
		fputc(*s, f);
		if (*s == '\n')
			fprintf(f, "%*s", HELP_COLUMN, "");
	}
	fputc('\n', f);
}

void print_exits(FILE *f, const struct exit_spec *exits)
{
	fputs("Exit status:\n", f);
	for (const struct exit_spec *e = exits; e->code >= 0; e++)
		fprintf(f, "  %d  %s\n", e->code, e->meaning);
}

void print_help(FILE *f, const struct cmd_spec *c)
{
	fprintf(f, "Usage: pcdedup %s [OPTION]...%s%s\n%s\n\n", c->name,
		c->args ? " " : "", c->args ? c->args : "", c->intro);
	for (const struct opt_spec *o = c->opts; o->name; o++)
		print_option(f, o);
	print_option(f, &help_opt);
	if (c->notes)
		fprintf(f, "\n%s\n", c->notes);
	fputc('\n', f);
	print_exits(f, c->exits);
}

int next_option(const struct cmd_spec *c, int argc, char **argv)
{
	struct option longopts[MAX_OPTS + 2];
	char shortopts[2 * MAX_OPTS + 4];
	size_t n = 0, s = 0;

	/* Built again on each call: a few dozen bytes, no state to keep. */
	for (const struct opt_spec *o = c->opts; o->name && n < MAX_OPTS; o++) {
		longopts[n++] = (struct option){ o->name,
			o->arg ? required_argument : no_argument, NULL, o->val };
		if (has_short(o)) {
			shortopts[s++] = (char)o->val;
			if (o->arg)
				shortopts[s++] = ':';
		}
	}
	longopts[n++] = (struct option){ help_opt.name, no_argument, NULL, help_opt.val };
	longopts[n] = (struct option){ NULL, 0, NULL, 0 };
	shortopts[s++] = (char)help_opt.val;
	shortopts[s] = '\0';
	return getopt_long(argc, argv, shortopts, longopts, NULL);
}

int usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "pcdedup %s: ", cmd);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\nTry 'pcdedup %s --help'.\n", cmd);
	va_end(ap);
	return EXIT_USAGE;
}

int usage_hint(const char *cmd)
{
	fprintf(stderr, "Try 'pcdedup %s --help'.\n", cmd);
	return EXIT_USAGE;
}
