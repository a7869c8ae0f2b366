// SPDX-License-Identifier: GPL-2.0
/*
 * A unit's functions from its top-level DIEs (see dwscan.h): its
 * abbreviation table, then its DIEs skipped form by form.
 */
#include <dwarf.h>
#include <stdlib.h>

#include "dwread.h"
#include "dwscan.h"

/* More abbreviation codes than this are not a unit's: the scan gives up. */
#define MAX_CODE (1U << 20)

/* A DIE's attributes of fixed sizes beyond this are taken as of variable size. */
#define MAX_FIXED (1U << 16)

/* An attribute's size when its form fixes it; VAR when the DIE's bytes tell. */
#define VAR 0xff

struct spec {
	u32 name; /* read_abbrevs() refuses wider ones */
	u32 form;
	s64 value; /* DW_FORM_implicit_const's */
	u8 size;
};

struct abbrev {
	u32 first; /* into specs */
	u32 nr;
	u32 tag;
	bool defined;
	bool children;
	bool has_pc; /* DW_AT_low_pc or DW_AT_ranges */
	bool sibling; /* has DW_AT_sibling */
	u32 size; /* all attributes' bytes when every form fixes its size, else VAR */
	u32 sib_at; /* where DW_AT_sibling is in them, with size fixed; else NO_SIB_AT */
	u64 sib_form;
	u8 sib_size; /* its form's, VAR when its bytes tell */
	u8 pc_attrs; /* the pc attributes seen (note_attr()) */
};

#define NO_SIB_AT UINT32_MAX

/* A unit's abbreviations, read once for every scan of it. */
struct dwscan {
	struct dwscan_unit u;
	struct abbrev *abbrevs; /* by code */
	u32 nr_abbrevs;
	struct spec *specs;
	u32 nr_specs;
	u32 alloc_specs;
	u64 base; /* the unit's base address, which range lists start from */
	bool base_known; /* else libdw reads the lists */
	u64 addr_base; /* DW_AT_addr_base: the unit's addresses in .debug_addr */
	bool addr_base_known; /* else libdw reads address indexes */
	u64 rnglists_base; /* DW_AT_rnglists_base: its range lists' offsets */
	bool rnglists_base_known;
	u64 str_offsets_base; /* DW_AT_str_offsets_base: its strings' offsets, for DW_FORM_strx */
	bool str_offsets_base_known;
};

/* What a scan looks for: skipping, a unit's functions, a function's inlined instances. */
enum mode { SKIP, FUNCS, TREE };

/* One scan and what it found. */
struct scan {
	const struct dwscan *s;
	const struct dwscan_unit *u;
	struct dwscan_tree *t; /* the functions (FUNCS) or instances (TREE) found */
	u64 end; /* every DIE scanned lies before it */
};

/* The pc attributes of an instance or function, as the scan found them. */
struct pc_attrs {
	u64 low;
	u64 high;
	bool have_low;
	bool have_high;
	bool high_is_size; /* a constant: the size from low_pc */
	bool ranges;
	u64 list; /* DW_AT_ranges: the list's offset in its section */
	bool other; /* a form read here only by libdw */
};

/* The size of an attribute of @form, when the form alone fixes it. */
static u8 form_size(const struct dwscan_unit *u, u64 form)
{
	switch (form) {
	case DW_FORM_flag_present:
	case DW_FORM_implicit_const:
		return 0;
	case DW_FORM_data1:
	case DW_FORM_ref1:
	case DW_FORM_flag:
	case DW_FORM_strx1:
	case DW_FORM_addrx1:
		return 1;
	case DW_FORM_data2:
	case DW_FORM_ref2:
	case DW_FORM_strx2:
	case DW_FORM_addrx2:
		return 2;
	case DW_FORM_strx3:
	case DW_FORM_addrx3:
		return 3;
	case DW_FORM_data4:
	case DW_FORM_ref4:
	case DW_FORM_ref_sup4:
	case DW_FORM_strx4:
	case DW_FORM_addrx4:
		return 4;
	case DW_FORM_data8:
	case DW_FORM_ref8:
	case DW_FORM_ref_sig8:
	case DW_FORM_ref_sup8:
		return 8;
	case DW_FORM_data16:
		return 16;
	case DW_FORM_addr:
		return u->addr_size;
	case DW_FORM_ref_addr:
		return u->version == 2 ? u->addr_size : u->offset_size;
	case DW_FORM_strp:
	case DW_FORM_line_strp:
	case DW_FORM_sec_offset:
	case DW_FORM_strp_sup:
	case DW_FORM_GNU_ref_alt:
	case DW_FORM_GNU_strp_alt:
		return u->offset_size;
	default:
		return VAR;
	}
}

/*
 * What the scan keeps of attribute @name of abbreviation @a, seen before
 * the attribute is added to its size.  libdw takes the first of repeated
 * attributes, the scan would take the last: a repeated one the scan reads
 * refuses the table (libdw's walk judges it).
 */
