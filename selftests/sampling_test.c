// SPDX-License-Identifier: GPL-2.0
/*
 * What the samples of a running session contain: the right pid, tid and cpu,
 * user callchains that resolve to the functions of the busy child, kernel
 * callchains through the syscall path, threads created after START, TID and
 * CPU targets, frequency mode, periods, register sets, depth limits, and
 * INFO counters that agree with the records.
 */
#include "kselftest_harness.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include <linux/io_uring.h>

#include "cycsample_test_lib.h"

static int sleep_forever(void *arg);
static bool wait_asleep(pid_t pid);

/* Start and end of this static binary's text (from the linker). */
extern const char __executable_start[], etext[];

#define SAMPLING_BEGIN()                \
	do {                            \
		CS_REQUIRE_DEVICE();    \
		CS_REQUIRE_ROOT();      \
		cs_reset_sample_rate(); \
	} while (0)

FIXTURE(sampling)
{
	pid_t child;
	struct cs_recs recs;
	struct cycsample_info info;
	struct cycsample_config cfg;
	struct cs_counts counts;
};

FIXTURE_SETUP(sampling)
{
	self->child = -1;
}

FIXTURE_TEARDOWN(sampling)
{
	cs_kill(self->child);
	cs_recs_free(&self->recs);
	cs_reset_sample_rate();
}

/* Samples of @pid whose tid is @tid (0: any). */
static unsigned long samples_of(const struct cs_recs *r, pid_t pid, pid_t tid)
{
	unsigned long n = 0;
	size_t i;

	for (i = 0; i < r->n; i++) {
		const struct cycsample_sample *smp = cs_sample(&r->v[i]);

		if (smp && smp->pid == (__u32)pid && (!tid || smp->tid == (__u32)tid))
			n++;
	}
	return n;
}

TEST_F(sampling, pid_session_samples_the_busy_child)
{
	size_t i;

	SAMPLING_BEGIN();
	self->child = cs_spawn_spinner();
	ASSERT_LT(0, self->child);
	cs_config_init(&self->cfg, CYCSAMPLE_TARGET_PID, self->child);
	CS_ASSERT_SAMPLE_FOR(&self->cfg, 1000, &self->recs, &self->info);
	CS_ASSERT_RECS_OK(&self->recs, &self->info);
	cs_count(&self->recs, &self->counts);
	ASSERT_LE(20, self->counts.samples);
	for (i = 0; i < self->recs.n; i++) {
		const struct cycsample_sample *smp = cs_sample(&self->recs.v[i]);

		if (!smp)
			continue;
		ASSERT_EQ(self->child, smp->pid);
		ASSERT_EQ(self->child, smp->tid);
	}
	/* The child spins in user space: most samples say so. */
	EXPECT_LE(self->counts.samples / 2, self->counts.user);
	EXPECT_LE(self->counts.samples / 2,
		  cs_count_pc_in(&self->recs, self->child, __start_cs_text_leaf,
				 __stop_cs_text_leaf));
}

/*
 * CYCSAMPLE_CFG_PC_ONLY: every sample a 48-byte SAMPLE_PC record with the
 * child's pid and tid, its pc mostly in the spinning leaf.
 */
TEST_F(sampling, pc_only_session_writes_48_byte_samples)
{
	unsigned long pcs = 0;
	size_t i;

	SAMPLING_BEGIN();
	self->child = cs_spawn_spinner();
	ASSERT_LT(0, self->child);
	cs_config_init(&self->cfg, CYCSAMPLE_TARGET_PID, self->child);
	self->cfg.flags = CYCSAMPLE_CFG_PC_ONLY;
	CS_ASSERT_SAMPLE_FOR(&self->cfg, 1000, &self->recs, &self->info);
	ASSERT_TRUE(self->info.config_flags & CYCSAMPLE_CFG_PC_ONLY);
	CS_ASSERT_RECS_OK(&self->recs, &self->info);
	cs_count(&self->recs, &self->counts);
	ASSERT_LE(20, self->counts.samples);
	EXPECT_EQ(self->counts.samples, self->counts.pc_only);
	for (i = 0; i < self->recs.n; i++) {
		const struct cycsample_sample_pc *pc = cs_sample_pc(&self->recs.v[i]);

		if (!pc)
			continue;
		pcs++;
		ASSERT_EQ(48, pc->hdr.size);
		ASSERT_EQ(self->child, pc->pid);
		ASSERT_EQ(self->child, pc->tid);
	}
	EXPECT_EQ(self->counts.samples, pcs);
	EXPECT_LE(self->counts.samples / 2, self->counts.user);
	EXPECT_LE(self->counts.samples / 2,
		  cs_count_pc_in(&self->recs, self->child, __start_cs_text_leaf,
				 __stop_cs_text_leaf));
}
/* Number of user-mode samples in leaf() whose chain goes leaf, mid, outer. */
static unsigned long full_user_chains(const struct cs_recs *r, unsigned long *in_leaf,
				      bool (*leaf)(uint64_t), bool (*mid)(uint64_t),
				      bool (*outer)(uint64_t))
{
	unsigned long n = 0;
	size_t i;

	*in_leaf = 0;
	for (i = 0; i < r->n; i++) {
		const struct cycsample_sample *smp = cs_sample(&r->v[i]);
		const __u64 *f;

		if (!smp || !(smp->flags & CYCSAMPLE_SAMPLE_USER) || !leaf(smp->pc))
			continue;
		(*in_leaf)++;
		f = cs_user_frames(smp);
		/* Return addresses point after the call: look up the byte before. */
		if (smp->nr_user >= 3 && leaf(f[0]) && mid(f[1] - 1) && outer(f[2] - 1))
			n++;
	}
	return n;
}

/* Show the first user-mode sample's chain next to the functions' ranges. */
static void log_user_chain(struct __test_metadata *_metadata, const struct cs_recs *r)
{
	size_t i;
	unsigned int j;

	TH_LOG("leaf [%p,%p) mid [%p,%p) outer [%p,%p)", __start_cs_text_leaf, __stop_cs_text_leaf,
	       __start_cs_text_mid, __stop_cs_text_mid, __start_cs_text_outer,
	       __stop_cs_text_outer);
	for (i = 0; i < r->n; i++) {
		const struct cycsample_sample *smp = cs_sample(&r->v[i]);

		if (!smp || !(smp->flags & CYCSAMPLE_SAMPLE_USER))
			continue;
		TH_LOG("pc %#llx sp %#llx fp %#llx lr %#llx, %u user frames:",
		       (unsigned long long)smp->pc, (unsigned long long)smp->sp,
		       (unsigned long long)smp->fp, (unsigned long long)smp->lr, smp->nr_user);
		for (j = 0; j < smp->nr_user; j++)
			TH_LOG("  %#llx", (unsigned long long)cs_user_frames(smp)[j]);
		break;
	}
}

static bool in_leaf(uint64_t a)
{
	return CS_IN_TEXT(leaf, a);
}
static bool in_mid(uint64_t a)
{
	return CS_IN_TEXT(mid, a);
}
static bool in_outer(uint64_t a)
{
	return CS_IN_TEXT(outer, a);
}

TEST_F(sampling, user_chain_resolves_to_the_spinning_functions)
{
	unsigned long leaf, full;

	SAMPLING_BEGIN();
	self->child = cs_spawn_spinner();
	ASSERT_LT(0, self->child);
	cs_config_init(&self->cfg, CYCSAMPLE_TARGET_PID, self->child);
	self->cfg.flags = CYCSAMPLE_CFG_USER_CHAIN;
	CS_ASSERT_SAMPLE_FOR(&self->cfg, 1000, &self->recs, &self->info);
	CS_ASSERT_RECS_OK(&self->recs, &self->info);
	full = full_user_chains(&self->recs, &leaf, in_leaf, in_mid, in_outer);
	if (full < leaf * 9 / 10)
		log_user_chain(_metadata, &self->recs);
	ASSERT_LE(20, leaf);
	/* Nearly all: a few may land in the leaf's prologue before its frame record. */
	EXPECT_LE(leaf * 9 / 10, full)
	TH_LOG("%lu of %lu leaf samples have leaf<-mid<-outer", full, leaf);
}

#ifdef __aarch64__
/*
 * The same three functions compiled with return-address signing: the frame
 * records hold PAC-signed return addresses that the module must strip.
 */
#define PAC __attribute__((noinline, used, target("branch-protection=pac-ret")))
static volatile unsigned long pac_sink;
static volatile int pac_stop; /* never set; see cs_spin_leaf() */

PAC __attribute__((section("cs_text_pac_leaf"))) static void pac_leaf(void)
{
	volatile unsigned long n = 0; /* a stack frame, see cs_spin_leaf() */

	while (!pac_stop)
		n++;
	pac_sink = n;
}

PAC __attribute__((section("cs_text_pac_mid"))) static void pac_mid(void)
{
	pac_leaf();
	__asm__ __volatile__("" ::: "memory");
}

PAC __attribute__((section("cs_text_pac_outer"))) static int pac_outer(void *arg)
{
	pac_mid();
	__asm__ __volatile__("" ::: "memory");
	return 0;
}

extern const char __start_cs_text_pac_leaf[], __stop_cs_text_pac_leaf[];
extern const char __start_cs_text_pac_mid[], __stop_cs_text_pac_mid[];
extern const char __start_cs_text_pac_outer[], __stop_cs_text_pac_outer[];

static bool pac_in_leaf(uint64_t a)
{
	return CS_IN_TEXT(pac_leaf, a);
}
static bool pac_in_mid(uint64_t a)
{
	return CS_IN_TEXT(pac_mid, a);
}
static bool pac_in_outer(uint64_t a)
{
	return CS_IN_TEXT(pac_outer, a);
}
#endif

