// SPDX-License-Identifier: GPL-2.0
/*
 * cycsample - threads cloned while a process session attaches.
 *
 * perf copies a thread's counters into its clone early in copy_process()
 * (perf_event_init_task()), but the clone joins the thread list, where
 * START's scans find it, only at the end.  A clone that began before START
 * attached the cloning thread, and ends after START's last scan, brings in
 * a thread with no counter that no scan saw; nothing shows a module such a
 * clone while it is in flight.  Its end does show: kernel_clone() fires the
 * sched_process_fork tracepoint after copy_process(), before the new task
 * first runs.  While a process session is armed (from the start of START
 * until its counters go), a probe there compares the counters of the
 * cloning thread with the clone's.  A clone that lacks a copy of one of
 * ours gets a task work that attaches it, in its own context, on its way
 * to user space for the first time: it runs no user instruction unsampled,
 * so it cannot clone in its turn before it is covered.
 *
 * The probe runs for every fork in the system while any session is armed,
 * with preemption disabled up to 6.12 and in an SRCU section from 7.x: it
 * must not sleep, and a task with no perf context at all costs it one load.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/file.h>
#include <linux/perf_event.h>
#include <linux/rculist.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/task_work.h>
#include <linux/tracepoint.h>

#include "cycsample.h"
#include "compat.h"

/* Serializes arming and disarming: the list's writers and the registration. */
static DEFINE_MUTEX(cycs_forks_mutex);
/* The armed sessions (RCU: the probe reads it). */
static LIST_HEAD(cycs_forks_sessions);
static unsigned int cycs_forks_nr_armed;
static struct tracepoint *cycs_fork_tp;

/* One clone to attach, queued on it by the probe. */
struct cycs_fork_attach {
	struct callback_head work;
	struct cycs_session *s;
	u64 run;
};

/* In the clone's context, before its first return to user space. */
static void cycs_fork_attach_work(struct callback_head *work)
{
	struct cycs_fork_attach *fa = container_of(work, struct cycs_fork_attach, work);
	struct cycs_session *s = fa->s;
	struct file *file = s->file;

	/* killed before it ran: exit_task_work() runs us on its way out */
	if (!(current->flags & PF_EXITING))
		cycs_counters_attach_clone(s, fa->run);
	kfree(fa);
	/*
	 * Last: the file holds the session and, through its fops, the module.
	 * fput() never releases in place (it queues the release as a task
	 * work of its own, run after this one returns), so no code of the
	 * module runs after the module may go.
	 */
	fput(file);
}

/* Is @ctx an armed session?  rcu_read_lock() held. */
static bool cycs_forks_armed(const void *ctx)
{
	struct cycs_session *s;

	list_for_each_entry_rcu(s, &cycs_forks_sessions, fork_node)
		if (s == ctx)
			return true;
	return false;
}

static void cycs_fork_queue(struct cycs_session *s, struct task_struct *child)
{
	struct cycs_fork_attach *fa;

	const char *why = "no memory";

	/*
	 * On PREEMPT_RT the slab's locks may sleep, which the probe must
	 * not: such a clone goes unsampled, and says so.
	 */
	if (IS_ENABLED(CONFIG_PREEMPT_RT)) {
		why = "PREEMPT_RT: no allocation here";
		goto out_missed;
	}
	fa = kmalloc(sizeof(*fa), GFP_NOWAIT | __GFP_NOWARN);
	if (!fa)
		goto out_missed;
	/* a file already on its way to release: its session stops now */
	if (!cycs_get_file_unless_released(s->file)) {
		kfree(fa);
		return;
	}
	fa->s = s;
	fa->run = READ_ONCE(s->fork_run);
	init_task_work(&fa->work, cycs_fork_attach_work);
	/* fails only for a task past exit_task_work(), which a new one is not */
	if (task_work_add(child, &fa->work, TWA_RESUME)) {
		fput(s->file);
		kfree(fa);
		why = "it is exiting";
		goto out_missed;
	}
	return;

out_missed:
	pr_warn_ratelimited("pid %d: thread %d cloned during START goes unsampled (%s)\n",
			    s->target_tgid, task_pid_nr(child), why);
}

