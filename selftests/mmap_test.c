// SPDX-License-Identifier: GPL-2.0
/*
 * Rules of the session mapping: MAP_SHARED only, exact length, offset 0, no
 * PROT_EXEC, read-only data and control pages (SIGBUS on write), a writable
 * data_tail, no split, no mremap, not inherited by fork, alive after close;
 * a control page that agrees with INFO and the documented layout; and an
 * mmap() that takes no lock START holds while perf takes its own.
 */
#include "kselftest_harness.h"

#include <linux/perf_event.h>
#include <signal.h>
#include <sys/syscall.h>

#include "cycsample_test_lib.h"

FIXTURE(mmap)
{
	int fd; /* configured session, or -errno */
	int cfg_err;
	struct cycsample_info info;
	long page;
	void *map;
};

FIXTURE_SETUP(mmap)
{
	struct cycsample_config cfg;

	self->map = MAP_FAILED;
	self->page = sysconf(_SC_PAGESIZE);
	self->fd = cs_module_loaded() ? cs_open() : -ENODEV;
	if (self->fd < 0)
		return;
	cs_config_init(&cfg, CYCSAMPLE_TARGET_PID, getpid());
	cfg.ring_pages = 4;
	self->cfg_err = cs_configure(self->fd, &cfg);
	if (!self->cfg_err)
		self->cfg_err = cs_info(self->fd, &self->info);
}

FIXTURE_TEARDOWN(mmap)
{
	if (self->map != MAP_FAILED)
		munmap(self->map, self->info.mmap_size);
	if (self->fd >= 0)
		close(self->fd);
}

#define MMAP_BEGIN()                                                                          \
	do {                                                                                  \
		CS_REQUIRE_DEVICE();                                                          \
		CS_REQUIRE_ROOT();                                                            \
		ASSERT_LE(0, self->fd) TH_LOG("open: %s", strerror(-self->fd));               \
		ASSERT_EQ(0, self->cfg_err) TH_LOG("configure: %s", strerror(self->cfg_err)); \
	} while (0)

/* mmap of the session: 0 or errno; the mapping goes to self->map. */
static int map_it(FIXTURE_DATA(mmap) * self, size_t len, int prot, int flags, off_t off)
{
	void *p = mmap(NULL, len, prot, flags, self->fd, off);

	if (p == MAP_FAILED)
		return errno;
	if (len == self->info.mmap_size)
		self->map = p;
	else
		munmap(p, len);
	return 0;
}

static int map_ok(FIXTURE_DATA(mmap) * self)
{
	return map_it(self, self->info.mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED, 0);
}

