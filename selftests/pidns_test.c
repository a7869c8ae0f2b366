// SPDX-License-Identifier: GPL-2.0
/*
 * Sessions configured inside a PID namespace (a profiler run in a
 * container): every record names processes by the numbers of that
 * namespace, where a reader finds them in its own /proc, as perf gives
 * pids in its event owner's namespace.  A CPUS session's samples of tasks
 * the namespace cannot see carry pid and tid 0.
 *
 * Only a process inside the namespace can configure such a session, and
 * only the children of unshare(CLONE_NEWPID) enter it: each case runs its
 * session in the namespace's first process, which sends what it saw
 * through a pipe, and the checks are made out here.
 */
#include "kselftest_harness.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "cycsample_test_lib.h"

/* What the namespace's first process saw; its pids are the namespace's. */
struct ns_report {
	char problem[240]; /* empty when the session ran */
	pid_t target, child; /* PID case: the target and its forked child */
	pid_t inside; /* CPUS case: the spinner inside */
	bool maprec; /* MMAP and FORK records were asked for */
	unsigned long samples, of_target, of_child, of_inside;
	unsigned long zero_user; /* user-mode samples with pid and tid 0 */
	unsigned long of_outside; /* samples with the outsider's initial pid */
	pid_t stray; /* a sample's pid that is none of the above */
	unsigned long mmaps, mmaps_ours, forks, execs, execs_ours, exits;
	pid_t fork_pid, fork_tid, fork_ppid, exit_pid, exit_tid;
};

FIXTURE(pidns)
{
	pid_t outside, init;
	struct ns_report rep;
};

FIXTURE_SETUP(pidns)
{
	self->outside = -1;
	self->init = -1;
	memset(&self->rep, 0, sizeof(self->rep));
}

FIXTURE_TEARDOWN(pidns)
{
	cs_kill(self->init);
	cs_kill(self->outside);
	cs_reset_sample_rate();
}

static void fail(struct ns_report *rep, const char *step, int err)
{
	snprintf(rep->problem, sizeof(rep->problem), "%s: %s", step, strerror(err));
}

/*
 * The PID case's forked child: a mapping of its own (an MMAP record), CPU
 * time with no program run since the fork (its first sample brings a
 * FORK record), then an exec of this binary as a spinner (an EXEC record).
 */
static void child_of_target(const char *exe)
{
	char *envp[] = { CS_SPIN_ENV "=user", NULL };
	char *argv[] = { (char *)exe, NULL };

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cs_spin_cpu_ms(300);
	execve(exe, argv, envp);
	_exit(1);
}

struct target_arg {
	int go[2], pids[2];
	const char *exe;
};

/* The target: after the go byte, fork child_of_target(), tell its pid, spin. */
static int fork_then_spin(void *arg)
{
	struct target_arg *a = arg;
	pid_t pid;
	char c;

	if (read(a->go[0], &c, 1) != 1)
		return 1;
	pid = fork();
	if (pid < 0)
		return 1;
	if (!pid)
		child_of_target(a->exe);
	if (write(a->pids[1], &pid, sizeof(pid)) != sizeof(pid))
		return 1;
	cs_spin_outer();
}

static bool ours(const struct ns_report *rep, __u32 pid)
{
	return pid == (__u32)rep->target || pid == (__u32)rep->child;
}

/* Count the records of the PID case into @rep. */
static void tally_pid_session(const struct cs_recs *recs, struct ns_report *rep)
{
	size_t i;

	for (i = 0; i < recs->n; i++) {
		const void *rec = recs->v[i].buf;
		const struct cycsample_sample *smp = cs_sample(&recs->v[i]);
		const struct cycsample_task_event *te = rec;
		const struct cycsample_mmap *m = rec;
		const struct cycsample_fork *f = rec;

		if (smp) {
			rep->samples++;
			if (smp->pid == (__u32)rep->target && smp->tid == (__u32)rep->target)
				rep->of_target++;
			else if (smp->pid == (__u32)rep->child && smp->tid == (__u32)rep->child)
				rep->of_child++;
			else if (!rep->stray)
				rep->stray = smp->pid;
			continue;
		}
		switch (cs_hdr(&recs->v[i])->type) {
		case CYCSAMPLE_REC_MMAP:
			rep->mmaps++;
			rep->mmaps_ours += ours(rep, m->pid) && m->tid == m->pid;
			break;
		case CYCSAMPLE_REC_FORK:
			rep->forks++;
			rep->fork_pid = f->pid;
			rep->fork_tid = f->tid;
			rep->fork_ppid = f->ppid;
			break;
		case CYCSAMPLE_REC_EXEC:
			rep->execs++;
			rep->execs_ours += te->pid == (__u32)rep->child && te->tid == te->pid;
			break;
		case CYCSAMPLE_REC_EXIT:
			rep->exits++;
			rep->exit_pid = te->pid;
			rep->exit_tid = te->tid;
			break;
		}
	}
}

