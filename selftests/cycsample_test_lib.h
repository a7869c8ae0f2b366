/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the cycsample selftests: sessions (open, configure,
 * map), the ring reader, record checks, workloads with known code
 * addresses, child processes, module parameters and privilege drops.
 *
 * Functions return 0 or a positive errno, never -1 with errno, so that a
 * test can write ASSERT_EQ(EINVAL, cs_configure(fd, &cfg)).
 */
#ifndef CYCSAMPLE_TEST_LIB_H
#define CYCSAMPLE_TEST_LIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/cycsample.h>

#define CS_NODE CYCSAMPLE_DEVICE
#define CS_MODULE_DIR "/sys/module/cycsample"
#define CS_PARAM_DIR CS_MODULE_DIR "/parameters"
#define CS_SAMPLE_RATE "/proc/sys/kernel/perf_event_max_sample_rate"
/* 0: perf never lowers CS_SAMPLE_RATE for slow handlers */
#define CS_CPU_TIME_PERCENT "/proc/sys/kernel/perf_cpu_time_max_percent"

/* A period that gives a few hundred samples a second per busy CPU under TCG. */
#define CS_PERIOD 1000000ULL

#define CS_NOBODY 65534

#if defined(__aarch64__)
#define CS_KERNEL_VA_START 0xffff000000000000ULL
#define CS_ARCH CYCSAMPLE_ARCH_ARM64
#define CS_NR_USER_REGS 34 /* x0..x30, sp, pc, pstate */
#define CS_USER_REG_PC 32
#elif defined(__x86_64__)
#define CS_KERNEL_VA_START 0xffff800000000000ULL
#define CS_ARCH CYCSAMPLE_ARCH_X86_64
#define CS_NR_USER_REGS 21 /* struct pt_regs: r15 .. ss */
#define CS_USER_REG_PC 16 /* ip */
#else
#error "cycsample selftests support arm64 and x86_64"
#endif

/* ---------------------------------------------------------------------- */
/* Sessions                                                               */
/* ---------------------------------------------------------------------- */

struct cs_recs;

struct cs_session {
	int fd;
	struct cycsample_info info; /* as of the last cs_session_info() */
	void *base; /* the mapping, or NULL */
	size_t map_len;
};

int cs_open(void); /* fd, or -errno */
int cs_ioctl(int fd, unsigned long cmd, void *arg); /* 0 or errno */
int cs_configure(int fd, const struct cycsample_config *cfg);
int cs_info(int fd, struct cycsample_info *info);
int cs_start(int fd);
int cs_stop(int fd);

/* size, event CYCLES, period CS_PERIOD, everything else 0 (defaults). */
void cs_config_init(struct cycsample_config *cfg, __u32 target_type, __s32 target);

/*
 * open + CONFIGURE + INFO + mmap of info.mmap_size.  On failure returns the
 * errno and names the failing step in *step (if step is not NULL); the
 * session is then closed.
 */
int cs_session_open(struct cs_session *s, const struct cycsample_config *cfg, const char **step);
int cs_session_info(struct cs_session *s); /* refresh s->info */
void cs_session_close(struct cs_session *s); /* munmap and close, whatever is open */

/*
 * The common run: cs_session_open(), START, cs_collect_for(@ms), STOP (unless
 * the target ended the session), a last drain, INFO into @info, close.
 * Returns 0 or the errno of the failing step, named in *step.
 */
int cs_sample_for(const struct cycsample_config *cfg, unsigned int ms, struct cs_recs *out,
		  struct cycsample_info *info, const char **step);

struct cycsample_control *cs_control(const struct cs_session *s);
struct cycsample_ring_header *cs_ring(const struct cs_session *s, unsigned int i);
const unsigned char *cs_ring_data(const struct cs_session *s, unsigned int i);

/*
 * NULL if the control page and ring directory are consistent with
 * s->info and the documented layout; otherwise what is wrong.
 */
const char *cs_control_problem(const struct cs_session *s, char *buf, size_t len);

/* ---------------------------------------------------------------------- */
/* Records                                                                */
/* ---------------------------------------------------------------------- */

struct cs_rec {
	unsigned int ring; /* index in the ring directory */
	unsigned int ring_cpu; /* that ring's CPU */
	uint64_t pos; /* free-running position in the ring */
	void *buf; /* a copy of the whole record */
};

struct cs_recs {
	struct cs_rec *v;
	size_t n, cap;
	unsigned int errors; /* protocol violations seen while reading */
	char error[160]; /* the first one */
};