static bool note_attr(struct abbrev *a, u64 name, u64 form, u8 size)
{
	switch (name) {
	case DW_AT_sibling:
		if (a->sibling)
			return false;
		a->sibling = true;
		a->sib_at = a->size != VAR ? a->size : NO_SIB_AT;
		a->sib_form = form;
		a->sib_size = size;
		return true;
	case DW_AT_low_pc:
	case DW_AT_high_pc:
	case DW_AT_ranges:
	case DW_AT_entry_pc: {
		u32 bit = name == DW_AT_low_pc	  ? 1
			  : name == DW_AT_high_pc ? 2
			  : name == DW_AT_ranges  ? 4
						  : 8;

		if (a->pc_attrs & bit)
			return false;
		a->pc_attrs |= bit;
		a->has_pc = a->has_pc || name == DW_AT_low_pc || name == DW_AT_ranges;
		return true;
	}
	default:
		return true;
	}
}

/* The unit's abbreviations, indexed by code; false when unreadable. */
static bool read_abbrevs(struct dwscan *s)
{
	const struct dwscan_unit *u = &s->u;
	struct dwcur c = { .big = u->big_endian };
	u32 alloc = 0;

	if (u->abbrev_off >= u->abbrev_size)
		return false;
	c.p = u->abbrev + u->abbrev_off;
	c.end = u->abbrev + u->abbrev_size;
	for (;;) {
		u64 code = dw_uleb(&c), name, form;
		struct abbrev *a;

		if (c.bad || code >= MAX_CODE)
			return false;
		if (!code)
			return true;
		if (code >= alloc) {
			u32 n = alloc ? alloc : 64;

			while (n <= code)
				n *= 2;
			s->abbrevs = xrealloc(s->abbrevs, n, sizeof(*s->abbrevs));
			memset(s->abbrevs + alloc, 0, (n - alloc) * sizeof(*s->abbrevs));
			alloc = n;
		}
		if (code >= s->nr_abbrevs)
			s->nr_abbrevs = code + 1;
		a = &s->abbrevs[code];
		if (a->defined)
			return false; /* a code defined twice: not a table libdw would agree on */
		a->defined = true;
		a->tag = dw_uleb(&c);
		a->children = dw_u8(&c) == DW_CHILDREN_yes;
		a->first = s->nr_specs;
		for (;;) {
			s64 value;
			u8 size;

			name = dw_uleb(&c);
			form = dw_uleb(&c);
			if (c.bad || name > UINT32_MAX || form > UINT32_MAX)
				return false; /* libdw keeps 32 bits of each: another reading */
			if (!name && !form)
				break;
			/* an implicit constant's value is here, not in the DIE */
			value = form == DW_FORM_implicit_const ? dw_sleb(&c) : 0;
			size = form_size(u, form);
			if (!note_attr(a, name, form, size))
				return false;
			VEC_GROW(s->specs, s->nr_specs, s->alloc_specs);
			s->specs[s->nr_specs++] = (struct spec){
				.name = name, .form = form, .value = value, .size = size
			};
			a->nr++;
			if (a->size != VAR)
				a->size = size == VAR || a->size + size > MAX_FIXED
						  ? VAR
						  : a->size + size;
		}
	}
}

/* The bytes of one attribute of @form skipped; false for a form not known here. */
static bool skip_form(struct dwcur *c, const struct dwscan_unit *u, u64 form, bool indirect)
{
	u8 n = form_size(u, form);

	if (n != VAR) {
		if (!dw_need(c, n))
			return false;
		c->p += n;
		return true;
	}
	switch (form) {
	case DW_FORM_sdata:
	case DW_FORM_udata:
	case DW_FORM_ref_udata:
	case DW_FORM_strx:
	case DW_FORM_addrx:
	case DW_FORM_loclistx:
	case DW_FORM_rnglistx:
	case DW_FORM_GNU_addr_index:
	case DW_FORM_GNU_str_index:
		dw_uleb(c);
		return !c->bad;
	case DW_FORM_string:
		dw_str(c);
		return !c->bad;
	case DW_FORM_block1:
	case DW_FORM_block2:
	case DW_FORM_block4:
	case DW_FORM_block:
	case DW_FORM_exprloc: {
		u64 len = form == DW_FORM_block1   ? dw_u8(c)
			  : form == DW_FORM_block2 ? dw_uint(c, 2)
			  : form == DW_FORM_block4 ? dw_uint(c, 4)
						   : dw_uleb(c);

		if (c->bad || len > (u64)(c->end - c->p))
			return false;
		c->p += len;
		return true;
	}
	case DW_FORM_indirect:
		return !indirect && skip_form(c, u, dw_uleb(c), true) && !c->bad;
	default:
		return false;
	}
}

/* A DW_AT_sibling's value (unit-relative), read again from its bytes at @at. */
static inline bool read_ref(const u8 *at, const struct dwcur *c, u64 form, u64 *ref)
{
	struct dwcur r = { .p = at, .end = c->p, .big = c->big };

	switch (form) {
	case DW_FORM_ref1:
	case DW_FORM_ref2:
	case DW_FORM_ref4:
	case DW_FORM_ref8:
		*ref = dw_uint(&r, c->p - at);
		break;
	case DW_FORM_ref_udata:
		*ref = dw_uleb(&r);
		break;
	default:
		return false; /* a sibling in another unit or file: libdw's walk judges it */
	}
	return !r.bad && *ref;
}

/*
 * Where the DW_AT_sibling @sib (unit-relative) of the DIE at @off points,
 * into *@p; false when outside the unit, backwards, or back into the
 * children just scanned (each level would scan the next twice): libdw's
 * walk judges those.  A DW_FORM_ref8 says any 64-bit value: it is bounded
 * by the unit before it is added, and start < end (dwscan_funcs()), so
 * start + sib < end cannot wrap.
 */
