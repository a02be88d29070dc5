/* SPDX-License-Identifier: GPL-2.0 */
/* Parsing of numeric command-line arguments. */
#ifndef PCDEDUP_PARSE_H
#define PCDEDUP_PARSE_H

#include <stdbool.h>
#include <stdint.h>

/*
 * A byte count: decimal digits, optionally followed by K, M, G or T
 * (powers of 1024, either case, optionally written KiB, MiB, ...).
 * Returns false on anything else, including overflow.
 */
bool parse_size(const char *s, uint64_t *out);

/* A worker count, 1 to MAX_JOBS. */
#define MAX_JOBS 1024
bool parse_jobs(const char *s, unsigned *out);

/* A Merkle tree level a key may carry, 0 to KEY_MAX_KEY_LEVEL (2). */
bool parse_tree_level(const char *s, unsigned *out);

/* Number of online CPUs, at least 1: the default worker count. */
unsigned default_jobs(void);

#endif
