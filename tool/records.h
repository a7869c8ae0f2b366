/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Validate and decode the records of the cycsample uapi, and
 * keep a session's records in memory, merged across CPUs by time.
 *
 * The same code takes records from the live rings and from capture files,
 * so a corrupt capture meets exactly the checks a misbehaving module would.
 */
#ifndef CYCREAD_RECORDS_H
#define CYCREAD_RECORDS_H

#include <linux/cycsample.h>

#include "util.h"

/* rec_check() results */
enum rec_status {
	REC_VALID = 0, /* a known type with a consistent size */
	REC_SKIP = 1, /* a well-formed record of a type we do not know */
	REC_CORRUPT = -1, /* size or contents impossible: stop reading here */
};

/*
 * Check the record at @buf, of which @avail bytes are readable.  On
 * REC_VALID and REC_SKIP *@size is the record's size; on REC_CORRUPT *@why
 * says what is wrong.
 */
enum rec_status rec_check(const void *buf, size_t avail, u32 *size, const char **why);

/* A decoded view of a SAMPLE record (pointers into the record). */
struct rec_sample {
	const struct cycsample_sample *s;
	const u64 *kframes; /* nr_kernel, innermost first */
	const u64 *uframes; /* nr_user, innermost first */
	const u64 *regs; /* nr_regs */
};

/* Only for records rec_check() accepted as CYCSAMPLE_REC_SAMPLE. */
void rec_sample_view(const void *rec, struct rec_sample *v);

/*
 * Name of register @i of a sample's register dump, whose layout depends on
 * the architecture and, on arm64, on whether the task is AArch32 (COMPAT
 * flag: r0..r12, sp, lr, pc, cpsr) or AArch64 (x0..x30, sp, pc, pstate);
 * NULL past the end of the layout.
 */
const char *rec_reg_name(const struct cycsample_sample *s, u32 i);

/* Kernel callchain context markers (PERF_CONTEXT_*) are never frames. */
static inline bool rec_frame_is_marker(u64 addr)
{
	return addr >= (u64)-4095;
}

/* One entry of the module's PMU list (cycsample_info.pmus). */
struct prof_pmu {
	char name[32];
	u32 type;
	u32 event; /* enum cycsample_event */
	u32 fallback_reason;
	s32 fallback_errno;
	u32 nr_cpus;
	u64 samples; /* the module's count */
	u64 cpus[CYCSAMPLE_PMU_CPUS / 64];
};

/* Session description kept with the records (and in capture files). */
struct prof_meta {
	char *tool_version;
	char *kernel_release;
	char *machine;
	char *hostname;
	char *command; /* "-- CMD ARGS" or NULL */
	char pmu_name[32];
	u32 event; /* enum cycsample_event in use */
	u32 fallback_reason;
	s32 fallback_errno;
	u32 config_flags;
	u32 target_type;
	s32 target;
	u64 sample_period; /* Hz when CYCSAMPLE_CFG_FREQ */
	u64 clock_period_ns;
	u64 start_time; /* wall clock, seconds since the epoch */
	u64 duration_ns;
	/* the module's counters at the end of the session */
	u64 samples;
	u64 lost;
	u64 throttled;
	u64 dropped_kernel;
	u64 dropped_other;
	u64 cost_count;
	u64 cost_total_ns;
	u64 cost_max_ns;
	u32 clock; /* enum cycsample_clock of the records' times */
	u32 nr_pmus; /* 0: a module or capture from before the PMU list */
	struct prof_pmu pmus[CYCSAMPLE_MAX_PMUS];
	bool ksyms_hidden;
	char *ksyms_note;
	int cmd_status; /* wait status of -- CMD, or -1 */
};

void meta_free(struct prof_meta *m);
/* Human name of the event in use: "cycles", "cpu-clock", "task-clock". */
const char *meta_event_name(u32 event);
/* The PMU entry a sample names, or NULL (none listed, or out of range). */
const struct prof_pmu *meta_pmu(const struct prof_meta *m, u32 idx);
/* CPUs of a mask as a list: "0-3,6". */
void cpulist_format(const u64 *mask, u32 words, struct sbuf *sb);
/* The reverse; false on a malformed list or a CPU beyond the mask. */
bool cpulist_parse(const char *s, u64 *mask, u32 words);

/* One record in time order. */
struct prof_event {
	u64 time;
	u64 off; /* into profile.recs */
	u32 type;
	u32 cpu;
	u32 seq; /* arrival order: breaks ties stably */
};

struct profile {
	u8 *recs; /* validated records, back to back, 8-aligned */
	size_t recs_len;
	size_t recs_alloc; /* 0 while borrowed */
	bool recs_borrowed; /* recs lies in memory the profile does not own (never written) */
	const void *map; /* a capture's mapping, unmapped by prof_free(): recs lie in it */
	size_t map_len;
	struct prof_event *ev;
	size_t nr_ev;
	size_t ev_alloc;
	struct prof_meta meta;

	/* what the reader saw in the records */
	u64 nr_samples;
	u64 nr_lost_records;
	u64 lost_samples; /* sum over LOST records */
	u64 nr_throttled; /* samples flagged THROTTLED */
	u64 nr_nmi; /* samples flagged NMI */
	u64 pmu_samples[CYCSAMPLE_MAX_PMUS]; /* samples by cycsample_sample.pmu */
	u64 nr_exec;
	u64 nr_exit;
	u64 nr_unknown; /* well-formed records of unknown types */
	u64 nr_corrupt; /* rings or files cut short by impossible records */

	/* pid -> command name, from EXEC records and /proc/PID/comm */
	struct u64map comm_index;
	struct strtab comms;
};

void prof_init(struct profile *p);
/* Make room for @bytes more of records (about @nr of them) in one go. */
void prof_reserve(struct profile *p, size_t bytes, size_t nr);
void prof_free(struct profile *p);

/*
 * Validate and store one record; @cpu is the ring it came from.  Returns
 * the rec_check() status; corrupt records are counted and not stored.
 */
enum rec_status prof_add_record(struct profile *p, const void *rec, size_t avail, u32 cpu,
				u32 *size, const char **why);

/*
 * Take the @len bytes of records at @data where they are, without copying
 * them, when @p has no records yet and every one is valid (a capture's
 * RECORDS section); @data must outlive @p (see profile.map).  False, with
 * @p unchanged, otherwise: then add them one by one, which counts what is
 * skipped and says where a corrupt one is.  Adding records later copies the
 * borrowed ones first.
 */
bool prof_borrow_records(struct profile *p, const void *data, size_t len);

/* Sort the events by time (stable across CPUs). */
void prof_sort(struct profile *p);

static inline const void *prof_rec(const struct profile *p, const struct prof_event *e)
{
	return p->recs + e->off;
}

void prof_set_comm(struct profile *p, u32 pid, const char *comm);
/* The comm of a record's fixed @len-byte field (EXEC, FORK), if not empty. */
#define CYCS_RECORD_COMM_MAX 16
void prof_set_record_comm(struct profile *p, u32 pid, const char *field, size_t len);
/* The command name of @pid, or NULL. */
const char *prof_comm(const struct profile *p, u32 pid);

#endif /* CYCREAD_RECORDS_H */
