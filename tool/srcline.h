/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Source lines and inline frames from DWARF, through elfutils libdw.
 *
 * For an ELF virtual address the answer is a short list of source frames,
 * innermost first: the function whose code is there (an inlined one, if
 * any) with the file and line of the address, then each function it was
 * inlined into with the file and line of that call, and last the real
 * function, the one the symbol table names.  This is what addr2line -f -i
 * prints, and what perf shows as "(inlined)" frames.
 *
 * Only what samples hit is read.  An address finds its compilation unit
 * through .debug_aranges (the units' own ranges where those say nothing);
 * the first address in a unit reads the unit's line table and the ranges of
 * its functions (not what is inside them), the first address in a function
 * the ranges of the function's inlined instances, and the first address in
 * an instance its name and call site.  Lookups are then binary searches
 * (interval.h), never a walk of DIEs per address.  Line programs are
 * decoded by dwline.h, which gives libdw's table at a fraction of its
 * cost, and a unit's functions found by dwscan.h; libdwfl's relocated
 * DWARF of a .ko goes through libdw for both.
 *
 * DWARF comes from the binary itself or from its separate debug file
 * (debug.h).  A file whose DWARF cannot be read gets one warning naming it
 * and the reason; its frames keep their symbols, without lines.  Captures
 * store the source frames of the addresses the samples hit (dso_add_src).
 */
#ifndef CYCREAD_SRCLINE_H
#define CYCREAD_SRCLINE_H

#include <elfutils/libdw.h>

#include "elfsym.h"

/* Inline nests deeper than this are cut at the outer end. */
#define SRC_MAX_FRAMES 32

struct src_frame {
	const char *func; /* raw (mangled) name; NULL when DWARF has none */
	const char *file; /* NULL when unknown */
	u32 line; /* 0 when unknown */
};

/*
 * Source frames at @vaddr of @d, innermost first, into @out (at most @max);
 * the last is the real function.  Returns how many; 0 when there is no line
 * information for the address.  The strings live as long as @d.
 */
u32 dso_src_frames(struct dso *d, u64 vaddr, struct src_frame *out, u32 max);

/*
 * Read @d's source frames from @dw, which another library owns and ends
 * after dso_free(@d) (libdwfl's DWARF of a .ko, relocated, or of a vmlinux); @d's addresses
 * are @dw's plus @bias.  @path names the file in warnings.
 */
void dso_use_dwarf(struct dso *d, Dwarf *dw, u64 bias, const char *path);

/* How @d's DWARF was read so far (tests). */
struct src_counts {
	u32 trees_scanned; /* functions' inlined instances read by dwscan.c */
	u32 trees_walked; /* through libdw's walk: where the scan could not tell, a .ko */
	u32 insts_libdw; /* instances in scanned trees whose ranges libdw read */
};

void dso_src_counts(const struct dso *d, struct src_counts *c);

/* Has @d any DWARF to read (or stored source frames)? */
bool dso_has_src(struct dso *d);

/* Stored source frames (capture files): add, then sort once. */
void dso_add_src(struct dso *d, u64 vaddr, const struct src_frame *f, u32 n);
void dso_sort_src(struct dso *d);

void dso_src_free(struct dso *d);

#endif /* CYCREAD_SRCLINE_H */
