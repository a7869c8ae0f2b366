// SPDX-License-Identifier: GPL-2.0
/*
 * What one user may hold: max_sessions sessions of its own, whatever other
 * users hold, with CAP_SYS_ADMIN never refused; and ring memory charged the
 * way perf_mmap() charges perf's buffers: kernel.perf_event_mlock_kb per
 * online CPU for the user, the rest pinned to the caller (VmPin) within
 * RLIMIT_MEMLOCK, EPERM beyond, given back when the rings go.  What a user
 * pins counts over all of its sessions, as the rings outlive their process;
 * a re-CONFIGURE is judged without the rings it replaces.
 *
 * The users are nobody (65534) and 65533, with unprivileged=1,
 * perf_event_paranoid 2 and the device node 0666 for the duration of each
 * test; parameters, sysctls and the node's mode are restored afterwards.
 */
#include "kselftest_harness.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "cycsample_test_lib.h"

#define OTHER_UID 65533

/* What a child reports back through shared memory. */
struct report {
	int opened; /* sessions it opened */
	int next_err; /* errno of the open after those */
	int err[4]; /* errno of each CONFIGURE of a multi-step test */
	long vmpin_kb[4]; /* VmPin after each step */
	char step[160];
};

FIXTURE(limits)
{
	long unprivileged, max_sessions, paranoid, mlock_kb; /* to restore */
	mode_t node_mode;
	bool node_saved;
	struct report *rep; /* two, shared with the children */
	long page;
	int nr_rings, online;
};

FIXTURE_SETUP(limits)
{
	struct stat st;

	if (cs_param_get("unprivileged", &self->unprivileged))
		self->unprivileged = -1;
	if (cs_param_get("max_sessions", &self->max_sessions))
		self->max_sessions = -1;
	if (cs_sysctl_get("perf_event_paranoid", &self->paranoid))
		self->paranoid = -2;
	if (cs_sysctl_get("perf_event_mlock_kb", &self->mlock_kb))
		self->mlock_kb = -1;
	self->node_saved = !stat(CS_NODE, &st);
	if (self->node_saved) {
		self->node_mode = st.st_mode & 07777;
		chmod(CS_NODE, 0666);
	}
	self->rep = mmap(NULL, 2 * sizeof(*self->rep), PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	self->page = sysconf(_SC_PAGESIZE);
	self->nr_rings = cs_nr_possible_cpus();
	self->online = cs_nr_online_cpus();
}

FIXTURE_TEARDOWN(limits)
{
	if (self->node_saved)
		chmod(CS_NODE, self->node_mode);
	if (self->unprivileged >= 0)
		cs_param_set("unprivileged", self->unprivileged);
	if (self->max_sessions >= 0)
		cs_param_set("max_sessions", self->max_sessions);
	if (self->paranoid != -2)
		cs_sysctl_set("perf_event_paranoid", self->paranoid);
	if (self->mlock_kb >= 0)
		cs_sysctl_set("perf_event_mlock_kb", self->mlock_kb);
	if (self->rep != MAP_FAILED)
		munmap(self->rep, 2 * sizeof(*self->rep));
}

#define LIMITS_BEGIN()                                                                 \
	do {                                                                           \
		CS_REQUIRE_DEVICE();                                                   \
		CS_REQUIRE_ROOT();                                                     \
		ASSERT_NE(MAP_FAILED, self->rep);                                      \
		ASSERT_TRUE(self->node_saved);                                         \
		ASSERT_LE(0, self->unprivileged) TH_LOG("no unprivileged parameter");  \
		ASSERT_LE(0, self->max_sessions) TH_LOG("no max_sessions parameter");  \
		ASSERT_NE(-2, self->paranoid) TH_LOG("no perf_event_paranoid sysctl"); \
		ASSERT_LE(0, self->mlock_kb) TH_LOG("no perf_event_mlock_kb sysctl");  \
		ASSERT_LT(0, self->nr_rings);                                          \
		ASSERT_LT(0, self->online);                                            \
		ASSERT_EQ(0, cs_param_set("unprivileged", 1));                         \
		ASSERT_EQ(0, cs_sysctl_set("perf_event_paranoid", 2));                 \
		memset(self->rep, 0, 2 * sizeof(*self->rep));                          \
	} while (0)

/* ---------------------------------------------------------------------- */
/* Sessions per user                                                      */
/* ---------------------------------------------------------------------- */

struct hold_req {
	struct report *rep;
	int want; /* sessions to open */
	int held[2], release[2]; /* child -> test: "held"; test -> child: "close" */
};

/* Open @want sessions, try one more, report, hold them until told. */
static int hold_sessions(void *arg)
{
	struct hold_req *rq = arg;
	int fds[16], i, fd;
	char c;

	for (i = 0; i < rq->want && i < 16; i++) {
		fds[i] = cs_open();
		if (fds[i] < 0) {
			rq->rep->next_err = -fds[i];
			break;
		}
		rq->rep->opened++;
	}
	if (rq->rep->opened == rq->want) {
		fd = cs_open();
		rq->rep->next_err = fd < 0 ? -fd : 0;
		if (fd >= 0)
			close(fd);
	}
	if (write(rq->held[1], "h", 1) != 1 || read(rq->release[0], &c, 1) != 1)
		return 1;
	while (i--)
		close(fds[i]);
	return 0;
}

/* Start hold_sessions() as @uid; returns its pid once it holds them. */
static pid_t hold_as(struct hold_req *rq, uid_t uid, struct report *rep, int want)
{
	pid_t pid;
	char c;

	memset(rep, 0, sizeof(*rep));
	rq->rep = rep;
	rq->want = want;
	if (pipe(rq->held) || pipe(rq->release))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid)
		_exit(cs_run_as(uid, uid, hold_sessions, rq));
	if (read(rq->held[0], &c, 1) != 1)
		return -1;
	return pid;
}

