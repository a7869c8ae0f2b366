// SPDX-License-Identifier: GPL-2.0
/*
 * cycsample - the perf kernel counters behind a session.
 *
 * PID and TID targets get per-task counters (cpu = -1), one per slot: one
 * for each core PMU of the session's list (pmus.c), and one software clock
 * for the CPUs of PMUs that cannot sample.  They count only while the
 * target runs, so an idle target costs other CPUs nothing, and for a PID
 * target attr.inherit makes perf copy every counter into each thread and
 * child created later, with our handler and context.  The CPUS target gets
 * one counter per online CPU, created from the module's cpuhp state so CPUs
 * going offline and online are followed.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/perf_event.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/cpuhotplug.h>
#include <linux/hash.h>
#include <linux/log2.h>
#include <linux/slab.h>

#include "cycsample.h"
#include "compat.h"

/* Give up when threads keep appearing faster than we can attach. */
#define CYCS_MAX_SCAN_ROUNDS 64

/* ---- which task has which slot ----------------------------------------- */

/*
 * The (task, slot) pairs that already have a counter, direct or inherited:
 * an open-addressing hash set, rebuilt for each scan of the thread group so
 * that a scan costs O(threads + counters), not O(threads^2).
 */
struct cycs_cover_key {
	const struct task_struct *task;
	unsigned long slot;
};

struct cycs_cover {
	struct cycs_cover_key *keys;
	unsigned int bits;
};

static unsigned int cycs_cover_hash(const struct cycs_cover *c, const struct task_struct *task,
				    unsigned int slot)
{
	return hash_long((unsigned long)task ^ slot, c->bits);
}

/* Room for @n pairs, the table at most half full. */
static int cycs_cover_alloc(struct cycs_cover *c, unsigned int n)
{
	c->bits = ilog2(max(n, 8U)) + 2;
	c->keys = kvcalloc(1UL << c->bits, sizeof(*c->keys), GFP_KERNEL);
	return c->keys ? 0 : -ENOMEM;
}

static void cycs_cover_free(struct cycs_cover *c)
{
	kvfree(c->keys);
	c->keys = NULL;
}

static struct cycs_cover_key *cycs_cover_find(struct cycs_cover *c, const struct task_struct *task,
					      unsigned int slot)
{
	unsigned int mask = (1U << c->bits) - 1, i = cycs_cover_hash(c, task, slot);

	/* never full (at most half), so an empty key ends every probe */
	while (c->keys[i].task && (c->keys[i].task != task || c->keys[i].slot != slot))
		i = (i + 1) & mask;
	return &c->keys[i];
}

static void cycs_cover_add(struct cycs_cover *c, const struct task_struct *task, unsigned int slot)
{
	struct cycs_cover_key *k = cycs_cover_find(c, task, slot);

	k->task = task;
	k->slot = slot;
}

static bool cycs_covered(struct cycs_cover *c, const struct task_struct *task, unsigned int slot)
{
	return cycs_cover_find(c, task, slot)->task == task;
}

/*
 * Every task that counts with one of our counters, by slot.  The task of a
 * counter is its context's: perf may swap contexts between a thread and
 * its clones, so the original counter can end up in a clone.
 */
static int cycs_cover_build(struct cycs_session *s, struct cycs_cover *c)
{
	unsigned int children = 0, budget;
	struct cycs_task_event *te;
	struct perf_event *child;
	int err;

	list_for_each_entry(te, &s->task_events, node) {
		te->nr_children = cycs_nr_children(te->event);
		children += te->nr_children;
	}
	err = cycs_cover_alloc(c, s->nr_task_events + children);
	if (err)
		return err;
	/*
	 * Copies made since we counted belong to threads cloned after the
	 * snapshot: perf appends them to their parent's list, so each counter
	 * keeps its own budget.  A shared one would let one counter's new
	 * copies use up another's, leave out threads of the snapshot and give
	 * them a second counter in the same slot.
	 */
	list_for_each_entry(te, &s->task_events, node) {
		cycs_cover_add(c, cycs_event_task(te->event), te->slot);
		budget = te->nr_children;
		cycs_lock_children(te->event);
		cycs_for_each_child(child, te->event) {
			if (!budget)
				break;
			budget--;
			cycs_cover_add(c, cycs_event_task(child), te->slot);
		}
		cycs_unlock_children(te->event);
	}
	return 0;
}

/* ---- per-task counters ------------------------------------------------- */

/* 1: attached; 0: the slot's PMU fell back to the clock just now. */
static int cycs_attach_slot(struct cycs_session *s, struct task_struct *task, unsigned int slot)
{
	struct cycs_task_event *te;
	struct perf_event *event;

	if (s->nr_task_events >= READ_ONCE(cycs_max_counters))
		return -EMFILE;
	te = kzalloc(sizeof(*te), GFP_KERNEL);
	if (!te)
		return -ENOMEM;
	event = cycs_pmus_task_counter(s, task, slot);
	if (IS_ERR_OR_NULL(event)) {
		kfree(te);
		return PTR_ERR_OR_ZERO(event);
	}
	get_task_struct(task);
	te->task = task;
	te->event = event;
	te->slot = slot;
	list_add_tail(&te->node, &s->task_events);
	s->nr_task_events++;
	return 1;
}

