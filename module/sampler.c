// SPDX-License-Identifier: GPL-2.0
/*
 * cycsample - the overflow handler and the records it writes.
 *
 * The handler runs in hard interrupt context (arm64 with a normal PMU
 * interrupt, and the software clock's hrtimer) or in NMI (x86, arm64 with
 * pseudo-NMI).  So: no locks, no allocation, no printk, bounded loops.  A
 * sample is built in place in the ring of the CPU it runs on, every byte
 * written; only one that could cross the ring's end, or that must follow a
 * LOST record, is built in a per-CPU scratch buffer and copied.
 *
 * Records carry CLOCK_MONOTONIC nanoseconds from ktime_get_mono_fast_ns(),
 * the NMI-safe reader of that clock (perf's own -k CLOCK_MONOTONIC), so a
 * sample lines up with the target's clock_gettime() and with its logs.
 */
#include <linux/perf_event.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/timekeeping.h>
#include <linux/percpu.h>
#include <linux/irq_work.h>
#include <linux/log2.h>
#include <linux/hash.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "cycsample.h"
#include "compat.h"

static void cycs_account_cost(struct cycs_stats __percpu *stats, u64 ns)
{
	struct cycs_stats *st = this_cpu_ptr(stats);
	unsigned int bucket = 0;

	/* bucket i: [2^i, 2^(i+1)) x 128 ns; faster ones go to 0, slower to the last */
	if (ns >= 256)
		bucket = min_t(unsigned int, ilog2(ns >> 7), CYCSAMPLE_COST_BUCKETS - 1);

	if (!st->cost_count || ns < st->cost_min)
		st->cost_min = ns;
	if (ns > st->cost_max)
		st->cost_max = ns;
	st->cost_total += ns;
	st->cost_hist[bucket]++;
	/* last: INFO treats cost_count == 0 as "no minimum yet" */
	st->cost_count++;
}

static void cycs_fill_task_event(struct cycsample_task_event *te, u32 type,
				 struct task_struct *task, const u32 ids[2], u64 now)
{
	memset(te, 0, sizeof(*te));
	te->hdr.type = type;
	te->hdr.size = sizeof(*te);
	te->time = now;
	te->pid = ids[0];
	te->tid = ids[1];
	/* a racing rename can tear the name, never overrun it */
	memcpy(te->comm, task->comm, sizeof(te->comm) - 1);
	te->comm[sizeof(te->comm) - 1] = '\0';
}

/* ---- EXEC records ------------------------------------------------------ */

static u64 cycs_exec_key(u32 tgid, u64 exec_id)
{
	return (u64)tgid << 32 | (u32)exec_id;
}

static u64 *cycs_exec_bucket(struct cycs_session *s, u32 tgid)
{
	return &s->exec_ids[hash_32(tgid, ilog2(CYCS_EXEC_BUCKETS)) * CYCS_EXEC_WAYS];
}

/* The entry of @tgid, or NULL. */
static u64 *cycs_exec_find(struct cycs_session *s, u32 tgid)
{
	u64 *b = cycs_exec_bucket(s, tgid);
	unsigned int i;

	for (i = 0; i < CYCS_EXEC_WAYS; i++)
		if (READ_ONCE(b[i]) >> 32 == tgid)
			return &b[i];
	return NULL;
}

/*
 * The entry of @tgid, added with @first (the exec id the reader knows the
 * process by) if new, which sets *@added; NULL when its bucket is full.
 * Lock-free: entries change only by cmpxchg(), and a new one appears whole.
 */
static u64 *cycs_exec_entry(struct cycs_session *s, u32 tgid, u64 first, bool *added)
{
	u64 *b = cycs_exec_bucket(s, tgid), *e, v;
	unsigned int i;

	e = cycs_exec_find(s, tgid);
	if (e)
		return e;
	for (i = 0; i < CYCS_EXEC_WAYS; i++) {
		v = READ_ONCE(b[i]);
		if (!v) {
			v = cmpxchg64(&b[i], 0, cycs_exec_key(tgid, first));
			*added = !v;
		}
		if (!v || v >> 32 == tgid)
			return &b[i];
	}
	return NULL;
}

