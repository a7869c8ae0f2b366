// SPDX-License-Identifier: GPL-2.0
/*
 * Choosing samples: the --comm, --pid, --tid, --dso and --symbol filters,
 * --time slices, the weight, and the per-second histogram that shows where
 * the slices worth a look are.
 *
 * A filter value that matches no sample is an error that lists the values
 * that would match, so a typo never reads as "nothing happened there".
 * --dso and --symbol look at the sampled (innermost) frame, as perf report's
 * --dsos and --symbols do with its self entries.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

#define LIST_MAX 8 /* values named in an error message */

static const char *const filter_option[FILTER_KINDS] = {
	[FILTER_COMM] = "--comm", [FILTER_PID] = "--pid",	[FILTER_TID] = "--tid",
	[FILTER_DSO] = "--dso",	  [FILTER_SYMBOL] = "--symbol",
};

static const char *const filter_noun[FILTER_KINDS] = {
	[FILTER_COMM] = "command", [FILTER_PID] = "pid",	 [FILTER_TID] = "tid",
	[FILTER_DSO] = "object",   [FILTER_SYMBOL] = "function",
};

bool report_parse_filter(struct report_opts *o, enum filter_kind kind, const char *arg,
			 const char **why)
{
	struct report_filter *f = &o->filter;
	char *copy = xstrdup(arg), *tok, *save = NULL;
	bool ok = true;
	u64 v;

	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *val;

		if (kind == FILTER_PID || kind == FILTER_TID) {
			if (!parse_u64(tok, 10, &v) || v > INT32_MAX) {
				*why = "not a list of numbers";
				ok = false;
				break;
			}
			val = xasprintf("%llu", v);
		} else {
			val = xstrdup(tok);
		}
		f->vals[kind] = xrealloc(f->vals[kind], f->nr[kind] + 1, sizeof(char *));
		f->vals[kind][f->nr[kind]++] = val;
	}
	free(copy);
	if (ok && !f->nr[kind]) {
		*why = "no value";
		ok = false;
	}
	return ok;
}

/* Seconds, as a non-negative decimal, into ns. */
static bool parse_secs(const char *s, size_t len, u64 *ns)
{
	char buf[64], *end;
	double v;

	if (!len || len >= sizeof(buf))
		return false;
	memcpy(buf, s, len);
	buf[len] = '\0';
	errno = 0;
	v = strtod(buf, &end);
	if (errno || *end || end == buf || !(v >= 0) || v > 1e9)
		return false;
	*ns = (u64)(v * 1e9 + 0.5);
	return true;
}

bool report_parse_time(struct report_opts *o, const char *arg, const char **why)
{
	struct report_filter *f = &o->filter;
	const char *comma = strchr(arg, ',');

	*why = "not START,END in seconds after the first record (either may be empty)";
	if (!comma || strchr(comma + 1, ','))
		return false;
	f->time_start = 0;
	f->time_end = UINT64_MAX;
	if (comma > arg && !parse_secs(arg, comma - arg, &f->time_start))
		return false;
	if (comma[1] && !parse_secs(comma + 1, strlen(comma + 1), &f->time_end))
		return false;
	if (f->time_end <= f->time_start) {
		*why = "END is not after START";
		return false;
	}
	f->time = true;
	return true;
}

void report_opts_free(struct report_opts *o)
{
	u32 k, i;

	for (k = 0; k < FILTER_KINDS; k++) {
		for (i = 0; i < o->filter.nr[k]; i++)
			free(o->filter.vals[k][i]);
		free(o->filter.vals[k]);
		o->filter.vals[k] = NULL;
		o->filter.nr[k] = 0;
	}
}

static bool is_task_filter(enum filter_kind kind)
{
	return kind == FILTER_COMM || kind == FILTER_PID || kind == FILTER_TID;
}

