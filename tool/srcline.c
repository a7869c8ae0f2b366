// SPDX-License-Identifier: GPL-2.0
/*
 * DWARF lines and inline frames per address (see srcline.h): the units
 * found through .debug_aranges; per unit, built on first use, its line
 * table and its functions' ranges; per function, on first use, the ranges
 * of its inlined instances.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "debuginfo.h"
#include "dwaranges.h"
#include "dwline.h"
#include "dwscan.h"
#include "srcline.h"

/* A DW_AT_call_file that names no file: absent, or 0 before DWARF 5. */
#define NO_FILE UINT32_MAX

/* Bounds no real unit reaches; beyond them the DWARF is taken as hostile. */
#define MAX_DIE_DEPTH 256
#define MAX_UNIT_NODES (1U << 22)
#define MAX_UNITS (1U << 22)

/* One address range of a function or an inlined instance. */
struct fn_range {
	u64 start; /* struct ivhead */
	u64 end;
	u32 node;
	u32 depth; /* equal starts: the deeper one sorts later, so it is found first */
};

/*
 * A function or an inlined instance.  Only its ranges are read when its
 * scope is walked; its name and call site when an address first hits it.
 */
struct fn_node {
	u32 parent; /* the scope an inlined instance sits in; IV_NONE for a function */
	u32 tree; /* functions: index into unit.trees once walked, else IV_NONE */
	Dwarf_Off off; /* the DIE */
	bool named;
	u32 call_file; /* DW_AT_call_file: index into the unit's file table, or NO_FILE */
	u32 call_line;
	const char *name;
};

/* The inlined instances of one function, read the first time an address hits it. */
struct fn_tree {
	struct fn_range *ranges;
	u32 nr_ranges;
	u32 alloc_ranges;
	struct ivindex index;
	bool bad; /* corrupt: the function's frames get no inline frames */
};

struct unit {
	Dwarf_Off off; /* of the unit's DIE */
	Dwarf_Off hdr; /* of its header */
	Dwarf_Off next; /* the next unit's header */
	Dwarf_Off abbrev_off;
	Dwarf_Half version;
	u8 addr_size;
	u8 offset_size;
	Dwarf_Die die; /* libdw's, read only where libdw must (libdw_die()) */
	bool have_die;
	bool checked; /* unit_die() asked */
	bool loaded;
	bool ok; /* a compilation unit (unit_die()) */
	bool corrupt; /* its function entries or line program are (load_unit()) */
	bool aranged; /* .debug_aranges lists its code: its own ranges add nothing */
	bool all_walked; /* every function's tree read (an address outside them all) */
	struct fn_range *funcs; /* the functions' own ranges, not their inlined instances */
	u32 nr_funcs;
	u32 alloc_funcs;
	struct ivindex index;
	struct fn_node *nodes; /* the functions load_unit() found first, in DIE order */
	u32 nr_nodes;
	u32 alloc_nodes;
	u32 nr_tops; /* those functions (tree_end()) */
	struct fn_tree *trees;
	u32 nr_trees;
	u32 alloc_trees;
	const char *comp_dir; /* directory 0: relative file names are relative to it */
	struct dwline lines; /* the line table and its files */
	struct dwscan *scan; /* its abbreviations for dwscan.c; NULL: libdw walks it */
	bool scanned_die; /* cu holds what the unit's DIE says; else libdw reads it */
	struct dwscan_cu cu;
};

struct unit_range {
	u64 start; /* struct ivhead */
	u64 end;
	u32 unit;
};

/*
 * An address finds its unit through .debug_aranges; only where those say
 * nothing are the units' own DIEs read for their ranges (once, all of them).
 */
struct dso_dwarf {
	Dwarf *dw;
	struct unit_range *aranges; /* .debug_aranges by start; none when unreadable */
	u32 nr_aranges;
	struct unit *units; /* by offset */
	u32 nr_units;
	u32 alloc_units;
	bool have_ranges;
	struct unit_range *ranges;
	u32 nr_ranges;
	u32 alloc_ranges;
	struct ivindex index;
	/*
	 * A line table's file name (pointer) -> the same joined to comp_dir,
	 * a string of its own: a frame's names are held while its callers'
	 * are made, so none may move.
	 */
	struct u64map abs_files;
	u64 bias; /* the dso's addresses minus the DWARF's (a .ko laid out by libdwfl) */
	bool borrowed; /* dw belongs to libdwfl (dso_use_dwarf) */
	bool relocated; /* libdwfl relocated it (a .ko): libdw reads it, not dwline.c, dwscan.c */
	bool have_secs; /* secs looked up */
	struct dwline_secs secs; /* what line programs read, in dw's Elf */
	const u8 *info; /* .debug_info and .debug_abbrev, for dwscan.c */
	size_t info_size;
	const u8 *abbrev;
	size_t abbrev_size;
	const u8 *rnglists; /* and the range lists */
	size_t rnglists_size;
	const u8 *debug_ranges;
	size_t debug_ranges_size;
	const u8 *debug_addr;
	size_t debug_addr_size;
	const u8 *str_offsets; /* .debug_str_offsets */
	size_t str_offsets_size;
	const u8 *debug_aranges;
	size_t debug_aranges_size;
	bool broken; /* found unreadable at open: symbols only */
	bool warned; /* a unit or a function found corrupt, said once */
	struct src_counts counts; /* how trees and instances were read */
};

/* Stored source frames of a capture: sorted by address. */
struct stored_addr {
	u64 vaddr;
	u32 first;
	u32 nr;
};

struct stored_frame {
	u32 func; /* offsets into dso.names; 0: none */
	u32 file;
	u32 line;
};

struct dso_src {
	struct stored_addr *addrs;
	u32 nr_addrs;
	u32 alloc_addrs;
	struct stored_frame *frames;
	u32 nr_frames;
	u32 alloc_frames;
};

/*
 * What is wrong with a file as a whole shows when it is opened, before any
 * address is asked: one warning, then nothing more from its DWARF.
 */
static void dwarf_broken(struct dso *d, struct dso_dwarf *dd, const char *what)
{
	int err = dwarf_errno();

	if (!dd->broken)
		pr_warn("%s: %s%s%s; its frames keep their symbols, without source lines",
			d->dwarf_path ? d->dwarf_path : d->path, what, err ? ": " : "",
			err ? dwarf_errmsg(err) : "");
	dd->broken = true;
}

/*
 * A unit or a function whose entries or line program are corrupt shows
 * only when an address first falls in it.  Only it loses what it would
 * have given (@loss), so that what an address gets does not depend on
 * which addresses were asked before it.  One warning per file; the others
 * with -v.
 */
static void dwarf_corrupt(struct dso *d, struct dso_dwarf *dd, const char *what, const char *where,
			  Dwarf_Off off, const char *loss)
{
	int err = dwarf_errno();
	void (*say)(const char *fmt, ...) = dd->warned ? pr_debug : pr_warn;

	say("%s: %s (the %s at 0x%llx)%s%s; %s", d->dwarf_path ? d->dwarf_path : d->path, what,
	    where, (unsigned long long)off, err ? ": " : "", err ? dwarf_errmsg(err) : "", loss);
	dd->warned = true;
}