static void release_hold(struct hold_req *rq, pid_t pid)
{
	if (write(rq->release[1], "r", 1) != 1)
		kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(rq->held[0]);
	close(rq->held[1]);
	close(rq->release[0]);
	close(rq->release[1]);
}

TEST_F(limits, sessions_are_counted_per_user)
{
	struct report *other = &self->rep[1];
	struct hold_req a, b;
	pid_t holder, other_holder;
	int fds[4], i;

	LIMITS_BEGIN();
	ASSERT_EQ(0, cs_param_set("max_sessions", 2));
	holder = hold_as(&a, CS_NOBODY, self->rep, 2);
	ASSERT_LT(0, holder);
	EXPECT_EQ(2, self->rep->opened);
	EXPECT_EQ(EBUSY, self->rep->next_err) TH_LOG("a third session of uid 65534 opened");

	/* with nobody's two held, another user still gets its own two */
	other_holder = hold_as(&b, OTHER_UID, other, 2);
	ASSERT_LT(0, other_holder);
	EXPECT_EQ(2, other->opened) TH_LOG("uid %d: %s", OTHER_UID, strerror(other->next_err));
	EXPECT_EQ(EBUSY, other->next_err);
	release_hold(&b, other_holder);

	/* and root is never refused */
	for (i = 0; i < 4; i++) {
		fds[i] = cs_open();
		EXPECT_LE(0, fds[i]) TH_LOG("root's session %d: %s", i + 1, strerror(-fds[i]));
	}
	while (i--)
		if (fds[i] >= 0)
			close(fds[i]);
	release_hold(&a, holder);

	/* nobody's closed sessions gave their places back */
	holder = hold_as(&a, CS_NOBODY, self->rep, 2);
	ASSERT_LT(0, holder);
	EXPECT_EQ(2, self->rep->opened);
	release_hold(&a, holder);
}

/* ---------------------------------------------------------------------- */
/* Ring memory                                                            */
/* ---------------------------------------------------------------------- */

