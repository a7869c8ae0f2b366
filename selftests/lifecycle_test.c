// SPDX-License-Identifier: GPL-2.0
/*
 * A session's life: the target exits (normally, by SIGKILL, leader first),
 * exec()s, its child processes outlive it or exec, the reader dies,
 * STOP/START cycles, several sessions at once, and the module reference
 * that keeps rmmod away while a session is open or mapped.  The
 * max_sessions limit is in limits_test.
 */
#include "kselftest_harness.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "cycsample_test_lib.h"

#define LIFE_BEGIN()                    \
	do {                            \
		CS_REQUIRE_DEVICE();    \
		CS_REQUIRE_ROOT();      \
		cs_reset_sample_rate(); \
	} while (0)

/* ---------------------------------------------------------------------- */
/* The target ends                                                        */
/* ---------------------------------------------------------------------- */

enum end_how { END_EXIT, END_SIGKILL, END_LEADER_FIRST };

FIXTURE(target_end)
{
	pid_t child;
	int go[2];
	struct cs_session s;
	struct cs_recs recs;
};

FIXTURE_VARIANT(target_end)
{
	enum end_how how;
};

FIXTURE_VARIANT_ADD(target_end, exit){ .how = END_EXIT };
FIXTURE_VARIANT_ADD(target_end, sigkill){ .how = END_SIGKILL };
FIXTURE_VARIANT_ADD(target_end, leader_exits_first){ .how = END_LEADER_FIRST };

static void *spin_then_exit(void *arg)
{
	cs_spin_cpu_ms(400);
	exit(0);
}

/* Child: after the go byte, spin and end the way the variant says. */
static int run_then_end(void *arg)
{
	const FIXTURE_VARIANT(target_end) *variant = arg;
	pthread_t t;
	char c;

	/* The go pipe is the child's stdin. */
	if (read(0, &c, 1) != 1)
		return 1;
	switch (variant->how) {
	case END_EXIT:
		cs_spin_cpu_ms(400);
		return 0;
	case END_SIGKILL:
		cs_spin_outer();
	case END_LEADER_FIRST:
		if (pthread_create(&t, NULL, spin_then_exit, NULL))
			return 1;
		pthread_exit(NULL);
	}
	return 1;
}

static pid_t spawn_with_stdin(int (*fn)(void *), void *arg, int fd)
{
	int saved = dup(0);
	pid_t pid;

	dup2(fd, 0);
	pid = cs_spawn(fn, arg);
	dup2(saved, 0);
	close(saved);
	return pid;
}

FIXTURE_SETUP(target_end)
{
	self->child = -1;
	self->s.fd = -1;
}

FIXTURE_TEARDOWN(target_end)
{
	cs_kill(self->child);
	cs_session_close(&self->s);
	cs_recs_free(&self->recs);
}

