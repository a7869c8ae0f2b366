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
 *
 * One rule is stricter than perf's.  A perf buffer lives in a mapping and
 * dies with the mm it was charged to; our rings live with the session, which
 * may outlive the process that configured it (a child CONFIGUREs a session
 * its parent holds, then exits).  Its pinned_vm would be gone, so every
 * fresh child could pin another RLIMIT_MEMLOCK.  The pages a user holds
 * beyond its perf budget therefore also count together, over all of its
 * sessions, against the caller's RLIMIT_MEMLOCK.
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

/*
 * Per uid, for users with any: open sessions, and ring pages pinned beyond
 * the perf budget (xa_mk_value() counts).  The lock is a leaf: it is taken
 * under a session's lock and under mmap_lock (the last munmap() frees).
 */
static DEFINE_XARRAY(cycs_user_sessions);
static DEFINE_XARRAY(cycs_user_pinned);
static DEFINE_MUTEX(cycs_users_lock);

static unsigned long cycs_user_count(struct xarray *xa, kuid_t uid)
{
	void *v = xa_load(xa, __kuid_val(uid));

	return v ? xa_to_value(v) : 0;
}

/* Only a count going up from 0 allocates: going down cannot fail. */
static int cycs_user_count_set(struct xarray *xa, kuid_t uid, unsigned long n)
{
	if (!n) {
		xa_erase(xa, __kuid_val(uid));
		return 0;
	}
	return xa_err(xa_store(xa, __kuid_val(uid), xa_mk_value(n), GFP_KERNEL));
}

/**
 * cycs_limit_open - count a new session of the caller's user
 * @counted: set when the session was counted (uncount it at release)
 *
 * Return: 0, -EBUSY when the user has max_sessions open, or -ENOMEM.
 */
int cycs_limit_open(bool *counted)
{
	kuid_t uid = current_uid();
	unsigned long n;
	int err;

	*counted = false;
	if (ns_capable_noaudit(&init_user_ns, CAP_SYS_ADMIN))
		return 0;
	mutex_lock(&cycs_users_lock);
	n = cycs_user_count(&cycs_user_sessions, uid);
	err = n >= READ_ONCE(cycs_max_sessions)
		      ? -EBUSY
		      : cycs_user_count_set(&cycs_user_sessions, uid, n + 1);
	mutex_unlock(&cycs_users_lock);
	*counted = !err;
	return err;
}

/**
 * cycs_limit_release - the end of a session counted by cycs_limit_open()
 * @uid: the opener's real uid
 */
void cycs_limit_release(kuid_t uid)
{
	unsigned long n;

	mutex_lock(&cycs_users_lock);
	n = cycs_user_count(&cycs_user_sessions, uid);
	if (!WARN_ON_ONCE(!n))
		cycs_user_count_set(&cycs_user_sessions, uid, n - 1);
	mutex_unlock(&cycs_users_lock);
}

/* At module exit every session is gone: nothing is left to free. */
void cycs_limits_exit(void)
{
	WARN_ON_ONCE(!xa_empty(&cycs_user_sessions));
	WARN_ON_ONCE(!xa_empty(&cycs_user_pinned));
	xa_destroy(&cycs_user_sessions);
	xa_destroy(&cycs_user_pinned);
}

/* What @old (a session's current rings, about to be replaced) holds of the same charges. */
static void cycs_charge_credit(const struct cycs_charge *old, const struct cred *cred,
			       const struct mm_struct *mm, unsigned long *user_pages,
			       unsigned long *pinned_mm, unsigned long *pinned_user)
{
	*user_pages = 0;
	*pinned_mm = 0;
	*pinned_user = 0;
	if (!old || !old->cred)
		return;
	if (old->cred->user == cred->user)
		*user_pages = old->user_pages;
	if (old->mm == mm)
		*pinned_mm = old->pinned_pages;
	if (uid_eq(old->cred->uid, cred->uid))
		*pinned_user = old->pinned_pages;
}

