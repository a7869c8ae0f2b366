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

/* An attribute's size when its form fixes it; VAR when the DIE's bytes tell. */
#define VAR 0xff

struct spec {
	u64 name;
	u64 form;
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
};

struct scan {
	const struct dwscan_unit *u;
	struct abbrev *abbrevs; /* by code */
	u32 nr_abbrevs;
	struct spec *specs;
	u32 nr_specs;
	u32 alloc_specs;
	u64 *offs;
	u32 nr_offs;
	u32 alloc_offs;
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

/* The unit's abbreviations, indexed by code; false when unreadable. */
static bool read_abbrevs(struct scan *s)
{
	const struct dwscan_unit *u = s->u;
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
			name = dw_uleb(&c);
			form = dw_uleb(&c);
			if (c.bad)
				return false;
			if (!name && !form)
				break;
			if (form == DW_FORM_implicit_const)
				dw_sleb(&c); /* its value is here, not in the DIE */
			a->has_pc = a->has_pc || name == DW_AT_low_pc || name == DW_AT_ranges;
			a->sibling = a->sibling || name == DW_AT_sibling;
			VEC_GROW(s->specs, s->nr_specs, s->alloc_specs);
			s->specs[s->nr_specs] = (struct spec){ .name = name,
							       .form = form,
							       .size = form_size(u, form) };
			if (a->size != VAR)
				a->size = s->specs[s->nr_specs].size == VAR
						  ? VAR
						  : a->size + s->specs[s->nr_specs].size;
			s->nr_specs++;
			a->nr++;
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
static bool read_ref(const u8 *at, const struct dwcur *c, u64 form, u64 *ref)
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

/* The scopes srcline.c's walk descends into for functions. */
static bool holds_funcs(u32 tag)
{
	return tag == DW_TAG_namespace || tag == DW_TAG_module;
}

/*
 * The children of the DIE whose children start at @c, up to their null
 * entry: @collect for the level whose functions count (the unit's, a
 * namespace's), else only skipped.
 */
static bool scan_children(struct scan *s, struct dwcur *c, bool collect, u32 depth)
{
	const struct dwscan_unit *u = s->u;

	if (depth > DWSCAN_MAX_DEPTH)
		return false;
	for (;;) {
		u64 off = c->p - u->info, code = dw_uleb(c), sib = 0;
		const struct abbrev *a;
		u32 i;

		if (c->bad)
			return false;
		if (!code)
			return true;
		if (code >= s->nr_abbrevs || !s->abbrevs[code].defined)
			return false;
		a = &s->abbrevs[code];
		if (a->size != VAR && !a->sibling) {
			/* most DIEs: one step over all of their attributes */
			if (!dw_need(c, a->size))
				return false;
			c->p += a->size;
		}
		for (i = 0; (a->size == VAR || a->sibling) && i < a->nr; i++) {
			const struct spec *sp = &s->specs[a->first + i];
			const u8 *at = c->p;

			if (sp->size != VAR) {
				if (!dw_need(c, sp->size))
					return false;
				c->p += sp->size;
			} else if (!skip_form(c, u, sp->form, false)) {
				return false;
			}
			if (sp->name == DW_AT_sibling && !read_ref(at, c, sp->form, &sib))
				return false;
		}
		if (collect && a->tag == DW_TAG_subprogram && a->has_pc) {
			if (s->nr_offs >= DWSCAN_MAX_FUNCS)
				return false;
			VEC_GROW(s->offs, s->nr_offs, s->alloc_offs);
			s->offs[s->nr_offs++] = off;
		}
		/* as libdw: into a namespace by its children, past any DIE by its sibling */
		if (a->children && collect && holds_funcs(a->tag) &&
		    !scan_children(s, c, true, depth + 1))
			return false;
		if (sib) {
			if (!sibling_at(u, off, sib, c->p, &c->p))
				return false;
		} else if (a->children && !(collect && holds_funcs(a->tag)) &&
			   !scan_children(s, c, false, depth + 1)) {
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
	if (c.bad || c.p >= c.end)
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

bool dwscan_funcs(const struct dwscan_unit *u, u64 **offs, u32 *nr)
{
	struct scan s = { .u = u };
	struct dwcur c = { .big = u->big_endian };
	bool ok = false;
	u64 code;

	*offs = NULL;
	*nr = 0;
	/* header, DIE, end in that order inside the section: every bound below rests on it */
	if (!u->info || u->start >= u->die || u->die >= u->end || u->end > u->info_size ||
	    !read_abbrevs(&s))
		goto out;
	c.p = u->info + u->die;
	c.end = u->info + u->end;
	/* the unit's own DIE: skipped, then its children */
	code = dw_uleb(&c);
	if (c.bad || !code || code >= s.nr_abbrevs || !s.abbrevs[code].defined)
		goto out;
	for (u32 i = 0; i < s.abbrevs[code].nr; i++)
		if (!skip_form(&c, u, s.specs[s.abbrevs[code].first + i].form, false))
			goto out;
	ok = !s.abbrevs[code].children || scan_children(&s, &c, true, 1);
out:
	free(s.abbrevs);
	free(s.specs);
	if (ok) {
		*offs = s.offs;
		*nr = s.nr_offs;
	} else {
		free(s.offs);
	}
	return ok;
}
