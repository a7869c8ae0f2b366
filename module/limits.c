// SPDX-License-Identifier: GPL-2.0
/*
 * cycsample - what one user may hold: sessions, and ring memory.
 *
 * Sessions are counted per user (the opener's real uid) against the
 * parameter max_sessions, so that one user holding all of them locks out
 * no one else; CAP_SYS_ADMIN is never refused.
 *
 * Ring memory is charged the way perf_mmap() charges perf's own buffers,
 * to the same counters: first to the user's perf budget,
 * kernel.perf_event_mlock_kb per online CPU, shared with the user's perf
 * buffers; what does not fit there goes to the caller's pinned memory
 * (VmPin in /proc/PID/status), which must stay within RLIMIT_MEMLOCK unless
 * the caller has CAP_IPC_LOCK or perf_event_paranoid is -1.  Otherwise
 * CONFIGURE fails with -EPERM, as mmap() of a perf buffer does.  The charge
 * is taken at CONFIGURE, when the memory is allocated, and given back when
 * the rings are freed (after the last munmap()).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/cpumask.h>
#include <linux/cred.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/user.h>
#include <linux/xarray.h>

#include "cycsample.h"
#include "compat.h"

/* Open sessions per uid (an xa_mk_value() count), for users with any. */
static DEFINE_XARRAY(cycs_user_sessions);
static DEFINE_MUTEX(cycs_user_sessions_lock);

/**
 * cycs_limit_open - count a new session of the caller's user
 * @counted: set when the session was counted (uncount it at release)
 *
 * Return: 0, -EBUSY when the user has max_sessions open, or -ENOMEM.
 */
int cycs_limit_open(bool *counted)
{
	unsigned long uid = __kuid_val(current_uid());
	unsigned long n;
	void *old;
	int err = 0;

	*counted = false;
	if (ns_capable_noaudit(&init_user_ns, CAP_SYS_ADMIN))
		return 0;
	mutex_lock(&cycs_user_sessions_lock);
	old = xa_load(&cycs_user_sessions, uid);
	n = old ? xa_to_value(old) : 0;
	if (n >= READ_ONCE(cycs_max_sessions)) {
		err = -EBUSY;
		goto out_unlock;
	}
	err = xa_err(xa_store(&cycs_user_sessions, uid, xa_mk_value(n + 1), GFP_KERNEL));
	if (!err)
		*counted = true;
out_unlock:
	mutex_unlock(&cycs_user_sessions_lock);
	return err;
}

/**
 * cycs_limit_release - the end of a session counted by cycs_limit_open()
 * @uid: the opener's real uid
 */
void cycs_limit_release(kuid_t uid)
{
	unsigned long key = __kuid_val(uid);
	unsigned long n;
	void *old;

	mutex_lock(&cycs_user_sessions_lock);
	old = xa_load(&cycs_user_sessions, key);
	n = old ? xa_to_value(old) : 0;
	if (WARN_ON_ONCE(!n))
		goto out_unlock;
	if (n == 1)
		xa_erase(&cycs_user_sessions, key);
	else
		xa_store(&cycs_user_sessions, key, xa_mk_value(n - 1), GFP_KERNEL);
out_unlock:
	mutex_unlock(&cycs_user_sessions_lock);
}

/* At module exit every session is gone: nothing is left to free. */
void cycs_limits_exit(void)
{
	WARN_ON_ONCE(!xa_empty(&cycs_user_sessions));
	xa_destroy(&cycs_user_sessions);
}

/**
 * cycs_charge_rings - charge ring memory to the caller as perf_mmap() does
 * @c: filled with what was charged and to whom, for cycs_uncharge_rings()
 * @pages: pages of the ring area
 * @sc: kernel.perf_event_mlock_kb and kernel.perf_event_paranoid
 *
 * Return: 0, or -EPERM when the pages fit neither the user's perf budget
 * nor the caller's RLIMIT_MEMLOCK.
 */
int cycs_charge_rings(struct cycs_charge *c, unsigned long pages, const struct cycs_sysctls *sc)
{
	const struct cred *cred = current_cred();
	atomic_long_t *budget = cycs_user_perf_mlock(cred->user);
	struct mm_struct *mm = current->mm;
	unsigned long limit, locked, extra = 0;

	if (!mm)
		return -EPERM;
	limit = (unsigned long)max(sc->val[CYCS_SYSCTL_MLOCK_KB], 0) >> (PAGE_SHIFT - 10);
	limit *= num_online_cpus();
	/* the sysctl may have been lowered below what is charged already */
	locked = min_t(unsigned long, atomic_long_read(budget), limit) + pages;
	if (locked > limit)
		extra = locked - limit;
	if (extra && sc->val[CYCS_SYSCTL_PARANOID] > -1 && !capable(CAP_IPC_LOCK) &&
	    atomic64_read(&mm->pinned_vm) + extra > rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT)
		return -EPERM;

	atomic_long_add(pages - extra, budget);
	atomic64_add(extra, &mm->pinned_vm);
	/* the user through its credentials: free_uid() is not exported to 5.10 */
	c->cred = get_cred(cred);
	c->mm = mm;
	mmgrab(mm);
	c->user_pages = pages - extra;
	c->pinned_pages = extra;
	return 0;
}

/**
 * cycs_uncharge_rings - give back what cycs_charge_rings() charged
 * @c: the charge; nothing happens if it is empty
 */
void cycs_uncharge_rings(struct cycs_charge *c)
{
	if (!c->cred)
		return;
	atomic_long_sub(c->user_pages, cycs_user_perf_mlock(c->cred->user));
	atomic64_sub(c->pinned_pages, &c->mm->pinned_vm);
	put_cred(c->cred);
	mmdrop(c->mm);
	c->cred = NULL;
	c->mm = NULL;
}