static bool sibling_at(const struct dwscan_unit *u, u64 off, u64 sib, const u8 *here, const u8 **p)
{
	u64 target;

	if (sib >= u->end - u->start)
		return false;
	target = u->start + sib;
	if (target <= off || u->info + target < here)
		return false;
	*p = u->info + target;
	return true;
}

bool dwscan_func_scope(u32 tag)
{
	return tag == DW_TAG_namespace || tag == DW_TAG_module;
}

bool dwscan_tree_scope(u32 tag)
{
	switch (tag) {
	case DW_TAG_inlined_subroutine:
	case DW_TAG_lexical_block:
	case DW_TAG_try_block:
	case DW_TAG_catch_block:
	case DW_TAG_namespace:
	case DW_TAG_module:
	case DW_TAG_class_type:
	case DW_TAG_structure_type:
	case DW_TAG_union_type:
		return true;
	default:
		return false;
	}
}

/* The scopes a scan in mode @m enters. */
static bool enters(enum mode m, u32 tag)
{
	return m == FUNCS ? dwscan_func_scope(tag) : m == TREE && dwscan_tree_scope(tag);
}

/*
 * Entry @idx, of @width bytes, of the table at @base of a section (@sec,
 * @size bytes: .debug_addr, .debug_str_offsets, .debug_rnglists' offsets)
 * into *@v; false past the section.
 */
static bool table_entry(const struct dwscan *s, const u8 *sec, size_t size, u64 base, u64 idx,
			u32 width, u64 *v)
{
	struct dwcur r = { .big = s->u.big_endian };

	if (!sec || base > size || idx >= (size - base) / width)
		return false;
	r.p = sec + base + idx * width;
	r.end = sec + size;
	*v = dw_uint(&r, width);
	return !r.bad;
}

/*
 * Entry @idx of the unit's addresses in .debug_addr into *@addr; false
 * where libdw would fail, or would read it otherwise (no DW_AT_addr_base:
 * libdw takes 0).
 */
static bool addr_index(const struct dwscan *s, u64 idx, u64 *addr)
{
	const struct dwscan_unit *u = &s->u;

	return s->addr_base_known &&
	       table_entry(s, u->addrs, u->addrs_size, s->addr_base, idx, u->addr_size, addr);
}

/* The address an attribute of @form holds at @r: in place, or by its index. */
static bool form_addr(const struct dwscan *s, u64 form, struct dwcur *r, u64 *addr)
{
	u64 idx;

	switch (form) {
	case DW_FORM_addr:
		*addr = dw_uint(r, s->u.addr_size);
		return !r->bad;
	case DW_FORM_addrx:
		idx = dw_uleb(r);
		break;
	case DW_FORM_addrx1:
	case DW_FORM_addrx2:
	case DW_FORM_addrx3:
	case DW_FORM_addrx4:
		idx = dw_uint(r, form_size(&s->u, form));
		break;
	default:
		return false;
	}
	return !r->bad && addr_index(s, idx, addr);
}

/*
 * The range list that DW_FORM_rnglistx @idx names, as an offset into
 * .debug_rnglists (after DW_AT_rnglists_base's table of offsets, as
 * libdw bounds it); false without one.
 */
static bool list_index(const struct dwscan *s, u64 idx, u64 *off)
{
	const struct dwscan_unit *u = &s->u;

	if (!s->rnglists_base_known || !table_entry(s, u->rnglists, u->rnglists_size,
						    s->rnglists_base, idx, u->offset_size, off))
		return false;
	*off += s->rnglists_base;
	return true;
}

/*
 * One pc attribute of an instance or function, its bytes at @at up to
 * @c's position, into @pa.  Only the forms GCC and clang give them outside
 * split DWARF are read here; any other sends the DIE to libdw.
 */
static void read_pc(struct pc_attrs *pa, const struct dwscan *s, const struct spec *sp,
		    const u8 *at, const struct dwcur *c)
{
	const struct dwscan_unit *u = &s->u;
	struct dwcur r = { .p = at, .end = c->p, .big = c->big };

	switch (sp->name) {
	case DW_AT_low_pc:
		pa->have_low = form_addr(s, sp->form, &r, &pa->low);
		pa->other |= !pa->have_low;
		break;
	case DW_AT_high_pc:
		/* as dwarf_highpc(): an address if the form gives one, else a size */
		pa->have_high = true;
		pa->high_is_size = false;
		switch (sp->form) {
		case DW_FORM_data1:
		case DW_FORM_data2:
		case DW_FORM_data4:
		case DW_FORM_data8:
			pa->high_is_size = true;
			pa->high = dw_uint(&r, form_size(u, sp->form));
			break;
		case DW_FORM_udata:
			pa->high_is_size = true;
			pa->high = dw_uleb(&r);
			break;
		default:
			pa->other |= !form_addr(s, sp->form, &r, &pa->high);
			break;
		}
		break;
	case DW_AT_ranges:
		pa->ranges = true;
		if (sp->form == DW_FORM_sec_offset)
			pa->list = dw_uint(&r, u->offset_size);
		else if (u->version < 4 && (sp->form == DW_FORM_data4 || sp->form == DW_FORM_data8))
			pa->list = dw_uint(&r, form_size(u, sp->form));
		else if (sp->form != DW_FORM_rnglistx || !list_index(s, dw_uleb(&r), &pa->list))
			pa->other = true;
		break;
	default:
		break;
	}
	pa->other |= r.bad;
}

