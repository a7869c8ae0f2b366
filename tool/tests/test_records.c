// SPDX-License-Identifier: GPL-2.0
/*
 * test_records - record validation, the ring drain protocol on synthetic
 * rings (wrap-around, LOST, EXEC, EXIT, corrupt sizes, a bad tail, records
 * in place), the queue of records held back (recqueue.h), the control page
 * checks, and the merge of several CPUs' records by time.
 */
#include <errno.h>
#include <stdlib.h>

#include "tap.h"
#include "../device.h"
#include "../records.h"
#include "../recqueue.h"

#define RING_SIZE 1024

/* A ring the way the module lays it out, producer side written here. */
struct test_ring {
	struct cycsample_ring_header hdr;
	u8 data[RING_SIZE];
	struct cs_ring r;
};

static void ring_init(struct test_ring *t, u32 cpu, u64 start)
{
	memset(t, 0, sizeof(*t));
	t->hdr.data_head = t->hdr.data_tail = start;
	t->hdr.data_size = RING_SIZE;
	t->r.hdr = &t->hdr;
	t->r.data = t->data;
	t->r.size = RING_SIZE;
	t->r.cpu = cpu;
}

/* The producer's half of the protocol; false when the record does not fit. */
static bool produce(struct test_ring *t, const void *rec, u32 size)
{
	u64 head = t->hdr.data_head, i;

	if (RING_SIZE - (head - t->hdr.data_tail) < size)
		return false;
	for (i = 0; i < size; i++)
		t->data[(head + i) & (RING_SIZE - 1)] = ((const u8 *)rec)[i];
	__atomic_store_n(&t->hdr.data_head, head + size, __ATOMIC_RELEASE);
	return true;
}

static u32 make_sample(void *buf, u64 time, u32 pid, u32 cpu, u16 nk, u16 nu)
{
	struct cycsample_sample *s = buf;
	u32 i, size = sizeof(*s) + 8 * (nk + nu);

	memset(s, 0, size);
	s->hdr.type = CYCSAMPLE_REC_SAMPLE;
	s->hdr.size = size;
	s->time = time;
	s->pid = s->tid = pid;
	s->cpu = cpu;
	s->flags = CYCSAMPLE_SAMPLE_USER;
	s->period = 1000;
	s->pc = 0x400000 + time;
	s->nr_kernel = nk;
	s->nr_user = nu;
	s->arch = CYCSAMPLE_ARCH_ARM64;
	for (i = 0; i < (u32)nk + nu; i++)
		s->frames[i] = 0x400000 + time + i;
	return size;
}

static u32 make_sample_pc(void *buf, u64 time, u32 pid, u32 cpu)
{
	struct cycsample_sample_pc *s = buf;

	memset(s, 0, sizeof(*s));
	s->hdr.type = CYCSAMPLE_REC_SAMPLE_PC;
	s->hdr.size = sizeof(*s);
	s->time = time;
	s->pid = pid;
	s->tid = pid + 1;
	s->cpu = cpu;
	s->flags = CYCSAMPLE_SAMPLE_USER | CYCSAMPLE_SAMPLE_THROTTLED;
	s->arch = CYCSAMPLE_ARCH_ARM64;
	s->pmu = 1;
	s->period = 1000 + time;
	s->pc = 0x400000 + time;
	return sizeof(*s);
}

static u32 make_task(void *buf, u32 type, u64 time, u32 pid, const char *comm)
{
	struct cycsample_task_event *t = buf;

	memset(t, 0, sizeof(*t));
	t->hdr.type = type;
	t->hdr.size = sizeof(*t);
	t->time = time;
	t->pid = t->tid = pid;
	strncpy(t->comm, comm, sizeof(t->comm) - 1);
	return sizeof(*t);
}

static u32 make_lost(void *buf, u64 time, u64 lost)
{
	struct cycsample_lost *l = buf;

	l->hdr.type = CYCSAMPLE_REC_LOST;
	l->hdr.size = sizeof(*l);
	l->time = time;
	l->lost = lost;
	return sizeof(*l);
}

static int to_profile(void *ctx, const void *rec, u32 size, u32 cpu)
{
	const char *why;
	u32 sz;

	prof_add_record(ctx, rec, size, cpu, &sz, &why);
	return 0;
}

