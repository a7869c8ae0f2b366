// SPDX-License-Identifier: GPL-2.0
/*
 * a32demo - a 32-bit (armhf) workload for AArch32 tasks on arm64 kernels.
 *
 * Each round does, in units of the same work (work.h), along chains that
 * cross between ARM and Thumb code:
 *
 *	main -> arm_outer -> thumb_mid -> thumb_leaf	  40 units  40 %
 *	main -> arm_outer -> thumb_mid -> lib32_checksum  30 units  30 %
 *	main -> thumb_outer -> arm_mid -> arm_leaf	  30 units  30 %
 *
 * main and arm_outer are ARM code with APCS frames, arm_mid and arm_leaf ARM
 * code with GCC's default frame records, the thumb_* functions and
 * lib32_checksum (in liba32.so) Thumb code.  The leaves save no return
 * address (GCC: "push {r7}" or "str fp, [sp, #-4]!"), so their callers
 * come from lr: the module walks the records, cycread puts the caller back.
 *
 * Usage: a32demo [ROUNDS]  (default 600)
 */
#include <stdio.h>
#include <stdlib.h>

#include "a32.h"

int main(int argc, char **argv)
{
	unsigned long rounds = argc > 1 ? strtoul(argv[1], NULL, 0) : 600;
	unsigned long x = 88172645463325252ULL & 0xffffffffUL, i;

	for (i = 0; i < rounds; i++) {
		x = arm_outer(x);
		x = thumb_outer(x);
	}
	printf("a32demo: %lu rounds, checksum %08lx\n", rounds, x);
	return 0;
}