/* Start a session on a gated child, let it run and end, and reap it. */
static void run_until_target_ends(struct __test_metadata *_metadata,
				  FIXTURE_DATA(target_end) * self,
				  const FIXTURE_VARIANT(target_end) * variant, bool drain)
{
	struct cycsample_config cfg;
	int status;

	ASSERT_EQ(0, pipe(self->go));
	self->child = spawn_with_stdin(run_then_end, (void *)variant, self->go[0]);
	ASSERT_LT(0, self->child);
	cs_config_init(&cfg, CYCSAMPLE_TARGET_PID, self->child);
	cfg.ring_pages = 64;
	CS_ASSERT_SESSION(&self->s, &cfg);
	ASSERT_EQ(0, cs_start(self->s.fd));
	ASSERT_EQ(1, write(self->go[1], "g", 1));
	if (variant->how == END_SIGKILL) {
		if (drain)
			cs_collect_for(&self->s, 500, &self->recs);
		else
			cs_sleep_ms(500);
		kill(self->child, SIGKILL);
	}
	if (drain)
		cs_collect_for(&self->s, 5000, &self->recs); /* returns at POLLHUP */
	status = cs_wait_ms(self->child, 5000);
	ASSERT_NE(-1, status);
	self->child = -1;
	if (variant->how == END_SIGKILL) {
		ASSERT_TRUE(WIFSIGNALED(status));
	} else {
		ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
}

TEST_F_TIMEOUT(target_end, exit_record_is_the_last_record, 60)
{
	const struct cycsample_task_event *exit_rec = NULL;
	pid_t pid;
	size_t i, exit_at = 0;
	struct cs_counts c;

	LIFE_BEGIN();
	run_until_target_ends(_metadata, self, variant, true);
	pid = self->s.info.target;
	cs_drain(&self->s, &self->recs);
	ASSERT_EQ(0, cs_session_info(&self->s));
	CS_ASSERT_RECS_OK(&self->recs, &self->s.info);
	cs_count(&self->recs, &c);
	ASSERT_EQ(1, c.exits);
	EXPECT_LT(0, c.samples);
	for (i = 0; i < self->recs.n; i++) {
		if (cs_hdr(&self->recs.v[i])->type == CYCSAMPLE_REC_EXIT) {
			exit_rec = self->recs.v[i].buf;
			exit_at = i;
		}
	}
	ASSERT_NE(NULL, exit_rec);
	EXPECT_EQ(pid, exit_rec->pid);
	for (i = 0; i < self->recs.n; i++) {
		const struct cs_rec *r = &self->recs.v[i];

		/* Last in its ring, and nothing anywhere after it in time. */
		if (r->ring == self->recs.v[exit_at].ring) {
			ASSERT_LE(r->pos, self->recs.v[exit_at].pos);
		}
		ASSERT_LE(((const __u64 *)r->buf)[1], exit_rec->time)
		TH_LOG("record type %u after EXIT", cs_hdr(r)->type);
	}
}

TEST_F_TIMEOUT(target_end, session_ends_and_start_is_esrch, 60)
{
	int base;

	LIFE_BEGIN();
	base = cs_module_refcnt();
	ASSERT_LE(0, base);
	run_until_target_ends(_metadata, self, variant, true);
	ASSERT_EQ(0, cs_session_info(&self->s));
	EXPECT_EQ(CYCSAMPLE_STATE_ENDED, self->s.info.state);
	EXPECT_EQ(ESRCH, cs_start(self->s.fd));
	EXPECT_EQ(EINVAL, cs_stop(self->s.fd)) TH_LOG("STOP in ENDED: not running");
	/* an ended session holds the module like any other, until it is gone */
	EXPECT_LT(base, cs_module_refcnt());
	cs_session_close(&self->s);
	EXPECT_EQ(base, cs_module_refcnt_settles_at(base));
}

TEST_F_TIMEOUT(target_end, poll_is_pollin_until_drained_then_pollhup, 60)
{
	struct pollfd p = { .events = POLLIN };
	uint64_t end;

	LIFE_BEGIN();
	run_until_target_ends(_metadata, self, variant, false);
	p.fd = self->s.fd;
	/* Wait for the EXIT record to arrive; nothing has been read yet. */
	end = cs_now_ms() + 3000;
	do {
		ASSERT_EQ(0, cs_session_info(&self->s));
		if (self->s.info.state == CYCSAMPLE_STATE_ENDED)
			break;
		cs_sleep_ms(20);
	} while (cs_now_ms() < end);
	ASSERT_EQ(CYCSAMPLE_STATE_ENDED, self->s.info.state);
	ASSERT_EQ(1, poll(&p, 1, 1000));
	EXPECT_TRUE(p.revents & POLLIN) TH_LOG("revents %#x", p.revents);
	EXPECT_FALSE(p.revents & POLLHUP) TH_LOG("POLLHUP with unread records");
	cs_drain(&self->s, &self->recs);
	ASSERT_EQ(0, self->recs.errors);
	p.revents = 0;
	ASSERT_EQ(1, poll(&p, 1, 1000));
	EXPECT_TRUE(p.revents & POLLHUP) TH_LOG("revents %#x", p.revents);
	EXPECT_FALSE(p.revents & POLLIN) TH_LOG("POLLIN with empty rings");
}

/* ---------------------------------------------------------------------- */
/* exec                                                                   */
/* ---------------------------------------------------------------------- */

FIXTURE(life)
{
	pid_t child, other;
	struct cs_session s;
	struct cs_recs recs;
};

FIXTURE_SETUP(life)
{
	self->child = -1;
	self->other = -1;
	self->s.fd = -1;
}

FIXTURE_TEARDOWN(life)
{
	cs_kill(self->child);
	cs_kill(self->other);
	cs_session_close(&self->s);
	cs_recs_free(&self->recs);
}

/* Child: after the go byte on stdin, spin a while, then exec this binary as a spinner. */
static int spin_then_exec(void *arg)
{
	const char *exe = arg;
	char *argv[] = { (char *)exe, NULL };
	char *envp[] = { CS_SPIN_ENV "=user", NULL };
	char c;

	if (read(0, &c, 1) != 1)
		return 1;
	prctl(PR_SET_NAME, "cs-before-exec");
	cs_spin_cpu_ms(300);
	execve(exe, argv, envp);
	return 1;
}

TEST_F_TIMEOUT(life, exec_emits_exec_record_and_sampling_goes_on, 60)
{
	const struct cycsample_task_event *exec_rec = NULL;
	const char *exe = cs_self_exe(), *base;
	unsigned long before = 0, after = 0, late = 0, late_in_leaf = 0;
	struct cycsample_config cfg;
	struct cs_counts c;
	int go[2];
	size_t i;

	LIFE_BEGIN();
	ASSERT_NE(NULL, exe);
	base = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
	ASSERT_EQ(0, pipe(go));
	self->child = spawn_with_stdin(spin_then_exec, (void *)exe, go[0]);
	ASSERT_LT(0, self->child);
	cs_config_init(&cfg, CYCSAMPLE_TARGET_PID, self->child);
	CS_ASSERT_SESSION(&self->s, &cfg);
	ASSERT_EQ(0, cs_start(self->s.fd));
	ASSERT_EQ(1, write(go[1], "g", 1));
	cs_collect_for(&self->s, 2500, &self->recs);
	ASSERT_EQ(0, cs_session_info(&self->s));
	EXPECT_EQ(CYCSAMPLE_STATE_RUNNING, self->s.info.state);
	ASSERT_EQ(0, cs_stop(self->s.fd));
	cs_drain(&self->s, &self->recs);
	CS_ASSERT_RECS_OK(&self->recs, &self->s.info);
	cs_count(&self->recs, &c);
	ASSERT_EQ(1, c.exec);
	EXPECT_EQ(0, c.exits);
	exec_rec = cs_find_record(&self->recs, CYCSAMPLE_REC_EXEC);
	ASSERT_NE(NULL, exec_rec);
	EXPECT_EQ(self->child, exec_rec->pid);
	EXPECT_EQ(0, strncmp(base, exec_rec->comm, 15)) TH_LOG("comm '%.16s'", exec_rec->comm);
	for (i = 0; i < self->recs.n; i++) {
		const struct cycsample_sample *smp = cs_sample(&self->recs.v[i]);

		if (!smp || smp->pid != (__u32)self->child)
			continue;
		if (smp->time < exec_rec->time) {
			before++;
			continue;
		}
		after++;
		/* a debug kernel may take a while to fault the new image in */
		if (smp->time >= exec_rec->time + 500000000ULL) {
			late++;
			late_in_leaf += CS_IN_TEXT(leaf, smp->pc);
		}
	}
	EXPECT_LT(0, before);
	EXPECT_LE(10, after) TH_LOG("%lu samples after exec", after);
	EXPECT_LE(10, late) TH_LOG("%lu samples from 0.5 s after exec on", late);
	EXPECT_LE(late / 2, late_in_leaf) TH_LOG("the new image spins in cs_spin_leaf");
}

/* ---------------------------------------------------------------------- */
/* Child processes                                                        */
/* ---------------------------------------------------------------------- */

struct family {
	int go[2]; /* the target starts when this is readable */
	int pids[2]; /* the target writes its child's pid here */
	bool exec; /* the child execs this binary as a spinner */
	bool pin; /* everything on CPU 0, so one ring sees it all */
};

/* The grandchild: spin (as the target's fork), maybe exec a spinner. */
static int family_child(void *arg)
{
	const struct family *f = arg;
	const char *exe = cs_self_exe();
	char *envp[] = { CS_SPIN_ENV "=user", NULL };
	char *argv[] = { (char *)exe, NULL };

	if (!f->exec)
		cs_spin_outer();
	cs_spin_mark_ms(300);
	execve(exe, argv, envp);
	return 1;
}

/* The target: after the go byte fork the grandchild, report it, spin a little, exit. */
static int family_target(void *arg)
{
	struct family *f = arg;
	pid_t child;
	char c;

	if (f->pin && cs_pin(0, 0))
		return 1;
	if (read(f->go[0], &c, 1) != 1)
		return 1;
	child = fork();
	if (child < 0)
		return 1;
	if (!child)
		_exit(family_child(f));
	if (write(f->pids[1], &child, sizeof(child)) != sizeof(child))
		return 1;
	cs_spin_cpu_ms(200);
	return 0;
}

/* Configure and START on a family_target() child; returns the grandchild. */
static pid_t start_family(struct __test_metadata *_metadata, FIXTURE_DATA(life) * self,
			  struct family *f, __u32 ring_pages)
{
	struct cycsample_config cfg;
	pid_t grandchild = -1;

	if (pipe(f->go) || pipe(f->pids))
		return -1;
	self->child = cs_spawn(family_target, f);
	if (self->child < 0)
		return -1;
	cs_config_init(&cfg, CYCSAMPLE_TARGET_PID, self->child);
	cfg.ring_pages = ring_pages;
	if (cs_session_open(&self->s, &cfg, NULL) || cs_start(self->s.fd))
		return -1;
	if (write(f->go[1], "g", 1) != 1 ||
	    read(f->pids[0], &grandchild, sizeof(grandchild)) != sizeof(grandchild))
		return -1;
	return grandchild;
}

TEST_F_TIMEOUT(life, process_session_lives_while_a_child_runs, 60)
{
	const struct cycsample_task_event *exit_rec;
	struct family f = { 0 };
	unsigned long later = 0;
	uint64_t gone_ns = 0;
	struct timespec ts;
	pid_t grandchild;
	struct cs_counts c;
	size_t i;
	int status;

	LIFE_BEGIN();
	grandchild = start_family(_metadata, self, &f, 0);
	ASSERT_LT(0, grandchild);
	self->other = grandchild;
	status = cs_wait_ms(self->child, 5000);
	ASSERT_TRUE(status != -1 && WIFEXITED(status)) TH_LOG("the target did not exit");
	self->child = -1;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	gone_ns = ts.tv_sec * 1000000000ULL + ts.tv_nsec;
	cs_collect_for(&self->s, 1000, &self->recs);
	ASSERT_EQ(0, cs_session_info(&self->s));
	EXPECT_EQ(CYCSAMPLE_STATE_RUNNING, self->s.info.state)
	TH_LOG("the session ended with the target, while its child runs");
	for (i = 0; i < self->recs.n; i++) {
		const struct cycsample_sample *smp = cs_sample(&self->recs.v[i]);

		later += smp && smp->pid == (__u32)grandchild && smp->time > gone_ns;
	}
	EXPECT_LE(10, later) TH_LOG("%lu samples of the child after the target exited", later);
	/* the last one gone: now the session ends */
	cs_kill(grandchild);
	self->other = -1;
	cs_collect_for(&self->s, 3000, &self->recs); /* returns at POLLHUP */
	ASSERT_EQ(0, cs_session_info(&self->s));
	EXPECT_EQ(CYCSAMPLE_STATE_ENDED, self->s.info.state);
	CS_ASSERT_RECS_OK(&self->recs, &self->s.info);
	cs_count(&self->recs, &c);
	EXPECT_EQ(1, c.exits);
	exit_rec = cs_find_record(&self->recs, CYCSAMPLE_REC_EXIT);
	ASSERT_NE(NULL, exit_rec);
	for (i = 0; i < self->recs.n; i++)
		EXPECT_GE(exit_rec->time, ((const __u64 *)self->recs.v[i].buf)[1]);
}

/* EXEC records of @pid, and samples of it in the leaf earlier than the first of them. */
static unsigned long exec_records_of(const struct cs_recs *r, pid_t pid, uint64_t *first)
{
	unsigned long n = 0;
	size_t i;

	*first = UINT64_MAX;
	for (i = 0; i < r->n; i++) {
		const struct cycsample_task_event *te = r->v[i].buf;

		if (cs_hdr(&r->v[i])->type != CYCSAMPLE_REC_EXEC || te->pid != (__u32)pid)
			continue;
		n++;
		*first = te->time < *first ? te->time : *first;
	}
	return n;
}

static unsigned long leaf_samples_before(const struct cs_recs *r, pid_t pid, uint64_t t)
{
	unsigned long n = 0;
	size_t i;

	for (i = 0; i < r->n; i++) {
		const struct cycsample_sample *smp = cs_sample(&r->v[i]);

		n += smp && smp->pid == (__u32)pid && CS_IN_TEXT(leaf, smp->pc) && smp->time < t;
	}
	return n;
}

static unsigned long leaf_samples(const struct cs_recs *r, pid_t pid)
{
	return cs_count_pc_in(r, pid, __start_cs_text_leaf, __stop_cs_text_leaf);
}

TEST_F_TIMEOUT(life, child_process_exec_gets_an_exec_record, 60)
{
	struct family f = { .exec = true };
	pid_t grandchild;
	uint64_t first;
	unsigned long n;
	int i;

	LIFE_BEGIN();
	grandchild = start_family(_metadata, self, &f, 0);
	ASSERT_LT(0, grandchild);
	self->other = grandchild;
	/* a debug kernel may take seconds to fault the new image in */
	for (i = 0; i < 16 && leaf_samples(&self->recs, grandchild) < 10; i++)
		cs_collect_for(&self->s, 500, &self->recs);
	ASSERT_EQ(0, cs_stop(self->s.fd));
	cs_drain(&self->s, &self->recs);
	ASSERT_EQ(0, cs_session_info(&self->s));
	CS_ASSERT_RECS_OK(&self->recs, &self->s.info);
	n = exec_records_of(&self->recs, grandchild, &first);
	EXPECT_EQ(1, n) TH_LOG("%lu EXEC records for the child that exec'd", n);
	EXPECT_EQ(0, exec_records_of(&self->recs, self->child, &first));
	n = exec_records_of(&self->recs, grandchild, &first);
	EXPECT_LE(10, leaf_samples(&self->recs, grandchild));
	EXPECT_EQ(0, leaf_samples_before(&self->recs, grandchild, first))
	TH_LOG("samples of the new image before its EXEC record");
}

/*
 * The ring of CPU 0 is full when the child execs (the reader does not drain
 * it), so the EXEC record cannot be written; it must come with the first
 * sample that fits once the reader makes room, and before it.
 */
TEST_F_TIMEOUT(life, exec_record_lost_on_a_full_ring_is_sent_again, 60)
{
	struct family f = { .exec = true, .pin = true };
	struct cycsample_info info;
	unsigned long n, lost_before;
	pid_t grandchild;
	uint64_t first;
	int i;

	LIFE_BEGIN();
	grandchild = start_family(_metadata, self, &f, 2); /* 8 KiB rings: ~90 samples */
	ASSERT_LT(0, grandchild);
	self->other = grandchild;
	/* the target pinned everything to CPU 0; the exec comes at ~300 ms of CPU */
	cs_sleep_ms(2000);
	ASSERT_EQ(0, cs_info(self->s.fd, &info));
	lost_before = info.lost;
	for (i = 0; i < 16 && leaf_samples(&self->recs, grandchild) < 10; i++)
		cs_collect_for(&self->s, 500, &self->recs);
	ASSERT_EQ(0, cs_stop(self->s.fd));
	cs_drain(&self->s, &self->recs);
	ASSERT_EQ(0, cs_session_info(&self->s));
	CS_ASSERT_RECS_OK(&self->recs, &self->s.info);
	n = exec_records_of(&self->recs, grandchild, &first);
	TH_LOG("%lu lost while the reader slept, %lu EXEC records of the child", lost_before, n);
	ASSERT_LT(0, lost_before) TH_LOG("the ring never filled: the test proves nothing");
	EXPECT_EQ(1, n);
	EXPECT_LE(10, leaf_samples(&self->recs, grandchild));
	EXPECT_EQ(0, leaf_samples_before(&self->recs, grandchild, first));
}

/* Shared with the child of the TID test. */
struct tid_end {
	volatile int tid, go;
};

static void *spin_briefly(void *arg)
{
	struct tid_end *te = arg;

	te->tid = syscall(SYS_gettid);
	while (!te->go)
		cs_sleep_ms(1);
	cs_spin_cpu_ms(300);
	return NULL;
}

/* Child: one thread that spins after the go and exits; we outlive it. */
static int thread_ends_first(void *arg)
{
	pthread_t t;

	if (pthread_create(&t, NULL, spin_briefly, arg))
		return 1;
	pthread_join(t, NULL);
	cs_sleep_ms(3000);
	return 0;
}

TEST_F_TIMEOUT(life, tid_session_ends_when_its_thread_exits, 60)
{
	struct tid_end *te;
	struct cycsample_config cfg;
	struct cs_counts c;
	const struct cycsample_task_event *exit_rec;
	uint64_t end;

	LIFE_BEGIN();
	te = mmap(NULL, sizeof(*te), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, te);
	self->child = cs_spawn(thread_ends_first, te);
	ASSERT_LT(0, self->child);
	for (end = cs_now_ms() + 5000; !te->tid && cs_now_ms() < end;)
		cs_sleep_ms(1);
	ASSERT_NE(0, te->tid);
	cs_config_init(&cfg, CYCSAMPLE_TARGET_TID, te->tid);
	CS_ASSERT_SESSION(&self->s, &cfg);
	ASSERT_EQ(0, cs_start(self->s.fd));
	te->go = 1;
	cs_collect_for(&self->s, 2500, &self->recs); /* returns at POLLHUP */
	ASSERT_EQ(0, cs_session_info(&self->s));
	EXPECT_EQ(CYCSAMPLE_STATE_ENDED, self->s.info.state);
	EXPECT_EQ(0, kill(self->child, 0)) TH_LOG("the process must outlive its thread");
	CS_ASSERT_RECS_OK(&self->recs, &self->s.info);
	cs_count(&self->recs, &c);
	EXPECT_LT(0, c.samples);
	ASSERT_EQ(1, c.exits);
	exit_rec = cs_find_record(&self->recs, CYCSAMPLE_REC_EXIT);
	ASSERT_NE(NULL, exit_rec);
	EXPECT_EQ(te->tid, (int)exit_rec->tid);
	munmap(te, sizeof(*te));
}

/* ---------------------------------------------------------------------- */
/* STOP / START, several sessions, limits                                 */
/* ---------------------------------------------------------------------- */

TEST_F_TIMEOUT(life, stop_start_cycles_sample_only_while_running, 60)
{
	struct cycsample_config cfg;
	__u64 samples = 0;
	int cycle, i;

	LIFE_BEGIN();
	self->child = cs_spawn_spinner();
	ASSERT_LT(0, self->child);
	cs_config_init(&cfg, CYCSAMPLE_TARGET_PID, self->child);
	CS_ASSERT_SESSION(&self->s, &cfg);
	for (cycle = 0; cycle < 4; cycle++) {
		long before = self->recs.n;

		ASSERT_EQ(0, cs_start(self->s.fd)) TH_LOG("cycle %d", cycle);
		/* 300 ms, and up to 3 s while nothing came (a loaded host) */
		cs_collect_for(&self->s, 300, &self->recs);
		for (i = 0; i < 9 && (long)self->recs.n == before; i++)
			cs_collect_for(&self->s, 300, &self->recs);
		ASSERT_EQ(0, cs_stop(self->s.fd));
		cs_drain(&self->s, &self->recs);
		EXPECT_LT(before, (long)self->recs.n) TH_LOG("cycle %d: no samples", cycle);
		ASSERT_EQ(0, cs_session_info(&self->s));
		samples = self->s.info.samples;
		/* Stopped: nothing more arrives. */
		cs_sleep_ms(200);
		EXPECT_EQ(0, cs_drain(&self->s, &self->recs)) TH_LOG("cycle %d", cycle);
		ASSERT_EQ(0, cs_session_info(&self->s));
		EXPECT_EQ(samples, self->s.info.samples);
		EXPECT_EQ(CYCSAMPLE_STATE_STOPPED, self->s.info.state);
	}
	CS_ASSERT_RECS_OK(&self->recs, &self->s.info);
}

/* Samples in @r of pid @pid, and of any other pid. */
static void split_by_pid(const struct cs_recs *r, pid_t pid, unsigned long *mine,
			 unsigned long *others)
{
	size_t i;

	*mine = *others = 0;
	for (i = 0; i < r->n; i++) {
		const struct cycsample_sample *smp = cs_sample(&r->v[i]);

		if (smp)
			(smp->pid == (__u32)pid ? (*mine)++ : (*others)++);
	}
}

TEST_F_TIMEOUT(life, concurrent_sessions_see_only_their_target, 60)
{
	struct cs_session s2 = { .fd = -1 }, s3 = { .fd = -1 };
	struct cs_recs r2 = { 0 }, r3 = { 0 };
	struct cycsample_config cfg;
	unsigned long mine, others;
	int i;

	LIFE_BEGIN();
	self->child = cs_spawn_spinner();
	self->other = cs_spawn_spinner();
	ASSERT_LT(0, self->child);
	ASSERT_LT(0, self->other);
	cs_config_init(&cfg, CYCSAMPLE_TARGET_PID, self->child);
	CS_ASSERT_SESSION(&self->s, &cfg);
	CS_ASSERT_SESSION(&s3, &cfg); /* a second session on the same target */
	cs_config_init(&cfg, CYCSAMPLE_TARGET_PID, self->other);
	CS_ASSERT_SESSION(&s2, &cfg);
	ASSERT_EQ(0, cs_start(self->s.fd));
	ASSERT_EQ(0, cs_start(s2.fd));
	ASSERT_EQ(0, cs_start(s3.fd));
	for (i = 0; i < 15; i++) {
		cs_sleep_ms(100);
		cs_drain(&self->s, &self->recs);
		cs_drain(&s2, &r2);
		cs_drain(&s3, &r3);
	}
	EXPECT_EQ(0, cs_stop(self->s.fd));
	EXPECT_EQ(0, cs_stop(s2.fd));
	EXPECT_EQ(0, cs_stop(s3.fd));
	cs_drain(&self->s, &self->recs);
	cs_drain(&s2, &r2);
	cs_drain(&s3, &r3);
	ASSERT_EQ(0, cs_session_info(&self->s));
	ASSERT_EQ(0, cs_session_info(&s2));
	ASSERT_EQ(0, cs_session_info(&s3));
	CS_ASSERT_RECS_OK(&self->recs, &self->s.info);
	CS_ASSERT_RECS_OK(&r2, &s2.info);
	CS_ASSERT_RECS_OK(&r3, &s3.info);

	split_by_pid(&self->recs, self->child, &mine, &others);
	EXPECT_LT(0, mine);
	EXPECT_EQ(0, others);
	split_by_pid(&r2, self->other, &mine, &others);
	EXPECT_LT(0, mine);
	EXPECT_EQ(0, others);
	split_by_pid(&r3, self->child, &mine, &others);
	EXPECT_LT(0, mine);
	EXPECT_EQ(0, others);
	cs_session_close(&s2);
	cs_session_close(&s3);
	cs_recs_free(&r2);
	cs_recs_free(&r3);
}

/* ---------------------------------------------------------------------- */
/* Module references and rmmod                                            */
/* ---------------------------------------------------------------------- */

/*
 * With nothing of ours left, rmmod must succeed (running the module's exit
 * path after what the test did); then the module comes back for the tests
 * that follow.
 */
static void assert_rmmod_then_reload(struct __test_metadata *_metadata)
{
	if (access(cs_ko_path(), R_OK)) {
		TH_LOG("no module image at %s (CYCSAMPLE_KO): rmmod not tried", cs_ko_path());
		return;
	}
	ASSERT_EQ(0, cs_unload_module()) TH_LOG("rmmod after the last close and munmap");
	ASSERT_FALSE(cs_module_loaded());
	ASSERT_EQ(0, cs_load_module(""));
	ASSERT_EQ(0, access(CS_NODE, F_OK)) TH_LOG("%s after the reload", CS_NODE);
}

TEST_F(life, rmmod_is_refused_while_a_session_is_open)
{
	int fd, err;

	LIFE_BEGIN();
	fd = cs_open();
	ASSERT_LE(0, fd);
	err = cs_rmmod();
	EXPECT_TRUE(err == EWOULDBLOCK || err == EBUSY) TH_LOG("delete_module: %s", strerror(err));
	ASSERT_NE(0, err) TH_LOG("the module was unloaded under an open session");
	close(fd);
}

TEST_F(life, rmmod_is_refused_while_a_closed_session_is_mapped)
{
	struct cycsample_config cfg;
	int err;

	LIFE_BEGIN();
	cs_config_init(&cfg, CYCSAMPLE_TARGET_PID, getpid());
	CS_ASSERT_SESSION(&self->s, &cfg);
	close(self->s.fd);
	self->s.fd = -1;
	err = cs_rmmod();
	EXPECT_TRUE(err == EWOULDBLOCK || err == EBUSY) TH_LOG("delete_module: %s", strerror(err));
	ASSERT_NE(0, err) TH_LOG("the module was unloaded under a mapping");
	EXPECT_EQ(CYCSAMPLE_MAGIC, cs_control(&self->s)->magic);
}

TEST_F(life, module_reference_is_dropped_after_close_and_munmap)
{
	struct cycsample_config cfg;
	int base;

	LIFE_BEGIN();
	base = cs_module_refcnt();
	ASSERT_LE(0, base);
	cs_config_init(&cfg, CYCSAMPLE_TARGET_PID, getpid());
	CS_ASSERT_SESSION(&self->s, &cfg);
	ASSERT_EQ(0, cs_start(self->s.fd));
	EXPECT_LT(base, cs_module_refcnt());
	close(self->s.fd);
	self->s.fd = -1;
	EXPECT_LT(base, cs_module_refcnt()) TH_LOG("closed but still mapped");
	cs_session_close(&self->s);
	ASSERT_EQ(base, cs_module_refcnt_settles_at(base));
	assert_rmmod_then_reload(_metadata);
}

struct reader_arg {
	pid_t target;
	int ready; /* write end: the reader says it is running */
};

/* Child: a reader that maps and starts a session, then waits to be killed. */
static int mapped_reader(void *p)
{
	struct reader_arg *a = p;
	struct cycsample_config cfg;
	struct cs_session s;

	cs_config_init(&cfg, CYCSAMPLE_TARGET_PID, a->target);
	cfg.ring_pages = 2;
	if (cs_session_open(&s, &cfg, NULL) || cs_start(s.fd))
		return 1;
	if (write(a->ready, "r", 1) != 1)
		return 1;
	for (;;)
		pause();
	return 0;
}

TEST_F_TIMEOUT(life, reader_killed_while_mapped_releases_everything, 60)
{
	struct reader_arg a;
	struct cycsample_config cfg;
	struct cs_recs recs = { 0 };
	int base, ready[2];
	pid_t reader;
	char c;

	LIFE_BEGIN();
	base = cs_module_refcnt();
	ASSERT_LE(0, base);
	self->child = cs_spawn_spinner();
	ASSERT_LT(0, self->child);
	ASSERT_EQ(0, pipe(ready));
	a = (struct reader_arg){ .target = self->child, .ready = ready[1] };
	reader = cs_spawn_anywhere(mapped_reader, &a);
	ASSERT_LT(0, reader);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	cs_sleep_ms(300); /* its tiny rings fill up */
	kill(reader, SIGKILL);
	ASSERT_NE(-1, cs_wait_ms(reader, 5000));
	EXPECT_EQ(base, cs_module_refcnt_settles_at(base));
	EXPECT_EQ(0, kill(self->child, 0)) TH_LOG("the target died with its reader");

	/* The module still works. */
	cs_config_init(&cfg, CYCSAMPLE_TARGET_PID, self->child);
	CS_ASSERT_SESSION(&self->s, &cfg);
	ASSERT_EQ(0, cs_start(self->s.fd));
	cs_collect_for(&self->s, 300, &recs);
	EXPECT_EQ(0, cs_stop(self->s.fd));
	EXPECT_LT(0, recs.n);
	cs_recs_free(&recs);

	/* and leaves nothing that would hold it */
	cs_session_close(&self->s);
	ASSERT_EQ(base, cs_module_refcnt_settles_at(base));
	assert_rmmod_then_reload(_metadata);
}

TEST_F(life, close_while_running_releases_the_session)
{
	struct cycsample_config cfg;
	int base, fd;

	LIFE_BEGIN();
	base = cs_module_refcnt();
	self->child = cs_spawn_spinner();
	ASSERT_LT(0, self->child);
	fd = cs_open();
	ASSERT_LE(0, fd);
	cs_config_init(&cfg, CYCSAMPLE_TARGET_PID, self->child);
	ASSERT_EQ(0, cs_configure(fd, &cfg));
	ASSERT_EQ(0, cs_start(fd));
	cs_sleep_ms(200);
	close(fd);
	EXPECT_EQ(base, cs_module_refcnt_settles_at(base));
	EXPECT_EQ(0, kill(self->child, 0));
}

TEST_HARNESS_MAIN