static void test_check(void)
{
	u64 buf[64] = { 0 };
	struct cycsample_record_header *h = (void *)buf;
	struct cycsample_sample *smp = (void *)buf;
	const char *why = NULL;
	u32 size;

	ok(rec_check(buf, 4, &size, &why) == REC_CORRUPT, "4 bytes: header cut short");
	h->type = CYCSAMPLE_REC_LOST;
	h->size = 12;
	ok(rec_check(buf, sizeof(buf), &size, &why) == REC_CORRUPT, "size not a multiple of 8");
	h->size = 0;
	ok(rec_check(buf, sizeof(buf), &size, &why) == REC_CORRUPT, "size 0");
	h->size = 8;
	ok(rec_check(buf, sizeof(buf), &size, &why) == REC_CORRUPT, "LOST shorter than its type");
	h->size = 1024;
	ok(rec_check(buf, sizeof(buf), &size, &why) == REC_CORRUPT, "size beyond the data");
	h->type = 77;
	h->size = 16;
	ok(rec_check(buf, sizeof(buf), &size, &why) == REC_SKIP && size == 16,
	   "unknown type with a sane size is skipped, not corrupt");
	h->type = 0;
	ok(rec_check(buf, sizeof(buf), &size, &why) == REC_CORRUPT, "type 0 is corrupt");
	size = make_sample(buf, 1, 1, 0, 2, 3);
	ok(rec_check(buf, sizeof(buf), &size, &why) == REC_VALID, "well-formed sample");
	smp->nr_user = 9;
	ok(rec_check(buf, sizeof(buf), &size, &why) == REC_CORRUPT,
	   "frame counts running past the record");
	smp->nr_user = 1;
	ok(rec_check(buf, sizeof(buf), &size, &why) == REC_VALID,
	   "a sample longer than its frames (a newer module's extra fields) is valid");
}

/*
 * dev_lost() is read after a drain: a drop the module counted in a ring's
 * header but has not told by a LOST record yet must show in the sum.
 */
static void test_dev_lost(void)
{
	struct test_ring a, b;
	struct cs_ring rings[2];
	struct cs_device d = { .fd = -1, .rings = rings, .nr_rings = 2 };

	ring_init(&a, 0, 0);
	ring_init(&b, 1, 0);
	rings[0] = a.r;
	rings[1] = b.r;
	is_u64(dev_lost(&d), 0, "dev_lost: fresh rings, nothing dropped");
	a.hdr.lost = 3;
	b.hdr.lost = 5;
	is_u64(dev_lost(&d), 8, "dev_lost: both rings' header counts, before any LOST record");
}

static void test_wrap(void)
{
	struct test_ring t;
	struct profile p;
	u64 buf[64];
	u8 bounce[RING_SIZE];
	const struct cycsample_sample *s;
	struct rec_sample v;
	u32 size;
	long n;

	/* start near the end so the second record wraps */
	ring_init(&t, 3, RING_SIZE * 5 - 40);
	prof_init(&p);
	size = make_lost(buf, 5, 7);
	ok(produce(&t, buf, size), "LOST record written");
	size = make_sample(buf, 10, 42, 3, 1, 4);
	ok(produce(&t, buf, size), "sample written across the end of the ring");
	n = ring_drain(&t.r, to_profile, &p, bounce, 0);
	is_u64(n, 2, "two records drained");
	is_u64(t.hdr.data_tail, t.hdr.data_head, "tail published at head");
	is_u64(p.nr_samples, 1, "one sample");
	is_u64(p.lost_samples, 7, "LOST count taken");
	s = prof_rec(&p, &p.ev[1]);
	rec_sample_view(s, &v);
	is_u64(v.s->pid, 42, "wrapped sample: pid intact");
	is_u64(v.uframes[3], 0x400000 + 10 + 4, "wrapped sample: last frame intact");
	is_u64(p.ev[1].cpu, 3, "sample keeps its cpu");

	/* fill until full: the producer must refuse, the reader frees space */
	size = make_sample(buf, 20, 42, 3, 0, 10);
	while (produce(&t, buf, size))
		;
	ok(!produce(&t, buf, size), "ring full");
	n = ring_drain(&t.r, to_profile, &p, bounce, 0);
	ok(n > 0 && produce(&t, buf, size), "drain makes room again");
	prof_free(&p);
}

/* What a drain callback saw: where each record was and what it held. */
struct seen {
	const u8 *where[8];
	u64 first_word[8];
	u32 size[8], cpu[8];
	u32 n;
	int stop_at; /* return -EIO at this record (or never: -1) */
};

static int note_record(void *ctx, const void *rec, u32 size, u32 cpu)
{
	struct seen *w = ctx;

	if ((int)w->n == w->stop_at)
		return -EIO;
	if (w->n < 8) {
		w->where[w->n] = rec;
		memcpy(&w->first_word[w->n], (const u8 *)rec + 8, 8);
		w->size[w->n] = size;
		w->cpu[w->n] = cpu;
	}
	w->n++;
	return 0;
}

static void test_in_place(void)
{
	struct seen w = { .stop_at = -1 }, c = { .stop_at = -1 };
	struct test_ring t;
	u8 bounce[RING_SIZE];
	u64 buf[64];
	u32 size;

	/* three records, the third across the end of the ring (16 bytes before it) */
	size = make_sample(buf, 10, 7, 2, 0, 2);
	ring_init(&t, 2, RING_SIZE * 3 - size - sizeof(struct cycsample_lost) - 16);
	produce(&t, buf, size);
	produce(&t, buf, make_lost(buf, 11, 3));
	size = make_sample(buf, 12, 7, 2, 0, 4);
	produce(&t, buf, size);
	is_u64(ring_drain(&t.r, note_record, &w, bounce, RING_IN_PLACE), 3,
	       "RING_IN_PLACE: three records drained");
	ok(w.where[0] == t.data + RING_SIZE - w.size[0] - w.size[1] - 16 &&
		   w.where[1] == w.where[0] + w.size[0],
	   "records that do not wrap are given where they lie in the ring");
	ok(w.where[2] == bounce, "the record across the end comes copied into the bounce");
	is_u64(w.first_word[2], 12, "... whole (its time)");
	is_u64(t.hdr.data_tail, t.hdr.data_head, "tail published at head");

	/* the default copies every record */
	ring_init(&t, 2, 0);
	produce(&t, buf, size);
	ring_drain(&t.r, note_record, &c, bounce, 0);
	ok(c.n == 1 && c.where[0] == bounce, "without the flag the record is copied");
}

