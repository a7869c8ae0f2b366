// SPDX-License-Identifier: GPL-2.0
/*
 * cycsample - the perf kernel counters behind a session.
 *
 * PID and TID targets get per-task counters (cpu = -1): they count only
 * while the target runs, so an idle target costs other CPUs nothing, and
 * for a PID target attr.inherit makes perf clone the counter into every
 * thread and child created later, with our handler and context.  The CPUS
 * target gets one counter per online CPU, created from the module's cpuhp
 * state so CPUs going offline and online are followed.
 *
 * The event is hardware cycles when the PMU can deliver overflow
 * interrupts, else the software clock (task-clock for tasks, cpu-clock for
 * CPUs) with the cycle period turned into nanoseconds at fallback_mhz.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/perf_event.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/cpuhotplug.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/math64.h>

#include "cycsample.h"
#include "compat.h"

/* Give up when threads keep appearing faster than we can attach. */
#define CYCS_MAX_SCAN_ROUNDS 64

static void cycs_fill_attr(struct cycs_session *s, struct perf_event_attr *attr, bool sw,
			   bool cpu_wide)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	if (sw) {
		attr->type = PERF_TYPE_SOFTWARE;
		attr->config = cpu_wide ? PERF_COUNT_SW_CPU_CLOCK : PERF_COUNT_SW_TASK_CLOCK;
	} else {
		attr->type = PERF_TYPE_HARDWARE;
		attr->config = PERF_COUNT_HW_CPU_CYCLES;
	}
	if (s->cfg.flags & CYCSAMPLE_CFG_FREQ) {
		attr->freq = 1;
		attr->sample_freq = s->cfg.sample_period;
	} else {
		attr->sample_period = sw ? s->clock_period_ns : s->cfg.sample_period;
	}
	attr->disabled = 1; /* enabled once stored where stop() finds it */
	attr->exclude_hv = 1;
	/* never exclude_idle: the arm64 PMU refuses it with -EOPNOTSUPP */
	attr->exclude_kernel = !!(s->cfg.flags & CYCSAMPLE_CFG_USER_ONLY);
	attr->inherit = s->cfg.target_type == CYCSAMPLE_TARGET_PID;
}

static struct perf_event *cycs_create_one(struct cycs_session *s, int cpu, struct task_struct *task,
					  bool sw)
{
	struct perf_event_attr attr;

	cycs_fill_attr(s, &attr, sw, !task);
	return perf_event_create_kernel_counter(&attr, cpu, task, cycs_overflow, s);
}

static void cycs_note_event(struct cycs_session *s, struct perf_event *event, bool sw)
{
	s->event_decided = true;
	s->event_sw = sw;
	if (!sw)
		s->event_kind = CYCSAMPLE_EVENT_HW_CYCLES;
	else if (s->cfg.target_type == CYCSAMPLE_TARGET_CPUS)
		s->event_kind = CYCSAMPLE_EVENT_SW_CPU_CLOCK;
	else
		s->event_kind = CYCSAMPLE_EVENT_SW_TASK_CLOCK;
	/* perf's clock PMUs have no name in older kernels: use perf's event names */
	if (event->pmu->name)
		strscpy(s->pmu_name, event->pmu->name, sizeof(s->pmu_name));
	else
		strscpy(s->pmu_name,
			event->attr.config == PERF_COUNT_SW_CPU_CLOCK ? "cpu-clock" : "task-clock",
			sizeof(s->pmu_name));
}

static u32 cycs_fallback_reason(int err)
{
	switch (err) {
	case -ENOENT:
		return CYCSAMPLE_FALLBACK_NO_PMU;
	case -EOPNOTSUPP:
		return CYCSAMPLE_FALLBACK_UNSUPPORTED;
	default:
		return CYCSAMPLE_FALLBACK_OTHER;
	}
}

/* Try hardware cycles; an error pointer says why they are unusable. */
static struct perf_event *cycs_try_cycles(struct cycs_session *s, int cpu, struct task_struct *task,
					  u32 *reason)
{
	struct perf_event *event = cycs_create_one(s, cpu, task, false);

	if (IS_ERR(event)) {
		*reason = cycs_fallback_reason(PTR_ERR(event));
		return event;
	}
	/*
	 * perf_event_open() refuses sampling on a PMU without an overflow
	 * interrupt, perf_event_create_kernel_counter() does not: the counter
	 * would be created and never fire.
	 */
	if (event->pmu->capabilities & PERF_PMU_CAP_NO_INTERRUPT) {
		perf_event_release_kernel(event);
		*reason = CYCSAMPLE_FALLBACK_NO_INTERRUPT;
		return ERR_PTR(-EOPNOTSUPP);
	}
	return event;
}

/*
 * Create one counter of the session.  The first creation of a START decides
 * between cycles and the clock; the others follow that decision.
 */
