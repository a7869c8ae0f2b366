// SPDX-License-Identifier: GPL-2.0
/*
 * libdemo.c - the demo's shared-library function: 30 % of the work, so a
 * profile shows that cycread names functions in shared libraries.
 */
#include "work.h"

unsigned long lib_checksum(unsigned long x, unsigned long units)
{
	demo_frame();
	DEMO_WORK(x, units * DEMO_UNIT);
	return x;
}
