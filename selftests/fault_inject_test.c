// SPDX-License-Identifier: GPL-2.0
/*
 * Allocation failures while a session starts: open, CONFIGURE (first and
 * repeated) and START, each with every allocation on its path failing in
 * turn.  Each failure must surface as ENOMEM, leave the session as it was
 * (a following normal CONFIGURE and START work and sample), and leak nothing
 * (kmemleak, when the kernel has it, reports no object allocated by the
 * module).
 *
 * The faults come from the kernel's fault injection (CONFIG_FAILSLAB,
 * CONFIG_FAIL_PAGE_ALLOC, CONFIG_FAULT_INJECTION_DEBUG_FS): mainly
 * /proc/thread-self/fail-nth, which fails the n-th allocation of this thread
 * only, so every point of a call is reached one after the other; and the
 * task filter (/proc/thread-self/make-it-fail), which fails every allocation
 * of this thread.  Both reach only allocations made by the calling thread:
 * the counters of a CPUS session are created by the cpuhp threads and only
 * the calling thread's part of START is covered for it.  Kernels without
 * fault injection (the Debian ones) skip; scripts/debug-kernel builds one
 * that has it.
 *
 * The page allocator and vmalloc log a backtrace for each failed allocation.
 * The test brackets its injections with "expect-alloc-failures" lines in the
 * kernel log; scripts/cycsample-vm ignores bare backtraces between them (and
 * still fails on BUG, WARNING, KASAN, lockdep and the like).
 */
#include "kselftest_harness.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "cycsample_test_lib.h"

#define FI_DEBUGFS "/sys/kernel/debug"
#define FI_FAIL_NTH "/proc/thread-self/fail-nth"
#define FI_MAKE_IT_FAIL "/proc/thread-self/make-it-fail"
#define FI_KMEMLEAK FI_DEBUGFS "/kmemleak"
#define FI_KMSG_TAG "cycsample_selftest: expect-alloc-failures"

/* A call that takes more fault points than this is looping. */
#define FI_MAX_POINTS 1000

/* ---------------------------------------------------------------------- */
/* Fault injection set-up                                                 */
/* ---------------------------------------------------------------------- */

/*
 * The debugfs knobs the test changes, and their values for it: fail also
 * allocations that may sleep (GFP_KERNEL) and single pages (vmalloc's), never
 * print the injector's own backtrace.  User pages (__GFP_HIGHMEM) stay
 * exempt, so the test's own page faults never fail.
 */
static const struct fi_knob {
	const char *path;
	const char *value;
} fi_knobs[] = {
	{ FI_DEBUGFS "/failslab/ignore-gfp-wait", "N" },
	{ FI_DEBUGFS "/failslab/verbose", "0" },
	{ FI_DEBUGFS "/fail_page_alloc/ignore-gfp-wait", "N" },
	{ FI_DEBUGFS "/fail_page_alloc/ignore-gfp-highmem", "Y" },
	{ FI_DEBUGFS "/fail_page_alloc/min-order", "0" },
	{ FI_DEBUGFS "/fail_page_alloc/verbose", "0" },
};

#define FI_NR_KNOBS (sizeof(fi_knobs) / sizeof(fi_knobs[0]))

/* The task-filter mode of the make-it-fail test, on top of the knobs. */
static const struct fi_knob fi_filter_knobs[] = {
	{ FI_DEBUGFS "/failslab/task-filter", "Y" },   { FI_DEBUGFS "/failslab/interval", "1" },
	{ FI_DEBUGFS "/failslab/times", "-1" },	       { FI_DEBUGFS "/failslab/space", "0" },
	{ FI_DEBUGFS "/failslab/probability", "100" },
};

#define FI_NR_FILTER_KNOBS (sizeof(fi_filter_knobs) / sizeof(fi_filter_knobs[0]))

struct fi_saved {
	char old[FI_NR_KNOBS + FI_NR_FILTER_KNOBS][32];
	const struct fi_knob *knob[FI_NR_KNOBS + FI_NR_FILTER_KNOBS];
	unsigned int n;
};

/* Why fault injection cannot run here, or NULL. */
static const char *fi_unavailable(void)
{
	if (access(FI_FAIL_NTH, W_OK))
		return "no " FI_FAIL_NTH " (needs CONFIG_FAULT_INJECTION: scripts/debug-kernel)";
	if (access(FI_DEBUGFS "/failslab", F_OK))
		return "no failslab in debugfs (needs CONFIG_FAILSLAB, "
		       "CONFIG_FAULT_INJECTION_DEBUG_FS and debugfs mounted)";
	if (access(FI_DEBUGFS "/fail_page_alloc", F_OK))
		return "no fail_page_alloc in debugfs (needs CONFIG_FAIL_PAGE_ALLOC)";
	return NULL;
}