/* Pages a session with @ring_pages per ring allocates (control + rings). */
static long session_pages(FIXTURE_DATA(limits) * self, long ring_pages)
{
	long ctl = sizeof(struct cycsample_control) +
		   self->nr_rings * sizeof(struct cycsample_ring_desc);

	return (ctl + self->page - 1) / self->page + self->nr_rings * (1 + ring_pages);
}

/*
 * Set perf_event_mlock_kb so that the user's budget holds one session of
 * CYCSAMPLE_MIN_RING_PAGES rings but not two; return its pages.
 */
static long set_small_budget(FIXTURE_DATA(limits) * self)
{
	long one = session_pages(self, CYCSAMPLE_MIN_RING_PAGES);
	long per_cpu = (one + self->online - 1) / self->online;

	if (per_cpu * self->online >= 2 * one)
		return -1;
	if (cs_sysctl_set("perf_event_mlock_kb", per_cpu * self->page / 1024))
		return -1;
	return per_cpu * self->online;
}

/* The smallest power-of-two ring whose session does not fit in @budget pages. */
static long ring_pages_over(FIXTURE_DATA(limits) * self, long budget)
{
	long rp = CYCSAMPLE_MIN_RING_PAGES;

	while (session_pages(self, rp) <= budget)
		rp *= 2;
	return rp;
}

static long vmpin_kb(void)
{
	char buf[4096], *p;

	if (cs_read_file("/proc/self/status", buf, sizeof(buf)))
		return -1;
	p = strstr(buf, "VmPin:");
	return p ? strtol(p + 6, NULL, 10) : -1;
}

struct mem_req {
	struct report *rep;
	long memlock; /* RLIMIT_MEMLOCK to set first, bytes */
	long ring_pages[4]; /* per step; 0 ends */
	bool keep_first_mapped; /* step 0's session: mmap, close, munmap after step 1 */
};

/* CONFIGURE a session per step, keeping them all open; report each errno and VmPin. */
static int configure_steps(void *arg)
{
	struct mem_req *rq = arg;
	struct rlimit rl = { rq->memlock, rq->memlock };
	struct cycsample_config cfg;
	struct cycsample_info info;
	void *map = MAP_FAILED;
	int fds[4], i, n = 0;
	pid_t child;

	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		return 200;
	child = cs_spawn_spinner();
	if (child < 0)
		return 200;
	for (i = 0; i < 4 && rq->ring_pages[i]; i++, n++) {
		fds[i] = cs_open();
		if (fds[i] < 0) {
			snprintf(rq->rep->step, sizeof(rq->rep->step), "open: %s",
				 strerror(-fds[i]));
			break;
		}
		cs_config_init(&cfg, CYCSAMPLE_TARGET_PID, child);
		cfg.ring_pages = rq->ring_pages[i];
		rq->rep->err[i] = cs_configure(fds[i], &cfg);
		if (i == 0 && rq->keep_first_mapped && !rq->rep->err[0] &&
		    !cs_info(fds[0], &info)) {
			map = mmap(NULL, info.mmap_size, PROT_READ, MAP_SHARED, fds[0], 0);
			close(fds[0]);
			fds[0] = -1;
		}
		if (i == 1 && map != MAP_FAILED) {
			munmap(map, info.mmap_size);
			map = MAP_FAILED;
			/* the first session's memory is gone now: try again */
			rq->rep->err[2] = cs_configure(fds[1], &cfg);
		}
		rq->rep->vmpin_kb[i] = vmpin_kb();
	}
	while (n--)
		if (fds[n] >= 0)
			close(fds[n]);
	rq->rep->vmpin_kb[3] = vmpin_kb();
	cs_kill(child);
	return 0;
}

