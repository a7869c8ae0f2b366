/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel and module symbols from /proc/kallsyms.
 *
 * kallsyms has no sizes: a symbol ends where the next one starts, the last
 * core symbol at _etext, a module's last symbol at the module's end from
 * /proc/modules.  When kptr_restrict hides the addresses (all zero), the
 * table is marked hidden and every kernel frame is reported as such instead
 * of being pinned on one symbol.
 */
#ifndef CYCREAD_KALLSYMS_H
#define CYCREAD_KALLSYMS_H

#include "interval.h"
#include "util.h"

struct ksym {
	u64 start; /* struct ivhead */
	u64 end;
	u32 name; /* offset into names */
	u32 module; /* offset into names; 0 ("") = core kernel */
	char type;
};

struct kallsyms {
	struct ksym *syms;
	u32 nr;
	u32 alloc;
	struct ivindex index;
	struct strpool names;
	u32 last_module; /* kallsyms lists a module's symbols together: share its name */
	bool loaded;
	bool hidden; /* addresses were zeroed by kptr_restrict */
	char *note; /* why kernel frames cannot be named, or NULL */
};

/*
 * Load from @path (default /proc/kallsyms) and @modules (default
 * /proc/modules; may be missing).  Returns 0 or -errno.
 */
int ksyms_load(struct kallsyms *k, const char *path, const char *modules);
/* Build from (start, end, name, module) entries, e.g. from a capture file; end 0 = unknown. */
void ksyms_add(struct kallsyms *k, u64 start, u64 end, char type, const char *name,
	       const char *module);
void ksyms_finish(struct kallsyms *k);
const struct ksym *ksyms_find(const struct kallsyms *k, u64 addr);

static inline const char *ksym_name(const struct kallsyms *k, const struct ksym *s)
{
	return strpool_str(&k->names, s->name);
}

static inline const char *ksym_module(const struct kallsyms *k, const struct ksym *s)
{
	return strpool_str(&k->names, s->module);
}
void ksyms_free(struct kallsyms *k);

#endif /* CYCREAD_KALLSYMS_H */