/* The value --comm, --pid or --tid compares for thread @tid of process @pid. */
static const char *task_value(const struct report *rep, u32 pid, u32 tid, enum filter_kind kind,
			      struct sbuf *sb)
{
	sbuf_reset(sb);
	if (kind == FILTER_COMM)
		report_comm_name(rep, pid, sb);
	else
		sbuf_printf(sb, "%u", kind == FILTER_PID ? pid : tid);
	return sb->buf;
}

/*
 * Whether @val names what task_value() gave: a command also by its name
 * with spaces (the table shows '_').
 */
static bool task_value_matches(const struct report *rep, u32 pid, enum filter_kind kind,
			       const char *got, const char *val)
{
	const char *comm;

	if (!strcmp(got, val))
		return true;
	if (kind != FILTER_COMM)
		return false;
	comm = prof_comm(rep->p, pid);
	return comm && !strcmp(comm, val);
}

/* The value a filter compares: NULL when the sample has none (no frame). */
static const char *sample_value(const struct report *rep, const struct rsample *rs,
				enum filter_kind kind, struct sbuf *sb)
{
	const struct cycsample_sample *s = prof_rec(rep->p, &rep->p->ev[rs->ev]);
	const struct frame_info *fi;

	if (is_task_filter(kind))
		return task_value(rep, s->pid, s->tid, kind, sb);
	sbuf_reset(sb);
	if (!rs->nr)
		return NULL;
	fi = res_fi(rep->r, rep->frames[rs->first]);
	return res_str(rep->r, kind == FILTER_DSO ? fi->dso : fi->func);
}

/* Whether @val names what sample_value() gave: objects also by their full path. */
static bool value_matches(const struct report *rep, const struct rsample *rs, enum filter_kind kind,
			  const char *got, const char *val)
{
	const struct cycsample_sample *s = prof_rec(rep->p, &rep->p->ev[rs->ev]);

	if (is_task_filter(kind))
		return task_value_matches(rep, s->pid, kind, got, val);
	if (!strcmp(got, val))
		return true;
	if (kind == FILTER_DSO && rs->nr)
		return !strcmp(res_str(rep->r, res_fi(rep->r, rep->frames[rs->first])->path), val);
	return false;
}

bool report_task_selected(const struct report *rep, const struct report_filter *f, u32 pid, u32 tid)
{
	struct sbuf sb = { 0 };
	bool pass = true;
	u32 k, i;

	for (k = 0; k < FILTER_KINDS && pass; k++) {
		const char *got;

		if (!is_task_filter(k) || !f->nr[k])
			continue;
		got = task_value(rep, pid, tid, k, &sb);
		for (i = 0, pass = false; i < f->nr[k] && !pass; i++)
			pass = task_value_matches(rep, pid, k, got, f->vals[k][i]);
	}
	sbuf_free(&sb);
	return pass;
}

bool report_time_selected(const struct report *rep, const struct report_filter *f, u64 time)
{
	u64 t = time - rep->t0;

	return !f->time || (t >= f->time_start && t < f->time_end);
}

static bool sample_passes(const struct report *rep, const struct rsample *rs,
			  const struct report_filter *f, u8 *hit[FILTER_KINDS], struct sbuf *sb)
{
	bool pass = true;
	u32 k, i;

	for (k = 0; k < FILTER_KINDS; k++) {
		const char *got;
		bool any = false;

		if (!f->nr[k])
			continue;
		got = sample_value(rep, rs, k, sb);
		for (i = 0; got && i < f->nr[k]; i++) {
			if (value_matches(rep, rs, k, got, f->vals[k][i])) {
				hit[k][i] = 1;
				any = true;
			}
		}
		pass &= any;
	}
	return pass;
}

/* "app, sh, ..." : the values of @kind the samples have, for an error. */
static void list_values(const struct report *rep, enum filter_kind kind, struct sbuf *out)
{
	struct strtab seen = { 0 };
	struct sbuf sb = { 0 };
	u32 i, n = 0;

	for (i = 0; i < rep->nr_samples; i++) {
		const char *v = sample_value(rep, &rep->samples[i], kind, &sb);

		if (!v || strtab_intern(&seen, v) < n)
			continue;
		if (n++ == LIST_MAX) {
			sbuf_addstr(out, ", ...");
			break;
		}
		sbuf_printf(out, "%s%s", n > 1 ? ", " : "", v);
	}
	if (!n)
		sbuf_addstr(out, "none");
	strtab_free(&seen);
	sbuf_free(&sb);
}

