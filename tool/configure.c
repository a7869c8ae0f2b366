// SPDX-License-Identifier: GPL-2.0
/*
 * CONFIGURE as a negotiation (configure.h).
 *
 * After each refusal, the first way to do without that answers it and has
 * not been taken yet.  The flags go newest first: a module that does not
 * know one flag knows none added after it, so stripping from the newest
 * down never gives up a flag the module would have taken.  -EPERM has two
 * causes, a ring over the user's locked-memory budget and a locked-down
 * kernel that refuses kernel callchains, and the error does not say which:
 * the ring goes first, and once the module takes a configuration every
 * fallback taken on the way that did not end the refusals is asked for
 * again, so that only what was needed stays given up.
 */
#include <errno.h>
#include <unistd.h>

#include "configure.h"
#include "util.h"

/* The ways to do without, in the order they are tried. */
enum fallback {
	FB_PC_ONLY, /* a module from before SAMPLE_PC records: whole samples */
	FB_FORK, /* before FORK records: a child's maps read from /proc */
	FB_MMAP, /* before MMAP records, or no kprobes: maps from /proc */
	FB_EXEC, /* before ENABLE_ON_EXEC: the child sampled from START */
	FB_RING, /* over the locked-memory budget: the module's ring */
	FB_KCHAIN, /* unprivileged or locked down: user space only */
	FB_COUNT
};

/*
 * Wake at half the ring, as perf's default watermark does: fewer wakeups
 * than the module's quarter, and still half a ring of room while we drain.
 */
u32 config_wakeup_bytes(u32 ring_pages)
{
	u64 page = sysconf(_SC_PAGESIZE), ring;

	if (!ring_pages)
		ring_pages =
			MAX(CYCSAMPLE_DEFAULT_RING_BYTES / page, (u64)CYCSAMPLE_MIN_RING_PAGES);
	ring = ring_pages * page;
	/* a ring too small for it, or one CONFIGURE refuses anyway: the default */
	if (ring / 2 + CYCSAMPLE_MAX_RECORD_SIZE > ring || ring > CYCSAMPLE_MAX_RING_BYTES)
		return 0;
	return ring / 2;
}

/* Does @fb answer @err for @cfg? */
static bool fb_answers(enum fallback fb, const struct cycsample_config *cfg, int err,
		       const struct cs_config_ctx *c)
{
	switch (fb) {
	case FB_PC_ONLY:
		return err == -EINVAL && (cfg->flags & CYCSAMPLE_CFG_PC_ONLY);
	case FB_FORK:
		return err == -EINVAL && (cfg->flags & CYCSAMPLE_CFG_FORK);
	case FB_MMAP:
		/* PREEMPT_RT too: the probe's spinlocks would sleep there */
		return (err == -EINVAL || err == -EOPNOTSUPP) && (cfg->flags & CYCSAMPLE_CFG_MMAP);
	case FB_EXEC:
		return err == -EINVAL && (cfg->flags & CYCSAMPLE_CFG_ENABLE_ON_EXEC);
	case FB_KCHAIN:
		return (err == -EACCES || err == -EPERM) &&
		       (cfg->flags & CYCSAMPLE_CFG_KERNEL_CHAIN);
	case FB_RING:
		/* other perf buffers, CPUs offline: perf's default may not fit */
		return err == -EPERM && !c->ring_given && cfg->ring_pages;
	default:
		return false;
	}
}

static void fb_apply(enum fallback fb, struct cycsample_config *cfg)
{
	switch (fb) {
	case FB_PC_ONLY:
		cfg->flags &= ~CYCSAMPLE_CFG_PC_ONLY;
		break;
	case FB_FORK:
		cfg->flags &= ~CYCSAMPLE_CFG_FORK;
		break;
	case FB_MMAP:
		/* FORK records stand in for maps only MMAP records tell */
		cfg->flags &= ~(CYCSAMPLE_CFG_MMAP | CYCSAMPLE_CFG_FORK);
		break;
	case FB_EXEC:
		cfg->flags &= ~CYCSAMPLE_CFG_ENABLE_ON_EXEC;
		break;
	case FB_KCHAIN:
		cfg->flags &= ~CYCSAMPLE_CFG_KERNEL_CHAIN;
		cfg->flags |= CYCSAMPLE_CFG_USER_ONLY;
		break;
	case FB_RING:
		cfg->ring_pages = 0;
		cfg->wakeup_bytes = config_wakeup_bytes(0);
		break;
	default:
		break;
	}
}

static void fb_say(enum fallback fb, const struct cs_config_ctx *c)
{
	switch (fb) {
	case FB_PC_ONLY:
		pr_debug("%s writes no SAMPLE_PC records: 88 bytes a sample", c->device);
		break;
	case FB_FORK:
		pr_debug("%s writes no FORK records: a child's maps read from /proc", c->device);
		break;
	case FB_MMAP:
		pr_debug("%s writes no MMAP records: maps read from /proc", c->device);
		break;
	case FB_EXEC:
		pr_warn("%s cannot start sampling at exec: %s shows in the profile", c->device,
			c->what);
		break;
	case FB_KCHAIN:
		pr_warn("kernel callchains not allowed here; recording user space only");
		break;
	case FB_RING:
		pr_debug("the default ring exceeds the memory you may lock: %u KiB per CPU",
			 CYCSAMPLE_DEFAULT_RING_BYTES >> 10);
		break;
	default:
		break;
	}
}

/* @want with the fallbacks of @used applied */
static struct cycsample_config with_fallbacks(const struct cycsample_config *want,
					      unsigned int used)
{
	struct cycsample_config cfg = *want;
	enum fallback fb;

	for (fb = 0; fb < FB_COUNT; fb++)
		if (used & (1U << fb))
			fb_apply(fb, &cfg);
	return cfg;
}

int config_negotiate(cs_configure_fn configure, void *dev, struct cycsample_config *cfg,
		     const struct cs_config_ctx *ctx)
{
	const struct cycsample_config want = *cfg;
	struct cycsample_config trial;
	unsigned int used = 0;
	enum fallback fb, last = FB_COUNT;
	int err = configure(dev, cfg);
	bool held = true;

	while (err) {
		for (fb = 0; fb < FB_COUNT; fb++)
			if (!(used & (1U << fb)) && fb_answers(fb, cfg, err, ctx))
				break;
		if (fb == FB_COUNT)
			return err;
		used |= 1U << fb;
		fb_apply(fb, cfg);
		err = configure(dev, cfg);
		last = fb;
	}
	/*
	 * A fallback that did not end the refusals may not have been needed:
	 * -EPERM is the ring's error and lockdown's, and the one taken first
	 * may not be the one that answered it.  Ask again without it.
	 */
	for (fb = 0; fb < FB_COUNT; fb++) {
		if (!(used & (1U << fb)) || fb == last)
			continue;
		trial = with_fallbacks(&want, used & ~(1U << fb));
		if (!configure(dev, &trial)) {
			used &= ~(1U << fb);
			*cfg = trial;
			held = true;
		} else {
			held = false;
		}
	}
	/* a refused CONFIGURE may have left the module without the last one taken */
	if (!held) {
		err = configure(dev, cfg);
		if (err)
			return err;
	}
	for (fb = 0; fb < FB_COUNT; fb++)
		if (used & (1U << fb))
			fb_say(fb, ctx);
	return 0;
}
