/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * cycsample - CPU cycle sampling through /dev/cycsample
 *
 * This header is the whole contract between the module, cycread and the
 * selftests.  It stands alone: fixed-width types only, no kernel-internal
 * headers, and it compiles as C and C++.
 *
 * The reader's sequence:
 *
 *	fd = open("/dev/cycsample", O_RDWR | O_CLOEXEC);
 *	ioctl(fd, CYCSAMPLE_IOC_CONFIGURE, &cfg);	  target, event, rings
 *	ioctl(fd, CYCSAMPLE_IOC_INFO, &info);		  geometry: info.mmap_size
 *	base = mmap(NULL, info.mmap_size, PROT_READ | PROT_WRITE,
 *		    MAP_SHARED, fd, 0);
 *	ioctl(fd, CYCSAMPLE_IOC_START);
 *	loop: poll(fd, POLLIN) and drain every ring; POLLHUP ends it
 *	ioctl(fd, CYCSAMPLE_IOC_STOP);
 *
 * Compatibility rules: structs only grow at their end; the kernel reads them
 * with copy_struct_from_user(), so an old reader keeps working and a new
 * reader on an old module gets -E2BIG only if it sets a field the module does
 * not know.  The module recognises a command by its type, number and
 * direction, not by the size _IOW()/_IOWR() encode in it: the size that
 * counts is the struct's size field, so a command built with a larger or
 * smaller struct reaches the same ioctl.  Record types and flags only get
 * added.  An incompatible change bumps CYCSAMPLE_ABI_VERSION, which the
 * control page also carries.
 */
#ifndef _UAPI_LINUX_CYCSAMPLE_H
#define _UAPI_LINUX_CYCSAMPLE_H

#include <linux/types.h>
#include <linux/ioctl.h>

/* The one place the project's version is written (module, dkms, cycread). */
#define CYCSAMPLE_VERSION_MAJOR	0
#define CYCSAMPLE_VERSION_MINOR	1
#define CYCSAMPLE_VERSION_PATCH	0
#define CYCSAMPLE_VERSION	"0.1.0"

#define CYCSAMPLE_ABI_VERSION	1
#define CYCSAMPLE_DEVICE	"/dev/cycsample"

/* ---------------------------------------------------------------------- */
/* Configuration                                                          */
/* ---------------------------------------------------------------------- */

/* struct cycsample_config.target_type */
enum cycsample_target_type {
	CYCSAMPLE_TARGET_PID	= 1,	/* a process: all its threads, new threads and children */
	CYCSAMPLE_TARGET_TID	= 2,	/* one thread only */
	CYCSAMPLE_TARGET_CPUS	= 3,	/* every online CPU, whatever runs there */
};

/* struct cycsample_config.event and struct cycsample_info.event */
enum cycsample_event {
	CYCSAMPLE_EVENT_CYCLES		= 1,	/* request: cycles, else the software clock */
	CYCSAMPLE_EVENT_CLOCK		= 2,	/* request: software clock, never the PMU */
	/* only reported, in cycsample_info.event: */
	CYCSAMPLE_EVENT_HW_CYCLES	= 16,	/* PERF_TYPE_HARDWARE / PERF_COUNT_HW_CPU_CYCLES */
	CYCSAMPLE_EVENT_SW_CPU_CLOCK	= 17,	/* PERF_COUNT_SW_CPU_CLOCK (CPU targets) */
	CYCSAMPLE_EVENT_SW_TASK_CLOCK	= 18,	/* PERF_COUNT_SW_TASK_CLOCK (task targets) */
};

