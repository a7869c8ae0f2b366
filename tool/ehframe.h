/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Functions without symbols, told apart by .eh_frame.
 *
 * A stripped binary without a debug file keeps only .dynsym, which lacks
 * every local function; yet every arm64 and x86_64 object carries
 * .eh_frame for unwinding, and its FDEs (frame description entries) give
 * each function's start and end.  An address no symbol covers is grouped
 * with the others of its FDE under a synthetic symbol named for the
 * function's start, "liblzma.so.5.4.1+0x16180" (an ELF virtual address, as
 * readelf, objdump and addr2line take them), so a profile of a stripped
 * library still tells its hot functions apart.  Named symbols always win:
 * this is only asked when no symbol covers the address.
 *
 * The FDE table is read on first use.  Synthetic symbols are made for the
 * FDEs that samples hit, flagged DSYM_FDE, and stored in captures, which
 * read them back with dso_add_fde_sym().
 */
#ifndef CYCREAD_EHFRAME_H
#define CYCREAD_EHFRAME_H

#include "elfsym.h"

/*
 * The synthetic symbol of the FDE containing @vaddr, named @base+0xSTART,
 * or NULL when no FDE covers it.  The pointer stays valid as long as @d.
 */
struct dso_sym *dso_fde_sym(struct dso *d, u64 vaddr, const char *base);

/* A synthetic symbol stored in a capture file. */
void dso_add_fde_sym(struct dso *d, u64 start, u64 end, const char *name, s32 fs_off);

/* The synthetic symbols made so far (for capture files). */
u32 dso_nr_fde_syms(const struct dso *d);
struct dso_sym *dso_fde_sym_at(const struct dso *d, u32 i);

void dso_fde_free(struct dso *d);

#endif /* CYCREAD_EHFRAME_H */