static struct perf_event *cycs_create(struct cycs_session *s, int cpu, struct task_struct *task)
{
	struct perf_event *event;
	u32 reason = CYCSAMPLE_FALLBACK_REQUESTED;

	if (s->event_decided)
		return cycs_create_one(s, cpu, task, s->event_sw);

	if (s->cfg.event == CYCSAMPLE_EVENT_CYCLES) {
		event = cycs_try_cycles(s, cpu, task, &reason);
		if (!IS_ERR(event)) {
			cycs_note_event(s, event, false);
			return event;
		}
		/* a vanished thread says nothing about the PMU */
		if (PTR_ERR(event) == -ESRCH || (s->cfg.flags & CYCSAMPLE_CFG_NO_FALLBACK))
			return event;
		s->fallback_errno = PTR_ERR(event);
	}

	event = cycs_create_one(s, cpu, task, true);
	if (!IS_ERR(event)) {
		s->fallback_reason = reason;
		cycs_note_event(s, event, true);
	}
	return event;
}

/* ---- per-task counters ------------------------------------------------- */

/* @task already has our counter, directly or inherited at its clone(). */
static bool cycs_task_covered(struct cycs_session *s, struct task_struct *task)
{
	struct cycs_task_event *te;

	list_for_each_entry(te, &s->task_events, node)
		if (te->task == task || cycs_event_has_child(te->event, task))
			return true;
	return false;
}

static int cycs_attach_task(struct cycs_session *s, struct task_struct *task)
{
	struct cycs_task_event *te;
	struct perf_event *event;

	te = kzalloc(sizeof(*te), GFP_KERNEL);
	if (!te)
		return -ENOMEM;
	event = cycs_create(s, -1, task);
	if (IS_ERR(event)) {
		kfree(te);
		return PTR_ERR(event);
	}
	get_task_struct(task);
	te->task = task;
	te->event = event;
	list_add_tail(&te->node, &s->task_events);
	perf_event_enable(event);
	return 0;
}

/*
 * Snapshot up to @max threads of @leader's group, with references.  Returns
 * how many were taken; *more says some did not fit.
 */
static unsigned int cycs_snapshot_threads(struct task_struct *leader, struct task_struct **tasks,
					  unsigned int max, bool *more)
{
	struct task_struct *t;
	unsigned int n = 0;

	*more = false;
	rcu_read_lock();
	for_each_thread(leader, t) {
		if (n == max) {
			*more = true;
			break;
		}
		get_task_struct(t);
		tasks[n++] = t;
	}
	rcu_read_unlock();
	return n;
}

/*
 * Attach to every thread of the process.  A thread cloned while we attach
 * either inherits the counter of the thread that cloned it (if that one
 * already had it) or shows up in the next scan; scan until a round attaches
 * nothing, so no thread is missed and none gets two counters.
 */
static int cycs_attach_process(struct cycs_session *s, struct task_struct *leader)
{
	unsigned int round, max, n, i;
	struct task_struct **tasks;
	bool more, attached;
	int err = 0;

	for (round = 0; round < CYCS_MAX_SCAN_ROUNDS; round++) {
		max = get_nr_threads(leader) + 16;
		tasks = kvmalloc_array(max, sizeof(*tasks), GFP_KERNEL);
		if (!tasks)
			return -ENOMEM;
		n = cycs_snapshot_threads(leader, tasks, max, &more);

		attached = false;
		for (i = 0; i < n; i++) {
			if (!err && !cycs_task_covered(s, tasks[i])) {
				err = cycs_attach_task(s, tasks[i]);
				if (!err)
					attached = true;
				else if (err == -ESRCH) /* exiting thread */
					err = 0;
			}
			put_task_struct(tasks[i]);
		}
		kvfree(tasks);
		if (err)
			return err;
		if (!attached && !more)
			return list_empty(&s->task_events) ? -ESRCH : 0;
	}
	return -EAGAIN;
}

static int cycs_start_tasks(struct cycs_session *s)
{
	struct task_struct *task = s->target_task;

	if (s->cfg.target_type == CYCSAMPLE_TARGET_TID)
		return cycs_attach_task(s, task);
	return cycs_attach_process(s, task);
}

static void cycs_stop_tasks(struct cycs_session *s)
{
	struct cycs_task_event *te, *tmp;

	list_for_each_entry_safe(te, tmp, &s->task_events, node) {
		/* also frees the inherited children; no handler runs after it */
		perf_event_release_kernel(te->event);
		put_task_struct(te->task);
		list_del(&te->node);
		kfree(te);
	}
}

