/* SPDX-License-Identifier: GPL-2.0 */
/*
 * a32.h - the AArch32 demo's functions, by file and instruction set:
 * a32demo.c and a32-apcs.c are ARM code with APCS frames (-marm
 * -mapcs-frame), a32-aapcs.c ARM code with GCC's default frame records
 * (-marm), a32-thumb.c and liba32.c Thumb code (-mthumb).
 */
#ifndef DEMO_A32_H
#define DEMO_A32_H

#define NOINLINE __attribute__((noinline))

/* Iterations per round: units of this many xorshift steps. */
#define A32_UNIT 1000UL

/* a32-apcs.c */
unsigned long arm_outer(unsigned long x);

/* a32-aapcs.c */
unsigned long arm_mid(unsigned long x);
unsigned long arm_leaf(unsigned long x, unsigned long units);

/* a32-thumb.c */
unsigned long thumb_outer(unsigned long x);
unsigned long thumb_mid(unsigned long x);
unsigned long thumb_leaf(unsigned long x, unsigned long units);

/* liba32.c, in liba32.so */
unsigned long lib32_checksum(unsigned long x, unsigned long units);

#endif /* DEMO_A32_H */
