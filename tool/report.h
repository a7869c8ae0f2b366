/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Everything printed from a profile: the top table (self and
 * --children) with its call-graph trees, --raw sample blocks, --folded
 * stacks, the --svg flame graph, the per-second histogram and --pprof.
 *
 * Weights: by default a sample weighs its period (the cycles it stands for),
 * as in perf report; --weight samples counts every sample as one.  In
 * frequency mode the kernel changes the period from sample to sample, so the
 * two give different shares.  The filters (--comm, --pid, --tid, --dso,
 * --symbol, --time) choose the samples every output then reads.
 */
#ifndef CYCREAD_REPORT_H
#define CYCREAD_REPORT_H

#include <stdio.h>

#include "records.h"
#include "resolve.h"

enum report_key {
	KEY_COMM,
	KEY_PID,
	KEY_DSO,
	KEY_SYM,
	KEY_SRCLINE, /* file:line of the frame (base name) */
	KEY_TID,
	KEY_PMU,
};

#define REPORT_MAX_KEYS 7

enum report_weight {
	WEIGHT_PERIOD, /* the sample's period: cycles (or clock ns) */
	WEIGHT_SAMPLES, /* one per sample */
};

enum report_graph {
	GRAPH_NONE,
	GRAPH_CALLER, /* from the outermost caller down (perf report -G) */
	GRAPH_CALLEE, /* from the row's function up to its callers */
};

/* The filters of the report options; an empty list does not filter. */
enum filter_kind { FILTER_COMM, FILTER_PID, FILTER_TID, FILTER_DSO, FILTER_SYMBOL, FILTER_KINDS };

struct report_filter {
	char **vals[FILTER_KINDS]; /* the comma-separated values given */
	u32 nr[FILTER_KINDS];
	bool time; /* --time given */
	u64 time_start; /* ns after the first record, inclusive */
	u64 time_end; /* exclusive; UINT64_MAX: to the end */
};

struct report_opts {
	bool raw;
	bool raw_details; /* --raw: registers, flags and repair marks too */
	bool show_task_events; /* --raw: also EXEC and EXIT records */
	bool show_lost_events; /* --raw: also LOST records */
	bool folded;
	bool children;
	const char *svg_path;
	const char *pprof_path;
	enum report_key keys[REPORT_MAX_KEYS];
	u32 nr_keys;
	double min_percent; /* top rows below this are summed up in one line */
	enum report_weight weight;
	enum report_graph graph;
	double graph_limit; /* tree branches below this percentage are hidden */
	double histogram; /* bucket width in seconds; 0: no histogram */
	struct report_filter filter;
};

/*
 * Parse "dso,sym" into @o; false with *why set on an unknown or repeated
 * key (the message names the keys and their limit).
 */
bool report_parse_sort(struct report_opts *o, const char *arg, const char **why);
/* Add the comma-separated values of --comm etc.; false with *why on junk. */
bool report_parse_filter(struct report_opts *o, enum filter_kind kind, const char *arg,
			 const char **why);
/* "START,END" seconds (either may be empty); false with *why on junk. */
bool report_parse_time(struct report_opts *o, const char *arg, const char **why);
void report_opts_free(struct report_opts *o);

/* A resolved sample: frames innermost first, as indexes of frame_info. */
struct rsample {
	u32 first; /* into report.frames */
	u16 nr;
	u16 nr_kernel; /* the first nr_kernel frames are kernel frames */
	u32 ev; /* index in profile.ev */
	u8 leaf;
	u64 period;
};

struct report {
	struct profile *p;
	struct resolver *r;
	struct rsample *samples;
	u32 nr_samples;
	u32 *frames; /* frame_info indexes */
	u8 *frame_flags; /* SF_* */
	u64 *frame_off; /* NULL after report_build_no_addrs() */
	u64 *frame_addr; /* NULL after report_build_no_addrs() */
	size_t nr_frames;
	size_t alloc_frames;
	bool by_period; /* report_weight() is the period */
	u64 total; /* the samples' weights summed */
	u64 total_period;
	u64 t0; /* time of the first record: --time and the histogram count from it */
	u64 time_from; /* the --time slice, in ns after t0 */
	u64 time_to;
};

/* Resolve every sample of @p (which must be sorted); weights are periods. */
void report_build(struct report *rep, struct profile *p, struct resolver *r);
/*
 * The same without frame_addr and frame_off (left NULL), which only --raw
 * and --pprof read: 16 bytes less per frame (272 MB for a million samples
 * of 16 frames), and as many fewer pages to fault in.
 */
void report_build_no_addrs(struct report *rep, struct profile *p, struct resolver *r);
void report_free(struct report *rep);
/*
 * Keep the samples @o's filters choose and weigh them as @o says.  Returns
 * 0, or -1 with a message in @err when a filter matches no sample (it names
 * the values that would).
 */