static int hold(void *ctx, const void *rec, u32 size, u32 cpu)
{
	rq_push(ctx, rec, size, cpu);
	return 0;
}

static void test_recqueue(void)
{
	struct seen w = { .stop_at = -1 }, x = { .stop_at = 1 };
	struct recqueue q = { 0 };
	struct test_ring t;
	struct profile a, b;
	u8 bounce[RING_SIZE];
	u64 buf[64], *big;
	u32 size, i, big_size = (2U << 20) + 64; /* larger than a chunk */
	bool same = true;

	/* the same records decoded at once and after the queue: the same profile */
	prof_init(&a);
	prof_init(&b);
	rq_prepare(&q);
	/* aligned, so that a chunk can be one transparent huge page */
	ok(q.first && !((uintptr_t)q.first & ((2U << 20) - 1)), "the first chunk is 2 MiB aligned");
	for (i = 0; i < 40; i++) {
		ring_init(&t, i % 3, RING_SIZE * i - 8 * i);
		size = i % 5 ? make_sample(buf, 100 + i, 30 + i % 4, i % 3, i % 3, i % 7)
			     : make_task(buf, CYCSAMPLE_REC_EXEC, 100 + i, 30 + i % 4, "p");
		produce(&t, buf, size);
		ring_drain(&t.r, to_profile, &a, bounce, 0);
		t.hdr.data_tail -= size; /* the same record again, for the queue */
		ring_drain(&t.r, hold, &q, bounce, RING_IN_PLACE);
	}
	is_u64(q.nr, 40, "40 records queued");
	is_u64(q.nr_samples, 32, "32 of them samples");
	is_u64(rq_replay(&q, to_profile, &b), 0, "replayed");
	is_u64(q.nr + q.len + q.nr_samples, 0, "the queue is empty after it");
	is_u64(q.nr_total, 40, "... and still counts what it held");
	is_u64(b.nr_ev, a.nr_ev, "as many events as decoded at once");
	for (i = 0; i < a.nr_ev && i < b.nr_ev; i++) {
		const struct cycsample_record_header *ha = prof_rec(&a, &a.ev[i]);
		const struct cycsample_record_header *hb = prof_rec(&b, &b.ev[i]);

		if (a.ev[i].cpu != b.ev[i].cpu || ha->size != hb->size || memcmp(ha, hb, ha->size))
			same = false;
	}
	ok(same, "every record the same, in the same order, with its cpu");
	prof_free(&a);
	prof_free(&b);

	/* a record larger than a chunk, between two small ones, 8-aligned */
	big = calloc(1, big_size);
	make_sample(buf, 1, 1, 0, 0, 1);
	rq_push(&q, buf, make_sample(buf, 1, 1, 0, 0, 1), 4);
	memcpy(big, buf, sizeof(struct cycsample_sample));
	((struct cycsample_record_header *)big)->size = big_size;
	big[big_size / 8 - 1] = 0x1234;
	rq_push(&q, big, big_size, 5);
	ok(!((uintptr_t)q.last & ((2U << 20) - 1)),
	   "a chunk for a record over 2 MiB is aligned too");
	rq_push(&q, buf, make_lost(buf, 2, 9), 6);
	is_u64(rq_replay(&q, note_record, &w), 0, "a queue with a record over a chunk replays");
	ok(w.n == 3 && w.size[1] == big_size && w.cpu[0] == 4 && w.cpu[1] == 5 && w.cpu[2] == 6,
	   "sizes and cpus kept");
	ok(!((uintptr_t)w.where[0] % 8) && !((uintptr_t)w.where[1] % 8) &&
		   !((uintptr_t)w.where[2] % 8),
	   "records handed on 8-aligned");
	free(big);

	/* a record whose size does not fit its entry ends it, counted */
	make_sample(buf, 1, 1, 0, 0, 1);
	rq_push(&q, buf, 16, 0);
	rq_push(&q, buf, make_lost(buf, 2, 9), 1);
	w.n = 0;
	is_u64(rq_replay(&q, note_record, &w), 0, "a queue with a record larger than its entry");
	ok(w.n == 1 && w.cpu[0] == 1, "... replays the entries after it");
	is_u64(q.corrupt, 1, "... and counts the one it dropped");

	/* a callback's error stops the replay and empties the queue */
	for (i = 0; i < 3; i++)
		rq_push(&q, buf, make_lost(buf, 3 + i, 1), 0);
	is_u64((u64)-rq_replay(&q, note_record, &x), EIO, "the callback's error is returned");
	is_u64(x.n, 1, "... and no record after it is handed on");
	is_u64(q.len, 0, "the queue is empty after an error too");
	ok(!rq_full(&q), "an empty queue is not full");
	rq_free(&q);
	ok(!q.first && !q.len, "freed");
}