/* struct cycsample_config.flags */
#define CYCSAMPLE_CFG_FREQ		(1U << 0) /* sample_freq is Hz, not a period */
#define CYCSAMPLE_CFG_NO_FALLBACK	(1U << 1) /* fail with the PMU's error, no clock */
#define CYCSAMPLE_CFG_USER_ONLY		(1U << 2) /* exclude kernel mode entirely */
#define CYCSAMPLE_CFG_KERNEL_CHAIN	(1U << 3) /* record kernel callchains */
#define CYCSAMPLE_CFG_USER_CHAIN	(1U << 4) /* record user callchains */
#define CYCSAMPLE_CFG_REGS_USER		(1U << 5) /* record the full user register set */
#define CYCSAMPLE_CFG_ENABLE_ON_EXEC	(1U << 6) /* PID/TID: count from the target's next exec */
#define CYCSAMPLE_CFG_MMAP		(1U << 7) /* MMAP records of new executable mappings */
#define CYCSAMPLE_CFG_FORK		(1U << 8) /* FORK records; needs CYCSAMPLE_CFG_MMAP */
#define CYCSAMPLE_CFG_PC_ONLY		(1U << 9) /* samples as struct cycsample_sample_pc */
#define CYCSAMPLE_CFG_ALL_FLAGS		0x3ffU

/* Bounds, enforced with -EINVAL. */
#define CYCSAMPLE_MAX_STACK		127	/* frames per chain (kernel and user each) */
#define CYCSAMPLE_DEFAULT_STACK		64
#define CYCSAMPLE_MIN_PERIOD		10000ULL	/* cycles, privileged sessions */
#define CYCSAMPLE_MAX_PERIOD		(1ULL << 40)
#define CYCSAMPLE_MAX_FREQ		100000U		/* Hz */

/*
 * Ring sizes.  A ring's data is ring_pages pages of the kernel's page size
 * (cycsample_info.page_size: 4, 16 or 64 KiB on arm64), so its bounds are
 * in bytes: a page count that suits 4 KiB pages is refused where it would
 * take more than CYCSAMPLE_MAX_RING_BYTES, instead of silently taking 16
 * times the memory on a 64 KiB-page kernel.
 */
#define CYCSAMPLE_MIN_RING_PAGES	2		/* per CPU, power of two */
#define CYCSAMPLE_MAX_RING_BYTES	(16U << 20)	/* per CPU, ring_pages * page_size */
#define CYCSAMPLE_DEFAULT_RING_BYTES	(256U << 10)	/* ring_pages 0: this, or MIN pages */
/* The same bounds in 4 KiB pages, for sources written before the byte bounds. */
#define CYCSAMPLE_MAX_RING_PAGES	(CYCSAMPLE_MAX_RING_BYTES / 4096)
#define CYCSAMPLE_DEFAULT_RING_PAGES	(CYCSAMPLE_DEFAULT_RING_BYTES / 4096)

/**
 * struct cycsample_config - argument of CYCSAMPLE_IOC_CONFIGURE
 * @size:	sizeof(struct cycsample_config) as the caller knows it
 * @flags:	CYCSAMPLE_CFG_*; unknown bits give -EINVAL
 * @target_type: enum cycsample_target_type
 * @target:	PID or TID in the caller's PID namespace; 0 for CPU targets
 * @event:	CYCSAMPLE_EVENT_CYCLES or CYCSAMPLE_EVENT_CLOCK
 * @max_stack:	frames per callchain, 0 means CYCSAMPLE_DEFAULT_STACK
 * @sample_period: cycles between samples (or Hz with CYCSAMPLE_CFG_FREQ, at
 *		most kernel.perf_event_max_sample_rate); for the software
 *		clock a cycle period is converted to nanoseconds at the
 *		module's fallback_mhz
 * @ring_pages:	data pages per CPU ring, a power of two of at least
 *		CYCSAMPLE_MIN_RING_PAGES and at most CYCSAMPLE_MAX_RING_BYTES
 *		in all; 0 means CYCSAMPLE_DEFAULT_RING_BYTES worth of pages
 * @wakeup_bytes: wake the reader once this many bytes are unread in a ring;
 *		0 means a quarter of the ring; at most the ring's bytes less
 *		CYCSAMPLE_MAX_RECORD_SIZE (a fuller ring may refuse records).
 *		An EXEC record, and the first sample of a process new to a
 *		PID or TID session, wake the reader at once
 *		(poll() reports POLLIN while one is unread); with
 *		CYCSAMPLE_CFG_FORK only such a first sample that no FORK
 *		record tells of
 * @reserved:	must be zero
 */
