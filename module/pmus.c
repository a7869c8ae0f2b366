// SPDX-License-Identifier: GPL-2.0
/*
 * cycsample - the core PMUs of a session.
 *
 * Most ARM boards sold today are not one homogeneous CPU: big.LITTLE SoCs
 * (RK3588, RK3399, phones, Apple M-series) register one PMU per CPU type,
 * and so do hybrid x86 CPUs.  A per-task counter is bound to one PMU, and
 * that PMU only counts on its own CPUs (arm_pmu's filter), so a process
 * session needs one counter per core PMU, as perf opens one event per core
 * PMU for the same command.  A CPU session's counters are per CPU, and
 * perf finds each CPU's PMU by itself.
 *
 * The list of PMUs is built at each START and reported by INFO; every CPU
 * is in exactly one entry (s->pmu_of_cpu), and every sample names its
 * entry.  An entry whose PMU cannot sample (no overflow interrupt, or it
 * refused the counter) and CPUs without any PMU are covered by the software
 * clock: the handler keeps clock samples only on those CPUs.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/perf_event.h>
#include <linux/sched.h>
#include <linux/cpumask.h>
#include <linux/cpu.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/bitops.h>
#include <linux/math64.h>

#include "cycsample.h"
#include "compat.h"

/*
 * The software clock's period: the cycles period at fallback_mhz, fixed by
 * the first clock counter of a START, so that INFO says 0 while no CPU is
 * on the clock.  A CPU session can reach it long after START, from the
 * hotplug callback of a CPU whose PMU falls back.  Counters are created
 * under s->lock (task targets) or in the serialized hotplug callbacks.
 */
static u64 cycs_clock_period(struct cycs_session *s)
{
	u32 mhz;

	if (!s->clock_period_ns) {
		mhz = max(READ_ONCE(cycs_fallback_mhz), 1U);
		/* period <= 2^40 cycles, so period * 1000 cannot overflow */
		WRITE_ONCE(s->clock_period_ns,
			   max_t(u64, div_u64(s->cfg.sample_period * 1000, mhz), 1));
	}
	return s->clock_period_ns;
}

static void cycs_fill_attr(struct cycs_session *s, struct perf_event_attr *attr, u32 type,
			   u64 config, bool clock)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = type;
	attr->config = config;
	if (s->cfg.flags & CYCSAMPLE_CFG_FREQ) {
		attr->freq = 1;
		attr->sample_freq = s->cfg.sample_period;
	} else {
		attr->sample_period = clock ? cycs_clock_period(s) : s->cfg.sample_period;
	}
	attr->exclude_hv = 1;
	/* never exclude_idle: the arm64 PMU refuses it with -EOPNOTSUPP */
	attr->exclude_kernel = !!(s->cfg.flags & CYCSAMPLE_CFG_USER_ONLY);
	attr->inherit = s->cfg.target_type == CYCSAMPLE_TARGET_PID;
	/*
	 * A task counter counts from its creation: one created disabled and
	 * enabled next would give a thread cloned in between a copy that stays
	 * off for good (perf_event_enable() does not reach inherited copies).
	 * The handler writes nothing until START has finished.  With
	 * ENABLE_ON_EXEC perf turns the counters on at the target's next exec.
	 */
	if (s->cfg.target_type == CYCSAMPLE_TARGET_CPUS) {
		attr->disabled = 1; /* enabled once s->pmu_of_cpu names its entry */
	} else if (s->cfg.flags & CYCSAMPLE_CFG_ENABLE_ON_EXEC) {
		attr->disabled = 1;
		attr->enable_on_exec = 1;
	}
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

/*
 * An error that says this PMU cannot take our counter, so its CPUs go to
 * the software clock; any other (out of memory, a signal) fails START.
 */
static bool cycs_pmu_refused(int err)
{
	return err == -ENOENT || err == -EOPNOTSUPP || err == -EINVAL || err == -EBUSY ||
	       err == -ENODEV;
}

static u32 cycs_clock_config(struct cycs_session *s)
{
	return s->cfg.target_type == CYCSAMPLE_TARGET_CPUS ? PERF_COUNT_SW_CPU_CLOCK
							   : PERF_COUNT_SW_TASK_CLOCK;
}

static void cycs_pmu_fall_back(struct cycs_session *s, struct cycs_pmu *p, u32 reason, int err)
{
	p->decided = true;
	p->sw = true;
	p->fallback_reason = reason;
	p->fallback_errno = err;
	p->attr_type = PERF_TYPE_SOFTWARE;
	p->config = cycs_clock_config(s);
	p->event_kind = s->cfg.target_type == CYCSAMPLE_TARGET_CPUS ? CYCSAMPLE_EVENT_SW_CPU_CLOCK
								    : CYCSAMPLE_EVENT_SW_TASK_CLOCK;
}

