// SPDX-License-Identifier: GPL-2.0
/*
 * cycsample - sessions: configuration, start/stop, targets, permissions,
 * and the end of a session when its target exits.
 *
 * A session is one open file.  Its states (enum cycsample_state):
 *
 *	OPEN -CONFIGURE-> CONFIGURED -START-> RUNNING -STOP-> STOPPED -START-> ...
 *	                                        |
 *	                                        +-target exits (or setuid exec)-> ENDED
 *
 * CONFIGURE may be repeated while the rings are not mapped and the session
 * is not running; it replaces the configuration and the rings.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/slab.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/cred.h>
#include <linux/capability.h>
#include <linux/security.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/poll.h>
#include <linux/percpu.h>

#include "cycsample.h"
#include "compat.h"

/*
 * How often a running session looks for its target's exit.  The look takes
 * a work item (counters go in process context) on the CPU that queued it,
 * usually the target's: 30 us of the target's time each under QEMU
 * -icount, most of it the purge of the exec ids, 0.5 ms per second of a
 * sampled run (Documentation/performance.rst, "Records decoded after the
 * run").  So a timer looks first: if the handler ran since its last look,
 * a counter still counts and the target has not ended; the work item then
 * runs only every CYCS_EXIT_FORCE periods, for the purge.
 */
#define CYCS_EXIT_POLL msecs_to_jiffies(50)
#define CYCS_EXIT_FORCE 16

static void cycs_wake_irq_work(struct irq_work *work)
{
	struct cycs_session *s = container_of(work, struct cycs_session, wake_work);

	wake_up_interruptible_all(&s->wq);
}

static void cycs_exit_work(struct work_struct *work);
static void cycs_exit_timer(struct timer_list *t);

/**
 * cycs_session_create - a new session for an open of /dev/cycsample
 * @file: the file being opened
 * @privileged: the opener is perfmon_capable()
 * @counted: the session counts against its opener's max_sessions
 */
struct cycs_session *cycs_session_create(struct file *file, bool privileged, bool counted)
{
	struct cycs_session *s;

	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return NULL;
	s->stats = alloc_percpu(struct cycs_stats);
	if (!s->stats)
		goto out_free_session;
	s->cpu_events = kcalloc(nr_cpu_ids, sizeof(*s->cpu_events), GFP_KERNEL);
	if (!s->cpu_events)
		goto out_free_stats;

	mutex_init(&s->lock);
	spin_lock_init(&s->rings_lock);
	s->state = CYCSAMPLE_STATE_OPEN;
	s->privileged = privileged;
	s->counted = counted;
	s->cred = get_cred(file->f_cred);
	s->file = file;
	INIT_LIST_HEAD(&s->task_events);
	INIT_HLIST_NODE(&s->cpuhp_node);
	init_irq_work(&s->wake_work, cycs_wake_irq_work);
	init_waitqueue_head(&s->wq);
	timer_setup(&s->exit_timer, cycs_exit_timer, 0);
	INIT_WORK(&s->exit_work, cycs_exit_work);
	return s;

out_free_stats:
	free_percpu(s->stats);
out_free_session:
	kfree(s);
	return NULL;
}

/* Release counters and the target of a running session; s->lock held. */
static void cycs_session_halt(struct cycs_session *s)
{
	cycs_counters_stop(s);
	cycs_flush_lost(s);
}

static void cycs_put_target_task(struct cycs_session *s)
{
	if (s->target_task) {
		put_task_struct(s->target_task);
		s->target_task = NULL;
	}
}

/**
 * cycs_session_destroy - tear a session down at the last close
 * @s: the session
 *
 * Counters first (no handler runs after that), then the exit timer and
 * work, then any wakeup still queued by a handler, then the memory.  The
 * rings may outlive us if mapped: they hold their own reference.
 */
