/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cycsample - the one place that knows kernel versions.
 *
 * Each shim tests for the feature first and falls back to a version check
 * only where no macro tells the two apart.  Each says which kernel changed.
 * No other file may test LINUX_VERSION_CODE.  The CYCS_HAVE_* macros come
 * from module/Kbuild, which looks for exports in Module.symvers and for
 * declarations in the kernel's headers.
 */
#ifndef CYCS_COMPAT_H
#define CYCS_COMPAT_H

#include <linux/version.h>
#include <linux/timer.h>
#include <linux/mm.h>
#include <linux/fs.h>
#include <linux/fs_struct.h>
#include <linux/sched.h>
#include <linux/sched/coredump.h>
#include <linux/sched/task.h>
#include <linux/capability.h>
#include <linux/perf_event.h>
#include <linux/sched/signal.h>
#include <linux/sched/user.h>

/*
 * vma->vm_flags became read-only in 6.3; from then on the flags are changed
 * through vm_flags_mod(), which also takes the VMA lock where needed.  A
 * distribution could backport the helpers (an older kernel with per-VMA
 * locks), so the header is tested, not the version.
 */
static inline void cycs_vm_flags_mod(struct vm_area_struct *vma, unsigned long set,
				     unsigned long clear)
{
#ifdef CYCS_HAVE_VM_FLAGS_MOD
	vm_flags_mod(vma, set, clear);
#else
	vma->vm_flags = (vma->vm_flags | set) & ~clear;
#endif
}

/*
 * Three things about a perf event that no exported interface tells, read
 * from perf's own fields here and nowhere else.  Each holds for every
 * kernel from 5.10 to 7.3 (kernel/events/core.c, include/linux/perf_event.h).
 */

/*
 * Throttled: perf sets hw.interrupts to MAX_INTERRUPTS until the next tick.
 * The macro (~0ULL) is private to kernel/events/core.c.
 */
#ifdef MAX_INTERRUPTS
#define CYCS_MAX_INTERRUPTS MAX_INTERRUPTS
#else
#define CYCS_MAX_INTERRUPTS (~0ULL)
#endif

static inline bool cycs_event_throttled(struct perf_event *event)
{
	return READ_ONCE(event->hw.interrupts) == CYCS_MAX_INTERRUPTS;
}

/*
 * Detached from its task by perf_event_exit_task() (the task exited, or a
 * setuid exec): state PERF_EVENT_STATE_EXIT (-3), or one of the states below
 * it (DEAD, and REVOKED in 7.x).
 */
static inline bool cycs_event_exited(struct perf_event *event)
{
	return READ_ONCE(event->state) <= PERF_EVENT_STATE_EXIT;
}

/*
 * The copies of an inherited counter, one per thread or child process that
 * inherited it: perf keeps them on parent->child_list under
 * parent->child_mutex, which cycs_lock_children() takes (the walk needs
 * it held).  Not an exported interface; the same from 5.10 to 7.3.
 */
static inline void cycs_lock_children(struct perf_event *event)
{
	mutex_lock(&event->child_mutex);
}

static inline void cycs_unlock_children(struct perf_event *event)
{
	mutex_unlock(&event->child_mutex);
}

#define cycs_for_each_child(child, event) \
	list_for_each_entry(child, &(event)->child_list, child_list)

/*
 * The copies of an inherited event that perf made for the threads and
 * children created since: event->child_list, under event->child_mutex.
 * Returns whether there is one (in @task's context, if @task is given).
 */
static inline bool cycs_event_has_child(struct perf_event *event, struct task_struct *task)
{
	struct perf_event *child;
	bool found = false;

	cycs_lock_children(event);
	cycs_for_each_child(child, event) {
		if (!task || READ_ONCE(child->ctx->task) == task) {
			found = true;
			break;
		}
	}
	cycs_unlock_children(event);
	return found;
}

/* How many copies there are now; takes the lock. */
static inline unsigned int cycs_nr_children(struct perf_event *event)
{
	struct perf_event *child;
	unsigned int n = 0;

	cycs_lock_children(event);
	cycs_for_each_child(child, event)
		n++;
	cycs_unlock_children(event);
	return n;
}

