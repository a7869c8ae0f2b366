/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cycsample - internal interfaces between the module's files.
 *
 * main.c      module init/exit, parameters, the misc device, the cpuhp state
 * device.c    file operations and ABI validation
 * session.c   session lifetime, configure/start/stop, targets
 * policy.c    what perf_event_open() would refuse: paranoid level, targets,
 *             frequency, kernel addresses
 * limits.c    what one user may hold: sessions, ring memory (as perf_mmap())
 * sysctl.c    the perf and kallsyms sysctls the kernel does not export
 * pmus.c      the core PMUs of a session: which one covers each CPU, with
 *             which event, and the software clock where one cannot sample
 * counters.c  perf kernel counters: per task (the attach loop) or per CPU
 * forks.c     clones that START's scans cannot see: attached as they start
 * mappings.c  MMAP records: the executable mappings the sampled tasks make
 * ring.c      ring memory, the mapping, the producer side, wakeups
 * sampler.c   the overflow handler and the records it writes
 * callchain*.c kernel and user callchains, register capture per architecture
 *             (callchain-aarch32.c: 32-bit tasks on arm64)
 */
#ifndef CYCS_INTERNAL_H
#define CYCS_INTERNAL_H

#include <linux/types.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/irq_work.h>
#include <linux/timer.h>
#include <linux/workqueue.h>
#include <linux/perf_event.h>
#include <linux/pid_namespace.h>
#include <linux/cycsample.h>

/* Module parameters (main.c). */
extern unsigned int cycs_max_sessions;
extern bool cycs_unprivileged;
extern unsigned long cycs_unpriv_min_period;
extern unsigned int cycs_fallback_mhz;
extern unsigned int cycs_max_counters;
extern int cycs_cpuhp_state;

/* Enough unwinder entries for the handler's own frames plus a full chain. */
#define CYCS_KSTACK_ENTRIES (CYCSAMPLE_MAX_STACK + 64)

/*
 * Per-CPU scratch space shared by all sessions: the record under
 * construction and the raw kernel stack.  @nest guards both against a
 * handler nested on the same CPU (an NMI over a hardirq-context handler).
 */
struct cycs_scratch {
	int nest;
	unsigned long kstack[CYCS_KSTACK_ENTRIES];
	union {
		struct cycsample_sample sample;
		u64 words[CYCSAMPLE_MAX_RECORD_SIZE / sizeof(u64)];
	} rec;
};

extern struct cycs_scratch __percpu *cycs_scratch;

/* device.c */
extern const struct file_operations cycs_fops;

/* ---- sysctl.c ---------------------------------------------------------- */

enum cycs_sysctl {
	CYCS_SYSCTL_PARANOID, /* kernel.perf_event_paranoid */
	CYCS_SYSCTL_SAMPLE_RATE, /* kernel.perf_event_max_sample_rate */
	CYCS_SYSCTL_MLOCK_KB, /* kernel.perf_event_mlock_kb */
	CYCS_SYSCTL_KPTR_RESTRICT, /* kernel.kptr_restrict */
	CYCS_NR_SYSCTLS,
};

struct cycs_sysctls {
	int val[CYCS_NR_SYSCTLS];
};

void cycs_sysctls_read(unsigned long mask, struct cycs_sysctls *out);

/* ---- limits.c ---------------------------------------------------------- */

/* Ring memory charged by cycs_charge_rings(): to whom, and how much. */
struct cycs_charge {
	const struct cred *cred; /* its user was charged; NULL when nothing is */
	struct mm_struct *mm; /* grabbed (mm_count) */
	unsigned long user_pages; /* in the user's perf budget */
	unsigned long pinned_pages; /* in mm->pinned_vm and the uid's pinned pages */
};

int cycs_limit_open(bool *counted);
void cycs_limit_release(kuid_t uid);
void cycs_limits_exit(void);
int cycs_charge_rings(struct cycs_charge *c, unsigned long pages, const struct cycs_charge *old,
		      const struct cycs_sysctls *sc);
void cycs_uncharge_rings(struct cycs_charge *c);

/* ---- ring.c ------------------------------------------------------------ */