static int fi_set(struct fi_saved *sv, const struct fi_knob *k)
{
	char *nl;
	int err;

	err = cs_read_file(k->path, sv->old[sv->n], sizeof(sv->old[0]));
	if (err)
		return err;
	nl = strchr(sv->old[sv->n], '\n');
	if (nl)
		*nl = '\0';
	sv->knob[sv->n++] = k;
	return cs_write_file(k->path, k->value);
}

/* Set @n knobs; NULL, or the path of the one that could not be set. */
static const char *fi_set_all(struct fi_saved *sv, const struct fi_knob *k, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (fi_set(sv, &k[i]))
			return k[i].path;
	return NULL;
}

/* Restore every knob, the last changed first (probability before the filter). */
static void fi_restore(struct fi_saved *sv)
{
	while (sv->n) {
		sv->n--;
		cs_write_file(sv->knob[sv->n]->path, sv->old[sv->n]);
	}
}

static void fi_kmsg(const char *what)
{
	char line[128];
	int fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	snprintf(line, sizeof(line), "<5>" FI_KMSG_TAG " %s\n", what);
	if (write(fd, line, strlen(line)) < 0)
		perror("/dev/kmsg");
	close(fd);
}

/* ---------------------------------------------------------------------- */
/* fail-nth                                                               */
/* ---------------------------------------------------------------------- */

/*
 * The fail-nth file stays open for the whole test: opening it allocates,
 * reading and writing it do not, so arming it consumes no fault point.
 */
struct fi_nth {
	int fd;
	unsigned int injected; /* calls that got their fault */
	unsigned int absorbed; /* ... and still succeeded */
};

static int fi_arm(struct fi_nth *f, unsigned int n)
{
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%u", n);

	return pwrite(f->fd, buf, len, 0) == len ? 0 : errno;
}

/* After the call: was the armed fault injected?  Disarms it either way. */
static bool fi_fired(struct fi_nth *f)
{
	char buf[16] = "";
	ssize_t r = pread(f->fd, buf, sizeof(buf) - 1, 0);

	if (r > 0 && strtoul(buf, NULL, 10) == 0)
		return true;
	fi_arm(f, 0);
	return false;
}

/* ---------------------------------------------------------------------- */
/* Fixture                                                                */
/* ---------------------------------------------------------------------- */

enum fi_target { FI_PID, FI_TID, FI_CPUS };

FIXTURE(fault)
{
	struct fi_saved saved;
	struct fi_nth nth;
	pid_t child;
	int refcnt0;
};

FIXTURE_VARIANT(fault)
{
	enum fi_target target;
	__u32 event;
};

FIXTURE_VARIANT_ADD(fault, pid_cycles){ .target = FI_PID, .event = CYCSAMPLE_EVENT_CYCLES };
FIXTURE_VARIANT_ADD(fault, tid_cycles){ .target = FI_TID, .event = CYCSAMPLE_EVENT_CYCLES };
FIXTURE_VARIANT_ADD(fault, pid_clock){ .target = FI_PID, .event = CYCSAMPLE_EVENT_CLOCK };
FIXTURE_VARIANT_ADD(fault, cpus_cycles){ .target = FI_CPUS, .event = CYCSAMPLE_EVENT_CYCLES };

FIXTURE_SETUP(fault)
{
	memset(&self->saved, 0, sizeof(self->saved));
	self->nth.fd = -1;
	self->child = -1;
}

FIXTURE_TEARDOWN(fault)
{
	fi_kmsg("end");
	if (self->nth.fd >= 0) {
		fi_arm(&self->nth, 0);
		close(self->nth.fd);
	}
	cs_write_file(FI_MAKE_IT_FAIL, "0");
	fi_restore(&self->saved);
	if (self->child > 0)
		cs_kill(self->child);
}

