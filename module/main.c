// SPDX-License-Identifier: GPL-2.0
/*
 * cycsample - CPU cycle sampling through /dev/cycsample.
 *
 * Module setup: parameters, the per-CPU scratch space of the overflow
 * handler, the cpuhp state that carries per-CPU counters, and the misc
 * device.  What a reader does with the device is in the uapi header and
 * Documentation/uapi.rst.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/miscdevice.h>
#include <linux/cpuhotplug.h>
#include <linux/percpu.h>

#include "cycsample.h"
#include "compat.h"

unsigned int cycs_max_sessions = 16;
module_param_named(max_sessions, cycs_max_sessions, uint, 0644);
MODULE_PARM_DESC(max_sessions,
		 "Sessions open at once per user, CAP_SYS_ADMIN unlimited (default 16)");

bool cycs_unprivileged;
module_param_named(unprivileged, cycs_unprivileged, bool, 0644);
MODULE_PARM_DESC(unprivileged,
		 "1: users without CAP_PERFMON may profile own processes (default 0)");

unsigned long cycs_unpriv_min_period = 100000;
module_param_named(unpriv_min_period, cycs_unpriv_min_period, ulong, 0644);
MODULE_PARM_DESC(unpriv_min_period,
		 "Smallest period in cycles for unprivileged sessions (default 100000)");

unsigned int cycs_fallback_mhz = 1000;
module_param_named(fallback_mhz, cycs_fallback_mhz, uint, 0644);
MODULE_PARM_DESC(fallback_mhz, "Cycles per microsecond for software-clock periods (default 1000)");

unsigned int cycs_max_counters = 8192;
module_param_named(max_counters, cycs_max_counters, uint, 0644);
MODULE_PARM_DESC(max_counters,
		 "Counters a session may attach to threads, threads x PMUs (default 8192)");

/*
 * The mode devtmpfs gives the node when misc_register() creates it.  Its
 * group, and any later change, are udev's (udev/60-cycsample.rules): udev
 * applies its rules after devtmpfs, so a rule wins over this parameter.
 */
static ushort cycs_dev_mode = 0600;
module_param_named(dev_mode, cycs_dev_mode, ushort, 0444);
MODULE_PARM_DESC(dev_mode,
		 "Mode devtmpfs gives /dev/cycsample; udev rules override it (default 0600)");

int cycs_cpuhp_state;
struct cycs_scratch __percpu *cycs_scratch;

static struct miscdevice cycs_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "cycsample",
	.fops = &cycs_fops,
};

static int __init cycs_init(void)
{
	int err;

	if (cycs_dev_mode & ~0777) {
		pr_err("dev_mode %#o: only permission bits allowed\n", cycs_dev_mode);
		return -EINVAL;
	}

	cycs_scratch = alloc_percpu(struct cycs_scratch);
	if (!cycs_scratch)
		return -ENOMEM;

	/* one state, one instance per running CPUS session */
	err = cpuhp_setup_state_multi(CPUHP_AP_ONLINE_DYN, "cycsample:online", cycs_cpu_online,
				      cycs_cpu_offline);
	if (err < 0)
		goto out_free_scratch;
	cycs_cpuhp_state = err;

	cycs_misc.mode = cycs_dev_mode;
	err = misc_register(&cycs_misc);
	if (err)
		goto out_remove_state;

	pr_info("version %s, ABI %d\n", CYCSAMPLE_VERSION, CYCSAMPLE_ABI_VERSION);
	return 0;

out_remove_state:
	cpuhp_remove_multi_state(cycs_cpuhp_state);
out_free_scratch:
	free_percpu(cycs_scratch);
	return err;
}

/* Runs only when no file is open and nothing is mapped: each pins us. */
static void __exit cycs_exit(void)
{
	misc_deregister(&cycs_misc);
	cpuhp_remove_multi_state(cycs_cpuhp_state);
	free_percpu(cycs_scratch);
	cycs_limits_exit();
}

module_init(cycs_init);
module_exit(cycs_exit);

MODULE_VERSION(CYCSAMPLE_VERSION);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("CPU cycle sampling with perf kernel counters and mmap rings");
MODULE_AUTHOR("The cycsample developers");
