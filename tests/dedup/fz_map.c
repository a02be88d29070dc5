/*
 * fuzz: mappings (MAP_SHARED and MAP_PRIVATE, read-only and writable),
 * page faults reading and writing through them (a SIGBUS or SIGSEGV is a
 * result to compare, not a crash), madvise, mincore and msync. See fuzz.c.
 *
 * A mapping made before the file's data last changed may keep the bytes
 * it had (docs/interface.md): with --maps loose (the default) its bytes
 * are not compared with the twin's; --maps share relaxes only mappings
 * made through a keyed fd (maybe a share), --maps strict none. A relaxed
 * read of a mapping made through a keyed fd, and never written privately,
 * is checked against what the documentation allows instead: each page is
 * the share's (the content tagged, zeros after its end within its last
 * page), the twin's, or a SIGBUS (map_model()).
 */
#include "fuzz.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static sigjmp_buf jmp;
static volatile sig_atomic_t armed;
static volatile int fault_sig;

static void on_fault(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	(void)si;
	if (!armed) {
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	armed = 0;
	fault_sig = sig;
	siglongjmp(jmp, 1);
}

static void guard(void)
{
	static int done;
	struct sigaction sa = { .sa_sigaction = on_fault, .sa_flags = SA_SIGINFO };

	if (done)
		return;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGSEGV, &sa, NULL);
	done = 1;
}

/*
 * Page by page of the mapping (at), so that everything before a fault is
 * copied and the fault's offset is that of its page, whatever order
 * memcpy touches bytes in.
 */
static int map_xfer(unsigned char *dst, const unsigned char *src, size_t n,
		    const unsigned char *at, size_t *fault)
{
	static volatile size_t done;

	guard();
	done = 0;
	if (sigsetjmp(jmp, 1)) {
		*fault = done;
		return fault_sig;
	}
	armed = 1;
	while (done < n) {
		size_t chunk = PG - ((uintptr_t)(at + done) % PG);

		if (chunk > n - done)
			chunk = n - done;
		memcpy(dst + done, src + done, chunk);
		done += chunk;
	}
	armed = 0;
	return 0;
}

int map_copy(void *dst, const void *map, size_t n, size_t *fault)
{
	return map_xfer(dst, map, n, map, fault);
}

int map_store(void *map, const void *src, size_t n, size_t *fault)
{
	return map_xfer(map, src, n, map, fault);
}

int map_relaxed(struct fz *z, const struct map_slot *m)
{
	switch (z->maps_mode) {
	case MAPS_STRICT:
		return 0;
	case MAPS_SHARE:
		return m->keyed && m->wgen != z->wgen;
	default:
		return m->wgen != z->wgen;
	}
}

/*
 * Whether @n bytes at file offset @fo, all in one page, are what the share
 * holds there: the tagged content, zeros after its end in its last page.
 * Past that page the share has no page (a fault there is a SIGBUS).
 */
static int share_page_bytes(const struct fz *z, off_t fo, const unsigned char *p, size_t n)
{
	size_t i;

	if ((size_t)fo >= (z->orig_len + PG - 1) / PG * PG)
		return 0;
	for (i = 0; i < n; i++)
		if (p[i] != ((size_t)fo + i < z->orig_len ? z->orig[fo + i] : 0))
			return 0;
	return 1;
}

/*
 * A relaxed read of the tagged side's mapping @m at @off (r[0]), beside the
 * twin's (r[1]): every page read must be the share's or the twin's, and a
 * fault a SIGBUS (or the twin's own fault).
 */
static void map_model(struct fz *z, const struct map_slot *m, size_t off, const struct res r[NSIDE])
{
	size_t done = 0;

	z->modelled++;
	while (done < r[0].len) {
		off_t fo = m->off + (off_t)(off + done);
		size_t chunk = PG - (size_t)fo % PG;
		int twin;

		if (chunk > r[0].len - done)
			chunk = r[0].len - done;
		twin = done + chunk <= r[1].len && !memcmp(r[0].data + done, r[1].data + done, chunk);
		if (!twin && !share_page_bytes(z, fo, r[0].data + done, chunk)) {
			z_fail(z, "mapping made at step %ld: bytes at file offset %lld are neither the share's nor the twin's",
			       m->step, (long long)fo);
			return;
		}
		done += chunk;
	}
	if (r[0].sig && r[0].sig != SIGBUS && !(r[1].sig == r[0].sig && r[1].fault == r[0].fault))
		z_fail(z, "mapping made at step %ld: signal %d at +%zu, not SIGBUS", m->step, r[0].sig, r[0].fault);
}

static void unmap_side(struct side *s, int slot)
{
	if (s->maps[slot].p)
		munmap(s->maps[slot].p, s->maps[slot].len);
	s->maps[slot].p = NULL;
}

void map_unmap_all(struct fz *z)
{
	for (int i = 0; i < NSIDE; i++)
		for (int k = 0; k < NMAP; k++)
			unmap_side(&z->s[i], k);
}