/* ring_drain_hold(): what it kept and what it decoded at once, in order */
struct hold_log {
	struct recqueue q;
	char ev[32]; /* K: a run kept, N: a record decoded now */
	u32 nr[32];
	u32 n;
	struct seen *w; /* the records replayed */
	u32 at_lost; /* replayed when the LOST record came, as the session does */
};

static bool hold_samples(void *ctx, const void *rec, u32 size)
{
	u32 pid;

	(void)ctx;
	return ring_sample_pid(rec, size, &pid);
}

static void hold_keep(void *ctx, const struct cs_ring *r, u64 from, u64 to, u32 nr)
{
	struct hold_log *l = ctx;

	rq_push_ring(&l->q, r, from, to, nr);
	l->ev[l->n] = 'K';
	l->nr[l->n++] = nr;
}

static int hold_now(void *ctx, const void *rec, u32 size, u32 cpu)
{
	struct hold_log *l = ctx;

	l->ev[l->n] = 'N';
	l->nr[l->n++] = ((const struct cycsample_record_header *)rec)->type;
	if (((const struct cycsample_record_header *)rec)->type == CYCSAMPLE_REC_LOST) {
		rq_replay(&l->q, note_record, l->w);
		l->at_lost = l->w->n;
	}
	return size && cpu == 3 ? 0 : -EINVAL;
}

static void test_drain_hold(void)
{
	static const struct ring_hold ops = { .fn = hold_now,
					      .wait = hold_samples,
					      .keep = hold_keep };
	struct seen w = { .stop_at = -1 };
	struct hold_log l = { .w = &w };
	struct test_ring t;
	u8 bounce[RING_SIZE];
	u64 buf[64];
	u32 i, size = make_sample(buf, 1, 7, 2, 0, 2);
	bool times = true;

	/* S S S LOST S S S EXEC S, the fifth sample across the end of the ring */
	ring_init(&t, 3, RING_SIZE * 5 - 3 * size - sizeof(struct cycsample_lost) - size - 16);
	for (i = 0; i < 9; i++) {
		if (i == 3)
			produce(&t, buf, make_lost(buf, 10 + i, 1));
		else if (i == 7)
			produce(&t, buf, make_task(buf, CYCSAMPLE_REC_EXEC, 10 + i, 7, "p"));
		else
			produce(&t, buf, make_sample(buf, 10 + i, 7, 2, 0, 2));
	}
	is_u64(ring_drain_hold(&t.r, &ops, &l, bounce), 9, "drain_hold: nine records drained");
	l.ev[l.n] = '\0';
	is_str(l.ev, "KNKNK", "runs kept before each record decoded at once, in order");
	ok(l.nr[0] == 3 && l.nr[1] == CYCSAMPLE_REC_LOST && l.nr[2] == 3 &&
		   l.nr[3] == CYCSAMPLE_REC_EXEC && l.nr[4] == 1,
	   "runs of 3, 3 and 1 samples around the LOST and EXEC records");
	is_u64(t.hdr.data_tail, t.hdr.data_head, "tail published at head");
	is_u64(l.at_lost, 3, "the three samples before the LOST record are replayed before it");
	is_u64(l.q.nr_total, 7, "seven samples queued");
	is_u64(rq_replay(&l.q, note_record, &w), 0, "the queue replays");
	is_u64(w.n, 7, "... record by record");
	is_u64(l.q.corrupt, 0, "... every size fitting its entry");
	for (i = 0; i < 7; i++)
		if (w.first_word[i] != 10 + i + (i >= 3) + (i >= 6) || w.size[i] != size ||
		    w.cpu[i] != 3)
			times = false;
	ok(times, "each sample whole, in order, with its ring's cpu (the one across the end too)");
	rq_free(&l.q);
}

/* ring_drain_hold(): @wait asked once per process's run of samples */
struct ask_log {
	struct hold_log l;
	char asked[16]; /* the pid digit of each sample asked about, X: another record */
	u32 n;
};

static bool hold_but_9(void *ctx, const void *rec, u32 size)
{
	const struct cycsample_sample *s = rec;
	struct ask_log *a = ctx;

	if (!hold_samples(ctx, rec, size)) {
		a->asked[a->n++] = 'X';
		return false;
	}
	a->asked[a->n++] = s->pid == UINT32_MAX ? 'M' : '0' + s->pid;
	return s->pid != 9 && s->pid != UINT32_MAX;
}