TEST_F(mmap, before_configure_is_einval)
{
	int fd;

	MMAP_BEGIN();
	fd = cs_open();
	ASSERT_LE(0, fd);
	EXPECT_EQ(MAP_FAILED,
		  mmap(NULL, self->info.mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
	EXPECT_EQ(EINVAL, errno);
	close(fd);
}

TEST_F(mmap, map_private_is_einval)
{
	MMAP_BEGIN();
	EXPECT_EQ(EINVAL,
		  map_it(self, self->info.mmap_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, 0));
	EXPECT_EQ(EINVAL, map_it(self, self->info.mmap_size, PROT_READ, MAP_PRIVATE, 0));
}

TEST_F(mmap, length_other_than_mmap_size_is_einval)
{
	MMAP_BEGIN();
	EXPECT_EQ(EINVAL, map_it(self, self->page, PROT_READ | PROT_WRITE, MAP_SHARED, 0));
	EXPECT_EQ(EINVAL, map_it(self, self->info.mmap_size - self->page, PROT_READ | PROT_WRITE,
				 MAP_SHARED, 0));
	EXPECT_EQ(EINVAL, map_it(self, self->info.mmap_size + self->page, PROT_READ | PROT_WRITE,
				 MAP_SHARED, 0));
}

TEST_F(mmap, nonzero_offset_is_einval)
{
	MMAP_BEGIN();
	EXPECT_EQ(EINVAL, map_it(self, self->info.mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED,
				 self->page));
	EXPECT_EQ(EINVAL, map_it(self, self->info.mmap_size - self->page, PROT_READ | PROT_WRITE,
				 MAP_SHARED, self->page));
}

TEST_F(mmap, prot_exec_is_eperm)
{
	MMAP_BEGIN();
	EXPECT_EQ(EPERM, map_it(self, self->info.mmap_size, PROT_READ | PROT_EXEC, MAP_SHARED, 0));
}

TEST_F(mmap, mprotect_exec_fails)
{
	MMAP_BEGIN();
	ASSERT_EQ(0, map_ok(self));
	EXPECT_EQ(-1, mprotect(self->map, self->info.mmap_size, PROT_READ | PROT_EXEC));
	EXPECT_EQ(-1, mprotect(self->map, self->page, PROT_READ | PROT_EXEC));
}

TEST_F(mmap, read_only_mapping_is_allowed)
{
	MMAP_BEGIN();
	ASSERT_EQ(0, map_it(self, self->info.mmap_size, PROT_READ, MAP_SHARED, 0));
	EXPECT_EQ(CYCSAMPLE_MAGIC, ((struct cycsample_control *)self->map)->magic);
}

TEST_F(mmap, control_page_agrees_with_info)
{
	struct cs_session s;
	char why[160];
	const char *problem;

	MMAP_BEGIN();
	ASSERT_EQ(0, map_ok(self));
	s = (struct cs_session){ .fd = self->fd,
				 .info = self->info,
				 .base = self->map,
				 .map_len = self->info.mmap_size };
	problem = cs_control_problem(&s, why, sizeof(why));
	EXPECT_EQ(NULL, problem) TH_LOG("%s", problem);
}

TEST_F(mmap, ring_headers_start_empty)
{
	struct cs_session s;
	unsigned int i, j;

	MMAP_BEGIN();
	ASSERT_EQ(0, map_ok(self));
	s = (struct cs_session){ .fd = self->fd,
				 .info = self->info,
				 .base = self->map,
				 .map_len = self->info.mmap_size };
	ASSERT_EQ(CYCSAMPLE_MAGIC, cs_control(&s)->magic);
	for (i = 0; i < self->info.nr_rings; i++) {
		const struct cycsample_ring_header *h = cs_ring(&s, i);

		EXPECT_EQ(0, h->data_head) TH_LOG("ring %u", i);
		EXPECT_EQ(0, h->data_tail) TH_LOG("ring %u", i);
		EXPECT_EQ(0, h->lost) TH_LOG("ring %u", i);
		EXPECT_EQ(0, h->samples) TH_LOG("ring %u", i);
		EXPECT_EQ(0, h->reserved0) TH_LOG("ring %u", i);
		for (j = 0; j < 10; j++) {
			EXPECT_EQ(0, h->reserved[j]) TH_LOG("ring %u reserved[%u]", i, j);
		}
	}
}

TEST_F(mmap, whole_mapping_is_readable)
{
	const volatile unsigned char *p;
	unsigned long sum = 0;
	size_t off;

	MMAP_BEGIN();
	ASSERT_EQ(0, map_ok(self));
	p = self->map;
	for (off = 0; off < self->info.mmap_size; off += 64)
		sum += p[off];
	/* Nothing sampled yet: only the control page and ring headers hold data. */
	EXPECT_NE(0, sum);
}

TEST_F(mmap, data_tail_is_writable)
{
	struct cs_session s;
	struct cycsample_ring_header *h;

	MMAP_BEGIN();
	ASSERT_EQ(0, map_ok(self));
	s = (struct cs_session){ .fd = self->fd,
				 .info = self->info,
				 .base = self->map,
				 .map_len = self->info.mmap_size };
	h = cs_ring(&s, self->info.nr_rings - 1);
	__atomic_store_n(&h->data_tail, 0, __ATOMIC_RELEASE);
	EXPECT_EQ(0, h->data_tail);
}

TEST_F(mmap, partial_munmap_is_einval)
{
	char *map;

	MMAP_BEGIN();
	ASSERT_EQ(0, map_ok(self));
	map = self->map;
	EXPECT_EQ(-1, munmap(map, self->page));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, munmap(map + self->info.mmap_size - self->page, self->page));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, munmap(map + self->page, self->page));
	EXPECT_EQ(EINVAL, errno);
	/* Still whole and valid. */
	EXPECT_EQ(CYCSAMPLE_MAGIC, ((struct cycsample_control *)map)->magic);
	EXPECT_EQ(0, munmap(map, self->info.mmap_size));
	self->map = MAP_FAILED;
}

TEST_F(mmap, mremap_grow_fails)
{
	MMAP_BEGIN();
	ASSERT_EQ(0, map_ok(self));
	EXPECT_EQ(MAP_FAILED, mremap(self->map, self->info.mmap_size,
				     self->info.mmap_size + self->page, MREMAP_MAYMOVE));
	EXPECT_EQ(CYCSAMPLE_MAGIC, ((struct cycsample_control *)self->map)->magic);
}

