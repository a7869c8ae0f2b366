// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel lockdown (confidentiality) refuses what could leak kernel data:
 * KERNEL_CHAIN and REGS_USER give EPERM, plain sampling still works.
 *
 * Lockdown cannot be lifted once raised, and an unsigned module cannot be
 * loaded into a locked-down kernel, so these tests only run in a guest where
 * lockdown is already at "confidentiality", or where the caller allows them
 * to raise it by setting CYCSAMPLE_RAISE_LOCKDOWN=1 (a throwaway guest: every
 * later test in that boot runs locked down; scripts/check runs this suite
 * last in each guest for that reason, and scripts/check-debug lets it skip:
 * lockdown closes debugfs, which its kmemleak scans need).  Otherwise they
 * skip:
 *
 *   scripts/cycsample-vm -- sh -c 'CYCSAMPLE_RAISE_LOCKDOWN=1 lockdown_test'
 */
#include "kselftest_harness.h"

#include <sys/mount.h>

#include "cycsample_test_lib.h"

#define LOCKDOWN "/sys/kernel/security/lockdown"

/* true if lockdown is at confidentiality (raising it when allowed). */
static bool confidential(void)
{
	char buf[128];

	if (access(LOCKDOWN, F_OK))
		mount("securityfs", "/sys/kernel/security", "securityfs", 0, NULL);
	if (cs_read_file(LOCKDOWN, buf, sizeof(buf)))
		return false;
	if (strstr(buf, "[confidentiality]"))
		return true;
	if (!getenv("CYCSAMPLE_RAISE_LOCKDOWN"))
		return false;
	cs_write_file(LOCKDOWN, "confidentiality");
	return !cs_read_file(LOCKDOWN, buf, sizeof(buf)) && strstr(buf, "[confidentiality]");
}

FIXTURE(lockdown)
{
	int fd;
	pid_t child;
	struct cycsample_config cfg;
};

FIXTURE_SETUP(lockdown)
{
	self->fd = -1;
	self->child = cs_spawn_spinner();
	cs_config_init(&self->cfg, CYCSAMPLE_TARGET_PID, self->child);
}

FIXTURE_TEARDOWN(lockdown)
{
	if (self->fd >= 0)
		close(self->fd);
	cs_kill(self->child);
}

#define LOCKDOWN_BEGIN()                                                                          \
	do {                                                                                      \
		CS_REQUIRE_DEVICE();                                                              \
		CS_REQUIRE_ROOT();                                                                \
		if (!confidential())                                                              \
			SKIP(return, "lockdown is not at confidentiality (see the file header)"); \
		ASSERT_LT(0, self->child);                                                        \
		self->fd = cs_open();                                                             \
		ASSERT_LE(0, self->fd);                                                           \
	} while (0)

TEST_F(lockdown, kernel_chain_is_eperm)
{
	LOCKDOWN_BEGIN();
	self->cfg.flags = CYCSAMPLE_CFG_KERNEL_CHAIN;
	EXPECT_EQ(EPERM, cs_configure(self->fd, &self->cfg));
}

TEST_F(lockdown, regs_user_is_eperm)
{
	LOCKDOWN_BEGIN();
	self->cfg.flags = CYCSAMPLE_CFG_REGS_USER;
	EXPECT_EQ(EPERM, cs_configure(self->fd, &self->cfg));
}

TEST_F(lockdown, user_chain_sampling_still_works)
{
	struct cs_recs recs = { 0 };
	struct cycsample_info info;

	LOCKDOWN_BEGIN();
	self->cfg.flags = CYCSAMPLE_CFG_USER_CHAIN;
	CS_ASSERT_SAMPLE_FOR(&self->cfg, 500, &recs, &info);
	CS_ASSERT_RECS_OK(&recs, &info);
	EXPECT_LT(0, info.samples);
	cs_recs_free(&recs);
}

TEST_HARNESS_MAIN
