// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_dwline - libFuzzer target for cycread's own DWARF readers.  The
 * input as a .debug_line section (and as the string sections its DWARF 5
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
static void fuzz_trees(const struct dwscan *s, const struct dwscan_unit *u, const u64 *funcs,
		       u32 nr_funcs)
{
	struct dwscan_tree t;
	u32 f, i;

	for (f = 0; f < nr_funcs; f++) {
		if (!dwscan_tree(s, funcs[f], &t))
			continue;
		for (i = 0; i < t.nr_insts; i++) {
			const struct dwscan_inst *in = &t.insts[i];

			if (in->off <= funcs[f] || in->off >= u->end ||
			    (in->parent != DWSCAN_NONE && in->parent >= i) || !in->depth ||
			    (in->pc == DWSCAN_PC_RANGES &&
			     (in->first > t.nr_ranges || in->nr > t.nr_ranges - in->first)))
				__builtin_trap(); /* inside the function, after its parent */
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
	u64 off = 0, *offs;
	u32 units, nr, i;

	if (size < 3)
		return;
	info_size = MIN(data[0] | (size_t)data[1] << 8 | (size_t)data[2] << 16, size - 3);
	for (units = 0; units < MAX_UNITS; units++) {
		if (!dwscan_unit_at(&u, info, info_size, info + info_size, size - 3 - info_size,
				    false, off))
			break;
		if (u.start != off || u.die <= u.start || u.end <= u.die || u.end > info_size)
			__builtin_trap(); /* a unit in order inside the section, or none */
		/* the abbreviations' bytes as range lists and addresses too: their readers fuzzed */
		u.rnglists = u.ranges = u.addrs = info + info_size;
		u.rnglists_size = u.ranges_size = u.addrs_size = size - 3 - info_size;
		s = dwscan_new(&u);
		if (s && dwscan_funcs(s, &offs, &nr)) {
			for (i = 0; i < nr; i++)
				if (offs[i] <= u.die || offs[i] >= u.end)
					__builtin_trap(); /* a function inside its unit */
			fuzz_trees(s, &u, offs, nr);
			free(offs);
		}
		dwscan_free(s);
		off = u.end;
	}
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	fuzz_lines(data, size);
	fuzz_scan(data, size);
	return 0;
}