TEST_F(limits, rings_beyond_the_budget_and_rlimit_memlock_are_eperm)
{
	struct mem_req rq = { .rep = self->rep, .memlock = 0 };
	long budget;

	LIMITS_BEGIN();
	budget = set_small_budget(self);
	ASSERT_LT(0, budget);
	rq.ring_pages[0] = CYCSAMPLE_MIN_RING_PAGES;
	ASSERT_EQ(0, cs_run_as(CS_NOBODY, CS_NOBODY, configure_steps, &rq))
	TH_LOG("%s", self->rep->step);
	EXPECT_EQ(0, self->rep->err[0]) TH_LOG("a session within the budget refused");

	memset(self->rep, 0, sizeof(*self->rep));
	rq.ring_pages[0] = ring_pages_over(self, budget);
	ASSERT_EQ(0, cs_run_as(CS_NOBODY, CS_NOBODY, configure_steps, &rq))
	TH_LOG("%s", self->rep->step);
	EXPECT_EQ(EPERM, self->rep->err[0])
	TH_LOG("%ld-page rings accepted over a %ld-page budget with RLIMIT_MEMLOCK 0",
	       rq.ring_pages[0], budget);
}

TEST_F(limits, the_budget_is_the_users_and_comes_back_after_munmap)
{
	struct mem_req rq = { .rep = self->rep, .memlock = 0, .keep_first_mapped = true };

	LIMITS_BEGIN();
	ASSERT_LT(0, set_small_budget(self));
	rq.ring_pages[0] = CYCSAMPLE_MIN_RING_PAGES;
	rq.ring_pages[1] = CYCSAMPLE_MIN_RING_PAGES;
	ASSERT_EQ(0, cs_run_as(CS_NOBODY, CS_NOBODY, configure_steps, &rq))
	TH_LOG("%s", self->rep->step);
	ASSERT_EQ(0, self->rep->err[0]);
	/* the first rings, still mapped after close(), hold the budget */
	EXPECT_EQ(EPERM, self->rep->err[1]) TH_LOG("two sessions in a one-session budget");
	/* after munmap() they are freed and their charge is given back */
	EXPECT_EQ(0, self->rep->err[2]) TH_LOG("the charge outlived the rings");
}

TEST_F(limits, what_exceeds_the_budget_is_pinned_to_the_caller)
{
	struct mem_req rq = { .rep = self->rep, .memlock = 16 << 20 };
	long budget, over;

	LIMITS_BEGIN();
	budget = set_small_budget(self);
	ASSERT_LT(0, budget);
	rq.ring_pages[0] = ring_pages_over(self, budget);
	over = session_pages(self, rq.ring_pages[0]) - budget;
	ASSERT_LT(over * self->page, rq.memlock);
	/* above the default hard limit: raised here, as root, for the child to inherit */
	ASSERT_EQ(0, setrlimit(RLIMIT_MEMLOCK, &(struct rlimit){ rq.memlock, rq.memlock }));
	ASSERT_EQ(0, cs_run_as(CS_NOBODY, CS_NOBODY, configure_steps, &rq))
	TH_LOG("%s", self->rep->step);
	ASSERT_EQ(0, self->rep->err[0]);
	EXPECT_EQ(over * self->page / 1024, self->rep->vmpin_kb[0])
	TH_LOG("%ld pages over the budget", over);
	EXPECT_EQ(0, self->rep->vmpin_kb[3]) TH_LOG("VmPin after close");
}

TEST_F(limits, paranoid_minus_1_lifts_rlimit_memlock)
{
	struct mem_req rq = { .rep = self->rep, .memlock = 0 };

	LIMITS_BEGIN();
	ASSERT_EQ(0, cs_sysctl_set("perf_event_paranoid", -1));
	rq.ring_pages[0] = ring_pages_over(self, set_small_budget(self));
	ASSERT_EQ(0, cs_run_as(CS_NOBODY, CS_NOBODY, configure_steps, &rq))
	TH_LOG("%s", self->rep->step);
	EXPECT_EQ(0, self->rep->err[0]);
}

/* CONFIGURE @fd in a child that exits at once; return the child's errno. */
static int configure_in_child(int fd, const struct cycsample_config *cfg)
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		return errno;
	if (!pid)
		_exit(cs_configure(fd, cfg));
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 255;
	return WEXITSTATUS(status);
}

struct orphan_req {
	struct report *rep;
	long memlock; /* RLIMIT_MEMLOCK, bytes */
	int steps; /* sessions, each configured by a child of its own */
	bool reconfigure; /* instead: one session configured, then again */
};

