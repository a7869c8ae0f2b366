// SPDX-License-Identifier: GPL-2.0
/*
 * mkcapture FILE [SAMPLES [SHIFT]] - write the synthetic session of synth.h
 * as a capture file: the input of the golden report tests and the fuzzers'
 * seed.  With SAMPLES, its samples are repeated until there are that many
 * (for measuring report time against profile size), each round SHIFT ns
 * (default 10000) after the one before (1000000000: one round per second,
 * for the histogram and --time tests).
 *
 * mkcapture --elf BIN FILE - a session with one sample every 8 bytes of
 * every function of BIN (mapped whole at 0x10000000), so the capture holds
 * BIN's symbols and the source lines and inline frames of those addresses:
 * the fuzzers' seed for the DSOS and LINES sections.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "synth.h"
#include "../capture.h"

#define ELF_BASE 0x10000000ULL

static void elf_session(struct profile *p, struct maps *ms, const char *bin)
{
	struct stat st;
	struct map *m;
	char *text;
	u32 i, s;
	u64 v, t = 1;

	if (stat(bin, &st))
		return;
	text = xasprintf("%llx-%llx r-xp 00000000 00:00 0 %s\n", ELF_BASE,
			 ELF_BASE + ((st.st_size + 4095) & ~4095ULL), bin);
	maps_read(ms, SY_PID, 0, text);
	free(text);
	m = maps_find(ms, SY_PID, 0, ELF_BASE);
	if (!m || !m->dso)
		return;
	dso_load_syms(m->dso, NULL);
	prof_set_comm(p, SY_PID, "elf");
	for (i = 0; i < m->dso->nr_syms; i++) {
		for (v = m->dso->syms[i].start; v < m->dso->syms[i].end; v += 8) {
			for (s = 0; s < m->dso->nr_segs; s++) {
				const struct dso_seg *g = &m->dso->segs[s];
				u64 u;

				if (!(g->flags & 1) || v < g->vaddr || v - g->vaddr >= g->filesz)
					continue;
				u = ELF_BASE + v - g->vaddr + g->offset;
				sy_sample(p, t++, 0, CYCSAMPLE_SAMPLE_USER, 0, NULL, 0, &u, 1);
				break;
			}
		}
	}
	prof_sort(p);
}

int main(int argc, char **argv)
{
	struct report rep;
	struct resolver r;
	struct profile p;
	struct maps ms;
	int ret;

	unsigned long want = argc > 2 ? strtoul(argv[2], NULL, 0) : 0;
	u64 shift = argc > 3 ? strtoull(argv[3], NULL, 0) : 10000;
	bool elf = argc == 4 && !strcmp(argv[1], "--elf");

	if (argc < 2 || argc > 4) {
		fprintf(stderr,
			"usage: mkcapture FILE [SAMPLES [SHIFT]] | mkcapture --elf BIN FILE\n");
		return 2;
	}
	prof_init(&p);
	maps_init(&ms, false);
	res_init(&r, &ms, false);
	if (elf) {
		elf_session(&p, &ms, argv[2]);
		argv[1] = argv[3];
	} else {
		synth_build(&p, &ms, &r);
		synth_scale(&p, want, shift);
	}
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