struct cycsample_config {
	__u32 size;
	__u32 flags;
	__u32 target_type;
	__s32 target;
	__u32 event;
	__u32 max_stack;
	__u64 sample_period;
	__u32 ring_pages;
	__u32 wakeup_bytes;
	__u64 reserved[4];
};

/* The size of the first published struct cycsample_config. */
#define CYCSAMPLE_CONFIG_SIZE_VER0	72

/* ---------------------------------------------------------------------- */
/* Query                                                                  */
/* ---------------------------------------------------------------------- */

enum cycsample_state {
	CYCSAMPLE_STATE_OPEN		= 0,	/* nothing configured yet */
	CYCSAMPLE_STATE_CONFIGURED	= 1,	/* rings exist, counters do not */
	CYCSAMPLE_STATE_RUNNING		= 2,
	CYCSAMPLE_STATE_STOPPED		= 3,
	CYCSAMPLE_STATE_ENDED		= 4,	/* target gone or detached; START: -ESRCH */
};

/* struct cycsample_info.fallback_reason */
enum cycsample_fallback {
	CYCSAMPLE_FALLBACK_NONE		= 0,
	CYCSAMPLE_FALLBACK_REQUESTED	= 1,	/* config asked for the clock */
	CYCSAMPLE_FALLBACK_NO_PMU	= 2,	/* no PMU accepted cycles (-ENOENT) */
	CYCSAMPLE_FALLBACK_UNSUPPORTED	= 3,	/* PMU refused the attributes */
	CYCSAMPLE_FALLBACK_NO_INTERRUPT	= 4,	/* PMU has no overflow interrupt */
	CYCSAMPLE_FALLBACK_OTHER	= 5,	/* other error, see fallback_errno */
};

#define CYCSAMPLE_COST_BUCKETS	16	/* bucket i: handler took [2^i, 2^(i+1)) x 128 ns */

/* struct cycsample_info.clock: the clock of every record's time */
enum cycsample_clock {
	CYCSAMPLE_CLOCK_LOCAL		= 0,	/* local_clock(): modules before the PMU list */
	CYCSAMPLE_CLOCK_MONOTONIC	= 1,	/* CLOCK_MONOTONIC, as clock_gettime() reads it */
};

#define CYCSAMPLE_MAX_PMUS	8	/* entries of cycsample_info.pmus */
#define CYCSAMPLE_PMU_CPUS	1024	/* CPUs a cycsample_pmu.cpus mask can name */

/**
 * struct cycsample_pmu - one PMU of a running (or stopped) session
 *
 * A session counts cycles with one counter per core PMU: big.LITTLE
 * boards and hybrid x86 CPUs have one PMU per CPU type.  CPUs whose PMU
 * cannot sample are covered by the software clock, in an entry of their
 * own or in their PMU's entry with @event a clock and @fallback_reason set.
 * A sample's @pmu field indexes this list.
 */
struct cycsample_pmu {
	char name[32];			/* e.g. "armv8_cortex_a72", or the clock's name */
	__u32 type;			/* the PMU's perf type (sysfs .../type), 0 if none */
	__u32 event;			/* enum cycsample_event in use on these CPUs */
	__u32 fallback_reason;		/* enum cycsample_fallback */
	__s32 fallback_errno;		/* the PMU's error, negative, or 0 */
	__u32 attr_type;		/* perf_event_attr.type of the counters */
	__u32 nr_cpus;			/* CPUs covered, also those beyond @cpus */
	__u64 config;			/* perf_event_attr.config of the counters */
	__u64 samples;			/* sample records written for this entry */
	__u64 cpus[CYCSAMPLE_PMU_CPUS / 64];	/* bit n of word n / 64: CPU n */
};

/**
 * struct cycsample_info - filled by CYCSAMPLE_IOC_INFO
 *
 * The caller sets @size to the size it knows; the module writes that many
 * bytes at most (zero-filling what it does not know) and stores its own size
 * in @size.  Counters are totals over all rings since CONFIGURE.
 */