static void test_drain_hold_asks(void)
{
	static const struct ring_hold ops = { .fn = hold_now,
					      .wait = hold_but_9,
					      .keep = hold_keep };
	/* UINT32_MAX first: the drain's "no process yet", a real pid to ask about */
	static const u32 pid[] = { UINT32_MAX, 7, 7, 7, 8, 8, 0, 8, 9, 9, 7 };
	struct seen w = { .stop_at = -1 };
	struct ask_log a = { .l = { .w = &w } };
	struct test_ring t;
	u8 bounce[RING_SIZE];
	u64 buf[64];
	u32 i;

	ring_init(&t, 3, 0);
	for (i = 0; i < ARRAY_SIZE(pid); i++) {
		if (!pid[i])
			produce(&t, buf, make_task(buf, CYCSAMPLE_REC_EXEC, 10 + i, 8, "p"));
		else
			produce(&t, buf, make_sample(buf, 10 + i, pid[i], 3, 0, 1));
	}
	is_u64(ring_drain_hold(&t.r, &ops, &a, bounce), ARRAY_SIZE(pid), "drain_hold: 11 records");
	a.asked[a.n] = '\0';
	/*
	 * asked at 7 and at 8, not again for the same process; after the EXEC
	 * (decoded now) at 8 again; a refused sample does not count as accepted
	 */
	is_str(a.asked, "M78X8997", "wait asked only when the process changes or after a record");
	a.l.ev[a.l.n] = '\0';
	is_str(a.l.ev, "NKNKNNK",
	       "pid UINT32_MAX refused; runs 7 7 7 8 8, EXEC, 8, two refused, 7");
	is_u64(a.l.q.nr_total, 7, "seven samples queued");
	rq_free(&a.l.q);
}

/*
 * SAMPLE_PC records (CYCSAMPLE_CFG_PC_ONLY): checked at their own size,
 * held and asked about like samples, and kept in the profile as the SAMPLE
 * record they stand for, so that reports and captures know one kind.
 */
static void test_sample_pc(void)
{
	static const struct ring_hold ops = { .fn = hold_now,
					      .wait = hold_but_9,
					      .keep = hold_keep };
	static const u32 pid[] = { 7, 7, 8, 9 };
	struct seen w = { .stop_at = -1 };
	struct ask_log a = { .l = { .w = &w } };
	const struct cycsample_sample *s;
	struct cycsample_record_header *h;
	u64 buf[64], more[16];
	struct test_ring t;
	u8 bounce[RING_SIZE];
	struct profile p;
	const char *why;
	u32 i, size, len = 0;

	make_sample_pc(buf, 5, 7, 2);
	ok(rec_check(buf, sizeof(buf), &size, &why) == REC_VALID && size == 48,
	   "a SAMPLE_PC record of 48 bytes is valid");
	h = (void *)buf;
	h->size = 40;
	ok(rec_check(buf, sizeof(buf), &size, &why) == REC_CORRUPT,
	   "a SAMPLE_PC record of 40 bytes is corrupt");

	prof_init(&p);
	make_sample_pc(buf, 5, 7, 2);
	ok(prof_add_record(&p, buf, sizeof(buf), 4, &size, &why) == REC_VALID && size == 48,
	   "added; its size in the input is 48");
	s = prof_rec(&p, &p.ev[0]);
	ok(p.ev[0].type == CYCSAMPLE_REC_SAMPLE && s->hdr.type == CYCSAMPLE_REC_SAMPLE &&
		   s->hdr.size == sizeof(*s),
	   "kept as a SAMPLE record of 88 bytes");
	ok(s->time == 5 && s->pid == 7 && s->tid == 8 && s->cpu == 2 && p.ev[0].cpu == 2 &&
		   s->period == 1005 && s->pc == 0x400005 && s->arch == CYCSAMPLE_ARCH_ARM64 &&
		   s->pmu == 1 && s->flags == (CYCSAMPLE_SAMPLE_USER | CYCSAMPLE_SAMPLE_THROTTLED),
	   "time, pid, tid, cpu, period, pc, arch, pmu and flags carried over");
	ok(!s->sp && !s->fp && !s->lr && !s->nr_kernel && !s->nr_user && !s->nr_regs &&
		   !s->reserved2,
	   "no registers but the pc, no chains");
	is_u64(p.nr_samples, 1, "counted as a sample");
	is_u64(p.nr_throttled, 1, "... a throttled one");
	is_u64(p.pmu_samples[1], 1, "... of its PMU");
	make_sample_pc(buf, 7, 7, 2);
	((struct cycsample_sample_pc *)buf)->flags |= CYCSAMPLE_SAMPLE_KCHAIN_TRUNC;
	prof_add_record(&p, buf, sizeof(buf), 4, &size, &why);
	s = prof_rec(&p, &p.ev[p.nr_ev - 1]);
	ok(!(s->flags & CYCSAMPLE_SAMPLE_KCHAIN_TRUNC) && (s->flags & CYCSAMPLE_SAMPLE_USER),
	   "a chain flag in a SAMPLE_PC record (no chain was walked) is dropped");
	make_sample_pc(more, 6, 7, 2);
	h = (void *)more;
	h->size = 56;
	ok(prof_add_record(&p, more, sizeof(more), 4, &size, &why) == REC_VALID && size == 56 &&
		   ((const struct cycsample_sample *)prof_rec(&p, &p.ev[2]))->hdr.size == 88,
	   "a longer SAMPLE_PC record (a later ABI): its own size consumed, 88 kept");
	prof_free(&p);

	len = make_sample(buf, 10, 7, 1, 0, 1);
	len += make_sample_pc((u8 *)buf + len, 20, 7, 1);
	prof_init(&p);
	ok(!prof_borrow_records(&p, buf, len), "records with a SAMPLE_PC one: not borrowed");
	prof_free(&p);

	ring_init(&t, 3, RING_SIZE - 2 * 48 - 16);
	for (i = 0; i < ARRAY_SIZE(pid); i++)
		produce(&t, more, make_sample_pc(more, 10 + i, pid[i], 3));
	is_u64(ring_drain_hold(&t.r, &ops, &a, bounce), 4, "drain_hold: four SAMPLE_PC records");
	a.asked[a.n] = '\0';
	is_str(a.asked, "789", "wait asked once per process, as for samples");
	a.l.ev[a.l.n] = '\0';
	is_str(a.l.ev, "KN", "the run 7 7 8 kept, 9 decoded now");
	is_u64(a.l.q.nr_samples, 3, "three samples queued (one across the end of the ring)");
	prof_init(&p);
	rq_replay(&a.l.q, to_profile, &p);
	s = p.nr_ev == 3 ? prof_rec(&p, &p.ev[2]) : NULL;
	ok(s && p.nr_samples == 3 && s->hdr.type == CYCSAMPLE_REC_SAMPLE && s->pid == 8 &&
		   s->time == 12 && s->pc == 0x40000c,
	   "replayed into the profile as samples");
	prof_free(&p);
	rq_free(&a.l.q);
	memset(&a.l.q, 0, sizeof(a.l.q));
	rq_push(&a.l.q, more, make_sample_pc(more, 1, 7, 0), 0);
	is_u64(a.l.q.nr_samples, 1, "rq_push counts a SAMPLE_PC record as a sample");
	rq_free(&a.l.q);
}

