/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's pcdedup state, read from its three sources (the sysfs
 * directory, its event counters, the debugfs share listing; see
 * docs/interface.md). Reading is kept apart from printing so that both the
 * human and the JSON form show exactly the same data.
 */
#ifndef PCDEDUP_KSTATE_H
#define PCDEDUP_KSTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DEFAULT_SYSFS	"/sys/kernel/mm/pcdedup"
/* The event counters: SYSFS/events, or /proc/vmstat on older kernels. */
#define EVENTS_FILE	"events"
#define DEFAULT_VMSTAT	"/proc/vmstat"
#define DEFAULT_SHARES	"/sys/kernel/debug/pcdedup/shares"

/* One "name value" pair; value NULL when it could not be read. */
struct entry {
	char *name;
	char *value;
};

struct entries {
	struct entry *v;
	size_t n, cap;
};

/* One line of the per-share listing. */
struct share {
	char *key;
	uint64_t size, members, openers, cached_pages;
};

struct kstate {
	const char *sysfs_dir, *vmstat_path, *shares_path;
	struct entries sysfs;	/* every regular file of sysfs_dir, by name */
	struct entries vmstat;	/* every pcdedup_* line, in file order */
	int vmstat_err;		/* 0, or why vmstat_path could not be read */
	struct share *shares;
	size_t nshares, shares_cap;
	int shares_err;		/* 0, or why the share listing is unavailable */
	bool problems;		/* something that should be there was not */
};

/*
 * Read every regular file of @s->sysfs_dir but the write-only ones (the
 * secret). Returns -1 with errno set if the directory cannot be opened
 * (ENOENT: the kernel has no pcdedup).
 */
int kstate_read_sysfs(struct kstate *s);
/* These note failures in @s (vmstat_err, shares_err, problems). */
void kstate_read_vmstat(struct kstate *s);
void kstate_read_shares(struct kstate *s);
void kstate_free(struct kstate *s);

/* Value of the sysfs file @name, or NULL. */
const char *kstate_get(const struct entries *e, const char *name);
/* The verify mode word (heap string), or NULL if unknown. */
char *kstate_verify_mode(const char *value);
/* enabled: 1, 0, or -1 when missing or not a 0/1 value. */
int kstate_enabled(const struct kstate *s);
/* A plain decimal counter value. */
bool kstate_parse_u64(const char *s, uint64_t *v);

#endif
