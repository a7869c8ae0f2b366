/* SPDX-License-Identifier: GPL-2.0 */
/*
 * synth.h - a small, fully deterministic session built in memory: an arm64
 * process "app" with an executable, libc, JIT code and kernel frames, whose
 * samples exercise every report feature (leaf-caller repair, demangling,
 * shared-library and kernel frames, JIT, unknown addresses, LOST, EXEC,
 * EXIT).  test_capture and mkcapture (the golden tests' input) share it.
 *
 * Periods grow with time (250 cycles per ns of timestamp), as frequency
 * mode's do while the kernel settles on a rate, so shares by period and by
 * sample count differ and the reports show which one they use.
 */
#ifndef CYCREAD_SYNTH_H
#define CYCREAD_SYNTH_H

#include <string.h>

#include "../resolve.h"

#define SY_PID 100
#define SY_APP 0x555500000000ULL
#define SY_LIBC 0x7f0000000000ULL
#define SY_JIT 0x7e0000000000ULL
#define SY_K 0xffff800008000000ULL

static struct dso *sy_dso(struct maps *ms, const char *path, u64 size, u8 id_byte)
{
	struct dso_seg seg = { .vaddr = 0, .memsz = size, .offset = 0, .filesz = size, .flags = 5 };
	struct dso *d = dso_new_embedded(path);

	d->e_type = 3; /* ET_DYN */
	d->e_machine = 183; /* EM_AARCH64 */
	d->build_id_len = 20;
	memset(d->build_id, id_byte, 20);
	dso_add_seg(d, &seg);
	VEC_GROW(ms->dsos, ms->nr_dsos, ms->alloc_dsos);
	ms->dsos[ms->nr_dsos++] = d;
	return d;
}

static void sy_map(struct maps *ms, u64 start, u64 end, const char *path, u32 kind, struct dso *d)
{
	struct map m = { .pid = SY_PID,
			 .start = start,
			 .end = end,
			 .prot = MAP_R | MAP_X,
			 .kind = kind,
			 .path = (char *)path,
			 .dso = d };

	maps_add(ms, &m);
}

struct sy_rec {
	struct cycsample_sample s;
	u64 frames[132]; /* up to 128 user and 4 kernel frames */
};

static void sy_add(struct profile *p, const void *rec)
{
	const char *why;
	u32 size;

	prof_add_record(p, rec, ((const struct cycsample_record_header *)rec)->size, 0, &size,
			&why);
}

static void sy_sample(struct profile *p, u64 time, u32 cpu, u32 flags, u64 lr, const u64 *kf,
		      u16 nk, const u64 *uf, u16 nu)
{
	struct sy_rec r;

	memset(&r, 0, sizeof(r));
	r.s.hdr.type = CYCSAMPLE_REC_SAMPLE;
	r.s.hdr.size = sizeof(r.s) + 8 * (nk + nu);
	r.s.time = time;
	r.s.pid = SY_PID;
	r.s.tid = SY_PID + (cpu ? 1 : 0);
	r.s.cpu = cpu;
	r.s.flags = flags;
	r.s.period = 250 * time;
	r.s.pc = nk ? kf[0] : uf[0];
	r.s.sp = 0xfffff000;
	r.s.fp = 0xfffff010;
	r.s.lr = lr;
	r.s.nr_kernel = nk;
	r.s.nr_user = nu;
	r.s.arch = CYCSAMPLE_ARCH_ARM64;
	if (nk)
		memcpy(r.frames, kf, 8 * nk);
	if (nu)
		memcpy(r.frames + nk, uf, 8 * nu);
	sy_add(p, &r);
}

static void sy_task(struct profile *p, u32 type, u64 time, const char *comm)
{
	struct cycsample_task_event t;

	memset(&t, 0, sizeof(t));
	t.hdr.type = type;
	t.hdr.size = sizeof(t);
	t.time = time;
	t.pid = t.tid = SY_PID;
	strncpy(t.comm, comm, sizeof(t.comm) - 1);
	sy_add(p, &t);
}