static bool has_debug_info(Elf *elf)
{
	return elf_has_section(elf, ".debug_info") || elf_has_section(elf, ".zdebug_info");
}

/* The Elf to read DWARF from: the binary's own, else its debug file's. */
static Elf *dwarf_elf(struct dso *d, const char **path)
{
	if (has_debug_info(d->elf)) {
		*path = d->path;
		return d->elf;
	}
	if (has_debug_info(d->debug_elf)) {
		*path = d->symsrc_path;
		return d->debug_elf;
	}
	return NULL;
}

static void add_unit_range(struct dso_dwarf *dd, u64 start, u64 end, u32 unit)
{
	if (end <= start)
		return;
	VEC_GROW(dd->ranges, dd->nr_ranges, dd->alloc_ranges);
	dd->ranges[dd->nr_ranges++] =
		(struct unit_range){ .start = start, .end = end, .unit = unit };
}

static int unit_range_cmp(const void *a, const void *b, void *arg)
{
	const struct unit_range *x = a, *y = b;

	(void)arg;
	return x->end < y->end ? 1 : x->end > y->end ? -1 : 0;
}

/*
 * Every unit header, read at open (headers only: cheap, and a broken chain
 * of them is found before any line is given).  The units' DIEs wait for an
 * address to hit them.
 */
static bool read_units(struct dso *d, struct dso_dwarf *dd)
{
	Dwarf_Off off = 0, next, abbrev_off;
	Dwarf_Half version;
	u8 addr_size, offset_size;
	size_t hsize;
	int ret;

	while ((ret = dwarf_next_unit(dd->dw, off, &next, &hsize, &version, &abbrev_off, &addr_size,
				      &offset_size, NULL, NULL)) == 0) {
		if (next <= off || dd->nr_units >= MAX_UNITS) {
			dwarf_broken(d, dd, "bad unit headers in .debug_info");
			return false;
		}
		VEC_GROW(dd->units, dd->nr_units, dd->alloc_units);
		dd->units[dd->nr_units++] = (struct unit){
			.off = off + hsize,
			.hdr = off,
			.next = next,
			.abbrev_off = abbrev_off,
			.version = version,
			.addr_size = addr_size,
			.offset_size = offset_size,
		};
		off = next;
	}
	if (ret < 0) {
		dwarf_broken(d, dd, "cannot read .debug_info");
		return false;
	}
	return true;
}

/* libdw's DIE of the unit, for what only libdw reads. */
static bool libdw_die(struct dso_dwarf *dd, struct unit *u)
{
	if (!u->have_die)
		u->have_die = dwarf_offdie(dd->dw, u->off, &u->die) != NULL;
	return u->have_die;
}

static void find_secs(struct dso_dwarf *dd);

/* The unit's abbreviations, read by dwscan.c; NULL where it cannot. */
static struct dwscan *new_scan(struct dso_dwarf *dd, struct unit *u)
{
	struct dwscan_unit su;

	if (!dd->have_secs)
		find_secs(dd);
	/* the scan reads the header itself: where libdw reads it otherwise, libdw decides */
	if (!dwscan_unit_at(&su, dd->info, dd->info_size, dd->abbrev, dd->abbrev_size,
			    dd->secs.big_endian, u->hdr) ||
	    su.die != u->off || su.end != u->next)
		return NULL;
	su.rnglists = dd->rnglists;
	su.rnglists_size = dd->rnglists_size;
	su.ranges = dd->debug_ranges;
	su.ranges_size = dd->debug_ranges_size;
	su.addrs = dd->debug_addr;
	su.addrs_size = dd->debug_addr_size;
	su.str = dd->secs.str;
	su.str_size = dd->secs.str_size;
	su.line_str = dd->secs.line_str;
	su.line_str_size = dd->secs.line_str_size;
	su.str_offsets = dd->str_offsets;
	su.str_offsets_size = dd->str_offsets_size;
	return dwscan_new(&su);
}

/*
 * The unit's DIE read by dwscan.c, where it can: then libdw reads
 * neither it nor the abbreviations (it would read them all to find the
 * unit DIE's).
 */
static void scan_unit(struct dso_dwarf *dd, struct unit *u)
{
	u->scan = new_scan(dd, u);
	u->scanned_die = u->scan && dwscan_unit_die(u->scan, &u->cu);
}

/* The unit's DIE, read on first use; false when it is no compilation unit. */
static bool unit_die(struct dso_dwarf *dd, struct unit *u)
{
	if (u->checked)
		return u->ok;
	u->checked = true;
	if (!dd->relocated)
		scan_unit(dd, u);
	if (u->scanned_die)
		u->ok = u->cu.tag == DW_TAG_compile_unit;
	else
		u->ok = libdw_die(dd, u) && dwarf_tag(&u->die) == DW_TAG_compile_unit;
	return u->ok;
}

/* The code of unit @i, as dwscan.c read it or else through libdw. */
static void add_unit_ranges(struct dso_dwarf *dd, struct unit *u, u32 i)
{
	Dwarf_Addr base, start, end;
	ptrdiff_t off = 0;
	u32 k;

	if (u->scanned_die && u->cu.pc != DWSCAN_PC_LIBDW) {
		for (k = 0; k < u->cu.ranges.nr_ranges; k++)
			add_unit_range(dd, u->cu.ranges.ranges[k].start, u->cu.ranges.ranges[k].end,
				       i);
		return;
	}
	if (!libdw_die(dd, u))
		return;
	while ((off = dwarf_ranges(&u->die, off, &base, &start, &end)) > 0)
		add_unit_range(dd, start, end, i);
}

/*
 * The first of @n elements of @size bytes, sorted by the u64 at @key_off,
 * whose key is not below @key; @n when none.
 */
