// SPDX-License-Identifier: GPL-2.0
/*
 * cycsample - the perf and kallsyms sysctls the kernel does not export.
 *
 * perf_event_open() consults kernel.perf_event_paranoid,
 * kernel.perf_event_max_sample_rate and kernel.perf_event_mlock_kb, and
 * /proc/kallsyms consults kernel.kptr_restrict.  None of the variables is
 * exported to modules (kptr_restrict only from 7.x), so the module reads
 * their files under /proc/sys, as an administrator would.
 *
 * The files are opened from a kernel worker, never from the caller: a
 * worker resolves paths from the root of pid 1, in the initial mount
 * namespace, where /proc is the real one.  A caller could otherwise mount a
 * file of its own over /proc/sys in a mount namespace it created and choose
 * the policy it is judged by.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include <linux/workqueue.h>

#include "cycsample.h"
#include "compat.h"

static const char *const cycs_sysctl_path[CYCS_NR_SYSCTLS] = {
	[CYCS_SYSCTL_PARANOID] = "/proc/sys/kernel/perf_event_paranoid",
	[CYCS_SYSCTL_SAMPLE_RATE] = "/proc/sys/kernel/perf_event_max_sample_rate",
	[CYCS_SYSCTL_MLOCK_KB] = "/proc/sys/kernel/perf_event_mlock_kb",
	[CYCS_SYSCTL_KPTR_RESTRICT] = "/proc/sys/kernel/kptr_restrict",
};

struct cycs_sysctl_work {
	struct work_struct work;
	unsigned long mask; /* which ones to read */
	struct cycs_sysctls *out;
};

static int cycs_read_int(const char *path, int *val)
{
	char buf[24] = {};
	struct file *f;
	loff_t pos = 0;
	ssize_t n;
	int err;

	f = cycs_kthread_filp_open(path, O_RDONLY);
	if (IS_ERR(f))
		return PTR_ERR(f);
	n = kernel_read(f, buf, sizeof(buf) - 1, &pos);
	filp_close(f, NULL);
	if (n < 0)
		return n;
	err = kstrtoint(strim(buf), 10, val);
	return err;
}

static void cycs_sysctl_work_fn(struct work_struct *work)
{
	struct cycs_sysctl_work *sw = container_of(work, struct cycs_sysctl_work, work);
	unsigned int i;
	int val;

	for (i = 0; i < CYCS_NR_SYSCTLS; i++) {
		if (!(sw->mask & BIT(i)))
			continue;
		if (cycs_read_int(cycs_sysctl_path[i], &val)) {
			pr_warn_once("cannot read %s: taking the strictest value\n",
				     cycs_sysctl_path[i]);
			continue;
		}
		sw->out->val[i] = val;
	}
}

/**
 * cycs_sysctls_read - read some of the sysctls
 * @mask: BIT(enum cycs_sysctl) of those wanted
 * @out: their values; one that cannot be read keeps the strictest value
 *
 * Sleeps (process context, no locks held that an unbound system worker might
 * need).  The strictest values: paranoid 3 (nothing for users),
 * sample rate 1 Hz, mlock 0 kB (everything charged to RLIMIT_MEMLOCK),
 * kptr_restrict 2 (no kernel address for anyone).
 */
void cycs_sysctls_read(unsigned long mask, struct cycs_sysctls *out)
{
	struct cycs_sysctl_work sw = { .mask = mask, .out = out };

	out->val[CYCS_SYSCTL_PARANOID] = 3;
	out->val[CYCS_SYSCTL_SAMPLE_RATE] = 1;
	out->val[CYCS_SYSCTL_MLOCK_KB] = 0;
	out->val[CYCS_SYSCTL_KPTR_RESTRICT] = 2;

	INIT_WORK_ONSTACK(&sw.work, cycs_sysctl_work_fn);
	queue_work(CYCS_UNBOUND_WQ, &sw.work);
	flush_work(&sw.work);
	destroy_work_on_stack(&sw.work);
}