/*
 * In the namespace: profile a target that forks and a child that maps and
 * execs, kill both, read to the end of the session.
 */
static void run_pid_session(struct ns_report *rep)
{
	struct target_arg a = { .exe = cs_self_exe() };
	struct cycsample_config cfg;
	struct cs_recs recs = { 0 };
	const char *step = "";
	char why[200];
	struct cs_session s;
	uint64_t end;
	int err;

	if (!a.exe || pipe(a.go) || pipe(a.pids)) {
		fail(rep, "set-up", errno);
		return;
	}
	rep->target = cs_spawn(fork_then_spin, &a);
	if (rep->target < 0) {
		fail(rep, "fork", -rep->target);
		return;
	}
	cs_config_init(&cfg, CYCSAMPLE_TARGET_PID, rep->target);
	cfg.flags = CYCSAMPLE_CFG_MMAP | CYCSAMPLE_CFG_FORK;
	err = cs_session_open(&s, &cfg, &step);
	/* a kernel without kprobes has no MMAP records: the samples still tell */
	if (err == EOPNOTSUPP) {
		cfg.flags = 0;
		err = cs_session_open(&s, &cfg, &step);
	}
	if (err) {
		fail(rep, step, err);
		return;
	}
	rep->maprec = cfg.flags;
	err = cs_start(s.fd);
	if (!err && (write(a.go[1], "g", 1) != 1 ||
		     read(a.pids[0], &rep->child, sizeof(rep->child)) != sizeof(rep->child)))
		err = EIO;
	if (err) {
		fail(rep, err == EIO ? "the target's fork" : "START", err);
		cs_session_close(&s);
		return;
	}
	/* until the child's exec, whatever the emulator's speed, then its samples after it */
	for (end = cs_now_ms() + 30000;
	     !cs_find_record(&recs, CYCSAMPLE_REC_EXEC) && cs_now_ms() < end;)
		cs_collect_for(&s, 200, &recs);
	cs_collect_for(&s, 500, &recs);
	/* the child first: the session ends with the last of them, at the EXIT record */
	cs_kill(rep->child);
	kill(rep->target, SIGKILL);
	cs_collect_for(&s, 10000, &recs);
	waitpid(rep->target, NULL, 0);
	if (!cs_session_info(&s) && cs_recs_problem(&recs, &s.info, why, sizeof(why)))
		snprintf(rep->problem, sizeof(rep->problem), "records: %s", why);
	cs_session_close(&s);
	tally_pid_session(&recs, rep);
	cs_recs_free(&recs);
}

/* In the namespace: a CPUS session while a spinner runs here and one outside. */
static void run_cpus_session(struct ns_report *rep, pid_t outside)
{
	struct cycsample_info info;
	struct cycsample_config cfg;
	struct cs_recs recs = { 0 };
	const char *step = "";
	size_t i;
	int err;

	rep->inside = cs_spawn_spinner();
	if (rep->inside < 0) {
		fail(rep, "fork", -rep->inside);
		return;
	}
	cs_config_init(&cfg, CYCSAMPLE_TARGET_CPUS, 0);
	cfg.flags = CYCSAMPLE_CFG_USER_ONLY;
	err = cs_sample_for(&cfg, 1500, &recs, &info, &step);
	cs_kill(rep->inside);
	if (err) {
		fail(rep, step, err);
		return;
	}
	for (i = 0; i < recs.n; i++) {
		const struct cycsample_sample *smp = cs_sample(&recs.v[i]);

		if (!smp)
			continue;
		rep->samples++;
		if (smp->pid == (__u32)rep->inside)
			rep->of_inside++;
		else if (smp->pid == (__u32)getpid())
			continue; /* this reader, pid 1 here */
		else if (!smp->pid && !smp->tid)
			rep->zero_user++;
		else if (smp->pid == (__u32)outside)
			rep->of_outside++;
		else if (!rep->stray)
			rep->stray = smp->pid;
	}
	cs_recs_free(&recs);
}

/*
 * Enter a new PID namespace, make @call in its first process, and read back
 * its report.  SKIPs where the kernel has no PID namespaces.
 */