/* Skip without fault injection; else set the knobs and start a target. */
#define FI_BEGIN()                                                                      \
	do {                                                                            \
		const char *__why;                                                      \
                                                                                        \
		CS_REQUIRE_DEVICE();                                                    \
		CS_REQUIRE_ROOT();                                                      \
		__why = fi_unavailable();                                               \
		if (__why)                                                              \
			SKIP(return, "%s", __why);                                      \
		cs_reset_sample_rate();                                                 \
		__why = fi_set_all(&self->saved, fi_knobs, FI_NR_KNOBS);                \
		ASSERT_EQ(NULL, __why) TH_LOG("cannot set %s", __why ?: "?");           \
		self->nth.fd = open(FI_FAIL_NTH, O_RDWR | O_CLOEXEC);                   \
		ASSERT_LE(0, self->nth.fd) TH_LOG(FI_FAIL_NTH ": %s", strerror(errno)); \
		/* the CPUS sessions sample it too */                                   \
		self->child = cs_spawn_spinner();                                       \
		ASSERT_LT(0, self->child);                                              \
		self->refcnt0 = cs_module_refcnt();                                     \
		fi_kmsg("begin");                                                       \
	} while (0)

static void fi_config(const FIXTURE_VARIANT(fault) * variant, pid_t child,
		      struct cycsample_config *cfg, __u32 ring_pages)
{
	switch (variant->target) {
	case FI_PID:
		cs_config_init(cfg, CYCSAMPLE_TARGET_PID, child);
		break;
	case FI_TID:
		cs_config_init(cfg, CYCSAMPLE_TARGET_TID, child);
		break;
	case FI_CPUS:
		cs_config_init(cfg, CYCSAMPLE_TARGET_CPUS, 0);
		break;
	}
	cfg->event = variant->event;
	cfg->ring_pages = ring_pages;
}

/*
 * The session on @fd works: (CONFIGURE with @cfg if @cfg,) map, START,
 * samples arrive, STOP.  Returns NULL or what failed.
 */
