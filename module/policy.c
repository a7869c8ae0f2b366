// SPDX-License-Identifier: GPL-2.0
/*
 * cycsample - what perf_event_open() would refuse, applied to a session.
 *
 * perf_event_create_kernel_counter() skips every check the system call
 * makes, so the module makes them itself: with the kernel's exported
 * helpers where a kernel has them (compat.h says which), and with its own
 * equivalent where it does not.  Documentation/admin-guide.rst has the
 * table of perf's rules and what this file does for each.
 *
 * Everything is judged with the credentials of the session's opener,
 * captured at open() as /proc/kallsyms does: a file descriptor handed to
 * another process, more privileged or not, keeps the rights of whoever
 * opened it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/math64.h>
#include <linux/pid_namespace.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/security.h>

#include "cycsample.h"
#include "compat.h"

/**
 * cycs_policy_open - may the caller open a session, and is it privileged?
 * @privileged: set to perfmon_capable()
 *
 * perf_event_open() refuses everyone but CAP_SYS_ADMIN at the paranoid
 * level 3 of Debian's kernels; below that, unprivileged users get the
 * narrow mode, and only if the administrator set the parameter
 * unprivileged.  Sleeps.
 */
int cycs_policy_open(bool *privileged)
{
	struct cycs_sysctls sc;

	*privileged = perfmon_capable();
	if (!*privileged && !READ_ONCE(cycs_unprivileged))
		return -EACCES;
	if (ns_capable_noaudit(&init_user_ns, CAP_SYS_ADMIN))
		return 0;
	cycs_sysctls_read(BIT(CYCS_SYSCTL_PARANOID), &sc);
	return cycs_paranoid_any(sc.val[CYCS_SYSCTL_PARANOID]) ? -EACCES : 0;
}

/* The opener's user and group IDs match the target's, every one of them. */
static bool cycs_same_ids(const struct cred *me, const struct cred *tc)
{
	return uid_eq(me->uid, tc->uid) && uid_eq(me->euid, tc->euid) &&
	       uid_eq(me->suid, tc->suid) && gid_eq(me->gid, tc->gid) &&
	       gid_eq(me->egid, tc->egid) && gid_eq(me->sgid, tc->sgid);
}

/**
 * cycs_may_profile - may the session's opener profile this thread?
 * @s: the session
 * @task: one thread of the target
 *
 * Privileged sessions may profile anything, as perf_event_open() lets
 * perfmon_capable() callers.  For the others this is the ptrace read check
 * perf makes (ptrace_may_access(), which is not exported), evaluated in
 * full here and stricter where it has a capability escape:
 *
 * - a kernel thread, or a thread outside the caller's PID namespace: no;
 * - the same real, effective and saved user and group IDs (ptrace compares
 *   the caller's real IDs only);
 * - the same user namespace, and every capability the thread has permitted
 *   also permitted to the opener (commoncap's rule, which refuses a same-uid
 *   service holding capabilities, ambient ones included, that the opener
 *   lacks); ptrace lets CAP_SYS_PTRACE over the thread's namespace through,
 *   this does not;
 * - a dumpable memory image (a setuid program's is not); ptrace lets
 *   CAP_SYS_PTRACE through, this does not.
 *
 * The LSM's ptrace hook cannot be consulted (security_ptrace_access_check()
 * is not exported).  Called for every thread of a target; does not sleep,
 * so callers may hold s->lock or the target's exec_update_lock.
 *
 * Return: 0, -EACCES, or -ESRCH for a thread that is exiting.
 */
int cycs_may_profile(struct cycs_session *s, struct task_struct *task)
{
	const struct cred *me = s->cred;
	const struct cred *tc;
	unsigned int flags;
	bool ok;

	if (s->privileged)
		return 0;
	/* read once: an exiting task sets PF_EXITING in it meanwhile */
	flags = READ_ONCE(task->flags);
	/* on its way out: no counter can go there, and its memory may be gone */
	if (flags & PF_EXITING)
		return -ESRCH;
	if (flags & PF_KTHREAD)
		return -EACCES;
	if (task_active_pid_ns(task) != task_active_pid_ns(current))
		return -EACCES;

	rcu_read_lock();
	tc = __task_cred(task);
	ok = cycs_same_ids(me, tc) && me->user_ns == tc->user_ns &&
	     cap_issubset(tc->cap_permitted, me->cap_permitted);
	rcu_read_unlock();
	if (!ok || !cycs_task_dumpable(task))
		return -EACCES;
	return 0;
}

/**
 * cycs_may_profile_group - cycs_may_profile() for every thread of a process
 * @s: the session
 * @leader: a thread of the process
 *
 * A thread may carry other credentials than its leader (setresuid() issued
 * as a raw system call changes one thread only), so each is checked.
 * Exiting threads are left out: they can take no counter.
 *
 * Return: 0, -EACCES, or -ESRCH when every thread is exiting.
 */
int cycs_may_profile_group(struct cycs_session *s, struct task_struct *leader)
{
	struct task_struct *t;
	int err = -ESRCH;

	if (s->privileged)
		return 0;
	rcu_read_lock();
	for_each_thread(leader, t) {
		switch (cycs_may_profile(s, t)) {
		case 0:
			err = 0;
			break;
		case -ESRCH:
			break;
		default:
			err = -EACCES;
			goto out_unlock;
		}
	}
out_unlock:
	rcu_read_unlock();
	return err;
}