static void test_task_events(void)
{
	struct test_ring t;
	struct profile p;
	u64 buf[64];
	struct cycsample_task_event *tev = (void *)buf;
	u8 bounce[RING_SIZE];
	u32 size;

	ring_init(&t, 0, 0);
	prof_init(&p);
	size = make_task(buf, CYCSAMPLE_REC_EXEC, 100, 55, "newprog");
	produce(&t, buf, size);
	size = make_sample(buf, 101, 55, 0, 0, 1);
	produce(&t, buf, size);
	size = make_task(buf, CYCSAMPLE_REC_EXIT, 102, 55, "newprog");
	produce(&t, buf, size);
	ring_drain(&t.r, to_profile, &p, bounce, 0);
	is_u64(p.nr_exec, 1, "EXEC decoded");
	is_u64(p.nr_exit, 1, "EXIT decoded");
	is_str(prof_comm(&p, 55), "newprog", "EXEC names the process");
	/* an unterminated comm must not be read past its 16 bytes */
	size = make_task(buf, CYCSAMPLE_REC_EXEC, 103, 56, "");
	memset(tev->comm, 'x', 16);
	produce(&t, buf, size);
	ring_drain(&t.r, to_profile, &p, bounce, 0);
	is_u64(strlen(prof_comm(&p, 56)), 16, "unterminated comm cut at 16 bytes");
	prof_free(&p);
}

static void test_corrupt(void)
{
	struct test_ring t;
	struct profile p;
	u64 buf[64];
	struct cycsample_record_header *hdr = (void *)buf;
	struct cycsample_sample *smp = (void *)buf;
	u8 bounce[RING_SIZE];
	u32 size;
	long n;

	ring_init(&t, 1, 0);
	prof_init(&p);
	size = make_sample(buf, 1, 9, 1, 0, 1);
	produce(&t, buf, size);
	size = make_lost(buf, 2, 1);
	hdr->size = 12; /* impossible */
	produce(&t, buf, 16);
	size = make_sample(buf, 3, 9, 1, 0, 1);
	produce(&t, buf, size);
	n = ring_drain(&t.r, to_profile, &p, bounce, 0);
	is_u64(n, 1, "records before the corrupt one are delivered");
	is_u64(t.r.corrupt, 1, "corruption counted");
	is_u64(t.hdr.data_tail, t.hdr.data_head, "the rest is skipped: tail moves to head");

	/* a head more than a ring ahead of the tail */
	t.hdr.data_head = t.hdr.data_tail + 2 * RING_SIZE;
	n = ring_drain(&t.r, to_profile, &p, bounce, 0);
	is_u64(n, 0, "impossible head: nothing delivered");
	is_u64(t.r.corrupt, 2, "and counted");
	is_u64(t.hdr.data_tail, t.hdr.data_head, "reader resynchronises at head");

	/* a record whose frame count lies: ring framing is fine, profile rejects it */
	size = make_sample(buf, 4, 9, 1, 0, 1);
	smp->nr_kernel = 100;
	produce(&t, buf, size);
	ring_drain(&t.r, to_profile, &p, bounce, 0);
	is_u64(p.nr_corrupt, 1, "sample with impossible frame counts rejected");
	is_u64(p.nr_samples, 1, "and not counted as a sample");
	prof_free(&p);
}

