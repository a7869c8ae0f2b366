/* SPDX-License-Identifier: GPL-2.0 */
/*
 * JIT symbols from /tmp/perf-PID.map ("START SIZE name" per
 * line, hex without 0x, the name is the rest of the line).  When a JIT
 * writes an address twice, the later line wins.
 */
#ifndef CYCREAD_PERFMAP_H
#define CYCREAD_PERFMAP_H

#include "interval.h"
#include "util.h"

struct jitsym {
	u64 start; /* struct ivhead */
	u64 end;
	u32 name; /* offset into jitmap.names */
	u32 line; /* order of appearance: the latest line for a start wins */
};

struct jitmap {
	u32 pid;
	struct jitsym *syms;
	u32 nr;
	u32 alloc;
	struct ivindex index;
	struct strpool names;
	bool present; /* a map file was found */
	u64 loaded_at; /* now_ns() of the last (re)load, live sessions */
	bool reread; /* reloaded at the report's first miss (live sessions) */
	long owner_uid; /* of the process when last seen alive, -1: never seen */
};

/*
 * Parse @path.  @owner_uid, when not -1, must own the file (as perf
 * requires): a map planted by another user must not name our frames.
 * Returns 0 or -errno.
 */
int jitmap_load(struct jitmap *j, const char *path, long owner_uid);
void jitmap_add(struct jitmap *j, u64 start, u64 end, const char *name);
void jitmap_finish(struct jitmap *j);
const struct jitsym *jitmap_find(const struct jitmap *j, u64 addr);

static inline const char *jitsym_name(const struct jitmap *j, const struct jitsym *s)
{
	return strpool_str(&j->names, s->name);
}
void jitmap_free(struct jitmap *j);

#endif /* CYCREAD_PERFMAP_H */
