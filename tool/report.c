// SPDX-License-Identifier: GPL-2.0
/*
 * Resolve a profile's samples once, then print the header, the
 * top table, the folded stacks and the footer from the resolved frames.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "report.h"

bool report_parse_sort(struct report_opts *o, const char *arg, const char **why)
{
	static const struct {
		const char *name;
		enum report_key key;
	} names[] = {
		{ "comm", KEY_COMM }, { "pid", KEY_PID },	  { "dso", KEY_DSO },
		{ "sym", KEY_SYM },   { "srcline", KEY_SRCLINE }, { "tid", KEY_TID },
		{ "pmu", KEY_PMU },
	};
#define SORT_KEYS "(use comm,pid,tid,dso,sym,srcline,pmu: at most 7, each once)"
	_Static_assert(sizeof(names) / sizeof(names[0]) <= REPORT_MAX_KEYS,
		       "every key may be given once");
	char *copy = xstrdup(arg), *tok, *save = NULL;
	u32 i, seen = 0;

	o->nr_keys = 0;
	*why = "unknown key " SORT_KEYS;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < ARRAY_SIZE(names); i++)
			if (!strcmp(tok, names[i].name))
				break;
		if (i == ARRAY_SIZE(names))
			goto out_bad;
		if (seen & (1U << i)) {
			*why = "a key given twice " SORT_KEYS;
			goto out_bad;
		}
		seen |= 1U << i;
		o->keys[o->nr_keys++] = names[i].key;
	}
	free(copy);
	if (!o->nr_keys) {
		*why = "no key " SORT_KEYS;
		return false;
	}
	return true;
out_bad:
	free(copy);
	return false;
}

/* Room for @frames frames in all the arrays kept. */
static void reserve_frames(struct report *rep, size_t frames, bool addrs)
{
	if (frames <= rep->alloc_frames)
		return;
	rep->alloc_frames = frames;
	rep->frames = xrealloc(rep->frames, frames, sizeof(*rep->frames));
	rep->frame_flags = xrealloc(rep->frame_flags, frames, 1);
	if (!addrs)
		return;
	rep->frame_off = xrealloc(rep->frame_off, frames, sizeof(u64));
	rep->frame_addr = xrealloc(rep->frame_addr, frames, sizeof(u64));
}

/* Append a sample's @nr frames: room made once, then one store per array and frame. */
static void add_frames(struct report *rep, const struct stack_frame *f, u32 nr, bool addrs)
{
	size_t n = rep->nr_frames;
	u32 j;

	if (n + nr > rep->alloc_frames)
		reserve_frames(rep, MAX(2 * rep->alloc_frames, n + nr + 4096), addrs);
	for (j = 0; j < nr; j++) {
		rep->frames[n + j] = f[j].fi;
		rep->frame_flags[n + j] = f[j].flags;
	}
	for (j = 0; addrs && j < nr; j++) {
		rep->frame_off[n + j] = f[j].off;
		rep->frame_addr[n + j] = f[j].addr;
	}
	rep->nr_frames = n + nr;
}

static void build(struct report *rep, struct profile *p, struct resolver *r, bool addrs)
{
	struct stack st = { 0 };
	size_t i, want = 0;
	u32 alloc;

	memset(rep, 0, sizeof(*rep));
	rep->p = p;
	rep->r = r;
	rep->by_period = true;
	rep->t0 = p->nr_ev ? p->ev[0].time : 0;
	rep->time_to = UINT64_MAX;
	/* the recorded frames and a leaf-caller frame each, before inline frames */
	for (i = 0; i < p->nr_ev; i++) {
		if (p->ev[i].type == CYCSAMPLE_REC_SAMPLE) {
			const struct cycsample_sample *s = prof_rec(p, &p->ev[i]);

			want += (size_t)s->nr_kernel + s->nr_user + 2;
		}
	}
	reserve_frames(rep, want, addrs);
	alloc = p->nr_samples < UINT32_MAX ? p->nr_samples : UINT32_MAX;
	rep->samples = xmalloc(sizeof(*rep->samples) * (alloc ? alloc : 1));
	for (i = 0; i < p->nr_ev; i++) {
		struct rec_sample v;
		struct rsample *rs;

		if (p->ev[i].type != CYCSAMPLE_REC_SAMPLE)
			continue;
		rec_sample_view(prof_rec(p, &p->ev[i]), &v);
		res_stack(r, &v, &st);
		VEC_GROW(rep->samples, rep->nr_samples, alloc);
		rs = &rep->samples[rep->nr_samples++];
		rs->first = rep->nr_frames;
		rs->nr = MIN(st.nr, 65535U);
		rs->nr_kernel = 0;
		rs->ev = i;
		rs->leaf = st.leaf;
		rs->period = v.s->period;
		rep->total += rs->period;
		rep->total_period += rs->period;
		/* kernel frames come first */
		while (rs->nr_kernel < rs->nr && (st.f[rs->nr_kernel].flags & SF_KERNEL))
			rs->nr_kernel++;
		add_frames(rep, st.f, rs->nr, addrs);
	}
	stack_free(&st);
}

