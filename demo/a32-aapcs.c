// SPDX-License-Identifier: GPL-2.0
/* ARM code with GCC's default frame records (-marm); see a32demo.c. */
#include "a32.h"
#include "work.h"

NOINLINE unsigned long arm_leaf(unsigned long x, unsigned long units)
{
	DEMO_WORK(x, units * A32_UNIT);
	return x;
}

NOINLINE unsigned long arm_mid(unsigned long x)
{
	return arm_leaf(x, 30) + 1;
}