struct cycsample_info {
	__u32 size;
	__u32 abi_version;
	char module_version[16];
	__u32 state;			/* enum cycsample_state */
	/* the next four describe pmus[0]; @pmus lists every PMU in use */
	__u32 event;			/* enum cycsample_event: what is in use */
	__u32 fallback_reason;		/* enum cycsample_fallback */
	__s32 fallback_errno;		/* the PMU's error, negative, or 0 */
	char pmu_name[32];		/* the PMU driver's name, e.g. "armv8_pmuv3" */
	__u64 sample_period;		/* as configured (period or Hz) */
	__u64 clock_period_ns;		/* software clock period, or 0 */
	__u32 config_flags;
	__u32 target_type;
	__s32 target;
	__u32 max_stack;
	__u32 page_size;
	__u32 nr_rings;
	__u64 mmap_size;		/* the one valid mmap length */
	__u64 ring_data_size;		/* bytes of data per ring */
	__u64 samples;			/* sample records written */
	__u64 lost;			/* samples dropped because a ring was full */
	__u64 throttled;		/* samples taken when perf throttled the counter */
	__u64 dropped_kernel;		/* kernel-mode samples refused (user-only session) */
	__u64 dropped_other;		/* re-entered, or during START/STOP */
	__u64 cost_min_ns;		/* handler cost, on the record clock */
	__u64 cost_max_ns;
	__u64 cost_total_ns;
	__u64 cost_count;
	__u64 cost_hist[CYCSAMPLE_COST_BUCKETS];
	/* Zero from modules older than these fields (check @size). */
	__u32 clock;			/* enum cycsample_clock */
	__u32 nr_pmus;			/* entries of @pmus in use, after a START */
	struct cycsample_pmu pmus[CYCSAMPLE_MAX_PMUS];
	/* Zero from modules older than these fields (check @size). */
	__u32 features;			/* CYCSAMPLE_FEATURE_*: what this module does */
	__u32 reserved;
};

/* struct cycsample_info.features */
#define CYCSAMPLE_FEATURE_PIDNS	(1U << 0) /* pids in the CONFIGURE caller's PID namespace */

/* ---------------------------------------------------------------------- */
/* ioctls: 0xC5 is not listed in Documentation/userspace-api/ioctl/ioctl-number.rst */
/* ---------------------------------------------------------------------- */

#define CYCSAMPLE_IOC_MAGIC	0xC5
#define CYCSAMPLE_IOC_CONFIGURE	_IOW(CYCSAMPLE_IOC_MAGIC, 0x01, struct cycsample_config)
#define CYCSAMPLE_IOC_START	_IO(CYCSAMPLE_IOC_MAGIC, 0x02)
#define CYCSAMPLE_IOC_STOP	_IO(CYCSAMPLE_IOC_MAGIC, 0x03)
#define CYCSAMPLE_IOC_INFO	_IOWR(CYCSAMPLE_IOC_MAGIC, 0x04, struct cycsample_info)

/*
 * The size of the first published struct cycsample_info, and its command:
 * modules of that time match the whole command number, size included, and
 * answer any other size with -ENOTTY; a newer reader retries with this one.
 */
#define CYCSAMPLE_INFO_SIZE_VER0	328
#define CYCSAMPLE_IOC_INFO_VER0 \
	_IOC(_IOC_READ | _IOC_WRITE, CYCSAMPLE_IOC_MAGIC, 0x04, CYCSAMPLE_INFO_SIZE_VER0)

/* ---------------------------------------------------------------------- */
/* mmap layout                                                            */
/* ---------------------------------------------------------------------- */

/*
 * One mapping of exactly info.mmap_size bytes at offset 0, MAP_SHARED:
 *
 *	[control page(s)]  struct cycsample_control and its ring directory
 *	[ring 0 header]    one page: struct cycsample_ring_header
 *	[ring 0 data]      ring_data_size bytes, read-only
 *	[ring 1 header] ...
 *
 * Only ring headers may be written, and of them only data_tail.  Writing a
 * data or control page raises SIGBUS.
 */
#define CYCSAMPLE_MAGIC		0x63796373616d706cULL	/* "cycsampl" */

