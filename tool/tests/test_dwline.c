// SPDX-License-Identifier: GPL-2.0
/*
 * test_dwline - cycread's own DWARF readers, on fixtures built now (C with
 * inline functions, DWARF 5 and 4, C++, a zlib-compressed copy, a GNU C
 * nested function, clang's DWARF 5 whose rows name file 0, cycread's DWARF
 * readers built by clang, whose addresses and range lists go through
 * indexes) and on this program (cycread's sources: many units).
 *
 * dwscan: every unit's functions with code found at the DIEs libdw's walk
 * finds, and in every function the inlined instances and nested functions
 * it finds, with the ranges dwarf_ranges() gives; every cut of a unit, of
 * its range lists, and many corruptions of them scanned or refused without
 * reading out of bounds; hand-made units whose DW_FORM_ref8 siblings wrap
 * or leave the unit refused, hand-made range lists of each kind read, and
 * what libdw reads otherwise refused or left to it.  Every unit's DIE,
 * every function's ranges, every function's and inlined instance's name
 * and call site read as libdw reads them; and in hand-made units assembled
 * by gas, at every offset the scan names, with origins chained 16 and 17
 * deep, attributes repeated, bases libdw takes otherwise.
 *
 * dwline, the .debug_line decoder: every unit's table equal row by row to
 * libdw's (address, end of sequence, line, file name) and its file table
 * equal to libdw's; hand-made programs (DWARF 4 and 5) whose sequences
 * come out of address order, end where another begins, overlap, and whose
 * last row shares its address with the sequence's end, looked up as libdw
 * would; every truncation and many corruptions of them refused or decoded
 * without reading out of bounds (run under ASan by make check).
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>

#include "fixtures.h"
#include "tap.h"
#include "../debuginfo.h"
#include "../dwaranges.h"
#include "../dwline.h"
#include "../dwscan.h"

struct cmp_stats {
	u32 units;
	u32 scan_differ;
	u32 tree_differ;
	u64 insts;
	u64 lists; /* instances in several ranges (DW_AT_ranges) */
	u64 nested;
	u64 to_libdw; /* left to libdw by the scan */
	u64 names; /* functions' and instances' names and call sites compared */
	u64 names_libdw; /* of them, left to libdw */
	u32 names_differ;
	u32 cu_differ; /* unit DIEs not read as libdw reads them */
	u64 aranges; /* .debug_aranges entries compared */
	bool aranges_differ;
	bool lists_hostile; /* done for a unit with range lists */
	u32 header_differ;
	u64 funcs;
	u64 rows;
	u64 kept; /* of the rows, those no lookup passes over */
	u64 files;
	u32 differ;
};

static const u8 *section(Elf *elf, const char *name, size_t *size)
{
	*size = 0;
	return elf_section_bytes(elf, name, false, size);
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* libdw's answer where dwline_find() answers: its last row at or below @addr, none at an end. */
static Dwarf_Line *ref_find(Dwarf_Lines *lines, size_t nr, u64 addr)
{
	size_t lo = 0, hi = nr;
	Dwarf_Addr a;
	bool end;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		dwarf_lineaddr(dwarf_onesrcline(lines, mid), &a);
		if (a <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	dwarf_lineendsequence(dwarf_onesrcline(lines, lo - 1), &end);
	return end ? NULL : dwarf_onesrcline(lines, lo - 1);
}

/* dwline_find() against libdw's table at @addr; false when they differ. */
static bool same_find(struct dwline *t, Dwarf_Lines *lines, size_t nr, u64 addr)
{
	const struct dwline_row *r = dwline_find(t, addr);
	Dwarf_Line *l = ref_find(lines, nr, addr);
	int lineno = -1;

	if (l)
		dwarf_lineno(l, &lineno);
	if (!r != !l || (r && ((int)r->line != lineno ||
			       !same_str(dwline_file(t, r->file), dwarf_linesrc(l, NULL, NULL))))) {
		printf("#   at 0x%llx: %s line %d; libdw %s line %d\n", (unsigned long long)addr,
		       r ? dwline_file(t, r->file) : "(none)", r ? (int)r->line : -1,
		       l ? dwarf_linesrc(l, NULL, NULL) : "(none)", lineno);
		return false;
	}
	return true;
}

/*
 * One unit: dwline's table against libdw's; false at the first
 * difference.  The rows dwline keeps are libdw's, in its order, less the
 * ones no lookup finds (dwline.h), so each kept row is compared with the
 * libdw row of its address that lookups find, and lookups are compared
 * at every address where libdw's answer can change (a row's) and the byte
 * before.
 */
static bool compare_unit(Dwarf_Die *cu, const struct dwline_secs *s, struct cmp_stats *st)
{
	struct dwline t = { 0 };
	Dwarf_Attribute attr;
	Dwarf_Lines *lines;
	Dwarf_Files *files;
	Dwarf_Word off;
	Dwarf_Die cudie;
	size_t nr, nr_files, i, k = 0;
	u8 asize;
	bool same = false;

	if (dwarf_getsrclines(cu, &lines, &nr) || dwarf_getsrcfiles(cu, &files, &nr_files) ||
	    dwarf_formudata(dwarf_attr(cu, DW_AT_stmt_list, &attr), &off) ||
	    !dwarf_diecu(cu, &cudie, &asize, NULL))
		return true; /* no lines: nothing to compare */
	if (!dwline_read(s, off, asize, dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &attr)),
			 &t)) {
		printf("#   unit at 0x%llx: refused\n", (unsigned long long)dwarf_dieoffset(cu));
		goto out;
	}
	if (t.nr_rows > nr || (nr && !t.nr_rows) || t.nr_files != nr_files) {
		printf("#   %zu rows and %u files, libdw %zu and %zu\n", t.nr_rows, t.nr_files, nr,
		       nr_files);
		goto out;
	}
	for (i = 0; i < nr_files; i++)
		if (!same_str(dwline_file(&t, i), dwarf_filesrc(files, i, NULL, NULL))) {
			printf("#   file %zu: '%s', libdw '%s'\n", i, dwline_file(&t, i),
			       dwarf_filesrc(files, i, NULL, NULL));
			goto out;
		}
	/* each kept row is a libdw row, in libdw's order: a subsequence */
	for (i = 0; i < nr && k < t.nr_rows; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		const struct dwline_row *r = &t.rows[k];
		Dwarf_Addr addr;
		int lineno;
		bool end;

		dwarf_lineaddr(l, &addr);
		dwarf_lineendsequence(l, &end);
		dwarf_lineno(l, &lineno);
		if (r->addr == addr && r->end == end && (int)r->line == lineno &&
		    same_str(dwline_file(&t, r->file), dwarf_linesrc(l, NULL, NULL)))
			k++;
	}
	if (k != t.nr_rows) {
		printf("#   row %zu (0x%llx line %u) is not among libdw's, in its order\n", k,
		       (unsigned long long)t.rows[k].addr, t.rows[k].line);
		goto out;
	}
	for (i = 0; i < nr; i++) {
		Dwarf_Addr addr;

		dwarf_lineaddr(dwarf_onesrcline(lines, i), &addr);
		if (!same_find(&t, lines, nr, addr) ||
		    (addr && !same_find(&t, lines, nr, addr - 1)))
			goto out;
	}
	st->rows += nr;
	st->kept += t.nr_rows;
	st->files += nr_files;
	same = true;
out:
	dwline_free(&t);
	return same;
}

/* What srcline.c's walk adds: subprograms with code, namespaces and modules entered. */
static void ref_funcs(Dwarf_Die *scope, u64 **offs, u32 *nr, u32 *alloc)
{
	Dwarf_Die c;

	if (dwarf_child(scope, &c))
		return;
	do {
		int tag = dwarf_tag(&c);

		if (tag == DW_TAG_subprogram &&
		    (dwarf_hasattr(&c, DW_AT_low_pc) || dwarf_hasattr(&c, DW_AT_ranges))) {
			VEC_GROW(*offs, *nr, *alloc);
			(*offs)[(*nr)++] = dwarf_dieoffset(&c);
		} else if (dwscan_func_scope(tag)) {
			ref_funcs(&c, offs, nr, alloc);
		}
	} while (!dwarf_siblingof(&c, &c));
}

/* One inlined instance or nested function of a function's tree, and its ranges. */
struct tree_inst {
	u64 off;
	u64 parent; /* the instance's DIE it sits in, or the function's */
	u32 depth;
	bool nested;
	u32 nr_ranges;
	u64 ranges[4][2]; /* the first ones */
	u64 digest; /* of them all */
};

struct tree {
	struct tree_inst *v;
	u32 nr;
	u32 alloc;
};

static void add_range(struct tree_inst *in, u64 start, u64 end)
{
	if (in->nr_ranges < ARRAY_SIZE(in->ranges)) {
		in->ranges[in->nr_ranges][0] = start;
		in->ranges[in->nr_ranges][1] = end;
	}
	in->digest = (in->digest * 1000003 ^ start) * 1000003 ^ end;
	in->nr_ranges++;
}

/* @die's ranges as dwarf_ranges() gives them, empty ones included. */
static void die_ranges(Dwarf_Die *die, struct tree_inst *in)
{
	Dwarf_Addr base, start, end;
	ptrdiff_t off = 0;

	while ((off = dwarf_ranges(die, off, &base, &start, &end)) > 0)
		add_range(in, start, end);
}

/* What srcline.c's walk through libdw finds in a function's tree. */
static void ref_tree(Dwarf_Die *scope, u64 parent, u32 depth, struct tree *t)
{
	Dwarf_Die c;

	if (dwarf_child(scope, &c))
		return;
	do {
		int tag = dwarf_tag(&c);
		u64 inner = parent;

		if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
			struct tree_inst in = { .off = dwarf_dieoffset(&c),
						.parent = parent,
						.depth = depth,
						.nested = tag == DW_TAG_subprogram };

			if (in.nested && !dwarf_hasattr(&c, DW_AT_low_pc) &&
			    !dwarf_hasattr(&c, DW_AT_ranges))
				continue;
			die_ranges(&c, &in);
			VEC_GROW(t->v, t->nr, t->alloc);
			t->v[t->nr++] = in;
			if (in.nested)
				continue;
			inner = in.off;
		}
		if (dwscan_tree_scope(tag) && dwarf_haschildren(&c))
			ref_tree(&c, inner, depth + 1, t);
	} while (!dwarf_siblingof(&c, &c));
}

static bool inst_same(const struct tree_inst *a, const struct tree_inst *b)
{
	u32 i;

	if (a->off != b->off || a->parent != b->parent || a->depth != b->depth ||
	    a->nested != b->nested || a->nr_ranges != b->nr_ranges || a->digest != b->digest)
		return false;
	for (i = 0; i < a->nr_ranges && i < ARRAY_SIZE(a->ranges); i++)
		if (a->ranges[i][0] != b->ranges[i][0] || a->ranges[i][1] != b->ranges[i][1])
			return false;
	return true;
}

/* An instance's or function's ranges as the scan read them, or libdw's where it left them. */
static void scanned_ranges(Dwarf *dw, const struct dwscan_tree *v, const struct dwscan_inst *si,
			   struct tree_inst *in, struct cmp_stats *st)
{
	Dwarf_Die die;
	u32 k;

	if (si->pc == DWSCAN_PC_RANGES) {
		for (k = 0; k < si->nr; k++)
			add_range(in, v->ranges[si->first + k].start, v->ranges[si->first + k].end);
	} else if (si->pc == DWSCAN_PC_LIBDW && dwarf_offdie(dw, si->off, &die)) {
		die_ranges(&die, in);
		st->to_libdw++;
	}
}

/* dwscan_funcs()'s functions: their offsets into *@offs (malloced, *@nr). */
static bool scan_funcs(const struct dwscan *s, u64 **offs, u32 *nr)
{
	struct dwscan_tree t;
	u32 i;

	*offs = NULL;
	*nr = 0;
	if (!dwscan_funcs(s, &t))
		return false;
	*offs = xcalloc(t.nr_insts ? t.nr_insts : 1, sizeof(**offs));
	for (i = 0; i < t.nr_insts; i++)
		(*offs)[i] = t.insts[i].off;
	*nr = t.nr_insts;
	dwscan_tree_free(&t);
	return true;
}