void report_build(struct report *rep, struct profile *p, struct resolver *r)
{
	build(rep, p, r, true);
}

void report_build_no_addrs(struct report *rep, struct profile *p, struct resolver *r)
{
	build(rep, p, r, false);
}

const char *report_unit(const struct report *rep)
{
	return rep->by_period ? meta_event_name(rep->p->meta.event) : "samples";
}

void report_free(struct report *rep)
{
	free(rep->samples);
	free(rep->frames);
	free(rep->frame_flags);
	free(rep->frame_off);
	free(rep->frame_addr);
	memset(rep, 0, sizeof(*rep));
}

static const char *fallback_str(u32 reason)
{
	switch (reason) {
	case CYCSAMPLE_FALLBACK_REQUESTED:
		return "requested";
	case CYCSAMPLE_FALLBACK_NO_PMU:
		return "no PMU accepts cycles";
	case CYCSAMPLE_FALLBACK_UNSUPPORTED:
		return "the PMU refused the attributes";
	case CYCSAMPLE_FALLBACK_NO_INTERRUPT:
		return "the PMU has no overflow interrupt";
	case CYCSAMPLE_FALLBACK_OTHER:
		return "PMU error";
	default:
		return NULL;
	}
}

void report_pmu_name(const struct report *rep, u32 idx, struct sbuf *sb)
{
	const struct prof_meta *m = &rep->p->meta;
	const struct prof_pmu *pmu = meta_pmu(m, idx);

	if (pmu && pmu->name[0])
		sbuf_printf(sb, "%.32s", pmu->name);
	else if (!m->nr_pmus && m->pmu_name[0])
		sbuf_printf(sb, "%.32s", m->pmu_name);
	else if (!m->nr_pmus)
		sbuf_addstr(sb, meta_event_name(m->event));
	else
		sbuf_printf(sb, "pmu-%u", idx);
}

void report_event_name(const struct report *rep, u32 idx, struct sbuf *sb)
{
	const struct prof_meta *m = &rep->p->meta;
	const struct prof_pmu *pmu = meta_pmu(m, idx);

	if (m->nr_pmus < 2 || !pmu) {
		sbuf_addstr(sb, meta_event_name(pmu ? pmu->event : m->event));
		return;
	}
	if (pmu->event == CYCSAMPLE_EVENT_HW_CYCLES)
		sbuf_printf(sb, "%.32s/cycles/", pmu->name);
	else
		sbuf_addstr(sb, meta_event_name(pmu->event));
}

/* One line per PMU, when there are several: what it sampled with, and how much. */
static void pmu_lines(const struct profile *p, FILE *out)
{
	const struct prof_meta *m = &p->meta;
	struct sbuf cpus = { 0 };
	u32 i;

	if (m->nr_pmus < 2)
		return;
	for (i = 0; i < m->nr_pmus; i++) {
		const struct prof_pmu *pmu = &m->pmus[i];
		const char *why = fallback_str(pmu->fallback_reason);

		sbuf_reset(&cpus);
		cpulist_format(pmu->cpus, ARRAY_SIZE(pmu->cpus), &cpus);
		fprintf(out, "# PMU %u: %.32s, CPU%s %s: %s", i, pmu->name,
			pmu->nr_cpus == 1 ? "" : "s", cpus.buf ? cpus.buf : "-",
			meta_event_name(pmu->event));
		if (pmu->event != CYCSAMPLE_EVENT_HW_CYCLES)
			fprintf(out, " (software clock%s%s)", why ? ": " : "", why ? why : "");
		fprintf(out, ", %llu samples\n", (unsigned long long)p->pmu_samples[i]);
	}
	sbuf_free(&cpus);
}

static void target_str(const struct prof_meta *m, const struct profile *p, struct sbuf *sb)
{
	const char *comm;

	switch (m->target_type) {
	case CYCSAMPLE_TARGET_CPUS:
		sbuf_addstr(sb, "all CPUs");
		return;
	case CYCSAMPLE_TARGET_TID:
		sbuf_printf(sb, "tid %d", m->target);
		break;
	case CYCSAMPLE_TARGET_PID:
		sbuf_printf(sb, "pid %d", m->target);
		break;
	default:
		sbuf_addstr(sb, "unknown target");
		return;
	}
	comm = prof_comm(p, m->target);
	if (m->command)
		sbuf_printf(sb, " (%s)", m->command);
	else if (comm)
		sbuf_printf(sb, " (%s)", comm);
}