void cycs_session_destroy(struct cycs_session *s)
{
	mutex_lock(&s->lock);
	if (s->state == CYCSAMPLE_STATE_RUNNING) {
		cycs_session_halt(s);
		WRITE_ONCE(s->state, CYCSAMPLE_STATE_STOPPED);
	}
	mutex_unlock(&s->lock);

	/* not RUNNING: neither re-arms the other */
	timer_delete_sync(&s->exit_timer);
	cancel_work_sync(&s->exit_work);
	irq_work_sync(&s->wake_work);

	cycs_put_target_task(s);
	put_pid(s->target_pid);
	if (s->pid_ns)
		put_pid_ns(s->pid_ns);
	cycs_counters_free(s);
	cycs_rings_put(s->rings);
	kfree(s->cpu_events);
	free_percpu(s->stats);
	if (s->counted)
		cycs_limit_release(s->cred->uid);
	put_cred(s->cred);
	/*
	 * The fork probe may have read our address from one of our counters
	 * before STOP disarmed us and still be in its RCU section: a session
	 * allocated at the same address and armed meanwhile would pass for us
	 * there and be queued on our target's clone.  So the address is not
	 * reused until that section ends.
	 */
	kfree_rcu(s, rcu);
}

/* ---- targets and permissions ------------------------------------------- */

static enum pid_type cycs_pid_type(u32 target_type)
{
	return target_type == CYCSAMPLE_TARGET_PID ? PIDTYPE_TGID : PIDTYPE_PID;
}

/* The target thread (TID) or the whole thread group (PID) has exited. */
static bool cycs_target_gone(struct cycs_session *s, struct task_struct *task)
{
	if (s->cfg.target_type == CYCSAMPLE_TARGET_TID)
		return (READ_ONCE(task->flags) & PF_EXITING) || READ_ONCE(task->exit_state);
	/* signal_struct lives as long as our task reference */
	return atomic_read(&task->signal->live) == 0;
}

/* The thread of a TID target, or every thread of a PID target. */
static int cycs_may_profile_target(struct cycs_session *s, u32 target_type,
				   struct task_struct *task)
{
	if (target_type == CYCSAMPLE_TARGET_TID)
		return cycs_may_profile(s, task);
	return cycs_may_profile_group(s, task);
}

/* Resolve and check the target at CONFIGURE; returns a pid reference. */
static struct pid *cycs_find_target(struct cycs_session *s, const struct cycsample_config *cfg)
{
	struct task_struct *task;
	struct pid *pid;
	int err = 0;

	if (cfg->target <= 0)
		return ERR_PTR(-ESRCH);
	pid = find_get_pid(cfg->target); /* in the caller's namespace */
	if (!pid)
		return ERR_PTR(-ESRCH);
	task = get_pid_task(pid, cycs_pid_type(cfg->target_type));
	if (!task) {
		err = -ESRCH;
		goto out_put_pid;
	}
	err = cycs_may_profile_target(s, cfg->target_type, task);
	put_task_struct(task);
	if (!err)
		return pid;
out_put_pid:
	put_pid(pid);
	return ERR_PTR(err);
}

/* ---- the rings and mmap() ---------------------------------------------- */

/*
 * Install *@rings unless the current rings are mapped (or being mapped);
 * on success *@rings is the old rings, to be put.  s->lock held.
 */
static bool cycs_session_swap_rings(struct cycs_session *s, struct cycs_rings **rings)
{
	struct cycs_rings *old;
	bool busy;

	spin_lock(&s->rings_lock);
	old = s->rings;
	busy = old && cycs_rings_mapped(old);
	if (!busy)
		s->rings = *rings;
	spin_unlock(&s->rings_lock);
	if (!busy)
		*rings = old;
	return !busy;
}

/**
 * cycs_session_map_rings - the rings for mmap(), with a mapping reference
 * @s: the session
 *
 * Without s->lock: mmap() runs under mmap_lock, and START holds s->lock
 * while perf takes its ctx->mutex, which perf orders before mmap_lock.
 *
 * Return: the rings, to be put with cycs_rings_put_map(), or NULL before
 * CONFIGURE.
 */
struct cycs_rings *cycs_session_map_rings(struct cycs_session *s)
{
	struct cycs_rings *rings;

	spin_lock(&s->rings_lock);
	rings = s->rings;
	if (rings)
		cycs_rings_get_map(rings);
	spin_unlock(&s->rings_lock);
	return rings;
}

