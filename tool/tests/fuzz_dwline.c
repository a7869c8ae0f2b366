// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_dwline - libFuzzer target for cycread's own DWARF readers.  The
 * input as a .debug_aranges section, read in either byte order.  As a
 * .debug_line section (and as the string sections its DWARF 5
 * entries point into), decoded for 8- and 4-byte addresses, then every
 * file name and a spread of addresses looked up, as srcline.c does.  Then
 * as a .debug_info and a .debug_abbrev (its first 3 bytes, little endian,
 * the size of the first): each unit header in turn read by
 * dwscan_unit_at(), its functions scanned, then each function's inlined
 * instances (the abbreviations' bytes doubling as range lists and
 * .debug_addr).  The ELF fuzzer reaches these readers only through a whole
 * ELF image and libdw's unit headers; this one mutates their input
 * directly.
 */
#include <stdlib.h>
#include <string.h>

#include "../dwaranges.h"
#include "../dwline.h"
#include "../dwscan.h"

/* Units scanned per input at most: each takes a byte at least, this keeps inputs quick. */
#define MAX_UNITS 64

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static void fuzz_lines(const unsigned char *data, size_t size)
{
	struct dwline_secs s = {
		.line = data,
		.line_size = size,
		.str = data,
		.str_size = size,
		.line_str = data,
		.line_str_size = size,
	};
	static const u32 asize[] = { 8, 4 };
	u32 i, f;

	for (i = 0; i < ARRAY_SIZE(asize); i++) {
		struct dwline t = { 0 };
		size_t r;

		if (dwline_read(&s, 0, asize[i], "/comp", &t)) {
			if (t.nr_rows > size)
				__builtin_trap(); /* every row takes a byte of the program */
			for (f = 0; f <= t.nr_files; f++)
				dwline_file(&t, f);
			for (r = 0; r < t.nr_rows; r += 1 + t.nr_rows / 16) {
				dwline_find(&t, t.rows[r].addr);
				dwline_find(&t, t.rows[r].addr - 1);
			}
		}
		dwline_free(&t);
	}
}

/* The tree of each function the unit scan found: instances inside the unit, in order. */
/* Whether the string at @p ends inside @size bytes at @sec. */
static bool str_in(const char *p, const u8 *sec, size_t size)
{
	const u8 *q = (const u8 *)p;

	return q >= sec && q < sec + size && memchr(q, 0, sec + size - q);
}

/* The unit's DIE read: its directory a string inside one of the sections it may be in. */
static void fuzz_unit_die(const struct dwscan *s, const struct dwscan_unit *u)
{
	struct dwscan_cu cu;

	if (!dwscan_unit_die(s, &cu))
		return;
	if (cu.comp_dir && !str_in(cu.comp_dir, u->info + u->die, u->end - u->die) &&
	    !str_in(cu.comp_dir, u->str, u->str_size))
		__builtin_trap();
	dwscan_cu_free(&cu);
}

/* An instance's ranges, when read, inside the scan's table of them. */
static void check_ranges(const struct dwscan_tree *t, const struct dwscan_inst *in)
{
	if (in->pc == DWSCAN_PC_RANGES &&
	    (in->first > t->nr_ranges || in->nr > t->nr_ranges - in->first))
		__builtin_trap();
}

/* A DIE's name read: a string inside the unit or the string sections. */
static void fuzz_name(const struct dwscan *s, const struct dwscan_unit *u, u64 off)
{
	struct dwscan_name n;

	if (dwscan_name(s, off, &n) && n.name &&
	    !str_in(n.name, u->info + u->die, u->end - u->die) &&
	    !str_in(n.name, u->str, u->str_size))
		__builtin_trap();
}

static void fuzz_trees(const struct dwscan *s, const struct dwscan_unit *u,
		       const struct dwscan_tree *funcs)
{
	struct dwscan_tree t;
	u32 f, i;

	for (f = 0; f < funcs->nr_insts; f++) {
		u64 func = funcs->insts[f].off;

		if (func <= u->die || func >= u->end || funcs->insts[f].parent != DWSCAN_NONE)
			__builtin_trap(); /* a function inside its unit */
		check_ranges(funcs, &funcs->insts[f]);
		fuzz_name(s, u, func);
		if (!dwscan_tree(s, func, &t))
			continue;
		for (i = 0; i < t.nr_insts; i++) {
			const struct dwscan_inst *in = &t.insts[i];

			if (in->off <= func || in->off >= u->end ||
			    (in->parent != DWSCAN_NONE && in->parent >= i) || !in->depth)
				__builtin_trap(); /* inside the function, after its parent */
			check_ranges(&t, in);
			fuzz_name(s, u, in->off);
		}
		dwscan_tree_free(&t);
	}
}

static void fuzz_scan(const unsigned char *data, size_t size)
{
	const unsigned char *info = data + 3;
	struct dwscan_unit u;
	struct dwscan *s;
	size_t info_size;
	struct dwscan_tree funcs;
	u64 off = 0;
	u32 units;

	if (size < 3)
		return;
	info_size = MIN(data[0] | (size_t)data[1] << 8 | (size_t)data[2] << 16, size - 3);
	for (units = 0; units < MAX_UNITS; units++) {
		if (!dwscan_unit_at(&u, info, info_size, info + info_size, size - 3 - info_size,
				    false, off))
			break;
		if (u.start != off || u.die <= u.start || u.end <= u.die || u.end > info_size)
			__builtin_trap(); /* a unit in order inside the section, or none */
		/* the abbreviations' bytes as lists, addresses, strings too: their readers fuzzed */
		u.rnglists = u.ranges = u.addrs = info + info_size;
		u.str = u.line_str = u.str_offsets = info + info_size;
		u.rnglists_size = u.ranges_size = u.addrs_size = size - 3 - info_size;
		u.str_size = u.line_str_size = u.str_offsets_size = size - 3 - info_size;
		s = dwscan_new(&u);
		if (s)
			fuzz_unit_die(s, &u);
		if (s && dwscan_funcs(s, &funcs)) {
			fuzz_trees(s, &u, &funcs);
			dwscan_tree_free(&funcs);
		}
		dwscan_free(s);
		off = u.end;
	}
}

/* .debug_aranges: read or refused; every entry a range, empty ones included. */
static void fuzz_aranges(const unsigned char *data, size_t size)
{
	struct dwarange *v;
	u32 nr, i;

	if (!dwaranges_read(data, size, size & 1, &v, &nr))
		return;
	for (i = 0; i < nr; i++)
		if (v[i].end < v[i].start)
			__builtin_trap();
	free(v);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	fuzz_aranges(data, size);
	fuzz_lines(data, size);
	fuzz_scan(data, size);
	return 0;
}