static void test_merge(void)
{
	struct test_ring a, b;
	struct profile p;
	u64 buf[64];
	u8 bounce[RING_SIZE];
	u64 last = 0;
	size_t i;
	bool sorted = true;

	ring_init(&a, 0, 0);
	ring_init(&b, 1, 0);
	prof_init(&p);
	produce(&a, buf, make_sample(buf, 10, 1, 0, 0, 1));
	produce(&a, buf, make_sample(buf, 30, 1, 0, 0, 1));
	produce(&a, buf, make_task(buf, CYCSAMPLE_REC_EXIT, 50, 1, "x"));
	produce(&b, buf, make_sample(buf, 20, 1, 1, 0, 1));
	produce(&b, buf, make_sample(buf, 50, 1, 1, 0, 1));
	ring_drain(&a.r, to_profile, &p, bounce, 0);
	ring_drain(&b.r, to_profile, &p, bounce, 0);
	prof_sort(&p);
	for (i = 0; i < p.nr_ev; i++) {
		if (p.ev[i].time < last)
			sorted = false;
		last = p.ev[i].time;
	}
	ok(sorted, "events of two CPUs merged in time order");
	is_u64(p.ev[1].cpu, 1, "cpu 1's sample between cpu 0's");
	is_u64(p.ev[p.nr_ev - 1].type, CYCSAMPLE_REC_EXIT, "EXIT stays last on a time tie");
	prof_free(&p);
}

static void test_control(void)
{
	size_t size = 4 * 4096;
	u8 *base = aligned_alloc(4096, size);
	struct cycsample_control *c = (void *)base;
	struct cs_ring *rings = NULL;
	const char *why = NULL;
	u32 nr = 0;

	memset(base, 0, size);
	c->magic = CYCSAMPLE_MAGIC;
	c->abi_version = CYCSAMPLE_ABI_VERSION;
	c->page_size = 4096;
	c->nr_rings = 1;
	c->control_size = 4096;
	c->rings[0].cpu = 0;
	c->rings[0].header_offset = 4096;
	c->rings[0].data_offset = 8192;
	c->rings[0].data_size = 8192;
	ok(!dev_parse_control(base, size, &rings, &nr, &why) && nr == 1, "valid control page");
	free(rings);
	c->rings[0].data_size = 16384;
	ok(dev_parse_control(base, size, &rings, &nr, &why) == -EPROTO,
	   "ring data past the mapping refused: %s", why);
	c->rings[0].data_size = 8192;
	c->abi_version = 99;
	ok(dev_parse_control(base, size, &rings, &nr, &why) == -EPROTO, "other ABI refused: %s",
	   why);
	c->abi_version = CYCSAMPLE_ABI_VERSION;
	c->magic = 0;
	ok(dev_parse_control(base, size, &rings, &nr, &why) == -EPROTO, "bad magic refused");
	c->magic = CYCSAMPLE_MAGIC;
	c->nr_rings = 1000;
	ok(dev_parse_control(base, size, &rings, &nr, &why) == -EPROTO,
	   "ring directory larger than the control area refused");
	free(base);
}

/* Whose pids the records carry: a module's feature bit and our PID namespace decide. */
static void test_pids_foreign(void)
{
	struct cycsample_info old = { 0 }, now = { .features = CYCSAMPLE_FEATURE_PIDNS };
	const u64 other = 4026532410ULL;

	ok(!dev_pids_foreign(&old, DEV_INIT_PID_NS_INO),
	   "older module, initial namespace: its pids are ours");
	ok(dev_pids_foreign(&old, other), "older module, another namespace: pids not ours");
	ok(!dev_pids_foreign(&now, other), "module with FEATURE_PIDNS: ours in any namespace");
	ok(!dev_pids_foreign(&old, 0), "namespace unknown (no /proc): no claim");
}

/* LOST counts come from the module (or a file): their sum saturates, never wraps. */
static void test_lost_saturates(void)
{
	struct profile p;
	const char *why;
	u64 buf[8];
	u32 size;

	prof_init(&p);
	size = make_lost(buf, 1, UINT64_MAX);
	prof_add_record(&p, buf, size, 0, &size, &why);
	size = make_lost(buf, 2, 5);
	prof_add_record(&p, buf, size, 0, &size, &why);
	is_u64(p.lost_samples, UINT64_MAX, "2^64-1 + 5 lost samples: 2^64-1, not 4");
	prof_free(&p);
}

/*
 * A capture's records are read in place: the same events and counts as
 * adding them one by one, no copy, and a copy as soon as one more is added;
 * an unknown or corrupt record leaves the profile to the one-by-one path.
 */
