// SPDX-License-Identifier: GPL-2.0
/*
 * ioctl ABI of /dev/cycsample: struct sizes, flags, reserved fields, bounds,
 * NULL and bad pointers, unknown ioctls and the session state machine.  Each
 * test asserts one errno of the contract in uapi/linux/cycsample.h.
 */
#include "kselftest_harness.h"

#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

#include "cycsample_test_lib.h"

FIXTURE(abi)
{
	int fd; /* an open session, or -errno */
	struct cycsample_config cfg; /* valid: this process, default everything */
	long page;
};

FIXTURE_SETUP(abi)
{
	self->fd = cs_module_loaded() ? cs_open() : -ENODEV;
	cs_config_init(&self->cfg, CYCSAMPLE_TARGET_PID, getpid());
	self->page = sysconf(_SC_PAGESIZE);
}

FIXTURE_TEARDOWN(abi)
{
	if (self->fd >= 0)
		close(self->fd);
	cs_reset_sample_rate();
}

#define ABI_BEGIN()                                                             \
	do {                                                                    \
		CS_REQUIRE_DEVICE();                                            \
		CS_REQUIRE_ROOT();                                              \
		ASSERT_LE(0, self->fd) TH_LOG("open: %s", strerror(-self->fd)); \
	} while (0)

static int state_of(int fd)
{
	struct cycsample_info info;

	return cs_info(fd, &info) ? -1 : (int)info.state;
}

/* A pid that existed a moment ago and has been reaped. */
static pid_t reaped_pid(void)
{
	pid_t pid = fork();

	if (!pid)
		_exit(0);
	waitpid(pid, NULL, 0);
	return pid;
}

/* ---------------------------------------------------------------------- */
/* INFO                                                                   */
/* ---------------------------------------------------------------------- */

TEST_F(abi, info_reports_versions_and_open_state)
{
	struct cycsample_info info;

	ABI_BEGIN();
	ASSERT_EQ(0, cs_info(self->fd, &info));
	EXPECT_EQ(sizeof(info), info.size);
	EXPECT_EQ(CYCSAMPLE_ABI_VERSION, info.abi_version);
	EXPECT_STREQ(CYCSAMPLE_VERSION, info.module_version);
	EXPECT_EQ(CYCSAMPLE_STATE_OPEN, info.state);
}

TEST_F(abi, info_size_below_8_is_einval)
{
	struct cycsample_info info = { 0 };
	__u32 size;

	ABI_BEGIN();
	for (size = 0; size < 8; size++) {
		info.size = size;
		EXPECT_EQ(EINVAL, cs_ioctl(self->fd, CYCSAMPLE_IOC_INFO, &info))
		TH_LOG("size %u", size);
	}
}

TEST_F(abi, info_null_pointer_is_efault)
{
	ABI_BEGIN();
	EXPECT_EQ(EFAULT, cs_ioctl(self->fd, CYCSAMPLE_IOC_INFO, NULL));
}

TEST_F(abi, info_short_size_writes_only_that_many_bytes)
{
	unsigned char buf[sizeof(struct cycsample_info)];
	struct cycsample_info *info = (void *)buf;
	size_t i;

	ABI_BEGIN();
	memset(buf, 0xa5, sizeof(buf));
	info->size = 16;
	ASSERT_EQ(0, cs_ioctl(self->fd, CYCSAMPLE_IOC_INFO, info));
	EXPECT_EQ(sizeof(struct cycsample_info), info->size);
	EXPECT_EQ(CYCSAMPLE_ABI_VERSION, info->abi_version);
	for (i = 16; i < sizeof(buf); i++) {
		ASSERT_EQ(0xa5, buf[i]) TH_LOG("byte %zu written", i);
	}
}

TEST_F(abi, info_larger_size_zero_fills_the_unknown_tail)
{
	unsigned char buf[sizeof(struct cycsample_info) + 64];
	struct cycsample_info *info = (void *)buf;
	size_t i;

	ABI_BEGIN();
	memset(buf, 0xa5, sizeof(buf));
	info->size = sizeof(buf);
	ASSERT_EQ(0, cs_ioctl(self->fd, CYCSAMPLE_IOC_INFO, info));
	EXPECT_EQ(sizeof(struct cycsample_info), info->size);
	for (i = sizeof(struct cycsample_info); i < sizeof(buf); i++) {
		ASSERT_EQ(0, buf[i]) TH_LOG("byte %zu not zeroed", i);
	}
}

/* Even before CONFIGURE: a reader decides by it how to read the records' pids. */
TEST_F(abi, info_features_say_pids_are_in_the_callers_namespace)
{
	struct cycsample_info info = { .size = sizeof(info) };

	ABI_BEGIN();
	ASSERT_EQ(0, cs_ioctl(self->fd, CYCSAMPLE_IOC_INFO, &info));
	EXPECT_EQ(CYCSAMPLE_FEATURE_PIDNS, info.features);
	EXPECT_EQ(0, info.reserved);
}