/**
 * cycs_exec_ids_start - forget the exec ids of the last START
 * @s: a PID or TID session, s->target_task set; s->lock held, no counters
 */
int cycs_exec_ids_start(struct cycs_session *s)
{
	size_t n = CYCS_EXEC_BUCKETS * CYCS_EXEC_WAYS;
	bool added;

	if (!s->exec_ids) {
		s->exec_ids = kvcalloc(n, sizeof(*s->exec_ids), GFP_KERNEL);
		if (!s->exec_ids)
			return -ENOMEM;
	} else {
		memset(s->exec_ids, 0, n * sizeof(*s->exec_ids));
	}
	/* the image the target runs now is the one the reader maps at START */
	cycs_exec_entry(s, s->target_tgid, READ_ONCE(s->target_task->self_exec_id), &added);
	return 0;
}

/**
 * cycs_exec_ids_purge - drop the entries of processes that are gone
 * @s: a running PID or TID session; s->lock held
 *
 * So that a session whose target forks and execs without end keeps room;
 * called by the exit work, at least every 16 x 50 ms while the target runs
 * (module/session.c:cycs_exit_timer()).
 */
void cycs_exec_ids_purge(struct cycs_session *s)
{
	size_t i, n = CYCS_EXEC_BUCKETS * CYCS_EXEC_WAYS;
	struct pid *pid;
	bool alive;
	u64 v;

	for (i = 0; i < n; i++) {
		v = READ_ONCE(s->exec_ids[i]);
		if (!v)
			continue;
		rcu_read_lock();
		pid = find_pid_ns(v >> 32, &init_pid_ns);
		alive = pid && pid_task(pid, PIDTYPE_TGID);
		rcu_read_unlock();
		if (!alive)
			cmpxchg64(&s->exec_ids[i], v, 0);
	}
}

/*
 * The parent of the current process, if the reader knows what it inherited
 * from it: the tgid of a parent that forked it (not a reaper that adopted
 * it: an orphan goes to a thread of its parent's own process, with the same
 * maps, or else to a subreaper or its namespace's init) and whose entry
 * holds the exec id the child was forked under (parent_exec_id).  The
 * session then wrote a record of that process running that program (or it
 * is the target, whose maps the reader read at START), so the reader
 * knows its maps.  0 when not.  A child cloned with CLONE_PARENT passes
 * for its cloner's sibling.
 *
 * Once per process: kept out of the overflow handler's inlined path.
 */
static noinline u32 cycs_known_parent(struct cycs_session *s, u32 *ns_ptgid)
{
	struct task_struct *parent;
	u32 ptgid = 0;
	struct pid *tg;
	u64 *pe;

	rcu_read_lock();
	parent = rcu_dereference(current->real_parent);
	/* NULL once the parent is released, though RCU keeps its memory */
	tg = task_tgid(parent);
	/* a bit prctl(PR_SET_CHILD_SUBREAPER) may be setting in the same byte as we read */
	if (tg && !is_child_reaper(tg) && !data_race((bool)parent->signal->is_child_subreaper)) {
		ptgid = pid_nr(tg);
		/* the reader's number for it; the exec ids stay keyed by ours */
		if (ns_ptgid)
			*ns_ptgid = pid_nr_ns(tg, s->pid_ns);
	}
	rcu_read_unlock();
	if (!ptgid)
		return 0;
	pe = cycs_exec_find(s, ptgid);
	if (!pe || READ_ONCE(*pe) != cycs_exec_key(ptgid, READ_ONCE(current->parent_exec_id)))
		return 0;
	return ptgid;
}

/*
 * With CYCSAMPLE_CFG_FORK, before the first record of a process new to the
 * session that ran no program since its fork: a FORK record, if the reader
 * knows its parent's maps (cycs_known_parent()), for they are the child's.
 * Not written, the first record wakes the reader, who reads /proc/PID/maps.
 *
 * Return: the FORK record went in.
 */
