// SPDX-License-Identifier: GPL-2.0
/*
 * Load-time parameters that only take effect at insmod: dev_mode gives the
 * devtmpfs node its mode, and a dev_mode with more than permission bits is
 * refused.  The node's group is udev's job (udev/60-cycsample.rules; the
 * tests give it the way the rule does): the module no longer changes it,
 * and dev_gid is no parameter.  Each test reloads the module with
 * finit_module() and the teardown loads it again with no parameters, so the
 * suites after this one find the module as the runner left it.
 *
 * The module image is CYCSAMPLE_KO, else /cycsample/cycsample.ko (where
 * scripts/cycsample-vm puts it); without it the tests skip.
 */
#include "kselftest_harness.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "cycsample_test_lib.h"

#define NODE "/dev/cycsample"
#define NOBODY 65534
#define OTHER_GROUP 4242

static int reload(const char *params)
{
	int err = cs_unload_module();

	return err ? err : cs_load_module(params);
}

FIXTURE(params)
{
	long paranoid; /* kernel.perf_event_paranoid to restore, or -1 */
};

FIXTURE_SETUP(params)
{
	/* below Debian's 3, so that unprivileged users may open at all */
	if (cs_sysctl_get("perf_event_paranoid", &self->paranoid))
		self->paranoid = -1;
	else
		cs_sysctl_set("perf_event_paranoid", 2);
	CS_REQUIRE_ROOT();
	if (access(cs_ko_path(), R_OK))
		SKIP(return, "no module image at %s (set CYCSAMPLE_KO)", cs_ko_path());
	if (!cs_module_loaded())
		SKIP(return, "cycsample is not loaded");
}

FIXTURE_TEARDOWN(params)
{
	if (self->paranoid != -1)
		cs_sysctl_set("perf_event_paranoid", self->paranoid);
	if (cs_module_loaded() && !access(cs_ko_path(), R_OK))
		EXPECT_EQ(0, reload(""));
}

/* 0 if open() of the node succeeds, else its errno. */
static int try_open(void *arg)
{
	int fd = cs_open();

	(void)arg;
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return -fd;
}

/* try_open() as @uid:@gid, in a child */
static int open_as(uid_t uid, gid_t gid)
{
	return cs_run_as(uid, gid, try_open, NULL);
}

TEST_F(params, dev_mode_sets_the_node_mode)
{
	struct stat st;

	ASSERT_EQ(0, reload("dev_mode=0660"));
	ASSERT_EQ(0, stat(NODE, &st));
	EXPECT_EQ(0660, st.st_mode & 07777);
	EXPECT_EQ(0, st.st_gid);
	EXPECT_EQ(0, st.st_uid);
}

/* The group of the node is udev's: a dev_gid given at load changes nothing. */
TEST_F(params, dev_gid_is_not_a_parameter)
{
	struct stat st;

	ASSERT_EQ(0, reload("dev_mode=0660 dev_gid=65534"));
	ASSERT_EQ(0, stat(NODE, &st));
	EXPECT_EQ(0, st.st_gid) TH_LOG("the module set the node's group itself");
}

/* What the udev rule does: the group and mode on the node. */
static int give_node_to_nobodys_group(void)
{
	return chown(NODE, 0, NOBODY) || chmod(NODE, 0660) ? errno : 0;
}

TEST_F(params, the_group_opens_the_node_and_others_do_not)
{
	ASSERT_EQ(0, reload("unprivileged=1"));
	ASSERT_EQ(0, give_node_to_nobodys_group());
	EXPECT_EQ(0, open_as(NOBODY, NOBODY));
	/* same user, not in the group: the node's mode refuses it */
	EXPECT_EQ(EACCES, open_as(NOBODY, OTHER_GROUP));
}

TEST_F(params, the_policy_still_applies_to_the_group)
{
	/* the node lets the group in, unprivileged=0 does not */
	ASSERT_EQ(0, reload(""));
	ASSERT_EQ(0, give_node_to_nobodys_group());
	EXPECT_EQ(EACCES, open_as(NOBODY, NOBODY));
}

TEST_F(params, default_node_is_root_only)
{
	struct stat st;

	ASSERT_EQ(0, reload("unprivileged=1"));
	ASSERT_EQ(0, stat(NODE, &st));
	EXPECT_EQ(0600, st.st_mode & 07777);
	EXPECT_EQ(0, st.st_gid);
	EXPECT_EQ(EACCES, open_as(NOBODY, NOBODY));
}

TEST_F(params, dev_mode_beyond_permission_bits_is_refused)
{
	EXPECT_EQ(EINVAL, reload("dev_mode=04666"));
	EXPECT_FALSE(cs_module_loaded());
	ASSERT_EQ(0, cs_load_module(""));
}

TEST_HARNESS_MAIN