TEST_F(abi, info_size_above_a_page_is_e2big)
{
	size_t len = 2 * (size_t)self->page;
	struct cycsample_info *info = calloc(1, len);

	ABI_BEGIN();
	ASSERT_NE(NULL, info);
	info->size = len;
	EXPECT_EQ(E2BIG, cs_ioctl(self->fd, CYCSAMPLE_IOC_INFO, info));
	info->size = self->page;
	EXPECT_EQ(0, cs_ioctl(self->fd, CYCSAMPLE_IOC_INFO, info));
	EXPECT_EQ(sizeof(struct cycsample_info), info->size);
	free(info);
}

/* ---------------------------------------------------------------------- */
/* CONFIGURE: the struct itself                                           */
/* ---------------------------------------------------------------------- */

TEST_F(abi, configure_null_pointer_is_efault)
{
	ABI_BEGIN();
	EXPECT_EQ(EFAULT, cs_ioctl(self->fd, CYCSAMPLE_IOC_CONFIGURE, NULL));
	EXPECT_EQ(CYCSAMPLE_STATE_OPEN, state_of(self->fd));
}

TEST_F(abi, configure_unmapped_pointer_is_efault)
{
	void *none = mmap(NULL, self->page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ABI_BEGIN();
	ASSERT_NE(MAP_FAILED, none);
	EXPECT_EQ(EFAULT, cs_ioctl(self->fd, CYCSAMPLE_IOC_CONFIGURE, none));
	munmap(none, self->page);
}

TEST_F(abi, configure_size_below_ver0_is_einval)
{
	static const __u32 sizes[] = { 0, 4, 8, CYCSAMPLE_CONFIG_SIZE_VER0 - 8,
				       CYCSAMPLE_CONFIG_SIZE_VER0 - 1 };
	size_t i;

	ABI_BEGIN();
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		self->cfg.size = sizes[i];
		EXPECT_EQ(EINVAL, cs_configure(self->fd, &self->cfg)) TH_LOG("size %u", sizes[i]);
	}
	EXPECT_EQ(CYCSAMPLE_STATE_OPEN, state_of(self->fd));
}

TEST_F(abi, configure_size_above_page_is_e2big)
{
	size_t len = 2 * self->page;
	struct cycsample_config *big = calloc(1, len);

	ABI_BEGIN();
	ASSERT_NE(NULL, big);
	memcpy(big, &self->cfg, sizeof(self->cfg));
	big->size = self->page + 8; /* the tail is zero, only the size is too big */
	EXPECT_EQ(E2BIG, cs_configure(self->fd, big));
	free(big);
}

TEST_F(abi, configure_larger_with_nonzero_tail_is_e2big)
{
	unsigned char buf[sizeof(struct cycsample_config) + 16] = { 0 };

	ABI_BEGIN();
	memcpy(buf, &self->cfg, sizeof(self->cfg));
	((struct cycsample_config *)buf)->size = sizeof(buf);
	buf[sizeof(buf) - 1] = 1;
	EXPECT_EQ(E2BIG, cs_configure(self->fd, (void *)buf));
	EXPECT_EQ(CYCSAMPLE_STATE_OPEN, state_of(self->fd));
}

TEST_F(abi, configure_larger_with_zero_tail_is_accepted)
{
	unsigned char buf[sizeof(struct cycsample_config) + 16] = { 0 };

	ABI_BEGIN();
	memcpy(buf, &self->cfg, sizeof(self->cfg));
	((struct cycsample_config *)buf)->size = sizeof(buf);
	EXPECT_EQ(0, cs_configure(self->fd, (void *)buf));
	EXPECT_EQ(CYCSAMPLE_STATE_CONFIGURED, state_of(self->fd));
}

TEST_F(abi, configure_defaults_are_reported_by_info)
{
	struct cycsample_info info;

	ABI_BEGIN();
	ASSERT_EQ(0, cs_configure(self->fd, &self->cfg));
	ASSERT_EQ(0, cs_info(self->fd, &info));
	EXPECT_EQ(CYCSAMPLE_STATE_CONFIGURED, info.state);
	EXPECT_EQ(CYCSAMPLE_TARGET_PID, info.target_type);
	EXPECT_EQ(getpid(), info.target);
	EXPECT_EQ(CS_PERIOD, info.sample_period);
	EXPECT_EQ(0, info.config_flags); /* root: USER_ONLY is not forced */
	EXPECT_EQ(CYCSAMPLE_DEFAULT_STACK, info.max_stack);
	EXPECT_EQ(self->page, info.page_size);
	EXPECT_EQ(cs_nr_possible_cpus(), info.nr_rings);
	EXPECT_EQ(cs_default_ring_bytes(), info.ring_data_size);
	EXPECT_LT(0, info.mmap_size);
	EXPECT_EQ(0, info.mmap_size % self->page);
	EXPECT_EQ(0, info.samples);
	EXPECT_EQ(0, info.lost);
}

