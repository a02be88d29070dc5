// SPDX-License-Identifier: GPL-2.0
/* Reading the kernel's pcdedup state files (see kstate.h). */
#include "kstate.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json.h"
#include "msg.h"
#include "util.h"

/* sysfs values are at most a page; allow more for fake files in tests. */
#define MAX_VALUE	65536

static void entries_add(struct entries *e, const char *name, char *value)
{
	if (e->n == e->cap) {
		e->cap = e->cap ? 2 * e->cap : 16;
		e->v = realloc(e->v, e->cap * sizeof(*e->v));
		if (!e->v)
			fatal("out of memory");
	}
	e->v[e->n].name = xstrdup(name);
	e->v[e->n].value = value;
	e->n++;
}

const char *kstate_get(const struct entries *e, const char *name)
{
	for (size_t i = 0; i < e->n; i++)
		if (strcmp(e->v[i].name, name) == 0)
			return e->v[i].value;
	return NULL;
}

static void entries_free(struct entries *e)
{
	for (size_t i = 0; i < e->n; i++) {
		free(e->v[i].name);
		free(e->v[i].value);
	}
	free(e->v);
}

static int entry_cmp(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->name, ((const struct entry *)b)->name);
}

/* Read a small file relative to @dirfd; trailing newlines dropped. */
static char *read_value(int dirfd, const char *name)
{
	char *buf = xmalloc(MAX_VALUE + 1);
	size_t len = 0;
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);

	if (fd < 0) {
		int err = errno;

		free(buf);
		errno = err;
		return NULL;
	}
	while (len < MAX_VALUE) {
		ssize_t n = read(fd, buf + len, MAX_VALUE - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = errno;

			free(buf);
			close(fd);
			errno = err;
			return NULL;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	while (len > 0 && buf[len - 1] == '\n')
		len--;
	buf[len] = '\0';
	return buf;
}

/* Every regular file in the sysfs directory, sorted by name. */
int kstate_read_sysfs(struct kstate *s)
{
	DIR *d = opendir(s->sysfs_dir);
	struct dirent *de;

	if (!d)
		return -1;
	while ((de = readdir(d)) != NULL) {
		struct stat st;
		char *value;

		/* The event counters are read as such, not as one value. */
		if (de->d_name[0] == '.' || strcmp(de->d_name, EVENTS_FILE) == 0)
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		/* A write-only knob (the secret, mode 0200) has nothing to show. */
		if (!(st.st_mode & (S_IRUSR | S_IRGRP | S_IROTH)))
			continue;
		value = read_value(dirfd(d), de->d_name);
		if (!value) {
			fprintf(stderr, "pcdedup: cannot read %s/", s->sysfs_dir);
			put_escaped(stderr, de->d_name);
			fprintf(stderr, ": %s\n", errstr(errno));
			s->problems = true;
		}
		entries_add(&s->sysfs, de->d_name, value);
	}
	closedir(d);
	qsort(s->sysfs.v, s->sysfs.n, sizeof(*s->sysfs.v), entry_cmp);
	return 0;
}

/* The pcdedup_* lines of the event counters, whatever they are. */
void kstate_read_vmstat(struct kstate *s)
{
	FILE *f = fopen(s->vmstat_path, "re");
	char *line = NULL, *sp;
	size_t cap = 0;

	if (!f) {
		s->vmstat_err = errno;
		s->problems = true;
		fprintf(stderr, "pcdedup: cannot read %s: %s\n", s->vmstat_path,
			errstr(errno));
		return;
	}
	while (getline(&line, &cap, f) != -1) {
		line[strcspn(line, "\n")] = '\0';
		if (strncmp(line, "pcdedup_", 8) != 0)
			continue;
		sp = strchr(line, ' ');
		if (!sp)
			continue;
		*sp = '\0';
		entries_add(&s->vmstat, line, xstrdup(sp + 1));
	}
	free(line);
	fclose(f);
}

bool kstate_parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!json_is_plain_uint(s))
		return false;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno == 0 && *end == '\0';
}

/* "sha256:<hex> size members openers cached_pages", single spaces. */
static bool parse_share(char *line, struct share *sh)
{
	char *field[5], *save = NULL, *tok;
	int n = 0;

	for (tok = strtok_r(line, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		if (n == 5)
			return false;
		field[n++] = tok;
	}
	if (n != 5 || strncmp(field[0], "sha256:", 7) != 0 ||
	    strlen(field[0]) != 7 + 64 || strspn(field[0] + 7, "0123456789abcdef") != 64)
		return false;
	if (!kstate_parse_u64(field[1], &sh->size) ||
	    !kstate_parse_u64(field[2], &sh->members) ||
	    !kstate_parse_u64(field[3], &sh->openers) ||
	    !kstate_parse_u64(field[4], &sh->cached_pages))
		return false;
	sh->key = xstrdup(field[0]);
	return true;
}

void kstate_read_shares(struct kstate *s)
{
	FILE *f = fopen(s->shares_path, "re");
	char *line = NULL;
	size_t cap = 0;
	unsigned lineno = 0;

	if (!f) {
		s->shares_err = errno;
		return;
	}
	while (getline(&line, &cap, f) != -1) {
		struct share sh;

		lineno++;
		line[strcspn(line, "\n")] = '\0';
		if (line[0] == '#' || line[0] == '\0')
			continue;
		if (!parse_share(line, &sh)) {
			fprintf(stderr, "pcdedup: %s:%u: not a share line, ignored\n",
				s->shares_path, lineno);
			s->problems = true;
			continue;
		}
		if (s->nshares == s->shares_cap) {
			s->shares_cap = s->shares_cap ? 2 * s->shares_cap : 16;
			s->shares = realloc(s->shares, s->shares_cap * sizeof(*s->shares));
			if (!s->shares)
				fatal("out of memory");
		}
		s->shares[s->nshares++] = sh;
	}
	if (ferror(f)) {
		s->shares_err = errno ? errno : EIO;
		s->nshares = 0;	/* a half-read listing would mislead */
	}
	free(line);
	fclose(f);
}

/*
 * The verify file reads back one word; should it ever list the choices
 * with the current one in brackets ("[full] trust"), take the bracketed one.
 */
char *kstate_verify_mode(const char *value)
{
	const char *open = value ? strchr(value, '[') : NULL;
	const char *close = open ? strchr(open, ']') : NULL;

	if (!value)
		return NULL;
	if (!close)
		return xstrdup(value);
	{
		char *word = strndup(open + 1, (size_t)(close - open - 1));

		if (!word)
			fatal("out of memory");
		return word;
	}
}

/* "1" -> 1, "0" -> 0, anything else (or missing) -> -1. */
int kstate_enabled(const struct kstate *s)
{
	const char *v = kstate_get(&s->sysfs, "enabled");

	if (v && strcmp(v, "1") == 0)
		return 1;
	if (v && strcmp(v, "0") == 0)
		return 0;
	return -1;
}

void kstate_free(struct kstate *s)
{
	entries_free(&s->sysfs);
	entries_free(&s->vmstat);
	for (size_t i = 0; i < s->nshares; i++)
		free(s->shares[i].key);
	free(s->shares);
}