/* Each function's ranges, as the scan read them and as dwarf_ranges() gives them. */
static bool compare_func_ranges(Dwarf *dw, const struct dwscan *s, struct cmp_stats *st)
{
	struct dwscan_tree t;
	bool same = true;
	u32 i;

	if (!dwscan_funcs(s, &t))
		return false;
	for (i = 0; i < t.nr_insts && same; i++) {
		struct tree_inst ours = { .off = t.insts[i].off }, ref = ours;
		Dwarf_Die die;

		scanned_ranges(dw, &t, &t.insts[i], &ours, st);
		same = dwarf_offdie(dw, t.insts[i].off, &die);
		if (same)
			die_ranges(&die, &ref);
		same = same && inst_same(&ours, &ref);
		if (!same)
			printf("#   function at 0x%llx: %u ranges scanned, libdw %u\n",
			       (unsigned long long)t.insts[i].off, ours.nr_ranges, ref.nr_ranges);
	}
	dwscan_tree_free(&t);
	return same;
}

/* dwscan_tree()'s findings in @t's form: ranges it read, or libdw's where it left them. */
static bool scan_tree(Dwarf *dw, const struct dwscan *s, u64 func, struct tree *t,
		      struct cmp_stats *st)
{
	struct dwscan_tree v;
	u32 i;

	if (!dwscan_tree(s, func, &v))
		return false;
	for (i = 0; i < v.nr_insts; i++) {
		const struct dwscan_inst *si = &v.insts[i];
		struct tree_inst in = { .off = si->off,
					.parent = si->parent == DWSCAN_NONE
							  ? func
							  : v.insts[si->parent].off,
					.depth = si->depth,
					.nested = si->nested };

		scanned_ranges(dw, &v, si, &in, st);
		VEC_GROW(t->v, t->nr, t->alloc);
		t->v[t->nr++] = in;
	}
	dwscan_tree_free(&v);
	return true;
}

/* @die's name as srcline.c reads it through libdw, looked for along its origins. */
static const char *ref_name(Dwarf_Die *die)
{
	static const unsigned int names[] = { DW_AT_linkage_name, DW_AT_MIPS_linkage_name,
					      DW_AT_name };
	Dwarf_Attribute attr;
	const char *s = NULL;
	u32 i;

	for (i = 0; i < ARRAY_SIZE(names) && !s; i++)
		s = dwarf_formstring(dwarf_attr_integrate(die, names[i], &attr));
	return s;
}

static u64 ref_udata(Dwarf_Die *die, unsigned int name)
{
	Dwarf_Attribute attr;
	Dwarf_Word v;

	return dwarf_attr(die, name, &attr) && !dwarf_formudata(&attr, &v) ? v : UINT64_MAX;
}

/* The name and call site of the DIE at @off, as the scan reads them and as libdw does. */
static void compare_name(Dwarf *dw, const struct dwscan *s, u64 off, struct cmp_stats *st)
{
	struct dwscan_name n;
	const char *ref;
	Dwarf_Die die;

	st->names++;
	if (!dwscan_name(s, off, &n)) {
		st->names_libdw++;
		return;
	}
	if (!dwarf_offdie(dw, off, &die)) {
		printf("#   DIE at 0x%llx: named by the scan, not a DIE to libdw\n",
		       (unsigned long long)off);
		st->names_differ++;
		return;
	}
	ref = ref_name(&die);
	if ((!ref != !n.name) || (ref && strcmp(ref, n.name)) ||
	    n.call_file != ref_udata(&die, DW_AT_call_file) ||
	    n.call_line != ref_udata(&die, DW_AT_call_line)) {
		printf("#   DIE at 0x%llx: named %s, libdw %s\n", (unsigned long long)off,
		       n.name ? n.name : "(none)", ref ? ref : "(none)");
		st->names_differ++;
	}
}

/*
 * The scan bounded by @end, the next function's DIE (as srcline.c bounds
 * it), finds what it finds unbounded; bounded by the function's own DIE,
 * nothing when it has instances (@nr) to find.
 */
static bool within_same(const struct dwscan *s, u64 func, u64 end, u32 nr)
{
	struct dwscan_tree a, b;
	bool same, ok_a = dwscan_tree(s, func, &a), ok_b = dwscan_tree_within(s, func, end, &b);
	u32 i;

	same = ok_a == ok_b && (!ok_a || a.nr_insts == b.nr_insts);
	for (i = 0; same && ok_a && i < a.nr_insts; i++)
		same = a.insts[i].off == b.insts[i].off;
	if (ok_a)
		dwscan_tree_free(&a);
	if (ok_b)
		dwscan_tree_free(&b);
	if (nr && dwscan_tree_within(s, func, func + 1, &b)) {
		dwscan_tree_free(&b);
		same = false;
	}
	if (!same)
		printf("#   function at 0x%llx: the scan bounded at 0x%llx differs\n",
		       (unsigned long long)func, (unsigned long long)end);
	return same;
}

/* Every function's tree, as the scan finds it and as libdw's walk does. */
static bool compare_trees(Dwarf *dw, const struct dwscan *s, const u64 *funcs, u32 nr, u64 unit_end,
			  struct cmp_stats *st)
{
	u32 i, k;

	for (i = 0; i < nr; i++) {
		struct tree ours = { 0 }, ref = { 0 };
		Dwarf_Die die;
		bool same;

		if (!dwarf_offdie(dw, funcs[i], &die))
			return false;
		ref_tree(&die, funcs[i], 1, &ref);
		same = scan_tree(dw, s, funcs[i], &ours, st) && ours.nr == ref.nr &&
		       within_same(s, funcs[i], i + 1 < nr ? funcs[i + 1] : unit_end, ref.nr);
		compare_name(dw, s, funcs[i], st);
		for (k = 0; same && k < ref.nr; k++) {
			same = inst_same(&ours.v[k], &ref.v[k]);
			compare_name(dw, s, ref.v[k].off, st);
			st->lists += ref.v[k].nr_ranges > 1;
			st->nested += ref.v[k].nested;
		}
		if (!same)
			printf("#   function at 0x%llx: %u instances scanned, libdw %u\n",
			       (unsigned long long)funcs[i], ours.nr, ref.nr);
		st->insts += ref.nr;
		free(ours.v);
		free(ref.v);
		if (!same)
			return false;
	}
	return true;
}

static bool compare_scan(Dwarf *dw, Dwarf_Die *cu, const struct dwscan_unit *su,
			 struct cmp_stats *st)
{
	struct dwscan *s = dwscan_new(su);
	u64 *ours = NULL, *ref = NULL;
	u32 nr = 0, nr_ref = 0, alloc = 0;
	bool same;

	ref_funcs(cu, &ref, &nr_ref, &alloc);
	same = s && scan_funcs(s, &ours, &nr) && nr == nr_ref &&
	       (!nr || !memcmp(ours, ref, nr * sizeof(*ours))) && compare_func_ranges(dw, s, st);
	if (!same)
		printf("#   unit at 0x%llx: %u functions scanned, libdw %u\n",
		       (unsigned long long)su->die, nr, nr_ref);
	else if (!compare_trees(dw, s, ref, nr_ref, su->end, st))
		st->tree_differ++;
	st->funcs += nr_ref;
	dwscan_free(s);
	free(ours);
	free(ref);
	return same;
}

/* The scans of a hostile copy: refused or done, within its bytes. */
static void scan_all(const struct dwscan_unit *h, u64 func)
{
	struct dwscan *s = dwscan_new(h);
	struct dwscan_tree t;
	u64 *offs;
	u32 nr;

	if (s && scan_funcs(s, &offs, &nr))
		free(offs);
	if (s && dwscan_tree(s, func, &t))
		dwscan_tree_free(&t);
	dwscan_free(s);
}

/*
 * @su's unit cut at every byte and with bytes replaced: scanned or
 * refused, never read beyond its bytes (a heap copy: ASan sees).
 */
static bool scan_hostile(const struct dwscan_unit *su)
{
	static const u8 vals[] = { 0x00, 0x7f, 0x80, 0xff };
	size_t len = su->end - su->start, i, k, step = len / 512 + 1;
	u8 *copy = xmalloc(len);
	struct dwscan_unit h = *su;
	struct dwscan *s = dwscan_new(su);
	u64 *offs = NULL, func = 0;
	u32 nr = 0;

	/* the unit's first function, for the tree scans */
	if (s && scan_funcs(s, &offs, &nr) && nr)
		func = offs[0] - su->start;
	free(offs);
	dwscan_free(s);
	h.die = su->die - su->start;
	h.start = 0;
	/* each cut in a copy of its own size: ASan sees a read past the cut */
	for (i = h.die; i <= len; i += step) {
		u8 *cut = xmalloc(i ? i : 1);

		memcpy(cut, su->info + su->start, i);
		h.info = cut;
		h.info_size = h.end = i;
		scan_all(&h, func);
		free(cut);
	}
	h.info = copy;
	h.info_size = h.end = len;
	for (i = h.die; i < len; i += step)
		for (k = 0; k < ARRAY_SIZE(vals); k++) {
			memcpy(copy, su->info + su->start, len);
			copy[i] = vals[k];
			scan_all(&h, func);
		}
	free(copy);
	return true;
}

/* Every function's tree in @h's unit, scanned or refused. */
static void trees_all(const struct dwscan_unit *h)
{
	struct dwscan *s = dwscan_new(h);
	struct dwscan_tree t;
	u64 *offs = NULL;
	u32 nr = 0, i;

	if (s && scan_funcs(s, &offs, &nr))
		for (i = 0; i < nr; i++)
			if (dwscan_tree(s, offs[i], &t))
				dwscan_tree_free(&t);
	free(offs);
	dwscan_free(s);
}

/*
 * @su's range lists (.debug_rnglists, or .debug_ranges before DWARF 5) cut
 * at every byte and with bytes replaced: its functions' trees scanned or
 * refused, never read beyond the lists (a heap copy: ASan sees).
 */
static void lists_hostile(const struct dwscan_unit *su)
{
	static const u8 vals[] = { 0x00, 0x01, 0x04, 0x07, 0x80, 0xff };
	bool v5 = su->version >= 5;
	size_t len = v5 ? su->rnglists_size : su->ranges_size, i, k, step = len / 256 + 1;
	const u8 *sec = v5 ? su->rnglists : su->ranges;
	struct dwscan_unit h = *su;
	u8 *copy = xmalloc(len);
	const u8 **p = v5 ? &h.rnglists : &h.ranges;
	size_t *n = v5 ? &h.rnglists_size : &h.ranges_size;

	/* each cut in a copy of its own size: ASan sees a read past the cut */
	for (i = 0; i <= len; i += step) {
		u8 *cut = xmalloc(i ? i : 1);

		memcpy(cut, sec, i);
		*p = cut;
		*n = i;
		trees_all(&h);
		free(cut);
	}
	*p = copy;
	*n = len;
	for (i = 0; i < len; i += step)
		for (k = 0; k < ARRAY_SIZE(vals); k++) {
			memcpy(copy, sec, len);
			copy[i] = vals[k];
			trees_all(&h);
		}
	free(copy);
}