TEST_F(abi, configure_unknown_flag_bits_are_einval)
{
	unsigned int bit;

	ABI_BEGIN();
	for (bit = 0; bit < 32; bit++) {
		if (CYCSAMPLE_CFG_ALL_FLAGS & (1U << bit))
			continue;
		self->cfg.flags = 1U << bit;
		EXPECT_EQ(EINVAL, cs_configure(self->fd, &self->cfg)) TH_LOG("flag bit %u", bit);
	}
	EXPECT_EQ(CYCSAMPLE_STATE_OPEN, state_of(self->fd));
}

/* A SAMPLE_PC record has no room for a chain or registers: asking for both is EINVAL. */
TEST_F(abi, configure_pc_only_refuses_chains_and_registers)
{
	static const __u32 with[] = { CYCSAMPLE_CFG_USER_CHAIN, CYCSAMPLE_CFG_KERNEL_CHAIN,
				      CYCSAMPLE_CFG_REGS_USER };
	unsigned int i;

	ABI_BEGIN();
	for (i = 0; i < ARRAY_SIZE(with); i++) {
		self->cfg.flags = CYCSAMPLE_CFG_PC_ONLY | with[i];
		EXPECT_EQ(EINVAL, cs_configure(self->fd, &self->cfg)) TH_LOG("flags %#x", with[i]);
	}
	EXPECT_EQ(CYCSAMPLE_STATE_OPEN, state_of(self->fd));
	self->cfg.flags = CYCSAMPLE_CFG_PC_ONLY;
	EXPECT_EQ(0, cs_configure(self->fd, &self->cfg));
}

/*
 * FORK records stand in for what only MMAP records tell, and only a process
 * session has processes new to it: FORK alone, or on a CPU target, is EINVAL.
 */
TEST_F(abi, configure_fork_records_need_mmap_records_and_a_process_target)
{
	int err;

	ABI_BEGIN();
	self->cfg.flags = CYCSAMPLE_CFG_FORK;
	EXPECT_EQ(EINVAL, cs_configure(self->fd, &self->cfg));
	cs_config_init(&self->cfg, CYCSAMPLE_TARGET_CPUS, 0);
	self->cfg.flags = CYCSAMPLE_CFG_FORK | CYCSAMPLE_CFG_MMAP;
	err = cs_configure(self->fd, &self->cfg);
	/* no kprobes: MMAP records are refused first (uapi.rst) */
	EXPECT_TRUE(err == EINVAL || err == EOPNOTSUPP) TH_LOG("CPU target: %s", strerror(err));
	EXPECT_EQ(CYCSAMPLE_STATE_OPEN, state_of(self->fd));
	cs_config_init(&self->cfg, CYCSAMPLE_TARGET_PID, getpid());
	self->cfg.flags = CYCSAMPLE_CFG_FORK | CYCSAMPLE_CFG_MMAP;
	err = cs_configure(self->fd, &self->cfg);
	EXPECT_TRUE(!err || err == EOPNOTSUPP) TH_LOG("PID target: %s", strerror(err));
}

TEST_F(abi, configure_nonzero_reserved_is_einval)
{
	unsigned int i;

	ABI_BEGIN();
	for (i = 0; i < 4; i++) {
		memset(self->cfg.reserved, 0, sizeof(self->cfg.reserved));
		self->cfg.reserved[i] = 1ULL << (i * 16);
		EXPECT_EQ(EINVAL, cs_configure(self->fd, &self->cfg)) TH_LOG("reserved[%u]", i);
	}
}

/* ---------------------------------------------------------------------- */
/* CONFIGURE: field values                                                */
/* ---------------------------------------------------------------------- */

TEST_F(abi, configure_bad_target_type_is_einval)
{
	static const __u32 types[] = { 0, 4, 0x80000001, 0xffffffff };
	size_t i;

	ABI_BEGIN();
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		self->cfg.target_type = types[i];
		EXPECT_EQ(EINVAL, cs_configure(self->fd, &self->cfg)) TH_LOG("type %#x", types[i]);
	}
}

TEST_F(abi, configure_bad_event_is_einval)
{
	/* 16..18 are only reported in INFO, never requested. */
	static const __u32 events[] = { 0,
					3,
					CYCSAMPLE_EVENT_HW_CYCLES,
					CYCSAMPLE_EVENT_SW_CPU_CLOCK,
					CYCSAMPLE_EVENT_SW_TASK_CLOCK,
					0xffffffff };
	size_t i;

	ABI_BEGIN();
	for (i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
		self->cfg.event = events[i];
		EXPECT_EQ(EINVAL, cs_configure(self->fd, &self->cfg)) TH_LOG("event %u", events[i]);
	}
}

TEST_F(abi, configure_period_zero_is_einval)
{
	ABI_BEGIN();
	self->cfg.sample_period = 0;
	EXPECT_EQ(EINVAL, cs_configure(self->fd, &self->cfg));
}