static noinline bool cycs_put_fork(struct cycs_session *s, struct cycs_ring *r, u64 now, bool *wake)
{
	struct cycsample_fork f;
	u32 ids[2];

	memset(&f, 0, sizeof(f));
	/* a parent the reader cannot see has no number to give (never ours) */
	if (!cycs_known_parent(s, &f.ppid) || !f.ppid)
		return false;
	f.hdr.type = CYCSAMPLE_REC_FORK;
	f.hdr.size = sizeof(f);
	f.time = now;
	cycs_task_ids(s, current, ids);
	f.pid = ids[0];
	f.tid = ids[1];
	memcpy(f.comm, current->comm, sizeof(f.comm) - 1);
	/*
	 * A drop is counted lost (the reader then reads /proc for every
	 * process, records being incomplete); the entry stays as it is,
	 * as another thread of the process may be using it.
	 */
	return cycs_put_done(s, r, cycs_ring_put(s->rings, r, &f, sizeof(f), now), false, wake);
}

/*
 * May an EXEC record of the current process wait for the watermark?  With
 * CYCSAMPLE_CFG_FORK its MMAP records tell the new program, when it is a
 * real exec: of a process the session knew under another exec id, or of a
 * new one whose parent the reader knows (a fork, then an exec, before any
 * record).  Not for the EXEC record of a full bucket (@e NULL), which may
 * stand for no exec at all: the reader reads /proc for it.
 */
static __always_inline bool cycs_exec_may_wait(struct cycs_session *s, u64 *e, bool added)
{
	return (s->cfg.flags & CYCSAMPLE_CFG_FORK) && e && (!added || cycs_known_parent(s, NULL));
}

/*
 * A process of the target ran a new program since the reader last heard:
 * emit an EXEC record before the sample, once, whichever CPU sees it first.
 * A process the session meets for the first time (a child forked after
 * START) is known by the exec id it had at its fork (parent_exec_id), so
 * its own exec gives a record too.  If the ring has no room the record is
 * sent again with the next sample.  A process whose bucket is full has its
 * EXEC record repeated on each CPU whenever another process ran there: too
 * many rather than none.  A new process that ran nothing since its fork
 * may get a FORK record instead (cycs_put_fork()).
 *
 * The EXEC record wakes the reader at once, who reads the new program's
 * maps from /proc while it runs; with CYCSAMPLE_CFG_FORK, which comes with
 * MMAP records, mostly not: they tell those maps (cycs_exec_may_wait()).
 *
 * Called by the overflow handler before a sample, and by mappings.c before
 * an MMAP record (so the new program's mappings follow its EXEC record);
 * interrupts off and the per-CPU guard held, as every ring producer.
 *
 * Return: the process is new to the session, ran no new program, and got
 * no FORK record, so its record is what tells the reader of it: the
 * caller marks it urgent, for the reader reads the process's maps.
 */
/*
 * Inlined into the overflow handler, where it runs before every sample:
 * out of line it cost each sample a call, 35 to 45 guest instructions.
 */
static __always_inline bool __cycs_check_exec(struct cycs_session *s, struct cycs_ring *r, u64 now,
					      bool *wake)
{
	struct cycsample_task_event te;
	u64 id, seen, mine, *e;
	u32 tgid = current->tgid;
	u32 ids[2];
	bool added = false;

	if (s->cfg.target_type == CYCSAMPLE_TARGET_CPUS)
		return false;
	id = READ_ONCE(current->self_exec_id);
	e = cycs_exec_entry(s, tgid, READ_ONCE(current->parent_exec_id), &added);
	mine = cycs_exec_key(tgid, id);
	if (e) {
		seen = READ_ONCE(*e);
		if (seen == mine)
			return added && !((s->cfg.flags & CYCSAMPLE_CFG_FORK) &&
					  cycs_put_fork(s, r, now, wake));
		if (cmpxchg64(e, seen, mine) != seen)
			return added;
	} else {
		seen = __this_cpu_read(s->stats->last_exec);
		if (seen == mine)
			return false;
		__this_cpu_write(s->stats->last_exec, mine);
	}

	cycs_task_ids(s, current, ids);
	cycs_fill_task_event(&te, CYCSAMPLE_REC_EXEC, current, ids, now);
	if (!cycs_put_done(s, r, cycs_ring_put(s->rings, r, &te, sizeof(te), now),
			   !cycs_exec_may_wait(s, e, added), wake)) {
		/* not sent: let the next sample of this process try again */
		if (e)
			cmpxchg64(e, mine, seen);
		else
			__this_cpu_write(s->stats->last_exec, seen);
	}
	return false;
}