/*
 * The task a task counter counts in: its context's (event->ctx->task), not
 * the one it was created for, because perf's context switch optimisation
 * swaps whole contexts between a thread and its clones.  TASK_TOMBSTONE
 * once the task has exited.
 */
static inline const struct task_struct *cycs_event_task(struct perf_event *event)
{
	return READ_ONCE(event->ctx->task);
}

/*
 * The perf contexts of a task, read under rcu_read_lock() by forks.c's
 * probe: one per context type (hardware, software) up to 6.1, a single one
 * from 6.2 ("perf: Rewrite core context handling").  A context's event list
 * is an RCU list (list_add_rcu()/list_del_rcu() of event_entry), and events
 * and contexts are freed after a grace period, from 5.10 to 7.3.
 */
#ifdef CYCS_HAVE_PERF_TASK_CONTEXTS
#define CYCS_NR_TASK_CONTEXTS perf_nr_task_contexts
static inline struct perf_event_context *cycs_task_context(struct task_struct *task, unsigned int n)
{
	return READ_ONCE(task->perf_event_ctxp[n]);
}
#else
#define CYCS_NR_TASK_CONTEXTS 1
static inline struct perf_event_context *cycs_task_context(struct task_struct *task, unsigned int n)
{
	return READ_ONCE(task->perf_event_ctxp);
}
#endif

#define cycs_for_each_context_event(event, ctx) \
	list_for_each_entry_rcu(event, &(ctx)->event_list, event_entry)

/*
 * Does @task count with @top, or with a copy perf inherited from it (a
 * copy's parent is always the top-level event)?  rcu_read_lock() held.
 */
static inline bool cycs_task_counts_with(struct task_struct *task, const struct perf_event *top)
{
	struct perf_event_context *ctx;
	struct perf_event *event;
	unsigned int n;

	for (n = 0; n < CYCS_NR_TASK_CONTEXTS; n++) {
		ctx = cycs_task_context(task, n);
		if (!ctx)
			continue;
		cycs_for_each_context_event(event, ctx) {
			if (event == top || event->parent == top)
				return true;
		}
	}
	return false;
}

/*
 * A reference on a file whose count may already have dropped to zero (its
 * release then runs, or is about to): none is taken then.  The count became
 * a file_ref_t in 6.13.
 */
static inline bool cycs_get_file_unless_released(struct file *file)
{
#ifdef CYCS_HAVE_FILE_REF
	return file_ref_get(&file->f_ref);
#else
	return atomic_long_inc_not_zero(&file->f_count);
#endif
}

/*
 * The path /proc/PID/maps shows for a mapped file: 6.8 gave the files an
 * overlay or a FUSE passthrough maps (backing files) the path the user
 * opened, file_user_path(); before, f_path was that path.
 */
static inline const struct path *cycs_file_user_path(struct file *file)
{
#ifdef CYCS_HAVE_FILE_USER_PATH
	return file_user_path(file);
#else
	return &file->f_path;
#endif
}

/* The inode /proc/PID/maps shows for a mapped file: the one of that path. */
static inline const struct inode *cycs_file_user_inode(struct file *file)
{
#ifdef CYCS_HAVE_FILE_USER_PATH
	/* file_user_inode() came with file_user_path(), in 6.8 */
	return file_user_inode(file);
#else
	return file_inode(file);
#endif
}

/*
 * The task is inside execve(): its user registers are still the old
 * program's while its address space may already be the new one's.  The
 * in_execve bit of task_struct, the same from 5.10 to 7.3.
 */
static inline bool cycs_in_execve(struct task_struct *task)
{
	return task->in_execve;
}

/*
 * PERF_PMU_CAP_EXTENDED_HW_TYPE (5.13): the generic cycles event aimed at
 * one PMU with config = type << PERF_PMU_TYPE_SHIFT.  x86 hybrid PMUs have
 * it since 5.13, arm_pmu since 6.6 (absent from 6.1's drivers/perf/arm_pmu.c).
 */