static bool add_range(struct scan *w, u64 start, u64 end)
{
	struct dwscan_tree *t = w->t;

	if (t->nr_ranges >= DWSCAN_MAX_FUNCS)
		return false;
	VEC_GROW(t->ranges, t->nr_ranges, t->alloc_ranges);
	t->ranges[t->nr_ranges++] = (struct dwscan_range){ start, end };
	return true;
}

/*
 * A DWARF 5 range list entry at @c into *@start and *@end; 1 for a range,
 * 0 at the list's end, 2 for a new base address, -1 for a bad entry or
 * one libdw would fail.
 */
static int rnglists_entry(const struct dwscan *s, struct dwcur *c, u64 *base, u64 *start, u64 *end)
{
	u8 addr_size = s->u.addr_size;

	switch (dw_u8(c)) {
	case DW_RLE_end_of_list:
		return c->bad ? -1 : 0;
	case DW_RLE_base_addressx:
		return addr_index(s, dw_uleb(c), base) && !c->bad ? 2 : -1;
	case DW_RLE_startx_endx:
		if (!addr_index(s, dw_uleb(c), start) || !addr_index(s, dw_uleb(c), end))
			return -1;
		break;
	case DW_RLE_startx_length:
		if (!addr_index(s, dw_uleb(c), start))
			return -1;
		*end = *start + dw_uleb(c);
		break;
	case DW_RLE_offset_pair:
		*start = *base + dw_uleb(c);
		*end = *base + dw_uleb(c);
		break;
	case DW_RLE_base_address:
		*base = dw_uint(c, addr_size);
		return c->bad ? -1 : 2;
	case DW_RLE_start_end:
		*start = dw_uint(c, addr_size);
		*end = dw_uint(c, addr_size);
		break;
	case DW_RLE_start_length:
		*start = dw_uint(c, addr_size);
		*end = *start + dw_uleb(c);
		break;
	default:
		return -1;
	}
	return c->bad ? -1 : 1;
}

/* The same for a .debug_ranges entry (before DWARF 5): pairs of addresses. */
static int ranges_entry(struct dwcur *c, u8 addr_size, u64 *base, u64 *start, u64 *end)
{
	u64 escape = addr_size == 8 ? UINT64_MAX : UINT32_MAX;
	u64 a = dw_uint(c, addr_size), b = dw_uint(c, addr_size);

	if (c->bad)
		return -1;
	if (a == escape) {
		if (b == escape)
			return -1; /* libdw: no base selection, an error */
		*base = b;
		return 2;
	}
	if (!a && !b)
		return 0;
	*start = *base + a;
	*end = *base + b;
	return 1;
}

/* The range list at @off into @in's ranges; false when libdw should read it. */
static bool read_list(struct scan *w, struct dwscan_inst *in, u64 off)
{
	const struct dwscan_unit *u = w->u;
	bool v5 = u->version >= 5;
	const u8 *sec = v5 ? u->rnglists : u->ranges;
	size_t size = v5 ? u->rnglists_size : u->ranges_size;
	struct dwcur c = { .big = u->big_endian };
	u64 base = w->s->base, start, end;
	int ret;

	if (!sec || !w->s->base_known || off >= size)
		return false;
	c.p = sec + off;
	c.end = sec + size;
	in->first = w->t->nr_ranges;
	while ((ret = v5 ? rnglists_entry(w->s, &c, &base, &start, &end)
			 : ranges_entry(&c, u->addr_size, &base, &start, &end)) > 0)
		if (ret == 1 && !add_range(w, start, end))
			return false;
	in->nr = w->t->nr_ranges - in->first;
	if (ret < 0) {
		w->t->nr_ranges = in->first; /* libdw reads it again, and judges it */
		in->nr = 0;
	}
	return !ret;
}

/* An instance's or function's code as libdw's dwarf_ranges() would give it. */
static bool set_pc(struct scan *w, struct dwscan_inst *in, const struct pc_attrs *pa)
{
	in->pc = DWSCAN_PC_RANGES;
	in->first = w->t->nr_ranges;
	if (pa->other) {
		in->pc = DWSCAN_PC_LIBDW;
	} else if (pa->have_low && pa->have_high) {
		if (!add_range(w, pa->low, pa->high_is_size ? pa->low + pa->high : pa->high))
			return false;
		in->nr = 1;
	} else if (!pa->ranges) {
		in->pc = DWSCAN_PC_NONE;
	} else if (!read_list(w, in, pa->list)) {
		in->pc = DWSCAN_PC_LIBDW;
	}
	return w->t->nr_ranges < DWSCAN_MAX_FUNCS;
}

/* Room for one more finding; false past the bound no real unit reaches. */
static bool add_found(struct scan *w)
{
	if (w->t->nr_insts >= DWSCAN_MAX_FUNCS)
		return false;
	VEC_GROW(w->t->insts, w->t->nr_insts, w->t->alloc_insts);
	return true;
}