/* For mappings.c, before an MMAP record. */
bool cycs_check_exec(struct cycs_session *s, struct cycs_ring *r, u64 now, bool *wake)
{
	return __cycs_check_exec(s, r, now, wake);
}

/* ---- samples ----------------------------------------------------------- */

/* The fewest bytes a sample of @s takes: its fixed part. */
static u32 cycs_sample_min(struct cycs_session *s)
{
	if (s->cfg.flags & CYCSAMPLE_CFG_PC_ONLY)
		return sizeof(struct cycsample_sample_pc);
	return sizeof(struct cycsample_sample);
}

/*
 * The most bytes a sample of @s can take: the fixed part, both chains at
 * max_stack and the user registers (at most 40 on every architecture, as
 * CYCSAMPLE_MAX_RECORD_SIZE allows).
 */
static u32 cycs_sample_max(struct cycs_session *s, bool user)
{
	u32 flags = s->cfg.flags, n = 0;

	if (flags & CYCSAMPLE_CFG_PC_ONLY)
		return sizeof(struct cycsample_sample_pc);
	if (!user && s->kaddr_ok && (flags & CYCSAMPLE_CFG_KERNEL_CHAIN))
		n += s->cfg.max_stack;
	if (flags & CYCSAMPLE_CFG_USER_CHAIN)
		n += s->cfg.max_stack;
	if (flags & CYCSAMPLE_CFG_REGS_USER)
		n += 40;
	return sizeof(struct cycsample_sample) + n * sizeof(u64);
}

/* What the overflow handler was handed, and what it found out. */
struct cycs_hit {
	struct perf_event *event;
	struct perf_sample_data *data; /* only ->period is used */
	struct pt_regs *regs; /* the interrupted registers */
	u64 now;
	unsigned int pmu; /* index in s->pmus */
	bool user; /* interrupted in user mode */
	bool clock; /* from the software clock */
};

/*
 * The CYCSAMPLE_SAMPLE_* flags every sample carries, chain flags aside;
 * @uregs: the task's user registers, NULL for a kernel thread.
 */
static u32 cycs_sample_flags(const struct cycs_hit *h, struct pt_regs *uregs)
{
	u32 flags = h->user ? CYCSAMPLE_SAMPLE_USER : CYCSAMPLE_SAMPLE_KERNEL;

	if (h->clock)
		flags |= CYCSAMPLE_SAMPLE_SW_CLOCK;
	if (cycs_event_throttled(h->event))
		flags |= CYCSAMPLE_SAMPLE_THROTTLED;
	/*
	 * Only an NMI can interrupt code that runs with interrupts masked: an
	 * IRQ-driven PMU sees such a region at the point it unmasks them.  The
	 * x86 PMU interrupt is always an NMI, arm64's with pseudo-NMI.
	 */
	if (in_nmi())
		flags |= CYCSAMPLE_SAMPLE_NMI;
	/* on arm64 cycs_user_regs() then withholds the user chain */
	if (!h->user && in_nmi() && cycs_arch_irqs_masked(h->regs))
		flags |= CYCSAMPLE_SAMPLE_IRQS_OFF;
	if (uregs && cycs_arch_compat(uregs))
		flags |= CYCSAMPLE_SAMPLE_COMPAT;
	return flags;
}

/*
 * Build the sample record in @smp, in the ring or in the scratch buffer;
 * returns its size in bytes.  Every byte of the fixed part is written, so
 * the old bytes of the ring never show through (no memset first: the
 * record is built in place).
 */
static u32 cycs_build_sample(struct cycs_session *s, struct cycs_scratch *sc,
			     struct cycsample_sample *smp, const struct cycs_hit *h)
{
	unsigned int max = s->cfg.max_stack;
	unsigned int nk = 0, nu = 0, nr = 0;
	struct pt_regs *uregs = cycs_user_regs(h->regs);
	u32 flags = cycs_sample_flags(h, uregs);
	u32 ids[2];