#ifdef PERF_PMU_CAP_EXTENDED_HW_TYPE
#define CYCS_PMU_CAP_EXTENDED_HW_TYPE PERF_PMU_CAP_EXTENDED_HW_TYPE
#else
#define CYCS_PMU_CAP_EXTENDED_HW_TYPE 0
#define PERF_PMU_TYPE_SHIFT 32
#endif

/*
 * Without it, an arm64 PMU is asked for its own raw CPU_CYCLES event, the
 * architectural 0x11 of PMUv3 (ARMV8_PMUV3_PERFCTR_CPU_CYCLES, in
 * asm/perf_event.h up to 6.1 and in linux/perf/arm_pmuv3.h from 6.6 on).
 */
#ifdef CONFIG_ARM64
#define CYCS_RAW_CPU_CYCLES 0x11
#endif

/*
 * Threads with an mm but no user context to walk: PF_USER_WORKER (6.4)
 * marks kernel threads cloned from a user thread (io_uring workers, vhost);
 * before 6.4 io_uring's workers carry only PF_IO_WORKER (cloned from the
 * ring's owner into its thread group since 5.12, and in Debian's 5.10,
 * whose io_uring is the later one backported).
 */
#ifdef PF_USER_WORKER
#define CYCS_PF_USER_WORKER PF_USER_WORKER
#else
#define CYCS_PF_USER_WORKER 0
#endif
#ifdef PF_IO_WORKER
#define CYCS_PF_IO_WORKER PF_IO_WORKER
#else
#define CYCS_PF_IO_WORKER 0
#endif
#define CYCS_PF_NO_USER (PF_KTHREAD | CYCS_PF_USER_WORKER | CYCS_PF_IO_WORKER)

/*
 * Dumpability moved from mm->flags (get_dumpable() == SUID_DUMP_USER) to the
 * RCU-managed task->exec_state (TASK_DUMPABLE_OWNER) in 7.3, and the
 * SUID_DUMP_* macros went with it: their presence is the feature test.
 */
#ifdef SUID_DUMP_USER
static inline bool cycs_task_dumpable(struct task_struct *task)
{
	bool ok;

	task_lock(task);
	ok = task->mm && get_dumpable(task->mm) == SUID_DUMP_USER;
	task_unlock(task);
	return ok;
}
#else
#include <linux/sched/exec_state.h>
static inline bool cycs_task_dumpable(struct task_struct *task)
{
	struct task_exec_state *es;
	bool ok;

	rcu_read_lock();
	es = rcu_dereference(task->exec_state);
	ok = es && READ_ONCE(es->dumpable) == TASK_DUMPABLE_OWNER;
	rcu_read_unlock();
	return ok;
}
#endif

/*
 * Open a file from a kernel thread by an absolute path, resolved from the
 * root of pid 1.  Up to 6.x kernel threads share init_fs, whose root pid 1
 * moves when it switches to the real root; from 7.x they sit in an empty
 * nullfs and borrow pid 1's state with scoped_with_init_fs(), a macro.
 */
static inline struct file *cycs_kthread_filp_open(const char *path, int flags)
{
#ifdef scoped_with_init_fs
	scoped_with_init_fs() return filp_open(path, flags, 0);
#else
	return filp_open(path, flags, 0);
#endif
}

/*
 * The vm_operations_struct callback that may refuse a split of the VMA was
 * called split until 5.10 and may_split from 5.11; same signature.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(5, 11, 0)
#define CYCS_VM_OP_MAY_SPLIT may_split
#else
#define CYCS_VM_OP_MAY_SPLIT split
#endif

/*
 * The parameters of the vm_operations_struct mremap callback: mremap()'s
 * flags came second in 5.11 and 5.12 only (added for MREMAP_DONTUNMAP,
 * reverted in 5.13).
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(5, 11, 0) && LINUX_VERSION_CODE < KERNEL_VERSION(5, 13, 0)
#define CYCS_VM_MREMAP_PARAMS struct vm_area_struct *vma, unsigned long flags
#else
#define CYCS_VM_MREMAP_PARAMS struct vm_area_struct *vma
#endif

/*
 * Debian's kernels (like Android's) carry a patch that adds
 * kernel.perf_event_paranoid = 3, their default: perf_event_open() then
 * refuses everyone without CAP_SYS_ADMIN.  The patch declares
 * perf_paranoid_any(), which reads an unexported variable; upstream kernels
 * have no such level and treat 3 as 2.
 */
