/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One recording: start the command or find the target, set up
 * the device, drain the rings until the target exits, the duration ends or
 * Ctrl-C, and keep the maps of the sampled processes up to date meanwhile.
 */
#ifndef CYCREAD_SESSION_H
#define CYCREAD_SESSION_H

#include "resolve.h"

/*
 * Default frequency: 999 Hz.  perf's 4000 Hz gets throttled under QEMU TCG
 * (every PMU interrupt is slow there; about 550 samples/s per busy CPU is
 * what a 1e6-cycle period gives), and 999 Hz keeps a real board's overhead
 * far below 1 % while still giving about 10 000 samples in a 10 s run, so a
 * 5 % function is measured to within ~0.5 percentage points.  An odd rate
 * does not beat in step with 1 ms timers.
 */
#define DEFAULT_FREQ 999

struct record_opts {
	u32 target_type;
	s32 target;
	char **cmd; /* NULL-terminated, or NULL */
	u64 freq;
	u64 period; /* used instead of freq when non-zero */
	u32 event; /* CYCSAMPLE_EVENT_CYCLES or _CLOCK */
	double duration; /* seconds, 0 = until the end */
	bool callchain;
	bool user_only;
	bool regs_user;
	bool no_fallback; /* fail instead of using the software clock */
	u32 ring_pages;
	u32 max_stack;
	const char *device;
	bool quiet;
};

/*
 * Record into @p, @ms and @r.  Returns 0, or an exit status (EXIT_RUNTIME)
 * after printing the error.
 */
int session_record(const struct record_opts *o, struct profile *p, struct maps *ms,
		   struct resolver *r);

#endif /* CYCREAD_SESSION_H */