static u32 lower_bound(const void *base, u32 n, size_t size, size_t key_off, u64 key)
{
	u32 lo = 0, hi = n;

	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;
		u64 k;

		memcpy(&k, (const char *)base + (size_t)mid * size + key_off, sizeof(k));
		if (k < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static u32 unit_at_offset(const struct dso_dwarf *dd, Dwarf_Off off)
{
	u32 lo = lower_bound(dd->units, dd->nr_units, sizeof(*dd->units),
			     offsetof(struct unit, off), off);

	return lo < dd->nr_units && dd->units[lo].off == off ? lo : IV_NONE;
}

/* The unit whose header is at @hdr. */
static u32 unit_at_header(const struct dso_dwarf *dd, u64 hdr)
{
	u32 lo = lower_bound(dd->units, dd->nr_units, sizeof(*dd->units),
			     offsetof(struct unit, hdr), hdr);

	return lo < dd->nr_units && dd->units[lo].hdr == hdr ? lo : IV_NONE;
}

/*
 * The own ranges of the units .debug_aranges says nothing about, for
 * addresses it does not cover (every unit, when a producer wrote none).
 * A unit with aranges has them all there: on a kernel, where every unit
 * has them, reading the 2 759 units' DIEs found nothing more.
 */
static void read_unit_ranges(struct dso_dwarf *dd)
{
	u32 i;

	dd->have_ranges = true;
	for (i = 0; i < dd->nr_units; i++)
		if (!dd->units[i].aranged && unit_die(dd, &dd->units[i])) {
			add_unit_ranges(dd, &dd->units[i], i);
			/* every unit, when a producer wrote no aranges: the scan waits for a load */
			if (!dd->units[i].loaded) {
				dwscan_free(dd->units[i].scan);
				dd->units[i].scan = NULL;
			}
		}
	/* units starting at one address (rare): the longer wins */
	dd->nr_ranges = iv_sort_unique(dd->ranges, dd->nr_ranges, sizeof(*dd->ranges),
				       unit_range_cmp, NULL);
	iv_build(&dd->index, dd->ranges, dd->nr_ranges, sizeof(*dd->ranges));
}

/* The unit holding @vaddr: .debug_aranges first, else the units' ranges. */
static struct unit *find_unit(struct dso_dwarf *dd, u64 vaddr)
{
	/* as dwarf_getarange_addr(): the entry that starts last at or below, if it holds @vaddr */
	u32 i = lower_bound(dd->aranges, dd->nr_aranges, sizeof(*dd->aranges),
			    offsetof(struct unit_range, start), vaddr + 1);

	if (i && vaddr < dd->aranges[i - 1].end &&
	    unit_die(dd, &dd->units[dd->aranges[i - 1].unit]))
		return &dd->units[dd->aranges[i - 1].unit];
	if (!dd->have_ranges)
		read_unit_ranges(dd);
	i = iv_find(&dd->index, dd->ranges, sizeof(*dd->ranges), vaddr);
	return i == IV_NONE ? NULL : &dd->units[dd->ranges[i].unit];
}

/* An entry of .debug_aranges for unit @unit (IV_NONE: none there): false to drop them all. */
static bool add_arange(struct dso_dwarf *dd, u64 start, u64 end, u32 unit, u32 *alloc)
{
	if (unit == IV_NONE)
		return false; /* libdw refuses the section */
	dd->units[unit].aranged = true; /* an empty range too: its unit is listed */
	if (end <= start)
		return true;
	VEC_GROW(dd->aranges, dd->nr_aranges, *alloc);
	dd->aranges[dd->nr_aranges++] = (struct unit_range){ start, end, unit };
	return true;
}

/* The entries as libdw reads them, where dwaranges.c does not (or a .ko's relocated DWARF). */
static bool libdw_aranges(struct dso_dwarf *dd, u32 *alloc)
{
	Dwarf_Aranges *a;
	Dwarf_Addr start;
	Dwarf_Word len;
	Dwarf_Off off;
	size_t nr, i;
	u32 k;

	if (dwarf_getaranges(dd->dw, &a, &nr))
		return false;
	for (i = 0; i < nr; i++) {
		if (dwarf_getarangeinfo(dwarf_onearange(a, i), &start, &len, &off))
			return false;
		/* a unit no header names (none that libdw finds): its entries say nothing */
		k = unit_at_offset(dd, off);
		if (k != IV_NONE)
			add_arange(dd, start, len > UINT64_MAX - start ? UINT64_MAX : start + len,
				   k, alloc);
	}
	return true;
}

/* No aranges: every unit's own ranges are read for an address. */
static void clear_aranges(struct dso_dwarf *dd)
{
	u32 i;

	for (i = 0; i < dd->nr_units; i++)
		dd->units[i].aranged = false;
	dd->nr_aranges = 0;
}

/*
 * .debug_aranges, read once: the unit holding an address.  None, or
 * unreadable: the units' own ranges do.
 */
static void read_aranges(struct dso_dwarf *dd)
{
	struct dwarange *v = NULL;
	u32 nr = 0, alloc = 0, i;
	bool ok = false;

	if (!dd->have_secs)
		find_secs(dd);
	/* a section libelf does not give (a MIPS one, say) libdw may read all the same */
	if (!dd->relocated && dd->debug_aranges &&
	    dwaranges_read(dd->debug_aranges, dd->debug_aranges_size, dd->secs.big_endian, &v,
			   &nr)) {
		for (i = 0, ok = true; i < nr && ok; i++)
			ok = add_arange(dd, v[i].start, v[i].end, unit_at_header(dd, v[i].unit),
					&alloc);
		free(v);
	}
	if (!ok) {
		/* a unit's header not where an entry says: libdw finds the unit around it */
		clear_aranges(dd);
		if (!libdw_aranges(dd, &alloc))
			clear_aranges(dd);
	}
	/* entries starting at one address (not a producer's): the longer wins */
	dd->nr_aranges = iv_sort_unique(dd->aranges, dd->nr_aranges, sizeof(*dd->aranges),
					unit_range_cmp, NULL);
}

/*
 * Whether every string section libdw reads ends in a NUL: libdw hands out
 * pointers into them (file names in line tables, names), which are then
 * read to their NUL.  A hostile file can make one end short of it, or
 * give it a type cycread's readers skip while libdw reads it all the same.
 */
static bool strings_end(Elf *elf)
{
	static const char *const names[] = { ".debug_str", ".debug_line_str", ".zdebug_str",
					     ".zdebug_line_str" };
	Elf_Scn *scn = NULL;
	size_t shstrndx, i;

	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *n;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
		    !(n = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		for (i = 0; i < ARRAY_SIZE(names) && strcmp(n, names[i]); i++)
			;
		if (i == ARRAY_SIZE(names))
			continue;
		data = elf_getdata(scn, NULL);
		if (data && data->d_size && ((const char *)data->d_buf)[data->d_size - 1])
			return false;
	}
	return true;
}

/* The aranges and unit headers of a freshly opened @dd. */
static bool dwarf_index(struct dso *d, struct dso_dwarf *dd)
{
	if (!strings_end(dwarf_getelf(dd->dw))) {
		dwarf_broken(d, dd, "a string section that does not end in a NUL");
		return false;
	}
	if (!read_units(d, dd))
		return false;
	read_aranges(dd);
	pr_debug("%s: source lines from %s (%u units)", d->path, d->dwarf_path, dd->nr_units);
	return true;
}

void dso_use_dwarf(struct dso *d, Dwarf *dw, u64 bias, const char *path)
{
	struct dso_dwarf *dd = xcalloc(1, sizeof(*dd));
	Elf *elf = dwarf_getelf(dw);
	GElf_Ehdr ehdr;

	d->dwarf = dd;
	d->dwarf_path = xstrdup(path);
	dd->dw = dw;
	dd->bias = bias;
	dd->borrowed = true;
	/* a vmlinux is read as it is in the file, a .ko with libdwfl's relocations applied */
	dd->relocated = !elf || !gelf_getehdr(elf, &ehdr) || ehdr.e_type == ET_REL;
	dwarf_index(d, dd);
}

static struct dso_dwarf *dso_dwarf(struct dso *d)
{
	struct dso_dwarf *dd;
	const char *path = NULL;
	Elf *elf;

	if (d->dwarf)
		return d->dwarf->broken || !d->dwarf->dw ? NULL : d->dwarf;
	dd = xcalloc(1, sizeof(*dd));
	d->dwarf = dd;
	elf = dwarf_elf(d, &path);
	if (!elf)
		return NULL;
	d->dwarf_path = xstrdup(path ? path : d->path);
	dd->dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	if (!dd->dw) {
		dwarf_broken(d, dd, "unreadable DWARF");
		return NULL;
	}
	return dwarf_index(d, dd) ? dd : NULL;
}

bool dso_has_src(struct dso *d)
{
	return (d->src && d->src->nr_addrs) || dso_dwarf(d);
}

/* ---- the functions of one unit ------------------------------------------ */

static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *s;

	/* the linkage name demangles to the qualified name, as addr2line -C shows */
	s = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
	if (!s)
		s = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
	if (!s)
		s = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &attr));
	return s;
}