/* The entry of @pmu, added if new; -1 when the list is full. */
static int cycs_pmu_entry(struct cycs_session *s, const struct pmu *pmu)
{
	struct cycs_pmu *p;
	unsigned int i;

	for (i = 0; i < s->nr_pmus; i++)
		if (s->pmus[i].pmu == pmu)
			return i;
	/* the last entry is kept for the clock, so that no CPU goes unsampled */
	if (s->nr_pmus == CYCSAMPLE_MAX_PMUS - (pmu ? 1 : 0))
		return -1;
	p = &s->pmus[s->nr_pmus];
	memset(p, 0, sizeof(*p));
	p->pmu = pmu;
	if (pmu) {
		strscpy(p->name, pmu->name ?: "", sizeof(p->name));
		p->type = pmu->type;
		p->caps = pmu->capabilities;
		p->attr_type = PERF_TYPE_HARDWARE;
		p->config = PERF_COUNT_HW_CPU_CYCLES;
		p->event_kind = CYCSAMPLE_EVENT_HW_CYCLES;
	}
	/* the handlers of other CPUs read the count (a CPU session grows it) */
	WRITE_ONCE(s->nr_pmus, s->nr_pmus + 1);
	return s->nr_pmus - 1;
}

/*
 * The entry of CPUs that have no PMU we can use at all (none, the list is
 * full, or the PMU refused the attributes before we could tell which it
 * was): the software clock, with the first reason seen.
 */
static int cycs_pmu_clock_entry(struct cycs_session *s, u32 reason, int err)
{
	int idx = cycs_pmu_entry(s, NULL); /* always fits, see cycs_pmu_entry() */

	if (!s->pmus[idx].decided)
		cycs_pmu_fall_back(s, &s->pmus[idx], reason, err);
	return idx;
}

/* The perf PMU of @cpu for a cycles counter, found with a counter on current. */
static int cycs_pmu_probe(struct cycs_session *s, int cpu)
{
	struct perf_event_attr attr;
	struct perf_event *event;
	int idx, err;

	/*
	 * A per-task counter bound to one CPU makes perf search the PMU of
	 * that CPU (arm_pmu refuses CPUs outside its own), without the
	 * CPU-wide permission check a CPU counter would need.  It is never
	 * enabled, and it is on the caller, not on the target.
	 */
	cycs_fill_attr(s, &attr, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, false);
	attr.disabled = 1;
	attr.enable_on_exec = 0;
	attr.inherit = 0;
	event = perf_event_create_kernel_counter(&attr, cpu, current, cycs_overflow, s);
	if (IS_ERR(event)) {
		err = PTR_ERR(event);
		if (!cycs_pmu_refused(err))
			return err;
		if (s->cfg.flags & CYCSAMPLE_CFG_NO_FALLBACK)
			return err;
		idx = cycs_pmu_clock_entry(s, cycs_fallback_reason(err), err);
	} else {
		idx = cycs_pmu_entry(s, event->pmu);
		perf_event_release_kernel(event);
		if (idx < 0)
			idx = cycs_pmu_clock_entry(s, CYCSAMPLE_FALLBACK_OTHER, -E2BIG);
	}
	s->pmu_of_cpu[cpu] = idx;
	return 0;
}

/* How the counters of a task address this entry's PMU. */
static void cycs_pmu_choose_event(struct cycs_session *s, struct cycs_pmu *p, unsigned int nr_hw)
{
	if (nr_hw == 1)
		return; /* the generic cycles event finds the one PMU */
	if (p->caps & CYCS_PMU_CAP_EXTENDED_HW_TYPE) {
		/* the generic event, aimed at this PMU (x86 hybrid, arm_pmu since 6.6) */
		p->config = (u64)p->type << PERF_PMU_TYPE_SHIFT | PERF_COUNT_HW_CPU_CYCLES;
		return;
	}
#ifdef CYCS_RAW_CPU_CYCLES
	/* the PMU's own type with its raw cycles event (arm_pmu before 6.6) */
	p->attr_type = p->type;
	p->config = CYCS_RAW_CPU_CYCLES;
#else
	cycs_pmu_fall_back(s, p, CYCSAMPLE_FALLBACK_UNSUPPORTED, -EOPNOTSUPP);
#endif
}

