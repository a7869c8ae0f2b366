// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_capture - libFuzzer target: read a capture file and, when it parses,
 * build and print every report from it (to /dev/null).  --symfs points
 * nowhere so a hostile file cannot make us open real files.
 */
#include <stdio.h>
#include <stdlib.h>

#include "../capture.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	static FILE *null;
	struct report_opts o = { .keys = { KEY_COMM, KEY_DSO, KEY_SYM }, .nr_keys = 3 };
	struct report rep;
	struct resolver r;
	struct profile p;
	struct maps ms;
	char err[256];
	size_t pb_len;
	u8 *pb;

	if (!null)
		null = fopen("/dev/null", "w");
	prof_init(&p);
	maps_init(&ms, false);
	res_init(&r, &ms, false);
	if (!capture_read_mem(data, size, &p, &ms, &r, "/nonexistent-symfs", err, sizeof(err))) {
		report_build(&rep, &p, &r);
		report_header(&rep, null);
		report_top(&rep, &o, null);
		o.children = true;
		report_top(&rep, &o, null);
		report_footer(&rep, null);
		report_raw(&rep, &o, null);
		report_folded(&rep, null);
		report_svg(&rep, "/dev/null", "fuzz", NULL);
		report_pprof_mem(&rep, &pb, &pb_len);
		free(pb);
		report_free(&rep);
	}
	res_free(&r);
	maps_free(&ms);
	prof_free(&p);
	return 0;
}