TEST_F(abi, configure_period_below_min_is_einval)
{
	ABI_BEGIN();
	self->cfg.sample_period = CYCSAMPLE_MIN_PERIOD - 1;
	EXPECT_EQ(EINVAL, cs_configure(self->fd, &self->cfg));
}

TEST_F(abi, configure_period_above_max_is_einval)
{
	static const __u64 periods[] = { CYCSAMPLE_MAX_PERIOD + 1, 1ULL << 63, ~0ULL };
	size_t i;

	ABI_BEGIN();
	for (i = 0; i < sizeof(periods) / sizeof(periods[0]); i++) {
		self->cfg.sample_period = periods[i];
		EXPECT_EQ(EINVAL, cs_configure(self->fd, &self->cfg))
		TH_LOG("period %#llx", (unsigned long long)periods[i]);
	}
}

TEST_F(abi, configure_period_bounds_are_accepted)
{
	struct cycsample_info info;

	ABI_BEGIN();
	self->cfg.sample_period = CYCSAMPLE_MIN_PERIOD;
	EXPECT_EQ(0, cs_configure(self->fd, &self->cfg));
	self->cfg.sample_period = CYCSAMPLE_MAX_PERIOD;
	ASSERT_EQ(0, cs_configure(self->fd, &self->cfg));
	ASSERT_EQ(0, cs_info(self->fd, &info));
	EXPECT_EQ(CYCSAMPLE_MAX_PERIOD, info.sample_period);
}

TEST_F(abi, configure_freq_zero_or_above_max_is_einval)
{
	ABI_BEGIN();
	self->cfg.flags = CYCSAMPLE_CFG_FREQ;
	self->cfg.sample_period = 0;
	EXPECT_EQ(EINVAL, cs_configure(self->fd, &self->cfg));
	self->cfg.sample_period = CYCSAMPLE_MAX_FREQ + 1ULL;
	EXPECT_EQ(EINVAL, cs_configure(self->fd, &self->cfg));
	self->cfg.sample_period = 1ULL << 32 | 1000; /* no truncation to 32 bits */
	EXPECT_EQ(EINVAL, cs_configure(self->fd, &self->cfg));
}

TEST_F(abi, configure_freq_max_is_accepted)
{
	struct cycsample_info info;

	ABI_BEGIN();
	self->cfg.flags = CYCSAMPLE_CFG_FREQ;
	self->cfg.sample_period = CYCSAMPLE_MAX_FREQ;
	ASSERT_EQ(0, cs_configure(self->fd, &self->cfg));
	ASSERT_EQ(0, cs_info(self->fd, &info));
	EXPECT_EQ(CYCSAMPLE_MAX_FREQ, info.sample_period);
	EXPECT_TRUE(info.config_flags & CYCSAMPLE_CFG_FREQ);
}

TEST_F(abi, configure_ring_pages_not_power_of_two_is_einval)
{
	const __u32 pages[] = { 3, 6, 100, cs_max_ring_pages() - 1 };
	size_t i;

	ABI_BEGIN();
	for (i = 0; i < sizeof(pages) / sizeof(pages[0]); i++) {
		self->cfg.ring_pages = pages[i];
		EXPECT_EQ(EINVAL, cs_configure(self->fd, &self->cfg)) TH_LOG("pages %u", pages[i]);
	}
}

TEST_F(abi, configure_ring_pages_out_of_bounds_is_einval)
{
	const __u32 pages[] = { 1, cs_max_ring_pages() * 2, 1U << 31 };
	size_t i;

	ABI_BEGIN();
	for (i = 0; i < sizeof(pages) / sizeof(pages[0]); i++) {
		self->cfg.ring_pages = pages[i];
		EXPECT_EQ(EINVAL, cs_configure(self->fd, &self->cfg)) TH_LOG("pages %u", pages[i]);
	}
}

TEST_F(abi, configure_ring_pages_sets_ring_data_size)
{
	struct cycsample_info info;

	ABI_BEGIN();
	self->cfg.ring_pages = CYCSAMPLE_MIN_RING_PAGES;
	ASSERT_EQ(0, cs_configure(self->fd, &self->cfg));
	ASSERT_EQ(0, cs_info(self->fd, &info));
	EXPECT_EQ((__u64)CYCSAMPLE_MIN_RING_PAGES * self->page, info.ring_data_size);
	self->cfg.ring_pages = 16;
	ASSERT_EQ(0, cs_configure(self->fd, &self->cfg));
	ASSERT_EQ(0, cs_info(self->fd, &info));
	EXPECT_EQ(16ULL * self->page, info.ring_data_size);
}

/*
 * The largest ring is CYCSAMPLE_MAX_RING_BYTES whatever the page size: the
 * page count that reaches it with 4 KiB pages is refused with larger ones,
 * where it would take 4 or 16 times that memory per CPU.
 */