/* What the scan reads of the unit's DIE, against what libdw reads there. */
static bool compare_cu(Dwarf_Die *cu, const struct dwscan_unit *su)
{
	struct dwscan *s = dwscan_new(su);
	struct tree_inst ours = { 0 }, ref = { 0 };
	Dwarf_Attribute attr;
	struct dwscan_cu c;
	Dwarf_Word lines;
	const char *dir;
	bool same;
	u32 k;

	if (!s || !dwscan_unit_die(s, &c)) {
		dwscan_free(s);
		return false;
	}
	dir = dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &attr));
	same = c.tag == (u32)dwarf_tag(cu) && c.has_lines == dwarf_hasattr(cu, DW_AT_stmt_list) &&
	       (!c.has_lines || (!dwarf_formudata(dwarf_attr(cu, DW_AT_stmt_list, &attr), &lines) &&
				 lines == c.lines)) &&
	       !dir == !c.comp_dir && (!dir || !strcmp(dir, c.comp_dir)) &&
	       (c.pc == DWSCAN_PC_RANGES || !c.ranges.nr_ranges);
	for (k = 0; c.pc == DWSCAN_PC_RANGES && k < c.ranges.nr_ranges; k++)
		add_range(&ours, c.ranges.ranges[k].start, c.ranges.ranges[k].end);
	die_ranges(cu, &ref);
	same = same && c.pc != DWSCAN_PC_LIBDW && inst_same(&ours, &ref);
	if (!same)
		printf("#   unit DIE at 0x%llx: not read as libdw reads it\n",
		       (unsigned long long)su->die);
	dwscan_cu_free(&c);
	dwscan_free(s);
	return same;
}

static int arange_cmp(const void *a, const void *b, void *arg)
{
	const struct dwarange *x = a, *y = b;

	(void)arg;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return x->unit < y->unit ? -1 : x->unit > y->unit;
}

/*
 * .debug_aranges as dwaranges.c reads it and as libdw does: the same
 * entries (libdw gives each unit's DIE, dwaranges.c its header: the DIE's
 * offset is the header's plus the header's size, from the unit's own).
 */
static void compare_aranges(Dwarf *dw, Elf *elf, struct cmp_stats *st)
{
	struct dwarange *ours = NULL, *ref = NULL;
	Dwarf_Aranges *a = NULL;
	u32 nr = 0, i;
	size_t n = 0, size;
	const u8 *sec = section(elf, ".debug_aranges", &size);

	if (!sec) {
		/* none (clang's default): refused, and libdw finds none */
		st->aranges_differ = dwaranges_read(sec, size, false, &ours, &nr) ||
				     dwarf_getaranges(dw, &a, &n) || n;
		return;
	}
	if (!dwaranges_read(sec, size, false, &ours, &nr) || dwarf_getaranges(dw, &a, &n) ||
	    n != nr) {
		st->aranges_differ = true;
		free(ours);
		return;
	}
	ref = xcalloc(n ? n : 1, sizeof(*ref));
	for (i = 0; i < n; i++) {
		Dwarf_Addr start;
		Dwarf_Word len;
		Dwarf_Off die, next;
		size_t hsize;

		dwarf_getarangeinfo(dwarf_onearange(a, i), &start, &len, &die);
		ref[i] = (struct dwarange){ start, start + len, die };
		/* ours: the header's offset, made the DIE's as libdw gives it */
		if (dwarf_next_unit(dw, ours[i].unit, &next, &hsize, NULL, NULL, NULL, NULL, NULL,
				    NULL))
			st->aranges_differ = true;
		else
			ours[i].unit += hsize;
	}
	sort(ours, nr, sizeof(*ours), arange_cmp, NULL);
	sort(ref, n, sizeof(*ref), arange_cmp, NULL);
	st->aranges_differ |= n && memcmp(ours, ref, n * sizeof(*ref));
	st->aranges += n;
	free(ours);
	free(ref);
}

/* Every unit of @bin: the decoder's table against libdw's, the scans against libdw's walks. */
static void compare_libdw(const char *bin, const char *what)
{
	struct cmp_stats st = { 0 };
	struct dwline_secs s = { 0 };
	Dwarf_Off off = 0, next, abbrev_off;
	const u8 *info, *abbrev, *rnglists, *ranges, *addrs, *str_offsets;
	size_t hsize, info_size = 0, abbrev_size = 0, rnglists_size, ranges_size, addrs_size;
	size_t str_offsets_size;
	Dwarf_Half version;
	u8 asize, osize;
	Dwarf *dw;
	Elf *elf;
	int fd;

	fd = open(bin, O_RDONLY);
	elf = fd < 0 ? NULL : elf_begin(fd, ELF_C_READ_MMAP, NULL);
	dw = elf ? dwarf_begin_elf(elf, DWARF_C_READ, NULL) : NULL;
	if (!dw) {
		ok(0, "%s: open its DWARF", what);
		goto out;
	}
	/* after dwarf_begin_elf: compressed sections are inflated in place */
	s.line = section(elf, ".debug_line", &s.line_size);
	s.str = section(elf, ".debug_str", &s.str_size);
	s.line_str = section(elf, ".debug_line_str", &s.line_str_size);
	info = section(elf, ".debug_info", &info_size);
	abbrev = section(elf, ".debug_abbrev", &abbrev_size);
	rnglists = section(elf, ".debug_rnglists", &rnglists_size);
	ranges = section(elf, ".debug_ranges", &ranges_size);
	addrs = section(elf, ".debug_addr", &addrs_size);
	str_offsets = section(elf, ".debug_str_offsets", &str_offsets_size);
	compare_aranges(dw, elf, &st);
	while (!dwarf_next_unit(dw, off, &next, &hsize, &version, &abbrev_off, &asize, &osize, NULL,
				NULL)) {
		struct dwscan_unit su;
		Dwarf_Die cu;

		if (!dwscan_unit_at(&su, info, info_size, abbrev, abbrev_size, false, off) ||
		    su.die != off + hsize || su.end != next || su.abbrev_off != abbrev_off ||
		    su.version != version || su.addr_size != asize || su.offset_size != osize) {
			printf("#   unit at 0x%llx: header not read as libdw reads it\n",
			       (unsigned long long)off);
			st.header_differ++;
		} else if (dwarf_offdie(dw, off + hsize, &cu)) {
			su.rnglists = rnglists;
			su.rnglists_size = rnglists_size;
			su.ranges = ranges;
			su.ranges_size = ranges_size;
			su.addrs = addrs;
			su.addrs_size = addrs_size;
			su.str = s.str;
			su.str_size = s.str_size;
			su.line_str = s.line_str;
			su.line_str_size = s.line_str_size;
			su.str_offsets = str_offsets;
			su.str_offsets_size = str_offsets_size;
			st.units++;
			st.cu_differ += !compare_cu(&cu, &su);
			st.differ += !compare_unit(&cu, &s, &st);
			st.scan_differ += !compare_scan(dw, &cu, &su, &st);
			if (st.units == 1)
				scan_hostile(&su);
			if (st.lists && !st.lists_hostile) {
				lists_hostile(&su); /* the first unit with range lists */
				st.lists_hostile = true;
			}
		}
		off = next;
	}
	ok(st.units && st.rows > 50 && !st.differ,
	   "%s: %u units, %llu rows (%llu kept) and %llu files as libdw reads them, %u units "
	   "differ",
	   what, st.units, (unsigned long long)st.rows, (unsigned long long)st.kept,
	   (unsigned long long)st.files, st.differ);
	ok(st.units && st.funcs >= 3 && !st.scan_differ && !st.header_differ,
	   "%s: the scan finds the %llu functions libdw's walk finds, %u units differ, %u "
	   "headers read otherwise",
	   what, (unsigned long long)st.funcs, st.scan_differ, st.header_differ);
	ok(st.units && st.insts && !st.tree_differ && !st.to_libdw,
	   "%s: the scan finds the %llu inlined instances (%llu in several ranges) and %llu "
	   "nested functions libdw's walk finds, with their ranges, %u units differ, %llu "
	   "left to libdw",
	   what, (unsigned long long)(st.insts - st.nested), (unsigned long long)st.lists,
	   (unsigned long long)st.nested, st.tree_differ, (unsigned long long)st.to_libdw);
	ok(!st.aranges_differ, "%s: .debug_aranges read as libdw reads it (%llu entries)", what,
	   (unsigned long long)st.aranges);
	ok(st.names && !st.names_differ && !st.names_libdw && !st.cu_differ,
	   "%s: the scan names %llu functions and instances, with their call sites, as libdw "
	   "does: %u differ, %llu left to libdw; %u unit DIEs read otherwise",
	   what, (unsigned long long)st.names, st.names_differ, (unsigned long long)st.names_libdw,
	   st.cu_differ);
	dwarf_end(dw);
out:
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
}

static void test_fixtures(void)
{
	static const struct {
		const char *cmd;
		const char *bin;
		const char *what;
	} fx[] = {
		{ "gcc -O2 -g -I%s/fixtures %s/fixtures/fx_inline.c -o dl_c", "dl_c",
		  "C, -O2 -g (DWARF 5)" },
		{ "gcc -O2 -gdwarf-4 -I%s/fixtures %s/fixtures/fx_inline.c -o dl_c4", "dl_c4",
		  "C, DWARF 4" },
		{ "g++ -O2 -g -I%s/fixtures %s/fixtures/fx_cxx.cc -o dl_cxx", "dl_cxx", "C++" },
		{ "gcc -O2 -g -I%s/fixtures %s/fixtures/fx_inline.c -o dl_z && "
		  "objcopy --compress-debug-sections=zlib dl_z",
		  "dl_z", "C, compressed debug sections" },
		{ "gcc -O2 -g %s/fixtures/fx_nested.c -o dl_nested", "dl_nested",
		  "C, a nested function (GNU C)" },
	};
	u32 i;

	for (i = 0; i < ARRAY_SIZE(fx); i++) {
		char *bin = fx_path(fx[i].bin);

		ok(!fx_sh(fx[i].cmd, TEST_SRCDIR, TEST_SRCDIR), "build %s", fx[i].what);
		compare_libdw(bin, fx[i].what);
		free(bin);
	}
	/* clang's DWARF 5 rows in file 0, the primary file, as libdw names it */
	if (have_tool("clang++")) {
		char *bin = fx_path("dl_clang5");

		ok(!fx_sh("clang++ -O2 -gdwarf-5 %s/fixtures/fx_cxx.cc -o dl_clang5", TEST_SRCDIR),
		   "build C++ with clang++ -gdwarf-5");
		compare_libdw(bin, "C++, clang, DWARF 5");
		free(bin);
		/*
		 * clang's addresses through .debug_addr (DW_FORM_addrx) and its
		 * range lists through offsets (DW_FORM_rnglistx,
		 * DW_RLE_startx_length): cycread's own DWARF readers in function
		 * sections, linked (never run) with their calls unresolved.
		 */
		bin = fx_path("dl_clang_tool");
		ok(!fx_sh("T=%s/.. && clang -O2 -gdwarf-5 -ffunction-sections -I$T $T/srcline.c "
			  "$T/dwscan.c $T/dwline.c -nostdlib -Wl,--unresolved-symbols=ignore-all "
			  "-Wl,-e,0 -o dl_clang_tool",
			  TEST_SRCDIR),
		   "build cycread's DWARF readers with clang -gdwarf-5 -ffunction-sections");
		compare_libdw(bin, "cycread's DWARF readers, clang, DWARF 5");
		free(bin);
	} else {
		tap_skip("clang++ missing: its DWARF 5 line tables untested");
	}
	/* many units, and the sequences of .text.startup and .text.unlikely */
	compare_libdw("/proc/self/exe", "this test program");
}

/* ---- hand-made line programs --------------------------------------------- */

/* Bytes of a hand-made section: a line program, units, their abbreviations and tables. */
struct prog {
	u8 b[4096];
	u32 n;
};

static void put(struct prog *p, const void *src, u32 n)
{
	if (n > sizeof(p->b) - p->n) {
		printf("Bail out! a hand-made section outgrew its %zu bytes\n", sizeof(p->b));
		exit(1);
	}
	memcpy(p->b + p->n, src, n);
	p->n += n;
}

static void put8(struct prog *p, u8 v)
{
	put(p, &v, 1);
}

static void put_n(struct prog *p, u64 v, u32 n)
{
	put(p, &v, n); /* little endian: the host's, checked by the Makefile's ARCH */
}

