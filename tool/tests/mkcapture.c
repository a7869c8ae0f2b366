// SPDX-License-Identifier: GPL-2.0
/*
 * mkcapture FILE [SAMPLES] - write the synthetic session of synth.h as a
 * capture file: the input of the golden report tests and the fuzzers' seed.
 * With SAMPLES, its samples are repeated (later in time) until there are
 * that many, for measuring report time against profile size.
 */
#include <errno.h>
#include <stdlib.h>

#include "synth.h"
#include "../capture.h"

int main(int argc, char **argv)
{
	struct report rep;
	struct resolver r;
	struct profile p;
	struct maps ms;
	int ret;

	unsigned long want = argc > 2 ? strtoul(argv[2], NULL, 0) : 0;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: mkcapture FILE [SAMPLES]\n");
		return 2;
	}
	prof_init(&p);
	maps_init(&ms, false);
	res_init(&r, &ms, false);
	synth_build(&p, &ms, &r);
	synth_scale(&p, want);
	report_build(&rep, &p, &r);
	ret = capture_write(argv[1], &rep, &ms);
	if (ret)
		fprintf(stderr, "mkcapture: %s: %s\n", argv[1], strerror(-ret));
	report_free(&rep);
	res_free(&r);
	maps_free(&ms);
	prof_free(&p);
	return ret ? 1 : 0;
}