/* ---- ioctls ------------------------------------------------------------ */

/**
 * cycs_session_configure - accept a configuration and allocate its rings
 * @s: the session
 * @cfg: passed the ABI checks of device.c; defaults are filled in
 */
int cycs_session_configure(struct cycs_session *s, struct cycsample_config *cfg)
{
	struct cycs_rings *rings;
	struct pid *pid = NULL;
	struct cycs_sysctls sc;
	bool kaddr_ok;
	int cpu, err;

	cycs_sysctls_read(BIT(CYCS_SYSCTL_PARANOID) | BIT(CYCS_SYSCTL_SAMPLE_RATE) |
				  BIT(CYCS_SYSCTL_KPTR_RESTRICT) | BIT(CYCS_SYSCTL_MLOCK_KB),
			  &sc);
	err = cycs_policy_configure(s, cfg, &sc, &kaddr_ok);
	if (err)
		return err;

	mutex_lock(&s->lock);
	if (s->state == CYCSAMPLE_STATE_RUNNING || (s->rings && cycs_rings_mapped(s->rings))) {
		err = -EBUSY;
		goto out_unlock;
	}
	if (cfg->target_type != CYCSAMPLE_TARGET_CPUS) {
		pid = cycs_find_target(s, cfg);
		if (IS_ERR(pid)) {
			err = PTR_ERR(pid);
			goto out_unlock;
		}
	}
	/* judged as if the old rings, unmapped and replaced below, were gone */
	rings = cycs_rings_alloc(cfg->ring_pages, cfg->wakeup_bytes,
				 s->rings ? &s->rings->charge : NULL, &sc);
	if (IS_ERR(rings)) {
		err = PTR_ERR(rings);
		goto out_put_pid;
	}
	/* mmap() does not take s->lock: it may have mapped the old rings since */
	if (!cycs_session_swap_rings(s, &rings)) {
		cycs_rings_put(rings);
		err = -EBUSY;
		goto out_put_pid;
	}
	cycs_rings_put(rings); /* the old ones */
	put_pid(s->target_pid);
	s->target_pid = pid;
	if (s->pid_ns)
		put_pid_ns(s->pid_ns);
	s->pid_ns = get_pid_ns(task_active_pid_ns(current));
	s->cfg = *cfg;
	s->cfg.size = sizeof(s->cfg);
	s->kaddr_ok = kaddr_ok;
	for_each_possible_cpu(cpu)
		memset(per_cpu_ptr(s->stats, cpu), 0, sizeof(struct cycs_stats));
	s->nr_pmus = 0;
	s->clock_period_ns = 0;
	WRITE_ONCE(s->state, CYCSAMPLE_STATE_CONFIGURED);
	mutex_unlock(&s->lock);
	return 0;

out_put_pid:
	put_pid(pid);
out_unlock:
	mutex_unlock(&s->lock);
	return err;
}

/* Take a reference on the live target for a START; ESRCH when it is gone. */
static int cycs_get_target_task(struct cycs_session *s)
{
	struct task_struct *task;
	int err;

	task = get_pid_task(s->target_pid, cycs_pid_type(s->cfg.target_type));
	if (!task)
		return -ESRCH;
	if (cycs_target_gone(s, task)) {
		err = -ESRCH;
		goto out_put_task;
	}
	/* it may have run a setuid program, or gained threads, since CONFIGURE */
	err = cycs_may_profile_target(s, s->cfg.target_type, task);
	if (err)
		goto out_put_task;
	s->target_task = task;
	s->target_tgid = task->tgid;
	cycs_task_ids(s, task, s->target_ids);
	return 0;

out_put_task:
	put_task_struct(task);
	return err;
}

/* Handler calls of the session so far: each one counts its cost (or a drop). */
static u64 cycs_handler_calls(struct cycs_session *s)
{
	u64 n = 0;
	int cpu;

	for_each_possible_cpu(cpu) {
		const struct cycs_stats *st = per_cpu_ptr(s->stats, cpu);

		n += READ_ONCE(st->cost_count) + READ_ONCE(st->dropped_other);
	}
	return n;
}