static const char *fi_session_works(int fd, const struct cycsample_config *cfg, char *why,
				    size_t len)
{
	struct cs_session s = { .fd = fd };
	struct cs_recs recs = { 0 };
	struct cs_counts c;
	const char *problem = NULL;
	__u64 recs_base = 0;
	int err;

	if (cfg) {
		err = cs_configure(fd, cfg);
		if (err) {
			snprintf(why, len, "CONFIGURE: %s", strerror(err));
			return why;
		}
	}
	err = cs_session_info(&s);
	if (err || (s.info.state != CYCSAMPLE_STATE_CONFIGURED &&
		    s.info.state != CYCSAMPLE_STATE_STOPPED)) {
		snprintf(why, len, "INFO: %s, state %u", strerror(err), s.info.state);
		return why;
	}
	s.base = mmap(NULL, s.info.mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (s.base == MAP_FAILED) {
		snprintf(why, len, "mmap: %s", strerror(errno));
		return why;
	}
	s.map_len = s.info.mmap_size;
	/* records of earlier STARTs (maybe on another event) are not judged */
	cs_drain(&s, &recs);
	cs_recs_free(&recs);
	memset(&recs, 0, sizeof(recs));
	if (cs_session_info(&s) == 0 && s.info.samples)
		recs_base = s.info.samples;
	err = cs_start(fd);
	if (err) {
		snprintf(why, len, "START: %s", strerror(err));
		problem = why;
		goto out_unmap;
	}
	cs_collect_for(&s, 200, &recs);
	err = cs_stop(fd);
	cs_drain(&s, &recs);
	cs_session_info(&s);
	cs_count(&recs, &c);
	if (err) {
		snprintf(why, len, "STOP: %s", strerror(err));
		problem = why;
	} else if (!c.samples || s.info.samples - recs_base != c.samples) {
		snprintf(why, len, "%lu samples read, %llu written, %llu lost", c.samples,
			 (unsigned long long)(s.info.samples - recs_base),
			 (unsigned long long)s.info.lost);
		problem = why;
	} else {
		problem = cs_recs_problem(&recs, &s.info, why, len);
	}
	cs_recs_free(&recs);
out_unmap:
	munmap(s.base, s.map_len);
	return problem;
}

/* A session that got a fault and still succeeded must say what it runs. */
static const char *fi_absorbed_problem(int fd, const FIXTURE_VARIANT(fault) * variant, char *why,
				       size_t len)
{
	struct cycsample_info info;
	int err = cs_info(fd, &info);

	if (err) {
		snprintf(why, len, "INFO: %s", strerror(err));
		return why;
	}
	if (info.state != CYCSAMPLE_STATE_RUNNING) {
		snprintf(why, len, "START succeeded, state %u", info.state);
		return why;
	}
	/* cycles refused for lack of memory: a fallback that says so */
	if (variant->event == CYCSAMPLE_EVENT_CYCLES && info.event != CYCSAMPLE_EVENT_HW_CYCLES &&
	    (info.fallback_reason != CYCSAMPLE_FALLBACK_OTHER || info.fallback_errno != -ENOMEM)) {
		snprintf(why, len, "fell back to event %u, reason %u, errno %d", info.event,
			 info.fallback_reason, info.fallback_errno);
		return why;
	}
	return NULL;
}

/* ---------------------------------------------------------------------- */
/* Tests                                                                  */
/* ---------------------------------------------------------------------- */

/* open(): the session's own allocations fail; nothing stays behind. */
TEST_F(fault, open)
{
	struct cycsample_config cfg;
	unsigned int n;
	char why[200];
	int fd;

	if (variant->target != FI_PID || variant->event != CYCSAMPLE_EVENT_CYCLES)
		SKIP(return, "open does not depend on the configuration");
	FI_BEGIN();
	for (n = 1; n < FI_MAX_POINTS; n++) {
		ASSERT_EQ(0, fi_arm(&self->nth, n));
		fd = cs_open();
		if (!fi_fired(&self->nth)) {
			ASSERT_LE(0, fd) TH_LOG("open without a fault: %s", strerror(-fd));
			close(fd);
			break;
		}
		self->nth.injected++;
		if (fd >= 0) {
			self->nth.absorbed++;
			close(fd);
			continue;
		}
		ASSERT_EQ(ENOMEM, -fd) TH_LOG("fault %u: open gave %s", n, strerror(-fd));
	}
	ASSERT_LT(n, FI_MAX_POINTS);
	TH_LOG("open: %u fault points, %u failed with ENOMEM, %u absorbed", n - 1,
	       self->nth.injected - self->nth.absorbed, self->nth.absorbed);

	ASSERT_EQ(self->refcnt0, cs_module_refcnt()) TH_LOG("a failed open kept the module");
	fd = cs_open();
	ASSERT_LE(0, fd);
	fi_config(variant, self->child, &cfg, 4);
	EXPECT_EQ(NULL, fi_session_works(fd, &cfg, why, sizeof(why))) TH_LOG("%s", why);
	close(fd);
}

/*
 * CONFIGURE on a fresh session (state OPEN) and again on a configured one
 * whose rings are 4 pages, asking for 8: after ENOMEM the session is in its
 * old state with its old rings, and works.
 */
TEST_F(fault, configure)
{
	struct cycsample_config cfg, cfg4;
	struct cycsample_info info;
	unsigned int n, pass;
	char why[200];
	int fd, err;

	FI_BEGIN();
	fi_config(variant, self->child, &cfg, 8);
	fi_config(variant, self->child, &cfg4, 4);
	for (pass = 0; pass < 2; pass++) {
		unsigned int points = 0, injected = self->nth.injected;
		unsigned int absorbed = self->nth.absorbed;

		for (n = 1; n < FI_MAX_POINTS; n++) {
			fd = cs_open();
			ASSERT_LE(0, fd);
			if (pass == 1)
				ASSERT_EQ(0, cs_configure(fd, &cfg4));
			ASSERT_EQ(0, fi_arm(&self->nth, n));
			err = cs_configure(fd, &cfg);
			if (!fi_fired(&self->nth)) {
				ASSERT_EQ(0, err)
				TH_LOG("CONFIGURE without a fault: %s", strerror(err));
				points = n - 1;
				close(fd);
				break;
			}
			self->nth.injected++;
			if (!err) {
				self->nth.absorbed++;
				close(fd);
				continue;
			}
			ASSERT_EQ(ENOMEM, err)
			TH_LOG("fault %u: CONFIGURE gave %s", n, strerror(err));
			/* nothing changed */
			ASSERT_EQ(0, cs_info(fd, &info));
			if (pass == 0) {
				ASSERT_EQ(CYCSAMPLE_STATE_OPEN, info.state);
			} else {
				ASSERT_EQ(CYCSAMPLE_STATE_CONFIGURED, info.state);
				ASSERT_EQ(4 * info.page_size, info.ring_data_size)
				TH_LOG("fault %u: the old rings are gone", n);
			}
			/* and the session works: as it is, then reconfigured */
			if (pass == 1)
				ASSERT_EQ(NULL, fi_session_works(fd, NULL, why, sizeof(why)))
			TH_LOG("fault %u, old config: %s", n, why);
			ASSERT_EQ(NULL, fi_session_works(fd, &cfg, why, sizeof(why)))
			TH_LOG("fault %u: %s", n, why);
			close(fd);
		}
		ASSERT_LT(n, FI_MAX_POINTS);
		TH_LOG("%s CONFIGURE: %u fault points, %u failed with ENOMEM, %u absorbed",
		       pass ? "second" : "first", points,
		       self->nth.injected - injected - (self->nth.absorbed - absorbed),
		       self->nth.absorbed - absorbed);
		ASSERT_LT(0, self->nth.injected - self->nth.absorbed)
		TH_LOG("no CONFIGURE failed: is fault injection reaching the module?");
	}
	ASSERT_EQ(self->refcnt0, cs_module_refcnt());
}

/*
 * START, first and after a STOP: after ENOMEM the session is still
 * CONFIGURED (or STOPPED), no counter is left (a normal START/STOP works
 * and samples), and closing it releases everything.
 */
TEST_F(fault, start)
{
	struct cycsample_config cfg;
	struct cycsample_info info;
	struct cs_session s;
	unsigned int n, pass;
	char why[200];
	int err;

	FI_BEGIN();
	fi_config(variant, self->child, &cfg, 4);
	for (pass = 0; pass < 2; pass++) {
		unsigned int points = 0, injected = self->nth.injected;
		unsigned int absorbed = self->nth.absorbed;
		__u32 before;

		CS_ASSERT_SESSION(&s, &cfg);
		if (pass == 1) {
			ASSERT_EQ(0, cs_start(s.fd));
			ASSERT_EQ(0, cs_stop(s.fd));
		}
		before = pass ? CYCSAMPLE_STATE_STOPPED : CYCSAMPLE_STATE_CONFIGURED;
		for (n = 1; n < FI_MAX_POINTS; n++) {
			__u64 samples, after;

			ASSERT_EQ(0, cs_info(s.fd, &info));
			samples = info.samples;
			ASSERT_EQ(0, fi_arm(&self->nth, n));
			err = cs_start(s.fd);
			if (!fi_fired(&self->nth)) {
				ASSERT_EQ(0, err)
				TH_LOG("START without a fault: %s", strerror(err));
				ASSERT_EQ(0, cs_stop(s.fd));
				points = n - 1;
				break;
			}
			self->nth.injected++;
			if (!err) {
				self->nth.absorbed++;
				ASSERT_EQ(NULL,
					  fi_absorbed_problem(s.fd, variant, why, sizeof(why)))
				TH_LOG("fault %u: %s", n, why);
				ASSERT_EQ(0, cs_stop(s.fd));
				continue;
			}
			ASSERT_EQ(ENOMEM, err) TH_LOG("fault %u: START gave %s", n, strerror(err));
			ASSERT_EQ(0, cs_info(s.fd, &info));
			ASSERT_EQ(before, info.state) TH_LOG("fault %u", n);
			/* a counter left running would go on adding samples */
			after = info.samples;
			cs_sleep_ms(50);
			ASSERT_EQ(0, cs_info(s.fd, &info));
			ASSERT_EQ(after, info.samples)
			TH_LOG("fault %u: a counter still runs after the failed START", n);
			/* and a failed START records nothing */
			EXPECT_EQ(samples, after)
			TH_LOG("fault %u: the failed START wrote %llu samples", n,
			       (unsigned long long)(after - samples));
			/* a counter left behind would make this START fail or sample twice */
			ASSERT_EQ(0, cs_start(s.fd)) TH_LOG("fault %u: START after ENOMEM", n);
			ASSERT_EQ(0, cs_stop(s.fd));
			before = CYCSAMPLE_STATE_STOPPED;
		}
		ASSERT_LT(n, FI_MAX_POINTS);
		TH_LOG("%s START: %u fault points, %u failed with ENOMEM, %u absorbed",
		       pass ? "second" : "first", points,
		       self->nth.injected - injected - (self->nth.absorbed - absorbed),
		       self->nth.absorbed - absorbed);
		munmap(s.base, s.map_len);
		s.base = NULL;
		ASSERT_EQ(NULL, fi_session_works(s.fd, NULL, why, sizeof(why))) TH_LOG("%s", why);
		cs_session_close(&s);
	}
	/* CPUS counters are created by the cpuhp threads, out of our reach */
	if (variant->target != FI_CPUS)
		ASSERT_LT(0, self->nth.injected - self->nth.absorbed)
	TH_LOG("no START failed: is fault injection reaching the module?");
	ASSERT_EQ(self->refcnt0, cs_module_refcnt());
}

static int mif_set(int fd, char on)
{
	return pwrite(fd, &on, 1, 0) == 1 ? 0 : errno;
}

/*
 * The task filter: every slab allocation of this thread fails while
 * make-it-fail is set.  CONFIGURE and START give ENOMEM and change nothing;
 * with the flag cleared the same session works.
 */
TEST_F(fault, make_it_fail)
{
	struct cycsample_config cfg;
	struct cycsample_info info;
	struct cs_session s;
	const char *bad;
	char why[200];
	int fd, err, mif;

	if (variant->target != FI_PID || variant->event != CYCSAMPLE_EVENT_CYCLES)
		SKIP(return, "one variant is enough");
	FI_BEGIN();
	/* opened once: with the flag set, opening it would fail too */
	mif = open(FI_MAKE_IT_FAIL, O_WRONLY | O_CLOEXEC);
	ASSERT_LE(0, mif) TH_LOG(FI_MAKE_IT_FAIL ": %s", strerror(errno));
	bad = fi_set_all(&self->saved, fi_filter_knobs, FI_NR_FILTER_KNOBS);
	ASSERT_EQ(NULL, bad) TH_LOG("cannot set %s", bad ?: "?");
	fi_config(variant, self->child, &cfg, 4);

	fd = cs_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, mif_set(mif, '1'));
	err = cs_configure(fd, &cfg);
	ASSERT_EQ(0, mif_set(mif, '0'));
	ASSERT_EQ(ENOMEM, err) TH_LOG("CONFIGURE: %s", strerror(err));
	ASSERT_EQ(0, cs_info(fd, &info));
	ASSERT_EQ(CYCSAMPLE_STATE_OPEN, info.state);
	close(fd);

	CS_ASSERT_SESSION(&s, &cfg);
	ASSERT_EQ(0, mif_set(mif, '1'));
	err = cs_start(s.fd);
	ASSERT_EQ(0, mif_set(mif, '0'));
	ASSERT_EQ(ENOMEM, err) TH_LOG("START: %s", strerror(err));
	ASSERT_EQ(0, cs_info(s.fd, &info));
	ASSERT_EQ(CYCSAMPLE_STATE_CONFIGURED, info.state);
	munmap(s.base, s.map_len);
	s.base = NULL;
	ASSERT_EQ(NULL, fi_session_works(s.fd, NULL, why, sizeof(why))) TH_LOG("%s", why);
	cs_session_close(&s);
	close(mif);
	ASSERT_EQ(self->refcnt0, cs_module_refcnt());
}

