// SPDX-License-Identifier: GPL-2.0
/*
 * test_interval - the sorted-interval helper against a linear scan on random
 * nested and overlapping intervals, then its four users at the sizes the old
 * fixed windows lost: a symbol enclosing more than 8 others, more than 256
 * mappings in the look-back, generations of one range, kernel symbols and
 * JIT entries; and the cache of addresses outside every mapping.
 */
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "../resolve.h"

struct item {
	u64 start;
	u64 end;
	u32 tag;
};

static u32 rnd(u32 *seed)
{
	*seed = *seed * 1103515245 + 12345;
	return *seed >> 8;
}

/* The containing item with the largest start, by brute force. */
static u32 linear_find(const struct item *v, u32 n, u64 addr)
{
	u32 i, best = IV_NONE;

	for (i = 0; i < n; i++)
		if (v[i].start <= addr && addr < v[i].end)
			best = i; /* sorted: later ones start later */
	return best;
}

static void test_random(void)
{
	u32 seed = 7, round, bad_find = 0, bad_enum = 0, queries = 0;

	for (round = 0; round < 200; round++) {
		u32 n = 1 + rnd(&seed) % 300, i, q;
		struct item *v = xcalloc(n, sizeof(*v));
		struct ivindex ix = { 0 };

		for (i = 0; i < n; i++) {
			v[i].start = rnd(&seed) % 1000;
			/* mostly short, some very long: deep nesting and overlap */
			v[i].end = v[i].start + 1 +
				   (rnd(&seed) % 8 ? rnd(&seed) % 20 : rnd(&seed) % 900);
			v[i].tag = i;
		}
		n = iv_sort_unique(v, n, sizeof(*v), NULL, NULL);
		iv_build(&ix, v, n, sizeof(*v));
		for (q = 0; q < 400; q++) {
			u64 addr = rnd(&seed) % 1100;
			u32 got = iv_find(&ix, v, sizeof(*v), addr), seen = 0, want = 0, k;

			queries++;
			if (got != linear_find(v, n, addr))
				bad_find++;
			for (k = got; k != IV_NONE; k = iv_next(&ix, v, sizeof(*v), addr, k)) {
				if (!(v[k].start <= addr && addr < v[k].end))
					bad_enum++;
				seen++;
			}
			for (k = 0; k < n; k++)
				want += v[k].start <= addr && addr < v[k].end;
			if (seen != want)
				bad_enum++;
		}
		iv_free(&ix);
		free(v);
	}
	ok(!bad_find, "iv_find equals a linear scan (%u queries, %u differ)", queries, bad_find);
	ok(!bad_enum, "iv_find + iv_next visit exactly the containing intervals (%u wrong)",
	   bad_enum);
}

static void test_unique(void)
{
	struct item v[] = { { 5, 6, 0 }, { 1, 9, 1 }, { 5, 7, 2 }, { 1, 3, 3 }, { 2, 4, 4 } };
	size_t n = iv_sort_unique(v, ARRAY_SIZE(v), sizeof(v[0]), NULL, NULL);

	is_u64(n, 3, "one element per start");
	ok(v[0].start == 1 && v[1].start == 2 && v[2].start == 5, "sorted by start");
	is_u64(iv_sort_unique(NULL, 0, sizeof(v[0]), NULL, NULL), 0, "an empty array is fine");
}

/* Ties by end, longest first (as symbols prefer one), or none. */
static int end_cmp(const void *a, const void *b, void *arg)
{
	const struct item *x = a, *y = b;

	(void)arg;
	return x->end < y->end ? 1 : x->end > y->end ? -1 : 0;
}

/* The reference order: start, the tie-break, then input order (a stable sort). */
static int ref_cmp(const void *a, const void *b, void *arg)
{
	const struct item *x = a, *y = b;
	int d;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	d = arg ? end_cmp(a, b, NULL) : 0;
	return d ? d : x->tag < y->tag ? -1 : x->tag > y->tag;
}

/*
 * Large arrays take the radix path: the same elements, in the same order,
 * as a stable comparison sort keeping the first of each start, with and
 * without a tie-break, for starts sharing their top bytes, starts of any
 * 64 bits, and many ties.
 */
