// SPDX-License-Identifier: GPL-2.0
/*
 * Which event a session really uses.  CYCSAMPLE_EVENT_CLOCK always gives the
 * software clock; CYCSAMPLE_EVENT_CYCLES gives the PMU's cycles where the
 * platform has a usable one and the software clock (with the reason and the
 * PMU's error) where it has not, unless NO_FALLBACK asks for the error.
 *
 * What "the platform has a usable PMU" means is decided here, not by
 * architecture: a PMU in /sys/bus/event_source/devices/ that lists a cycles
 * event, and perf_event_open() of hardware cycles succeeding.
 */
#include "kselftest_harness.h"

#include <dirent.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>

#include "cycsample_test_lib.h"

#define PMU_DIR "/sys/bus/event_source/devices"

/* Name of a PMU in sysfs that lists a cycles event, or false. */
static bool sysfs_cycles_pmu(char *name, size_t len)
{
	struct dirent *d;
	char path[512];
	DIR *dir = opendir(PMU_DIR);
	bool found = false;

	if (!dir)
		return false;
	while (!found && (d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), PMU_DIR "/%s/events/cpu-cycles", d->d_name);
		found = !access(path, F_OK);
		if (!found) {
			snprintf(path, sizeof(path), PMU_DIR "/%s/events/cpu_cycles", d->d_name);
			found = !access(path, F_OK);
		}
		if (found)
			snprintf(name, len, "%s", d->d_name);
	}
	closedir(dir);
	return found;
}

/* errno of perf_event_open() for sampled hardware cycles of this process, or 0. */
static int perf_cycles_errno(void)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_HARDWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_HW_CPU_CYCLES,
		.sample_period = CS_PERIOD,
		.disabled = 1,
	};
	int fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

static bool pmu_dir_exists(const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), PMU_DIR "/%s", name);
	return name[0] && !access(path, F_OK);
}

FIXTURE(fallback)
{
	pid_t child;
	struct cycsample_config cfg;
	struct cycsample_info info;
	struct cs_recs recs;
	long mhz; /* fallback_mhz as found, to restore */
	bool pmu; /* the platform has usable hardware cycles */
	int pmu_errno;
	char sysfs_pmu[256];
};

FIXTURE_VARIANT(fallback)
{
	__u32 target_type;
	__u32 clock_event; /* the software clock this target type gets */
};

FIXTURE_VARIANT_ADD(fallback, pid){
	.target_type = CYCSAMPLE_TARGET_PID,
	.clock_event = CYCSAMPLE_EVENT_SW_TASK_CLOCK,
};

FIXTURE_VARIANT_ADD(fallback, cpus){
	.target_type = CYCSAMPLE_TARGET_CPUS,
	.clock_event = CYCSAMPLE_EVENT_SW_CPU_CLOCK,
};

FIXTURE_SETUP(fallback)
{
	self->child = cs_spawn_spinner();
	cs_config_init(&self->cfg, variant->target_type,
		       variant->target_type == CYCSAMPLE_TARGET_CPUS ? 0 : self->child);
	if (cs_param_get("fallback_mhz", &self->mhz))
		self->mhz = -1;
	self->pmu_errno = perf_cycles_errno();
	self->pmu = sysfs_cycles_pmu(self->sysfs_pmu, sizeof(self->sysfs_pmu)) && !self->pmu_errno;
}

FIXTURE_TEARDOWN(fallback)
{
	cs_kill(self->child);
	cs_recs_free(&self->recs);
	if (self->mhz > 0)
		cs_param_set("fallback_mhz", self->mhz);
	cs_reset_sample_rate();
}

#define FALLBACK_BEGIN()                                                            \
	do {                                                                        \
		CS_REQUIRE_DEVICE();                                                \
		CS_REQUIRE_ROOT();                                                  \
		ASSERT_LT(0, self->child);                                          \
		ASSERT_LT(0, self->mhz) TH_LOG("no fallback_mhz parameter");        \
		cs_reset_sample_rate();                                             \
		TH_LOG("platform: %s cycles (sysfs PMU '%s', perf_event_open: %s)", \
		       self->pmu ? "hardware" : "no hardware", self->sysfs_pmu,     \
		       strerror(self->pmu_errno));                                  \
	} while (0)

/* The software clock period of @cycles at @mhz, in ns. */
static __u64 clock_ns(__u64 cycles, long mhz)
{
	return cycles * 1000 / mhz;
}

