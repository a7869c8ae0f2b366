/* SPDX-License-Identifier: GPL-2.0 */
/*
 * .debug_aranges read in place: which compilation unit holds an address.
 *
 * libdw's dwarf_getaranges() looks up every set's unit (its CU structure,
 * kept in a search tree until the file is closed) and sorts the entries
 * with qsort: on a kernel's vmlinux, 6 000 entries cost 22M instructions,
 * more than a tenth of symbolizing a profile's frames.  This reader takes
 * the sets as producers write them (version 2, 4- or 8-byte addresses, no
 * segments, the tuples aligned and ended by a pair of zeros at the set's
 * end) and refuses any other layout, which libdw then reads.
 */
#ifndef CYCREAD_DWARANGES_H
#define CYCREAD_DWARANGES_H

#include <stddef.h>

#include "util.h"

/* One address range and the offset of its unit's header in .debug_info. */
struct dwarange {
	u64 start;
	u64 end;
	u64 unit;
};

/*
 * Every entry of @sec (@size bytes, in the file's byte order @big) into
 * *@v (malloced, *@nr of them), in the section's order; false for a
 * layout read here only by libdw, or no section (*@v is then NULL).
 * Empty ranges are kept: a unit with only those is still listed.
 */
bool dwaranges_read(const u8 *sec, size_t size, bool big, struct dwarange **v, u32 *nr);

#endif /* CYCREAD_DWARANGES_H */