int report_select(struct report *rep, const struct report_opts *o, char *err, size_t errlen);
/*
 * Whether @f's --comm, --pid and --tid keep a record of thread @tid of
 * process @pid; and whether its --time slice holds a record at @time (on
 * the records' clock).  For the records that are not samples (--raw's).
 */
bool report_task_selected(const struct report *rep, const struct report_filter *f, u32 pid,
			  u32 tid);
bool report_time_selected(const struct report *rep, const struct report_filter *f, u64 time);

static inline u64 report_weight(const struct report *rep, const struct rsample *rs)
{
	return rep->by_period ? rs->period : 1;
}

static inline double report_pct(u64 part, u64 total)
{
	return total ? 100.0 * part / total : 0;
}

/* What a weight counts: "samples", or the event ("cycles", "cpu-clock"). */
const char *report_unit(const struct report *rep);

void report_header(const struct report *rep, FILE *out);
void report_footer(const struct report *rep, FILE *out);
void report_top(const struct report *rep, const struct report_opts *o, FILE *out);
void report_raw(const struct report *rep, const struct report_opts *o, FILE *out);
void report_folded(const struct report *rep, FILE *out);
/*
 * Frames narrower than a pixel are left out, as flame graph tools do (a
 * million distinct stacks would otherwise make a file of gigabytes); the
 * SVG says how many, and so does *@pruned when not NULL.
 */
int report_svg(const struct report *rep, const char *path, const char *title, u64 *pruned);
/*
 * 0 when a histogram of @secs buckets is at most a million lines long, else
 * -1 with a message in @err naming the span and a width that fits.
 */
int report_histogram_check(const struct report *rep, double secs, char *err, size_t errlen);
/*
 * Samples and weight per bucket of @secs seconds after the first record;
 * report_histogram_check() has bounded their count.
 */
void report_histogram(const struct report *rep, double secs, FILE *out);
/* Write a gzip-compressed pprof profile.proto to @path; 0 or -errno. */
int report_pprof(const struct report *rep, const char *path);
/* The same, uncompressed, into a malloc'ed buffer (tests). */
void report_pprof_mem(const struct report *rep, u8 **buf, size_t *len);

/* One entry of a top row's tree: sample @sample, the row's frame at @frame. */
struct tree_ref {
	u32 sample;
	u32 frame;
};

/* Print the call-graph tree of one top row (perf report's graph layout). */
void report_tree(const struct report *rep, const struct report_opts *o, const struct tree_ref *refs,
		 u32 nr, FILE *out);

/*
 * The samples as sequences of names, outermost first: the command, then the
 * frames' folded names (report_frame_name()).  Each name is made once per
 * frame_info and per process, not once per frame, so the reports that merge
 * stacks (folded, SVG) sort and compare small integers.
 */
struct stack_names {
	const struct report *rep;
	struct strtab strs;
	u32 *fi_name; /* per frame_info */
	u32 *comm; /* per sample */
};

void stack_names_init(struct stack_names *sn, const struct report *rep);
void stack_names_free(struct stack_names *sn);

static inline u32 stack_len(const struct stack_names *sn, u32 sample)
{
	return 1 + sn->rep->samples[sample].nr;
}

/* Name id at depth @k of @sample: 0 is the command, then the outermost frame. */
static inline u32 stack_name(const struct stack_names *sn, u32 sample, u32 k)
{
	const struct rsample *rs = &sn->rep->samples[sample];

	return k ? sn->fi_name[sn->rep->frames[rs->first + rs->nr - k]] : sn->comm[sample];
}

/*
 * How stacks sort: by name at each depth, outermost first, each name ranked
 * twice, as an inner frame (rank_mid) and as the innermost one (rank_last),
 * ranks from 1 to max_rank; a stack that has ended ranks lowest or, with
 * ended_last, highest.
 */
struct stack_order {
	const u32 *rank_mid; /* per name id */
	const u32 *rank_last;
	u32 max_rank;
	bool ended_last;
};

/*
 * The sample numbers in that order (malloc()ed); (*same)[i] is true when
 * the i-th sample's stack equals the one before it.  Sorted a few depths at
 * a time, by packed ranks, runs of equal prefixes then by the next depths:
 * the comparisons never walk whole stacks.
 */
u32 *stack_sort(const struct stack_names *sn, const struct stack_order *o, u8 **same);

/* The folded name of a frame (kernel frames get "_[k]", inline frames "_[i]"). */
void report_frame_name(const struct report *rep, u32 fi, bool kernel, struct sbuf *sb);
/* The first folded frame: the command name (spaces become '_'). */
void report_comm_name(const struct report *rep, u32 pid, struct sbuf *sb);
/* The name of the PMU entry that took a sample, or of the session's event. */
void report_pmu_name(const struct report *rep, u32 idx, struct sbuf *sb);
/* "cycles", or "PMU/cycles/" (perf's name for it) when the session had several PMUs. */
void report_event_name(const struct report *rep, u32 idx, struct sbuf *sb);

#endif /* CYCREAD_REPORT_H */
