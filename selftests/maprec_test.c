// SPDX-License-Identifier: GPL-2.0
/*
 * MMAP records (CYCSAMPLE_CFG_MMAP): one record per executable mapping a
 * target makes, with the range, offset, file identity and path the reader
 * needs, before any sample there; after an exec, following its EXEC record;
 * none for other processes, none without the flag, and a LOST record when
 * the ring has no room.
 */
#include "kselftest_harness.h"

#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "cycsample_test_lib.h"

#define CODE_FILE "/tmp/cycsample-maprec-code"
#define MAP_PAGES 2 /* mapped, from file page 1 on */
#define MANY_MAPS 400

FIXTURE(maprec)
{
	pid_t child, other;
	int go[2], back[2];
	long page;
	bool tid_session;
	struct stat st;
	struct cs_session s;
	struct cs_recs recs;
	struct cs_counts counts;
};

FIXTURE_SETUP(maprec)
{
	self->child = -1;
	self->other = -1;
	self->go[0] = self->go[1] = self->back[0] = self->back[1] = -1;
	memset(&self->s, 0, sizeof(self->s));
	self->s.fd = -1;
	self->page = sysconf(_SC_PAGESIZE);
}

FIXTURE_TEARDOWN(maprec)
{
	cs_kill(self->child);
	cs_kill(self->other);
	cs_session_close(&self->s);
	cs_recs_free(&self->recs);
	unlink(CODE_FILE);
	cs_reset_sample_rate();
}

/*
 * A file of MAP_PAGES + 1 pages, each filled with a jump to itself, so a
 * thread that jumps into a mapping of it spins there in user mode.
 */
static int write_code_file(long page, struct stat *st)
{
#if defined(__aarch64__)
	static const unsigned char loop[] = { 0x00, 0x00, 0x00, 0x14 }; /* b . */
#elif defined(__x86_64__)
	static const unsigned char loop[] = { 0xeb, 0xfe, 0x90, 0x90 }; /* jmp . ; nop ; nop */
#endif
	size_t size = (MAP_PAGES + 1) * page, i;
	unsigned char *buf = malloc(size);
	int fd, ok;

	if (!buf)
		return -1;
	for (i = 0; i < size; i += sizeof(loop))
		memcpy(buf + i, loop, sizeof(loop));
	unlink(CODE_FILE);
	fd = open(CODE_FILE, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0700);
	ok = fd >= 0 && write(fd, buf, size) == (ssize_t)size && !fstat(fd, st);
	free(buf);
	if (fd >= 0)
		close(fd);
	return ok ? 0 : -1;
}

enum how {
	HOW_MMAP_EXEC, /* mmap(PROT_READ | PROT_EXEC) and spin in it */
	HOW_MPROTECT, /* mmap(PROT_READ), then mprotect(PROT_READ | PROT_EXEC), spin in it */
	HOW_MANY, /* MANY_MAPS executable mappings, then sleep */
};

struct mapper {
	int *go, *back;
	long page;
	enum how how;
	bool in_thread; /* map in a second thread, not the process's first */
};

/*
 * Child: after the go byte, map the code file as told, report the address
 * of the (first) mapping on back, then spin in it or sleep.
 */