/*
 * One CPU's ring.  Only the producer (the handler on this CPU, or process
 * context once no counter of the session exists) changes these fields.  The
 * shared header carries copies; the kernel never reads back anything but
 * data_tail from it.
 */
struct cycs_ring {
	struct cycsample_ring_header *hdr;
	u8 *data;
	u64 head; /* private producer position */
	u64 wake_head; /* head at the last wakeup */
	u64 urgent_head; /* head after the last record that wakes at once */
	u64 lost_pending; /* dropped since the last LOST record */
	u64 reserved_used; /* unread bytes at cycs_ring_reserve() */
	u64 lost;
	u64 samples;
	unsigned int cpu;
};

/*
 * The memory the reader maps: control area, then per ring a header page and
 * the data pages.  Reference counted: the session holds one reference and
 * every VMA one more, so the memory outlives the session while mapped.
 */
struct cycs_rings {
	struct kref ref;
	atomic_t maps; /* VMAs currently mapping it */
	void *base; /* vmalloc_user() area */
	size_t size; /* the one valid mmap length */
	unsigned long ctl_pages; /* pages of control area */
	unsigned long ring_pages; /* data pages per ring */
	u64 data_size; /* bytes of data per ring */
	u64 wakeup_bytes;
	struct cycs_charge charge; /* given back when the memory is freed */
	unsigned int nr_rings;
	struct cycs_ring **by_cpu; /* nr_cpu_ids entries */
	struct cycs_ring ring[];
};

enum cycs_put_result {
	CYCS_PUT_LOST, /* no room: dropped and counted */
	CYCS_PUT_OK,
	CYCS_PUT_WAKE, /* written, and the reader should be woken */
};

struct cycs_rings *cycs_rings_alloc(u32 ring_pages, u32 wakeup_bytes, const struct cycs_charge *old,
				    const struct cycs_sysctls *sc);
void cycs_rings_put(struct cycs_rings *rings);
bool cycs_rings_mapped(struct cycs_rings *rings);
void cycs_rings_get_map(struct cycs_rings *rings);
void cycs_rings_put_map(struct cycs_rings *rings);
int cycs_rings_mmap(struct cycs_rings *rings, struct vm_area_struct *vma);
enum cycs_put_result cycs_ring_put(struct cycs_rings *rings, struct cycs_ring *r, const void *rec,
				   u32 len, u64 now);
void *cycs_ring_reserve(struct cycs_rings *rings, struct cycs_ring *r, u32 min, u32 max,
			bool *full);
enum cycs_put_result cycs_ring_commit(struct cycs_rings *rings, struct cycs_ring *r, u32 len);
void cycs_ring_lose(struct cycs_ring *r);
void cycs_ring_flush_lost(struct cycs_rings *rings, struct cycs_ring *r, u64 now);
u64 cycs_ring_unread(struct cycs_rings *rings, struct cycs_ring *r);
void cycs_ring_mark_urgent(struct cycs_ring *r);
bool cycs_ring_urgent(struct cycs_ring *r);

/* ---- session.c --------------------------------------------------------- */

/* Per-CPU counters of one session, summed by CYCSAMPLE_IOC_INFO. */
struct cycs_stats {
	u64 samples;
	u64 lost;
	u64 throttled;
	u64 dropped_kernel;
	u64 dropped_other;
	u64 cost_min;
	u64 cost_max;
	u64 cost_total;
	u64 cost_count;
	u64 cost_hist[CYCSAMPLE_COST_BUCKETS];
	u64 pmu_samples[CYCSAMPLE_MAX_PMUS];
	u64 last_exec; /* see cycs_check_exec() */
};

/*
 * Counter slots of a task: one per entry of the PMU list (those that count
 * cycles), and one for the software clock that covers the CPUs of the
 * others.
 */
#define CYCS_CLOCK_SLOT CYCSAMPLE_MAX_PMUS
#define CYCS_NR_SLOTS (CYCSAMPLE_MAX_PMUS + 1)

/* A counter attached directly to one thread of a PID or TID target. */
struct cycs_task_event {
	struct list_head node;
	struct perf_event *event;
	struct task_struct *task; /* referenced until the counter goes */
	unsigned int slot;
	unsigned int nr_children; /* inherited copies seen by cycs_cover_build() */
};