TEST_F(sampling, user_chain_strips_pointer_authentication)
{
#ifdef __aarch64__
	unsigned long leaf, full;

	SAMPLING_BEGIN();
	if (!(getauxval(AT_HWCAP) & HWCAP_PACA))
		TH_LOG("no PAC in this CPU: return addresses are not signed here");
	self->child = cs_spawn(pac_outer, NULL);
	ASSERT_LT(0, self->child);
	cs_config_init(&self->cfg, CYCSAMPLE_TARGET_PID, self->child);
	self->cfg.flags = CYCSAMPLE_CFG_USER_CHAIN;
	CS_ASSERT_SAMPLE_FOR(&self->cfg, 1000, &self->recs, &self->info);
	CS_ASSERT_RECS_OK(&self->recs, &self->info);
	full = full_user_chains(&self->recs, &leaf, pac_in_leaf, pac_in_mid, pac_in_outer);
	ASSERT_LE(20, leaf);
	EXPECT_LE(leaf * 9 / 10, full)
	TH_LOG("%lu of %lu leaf samples have leaf<-mid<-outer", full, leaf);
#else
	SKIP(return, "pointer authentication is arm64 only");
#endif
}

static int spin_20_deep(void *arg)
{
	cs_spin_deep(20);
}

TEST_F(sampling, user_chain_is_cut_at_max_stack)
{
	unsigned long cut = 0;
	size_t i;

	SAMPLING_BEGIN();
	self->child = cs_spawn(spin_20_deep, NULL);
	ASSERT_LT(0, self->child);
	cs_config_init(&self->cfg, CYCSAMPLE_TARGET_PID, self->child);
	self->cfg.flags = CYCSAMPLE_CFG_USER_CHAIN;
	self->cfg.max_stack = 4;
	CS_ASSERT_SAMPLE_FOR(&self->cfg, 700, &self->recs, &self->info);
	EXPECT_EQ(4, self->info.max_stack);
	CS_ASSERT_RECS_OK(&self->recs, &self->info); /* includes nr_user <= 4 */
	for (i = 0; i < self->recs.n; i++) {
		const struct cycsample_sample *smp = cs_sample(&self->recs.v[i]);

		if (smp && (smp->flags & CYCSAMPLE_SAMPLE_USER) && smp->nr_user == 4 &&
		    (smp->flags & CYCSAMPLE_SAMPLE_UCHAIN_TRUNC))
			cut++;
	}
	EXPECT_LE(10, cut) TH_LOG("%lu samples with 4 frames and UCHAIN_TRUNC", cut);
}

/* ---------------------------------------------------------------------- */
/* Kernel callchains                                                      */
/* ---------------------------------------------------------------------- */

struct ksym {
	uint64_t addr;
	char name[128];
};

struct kallsyms {
	struct ksym *v;
	size_t n;
};

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Text symbols of /proc/kallsyms, sorted; n == 0 if addresses are hidden. */
static void kallsyms_load(struct kallsyms *ks)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[256], type, name[128];
	unsigned long long addr;
	size_t cap = 0;

	ks->v = NULL;
	ks->n = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %127s", &addr, &type, name) != 3 || !addr)
			continue;
		if (type != 't' && type != 'T')
			continue;
		if (ks->n == cap) {
			cap = cap ? cap * 2 : 65536;
			ks->v = realloc(ks->v, cap * sizeof(*ks->v));
			if (!ks->v)
				break;
		}
		ks->v[ks->n].addr = addr;
		snprintf(ks->v[ks->n].name, sizeof(ks->v[0].name), "%s", name);
		ks->n++;
	}
	fclose(f);
	if (ks->v)
		qsort(ks->v, ks->n, sizeof(*ks->v), ksym_cmp);
}