/* @die's constant @name, or @none when it has none that fits a u32 */
static u32 die_udata(Dwarf_Die *die, unsigned int name, u32 none)
{
	Dwarf_Attribute attr;
	Dwarf_Word v;

	if (!dwarf_attr(die, name, &attr) || dwarf_formudata(&attr, &v) || v >= UINT32_MAX)
		return none;
	return v;
}

/* Add @die's ranges to @v as node @node; false when it has none. */
static bool add_ranges(struct fn_range **v, u32 *nr, u32 *alloc, Dwarf_Die *die, u32 node,
		       u32 depth)
{
	Dwarf_Addr base, start, end;
	ptrdiff_t off = 0;
	bool any = false;

	while ((off = dwarf_ranges(die, off, &base, &start, &end)) > 0) {
		if (end <= start)
			continue;
		VEC_GROW(*v, *nr, *alloc);
		(*v)[(*nr)++] = (struct fn_range){
			.start = start, .end = end, .node = node, .depth = depth
		};
		any = true;
	}
	return any;
}

static u32 new_node(struct unit *u, Dwarf_Off off, u32 parent)
{
	VEC_GROW(u->nodes, u->nr_nodes, u->alloc_nodes);
	u->nodes[u->nr_nodes] = (struct fn_node){ .parent = parent, .tree = IV_NONE, .off = off };
	return u->nr_nodes++;
}

/* A function (a subprogram with code): its ranges go to the unit's table. */
static void add_func(struct unit *u, Dwarf_Die *die)
{
	if (add_ranges(&u->funcs, &u->nr_funcs, &u->alloc_funcs, die, u->nr_nodes, 0))
		new_node(u, dwarf_dieoffset(die), IV_NONE);
}

/* Where a walk is: the DIE it stepped on last; every DIE lies before end. */
struct walk_pos {
	Dwarf_Off last;
	Dwarf_Off end;
};

/*
 * In a tree that is one, each DIE a walk steps on lies after every DIE it
 * stepped on before: children after their parent, a sibling after the
 * children of the DIE before it; and a function's DIEs lie before the
 * next function's (tree_end()).  A sibling link pointing backwards would
 * loop forever, one pointing back into the children just walked would
 * make each level walk the next twice (2^depth steps), one far ahead
 * would take the walk through other functions: each breaks that order,
 * and the walk ends there.  So each walk takes fewer steps than its
 * function has bytes, the walks of all a unit's trees fewer than the unit
 * has, and one function's hostile tree leaves no other walk fewer (what
 * an address gets must not depend on which were asked before it).
 */
static bool next_child(struct unit *u, struct walk_pos *pos, Dwarf_Die *child)
{
	Dwarf_Off off = dwarf_dieoffset(child);

	if (off <= pos->last || off >= pos->end || u->nr_nodes >= MAX_UNIT_NODES)
		return false;
	pos->last = off;
	return true;
}

/*
 * Walk @scope.  Without @t, for the unit's functions: its scopes down to
 * the subprograms (namespaces), not into them.  With @t, for the inlined
 * instances in a part of function @parent's tree; a nested function (GNU C)
 * found there is a function of the unit of its own, walked when an address
 * hits it.  False when the tree is not one (hostile DWARF, next_child()).
 */
static bool walk_scope(struct unit *u, struct fn_tree *t, Dwarf_Die *scope, u32 parent, u32 depth,
		       struct walk_pos *pos)
{
	Dwarf_Die child;
	int ret;

	if (depth > MAX_DIE_DEPTH)
		return false;
	for (ret = dwarf_child(scope, &child); ret == 0; ret = dwarf_siblingof(&child, &child)) {
		int tag = dwarf_tag(&child);
		u32 node = parent;

		if (!next_child(u, pos, &child))
			return false;
		if (tag == DW_TAG_subprogram) {
			add_func(u, &child);
			continue;
		}
		if (t && tag == DW_TAG_inlined_subroutine &&
		    add_ranges(&t->ranges, &t->nr_ranges, &t->alloc_ranges, &child, u->nr_nodes,
			       depth))
			node = new_node(u, dwarf_dieoffset(&child), parent);
		if ((t ? dwscan_tree_scope(tag) : dwscan_func_scope(tag)) &&
		    dwarf_haschildren(&child) && !walk_scope(u, t, &child, node, depth + 1, pos))
			return false;
	}
	return ret >= 0;
}

/* One walk of @scope (walk_scope()), through DIEs before @end. */
static bool walk(struct unit *u, struct fn_tree *t, Dwarf_Die *scope, u32 parent, u32 depth,
		 Dwarf_Off end)
{
	struct walk_pos pos = { .last = dwarf_dieoffset(scope), .end = end };

	return walk_scope(u, t, scope, parent, depth, &pos);
}

/*
 * Where the DIEs of the function at @off end at the latest: at the next
 * function load_unit() found (its walk and scan step over functions,
 * never into them), else at the unit's end.  Both move only forward
 * (next_child(), dwscan.c's sibling_at()), so those functions' nodes are
 * in the order of their offsets.
 */
static Dwarf_Off tree_end(const struct unit *u, Dwarf_Off off)
{
	u32 i = lower_bound(u->nodes, u->nr_tops, sizeof(*u->nodes), offsetof(struct fn_node, off),
			    off + 1);

	return i < u->nr_tops ? u->nodes[i].off : u->next;
}

static int fn_range_cmp(const void *a, const void *b, void *arg)
{
	const struct fn_range *x = a, *y = b;

	(void)arg;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->depth < y->depth ? -1 : x->depth > y->depth;
}