TEST_F(mmap, mremap_shrink_fails)
{
	MMAP_BEGIN();
	ASSERT_EQ(0, map_ok(self));
	EXPECT_EQ(MAP_FAILED,
		  mremap(self->map, self->info.mmap_size, self->info.mmap_size - self->page, 0));
	EXPECT_EQ(CYCSAMPLE_MAGIC, ((struct cycsample_control *)self->map)->magic);
}

TEST_F(mmap, mremap_move_fails)
{
	void *hole, *moved;

	MMAP_BEGIN();
	ASSERT_EQ(0, map_ok(self));
	hole = mmap(NULL, self->info.mmap_size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, hole);
	moved = mremap(self->map, self->info.mmap_size, self->info.mmap_size,
		       MREMAP_MAYMOVE | MREMAP_FIXED, hole);
	if (moved != MAP_FAILED) {
		self->map = moved;
	} else {
		munmap(hole, self->info.mmap_size);
	}
	EXPECT_EQ(MAP_FAILED, moved);
}

TEST_F(mmap, fork_child_has_no_mapping)
{
	unsigned char vec;
	pid_t pid;
	int status;

	MMAP_BEGIN();
	ASSERT_EQ(0, map_ok(self));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		/* mincore() fails with ENOMEM on an address nothing maps. */
		_exit(mincore(self->map, self->page, &vec) == -1 && errno == ENOMEM ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
	TH_LOG("the child still has the mapping");
}

TEST_F(mmap, mapping_outlives_close)
{
	struct cs_session s;

	MMAP_BEGIN();
	ASSERT_EQ(0, map_ok(self));
	close(self->fd);
	self->fd = -1;
	s = (struct cs_session){
		.fd = -1, .info = self->info, .base = self->map, .map_len = self->info.mmap_size
	};
	EXPECT_EQ(CYCSAMPLE_MAGIC, cs_control(&s)->magic);
	EXPECT_EQ(self->info.nr_rings, cs_control(&s)->nr_rings);
	EXPECT_EQ(0, cs_ring(&s, 0)->data_head);
	__atomic_store_n(&cs_ring(&s, 0)->data_tail, 0, __ATOMIC_RELEASE);
	EXPECT_EQ(0, munmap(self->map, self->info.mmap_size));
	self->map = MAP_FAILED;
}
TEST_F(mmap, map_fixed_over_part_of_the_ring_fails)
{
	char *map;
	void *p;

	MMAP_BEGIN();
	ASSERT_EQ(0, map_ok(self));
	map = self->map;
	p = mmap(map + self->page, self->page, PROT_READ | PROT_WRITE,
		 MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	EXPECT_EQ(MAP_FAILED, p);
	if (p != MAP_FAILED) {
		self->map = MAP_FAILED; /* the ring mapping is in pieces: leave it */
		return;
	}
	EXPECT_EQ(CYCSAMPLE_MAGIC, ((struct cycsample_control *)map)->magic);
}

TEST_F(mmap, map_fixed_over_the_whole_ring_releases_it)
{
	int before = cs_module_refcnt();
	void *p;

	MMAP_BEGIN();
	ASSERT_LT(0, before); /* our open file */
	ASSERT_EQ(0, map_ok(self));
	p = mmap(self->map, self->info.mmap_size, PROT_READ | PROT_WRITE,
		 MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_EQ(self->map, p);
	EXPECT_EQ(0, *(volatile char *)p); /* anonymous memory now */
	munmap(p, self->info.mmap_size);
	self->map = MAP_FAILED;
	/* nothing holds the file but the fd: closing it releases the session */
	close(self->fd);
	self->fd = -1;
	EXPECT_EQ(before - 1, cs_module_refcnt_settles_at(before - 1));
}

TEST_F(mmap, mprotect_to_writable_makes_only_headers_writable)
{
	struct cs_session s;

	MMAP_BEGIN();
	ASSERT_EQ(0, map_it(self, self->info.mmap_size, PROT_READ, MAP_SHARED, 0));
	ASSERT_EQ(0, mprotect(self->map, self->info.mmap_size, PROT_READ | PROT_WRITE));
	s = (struct cs_session){ .fd = self->fd,
				 .info = self->info,
				 .base = self->map,
				 .map_len = self->info.mmap_size };
	__atomic_store_n(&cs_ring(&s, 0)->data_tail, 0, __ATOMIC_RELEASE);
	EXPECT_EQ(0, cs_ring(&s, 0)->data_tail);
	/* the data pages: write_to_data_page_after_mprotect_raises_sigbus */
}

TEST_F(mmap, madvise_dontneed_loses_nothing)
{
	struct cycsample_control *ctl;
	int ret;

	MMAP_BEGIN();
	ASSERT_EQ(0, map_ok(self));
	ctl = self->map;
	/* refused for a PFN mapping (EINVAL); if a kernel allowed it, a refault */
	ret = madvise(self->map, self->info.mmap_size, MADV_DONTNEED);
	if (ret)
		EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(CYCSAMPLE_MAGIC, ctl->magic);
	EXPECT_EQ(self->info.nr_rings, ctl->nr_rings);
}

/*
 * The lock order perf documents is ctx->mutex before mmap_lock (reading a
 * perf event copies to user memory under ctx->mutex).  START holds the
 * session lock while perf takes ctx->mutex; so mmap(), which runs under
 * mmap_lock, must not take the session lock, or the three make a cycle.
 * This does all three in one boot, so that a lockdep kernel that has seen
 * each order reports the cycle (the guest run fails on the report); other
 * kernels only see the calls succeed.
 */
TEST_F(mmap, mmap_start_and_a_perf_read_keep_perfs_lock_order)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_TASK_CLOCK,
	};
	struct cycsample_config cfg;
	struct cs_session s;
	pid_t child;
	__u64 *buf;
	int pfd;

	MMAP_BEGIN();
	child = cs_spawn_spinner();
	ASSERT_LT(0, child);
	cs_config_init(&cfg, CYCSAMPLE_TARGET_PID, child);
	/* mmap_lock, then whatever mmap() takes */
	CS_ASSERT_SESSION(&s, &cfg);
	/* the session lock, then perf's ctx->mutex */
	ASSERT_EQ(0, cs_start(s.fd));
	/* ctx->mutex, then mmap_lock: a read into a page not yet faulted in */
	pfd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
	if (pfd >= 0) {
		buf = mmap(NULL, self->page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			   -1, 0);
		ASSERT_NE(MAP_FAILED, buf);
		EXPECT_EQ(sizeof(*buf), read(pfd, buf, sizeof(*buf)));
		munmap(buf, self->page);
		close(pfd);
	} else {
		TH_LOG("perf_event_open: %s: only two of the three orders exercised",
		       strerror(errno));
	}
	EXPECT_EQ(0, cs_stop(s.fd));
	cs_session_close(&s);
	cs_kill(child);
}

/* Map a fresh session the SIGBUS tests can write to; NULL on failure. */
static struct cs_session *sigbus_session(struct __test_metadata *_metadata)
{
	static struct cs_session s;
	struct cycsample_config cfg;
	const char *step;
	int err;

	cs_config_init(&cfg, CYCSAMPLE_TARGET_PID, getpid());
	cfg.ring_pages = 4;
	err = cs_session_open(&s, &cfg, &step);
	if (err) {
		TH_LOG("%s: %s", step, strerror(err));
		return NULL;
	}
	return &s;
}

TEST_SIGNAL(write_to_data_page_raises_sigbus, SIGBUS)
{
	struct cs_session *s;

	CS_REQUIRE_DEVICE();
	CS_REQUIRE_ROOT();
	s = sigbus_session(_metadata);
	ASSERT_NE(NULL, s);
	*(volatile unsigned char *)cs_ring_data(s, 0) = 0x5a;
	TH_LOG("wrote a data page without SIGBUS");
}

TEST_SIGNAL(write_to_last_data_page_raises_sigbus, SIGBUS)
{
	struct cs_session *s;

	CS_REQUIRE_DEVICE();
	CS_REQUIRE_ROOT();
	s = sigbus_session(_metadata);
	ASSERT_NE(NULL, s);
	*((volatile unsigned char *)s->base + s->map_len - 1) = 0x5a;
	TH_LOG("wrote the last data page without SIGBUS");
}

TEST_SIGNAL(write_to_data_page_after_mprotect_raises_sigbus, SIGBUS)
{
	struct cs_session *s;

	CS_REQUIRE_DEVICE();
	CS_REQUIRE_ROOT();
	s = sigbus_session(_metadata);
	ASSERT_NE(NULL, s);
	ASSERT_EQ(0, mprotect(s->base, s->map_len, PROT_READ));
	ASSERT_EQ(0, mprotect(s->base, s->map_len, PROT_READ | PROT_WRITE));
	*(volatile unsigned char *)cs_ring_data(s, 0) = 0x5a;
	TH_LOG("mprotect() made a data page writable");
}

TEST_SIGNAL(write_to_control_page_raises_sigbus, SIGBUS)
{
	struct cs_session *s;

	CS_REQUIRE_DEVICE();
	CS_REQUIRE_ROOT();
	s = sigbus_session(_metadata);
	ASSERT_NE(NULL, s);
	((volatile struct cycsample_control *)cs_control(s))->reserved[0] = 1;
	TH_LOG("wrote the control page without SIGBUS");
}

TEST_HARNESS_MAIN