/*
 * The next look for the target's exit; s->lock held.  The timer writes
 * exit_calls and exit_skipped too: a race (a stale timer across STOP and
 * START) only moves the next forced look by a period.
 */
static void cycs_exit_arm(struct cycs_session *s)
{
	WRITE_ONCE(s->exit_calls, cycs_handler_calls(s));
	WRITE_ONCE(s->exit_skipped, 0);
	mod_timer(&s->exit_timer, jiffies + CYCS_EXIT_POLL);
}

static void cycs_exit_timer(struct timer_list *t)
{
	struct cycs_session *s = timer_container_of(s, t, exit_timer);
	unsigned int skipped;
	u64 calls;

	if (READ_ONCE(s->state) != CYCSAMPLE_STATE_RUNNING)
		return;
	calls = cycs_handler_calls(s);
	skipped = READ_ONCE(s->exit_skipped) + 1;
	if (calls != READ_ONCE(s->exit_calls) && skipped < CYCS_EXIT_FORCE) {
		WRITE_ONCE(s->exit_calls, calls);
		WRITE_ONCE(s->exit_skipped, skipped);
		mod_timer(&s->exit_timer, jiffies + CYCS_EXIT_POLL);
		return;
	}
	/* the work re-arms us (cycs_exit_arm()) unless the session ended */
	queue_work(CYCS_PERCPU_WQ, &s->exit_work);
}

int cycs_session_start(struct cycs_session *s)
{
	bool task_target;
	int err;

	mutex_lock(&s->lock);
	switch (s->state) {
	case CYCSAMPLE_STATE_OPEN:
		err = -EINVAL;
		goto out_unlock;
	case CYCSAMPLE_STATE_RUNNING:
		err = -EBUSY;
		goto out_unlock;
	case CYCSAMPLE_STATE_ENDED:
		err = -ESRCH;
		goto out_unlock;
	}

	task_target = s->cfg.target_type != CYCSAMPLE_TARGET_CPUS;
	if (task_target) {
		err = cycs_get_target_task(s);
		if (err)
			goto out_unlock;
	}
	err = cycs_counters_start(s);
	if (err)
		goto out_put_task;

	WRITE_ONCE(s->state, CYCSAMPLE_STATE_RUNNING);
	if (task_target)
		cycs_exit_arm(s);
	mutex_unlock(&s->lock);
	return 0;

out_put_task:
	cycs_put_target_task(s);
out_unlock:
	mutex_unlock(&s->lock);
	return err;
}

int cycs_session_stop(struct cycs_session *s)
{
	int err = 0;

	mutex_lock(&s->lock);
	if (s->state != CYCSAMPLE_STATE_RUNNING) {
		err = -EINVAL;
		goto out_unlock;
	}
	cycs_session_halt(s);
	cycs_put_target_task(s);
	WRITE_ONCE(s->state, CYCSAMPLE_STATE_STOPPED);
	/* the exit timer and work see the state and do not re-arm */
	wake_up_interruptible_all(&s->wq);
out_unlock:
	mutex_unlock(&s->lock);
	return err;
}

/*
 * Queued by cycs_exit_timer() when the handler did not run for 50 ms (or
 * at every 16th look): have the target and every child it forked
 * since START exited, or has the kernel detached our counters (a setuid
 * exec)?  Then release the counters, write the EXIT record (nothing can
 * follow it now), and end the session.  Counters must go in process
 * context, hence a work item rather than something in the handler or an
 * exit hook.
 */
static void cycs_exit_work(struct work_struct *work)
{
	struct cycs_session *s = container_of(work, struct cycs_session, exit_work);

	mutex_lock(&s->lock);
	if (s->state != CYCSAMPLE_STATE_RUNNING || !s->target_task)
		goto out_unlock;
	if (!cycs_counters_ended(s)) {
		cycs_exec_ids_purge(s);
		cycs_exit_arm(s);
		goto out_unlock;
	}
	cycs_session_halt(s);
	cycs_emit_exit(s);
	cycs_put_target_task(s);
	WRITE_ONCE(s->state, CYCSAMPLE_STATE_ENDED);
	wake_up_interruptible_all(&s->wq);
out_unlock:
	mutex_unlock(&s->lock);
}