#define RUN_IN_NAMESPACE(call)                                                                    \
	do {                                                                                      \
		int __p[2], __st = -1;                                                            \
		ssize_t __n;                                                                      \
		if (unshare(CLONE_NEWPID))                                                        \
			SKIP(return, "unshare(CLONE_NEWPID): %s", strerror(errno));               \
		ASSERT_EQ(0, pipe(__p));                                                          \
		self->init = fork();                                                              \
		ASSERT_LE(0, self->init);                                                         \
		if (!self->init) {                                                                \
			prctl(PR_SET_PDEATHSIG, SIGKILL);                                         \
			call;                                                                     \
			_exit(write(__p[1], &self->rep, sizeof(self->rep)) != sizeof(self->rep)); \
		}                                                                                 \
		close(__p[1]);                                                                    \
		__n = read(__p[0], &self->rep, sizeof(self->rep));                                \
		ASSERT_EQ(self->init, waitpid(self->init, &__st, 0));                             \
		self->init = -1;                                                                  \
		ASSERT_EQ(sizeof(self->rep), __n) TH_LOG("no report from the namespace");         \
		ASSERT_EQ(0, __st);                                                               \
		ASSERT_STREQ("", self->rep.problem);                                              \
	} while (0)

/*
 * Samples, FORK, MMAP, EXEC and EXIT records of a PID session carry the
 * namespace's pids: the module before this wrote the initial namespace's,
 * which no process inside can find in its /proc.
 */
TEST_F_TIMEOUT(pidns, pid_session_records_carry_the_configurers_pids, 60)
{
	struct ns_report *r = &self->rep;

	CS_REQUIRE_DEVICE();
	CS_REQUIRE_ROOT();
	cs_reset_sample_rate();
	RUN_IN_NAMESPACE(run_pid_session(&self->rep));
	TH_LOG("target %d, child %d: %lu samples (%lu, %lu), %lu MMAP (%lu ours), "
	       "%lu FORK, %lu EXEC (%lu ours), %lu EXIT",
	       r->target, r->child, r->samples, r->of_target, r->of_child, r->mmaps, r->mmaps_ours,
	       r->forks, r->execs, r->execs_ours, r->exits);
	EXPECT_EQ(0, r->stray) TH_LOG("a sample of pid %d", r->stray);
	EXPECT_LE(10, r->of_target);
	EXPECT_LE(10, r->of_child);
	ASSERT_EQ(1, r->exits);
	EXPECT_EQ(r->target, r->exit_pid);
	EXPECT_EQ(r->target, r->exit_tid);
	EXPECT_LE(1, r->execs);
	EXPECT_EQ(r->execs, r->execs_ours);
	/* not a SKIP: the harness would report the failures above as one */
	if (!r->maprec) {
		TH_LOG("no MMAP records on this kernel (no kprobes): MMAP and FORK not checked");
		return;
	}
	EXPECT_LE(1, r->mmaps);
	EXPECT_EQ(r->mmaps, r->mmaps_ours);
	ASSERT_EQ(1, r->forks);
	EXPECT_EQ(r->child, r->fork_pid);
	EXPECT_EQ(r->child, r->fork_tid);
	EXPECT_EQ(r->target, r->fork_ppid);
}

/*
 * A CPUS session configured inside sees its own spinner by its number
 * there, and a spinner outside, which the namespace cannot name, as pid 0
 * (never by its number outside).
 */
TEST_F_TIMEOUT(pidns, cpus_session_gives_pid_0_to_tasks_outside, 60)
{
	struct ns_report *r = &self->rep;
	pid_t outside;

	CS_REQUIRE_DEVICE();
	CS_REQUIRE_ROOT();
	cs_reset_sample_rate();
	/* apart from the spinner inside, which cs_spawn() puts on the last CPU */
	self->outside = cs_spawn_spinner();
	ASSERT_LT(0, self->outside);
	if (cs_nr_online_cpus() > 1)
		ASSERT_EQ(0, cs_pin(self->outside, 0));
	outside = self->outside;
	RUN_IN_NAMESPACE(run_cpus_session(&self->rep, outside));
	TH_LOG("outside %d, inside %d: %lu samples, %lu inside, %lu pid 0, %lu outside's pid",
	       self->outside, r->inside, r->samples, r->of_inside, r->zero_user, r->of_outside);
	EXPECT_EQ(0, r->of_outside);
	EXPECT_EQ(0, r->stray) TH_LOG("a sample of pid %d", r->stray);
	EXPECT_LE(10, r->of_inside);
	EXPECT_LE(10, r->zero_user);
}

TEST_HARNESS_MAIN