/*
 * The pages that do not fit the user's perf budget of @limit pages, counted
 * without @credit (the rings being replaced).  The sysctl may have been
 * lowered below what is charged already.
 */
static unsigned long cycs_over_budget(atomic_long_t *budget, unsigned long credit,
				      unsigned long limit, unsigned long pages)
{
	unsigned long locked = atomic_long_read(budget);

	locked = min(locked - min(locked, credit), limit) + pages;
	return locked > limit ? locked - limit : 0;
}

/**
 * cycs_charge_rings - charge ring memory to the caller as perf_mmap() does
 * @c: filled with what was charged and to whom, for cycs_uncharge_rings()
 * @pages: pages of the ring area
 * @old: the charge of the rings these replace once charged (re-CONFIGURE), or
 *	NULL: judged as if it were given back already, which it is right after
 * @sc: kernel.perf_event_mlock_kb and kernel.perf_event_paranoid
 *
 * Return: 0, -EPERM when the pages fit neither the user's perf budget nor
 * the caller's RLIMIT_MEMLOCK, or -ENOMEM.
 */
int cycs_charge_rings(struct cycs_charge *c, unsigned long pages, const struct cycs_charge *old,
		      const struct cycs_sysctls *sc)
{
	const struct cred *cred = current_cred();
	atomic_long_t *budget = cycs_user_perf_mlock(cred->user);
	unsigned long credit_user, credit_mm, credit_pinned;
	unsigned long limit, extra, memlock, held, pinned;
	struct mm_struct *mm = current->mm;
	bool lifted;
	int err = 0;

	if (!mm)
		return -EPERM;
	cycs_charge_credit(old, cred, mm, &credit_user, &credit_mm, &credit_pinned);
	limit = (unsigned long)max(sc->val[CYCS_SYSCTL_MLOCK_KB], 0) >> (PAGE_SHIFT - 10);
	limit *= num_online_cpus();
	/*
	 * capable() may audit: ask only when the pages will not fit the budget
	 * (as perf does), and outside the lock, which munmap() takes.
	 */
	lifted = sc->val[CYCS_SYSCTL_PARANOID] <= -1 ||
		 (cycs_over_budget(budget, credit_user, limit, pages) && capable(CAP_IPC_LOCK));

	mutex_lock(&cycs_users_lock);
	extra = cycs_over_budget(budget, credit_user, limit, pages);
	held = cycs_user_count(&cycs_user_pinned, cred->uid);
	if (extra && !lifted) {
		memlock = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
		pinned = atomic64_read(&mm->pinned_vm);
		pinned -= min(pinned, credit_mm);
		if (pinned + extra > memlock || held - min(held, credit_pinned) + extra > memlock)
			err = -EPERM;
	}
	if (!err && extra)
		err = cycs_user_count_set(&cycs_user_pinned, cred->uid, held + extra);
	if (!err) {
		atomic_long_add(pages - extra, budget);
		atomic64_add(extra, &mm->pinned_vm);
	}
	mutex_unlock(&cycs_users_lock);
	if (err)
		return err;

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
	unsigned long held;

	if (!c->cred)
		return;
	atomic_long_sub(c->user_pages, cycs_user_perf_mlock(c->cred->user));
	atomic64_sub(c->pinned_pages, &c->mm->pinned_vm);
	if (c->pinned_pages) {
		mutex_lock(&cycs_users_lock);
		held = cycs_user_count(&cycs_user_pinned, c->cred->uid);
		if (!WARN_ON_ONCE(held < c->pinned_pages))
			cycs_user_count_set(&cycs_user_pinned, c->cred->uid,
					    held - c->pinned_pages);
		mutex_unlock(&cycs_users_lock);
	}
	put_cred(c->cred);
	mmdrop(c->mm);
	c->cred = NULL;
	c->mm = NULL;
}