/*
 * Give @task a counter in every wanted slot it lacks.  As perf_event_open()
 * does, the permission check and the install happen under the target's
 * signal->exec_update_lock, read side: begin_new_exec() holds it for
 * writing while it commits new credentials, changes dumpability and takes
 * perf events away, so each counter is either in place before such an exec
 * (which then removes it) or checked against what the exec left.  The
 * counters are created enabled, so nothing is left to do after the lock.
 * (An rw_semaphore since 5.11, and in the 5.10 stable series this module
 * builds for.)  Lock order: s->lock, then exec_update_lock, then perf's
 * ctx->mutex; mmap() takes neither of the first two.
 */
static int cycs_attach_task(struct cycs_session *s, struct task_struct *task, struct cycs_cover *c,
			    bool *attached)
{
	unsigned int slot;
	int err;

	err = down_read_killable(&task->signal->exec_update_lock);
	if (err)
		return err;
	err = cycs_may_profile(s, task);
	if (err)
		goto out_unlock;
	/* the clock slot last: an entry that falls back now makes it wanted */
	for (slot = 0; slot < CYCS_NR_SLOTS; slot++) {
		if (!cycs_pmus_slot_wanted(s, slot) || (c && cycs_covered(c, task, slot)))
			continue;
		err = cycs_attach_slot(s, task, slot);
		if (err < 0)
			break;
		if (err)
			*attached = true;
		err = 0;
	}
out_unlock:
	up_read(&task->signal->exec_update_lock);
	return err;
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
		/*
		 * An exiting thread clones no more, and the threads it cloned
		 * are in the list already; a zombie leader would otherwise
		 * be refused (ESRCH) in every round, see cycs_scan_process().
		 */
		if (READ_ONCE(t->flags) & PF_EXITING)
			continue;
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
 * One scan of the thread group; *attached says a counter was added, or a
 * thread began to exit after the snapshot: either way, scan again.
 */
static int cycs_scan_process(struct cycs_session *s, struct task_struct *leader, bool *attached,
			     bool *more)
{
	struct cycs_cover cover = {};
	struct task_struct **tasks;
	unsigned int max, n, i;
	int err = 0;

	/*
	 * A size, read without the siglock that the group's clones and exits
	 * change it under: a snapshot that fills it sets *more, and a thread
	 * that comes later is in the next scan.
	 */
	max = data_race(get_nr_threads(leader)) + 16;
	tasks = kvmalloc_array(max, sizeof(*tasks), GFP_KERNEL);
	if (!tasks)
		return -ENOMEM;
	n = cycs_snapshot_threads(leader, tasks, max, more);
	/*
	 * After the snapshot: a thread in it inherited at its clone, before
	 * it joined the group, so its copies are on the lists already.
	 */
	err = cycs_cover_build(s, &cover);
	for (i = 0; i < n; i++) {
		if (!err) {
			err = cycs_attach_task(s, tasks[i], &cover, attached);
			/*
			 * It began to exit after the snapshot, maybe just after
			 * cloning a thread that is in no snapshot yet and, as its
			 * parent had no counter, inherited none: scan again, or
			 * that thread (a relay of clone-then-exit) is never
			 * sampled.
			 */
			if (err == -ESRCH) {
				*attached = true;
				err = 0;
			}
		}
		put_task_struct(tasks[i]);
	}
	cycs_cover_free(&cover);
	kvfree(tasks);
	return err;
}

/*
 * Attach to every thread of the process.  A thread cloned while we attach
 * either inherits the counters of the thread that cloned it (if that one
 * already had them) or shows up in a later scan; scan until a round
 * attaches nothing, so no thread is missed and none gets two counters in a
 * slot.  A clone still in flight when the last scan looks is the probe's
 * (forks.c, armed before the first scan): its thread either inherited all
 * of our counters or attaches itself before it first runs user code.
 */
static int cycs_attach_process(struct cycs_session *s, struct task_struct *leader)
{
	bool attached, more;
	unsigned int round;
	int err;

	for (round = 0; round < CYCS_MAX_SCAN_ROUNDS; round++) {
		attached = false;
		err = cycs_scan_process(s, leader, &attached, &more);
		if (err)
			return err;
		if (attached || more)
			continue;
		return list_empty(&s->task_events) ? -ESRCH : 0;
	}
	return -EAGAIN;
}

/**
 * cycs_counters_attach_clone - give the current thread the counters it lacks
 * @s: a process session armed by START run @run (forks.c)
 * @run: s->fork_run when the probe queued us
 *
 * Called by a thread that forks.c found without copies of our counters, on
 * its way to user space for the first time; takes s->lock, so it waits for
 * a START in progress, and does nothing for a session stopped or started
 * again since.  What START's scans gave the thread meanwhile is kept.
 */
void cycs_counters_attach_clone(struct cycs_session *s, u64 run)
{
	struct cycs_cover cover = {};
	bool attached = false;
	int err;

	if (mutex_lock_killable(&s->lock))
		return;
	/*
	 * fork_run counts the STARTs that armed clones; a later START of a
	 * thread or CPU session arms nothing and leaves it alone.
	 */
	if (!READ_ONCE(s->active) || !s->fork_armed || s->fork_run != run)
		goto out_unlock;
	err = cycs_cover_build(s, &cover);
	if (!err)
		err = cycs_attach_task(s, current, &cover, &attached);
	cycs_cover_free(&cover);
	/* -ESRCH: it is exiting, and will not run */
	if (err && err != -ESRCH)
		pr_warn_ratelimited("pid %d: thread %d cloned during START goes unsampled (%d)\n",
				    s->target_tgid, task_pid_nr(current), err);
out_unlock:
	mutex_unlock(&s->lock);
}

static int cycs_start_tasks(struct cycs_session *s)
{
	struct task_struct *task = s->target_task;
	bool attached = false;
	int err;

	if (s->cfg.target_type == CYCSAMPLE_TARGET_PID) {
		err = cycs_forks_arm(s);
		return err ?: cycs_attach_process(s, task);
	}
	err = cycs_attach_task(s, task, NULL, &attached);
	if (!err && !attached)
		err = -ESRCH;
	return err;
}

static void cycs_stop_tasks(struct cycs_session *s)
{
	struct cycs_task_event *te, *tmp;

	list_for_each_entry_safe(te, tmp, &s->task_events, node) {
		/* also frees the inherited copies; no handler runs after it */
		perf_event_release_kernel(te->event);
		put_task_struct(te->task);
		list_del(&te->node);
		kfree(te);
	}
	s->nr_task_events = 0;
}

/**
 * cycs_counters_ended - is there nothing left to sample?
 * @s: a running PID or TID session; s->lock held
 *
 * A process session lives while any of its threads, or any child process
 * forked after START, still counts: the inherited copies of our counters
 * are on their lists until their task exits.  A counter whose task exited
 * is in state EXIT, and so is one the kernel took away: an exec that
 * leaves the process not dumpable (a setuid program) detaches every perf
 * event of the thread that ran it, ours included (begin_new_exec() calls
 * perf_event_exit_task()); the target then lives on but will never be
 * sampled again.  Either way the session should end.
 */
bool cycs_counters_ended(struct cycs_session *s)
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
 * PMU list without s->lock (which START holds while adding us).
 */
int cycs_cpu_online(unsigned int cpu, struct hlist_node *node)
{
	struct cycs_session *s = hlist_entry(node, struct cycs_session, cpuhp_node);
	struct perf_event *event;

	event = cycs_pmus_cpu_counter(s, cpu);
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

/* What START needs besides the counters; kept until the session goes. */
static int cycs_counters_alloc(struct cycs_session *s)
{
	if (!s->pmu_of_cpu) {
		s->pmu_of_cpu = kcalloc(nr_cpu_ids, sizeof(*s->pmu_of_cpu), GFP_KERNEL);
		if (!s->pmu_of_cpu)
			return -ENOMEM;
	}
	if (s->cfg.target_type == CYCSAMPLE_TARGET_CPUS)
		return 0;
	return cycs_exec_ids_start(s);
}

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

	/* set by the first clock counter, see cycs_fill_attr() */
	WRITE_ONCE(s->clock_period_ns, 0);
	err = cycs_counters_alloc(s);
	if (!err)
		err = cycs_pmus_start(s);
	if (err)
		return err;
	/*
	 * The handler writes nothing until every counter is in place: a START
	 * that fails half way (a thread that could not get its counter) must
	 * leave no records behind.  Overflows before that count as dropped.
	 * MMAP records wait for it too; the probe is armed first so that a
	 * thread attached by START has none of its mappings missed after.
	 */
	if (s->cfg.flags & CYCSAMPLE_CFG_MMAP)
		err = cycs_maps_arm(s);
	if (!err && s->cfg.target_type == CYCSAMPLE_TARGET_CPUS)
		err = cycs_start_cpus(s);
	else if (!err)
		err = cycs_start_tasks(s);
	if (err)
		cycs_counters_stop(s);
	else
		/* mappings.c reaches the session by its list, not a counter */
		smp_store_release(&s->active, true);
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
	/* no clone is attached to counters on their way out */
	cycs_forks_disarm(s);
	/* no MMAP record either: the rings may go once the counters have */
	cycs_maps_disarm(s);
	cycs_stop_tasks(s);
	cycs_stop_cpus(s);
}

/* Free what cycs_counters_start() kept; the counters are gone. */
void cycs_counters_free(struct cycs_session *s)
{
	kfree(s->pmu_of_cpu);
	s->pmu_of_cpu = NULL;
	kvfree(s->exec_ids);
	s->exec_ids = NULL;
}
