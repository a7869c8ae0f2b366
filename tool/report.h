/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Everything printed from a profile: the top table (self and
 * --children), --raw sample blocks, --folded stacks and the --svg flame graph.
 *
 * Weights are sample counts (not periods), so the folded output can be read
 * by FlameGraph, speedscope and the Firefox Profiler alike and the
 * percentages mean "share of the samples".
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
};

#define REPORT_MAX_KEYS 6

struct report_opts {
	bool raw;
	bool folded;
	bool children;
	const char *svg_path;
	enum report_key keys[REPORT_MAX_KEYS];
	u32 nr_keys;
	double min_percent; /* top rows below this are summed up in one line */
};

/* Parse "dso,sym" into @o; false (with *bad set) on an unknown key. */
bool report_parse_sort(struct report_opts *o, const char *arg, const char **bad);

/* A resolved sample: frames innermost first, as indexes of frame_info. */
struct rsample {
	u32 first; /* into report.frames */
	u16 nr;
	u16 nr_kernel; /* the first nr_kernel frames are kernel frames */
	u32 ev; /* index in profile.ev */
	u8 leaf;
};

struct report {
	struct profile *p;
	struct resolver *r;
	struct rsample *samples;
	u32 nr_samples;
	u32 *frames; /* frame_info indexes */
	u8 *frame_flags; /* SF_* */
	u64 *frame_off;
	u64 *frame_addr;
	size_t nr_frames;
	size_t alloc_frames;
};

/* Resolve every sample of @p (which must be sorted). */
void report_build(struct report *rep, struct profile *p, struct resolver *r);
void report_free(struct report *rep);

void report_header(const struct report *rep, FILE *out);
void report_footer(const struct report *rep, FILE *out);
void report_top(const struct report *rep, const struct report_opts *o, FILE *out);
void report_raw(const struct report *rep, FILE *out);
void report_folded(const struct report *rep, FILE *out);
int report_svg(const struct report *rep, const char *path, const char *title);

/* The folded name of a frame (kernel frames get "_[k]", inline frames "_[i]"). */
void report_frame_name(const struct report *rep, u32 fi, bool kernel, struct sbuf *sb);
/* The first folded frame: the command name (spaces become '_'). */
void report_comm_name(const struct report *rep, u32 pid, struct sbuf *sb);

#endif /* CYCREAD_REPORT_H */
