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
 * as srcline.c's walk does, with their ranges.
 *
 * The same scan reads a function's inlined instances when an address first
 * hits it: on a kernel, whose functions inline deeply, walking those trees
 * through libdw was half of symbolizing a profile.  It reads the pc
 * attributes and range lists of the forms GCC and clang write outside
 * split DWARF (clang's DWARF 5 indexes into .debug_addr and the range
 * lists' offsets included), and leaves any other to libdw.
 *
 * It also reads what srcline.c asks of the unit's DIE and the names and
 * call sites of the functions and instances an address hits: libdw finds
 * a DIE's abbreviation by reading the unit's table up to it, and GCC puts
 * the unit DIE's last, so any DIE libdw reads costs it the whole table
 * (a tenth of symbolizing a kernel profile).
 *
 * Every read is bounded by the unit; anything the scan does not know
 * (a form, a sibling pointing backwards, nesting deeper than
 * DWSCAN_MAX_DEPTH) makes it fail, and srcline.c walks the unit or the
 * function through libdw instead, which gives its own verdict.
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
	/* sections set by the caller; without them libdw reads the lists and indexes */
	const u8 *rnglists; /* .debug_rnglists (DWARF 5) */
	size_t rnglists_size;
	const u8 *ranges; /* .debug_ranges (before) */
	size_t ranges_size;
	const u8 *addrs; /* .debug_addr, which DWARF 5's address indexes point into */
	size_t addrs_size;
	const u8 *str; /* .debug_str, .debug_line_str, .debug_str_offsets: names */
	size_t str_size;
	const u8 *line_str;
	size_t line_str_size;
	const u8 *str_offsets;
	size_t str_offsets_size;
	u16 version;
	u8 addr_size;
	u8 offset_size;
	bool big_endian;
};

/*
 * The unit whose header is at @off of @info (.debug_info; DWARF 2 to 5,
 * 32- or 64-bit) into @u, its abbreviations in @abbrev: the one way to
 * describe a unit to dwscan_new().  False when no such header fits
 * there, its unit has no DIE, or its addresses are not of 4 or 8 bytes.
 */
bool dwscan_unit_at(struct dwscan_unit *u, const u8 *info, size_t info_size, const u8 *abbrev,
		    size_t abbrev_size, bool big_endian, u64 off);

/*
 * The scopes a walk for a unit's functions enters: namespaces and modules.
 * A class holds only declarations of its members: their code is in a DIE
 * of the unit or a namespace that points at the declaration
 * (DW_AT_specification), so classes, often most of a unit's DIEs in C, are
 * not entered.
 */
bool dwscan_func_scope(u32 tag);

/*
 * The scopes a walk of a function's tree enters for its inlined instances:
 * those, blocks, namespaces, classes.  A nested function (GNU C) is not
 * one: it is a function of its own, walked when an address hits it.
 * srcline.c's walk through libdw and this scan enter the same.
 */
bool dwscan_tree_scope(u32 tag);

struct dwscan;

/* A unit's abbreviations, read once; NULL when they cannot be read. */
struct dwscan *dwscan_new(const struct dwscan_unit *u);
void dwscan_free(struct dwscan *s);

#define DWSCAN_NONE UINT32_MAX

/* Where an inlined instance's code is. */
enum dwscan_pc {
	DWSCAN_PC_NONE, /* nowhere: no pc attributes */
	DWSCAN_PC_RANGES, /* in its ranges, read here */
	DWSCAN_PC_LIBDW, /* forms, indexes or entries only libdw reads: ask dwarf_ranges() */
};

/* One range as dwarf_ranges() gives it: empty ones included. */
struct dwscan_range {
	u64 start;
	u64 end;
};

/* An inlined instance, or a function nested in the one scanned (GNU C). */
struct dwscan_inst {
	u64 off; /* the DIE */
	u32 parent; /* the instance it sits in (an index), or DWSCAN_NONE: the function */
	u32 depth; /* DIE nesting below the function: its children are 1 */
	u32 first; /* DWSCAN_PC_RANGES: its ranges in dwscan_tree.ranges */
	u32 nr;
	bool nested; /* a nested function: only its offset counts */
	u8 pc; /* enum dwscan_pc */
};

struct dwscan_tree {
	struct dwscan_inst *insts;
	u32 nr_insts;
	u32 alloc_insts;
	struct dwscan_range *ranges;
	u32 nr_ranges;
	u32 alloc_ranges;
};

/*
 * The unit's subprograms that can have code, into @t (zeroed first;
 * dwscan_tree_free() frees it): each an instance with no parent, its
 * ranges read as for an inlined instance.  False when the scan cannot
 * tell.
 */
bool dwscan_funcs(const struct dwscan *s, struct dwscan_tree *t);

/* What the unit's DIE says that srcline.c asks of it. */
struct dwscan_cu {
	u32 tag;
	bool has_lines; /* DW_AT_stmt_list: its line program at @lines in .debug_line */
	u64 lines;
	const char *comp_dir; /* NULL: none */
	u8 pc; /* enum dwscan_pc: where its code is, its ranges in @ranges */
	struct dwscan_tree ranges;
};

/*
 * The unit's DIE into @cu (dwscan_cu_free() frees it), so that libdw need
 * not read it: libdw looks its abbreviation up by reading the table to
 * it, and GCC puts it last.  False for a form read here only by libdw
 * (a string index, a string in another file).
 */
bool dwscan_unit_die(const struct dwscan *s, struct dwscan_cu *cu);
void dwscan_cu_free(struct dwscan_cu *cu);

/* Origins dwscan_name() follows, as libdw's dwarf_attr_integrate(). */
#define DWSCAN_MAX_CHAIN 16

/* What srcline.c shows of a function or inlined instance. */
struct dwscan_name {
	const char *name; /* linkage name, else the MIPS one, else DW_AT_name; NULL: none */
	u64 call_file; /* DW_AT_call_file, UINT64_MAX: none */
	u64 call_line;
};

/*
 * The name of the DIE at @off (in .debug_info), looked for along its
 * DW_AT_abstract_origin or DW_AT_specification as libdw looks, and its
 * call site, into @n, so that libdw need not read the unit's
 * abbreviations.  False where libdw reads what it needs: a string index,
 * a reference to another unit or file, a chain longer than libdw follows.
 */
bool dwscan_name(const struct dwscan *s, u64 off, struct dwscan_name *n);

/*
 * The inlined instances and nested functions in the function whose DIE is
 * at @func, in the order of their DIEs (an instance before those inside
 * it), into @t (zeroed first; dwscan_tree_free() frees it): the scopes
 * srcline.c's walk through libdw enters, entered alike.  Their ranges from
 * DW_AT_low_pc and DW_AT_high_pc, or from their range lists.  False when
 * the scan cannot tell.
 */
bool dwscan_tree(const struct dwscan *s, u64 func, struct dwscan_tree *t);
/*
 * The same with every DIE before @end (a section offset): a function's
 * DIEs end before the next function's, so hostile sibling links cannot take
 * one function's scan through the others'.
 */
bool dwscan_tree_within(const struct dwscan *s, u64 func, u64 end, struct dwscan_tree *t);
void dwscan_tree_free(struct dwscan_tree *t);

#endif /* CYCREAD_DWSCAN_H */
