/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sorted intervals: the one lookup structure behind ELF symbols, kernel
 * symbols, JIT maps and memory maps.
 *
 * Elements are the caller's structs, each beginning with struct ivhead
 * (start, exclusive end).  Sorted by start, each element also gets a parent:
 * the nearest earlier element whose end lies beyond its start.  Any earlier
 * element between the two ends at or before that start, so following
 * parents from the last element starting at or below an address visits
 * every element that contains the address and skips only elements that
 * cannot.  The first one found is the containing element with the largest
 * start (for nested symbols, the innermost); iv_next() goes on to the
 * others (for memory maps, the other generations).  Nesting depth bounds a
 * lookup, not a fixed window, so no number of nested or overlapping
 * elements hides one.
 */
#ifndef CYCREAD_INTERVAL_H
#define CYCREAD_INTERVAL_H

#include "util.h"

#define IV_NONE UINT32_MAX

struct ivhead {
	u64 start;
	u64 end; /* exclusive */
};

struct ivindex {
	u32 *parent;
	u32 nr;
	u32 alloc;
};

/*
 * Sort @n elements of @size bytes by start, ties by @cmp (which may be
 * NULL), and keep only the first of each start.  Returns the new count.
 */
size_t iv_sort_unique(void *base, size_t n, size_t size, sort_cmp_fn cmp, void *arg);

/* (Re)compute the parents of @n sorted elements: O(n). */
void iv_build(struct ivindex *ix, const void *base, size_t n, size_t size);
void iv_free(struct ivindex *ix);

/* The containing element with the largest start, or IV_NONE. */
u32 iv_find(const struct ivindex *ix, const void *base, size_t size, u64 addr);
/* The next containing element after @i (found by iv_find or iv_next), or IV_NONE. */
u32 iv_next(const struct ivindex *ix, const void *base, size_t size, u64 addr, u32 i);

#endif /* CYCREAD_INTERVAL_H */