static int cycs_pmus_find(struct cycs_session *s)
{
	unsigned int i, nr_hw = 0;
	int cpu, err;

	for_each_possible_cpu(cpu) {
		err = cycs_pmu_probe(s, cpu);
		if (err)
			return err;
	}
	for (i = 0; i < s->nr_pmus; i++)
		nr_hw += !s->pmus[i].sw;
	for (i = 0; i < s->nr_pmus; i++) {
		struct cycs_pmu *p = &s->pmus[i];

		if (p->sw)
			continue;
		/*
		 * perf_event_open() refuses sampling on a PMU without an overflow
		 * interrupt, perf_event_create_kernel_counter() does not: the
		 * counter would be created and never fire.
		 */
		if (p->caps & PERF_PMU_CAP_NO_INTERRUPT) {
			if (s->cfg.flags & CYCSAMPLE_CFG_NO_FALLBACK)
				return -EOPNOTSUPP;
			cycs_pmu_fall_back(s, p, CYCSAMPLE_FALLBACK_NO_INTERRUPT, -EOPNOTSUPP);
			continue;
		}
		cycs_pmu_choose_event(s, p, nr_hw);
	}
	return 0;
}

/**
 * cycs_pmus_start - build the PMU list of a START
 * @s: the session, s->lock held
 *
 * Task targets: every possible CPU gets its entry now.  CPU targets: the
 * entries are found as each CPU's counter is created.
 */
int cycs_pmus_start(struct cycs_session *s)
{
	int cpu;

	WRITE_ONCE(s->nr_pmus, 0);
	WRITE_ONCE(s->clock_pmu, NULL);
	for_each_possible_cpu(cpu)
		s->pmu_of_cpu[cpu] = CYCS_NO_PMU;
	if (s->cfg.target_type == CYCSAMPLE_TARGET_CPUS)
		return 0;
	if (s->cfg.event == CYCSAMPLE_EVENT_CLOCK) {
		int idx = cycs_pmu_clock_entry(s, CYCSAMPLE_FALLBACK_REQUESTED, 0);

		for_each_possible_cpu(cpu)
			s->pmu_of_cpu[cpu] = idx;
		return 0;
	}
	return cycs_pmus_find(s);
}

/* Name the clock entries after perf's clock PMU (older kernels leave it unnamed). */
static void cycs_note_clock(struct cycs_session *s, struct perf_event *event)
{
	const char *name = event->pmu->name;
	unsigned int i;

	if (!name)
		name = s->cfg.target_type == CYCSAMPLE_TARGET_CPUS ? "cpu-clock" : "task-clock";
	for (i = 0; i < s->nr_pmus; i++)
		if (!s->pmus[i].pmu && !s->pmus[i].name[0])
			strscpy(s->pmus[i].name, name, sizeof(s->pmus[i].name));
	WRITE_ONCE(s->clock_pmu, event->pmu);
}

/**
 * cycs_pmus_slot_wanted - does a task need a counter in @slot?
 * @s: the session
 * @slot: an entry's index, or CYCS_CLOCK_SLOT
 *
 * The clock slot is wanted once any entry is on the software clock, so ask
 * for it after the other slots.
 */
bool cycs_pmus_slot_wanted(struct cycs_session *s, unsigned int slot)
{
	unsigned int i;

	if (slot < s->nr_pmus)
		return !s->pmus[slot].sw;
	if (slot != CYCS_CLOCK_SLOT)
		return false;
	for (i = 0; i < s->nr_pmus; i++)
		if (s->pmus[i].sw)
			return true;
	return false;
}

static struct perf_event *cycs_create(struct cycs_session *s, int cpu, struct task_struct *task,
				      u32 type, u64 config, bool clock)
{
	struct perf_event_attr attr;

	cycs_fill_attr(s, &attr, type, config, clock);
	return perf_event_create_kernel_counter(&attr, cpu, task, cycs_overflow, s);
}

/**
 * cycs_pmus_task_counter - create the counter of one slot for one task
 * @s: the session
 * @task: a thread of the target
 * @slot: a wanted slot (cycs_pmus_slot_wanted())
 *
 * The first counter of an entry decides between cycles and the clock: if
 * its PMU refuses it, the entry falls back and NULL says so (the clock slot
 * is then wanted).  Return: the counter, NULL, or an ERR_PTR().
 */
struct perf_event *cycs_pmus_task_counter(struct cycs_session *s, struct task_struct *task,
					  unsigned int slot)
{
	struct perf_event *event;
	struct cycs_pmu *p;
	int err;

	if (slot == CYCS_CLOCK_SLOT) {
		event = cycs_create(s, -1, task, PERF_TYPE_SOFTWARE, cycs_clock_config(s), true);
		if (!IS_ERR(event) && !s->clock_pmu)
			cycs_note_clock(s, event);
		return event;
	}
	p = &s->pmus[slot];
	event = cycs_create(s, -1, task, p->attr_type, p->config, false);
	if (!IS_ERR(event)) {
		p->decided = true;
		return event;
	}
	err = PTR_ERR(event);
	/* a vanished thread says nothing about the PMU */
	if (p->decided || err == -ESRCH || !cycs_pmu_refused(err) ||
	    (s->cfg.flags & CYCSAMPLE_CFG_NO_FALLBACK))
		return event;
	cycs_pmu_fall_back(s, p, cycs_fallback_reason(err), err);
	return NULL;
}