static int check_hits(const struct report *rep, const struct report_filter *f,
		      u8 *hit[FILTER_KINDS], u32 in_time, char *err, size_t errlen)
{
	struct sbuf sb = { 0 };
	u32 k, i;

	if (f->time && !in_time && rep->nr_samples) {
		u64 last = rep->p->ev[rep->samples[rep->nr_samples - 1].ev].time - rep->t0;

		snprintf(err, errlen, "--time: no sample in that slice (samples span 0 to %.3f s)",
			 last / 1e9);
		return -1;
	}
	for (k = 0; k < FILTER_KINDS; k++) {
		for (i = 0; i < f->nr[k]; i++) {
			if (hit[k][i])
				continue;
			list_values(rep, k, &sb);
			snprintf(err, errlen, "%s %s: no sample has that %s (%s)", filter_option[k],
				 f->vals[k][i], filter_noun[k], sb.buf);
			sbuf_free(&sb);
			return -1;
		}
	}
	return 0;
}

/*
 * A line per bucket, empty or not: a million is a long read already, and a
 * sample time far past the others (a corrupt record: nothing bounds a
 * record's time) would otherwise ask for billions of them.
 */
#define HIST_MAX_BUCKETS 1000000ULL

static u64 hist_width(double secs)
{
	u64 width = (u64)(secs * 1e9 + 0.5);

	return width ? width : 1;
}

/*
 * The buckets of @width ns from the --time slice's start (a slice starts at
 * its own bucket, *@from) to the last sample, at *@last ns after the first
 * record.
 */
static u64 hist_buckets(const struct report *rep, u64 width, u64 *from, u64 *last)
{
	u32 i;

	*from = rep->time_from / width;
	*last = 0;
	for (i = 0; i < rep->nr_samples; i++)
		*last = MAX(*last, rep->p->ev[rep->samples[i].ev].time - rep->t0);
	return rep->nr_samples ? *last / width + 1 - *from : 0;
}

/* The smallest of 1, 2 and 5 times a power of ten that is not below @secs. */
static double round_up_width(double secs)
{
	static const double steps[] = { 1, 2, 5 };
	double decade = 1e-6;
	u32 i;

	for (;; decade *= 10) {
		for (i = 0; i < ARRAY_SIZE(steps); i++) {
			if (steps[i] * decade >= secs)
				return steps[i] * decade;
		}
	}
}

/*
 * Refuse more than HIST_MAX_BUCKETS buckets, naming the span, the count and
 * a width that fits.  When the samples span more than twice the session's
 * recorded length, which no difference between the records' clock and the
 * one that timed the session explains, a sample's time is likelier wrong
 * than the width: say so too.
 */
int report_histogram_check(const struct report *rep, double secs, char *err, size_t errlen)
{
	u64 width = hist_width(secs), from, last, nb = hist_buckets(rep, width, &from, &last);
	u64 duration = rep->p->meta.duration_ns;
	double fits;
	int n;

	if (nb <= HIST_MAX_BUCKETS)
		return 0;
	/* the slice's start and the last sample may each cost a bucket more */
	fits = round_up_width((double)(last - from * width) / (HIST_MAX_BUCKETS - 2) / 1e9);
	n = snprintf(err, errlen,
		     "--histogram: samples from %.3f to %.3f s make %llu buckets of %g s, "
		     "more than %llu; try --histogram=%g or wider",
		     from * width / 1e9, last / 1e9, nb, secs, HIST_MAX_BUCKETS, fits);
	if (duration && last / 2 > duration && n > 0 && (size_t)n < errlen)
		snprintf(err + n, errlen - n,
			 " (the session lasted %.2f s: a corrupt sample time?)", duration / 1e9);
	return -1;
}

