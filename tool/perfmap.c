// SPDX-License-Identifier: GPL-2.0
/*
 * The perf JIT map file format.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perfmap.h"

#define PERFMAP_MAX_BYTES (256U << 20)

void jitmap_add(struct jitmap *j, u64 start, u64 end, const char *name)
{
	size_t len = strlen(name) + 1;
	struct jitsym *s;

	if (j->names_len + len > j->names_alloc) {
		j->names_alloc = MAX(2 * j->names_alloc, j->names_len + len + 4096);
		j->names = xrealloc(j->names, j->names_alloc, 1);
	}
	VEC_GROW(j->syms, j->nr, j->alloc);
	s = &j->syms[j->nr];
	s->start = start;
	s->end = end > start ? end : start + 1;
	s->name = j->names_len;
	s->line = j->nr++;
	memcpy(j->names + j->names_len, name, len);
	j->names_len += len;
}

static int jit_cmp(const void *a, const void *b)
{
	const struct jitsym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->line > y->line ? -1 : x->line < y->line; /* newest first */
}

void jitmap_finish(struct jitmap *j)
{
	u32 i, n = 0;

	sort(j->syms, j->nr, sizeof(*j->syms), jit_cmp);
	for (i = 0; i < j->nr; i++)
		if (!n || j->syms[n - 1].start != j->syms[i].start)
			j->syms[n++] = j->syms[i];
	j->nr = n;
}

int jitmap_load(struct jitmap *j, const char *path, long owner_uid)
{
	char *buf, *line, *next;
	struct stat st;
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    (owner_uid >= 0 && st.st_uid != (uid_t)owner_uid && st.st_uid != 0)) {
		close(fd);
		return -EPERM;
	}
	ret = read_fd(fd, &buf, NULL, PERFMAP_MAX_BYTES);
	close(fd);
	if (ret)
		return ret;
	j->present = true;
	for (line = buf; line && *line; line = next) {
		unsigned long long start, size;
		int n = -1;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (sscanf(line, "%llx %llx %n", &start, &size, &n) != 2 || n < 0 || !line[n])
			continue;
		jitmap_add(j, start, start + size < start ? UINT64_MAX : start + size, line + n);
	}
	free(buf);
	jitmap_finish(j);
	return 0;
}

const struct jitsym *jitmap_find(const struct jitmap *j, u64 addr)
{
	u32 lo = 0, hi = j->nr;

	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;

		if (j->syms[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= j->syms[lo - 1].end)
		return NULL;
	return &j->syms[lo - 1];
}

void jitmap_free(struct jitmap *j)
{
	free(j->syms);
	free(j->names);
	memset(j, 0, sizeof(*j));
}
