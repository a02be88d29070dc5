// SPDX-License-Identifier: GPL-2.0
#include "setkey.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>

#include "fileops.h"
#include "key.h"

/* The errors with which filesystems refuse a value that is too large. */
static bool too_large(int err)
{
	return err == E2BIG || err == ENOSPC || err == ERANGE;
}

uint8_t *setkey_value(const struct file_tree *tree, unsigned level,
		      const struct setkey_opts *o, size_t *len)
{
	struct content_key key;
	uint8_t *v;

	tree_key(tree, level, &key);
	v = key_encode(&key, len);
	key_mac(o->secret, v, o->id, v + KEY_MAC_OFFSET);
	return v;
}

static bool same_value(const uint8_t *want, size_t len, const void *have,
		       ssize_t have_len)
{
	return have_len >= 0 && (size_t)have_len == len &&
	       memcmp(have, want, len) == 0;
}

/* Is the value for @level what the file has now? */
static bool holds(const struct file_tree *tree, unsigned level,
		  const struct setkey_opts *o, const void *have, ssize_t have_len)
{
	size_t len;
	uint8_t *want = setkey_value(tree, level, o, &len);
	bool same = same_value(want, len, have, have_len);

	free(want);
	return same;
}

/* The levels to try, lowest first; false with a reason if there is none. */
static bool level_range(const struct file_tree *tree, const struct setkey_opts *o,
			unsigned *first, unsigned *last, char *why, size_t whylen)
{
	unsigned l;

	if (o->level >= 0) {
		l = (unsigned)o->level;
		if (l > KEY_MAX_KEY_LEVEL) {
			snprintf(why, whylen, "tree level %u: the kernel honours levels 0 to %u only",
				 l, (unsigned)KEY_MAX_KEY_LEVEL);
			return false;
		}
		if (l > tree->root_level) {
			snprintf(why, whylen, "no tree level %u for a file of %llu bytes "
				 "(its root is level %u)", l,
				 (unsigned long long)tree->size, tree->root_level);
			return false;
		}
		if (!tree_has_level(tree, l)) {
			snprintf(why, whylen, "a level %u key of a %llu-byte file would be "
				 "%llu bytes, more than an extended attribute holds (%d)",
				 l, (unsigned long long)tree->size,
				 (unsigned long long)key_value_len(tree->size, l),
				 KEY_MAX_LEN);
			return false;
		}
		*first = *last = l;
		return true;
	}
	/* The levels too long for any attribute are not even kept. */
	for (l = 0; !tree_has_level(tree, l); l++)
		;
	if (l > KEY_MAX_KEY_LEVEL) {
		snprintf(why, whylen, "too large for a key: its level %u would be %llu bytes, "
			 "more than an extended attribute holds (%d), and the kernel honours "
			 "levels 0 to %u only; not tagged", (unsigned)KEY_MAX_KEY_LEVEL,
			 (unsigned long long)key_value_len(tree->size, KEY_MAX_KEY_LEVEL),
			 KEY_MAX_LEN, (unsigned)KEY_MAX_KEY_LEVEL);
		return false;
	}
	*first = l;
	*last = tree->root_level < KEY_MAX_KEY_LEVEL ? tree->root_level : KEY_MAX_KEY_LEVEL;
	if (o->level == SETKEY_LEVEL_INLINE && *first == 0 && *last > 0 &&
	    key_value_len(tree->size, 0) > SETKEY_INLINE_MAX)
		*first = 1;
	while (o->level == SETKEY_LEVEL_SHORT && *first < *last &&
	       key_value_len(tree->size, *first) > SETKEY_INLINE_MAX)
		(*first)++;
	return true;
}

enum setkey_result set_key(int fd, const struct file_tree *tree,
			   const struct setkey_opts *o, const void *have,
			   ssize_t have_len, unsigned *level, int *errp, char *why,
			   size_t whylen)
{
	unsigned first, last;

	*errp = 0;
	if (!level_range(tree, o, &first, &last, why, whylen))
		return SETKEY_FAILED;
	if (o->dry_run) {
		/* Nothing is written, so the filesystem cannot be asked. */
		for (*level = first; *level <= last; (*level)++)
			if (holds(tree, *level, o, have, have_len))
				return SETKEY_UNCHANGED;
		*level = first;
		return SETKEY_WRITTEN;
	}
	for (*level = first;; (*level)++) {
		size_t len;
		uint8_t *want = setkey_value(tree, *level, o, &len);
		int err = 0;

		if (same_value(want, len, have, have_len)) {
			free(want);
			return SETKEY_UNCHANGED;
		}
		if (fsetxattr(fd, PCDEDUP_XATTR_NAME, want, len, 0) != 0)
			err = errno;
		free(want);
		if (err == 0)
			return SETKEY_WRITTEN;
		*errp = err;
		if (too_large(err) && *level < last)
			continue;
		if (err == ETXTBSY)
			snprintf(why, whylen, "in use (open for write or shared), not tagged");
		else if (too_large(err))
			snprintf(why, whylen, "cannot set %s: %s (level %u key, %zu bytes)%s",
				 PCDEDUP_XATTR_NAME, xattr_reason(err), *level, len,
				 o->level < 0 && *level == KEY_MAX_KEY_LEVEL ?
				 "; the kernel honours no higher level: not tagged" : "");
		else
			snprintf(why, whylen, "cannot set %s: %s", PCDEDUP_XATTR_NAME,
				 xattr_reason(err));
		return SETKEY_FAILED;
	}
}