void op_mmap(struct fz *z)
{
	int slot = z_rand(z, NMAP), fdslot = z_pick_fd(z);
	size_t size = z_size(z), pages = size / PG + 2, len;
	off_t off = z_pct(z, 50) ? 0 : z_rand(z, pages) * PG;
	int shared = z_pct(z, 50), prot = PROT_READ, flags, populate = z_pct(z, 10);
	struct res r[NSIDE];

	switch (z_rand(z, 4)) {
	case 0: len = size > (size_t)off ? size - off : PG; break;
	case 1: len = PG * (z_rand(z, 4) + 1); break;
	case 2: len = size + PG - off % PG; break;	/* past EOF */
	default: len = (z_rand(z, pages) + 1) * PG; break;
	}
	if (len > 16 * MiB)
		len = 16 * MiB;
	len = (len + PG - 1) & ~(PG - 1);
	if (z_pct(z, 40) && (!shared || z->step >= z->onset))
		prot |= PROT_WRITE;
	flags = (shared ? MAP_SHARED : MAP_PRIVATE) | (populate ? MAP_POPULATE : 0);
	if (fdslot < 0) {
		z_desc(z, "mmap (no fd)");
		return;
	}
	z_desc(z, "mmap map%d %s off %lld len %zu %s%s %s", slot, z_fdname(z, fdslot), (long long)off, len,
	       shared ? "MAP_SHARED" : "MAP_PRIVATE", populate ? "|MAP_POPULATE" : "",
	       prot & PROT_WRITE ? "PROT_READ|PROT_WRITE" : "PROT_READ");
	for (int i = 0; i < NSIDE; i++) {
		struct side *s = &z->s[i];
		void *p;

		unmap_side(s, slot);
		p = mmap(NULL, len, prot, flags, s->fds[fdslot].fd, off);
		res_set(&r[i], p == MAP_FAILED ? -1 : 0);
		if (p != MAP_FAILED)
			s->maps[slot] = (struct map_slot){ .p = p, .len = len, .off = off, .prot = prot,
							  .flags = flags, .keyed = s->fds[fdslot].keyed,
							  .wgen = z->wgen, .step = z->step };
	}
	if (!z_same(z, r)) {
		for (int i = 0; i < NSIDE; i++)
			unmap_side(&z->s[i], slot);
		return;
	}
	/* The key goes when a writable shared mapping is made. */
	if (r[0].ret == 0 && shared && (prot & PROT_WRITE))
		z_key_event(z);
}

void op_munmap(struct fz *z)
{
	int slot = z_pick_map(z);
	struct res r[NSIDE];

	if (slot < 0) {
		z_desc(z, "munmap (no mapping)");
		return;
	}
	z_desc(z, "munmap map%d", slot);
	for (int i = 0; i < NSIDE; i++) {
		struct side *s = &z->s[i];

		res_set(&r[i], munmap(s->maps[slot].p, s->maps[slot].len));
		s->maps[slot].p = NULL;
	}
	z_same(z, r);
}

/* A range inside mapping slot: whole, a page, or random. */
static void map_range(struct fz *z, const struct map_slot *m, size_t *off, size_t *n)
{
	switch (z_rand(z, 4)) {
	case 0:
		*off = 0;
		*n = m->len;
		break;
	case 1:
		*off = z_rand(z, m->len / PG) * PG;
		*n = PG;
		break;
	default:
		*off = z_rand(z, m->len);
		*n = z_rand(z, m->len - *off) + 1;
		break;
	}
	if (*n > BUFMAX - PG)
		*n = BUFMAX - PG;
}

void op_fault_read(struct fz *z)
{
	int slot = z_pick_map(z);
	size_t off, n;
	struct res r[NSIDE];

	if (slot < 0) {
		z_desc(z, "fault read (no mapping)");
		return;
	}
	map_range(z, &z->s[1].maps[slot], &off, &n);
	z_desc(z, "read map%d (from step %ld, file off %lld) +%zu len %zu%s", slot, z->s[1].maps[slot].step,
	       (long long)z->s[1].maps[slot].off, off, n, map_relaxed(z, &z->s[1].maps[slot]) ? " (relaxed)" : "");
	for (int i = 0; i < NSIDE; i++) {
		struct side *s = &z->s[i];
		size_t fault = 0;
		int sig = map_copy(s->buf, s->maps[slot].p + off, n, &fault);

		res_set(&r[i], sig ? (long)fault : (long)n);
		r[i].sig = sig;
		r[i].fault = fault;
		r[i].data = s->buf;
		r[i].len = sig ? fault : n;
		r[i].skip = map_relaxed(z, &s->maps[slot]);
	}
	if (r[0].skip) {
		const struct map_slot *m = &z->s[0].maps[slot];

		z->relaxed++;
		if (m->keyed && !m->cow)
			map_model(z, m, off, r);
	}
	z_same(z, r);
}