static void find_secs(struct dso_dwarf *dd)
{
	Elf *elf = dwarf_getelf(dd->dw);
	struct dwline_secs *s = &dd->secs;
	char *ident;

	dd->have_secs = true;
	if (!elf)
		return;
	/* after dwarf_begin_elf(): compressed sections are inflated in place */
	ident = elf_getident(elf, NULL);
	s->big_endian = ident && ident[EI_DATA] == ELFDATA2MSB;
	s->line = elf_section_bytes(elf, ".debug_line", false, &s->line_size);
	s->str = elf_section_bytes(elf, ".debug_str", false, &s->str_size);
	s->line_str = elf_section_bytes(elf, ".debug_line_str", false, &s->line_str_size);
	dd->info = elf_section_bytes(elf, ".debug_info", false, &dd->info_size);
	dd->abbrev = elf_section_bytes(elf, ".debug_abbrev", false, &dd->abbrev_size);
	dd->rnglists = elf_section_bytes(elf, ".debug_rnglists", false, &dd->rnglists_size);
	dd->debug_ranges = elf_section_bytes(elf, ".debug_ranges", false, &dd->debug_ranges_size);
	dd->debug_addr = elf_section_bytes(elf, ".debug_addr", false, &dd->debug_addr_size);
	dd->str_offsets =
		elf_section_bytes(elf, ".debug_str_offsets", false, &dd->str_offsets_size);
	dd->debug_aranges =
		elf_section_bytes(elf, ".debug_aranges", false, &dd->debug_aranges_size);
}

/*
 * Whether libdw's @name, of a table before DWARF 5 whose directory 0 (the
 * comp_dir, @dirs[0]) is relative, is of directory 0: libdw joins a name
 * to its directory without saying which, so the longest of @dirs the name
 * starts with tells ("./inc/h.h" is of "./inc", not of ".").
 */
static bool libdw_in_comp_dir(const char *const *dirs, size_t nr_dirs, const char *name)
{
	size_t i, len, best = 0, longest = 0;

	for (i = 0; i < nr_dirs; i++) {
		if (!dirs[i])
			continue;
		len = strlen(dirs[i]);
		if (len >= longest && !strncmp(name, dirs[i], len) && name[len] == '/') {
			best = i;
			longest = len + 1; /* ties to directory 0, the first */
		}
	}
	return longest && !best;
}

/*
 * libdwfl's relocated DWARF of a .ko: its line table through libdw, which
 * reads the relocated sections libdwfl keeps, copied into @u's table.
 */
static bool libdw_lines(struct dso_dwarf *dd, struct unit *u)
{
	const char *const *dirs;
	struct u64map idx = { 0 };
	Dwarf_Files *files;
	Dwarf_Lines *lines;
	size_t nr, nr_files, nr_dirs = 0, i;
	bool ok = false, rel_dir0;

	if (!libdw_die(dd, u) || dwarf_getsrclines(&u->die, &lines, &nr) ||
	    dwarf_getsrcfiles(&u->die, &files, &nr_files))
		return false;
	u->lines.version = u->version; /* libdw does not say the line table's own */
	if (!dwarf_getsrcdirs(files, &dirs, &nr_dirs) && nr_dirs) {
		VEC_GROW(u->lines.dirs, u->lines.nr_dirs, u->lines.alloc_dirs);
		u->lines.dirs[u->lines.nr_dirs++] = dirs[0];
	}
	/* an absolute directory 0 makes its names absolute: nothing to tell */
	rel_dir0 = u->version < 5 && u->lines.nr_dirs && dirs[0] && dirs[0][0] != '/';
	for (i = 0; i < nr_files; i++) {
		const char *name = dwarf_filesrc(files, i, NULL, NULL);

		dwline_add_file(&u->lines, name,
				rel_dir0 && name && libdw_in_comp_dir(dirs, nr_dirs, name));
		if (name)
			u64map_put(&idx, (uintptr_t)name, i);
	}
	for (i = 0; i < nr; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		const char *name = l ? dwarf_linesrc(l, NULL, NULL) : NULL;
		Dwarf_Addr addr;
		u64 file = UINT32_MAX;
		int lineno = 0;
		bool end;

		if (!l || dwarf_lineaddr(l, &addr) || dwarf_lineendsequence(l, &end))
			goto out;
		if (name)
			u64map_get(&idx, (uintptr_t)name, &file);
		dwarf_lineno(l, &lineno);
		dwline_add_row(&u->lines, addr, file, lineno > 0 ? lineno : 0, end);
	}
	dwline_sort(&u->lines); /* libdw's order already: a pass over the rows says so */
	ok = true;
out:
	u64map_free(&idx);
	return ok;
}

/* The unit's line program, decoded by dwline.c. */
static bool own_lines(struct dso_dwarf *dd, struct unit *u)
{
	Dwarf_Attribute attr;
	Dwarf_Word off;
	Dwarf_Die cudie;
	u8 addr_size;

	if (!dd->have_secs)
		find_secs(dd);
	if (u->scanned_die)
		return dwline_read(&dd->secs, u->cu.lines, u->addr_size, u->cu.comp_dir, &u->lines);
	if (!libdw_die(dd, u) ||
	    dwarf_formudata(dwarf_attr(&u->die, DW_AT_stmt_list, &attr), &off) ||
	    !dwarf_diecu(&u->die, &cudie, &addr_size, NULL))
		return false;
	return dwline_read(&dd->secs, off, addr_size,
			   dwarf_formstring(dwarf_attr(&u->die, DW_AT_comp_dir, &attr)), &u->lines);
}

/* Whether @addr is in the unit's code, as dwarf_haspc() says. */
static bool unit_has(struct dso_dwarf *dd, struct unit *u, u64 addr)
{
	const struct dwscan_tree *t = &u->cu.ranges;
	u32 i;

	if (!u->scanned_die || u->cu.pc == DWSCAN_PC_LIBDW)
		return libdw_die(dd, u) && dwarf_haspc(&u->die, addr) > 0;
	for (i = 0; i < t->nr_ranges; i++)
		if (addr >= t->ranges[i].start && addr < t->ranges[i].end)
			return true;
	return false;
}

/*
 * The unit's line table parses and has a row in the unit's code.  A line
 * program of garbage often parses without error into rows that lie
 * nowhere; a real one describes the code of its unit (a unit may begin
 * with top-level asm, which has no rows, so no particular row is required).
 * Either reader's rows come out of dwline_sort(), in address order.
 */
static bool lines_sane(struct dso_dwarf *dd, struct unit *u)
{
	const struct dwline *t = &u->lines;
	bool inside = false;
	size_t i;

	if (!dd->relocated && !own_lines(dd, u)) {
		/* what dwline.c refuses (forms it does not know, say), libdw may read */
		dwline_free(&u->lines);
		if (!libdw_lines(dd, u))
			return false;
	} else if (dd->relocated && !libdw_lines(dd, u)) {
		return false;
	}
	if (t->nr_dirs)
		u->comp_dir = t->dirs[0]; /* relative too: -fdebug-prefix-map=$PWD=. */
	for (i = 0; i < t->nr_rows && !inside; i++)
		inside = !t->rows[i].end && unit_has(dd, u, t->rows[i].addr);
	return inside || !t->nr_rows; /* no lines: nothing wrong with that */
}