	/* the fields below are the whole fixed part, with no padding between */
	BUILD_BUG_ON(sizeof(*smp) != 88);
	smp->hdr.type = CYCSAMPLE_REC_SAMPLE;
	smp->time = h->now;
	cycs_task_ids(s, current, ids);
	smp->pid = ids[0];
	smp->tid = ids[1];
	smp->cpu = smp_processor_id();
	smp->period = h->data->period;
	smp->arch = cycs_arch;
	smp->pmu = h->pmu;
	smp->reserved2 = 0;

	if (h->user || s->kaddr_ok) {
		cycs_arch_sample_regs(smp, h->regs);
	} else {
		smp->pc = 0;
		smp->sp = 0;
		smp->fp = 0;
		smp->lr = 0;
		flags |= CYCSAMPLE_SAMPLE_REGS_HIDDEN;
	}

	if (!h->user && s->kaddr_ok && (s->cfg.flags & CYCSAMPLE_CFG_KERNEL_CHAIN))
		nk = cycs_kernel_chain(h->regs, sc->kstack, smp->frames, max, &flags);

	if (uregs && (s->cfg.flags & CYCSAMPLE_CFG_USER_CHAIN))
		nu = cycs_arch_user_chain(uregs, smp->frames + nk, max, &flags);
	if (uregs && (s->cfg.flags & CYCSAMPLE_CFG_REGS_USER))
		nr = cycs_arch_user_regs(uregs, smp->frames + nk + nu);

	smp->flags = flags;
	smp->nr_kernel = nk;
	smp->nr_user = nu;
	smp->nr_regs = nr;
	smp->hdr.size = sizeof(*smp) + (nk + nu + nr) * sizeof(u64);
	return smp->hdr.size;
}

/* The sample of a CYCSAMPLE_CFG_PC_ONLY session: no chains, no registers but the pc. */
static u32 cycs_build_sample_pc(struct cycs_session *s, struct cycsample_sample_pc *smp,
				const struct cycs_hit *h)
{
	u32 flags = cycs_sample_flags(h, cycs_user_regs(h->regs));
	u32 ids[2];

	/* every field written, no padding: the ring's old bytes never show */
	BUILD_BUG_ON(sizeof(*smp) != 48);
	/* the flags field is 16 bits wide here */
	BUILD_BUG_ON(CYCSAMPLE_SAMPLE_ALL_FLAGS > U16_MAX);
	smp->hdr.type = CYCSAMPLE_REC_SAMPLE_PC;
	smp->hdr.size = sizeof(*smp);
	smp->time = h->now;
	cycs_task_ids(s, current, ids);
	smp->pid = ids[0];
	smp->tid = ids[1];
	smp->cpu = smp_processor_id();
	smp->arch = cycs_arch;
	smp->pmu = h->pmu;
	smp->period = h->data->period;
	if (h->user || s->kaddr_ok) {
		smp->pc = instruction_pointer(h->regs);
	} else {
		smp->pc = 0;
		flags |= CYCSAMPLE_SAMPLE_REGS_HIDDEN;
	}
	smp->flags = flags;
	return sizeof(*smp);
}

/* The record of @s's samples, built at @rec: returns its size in bytes. */
static u32 cycs_build(struct cycs_session *s, struct cycs_scratch *sc, void *rec,
		      const struct cycs_hit *h)
{
	if (s->cfg.flags & CYCSAMPLE_CFG_PC_ONLY)
		return cycs_build_sample_pc(s, rec, h);
	return cycs_build_sample(s, sc, rec, h);
}

/* A sample: in place when it fits, else built aside and copied. */
static enum cycs_put_result cycs_put_sample(struct cycs_session *s, struct cycs_scratch *sc,
					    struct cycs_ring *r, const struct cycs_hit *h)
{
	void *rec;
	bool full;
	u32 len;

	rec = cycs_ring_reserve(s->rings, r, cycs_sample_min(s), cycs_sample_max(s, h->user),
				&full);
	if (rec) {
		len = cycs_build(s, sc, rec, h);
		return cycs_ring_commit(s->rings, r, len);
	}
	if (full) {
		/* no walk and no record for a sample that cannot be kept */
		cycs_ring_lose(r);
		return CYCS_PUT_LOST;
	}
	/* at the wrap, or behind a LOST record */
	len = cycs_build(s, sc, &sc->rec, h);
	return cycs_ring_put(s->rings, r, &sc->rec, len, h->now);
}