TEST_F(abi, configure_ring_bound_is_in_bytes_not_pages)
{
	__u32 max_pages = cs_max_ring_pages();
	struct cycsample_info info;

	ABI_BEGIN();
	self->cfg.ring_pages = max_pages;
	ASSERT_EQ(0, cs_configure(self->fd, &self->cfg)) TH_LOG("%u pages", max_pages);
	ASSERT_EQ(0, cs_info(self->fd, &info));
	EXPECT_EQ(CYCSAMPLE_MAX_RING_BYTES, info.ring_data_size);
	self->cfg.ring_pages = 2 * max_pages;
	EXPECT_EQ(EINVAL, cs_configure(self->fd, &self->cfg))
	TH_LOG("%u pages of %ld bytes accepted", 2 * max_pages, self->page);
	self->cfg.ring_pages = CYCSAMPLE_MAX_RING_BYTES / 4096;
	EXPECT_EQ(self->page == 4096 ? 0 : EINVAL, cs_configure(self->fd, &self->cfg))
	TH_LOG("%u pages of %ld bytes", self->cfg.ring_pages, self->page);
}

TEST_F(abi, configure_max_stack_above_max_is_einval)
{
	ABI_BEGIN();
	self->cfg.max_stack = CYCSAMPLE_MAX_STACK + 1;
	EXPECT_EQ(EINVAL, cs_configure(self->fd, &self->cfg));
	self->cfg.max_stack = 0xffffffff;
	EXPECT_EQ(EINVAL, cs_configure(self->fd, &self->cfg));
	self->cfg.max_stack = CYCSAMPLE_MAX_STACK;
	EXPECT_EQ(0, cs_configure(self->fd, &self->cfg));
}

TEST_F(abi, configure_wakeup_above_ring_less_one_record_is_einval)
{
	__u32 ring = CYCSAMPLE_MIN_RING_PAGES * self->page;

	ABI_BEGIN();
	self->cfg.ring_pages = CYCSAMPLE_MIN_RING_PAGES;
	/* the ring stops taking records before such a watermark is reached */
	self->cfg.wakeup_bytes = ring - CYCSAMPLE_MAX_RECORD_SIZE + 8;
	EXPECT_EQ(EINVAL, cs_configure(self->fd, &self->cfg));
	self->cfg.wakeup_bytes = ring;
	EXPECT_EQ(EINVAL, cs_configure(self->fd, &self->cfg));
	self->cfg.wakeup_bytes = 0xffffffff;
	EXPECT_EQ(EINVAL, cs_configure(self->fd, &self->cfg));
	self->cfg.wakeup_bytes = ring - CYCSAMPLE_MAX_RECORD_SIZE;
	EXPECT_EQ(0, cs_configure(self->fd, &self->cfg));
}

TEST_F(abi, configure_freq_above_max_sample_rate_is_einval)
{
	struct cycsample_info info;

	ABI_BEGIN();
	ASSERT_EQ(0, cs_write_file(CS_SAMPLE_RATE, "1000"));
	self->cfg.flags = CYCSAMPLE_CFG_FREQ;
	self->cfg.sample_period = 1001;
	EXPECT_EQ(EINVAL, cs_configure(self->fd, &self->cfg))
	TH_LOG("1001 Hz accepted above kernel.perf_event_max_sample_rate = 1000");
	self->cfg.sample_period = 1000;
	ASSERT_EQ(0, cs_configure(self->fd, &self->cfg));
	ASSERT_EQ(0, cs_info(self->fd, &info));
	EXPECT_EQ(1000, info.sample_period);
	/* a period is not a rate: the limit does not apply to it */
	self->cfg.flags = 0;
	self->cfg.sample_period = CYCSAMPLE_MIN_PERIOD;
	EXPECT_EQ(0, cs_configure(self->fd, &self->cfg));
}

TEST_F(abi, configure_missing_pid_is_esrch)
{
	ABI_BEGIN();
	self->cfg.target = reaped_pid();
	EXPECT_EQ(ESRCH, cs_configure(self->fd, &self->cfg));
	EXPECT_EQ(CYCSAMPLE_STATE_OPEN, state_of(self->fd));
}

TEST_F(abi, configure_missing_tid_is_esrch)
{
	ABI_BEGIN();
	self->cfg.target_type = CYCSAMPLE_TARGET_TID;
	self->cfg.target = reaped_pid();
	EXPECT_EQ(ESRCH, cs_configure(self->fd, &self->cfg));
}

static void *park(void *arg)
{
	int *tid = arg;

	__atomic_store_n(tid, (int)syscall(SYS_gettid), __ATOMIC_RELEASE);
	pause();
	return NULL;
}

