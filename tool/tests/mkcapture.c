// SPDX-License-Identifier: GPL-2.0
/*
 * mkcapture FILE [SAMPLES [SHIFT]] - write the synthetic session of synth.h
 * as a capture file: the input of the golden report tests and the fuzzers'
 * seed.  With SAMPLES, its samples are repeated until there are that many
 * (for measuring report time against profile size), each round SHIFT ns
 * (default 10000) after the one before (1000000000: one round per second,
 * for the histogram and --time tests).
 *
 * mkcapture --deep SAMPLES DEPTH FILE [MAPS [UNMAPPED]] - a large session for
 * the host benchmark: SAMPLES samples of DEPTH user frames each (10 % also
 * with three kernel frames) over 2000 functions in four objects, each caller
 * choosing among six callees, so the stacks branch like a real program's and
 * most deep ones are distinct (many frames narrower than a pixel in a flame
 * graph); MAPS more small mappings in the process; with UNMAPPED 1 the
 * fourth object has no mapping (a quarter of the frames unmapped).
 * Deterministic: the same arguments give the same file.
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

#define DEEP_FUNCS 500 /* per object */
#define DEEP_OBJS 4
#define DEEP_BRANCH 6
#define DEEP_KSYMS 200

static void deep_session(struct profile *p, struct maps *ms, struct resolver *r,
			 unsigned long samples, unsigned int depth, unsigned long extra_maps,
			 bool unmapped)
{
	static const char *const paths[DEEP_OBJS] = { "/usr/bin/bigapp", "/usr/lib/liba.so",
						      "/usr/lib/libb.so", "/usr/lib/libc.so.6" };
	u64 u[128], k[3], seed = 12345, fn;
	struct dso *d[DEEP_OBJS];
	unsigned long i;
	char name[64];
	u32 o, f, j;

	if (depth > 120)
		depth = 120;
	prof_set_comm(p, SY_PID, "bigapp");
	for (o = 0; o < DEEP_OBJS; o++) {
		d[o] = sy_dso(ms, paths[o], DEEP_FUNCS * 0x100 + 0x1000, 0x10 + o);
		for (f = 0; f < DEEP_FUNCS; f++) {
			snprintf(name, sizeof(name), "%s_fn%03u", o ? "lib" : "app", f);
			name[2] = o ? 'a' + o - 1 : 'p';
			dso_add_sym(d[o], 0x1000 + f * 0x100, 0x1100 + f * 0x100, name, 8);
		}
		dso_sort_syms(d[o]);
		if (!unmapped || o + 1 < DEEP_OBJS)
			sy_map(ms, SY_APP + ((u64)o << 32),
			       SY_APP + ((u64)o << 32) + DEEP_FUNCS * 0x100 + 0x1000, paths[o],
			       MAP_FILE, d[o]);
	}
	for (i = 0; i < extra_maps; i++)
		sy_map(ms, SY_JIT + 0x2000 * i, SY_JIT + 0x2000 * i + 0x1000, "", MAP_ANON, NULL);
	for (f = 0; f < DEEP_KSYMS; f++) {
		snprintf(name, sizeof(name), "kernel_fn%03u", f);
		ksyms_add(&r->ksyms, SY_K + f * 0x100, SY_K + f * 0x100 + 0x100, 'T', name, NULL);
	}
	ksyms_finish(&r->ksyms);
	r->ksyms_ready = true;
	for (i = 0; i < samples; i++) {
		/* outermost first: app_fn000 (main), then each caller's callee */
		for (j = 0, fn = 0; j < depth; j++) {
			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			/* 16 addresses per function: return addresses and pcs */
			u[depth - 1 - j] = SY_APP + ((fn / DEEP_FUNCS) << 32) + 0x1000 +
					   (fn % DEEP_FUNCS) * 0x100 + 0x10 * ((seed >> 20) % 16) +
					   4;
			fn = hash64(fn * DEEP_BRANCH + (seed >> 33) % DEEP_BRANCH) %
			     (DEEP_FUNCS * DEEP_OBJS);
		}
		for (j = 0; j < 3; j++)
			k[j] = SY_K + ((seed >> (8 * j)) % DEEP_KSYMS) * 0x100 + 0x20;
		sy_sample(p, 1000 + i, i & 1,
			  i % 10 ? CYCSAMPLE_SAMPLE_USER : CYCSAMPLE_SAMPLE_KERNEL, 0, k,
			  i % 10 ? 0 : 3, u, depth);
	}
	prof_sort(p);
}

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
	bool deep = argc >= 5 && argc <= 7 && !strcmp(argv[1], "--deep");

	if (argc < 2 || (argc > 4 && !deep)) {
		fprintf(stderr,
			"usage: mkcapture FILE [SAMPLES [SHIFT]] | mkcapture --elf BIN FILE | "
			"mkcapture --deep SAMPLES DEPTH FILE [MAPS [UNMAPPED]]\n");
		return 2;
	}
	prof_init(&p);
	maps_init(&ms, false);
	res_init(&r, &ms, false);
	if (elf) {
		elf_session(&p, &ms, argv[2]);
		argv[1] = argv[3];
	} else if (deep) {
		deep_session(&p, &ms, &r, strtoul(argv[2], NULL, 0), strtoul(argv[3], NULL, 0),
			     argc > 5 ? strtoul(argv[5], NULL, 0) : 0,
			     argc > 6 && strtoul(argv[6], NULL, 0));
		argv[1] = argv[4];
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