static int mapper(void *arg)
{
	const struct mapper *m = arg;
	int prot = m->how == HOW_MPROTECT ? PROT_READ : PROT_READ | PROT_EXEC;
	size_t len = MAP_PAGES * m->page;
	unsigned long addr;
	void *p = NULL;
	int fd, i, n = m->how == HOW_MANY ? MANY_MAPS : 1;
	char c;

	if (read(m->go[0], &c, 1) != 1)
		return 1;
	fd = open(CODE_FILE, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 1;
	for (i = 0; i < n; i++) {
		void *q = mmap(NULL, len, prot, MAP_PRIVATE, fd, m->page);

		if (q == MAP_FAILED)
			return 1;
		if (!p)
			p = q;
	}
	if (m->how == HOW_MPROTECT && mprotect(p, len, PROT_READ | PROT_EXEC))
		return 1;
	addr = (unsigned long)p;
	if (write(m->back[1], &addr, sizeof(addr)) != sizeof(addr))
		return 1;
	if (m->how == HOW_MANY)
		for (;;)
			pause();
	((void (*)(void))p)();
	return 1;
}

static void *mapper_thread(void *arg)
{
	mapper(arg);
	return NULL;
}

/*
 * Child for a thread session: its main thread (the target) only waits;
 * a second thread of the same process maps and spins.
 */
static int thread_mapper(void *arg)
{
	pthread_t t;

	if (pthread_create(&t, NULL, mapper_thread, arg))
		return 1;
	for (;;)
		pause();
	return 1;
}

/* Spawn a mapper, pipes first. */
static pid_t spawn_mapper(FIXTURE_DATA(maprec) * self, struct mapper *m, enum how how)
{
	if (pipe(self->go) || pipe(self->back))
		return -1;
	m->go = self->go;
	m->back = self->back;
	m->page = self->page;
	m->how = how;
	return cs_spawn(m->in_thread ? thread_mapper : mapper, m);
}

/* Let the mapper go and read the address it mapped at (0 on failure). */
static unsigned long go_and_wait(FIXTURE_DATA(maprec) * self)
{
	unsigned long addr = 0;

	if (write(self->go[1], "g", 1) != 1 ||
	    read(self->back[0], &addr, sizeof(addr)) != sizeof(addr))
		return 0;
	return addr;
}

/* A session on @target with @flags, started. */
static int start_session(FIXTURE_DATA(maprec) * self, pid_t target, __u32 flags, __u32 ring_pages)
{
	struct cycsample_config cfg;
	const char *step = "";
	int err;

	cs_config_init(&cfg, self->tid_session ? CYCSAMPLE_TARGET_TID : CYCSAMPLE_TARGET_PID,
		       target);
	cfg.flags |= flags;
	cfg.ring_pages = ring_pages;
	err = cs_session_open(&self->s, &cfg, &step);
	return err ?: cs_start(self->s.fd);
}

/* Collect for @ms, STOP, drain, INFO. */
static void collect_and_stop(FIXTURE_DATA(maprec) * self, unsigned int ms)
{
	if (ms)
		cs_collect_for(&self->s, ms, &self->recs);
	cs_stop(self->s.fd);
	cs_drain(&self->s, &self->recs);
	cs_session_info(&self->s);
}

/* The MMAP records of @pid in recs, how many; the last in *last. */
static unsigned int mmaps_of(const struct cs_recs *r, pid_t pid, const struct cycsample_mmap **last)
{
	unsigned int n = 0;
	size_t i;

	for (i = 0; i < r->n; i++) {
		const struct cycsample_mmap *m = r->v[i].buf;

		if (m->hdr.type != CYCSAMPLE_REC_MMAP || m->pid != (__u32)pid)
			continue;
		n++;
		if (last)
			*last = m;
	}
	return n;
}

/* Check @m against the code file mapped at @addr with MAP_PAGES pages from page 1. */
static void expect_code_mapping(struct __test_metadata *_metadata, FIXTURE_DATA(maprec) * self,
				const struct cycsample_mmap *m, unsigned long addr)
{
	EXPECT_EQ(self->child, m->pid);
	EXPECT_EQ(self->child, m->tid);
	EXPECT_EQ(addr, m->start);
	EXPECT_EQ(MAP_PAGES * self->page, m->len);
	EXPECT_EQ(self->page, m->pgoff);
	EXPECT_EQ(CYCSAMPLE_PROT_READ | CYCSAMPLE_PROT_EXEC, m->prot);
	EXPECT_EQ(0, m->flags);
	EXPECT_EQ(self->st.st_ino, m->ino);
	EXPECT_EQ(major(self->st.st_dev), m->dev_major);
	EXPECT_EQ(minor(self->st.st_dev), m->dev_minor);
	EXPECT_EQ(strlen(CODE_FILE), m->path_len);
	EXPECT_STREQ(CODE_FILE, m->path);
}

/* Samples of the child in [addr, addr + len): after the record's time, all of them. */
static unsigned long samples_after(struct __test_metadata *_metadata, FIXTURE_DATA(maprec) * self,
				   const struct cycsample_mmap *m)
{
	unsigned long n = 0;
	size_t i;

	for (i = 0; i < self->recs.n; i++) {
		const struct cycsample_sample *smp = cs_sample(&self->recs.v[i]);

		if (!smp || smp->pid != (__u32)self->child || smp->pc < m->start ||
		    smp->pc >= m->start + m->len)
			continue;
		EXPECT_LT(m->time, smp->time) TH_LOG("a sample in the mapping before its record");
		n++;
	}
	return n;
}

#define MAPREC_BEGIN()                  \
	do {                            \
		CS_REQUIRE_DEVICE();    \
		CS_REQUIRE_ROOT();      \
		cs_reset_sample_rate(); \
	} while (0)

/* Does the running kernel have kprobes (register_kprobe in kallsyms)? */
static bool kernel_has_kprobes(void)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[256];
	bool found = false;

	if (!f)
		return true; /* cannot tell: expect the records */
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, " register_kprobe\n") != NULL;
	fclose(f);
	return found;
}

