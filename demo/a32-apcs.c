// SPDX-License-Identifier: GPL-2.0
/* ARM code with APCS frame records (-marm -mapcs-frame); see a32demo.c. */
#include "a32.h"

NOINLINE unsigned long arm_outer(unsigned long x)
{
	return thumb_mid(x) + 1;
}