static void test_unique_large(void)
{
	u32 seed = 11, round, bad = 0, cases = 0;

	for (round = 0; round < 120; round++) {
		u32 n = 200 + rnd(&seed) % 3000, i, kind = round % 3;
		struct item *v = xcalloc(n, sizeof(*v)), *w = xcalloc(n, sizeof(*w));
		bool tie = round & 1;
		size_t got, want = 0;

		for (i = 0; i < n; i++) {
			u64 r = ((u64)rnd(&seed) << 40) ^ ((u64)rnd(&seed) << 20) ^ rnd(&seed);

			v[i].start = kind == 0	 ? 0xffff800008000000ULL + r % 0x1000000
				     : kind == 1 ? r * 0x9e3779b97f4a7c15ULL
						 : 0x400000 + rnd(&seed) % (n / 4 + 1);
			v[i].end = v[i].start + 1 + rnd(&seed) % 4;
			v[i].tag = i;
		}
		memcpy(w, v, n * sizeof(*v));
		qsort_r(w, n, sizeof(*w), ref_cmp, tie ? w : NULL);
		for (i = 0; i < n; i++)
			if (!want || w[want - 1].start != w[i].start)
				w[want++] = w[i];
		got = iv_sort_unique(v, n, sizeof(*v), tie ? end_cmp : NULL, NULL);
		cases++;
		if (got != want || memcmp(v, w, want * sizeof(*v)))
			bad++;
		free(v);
		free(w);
	}
	ok(!bad,
	   "%u large arrays, with and without a tie-break: as a stable sort keeps them "
	   "(%u differ)",
	   cases, bad);
}

/* A function enclosing more than 8 local labels (the old window's size). */
static void test_nested_symbols(void)
{
	struct dso *d = dso_new_embedded("/bin/nested");
	char name[32];
	int i;

	dso_add_sym(d, 0x1000, 0x2000, "outer", FS_OFF_UNKNOWN);
	for (i = 0; i < 20; i++) {
		snprintf(name, sizeof(name), "inner%d", i);
		dso_add_sym(d, 0x1010 + 0x10 * i, 0x1018 + 0x10 * i, name, FS_OFF_UNKNOWN);
	}
	dso_sort_syms(d);
	is_str(dso_sym_name(d, dso_find(d, 0x1f00)), "outer",
	       "address after 20 nested symbols: the enclosing one");
	is_str(dso_sym_name(d, dso_find(d, 0x1014)), "inner0", "inside a nested one: it");
	is_str(dso_sym_name(d, dso_find(d, 0x101c)), "outer", "between nested ones: the outer");
	ok(!dso_find(d, 0x2000), "past the end: none");
	dso_free(d);
}

static struct map *add_map(struct maps *ms, u32 pid, u64 gen, u64 start, u64 end)
{
	struct map m = { .pid = pid,
			 .gen_time = gen,
			 .start = start,
			 .end = end,
			 .prot = MAP_R | MAP_X,
			 .kind = MAP_ANON,
			 .path = "" };

	return maps_add(ms, &m);
}

static void test_many_maps(void)
{
	struct map *big, *m, *gens[300];
	struct maps ms;
	u32 i;

	maps_init(&ms, false);
	big = add_map(&ms, 1, 0, 0x100000, 0x10000000);
	/* 300 small mappings above the start of the big one */
	for (i = 0; i < 300; i++)
		add_map(&ms, 1, 0, 0x200000 + 0x2000 * i, 0x201000 + 0x2000 * i);
	ok(maps_find(&ms, 1, 0, 0x4000000) == big,
	   "300 mappings between the start and the address: the enclosing one is found");
	m = maps_find(&ms, 1, 0, 0x200000 + 0x2000 * 299);
	ok(m && m->start == 0x200000 + 0x2000 * 299, "the last small mapping found");
	/* 300 generations of one range */
	for (i = 0; i < 300; i++)
		gens[i] = add_map(&ms, 2, 1000 * (i + 1), 0x400000, 0x500000);
	ok(maps_find(&ms, 2, 1000 * 150 + 5, 0x400010) == gens[149],
	   "300 generations: the one in force at the sample's time");
	ok(maps_find(&ms, 2, UINT64_MAX, 0x400010) == gens[299], "latest generation");
	ok(!maps_find(&ms, 2, 999, 0x400010), "before the first generation: none");
	/* added after lookups: the index takes them in */
	add_map(&ms, 1, 0, 0x20000000, 0x20001000);
	ok(maps_find(&ms, 1, 0, 0x20000800) != NULL, "a mapping added after lookups is found");
	maps_free(&ms);
}

static void test_kernel_and_jit(void)
{
	struct kallsyms k = { 0 };
	struct jitmap j = { 0 };
	char name[32];
	int i;

	for (i = 0; i < 100; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		ksyms_add(&k, 0x1000 + 0x100 * i, 0, 'T', name, i >= 50 ? "mod" : NULL);
	}
	ksyms_finish(&k);
	is_str(ksym_name(&k, ksyms_find(&k, 0x1000 + 0x100 * 73 + 5)), "f73",
	       "kernel symbol without a size ends at the next one");
	is_str(ksym_module(&k, ksyms_find(&k, 0x1000 + 0x100 * 73)), "mod", "module name shared");
	ksyms_free(&k);

	jitmap_add(&j, 0x5000, 0x6000, "region");
	jitmap_add(&j, 0x5100, 0x5200, "nested");
	jitmap_add(&j, 0x5000, 0x5800, "newer");
	jitmap_finish(&j);
	is_str(jitsym_name(&j, jitmap_find(&j, 0x5150)), "nested", "JIT: the innermost entry");
	is_str(jitsym_name(&j, jitmap_find(&j, 0x5300)), "newer",
	       "JIT: the later line for one start wins");
	ok(!jitmap_find(&j, 0x5900), "JIT: the replaced entry's old end does not count");
	jitmap_free(&j);
}