static void cycs_sum_stats(struct cycs_session *s, struct cycsample_info *info)
{
	int cpu, i;
	u32 p;

	for_each_possible_cpu(cpu) {
		const struct cycs_stats *st = per_cpu_ptr(s->stats, cpu);
		u64 count = READ_ONCE(st->cost_count);

		info->samples += READ_ONCE(st->samples);
		info->lost += READ_ONCE(st->lost);
		info->throttled += READ_ONCE(st->throttled);
		info->dropped_kernel += READ_ONCE(st->dropped_kernel);
		info->dropped_other += READ_ONCE(st->dropped_other);
		if (count) {
			u64 min = READ_ONCE(st->cost_min);

			if (!info->cost_count || min < info->cost_min_ns)
				info->cost_min_ns = min;
			info->cost_max_ns = max(info->cost_max_ns, READ_ONCE(st->cost_max));
			info->cost_total_ns += READ_ONCE(st->cost_total);
			info->cost_count += count;
		}
		for (i = 0; i < CYCSAMPLE_COST_BUCKETS; i++)
			info->cost_hist[i] += READ_ONCE(st->cost_hist[i]);
		for (p = 0; p < info->nr_pmus; p++)
			info->pmus[p].samples += READ_ONCE(st->pmu_samples[p]);
	}
}

/* Fill @info (zeroed by the caller) from the session. */
void cycs_session_info(struct cycs_session *s, struct cycsample_info *info)
{
	info->size = sizeof(*info);
	info->abi_version = CYCSAMPLE_ABI_VERSION;
	info->features = CYCSAMPLE_FEATURE_PIDNS;
	strscpy(info->module_version, CYCSAMPLE_VERSION, sizeof(info->module_version));
	info->page_size = PAGE_SIZE;

	mutex_lock(&s->lock);
	info->state = s->state;
	if (s->state == CYCSAMPLE_STATE_OPEN)
		goto out_unlock;

	info->clock = CYCSAMPLE_CLOCK_MONOTONIC;
	cycs_pmus_info(s, info);
	info->sample_period = s->cfg.sample_period;
	/* a CPU session's hotplug callback may set it meanwhile (WRITE_ONCE) */
	info->clock_period_ns = READ_ONCE(s->clock_period_ns);
	info->config_flags = s->cfg.flags;
	info->target_type = s->cfg.target_type;
	info->target = s->cfg.target;
	info->max_stack = s->cfg.max_stack;
	info->nr_rings = s->rings->nr_rings;
	info->mmap_size = s->rings->size;
	info->ring_data_size = s->rings->data_size;
	cycs_sum_stats(s, info);
out_unlock:
	mutex_unlock(&s->lock);
}

/*
 * POLLIN when a ring holds wakeup_bytes unread or an unread EXEC record
 * (any unread byte once the session stopped or ended); POLLHUP once the
 * session ended and every ring is drained.
 */
__poll_t cycs_session_poll(struct cycs_session *s)
{
	u64 unread, most = 0;
	bool urgent = false;
	__poll_t mask = 0;
	unsigned int i;
	u32 state;

	mutex_lock(&s->lock);
	state = s->state;
	if (!s->rings)
		goto out_unlock;
	for (i = 0; i < s->rings->nr_rings; i++) {
		unread = cycs_ring_unread(s->rings, &s->rings->ring[i]);
		most = max(most, unread);
		urgent |= cycs_ring_urgent(&s->rings->ring[i]);
	}
	if (state == CYCSAMPLE_STATE_ENDED)
		mask = most ? EPOLLIN | EPOLLRDNORM : EPOLLHUP;
	else if (most >= s->rings->wakeup_bytes || urgent ||
		 (most && state == CYCSAMPLE_STATE_STOPPED))
		mask = EPOLLIN | EPOLLRDNORM;
out_unlock:
	mutex_unlock(&s->lock);
	return mask;
}