static void put_uleb(struct prog *p, u64 v)
{
	do {
		put8(p, (v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
		v >>= 7;
	} while (v);
}

static void put_sleb(struct prog *p, s64 v)
{
	bool more;

	do {
		u8 b = v & 0x7f;

		v >>= 7;
		more = !((v == 0 && !(b & 0x40)) || (v == -1 && (b & 0x40)));
		put8(p, b | (more ? 0x80 : 0));
	} while (more);
}

static void put_str(struct prog *p, const char *s)
{
	put(p, s, strlen(s) + 1);
}

/* Extended opcodes. */
static void set_address(struct prog *p, u64 a)
{
	put8(p, 0);
	put_uleb(p, 9);
	put8(p, DW_LNE_set_address);
	put_n(p, a, 8);
}

static void end_sequence(struct prog *p)
{
	put8(p, 0);
	put_uleb(p, 1);
	put8(p, DW_LNE_end_sequence);
}

static void advance_pc(struct prog *p, u64 n)
{
	put8(p, DW_LNS_advance_pc);
	put_uleb(p, n);
}

static void advance_line(struct prog *p, s64 n)
{
	put8(p, DW_LNS_advance_line);
	put_sleb(p, n);
}

static const u8 std_lengths[12] = { 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1 };

/* The fixed part of a header after header_length (DWARF 4 has max_ops). */
static void header_fixed(struct prog *p, u16 version)
{
	put8(p, 1); /* minimum_instruction_length */
	if (version >= 4)
		put8(p, 1); /* maximum_operations_per_instruction */
	put8(p, 1); /* default_is_stmt */
	put8(p, (u8)-5); /* line_base */
	put8(p, 14); /* line_range */
	put8(p, 13); /* opcode_base */
	put(p, std_lengths, sizeof(std_lengths));
}

/* Patch unit_length and header_length once the whole unit is written. */
static void finish(struct prog *p, u32 hlen_at, u32 prog_at)
{
	u32 unit_len = p->n - 4, hlen = prog_at - (hlen_at + 4);

	memcpy(p->b, &unit_len, 4);
	memcpy(p->b + hlen_at, &hlen, 4);
}

/*
 * Three sequences, out of address order: A at 0x2000 (its last row and
 * its end both at 0x2008, the last row in file 2), B at 0x1000 ending at
 * 0x2000 where A begins, C at 0x3000.  libdw's order: 0x1000 B, 0x2000 B's
 * end then A's row, 0x2004, 0x2008 A's end then A's row, 0x3000, 0x3010 end.
 */
static void program_rows(struct prog *p)
{
	set_address(p, 0x2000);
	put8(p, DW_LNS_copy); /* 0x2000 line 1 */
	advance_line(p, 9);
	advance_pc(p, 4);
	put8(p, DW_LNS_copy); /* 0x2004 line 10 */
	put8(p, DW_LNS_set_file);
	put_uleb(p, 2);
	put8(p, 13 + 4 * 14 + (0 - -5)); /* special: +4 bytes, +0 lines: 0x2008 */
	end_sequence(p); /* 0x2008 */
	set_address(p, 0x1000);
	advance_line(p, 4);
	put8(p, DW_LNS_copy); /* 0x1000 line 5 */
	advance_pc(p, 0x1000);
	end_sequence(p); /* 0x2000 */
	set_address(p, 0x3000);
	put8(p, 0); /* set_discriminator: skipped */
	put_uleb(p, 2);
	put8(p, DW_LNE_set_discriminator);
	put_uleb(p, 3);
	put8(p, DW_LNS_copy); /* 0x3000 line 1 */
	put8(p, DW_LNS_fixed_advance_pc);
	put_n(p, 0x10, 2);
	put8(p, DW_LNS_const_add_pc); /* (255 - 13) / 14 = 17 */
	end_sequence(p); /* 0x3021 */
}

static void program_v4(struct prog *p)
{
	u32 hlen_at, prog_at;

	p->n = 4;
	put_n(p, 4, 2);
	hlen_at = p->n;
	put_n(p, 0, 4);
	header_fixed(p, 4);
	put_str(p, "inc");
	put8(p, 0);
	put_str(p, "a.c");
	put_uleb(p, 0);
	put_uleb(p, 0);
	put_uleb(p, 0);
	put_str(p, "b.h");
	put_uleb(p, 1);
	put_uleb(p, 0);
	put_uleb(p, 0);
	put8(p, 0);
	prog_at = p->n;
	program_rows(p);
	finish(p, hlen_at, prog_at);
}

/* the directories in .debug_line_str */
static const u8 line_str[] = "/src\0inc";
static const u8 str[] = "";

static void program_v5(struct prog *p)
{
	static const u8 md5[16] = { 1, 2, 3 };
	u32 hlen_at, prog_at;

	p->n = 4;
	put_n(p, 5, 2);
	put8(p, 8); /* address_size */
	put8(p, 0); /* segment_selector_size */
	hlen_at = p->n;
	put_n(p, 0, 4);
	header_fixed(p, 5);
	put8(p, 1); /* directory entry format */
	put_uleb(p, DW_LNCT_path);
	put_uleb(p, DW_FORM_line_strp);
	put_uleb(p, 2);
	put_n(p, 0, 4);
	put_n(p, 5, 4);
	put8(p, 3); /* file entry format */
	put_uleb(p, DW_LNCT_path);
	put_uleb(p, DW_FORM_string);
	put_uleb(p, DW_LNCT_directory_index);
	put_uleb(p, DW_FORM_udata);
	put_uleb(p, DW_LNCT_MD5);
	put_uleb(p, DW_FORM_data16);
	put_uleb(p, 3);
	put_str(p, "a.c"); /* file 0 */
	put_uleb(p, 0);
	put(p, md5, 16);
	put_str(p, "a.c"); /* file 1 */
	put_uleb(p, 0);
	put(p, md5, 16);
	put_str(p, "b.h"); /* file 2 */
	put_uleb(p, 1);
	put(p, md5, 16);
	prog_at = p->n;
	program_rows(p);
	finish(p, hlen_at, prog_at);
}

static struct dwline_secs secs_of(const struct prog *p)
{
	return (struct dwline_secs){
		.line = p->b,
		.line_size = p->n,
		.str = str,
		.str_size = sizeof(str),
		.line_str = line_str,
		.line_str_size = sizeof(line_str),
	};
}

/* "FILE:LINE" at @addr, "-" for none */
static void at(struct dwline *t, u64 addr, char *buf, size_t size)
{
	const struct dwline_row *r = dwline_find(t, addr);

	if (r)
		snprintf(buf, size, "%s:%u", dwline_file(t, r->file), r->line);
	else
		snprintf(buf, size, "-");
}

/* @got (a buffer of the test's, never NULL) is @want */
static void is_buf(const char *got, const char *want, const char *what)
{
	bool same = !strcmp(got, want);

	ok(same, "%s", what);
	if (!same)
		printf("#   got '%s', want '%s'\n", got, want);
}

static void check_lookups(const struct prog *p, const char *what, const char *b_h)
{
	static const u64 addrs[] = { 0xfff,  0x1000, 0x1fff, 0x2000, 0x2005,
				     0x2008, 0x2fff, 0x3000, 0x3020, 0x3021 };
	/* past 0x2008, A's row stays the answer: libdw sorts A's end before it */
	const char *want[] = { "-", "/src/a.c:5", "/src/a.c:5", "/src/a.c:1", "/src/a.c:10",
			       b_h, b_h,	  "/src/a.c:1", "/src/a.c:1", "-" };
	struct dwline_secs s = secs_of(p);
	struct dwline t = { 0 };
	char got[256], all[2048] = "", exp[2048] = "";
	u32 i;

	ok(dwline_read(&s, 0, 8, "/src", &t), "%s: decoded", what);
	for (i = 0; i < ARRAY_SIZE(addrs); i++) {
		at(&t, addrs[i], got, sizeof(got));
		snprintf(all + strlen(all), sizeof(all) - strlen(all), "%llx=%s ",
			 (unsigned long long)addrs[i], got);
		snprintf(exp + strlen(exp), sizeof(exp) - strlen(exp), "%llx=%s ",
			 (unsigned long long)addrs[i], want[i]);
	}
	is_buf(all, exp, "the row at each address, libdw's choice at ties");
	is_u64(t.nr_rows, 8, "eight rows");
	/* its rows would belong to no run, left out of the order: refused */
	ok(!dwline_read(&s, 0, 8, "/src", &t) && t.nr_rows == 8,
	   "%s: a table decoded into again: refused, its rows kept", what);
	dwline_free(&t);
}

/*
 * A DWARF 4 header after the unit's length, with @osize-byte offsets, no
 * directory and one file, a.c; returns where header_length is to be patched.
 */
static u32 header_v4_a_c(struct prog *p, u32 osize)
{
	u32 hlen_at;

	put_n(p, 4, 2);
	hlen_at = p->n;
	put_n(p, 0, osize);
	header_fixed(p, 4);
	put8(p, 0);
	put_str(p, "a.c");
	put_uleb(p, 0);
	put_uleb(p, 0);
	put_uleb(p, 0);
	put8(p, 0);
	return hlen_at;
}

/* A DWARF 4 unit of a.c with 4-byte lengths; its program is to follow. */
static void begin_v4(struct prog *p, u32 *hlen_at, u32 *prog_at)
{
	p->n = 4;
	*hlen_at = header_v4_a_c(p, 4);
	*prog_at = p->n;
}

/* The lengths filled in, the unit decoded into @t. */
static bool decode_v4(struct prog *p, u32 hlen_at, u32 prog_at, struct dwline *t)
{
	struct dwline_secs s;

	finish(p, hlen_at, prog_at);
	s = secs_of(p);
	return dwline_read(&s, 0, 8, NULL, t);
}

/* Two sequences overlapping: only a sort of every row orders them. */
static void test_overlap(void)
{
	struct prog p;
	struct dwline t = { 0 };
	u32 hlen_at, prog_at;
	char got[64];

	begin_v4(&p, &hlen_at, &prog_at);
	set_address(&p, 0x1000);
	put8(&p, DW_LNS_copy); /* 0x1000 line 1 */
	advance_pc(&p, 8);
	advance_line(&p, 1);
	put8(&p, DW_LNS_copy); /* 0x1008 line 2 */
	advance_pc(&p, 8);
	end_sequence(&p); /* 0x1010 */
	set_address(&p, 0x1004);
	advance_line(&p, 99);
	put8(&p, DW_LNS_copy); /* 0x1004 line 100 */
	advance_pc(&p, 8);
	end_sequence(&p); /* 0x100c */
	ok(decode_v4(&p, hlen_at, prog_at, &t), "overlapping sequences: decoded");
	at(&t, 0x1006, got, sizeof(got));
	is_buf(got, "a.c:100", "0x1006: the inner sequence's row");
	at(&t, 0x100a, got, sizeof(got));
	is_buf(got, "a.c:2", "0x100a: the outer sequence's second row");
	at(&t, 0x100d, got, sizeof(got));
	is_buf(got, "-", "0x100d: after the inner end, nothing (as libdw)");
	dwline_free(&t);
}

/*
 * A sequence ending at its last row's address, the rows otherwise in
 * order: libdw puts the end first at that address, so the row is found
 * there; left in program order the end would hide it.
 */
static void test_end_at_row(void)
{
	struct prog p;
	struct dwline t = { 0 };
	u32 hlen_at, prog_at;
	char got[64];

	begin_v4(&p, &hlen_at, &prog_at);
	set_address(&p, 0x2000);
	put8(&p, DW_LNS_copy); /* 0x2000 line 1 */
	advance_pc(&p, 4);
	advance_line(&p, 1);
	put8(&p, DW_LNS_copy); /* 0x2004 line 2 */
	end_sequence(&p); /* 0x2004 */
	set_address(&p, 0x3000); /* not the table's last row, which always ends */
	put8(&p, DW_LNS_copy);
	advance_pc(&p, 4);
	end_sequence(&p);
	ok(decode_v4(&p, hlen_at, prog_at, &t) && t.nr_rows == 5 && t.rows[1].end && !t.rows[2].end,
	   "an end at its last row's address: decoded, the end before the row");
	at(&t, 0x2004, got, sizeof(got));
	is_buf(got, "a.c:2", "0x2004: the row, as libdw finds it");
	dwline_free(&t);
}

/*
 * A program of no rows (one vendor opcode of 400 bytes) keeps no room for
 * rows: room is made for a row per byte before the program is run, and a
 * unit without rows is a good one, kept as long as its file.
 */
static void test_rowless_program(void)
{
	struct prog p;
	struct dwline t = { 0 };
	u32 hlen_at, prog_at, i;

	begin_v4(&p, &hlen_at, &prog_at);
	put8(&p, 0);
	put_uleb(&p, 1 + 400);
	put8(&p, 0x80); /* DW_LNE_lo_user: its bytes skipped */
	for (i = 0; i < 400; i++)
		put8(&p, 0);
	ok(decode_v4(&p, hlen_at, prog_at, &t) && !t.nr_rows && !t.alloc_rows && !t.rows,
	   "a program of 400 bytes and no rows: decoded, no room kept (%zu rows)", t.alloc_rows);
	dwline_free(&t);
}

/*
 * Hostile inputs: every truncation refused (the unit's length says more),
 * every byte replaced by values that break lengths, LEB128s and indices:
 * decoded or refused, never read out of bounds (ASan), rows never more
 * than the program's bytes.
 */
static void test_hostile(const struct prog *orig, const char *what)
{
	static const u8 vals[] = { 0x00, 0x01, 0x7f, 0x80, 0xff };
	u32 i, k, refused = 0, runs = 0;
	bool bounded = true, cut_ok = true;
	struct prog p;

	for (i = 0; i < orig->n; i++) {
		struct dwline_secs s = secs_of(orig);
		struct dwline t = { 0 };
		u8 *copy = xmalloc(i ? i : 1);

		memcpy(copy, orig->b, i);
		s.line = copy; /* heap: ASan sees any read past @i bytes */
		s.line_size = i;
		cut_ok = cut_ok && !dwline_read(&s, 0, 8, "/src", &t);
		dwline_free(&t);
		free(copy);
	}
	ok(cut_ok, "%s: each of its %u truncations refused", what, orig->n);
	for (i = 0; i < orig->n; i++) {
		for (k = 0; k < ARRAY_SIZE(vals); k++) {
			struct dwline_secs s;
			struct dwline t = { 0 };
			u8 *copy = xmalloc(orig->n);
			u32 f;

			p = *orig;
			p.b[i] = vals[k];
			memcpy(copy, p.b, p.n);
			s = secs_of(&p);
			s.line = copy;
			if (dwline_read(&s, 0, 8, "/src", &t)) {
				bounded = bounded && t.nr_rows <= p.n;
				for (f = 0; f <= t.nr_files; f++)
					dwline_file(&t, f);
				dwline_find(&t, 0x2004);
			} else {
				refused++;
			}
			runs++;
			dwline_free(&t);
			free(copy);
		}
	}
	ok(bounded && refused > 0, "%s: %u corruptions, %u refused, no row beyond its bytes", what,
	   runs, refused);
}

/*
 * Room for rows is made once, a row for each of the program's bytes.  On
 * a 32-bit host, 24-byte rows for a 179 MiB program wrap the allocation's
 * size; here, a 64-bit unit length claiming 0.7 EiB (the section's size
 * says as much, and only its first bytes are read: the program is refused
 * at its fourth opcode) makes the same product wrap to 8 bytes.  The
 * three rows before then must fit what was allocated (ASan), and no guess
 * of the decoder's may ask for more than DWLINE_ROWS_AT_ONCE rows at once.
 */
static void test_huge_program(void)
{
	size_t rows = SIZE_MAX / sizeof(struct dwline_row) + 1; /* rows * size wraps */
	u64 prog_bytes = (u64)rows, unit_len;
	struct dwline t = { 0 };
	struct dwline_secs s;
	struct prog p = { .n = 0 };
	u32 hlen_at, prog_at;
	u8 *copy;

	put_n(&p, 0xffffffff, 4); /* 64-bit DWARF: the length follows in 8 bytes */
	put_n(&p, 0, 8);
	hlen_at = header_v4_a_c(&p, 8);
	prog_at = p.n;
	put8(&p, DW_LNS_copy);
	put8(&p, DW_LNS_advance_pc);
	put_uleb(&p, 4);
	put8(&p, DW_LNS_copy);
	put8(&p, DW_LNS_advance_pc);
	put_uleb(&p, 4);
	put8(&p, DW_LNS_copy);
	put8(&p, 0); /* an extended opcode of length 0: corrupt, the decoder stops */
	put_uleb(&p, 0);
	unit_len = prog_at - 12 + prog_bytes;
	memcpy(p.b + 4, &unit_len, 8);
	unit_len = prog_at - (hlen_at + 8);
	memcpy(p.b + hlen_at, &unit_len, 8);
	copy = xmalloc(p.n);
	memcpy(copy, p.b, p.n);
	s = secs_of(&p);
	s.line = copy;
	s.line_size = prog_at + prog_bytes;
	ok(!dwline_read(&s, 0, 8, NULL, &t), "a program claiming %llu bytes: refused at its end",
	   (unsigned long long)prog_bytes);
	ok(t.alloc_rows <= DWLINE_ROWS_AT_ONCE && t.nr_rows == 3,
	   "its 3 rows in room for %zu, not for a row per claimed byte (%zu, %zu bytes wrapped)",
	   t.alloc_rows, rows, rows * sizeof(struct dwline_row));
	dwline_free(&t);
	free(copy);
}

static void test_programs(void)
{
	struct prog p4, p5, p;
	struct dwline_secs s;
	struct dwline t = { 0 };
	u32 i;

	program_v4(&p4);
	program_v5(&p5);
	/* directory 1 is "inc", relative: libdw leaves the name relative */
	check_lookups(&p4, "DWARF 4 program", "inc/b.h:10");
	check_lookups(&p5, "DWARF 5 program (line_strp, string, udata, data16)", "inc/b.h:10");
	test_overlap();
	test_end_at_row();
	test_rowless_program();
	test_huge_program();
	test_hostile(&p4, "DWARF 4 program");
	test_hostile(&p5, "DWARF 5 program");

	/* a LEB128 as long as the section: refused at its end, not read past it */
	p = p4;
	for (i = p.n - 12; i < p.n; i++)
		p.b[i] = 0x80;
	s = secs_of(&p);
	ok(!dwline_read(&s, 0, 8, NULL, &t), "an unterminated LEB128 at the end: refused");
	dwline_free(&t);
	/* an address size that is neither 4 nor 8; an offset outside the section */
	s = secs_of(&p4);
	ok(!dwline_read(&s, 0, 2, NULL, &t), "a 2-byte address size: refused");
	dwline_free(&t);
	ok(!dwline_read(&s, p4.n, 8, NULL, &t), "an offset at the section's end: refused");
	dwline_free(&t);
	/* DWARF 5's address size differs from the unit's */
	s = secs_of(&p5);
	ok(!dwline_read(&s, 0, 4, NULL, &t),
	   "DWARF 5 header's address size not the unit's: refused");
	dwline_free(&t);
}

/* ---- hand-made units for the scan ---------------------------------------- */

/*
 * A unit's abbreviations: 1 the unit (children), 2 a subprogram with a
 * DW_AT_sibling of @sib_form and children, 3 a base type.
 */
static void scan_abbrevs(struct prog *a, u64 sib_form)
{
	a->n = 0;
	put8(a, 1);
	put_uleb(a, DW_TAG_compile_unit);
	put8(a, DW_CHILDREN_yes);
	put8(a, 0);
	put8(a, 0);
	put8(a, 2);
	put_uleb(a, DW_TAG_subprogram);
	put8(a, DW_CHILDREN_yes);
	put_uleb(a, DW_AT_sibling);
	put_uleb(a, sib_form);
	put8(a, 0);
	put8(a, 0);
	put8(a, 3);
	put_uleb(a, DW_TAG_base_type);
	put8(a, DW_CHILDREN_no);
	put8(a, 0);
	put8(a, 0);
	put8(a, 0);
}

/*
 * @pad bytes of an earlier unit, then a DWARF 4 unit: its DIE, a
 * subprogram whose sibling is @sib (8 bytes), a base type in it, a base
 * type after it.  Returns the unit as read back; *@good is the sibling
 * that points at the base type after the subprogram.
 */
static struct dwscan_unit scan_unit(struct prog *info, const struct prog *abbrev, u32 pad, u64 sib,
				    u64 *good)
{
	struct dwscan_unit u = { 0 };
	u32 start = pad, die, len;

	info->n = 0;
	while (info->n < pad)
		put8(info, 0xee);
	put_n(info, 0, 4); /* unit_length, patched below */
	put_n(info, 4, 2);
	put_n(info, 0, 4); /* abbrev_offset */
	put8(info, 8);
	die = info->n;
	put8(info, 1); /* the unit */
	put8(info, 2); /* the subprogram */
	put_n(info, sib, 8);
	put8(info, 3); /* its child */
	put8(info, 0);
	*good = info->n - start;
	put8(info, 3); /* its sibling */
	put8(info, 0); /* the unit's children end */
	len = info->n - start - 4;
	memcpy(info->b + start, &len, 4);
	if (!dwscan_unit_at(&u, info->b, info->n, abbrev->b, abbrev->n, false, start) ||
	    u.die != die || u.end != info->n)
		ok(0, "the hand-made unit's header read back");
	return u;
}

/* The scan of @u over a heap copy of its .debug_info (ASan sees any read past it). */
static bool scan_copy(struct dwscan_unit u)
{
	u8 *copy = xmalloc(u.info_size);
	struct dwscan *s;
	u64 *offs = NULL;
	u32 nr;
	bool ok;

	memcpy(copy, u.info, u.info_size);
	u.info = copy;
	s = dwscan_new(&u);
	ok = s && scan_funcs(s, &offs, &nr);
	dwscan_free(s);
	free(offs);
	free(copy);
	return ok;
}

/*
 * A DW_FORM_ref8 sibling can say anything: start + sib wraps, or, in a
 * unit described with its header past its end, leaves the section.  The
 * scan bounds the sibling by the unit explicitly, and takes only a unit
 * whose header, DIE and end are in that order inside the section.
 */
static void test_scan_siblings(void)
{
	struct prog info, abbrev;
	struct dwscan_unit u;
	u64 good, wrap;

	scan_abbrevs(&abbrev, DW_FORM_ref8);
	scan_unit(&info, &abbrev, 16, 0, &good);
	u = scan_unit(&info, &abbrev, 16, good, &good);
	ok(scan_copy(u), "a ref8 sibling to the next DIE: scanned");
	/* 16 + sib wraps to 5, inside the section, before the unit */
	wrap = (u64)0 - 16 + 5;
	u = scan_unit(&info, &abbrev, 16, wrap, &good);
	ok(!scan_copy(u), "a ref8 sibling whose sum with the unit's start wraps: refused");
	u = scan_unit(&info, &abbrev, 16, UINT64_MAX, &good);
	ok(!scan_copy(u), "a ref8 sibling of 2^64-1: refused");
	/* a header said to lie past the unit's end: end - start wraps, sib 1 passed it */
	u = scan_unit(&info, &abbrev, 16, 1, &good);
	u.start = u.end + 1;
	ok(!scan_copy(u), "a unit whose header lies past its end: refused, nothing read past it");
	u = scan_unit(&info, &abbrev, 16, good, &good);
	u.start = u.die;
	ok(!scan_copy(u), "a unit whose header is where its DIE is: refused");
}

/*
 * A header of @version (unit type @type from 5 on), 64-bit DWARF when
 * @dwarf64, followed by @extra bytes of the header and a DIE byte;
 * *@die where that DIE is.
 */
static void unit_header(struct prog *p, u16 version, u8 type, bool dwarf64, u32 extra, u32 *die)
{
	u32 osize = dwarf64 ? 8 : 4, len_at;
	u64 len;

	p->n = 0;
	if (dwarf64)
		put_n(p, 0xffffffff, 4);
	len_at = p->n;
	put_n(p, 0, osize);
	put_n(p, version, 2);
	if (version >= 5) {
		put8(p, type);
		put8(p, 8);
		put_n(p, 0x40, osize);
	} else {
		put_n(p, 0x40, osize);
		put8(p, 8);
	}
	while (extra--)
		put8(p, 0x11);
	*die = p->n;
	put8(p, 1);
	len = p->n - len_at - osize;
	memcpy(p->b + len_at, &len, osize); /* little endian, as put_n() */
}

/* dwscan_unit_at() reads each kind of header to its DIE, and refuses what is none. */
static void test_unit_headers(void)
{
	static const struct {
		u16 version;
		u8 type;
		bool dwarf64;
		u32 extra;
		const char *what;
	} hdr[] = {
		{ 5, DW_UT_compile, false, 0, "DWARF 5 compile unit" },
		{ 5, DW_UT_partial, true, 0, "DWARF 5 partial unit, 64-bit" },
		{ 5, DW_UT_skeleton, false, 8, "DWARF 5 skeleton unit (dwo_id)" },
		{ 5, DW_UT_type, false, 12, "DWARF 5 type unit (signature, type offset)" },
		{ 5, DW_UT_split_type, true, 16, "DWARF 5 split type unit, 64-bit" },
		{ 4, 0, false, 0, "DWARF 4" },
		{ 2, 0, true, 0, "DWARF 2, 64-bit" },
	};
	struct dwscan_unit u;
	struct prog p;
	u32 i, die, len;

	for (i = 0; i < ARRAY_SIZE(hdr); i++) {
		unit_header(&p, hdr[i].version, hdr[i].type, hdr[i].dwarf64, hdr[i].extra, &die);
		ok(dwscan_unit_at(&u, p.b, p.n, NULL, 0, false, 0) && u.die == die &&
			   u.end == p.n && u.abbrev_off == 0x40 && u.addr_size == 8 &&
			   u.offset_size == (hdr[i].dwarf64 ? 8 : 4) && u.version == hdr[i].version,
		   "%s: its DIE at %u, its end at %u", hdr[i].what, die, p.n);
	}
	unit_header(&p, 5, 0x80, false, 0, &die);
	ok(!dwscan_unit_at(&u, p.b, p.n, NULL, 0, false, 0), "a unit type of a vendor's: refused");
	unit_header(&p, 6, DW_UT_compile, false, 0, &die);
	ok(!dwscan_unit_at(&u, p.b, p.n, NULL, 0, false, 0), "DWARF 6: refused");
	unit_header(&p, 4, 0, false, 0, &die);
	len = die - 4;
	memcpy(p.b, &len, 4);
	ok(!dwscan_unit_at(&u, p.b, p.n, NULL, 0, false, 0), "a unit without a DIE: refused");
	len = p.n - 3;
	memcpy(p.b, &len, 4);
	ok(!dwscan_unit_at(&u, p.b, p.n, NULL, 0, false, 0),
	   "a unit longer than the section: refused");
	len = 0xfffffff0;
	memcpy(p.b, &len, 4);
	ok(!dwscan_unit_at(&u, p.b, p.n, NULL, 0, false, 0), "a reserved unit length: refused");
	ok(!dwscan_unit_at(&u, p.b, p.n, NULL, 0, false, p.n),
	   "an offset at the section's end: refused");
	unit_header(&p, 4, 0, false, 0, &die);
	p.b[10] = 2; /* DWARF 4, 32-bit: the address size after length, version, abbrev_offset */
	ok(!dwscan_unit_at(&u, p.b, p.n, NULL, 0, false, 0),
	   "2-byte addresses (libdw reads them as 8): refused");
	p.b[10] = 4;
	ok(dwscan_unit_at(&u, p.b, p.n, NULL, 0, false, 0) && u.addr_size == 4,
	   "4-byte addresses: read");
}

/* ---- a function's tree, hand-made ----------------------------------------- */

/* What tree_unit() varies. */
struct tree_spec {
	u16 version; /* 4: .debug_ranges, 5: .debug_rnglists */
	u64 cu_low; /* the unit's DW_AT_low_pc: the lists' base */
	u64 list_off; /* the instance's DW_AT_ranges */
	bool low_twice; /* the subprogram's abbreviation says DW_AT_low_pc twice */
	bool wide_name; /* DW_AT_ranges spelt as a name of more than 32 bits */
};

/*
 * A unit (DWARF 4 or 5, 8-byte addresses): its DIE with DW_AT_low_pc, a
 * subprogram (low_pc 0x1000, high_pc a size of 0x100) holding one inlined
 * instance with DW_AT_ranges.  The subprogram's DIE at *@func.
 */
static bool tree_unit(const struct tree_spec *ts, struct prog *info, struct prog *abbrev,
		      struct dwscan_unit *u, u64 *func)
{
	u32 len;

	abbrev->n = 0;
	put8(abbrev, 1);
	put_uleb(abbrev, DW_TAG_compile_unit);
	put8(abbrev, DW_CHILDREN_yes);
	put_uleb(abbrev, DW_AT_low_pc);
	put_uleb(abbrev, DW_FORM_addr);
	put8(abbrev, 0);
	put8(abbrev, 0);
	put8(abbrev, 2);
	put_uleb(abbrev, DW_TAG_subprogram);
	put8(abbrev, DW_CHILDREN_yes);
	put_uleb(abbrev, DW_AT_low_pc);
	put_uleb(abbrev, DW_FORM_addr);
	put_uleb(abbrev, ts->low_twice ? DW_AT_low_pc : DW_AT_high_pc);
	put_uleb(abbrev, ts->low_twice ? DW_FORM_addr : DW_FORM_data4);
	put8(abbrev, 0);
	put8(abbrev, 0);
	put8(abbrev, 3);
	put_uleb(abbrev, DW_TAG_inlined_subroutine);
	put8(abbrev, DW_CHILDREN_no);
	put_uleb(abbrev, ts->wide_name ? DW_AT_ranges + (1ULL << 32) : DW_AT_ranges);
	put_uleb(abbrev, DW_FORM_sec_offset);
	put8(abbrev, 0);
	put8(abbrev, 0);
	put8(abbrev, 0);

	info->n = 0;
	put_n(info, 0, 4); /* unit_length, patched below */
	put_n(info, ts->version, 2);
	if (ts->version >= 5) {
		put8(info, DW_UT_compile);
		put8(info, 8);
		put_n(info, 0, 4);
	} else {
		put_n(info, 0, 4);
		put8(info, 8);
	}
	put8(info, 1);
	put_n(info, ts->cu_low, 8);
	*func = info->n;
	put8(info, 2);
	put_n(info, 0x1000, 8);
	put_n(info, ts->low_twice ? 0x1100 : 0x100, ts->low_twice ? 8 : 4);
	put8(info, 3);
	put_n(info, ts->list_off, 4);
	put8(info, 0); /* the subprogram's children end */
	put8(info, 0); /* the unit's */
	len = info->n - 4;
	memcpy(info->b, &len, 4);
	return dwscan_unit_at(u, info->b, info->n, abbrev->b, abbrev->n, false, 0);
}

/* The instance's ranges as "start-end ..." into @buf, or "libdw", "none", "refused". */
static void tree_ranges(const struct tree_spec *ts, const struct prog *lists, char *buf,
			size_t size)
{
	struct prog info, abbrev;
	struct dwscan_unit u;
	struct dwscan_tree t;
	struct dwscan *s;
	struct sbuf sb = { 0 };
	u64 func;
	u32 i;

	snprintf(buf, size, "refused");
	if (!tree_unit(ts, &info, &abbrev, &u, &func))
		return;
	if (ts->version >= 5) {
		u.rnglists = lists->b;
		u.rnglists_size = lists->n;
	} else {
		u.ranges = lists->b;
		u.ranges_size = lists->n;
	}
	s = dwscan_new(&u);
	if (s && dwscan_tree(s, func, &t)) {
		if (t.nr_insts != 1 || t.insts[0].pc == DWSCAN_PC_NONE)
			sbuf_addstr(&sb, "none");
		else if (t.insts[0].pc == DWSCAN_PC_LIBDW)
			sbuf_addstr(&sb, "libdw");
		for (i = 0;
		     t.nr_insts == 1 && t.insts[0].pc == DWSCAN_PC_RANGES && i < t.insts[0].nr; i++)
			sbuf_printf(&sb, "%s%llx-%llx", i ? " " : "",
				    (unsigned long long)t.ranges[t.insts[0].first + i].start,
				    (unsigned long long)t.ranges[t.insts[0].first + i].end);
		snprintf(buf, size, "%s", sb.buf ? sb.buf : "");
		dwscan_tree_free(&t);
	}
	dwscan_free(s);
	sbuf_free(&sb);
}

/*
 * Range lists read as the DWARF standard says and libdw reads them:
 * .debug_ranges' pairs from the unit's base, its base selection; each kind
 * of DWARF 5 entry that needs no .debug_addr.  What libdw reads otherwise
 * than the scan would (a pair of escapes, a base of all ones, LEB128s past
 * 10 bytes, an index with no DW_AT_addr_base, repeated or wide
 * attributes) is left to libdw or refused.
 */
static void test_tree_lists(void)
{
	struct tree_spec v4 = { .version = 4, .cu_low = 0x1000 }, v5 = v4, ts;
	struct prog r4 = { .n = 0 }, r5 = { .n = 0 }, bad;
	char got[256];

	v5.version = 5;
	put_n(&r4, 0x10, 8); /* base + 0x10 .. base + 0x20 */
	put_n(&r4, 0x20, 8);
	put_n(&r4, UINT64_MAX, 8); /* base selection */
	put_n(&r4, 0x2000, 8);
	put_n(&r4, 5, 8);
	put_n(&r4, 8, 8);
	put_n(&r4, 0, 8); /* end of list */
	put_n(&r4, 0, 8);
	tree_ranges(&v4, &r4, got, sizeof(got));
	ok(!strcmp(got, "1010-1020 2005-2008"),
	   ".debug_ranges: pairs from the base, a new base: %s", got);

	put8(&r5, DW_RLE_offset_pair);
	put_uleb(&r5, 0x10);
	put_uleb(&r5, 0x20);
	put8(&r5, DW_RLE_base_address);
	put_n(&r5, 0x2000, 8);
	put8(&r5, DW_RLE_offset_pair);
	put_uleb(&r5, 5);
	put_uleb(&r5, 8);
	put8(&r5, DW_RLE_start_length);
	put_n(&r5, 0x3000, 8);
	put_uleb(&r5, 0x10);
	put8(&r5, DW_RLE_start_end);
	put_n(&r5, 0x4000, 8);
	put_n(&r5, 0x4004, 8);
	put8(&r5, DW_RLE_end_of_list);
	tree_ranges(&v5, &r5, got, sizeof(got));
	ok(!strcmp(got, "1010-1020 2005-2008 3000-3010 4000-4004"),
	   ".debug_rnglists: offset pairs, a base, start and length, start and end: %s", got);

	bad = r4;
	memset(bad.b, 0xff, 16);
	tree_ranges(&v4, &bad, got, sizeof(got));
	ok(!strcmp(got, "libdw"), ".debug_ranges: two escapes (an error to libdw): %s", got);
	ts = v4;
	ts.cu_low = UINT64_MAX;
	tree_ranges(&ts, &r4, got, sizeof(got));
	ok(!strcmp(got, "libdw"), "a unit base of all ones (libdw: not read, lists fail): %s", got);
	ts = v4;
	ts.list_off = r4.n;
	tree_ranges(&ts, &r4, got, sizeof(got));
	ok(!strcmp(got, "libdw"), "a list offset at the section's end: %s", got);
	bad.n = 0;
	put8(&bad, DW_RLE_offset_pair);
	put(&bad, "\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x00", 11);
	put_uleb(&bad, 0x20);
	put8(&bad, DW_RLE_end_of_list);
	tree_ranges(&v5, &bad, got, sizeof(got));
	ok(!strcmp(got, "libdw"), "a LEB128 of 11 bytes: %s", got);
	bad.n = 0;
	put8(&bad, DW_RLE_startx_length);
	put_uleb(&bad, 0);
	put_uleb(&bad, 0x10);
	put8(&bad, DW_RLE_end_of_list);
	tree_ranges(&v5, &bad, got, sizeof(got));
	ok(!strcmp(got, "libdw"),
	   "an entry through .debug_addr, the unit without DW_AT_addr_base: %s", got);
	ts = v5;
	ts.low_twice = true;
	tree_ranges(&ts, &r5, got, sizeof(got));
	ok(!strcmp(got, "refused"), "DW_AT_low_pc twice in an abbreviation (libdw: the first): %s",
	   got);
	ts = v5;
	ts.wide_name = true;
	tree_ranges(&ts, &r5, got, sizeof(got));
	ok(!strcmp(got, "refused"), "an attribute name of more than 32 bits: %s", got);
}

/* ---- hand-made units, assembled by gas: names and bases as libdw reads them ---- */

/* One attribute of a hand-made DIE: a value, a string, or a reference to DIE @ref. */
struct h_attr {
	u32 name;
	u32 form;
	u64 v; /* constants, offsets, indexes; DW_FORM_implicit_const's value */
	const char *str; /* DW_FORM_string */
	u32 ref; /* DW_FORM_ref4: the DIE's index in its unit (0: the unit's DIE) */
};

#define H_MAX_ATTRS 6
#define H_MAX_DIES 40

/* A DIE; tag 0: the end of its parent's children. */
struct h_die {
	u32 tag;
	bool children;
	struct h_attr a[H_MAX_ATTRS];
};

/* A unit: its DIEs in order, the unit's first, and where they went in .debug_info. */
struct h_unit {
	u16 version;
	struct h_die die[H_MAX_DIES];
	u32 nr;
	u64 off[H_MAX_DIES];
};

/* Add a DIE to @u; its index. */
static u32 h_die(struct h_unit *u, u32 tag, bool children, const struct h_attr *a, u32 nr)
{
	struct h_die *d = &u->die[u->nr];

	d->tag = tag;
	d->children = children;
	if (nr)
		memcpy(d->a, a, MIN(nr, H_MAX_ATTRS) * sizeof(*a));
	return u->nr++;
}

/* The abbreviations of @u: code i + 1 for DIE i. */
static void h_abbrevs(const struct h_unit *u, struct prog *abbrev)
{
	u32 i, k;

	for (i = 0; i < u->nr; i++) {
		const struct h_die *d = &u->die[i];

		if (!d->tag)
			continue;
		put_uleb(abbrev, i + 1);
		put_uleb(abbrev, d->tag);
		put_n(abbrev, d->children, 1);
		for (k = 0; k < H_MAX_ATTRS && d->a[k].name; k++) {
			put_uleb(abbrev, d->a[k].name);
			put_uleb(abbrev, d->a[k].form);
			if (d->a[k].form == DW_FORM_implicit_const)
				put_sleb(abbrev, (s64)d->a[k].v);
		}
		put_n(abbrev, 0, 2);
	}
	put_n(abbrev, 0, 1);
}

static void h_attr_bytes(struct prog *body, const struct h_attr *a, const u64 *rel)
{
	switch (a->form) {
	case DW_FORM_string:
		put(body, a->str, strlen(a->str) + 1);
		break;
	case DW_FORM_ref4:
		put_n(body, rel[a->ref], 4);
		break;
	case DW_FORM_udata:
	case DW_FORM_rnglistx:
		put_uleb(body, a->v);
		break;
	case DW_FORM_data1:
	case DW_FORM_strx1:
	case DW_FORM_addrx1:
	case DW_FORM_data8:
		put_n(body, a->v, a->form == DW_FORM_data8 ? 8 : 1);
		break;
	case DW_FORM_data4:
	case DW_FORM_sec_offset: /* 32-bit DWARF */
	case DW_FORM_ref_addr:
	case DW_FORM_strp:
		put_n(body, a->v, 4);
		break;
	default: /* implicit_const, flag_present: nothing in the DIE */
		break;
	}
}

/* @u into @info and @abbrev (32-bit DWARF, 8-byte addresses); refs resolved in a second pass. */
static void h_emit(struct h_unit *u, struct prog *info, struct prog *abbrev)
{
	u32 hdr = u->version >= 5 ? 12 : 11, abbrev_off = abbrev->n, start = info->n, pass, i, k;
	u64 rel[H_MAX_DIES] = { 0 };
	struct prog body = { 0 };

	h_abbrevs(u, abbrev);
	for (pass = 0; pass < 2; pass++) {
		body.n = 0;
		for (i = 0; i < u->nr; i++) {
			const struct h_die *d = &u->die[i];

			rel[i] = hdr + body.n;
			put_uleb(&body, d->tag ? i + 1 : 0);
			for (k = 0; d->tag && k < H_MAX_ATTRS && d->a[k].name; k++)
				h_attr_bytes(&body, &d->a[k], rel);
		}
	}
	put_n(info, hdr - 4 + body.n, 4);
	put_n(info, u->version, 2);
	if (u->version >= 5) {
		put_n(info, DW_UT_compile, 1);
		put_n(info, 8, 1);
		put_n(info, abbrev_off, 4);
	} else {
		put_n(info, abbrev_off, 4);
		put_n(info, 8, 1);
	}
	put(info, body.b, body.n);
	for (i = 0; i < u->nr; i++)
		u->off[i] = start + rel[i];
}

/* A section of raw bytes in assembler. */
static void h_section(FILE *f, const char *name, const struct prog *b)
{
	u32 i;

	fprintf(f, "\t.section %s,\"\",@progbits\n", name);
	for (i = 0; i < b->n; i++)
		fprintf(f, "%s%u%s", i % 16 ? "" : "\t.byte ", b->b[i],
			i % 16 == 15 || i + 1 == b->n ? "\n" : ",");
}

#define A(name, form, ...) ((struct h_attr){ DW_AT_##name, DW_FORM_##form, __VA_ARGS__ })
#define STR(name, s) ((struct h_attr){ DW_AT_##name, DW_FORM_string, .str = (s) })
#define REF(name, i) ((struct h_attr){ DW_AT_##name, DW_FORM_ref4, .ref = (i) })

/* What a case expects of one DIE's name: the scan's answer, or none (left to libdw). */
struct h_expect {
	u32 unit;
	u32 die;
	const char *name; /* NULL: the scan leaves it to libdw */
	u64 call_file;
	u64 call_line;
	const char *what;
};

/*
 * The hand-made units: names along origins, chains of 16 and 17 (libdw
 * follows 16), DW_AT_specification before DW_AT_abstract_origin, linkage
 * names found further along, repeated names, call sites and bases (the
 * first counts, as in libdw), a call file of all ones, references into
 * the unit's DIE and into another unit, strings by index with the base
 * given twice, addresses by index with DW_AT_GNU_addr_base, and a range
 * list base of 0 (libdw guesses one after the lists' header).
 */
static u32 h_units(struct h_unit *u, struct h_expect *e, u32 *nr_e)
{
	const struct h_attr cu_attrs[] = { STR(name, "hand.c"), STR(comp_dir, "/hand") };
	struct h_unit *v;
	u32 i, d, n = 0;

	/* unit 0: names along origins */
	v = &u[n++];
	v->version = 4;
	h_die(v, DW_TAG_compile_unit, true, cu_attrs, 2);
	d = h_die(v, DW_TAG_subprogram, false, (struct h_attr[]){ STR(name, "c0") }, 1);
	for (i = 1; i <= 17; i++)
		d = h_die(v, DW_TAG_subprogram, false,
			  (struct h_attr[]){ REF(abstract_origin, d), A(low_pc, data8, 0x1000 * i),
					     A(high_pc, data4, 0x10) },
			  3);
	e[(*nr_e)++] =
		(struct h_expect){ 0,	       17,	   "c0",
				   UINT64_MAX, UINT64_MAX, "a chain of 16 origins followed" };
	e[(*nr_e)++] = (struct h_expect){ 0, 18, NULL, 0, 0, "a chain of 17 left to libdw" };
	d = h_die(v, DW_TAG_subprogram, false, (struct h_attr[]){ STR(name, "by_spec") }, 1);
	i = h_die(v, DW_TAG_subprogram, false, (struct h_attr[]){ STR(name, "by_origin") }, 1);
	h_die(v, DW_TAG_subprogram, false,
	      (struct h_attr[]){ REF(specification, d), REF(abstract_origin, i),
				 A(low_pc, data8, 0x20000), A(high_pc, data4, 8) },
	      4);
	e[(*nr_e)++] = (struct h_expect){
		0,	    v->nr - 1,	"by_origin",
		UINT64_MAX, UINT64_MAX, "DW_AT_abstract_origin before DW_AT_specification"
	};
	d = h_die(v, DW_TAG_subprogram, false,
		  (struct h_attr[]){ STR(linkage_name, "_Z4linkv"), STR(name, "link") }, 2);
	h_die(v, DW_TAG_subprogram, false,
	      (struct h_attr[]){ STR(name, "plain"), REF(abstract_origin, d) }, 2);
	e[(*nr_e)++] = (struct h_expect){ 0,	      v->nr - 1,
					  "_Z4linkv", UINT64_MAX,
					  UINT64_MAX, "a linkage name further along wins" };
	h_die(v, DW_TAG_subprogram, false,
	      (struct h_attr[]){ STR(name, "n"), STR(MIPS_linkage_name, "mips") }, 2);
	e[(*nr_e)++] = (struct h_expect){ 0,	      v->nr - 1,
					  "mips",     UINT64_MAX,
					  UINT64_MAX, "the MIPS linkage name before the name" };
	h_die(v, DW_TAG_subprogram, false,
	      (struct h_attr[]){ STR(name, "first"), STR(name, "second") }, 2);
	e[(*nr_e)++] = (struct h_expect){ 0,	      v->nr - 1,  "first",
					  UINT64_MAX, UINT64_MAX, "a repeated name: the first" };
	h_die(v, DW_TAG_inlined_subroutine, false,
	      (struct h_attr[]){ REF(abstract_origin, 1), A(call_file, data8, UINT64_MAX),
				 A(call_file, data1, 3), A(call_line, data1, 7),
				 A(call_line, data1, 9) },
	      5);
	e[(*nr_e)++] =
		(struct h_expect){ 0,	 v->nr - 1,
				   "c0", UINT64_MAX,
				   7,	 "a repeated call site: the first, all ones included" };
	h_die(v, DW_TAG_inlined_subroutine, false,
	      (struct h_attr[]){ REF(abstract_origin, 1), A(call_file, implicit_const, 5),
				 A(call_line, udata, 300) },
	      3);
	e[(*nr_e)++] = (struct h_expect){
		0, v->nr - 1, "c0", 5, 300, "a call site as an implicit constant and a LEB128"
	};
	h_die(v, DW_TAG_subprogram, false, (struct h_attr[]){ REF(abstract_origin, 0) }, 1);
	e[(*nr_e)++] =
		(struct h_expect){ 0, v->nr - 1, NULL,
				   0, 0,	 "an origin at the unit's DIE left to libdw" };
	h_die(v, DW_TAG_subprogram, false, (struct h_attr[]){ A(abstract_origin, ref_addr, 0x30) },
	      1);
	e[(*nr_e)++] = (struct h_expect){ 0,	v->nr - 1,
					  NULL, 0,
					  0,	"an origin by DW_FORM_ref_addr left to libdw" };
	h_die(v, 0, false, NULL, 0);

	/* unit 1 (DWARF 5): strings by index, the base given twice; addresses by index */
	v = &u[n++];
	v->version = 5;
	h_die(v, DW_TAG_compile_unit, true,
	      (struct h_attr[]){ A(str_offsets_base, sec_offset, 8),
				 A(str_offsets_base, sec_offset, 16), A(addr_base, sec_offset, 8),
				 A(addr_base, sec_offset, 16), A(comp_dir, strx1, 0) },
	      5);
	h_die(v, DW_TAG_subprogram, false,
	      (struct h_attr[]){ A(name, strx1, 1), A(low_pc, addrx1, 0), A(high_pc, data4, 0x40) },
	      3);
	e[(*nr_e)++] = (struct h_expect){
		1,	    1,		"first_base",
		UINT64_MAX, UINT64_MAX, "a string index from the first of two bases"
	};
	h_die(v, 0, false, NULL, 0);

	/* unit 2 (DWARF 5): DW_AT_GNU_addr_base, which libdw takes first; a list base of 0 */
	v = &u[n++];
	v->version = 5;
	h_die(v, DW_TAG_compile_unit, true,
	      (struct h_attr[]){ A(addr_base, sec_offset, 8), A(GNU_addr_base, sec_offset, 16),
				 A(rnglists_base, sec_offset, 0) },
	      3);
	h_die(v, DW_TAG_subprogram, false,
	      (struct h_attr[]){ STR(name, "gnu_base"), A(low_pc, addrx1, 0),
				 A(high_pc, data4, 0x40) },
	      3);
	h_die(v, DW_TAG_subprogram, false,
	      (struct h_attr[]){ STR(name, "listed"), A(ranges, rnglistx, 0) }, 2);
	h_die(v, 0, false, NULL, 0);
	return n;
}

static u32 h_str(struct prog *str, const char *s)
{
	u32 off = str->n;

	put(str, s, strlen(s) + 1);
	return off;
}

/* The header of a DWARF 5 table of 8-byte addresses (.debug_addr, .debug_rnglists). */
static void h_header(struct prog *p, u32 len)
{
	put_n(p, len, 4);
	put_n(p, 5, 2);
	put_n(p, 8, 1);
	put_n(p, 0, 1);
}

/* A range list of one range of 0x20 bytes at @start. */
static void h_list(struct prog *p, u64 start)
{
	put_n(p, DW_RLE_start_length, 1);
	put_n(p, start, 8);
	put_uleb(p, 0x20);
	put_n(p, DW_RLE_end_of_list, 1);
}

/* The string, address and range list sections the hand-made units point into. */
static void h_tables(struct prog *str, struct prog *offs, struct prog *addrs, struct prog *lists)
{
	/* offsets: a DWARF 5 header, then [8] and [16], the two bases unit 1 gives */
	put_n(offs, 20, 4);
	put_n(offs, 5, 4);
	put_n(offs, h_str(str, "/hand5"), 4);
	put_n(offs, h_str(str, "first_base"), 4);
	put_n(offs, h_str(str, "/wrong"), 4);
	put_n(offs, h_str(str, "second_base"), 4);
	/* addresses: a header, then 0x5000 at 8 and 0x6000 at 16 */
	h_header(addrs, 20);
	put_n(addrs, 0x5000, 8);
	put_n(addrs, 0x6000, 8);
	/*
	 * range lists: a header of one offset (libdw's base when the unit gives
	 * 0), its list at 16; a reader taking the base of 0 as given reads the
	 * header's length, 27, as the offset: another list there
	 */
	h_header(lists, 27);
	put_n(lists, 1, 4);
	put_n(lists, 4, 4);
	h_list(lists, 0x7000);
	h_list(lists, 0x9000);
}

/* Every offset of @su's unit the scan names, as libdw names it; its unit DIE and functions too. */
static void h_compare(Dwarf *dw, const struct dwscan_unit *su, struct cmp_stats *st)
{
	struct dwscan *s = dwscan_new(su);
	Dwarf_Die cu;
	u64 off;

	if (!s || !dwarf_offdie(dw, su->die, &cu)) {
		st->cu_differ++;
		dwscan_free(s);
		return;
	}
	st->cu_differ += !compare_cu(&cu, su);
	st->tree_differ += !compare_func_ranges(dw, s, st);
	for (off = su->die + 1; off < su->end; off++) {
		struct dwscan_name n;

		if (dwscan_name(s, off, &n))
			compare_name(dw, s, off, st);
	}
	dwscan_free(s);
}

/* What each case expects, and that libdw agrees where the scan answers. */
static void h_check(Dwarf *dw, const struct dwscan_unit *su, const struct h_unit *u,
		    const struct h_expect *e)
{
	struct dwscan *s = dwscan_new(su);
	struct dwscan_name n = { 0 };
	u64 off = u->off[e->die];
	const char *ref = NULL;
	bool named = s && dwscan_name(s, off, &n);
	Dwarf_Die die;

	if (dwarf_offdie(dw, off, &die))
		ref = ref_name(&die);
	if (!e->name)
		ok(s && !named, "hand-made DWARF: %s", e->what);
	else
		ok(named && n.name && !strcmp(n.name, e->name) && ref && !strcmp(ref, e->name) &&
			   n.call_file == e->call_file && n.call_line == e->call_line,
		   "hand-made DWARF: %s (%s, libdw %s)", e->what, n.name ? n.name : "none",
		   ref ? ref : "none");
	dwscan_free(s);
}

/* How a hand-made set of .debug_aranges is laid out. */
struct h_set {
	u8 addr_size;
	bool dwarf64;
	bool big;
	u16 version;
	u8 segment;
	bool zeros_mid; /* a pair of zeros before the last range */
};

/* @v in @n bytes, in the set's byte order. */
static void put_o(struct prog *p, u64 v, u32 n, bool big)
{
	u32 i;

	for (i = 0; i < n; i++)
		put8(p, v >> 8 * (big ? n - 1 - i : i));
}

/* A set of @n ranges (0x1000 * (i + 1), 0x10 * i bytes: the first empty) for the unit at @unit. */
static void h_aranges(struct prog *p, const struct h_set *h, u64 unit, u32 n)
{
	u32 at = p->n, osize = h->dwarf64 ? 8 : 4, len_at, i;

	if (h->dwarf64)
		put_o(p, 0xffffffff, 4, h->big);
	len_at = p->n;
	put_o(p, 0, osize, h->big);
	put_o(p, h->version, 2, h->big);
	put_o(p, unit, osize, h->big);
	put8(p, h->addr_size);
	put8(p, h->segment);
	while ((p->n - at) % (2 * h->addr_size))
		put8(p, 0); /* from the set's start */
	for (i = 0; i <= n; i++) {
		if (h->zeros_mid && i + 1 == n) {
			put_o(p, 0, h->addr_size, h->big);
			put_o(p, 0, h->addr_size, h->big);
		}
		put_o(p, i < n ? 0x1000 * (i + 1) : 0, h->addr_size, h->big);
		put_o(p, i < n ? 0x10 * i : 0, h->addr_size, h->big);
	}
	i = p->n - len_at - osize;
	p->n = len_at;
	put_o(p, i, osize, h->big);
	p->n = len_at + osize + i;
}

/*
 * dwaranges.c reads sets as producers write them (each after a set of 40
 * bytes: its padding counts from its own start), and refuses the rest
 * (libdw reads it).
 */
static void test_aranges(void)
{
	static const struct {
		struct h_set h;
		bool ok;
		const char *what;
	} c[] = {
		{ { 8, false, false, 2, 0, false }, true, "8-byte addresses" },
		{ { 4, false, false, 2, 0, false }, true, "4-byte addresses" },
		{ { 8, true, false, 2, 0, false }, true, "8-byte addresses, 64-bit DWARF" },
		{ { 4, true, false, 2, 0, false }, true, "4-byte addresses, 64-bit DWARF" },
		{ { 8, false, true, 2, 0, false }, true, "8-byte addresses, big endian" },
		{ { 8, false, false, 3, 0, false }, false, "version 3: refused" },
		{ { 8, false, false, 2, 1, false }, false, "a segment size: refused" },
		{ { 8, false, false, 2, 0, true }, false, "a pair of zeros inside: refused" },
		{ { 2, false, false, 2, 0, false }, false, "2-byte addresses: refused" },
	};
	static const struct h_set first = { 4, false, false, 2, 0, false };
	struct dwarange *v;
	u32 i, nr, len;

	for (i = 0; i < ARRAY_SIZE(c); i++) {
		struct prog p = { .n = 0 };
		bool read, big = c[i].h.big;

		h_aranges(&p, &(struct h_set){ first.addr_size, false, big, 2, 0, false }, 0x40, 2);
		h_aranges(&p, &c[i].h, 0x80, 2);
		read = dwaranges_read(p.b, p.n, big, &v, &nr);
		ok(read == c[i].ok && (!read || (nr == 4 && v[0].start == 0x1000 &&
						 v[0].end == 0x1000 && v[1].end == 0x2010 &&
						 v[1].unit == 0x40 && v[2].start == 0x1000 &&
						 v[3].end == 0x2010 && v[3].unit == 0x80)),
		   "hand-made .debug_aranges after a set of 40 bytes: %s", c[i].what);
		free(v);
		/* cut anywhere: refused, or read within the bytes (the sanitizer build sees) */
		for (len = 0; len < p.n; len++) {
			u8 *cut = xmalloc(len ? len : 1);

			memcpy(cut, p.b, len);
			if (dwaranges_read(cut, len, big, &v, &nr))
				free(v);
			free(cut);
		}
	}
}

static void test_hand_units(void)
{
	static struct prog info, abbrev, str, offs, addrs, lists;
	struct h_unit *u = xcalloc(4, sizeof(*u));
	struct cmp_stats st = { 0 };
	struct h_expect e[16];
	u32 nr, nr_e = 0, i;
	char *path = fx_path("hand.s"), *obj = fx_path("hand.o");
	Elf *elf = NULL;
	Dwarf *dw = NULL;
	FILE *f;
	int fd;

	nr = h_units(u, e, &nr_e);
	for (i = 0; i < nr; i++)
		h_emit(&u[i], &info, &abbrev);
	h_tables(&str, &offs, &addrs, &lists);
	f = fopen(path, "w");
	if (f) {
		h_section(f, ".debug_info", &info);
		h_section(f, ".debug_abbrev", &abbrev);
		h_section(f, ".debug_str", &str);
		h_section(f, ".debug_str_offsets", &offs);
		h_section(f, ".debug_addr", &addrs);
		h_section(f, ".debug_rnglists", &lists);
		fclose(f);
	}
	ok(f && !fx_sh("gcc -c hand.s -o hand.o"), "hand-made DWARF assembled");
	fd = open(obj, O_RDONLY);
	elf = fd < 0 ? NULL : elf_begin(fd, ELF_C_READ_MMAP, NULL);
	dw = elf ? dwarf_begin_elf(elf, DWARF_C_READ, NULL) : NULL;
	if (dw) {
		struct dwscan_unit su[4];
		size_t n;

		for (i = 0; i < nr; i++) {
			if (!dwscan_unit_at(&su[i], info.b, info.n, abbrev.b, abbrev.n, false,
					    u[i].off[0] - (u[i].version >= 5 ? 12 : 11))) {
				st.header_differ++;
				continue;
			}
			su[i].str = str.b;
			su[i].str_size = str.n;
			su[i].str_offsets = offs.b;
			su[i].str_offsets_size = offs.n;
			su[i].addrs = addrs.b;
			su[i].addrs_size = addrs.n;
			su[i].rnglists = lists.b;
			su[i].rnglists_size = lists.n;
			h_compare(dw, &su[i], &st);
		}
		ok(!st.header_differ && !st.cu_differ && !st.tree_differ && !st.names_differ &&
			   st.names > 20 && section(elf, ".debug_info", &n) && n == info.n,
		   "hand-made DWARF: %llu offsets named as libdw names them (%u differ), unit DIEs "
		   "(%u differ) and functions' ranges (%u units differ) as libdw reads them",
		   (unsigned long long)st.names, st.names_differ, st.cu_differ, st.tree_differ);
		for (i = 0; i < nr_e && !st.header_differ; i++)
			h_check(dw, &su[e[i].unit], &u[e[i].unit], &e[i]);
	} else {
		ok(0, "hand-made DWARF: libdw opens hand.o");
	}
	if (dw)
		dwarf_end(dw);
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	free(u);
	free(path);
	free(obj);
}

int main(void)
{
	elf_version(EV_CURRENT);
	test_programs();
	test_scan_siblings();
	test_unit_headers();
	test_tree_lists();
	test_aranges();
	if (have_tool("gcc") && have_tool("g++") && have_tool("objcopy")) {
		test_fixtures();
		test_hand_units();
	} else
		tap_skip("gcc, g++ or objcopy missing");
	return tap_done();
}