void report_header(const struct report *rep, FILE *out)
{
	const struct profile *p = rep->p;
	const struct prof_meta *m = &p->meta;
	const char *why = fallback_str(m->fallback_reason);
	struct sbuf sb = { 0 };

	target_str(m, p, &sb);
	fprintf(out, "# cycread %s: %s, %.2f s", m->tool_version ? m->tool_version : "?", sb.buf,
		m->duration_ns / 1e9);
	if (m->kernel_release)
		fprintf(out, ", kernel %s %s", m->kernel_release, m->machine ? m->machine : "");
	fputc('\n', out);
	if (m->nr_pmus > 1) {
		fprintf(out, "# event: cycles on %u PMUs", m->nr_pmus);
	} else {
		fprintf(out, "# event: %s", meta_event_name(m->event));
		if (m->event == CYCSAMPLE_EVENT_HW_CYCLES && m->pmu_name[0])
			fprintf(out, " (%.32s)", m->pmu_name);
		if (m->event == CYCSAMPLE_EVENT_SW_CPU_CLOCK ||
		    m->event == CYCSAMPLE_EVENT_SW_TASK_CLOCK)
			fprintf(out, " (software clock%s%s)", why ? ": " : "", why ? why : "");
	}
	if (m->config_flags & CYCSAMPLE_CFG_FREQ)
		fprintf(out, ", %llu Hz", m->sample_period);
	else
		fprintf(out, ", period %llu", m->sample_period);
	if (p->nr_nmi && p->nr_nmi == p->nr_samples)
		fputs(", taken in NMI", out);
	else if (p->nr_nmi)
		fprintf(out, ", %llu taken in NMI", (unsigned long long)p->nr_nmi);
	if (m->config_flags & CYCSAMPLE_CFG_USER_ONLY)
		fputs(", user space only", out);
	if (!(m->config_flags & (CYCSAMPLE_CFG_USER_CHAIN | CYCSAMPLE_CFG_KERNEL_CHAIN)))
		fputs(", no call graph", out);
	if (m->clock == CYCSAMPLE_CLOCK_MONOTONIC)
		fputs(", times on CLOCK_MONOTONIC", out);
	fputc('\n', out);
	pmu_lines(p, out);
	fprintf(out,
		"# samples: %llu, lost: %llu, throttled: %llu, dropped: %llu kernel-mode, "
		"%llu other\n",
		(unsigned long long)p->nr_samples, MAX(m->lost, p->lost_samples),
		MAX(m->throttled, p->nr_throttled), m->dropped_kernel, m->dropped_other);
	if (m->samples && m->samples != p->nr_samples)
		fprintf(out, "# note: the module wrote %llu samples, %llu were read\n", m->samples,
			(unsigned long long)p->nr_samples);
	if (p->nr_corrupt)
		fprintf(out, "# warning: %llu corrupt records skipped\n",
			(unsigned long long)p->nr_corrupt);
	if (m->cmd_status >= 0 && m->command) {
		if (WIFEXITED(m->cmd_status))
			fprintf(out, "# command exited with status %d\n",
				WEXITSTATUS(m->cmd_status));
		else if (WIFSIGNALED(m->cmd_status))
			fprintf(out, "# command killed by signal %d\n", WTERMSIG(m->cmd_status));
	}
	sbuf_free(&sb);
}

void report_footer(const struct report *rep, FILE *out)
{
	const struct resolver *r = rep->r;
	u64 unres = 0;
	bool first = true;
	u32 i;

	for (i = 1; i < UR_MAX; i++)
		unres += r->reasons[i];
	if (unres) {
		fprintf(out, "# unresolved frames: %llu of %llu (", unres, r->frames);
		for (i = 1; i < UR_MAX; i++) {
			if (!r->reasons[i])
				continue;
			fprintf(out, "%s%s: %llu", first ? "" : ", ", unres_reason_str[i],
				r->reasons[i]);
			first = false;
		}
		fputs(")\n", out);
		if (r->fde_frames)
			fprintf(out,
				"# %llu of them grouped per function by .eh_frame, named "
				"file+0xSTART\n",
				r->fde_frames);
		fputs("# frames without a symbol are grouped per file as [file]; --raw shows "
		      "file+offset\n",
		      out);
	}
	if (r->leaf_inserted)
		fprintf(out,
			"# arm64 leaf-caller repair: caller inserted from LR in %llu "
			"samples\n",
			r->leaf_inserted);
	if (r->ksyms.note && (r->reasons[UR_KERNEL_HIDDEN] || r->reasons[UR_KERNEL_UNKNOWN]))
		fprintf(out, "# %s\n", r->ksyms.note);
	else if (rep->p->meta.ksyms_note && r->reasons[UR_KERNEL_HIDDEN])
		fprintf(out, "# %s\n", rep->p->meta.ksyms_note);
}