static inline const struct cycsample_record_header *cs_hdr(const struct cs_rec *r)
{
	return r->buf;
}

/* The record as a sample, or NULL if it is another type. */
static inline const struct cycsample_sample *cs_sample(const struct cs_rec *r)
{
	return cs_hdr(r)->type == CYCSAMPLE_REC_SAMPLE ? r->buf : NULL;
}

/* The record as a CYCSAMPLE_CFG_PC_ONLY sample, or NULL if it is another type. */
static inline const struct cycsample_sample_pc *cs_sample_pc(const struct cs_rec *r)
{
	return cs_hdr(r)->type == CYCSAMPLE_REC_SAMPLE_PC ? r->buf : NULL;
}

/* What a sample record of either kind carries in common. */
struct cs_sample_head {
	__u32 pid, tid, flags;
	__u64 pc;
};

/* Fill @h from a SAMPLE or SAMPLE_PC record; false for any other record. */
static inline bool cs_sample_head(const struct cs_rec *r, struct cs_sample_head *h)
{
	const struct cycsample_sample_pc *pc = cs_sample_pc(r);
	const struct cycsample_sample *smp = cs_sample(r);

	if (smp)
		*h = (struct cs_sample_head){ smp->pid, smp->tid, smp->flags, smp->pc };
	else if (pc)
		*h = (struct cs_sample_head){ pc->pid, pc->tid, pc->flags, pc->pc };
	return smp || pc;
}

static inline const __u64 *cs_kernel_frames(const struct cycsample_sample *smp)
{
	return smp->frames;
}

static inline const __u64 *cs_user_frames(const struct cycsample_sample *smp)
{
	return smp->frames + smp->nr_kernel;
}

static inline const __u64 *cs_user_regs(const struct cycsample_sample *smp)
{
	return smp->frames + smp->nr_kernel + smp->nr_user;
}

/*
 * Read every complete record of every ring following the uapi protocol
 * (acquire data_head, copy with wrap-around, release data_tail), append a
 * copy of each to @out.  Returns the number of records read.  A protocol
 * violation (bad head/tail distance, record size not a multiple of 8,
 * smaller than a header, larger than CYCSAMPLE_MAX_RECORD_SIZE or than the
 * unread bytes) is counted in out->errors and the rest of that ring is
 * skipped.
 */
long cs_drain(struct cs_session *s, struct cs_recs *out);

/* Same, for one ring only. */
long cs_drain_ring(struct cs_session *s, unsigned int ring, struct cs_recs *out);

/* Bytes not yet consumed in ring @i (data_head - data_tail). */
uint64_t cs_ring_unread(const struct cs_session *s, unsigned int i);

/* poll()+drain for @ms milliseconds, then a last drain. Returns records read. */
long cs_collect_for(struct cs_session *s, unsigned int ms, struct cs_recs *out);

void cs_recs_free(struct cs_recs *r);

/*
 * NULL if the record is well formed for a session described by @info:
 * known type, size exactly what its type and counts imply, counts within
 * max_stack, reserved fields zero, arch right, comm terminated.
 */
const char *cs_record_problem(const struct cs_rec *r, const struct cycsample_info *info, char *buf,
			      size_t len);

/*
 * NULL if reading met no protocol error, every record passes
 * cs_record_problem() and times do not go backwards within a ring.
 */
const char *cs_recs_problem(const struct cs_recs *r, const struct cycsample_info *info, char *buf,
			    size_t len);

struct cs_counts {
	unsigned long records, samples, lost_records, exec, exits, mmaps, forks;
	unsigned long pc_only; /* samples that are SAMPLE_PC records */
	unsigned long user, kernel; /* samples by CYCSAMPLE_SAMPLE_USER / _KERNEL */
	uint64_t lost; /* sum of cycsample_lost.lost */
};

void cs_count(const struct cs_recs *r, struct cs_counts *c);

/* Index of the entry of info->pmus that covers @cpu, or -1. */
int cs_pmu_of_cpu(const struct cycsample_info *info, unsigned int cpu);

/* The last record of @type read, or NULL. */
const void *cs_find_record(const struct cs_recs *r, __u32 type);

/* Samples (of either kind) of one pid (0: any) whose pc lies in [lo, hi). */
unsigned long cs_count_pc_in(const struct cs_recs *r, pid_t pid, const void *lo, const void *hi);

