// SPDX-License-Identifier: GPL-2.0
/* Thumb code in a shared library (liba32.so); see a32demo.c. */
#include "a32.h"
#include "work.h"

unsigned long lib32_checksum(unsigned long x, unsigned long units)
{
	DEMO_WORK(x, units * A32_UNIT);
	return x;
}