void report_comm_name(const struct report *rep, u32 pid, struct sbuf *sb)
{
	const char *comm = prof_comm(rep->p, pid);
	size_t start = sb->len, i;

	if (comm && *comm)
		sbuf_addstr(sb, comm);
	else if (!pid)
		sbuf_addstr(sb, "swapper");
	else
		sbuf_printf(sb, "pid-%u", pid);
	for (i = start; i < sb->len; i++)
		if (sb->buf[i] == ' ' || sb->buf[i] == ';')
			sb->buf[i] = '_';
}

void report_frame_name(const struct report *rep, u32 fi, bool kernel, struct sbuf *sb)
{
	const char *name = res_str(rep->r, res_fi(rep->r, fi)->func);
	size_t start = sb->len, i;

	sbuf_addstr(sb, name);
	/* ';' separates frames and '\n' ends lines in the folded format */
	for (i = start; i < sb->len; i++)
		if (sb->buf[i] == ';')
			sb->buf[i] = ':';
		else if (sb->buf[i] == '\n' || sb->buf[i] == '\r')
			sb->buf[i] = ' ';
	/* one annotation a frame: a kernel function inlined keeps the kernel's */
	if (kernel)
		sbuf_addstr(sb, "_[k]");
	else if (res_fi(rep->r, fi)->flags & FI_INLINE)
		sbuf_addstr(sb, "_[i]");
}

/* ---- top ---------------------------------------------------------------- */

struct top_row {
	u32 fields[REPORT_MAX_KEYS]; /* ids in the local string table */
	u32 id; /* index before sorting: refs name rows by it */
	u64 self; /* weight of the samples this row is the leaf of */
	u64 children; /* weight of the samples it is in, once per sample */
	u64 nr_self; /* those samples counted */
	u32 last_sample; /* counts children once per sample */
};

struct top {
	struct strtab strs; /* field values and row keys */
	struct u64map rows_by_key;
	struct u64map rows_by_frame; /* (pid or tid, frame_info, kernel) -> row */
	u32 *row_of_fi; /* the same without a per-task key: one array read per frame */
	bool per_pid;
	bool per_tid;
	bool per_pmu;
	struct top_row *rows;
	u32 nr;
	u32 alloc;
	/* call-graph trees: the (sample, frame) entries of each row */
	struct tree_ref *refs;
	u32 *ref_row;
	u32 nr_refs;
	u32 alloc_refs;
};

/* "ID\x1f": one field of a row key (printf would cost more than the rest of the row) */
static void add_id(struct sbuf *sb, u32 id)
{
	char buf[12], *p = buf + sizeof(buf);

	*--p = '\x1f';
	do
		*--p = '0' + id % 10;
	while (id /= 10);
	sbuf_add(sb, p, buf + sizeof(buf) - p);
}

static u32 top_row(struct top *t, const struct report *rep, const struct report_opts *o,
		   const struct rsample *rs, u32 frame)
{
	u32 fields[REPORT_MAX_KEYS], i, key_id, fi_idx = rep->frames[rs->first + frame];
	const struct cycsample_sample *s;
	const struct frame_info *fi;
	struct sbuf key = { 0 }, val = { 0 };
	struct top_row *row;
	u64 idx, fkey = 0, task;

	/* a row depends only on these: skip building its key string again */
	if (!t->per_pid && !t->per_tid && !t->per_pmu && t->row_of_fi[fi_idx] != UINT32_MAX)
		return t->row_of_fi[fi_idx];
	s = prof_rec(rep->p, &rep->p->ev[rs->ev]);
	fi = res_fi(rep->r, fi_idx);
	if (t->per_pid || t->per_tid || t->per_pmu) {
		task = t->per_tid ? s->tid : t->per_pid ? s->pid : 0;
		fkey = (task << 33) | (u64)fi_idx << 1 | (frame < rs->nr_kernel);
		if (t->per_pmu)
			fkey ^= (u64)(s->pmu + 1) << 56;
		if (u64map_get(&t->rows_by_frame, fkey, &idx))
			return idx;
	}

	for (i = 0; i < o->nr_keys; i++) {
		sbuf_reset(&val);
		switch (o->keys[i]) {
		case KEY_COMM:
			report_comm_name(rep, s->pid, &val);
			break;
		case KEY_PID:
			sbuf_printf(&val, "%u", s->pid);
			break;
		case KEY_DSO:
			sbuf_addstr(&val, res_str(rep->r, fi->dso));
			break;
		case KEY_SYM:
			sbuf_addstr(&val, res_str(rep->r, fi->func));
			if (frame < rs->nr_kernel)
				sbuf_addstr(&val, " [k]");
			if (fi->flags & FI_INLINE)
				sbuf_addstr(&val, " (inlined)");
			break;
		case KEY_SRCLINE:
			res_format_srcline(rep->r, fi_idx, false, &val);
			break;
		case KEY_TID:
			sbuf_printf(&val, "%u", s->tid);
			break;
		case KEY_PMU:
			report_pmu_name(rep, s->pmu, &val);
			break;
		}
		fields[i] = strtab_intern(&t->strs, val.buf);
		add_id(&key, fields[i]);
	}
	key_id = strtab_intern(&t->strs, key.buf);
	sbuf_free(&key);
	sbuf_free(&val);
	if (!u64map_get(&t->rows_by_key, key_id, &idx)) {
		VEC_GROW(t->rows, t->nr, t->alloc);
		row = &t->rows[t->nr];
		memset(row, 0, sizeof(*row));
		memcpy(row->fields, fields, sizeof(fields));
		row->id = t->nr;
		row->last_sample = UINT32_MAX;
		idx = t->nr++;
		u64map_put(&t->rows_by_key, key_id, idx);
	}
	if (t->per_pid || t->per_tid || t->per_pmu)
		u64map_put(&t->rows_by_frame, fkey, idx);
	else
		t->row_of_fi[fi_idx] = idx;
	return idx;
}