int report_select(struct report *rep, const struct report_opts *o, char *err, size_t errlen)
{
	const struct report_filter *f = &o->filter;
	u8 *hit[FILTER_KINDS] = { 0 };
	struct sbuf sb = { 0 };
	u32 i, k, n = 0, in_time = 0;
	bool overflow = false;
	int ret;

	for (k = 0; k < FILTER_KINDS; k++)
		hit[k] = xcalloc(f->nr[k] ? f->nr[k] : 1, 1);
	/* every value is checked against all samples, so each can be named */
	for (i = 0; i < rep->nr_samples; i++) {
		struct rsample *rs = &rep->samples[i];
		bool pass = sample_passes(rep, rs, f, hit, &sb);

		if (!report_time_selected(rep, f, rep->p->ev[rs->ev].time))
			continue;
		in_time++;
		if (pass)
			rep->samples[n++] = *rs;
	}
	ret = check_hits(rep, f, hit, in_time, err, errlen);
	for (k = 0; k < FILTER_KINDS; k++)
		free(hit[k]);
	sbuf_free(&sb);
	if (ret)
		return ret;
	rep->nr_samples = n;
	if (f->time) {
		rep->time_from = f->time_start;
		rep->time_to = f->time_end;
	}
	rep->total_period = 0;
	for (i = 0; i < n; i++)
		if (__builtin_add_overflow(rep->total_period, rep->samples[i].period,
					   &rep->total_period))
			overflow = true;
	/*
	 * Periods that add up past 2^63 (pprof's values are signed: 292 years
	 * of cycles at 1 GHz) come from a damaged capture: its shares would be
	 * garbage, its sample counts are not.
	 */
	if (overflow || rep->total_period > INT64_MAX) {
		rep->total_period = INT64_MAX;
		if (o->weight == WEIGHT_PERIOD)
			pr_warn("the samples' periods add up past 2^63 (a damaged capture?): "
				"weighed by samples instead");
	}
	rep->by_period = o->weight == WEIGHT_PERIOD && rep->total_period < INT64_MAX;
	rep->total = rep->by_period ? rep->total_period : n; /* report_weight() summed */
	return 0;
}

/* ---- histogram ---------------------------------------------------------- */

void report_histogram(const struct report *rep, double secs, FILE *out)
{
	u64 width = hist_width(secs), max = 0, from, last;
	u64 nb = hist_buckets(rep, width, &from, &last);
	const char *unit = report_unit(rep);
	u64 *w, *nr, b;
	char title[40];
	u32 i;
	int j, uw;

	w = xcalloc(nb ? nb : 1, sizeof(*w));
	nr = xcalloc(nb ? nb : 1, sizeof(*nr));
	for (i = 0; i < rep->nr_samples; i++) {
		const struct rsample *rs = &rep->samples[i];

		b = (rep->p->ev[rs->ev].time - rep->t0) / width - from;
		w[b] += report_weight(rep, rs);
		nr[b]++;
	}
	for (b = 0; b < nb; b++)
		max = MAX(max, w[b]);
	snprintf(title, sizeof(title), "%s%%", unit);
	uw = MAX(8, (int)strlen(title));
	fprintf(out,
		"#\n# samples per %g s after the first record (--time START,END selects "
		"a slice)\n#\n",
		secs);
	fprintf(out, "# %11s %12s  Samples  %*s\n", "from (s)", "to (s)", uw, title);
	for (b = 0; b < nb; b++) {
		/* in double: a wide last bucket may end past 2^64 ns */
		fprintf(out, "  %11.3f %12.3f %8llu  %*.2f%%", (double)(b + from) * width / 1e9,
			(double)(b + from + 1) * width / 1e9, nr[b], uw - 1,
			report_pct(w[b], rep->total));
		if (max && w[b] * 40 >= max)
			fputs("  ", out);
		for (j = 0; max && j < (int)(40 * w[b] / max); j++)
			fputc('#', out);
		fputc('\n', out);
	}
	fprintf(out, "#\n# total: %u samples\n", rep->nr_samples);
	free(w);
	free(nr);
}
