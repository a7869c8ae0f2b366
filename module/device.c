// SPDX-License-Identifier: GPL-2.0
/*
 * cycsample - file operations of /dev/cycsample and ABI validation.
 *
 * A reader opens the device (one open file = one session), configures it,
 * maps the rings, starts, polls and drains, stops; see the uapi header.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/uaccess.h>
#include <linux/capability.h>
#include <linux/poll.h>
#include <linux/mm.h>
#include <linux/log2.h>
#include <linux/cred.h>
#include <linux/slab.h>

#include "cycsample.h"

/* open: a new session; the permission checks and the per-user session limit */
static int cycs_open(struct inode *inode, struct file *file)
{
	struct cycs_session *s;
	bool privileged, counted;
	int err;

	err = cycs_policy_open(&privileged);
	if (err)
		return err;
	err = cycs_limit_open(&counted);
	if (err)
		return err;
	s = cycs_session_create(file, privileged, counted);
	if (!s) {
		if (counted)
			cycs_limit_release(current_uid());
		return -ENOMEM;
	}
	file->private_data = s;
	return nonseekable_open(inode, file);
}

/* release: the last close, after the last munmap too (a VMA pins the file) */
static int cycs_release(struct inode *inode, struct file *file)
{
	cycs_session_destroy(file->private_data);
	return 0;
}