/* CONFIGURE with CYCSAMPLE_CFG_MMAP on @target: 0 or its errno. */
static int configure_with_records(FIXTURE_DATA(maprec) * self, pid_t target)
{
	struct cycsample_config cfg;
	const char *step = "";
	int err;

	cs_config_init(&cfg, CYCSAMPLE_TARGET_PID, target);
	cfg.flags |= CYCSAMPLE_CFG_MMAP;
	err = cs_session_open(&self->s, &cfg, &step);
	cs_session_close(&self->s);
	return err;
}

/*
 * Without kprobes there are no MMAP records: then CONFIGURE must refuse
 * the flag with EOPNOTSUPP (what cycread falls back on), and the test is
 * skipped.  With kprobes the test runs.
 */
#define MAPREC_NEED_RECORDS()                                                                    \
	do {                                                                                     \
		if (!kernel_has_kprobes()) {                                                     \
			ASSERT_EQ(EOPNOTSUPP, configure_with_records(self, getpid()));           \
			SKIP(return, "no kprobes: CONFIGURE refuses MMAP records (EOPNOTSUPP)"); \
		}                                                                                \
	} while (0)

TEST_F(maprec, exec_mapping_of_a_file_gives_one_record_before_its_samples)
{
	const struct cycsample_mmap *m = NULL;
	struct mapper arg = {};
	unsigned long addr;

	MAPREC_BEGIN();
	MAPREC_NEED_RECORDS();
	ASSERT_EQ(0, write_code_file(self->page, &self->st));
	self->child = spawn_mapper(self, &arg, HOW_MMAP_EXEC);
	ASSERT_LT(0, self->child);
	ASSERT_EQ(0, start_session(self, self->child, CYCSAMPLE_CFG_MMAP, 0));
	addr = go_and_wait(self);
	ASSERT_NE(0, addr);
	collect_and_stop(self, 500);
	CS_ASSERT_RECS_OK(&self->recs, &self->s.info);
	ASSERT_EQ(1, mmaps_of(&self->recs, self->child, &m));
	expect_code_mapping(_metadata, self, m, addr);
	/* the child spun there: its samples, every one after the record */
	EXPECT_LE(1, samples_after(_metadata, self, m));
}

/*
 * A thread session sees its whole process's address space change: a
 * mapping made by another thread of the target's process is recorded, by
 * that thread.  The module tells the process by its signal struct.
 */
TEST_F(maprec, thread_session_records_another_threads_mapping)
{
	const struct cycsample_mmap *m = NULL;
	struct mapper arg = { .in_thread = true };
	unsigned long addr;

	MAPREC_BEGIN();
	MAPREC_NEED_RECORDS();
	ASSERT_EQ(0, write_code_file(self->page, &self->st));
	self->child = spawn_mapper(self, &arg, HOW_MMAP_EXEC);
	ASSERT_LT(0, self->child);
	self->tid_session = true;
	ASSERT_EQ(0, start_session(self, self->child, CYCSAMPLE_CFG_MMAP, 0));
	addr = go_and_wait(self);
	ASSERT_NE(0, addr);
	collect_and_stop(self, 300);
	CS_ASSERT_RECS_OK(&self->recs, &self->s.info);
	ASSERT_EQ(1, mmaps_of(&self->recs, self->child, &m));
	EXPECT_EQ(addr, m->start);
	EXPECT_EQ(MAP_PAGES * self->page, m->len);
	EXPECT_STREQ(CODE_FILE, m->path);
	/* the mapping thread, not the target */
	EXPECT_NE(self->child, m->tid);
}

