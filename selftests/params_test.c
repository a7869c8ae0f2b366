// SPDX-License-Identifier: GPL-2.0
/*
 * Load-time parameters that only take effect at insmod: dev_mode and
 * dev_gid give /dev/cycsample its permissions (so a group of users may open
 * it without a udev rule), and a dev_mode with more than permission bits is
 * refused.  Each test reloads the module with finit_module() and the
 * teardown loads it again with no parameters, so the suites after this one
 * find the module as the runner left it.
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

TEST_F(params, dev_mode_and_dev_gid_set_the_node)
{
	struct stat st;

	ASSERT_EQ(0, reload("dev_mode=0660 dev_gid=65534"));
	ASSERT_EQ(0, stat(NODE, &st));
	EXPECT_EQ(0660, st.st_mode & 07777);
	EXPECT_EQ(NOBODY, st.st_gid);
	EXPECT_EQ(0, st.st_uid);
}

TEST_F(params, the_group_opens_the_node_and_others_do_not)
{
	ASSERT_EQ(0, reload("dev_mode=0660 dev_gid=65534 unprivileged=1"));
	EXPECT_EQ(0, open_as(NOBODY, NOBODY));
	/* same user, not in the group: the node's mode refuses it */
	EXPECT_EQ(EACCES, open_as(NOBODY, OTHER_GROUP));
}

TEST_F(params, the_policy_still_applies_to_the_group)
{
	/* the node lets the group in, unprivileged=0 does not */
	ASSERT_EQ(0, reload("dev_mode=0660 dev_gid=65534"));
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