struct cycsample_ring_desc {
	__u32 cpu;
	__u32 reserved;
	__u64 header_offset;		/* from the start of the mapping */
	__u64 data_offset;
	__u64 data_size;		/* a power of two */
};

struct cycsample_control {
	__u64 magic;			/* CYCSAMPLE_MAGIC */
	__u32 abi_version;		/* CYCSAMPLE_ABI_VERSION */
	__u32 page_size;
	__u32 nr_rings;			/* one per possible CPU */
	__u32 control_size;		/* bytes of control area, page multiple */
	__u64 reserved[5];
	struct cycsample_ring_desc rings[];	/* nr_rings entries */
};

/*
 * Head/tail protocol.  Positions are free-running byte counts; a record at
 * position p lives at data + (p & (data_size - 1)) and may wrap around the
 * end of the data area.  Records are 8-byte aligned in size.
 *
 * Producer (module):  tail = load_acquire(data_tail); if the record fits in
 *			data_size - (head - tail), write it, then
 *			store_release(data_head, head + size).
 * Consumer (reader):  head = load_acquire(data_head); read records in
 *			[tail, head); store_release(data_tail, head).
 *
 * The module never trusts data_tail: a value outside [head - data_size, head]
 * makes the ring count as full.
 */
struct cycsample_ring_header {
	__u64 data_head;		/* written by the module */
	__u64 data_tail;		/* written by the reader */
	__u64 data_size;
	__u32 cpu;
	__u32 reserved0;
	__u64 lost;			/* samples dropped on this ring, cumulative */
	__u64 samples;			/* samples written on this ring, cumulative */
	__u64 reserved[10];
};

/* ---------------------------------------------------------------------- */
/* Records                                                                */
/* ---------------------------------------------------------------------- */

enum cycsample_record_type {
	CYCSAMPLE_REC_SAMPLE	= 1,	/* struct cycsample_sample */
	CYCSAMPLE_REC_LOST	= 2,	/* struct cycsample_lost */
	CYCSAMPLE_REC_EXEC	= 3,	/* struct cycsample_task_event: target exec'd */
	CYCSAMPLE_REC_EXIT	= 4,	/* struct cycsample_task_event: target gone, last record */
	CYCSAMPLE_REC_MMAP	= 5,	/* struct cycsample_mmap: CYCSAMPLE_CFG_MMAP only */
	CYCSAMPLE_REC_FORK	= 6,	/* struct cycsample_fork: CYCSAMPLE_CFG_FORK only */
	CYCSAMPLE_REC_SAMPLE_PC	= 7,	/* struct cycsample_sample_pc: CYCSAMPLE_CFG_PC_ONLY only */
};

struct cycsample_record_header {
	__u32 type;			/* enum cycsample_record_type */
	__u32 size;			/* whole record incl. this header, multiple of 8 */
};

/* struct cycsample_sample.flags */
#define CYCSAMPLE_SAMPLE_USER		(1U << 0) /* interrupted in user mode */
#define CYCSAMPLE_SAMPLE_KERNEL		(1U << 1) /* interrupted in kernel mode */
#define CYCSAMPLE_SAMPLE_SW_CLOCK	(1U << 2) /* from the software clock */
#define CYCSAMPLE_SAMPLE_KCHAIN_TRUNC	(1U << 3) /* kernel chain hit max_stack */
#define CYCSAMPLE_SAMPLE_UCHAIN_TRUNC	(1U << 4) /* user chain hit max_stack */
#define CYCSAMPLE_SAMPLE_COMPAT		(1U << 5) /* 32-bit (AArch32/ia32) task */
#define CYCSAMPLE_SAMPLE_THROTTLED	(1U << 6) /* perf throttled the counter here */
#define CYCSAMPLE_SAMPLE_REGS_HIDDEN	(1U << 7) /* kernel pc/sp/fp/lr zeroed, no kernel chain */
#define CYCSAMPLE_SAMPLE_NMI		(1U << 8) /* taken in NMI (x86, arm64 pseudo-NMI) */
#define CYCSAMPLE_SAMPLE_IRQS_OFF	(1U << 9) /* kernel ran with IRQs masked (NMI only) */
#define CYCSAMPLE_SAMPLE_ALL_FLAGS	0x3ffU	  /* every flag of this ABI version */