TEST_F(fallback, clock_event_uses_the_software_clock)
{
	struct cs_counts c;

	FALLBACK_BEGIN();
	self->cfg.event = CYCSAMPLE_EVENT_CLOCK;
	CS_ASSERT_SAMPLE_FOR(&self->cfg, 700, &self->recs, &self->info);
	EXPECT_EQ(variant->clock_event, self->info.event);
	EXPECT_EQ(CYCSAMPLE_FALLBACK_REQUESTED, self->info.fallback_reason);
	EXPECT_EQ(0, self->info.fallback_errno);
	EXPECT_EQ(clock_ns(CS_PERIOD, self->mhz), self->info.clock_period_ns);
	CS_ASSERT_RECS_OK(&self->recs, &self->info); /* SW_CLOCK on every sample */
	cs_count(&self->recs, &c);
	EXPECT_LT(10, c.samples);
}

TEST_F(fallback, fallback_mhz_converts_cycles_to_nanoseconds)
{
	FALLBACK_BEGIN();
	ASSERT_EQ(0, cs_param_set("fallback_mhz", 250));
	self->cfg.event = CYCSAMPLE_EVENT_CLOCK;
	CS_ASSERT_SAMPLE_FOR(&self->cfg, 300, &self->recs, &self->info);
	EXPECT_EQ(clock_ns(CS_PERIOD, 250), self->info.clock_period_ns);
	EXPECT_EQ(CS_PERIOD, self->info.sample_period) TH_LOG("the configured value stays");
}

TEST_F(fallback, cycles_event_matches_the_platform)
{
	struct cs_counts c;

	FALLBACK_BEGIN();
	CS_ASSERT_SAMPLE_FOR(&self->cfg, 700, &self->recs, &self->info);
	if (self->pmu) {
		EXPECT_EQ(CYCSAMPLE_EVENT_HW_CYCLES, self->info.event);
		EXPECT_EQ(CYCSAMPLE_FALLBACK_NONE, self->info.fallback_reason);
		EXPECT_EQ(0, self->info.fallback_errno);
		EXPECT_EQ(0, self->info.clock_period_ns);
		EXPECT_TRUE(pmu_dir_exists(self->info.pmu_name))
		TH_LOG("pmu_name '%.32s' is not in " PMU_DIR, self->info.pmu_name);
	} else {
		EXPECT_EQ(variant->clock_event, self->info.event);
		if (self->pmu_errno == ENOENT) {
			EXPECT_EQ(CYCSAMPLE_FALLBACK_NO_PMU, self->info.fallback_reason);
		} else {
			EXPECT_NE(CYCSAMPLE_FALLBACK_NONE, self->info.fallback_reason);
			EXPECT_NE(CYCSAMPLE_FALLBACK_REQUESTED, self->info.fallback_reason);
		}
		if (self->pmu_errno) {
			EXPECT_EQ(-self->pmu_errno, self->info.fallback_errno);
		}
		EXPECT_EQ(clock_ns(CS_PERIOD, self->mhz), self->info.clock_period_ns);
	}
	CS_ASSERT_RECS_OK(&self->recs, &self->info); /* SW_CLOCK flag agrees with event */
	cs_count(&self->recs, &c);
	/* what the module saw, should it not: throttling, drops, the rate left */
	EXPECT_LT(10, c.samples)
	TH_LOG("%s must still sample (info: %llu samples, %llu throttled, %llu lost, "
	       "%llu dropped; perf_event_max_sample_rate %ld)",
	       self->pmu ? "the PMU" : "the fallback", (unsigned long long)self->info.samples,
	       (unsigned long long)self->info.throttled, (unsigned long long)self->info.lost,
	       (unsigned long long)self->info.dropped_other, cs_sample_rate());
}

TEST_F(fallback, no_fallback_uses_the_pmu_or_fails_with_its_error)
{
	struct cycsample_config cfg = self->cfg;
	struct cycsample_info info;
	int fd, err;

	FALLBACK_BEGIN();
	cfg.flags = CYCSAMPLE_CFG_NO_FALLBACK;
	fd = cs_open();
	ASSERT_LE(0, fd);
	err = cs_configure(fd, &cfg);
	if (!err)
		err = cs_start(fd);
	if (self->pmu) {
		EXPECT_EQ(0, err) TH_LOG("%s", strerror(err));
		ASSERT_EQ(0, cs_info(fd, &info));
		EXPECT_EQ(CYCSAMPLE_EVENT_HW_CYCLES, info.event);
		if (!err)
			cs_stop(fd);
	} else {
		/* CONFIGURE or START, whichever creates the counter, fails like the PMU. */
		EXPECT_EQ(self->pmu_errno ? self->pmu_errno : ENOENT, err)
		TH_LOG("%s", strerror(err));
		ASSERT_EQ(0, cs_info(fd, &info));
		EXPECT_NE(CYCSAMPLE_STATE_RUNNING, info.state);
	}
	close(fd);
}

TEST_HARNESS_MAIN