TEST_F(abi, configure_each_target_type_is_accepted)
{
	struct cycsample_info info;
	pthread_t thread;
	int tid = 0;

	ABI_BEGIN();
	ASSERT_EQ(0, pthread_create(&thread, NULL, park, &tid));
	while (!__atomic_load_n(&tid, __ATOMIC_ACQUIRE))
		cs_sleep_ms(1);

	EXPECT_EQ(0, cs_configure(self->fd, &self->cfg)); /* PID: this process */

	cs_config_init(&self->cfg, CYCSAMPLE_TARGET_TID, tid); /* TID: another thread */
	ASSERT_EQ(0, cs_configure(self->fd, &self->cfg));
	ASSERT_EQ(0, cs_info(self->fd, &info));
	EXPECT_EQ(CYCSAMPLE_TARGET_TID, info.target_type);
	EXPECT_EQ(tid, info.target);

	cs_config_init(&self->cfg, CYCSAMPLE_TARGET_CPUS, 0);
	ASSERT_EQ(0, cs_configure(self->fd, &self->cfg));
	ASSERT_EQ(0, cs_info(self->fd, &info));
	EXPECT_EQ(CYCSAMPLE_TARGET_CPUS, info.target_type);
	EXPECT_EQ(0, info.target);
	pthread_cancel(thread);
	pthread_join(thread, NULL);
}

TEST_F(abi, configure_cpus_with_target_is_einval)
{
	ABI_BEGIN();
	cs_config_init(&self->cfg, CYCSAMPLE_TARGET_CPUS, getpid());
	EXPECT_EQ(EINVAL, cs_configure(self->fd, &self->cfg));
	self->cfg.target = -1;
	EXPECT_EQ(EINVAL, cs_configure(self->fd, &self->cfg));
}

TEST_F(abi, reconfigure_when_unmapped_replaces_the_config)
{
	struct cycsample_info info;

	ABI_BEGIN();
	ASSERT_EQ(0, cs_configure(self->fd, &self->cfg));
	self->cfg.sample_period = 2 * CS_PERIOD;
	self->cfg.ring_pages = 8;
	self->cfg.flags = CYCSAMPLE_CFG_USER_CHAIN;
	ASSERT_EQ(0, cs_configure(self->fd, &self->cfg));
	ASSERT_EQ(0, cs_info(self->fd, &info));
	EXPECT_EQ(CYCSAMPLE_STATE_CONFIGURED, info.state);
	EXPECT_EQ(2 * CS_PERIOD, info.sample_period);
	EXPECT_EQ(8ULL * self->page, info.ring_data_size);
	EXPECT_EQ(CYCSAMPLE_CFG_USER_CHAIN, info.config_flags);
}

TEST_F(abi, failed_reconfigure_keeps_the_previous_config)
{
	struct cycsample_info info;

	ABI_BEGIN();
	ASSERT_EQ(0, cs_configure(self->fd, &self->cfg));
	self->cfg.sample_period = 0;
	ASSERT_EQ(EINVAL, cs_configure(self->fd, &self->cfg));
	ASSERT_EQ(0, cs_info(self->fd, &info));
	EXPECT_EQ(CYCSAMPLE_STATE_CONFIGURED, info.state);
	EXPECT_EQ(CS_PERIOD, info.sample_period);
}

TEST_F(abi, configure_while_mapped_is_ebusy)
{
	struct cycsample_info info;
	void *map;

	ABI_BEGIN();
	ASSERT_EQ(0, cs_configure(self->fd, &self->cfg));
	ASSERT_EQ(0, cs_info(self->fd, &info));
	map = mmap(NULL, info.mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, 0);
	ASSERT_NE(MAP_FAILED, map);
	EXPECT_EQ(EBUSY, cs_configure(self->fd, &self->cfg));
	munmap(map, info.mmap_size);
	EXPECT_EQ(0, cs_configure(self->fd, &self->cfg)) TH_LOG("not accepted after munmap");
}

TEST_F(abi, configure_while_running_is_ebusy)
{
	ABI_BEGIN();
	ASSERT_EQ(0, cs_configure(self->fd, &self->cfg));
	ASSERT_EQ(0, cs_start(self->fd));
	EXPECT_EQ(EBUSY, cs_configure(self->fd, &self->cfg));
	EXPECT_EQ(CYCSAMPLE_STATE_RUNNING, state_of(self->fd));
	EXPECT_EQ(0, cs_stop(self->fd));
}

/* ---------------------------------------------------------------------- */
/* START / STOP and the state machine                                     */
/* ---------------------------------------------------------------------- */

TEST_F(abi, start_unconfigured_is_einval)
{
	ABI_BEGIN();
	EXPECT_EQ(EINVAL, cs_start(self->fd));
	EXPECT_EQ(CYCSAMPLE_STATE_OPEN, state_of(self->fd));
}

TEST_F(abi, start_while_running_is_ebusy)
{
	ABI_BEGIN();
	ASSERT_EQ(0, cs_configure(self->fd, &self->cfg));
	ASSERT_EQ(0, cs_start(self->fd));
	EXPECT_EQ(EBUSY, cs_start(self->fd));
	EXPECT_EQ(0, cs_stop(self->fd));
}