/**
 * cycs_overflow - perf overflow handler of every counter of every session
 * @event: our counter, or a child inherited from it (same context pointer)
 * @data: perf's sample data; only ->period is used
 * @regs: the interrupted registers
 */
void cycs_overflow(struct perf_event *event, struct perf_sample_data *data, struct pt_regs *regs)
{
	struct cycs_session *s = event->overflow_handler_context;
	struct cycs_hit h = { .event = event, .data = data, .regs = regs };
	enum cycs_put_result res;
	struct cycs_scratch *sc;
	struct cycs_ring *r;
	bool urgent, wake = false;
	unsigned int cpu;

	h.now = ktime_get_mono_fast_ns();
	if (this_cpu_inc_return(cycs_scratch->nest) != 1) {
		this_cpu_inc(s->stats->dropped_other);
		goto out_unnest;
	}
	sc = this_cpu_ptr(cycs_scratch);

	if (!READ_ONCE(s->active) || !regs) {
		this_cpu_inc(s->stats->dropped_other);
		goto out_cost;
	}
	/*
	 * A task's clock counter runs on every CPU but stands only for the
	 * CPUs whose PMU cannot sample; elsewhere a cycles counter does.
	 */
	cpu = smp_processor_id();
	h.pmu = s->pmu_of_cpu[cpu];
	h.clock = event->pmu == READ_ONCE(s->clock_pmu);
	if (h.pmu >= READ_ONCE(s->nr_pmus) || h.clock != READ_ONCE(s->pmus[h.pmu].sw))
		goto out_cost;
	h.user = user_mode(regs);
	/* skid: the PMU counted user mode only, but the interrupt came late */
	if (!h.user && (s->cfg.flags & CYCSAMPLE_CFG_USER_ONLY)) {
		this_cpu_inc(s->stats->dropped_kernel);
		goto out_cost;
	}
	if (cycs_event_throttled(event))
		this_cpu_inc(s->stats->throttled);

	r = s->rings->by_cpu[cpu];
	urgent = __cycs_check_exec(s, r, h.now, &wake);

	res = cycs_put_sample(s, sc, r, &h);
	if (cycs_put_done(s, r, res, urgent, &wake)) {
		this_cpu_inc(s->stats->samples);
		this_cpu_inc(s->stats->pmu_samples[h.pmu]);
	}
	if (wake)
		irq_work_queue(&s->wake_work);

out_cost:
	cycs_account_cost(s->stats, ktime_get_mono_fast_ns() - h.now);
out_unnest:
	this_cpu_dec(cycs_scratch->nest);
}

/*
 * Write pending LOST records once the session's counters are gone, so that
 * the LOST records of each ring add up to its header's lost count.  Process
 * context; with no counter left we are the rings' only producer.
 */
void cycs_flush_lost(struct cycs_session *s)
{
	u64 now = ktime_get_mono_fast_ns();
	unsigned int i;

	for (i = 0; i < s->rings->nr_rings; i++)
		cycs_ring_flush_lost(s->rings, &s->rings->ring[i], now);
}

/**
 * cycs_emit_exit - write the EXIT record, the session's last
 * @s: the session, whose target_task is the one that exited
 *
 * Called after the counters are released, so nothing can follow it.
 * Written with interrupts off and the per-CPU guard held all the same, the
 * way every producer of a ring behaves.
 */
void cycs_emit_exit(struct cycs_session *s)
{
	struct cycsample_task_event te;
	unsigned long irqflags;
	struct cycs_ring *r;
	u64 now;

	cycs_flush_lost(s);

	local_irq_save(irqflags);
	this_cpu_inc(cycs_scratch->nest);
	now = ktime_get_mono_fast_ns();
	cycs_fill_task_event(&te, CYCSAMPLE_REC_EXIT, s->target_task, s->target_ids, now);
	r = s->rings->by_cpu[smp_processor_id()];
	if (cycs_ring_put(s->rings, r, &te, sizeof(te), now) == CYCS_PUT_LOST)
		this_cpu_inc(s->stats->lost);
	this_cpu_dec(cycs_scratch->nest);
	local_irq_restore(irqflags);
}