/* struct cycsample_sample.arch */
#define CYCSAMPLE_ARCH_ARM64	1
#define CYCSAMPLE_ARCH_X86_64	2

/**
 * struct cycsample_sample - one sample
 *
 * @pc, @sp, @fp, @lr: the interrupted context (arm64: pc, sp, x29, x30;
 * AArch32 tasks, CYCSAMPLE_SAMPLE_COMPAT: pc, r13, the frame pointer of the
 * code's instruction set (r7 for Thumb, r11 for ARM), r14; x86_64: ip, sp,
 * bp, 0).  When the sample is in kernel mode and the reader may not see
 * kernel addresses (the rule of /proc/kallsyms, with the opener's
 * credentials), they are zero, there is no kernel chain and REGS_HIDDEN is
 * set.
 * @lr is recorded so that a reader can supply the caller of a leaf function
 * that had not yet stored its frame record.
 *
 * After the fixed part come @nr_kernel kernel frames (innermost first,
 * starting at the interrupted pc), then @nr_user user frames (innermost first,
 * starting at the user pc, return addresses stripped of pointer
 * authentication codes; AArch32 ones keep bit 0, set for a return into Thumb
 * code), then @nr_regs user registers (arm64: x0..x30, sp, pc, pstate;
 * AArch32 tasks: r0..r12, sp, lr, pc, cpsr; x86_64: the order of struct
 * pt_regs), all __u64.
 * PIDs are in the PID namespace of the caller of CONFIGURE (0: a task it
 * cannot see), in this and every other record.
 */
struct cycsample_sample {
	struct cycsample_record_header hdr;
	__u64 time;			/* ns on cycsample_info.clock */
	__u32 pid;			/* thread group id */
	__u32 tid;
	__u32 cpu;
	__u32 flags;			/* CYCSAMPLE_SAMPLE_* */
	__u64 period;			/* events this sample stands for */
	__u64 pc;
	__u64 sp;
	__u64 fp;
	__u64 lr;
	__u16 nr_kernel;
	__u16 nr_user;
	__u16 nr_regs;
	__u8 arch;			/* CYCSAMPLE_ARCH_* */
	__u8 pmu;			/* index in cycsample_info.pmus (0 before that list) */
	__u64 reserved2;
	__u64 frames[];
};

/**
 * struct cycsample_sample_pc - one sample of a CYCSAMPLE_CFG_PC_ONLY session
 *
 * The sample without a callchain or registers, as perf records it without
 * -g: 48 bytes instead of 88, so that a ring holds 1.8 times as many
 * before the reader has to drain it.  @time, @pid, @tid, @cpu, @period and
 * @pc are those of struct cycsample_sample, at the same offsets; @flags
 * holds the same CYCSAMPLE_SAMPLE_* bits, and there are no chain flags.
 * Only bits 0 to 15 fit here: a sample flag added above them would need a
 * new record type to reach a PC_ONLY reader.  A kernel-mode sample that
 * the reader may not see has @pc 0 and REGS_HIDDEN set, as there.
 */
struct cycsample_sample_pc {
	struct cycsample_record_header hdr;
	__u64 time;
	__u32 pid;
	__u32 tid;
	__u32 cpu;
	__u16 flags;			/* CYCSAMPLE_SAMPLE_* */
	__u8 arch;			/* CYCSAMPLE_ARCH_* */
	__u8 pmu;			/* as in struct cycsample_sample */
	__u64 period;
	__u64 pc;
};

/* Emitted before the next record once space returns after drops. */
struct cycsample_lost {
	struct cycsample_record_header hdr;
	__u64 time;
	__u64 lost;			/* samples dropped since the last LOST record */
};

struct cycsample_task_event {
	struct cycsample_record_header hdr;
	__u64 time;
	__u32 pid;
	__u32 tid;
	char comm[16];			/* NUL-terminated */
};