/* Most DIEs: every attribute of a fixed size, one step over them, the sibling read in place. */
static inline bool skip_fixed(struct dwcur *c, const struct abbrev *a, u64 *sib)
{
	const u8 *at;

	if (!dw_need(c, a->size))
		return false;
	at = c->p + a->sib_at;
	c->p += a->size;
	if (!a->sibling)
		return true;
	return read_ref(at, &(struct dwcur){ .p = at + a->sib_size, .big = c->big }, a->sib_form,
			sib);
}

/* The rest: attribute by attribute, the pc attributes into @pa when given. */
static bool __attribute__((noinline))
read_each(struct scan *w, struct dwcur *c, const struct abbrev *a, u64 *sib, struct pc_attrs *pa)
{
	const struct dwscan_unit *u = w->u;
	u32 i;

	for (i = 0; i < a->nr; i++) {
		const struct spec *sp = &w->s->specs[a->first + i];
		const u8 *at = c->p;

		if (sp->size != VAR) {
			if (!dw_need(c, sp->size))
				return false;
			c->p += sp->size;
		} else if (!skip_form(c, u, sp->form, false)) {
			return false;
		}
		if (sp->name == DW_AT_sibling && !read_ref(at, c, sp->form, sib))
			return false;
		if (pa)
			read_pc(pa, w->s, sp, at, c);
	}
	return true;
}

/*
 * The DIE at @c's position (after its code), abbreviation @a: its
 * attributes skipped, its DW_AT_sibling into *@sib, its pc attributes
 * into @pa when @pa is given.  Inline: the scan's step per
 * DIE, a call of its own only for DIEs of variable size.
 */
static inline bool read_attrs(struct scan *w, struct dwcur *c, const struct abbrev *a, u64 *sib,
			      struct pc_attrs *pa)
{
	*sib = 0;
	if (a->size != VAR && !pa)
		return skip_fixed(c, a, sib);
	return read_each(w, c, a, sib, pa);
}

/* Whether the scan in mode @m adds a DIE of @a, and so reads its pc attributes. */
static inline bool wants_pc(enum mode m, const struct abbrev *a)
{
	bool func = a->tag == DW_TAG_subprogram && a->has_pc;

	return m == FUNCS ? func : m == TREE && (func || a->tag == DW_TAG_inlined_subroutine);
}

/*
 * What the DIE at @off (abbreviation @a, pc attributes @pa) adds to the
 * findings of a scan in mode @m: a unit's function, a function's inlined
 * instance or nested function.  *@inner: the instance its children sit in.
 * False past the bounds.
 */
static bool found(struct scan *w, enum mode m, const struct abbrev *a, u64 off, u32 parent,
		  u32 depth, const struct pc_attrs *pa, u32 *inner)
{
	bool inlined = a->tag == DW_TAG_inlined_subroutine;
	struct dwscan_inst *in;

	*inner = parent;
	if (!wants_pc(m, a))
		return true;
	if (!add_found(w))
		return false;
	in = &w->t->insts[w->t->nr_insts];
	*in = (struct dwscan_inst){
		.off = off, .parent = parent, .depth = depth, .nested = m == TREE && !inlined
	};
	if (!set_pc(w, in, pa))
		return false;
	if (inlined)
		*inner = w->t->nr_insts;
	w->t->nr_insts++;
	return true;
}

/*
 * The children of the DIE whose children start at @c, up to their null
 * entry, looked at as @m says; in TREE mode @parent is the instance they
 * sit in and @depth their nesting below the function.
 */
static bool scan_children(struct scan *w, struct dwcur *c, enum mode m, u32 parent, u32 depth)
{
	const struct dwscan *s = w->s;
	const struct dwscan_unit *u = w->u;

	if (depth > DWSCAN_MAX_DEPTH)
		return false;
	for (;;) {
		u64 off = c->p - u->info, code = dw_uleb(c), sib;
		struct pc_attrs pa; /* what found() adds only: not cleared for every DIE */
		bool pc, in;
		const struct abbrev *a;
		u32 inner;

		if (off >= w->end)
			return false;

		if (c->bad)
			return false;
		if (!code)
			return true;
		if (code >= s->nr_abbrevs || !s->abbrevs[code].defined)
			return false;
		a = &s->abbrevs[code];
		pc = wants_pc(m, a);
		if (pc)
			pa = (struct pc_attrs){ 0 };
		if (!read_attrs(w, c, a, &sib, pc ? &pa : NULL) ||
		    !found(w, m, a, off, parent, depth, &pa, &inner))
			return false;
		/* as libdw: into a scope by its children, past any DIE by its sibling */
		in = a->children && enters(m, a->tag);
		if (in && !scan_children(w, c, m, inner, depth + 1))
			return false;
		if (sib) {
			if (!sibling_at(u, off, sib, c->p, &c->p))
				return false;
		} else if (a->children && !in && !scan_children(w, c, SKIP, parent, depth + 1)) {
			return false;
		}
	}
}

