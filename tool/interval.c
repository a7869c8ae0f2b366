// SPDX-License-Identifier: GPL-2.0
/*
 * Sorted intervals with parent links (see interval.h).
 */
#include <stdlib.h>
#include <string.h>

#include "interval.h"

static inline const struct ivhead *iv_at(const void *base, size_t size, size_t i)
{
	return (const struct ivhead *)((const char *)base + i * size);
}

struct iv_sort_arg {
	sort_cmp_fn cmp;
	void *arg;
};

static int iv_cmp(const void *a, const void *b, void *argp)
{
	const struct ivhead *x = a, *y = b;
	const struct iv_sort_arg *s = argp;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return s->cmp ? s->cmp(a, b, s->arg) : 0;
}

/* Below this many elements a comparison sort is as quick. */
#define RADIX_MIN 256

/*
 * The first of each start in the order (start, @cmp, input order), as a
 * stable sort by iv_cmp() and a pass keeping the first of each start
 * leave them, without moving whole elements in the sort: a symbol table
 * of 190 000 entries sorted through its comparator was half the cost of
 * reading it.
 */
static size_t radix_unique(void *base, size_t n, size_t size, sort_cmp_fn cmp, void *arg)
{
	struct u64key *k = xmalloc(n * sizeof(*k)), *tmp = xmalloc(n * sizeof(*tmp));
	char *p = base, *out = xmalloc(n * size);
	size_t i, g, best, nr = 0;

	for (i = 0; i < n; i++)
		k[i] = (struct u64key){ iv_at(base, size, i)->start, (u32)i };
	radix_sort(k, tmp, n);
	for (i = 0; i < n; i = g) {
		best = k[i].i;
		for (g = i + 1; g < n && k[g].key == k[i].key; g++)
			if (cmp && cmp(p + k[g].i * size, p + best * size, arg) < 0)
				best = k[g].i;
		memcpy(out + nr++ * size, p + best * size, size);
	}
	memcpy(base, out, nr * size);
	free(out);
	free(tmp);
	free(k);
	return nr;
}

size_t iv_sort_unique(void *base, size_t n, size_t size, sort_cmp_fn cmp, void *arg)
{
	struct iv_sort_arg s = { cmp, arg };
	char *p = base;
	size_t i, k = 0;

	if (n >= RADIX_MIN && n <= UINT32_MAX)
		return radix_unique(base, n, size, cmp, arg);
	sort(base, n, size, iv_cmp, &s);
	for (i = 0; i < n; i++) {
		if (k && iv_at(base, size, k - 1)->start == iv_at(base, size, i)->start)
			continue;
		if (k != i)
			memcpy(p + k * size, p + i * size, size);
		k++;
	}
	return k;
}

void iv_build(struct ivindex *ix, const void *base, size_t n, size_t size)
{
	u32 *stack, sp = 0, i;

	if (n > ix->alloc) {
		ix->alloc = n;
		ix->parent = xrealloc(ix->parent, n, sizeof(*ix->parent));
	}
	ix->nr = n;
	stack = xmalloc((n ? n : 1) * sizeof(*stack));
	/*
	 * An element whose end is at or before this start can be no later
	 * element's parent either (starts only grow): drop it for good.
	 */
	for (i = 0; i < n; i++) {
		u64 start = iv_at(base, size, i)->start;

		while (sp && iv_at(base, size, stack[sp - 1])->end <= start)
			sp--;
		ix->parent[i] = sp ? stack[sp - 1] : IV_NONE;
		stack[sp++] = i;
	}
	free(stack);
}

void iv_free(struct ivindex *ix)
{
	free(ix->parent);
	memset(ix, 0, sizeof(*ix));
}

/* From @i on, the first element (following parents) that contains @addr. */
static u32 iv_walk(const struct ivindex *ix, const void *base, size_t size, u64 addr, u32 i)
{
	while (i != IV_NONE && addr >= iv_at(base, size, i)->end)
		i = ix->parent[i];
	return i;
}

u32 iv_find(const struct ivindex *ix, const void *base, size_t size, u64 addr)
{
	u32 lo = 0, hi = ix->nr;

	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;

		if (iv_at(base, size, mid)->start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? iv_walk(ix, base, size, addr, lo - 1) : IV_NONE;
}

u32 iv_next(const struct ivindex *ix, const void *base, size_t size, u64 addr, u32 i)
{
	return i == IV_NONE ? IV_NONE : iv_walk(ix, base, size, addr, ix->parent[i]);
}