/* struct cycsample_mmap.flags */
#define CYCSAMPLE_MMAP_SHARED		(1U << 0) /* MAP_SHARED, else private */
#define CYCSAMPLE_MMAP_ANON		(1U << 1) /* no file: @path is a special name or "" */
#define CYCSAMPLE_MMAP_PATH_LONG	(1U << 2) /* the path did not fit: @path is "" */
#define CYCSAMPLE_MMAP_ALL_FLAGS	0x7U

/* struct cycsample_mmap.prot, as mmap(2)'s */
#define CYCSAMPLE_PROT_READ		(1U << 0)
#define CYCSAMPLE_PROT_WRITE		(1U << 1)
#define CYCSAMPLE_PROT_EXEC		(1U << 2)

/* Bytes of cycsample_mmap.path at most, its NUL included. */
#define CYCSAMPLE_MMAP_PATH_MAX		2048

/**
 * struct cycsample_mmap - a mapping became executable in a process
 *
 * Written with CYCSAMPLE_CFG_MMAP, by the thread that made the mapping (or
 * mprotect()ed a range of one to executable), on the ring of its CPU,
 * before it returns to user space, so before any sample in that range:
 * for each executable mapping a process of the target makes (CPU
 * sessions: any process), file-backed or not, the vdso included.  After
 * an exec the new program's records follow the EXEC record of that
 * process.  Mappings already there at START get none: read those from
 * /proc/PID/maps.
 *
 * @start, @len: the range, page aligned; @pgoff: the file offset of @start
 * in bytes (0 without a file).  @dev_major, @dev_minor, @ino, @ino_generation
 * identify the file as the kernel knew it at mmap() time (as /proc/PID/maps
 * and stat(2) show them), so a reader can tell whether the file it opens
 * by @path is still that one.  @path is the file's path as /proc/PID/maps
 * shows it (" (deleted)" appended once unlinked), in the namespace of the
 * mapping thread, NUL-terminated and padded with NULs to the record's size;
 * without a file, the special mapping's name ("[vdso]") or "".
 * @path_len: its length without the NUL.
 */
struct cycsample_mmap {
	struct cycsample_record_header hdr;
	__u64 time;
	__u32 pid;
	__u32 tid;
	__u64 start;
	__u64 len;
	__u64 pgoff;
	__u64 ino;
	__u32 dev_major;
	__u32 dev_minor;
	__u32 ino_generation;
	__u32 prot;			/* CYCSAMPLE_PROT_* */
	__u32 flags;			/* CYCSAMPLE_MMAP_* */
	__u16 path_len;
	__u16 reserved;
	char path[];
};

/**
 * struct cycsample_fork - a process new to the session runs what its parent ran
 *
 * Written with CYCSAMPLE_CFG_FORK, before the first record of a process
 * forked since START that has executed nothing since its fork, when the
 * reader knows what it inherited: its parent @ppid forked it (no reaper
 * adopted it), and the last exec of @ppid the session recorded is the one
 * @pid was forked under; @ppid is the target (whose mappings a reader
 * reads from /proc when it starts the session) or a process the session
 * already wrote a record of.  The mappings of @pid are then those of
 * @ppid as a reader knows them at @time (including any @ppid made between
 * the fork and @time), and after that its own MMAP records.  A process
 * the module cannot vouch for so gets no FORK record, and its first
 * record wakes the reader as without the flag.  A child cloned with
 * CLONE_PARENT is told as a child of its cloner's parent.  @comm is the
 * name of @pid.
 */
struct cycsample_fork {
	struct cycsample_record_header hdr;
	__u64 time;
	__u32 pid;
	__u32 tid;
	__u32 ppid;
	__u32 reserved;
	char comm[16];			/* NUL-terminated */
};

#define CYCSAMPLE_MAX_RECORD_SIZE \
	(sizeof(struct cycsample_sample) + \
	 (2 * CYCSAMPLE_MAX_STACK + 40) * sizeof(__u64))

#endif /* _UAPI_LINUX_CYCSAMPLE_H */