/*
 * Last: kmemleak finds no unreferenced object whose allocation went through
 * the module (objects must be 5 s old and unreferenced in two scans).
 */
/* Its own fixture: the harness runs the global tests first. */
FIXTURE(leaks)
{
	int unused;
};

FIXTURE_SETUP(leaks)
{
}

FIXTURE_TEARDOWN(leaks)
{
}

TEST_F(leaks, kmemleak_after_faults)
{
	char *buf, *p, *obj;
	unsigned int total = 0, ours = 0;
	size_t len = 1 << 20;
	ssize_t r;
	int fd;

	CS_REQUIRE_ROOT();
	if (access(FI_KMEMLEAK, F_OK))
		SKIP(return, "no " FI_KMEMLEAK " (needs CONFIG_DEBUG_KMEMLEAK)");
	if (fi_unavailable())
		SKIP(return, "%s", fi_unavailable());
	cs_sleep_ms(6000);
	ASSERT_EQ(0, cs_write_file(FI_KMEMLEAK, "scan"));
	cs_sleep_ms(1000);
	ASSERT_EQ(0, cs_write_file(FI_KMEMLEAK, "scan"));

	buf = calloc(1, len + 1);
	ASSERT_NE(NULL, buf);
	fd = open(FI_KMEMLEAK, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	for (p = buf; p < buf + len && (r = read(fd, p, buf + len - p)) > 0; p += r)
		;
	close(fd);

	/* one report per "unreferenced object" paragraph */
	for (obj = strstr(buf, "unreferenced object"); obj;) {
		char *next = strstr(obj + 1, "unreferenced object");

		if (next)
			next[-1] = '\0';
		total++;
		if (strstr(obj, "[cycsample]") || strstr(obj, "cycs_")) {
			ours++;
			TH_LOG("%s", obj);
		}
		obj = next;
	}
	if (total > ours)
		TH_LOG("kmemleak: %u other report(s), not involving cycsample", total - ours);
	free(buf);
	ASSERT_EQ(0, ours) TH_LOG("kmemleak reports objects allocated through cycsample");
}

TEST_HARNESS_MAIN
