// SPDX-License-Identifier: GPL-2.0
/*
 * CPU hotplug during a session: a CPU target follows CPU 1 going offline and
 * coming back (also when the session started while it was offline), and a
 * process target keeps sampling across it.  CPU 1 is put back online after
 * every test.
 */
#include "kselftest_harness.h"

#include "cycsample_test_lib.h"

#define CPU1_ONLINE "/sys/devices/system/cpu/cpu1/online"

FIXTURE(hotplug)
{
	pid_t spinner;
	struct cs_session s;
	struct cs_recs recs;
};

FIXTURE_SETUP(hotplug)
{
	self->spinner = -1;
	self->s.fd = -1;
}

FIXTURE_TEARDOWN(hotplug)
{
	cs_write_file(CPU1_ONLINE, "1");
	cs_kill(self->spinner);
	cs_session_close(&self->s);
	cs_recs_free(&self->recs);
	cs_reset_sample_rate();
}

#define HOTPLUG_BEGIN()                                                     \
	do {                                                                \
		CS_REQUIRE_DEVICE();                                        \
		CS_REQUIRE_ROOT();                                          \
		if (access(CPU1_ONLINE, W_OK))                              \
			SKIP(return, "CPU 1 cannot be taken offline here"); \
		ASSERT_EQ(0, cs_write_file(CPU1_ONLINE, "1"));              \
		cs_reset_sample_rate();                                     \
	} while (0)

static int spin_on_cpu1(void *arg)
{
	cs_pin(0, 1);
	cs_spin_outer();
}

/* Samples of @pid on @cpu among recs[from..]. */
static unsigned long samples_on(const struct cs_recs *r, size_t from, pid_t pid, unsigned int cpu)
{
	unsigned long n = 0;
	size_t i;

	for (i = from; i < r->n; i++) {
		const struct cycsample_sample *smp = cs_sample(&r->v[i]);

		if (smp && smp->pid == (__u32)pid && smp->cpu == cpu)
			n++;
	}
	return n;
}

static unsigned long samples_of(const struct cs_recs *r, size_t from, pid_t pid)
{
	return samples_on(r, from, pid, 0) + samples_on(r, from, pid, 1);
}

static int state_of(struct cs_session *s)
{
	return cs_session_info(s) ? -1 : (int)s->info.state;
}

TEST_F_TIMEOUT(hotplug, cpus_session_samples_cpu1_again_after_it_comes_back, 120)
{
	struct cycsample_config cfg;
	size_t mark;

	HOTPLUG_BEGIN();
	self->spinner = cs_spawn(spin_on_cpu1, NULL);
	ASSERT_LT(0, self->spinner);
	cs_config_init(&cfg, CYCSAMPLE_TARGET_CPUS, 0);
	CS_ASSERT_SESSION(&self->s, &cfg);
	ASSERT_EQ(0, cs_start(self->s.fd));
	cs_collect_for(&self->s, 500, &self->recs);
	ASSERT_LT(0, samples_on(&self->recs, 0, self->spinner, 1)) TH_LOG("before offline");

	ASSERT_EQ(0, cs_write_file(CPU1_ONLINE, "0"));
	cs_drain(&self->s, &self->recs); /* what cpu 1 wrote before it went */
	mark = self->recs.n;
	cs_collect_for(&self->s, 400, &self->recs);
	EXPECT_EQ(CYCSAMPLE_STATE_RUNNING, state_of(&self->s));
	EXPECT_EQ(0, samples_on(&self->recs, mark, self->spinner, 1)) TH_LOG("cpu 1 is offline");
	EXPECT_LT(0, samples_on(&self->recs, mark, self->spinner, 0))
	TH_LOG("the spinner moved to cpu 0 and cpu 0 still samples");

	ASSERT_EQ(0, cs_write_file(CPU1_ONLINE, "1"));
	ASSERT_EQ(0, cs_pin(self->spinner, 1));
	mark = self->recs.n;
	cs_collect_for(&self->s, 1000, &self->recs);
	EXPECT_LT(0, samples_on(&self->recs, mark, self->spinner, 1)) TH_LOG("after online");
	EXPECT_EQ(CYCSAMPLE_STATE_RUNNING, state_of(&self->s));
	ASSERT_EQ(0, cs_stop(self->s.fd));
	cs_drain(&self->s, &self->recs);
	ASSERT_EQ(0, cs_session_info(&self->s));
	CS_ASSERT_RECS_OK(&self->recs, &self->s.info);
}

TEST_F_TIMEOUT(hotplug, cpus_session_started_with_cpu1_offline_samples_it_once_online, 120)
{
	struct cycsample_config cfg;

	HOTPLUG_BEGIN();
	self->spinner = cs_spawn_spinner();
	ASSERT_LT(0, self->spinner);
	ASSERT_EQ(0, cs_write_file(CPU1_ONLINE, "0"));
	cs_config_init(&cfg, CYCSAMPLE_TARGET_CPUS, 0);
	CS_ASSERT_SESSION(&self->s, &cfg);
	EXPECT_EQ(cs_nr_possible_cpus(), self->s.info.nr_rings) TH_LOG("a ring per possible CPU");
	ASSERT_EQ(0, cs_start(self->s.fd));
	cs_collect_for(&self->s, 300, &self->recs);
	ASSERT_EQ(0, cs_write_file(CPU1_ONLINE, "1"));
	ASSERT_EQ(0, cs_pin(self->spinner, 1));
	cs_collect_for(&self->s, 1000, &self->recs);
	ASSERT_EQ(0, cs_stop(self->s.fd));
	cs_drain(&self->s, &self->recs);
	EXPECT_LT(0, samples_on(&self->recs, 0, self->spinner, 1));
	ASSERT_EQ(0, cs_session_info(&self->s));
	CS_ASSERT_RECS_OK(&self->recs, &self->s.info);
}

TEST_F_TIMEOUT(hotplug, pid_session_keeps_sampling_across_hotplug, 120)
{
	struct cycsample_config cfg;
	size_t mark;

	HOTPLUG_BEGIN();
	self->spinner = cs_spawn(spin_on_cpu1, NULL);
	ASSERT_LT(0, self->spinner);
	cs_config_init(&cfg, CYCSAMPLE_TARGET_PID, self->spinner);
	CS_ASSERT_SESSION(&self->s, &cfg);
	ASSERT_EQ(0, cs_start(self->s.fd));
	cs_collect_for(&self->s, 300, &self->recs);
	ASSERT_EQ(0, cs_write_file(CPU1_ONLINE, "0"));
	mark = self->recs.n;
	cs_collect_for(&self->s, 500, &self->recs);
	EXPECT_LT(0, samples_of(&self->recs, mark, self->spinner)) TH_LOG("while cpu 1 is offline");
	ASSERT_EQ(0, cs_write_file(CPU1_ONLINE, "1"));
	ASSERT_EQ(0, cs_pin(self->spinner, 1));
	mark = self->recs.n;
	cs_collect_for(&self->s, 500, &self->recs);
	EXPECT_LT(0, samples_of(&self->recs, mark, self->spinner)) TH_LOG("after online");
	EXPECT_EQ(CYCSAMPLE_STATE_RUNNING, state_of(&self->s));
	ASSERT_EQ(0, cs_stop(self->s.fd));
	cs_drain(&self->s, &self->recs);
	ASSERT_EQ(0, cs_session_info(&self->s));
	CS_ASSERT_RECS_OK(&self->recs, &self->s.info);
}

TEST_HARNESS_MAIN