TEST_F(abi, stop_when_not_running_is_einval)
{
	ABI_BEGIN();
	EXPECT_EQ(EINVAL, cs_stop(self->fd)) TH_LOG("in state OPEN");
	ASSERT_EQ(0, cs_configure(self->fd, &self->cfg));
	EXPECT_EQ(EINVAL, cs_stop(self->fd)) TH_LOG("in state CONFIGURED");
	ASSERT_EQ(0, cs_start(self->fd));
	ASSERT_EQ(0, cs_stop(self->fd));
	EXPECT_EQ(EINVAL, cs_stop(self->fd)) TH_LOG("in state STOPPED");
}

TEST_F(abi, start_after_target_is_gone_is_esrch)
{
	pid_t child;

	ABI_BEGIN();
	child = cs_spawn_spinner();
	ASSERT_LT(0, child);
	self->cfg.target = child;
	ASSERT_EQ(0, cs_configure(self->fd, &self->cfg));
	cs_kill(child);
	EXPECT_EQ(ESRCH, cs_start(self->fd));
	EXPECT_NE(CYCSAMPLE_STATE_RUNNING, state_of(self->fd));
}

TEST_F(abi, state_follows_configure_start_stop)
{
	ABI_BEGIN();
	EXPECT_EQ(CYCSAMPLE_STATE_OPEN, state_of(self->fd));
	ASSERT_EQ(0, cs_configure(self->fd, &self->cfg));
	EXPECT_EQ(CYCSAMPLE_STATE_CONFIGURED, state_of(self->fd));
	ASSERT_EQ(0, cs_start(self->fd));
	EXPECT_EQ(CYCSAMPLE_STATE_RUNNING, state_of(self->fd));
	ASSERT_EQ(0, cs_stop(self->fd));
	EXPECT_EQ(CYCSAMPLE_STATE_STOPPED, state_of(self->fd));
	ASSERT_EQ(0, cs_start(self->fd)) TH_LOG("restart after STOP");
	EXPECT_EQ(CYCSAMPLE_STATE_RUNNING, state_of(self->fd));
	ASSERT_EQ(0, cs_stop(self->fd));
	EXPECT_EQ(CYCSAMPLE_STATE_STOPPED, state_of(self->fd));
}

TEST_F(abi, sessions_do_not_share_state)
{
	int other;

	ABI_BEGIN();
	other = cs_open();
	ASSERT_LE(0, other);
	ASSERT_EQ(0, cs_configure(self->fd, &self->cfg));
	ASSERT_EQ(0, cs_start(self->fd));
	EXPECT_EQ(CYCSAMPLE_STATE_OPEN, state_of(other));
	EXPECT_EQ(EINVAL, cs_start(other));
	EXPECT_EQ(EINVAL, cs_stop(other));
	EXPECT_EQ(CYCSAMPLE_STATE_RUNNING, state_of(self->fd));
	close(other);
	EXPECT_EQ(CYCSAMPLE_STATE_RUNNING, state_of(self->fd));
	EXPECT_EQ(0, cs_stop(self->fd));
}

/* ---------------------------------------------------------------------- */
/* Older and newer readers: the command encodes their structure size      */
/* ---------------------------------------------------------------------- */

/* A reader built with a struct cycsample_config that has grown by 16 bytes. */
struct newer_config {
	struct cycsample_config known;
	__u64 unknown[2];
};

/* A reader built before struct cycsample_info had its cost counters. */
#define OLDER_INFO_SIZE offsetof(struct cycsample_info, cost_min_ns)
struct older_info {
	unsigned char bytes[OLDER_INFO_SIZE];
};

struct newer_info {
	struct cycsample_info known;
	__u64 unknown[4];
};

#define NEWER_CONFIGURE _IOW(CYCSAMPLE_IOC_MAGIC, 0x01, struct newer_config)
#define OLDER_INFO _IOWR(CYCSAMPLE_IOC_MAGIC, 0x04, struct older_info)
#define NEWER_INFO _IOWR(CYCSAMPLE_IOC_MAGIC, 0x04, struct newer_info)

TEST_F(abi, newer_reader_configure_with_zero_new_fields_is_accepted)
{
	struct newer_config c = { .known = self->cfg };

	ABI_BEGIN();
	c.known.size = sizeof(c);
	EXPECT_EQ(0, cs_ioctl(self->fd, NEWER_CONFIGURE, &c))
	TH_LOG("command %#lx", (unsigned long)NEWER_CONFIGURE);
	EXPECT_EQ(CYCSAMPLE_STATE_CONFIGURED, state_of(self->fd));
}

TEST_F(abi, newer_reader_configure_with_unknown_fields_set_is_e2big)
{
	struct newer_config c = { .known = self->cfg };
	unsigned int i;

	ABI_BEGIN();
	c.known.size = sizeof(c);
	for (i = 0; i < 2; i++) {
		c.unknown[0] = c.unknown[1] = 0;
		c.unknown[i] = 1;
		EXPECT_EQ(E2BIG, cs_ioctl(self->fd, NEWER_CONFIGURE, &c)) TH_LOG("unknown[%u]", i);
	}
	EXPECT_EQ(CYCSAMPLE_STATE_OPEN, state_of(self->fd));
}