/* ---------------------------------------------------------------------- */
/* Workloads with known code ranges                                       */
/* ---------------------------------------------------------------------- */

/*
 * cs_spin_outer() calls cs_spin_mid() calls cs_spin_leaf(), which spins in
 * user space forever.  Each lives alone in its own section, so
 * [__start_<sec>, __stop_<sec>) is exactly that function's code; frame
 * pointers are kept, also in the leaf.
 */
extern const char __start_cs_text_leaf[], __stop_cs_text_leaf[];
extern const char __start_cs_text_mid[], __stop_cs_text_mid[];
extern const char __start_cs_text_outer[], __stop_cs_text_outer[];

#define CS_IN_TEXT(sec, addr)                                              \
	((uint64_t)(addr) >= (uint64_t)(uintptr_t)__start_cs_text_##sec && \
	 (uint64_t)(addr) < (uint64_t)(uintptr_t)__stop_cs_text_##sec)

void cs_spin_outer(void) __attribute__((noreturn));
/* Spin in user space for @ms milliseconds of CPU time, then return. */
void cs_spin_cpu_ms(unsigned int ms);
/*
 * The same, in code of its own, [__start_cs_text_mark, __stop_cs_text_mark),
 * for "no sample of this code" and "samples of this code, at these times".
 */
extern const char __start_cs_text_mark[], __stop_cs_text_mark[];
void cs_spin_mark_ms(unsigned int ms);
/* getppid() in a loop forever: most time is in the kernel's syscall path. */
void cs_spin_syscalls(void) __attribute__((noreturn));
/* Recurse @depth levels, then spin forever (for callchain depth limits). */
void cs_spin_deep(unsigned int depth) __attribute__((noreturn));

/*
 * A test binary started with CS_SPIN_ENV in its environment does not run
 * its tests; a constructor spins instead, so a test can exec() a target:
 *   "user"      cs_spin_outer()
 *   "priv:<fd>" write geteuid() as an int to <fd>, then spin in cs_spin_priv(),
 *               whose code is [__start_cs_text_priv, __stop_cs_text_priv)
 *   "race"      the exec race's target: CS_RACE_THREADS threads spin, one of
 *               them execs CS_RACE_HELPER (a setuid-root copy) as "race-priv"
 *   "race-priv" as root: append a byte to CS_RACE_COUNT, spin 10 ms in the
 *               code of cs_spin_priv(), become nobody, exec CS_RACE_EXE as
 *               "race"; so the same pid alternates between the two images
 */
#define CS_SPIN_ENV "CYCSAMPLE_SELFTEST_SPIN"
#define CS_RACE_EXE "CYCSAMPLE_RACE_EXE"
#define CS_RACE_HELPER "CYCSAMPLE_RACE_HELPER"
#define CS_RACE_COUNT "CYCSAMPLE_RACE_COUNT"
#define CS_RACE_THREADS 8
extern const char __start_cs_text_priv[], __stop_cs_text_priv[];
/* Path of the running test binary (readlink of /proc/self/exe), or NULL. */
const char *cs_self_exe(void);

/* ---------------------------------------------------------------------- */
/* Processes                                                              */
/* ---------------------------------------------------------------------- */

/*
 * fork(); the child gets SIGKILL when its parent dies, runs fn(arg) and
 * _exit()s with its return value.  Returns the child's pid or -errno.
 * The child (a target, and whatever it clones or forks) runs on the last
 * CPU, see cs_pin_last_cpu(), unless CYCSAMPLE_STRESS_RACES is in the
 * environment; cs_spawn_anywhere() leaves it where the caller may run (a
 * reader that races the target from another CPU).
 */
pid_t cs_spawn(int (*fn)(void *), void *arg);
pid_t cs_spawn_anywhere(int (*fn)(void *), void *arg);
pid_t cs_spawn_spinner(void); /* cs_spin_outer() */
pid_t cs_spawn_syscaller(void); /* cs_spin_syscalls() */
/* SIGKILL and reap, ignoring errors (for cleanup). */
void cs_kill(pid_t pid);
/* waitpid() for at most @ms; returns the wait status or -1 on timeout. */
int cs_wait_ms(pid_t pid, unsigned int ms);

/*
 * Run fn(arg) in a child with real, effective and saved uid and gid set to
 * @uid / @gid and no supplementary groups.  Returns fn's return value
 * (0..255), or -1 if the child failed to drop privileges or died by a signal.
 */
int cs_run_as(uid_t uid, gid_t gid, int (*fn)(void *), void *arg);

/* Pin the calling thread (tid 0) or task @tid to @cpu; 0 or errno. */
int cs_pin(pid_t tid, int cpu);
/*
 * Pin @tid (0: the caller) to the highest CPU the caller may use, so that
 * a target cannot migrate (see Documentation/testing.rst, the kernel's
 * perf bug); 0, ENODEV if there is only one CPU, or errno.
 */
int cs_pin_last_cpu(pid_t tid);

void cs_sleep_ms(unsigned int ms);
uint64_t cs_now_ms(void);

/* ---------------------------------------------------------------------- */
/* System state                                                           */
/* ---------------------------------------------------------------------- */

int cs_read_file(const char *path, char *buf, size_t len); /* 0 or errno */
int cs_write_file(const char *path, const char *s); /* 0 or errno */
int cs_param_get(const char *name, long *val); /* 0 or errno */
int cs_param_set(const char *name, long val); /* 0 or errno */
int cs_sysctl_get(const char *name, long *val); /* /proc/sys/kernel/<name>: 0 or errno */
int cs_sysctl_set(const char *name, long val); /* 0 or errno */
/* Undo the kernel's throttling of perf_event_max_sample_rate (writes 100000). */
void cs_reset_sample_rate(void);
long cs_sample_rate(void);
int cs_module_refcnt(void); /* /sys/module/cycsample/refcnt, or -1 */
int cs_module_refcnt_settles_at(int want); /* the count after up to 2 s */
int cs_nr_possible_cpus(void);
int cs_nr_online_cpus(void);
/* The ring bounds at this kernel's page size (the uapi states them in bytes). */
__u32 cs_max_ring_pages(void);
__u64 cs_default_ring_bytes(void); /* ring_data_size for ring_pages 0 */
bool cs_module_loaded(void);
int cs_rmmod(void); /* one non-blocking delete_module(): 0 or errno */
const char *cs_ko_path(void); /* $CYCSAMPLE_KO or /cycsample/cycsample.ko */
int cs_unload_module(void); /* rmmod, waiting up to 2 s for references: 0 or errno */
int cs_load_module(const char *params); /* finit_module(): 0 or errno */

/* ---------------------------------------------------------------------- */
/* Harness glue (only for files that include kselftest_harness.h first)    */
/* ---------------------------------------------------------------------- */

#ifdef __KSELFTEST_HARNESS_H
/*
 * Call at the top of a test body (never in FIXTURE_SETUP: the 6.1 harness
 * would run the body anyway).  No module: skip.  Module loaded without its
 * device node: that is a failure, not a skip.
 */
#define CS_REQUIRE_DEVICE()                                                                  \
	do {                                                                                 \
		if (!cs_module_loaded())                                                     \
			SKIP(return, "cycsample module not loaded");                         \
		ASSERT_EQ(0, access(CS_NODE, F_OK)) TH_LOG("module loaded but no " CS_NODE); \
	} while (0)

#define CS_REQUIRE_ROOT()                           \
	do {                                        \
		if (geteuid() != 0)                 \
			SKIP(return, "needs root"); \
	} while (0)

/* ASSERT that a session opened; log which step failed and why. */
#define CS_ASSERT_SESSION(s, cfg)                                              \
	do {                                                                   \
		const char *__step = "";                                       \
		int __err = cs_session_open((s), (cfg), &__step);              \
		ASSERT_EQ(0, __err) TH_LOG("%s: %s", __step, strerror(__err)); \
	} while (0)

/* ASSERT that cs_sample_for() worked. */
#define CS_ASSERT_SAMPLE_FOR(cfg, ms, recs, info)                                \
	do {                                                                     \
		const char *__step = "";                                         \
		int __err = cs_sample_for((cfg), (ms), (recs), (info), &__step); \
		ASSERT_EQ(0, __err) TH_LOG("%s: %s", __step, strerror(__err));   \
	} while (0)

/* ASSERT that the records are well formed. */
#define CS_ASSERT_RECS_OK(recs, info)                                                    \
	do {                                                                             \
		char __why[200];                                                         \
		const char *__p = cs_recs_problem((recs), (info), __why, sizeof(__why)); \
		ASSERT_EQ(NULL, __p) TH_LOG("%s", __p);                                  \
	} while (0)
#endif

#endif /* CYCSAMPLE_TEST_LIB_H */