static void index_funcs(struct unit *u)
{
	sort(u->funcs, u->nr_funcs, sizeof(*u->funcs), fn_range_cmp, NULL);
	iv_build(&u->index, u->funcs, u->nr_funcs, sizeof(*u->funcs));
}

/* The ranges of an instance the scan read, to @v as node @node; false when all are empty. */
static bool add_scanned(struct fn_range **v, u32 *nr, u32 *alloc, const struct dwscan_tree *st,
			const struct dwscan_inst *in, u32 node, u32 depth)
{
	bool any = false;
	u32 i;

	for (i = 0; i < in->nr; i++) {
		const struct dwscan_range *r = &st->ranges[in->first + i];

		if (r->end <= r->start)
			continue;
		VEC_GROW(*v, *nr, *alloc);
		(*v)[(*nr)++] = (struct fn_range){
			.start = r->start, .end = r->end, .node = node, .depth = depth
		};
		any = true;
	}
	return any;
}

/*
 * A function the scan found, added as add_func() adds it: its ranges as
 * the scan read them, or through libdw where it left them to libdw.
 * False when libdw cannot read the DIE, or reads no function there.
 */
static bool add_scanned_func(struct dso_dwarf *dd, struct unit *u, const struct dwscan_tree *st,
			     const struct dwscan_inst *in)
{
	Dwarf_Die die;

	if (in->pc == DWSCAN_PC_RANGES) {
		if (add_scanned(&u->funcs, &u->nr_funcs, &u->alloc_funcs, st, in, u->nr_nodes, 0))
			new_node(u, in->off, IV_NONE);
		return true;
	}
	if (in->pc == DWSCAN_PC_NONE)
		return true;
	if (!dwarf_offdie(dd->dw, in->off, &die) || dwarf_tag(&die) != DW_TAG_subprogram)
		return false;
	add_func(u, &die);
	return true;
}

/*
 * The unit's functions and their ranges, found by dwscan.c; where the scan
 * cannot tell (or a .ko's relocated DWARF), the walk through libdw, which
 * judges corrupt entries.
 */
static bool unit_funcs(struct dso_dwarf *dd, struct unit *u)
{
	struct dwscan_tree ft;
	u32 i;

	if (!u->scan && u->scanned_die)
		u->scan = new_scan(dd, u); /* freed by read_unit_ranges() */
	if (u->scan && dwscan_funcs(u->scan, &ft)) {
		for (i = 0; i < ft.nr_insts && ft.nr_insts < MAX_UNIT_NODES; i++)
			if (!add_scanned_func(dd, u, &ft, &ft.insts[i]))
				break;
		if (i == ft.nr_insts) {
			dwscan_tree_free(&ft);
			return true;
		}
		dwscan_tree_free(&ft);
		u->nr_funcs = 0; /* libdw disagrees: its walk decides, here and in the trees */
		u->nr_nodes = 0;
	}
	dwscan_free(u->scan);
	u->scan = NULL;
	return libdw_die(dd, u) && walk(u, NULL, &u->die, IV_NONE, 0, u->next);
}

static bool has_lines(struct dso_dwarf *dd, struct unit *u)
{
	if (u->scanned_die)
		return u->cu.has_lines;
	return libdw_die(dd, u) && dwarf_hasattr(&u->die, DW_AT_stmt_list);
}

#define UNIT_LOSS "frames in such units keep their symbols, without source lines"

/* The unit's functions and line table, the first time an address falls in it. */
static bool load_unit(struct dso *d, struct dso_dwarf *dd, struct unit *u)
{
	if (u->loaded)
		return !u->corrupt;
	u->loaded = true;
	dwarf_errno(); /* cleared: an error of before is not this unit's */
	if (!unit_funcs(dd, u)) {
		dwarf_corrupt(d, dd, "corrupt function entries in .debug_info", "unit", u->hdr,
			      UNIT_LOSS);
		u->corrupt = true;
		return false;
	}
	if (has_lines(dd, u) && !lines_sane(dd, u)) {
		dwarf_corrupt(d, dd, "corrupt .debug_line", "unit", u->hdr, UNIT_LOSS);
		u->corrupt = true;
		return false;
	}
	u->nr_tops = u->nr_nodes;
	index_funcs(u);
	return true;
}

/*
 * One instance the scan found, added as walk() adds it: a nested function
 * to the unit's functions, an inlined instance with code to @t as a node
 * inside @parent.  Its node, or @parent when it makes none; IV_NONE when
 * libdw cannot read the DIE.
 */
static u32 add_inst(struct dso_dwarf *dd, struct unit *u, struct fn_tree *t,
		    const struct dwscan_tree *st, const struct dwscan_inst *in, u32 parent)
{
	Dwarf_Die die;

	if (in->nested)
		return add_scanned_func(dd, u, st, in) ? parent : IV_NONE;
	if (in->pc == DWSCAN_PC_NONE)
		return parent;
	if (in->pc == DWSCAN_PC_RANGES)
		return add_scanned(&t->ranges, &t->nr_ranges, &t->alloc_ranges, st, in, u->nr_nodes,
				   in->depth)
			       ? new_node(u, in->off, parent)
			       : parent;
	if (!dwarf_offdie(dd->dw, in->off, &die))
		return IV_NONE;
	dd->counts.insts_libdw++;
	if (add_ranges(&t->ranges, &t->nr_ranges, &t->alloc_ranges, &die, u->nr_nodes, in->depth))
		return new_node(u, in->off, parent);
	return parent;
}

/*
 * Function @node's tree through dwscan.c: the instances it found, each
 * inside the node its enclosing instance made (or that one's parent, when
 * it made none).  False, with nothing added, when the scan cannot tell.
 */
static bool scan_tree(struct dso_dwarf *dd, struct unit *u, struct fn_tree *t, u32 node)
{
	u32 nr_funcs = u->nr_funcs, nr_nodes = u->nr_nodes, i;
	struct dwscan_tree st;
	u32 *made = NULL;
	bool ok = false;

	if (!u->scan ||
	    !dwscan_tree_within(u->scan, u->nodes[node].off, tree_end(u, u->nodes[node].off), &st))
		return false;
	if (u->nr_nodes + (u64)st.nr_insts >= MAX_UNIT_NODES)
		goto out;
	made = xcalloc(st.nr_insts ? st.nr_insts : 1, sizeof(*made));
	for (i = 0; i < st.nr_insts; i++) {
		const struct dwscan_inst *in = &st.insts[i];

		made[i] = add_inst(dd, u, t, &st, in,
				   in->parent == DWSCAN_NONE ? node : made[in->parent]);
		if (made[i] == IV_NONE)
			goto out;
	}
	ok = true;
out:
	if (!ok) {
		u->nr_funcs = nr_funcs;
		u->nr_nodes = nr_nodes;
		t->nr_ranges = 0;
	}
	free(made);
	dwscan_tree_free(&st);
	return ok;
}

/*
 * Function @node's inlined instances, read on first use; NULL when corrupt
 * (then, and each time after).
 */
