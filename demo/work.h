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
#define DEMO_WORK(x, n)                                 \
	do {                                            \
		unsigned long __i;                      \
		for (__i = 0; __i < (n); __i++) {       \
			(x) ^= (x) << 13;               \
			(x) ^= (x) >> 7;                \
			(x) ^= (x) << 17;               \
			__asm__ volatile("" : "+r"(x)); \
		}                                       \
	} while (0)

/*
 * x86_64 has no link register, so a leaf without a frame record loses its
 * caller for good (the return address is on the stack, which samples do
 * not carry).  GCC 12 omits the record in x86_64 leaves even with
 * -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer; asking for the
 * frame address makes it build one.  On arm64 the leaves stay frameless on
 * purpose: that is the case cycread's leaf-caller repair fixes from LR.
 */
static inline __attribute__((always_inline)) void demo_frame(void)
{
#if defined(__x86_64__)
	__asm__ volatile("" : : "r"(__builtin_frame_address(0)));
#endif
}

/* Iterations per round: 1000 units of this many steps. */
#define DEMO_UNIT 1000UL

unsigned long lib_checksum(unsigned long x, unsigned long units);

#endif /* DEMO_WORK_H */