static inline bool cycs_paranoid_any(int paranoid)
{
#ifdef CYCS_HAVE_PARANOID_ANY
	return paranoid > 2;
#else
	return false;
#endif
}

/*
 * perf_allow_kernel() and perf_allow_cpu(): the paranoid level and the LSM
 * hook perf_event_open() applies to kernel sampling and to CPU-wide events.
 * Up to 6.1 they are static inlines over unexported symbols; 6.12 exports
 * perf_allow_kernel(attr); 7.x exports both and drops the attr (the LSM
 * hook no longer takes it).  Where a helper is not exported only its
 * paranoid test is made here, with the same thresholds: the LSM hook
 * (security_perf_event_open()) is not reachable then.  Both run with the
 * caller's credentials (capable()), so callers override them with the
 * opener's.
 */
static inline int cycs_perf_allow_kernel(int paranoid)
{
#if defined(CYCS_HAVE_PERF_ALLOW_KERNEL) && defined(CYCS_PERF_ALLOW_VOID)
	return perf_allow_kernel();
#elif defined(CYCS_HAVE_PERF_ALLOW_KERNEL)
	struct perf_event_attr attr = { .size = sizeof(attr), .type = PERF_TYPE_HARDWARE };

	return perf_allow_kernel(&attr);
#else
	return paranoid > 1 && !perfmon_capable() ? -EACCES : 0;
#endif
}

static inline int cycs_perf_allow_cpu(int paranoid)
{
#if defined(CYCS_HAVE_PERF_ALLOW_CPU) && defined(CYCS_PERF_ALLOW_VOID)
	return perf_allow_cpu();
#else
	return paranoid > 0 && !perfmon_capable() ? -EACCES : 0;
#endif
}

/*
 * The pages of a user's perf buffers within perf_event_mlock_kb: counted in
 * user_struct.locked_vm, shared with other RLIMIT_MEMLOCK users, until perf
 * got its own user_struct.perf_mlock (in 7.x, and backported to Debian's
 * 6.1.192 but not to its 6.12.95: hence the test of the header).
 */
static inline atomic_long_t *cycs_user_perf_mlock(struct user_struct *user)
{
#ifdef CYCS_HAVE_USER_PERF_MLOCK
	return &user->perf_mlock;
#else
	return &user->locked_vm;
#endif
}

/*
 * The system workqueues got names that say what they are, per-CPU or not
 * (system_percpu_wq, system_dfl_wq), and the old system_wq and
 * system_unbound_wq became deprecated: 7.x warns when they are used.  The
 * new ones are in 6.12.95 too (a backport), so the header is tested.
 */
#ifdef CYCS_HAVE_SYSTEM_DFL_WQ
#define CYCS_PERCPU_WQ system_percpu_wq
#define CYCS_UNBOUND_WQ system_dfl_wq
#else
#define CYCS_PERCPU_WQ system_wq
#define CYCS_UNBOUND_WQ system_unbound_wq
#endif

/*
 * Timers: from_timer() became timer_container_of() in 6.16 (and went);
 * timer_delete_sync() came in 6.2 for del_timer_sync(), which 6.15
 * removed, and stable kernels got it too, so the header is tested.
 */
#ifndef timer_container_of
#define timer_container_of(var, t, field) from_timer(var, t, field)
#endif
#ifndef CYCS_HAVE_TIMER_DELETE_SYNC
#define timer_delete_sync del_timer_sync
#endif

#endif /* CYCS_COMPAT_H */
