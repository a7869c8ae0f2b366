// SPDX-License-Identifier: GPL-2.0
/*
 * .debug_aranges read in place (see dwaranges.h).
 */
#include <stdlib.h>

#include "dwaranges.h"
#include "dwread.h"

/* More entries than this are no file's: refused. */
#define MAX_ARANGES (1U << 26)

/* The tuples of one set, @c at its first, up to the pair of zeros that must end it at @end. */
static bool read_tuples(struct dwcur *c, const u8 *end, u32 addr_size, struct dwarange **v, u32 *nr,
			u32 *alloc, u64 unit)
{
	for (;;) {
		u64 start = dw_uint(c, addr_size), len = dw_uint(c, addr_size);

		if (c->bad || c->p > end)
			return false;
		if (!start && !len)
			return c->p == end; /* a pair of zeros anywhere else: libdw's reading */
		if (*nr >= MAX_ARANGES || len > UINT64_MAX - start)
			return false;
		VEC_GROW(*v, *nr, *alloc);
		(*v)[(*nr)++] =
			(struct dwarange){ .start = start, .end = start + len, .unit = unit };
	}
}

bool dwaranges_read(const u8 *sec, size_t size, bool big, struct dwarange **v, u32 *nr)
{
	struct dwcur c = { .p = sec, .end = sec, .big = big };
	u32 alloc = 0;

	*v = NULL;
	*nr = 0;
	if (!sec)
		return false; /* libdw may read what libelf did not give */
	c.end = sec + size;
	while (c.p < c.end) {
		const u8 *set = c.p, *end;
		u64 len = dw_uint(&c, 4), unit;
		u32 offset_size = 4, addr_size;
		size_t pad;

		if (len == 0xffffffff) {
			len = dw_uint(&c, 8);
			offset_size = 8;
		} else if (len >= 0xfffffff0) {
			goto refuse;
		}
		if (c.bad || len > (u64)(c.end - c.p))
			goto refuse;
		end = c.p + len;
		if (dw_uint(&c, 2) != 2)
			goto refuse;
		unit = dw_uint(&c, offset_size);
		addr_size = dw_u8(&c);
		if (c.bad || (addr_size != 4 && addr_size != 8) || dw_u8(&c) != 0)
			goto refuse;
		/* the tuples start at a multiple of twice the address size from the set's start */
		pad = (2 * addr_size - (c.p - set) % (2 * addr_size)) % (2 * addr_size);
		if (c.p > end || pad > (size_t)(end - c.p))
			goto refuse;
		c.p += pad;
		if (!read_tuples(&c, end, addr_size, v, nr, &alloc, unit))
			goto refuse;
	}
	return true;
refuse:
	free(*v);
	*v = NULL;
	*nr = 0;
	return false;
}