static void add_ref(struct top *t, u32 row, u32 sample, u32 frame)
{
	if (t->nr_refs >= t->alloc_refs) {
		t->alloc_refs = t->alloc_refs ? 2 * t->alloc_refs : 1024;
		t->refs = xrealloc(t->refs, t->alloc_refs, sizeof(*t->refs));
		t->ref_row = xrealloc(t->ref_row, t->alloc_refs, sizeof(*t->ref_row));
	}
	t->refs[t->nr_refs] = (struct tree_ref){ .sample = sample, .frame = frame };
	t->ref_row[t->nr_refs++] = row;
}

/* Group the refs by row (a counting sort, stable in sample order). */
static struct tree_ref *refs_by_row(const struct top *t, u32 **first)
{
	struct tree_ref *out = xcalloc(t->nr_refs ? t->nr_refs : 1, sizeof(*out));
	u32 *pos = xcalloc(t->nr + 1, sizeof(*pos)), i;

	for (i = 0; i < t->nr_refs; i++)
		pos[t->ref_row[i] + 1]++;
	for (i = 0; i < t->nr; i++)
		pos[i + 1] += pos[i];
	*first = xcalloc(t->nr + 1, sizeof(**first));
	memcpy(*first, pos, (t->nr + 1) * sizeof(*pos));
	for (i = 0; i < t->nr_refs; i++)
		out[pos[t->ref_row[i]]++] = t->refs[i];
	free(pos);
	return out;
}

struct row_order {
	const struct top *t;
	const struct report_opts *o;
};

static int row_cmp(const void *a, const void *b, void *arg)
{
	const struct row_order *ord = arg;
	const struct report_opts *cmp_opts = ord->o;
	const struct top *cmp_top = ord->t;
	const struct top_row *x = a, *y = b;
	u64 kx = cmp_opts->children ? x->children : x->self;
	u64 ky = cmp_opts->children ? y->children : y->self;
	u32 i;
	int d;

	if (kx != ky)
		return kx > ky ? -1 : 1;
	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	for (i = 0; i < cmp_opts->nr_keys; i++) {
		d = strcmp(strtab_str(&cmp_top->strs, x->fields[i]),
			   strtab_str(&cmp_top->strs, y->fields[i]));
		if (d)
			return d;
	}
	return 0;
}

static const char *key_title(enum report_key k)
{
	switch (k) {
	case KEY_COMM:
		return "Command";
	case KEY_PID:
		return "Pid";
	case KEY_DSO:
		return "Shared object";
	case KEY_SRCLINE:
		return "Source:Line";
	case KEY_TID:
		return "Tid";
	case KEY_PMU:
		return "PMU";
	default:
		return "Symbol";
	}
}

/* Count every row's weights (and collect the tree entries when asked). */
static void top_count(struct top *t, const struct report *rep, const struct report_opts *o)
{
	bool per_task, graph = o->graph != GRAPH_NONE;
	u32 i, j;

	for (i = 0; i < o->nr_keys; i++) {
		t->per_pid |= o->keys[i] == KEY_COMM || o->keys[i] == KEY_PID;
		t->per_tid |= o->keys[i] == KEY_TID;
		t->per_pmu |= o->keys[i] == KEY_PMU;
	}
	per_task = t->per_pid || t->per_tid || t->per_pmu;
	t->row_of_fi = xmalloc(sizeof(*t->row_of_fi) * (rep->r->nr_fis ? rep->r->nr_fis : 1));
	memset(t->row_of_fi, 0xff, sizeof(*t->row_of_fi) * rep->r->nr_fis);
	/* once per frame of every sample: locals, as the stores to rows could alias them */
	for (i = 0; i < rep->nr_samples; i++) {
		const struct rsample *rs = &rep->samples[i];
		const u32 *frames = rep->frames + rs->first, *row_of_fi = t->row_of_fi;
		u64 w = report_weight(rep, rs);

		for (j = 0; j < rs->nr; j++) {
			/* top_row() may grow t.rows: index it only afterwards */
			u32 idx = per_task ? UINT32_MAX : row_of_fi[frames[j]];
			struct top_row *row;

			if (idx == UINT32_MAX)
				idx = top_row(t, rep, o, rs, j);
			row = &t->rows[idx];

			if (!j) {
				row->self += w;
				row->nr_self++;
				if (graph && !o->children)
					add_ref(t, idx, i, j);
			}
			if (row->last_sample != i) {
				row->last_sample = i;
				row->children += w;
				if (graph && o->children)
					add_ref(t, idx, i, j);
			}
		}
	}
}

