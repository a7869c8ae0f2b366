// SPDX-License-Identifier: GPL-2.0
/*
 * cycsample - the overflow handler and the records it writes.
 *
 * The handler runs in hard interrupt context (arm64 with a normal PMU
 * interrupt, and the software clock's hrtimer) or in NMI (x86, arm64 with
 * pseudo-NMI).  So: no locks, no allocation, no printk, bounded loops.  A
 * record is built in a per-CPU scratch buffer, every byte written, then
 * copied into the ring of the CPU it runs on.
 */
#include <linux/perf_event.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/percpu.h>
#include <linux/irq_work.h>
#include <linux/log2.h>
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
				 struct task_struct *task, u64 now)
{
	memset(te, 0, sizeof(*te));
	te->hdr.type = type;
	te->hdr.size = sizeof(*te);
	te->time = now;
	te->pid = task_tgid_nr(task);
	te->tid = task_pid_nr(task);
	/* a racing rename can tear the name, never overrun it */
	memcpy(te->comm, task->comm, sizeof(te->comm) - 1);
	te->comm[sizeof(te->comm) - 1] = '\0';
}

/*
 * The target ran a new program since we last looked: emit an EXEC record
 * before the sample, once, whichever CPU sees it first.
 */
static void cycs_check_exec(struct cycs_session *s, struct cycs_ring *r, u64 now, bool *wake)
{
	struct cycsample_task_event te;
	u64 seen, id;

	if (s->cfg.target_type == CYCSAMPLE_TARGET_CPUS || current->tgid != s->target_tgid)
		return;
	id = READ_ONCE(current->self_exec_id);
	seen = READ_ONCE(s->exec_id);
	if (id == seen || cmpxchg64(&s->exec_id, seen, id) != seen)
		return;

	cycs_fill_task_event(&te, CYCSAMPLE_REC_EXEC, current, now);
	switch (cycs_ring_put(s->rings, r, &te, sizeof(te), now)) {
	case CYCS_PUT_LOST:
		this_cpu_inc(s->stats->lost);
		break;
	default:
		*wake = true;
		break;
	}
}

/* Build the sample record in @smp; returns its size in bytes. */
static u32 cycs_build_sample(struct cycs_session *s, struct cycs_scratch *sc,
			     struct perf_event *event, struct perf_sample_data *data,
			     struct pt_regs *regs, bool user, u64 now)
{
	struct cycsample_sample *smp = &sc->rec.sample;
	unsigned int max = s->cfg.max_stack;
	u32 flags = user ? CYCSAMPLE_SAMPLE_USER : CYCSAMPLE_SAMPLE_KERNEL;
	unsigned int nk = 0, nu = 0, nr = 0;
	struct pt_regs *uregs = NULL;

	memset(smp, 0, sizeof(*smp));
	smp->hdr.type = CYCSAMPLE_REC_SAMPLE;
	smp->time = now;
	smp->pid = task_tgid_nr(current);
	smp->tid = task_pid_nr(current);
	smp->cpu = smp_processor_id();
	smp->period = data->period;
	smp->arch = cycs_arch;

	/*
	 * From the session, not event->attr.type: since 6.7 perf rewrites the
	 * type of cpu-clock and task-clock events to their own PMU's type.
	 */
	if (s->event_sw)
		flags |= CYCSAMPLE_SAMPLE_SW_CLOCK;
	if (cycs_event_throttled(event))
		flags |= CYCSAMPLE_SAMPLE_THROTTLED;
	/*
	 * Only an NMI can interrupt code that runs with interrupts masked: an
	 * IRQ-driven PMU sees such a region at the point it unmasks them.
	 */
	if (in_nmi())
		flags |= CYCSAMPLE_SAMPLE_NMI;
	/* only an NMI gets here; cycs_user_regs() then withholds the user chain */
	if (!user && cycs_arch_irqs_masked(regs))
		flags |= CYCSAMPLE_SAMPLE_IRQS_OFF;

	if (user || s->kaddr_ok)
		cycs_arch_sample_regs(smp, regs);
	else
		flags |= CYCSAMPLE_SAMPLE_REGS_HIDDEN;

	uregs = cycs_user_regs(regs);
	if (uregs && cycs_arch_compat(uregs))
		flags |= CYCSAMPLE_SAMPLE_COMPAT;

	if (!user && s->kaddr_ok && (s->cfg.flags & CYCSAMPLE_CFG_KERNEL_CHAIN))
		nk = cycs_kernel_chain(regs, sc->kstack, smp->frames, max, &flags);

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

/**
 * cycs_overflow - perf overflow handler of every counter of every session
 * @event: our counter, or a child inherited from it (same context pointer)
 * @data: perf's sample data; only ->period is used
 * @regs: the interrupted registers
 */
void cycs_overflow(struct perf_event *event, struct perf_sample_data *data, struct pt_regs *regs)
{
	struct cycs_session *s = event->overflow_handler_context;
	struct cycs_scratch *sc;
	struct cycs_ring *r;
	bool user, wake = false;
	u64 t0 = local_clock();
	u32 len;

	if (this_cpu_inc_return(cycs_scratch->nest) != 1) {
		this_cpu_inc(s->stats->dropped_other);
		goto out_unnest;
	}
	sc = this_cpu_ptr(cycs_scratch);

	if (!READ_ONCE(s->active) || !regs) {
		this_cpu_inc(s->stats->dropped_other);
		goto out_cost;
	}
	user = user_mode(regs);
	/* skid: the PMU counted user mode only, but the interrupt came late */
	if (!user && (s->cfg.flags & CYCSAMPLE_CFG_USER_ONLY)) {
		this_cpu_inc(s->stats->dropped_kernel);
		goto out_cost;
	}
	if (cycs_event_throttled(event))
		this_cpu_inc(s->stats->throttled);

	r = s->rings->by_cpu[smp_processor_id()];
	cycs_check_exec(s, r, t0, &wake);

	len = cycs_build_sample(s, sc, event, data, regs, user, t0);
	switch (cycs_ring_put(s->rings, r, &sc->rec, len, t0)) {
	case CYCS_PUT_LOST:
		this_cpu_inc(s->stats->lost);
		break;
	case CYCS_PUT_WAKE:
		wake = true;
		fallthrough;
	case CYCS_PUT_OK:
		this_cpu_inc(s->stats->samples);
		break;
	}
	if (wake)
		irq_work_queue(&s->wake_work);

out_cost:
	cycs_account_cost(s->stats, local_clock() - t0);
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
	u64 now = local_clock();
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
	now = local_clock();
	cycs_fill_task_event(&te, CYCSAMPLE_REC_EXIT, s->target_task, now);
	r = s->rings->by_cpu[smp_processor_id()];
	if (cycs_ring_put(s->rings, r, &te, sizeof(te), now) == CYCS_PUT_LOST)
		this_cpu_inc(s->stats->lost);
	this_cpu_dec(cycs_scratch->nest);
	local_irq_restore(irqflags);
}