/* s->pmu_of_cpu[cpu] before any PMU covers that CPU */
#define CYCS_NO_PMU 0xff

/**
 * struct cycs_pmu - one entry of a session's PMU list (INFO's pmus[])
 * @pmu:	the perf PMU, only ever compared with event->pmu; NULL for
 *		the entry of CPUs that have no PMU that can count cycles
 * @name:	the PMU's name, or the software clock's
 * @type:	the PMU's perf type, 0 without one
 * @caps:	its capabilities, as found at START
 * @attr_type:	perf_event_attr.type of its counters
 * @config:	perf_event_attr.config of its counters
 * @decided:	the first counter of this START chose cycles or the clock
 * @sw:		its CPUs are on the software clock
 * @event_kind:	enum cycsample_event in use
 * @fallback_reason: enum cycsample_fallback
 * @fallback_errno: the PMU's error when it was not used
 */
struct cycs_pmu {
	const struct pmu *pmu;
	char name[32];
	u32 type;
	int caps;
	u32 attr_type;
	u64 config;
	bool decided;
	bool sw;
	u32 event_kind;
	u32 fallback_reason;
	s32 fallback_errno;
};

/*
 * The exec ids of the target's processes (the target, and children forked
 * after START), so that each exec gives one EXEC record: a set-associative
 * table of (tgid << 32 | low 32 bits of self_exec_id), lock-free for the
 * handler.
 */
#define CYCS_EXEC_WAYS 4
#define CYCS_EXEC_BUCKETS 1024

/**
 * struct cycs_session - one open file of /dev/cycsample
 * @lock:	serializes ioctls, poll, the exit work and release; never taken
 *		by mmap(), which runs under mmap_lock, while START takes perf's
 *		ctx->mutex under @lock and perf takes mmap_lock under ctx->mutex
 * @rings_lock:	guards @rings against mmap(): taken, inside @lock, to replace
 *		them, and alone by mmap() to take a mapping reference
 * @state:	enum cycsample_state; written under @lock, read locklessly
 * @active:	the handler may write records (cleared before counters go)
 * @privileged:	the opener was perfmon_capable()
 * @counted:	the session counts against its opener's max_sessions
 * @cred:	the opener's credentials, by which every check is made
 * @kaddr_ok:	kernel addresses may be written for this reader (decided at
 *		CONFIGURE by the rule of /proc/kallsyms)
 * @cfg:	the accepted configuration, defaults filled in
 * @target_pid:	PID/TID target, found at CONFIGURE
 * @target_task: the target (thread group leader or thread) while running
 * @target_tgid: its thread group id in the initial namespace
 * @target_ids:	its pid and tid in @pid_ns, for the EXIT record (taken at
 *		START: a reaped task has no pid left to translate)
 * @pid_ns:	the PID namespace of the caller of CONFIGURE, in which it
 *		named the target (reference held): the records number tasks
 *		as it does (cycs_task_ids())
 * @exec_ids:	CYCS_EXEC_BUCKETS x CYCS_EXEC_WAYS entries (PID/TID targets)
 * @pmus:	the PMU list of this START
 * @nr_pmus:	entries in use
 * @pmu_of_cpu:	index in @pmus of each CPU's entry, nr_cpu_ids entries
 * @clock_pmu:	perf's PMU of our software clock counters, once there is one
 * @clock_period_ns: software clock period, 0 for cycles or frequency mode
 * @task_events: struct cycs_task_event list (PID/TID targets)
 * @nr_task_events: its length, at most max_counters
 * @cpu_events:	per-CPU counters (CPUS target), nr_cpu_ids entries
 * @cpuhp_node:	our instance of the module's cpuhp state
 * @cpuhp_added: @cpuhp_node is registered
 * @cpuhp_starting: online callbacks run for START, so errors fail START
 * @rings:	the ring memory (reference held); written under @lock and @rings_lock
 * @stats:	per-CPU counters
 * @wake_work:	wakes @wq from the handler's context
 * @wq:		poll() waiters
 * @exit_timer:	every CYCS_EXIT_POLL while running: queues @exit_work
 *		unless the handler ran since it last looked
 * @exit_work:	notices the target's exit, purges the exec ids
 * @exit_calls:	handler calls at the timer's last look (written by the timer
 *		and by cycs_exit_arm(), from START and the work)
 * @exit_skipped: periods in a row @exit_timer let pass without @exit_work
 * @file:	the open file (no reference: it owns us), which forks.c
 *		references while a clone's attach is queued
 * @fork_node:	in forks.c's list of armed sessions while @fork_armed
 * @fork_armed:	clones are watched (from START until the counters go)
 * @fork_run:	counts the STARTs that armed it, so that an attach queued
 *		by one run is not done by the next
 * @maps_node:	in mappings.c's list of armed sessions while @maps_armed
 * @maps_armed: MMAP records are written (CYCSAMPLE_CFG_MMAP, from START
 *		until the counters go)
 * @rcu:	frees us a grace period late: forks.c's probe may still hold
 *		our address from one of our counters (see cycs_session_destroy())
 */