void report_top(const struct report *rep, const struct report_opts *o, FILE *out)
{
	u64 total = rep->total, rest_w = 0, rest_rows = 0;
	const char *unit = report_unit(rep);
	int width[REPORT_MAX_KEYS], sw, cw;
	struct tree_ref *refs = NULL;
	char self_t[40], child_t[40];
	struct top t = { 0 };
	u32 *first = NULL;
	u32 i, k;

	top_count(&t, rep, o);
	sort(t.rows, t.nr, sizeof(*t.rows), row_cmp, &(struct row_order){ &t, o });
	if (o->graph != GRAPH_NONE)
		refs = refs_by_row(&t, &first);
	for (k = 0; k < o->nr_keys; k++) {
		width[k] = strlen(key_title(o->keys[k]));
		for (i = 0; i < t.nr; i++) {
			int len = strlen(strtab_str(&t.strs, t.rows[i].fields[k]));

			width[k] = MAX(width[k], len);
		}
		width[k] = MIN(width[k], 40);
	}
	/* the share columns say what they count: "Self cycles", "Self samples" */
	snprintf(self_t, sizeof(self_t), "Self %s", unit);
	snprintf(child_t, sizeof(child_t), "Children %s", unit);
	sw = MAX(8, (int)strlen(self_t));
	cw = MAX(8, (int)strlen(child_t));
	fputs("#\n# ", out);
	if (o->children)
		fprintf(out, "%*s  ", cw, child_t);
	fprintf(out, "%*s  Samples", sw, self_t);
	for (k = 0; k < o->nr_keys; k++)
		fprintf(out, "  %-*s", k + 1 < o->nr_keys ? width[k] : 0, key_title(o->keys[k]));
	fputs("\n", out);
	for (i = 0; i < t.nr; i++) {
		const struct top_row *row = &t.rows[i];
		double self = report_pct(row->self, total),
		       children = report_pct(row->children, total);

		if (!o->children && !row->nr_self)
			continue; /* only a caller: a row of --children alone */
		if ((o->children ? children : self) < o->min_percent) {
			rest_w += row->self;
			rest_rows++;
			continue;
		}
		fputs("  ", out);
		if (o->children)
			fprintf(out, "%*.2f%%  ", cw - 1, children);
		fprintf(out, "%*.2f%% %8llu", sw - 1, self, row->nr_self);
		for (k = 0; k < o->nr_keys; k++)
			fprintf(out, "  %-*s", k + 1 < o->nr_keys ? width[k] : 0,
				strtab_str(&t.strs, row->fields[k]));
		fputc('\n', out);
		if (refs)
			report_tree(rep, o, refs + first[row->id],
				    first[row->id + 1] - first[row->id], out);
	}
	if (rest_rows && rest_w)
		fprintf(out, "# %llu more rows below %.2f%% hold %.2f%% of the %s\n", rest_rows,
			o->min_percent, report_pct(rest_w, total), unit);
	fprintf(out, "#\n# total: %u samples", rep->nr_samples);
	if (rep->by_period)
		fprintf(out, ", %llu %s", total, unit);
	fputc('\n', out);
	strtab_free(&t.strs);
	u64map_free(&t.rows_by_key);
	u64map_free(&t.rows_by_frame);
	free(t.row_of_fi);
	free(t.rows);
	free(t.refs);
	free(t.ref_row);
	free(refs);
	free(first);
}

/* ---- stacks as names ---------------------------------------------------- */