/**
 * cycs_counters_detached - has the kernel taken every task counter away?
 * @s: a running PID or TID session; s->lock held
 *
 * An exec that leaves the process not dumpable (a setuid program) makes the
 * kernel detach every perf event of the thread that ran it, ours included,
 * whoever opened them (begin_new_exec() calls perf_event_exit_task()).  The
 * target lives on but will never be sampled again, so the session should
 * end as it does when the target exits.  A detached counter is in state
 * EXIT; one whose thread exited while copies inherited from it still count
 * in later threads has children, and those keep the session alive.
 */
bool cycs_counters_detached(struct cycs_session *s)
{
	struct cycs_task_event *te;

	if (list_empty(&s->task_events))
		return false;
	list_for_each_entry(te, &s->task_events, node)
		if (!cycs_event_exited(te->event) || cycs_event_has_child(te->event, NULL))
			return false;
	return true;
}

/* ---- per-CPU counters -------------------------------------------------- */

/*
 * cpuhp callbacks of the module's multi-instance state, one instance per
 * running CPUS session.  They run in the cpuhp/N kthread of the CPU, both
 * for hotplug and for cpuhp_state_add_instance(); perf's CPU-wide
 * permission check sees that thread's credentials, ours were checked at
 * CONFIGURE.  Hotplug serializes them, so they may update the session's
 * event decision without s->lock (which START holds while adding us).
 */
int cycs_cpu_online(unsigned int cpu, struct hlist_node *node)
{
	struct cycs_session *s = hlist_entry(node, struct cycs_session, cpuhp_node);
	struct perf_event *event;

	event = cycs_create(s, cpu, NULL);
	if (IS_ERR(event)) {
		if (s->cpuhp_starting)
			return PTR_ERR(event);
		/* never block a CPU from coming up; the CPU goes unsampled */
		pr_warn_ratelimited("cpu %u: no counter (%ld)\n", cpu, PTR_ERR(event));
		return 0;
	}
	WRITE_ONCE(s->cpu_events[cpu], event);
	perf_event_enable(event);
	return 0;
}

/* perf detaches a dead CPU's events for good: release ours before it goes. */
int cycs_cpu_offline(unsigned int cpu, struct hlist_node *node)
{
	struct cycs_session *s = hlist_entry(node, struct cycs_session, cpuhp_node);
	struct perf_event *event = xchg(&s->cpu_events[cpu], NULL);

	if (event)
		perf_event_release_kernel(event);
	return 0;
}

static int cycs_start_cpus(struct cycs_session *s)
{
	int err;

	s->cpuhp_starting = true;
	err = cpuhp_state_add_instance(cycs_cpuhp_state, &s->cpuhp_node);
	s->cpuhp_starting = false;
	if (!err)
		s->cpuhp_added = true;
	return err;
}

static void cycs_stop_cpus(struct cycs_session *s)
{
	if (!s->cpuhp_added)
		return;
	/* runs cycs_cpu_offline() for every CPU that has a counter */
	cpuhp_state_remove_instance(cycs_cpuhp_state, &s->cpuhp_node);
	s->cpuhp_added = false;
}

/* ---- start/stop -------------------------------------------------------- */

/**
 * cycs_counters_start - create and enable the session's counters
 * @s: the session
 *
 * Called with s->lock held and s->target_task referenced (task targets).
 * On failure nothing is left behind.
 */
int cycs_counters_start(struct cycs_session *s)
{
	int err;

	s->event_decided = false;
	s->event_sw = false;
	s->event_kind = 0;
	s->fallback_reason = CYCSAMPLE_FALLBACK_NONE;
	s->fallback_errno = 0;
	s->pmu_name[0] = '\0';
	s->clock_period_ns = 0;
	if (!(s->cfg.flags & CYCSAMPLE_CFG_FREQ)) {
		u32 mhz = max(READ_ONCE(cycs_fallback_mhz), 1U);

		/* period <= 2^40 cycles, so period * 1000 cannot overflow */
		s->clock_period_ns = max_t(u64, div_u64(s->cfg.sample_period * 1000, mhz), 1);
	}

	/*
	 * The handler writes nothing until every counter is in place: a START
	 * that fails half way (a thread that could not get its counter) must
	 * leave no records behind.  Overflows before that count as dropped.
	 */
	if (s->cfg.target_type == CYCSAMPLE_TARGET_CPUS)
		err = cycs_start_cpus(s);
	else
		err = cycs_start_tasks(s);
	if (err)
		cycs_counters_stop(s);
	else
		WRITE_ONCE(s->active, true);
	if (s->event_decided && !s->event_sw)
		s->clock_period_ns = 0;
	return err;
}

/**
 * cycs_counters_stop - release every counter of the session
 * @s: the session
 *
 * After it returns no overflow handler of this session runs or will run.
 */
void cycs_counters_stop(struct cycs_session *s)
{
	WRITE_ONCE(s->active, false);
	cycs_stop_tasks(s);
	cycs_stop_cpus(s);
}
