// SPDX-License-Identifier: GPL-2.0
/*
 * test_configure - cycread's CONFIGURE negotiation (configure.c) against a
 * model of the module: its checks in the module's order (device.c's ABI
 * checks, then policy.c, then the rings' locked-memory charge), for module
 * generations that know fewer flags, a kernel without kprobes, an
 * unprivileged session, a locked-down kernel and a locked-memory budget,
 * alone and together.  Each case says what the session must end with.
 */
#include <errno.h>
#include <stdbool.h>

#include "tap.h"
#include "../configure.h"

/* flags each generation of the module knows */
#define GEN_NOW CYCSAMPLE_CFG_ALL_FLAGS
#define GEN_NO_PC (GEN_NOW & ~CYCSAMPLE_CFG_PC_ONLY)
#define GEN_NO_FORK (GEN_NO_PC & ~CYCSAMPLE_CFG_FORK)
#define GEN_NO_MMAP (GEN_NO_FORK & ~CYCSAMPLE_CFG_MMAP)
#define GEN_NO_EXEC (GEN_NO_MMAP & ~CYCSAMPLE_CFG_ENABLE_ON_EXEC)

struct model {
	u32 known; /* flags this module knows */
	bool no_kprobes; /* MMAP records: -EOPNOTSUPP */
	bool unprivileged; /* kernel callchains: -EACCES */
	bool lockdown; /* kernel callchains, user registers: -EPERM */
	u32 budget_pages; /* rings over this: -EPERM; 0: no budget */
	u64 max_period; /* a larger period: -EINVAL; 0: none */
	int hard_error; /* refuses everything with this */
	/* what it was asked */
	int calls;
	struct cycsample_config held; /* the last configuration taken */
	bool holds;
};

static int model_configure(void *dev, const struct cycsample_config *cfg)
{
	struct model *m = dev;
	u32 pages = cfg->ring_pages ?: CYCSAMPLE_DEFAULT_RING_PAGES;

	m->calls++;
	if (m->hard_error)
		return m->hard_error;
	if (cfg->flags & ~m->known)
		return -EINVAL;
	if ((cfg->flags & CYCSAMPLE_CFG_MMAP) && m->no_kprobes)
		return -EOPNOTSUPP;
	if ((cfg->flags & CYCSAMPLE_CFG_FORK) && !(cfg->flags & CYCSAMPLE_CFG_MMAP))
		return -EINVAL;
	if (m->max_period && cfg->sample_period > m->max_period)
		return -EINVAL;
	if (m->unprivileged && (cfg->flags & CYCSAMPLE_CFG_KERNEL_CHAIN))
		return -EACCES;
	if (m->lockdown && (cfg->flags & (CYCSAMPLE_CFG_KERNEL_CHAIN | CYCSAMPLE_CFG_REGS_USER)))
		return -EPERM;
	if (m->budget_pages && pages > m->budget_pages)
		return -EPERM;
	m->held = *cfg;
	m->holds = true;
	return 0;
}

/* what cycread asks for by default: perf's ring, every record, kernel chains */
static struct cycsample_config wanted(void)
{
	struct cycsample_config cfg = {
		.size = sizeof(cfg),
		.target_type = CYCSAMPLE_TARGET_PID,
		.target = 1234,
		.sample_period = 4000,
		.flags = CYCSAMPLE_CFG_FREQ | CYCSAMPLE_CFG_USER_CHAIN |
			 CYCSAMPLE_CFG_KERNEL_CHAIN | CYCSAMPLE_CFG_ENABLE_ON_EXEC |
			 CYCSAMPLE_CFG_MMAP | CYCSAMPLE_CFG_FORK,
	};

	/* a power of two above the module's default, as perf's 516 KiB gives */
	cfg.ring_pages = 2 * CYCSAMPLE_DEFAULT_RING_PAGES;
	cfg.wakeup_bytes = config_wakeup_bytes(cfg.ring_pages);
	return cfg;
}

static const struct cs_config_ctx ctx = { .device = "/dev/cycsample", .what = "demo" };

/*
 * Negotiate @cfg with @m; the result must be @want_err, and on success the
 * module must hold exactly what @cfg ended as, with @want_flags and
 * @want_pages.
 */
static void expect(const char *what, struct model *m, struct cycsample_config cfg,
		   const struct cs_config_ctx *c, int want_err, u32 want_flags, u32 want_pages)
{
	int err = config_negotiate(model_configure, m, &cfg, c);

	ok(err == want_err, "%s: %s", what, want_err ? strerror(-want_err) : "taken");
	if (err != want_err)
		printf("#   got %d (%s)\n", err, strerror(-err));
	if (want_err)
		return;
	is_u64(cfg.flags, want_flags, "  flags left");
	is_u64(cfg.ring_pages, want_pages, "  ring pages");
	ok(m->holds && !memcmp(&m->held, &cfg, sizeof(cfg)),
	   "  the module holds the configuration cycread ends with");
	ok(m->calls <= 1 + 3 * 6, "  %d CONFIGUREs at most 19", m->calls);
}