/* The text symbol containing @addr (at most 64 KiB above its start), or NULL. */
static const char *ksym_name(const struct kallsyms *ks, uint64_t addr)
{
	size_t lo = 0, hi = ks->n;

	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;

		if (ks->v[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	if (!ks->n || ks->v[lo].addr > addr || addr - ks->v[lo].addr > 65536)
		return NULL;
	return ks->v[lo].name;
}

TEST_F_TIMEOUT(sampling, kernel_chain_goes_through_the_syscall_path, 60)
{
	unsigned long resolved = 0, frames = 0, via_syscall = 0, ustart_ok = 0, with_user = 0;
	unsigned long irqs_off = 0;
	struct kallsyms ks;
	size_t i;
	unsigned int j;

	SAMPLING_BEGIN();
	self->child = cs_spawn_syscaller();
	ASSERT_LT(0, self->child);
	cs_config_init(&self->cfg, CYCSAMPLE_TARGET_PID, self->child);
	self->cfg.flags = CYCSAMPLE_CFG_KERNEL_CHAIN | CYCSAMPLE_CFG_USER_CHAIN;
	CS_ASSERT_SAMPLE_FOR(&self->cfg, 1000, &self->recs, &self->info);
	CS_ASSERT_RECS_OK(&self->recs, &self->info);
	cs_count(&self->recs, &self->counts);
	ASSERT_LE(20, self->counts.kernel)
	TH_LOG("%lu kernel samples of %lu", self->counts.kernel, self->counts.samples);

	kallsyms_load(&ks);
	for (i = 0; i < self->recs.n; i++) {
		const struct cycsample_sample *smp = cs_sample(&self->recs.v[i]);
		const __u64 *k;
		bool syscall_frame = false;

		if (!smp || !(smp->flags & CYCSAMPLE_SAMPLE_KERNEL))
			continue;
		/* A privileged session sees kernel registers and chains. */
		ASSERT_FALSE(smp->flags & CYCSAMPLE_SAMPLE_REGS_HIDDEN);
		ASSERT_LE(CS_KERNEL_VA_START, smp->pc);
		ASSERT_LE(1, smp->nr_kernel);
		k = cs_kernel_frames(smp);
		for (j = 0; j < smp->nr_kernel; j++) {
			const char *name = ksym_name(&ks, j ? k[j] - 1 : k[j]);

			ASSERT_LE(CS_KERNEL_VA_START, k[j]) TH_LOG("kernel frame %u", j);
			frames++;
			if (!name)
				continue;
			resolved++;
			if (strstr(name, "syscall") || strstr(name, "el0_svc"))
				syscall_frame = true;
		}
		via_syscall += syscall_frame;
		/* With pseudo-NMI, samples inside IRQs-off regions have no user chain. */
		irqs_off += !!(smp->flags & CYCSAMPLE_SAMPLE_IRQS_OFF);
		/* The user chain of a kernel-mode sample starts at the user pc. */
		if (smp->nr_user) {
			uint64_t upc = cs_user_frames(smp)[0];

			with_user++;
			ustart_ok += upc >= (uintptr_t)__executable_start && upc < (uintptr_t)etext;
		}
	}
	TH_LOG("%lu kernel samples: %lu with IRQs masked (seen only by an NMI), %lu with a user chain",
	       self->counts.kernel, irqs_off, with_user);
	EXPECT_LE((self->counts.kernel - irqs_off) / 2, with_user);
	EXPECT_EQ(with_user, ustart_ok) TH_LOG("user chains of kernel samples outside our text");
	if (!ks.n) {
		TH_LOG("/proc/kallsyms hides addresses: frames not resolved");
	} else {
		EXPECT_LE(frames * 9 / 10, resolved)
		TH_LOG("%lu of %lu kernel frames resolve", resolved, frames);
		EXPECT_LE(self->counts.kernel / 2, via_syscall)
		TH_LOG("%lu of %lu kernel chains pass the syscall entry", via_syscall,
		       self->counts.kernel);
	}
	free(ks.v);
}

/* ---------------------------------------------------------------------- */
/* Targets                                                                */
/* ---------------------------------------------------------------------- */

struct threads_arg {
	int go[2]; /* the child starts its threads when this is readable */
	int tids[2]; /* the child writes the new threads' tids here */
	int nr;
};

static void *spin_thread(void *arg)
{
	int *fd = arg;
	int tid = syscall(SYS_gettid);

	if (write(*fd, &tid, sizeof(tid)) != sizeof(tid))
		return NULL;
	cs_spin_outer();
}

/* Child: wait for the go byte, then start @nr spinning threads. */
static int start_threads(void *p)
{
	struct threads_arg *a = p;
	pthread_t t;
	char c;
	int i;

	if (read(a->go[0], &c, 1) != 1)
		return 1;
	for (i = 0; i < a->nr; i++)
		if (pthread_create(&t, NULL, spin_thread, &a->tids[1]))
			return 1;
	for (;;)
		pause();
	return 0;
}

static int read_tids(int fd, int *tids, int nr)
{
	int i;

	for (i = 0; i < nr; i++)
		if (read(fd, &tids[i], sizeof(tids[i])) != sizeof(tids[i]))
			return -1;
	return 0;
}

TEST_F(sampling, threads_created_after_start_are_sampled)
{
	struct threads_arg a = { .nr = 3 };
	struct cs_session s;
	int tids[3], i;

	SAMPLING_BEGIN();
	ASSERT_EQ(0, pipe(a.go));
	ASSERT_EQ(0, pipe(a.tids));
	self->child = cs_spawn(start_threads, &a);
	ASSERT_LT(0, self->child);
	cs_config_init(&self->cfg, CYCSAMPLE_TARGET_PID, self->child);
	CS_ASSERT_SESSION(&s, &self->cfg);
	ASSERT_EQ(0, cs_start(s.fd));
	ASSERT_EQ(1, write(a.go[1], "g", 1));
	ASSERT_EQ(0, read_tids(a.tids[0], tids, 3));
	cs_collect_for(&s, 1500, &self->recs);
	EXPECT_EQ(0, cs_stop(s.fd));
	cs_drain(&s, &self->recs);
	ASSERT_EQ(0, cs_session_info(&s));
	cs_session_close(&s);
	CS_ASSERT_RECS_OK(&self->recs, &s.info);
	for (i = 0; i < 3; i++) {
		EXPECT_LT(0, samples_of(&self->recs, self->child, tids[i]))
		TH_LOG("thread %d created after START: no samples", tids[i]);
	}
}

TEST_F(sampling, tid_session_samples_only_that_thread)
{
	struct threads_arg a = { .nr = 2 };
	int tids[2];
	size_t i;

	SAMPLING_BEGIN();
	ASSERT_EQ(0, pipe(a.go));
	ASSERT_EQ(0, pipe(a.tids));
	self->child = cs_spawn(start_threads, &a);
	ASSERT_LT(0, self->child);
	ASSERT_EQ(1, write(a.go[1], "g", 1));
	ASSERT_EQ(0, read_tids(a.tids[0], tids, 2));
	/* the other thread off the sampled one's CPU (cs_spawn() pins both to the last) */
	cs_pin(tids[1], 0);
	cs_config_init(&self->cfg, CYCSAMPLE_TARGET_TID, tids[0]);
	CS_ASSERT_SAMPLE_FOR(&self->cfg, 1000, &self->recs, &self->info);
	CS_ASSERT_RECS_OK(&self->recs, &self->info);
	cs_count(&self->recs, &self->counts);
	ASSERT_LE(10, self->counts.samples);
	for (i = 0; i < self->recs.n; i++) {
		const struct cycsample_sample *smp = cs_sample(&self->recs.v[i]);

		if (!smp)
			continue;
		ASSERT_EQ(tids[0], smp->tid) TH_LOG("the other thread is %d", tids[1]);
		ASSERT_EQ(self->child, smp->pid);
	}
}

/* Child: after the go byte on the pipe, fork a spinning grandchild and wait. */
static int fork_after_go(void *arg)
{
	struct threads_arg *a = arg;
	pid_t pid;
	char c;

	if (read(a->go[0], &c, 1) != 1)
		return 1;
	pid = cs_spawn_spinner();
	if (pid < 0 || write(a->tids[1], &pid, sizeof(pid)) != sizeof(pid))
		return 1;
	for (;;)
		pause();
	return 0;
}

TEST_F(sampling, children_forked_after_start_are_sampled)
{
	struct threads_arg a = { 0 };
	struct cs_session s;
	int grandchild;

	SAMPLING_BEGIN();
	ASSERT_EQ(0, pipe(a.go));
	ASSERT_EQ(0, pipe(a.tids));
	self->child = cs_spawn(fork_after_go, &a);
	ASSERT_LT(0, self->child);
	cs_config_init(&self->cfg, CYCSAMPLE_TARGET_PID, self->child);
	CS_ASSERT_SESSION(&s, &self->cfg);
	ASSERT_EQ(0, cs_start(s.fd));
	ASSERT_EQ(1, write(a.go[1], "g", 1));
	ASSERT_EQ(0, read_tids(a.tids[0], &grandchild, 1));
	cs_collect_for(&s, 1000, &self->recs);
	EXPECT_EQ(0, cs_stop(s.fd));
	cs_drain(&s, &self->recs);
	ASSERT_EQ(0, cs_session_info(&s));
	cs_session_close(&s);
	CS_ASSERT_RECS_OK(&self->recs, &s.info);
	/* The grandchild dies with the child (PDEATHSIG) in teardown. */
	EXPECT_LE(10, samples_of(&self->recs, grandchild, 0))
	TH_LOG("a child process forked after START is not sampled");
}

TEST_F(sampling, idle_target_costs_nothing_while_others_run)
{
	pid_t busy[2];
	int i;

	SAMPLING_BEGIN();
	self->child = cs_spawn(sleep_forever, NULL);
	ASSERT_LT(0, self->child);
	ASSERT_TRUE(wait_asleep(self->child));
	/* one on each CPU: the target's is the last (cs_spawn()) */
	for (i = 0; i < 2; i++) {
		busy[i] = cs_spawn_spinner();
		ASSERT_LT(0, busy[i]);
	}
	cs_pin(busy[0], 0);
	cs_config_init(&self->cfg, CYCSAMPLE_TARGET_PID, self->child);
	CS_ASSERT_SAMPLE_FOR(&self->cfg, 1000, &self->recs, &self->info);
	for (i = 0; i < 2; i++)
		cs_kill(busy[i]);
	EXPECT_EQ(0, self->info.samples);
	EXPECT_EQ(0, self->info.dropped_other);
	/* A few handler calls at most: the counter of a sleeping task does not run. */
	EXPECT_GE(5, self->info.cost_count)
	TH_LOG("%llu handler calls for a sleeping target",
	       (unsigned long long)self->info.cost_count);
}

static int spin_on_cpu(void *arg)
{
	if (cs_pin(0, (int)(long)arg))
		return 1;
	cs_spin_outer();
}

TEST_F_TIMEOUT(sampling, cpus_session_samples_every_online_cpu, 60)
{
	pid_t pinned[2] = { -1, -1 };
	unsigned long on_cpu[2] = { 0, 0 };
	int cpu, ncpu = cs_nr_online_cpus() >= 2 ? 2 : 1;
	size_t i;

	SAMPLING_BEGIN();
	for (cpu = 0; cpu < ncpu; cpu++) {
		pinned[cpu] = cs_spawn(spin_on_cpu, (void *)(long)cpu);
		ASSERT_LT(0, pinned[cpu]);
	}
	cs_config_init(&self->cfg, CYCSAMPLE_TARGET_CPUS, 0);
	CS_ASSERT_SAMPLE_FOR(&self->cfg, 1000, &self->recs, &self->info);
	for (cpu = 0; cpu < ncpu; cpu++)
		cs_kill(pinned[cpu]);
	CS_ASSERT_RECS_OK(&self->recs, &self->info); /* includes cpu == ring's cpu */
	for (i = 0; i < self->recs.n; i++) {
		const struct cycsample_sample *smp = cs_sample(&self->recs.v[i]);

		for (cpu = 0; smp && cpu < ncpu; cpu++)
			if (smp->pid == (__u32)pinned[cpu] && smp->cpu == (__u32)cpu)
				on_cpu[cpu]++;
	}
	for (cpu = 0; cpu < ncpu; cpu++) {
		EXPECT_LE(10, on_cpu[cpu])
		TH_LOG("cpu %d: %lu samples of its spinner", cpu, on_cpu[cpu]);
	}
}

/* ---------------------------------------------------------------------- */
/* Every CPU type: big.LITTLE boards have one PMU per cluster              */
/* ---------------------------------------------------------------------- */

/*
 * scripts/cycsample-vm --pmus 2 boots a guest whose CPU 0 and CPU 1 have
 * PMUs of their own (armv8_cortex_a53, armv8_cortex_a72), as such boards
 * do.  A per-task counter on one PMU never counts on the other's CPUs, so
 * these tests fail where a session has one counter per task.
 */
/* The CPU @pid last ran on (field 39 of /proc/PID/stat), or -1. */
static int last_cpu_of(pid_t pid)
{
	char path[64], buf[1024], *p;
	int cpu;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (cs_read_file(path, buf, sizeof(buf)))
		return -1;
	p = strrchr(buf, ')'); /* the name may hold spaces */
	/* fields 3 to 38 skipped, then the processor */
	if (!p || sscanf(p + 2,
			 "%*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s "
			 "%*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s "
			 "%*s %*s %d",
			 &cpu) != 1)
		return -1;
	return cpu;
}

/*
 * Wait up to two seconds until @pid (which pins itself) may run on @cpu
 * only and is there: the new mask is visible before the stopper thread has
 * moved the task, and a loaded host can leave it on its old CPU a while.
 */
static bool pinned_to(pid_t pid, int cpu)
{
	uint64_t end = cs_now_ms() + 2000;
	cpu_set_t set;

	do {
		if (!sched_getaffinity(pid, sizeof(set), &set) && CPU_COUNT(&set) == 1 &&
		    CPU_ISSET(cpu, &set) && last_cpu_of(pid) == cpu)
			return true;
		cs_sleep_ms(5);
	} while (cs_now_ms() < end);
	return false;
}

TEST_F_TIMEOUT(sampling, pid_session_samples_a_target_pinned_to_any_cpu, 90)
{
	int cpu, ncpu = cs_nr_online_cpus();
	size_t i;

	SAMPLING_BEGIN();
	ASSERT_LE(1, ncpu);
	for (cpu = 0; cpu < ncpu && cpu < 4; cpu++) {
		unsigned long n = 0, elsewhere = 0;

		self->child = cs_spawn(spin_on_cpu, (void *)(long)cpu);
		ASSERT_LT(0, self->child);
		ASSERT_TRUE(pinned_to(self->child, cpu));
		cs_config_init(&self->cfg, CYCSAMPLE_TARGET_PID, self->child);
		CS_ASSERT_SAMPLE_FOR(&self->cfg, 700, &self->recs, &self->info);
		cs_kill(self->child);
		self->child = -1;
		CS_ASSERT_RECS_OK(&self->recs, &self->info);
		for (i = 0; i < self->recs.n; i++) {
			const struct cycsample_sample *smp = cs_sample(&self->recs.v[i]);

			if (!smp)
				continue;
			n++;
			elsewhere += smp->cpu != (__u32)cpu;
		}
		TH_LOG("cpu %d: %lu samples (%lu on other CPUs), PMU %d of %u: %s", cpu, n,
		       elsewhere, cs_pmu_of_cpu(&self->info, cpu), self->info.nr_pmus,
		       cs_pmu_of_cpu(&self->info, cpu) >= 0
			       ? self->info.pmus[cs_pmu_of_cpu(&self->info, cpu)].name
			       : "none");
		EXPECT_LE(10, n) TH_LOG("a target pinned to cpu %d is not sampled", cpu);
		EXPECT_EQ(0, elsewhere);
		EXPECT_LE(0, cs_pmu_of_cpu(&self->info, cpu))
		TH_LOG("INFO names no PMU for cpu %d", cpu);
		cs_recs_free(&self->recs);
	}
}

struct pinned_threads {
	int tids[2]; /* the child writes its threads' tids here */
	int ncpu;
};

static void *spin_pinned_thread(void *arg)
{
	struct pinned_threads *a = arg;
	static int next;
	int cpu = __atomic_fetch_add(&next, 1, __ATOMIC_SEQ_CST);
	int tid = syscall(SYS_gettid);

	if (cs_pin(0, cpu) || write(a->tids[1], &tid, sizeof(tid)) != sizeof(tid))
		return NULL;
	cs_spin_outer();
}

/* Child: one spinning thread pinned to each of the first ncpu CPUs. */
static int start_pinned_threads(void *p)
{
	struct pinned_threads *a = p;
	pthread_t t;
	int i;

	for (i = 0; i < a->ncpu; i++)
		if (pthread_create(&t, NULL, spin_pinned_thread, a))
			return 1;
	for (;;)
		pause();
	return 0;
}

/* utime + stime of one thread, in clock ticks, or -1. */
static long thread_ticks(pid_t pid, pid_t tid)
{
	char path[64], buf[1024], *p;
	unsigned long ut, st;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	if (cs_read_file(path, buf, sizeof(buf)))
		return -1;
	p = strrchr(buf, ')'); /* the name may hold spaces */
	if (!p ||
	    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
		return -1;
	return ut + st;
}

TEST_F_TIMEOUT(sampling, threads_on_every_cpu_are_sampled_in_proportion, 60)
{
	struct pinned_threads a = { .ncpu = cs_nr_online_cpus() >= 2 ? 2 : 1 };
	long before[2], ticks[2], all_ticks = 0;
	unsigned long n[2] = { 0, 0 }, all = 0;
	struct cs_session s;
	int tids[2], i;
	char pct[16];

	SAMPLING_BEGIN();
	if (a.ncpu < 2)
		SKIP(return, "needs two online CPUs");
	ASSERT_EQ(0, pipe(a.tids));
	self->child = cs_spawn(start_pinned_threads, &a);
	ASSERT_LT(0, self->child);
	ASSERT_EQ(0, read_tids(a.tids[0], tids, 2));
	cs_config_init(&self->cfg, CYCSAMPLE_TARGET_PID, self->child);
	/*
	 * TCG's slow handlers make perf lower perf_event_max_sample_rate (to
	 * 250 a second) and then throttle counters at one sample per tick, so
	 * that samples follow the tick instead of the cycles.  Keep the limit
	 * for this test, and sample at about 40 a second per CPU: QEMU's cycle
	 * counter follows the host's clock, and a vCPU the loaded host leaves
	 * waiting longer than a period loses the overflows of that wait.
	 */
	ASSERT_EQ(0, cs_read_file(CS_CPU_TIME_PERCENT, pct, sizeof(pct)));
	ASSERT_EQ(0, cs_write_file(CS_CPU_TIME_PERCENT, "0"));
	cs_reset_sample_rate();
	self->cfg.sample_period = 16 * CS_PERIOD;
	CS_ASSERT_SESSION(&s, &self->cfg);
	for (i = 0; i < 2; i++)
		before[i] = thread_ticks(self->child, tids[i]);
	ASSERT_EQ(0, cs_start(s.fd));
	cs_collect_for(&s, 3000, &self->recs);
	EXPECT_EQ(0, cs_stop(s.fd));
	cs_write_file(CS_CPU_TIME_PERCENT, pct);
	for (i = 0; i < 2; i++) {
		ticks[i] = thread_ticks(self->child, tids[i]) - before[i];
		all_ticks += ticks[i];
	}
	cs_drain(&s, &self->recs);
	ASSERT_EQ(0, cs_session_info(&s));
	cs_session_close(&s);
	CS_ASSERT_RECS_OK(&self->recs, &s.info);
	for (i = 0; i < 2; i++) {
		n[i] = samples_of(&self->recs, self->child, tids[i]);
		all += n[i];
	}
	TH_LOG("thread on cpu 0: %lu samples, %ld ticks; on cpu 1: %lu samples, %ld ticks; "
	       "%u PMUs, %llu samples throttled",
	       n[0], ticks[0], n[1], ticks[1], s.info.nr_pmus,
	       (unsigned long long)s.info.throttled);
	ASSERT_LT(0, all_ticks);
	for (i = 0; i < 2; i++) {
		EXPECT_LE(10, n[i]) TH_LOG("the thread pinned to cpu %d is not sampled", i);
		/*
		 * Each thread's share of samples within 25 points of its share of
		 * CPU time: a PMU that counts nothing is 50 points off, a loaded
		 * host moves the shares by up to about 20.
		 */
		if (all) {
			EXPECT_GE(25, labs((long)(100 * n[i] / all) - 100 * ticks[i] / all_ticks));
		}
	}
}

/* A PMU in sysfs with a "cpus" file is a core PMU (arm_pmu, x86 hybrid). */
static int sysfs_core_pmu(const char *name, char *cpus, size_t len)
{
	char path[320];

	snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/cpus", name);
	return cs_read_file(path, cpus, len);
}

/* "0-1,3" -> mask words; returns the number of CPUs. */
static int parse_cpulist(const char *s, __u64 *mask, unsigned int words)
{
	char *p = (char *)s;
	int n = 0;

	memset(mask, 0, words * sizeof(*mask));
	while (*p && *p != '\n') {
		long a = strtol(p, &p, 10), b = a, c;

		if (*p == '-')
			b = strtol(p + 1, &p, 10);
		for (c = a; c <= b; c++, n++)
			if (c < (long)words * 64)
				mask[c / 64] |= 1ULL << (c % 64);
		if (*p == ',')
			p++;
	}
	return n;
}

TEST_F(sampling, info_lists_every_core_pmu_with_its_cpus)
{
	unsigned int i, nr_sysfs = 0;
	int cpu, ncpu = cs_nr_online_cpus();
	struct dirent *d;
	DIR *dir;

	SAMPLING_BEGIN();
	self->child = cs_spawn_spinner();
	ASSERT_LT(0, self->child);
	cs_config_init(&self->cfg, CYCSAMPLE_TARGET_PID, self->child);
	CS_ASSERT_SAMPLE_FOR(&self->cfg, 300, &self->recs, &self->info);
	ASSERT_LE(offsetof(struct cycsample_info, pmus[CYCSAMPLE_MAX_PMUS]), self->info.size);
	ASSERT_LE(1, self->info.nr_pmus);
	ASSERT_GE(CYCSAMPLE_MAX_PMUS, self->info.nr_pmus);
	EXPECT_EQ(CYCSAMPLE_CLOCK_MONOTONIC, self->info.clock);
	for (i = 0; i < self->info.nr_pmus; i++) {
		const struct cycsample_pmu *p = &self->info.pmus[i];

		TH_LOG("pmu %u: %s type %u, %u cpus (%#llx), event %u, attr type %u config %#llx, "
		       "fallback %u (%d), %llu samples",
		       i, p->name, p->type, p->nr_cpus, (unsigned long long)p->cpus[0], p->event,
		       p->attr_type, (unsigned long long)p->config, p->fallback_reason,
		       p->fallback_errno, (unsigned long long)p->samples);
		EXPECT_NE(0, p->name[0]);
		EXPECT_LE(1, p->nr_cpus);
	}
	/* every online CPU is in exactly one entry: cs_pmu_of_cpu finds the first */
	for (cpu = 0; cpu < ncpu && cpu < CYCSAMPLE_PMU_CPUS; cpu++)
		EXPECT_LE(0, cs_pmu_of_cpu(&self->info, cpu)) TH_LOG("cpu %d in no entry", cpu);

	dir = opendir("/sys/bus/event_source/devices");
	ASSERT_NE(NULL, dir);
	while ((d = readdir(dir))) {
		__u64 mask[CYCSAMPLE_PMU_CPUS / 64];
		char cpus[512];
		bool found = false;

		if (d->d_name[0] == '.' || sysfs_core_pmu(d->d_name, cpus, sizeof(cpus)))
			continue;
		nr_sysfs++;
		parse_cpulist(cpus, mask, CYCSAMPLE_PMU_CPUS / 64);
		for (i = 0; i < self->info.nr_pmus; i++) {
			if (strcmp(self->info.pmus[i].name, d->d_name))
				continue;
			found = true;
			EXPECT_EQ(0, memcmp(mask, self->info.pmus[i].cpus, sizeof(mask)))
			TH_LOG("%s: sysfs cpus %s", d->d_name, cpus);
		}
		EXPECT_TRUE(found) TH_LOG("core PMU %s (cpus %s) not in INFO", d->d_name, cpus);
	}
	closedir(dir);
	TH_LOG("%u core PMUs in sysfs, %u entries in INFO", nr_sysfs, self->info.nr_pmus);
}

/* ---------------------------------------------------------------------- */
/* Periods, frequency, registers                                          */
/* ---------------------------------------------------------------------- */

TEST_F(sampling, period_field_is_the_configured_period)
{
	__u64 want;
	size_t i;

	SAMPLING_BEGIN();
	self->child = cs_spawn_spinner();
	ASSERT_LT(0, self->child);
	cs_config_init(&self->cfg, CYCSAMPLE_TARGET_PID, self->child);
	CS_ASSERT_SAMPLE_FOR(&self->cfg, 700, &self->recs, &self->info);
	CS_ASSERT_RECS_OK(&self->recs, &self->info);
	want = self->info.event == CYCSAMPLE_EVENT_HW_CYCLES ? CS_PERIOD
							     : self->info.clock_period_ns;
	ASSERT_NE(0, want);
	for (i = 0; i < self->recs.n; i++) {
		const struct cycsample_sample *smp = cs_sample(&self->recs.v[i]);

		if (smp) {
			ASSERT_EQ(want, smp->period) TH_LOG("event %u", self->info.event);
		}
	}
}

TEST_F_TIMEOUT(sampling, freq_mode_approaches_the_requested_rate, 60)
{
	const unsigned int hz = 200, want = hz * 2 / 5;
	struct cs_session s;
	__u64 max_period = 0;
	uint64_t t0, ms;
	size_t i;

	SAMPLING_BEGIN();
	self->child = cs_spawn_spinner();
	ASSERT_LT(0, self->child);
	cs_config_init(&self->cfg, CYCSAMPLE_TARGET_PID, self->child);
	self->cfg.flags = CYCSAMPLE_CFG_FREQ;
	self->cfg.sample_period = hz;
	CS_ASSERT_SESSION(&s, &self->cfg);
	t0 = cs_now_ms();
	ASSERT_EQ(0, cs_start(s.fd));
	/*
	 * Loose bounds: TCG is slow and perf adjusts the period per tick.
	 * 2 s give ~400 samples here; on a host loaded 8+ deep, overflows
	 * that come while QEMU's vCPU thread is preempted are taken once,
	 * late, and 2 s gave 27-73.  So: a fifth of the rate's 2 s, within
	 * 8 s.  A broken frequency mode (the Hz taken for a period, or no
	 * adjustment) is off by orders of magnitude either way.
	 */
	do {
		cs_collect_for(&s, 500, &self->recs);
		cs_count(&self->recs, &self->counts);
	} while (self->counts.samples < want && cs_now_ms() - t0 < 8000);
	EXPECT_EQ(0, cs_stop(s.fd));
	ms = cs_now_ms() - t0;
	cs_drain(&s, &self->recs);
	ASSERT_EQ(0, cs_info(s.fd, &self->info));
	cs_session_close(&s);
	CS_ASSERT_RECS_OK(&self->recs, &self->info);
	EXPECT_EQ(hz, self->info.sample_period);
	EXPECT_TRUE(self->info.config_flags & CYCSAMPLE_CFG_FREQ);
	cs_count(&self->recs, &self->counts);
	TH_LOG("%llu samples in %llu ms", (unsigned long long)self->counts.samples,
	       (unsigned long long)ms);
	EXPECT_LE(want, self->counts.samples);
	EXPECT_GE(hz * ms / 1000 * 3, self->counts.samples);
	for (i = 0; i < self->recs.n; i++) {
		const struct cycsample_sample *smp = cs_sample(&self->recs.v[i]);

		if (smp && smp->period > max_period)
			max_period = smp->period;
	}
	/* A sample stands for events (or ns), not for the frequency in Hz. */
	EXPECT_LT(100 * hz, max_period);
}

TEST_F(sampling, regs_user_holds_the_user_registers)
{
	unsigned long with_regs = 0;
	size_t i;

	SAMPLING_BEGIN();
	self->child = cs_spawn_spinner();
	ASSERT_LT(0, self->child);
	cs_config_init(&self->cfg, CYCSAMPLE_TARGET_PID, self->child);
	self->cfg.flags = CYCSAMPLE_CFG_REGS_USER;
	CS_ASSERT_SAMPLE_FOR(&self->cfg, 700, &self->recs, &self->info);
	CS_ASSERT_RECS_OK(&self->recs, &self->info);
	for (i = 0; i < self->recs.n; i++) {
		const struct cycsample_sample *smp = cs_sample(&self->recs.v[i]);
		const __u64 *regs;

		if (!smp || !(smp->flags & CYCSAMPLE_SAMPLE_USER))
			continue;
		ASSERT_EQ(CS_NR_USER_REGS, smp->nr_regs);
		regs = cs_user_regs(smp);
		ASSERT_EQ(smp->pc, regs[CS_USER_REG_PC]);
#ifdef __aarch64__
		ASSERT_EQ(smp->sp, regs[31]);
		ASSERT_EQ(smp->fp, regs[29]);
		ASSERT_EQ(smp->lr, regs[30]);
#else
		ASSERT_EQ(smp->sp, regs[19]);
		ASSERT_EQ(smp->fp, regs[4]); /* bp */
#endif
		with_regs++;
	}
	EXPECT_LE(10, with_regs);
}

/*
 * An io_uring whose reads of /dev/zero are all punted to its workers
 * (IOSQE_ASYNC): the workers burn the CPU time, in the kernel, on behalf
 * of the target.  They are threads of its group with its mm but no user
 * context of their own: their saved "user" registers are the zeroes
 * copy_thread() gave them.
 */
struct zero_ring {
	int fd;
	unsigned int *sq_tail, *sq_mask, *sq_array;
	unsigned int *cq_head, *cq_tail, *cq_mask;
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqes;
};

static int zero_ring_setup(struct zero_ring *r)
{
	struct io_uring_params p = { 0 };
	size_t sq_len, cq_len;
	char *sq, *cq;

	r->fd = syscall(__NR_io_uring_setup, 4, &p);
	if (r->fd < 0)
		return errno;
	sq_len = p.sq_off.array + p.sq_entries * sizeof(unsigned int);
	cq_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	if (p.features & IORING_FEAT_SINGLE_MMAP)
		sq_len = cq_len = sq_len > cq_len ? sq_len : cq_len;
	sq = mmap(NULL, sq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd,
		  IORING_OFF_SQ_RING);
	if (sq == MAP_FAILED)
		return errno;
	cq = sq;
	if (!(p.features & IORING_FEAT_SINGLE_MMAP)) {
		cq = mmap(NULL, cq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd,
			  IORING_OFF_CQ_RING);
		if (cq == MAP_FAILED)
			return errno;
	}
	r->sqes = mmap(NULL, p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQES);
	if (r->sqes == MAP_FAILED)
		return errno;
	r->sq_tail = (unsigned int *)(sq + p.sq_off.tail);
	r->sq_mask = (unsigned int *)(sq + p.sq_off.ring_mask);
	r->sq_array = (unsigned int *)(sq + p.sq_off.array);
	r->cq_head = (unsigned int *)(cq + p.cq_off.head);
	r->cq_tail = (unsigned int *)(cq + p.cq_off.tail);
	r->cq_mask = (unsigned int *)(cq + p.cq_off.ring_mask);
	r->cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
	return 0;
}

/* One read of @len bytes from @fd into @buf, done by a worker: its result. */
static int zero_ring_read(struct zero_ring *r, int fd, void *buf, unsigned int len)
{
	unsigned int tail = *r->sq_tail, idx = tail & *r->sq_mask, head;
	struct io_uring_sqe *sqe = &r->sqes[idx];
	int res;

	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_READ;
	sqe->flags = IOSQE_ASYNC;
	sqe->fd = fd;
	sqe->addr = (uintptr_t)buf;
	sqe->len = len;
	r->sq_array[idx] = idx;
	__atomic_store_n(r->sq_tail, tail + 1, __ATOMIC_RELEASE);
	if (syscall(__NR_io_uring_enter, r->fd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0)
		return -errno;
	head = *r->cq_head;
	if (head == __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE))
		return -EAGAIN;
	res = r->cqes[head & *r->cq_mask].res;
	__atomic_store_n(r->cq_head, head + 1, __ATOMIC_RELEASE);
	return res;
}

#define ZERO_READ_LEN (4U << 20)

/* Writes 0 on @arg's pipe once a worker has read, or the errno; then reads forever. */
static int read_zero_by_workers(void *arg)
{
	int *ready = arg, fd, err, res;
	struct zero_ring r;
	void *buf;

	buf = malloc(ZERO_READ_LEN);
	fd = open("/dev/zero", O_RDONLY);
	err = buf && fd >= 0 ? zero_ring_setup(&r) : ENOMEM;
	if (!err) {
		res = zero_ring_read(&r, fd, buf, ZERO_READ_LEN);
		err = res == (int)ZERO_READ_LEN ? 0 : res < 0 ? -res : EIO;
	}
	if (write(ready[1], &err, sizeof(err)) != sizeof(err) || err)
		return 1;
	for (;;)
		zero_ring_read(&r, fd, buf, ZERO_READ_LEN);
}

TEST_F(sampling, io_uring_worker_samples_carry_no_user_context)
{
	unsigned long workers = 0, target = 0;
	int ready[2], err = 0;
	size_t i;

	SAMPLING_BEGIN();
	ASSERT_EQ(0, pipe(ready));
	self->child = cs_spawn(read_zero_by_workers, ready);
	ASSERT_LT(0, self->child);
	ASSERT_EQ(sizeof(err), read(ready[0], &err, sizeof(err)));
	if (err == ENOSYS || err == EPERM)
		SKIP(return, "io_uring is not available here (%s)", strerror(err));
	ASSERT_EQ(0, err) TH_LOG("io_uring read of /dev/zero: %s", strerror(err));
	cs_config_init(&self->cfg, CYCSAMPLE_TARGET_PID, self->child);
	self->cfg.flags = CYCSAMPLE_CFG_REGS_USER;
	CS_ASSERT_SAMPLE_FOR(&self->cfg, 1000, &self->recs, &self->info);
	CS_ASSERT_RECS_OK(&self->recs, &self->info);
	for (i = 0; i < self->recs.n; i++) {
		const struct cycsample_sample *smp = cs_sample(&self->recs.v[i]);

		if (!smp || smp->pid != (__u32)self->child)
			continue;
		if (smp->tid == (__u32)self->child) {
			target++;
			continue;
		}
		/* an io_uring worker: the target itself only waits in io_uring_enter() */
		workers++;
		ASSERT_EQ(0, smp->flags & CYCSAMPLE_SAMPLE_USER);
		ASSERT_EQ(0, smp->nr_user)
		TH_LOG("worker %u: a user chain from no user context", smp->tid);
		ASSERT_EQ(0, smp->nr_regs)
		TH_LOG("worker %u: user registers it does not have", smp->tid);
	}
	/* before 5.12 (upstream) the workers are kernel threads outside the group */
	if (!workers)
		SKIP(return, "no sample of an io_uring worker (%lu of the target)", target);
	TH_LOG("%lu samples of io_uring workers, %lu of the target", workers, target);
}

TEST_F(sampling, user_only_session_has_no_kernel_samples)
{
	SAMPLING_BEGIN();
	self->child = cs_spawn_syscaller();
	ASSERT_LT(0, self->child);
	cs_config_init(&self->cfg, CYCSAMPLE_TARGET_PID, self->child);
	self->cfg.flags = CYCSAMPLE_CFG_USER_ONLY | CYCSAMPLE_CFG_USER_CHAIN;
	self->cfg.sample_period = CS_PERIOD / 4;
	CS_ASSERT_SAMPLE_FOR(&self->cfg, 1000, &self->recs, &self->info);
	CS_ASSERT_RECS_OK(&self->recs, &self->info);
	cs_count(&self->recs, &self->counts);
	EXPECT_TRUE(self->info.config_flags & CYCSAMPLE_CFG_USER_ONLY);
	EXPECT_EQ(0, self->counts.kernel);
	EXPECT_LT(0, self->counts.user);
}

/* ---------------------------------------------------------------------- */
/* Counters                                                               */
/* ---------------------------------------------------------------------- */

TEST_F(sampling, info_counters_match_the_records)
{
	struct cs_session s;
	__u64 ring_samples = 0, ring_lost = 0;
	unsigned int i;

	SAMPLING_BEGIN();
	self->child = cs_spawn_spinner();
	ASSERT_LT(0, self->child);
	cs_config_init(&self->cfg, CYCSAMPLE_TARGET_PID, self->child);
	self->cfg.ring_pages = 256; /* nothing is lost while we read */
	CS_ASSERT_SESSION(&s, &self->cfg);
	ASSERT_EQ(0, cs_start(s.fd));
	cs_collect_for(&s, 1000, &self->recs);
	ASSERT_EQ(0, cs_stop(s.fd));
	cs_drain(&s, &self->recs);
	ASSERT_EQ(0, cs_session_info(&s));
	for (i = 0; i < s.info.nr_rings; i++) {
		ring_samples += cs_ring(&s, i)->samples;
		ring_lost += cs_ring(&s, i)->lost;
	}
	self->info = s.info;
	cs_session_close(&s);
	CS_ASSERT_RECS_OK(&self->recs, &self->info);
	cs_count(&self->recs, &self->counts);
	ASSERT_LT(0, self->counts.samples);
	EXPECT_EQ(self->counts.samples, self->info.samples);
	EXPECT_EQ(self->info.samples, ring_samples);
	EXPECT_EQ(0, self->info.lost);
	EXPECT_EQ(0, ring_lost);
	EXPECT_EQ(0, self->counts.lost_records);
	EXPECT_EQ(CYCSAMPLE_STATE_STOPPED, self->info.state);
}

TEST_F(sampling, handler_cost_statistics_are_consistent)
{
	__u64 hist = 0, avg;
	unsigned int i;

	SAMPLING_BEGIN();
	self->child = cs_spawn_spinner();
	ASSERT_LT(0, self->child);
	cs_config_init(&self->cfg, CYCSAMPLE_TARGET_PID, self->child);
	self->cfg.flags = CYCSAMPLE_CFG_USER_CHAIN;
	CS_ASSERT_SAMPLE_FOR(&self->cfg, 700, &self->recs, &self->info);
	TH_LOG("cost: count %llu min %llu max %llu total %llu ns",
	       (unsigned long long)self->info.cost_count,
	       (unsigned long long)self->info.cost_min_ns,
	       (unsigned long long)self->info.cost_max_ns,
	       (unsigned long long)self->info.cost_total_ns);
	ASSERT_LT(0, self->info.samples);
	ASSERT_LE(self->info.samples, self->info.cost_count);
	for (i = 0; i < CYCSAMPLE_COST_BUCKETS; i++)
		hist += self->info.cost_hist[i];
	EXPECT_EQ(self->info.cost_count, hist);
	avg = self->info.cost_total_ns / self->info.cost_count;
	/* min may be 0: local_clock() can be coarse (an x86 guest with an unstable TSC). */
	EXPECT_LT(0, self->info.cost_max_ns);
	EXPECT_LE(self->info.cost_min_ns, avg);
	EXPECT_LE(avg, self->info.cost_max_ns);
	EXPECT_LE(self->info.cost_max_ns, self->info.cost_total_ns);
}

TEST_F(sampling, throttling_is_counted_and_flagged)
{
	unsigned long flagged = 0;
	size_t i;

	SAMPLING_BEGIN();
	/* 1000/s is 4 per tick at HZ=250 (at most 10 at HZ=100): far below this period. */
	ASSERT_EQ(0, cs_write_file(CS_SAMPLE_RATE, "1000"));
	self->child = cs_spawn_spinner();
	ASSERT_LT(0, self->child);
	cs_config_init(&self->cfg, CYCSAMPLE_TARGET_PID, self->child);
	self->cfg.sample_period = CYCSAMPLE_MIN_PERIOD;
	self->cfg.ring_pages = 256;
	CS_ASSERT_SAMPLE_FOR(&self->cfg, 1000, &self->recs, &self->info);
	cs_reset_sample_rate();
	CS_ASSERT_RECS_OK(&self->recs, &self->info);
	for (i = 0; i < self->recs.n; i++) {
		const struct cycsample_sample *smp = cs_sample(&self->recs.v[i]);

		flagged += smp && (smp->flags & CYCSAMPLE_SAMPLE_THROTTLED);
	}
	EXPECT_LT(0, self->info.throttled);
	EXPECT_LT(0, flagged);
	EXPECT_GE(self->info.throttled, flagged);
	if (!self->info.lost && !self->info.dropped_other) {
		EXPECT_EQ(self->info.throttled, flagged);
	}
}

/*
 * Where the overflow handler ran.  The software clock is an hrtimer, never
 * an NMI; hardware cycles are an NMI on x86 and on arm64 with pseudo-NMI,
 * a plain IRQ otherwise, and one PMU does not mix the two.  The harness
 * that boots with irqchip.gicv3_pseudo_nmi=1 (scripts/check-debug) also
 * sets CYCSAMPLE_EXPECT_NMI=1, so losing the NMI path fails there.
 */
TEST_F(sampling, nmi_flag_says_how_the_overflow_arrived)
{
	unsigned long n = 0, nmi = 0;
	bool hw;
	size_t i;

	SAMPLING_BEGIN();
	self->child = cs_spawn_spinner();
	ASSERT_LT(0, self->child);
	cs_config_init(&self->cfg, CYCSAMPLE_TARGET_PID, self->child);
	CS_ASSERT_SAMPLE_FOR(&self->cfg, 500, &self->recs, &self->info);
	CS_ASSERT_RECS_OK(&self->recs, &self->info);
	hw = self->info.event == CYCSAMPLE_EVENT_HW_CYCLES;
	for (i = 0; i < self->recs.n; i++) {
		const struct cycsample_sample *smp = cs_sample(&self->recs.v[i]);

		if (!smp)
			continue;
		n++;
		nmi += !!(smp->flags & CYCSAMPLE_SAMPLE_NMI);
	}
	ASSERT_LT(0, n);
	TH_LOG("%s: %lu of %lu samples taken in NMI", hw ? "cycles" : "software clock", nmi, n);
	if (!hw) {
		EXPECT_EQ(0, nmi);
		return;
	}
	EXPECT_TRUE(nmi == 0 || nmi == n) TH_LOG("one PMU, one kind of interrupt");
#ifdef __x86_64__
	EXPECT_EQ(n, nmi) TH_LOG("the x86 PMU interrupt is an NMI");
#endif
	if (getenv("CYCSAMPLE_EXPECT_NMI")) {
		EXPECT_EQ(n, nmi) TH_LOG("booted with pseudo-NMI: every overflow is an NMI");
	}
}

/* ---------------------------------------------------------------------- */
/* Starting at exec, and the clock                                        */
/* ---------------------------------------------------------------------- */

/* Child: after the go byte, spin in the marked code, then exec this binary as a spinner. */
static int mark_then_exec(void *arg)
{
	const int *go = arg;
	const char *exe = cs_self_exe();
	char *envp[] = { CS_SPIN_ENV "=user", NULL };
	char *argv[] = { (char *)exe, NULL };
	char c;

	if (!exe || read(go[0], &c, 1) != 1)
		return 1;
	cs_spin_mark_ms(300);
	execve(exe, argv, envp);
	return 1;
}

/* Samples of @pid in the spinner's leaf code (the image after the exec). */
static unsigned long leaf_samples(const struct cs_recs *r, pid_t pid)
{
	return cs_count_pc_in(r, pid, __start_cs_text_leaf, __stop_cs_text_leaf);
}

/* Run mark_then_exec() under a session with @flags; count samples before and after the exec. */
static void sample_across_exec(struct __test_metadata *_metadata, FIXTURE_DATA(sampling) * self,
			       __u32 flags, unsigned long *marked, unsigned long *leaf)
{
	/* user chains and registers too, so that a leak of the old user context shows */
	flags |= CYCSAMPLE_CFG_USER_CHAIN | CYCSAMPLE_CFG_REGS_USER;
	const struct cycsample_task_event *exec_rec;
	struct cs_session s;
	int go[2];
	size_t i;

	ASSERT_EQ(0, pipe(go));
	self->child = cs_spawn(mark_then_exec, go);
	ASSERT_LT(0, self->child);
	cs_config_init(&self->cfg, CYCSAMPLE_TARGET_PID, self->child);
	self->cfg.flags = flags;
	CS_ASSERT_SESSION(&s, &self->cfg);
	ASSERT_EQ(0, cs_start(s.fd));
	ASSERT_EQ(1, write(go[1], "g", 1));
	/*
	 * 300 ms of marked code, an exec of a large static binary, then the
	 * spinner: on a loaded host the exec alone can take a second or more,
	 * so collect until the new image has samples (or 8 s have passed).
	 */
	cs_collect_for(&s, 1500, &self->recs);
	for (i = 0; i < 13 && leaf_samples(&self->recs, self->child) < 20; i++)
		cs_collect_for(&s, 500, &self->recs);
	EXPECT_EQ(0, cs_stop(s.fd));
	cs_drain(&s, &self->recs);
	ASSERT_EQ(0, cs_session_info(&s));
	cs_session_close(&s);
	CS_ASSERT_RECS_OK(&self->recs, &s.info);
	*marked =
		cs_count_pc_in(&self->recs, self->child, __start_cs_text_mark, __stop_cs_text_mark);
	*leaf = leaf_samples(&self->recs, self->child);
	exec_rec = cs_find_record(&self->recs, CYCSAMPLE_REC_EXEC);
	TH_LOG("flags %#x: %lu samples before the exec (marked code), %lu after (leaf), EXEC %s",
	       flags, *marked, *leaf, exec_rec ? "recorded" : "missing");
	ASSERT_NE(NULL, exec_rec);
	/*
	 * perf enables the counters inside the exec, before the task's exec id
	 * moves on (which writes the EXEC record): samples of the rest of the
	 * exec come first, in the kernel, and without a user context.
	 */
	for (i = 0; (flags & CYCSAMPLE_CFG_ENABLE_ON_EXEC) && i < self->recs.n; i++) {
		const struct cycsample_sample *smp = cs_sample(&self->recs.v[i]);

		if (smp && smp->time < exec_rec->time) {
			ASSERT_TRUE((smp->flags & CYCSAMPLE_SAMPLE_KERNEL) && !smp->nr_user &&
				    !smp->nr_regs)
			TH_LOG("before the EXEC record: flags %#x, %u user frames, pc %#llx",
			       smp->flags, smp->nr_user, (unsigned long long)smp->pc);
		}
	}
}

TEST_F_TIMEOUT(sampling, enable_on_exec_samples_nothing_before_the_exec, 60)
{
	unsigned long marked, leaf;

	SAMPLING_BEGIN();
	sample_across_exec(_metadata, self, CYCSAMPLE_CFG_ENABLE_ON_EXEC, &marked, &leaf);
	EXPECT_EQ(0, marked) TH_LOG("the code before the exec was sampled");
	EXPECT_LE(10, leaf) TH_LOG("the new image was not sampled");
}

/* The same workload without the flag: the code before the exec shows. */
TEST_F_TIMEOUT(sampling, without_enable_on_exec_the_code_before_exec_is_sampled, 60)
{
	unsigned long marked, leaf;

	SAMPLING_BEGIN();
	sample_across_exec(_metadata, self, 0, &marked, &leaf);
	/*
	 * With the flag the count is exactly 0, so one sample tells the two
	 * apart.  300 ms of CPU give ~200 samples on a quiet host, but as few
	 * as 4 on a host loaded 10+ deep: under TCG an overflow that comes
	 * while QEMU's vCPU thread is preempted is taken once, late.
	 */
	EXPECT_LE(1, marked);
	EXPECT_LE(10, leaf);
}

TEST_F(sampling, enable_on_exec_with_a_cpus_target_is_einval)
{
	int fd;

	SAMPLING_BEGIN();
	fd = cs_open();
	ASSERT_LE(0, fd);
	cs_config_init(&self->cfg, CYCSAMPLE_TARGET_CPUS, 0);
	self->cfg.flags = CYCSAMPLE_CFG_ENABLE_ON_EXEC;
	EXPECT_EQ(EINVAL, cs_configure(fd, &self->cfg));
	close(fd);
}

/* Intervals of CLOCK_MONOTONIC during which the child ran the marked code. */
#define STAMP_ROUNDS 6

struct stamps {
	volatile int done;
	uint64_t t[STAMP_ROUNDS][2];
};

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int stamp_marked_spins(void *arg)
{
	struct stamps *st = arg;
	int i;

	for (i = 0; i < STAMP_ROUNDS; i++) {
		st->t[i][0] = monotonic_ns();
		cs_spin_mark_ms(100);
		st->t[i][1] = monotonic_ns();
		cs_spin_cpu_ms(100);
	}
	__atomic_store_n(&st->done, 1, __ATOMIC_RELEASE);
	cs_spin_outer();
}

/*
 * A sample's time is CLOCK_MONOTONIC: every sample of the marked code falls
 * inside one of the intervals the target itself read around it (1 ms of
 * slack for the clock reads).  local_clock() was 0.32 s away in a guest.
 */
TEST_F_TIMEOUT(sampling, sample_times_are_on_the_targets_clock_monotonic, 60)
{
	const uint64_t slack = 1000000;
	unsigned long marked = 0, outside = 0;
	uint64_t worst = 0;
	struct cs_session s;
	struct stamps *st;
	size_t i;
	int r;

	SAMPLING_BEGIN();
	st = mmap(NULL, sizeof(*st), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, st);
	memset(st, 0, sizeof(*st));
	self->child = cs_spawn(stamp_marked_spins, st);
	ASSERT_LT(0, self->child);
	cs_config_init(&self->cfg, CYCSAMPLE_TARGET_PID, self->child);
	CS_ASSERT_SESSION(&s, &self->cfg);
	ASSERT_EQ(0, cs_start(s.fd));
	/* 1.2 s of the target's CPU: ~2 s here, 3 s and more on a loaded host */
	for (i = 0; i < 60 && !__atomic_load_n(&st->done, __ATOMIC_ACQUIRE); i++)
		cs_collect_for(&s, 250, &self->recs);
	EXPECT_EQ(0, cs_stop(s.fd));
	cs_drain(&s, &self->recs);
	ASSERT_EQ(0, cs_info(s.fd, &self->info));
	cs_session_close(&s);
	ASSERT_TRUE(__atomic_load_n(&st->done, __ATOMIC_ACQUIRE))
	TH_LOG("the target did not run its 1.2 s of CPU in 15 s");
	CS_ASSERT_RECS_OK(&self->recs, &self->info);
	EXPECT_EQ(CYCSAMPLE_CLOCK_MONOTONIC, self->info.clock);
	for (i = 0; i < self->recs.n; i++) {
		const struct cycsample_sample *smp = cs_sample(&self->recs.v[i]);
		uint64_t dist = UINT64_MAX;

		if (!smp || !CS_IN_TEXT(mark, smp->pc))
			continue;
		marked++;
		for (r = 0; r < STAMP_ROUNDS; r++) {
			uint64_t lo = st->t[r][0], hi = st->t[r][1], d;

			d = smp->time < lo ? lo - smp->time : smp->time > hi ? smp->time - hi : 0;
			dist = d < dist ? d : dist;
		}
		worst = dist > worst ? dist : worst;
		outside += dist > slack;
	}
	TH_LOG("%lu samples of the marked code, %lu outside its intervals, worst %llu ns away",
	       marked, outside, (unsigned long long)worst);
	munmap(st, sizeof(*st));
	ASSERT_LE(10, marked);
	EXPECT_EQ(0, outside);
}

/* ---------------------------------------------------------------------- */
/* poll                                                                   */
/* ---------------------------------------------------------------------- */

static int sleep_forever(void *arg)
{
	for (;;)
		pause();
	return 0;
}

/*
 * A child just forked still runs until it reaches pause(); a session started
 * then samples it (seen on x86_64's software clock under load), so the tests
 * about a sleeping target wait until the scheduler says it sleeps.
 */
static bool wait_asleep(pid_t pid)
{
	char path[64], buf[256], *p;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	for (i = 0; i < 500; i++) {
		/* "pid (comm) S ...": the state follows the last ')' */
		p = cs_read_file(path, buf, sizeof(buf)) ? NULL : strrchr(buf, ')');
		if (p && p[1] == ' ' && p[2] == 'S')
			return true;
		usleep(10000);
	}
	return false;
}

TEST_F(sampling, poll_reports_nothing_while_the_rings_are_empty)
{
	struct pollfd p;
	struct cs_session s;

	SAMPLING_BEGIN();
	self->child = cs_spawn(sleep_forever, NULL);
	ASSERT_LT(0, self->child);
	ASSERT_TRUE(wait_asleep(self->child));
	cs_config_init(&self->cfg, CYCSAMPLE_TARGET_PID, self->child);
	CS_ASSERT_SESSION(&s, &self->cfg);
	ASSERT_EQ(0, cs_start(s.fd));
	p = (struct pollfd){ .fd = s.fd, .events = POLLIN };
	EXPECT_EQ(0, poll(&p, 1, 500)) TH_LOG("revents %#x for a sleeping target", p.revents);
	EXPECT_EQ(0, cs_stop(s.fd));
	cs_session_close(&s);
}

TEST_F(sampling, poll_reports_pollin_at_the_watermark)
{
	struct pollfd p;
	struct cs_session s;
	uint64_t unread = 0;
	unsigned int i;

	SAMPLING_BEGIN();
	self->child = cs_spawn_spinner();
	ASSERT_LT(0, self->child);
	cs_config_init(&self->cfg, CYCSAMPLE_TARGET_PID, self->child);
	self->cfg.wakeup_bytes = 256;
	CS_ASSERT_SESSION(&s, &self->cfg);
	ASSERT_EQ(0, cs_start(s.fd));
	p = (struct pollfd){ .fd = s.fd, .events = POLLIN };
	EXPECT_EQ(1, poll(&p, 1, 3000));
	EXPECT_TRUE(p.revents & POLLIN);
	for (i = 0; i < s.info.nr_rings; i++)
		if (cs_ring_unread(&s, i) > unread)
			unread = cs_ring_unread(&s, i);
	EXPECT_LE(256, unread);
	EXPECT_EQ(0, cs_stop(s.fd));
	cs_session_close(&s);
}

/*
 * Every watermark CONFIGURE accepts is reached: a reader that polls without
 * a timeout is woken.  The largest ones are tried; a module that accepted
 * one the ring cannot reach would leave poll() asleep until the harness
 * kills the test.
 */
TEST_F_TIMEOUT(sampling, poll_without_timeout_wakes_at_every_accepted_watermark, 60)
{
	long page = sysconf(_SC_PAGESIZE);
	__u32 ring = CYCSAMPLE_MIN_RING_PAGES * page;
	const __u32 marks[] = { ring, ring - CYCSAMPLE_MAX_RECORD_SIZE + 8,
				ring - CYCSAMPLE_MAX_RECORD_SIZE };
	unsigned int i, accepted = 0;
	struct cs_session s;
	struct pollfd p;
	int err;

	SAMPLING_BEGIN();
	self->child = cs_spawn_spinner();
	ASSERT_LT(0, self->child);
	for (i = 0; i < sizeof(marks) / sizeof(marks[0]); i++) {
		cs_config_init(&self->cfg, CYCSAMPLE_TARGET_PID, self->child);
		self->cfg.ring_pages = CYCSAMPLE_MIN_RING_PAGES;
		self->cfg.flags = CYCSAMPLE_CFG_USER_CHAIN | CYCSAMPLE_CFG_REGS_USER;
		self->cfg.wakeup_bytes = marks[i];
		err = cs_session_open(&s, &self->cfg, NULL);
		if (err) {
			EXPECT_EQ(EINVAL, err) TH_LOG("wakeup_bytes %u", marks[i]);
			continue;
		}
		accepted++;
		ASSERT_EQ(0, cs_start(s.fd));
		p = (struct pollfd){ .fd = s.fd, .events = POLLIN };
		TH_LOG("wakeup_bytes %u of %u: poll without timeout", marks[i], ring);
		EXPECT_EQ(1, poll(&p, 1, -1));
		EXPECT_TRUE(p.revents & POLLIN);
		EXPECT_EQ(0, cs_stop(s.fd));
		cs_session_close(&s);
	}
	EXPECT_LT(0, accepted) TH_LOG("no watermark accepted");
}

/* The ring with the most unread bytes, and how many. */
static unsigned int fullest_ring(const struct cs_session *s, uint64_t *unread)
{
	unsigned int i, best = 0;

	*unread = 0;
	for (i = 0; i < s->info.nr_rings; i++) {
		if (cs_ring_unread(s, i) > *unread) {
			*unread = cs_ring_unread(s, i);
			best = i;
		}
	}
	return best;
}

/*
 * Spawn @fn with a go pipe under a session with @flags whose 1 MiB rings
 * wake the reader only when nearly full, send the go byte, and expect
 * POLLIN well before that watermark (@pollin), or none for two seconds of
 * @fn's running; the records read then are in self->recs.  MMAP records
 * refused (no kprobes) skip the test.
 */
static void poll_before_the_watermark(struct __test_metadata *_metadata,
				      FIXTURE_DATA(sampling) * self, int (*fn)(void *), __u32 flags,
				      bool pollin)
{
	long page = sysconf(_SC_PAGESIZE);
	struct cycsample_info info;
	const char *step = "";
	struct cs_session s;
	uint64_t unread;
	struct pollfd p;
	int go[2], n, err;

	ASSERT_EQ(0, pipe(go));
	self->child = cs_spawn(fn, go);
	ASSERT_LT(0, self->child);
	cs_config_init(&self->cfg, CYCSAMPLE_TARGET_PID, self->child);
	self->cfg.flags |= flags;
	self->cfg.ring_pages = (1 << 20) / page;
	self->cfg.wakeup_bytes = (1 << 20) - CYCSAMPLE_MAX_RECORD_SIZE;
	err = cs_session_open(&s, &self->cfg, &step);
	if (err == EOPNOTSUPP && (flags & CYCSAMPLE_CFG_MMAP))
		SKIP(return, "no kprobes: CONFIGURE refuses MMAP records (EOPNOTSUPP)");
	ASSERT_EQ(0, err) TH_LOG("%s: %s", step, strerror(err));
	ASSERT_EQ(0, cs_start(s.fd));
	ASSERT_EQ(1, write(go[1], "g", 1));
	p = (struct pollfd){ .fd = s.fd, .events = POLLIN };
	n = poll(&p, 1, pollin ? 20000 : 2000);
	fullest_ring(&s, &unread);
	TH_LOG("poll: %d, revents %#x, %llu bytes unread of a %u-byte watermark", n, p.revents,
	       (unsigned long long)unread, self->cfg.wakeup_bytes);
	if (pollin) {
		EXPECT_EQ(1, n);
		EXPECT_TRUE(p.revents & POLLIN);
		EXPECT_GT(self->cfg.wakeup_bytes, unread);
	} else {
		EXPECT_EQ(0, n);
	}
	cs_drain(&s, &self->recs);
	EXPECT_EQ(0, cs_stop(s.fd));
	EXPECT_EQ(0, cs_session_info(&s));
	info = s.info;
	cs_session_close(&s);
	CS_ASSERT_RECS_OK(&self->recs, &info);
}

/*
 * A reader that sleeps until the watermark still hears of an exec at once:
 * it reads the new program's maps from /proc, which it can only do while the
 * program runs.  The ring is far from its watermark when the EXEC record
 * comes (the module from before urgent records slept through it).
 */
TEST_F_TIMEOUT(sampling, poll_reports_pollin_at_an_exec_before_the_watermark, 60)
{
	SAMPLING_BEGIN();
	poll_before_the_watermark(_metadata, self, mark_then_exec, 0, true);
	EXPECT_NE(NULL, cs_find_record(&self->recs, CYCSAMPLE_REC_EXEC));
}

/* Child: after the go byte, fork a spinner (no exec) and wait for it. */
static int fork_a_spinner(void *arg)
{
	const int *go = arg;
	pid_t pid;
	char c;

	if (read(go[0], &c, 1) != 1)
		return 1;
	pid = fork();
	if (pid < 0)
		return 1;
	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		cs_spin_outer();
	}
	waitpid(pid, NULL, 0);
	return 0;
}

/* The same for a process that is new to the session without an exec: its first sample. */
TEST_F_TIMEOUT(sampling, poll_reports_pollin_at_a_new_process_before_the_watermark, 60)
{
	bool other = false;
	size_t i;

	SAMPLING_BEGIN();
	poll_before_the_watermark(_metadata, self, fork_a_spinner, 0, true);
	for (i = 0; i < self->recs.n; i++) {
		const struct cycsample_sample *smp = cs_sample(&self->recs.v[i]);

		if (smp && smp->pid != (__u32)self->child)
			other = true;
	}
	EXPECT_TRUE(other) TH_LOG("no sample of the forked process");
}

#define CS_FORK_RECORDS (CYCSAMPLE_CFG_MMAP | CYCSAMPLE_CFG_FORK)

/*
 * The process forked without an exec gets a FORK record instead of the
 * wakeup: it names the target as the parent, and comes before the
 * process's first sample.
 */
TEST_F_TIMEOUT(sampling, fork_record_tells_a_new_process_without_a_wakeup, 60)
{
	const struct cycsample_fork *f = NULL;
	uint64_t first = UINT64_MAX;
	unsigned int nf = 0;
	pid_t grandchild = 0;
	size_t i;

	SAMPLING_BEGIN();
	/* FORK records need MMAP records; the reader then reads nothing while it runs */
	poll_before_the_watermark(_metadata, self, fork_a_spinner, CS_FORK_RECORDS, false);
	for (i = 0; i < self->recs.n; i++) {
		const struct cycsample_sample *smp = cs_sample(&self->recs.v[i]);

		if (cs_hdr(&self->recs.v[i])->type == CYCSAMPLE_REC_FORK) {
			f = self->recs.v[i].buf;
			nf++;
		} else if (smp && smp->pid != (__u32)self->child) {
			grandchild = smp->pid;
			first = smp->time < first ? smp->time : first;
		}
	}
	ASSERT_NE(0, grandchild) TH_LOG("no sample of the forked process");
	ASSERT_NE(NULL, f) TH_LOG("no FORK record");
	EXPECT_EQ(1, nf);
	EXPECT_EQ((__u32)grandchild, f->pid);
	EXPECT_EQ(f->pid, f->tid);
	EXPECT_EQ((__u32)self->child, f->ppid);
	EXPECT_LE(f->time, first);
}

/* An EXEC record does not wake such a reader either: MMAP records tell the new program. */
TEST_F_TIMEOUT(sampling, fork_records_leave_an_exec_to_the_watermark, 60)
{
	SAMPLING_BEGIN();
	poll_before_the_watermark(_metadata, self, mark_then_exec, CS_FORK_RECORDS, false);
	EXPECT_NE(NULL, cs_find_record(&self->recs, CYCSAMPLE_REC_EXEC));
	EXPECT_EQ(NULL, cs_find_record(&self->recs, CYCSAMPLE_REC_FORK));
}

/* Child: a subreaper (as a service manager is) that forks a spinner. */
static int subreaper_forks_a_spinner(void *arg)
{
	if (prctl(PR_SET_CHILD_SUBREAPER, 1))
		return 1;
	return fork_a_spinner(arg);
}

/*
 * A parent that may have adopted its child (a subreaper, an init) cannot
 * vouch for the maps the child has: no FORK record, and the child's first
 * sample wakes the reader, who reads them from /proc.
 */
TEST_F_TIMEOUT(sampling, fork_records_skip_the_children_of_a_subreaper, 60)
{
	SAMPLING_BEGIN();
	poll_before_the_watermark(_metadata, self, subreaper_forks_a_spinner, CS_FORK_RECORDS,
				  true);
	EXPECT_EQ(NULL, cs_find_record(&self->recs, CYCSAMPLE_REC_FORK));
}

/*
 * A reader may leave records unread.  One that drained only part of the
 * ring after a wakeup, and sleeps with less than the watermark unread, is
 * woken when the unread bytes reach the watermark again, not a whole
 * watermark of writing after the last wakeup (half a watermark later, here:
 * the module before this rule woke it at 1.5 watermarks).
 */
TEST_F_TIMEOUT(sampling, poll_wakes_a_partly_drained_reader_at_the_watermark, 60)
{
	long page = sysconf(_SC_PAGESIZE);
	__u32 ring = 256 << 10, mark = ring / 4;
	struct cycsample_ring_header *h;
	struct cs_session s;
	uint64_t unread, head;
	struct pollfd p;
	unsigned int i;
	int n;

	SAMPLING_BEGIN();
	self->child = cs_spawn_spinner();
	ASSERT_LT(0, self->child);
	ASSERT_EQ(0, cs_pin(self->child, 0));
	cs_config_init(&self->cfg, CYCSAMPLE_TARGET_PID, self->child);
	self->cfg.ring_pages = ring / page;
	self->cfg.wakeup_bytes = mark;
	CS_ASSERT_SESSION(&s, &self->cfg);
	ASSERT_EQ(0, cs_start(s.fd));
	p = (struct pollfd){ .fd = s.fd, .events = POLLIN };
	ASSERT_EQ(1, poll(&p, 1, 20000));
	i = fullest_ring(&s, &unread);
	ASSERT_LE(mark, unread);
	/* leave half a watermark unread: record boundaries do not matter to the module */
	h = cs_ring(&s, i);
	head = __atomic_load_n(&h->data_head, __ATOMIC_ACQUIRE);
	__atomic_store_n(&h->data_tail, head - mark / 2, __ATOMIC_RELEASE);
	p = (struct pollfd){ .fd = s.fd, .events = POLLIN };
	n = poll(&p, 1, 20000);
	unread = cs_ring_unread(&s, i);
	TH_LOG("poll: %d; %llu bytes unread at the wakeup, watermark %u", n,
	       (unsigned long long)unread, mark);
	ASSERT_EQ(1, n);
	EXPECT_GT(mark + mark / 4, unread);
	EXPECT_EQ(0, cs_stop(s.fd));
	cs_session_close(&s);
}

TEST_HARNESS_MAIN
