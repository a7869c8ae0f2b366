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
	struct jitsym *s;

	VEC_GROW(j->syms, j->nr, j->alloc);
	s = &j->syms[j->nr];
	s->start = start;
	s->end = end > start ? end : start + 1;
	s->name = strpool_add(&j->names, name);
	s->line = j->nr++;
}

static int jit_cmp(const void *a, const void *b, void *arg)
{
	const struct jitsym *x = a, *y = b;

	(void)arg;
	return x->line > y->line ? -1 : x->line < y->line; /* newest first */
}

void jitmap_finish(struct jitmap *j)
{
	j->nr = iv_sort_unique(j->syms, j->nr, sizeof(*j->syms), jit_cmp, NULL);
	iv_build(&j->index, j->syms, j->nr, sizeof(*j->syms));
}

int jitmap_load(struct jitmap *j, const char *path, long owner_uid)
{
	char *buf, *line, *next;
	struct stat st;
	int fd, ret;

	fd = open_regular(path);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) || (owner_uid >= 0 && st.st_uid != (uid_t)owner_uid && st.st_uid != 0)) {
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
	u32 i = iv_find(&j->index, j->syms, sizeof(*j->syms), addr);

	return i == IV_NONE ? NULL : &j->syms[i];
}

void jitmap_free(struct jitmap *j)
{
	free(j->syms);
	iv_free(&j->index);
	strpool_free(&j->names);
	memset(j, 0, sizeof(*j));
}