static struct fn_tree *func_tree(struct dso *d, struct dso_dwarf *dd, struct unit *u, u32 node)
{
	u32 nr_funcs = u->nr_funcs, nr_nodes = u->nr_nodes, ti = u->nodes[node].tree;
	struct fn_tree *t;
	Dwarf_Die die;

	if (ti != IV_NONE)
		return u->trees[ti].bad ? NULL : &u->trees[ti];
	VEC_GROW(u->trees, u->nr_trees, u->alloc_trees);
	ti = u->nr_trees++;
	t = &u->trees[ti];
	memset(t, 0, sizeof(*t));
	u->nodes[node].tree = ti;
	dwarf_errno(); /* cleared: an error of before is not this tree's */
	if (scan_tree(dd, u, t, node)) {
		dd->counts.trees_scanned++;
	} else if (dwarf_offdie(dd->dw, u->nodes[node].off, &die) &&
		   walk(u, t, &die, node, 1, tree_end(u, u->nodes[node].off))) {
		dd->counts.trees_walked++;
	} else {
		/* as it was before: what the walk added is not trusted */
		u->nr_funcs = nr_funcs;
		u->nr_nodes = nr_nodes;
		t->nr_ranges = 0;
		t->bad = true;
		dwarf_corrupt(d, dd, "corrupt inlined instances in .debug_info", "function",
			      u->nodes[node].off,
			      "such functions' frames keep their lines, without inline frames");
		return NULL;
	}
	/* all ranges, nested ones included: the deepest containing one is found first */
	sort(t->ranges, t->nr_ranges, sizeof(*t->ranges), fn_range_cmp, NULL);
	iv_build(&t->index, t->ranges, t->nr_ranges, sizeof(*t->ranges));
	if (u->nr_funcs != nr_funcs)
		index_funcs(u); /* nested functions joined the unit's table */
	return t;
}

/*
 * An address in no function of the unit's table may still be in a nested
 * function, found only in its parent's tree: read every tree, once.
 */
static bool walk_all_trees(struct dso *d, struct dso_dwarf *dd, struct unit *u)
{
	u32 i;

	if (u->all_walked)
		return false;
	u->all_walked = true;
	for (i = 0; i < u->nr_nodes; i++)
		if (u->nodes[i].parent == IV_NONE)
			func_tree(d, dd, u, i); /* a corrupt one adds nothing */
	return true;
}

/*
 * Whether @vaddr, in no function of @u, cannot be in a nested one either.
 * A nested function's code has a symbol of its own (a local one), in
 * which no function of the table starts.  So when the symbol containing
 * the address holds the start of one of the unit's functions further on,
 * the address is that function's entry: a kernel built for ftrace
 * (-fpatchable-function-entry) has NOPs at each function's symbol that
 * its DIE starts after (one address in seven of an arm64 profile).  And
 * where no symbol contains it while the table names local functions (it
 * was not stripped of them, as ld -x does), it is padding between
 * functions (a report looks up the byte before a return address, which
 * after a call to a function that does not return is the next function's
 * start).  Otherwise every tree of the unit is read for it.
 */
static bool not_nested(struct dso *d, struct dso_dwarf *dd, struct unit *u, u64 vaddr)
{
	const struct dso_sym *s = dso_find(d, vaddr + dd->bias);
	u32 f;

	if (!s)
		return d->local_funcs;
	f = lower_bound(u->funcs, u->nr_funcs, sizeof(*u->funcs), offsetof(struct fn_range, start),
			vaddr + 1);
	return f < u->nr_funcs && u->funcs[f].start < s->end - dd->bias;
}

/* The innermost function or inlined instance at @vaddr, or IV_NONE. */
static u32 unit_node(struct dso *d, struct dso_dwarf *dd, struct unit *u, u64 vaddr)
{
	const struct fn_tree *t;
	u32 f, r;

	f = iv_find(&u->index, u->funcs, sizeof(*u->funcs), vaddr);
	if (f == IV_NONE && not_nested(d, dd, u, vaddr))
		return IV_NONE;
	if (f == IV_NONE && walk_all_trees(d, dd, u))
		f = iv_find(&u->index, u->funcs, sizeof(*u->funcs), vaddr);
	if (f == IV_NONE)
		return IV_NONE;
	f = u->funcs[f].node;
	t = func_tree(d, dd, u, f);
	if (!t)
		return IV_NONE;
	r = iv_find(&t->index, t->ranges, sizeof(*t->ranges), vaddr);
	return r == IV_NONE ? f : t->ranges[r].node;
}

/* The name and call site of @n, read the first time an address hits it. */
static const struct fn_node *node_info(struct dso_dwarf *dd, struct unit *u, struct fn_node *n)
{
	struct dwscan_name dn;
	Dwarf_Die die;

	if (n->named)
		return n;
	n->named = true;
	if (u->scan && dwscan_name(u->scan, n->off, &dn)) {
		n->name = dn.name;
		n->call_file = dn.call_file < UINT32_MAX ? dn.call_file : NO_FILE;
		n->call_line = dn.call_line < UINT32_MAX ? dn.call_line : 0;
		return n;
	}
	if (!dwarf_offdie(dd->dw, n->off, &die))
		return n;
	n->name = die_name(&die);
	n->call_file = die_udata(&die, DW_AT_call_file, NO_FILE);
	n->call_line = die_udata(&die, DW_AT_call_line, 0);
	return n;
}

/*
 * File @idx of the unit's table as addr2line prints it.  binutils joins
 * the comp_dir to each relative name whose directory is relative, or none:
 * a header in ../inc of a unit compiled in ./src (-fdebug-prefix-map
 * makes both relative) is ./src/../inc/h.h.  Before DWARF 5 the names of
 * directory 0 have the comp_dir already (./src/m.c).  From DWARF 5 on,
 * directory 0 is the table's own copy of the comp_dir, and a relative one
 * gets it once more: ./src/./src/m.c, as addr2line, eu-addr2line and
 * llvm-addr2line print it.  (An absolute comp_dir makes those names
 * absolute: only the relative include directories' get it.)
 */
static const char *unit_path(struct dso_dwarf *dd, struct unit *u, u64 idx)
{
	const char *name = dwline_file(&u->lines, idx);
	u64 full;

	if (!name || name[0] == '/' || !u->comp_dir || dwline_file_in_comp_dir(&u->lines, idx))
		return name;
	if (!u64map_get(&dd->abs_files, (uintptr_t)name, &full)) {
		full = (uintptr_t)xasprintf("%s/%s", u->comp_dir, name);
		u64map_put(&dd->abs_files, (uintptr_t)name, full);
	}
	return (const char *)(uintptr_t)full;
}

/*
 * A call site's file.  From DWARF 5 on, file 0 of the line table is the
 * unit's primary source file, and clang's call sites in it say 0; before,
 * 0 is no file (libdw's "???" placeholder sits there).
 */