void stack_names_init(struct stack_names *sn, const struct report *rep)
{
	struct u64map pids = { 0 };
	struct sbuf sb = { 0 };
	u32 i, j;
	u64 id;

	memset(sn, 0, sizeof(*sn));
	sn->rep = rep;
	sn->fi_name = xmalloc(sizeof(*sn->fi_name) * (rep->r->nr_fis ? rep->r->nr_fis : 1));
	memset(sn->fi_name, 0xff, sizeof(*sn->fi_name) * rep->r->nr_fis);
	sn->comm = xmalloc(sizeof(*sn->comm) * (rep->nr_samples ? rep->nr_samples : 1));
	for (i = 0; i < rep->nr_samples; i++) {
		const struct rsample *rs = &rep->samples[i];
		const struct cycsample_sample *s = prof_rec(rep->p, &rep->p->ev[rs->ev]);

		if (!u64map_get(&pids, s->pid, &id)) {
			sbuf_reset(&sb);
			report_comm_name(rep, s->pid, &sb);
			id = strtab_intern(&sn->strs, sb.buf);
			u64map_put(&pids, s->pid, id);
		}
		sn->comm[i] = id;
		for (j = 0; j < rs->nr; j++) {
			u32 fi = rep->frames[rs->first + j];

			if (sn->fi_name[fi] != UINT32_MAX)
				continue;
			sbuf_reset(&sb);
			report_frame_name(rep, fi, j < rs->nr_kernel, &sb);
			sn->fi_name[fi] = strtab_intern(&sn->strs, sb.buf);
		}
	}
	u64map_free(&pids);
	sbuf_free(&sb);
}

void stack_names_free(struct stack_names *sn)
{
	strtab_free(&sn->strs);
	free(sn->fi_name);
	free(sn->comm);
	memset(sn, 0, sizeof(*sn));
}

struct sort_ctx {
	const struct stack_names *sn;
	const struct stack_order *o;
	u32 bits; /* per depth in a key */
	u32 per_key; /* depths per key */
	u32 ended; /* the rank of "no frame here" */
	u8 *same;
	struct u64key *tmp; /* room for the radix sort's passes */
};

/* The rank of @sample's name at depth @k. */
static inline u32 level_rank(const struct sort_ctx *c, u32 sample, u32 k)
{
	u32 n = stack_len(c->sn, sample);

	if (k >= n)
		return c->ended;
	return (k + 1 == n ? c->o->rank_last : c->o->rank_mid)[stack_name(c->sn, sample, k)];
}

/* Sort @n entries (with equal ranks above @depth) by the depths from @depth on. */
static void sort_from(struct sort_ctx *c, struct u64key *e, u32 first, u32 n, u32 depth)
{
	u32 i, j, k;

	while (n > 1) {
		for (i = 0; i < n; i++) {
			e[first + i].key = 0;
			for (k = 0; k < c->per_key; k++)
				e[first + i].key = e[first + i].key << c->bits |
						   level_rank(c, e[first + i].i, depth + k);
		}
		radix_sort(e + first, c->tmp, n);
		/* runs of equal keys: done if their stacks have ended, else the next depths */
		for (i = 0; i < n; i = j) {
			for (j = i + 1; j < n && e[first + j].key == e[first + i].key; j++)
				;
			if (j - i < 2)
				continue;
			if (level_rank(c, e[first + i].i, depth + c->per_key - 1) == c->ended &&
			    stack_len(c->sn, e[first + i].i) < depth + c->per_key) {
				for (k = i + 1; k < j; k++)
					c->same[first + k] = 1;
			} else if (j - i == n) {
				break; /* one run: go on in this loop, no recursion */
			} else {
				sort_from(c, e, first + i, j - i, depth + c->per_key);
			}
		}
		if (i >= n)
			return;
		depth += c->per_key;
	}
}

u32 *stack_sort(const struct stack_names *sn, const struct stack_order *o, u8 **same)
{
	u32 n = sn->rep->nr_samples, i, *order;
	struct sort_ctx c = { .sn = sn, .o = o };
	struct u64key *e;

	c.ended = o->ended_last ? o->max_rank + 1 : 0;
	for (c.bits = 1; c.bits < 32 && (o->max_rank + 1) >> c.bits; c.bits++)
		;
	c.per_key = 64 / c.bits;
	c.same = xcalloc(n ? n : 1, 1);
	e = xmalloc(sizeof(*e) * (n ? n : 1));
	c.tmp = xmalloc(sizeof(*c.tmp) * (n ? n : 1));
	for (i = 0; i < n; i++)
		e[i].i = i;
	sort_from(&c, e, 0, n, 0);
	free(c.tmp);
	order = xmalloc(sizeof(*order) * (n ? n : 1));
	for (i = 0; i < n; i++)
		order[i] = e[i].i;
	free(e);
	*same = c.same;
	return order;
}

/* ---- folded ------------------------------------------------------------- */

/*
 * The folded lines sort as strcmp() of "comm;outer;...;leaf" does, without
 * building them: each name is ranked followed by ';' (an inner frame) and by
 * the line's end (the innermost), and a stack that ends sorts first.
 */
struct term_name {
	const char *s;
	u32 id;
	char term;
};