static void sy_lost(struct profile *p, u64 time, u64 n)
{
	struct cycsample_lost l = { .hdr = { CYCSAMPLE_REC_LOST, sizeof(l) },
				    .time = time,
				    .lost = n };

	sy_add(p, &l);
}

static void synth_build(struct profile *p, struct maps *ms, struct resolver *r)
{
	struct dso *app, *libc;
	struct prof_meta *m = &p->meta;
	/* return addresses: main after its call to do_work, libc after main */
	u64 in_main = SY_APP + 0x1010, in_libc = SY_LIBC + 0x2010, in_do_work = SY_APP + 0x1110;
	u64 in_compute = SY_APP + 0x1210;
	u64 u[8], k[4];
	int i;

	m->tool_version = xstrdup("test");
	m->kernel_release = xstrdup("6.1.0-test-arm64");
	m->machine = xstrdup("aarch64");
	m->hostname = xstrdup("testhost");
	m->command = xstrdup("./app --fast");
	memcpy(m->pmu_name, "armv8_pmuv3", 12);
	m->event = CYCSAMPLE_EVENT_HW_CYCLES;
	m->config_flags = CYCSAMPLE_CFG_FREQ | CYCSAMPLE_CFG_USER_CHAIN |
			  CYCSAMPLE_CFG_KERNEL_CHAIN;
	m->target_type = CYCSAMPLE_TARGET_PID;
	m->target = SY_PID;
	m->sample_period = 999;
	m->start_time = 1700000000;
	m->duration_ns = 2500000000ULL;
	m->samples = 16;
	m->lost = 3;
	m->throttled = 1;
	m->cmd_status = 0;
	prof_set_comm(p, SY_PID, "app");

	app = sy_dso(ms, "/usr/bin/app", 0x10000, 0xaa);
	dso_add_sym(app, 0x1000, 0x1100, "main", 8);
	dso_add_sym(app, 0x1100, 0x1200, "do_work", 8);
	dso_add_sym(app, 0x1200, 0x1300, "compute", FS_OFF_NONE);
	dso_add_sym(app, 0x1300, 0x1400, "_ZN2ns6Widget4spinEi", 8);
	dso_add_sym(app, 0x1400, 0x1500, "name;with;semicolons", FS_OFF_NONE);
	dso_sort_syms(app);
	libc = sy_dso(ms, "/lib/aarch64-linux-gnu/libc.so.6", 0x100000, 0xbb);
	dso_add_sym(libc, 0x2000, 0x2100, "__libc_start_main", 8);
	dso_add_sym(libc, 0x3000, 0x3100, "memcpy", FS_OFF_NONE);
	dso_sort_syms(libc);
	sy_map(ms, SY_APP, SY_APP + 0x10000, "/usr/bin/app", MAP_FILE, app);
	sy_map(ms, SY_LIBC, SY_LIBC + 0x100000, "/lib/aarch64-linux-gnu/libc.so.6", MAP_FILE, libc);
	sy_map(ms, SY_JIT, SY_JIT + 0x10000, "", MAP_ANON, NULL);
	jitmap_add(res_jitmap(r, SY_PID, true), SY_JIT + 0x1000, SY_JIT + 0x1100, "jit::hot_path");
	jitmap_finish(res_jitmap(r, SY_PID, true));
	ksyms_add(&r->ksyms, SY_K + 0x1000, SY_K + 0x1100, 'T', "el0_svc", NULL);
	ksyms_add(&r->ksyms, SY_K + 0x2000, SY_K + 0x2100, 'T', "do_sys_read", NULL);
	ksyms_add(&r->ksyms, SY_K + 0x9000, SY_K + 0x9100, 't', "cycsample_handler", "cycsample");
	ksyms_finish(&r->ksyms);
	r->ksyms_ready = true;

	sy_task(p, CYCSAMPLE_REC_EXEC, 1000, "app");
	/* 6 samples in compute(), a frameless leaf: do_work only in LR */
	for (i = 0; i < 6; i++) {
		u[0] = SY_APP + 0x1200 + 4 * i;
		u[1] = in_main;
		u[2] = in_libc;
		sy_sample(p, 2000 + 100 * i, i & 1, CYCSAMPLE_SAMPLE_USER, in_do_work, NULL, 0, u,
			  3);
	}
	/* 3 in memcpy called from compute (leaf again: compute only in LR) */
	for (i = 0; i < 3; i++) {
		u[0] = SY_LIBC + 0x3008;
		u[1] = in_do_work;
		u[2] = in_main;
		u[3] = in_libc;
		sy_sample(p, 3000 + 100 * i, i & 1, CYCSAMPLE_SAMPLE_USER, in_compute, NULL, 0, u,
			  4);
	}
	sy_lost(p, 3500, 3);
	/* 2 in the kernel, in a read() syscall of do_work */
	for (i = 0; i < 2; i++) {
		k[0] = SY_K + 0x2010 + 4 * i;
		k[1] = SY_K + 0x1020;
		u[0] = SY_APP + 0x1120;
		u[1] = in_main;
		u[2] = in_libc;
		sy_sample(p, 4000 + 100 * i, 1, CYCSAMPLE_SAMPLE_KERNEL, SY_K + 0x1020, k, 2, u, 3);
	}
	/* C++ method, with a frame record already linked: no repair */
	u[0] = SY_APP + 0x1320;
	u[1] = in_main;
	u[2] = in_libc;
	sy_sample(p, 5000, 0, CYCSAMPLE_SAMPLE_USER, in_main, NULL, 0, u, 3);
	/* JIT code, a name with semicolons, an unmapped address, a throttled one */
	u[0] = SY_JIT + 0x1040;
	u[1] = in_main;
	sy_sample(p, 5100, 0, CYCSAMPLE_SAMPLE_USER, 0, NULL, 0, u, 2);
	u[0] = SY_APP + 0x1404;
	u[1] = in_main;
	sy_sample(p, 5200, 1, CYCSAMPLE_SAMPLE_USER, in_main, NULL, 0, u, 2);
	u[0] = 0x1234;
	sy_sample(p, 5300, 0, CYCSAMPLE_SAMPLE_USER, 0, NULL, 0, u, 1);
	u[0] = SY_APP + 0x1204;
	u[1] = in_main;
	u[2] = in_libc;
	sy_sample(p, 5400, 1,
		  CYCSAMPLE_SAMPLE_USER | CYCSAMPLE_SAMPLE_THROTTLED | CYCSAMPLE_SAMPLE_NMI,
		  in_do_work, NULL, 0, u, 3);
	/* a module's kernel frame */
	k[0] = SY_K + 0x9010;
	sy_sample(p, 5500, 1, CYCSAMPLE_SAMPLE_KERNEL, 0, k, 1, NULL, 0);
	sy_task(p, CYCSAMPLE_REC_EXIT, 6000, "app");
	prof_sort(p);
}

/* Repeat the samples of @p, each round @shift ns later, until there are @want of them. */
static inline void synth_scale(struct profile *p, unsigned long want, u64 shift)
{
	size_t n = p->nr_ev, i;
	u64 round = 1;
	struct sy_rec copy;

	while (want && p->nr_samples < want) {
		for (i = 0; i < n && p->nr_samples < want; i++) {
			const struct cycsample_sample *s = prof_rec(p, &p->ev[i]);

			if (p->ev[i].type != CYCSAMPLE_REC_SAMPLE)
				continue;
			memcpy(&copy, s, s->hdr.size);
			copy.s.time += round * shift;
			sy_add(p, &copy);
		}
		round++;
	}
	prof_sort(p);
}

#endif /* CYCREAD_SYNTH_H */
