// SPDX-License-Identifier: GPL-2.0
/*
 * cycsample - what perf_event_open() would refuse, applied to a session.
 *
 * perf_event_create_kernel_counter() skips every check the system call
 * makes, so the module makes them itself, with the kernel's exported
 * helpers where they exist and its own equivalent where they do not.
 * Documentation/admin-guide.rst has the table of perf's rules and what
 * this file does for each.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/math64.h>

#include "cycsample.h"

/* What an unprivileged session may ask for. */
static int cycs_check_unprivileged(struct cycsample_config *cfg)
{
	unsigned long min_period = READ_ONCE(cycs_unpriv_min_period);

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

/**
 * cycs_policy_configure - the checks of a configuration that depend on who asks
 * @s: the session
 * @cfg: passed the ABI checks of device.c; may get CYCSAMPLE_CFG_USER_ONLY
 *
 * Like perf_event_open(), refuses a frequency above
 * kernel.perf_event_max_sample_rate (-EINVAL), for every caller: the
 * in-kernel counters have no such check, and above the limit perf throttles
 * every sample.  Sleeps; called without s->lock.
 */
int cycs_policy_configure(struct cycs_session *s, struct cycsample_config *cfg)
{
	struct cycs_sysctls sc;
	int err;

	if (cfg->flags & CYCSAMPLE_CFG_FREQ) {
		cycs_sysctls_read(BIT(CYCS_SYSCTL_SAMPLE_RATE), &sc);
		if (cfg->sample_period > (u64)max(sc.val[CYCS_SYSCTL_SAMPLE_RATE], 0))
			return -EINVAL;
	}
	if (!s->privileged) {
		err = cycs_check_unprivileged(cfg);
		if (err)
			return err;
	}
	return 0;
}
