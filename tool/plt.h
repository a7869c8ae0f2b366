/* SPDX-License-Identifier: GPL-2.0 */
/*
 * PLT entries as symbols: "puts@plt", as perf and objdump name them.
 *
 * A call into a shared library goes through a stub in the caller's
 * .plt (.plt.sec with IBT on x86_64, .plt.got for functions whose address is
 * also taken), which no symbol table describes.  Each stub loads a GOT slot
 * and jumps to it; the slot's relocation names the function.  The stubs
 * are decoded (x86_64: jmp *disp32(%rip); arm64: adrp/ldr of x16/x17) to
 * find their slot, as objdump does, rather than trusting the order of the
 * relocations.
 */
#ifndef CYCREAD_PLT_H
#define CYCREAD_PLT_H

#include "util.h"

struct plt_entry {
	u64 addr;
	u64 size;
	const char *name; /* the function's .dynsym name (within the Elf's data) */
};

/*
 * The PLT entries of @elf (an Elf *, its e_machine @machine), malloc()ed
 * into *@out; returns how many.  Machines other than x86_64 and arm64 have
 * none.
 */
u32 plt_entries(void *elf, u16 machine, struct plt_entry **out);

#endif /* CYCREAD_PLT_H */