static void test_generations(void)
{
	const struct {
		const char *name;
		u32 known;
	} gens[] = {
		{ "a module of today", GEN_NOW },
		{ "a module from before SAMPLE_PC records", GEN_NO_PC },
		{ "a module from before FORK records", GEN_NO_FORK },
		{ "a module from before MMAP records", GEN_NO_MMAP },
		{ "a module from before ENABLE_ON_EXEC", GEN_NO_EXEC },
	};
	struct cycsample_config cfg = wanted();
	unsigned int i;

	/* without callchains cycread asks for 48-byte samples */
	cfg.flags &= ~(CYCSAMPLE_CFG_USER_CHAIN | CYCSAMPLE_CFG_KERNEL_CHAIN);
	cfg.flags |= CYCSAMPLE_CFG_PC_ONLY;
	for (i = 0; i < ARRAY_SIZE(gens); i++) {
		struct model m = { .known = gens[i].known };

		expect(gens[i].name, &m, cfg, &ctx, 0, cfg.flags & gens[i].known, cfg.ring_pages);
	}
	{
		struct model m = { .known = GEN_NOW };

		expect("a module of today, first time", &m, cfg, &ctx, 0, cfg.flags,
		       cfg.ring_pages);
		is_u64(m.calls, 1, "  one CONFIGURE");
	}
}

static void test_refusals(void)
{
	const u32 kchain = CYCSAMPLE_CFG_KERNEL_CHAIN, user = CYCSAMPLE_CFG_USER_ONLY;
	const struct cycsample_config cfg = wanted();
	const u32 pages = cfg.ring_pages;
	struct cs_config_ctx given = ctx;
	struct model m;

	m = (struct model){ .known = GEN_NOW, .no_kprobes = true };
	expect("no kprobes: maps from /proc", &m, cfg, &ctx, 0,
	       cfg.flags & ~(CYCSAMPLE_CFG_MMAP | CYCSAMPLE_CFG_FORK), pages);

	m = (struct model){ .known = GEN_NOW, .unprivileged = true };
	expect("unprivileged: user space only", &m, cfg, &ctx, 0, (cfg.flags & ~kchain) | user,
	       pages);

	m = (struct model){ .known = GEN_NOW, .lockdown = true };
	expect("locked down: user space only, perf's ring kept", &m, cfg, &ctx, 0,
	       (cfg.flags & ~kchain) | user, pages);

	m = (struct model){ .known = GEN_NOW, .budget_pages = pages / 2 };
	expect("over the budget: the module's ring, kernel chains kept", &m, cfg, &ctx, 0,
	       cfg.flags, 0);

	m = (struct model){ .known = GEN_NOW, .unprivileged = true, .budget_pages = pages / 2 };
	expect("unprivileged and over the budget: both given up", &m, cfg, &ctx, 0,
	       (cfg.flags & ~kchain) | user, 0);

	m = (struct model){ .known = GEN_NOW, .lockdown = true, .budget_pages = pages / 2 };
	expect("locked down and over the budget: both given up", &m, cfg, &ctx, 0,
	       (cfg.flags & ~kchain) | user, 0);

	m = (struct model){ .known = GEN_NO_MMAP, .unprivileged = true, .budget_pages = pages / 2 };
	expect("an old module, unprivileged, over the budget", &m, cfg, &ctx, 0,
	       (cfg.flags & GEN_NO_MMAP & ~kchain) | user, 0);

	given.ring_given = true;
	m = (struct model){ .known = GEN_NOW, .budget_pages = pages / 2 };
	expect("over the budget with -m: refused, the ring not changed", &m, cfg, &given, -EPERM, 0,
	       0);

	m = (struct model){ .known = GEN_NOW, .lockdown = true };
	{
		struct cycsample_config regs = cfg;

		regs.flags |= CYCSAMPLE_CFG_REGS_USER;
		expect("locked down with user registers: refused", &m, regs, &ctx, -EPERM, 0, 0);
	}

	m = (struct model){ .known = GEN_NOW, .max_period = 1000 };
	expect("a frequency out of range: refused", &m, cfg, &ctx, -EINVAL, 0, 0);

	m = (struct model){ .known = GEN_NOW, .hard_error = -ESRCH };
	expect("no such process: refused at once", &m, cfg, &ctx, -ESRCH, 0, 0);
	is_u64(m.calls, 1, "  one CONFIGURE");
}

static void test_wakeup_bytes(void)
{
	is_u64(config_wakeup_bytes(0), CYCSAMPLE_DEFAULT_RING_BYTES / 2,
	       "the module's default ring wakes at half of it");
	is_u64(config_wakeup_bytes(CYCSAMPLE_MAX_RING_PAGES * 2), 0,
	       "a ring CONFIGURE refuses anyway: the module's watermark");
}

int main(void)
{
	test_generations();
	test_refusals();
	test_wakeup_bytes();
	return tap_done();
}