/*
 * sched_process_fork: @parent (current) has cloned @child, which has not
 * run yet.  For each of our inherited counters @parent counts with, the
 * child should have a copy; one without got its copies from @parent before
 * START attached @parent.  TID sessions do not inherit (attr.inherit is 0)
 * and CPU sessions count CPUs: both are left alone.  So is a kernel thread
 * (a PID session on kthreadd, say): it never returns to user space, so a
 * task work would wait for its exit, holding the session's file until then.
 */
static void cycs_fork_probe(void *data, struct task_struct *parent, struct task_struct *child)
{
	const struct cycs_session *queued = NULL;
	struct perf_event_context *ctx;
	struct perf_event *event, *top;
	unsigned int n;

	if (child->flags & CYCS_PF_NO_USER)
		return;
	rcu_read_lock();
	for (n = 0; n < CYCS_NR_TASK_CONTEXTS; n++) {
		ctx = cycs_task_context(parent, n);
		if (!ctx)
			continue;
		cycs_for_each_context_event(event, ctx) {
			if (READ_ONCE(event->overflow_handler) != cycs_overflow)
				continue;
			top = event->parent ?: event;
			if (!top->attr.inherit || top->overflow_handler_context == queued ||
			    cycs_task_counts_with(child, top))
				continue;
			/* the session is only known alive while armed */
			if (!cycs_forks_armed(top->overflow_handler_context))
				continue;
			queued = top->overflow_handler_context;
			cycs_fork_queue(top->overflow_handler_context, child);
		}
	}
	rcu_read_unlock();
}

static void cycs_fork_tp_match(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "sched_process_fork"))
		*(struct tracepoint **)priv = tp;
}

/* cycs_forks_mutex held */
static int cycs_forks_register(void)
{
	int err;

	if (!cycs_fork_tp)
		for_each_kernel_tracepoint(cycs_fork_tp_match, &cycs_fork_tp);
	if (!cycs_fork_tp) {
		pr_warn_once("no sched_process_fork tracepoint: process sessions refused\n");
		return -EOPNOTSUPP;
	}
	err = tracepoint_probe_register(cycs_fork_tp, cycs_fork_probe, NULL);
	if (err)
		pr_warn("sched_process_fork: probe not registered (%d)\n", err);
	return err;
}

/**
 * cycs_forks_arm - watch the clones of a process session's threads
 * @s: a PID session about to attach; s->lock held
 *
 * Registers the probe for the first armed session.  When it returns, every
 * clone that ends from then on is seen by the probe, and every clone that
 * ended before is in its thread list for START's scans.
 */
int cycs_forks_arm(struct cycs_session *s)
{
	int err = 0;

	mutex_lock(&cycs_forks_mutex);
	if (!cycs_forks_nr_armed)
		err = cycs_forks_register();
	if (!err) {
		cycs_forks_nr_armed++;
		s->fork_run++;
		list_add_rcu(&s->fork_node, &cycs_forks_sessions);
		s->fork_armed = true;
	}
	mutex_unlock(&cycs_forks_mutex);
	/*
	 * A clone that passed the tracepoint without seeing the new probe
	 * did so before this grace period ends, and joined its thread list
	 * before that: the scans that follow see it.
	 */
	if (!err)
		synchronize_rcu();
	return err;
}

/**
 * cycs_forks_disarm - stop watching clones for @s
 * @s: the session; s->lock held; nothing if it was not armed
 *
 * When it returns no probe looks at @s, so its counters and memory may
 * go.  Task works already queued hold the file: they find the session
 * stopped (or in a later START: fork_run differs) and do nothing.
 */
void cycs_forks_disarm(struct cycs_session *s)
{
	bool last;

	if (!s->fork_armed)
		return;
	mutex_lock(&cycs_forks_mutex);
	list_del_rcu(&s->fork_node);
	last = !--cycs_forks_nr_armed;
	if (last)
		tracepoint_probe_unregister(cycs_fork_tp, cycs_fork_probe, NULL);
	mutex_unlock(&cycs_forks_mutex);
	/* the probe reads sessions under rcu_read_lock() only */
	if (last)
		tracepoint_synchronize_unregister();
	synchronize_rcu();
	s->fork_armed = false;
}
