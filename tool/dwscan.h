/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The functions of a compilation unit, found by cycread's own scan of its
 * top-level DIEs.
 *
 * Walking a unit's children through libdw (dwarf_child, dwarf_siblingof,
 * dwarf_tag) looks every DIE's abbreviation up behind a lock and decodes
 * its attributes one call at a time; on CPython's units, whose top level
 * is mostly types and declarations from headers, that was a fifth of the
 * work of symbolizing a profile.  This scan reads the unit's abbreviations
 * once, skips DIEs by their attribute forms (or their DW_AT_sibling), and
 * reports only the subprograms whose abbreviation can carry code
 * (DW_AT_low_pc or DW_AT_ranges), descending into namespaces and modules
 * as srcline.c's walk does.  srcline.c then reads those few DIEs through
 * libdw.
 *
 * Every read is bounded by the unit; anything the scan does not know
 * (a form, a sibling pointing backwards, nesting deeper than
 * DWSCAN_MAX_DEPTH) makes it fail, and srcline.c walks the unit through
 * libdw instead, which gives its own verdict.
 */
#ifndef CYCREAD_DWSCAN_H
#define CYCREAD_DWSCAN_H

#include <stddef.h>

#include "util.h"

#define DWSCAN_MAX_DEPTH 256
#define DWSCAN_MAX_FUNCS (1U << 22)

struct dwscan_unit {
	const u8 *info; /* .debug_info */
	size_t info_size;
	const u8 *abbrev; /* .debug_abbrev */
	size_t abbrev_size;
	u64 start; /* the unit's header */
	u64 die; /* the unit's DIE */
	u64 end; /* the next unit */
	u64 abbrev_off;
	u16 version;
	u8 addr_size;
	u8 offset_size;
	bool big_endian;
};

/*
 * The unit whose header is at @off of @info (.debug_info; DWARF 2 to 5,
 * 32- or 64-bit) into @u, its abbreviations in @abbrev: the one way to
 * describe a unit to dwscan_funcs().  False when no such header fits
 * there, or its unit has no DIE.
 */
bool dwscan_unit_at(struct dwscan_unit *u, const u8 *info, size_t info_size, const u8 *abbrev,
		    size_t abbrev_size, bool big_endian, u64 off);

/*
 * The offsets (in .debug_info) of @u's subprograms that can have code,
 * into *@offs (malloced, *@nr of them); false when the scan cannot tell.
 */
bool dwscan_funcs(const struct dwscan_unit *u, u64 **offs, u32 *nr);

#endif /* CYCREAD_DWSCAN_H */