/*
 * Open @steps sessions and have a short-lived child CONFIGURE each (or, with
 * @reconfigure, CONFIGURE one session twice here); report each errno.
 */
static int configure_orphans(void *arg)
{
	struct orphan_req *rq = arg;
	struct rlimit rl = { rq->memlock, rq->memlock };
	struct cycsample_config cfg;
	int fds[4], i, n = 0;
	pid_t target;

	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		return 200;
	target = cs_spawn_spinner();
	if (target < 0)
		return 200;
	cs_config_init(&cfg, CYCSAMPLE_TARGET_PID, target);
	cfg.ring_pages = CYCSAMPLE_MIN_RING_PAGES;
	for (i = 0; i < rq->steps && i < 4; i++, n++) {
		fds[i] = cs_open();
		if (fds[i] < 0) {
			snprintf(rq->rep->step, sizeof(rq->rep->step), "open: %s",
				 strerror(-fds[i]));
			break;
		}
		if (rq->reconfigure)
			rq->rep->err[i] = cs_configure(fds[0], &cfg);
		else
			rq->rep->err[i] = configure_in_child(fds[i], &cfg);
		rq->rep->vmpin_kb[i] = vmpin_kb();
	}
	while (n--)
		close(fds[n]);
	cs_kill(target);
	return 0;
}

TEST_F(limits, rings_of_exited_configurers_still_count_against_rlimit_memlock)
{
	struct orphan_req rq = { .rep = self->rep, .steps = 2 };
	long one;

	LIMITS_BEGIN();
	ASSERT_EQ(0, cs_sysctl_set("perf_event_mlock_kb", 0));
	one = session_pages(self, CYCSAMPLE_MIN_RING_PAGES) * self->page;
	rq.memlock = one + one / 2; /* one session, not two */
	ASSERT_EQ(0, setrlimit(RLIMIT_MEMLOCK, &(struct rlimit){ rq.memlock, rq.memlock }));
	ASSERT_EQ(0, cs_run_as(CS_NOBODY, CS_NOBODY, configure_orphans, &rq))
	TH_LOG("%s", self->rep->step);
	ASSERT_EQ(0, self->rep->err[0]) TH_LOG("one session within RLIMIT_MEMLOCK refused");
	/* the first child's pinned_vm died with it; its rings did not */
	EXPECT_EQ(EPERM, self->rep->err[1])
	TH_LOG("two %ld-byte sessions pinned within a %ld-byte RLIMIT_MEMLOCK by exiting children",
	       one, rq.memlock);
}

TEST_F(limits, reconfigure_is_judged_without_the_rings_it_replaces)
{
	struct orphan_req rq = { .rep = self->rep, .steps = 2, .reconfigure = true };

	LIMITS_BEGIN();
	ASSERT_LT(0, set_small_budget(self));
	ASSERT_EQ(0, cs_run_as(CS_NOBODY, CS_NOBODY, configure_orphans, &rq))
	TH_LOG("%s", self->rep->step);
	ASSERT_EQ(0, self->rep->err[0]);
	EXPECT_EQ(0, self->rep->err[1])
	TH_LOG("the same rings again refused: the old ones were still charged");
}

TEST_F(limits, root_is_never_refused_by_the_memory_limits)
{
	struct rlimit rl = { 0, 0 };
	struct cycsample_config cfg;
	int fd;

	LIMITS_BEGIN();
	ASSERT_EQ(0, cs_sysctl_set("perf_event_mlock_kb", 0));
	ASSERT_EQ(0, setrlimit(RLIMIT_MEMLOCK, &rl));
	fd = cs_open();
	ASSERT_LE(0, fd);
	cs_config_init(&cfg, CYCSAMPLE_TARGET_PID, getpid());
	cfg.ring_pages = 64;
	EXPECT_EQ(0, cs_configure(fd, &cfg)) TH_LOG("root refused with CAP_IPC_LOCK");
	close(fd);
}

TEST_HARNESS_MAIN