static int term_cmp(const void *a, const void *b, void *arg)
{
	const struct term_name *x = a, *y = b;
	const u8 *p = (const u8 *)x->s, *q = (const u8 *)y->s;

	(void)arg;
	while (*p && *p == *q)
		p++, q++;
	if (*p || *q)
		return (int)(*p ? *p : (u8)x->term) - (int)(*q ? *q : (u8)y->term);
	return (int)(u8)x->term - (int)(u8)y->term;
}

/* " WEIGHT\n", the end of a folded line (a million of them: no printf) */
static void put_weight(struct sbuf *ob, u64 w)
{
	char buf[24], *p = buf + sizeof(buf);

	*--p = '\n';
	do
		*--p = '0' + w % 10;
	while (w /= 10);
	*--p = ' ';
	sbuf_add(ob, p, buf + sizeof(buf) - p);
}

/*
 * Folded lines go out a megabyte at a time: stdio's own buffer is a page for
 * a file, 44 000 write()s for the 181 MB of a million distinct stacks.
 */
#define FOLDED_CHUNK (1U << 20)

static void flush_lines(struct sbuf *ob, FILE *out)
{
	if (ob->len)
		fwrite(ob->buf, 1, ob->len, out);
	sbuf_reset(ob);
}

void report_folded(const struct report *rep, FILE *out)
{
	struct stack_names sn;
	struct stack_order o = { 0 };
	struct term_name *t;
	struct sbuf sb = { 0 }, ob = { 0 };
	u32 *order, *mid, *last, *end, *nlen, i, j, k, n, prev = 0, prev_len = 0, max_len = 0;
	char **sep;
	u8 *same;
	u64 w;

	stack_names_init(&sn, rep);
	for (i = 0; i < rep->nr_samples; i++)
		max_len = MAX(max_len, stack_len(&sn, i));
	n = sn.strs.nr;
	t = xmalloc(sizeof(*t) * 2 * (n ? n : 1));
	for (i = 0; i < n; i++) {
		t[2 * i] = (struct term_name){ strtab_str(&sn.strs, i), i, ';' };
		t[2 * i + 1] = (struct term_name){ strtab_str(&sn.strs, i), i, '\0' };
	}
	sort(t, 2 * n, sizeof(*t), term_cmp, NULL);
	mid = xmalloc(sizeof(*mid) * (n ? n : 1));
	last = xmalloc(sizeof(*last) * (n ? n : 1));
	for (i = 0; i < 2 * n; i++)
		(t[i].term ? mid : last)[t[i].id] = i + 1; /* 0: ended */
	o.rank_mid = mid;
	o.rank_last = last;
	o.max_rank = 2 * n;
	order = stack_sort(&sn, &o, &same);
	end = xmalloc(sizeof(*end) * (max_len + 1));
	/* each name once as ";name" with its length: no strlen per frame */
	sep = xmalloc(sizeof(*sep) * (n ? n : 1));
	nlen = xmalloc(sizeof(*nlen) * (n ? n : 1));
	for (i = 0; i < n; i++) {
		nlen[i] = strlen(strtab_str(&sn.strs, i));
		sep[i] = xmalloc(nlen[i] + 2);
		sep[i][0] = ';';
		memcpy(sep[i] + 1, strtab_str(&sn.strs, i), nlen[i] + 1);
	}
	for (i = 0; i < rep->nr_samples; i = j) {
		u32 s = order[i], len = stack_len(&sn, s);

		for (j = i + 1; j < rep->nr_samples && same[j]; j++)
			;
		for (w = 0, k = i; k < j; k++)
			w += report_weight(rep, &rep->samples[order[k]]);
		/* sorted lines share long prefixes: keep the one before's, write the rest */
		for (k = 0; i && k < len && k < prev_len; k++)
			if (stack_name(&sn, s, k) != stack_name(&sn, prev, k))
				break;
		sb.len = k ? end[k - 1] : 0;
		if (sb.buf)
			sb.buf[sb.len] = '\0';
		for (; k < len; k++) {
			u32 id = stack_name(&sn, s, k);

			/* ";name", the separator taken from the copy of the name */
			if (k)
				sbuf_add(&sb, sep[id], nlen[id] + 1);
			else
				sbuf_add(&sb, sep[id] + 1, nlen[id]);
			end[k] = sb.len;
		}
		sbuf_add(&ob, sb.buf, sb.len);
		put_weight(&ob, w);
		if (ob.len >= FOLDED_CHUNK)
			flush_lines(&ob, out);
		prev = s;
		prev_len = len;
	}
	flush_lines(&ob, out);
	sbuf_free(&ob);
	for (i = 0; i < n; i++)
		free(sep[i]);
	free(sep);
	free(nlen);
	free(end);
	free(order);
	free(same);
	free(mid);
	free(last);
	free(t);
	sbuf_free(&sb);
	stack_names_free(&sn);
}