/**
 * cycs_pmus_cpu_counter - create the counter of one CPU of a CPUS session
 * @s: the session
 * @cpu: an online CPU
 *
 * Cycles on the CPU's PMU (perf finds it), else the clock, decided once per
 * PMU; s->pmu_of_cpu[cpu] names the entry.  The counter is disabled.
 */
struct perf_event *cycs_pmus_cpu_counter(struct cycs_session *s, int cpu)
{
	u32 reason = CYCSAMPLE_FALLBACK_REQUESTED;
	struct perf_event *event;
	int idx, err = 0;

	if (s->cfg.event == CYCSAMPLE_EVENT_CYCLES) {
		event = cycs_create(s, cpu, NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES,
				    false);
		if (IS_ERR(event)) {
			err = PTR_ERR(event);
			if (!cycs_pmu_refused(err) || (s->cfg.flags & CYCSAMPLE_CFG_NO_FALLBACK))
				return event;
			idx = cycs_pmu_clock_entry(s, cycs_fallback_reason(err), err);
		} else {
			idx = cycs_pmu_entry(s, event->pmu);
			if (idx < 0) {
				idx = cycs_pmu_clock_entry(s, CYCSAMPLE_FALLBACK_OTHER, -E2BIG);
			} else if (!s->pmus[idx].decided) {
				s->pmus[idx].decided = true;
				if (event->pmu->capabilities & PERF_PMU_CAP_NO_INTERRUPT)
					cycs_pmu_fall_back(s, &s->pmus[idx],
							   CYCSAMPLE_FALLBACK_NO_INTERRUPT,
							   -EOPNOTSUPP);
			}
			if (!s->pmus[idx].sw) {
				s->pmu_of_cpu[cpu] = idx;
				return event;
			}
			perf_event_release_kernel(event);
			if (s->cfg.flags & CYCSAMPLE_CFG_NO_FALLBACK)
				return ERR_PTR(-EOPNOTSUPP);
		}
	} else {
		idx = cycs_pmu_clock_entry(s, reason, 0);
	}
	s->pmu_of_cpu[cpu] = idx;
	event = cycs_create(s, cpu, NULL, PERF_TYPE_SOFTWARE, cycs_clock_config(s), true);
	if (!IS_ERR(event) && !s->clock_pmu)
		cycs_note_clock(s, event);
	return event;
}

/* INFO's PMU list and the fields that describe pmus[0], hotplug held off. */
static void cycs_pmus_fill_info(struct cycs_session *s, struct cycsample_info *info)
{
	unsigned int i;
	int cpu;

	info->nr_pmus = s->nr_pmus;
	for (i = 0; i < s->nr_pmus; i++) {
		const struct cycs_pmu *p = &s->pmus[i];
		struct cycsample_pmu *out = &info->pmus[i];

		strscpy(out->name, p->name, sizeof(out->name));
		out->type = p->type;
		out->event = p->event_kind;
		out->fallback_reason = p->fallback_reason;
		out->fallback_errno = p->fallback_errno;
		out->attr_type = p->attr_type;
		out->config = p->config;
	}
	for_each_possible_cpu(cpu) {
		unsigned int idx = s->pmu_of_cpu[cpu];

		if (idx >= s->nr_pmus)
			continue;
		info->pmus[idx].nr_cpus++;
		if (cpu < CYCSAMPLE_PMU_CPUS)
			info->pmus[idx].cpus[cpu / 64] |= 1ULL << (cpu % 64);
	}
	if (!s->nr_pmus)
		return;
	info->event = s->pmus[0].event_kind;
	info->fallback_reason = s->pmus[0].fallback_reason;
	info->fallback_errno = s->pmus[0].fallback_errno;
	strscpy(info->pmu_name, s->pmus[0].name, sizeof(info->pmu_name));
}

/* Fill INFO's PMU list and the fields that describe pmus[0]; s->lock held. */
void cycs_pmus_info(struct cycs_session *s, struct cycsample_info *info)
{
	if (!s->pmu_of_cpu) /* never started */
		return;
	/*
	 * A CPU session's list grows in the hotplug callbacks, which do not
	 * take s->lock; holding off hotplug gives one consistent list.  The
	 * order is START's: s->lock, then the hotplug lock.
	 */
	cpus_read_lock();
	cycs_pmus_fill_info(s, info);
	cpus_read_unlock();
}