bool dwscan_unit_at(struct dwscan_unit *u, const u8 *info, size_t info_size, const u8 *abbrev,
		    size_t abbrev_size, bool big_endian, u64 off)
{
	struct dwcur c = { .big = big_endian };
	u8 offset_size = 4, addr_size;
	u64 len, abbrev_off;
	u16 version;

	if (!info || off >= info_size)
		return false;
	c.p = info + off;
	c.end = info + info_size;
	len = dw_uint(&c, 4);
	if (len == 0xffffffff) {
		len = dw_uint(&c, 8);
		offset_size = 8;
	} else if (len >= 0xfffffff0) {
		return false; /* reserved lengths */
	}
	if (c.bad || len > (u64)(c.end - c.p))
		return false;
	c.end = c.p + len;
	version = dw_uint(&c, 2);
	if (c.bad || version < 2 || version > 5)
		return false;
	if (version >= 5) {
		u8 type = dw_u8(&c);

		addr_size = dw_u8(&c);
		abbrev_off = dw_uint(&c, offset_size);
		switch (type) {
		case DW_UT_compile:
		case DW_UT_partial:
			break;
		case DW_UT_skeleton:
		case DW_UT_split_compile:
			dw_uint(&c, 8); /* dwo_id */
			break;
		case DW_UT_type:
		case DW_UT_split_type:
			dw_uint(&c, 8); /* type_signature */
			dw_uint(&c, offset_size); /* type_offset */
			break;
		default:
			return false;
		}
	} else {
		abbrev_off = dw_uint(&c, offset_size);
		addr_size = dw_u8(&c);
	}
	/* libdw reads any other address size as 8 and says it as it is: refused */
	if (c.bad || c.p >= c.end || (addr_size != 4 && addr_size != 8))
		return false;
	*u = (struct dwscan_unit){
		.info = info,
		.info_size = info_size,
		.abbrev = abbrev,
		.abbrev_size = abbrev_size,
		.start = off,
		.die = c.p - info,
		.end = c.end - info,
		.abbrev_off = abbrev_off,
		.version = version,
		.addr_size = addr_size,
		.offset_size = offset_size,
		.big_endian = big_endian,
	};
	return true;
}

/* The abbreviation of the DIE at @off (inside the unit), @c past its code; NULL if none. */
static const struct abbrev *die_at(const struct dwscan *s, u64 off, struct dwcur *c)
{
	const struct dwscan_unit *u = &s->u;
	u64 code;

	*c = (struct dwcur){ .p = u->info + off, .end = u->info + u->end, .big = u->big_endian };
	code = dw_uleb(c);
	if (c->bad || !code || code >= s->nr_abbrevs || !s->abbrevs[code].defined)
		return NULL;
	return &s->abbrevs[code];
}

/* The DIE's next attribute, of @sp, stepped over: its bytes into @r; false if it cannot be. */
static bool next_attr(const struct dwscan *s, const struct spec *sp, struct dwcur *c,
		      struct dwcur *r)
{
	*r = (struct dwcur){ .p = c->p, .big = c->big };
	if (!skip_form(c, &s->u, sp->form, false))
		return false;
	r->end = c->p;
	return true;
}

/*
 * A base the unit's DIE gives (@sp, its bytes at @r) into *@base, known
 * when of the form compilers write; only the first of its name counts, as
 * in libdw (*@seen).
 */
static void read_base(const struct dwscan_unit *u, const struct spec *sp, struct dwcur *r,
		      u64 *base, bool *known, bool *seen)
{
	if (*seen)
		return;
	*seen = true;
	*base = dw_uint(r, u->offset_size);
	*known = sp->form == DW_FORM_sec_offset && !r->bad;
}

/*
 * What the unit's DIE says for the scans: the base address of its range
 * lists as libdw takes it (DW_AT_low_pc, else DW_AT_entry_pc, which libdw
 * reads, else 0), where its addresses and its range lists' offsets are in
 * .debug_addr and .debug_rnglists.
 */
static void read_unit_die(struct dwscan *s)
{
	const struct dwscan_unit *u = &s->u;
	const struct abbrev *a;
	const struct spec *low = NULL;
	const u8 *low_at = NULL;
	bool entry = false, seen[3] = { false }, gnu_addr_base = false, gnu_ranges_base = false;
	struct dwcur c, r;
	u32 i;

	a = die_at(s, u->die, &c);
	if (!a)
		return;
	for (i = 0; i < a->nr; i++) {
		const struct spec *sp = &s->specs[a->first + i];

		if (!next_attr(s, sp, &c, &r))
			return;
		switch (sp->name) {
		case DW_AT_low_pc:
			low = sp;
			low_at = r.p;
			break;
		case DW_AT_entry_pc:
			entry = true;
			break;
		case DW_AT_addr_base:
			read_base(u, sp, &r, &s->addr_base, &s->addr_base_known, &seen[0]);
			break;
		case DW_AT_rnglists_base:
			read_base(u, sp, &r, &s->rnglists_base, &s->rnglists_base_known, &seen[1]);
			break;
		case DW_AT_str_offsets_base:
			read_base(u, sp, &r, &s->str_offsets_base, &s->str_offsets_base_known,
				  &seen[2]);
			break;
		case DW_AT_GNU_addr_base:
			gnu_addr_base = true;
			break;
		case DW_AT_GNU_ranges_base:
			gnu_ranges_base = true;
			break;
		default:
			break;
		}
	}
	/* libdw takes GNU's attribute first, and guesses where a list base of 0 is */
	if (gnu_addr_base)
		s->addr_base_known = false;
	if (!s->rnglists_base)
		s->rnglists_base_known = false;
	/* the base last: an index of DW_AT_low_pc needs DW_AT_addr_base, wherever it is */
	if (low) {
		struct dwcur r = { .p = low_at, .end = c.p, .big = c.big };

		s->base_known = form_addr(s, low->form, &r, &s->base);
	} else {
		s->base_known = !entry; /* 0 */
	}
	if (s->base == UINT64_MAX)
		s->base_known = false; /* libdw's mark of a base not read yet: its lists fail */
	if (gnu_ranges_base)
		s->base_known = false; /* GNU split DWARF's lists: relative to it, in libdw */
}

