// SPDX-License-Identifier: GPL-2.0
/*
 * Parse /proc/kallsyms and /proc/modules into a sorted table.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kallsyms.h"

#define KALLSYMS_MAX_BYTES (256U << 20)

void ksyms_add(struct kallsyms *k, u64 start, u64 end, char type, const char *name,
	       const char *module)
{
	struct ksym *s;

	VEC_GROW(k->syms, k->nr, k->alloc);
	s = &k->syms[k->nr++];
	s->start = start;
	s->end = end;
	s->type = type;
	s->name = strpool_add(&k->names, name);
	s->module = 0;
	if (module && *module) {
		if (!k->last_module || strcmp(strpool_str(&k->names, k->last_module), module))
			k->last_module = strpool_add(&k->names, module);
		s->module = k->last_module;
	}
}

static int ksym_cmp(const void *a, const void *b, void *arg)
{
	const struct ksym *x = a, *y = b;

	(void)arg;
	/* prefer global text ('T') over local ('t') aliases, then keep order */
	if ((x->type == 'T') != (y->type == 'T'))
		return x->type == 'T' ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}

void ksyms_finish(struct kallsyms *k)
{
	u32 i, n;

	n = iv_sort_unique(k->syms, k->nr, sizeof(*k->syms), ksym_cmp, NULL);
	k->nr = n;
	for (i = 0; i < n; i++) {
		struct ksym *s = &k->syms[i];
		u64 next = i + 1 < n ? k->syms[i + 1].start : UINT64_MAX;

		if (!s->end || s->end > next)
			s->end = next;
		if (s->end <= s->start)
			s->end = s->start + 1;
	}
	iv_build(&k->index, k->syms, n, sizeof(*k->syms));
	k->loaded = true;
}

/*
 * /proc/modules: "name size refcount deps state address".  A module's last
 * symbol would otherwise run on to the next module's first: bound each
 * module symbol by its module's end.
 */
static void module_ranges(const char *path, struct kallsyms *k)
{
	struct u64map ends = { 0 }; /* hash of the name -> end */
	char *buf, *line, *next;
	u64 end;
	u32 i;

	if (read_file(path, &buf, NULL, KALLSYMS_MAX_BYTES))
		return;
	for (line = buf; line && *line; line = next) {
		unsigned long long size, addr;
		char name[64];

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (sscanf(line, "%63s %llu %*s %*s %*s %llx", name, &size, &addr) != 3 || !addr ||
		    addr + size < addr)
			continue;
		u64map_put(&ends, hash_bytes(name, strlen(name), 0), addr + size);
	}
	free(buf);
	for (i = 0; i < k->nr; i++) {
		struct ksym *s = &k->syms[i];
		const char *mod = ksym_module(k, s);

		if (s->module && u64map_get(&ends, hash_bytes(mod, strlen(mod), 0), &end) &&
		    s->start < end && s->end > end)
			s->end = end;
	}
	u64map_free(&ends);
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
		/*
		 * ARM mapping symbols ($x, $d, $x.12: where code or data starts)
		 * are no functions; the module symbols of 6.1 list them (seen in a guest).
		 */
		if (!addr || !is_text(type) || name[0] == '$')
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
	iv_build(&k->index, k->syms, k->nr, sizeof(*k->syms));
	return 0;
}

const struct ksym *ksyms_find(const struct kallsyms *k, u64 addr)
{
	u32 i = iv_find(&k->index, k->syms, sizeof(*k->syms), addr);

	return i == IV_NONE ? NULL : &k->syms[i];
}

void ksyms_free(struct kallsyms *k)
{
	free(k->syms);
	iv_free(&k->index);
	strpool_free(&k->names);
	free(k->note);
	memset(k, 0, sizeof(*k));
}