TEST_F(abi, configure_size_comes_from_the_struct_not_the_command)
{
	struct newer_config c = { .known = self->cfg };

	ABI_BEGIN();
	/* today's command, a larger struct: the size field decides */
	c.known.size = sizeof(c);
	c.unknown[1] = 1;
	EXPECT_EQ(E2BIG, cs_configure(self->fd, &c.known));
	c.unknown[1] = 0;
	EXPECT_EQ(0, cs_configure(self->fd, &c.known));
	/* a larger command, today's struct */
	c.known.size = sizeof(c.known);
	c.unknown[0] = 1; /* beyond the size given: never read */
	EXPECT_EQ(0, cs_ioctl(self->fd, NEWER_CONFIGURE, &c));
}

TEST_F(abi, older_reader_info_gets_only_its_bytes)
{
	unsigned char buf[sizeof(struct cycsample_info)];
	struct cycsample_info *info = (void *)buf;
	size_t i;

	ABI_BEGIN();
	ASSERT_EQ(0, cs_configure(self->fd, &self->cfg));
	memset(buf, 0xa5, sizeof(buf));
	info->size = OLDER_INFO_SIZE;
	ASSERT_EQ(0, cs_ioctl(self->fd, OLDER_INFO, info))
	TH_LOG("command %#lx", (unsigned long)OLDER_INFO);
	EXPECT_EQ(sizeof(struct cycsample_info), info->size);
	EXPECT_EQ(CYCSAMPLE_STATE_CONFIGURED, info->state);
	EXPECT_EQ(getpid(), info->target);
	for (i = OLDER_INFO_SIZE; i < sizeof(buf); i++) {
		ASSERT_EQ(0xa5, buf[i]) TH_LOG("byte %zu written", i);
	}
}

TEST_F(abi, newer_reader_info_gets_the_unknown_tail_zeroed)
{
	struct newer_info n;
	unsigned int i;

	ABI_BEGIN();
	memset(&n, 0xa5, sizeof(n));
	n.known.size = sizeof(n);
	ASSERT_EQ(0, cs_ioctl(self->fd, NEWER_INFO, &n))
	TH_LOG("command %#lx", (unsigned long)NEWER_INFO);
	EXPECT_EQ(sizeof(struct cycsample_info), n.known.size);
	EXPECT_EQ(CYCSAMPLE_ABI_VERSION, n.known.abi_version);
	for (i = 0; i < 4; i++) {
		EXPECT_EQ(0, n.unknown[i]) TH_LOG("unknown[%u]", i);
	}
}

TEST_F(abi, start_and_stop_ignore_the_size_field)
{
	ABI_BEGIN();
	ASSERT_EQ(0, cs_configure(self->fd, &self->cfg));
	EXPECT_EQ(0, cs_ioctl(self->fd, _IOC(_IOC_NONE, CYCSAMPLE_IOC_MAGIC, 0x02, 8), NULL));
	EXPECT_EQ(CYCSAMPLE_STATE_RUNNING, state_of(self->fd));
	EXPECT_EQ(0, cs_ioctl(self->fd, _IOC(_IOC_NONE, CYCSAMPLE_IOC_MAGIC, 0x03, 8), NULL));
	EXPECT_EQ(CYCSAMPLE_STATE_STOPPED, state_of(self->fd));
}

/* ---------------------------------------------------------------------- */
/* Unknown ioctls                                                         */
/* ---------------------------------------------------------------------- */

TEST_F(abi, unknown_ioctl_is_enotty)
{
	unsigned long cmds[] = {
		_IO(CYCSAMPLE_IOC_MAGIC, 0x00),
		_IO(CYCSAMPLE_IOC_MAGIC, 0x05),
		_IOWR(CYCSAMPLE_IOC_MAGIC, 0x7f, struct cycsample_info),
		_IO('x', 0x02), /* START's nr, other magic */
		_IOR(CYCSAMPLE_IOC_MAGIC, 0x01, struct cycsample_config), /* CONFIGURE, other dir */
		_IOR(CYCSAMPLE_IOC_MAGIC, 0x04, struct cycsample_info), /* INFO, other dir */
		_IOW(CYCSAMPLE_IOC_MAGIC, 0x02, __u64), /* START, other dir */
	};
	unsigned char arg[sizeof(struct cycsample_info)] = { 0 };
	size_t i;

	ABI_BEGIN();
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		EXPECT_EQ(ENOTTY, cs_ioctl(self->fd, cmds[i], arg)) TH_LOG("cmd %#lx", cmds[i]);
	}
	EXPECT_EQ(CYCSAMPLE_STATE_OPEN, state_of(self->fd));
}

TEST_HARNESS_MAIN