static void test_borrow(void)
{
	u64 buf[64], more[64];
	struct profile a, b;
	u8 *recs = (u8 *)buf;
	const char *why;
	u32 len = 0, size;
	size_t i;
	bool same = true;

	len += make_task(recs + len, CYCSAMPLE_REC_EXEC, 5, 7, "borrowed");
	len += make_sample(recs + len, 10, 7, 1, 1, 2);
	len += make_lost(recs + len, 20, 3);
	len += make_sample(recs + len, 30, 7, 0, 0, 3);
	prof_init(&a);
	prof_init(&b);
	for (i = 0; i < len; i += size)
		prof_add_record(&a, recs + i, len - i, 0, &size, &why);
	ok(prof_borrow_records(&b, recs, len), "valid records are borrowed");
	ok(b.recs == recs && b.recs_borrowed, "in place, not copied");
	is_u64(b.nr_ev, a.nr_ev, "as many events as added one by one");
	for (i = 0; i < a.nr_ev && i < b.nr_ev; i++)
		same &= a.ev[i].time == b.ev[i].time && a.ev[i].type == b.ev[i].type &&
			a.ev[i].cpu == b.ev[i].cpu && a.ev[i].seq == b.ev[i].seq &&
			!memcmp(prof_rec(&a, &a.ev[i]), prof_rec(&b, &b.ev[i]), 16);
	ok(same, "the same events (time, type, cpu, order, record)");
	is_u64(b.nr_samples, 2, "samples counted");
	is_u64(b.lost_samples, 3, "lost samples counted");
	is_str(prof_comm(&b, 7), "borrowed", "EXEC names the process");
	ok(!prof_borrow_records(&b, recs, len), "borrowed once only");
	size = make_sample(more, 40, 7, 0, 0, 1);
	prof_add_record(&b, more, size, 0, &size, &why);
	ok(b.recs != recs && !b.recs_borrowed, "adding a record copies the borrowed ones");
	memset(buf, 0xee, sizeof(buf)); /* the lender's memory may go now */
	is_u64(b.nr_ev, a.nr_ev + 1, "one more event");
	is_u64(((const struct cycsample_sample *)prof_rec(&b, &b.ev[3]))->time, 30,
	       "the copy holds the borrowed records");
	prof_free(&a);
	prof_free(&b);

	len = make_sample(buf, 10, 7, 0, 0, 1);
	len += make_lost((u8 *)buf + len, 20, 1);
	((struct cycsample_record_header *)((u8 *)buf + len - sizeof(struct cycsample_lost)))->type =
		99;
	prof_init(&b);
	ok(!prof_borrow_records(&b, buf, len), "a record of unknown type: not borrowed");
	ok(!b.nr_ev && !b.recs_borrowed, "and nothing taken");
	((u8 *)buf)[0] = 0;
	ok(!prof_borrow_records(&b, buf, len), "a corrupt record: not borrowed");
	ok(!prof_borrow_records(&b, (u8 *)buf + 4, 16), "unaligned: not borrowed");
	prof_free(&b);
}

/* The dump of an AArch32 task is r0..r12, sp, lr, pc, cpsr, not x0..pstate. */
static void test_reg_names(void)
{
	struct cycsample_sample s = { .arch = CYCSAMPLE_ARCH_ARM64 };

	is_str(rec_reg_name(&s, 29), "x29", "AArch64 dump: 29 is x29");
	is_str(rec_reg_name(&s, 33), "pstate", "AArch64 dump: 33 is pstate");
	ok(!rec_reg_name(&s, 34), "AArch64 dump: 34 registers");
	s.flags = CYCSAMPLE_SAMPLE_COMPAT;
	is_str(rec_reg_name(&s, 11), "r11", "AArch32 dump: 11 is r11");
	is_str(rec_reg_name(&s, 13), "sp", "AArch32 dump: 13 is sp");
	is_str(rec_reg_name(&s, 14), "lr", "AArch32 dump: 14 is lr");
	is_str(rec_reg_name(&s, 15), "pc", "AArch32 dump: 15 is pc");
	is_str(rec_reg_name(&s, 16), "cpsr", "AArch32 dump: 16 is cpsr");
	ok(!rec_reg_name(&s, 17), "AArch32 dump: 17 registers");
	s.arch = CYCSAMPLE_ARCH_X86_64;
	s.flags = 0;
	is_str(rec_reg_name(&s, 16), "ip", "x86_64 dump: 16 is ip");
	ok(!rec_reg_name(&s, 21), "x86_64 dump: 21 registers");
}

int main(void)
{
	test_reg_names();
	test_check();
	test_sample_pc();
	test_lost_saturates();
	test_dev_lost();
	test_wrap();
	test_in_place();
	test_recqueue();
	test_drain_hold();
	test_drain_hold_asks();
	test_task_events();
	test_corrupt();
	test_merge();
	test_control();
	test_pids_foreign();
	test_borrow();
	return tap_done();
}