static const char *unit_file(struct dso_dwarf *dd, struct unit *u, u32 idx)
{
	if (idx == NO_FILE || (!idx && u->lines.version < 5))
		return NULL;
	return unit_path(dd, u, idx);
}

/* The unit whose aranges begin first above @vaddr, below @end; NULL when none. */
static struct unit *unit_after(struct dso_dwarf *dd, u64 vaddr, u64 end)
{
	u32 lo = lower_bound(dd->aranges, dd->nr_aranges, sizeof(*dd->aranges),
			     offsetof(struct unit_range, start), vaddr + 1);
	struct unit *u;

	if (lo == dd->nr_aranges || dd->aranges[lo].start >= end)
		return NULL;
	u = &dd->units[dd->aranges[lo].unit];
	return unit_die(dd, u) ? u : NULL;
}

/*
 * An address in no unit may be at a function's entry: a kernel built for
 * ftrace (-fpatchable-function-entry) has NOPs at each function's symbol
 * that its DIE and its unit's aranges start after, though the unit's line
 * table covers them (arm64: 9 of a profile's 5 163 kernel addresses, where
 * addr2line names the line).  The unit is the one the symbol's code
 * continues into; the line, that unit's; the function is the symbol's.
 */
static u32 entry_frame(struct dso *d, struct dso_dwarf *dd, u64 vaddr, struct src_frame *out)
{
	const struct dso_sym *s = dd->nr_aranges ? dso_find(d, vaddr + dd->bias) : NULL;
	const struct dwline_row *line;
	struct unit *u;

	if (!s || s->end - dd->bias <= vaddr)
		return 0;
	u = unit_after(dd, vaddr, s->end - dd->bias);
	if (!u || !load_unit(d, dd, u))
		return 0;
	line = dwline_find(&u->lines, vaddr);
	if (!line)
		return 0;
	out[0].file = unit_path(dd, u, line->file);
	out[0].line = line->line;
	out[0].func = NULL;
	return 1;
}

static u32 dwarf_frames(struct dso *d, u64 vaddr, struct src_frame *out, u32 max)
{
	struct dso_dwarf *dd = dso_dwarf(d);
	const struct dwline_row *line;
	const struct fn_node *n;
	struct unit *u;
	u32 r, nr = 0;

	if (!dd || !max)
		return 0;
	vaddr -= dd->bias;
	u = find_unit(dd, vaddr);
	if (!u)
		return entry_frame(d, dd, vaddr, out);
	if (!load_unit(d, dd, u))
		return 0;
	line = dwline_find(&u->lines, vaddr);
	out[0].file = line ? unit_path(dd, u, line->file) : NULL;
	out[0].line = line ? line->line : 0;
	out[0].func = NULL;
	nr = 1;
	r = unit_node(d, dd, u, vaddr);
	if (r == IV_NONE)
		return out[0].file ? 1 : 0;
	/* innermost inlined instance out to the function: each at its caller's call site */
	for (n = node_info(dd, u, &u->nodes[r]);; n = node_info(dd, u, &u->nodes[n->parent])) {
		out[nr - 1].func = n->name;
		if (n->parent == IV_NONE || nr == max)
			break;
		out[nr].file = unit_file(dd, u, n->call_file);
		out[nr].line = n->call_line;
		out[nr].func = NULL;
		nr++;
	}
	return nr;
}

void dso_src_counts(const struct dso *d, struct src_counts *c)
{
	*c = d->dwarf ? d->dwarf->counts : (struct src_counts){ 0 };
}

/* ---- stored source frames (capture files) ------------------------------- */

void dso_add_src(struct dso *d, u64 vaddr, const struct src_frame *f, u32 n)
{
	struct dso_src *s = d->src;
	u32 i;

	if (!s)
		s = d->src = xcalloc(1, sizeof(*s));
	VEC_GROW(s->addrs, s->nr_addrs, s->alloc_addrs);
	s->addrs[s->nr_addrs++] = (struct stored_addr){ vaddr, s->nr_frames, n };
	for (i = 0; i < n; i++) {
		VEC_GROW(s->frames, s->nr_frames, s->alloc_frames);
		s->frames[s->nr_frames++] = (struct stored_frame){
			.func = f[i].func ? strpool_add(&d->names, f[i].func) : 0,
			.file = f[i].file ? strpool_add(&d->names, f[i].file) : 0,
			.line = f[i].line,
		};
	}
}

static int stored_cmp(const void *a, const void *b, void *arg)
{
	const struct stored_addr *x = a, *y = b;

	(void)arg;
	return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

void dso_sort_src(struct dso *d)
{
	if (d->src)
		sort(d->src->addrs, d->src->nr_addrs, sizeof(*d->src->addrs), stored_cmp, NULL);
}

static u32 stored_frames(struct dso *d, u64 vaddr, struct src_frame *out, u32 max)
{
	const struct dso_src *s = d->src;
	u32 i, lo = lower_bound(s->addrs, s->nr_addrs, sizeof(*s->addrs),
				offsetof(struct stored_addr, vaddr), vaddr);

	if (lo == s->nr_addrs || s->addrs[lo].vaddr != vaddr)
		return 0;
	for (i = 0; i < s->addrs[lo].nr && i < max; i++) {
		const struct stored_frame *f = &s->frames[s->addrs[lo].first + i];

		out[i].func = f->func ? strpool_str(&d->names, f->func) : NULL;
		out[i].file = f->file ? strpool_str(&d->names, f->file) : NULL;
		out[i].line = f->line;
	}
	return i;
}

u32 dso_src_frames(struct dso *d, u64 vaddr, struct src_frame *out, u32 max)
{
	if (d->src)
		return stored_frames(d, vaddr, out, max);
	return d->elf || d->dwarf ? dwarf_frames(d, vaddr, out, max) : 0;
}

static void free_abs_files(struct dso_dwarf *dd)
{
	size_t pos = 0;
	u64 name, full;

	while (u64map_next(&dd->abs_files, &pos, &name, &full))
		free((char *)(uintptr_t)full);
	u64map_free(&dd->abs_files);
}

void dso_src_free(struct dso *d)
{
	struct dso_dwarf *dd = d->dwarf;
	u32 i;

	if (dd) {
		for (i = 0; i < dd->nr_units; i++) {
			struct unit *u = &dd->units[i];
			u32 k;

			for (k = 0; k < u->nr_trees; k++) {
				free(u->trees[k].ranges);
				iv_free(&u->trees[k].index);
			}
			free(u->trees);
			free(u->funcs);
			free(u->nodes);
			dwline_free(&u->lines);
			dwscan_free(u->scan);
			dwscan_cu_free(&u->cu);
			iv_free(&u->index);
		}
		free(dd->units);
		free(dd->ranges);
		iv_free(&dd->index);
		free(dd->aranges);
		free_abs_files(dd);
		if (dd->dw && !dd->borrowed)
			dwarf_end(dd->dw);
		free(dd);
		d->dwarf = NULL;
	}
	if (d->src) {
		free(d->src->addrs);
		free(d->src->frames);
		free(d->src);
		d->src = NULL;
	}
}