/* Checks that need nothing but the structure; fills in the defaults. */
static int cycs_check_config(struct cycsample_config *cfg)
{
	unsigned int i;
	u64 ring_bytes;

	if (cfg->flags & ~CYCSAMPLE_CFG_ALL_FLAGS)
		return -EINVAL;
	/*
	 * No kprobes, no MMAP records.  On PREEMPT_RT the probe's spinlocks
	 * (d_path()'s retry, the task checks) would sleep in its atomic
	 * context.  Said at CONFIGURE, so that a reader can do without.
	 */
	if ((cfg->flags & CYCSAMPLE_CFG_MMAP) &&
	    (!IS_ENABLED(CONFIG_KPROBES) || IS_ENABLED(CONFIG_PREEMPT_RT)))
		return -EOPNOTSUPP;
	for (i = 0; i < ARRAY_SIZE(cfg->reserved); i++)
		if (cfg->reserved[i])
			return -EINVAL;
	/* FORK records stand in for maps that only MMAP records tell */
	if ((cfg->flags & CYCSAMPLE_CFG_FORK) && !(cfg->flags & CYCSAMPLE_CFG_MMAP))
		return -EINVAL;
	/* a sample of a pc alone has no room for a chain or registers */
	if ((cfg->flags & CYCSAMPLE_CFG_PC_ONLY) &&
	    (cfg->flags &
	     (CYCSAMPLE_CFG_KERNEL_CHAIN | CYCSAMPLE_CFG_USER_CHAIN | CYCSAMPLE_CFG_REGS_USER)))
		return -EINVAL;

	switch (cfg->target_type) {
	case CYCSAMPLE_TARGET_PID:
	case CYCSAMPLE_TARGET_TID:
		break;
	case CYCSAMPLE_TARGET_CPUS:
		/* a CPU has no exec to wait for, nor processes new to the session */
		if (cfg->target ||
		    (cfg->flags & (CYCSAMPLE_CFG_ENABLE_ON_EXEC | CYCSAMPLE_CFG_FORK)))
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	if (cfg->event != CYCSAMPLE_EVENT_CYCLES && cfg->event != CYCSAMPLE_EVENT_CLOCK)
		return -EINVAL;

	if (cfg->max_stack > CYCSAMPLE_MAX_STACK)
		return -EINVAL;
	if (!cfg->max_stack)
		cfg->max_stack = CYCSAMPLE_DEFAULT_STACK;

	if (cfg->flags & CYCSAMPLE_CFG_FREQ) {
		if (!cfg->sample_period || cfg->sample_period > CYCSAMPLE_MAX_FREQ)
			return -EINVAL;
	} else if (cfg->sample_period < CYCSAMPLE_MIN_PERIOD ||
		   cfg->sample_period > CYCSAMPLE_MAX_PERIOD) {
		return -EINVAL;
	}

	/* Bounds in bytes: the same page count is 16x the memory with 64 KiB pages. */
	if (!cfg->ring_pages)
		cfg->ring_pages = max_t(u32, CYCSAMPLE_DEFAULT_RING_BYTES >> PAGE_SHIFT,
					CYCSAMPLE_MIN_RING_PAGES);
	if (!is_power_of_2(cfg->ring_pages) || cfg->ring_pages < CYCSAMPLE_MIN_RING_PAGES ||
	    ((u64)cfg->ring_pages << PAGE_SHIFT) > CYCSAMPLE_MAX_RING_BYTES)
		return -EINVAL;
	/*
	 * A watermark above the ring less one record could never be reached:
	 * the ring stops taking records before that, so no wakeup would come.
	 */
	ring_bytes = (u64)cfg->ring_pages << PAGE_SHIFT;
	if ((u64)cfg->wakeup_bytes + CYCSAMPLE_MAX_RECORD_SIZE > ring_bytes)
		return -EINVAL;
	return 0;
}

static long cycs_ioctl_configure(struct cycs_session *s, void __user *uarg)
{
	struct cycsample_config cfg;
	u32 usize;
	int err;

	if (get_user(usize, (u32 __user *)uarg))
		return -EFAULT;
	if (usize < CYCSAMPLE_CONFIG_SIZE_VER0)
		return -EINVAL;
	if (usize > PAGE_SIZE)
		return -E2BIG;
	/* zero-fills what an older caller lacks; -E2BIG for unknown non-zero bytes */
	err = copy_struct_from_user(&cfg, sizeof(cfg), uarg, usize);
	if (err)
		return err;
	err = cycs_check_config(&cfg);
	if (err)
		return err;
	return cycs_session_configure(s, &cfg);
}

static long cycs_ioctl_info(struct cycs_session *s, void __user *uarg)
{
	struct cycsample_info *info;
	long err = 0;
	u32 usize;

	if (get_user(usize, (u32 __user *)uarg))
		return -EFAULT;
	if (usize < 8)
		return -EINVAL;
	/* as CONFIGURE: the zero-filled tail is not a way to clear gigabytes */
	if (usize > PAGE_SIZE)
		return -E2BIG;
	/* about 2 KiB with the PMU list: not for the stack */
	info = kzalloc(sizeof(*info), GFP_KERNEL);
	if (!info)
		return -ENOMEM;
	cycs_session_info(s, info);

	/* outside s->lock, as every user copy: s->lock stays out of mmap_lock's way */
	if (copy_to_user(uarg, info, min_t(size_t, usize, sizeof(*info))))
		err = -EFAULT;
	else if (usize > sizeof(*info) && clear_user(uarg + sizeof(*info), usize - sizeof(*info)))
		err = -EFAULT;
	kfree(info);
	return err;
}

/*
 * A command is known by its type, number and direction.  Its size field is
 * not part of it: CONFIGURE and INFO take the size from the structure they
 * point to, so a reader built with a larger or smaller structure reaches
 * them too, and gets -E2BIG only for fields this module does not know.
 */
#define CYCS_IOC_KEY(cmd) ((cmd) & ~(_IOC_SIZEMASK << _IOC_SIZESHIFT))

/* ioctl: configure, start, stop, query */
static long cycs_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct cycs_session *s = file->private_data;
	void __user *uarg = (void __user *)arg;

	switch (CYCS_IOC_KEY(cmd)) {
	case CYCS_IOC_KEY(CYCSAMPLE_IOC_CONFIGURE):
		return cycs_ioctl_configure(s, uarg);
	case CYCS_IOC_KEY(CYCSAMPLE_IOC_START):
		return cycs_session_start(s);
	case CYCS_IOC_KEY(CYCSAMPLE_IOC_STOP):
		return cycs_session_stop(s);
	case CYCS_IOC_KEY(CYCSAMPLE_IOC_INFO):
		return cycs_ioctl_info(s, uarg);
	default:
		return -ENOTTY;
	}
}

/* mmap: the whole ring area, exactly, shared; see ring.c.  No session lock. */
static int cycs_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct cycs_rings *rings = cycs_session_map_rings(file->private_data);
	int err;

	if (!rings)
		return -EINVAL;
	err = cycs_rings_mmap(rings, vma);
	if (err)
		cycs_rings_put_map(rings);
	return err;
}

/* poll: POLLIN at the watermark, POLLHUP once an ended session is drained */
static __poll_t cycs_poll(struct file *file, struct poll_table_struct *pt)
{
	struct cycs_session *s = file->private_data;

	poll_wait(file, &s->wq, pt);
	return cycs_session_poll(s);
}

const struct file_operations cycs_fops = {
	.owner = THIS_MODULE,
	.open = cycs_open,
	.release = cycs_release,
	.unlocked_ioctl = cycs_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = cycs_mmap,
	.poll = cycs_poll,
	.llseek = noop_llseek,
};
