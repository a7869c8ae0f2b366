// SPDX-License-Identifier: GPL-2.0
/*
 * demo - a workload whose profile is known in advance.
 *
 * Every round calls, from do_round(), functions that repeat the same unit of
 * work (work.h) a fixed number of times:
 *
 *	hot_loop	500 units	50 %	leaf, in the executable
 *	lib_checksum	300 units	30 %	leaf, in libdemo.so
 *	warm_outer	150 units	15 %	calls warm_inner 10 times: the
 *	  warm_inner				self time is warm_inner's
 *	tiny_leaf	 50 units	 5 %	leaf
 *
 * Expected self shares: hot_loop 50 %, lib_checksum 30 %, warm_inner 15 %,
 * tiny_leaf 5 %, with a fraction of a percent in loop and call overhead
 * (do_round, warm_outer, main) and in the dynamic loader at start-up.
 * Expected call chains: main -> do_round -> hot_loop (and likewise for the
 * others, with warm_phase and warm_outer between do_round and warm_inner).
 *
 * An inline frame: warm_phase() is inlined into do_round(), so it has no
 * symbol and no frame of its own, yet the DWARF line table and inline
 * entries name it.  cycread shows it as an inline frame between do_round
 * and warm_outer ("warm_phase (inlined)", "warm_phase_[i]" when folded),
 * with the source line of its call to warm_outer.
 *
 * The leaf-caller case: built with -O2 -fno-omit-frame-pointer, GCC still
 * omits the frame record of leaf functions on arm64, so when the sample
 * lands in hot_loop x29 points at do_round's caller's frame and a pure
 * frame-pointer walk yields main -> hot_loop: do_round is missing.  cycread
 * restores it from LR (see tool/leaf.h); "cycread --no-leaf-repair" shows
 * the broken chain for comparison.  x86_64 has no link register, so there
 * the work functions keep a frame record (demo_frame(), work.h).
 *
 * Usage: demo [ROUNDS]  (default 600, about 5 s in the arm64 QEMU guest)
 */
#include <stdio.h>
#include <stdlib.h>

#include "work.h"

#define NOINLINE __attribute__((noinline))

NOINLINE unsigned long hot_loop(unsigned long x, unsigned long units)
{
	demo_frame();
	DEMO_WORK(x, units * DEMO_UNIT);
	return x;
}

NOINLINE unsigned long warm_inner(unsigned long x, unsigned long units)
{
	demo_frame();
	DEMO_WORK(x, units * DEMO_UNIT);
	return x;
}

NOINLINE unsigned long warm_outer(unsigned long x, unsigned long units)
{
	int i;

	for (i = 0; i < 10; i++)
		x = warm_inner(x, units / 10);
	return x;
}

NOINLINE unsigned long tiny_leaf(unsigned long x, unsigned long units)
{
	demo_frame();
	DEMO_WORK(x, units * DEMO_UNIT);
	return x;
}

static inline __attribute__((always_inline)) unsigned long warm_phase(unsigned long x)
{
	return warm_outer(x, 150);
}

NOINLINE static unsigned long do_round(unsigned long x)
{
	x = hot_loop(x, 500);
	x = lib_checksum(x, 300);
	x = warm_phase(x);
	x = tiny_leaf(x, 50);
	/* work after the last call: no tail call, so do_round stays on the stack */
	__asm__ volatile("" : "+r"(x));
	return x + 1;
}

int main(int argc, char **argv)
{
	unsigned long rounds = 600, x = 88172645463325252UL, i;
	char *end;

	if (argc > 1) {
		rounds = strtoul(argv[1], &end, 0);
		if (*end || !rounds) {
			fprintf(stderr, "usage: %s [ROUNDS]\n", argv[0]);
			return 2;
		}
	}
	for (i = 0; i < rounds; i++)
		x = do_round(x);
	printf("demo: %lu rounds, checksum %lx\n", rounds, x);
	return 0;
}