/*
 * Entry @idx of the unit's string offsets (.debug_str_offsets, after
 * DW_AT_str_offsets_base) into *@off; false without that base (libdw then
 * guesses one) or past the section.
 */
static bool str_index(const struct dwscan *s, u64 idx, u64 *off)
{
	const struct dwscan_unit *u = &s->u;

	return s->str_offsets_base_known &&
	       table_entry(s, u->str_offsets, u->str_offsets_size, s->str_offsets_base, idx,
			   u->offset_size, off);
}

/* The string an attribute of @form holds at @r; false for a form not read here. */
static bool form_str(const struct dwscan *s, u64 form, struct dwcur *r, const char **str)
{
	const struct dwscan_unit *u = &s->u;
	const u8 *sec = form == DW_FORM_line_strp ? u->line_str : u->str;
	size_t size = form == DW_FORM_line_strp ? u->line_str_size : u->str_size;
	u64 off;

	switch (form) {
	case DW_FORM_string:
		*str = (const char *)r->p;
		return true; /* skip_form() found its NUL */
	case DW_FORM_strp:
	case DW_FORM_line_strp:
		off = dw_uint(r, u->offset_size);
		break;
	case DW_FORM_strx:
		if (!str_index(s, dw_uleb(r), &off))
			return false;
		break;
	case DW_FORM_strx1:
	case DW_FORM_strx2:
	case DW_FORM_strx3:
	case DW_FORM_strx4:
		if (!str_index(s, dw_uint(r, form_size(u, form)), &off))
			return false;
		break;
	default:
		return false;
	}
	*str = dw_sec_str(sec, size, off);
	return !r->bad && *str;
}

/* DW_AT_stmt_list's offset, of the forms libdw reads it in; false for another. */
static bool form_lines(const struct dwscan_unit *u, u64 form, struct dwcur *r, u64 *off)
{
	if (form == DW_FORM_sec_offset ||
	    (u->version < 4 && (form == DW_FORM_data4 || form == DW_FORM_data8)))
		*off = dw_uint(r, form_size(u, form));
	else
		return false;
	return !r->bad;
}

bool dwscan_unit_die(const struct dwscan *s, struct dwscan_cu *cu)
{
	const struct dwscan_unit *u = &s->u;
	struct pc_attrs pa = { 0 };
	struct dwscan_inst in = { 0 };
	struct scan w = { .s = s, .u = u, .t = &cu->ranges };
	bool comp_dir = false, ok;
	const struct abbrev *a;
	struct dwcur c, r;
	u32 i;

	memset(cu, 0, sizeof(*cu));
	a = die_at(s, u->die, &c);
	if (!a)
		return false;
	cu->tag = a->tag;
	for (i = 0; i < a->nr; i++) {
		const struct spec *sp = &s->specs[a->first + i];

		if (!next_attr(s, sp, &c, &r))
			return false;
		read_pc(&pa, s, sp, r.p, &c);
		/* libdw takes the first of a repeated attribute, this reading the last */
		if (sp->name == DW_AT_stmt_list) {
			if (cu->has_lines || !form_lines(u, sp->form, &r, &cu->lines))
				return false;
			cu->has_lines = true;
		} else if (sp->name == DW_AT_comp_dir) {
			if (comp_dir || !form_str(s, sp->form, &r, &cu->comp_dir))
				return false;
			comp_dir = true;
		}
	}
	ok = set_pc(&w, &in, &pa);
	cu->pc = in.pc;
	if (!ok)
		dwscan_cu_free(cu);
	return ok;
}

void dwscan_cu_free(struct dwscan_cu *cu)
{
	dwscan_tree_free(&cu->ranges);
}

/* What a DIE says of its name and call site, and where the names may go on. */
struct name_attrs {
	const char *name[3]; /* DW_AT_linkage_name, DW_AT_MIPS_linkage_name, DW_AT_name */
	u64 origin; /* DW_AT_abstract_origin, else DW_AT_specification: unit-relative; 0 none */
	bool spec; /* origin is a DW_AT_specification */
	u64 call[2]; /* DW_AT_call_file, DW_AT_call_line; NO_CALL: none */
	bool have_call[2]; /* the first of a repeated one counts: NO_CALL may be its value */
};

#define NO_CALL UINT64_MAX

/* Which of name_attrs.name an attribute is, or -1. */
static int name_slot(u64 name)
{
	return name == DW_AT_linkage_name	 ? 0
	       : name == DW_AT_MIPS_linkage_name ? 1
	       : name == DW_AT_name		 ? 2
						 : -1;
}

/*
 * One attribute of those into @na, its bytes at @r; false for a form read
 * here only by libdw.  The first of repeated ones counts, as in libdw.
 */
static bool name_attr(const struct dwscan *s, const struct spec *sp, struct dwcur *r,
		      struct name_attrs *na)
{
	const struct dwscan_unit *u = &s->u;
	int slot = name_slot(sp->name);
	u64 v;
	int k;

