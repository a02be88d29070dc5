/*
 * pagecount FILE...
 *
 * Prints one JSON object:
 *   {"files": [{"path": P, "pages": N, "resident": R}, ...],
 *    "distinct_frames": D, "total_pages": M}
 *
 * "resident" is mincore() on a fresh mapping, before this program touches
 * it: the file's pages already in the page cache. Then all files are mapped
 * at once and every page is touched, and the physical frame numbers from
 * /proc/self/pagemap are counted: if the files share one cache, D equals the
 * pages of one file; without sharing, D equals M (the sum). The PFN field
 * reads as 0 without CAP_SYS_ADMIN; then "distinct_frames" is null.
 */
#include "common.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define PM_PRESENT (1ULL << 63)
#define PM_PFN_MASK ((1ULL << 55) - 1)

struct file {
	const char *path;
	size_t size, pages, resident;
	unsigned char *map;
};

static void json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char ch = *s;

		if (ch == '"' || ch == '\\')
			printf("\\%c", ch);
		else if (ch < 0x20)
			printf("\\u%04x", ch);
		else
			putchar(ch);
	}
	putchar('"');
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Touch every page of every mapping, read its pagemap entry, and count the
 * distinct PFNs. Returns -1 when PFNs are not available (not root, no
 * pagemap, or a page not present after touching).
 */
static long distinct_frames(struct file *f, int nf, size_t total, size_t pg)
{
	uint64_t *pfns = xmalloc(total * sizeof(*pfns));
	size_t k = 0, distinct = 0;
	volatile unsigned char sink;
	int pm = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);

	if (pm < 0)
		goto unavailable;
	for (int i = 0; i < nf; i++) {
		for (size_t p = 0; p < f[i].pages; p++)
			sink = f[i].map[p * pg];
		for (size_t p = 0; p < f[i].pages; p++) {
			uint64_t e;
			off_t at = (uintptr_t)(f[i].map + p * pg) / pg * sizeof(e);

			if (pread(pm, &e, sizeof(e), at) != sizeof(e))
				goto unavailable;
			if (!(e & PM_PRESENT) || !(e & PM_PFN_MASK))
				goto unavailable;	/* PFN hidden: no CAP_SYS_ADMIN */
			pfns[k++] = e & PM_PFN_MASK;
		}
	}
	(void)sink;
	close(pm);
	qsort(pfns, k, sizeof(*pfns), cmp_u64);
	for (size_t i = 0; i < k; i++)
		if (i == 0 || pfns[i] != pfns[i - 1])
			distinct++;
	free(pfns);
	return distinct;

unavailable:
	if (pm >= 0)
		close(pm);
	free(pfns);
	return -1;
}

int main(int argc, char **argv)
{
	size_t pg = sysconf(_SC_PAGESIZE), total = 0;
	int nf = argc - 1;
	struct file *f;
	long distinct;

	if (nf < 1)
		die("usage: pagecount FILE...");
	f = calloc(nf, sizeof(*f));
	if (!f)
		die("out of memory");
	for (int i = 0; i < nf; i++) {
		struct stat st;
		unsigned char *vec;
		int fd;

		f[i].path = argv[i + 1];
		fd = open(f[i].path, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st) < 0)
			die("pagecount: %s: %s", f[i].path, strerror(errno));
		f[i].size = st.st_size;
		f[i].pages = (f[i].size + pg - 1) / pg;
		total += f[i].pages;
		if (f[i].pages) {
			f[i].map = mmap(NULL, f[i].size, PROT_READ, MAP_SHARED, fd, 0);
			if (f[i].map == MAP_FAILED)
				die("pagecount: mmap %s: %s", f[i].path, strerror(errno));
			vec = xmalloc(f[i].pages);
			if (mincore(f[i].map, f[i].size, vec) < 0)
				die("pagecount: mincore %s: %s", f[i].path, strerror(errno));
			for (size_t p = 0; p < f[i].pages; p++)
				f[i].resident += vec[p] & 1;
			free(vec);
		}
		close(fd);	/* the mapping keeps the file */
	}

	distinct = distinct_frames(f, nf, total, pg);

	printf("{\"files\": [");
	for (int i = 0; i < nf; i++) {
		printf("%s{\"path\": ", i ? ", " : "");
		json_string(f[i].path);
		printf(", \"pages\": %zu, \"resident\": %zu}", f[i].pages, f[i].resident);
	}
	printf("], \"distinct_frames\": ");
	if (distinct < 0)
		printf("null");
	else
		printf("%ld", distinct);
	printf(", \"total_pages\": %zu}\n", total);
	for (int i = 0; i < nf; i++)
		if (f[i].map)
			munmap(f[i].map, f[i].size);
	free(f);
	return 0;
}