TEST_F(maprec, mprotect_to_exec_gives_one_record)
{
	const struct cycsample_mmap *m = NULL;
	struct mapper arg = {};
	unsigned long addr;

	MAPREC_BEGIN();
	MAPREC_NEED_RECORDS();
	ASSERT_EQ(0, write_code_file(self->page, &self->st));
	self->child = spawn_mapper(self, &arg, HOW_MPROTECT);
	ASSERT_LT(0, self->child);
	ASSERT_EQ(0, start_session(self, self->child, CYCSAMPLE_CFG_MMAP, 0));
	addr = go_and_wait(self);
	ASSERT_NE(0, addr);
	collect_and_stop(self, 300);
	CS_ASSERT_RECS_OK(&self->recs, &self->s.info);
	/* the mmap(PROT_READ) gives none, the mprotect() one */
	ASSERT_EQ(1, mmaps_of(&self->recs, self->child, &m));
	expect_code_mapping(_metadata, self, m, addr);
	EXPECT_LE(1, samples_after(_metadata, self, m));
}

TEST_F(maprec, another_process_mapping_gives_no_record)
{
	struct mapper arg = {};

	MAPREC_BEGIN();
	MAPREC_NEED_RECORDS();
	ASSERT_EQ(0, write_code_file(self->page, &self->st));
	/* the target spins; the mapper is not the target */
	self->other = cs_spawn_spinner();
	ASSERT_LT(0, self->other);
	self->child = spawn_mapper(self, &arg, HOW_MMAP_EXEC);
	ASSERT_LT(0, self->child);
	ASSERT_EQ(0, start_session(self, self->other, CYCSAMPLE_CFG_MMAP, 0));
	ASSERT_NE(0, go_and_wait(self));
	collect_and_stop(self, 300);
	CS_ASSERT_RECS_OK(&self->recs, &self->s.info);
	cs_count(&self->recs, &self->counts);
	EXPECT_LE(1, self->counts.samples) TH_LOG("the target was not sampled");
	EXPECT_EQ(0, mmaps_of(&self->recs, self->child, NULL));
	EXPECT_EQ(0, self->counts.mmaps);
}

TEST_F(maprec, without_the_flag_no_record)
{
	struct cycsample_mmap m = { .len = MAP_PAGES * self->page };
	struct mapper arg = {};

	MAPREC_BEGIN();
	ASSERT_EQ(0, write_code_file(self->page, &self->st));
	self->child = spawn_mapper(self, &arg, HOW_MMAP_EXEC);
	ASSERT_LT(0, self->child);
	ASSERT_EQ(0, start_session(self, self->child, 0, 0));
	m.start = go_and_wait(self);
	ASSERT_NE(0, m.start);
	collect_and_stop(self, 500);
	CS_ASSERT_RECS_OK(&self->recs, &self->s.info);
	cs_count(&self->recs, &self->counts);
	EXPECT_EQ(0, self->counts.mmaps);
	/* the mapping was made and run: the same workload as with the flag */
	EXPECT_LE(1, samples_after(_metadata, self, &m));
}

/*
 * MANY_MAPS records of some 120 bytes each into a 2-page ring nobody
 * drains: the ring fills, the rest are counted lost, and reported by a
 * LOST record once there is room again.
 */