struct cycs_session {
	struct mutex lock; /* see above: ioctls, poll, exit work */
	spinlock_t rings_lock; /* @rings for mmap() */
	u32 state;
	bool active;
	bool privileged;
	bool counted;
	const struct cred *cred;
	bool kaddr_ok;
	struct cycsample_config cfg;

	struct pid *target_pid;
	struct task_struct *target_task;
	pid_t target_tgid;
	u32 target_ids[2];
	struct pid_namespace *pid_ns;
	u64 *exec_ids;

	struct cycs_pmu pmus[CYCSAMPLE_MAX_PMUS];
	unsigned int nr_pmus;
	u8 *pmu_of_cpu;
	const struct pmu *clock_pmu;
	u64 clock_period_ns;

	struct list_head task_events;
	unsigned int nr_task_events;
	struct perf_event **cpu_events;
	struct hlist_node cpuhp_node;
	bool cpuhp_added;
	bool cpuhp_starting;

	struct cycs_rings *rings;
	struct cycs_stats __percpu *stats;
	struct irq_work wake_work;
	wait_queue_head_t wq;
	struct timer_list exit_timer;
	struct work_struct exit_work;
	u64 exit_calls;
	unsigned int exit_skipped;

	struct file *file;
	struct list_head fork_node;
	bool fork_armed;
	u64 fork_run;
	struct list_head maps_node;
	bool maps_armed;
	struct rcu_head rcu;
};

struct cycs_session *cycs_session_create(struct file *file, bool privileged, bool counted);
void cycs_session_destroy(struct cycs_session *s);
int cycs_session_configure(struct cycs_session *s, struct cycsample_config *cfg);
int cycs_session_start(struct cycs_session *s);
int cycs_session_stop(struct cycs_session *s);
void cycs_session_info(struct cycs_session *s, struct cycsample_info *info);
__poll_t cycs_session_poll(struct cycs_session *s);
struct cycs_rings *cycs_session_map_rings(struct cycs_session *s);

/* ---- policy.c ---------------------------------------------------------- */

int cycs_policy_open(bool *privileged);
int cycs_policy_configure(struct cycs_session *s, struct cycsample_config *cfg,
			  const struct cycs_sysctls *sc, bool *kaddr_ok);
int cycs_may_profile(struct cycs_session *s, struct task_struct *task);
int cycs_may_profile_group(struct cycs_session *s, struct task_struct *leader);

/* ---- pmus.c ------------------------------------------------------------ */

int cycs_pmus_start(struct cycs_session *s);
struct perf_event *cycs_pmus_task_counter(struct cycs_session *s, struct task_struct *task,
					  unsigned int slot);
bool cycs_pmus_slot_wanted(struct cycs_session *s, unsigned int slot);
struct perf_event *cycs_pmus_cpu_counter(struct cycs_session *s, int cpu);
void cycs_pmus_info(struct cycs_session *s, struct cycsample_info *info);

/* ---- counters.c -------------------------------------------------------- */

int cycs_counters_start(struct cycs_session *s);
void cycs_counters_stop(struct cycs_session *s);
void cycs_counters_free(struct cycs_session *s);
bool cycs_counters_ended(struct cycs_session *s);
int cycs_cpu_online(unsigned int cpu, struct hlist_node *node);
int cycs_cpu_offline(unsigned int cpu, struct hlist_node *node);
void cycs_counters_attach_clone(struct cycs_session *s, u64 run);