	if (slot >= 0)
		return na->name[slot] || form_str(s, sp->form, r, &na->name[slot]);
	switch (sp->name) {
	case DW_AT_abstract_origin:
	case DW_AT_specification:
		if (na->origin && (!na->spec || sp->name == DW_AT_specification))
			return true;
		if (!read_ref(r->p, &(struct dwcur){ .p = r->end, .big = r->big }, sp->form, &v))
			return false;
		na->origin = v;
		na->spec = sp->name == DW_AT_specification;
		return true;
	case DW_AT_call_file:
	case DW_AT_call_line:
		if (sp->form == DW_FORM_implicit_const)
			v = sp->value;
		else if (sp->form == DW_FORM_udata)
			v = dw_uleb(r);
		else if (sp->form >= DW_FORM_data2 && sp->form <= DW_FORM_data8)
			v = dw_uint(r, form_size(u, sp->form));
		else if (sp->form == DW_FORM_data1)
			v = dw_u8(r);
		else
			return false;
		k = sp->name == DW_AT_call_line;
		if (!na->have_call[k]) {
			na->call[k] = v;
			na->have_call[k] = true;
		}
		return !r->bad;
	default:
		return true;
	}
}

/* The name attributes of the DIE at @off (in .debug_info) into @na; false where libdw reads. */
static bool read_names(const struct dwscan *s, u64 off, struct name_attrs *na)
{
	const struct abbrev *a;
	struct dwcur c, r;
	u32 i;

	*na = (struct name_attrs){ .call = { NO_CALL, NO_CALL } };
	if (off <= s->u.die || off >= s->u.end)
		return false; /* the unit's DIE: libdw looks further for a split unit's */
	a = die_at(s, off, &c);
	if (!a)
		return false;
	for (i = 0; i < a->nr; i++)
		if (!next_attr(s, &s->specs[a->first + i], &c, &r) ||
		    !name_attr(s, &s->specs[a->first + i], &r, na))
			return false;
	return true;
}

bool dwscan_name(const struct dwscan *s, u64 off, struct dwscan_name *out)
{
	const char *names[ARRAY_SIZE(((struct name_attrs *)0)->name)] = { NULL };
	struct name_attrs na;
	u32 chain, k;

	memset(out, 0, sizeof(*out));
	if (!read_names(s, off, &na))
		return false;
	out->call_file = na.call[0];
	out->call_line = na.call[1];
	/* as dwarf_attr_integrate() for each name in turn: along the origins, 16 at most */
	for (chain = 0;; chain++) {
		for (k = 0; k < ARRAY_SIZE(names); k++)
			if (!names[k])
				names[k] = na.name[k];
		if (names[0] || !na.origin)
			break;
		if (chain == DWSCAN_MAX_CHAIN || !read_names(s, s->u.start + na.origin, &na))
			return false;
	}
	out->name = names[0] ? names[0] : names[1] ? names[1] : names[2];
	return true;
}

struct dwscan *dwscan_new(const struct dwscan_unit *u)
{
	struct dwscan *s;

	/* header, DIE, end in that order inside the section: every bound below rests on it */
	if (!u->info || u->start >= u->die || u->die >= u->end || u->end > u->info_size)
		return NULL;
	s = xcalloc(1, sizeof(*s));
	s->u = *u;
	if (!read_abbrevs(s)) {
		dwscan_free(s);
		return NULL;
	}
	read_unit_die(s);
	return s;
}

void dwscan_free(struct dwscan *s)
{
	if (!s)
		return;
	free(s->abbrevs);
	free(s->specs);
	free(s);
}

/*
 * The DIE at @off (inside the unit, past its header) skipped, then its
 * children scanned as @m says.
 */
static bool scan_die(struct scan *w, u64 off, enum mode m)
{
	const struct abbrev *a;
	struct dwcur c;
	u64 sib;

	if (off < w->u->die || off >= w->u->end)
		return false;
	a = die_at(w->s, off, &c);
	if (!a || !read_attrs(w, &c, a, &sib, NULL))
		return false;
	return !a->children || scan_children(w, &c, m, DWSCAN_NONE, 1);
}

/* A scan in mode @m from the DIE at @off, up to @end, into @t. */
static bool scan_into(const struct dwscan *s, u64 off, u64 end, enum mode m, struct dwscan_tree *t)
{
	struct scan w = { .s = s, .u = &s->u, .t = t, .end = end };

	memset(t, 0, sizeof(*t));
	if (scan_die(&w, off, m))
		return true;
	dwscan_tree_free(t);
	return false;
}

bool dwscan_funcs(const struct dwscan *s, struct dwscan_tree *t)
{
	return scan_into(s, s->u.die, s->u.end, FUNCS, t);
}

bool dwscan_tree(const struct dwscan *s, u64 func, struct dwscan_tree *t)
{
	return scan_into(s, func, s->u.end, TREE, t);
}

bool dwscan_tree_within(const struct dwscan *s, u64 func, u64 end, struct dwscan_tree *t)
{
	return scan_into(s, func, MIN(end, s->u.end), TREE, t);
}

void dwscan_tree_free(struct dwscan_tree *t)
{
	free(t->insts);
	free(t->ranges);
	memset(t, 0, sizeof(*t));
}