TEST_F(maprec, full_ring_counts_the_records_it_drops)
{
	struct mapper arg = {};
	__u32 pages = (2 * 4096 + self->page - 1) / self->page;

	MAPREC_BEGIN();
	MAPREC_NEED_RECORDS();
	if (pages < CYCSAMPLE_MIN_RING_PAGES)
		pages = CYCSAMPLE_MIN_RING_PAGES;
	ASSERT_EQ(0, write_code_file(self->page, &self->st));
	self->child = spawn_mapper(self, &arg, HOW_MANY);
	ASSERT_LT(0, self->child);
	/* one CPU: all records in one ring */
	ASSERT_EQ(0, cs_pin(self->child, 0));
	ASSERT_EQ(0, start_session(self, self->child, CYCSAMPLE_CFG_MMAP, pages));
	if (self->s.info.ring_data_size * 4 > MANY_MAPS * 120ULL)
		SKIP(return, "a %llu-byte ring holds every record",
			   (unsigned long long)self->s.info.ring_data_size);
	ASSERT_NE(0, go_and_wait(self));
	/* room again: STOP writes the LOST record (none fits in a full ring) */
	cs_drain(&self->s, &self->recs);
	collect_and_stop(self, 0);
	CS_ASSERT_RECS_OK(&self->recs, &self->s.info);
	cs_count(&self->recs, &self->counts);
	TH_LOG("%llu-byte ring: %lu MMAP records kept, %llu records lost",
	       (unsigned long long)self->s.info.ring_data_size, self->counts.mmaps,
	       (unsigned long long)self->s.info.lost);
	EXPECT_LT(0, self->counts.mmaps);
	EXPECT_GT(MANY_MAPS, self->counts.mmaps);
	EXPECT_LE(1, self->counts.lost_records);
	EXPECT_EQ(self->s.info.lost, self->counts.lost);
	/* every mapping is either recorded or counted (samples may be lost too) */
	EXPECT_LE(MANY_MAPS, self->counts.mmaps + self->counts.lost);
}

/* Child: after the go byte, exec this binary as a spinner. */
static int exec_spinner(void *arg)
{
	const int *go = arg;
	const char *exe = cs_self_exe();
	char *envp[] = { CS_SPIN_ENV "=user", NULL };
	char *argv[] = { (char *)exe, NULL };
	char c;

	if (!exe || read(go[0], &c, 1) != 1)
		return 1;
	execve(exe, argv, envp);
	return 1;
}

TEST_F_TIMEOUT(maprec, exec_record_precedes_the_new_programs_mappings, 60)
{
	const struct cycsample_task_event *exec_rec = NULL;
	bool seen_exec = false, text = false, vdso = false;
	unsigned int i, exec_ring = 0;
	char exe[PATH_MAX];
	size_t r;

	MAPREC_BEGIN();
	MAPREC_NEED_RECORDS();
	ASSERT_NE(NULL, cs_self_exe());
	ASSERT_NE(NULL, realpath(cs_self_exe(), exe));
	ASSERT_EQ(0, pipe(self->go));
	self->child = cs_spawn(exec_spinner, self->go);
	ASSERT_LT(0, self->child);
	ASSERT_EQ(0, start_session(self, self->child, CYCSAMPLE_CFG_MMAP, 0));
	ASSERT_EQ(1, write(self->go[1], "g", 1));
	for (i = 0; i < 16 && !cs_find_record(&self->recs, CYCSAMPLE_REC_EXEC); i++)
		cs_collect_for(&self->s, 500, &self->recs);
	collect_and_stop(self, 200);
	CS_ASSERT_RECS_OK(&self->recs, &self->s.info);
	exec_rec = cs_find_record(&self->recs, CYCSAMPLE_REC_EXEC);
	ASSERT_NE(NULL, exec_rec);
	for (r = 0; r < self->recs.n; r++)
		if (self->recs.v[r].buf == exec_rec)
			exec_ring = self->recs.v[r].ring;
	/* on the ring the EXEC record went to, it comes first, earlier in time */
	for (r = 0; r < self->recs.n; r++) {
		const struct cs_rec *rec = &self->recs.v[r];
		const struct cycsample_mmap *m = rec->buf;

		if (rec->buf == exec_rec)
			seen_exec = true;
		if (m->hdr.type != CYCSAMPLE_REC_MMAP || m->pid != (__u32)self->child)
			continue;
		TH_LOG("MMAP %#llx+%#llx %s flags %#x", (unsigned long long)m->start,
		       (unsigned long long)m->len, m->path, m->flags);
		EXPECT_TRUE(seen_exec || rec->ring != exec_ring);
		EXPECT_LE(exec_rec->time, m->time);
		if (!strcmp(m->path, exe) && !(m->flags & CYCSAMPLE_MMAP_ANON))
			text = true;
		if (!strcmp(m->path, "[vdso]") && (m->flags & CYCSAMPLE_MMAP_ANON) && !m->ino)
			vdso = true;
	}
	EXPECT_TRUE(text) TH_LOG("no record of %s", exe);
	EXPECT_TRUE(vdso) TH_LOG("no record of the vdso");
}

TEST_HARNESS_MAIN