/*
 * Would /proc/kallsyms show this opener the symbol values?  The rule of
 * kallsyms_show_value() (not exported): kptr_restrict 0 shows them to
 * everyone when perf_event_paranoid <= 1 and to CAP_SYSLOG otherwise,
 * 1 to CAP_SYSLOG only, 2 to no one.  Runs with the opener's credentials.
 */
static bool cycs_kallsyms_shows_values(const struct cycs_sysctls *sc)
{
	switch (sc->val[CYCS_SYSCTL_KPTR_RESTRICT]) {
	case 0:
		if (sc->val[CYCS_SYSCTL_PARANOID] <= 1)
			return true;
		fallthrough;
	case 1:
		return ns_capable_noaudit(&init_user_ns, CAP_SYSLOG);
	default:
		return false;
	}
}

/* What an unprivileged session may ask for. */
static int cycs_check_unprivileged(struct cycsample_config *cfg)
{
	unsigned long min_period = READ_ONCE(cycs_unpriv_min_period);

	/* the administrator may have turned the mode off since open() */
	if (!READ_ONCE(cycs_unprivileged))
		return -EACCES;
	if (cfg->target_type == CYCSAMPLE_TARGET_CPUS)
		return -EACCES;
	if (cfg->flags & CYCSAMPLE_CFG_KERNEL_CHAIN)
		return -EACCES;
	cfg->flags |= CYCSAMPLE_CFG_USER_ONLY;

	if (!min_period)
		return 0;
	if (cfg->flags & CYCSAMPLE_CFG_FREQ) {
		/* the rate min_period cycles give at fallback_mhz */
		u64 hz =
			div64_u64((u64)max(READ_ONCE(cycs_fallback_mhz), 1U) * 1000000, min_period);

		return cfg->sample_period > hz ? -EINVAL : 0;
	}
	return cfg->sample_period < min_period ? -EINVAL : 0;
}

/* The checks of cycs_policy_configure(), with the opener's credentials. */
static int cycs_check_config_as_opener(struct cycs_session *s, struct cycsample_config *cfg,
				       const struct cycs_sysctls *sc, bool *kaddr_ok)
{
	int paranoid = sc->val[CYCS_SYSCTL_PARANOID];
	int err;

	/* Debian's level 3 may have been set since open() */
	if (cycs_paranoid_any(paranoid) && !ns_capable_noaudit(&init_user_ns, CAP_SYS_ADMIN))
		return -EACCES;
	if (!s->privileged) {
		err = cycs_check_unprivileged(cfg);
		if (err)
			return err;
	}
	if (!(cfg->flags & CYCSAMPLE_CFG_USER_ONLY)) {
		err = cycs_perf_allow_kernel(paranoid);
		if (err)
			return err;
	}
	if (cfg->target_type == CYCSAMPLE_TARGET_CPUS) {
		err = cycs_perf_allow_cpu(paranoid);
		if (err)
			return err;
	}
	*kaddr_ok = cycs_kallsyms_shows_values(sc);
	return 0;
}

/**
 * cycs_policy_configure - the checks of a configuration that depend on who asks
 * @s: the session
 * @cfg: passed the ABI checks of device.c; may get CYCSAMPLE_CFG_USER_ONLY
 * @sc: the sysctls, read by the caller
 * @kaddr_ok: set to whether records may carry kernel addresses
 *
 * The checks perf_event_open() makes on the attributes, in its order:
 * paranoid level 3, kernel sampling (perf_allow_kernel()), the frequency
 * against kernel.perf_event_max_sample_rate (-EINVAL, for every caller:
 * above it perf throttles every sample), lockdown; then CPU-wide events
 * (perf_allow_cpu(), which perf makes when it finds the CPU context) and
 * the narrow mode of unprivileged sessions.  Kernel addresses follow the
 * rule of /proc/kallsyms with the opener's credentials, and lockdown hides
 * them too.  Sleeps; called without s->lock.
 */
int cycs_policy_configure(struct cycs_session *s, struct cycsample_config *cfg,
			  const struct cycs_sysctls *sc, bool *kaddr_ok)
{
	const struct cred *old;
	int err;

	old = override_creds(s->cred);
	err = cycs_check_config_as_opener(s, cfg, sc, kaddr_ok);
	revert_creds(old);
	if (err)
		return err;

	if ((cfg->flags & CYCSAMPLE_CFG_FREQ) &&
	    cfg->sample_period > (u64)max(sc->val[CYCS_SYSCTL_SAMPLE_RATE], 0))
		return -EINVAL;
	if ((cfg->flags & (CYCSAMPLE_CFG_KERNEL_CHAIN | CYCSAMPLE_CFG_REGS_USER)) &&
	    security_locked_down(LOCKDOWN_PERF))
		return -EPERM;
	/*
	 * Without kernel addresses a privileged session still samples the
	 * kernel: its samples say REGS_HIDDEN and carry no kernel chain.
	 */
	if (security_locked_down(LOCKDOWN_PERF))
		*kaddr_ok = false;
	return 0;
}
