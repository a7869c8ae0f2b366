/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reading DWARF's encodings from a byte range (dwline.c, dwscan.c): fixed
 * size integers in the file's byte order, LEB128s, strings.  A read past
 * the end marks the cursor bad, moves it to the end and yields 0, so a
 * caller checks once after a group of reads.
 */
#ifndef CYCREAD_DWREAD_H
#define CYCREAD_DWREAD_H

#include <string.h>

#include "util.h"

/* A cursor over bytes: a read past the end marks it bad and yields 0. */
struct dwcur {
	const u8 *p;
	const u8 *end;
	bool big;
	bool bad;
};

static inline bool dw_need(struct dwcur *c, size_t n)
{
	if (c->bad || (size_t)(c->end - c->p) < n) {
		c->bad = true;
		c->p = c->end;
		return false;
	}
	return true;
}

static inline u64 dw_uint(struct dwcur *c, u32 n)
{
	u64 v = 0;
	u32 i;

	if (!dw_need(c, n))
		return 0;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	/* the sizes forms have, in the host's order: a load, not a loop */
	if (!c->big && (n == 2 || n == 4 || n == 8)) {
		u16 v16;
		u32 v32;

		if (n == 2)
			v = (memcpy(&v16, c->p, 2), v16);
		else if (n == 4)
			v = (memcpy(&v32, c->p, 4), v32);
		else
			memcpy(&v, c->p, 8);
		c->p += n;
		return v;
	}
#endif
	for (i = 0; i < n; i++)
		v |= (u64)c->p[c->big ? n - 1 - i : i] << (8 * i);
	c->p += n;
	return v;
}

/* A byte: a bad cursor is at its end (dw_need() puts it there). */
static inline u8 dw_u8(struct dwcur *c)
{
	if (c->p < c->end)
		return *c->p++;
	c->bad = true;
	return 0;
}

/*
 * A LEB128's bits (past 64 dropped), its width in bits into *@shift and its
 * last byte into *@last.  More than the 10 bytes 64 bits take mark the
 * cursor bad: libdw stops reading such a number there and goes on inside
 * it, a reading no producer means, so the caller leaves it to libdw.
 */
static inline u64 dw_leb(struct dwcur *c, u32 *shift, u8 *last)
{
	u64 v = 0;
	u8 b;

	*shift = 0;
	do {
		if (*shift >= 70 || !dw_need(c, 1)) {
			c->bad = true;
			c->p = c->end;
			*last = 0;
			return 0;
		}
		b = *c->p++;
		if (*shift < 64)
			v |= (u64)(b & 0x7f) << *shift;
		*shift += 7;
	} while (b & 0x80);
	*last = b;
	return v;
}

static inline u64 dw_uleb(struct dwcur *c)
{
	u32 shift;
	u8 last;

	if (c->p < c->end && !(*c->p & 0x80))
		return *c->p++; /* most are one byte */
	return dw_leb(c, &shift, &last);
}

static inline s64 dw_sleb(struct dwcur *c)
{
	u32 shift;
	u8 last;
	u64 v = dw_leb(c, &shift, &last);

	if (shift < 64 && (last & 0x40))
		v |= ~0ULL << shift;
	return (s64)v;
}

/* The string at @off of a string section; NULL when outside or unterminated. */
static inline const char *dw_sec_str(const u8 *sec, size_t size, u64 off)
{
	if (!sec || off >= size || !memchr(sec + off, 0, size - off))
		return NULL;
	return (const char *)sec + off;
}

/* A NUL-terminated string inside the cursor's bytes; NULL when unterminated. */
static inline const char *dw_str(struct dwcur *c)
{
	const u8 *nul;
	const char *s;

	if (!dw_need(c, 1))
		return NULL;
	nul = memchr(c->p, 0, c->end - c->p);
	if (!nul) {
		c->bad = true;
		c->p = c->end;
		return NULL;
	}
	s = (const char *)c->p;
	c->p = nul + 1;
	return s;
}

#endif /* CYCREAD_DWREAD_H */
