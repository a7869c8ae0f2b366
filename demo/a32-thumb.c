// SPDX-License-Identifier: GPL-2.0
/* Thumb code (-mthumb), frame pointer in r7; see a32demo.c. */
#include "a32.h"
#include "work.h"

NOINLINE unsigned long thumb_leaf(unsigned long x, unsigned long units)
{
	DEMO_WORK(x, units * A32_UNIT);
	return x;
}

NOINLINE unsigned long thumb_mid(unsigned long x)
{
	x = thumb_leaf(x, 40);
	return lib32_checksum(x, 30) + 1;
}

NOINLINE unsigned long thumb_outer(unsigned long x)
{
	return arm_mid(x) + 1;
}