void op_fault_write(struct fz *z)
{
	int w[NMAP], nw = 0, slot;
	size_t off, n;
	struct res r[NSIDE];
	struct map_slot *m;

	for (int i = 0; i < NMAP; i++) {
		m = &z->s[1].maps[i];
		if (m->p && (m->prot & PROT_WRITE) && (!(m->flags & MAP_SHARED) || z->step >= z->onset))
			w[nw++] = i;
	}
	if (!nw) {
		z_desc(z, "fault write (no writable mapping)");
		return;
	}
	slot = w[z_rand(z, nw)];
	m = &z->s[1].maps[slot];
	map_range(z, m, &off, &n);
	z_wdata(z, n);
	z_desc(z, "write map%d (%s, from step %ld) +%zu len %zu", slot,
	       m->flags & MAP_SHARED ? "shared" : "private", m->step, off, n);
	for (int i = 0; i < NSIDE; i++) {
		struct side *s = &z->s[i];
		size_t fault = 0;
		int sig = map_store(s->maps[slot].p + off, z->wbuf, n, &fault);

		res_set(&r[i], sig ? (long)fault : (long)n);
		r[i].sig = sig;
		r[i].fault = fault;
		/* Only a private copy of a relaxed mapping may differ. */
		r[i].skip = !(m->flags & MAP_SHARED) && map_relaxed(z, &s->maps[slot]);
		if (!(m->flags & MAP_SHARED))
			s->maps[slot].cow = 1;
	}
	if (z_same(z, r) && (m->flags & MAP_SHARED))
		z_data_event(z);
}

void op_madvise(struct fz *z)
{
	static const int adv[] = { MADV_WILLNEED, MADV_DONTNEED, MADV_COLD, MADV_PAGEOUT,
				   MADV_SEQUENTIAL, MADV_RANDOM, MADV_NORMAL, MADV_POPULATE_READ,
				   MADV_POPULATE_WRITE, MADV_REMOVE, MADV_FREE, 99 };
	static const char *names[] = { "WILLNEED", "DONTNEED", "COLD", "PAGEOUT", "SEQUENTIAL",
				       "RANDOM", "NORMAL", "POPULATE_READ", "POPULATE_WRITE",
				       "REMOVE", "FREE", "99" };
	int slot = z_pick_map(z), a = z_rand(z, 16);
	size_t off, n;
	struct res r[NSIDE];
	struct map_slot *m;

	a = a < 4 ? a : a - 4;	/* the first four twice as often */
	if (adv[a] == MADV_REMOVE && z->step < z->onset)
		a = 0;
	if (slot < 0) {
		z_desc(z, "madvise (no mapping)");
		return;
	}
	m = &z->s[1].maps[slot];
	map_range(z, m, &off, &n);
	off &= ~(PG - 1);
	z_desc(z, "madvise map%d +%zu len %zu MADV_%s", slot, off, n, names[a]);
	for (int i = 0; i < NSIDE; i++) {
		struct side *s = &z->s[i];

		res_set(&r[i], madvise(s->maps[slot].p + off, n, adv[a]));
		/* POPULATE faults: a relaxed mapping may fault differently. */
		r[i].skip = (adv[a] == MADV_POPULATE_READ || adv[a] == MADV_POPULATE_WRITE) &&
			    map_relaxed(z, &s->maps[slot]);
	}
	if (z_same(z, r) && r[0].ret == 0 && adv[a] == MADV_REMOVE)
		z_data_event(z);
}

void op_mincore(struct fz *z)
{
	int slot = z_pick_map(z);
	size_t off, n;
	struct res r[NSIDE];
	static unsigned char vec[16 * MiB / PG + 2];

	if (slot < 0) {
		z_desc(z, "mincore (no mapping)");
		return;
	}
	map_range(z, &z->s[1].maps[slot], &off, &n);
	off &= ~(PG - 1);
	z_desc(z, "mincore map%d +%zu len %zu", slot, off, n);
	for (int i = 0; i < NSIDE; i++)
		res_set(&r[i], mincore(z->s[i].maps[slot].p + off, n, vec));
	z_same(z, r);
}

void op_msync(struct fz *z)
{
	static const int fl[] = { MS_ASYNC, MS_SYNC, MS_INVALIDATE, MS_SYNC | MS_INVALIDATE,
				  MS_SYNC | MS_ASYNC };
	int slot = z_pick_map(z), f = z_rand(z, 5);
	size_t off, n;
	struct res r[NSIDE];

	if (slot < 0) {
		z_desc(z, "msync (no mapping)");
		return;
	}
	map_range(z, &z->s[1].maps[slot], &off, &n);
	off &= ~(PG - 1);
	z_desc(z, "msync map%d +%zu len %zu flags %#x", slot, off, n, fl[f]);
	for (int i = 0; i < NSIDE; i++)
		res_set(&r[i], msync(z->s[i].maps[slot].p + off, n, fl[f]));
	z_same(z, r);
}