/*
 * Unmapped addresses are cached per process, and the cache is emptied when
 * the process's maps grow: a mapping read later still names the address.
 */
static void test_unmapped_cache(void)
{
	struct resolver r;
	struct maps ms;
	u32 a, b;

	maps_init(&ms, false);
	res_init(&r, &ms, false);
	add_map(&ms, 7, 0, 0x100000, 0x200000);
	a = res_user(&r, 7, 0, 0x900000);
	b = res_user(&r, 7, 0, 0x900000);
	ok(a == b, "an unmapped address resolves once (frame %u, then %u)", a, b);
	is_str(res_str(&r, res_fi(&r, a)->func), "[unknown]", "shown as [unknown]");
	ok(res_user(&r, 8, 0, 0x900000) != a, "another process: another entry");
	maps_read(&ms, 7, 0, "00900000-00a00000 r-xp 00000000 00:00 0\n");
	ok(res_fi(&r, res_user(&r, 7, 0, 0x900000))->reason == UR_JIT_NO_MAP,
	   "after the maps grew the address lies in the new mapping");
	res_free(&r);
	maps_free(&ms);
}

/*
 * An exec's record drained after a read of /proc/PID/maps: the kernel mapped
 * ld.so over its whole span and unmapped all but the first segment since,
 * and the read shows code mapped in the hole (a JIT's page).  The read,
 * later, wins there; the record still serves where the read has nothing,
 * and a record later than the read wins over it.
 */
static void test_record_older_than_read(void)
{
	struct map rec = { .pid = 9,
			   .start = 0x10000,
			   .end = 0x40000,
			   .prot = MAP_R | MAP_X,
			   .ino = 5,
			   .path = "/lib/ld.so" };
	u64 gen = 1000, before;
	struct maps ms;
	struct map *m;

	maps_init(&ms, false);
	maps_new_gen(&ms, 9, gen);
	before = kernel_mono_ns();
	maps_read(&ms, 9, gen,
		  "00010000-00020000 r-xp 00000000 00:00 5 /lib/ld.so\n"
		  "00030000-00031000 rwxp 00000000 00:00 0\n");
	maps_mapped(&ms, &rec, strlen(rec.path), before - 1);
	m = maps_find(&ms, 9, UINT64_MAX, 0x30010);
	ok(m && m->kind == MAP_ANON, "the hole's page, read after the older record, is anonymous");
	m = maps_find(&ms, 9, UINT64_MAX, 0x28000);
	ok(m && !strcmp(m->path, "/lib/ld.so"), "where the read has nothing, the record serves");
	rec.start = 0x30000;
	rec.end = 0x31000;
	maps_mapped(&ms, &rec, strlen(rec.path), kernel_mono_ns() + 1);
	m = maps_find(&ms, 9, UINT64_MAX, 0x30010);
	ok(m && !strcmp(m->path, "/lib/ld.so"), "a record later than the read wins over it");
	maps_free(&ms);
}

/*
 * A read of /proc filed under program A (its EXEC record drained late)
 * after B's exec showed B: once B's EXEC record comes, A's own MMAP records
 * win over that read again.
 */
static void test_late_read_of_a_later_program(void)
{
	struct map rec = { .pid = 9,
			   .start = 0x10000,
			   .end = 0x20000,
			   .prot = MAP_R | MAP_X,
			   .ino = 6,
			   .path = "/bin/a" };
	struct maps ms;
	struct map *m;
	u64 before;

	maps_init(&ms, false);
	maps_new_gen(&ms, 9, 1000);
	before = kernel_mono_ns();
	maps_read(&ms, 9, 1000, "00010000-00020000 r-xp 00000000 00:00 7 /bin/b\n");
	maps_mapped(&ms, &rec, strlen(rec.path), 2000);
	maps_new_gen(&ms, 9, before - 5);
	m = maps_find(&ms, 9, 2500, 0x10010);
	ok(m && !strcmp(m->path, "/bin/a"), "A's record wins over a read made after B's exec (%s)",
	   m ? m->path : "none");
	maps_free(&ms);
}

int main(void)
{
	test_random();
	test_unique();
	test_unique_large();
	test_nested_symbols();
	test_many_maps();
	test_kernel_and_jit();
	test_unmapped_cache();
	test_record_older_than_read();
	test_late_read_of_a_later_program();
	return tap_done();
}