/* ---- forks.c ----------------------------------------------------------- */

int cycs_forks_arm(struct cycs_session *s);
void cycs_forks_disarm(struct cycs_session *s);

/* ---- mappings.c -------------------------------------------------------- */

int cycs_maps_arm(struct cycs_session *s);
void cycs_maps_disarm(struct cycs_session *s);

/* ---- sampler.c --------------------------------------------------------- */

void cycs_overflow(struct perf_event *event, struct perf_sample_data *data, struct pt_regs *regs);
int cycs_exec_ids_start(struct cycs_session *s);
void cycs_exec_ids_purge(struct cycs_session *s);
void cycs_emit_exit(struct cycs_session *s);
bool cycs_check_exec(struct cycs_session *s, struct cycs_ring *r, u64 now, bool *wake);

/**
 * cycs_put_done - account for a record put in (or dropped from) a ring
 * @s: the session
 * @r: the ring
 * @res: what cycs_ring_put() or cycs_ring_commit() said
 * @urgent: the record should wake the reader now (see cycs_ring_mark_urgent())
 * @wake: set when the reader should be woken
 *
 * Shared by the overflow handler and the MMAP probe; inline for the handler.
 *
 * Return: the record went in (a drop is counted in the session's lost).
 */
static inline bool cycs_put_done(struct cycs_session *s, struct cycs_ring *r,
				 enum cycs_put_result res, bool urgent, bool *wake)
{
	if (res == CYCS_PUT_LOST) {
		this_cpu_inc(s->stats->lost);
		return false;
	}
	if (res == CYCS_PUT_WAKE)
		*wake = true;
	if (urgent) {
		cycs_ring_mark_urgent(r);
		*wake = true;
	}
	return true;
}

/**
 * cycs_task_ids - a task's pid and tid as the session's reader names them
 * @s: a configured session
 * @t: the task
 * @ids: its thread group id, then its thread id
 *
 * In the PID namespace of the caller of CONFIGURE (@s->pid_ns), where it
 * named the target, as perf gives them in its event owner's, so that a
 * reader in a container finds them in its own /proc; 0 for a task that
 * namespace cannot see (a CPUS session's sample of a process outside it).
 * The initial namespace, the common case, reads the numbers in place; the
 * others walk the task's struct pid under RCU, which the overflow handler
 * may do as perf does.
 */
static __always_inline void cycs_task_ids(const struct cycs_session *s, struct task_struct *t,
					  u32 ids[2])
{
	if (likely(s->pid_ns == &init_pid_ns)) {
		ids[0] = task_tgid_nr(t);
		ids[1] = task_pid_nr(t);
	} else {
		ids[0] = task_tgid_nr_ns(t, s->pid_ns);
		ids[1] = task_pid_nr_ns(t, s->pid_ns);
	}
}

void cycs_flush_lost(struct cycs_session *s);

/* ---- callchain.c and callchain-<arch>.c -------------------------------- */

unsigned int cycs_kernel_chain(struct pt_regs *regs, unsigned long *raw, u64 *out, unsigned int max,
			       u32 *flags);
struct pt_regs *cycs_user_regs(struct pt_regs *regs);

/* per architecture */
extern const u8 cycs_arch;
void cycs_arch_sample_regs(struct cycsample_sample *smp, struct pt_regs *regs);
bool cycs_arch_irqs_masked(struct pt_regs *regs);
bool cycs_arch_user_chain_unsafe(struct pt_regs *regs);
bool cycs_arch_compat(struct pt_regs *uregs);
unsigned int cycs_arch_user_chain(struct pt_regs *uregs, u64 *out, unsigned int max, u32 *flags);
unsigned int cycs_arch_user_regs(struct pt_regs *uregs, u64 *out);

/* callchain-aarch32.c: AArch32 tasks on arm64 */
unsigned int cycs_a32_user_chain(struct pt_regs *uregs, u64 *out, unsigned int n, unsigned int max,
				 u32 *flags);
unsigned int cycs_a32_user_regs(struct pt_regs *uregs, u64 *out);

#endif /* CYCS_INTERNAL_H */
