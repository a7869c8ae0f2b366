/* SPDX-License-Identifier: GPL-2.0 */
/*
 * work.h - the one unit of work every demo function repeats, so that the
 * cost of a function is proportional to its iteration count whether it
 * lives in the executable or in libdemo.so.
 */
#ifndef DEMO_WORK_H
#define DEMO_WORK_H

/*
 * One xorshift64 step: a chain of dependent integer operations that the
 * compiler can neither vectorise nor fold (the asm hides the value).
 */
#define DEMO_WORK(x, n)							\
	do {								\
		unsigned long __i;					\
		for (__i = 0; __i < (n); __i++) {			\
			(x) ^= (x) << 13;				\
			(x) ^= (x) >> 7;				\
			(x) ^= (x) << 17;				\
			__asm__ volatile("" : "+r"(x));			\
		}							\
	} while (0)

/* Iterations per round: 1000 units of this many steps. */
#define DEMO_UNIT	1000UL

unsigned long lib_checksum(unsigned long x, unsigned long units);

#endif /* DEMO_WORK_H */
