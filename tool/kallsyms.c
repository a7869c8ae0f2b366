// SPDX-License-Identifier: GPL-2.0
/*
 * Parse /proc/kallsyms and /proc/modules into a sorted table.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kallsyms.h"

#define KALLSYMS_MAX_BYTES (256U << 20)

static u32 add_name(struct kallsyms *k, const char *s, size_t len)
{
	u32 off;

	if (!k->names_len) {
		k->names = xmalloc(4096);
		k->names_alloc = 4096;
		k->names[0] = '\0';
		k->names_len = 1;
	}
	if (!len)
		return 0;
	if (k->names_len + len + 1 > k->names_alloc) {
		k->names_alloc = MAX(2 * k->names_alloc, k->names_len + len + 1);
		k->names = xrealloc(k->names, k->names_alloc, 1);
	}
	off = k->names_len;
	memcpy(k->names + off, s, len);
	k->names[off + len] = '\0';
	k->names_len += len + 1;
	return off;
}

void ksyms_add(struct kallsyms *k, u64 start, u64 end, char type, const char *name,
	       const char *module)
{
	struct ksym *s;

	VEC_GROW(k->syms, k->nr, k->alloc);
	s = &k->syms[k->nr++];
	s->start = start;
	s->end = end;
	s->type = type;
	s->name = add_name(k, name, strlen(name));
	s->module = module ? add_name(k, module, strlen(module)) : 0;
}

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	/* prefer global text ('T') over local ('t') aliases, then keep order */
	if ((x->type == 'T') != (y->type == 'T'))
		return x->type == 'T' ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}

void ksyms_finish(struct kallsyms *k)
{
	u32 i, n = 0;

	sort(k->syms, k->nr, sizeof(*k->syms), ksym_cmp);
	for (i = 0; i < k->nr; i++)
		if (!n || k->syms[n - 1].start != k->syms[i].start)
			k->syms[n++] = k->syms[i];
	k->nr = n;
	for (i = 0; i < n; i++) {
		struct ksym *s = &k->syms[i];
		u64 next = i + 1 < n ? k->syms[i + 1].start : UINT64_MAX;

		if (!s->end || s->end > next)
			s->end = next;
		if (s->end <= s->start)
			s->end = s->start + 1;
	}
	k->loaded = true;
}

/* /proc/modules: "name size refcount deps state address" */
static void module_ranges(const char *path, struct kallsyms *k)
{
	char *buf, *line, *next;
	u32 i;

	if (read_file(path, &buf, NULL, KALLSYMS_MAX_BYTES))
		return;
	for (line = buf; line && *line; line = next) {
		unsigned long long size, addr;
		char name[64];

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (sscanf(line, "%63s %llu %*s %*s %*s %llx", name, &size, &addr) != 3 || !addr)
			continue;
		/* bound each symbol of this module by the module's end */
		for (i = 0; i < k->nr; i++) {
			struct ksym *s = &k->syms[i];

			if (s->module && !strcmp(k->names + s->module, name) && s->start >= addr &&
			    s->start < addr + size)
				s->end = addr + size;
		}
	}
	free(buf);
}

static bool is_text(char type)
{
	return type == 't' || type == 'T' || type == 'w' || type == 'W';
}

int ksyms_load(struct kallsyms *k, const char *path, const char *modules)
{
	u64 etext = 0, nonzero = 0, total = 0;
	char *buf, *line, *next;
	int ret;
	u32 i;

	memset(k, 0, sizeof(*k));
	ret = read_file(path ? path : "/proc/kallsyms", &buf, NULL, KALLSYMS_MAX_BYTES);
	if (ret) {
		k->note = xasprintf("kernel symbols unavailable: %s: %s",
				    path ? path : "/proc/kallsyms", strerror(-ret));
		return ret;
	}
	for (line = buf; line && *line; line = next) {
		unsigned long long addr;
		char type, *name, *mod, *end;
		int n = -1;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (sscanf(line, "%llx %c %n", &addr, &type, &n) != 2 || n < 0)
			continue;
		total++;
		name = line + n;
		end = name + strcspn(name, " \t");
		mod = NULL;
		if (*end) {
			*end++ = '\0';
			mod = strchr(end, '[');
			if (mod) {
				mod++;
				mod[strcspn(mod, "]")] = '\0';
			}
		}
		if (addr)
			nonzero++;
		if (!strcmp(name, "_etext")) {
			etext = addr;
			continue; /* a bound, not a function */
		}
		if (!addr || !is_text(type))
			continue;
		ksyms_add(k, addr, 0, type, name, mod);
	}
	free(buf);
	if (total && !nonzero) {
		k->hidden = true;
		k->note = xstrdup("kernel addresses are hidden: /proc/kallsyms shows zeros "
				  "(kernel.kptr_restrict; run as root or lower it)");
	}
	ksyms_finish(k);
	/* the last core symbol ends at _etext, not at the first module */
	for (i = 0; etext && i < k->nr; i++)
		if (!k->syms[i].module && k->syms[i].start < etext && k->syms[i].end > etext)
			k->syms[i].end = etext;
	module_ranges(modules ? modules : "/proc/modules", k);
	return 0;
}

const struct ksym *ksyms_find(const struct kallsyms *k, u64 addr)
{
	u32 lo = 0, hi = k->nr;

	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;

		if (k->syms[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= k->syms[lo - 1].end)
		return NULL;
	return &k->syms[lo - 1];
}

void ksyms_free(struct kallsyms *k)
{
	free(k->syms);
	free(k->names);
	free(k->note);
	memset(k, 0, sizeof(*k));
}
