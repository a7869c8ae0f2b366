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
	};
#define SORT_KEYS "(use comm,pid,tid,dso,sym,srcline: at most 6, each once)"
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

static void add_frame(struct report *rep, const struct stack_frame *f)
{
	if (rep->nr_frames >= rep->alloc_frames) {
		rep->alloc_frames = rep->alloc_frames ? 2 * rep->alloc_frames : 4096;
		rep->frames = xrealloc(rep->frames, rep->alloc_frames, sizeof(*rep->frames));
		rep->frame_flags = xrealloc(rep->frame_flags, rep->alloc_frames, 1);
		rep->frame_off = xrealloc(rep->frame_off, rep->alloc_frames, sizeof(u64));
		rep->frame_addr = xrealloc(rep->frame_addr, rep->alloc_frames, sizeof(u64));
	}
	rep->frames[rep->nr_frames] = f->fi;
	rep->frame_flags[rep->nr_frames] = f->flags;
	rep->frame_off[rep->nr_frames] = f->off;
	rep->frame_addr[rep->nr_frames] = f->addr;
	rep->nr_frames++;
}

void report_build(struct report *rep, struct profile *p, struct resolver *r)
{
	struct stack st = { 0 };
	size_t i;
	u32 j, alloc = 0;

	memset(rep, 0, sizeof(*rep));
	rep->p = p;
	rep->r = r;
	rep->by_period = true;
	rep->t0 = p->nr_ev ? p->ev[0].time : 0;
	rep->time_to = UINT64_MAX;
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
		for (j = 0; j < rs->nr; j++) {
			if (st.f[j].flags & SF_KERNEL)
				rs->nr_kernel++;
			add_frame(rep, &st.f[j]);
		}
	}
	stack_free(&st);
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
	fprintf(out, "# event: %s", meta_event_name(m->event));
	if (m->event == CYCSAMPLE_EVENT_HW_CYCLES && m->pmu_name[0])
		fprintf(out, " (%.32s)", m->pmu_name);
	if (m->event == CYCSAMPLE_EVENT_SW_CPU_CLOCK || m->event == CYCSAMPLE_EVENT_SW_TASK_CLOCK)
		fprintf(out, " (software clock%s%s)", why ? ": " : "", why ? why : "");
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
	fputc('\n', out);
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
	struct u64map rows_by_frame; /* (pid, frame_info, kernel) -> row */
	struct top_row *rows;
	u32 nr;
	u32 alloc;
	/* call-graph trees: the (sample, frame) entries of each row */
	struct tree_ref *refs;
	u32 *ref_row;
	u32 nr_refs;
	u32 alloc_refs;
};

static u32 top_row(struct top *t, const struct report *rep, const struct report_opts *o,
		   const struct rsample *rs, u32 frame)
{
	const struct prof_event *e = &rep->p->ev[rs->ev];
	const struct cycsample_sample *s = prof_rec(rep->p, e);
	const struct frame_info *fi = res_fi(rep->r, rep->frames[rs->first + frame]);
	u32 fields[REPORT_MAX_KEYS], i, key_id, fi_idx = rep->frames[rs->first + frame];
	struct sbuf key = { 0 }, val = { 0 };
	bool per_pid = false, per_tid = false;
	struct top_row *row;
	u64 idx, fkey, task;

	for (i = 0; i < o->nr_keys; i++) {
		per_pid |= o->keys[i] == KEY_COMM || o->keys[i] == KEY_PID;
		per_tid |= o->keys[i] == KEY_TID;
	}
	/* a row depends only on these: skip building its key string again */
	task = per_tid ? s->tid : per_pid ? s->pid : 0;
	fkey = (task << 33) | (u64)fi_idx << 1 | (frame < rs->nr_kernel);
	if (u64map_get(&t->rows_by_frame, fkey, &idx))
		return idx;

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
			else if (fi->flags & FI_INLINE)
				sbuf_addstr(&val, " (inlined)");
			break;
		case KEY_SRCLINE:
			res_format_srcline(rep->r, fi_idx, false, &val);
			break;
		case KEY_TID:
			sbuf_printf(&val, "%u", s->tid);
			break;
		}
		fields[i] = strtab_intern(&t->strs, val.buf);
		sbuf_printf(&key, "%u\x1f", fields[i]);
	}
	key_id = strtab_intern(&t->strs, key.buf);
	sbuf_free(&key);
	sbuf_free(&val);
	if (u64map_get(&t->rows_by_key, key_id, &idx)) {
		u64map_put(&t->rows_by_frame, fkey, idx);
		return idx;
	}
	VEC_GROW(t->rows, t->nr, t->alloc);
	row = &t->rows[t->nr];
	memset(row, 0, sizeof(*row));
	memcpy(row->fields, fields, sizeof(fields));
	row->id = t->nr;
	row->last_sample = UINT32_MAX;
	u64map_put(&t->rows_by_key, key_id, t->nr);
	u64map_put(&t->rows_by_frame, fkey, t->nr);
	return t->nr++;
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
	default:
		return "Symbol";
	}
}

/* Count every row's weights (and collect the tree entries when asked). */
static void top_count(struct top *t, const struct report *rep, const struct report_opts *o)
{
	u32 i, j;

	for (i = 0; i < rep->nr_samples; i++) {
		const struct rsample *rs = &rep->samples[i];
		u64 w = report_weight(rep, rs);

		for (j = 0; j < rs->nr; j++) {
			/* top_row() may grow t.rows: index it only afterwards */
			u32 idx = top_row(t, rep, o, rs, j);
			struct top_row *row = &t->rows[idx];

			if (!j) {
				row->self += w;
				row->nr_self++;
				if (o->graph != GRAPH_NONE && !o->children)
					add_ref(t, idx, i, j);
			}
			if (row->last_sample != i) {
				row->last_sample = i;
				row->children += w;
				if (o->graph != GRAPH_NONE && o->children)
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
	free(t.rows);
	free(t.refs);
	free(t.ref_row);
	free(refs);
	free(first);
}

/* ---- folded ------------------------------------------------------------- */

/* Build the folded line (without count) of one sample: comm;root;...;leaf */
static void folded_line(const struct report *rep, const struct rsample *rs, struct sbuf *sb)
{
	const struct cycsample_sample *s = prof_rec(rep->p, &rep->p->ev[rs->ev]);
	int j;

	sbuf_reset(sb);
	report_comm_name(rep, s->pid, sb);
	for (j = rs->nr - 1; j >= 0; j--) {
		sbuf_addch(sb, ';');
		report_frame_name(rep, rep->frames[rs->first + j], j < rs->nr_kernel, sb);
	}
}

struct folded_entry {
	u32 id;
	u64 count;
};

static int folded_cmp(const void *a, const void *b, void *arg)
{
	const struct folded_entry *x = a, *y = b;
	const struct strtab *strs = arg;

	return strcmp(strtab_str(strs, x->id), strtab_str(strs, y->id));
}

void report_folded(const struct report *rep, FILE *out)
{
	struct folded_entry *ent = NULL;
	struct strtab strs = { 0 };
	struct sbuf sb = { 0 };
	u32 nr = 0, alloc = 0, i, id;
	u64 *counts = NULL;

	for (i = 0; i < rep->nr_samples; i++) {
		folded_line(rep, &rep->samples[i], &sb);
		id = strtab_intern(&strs, sb.buf);
		if (id >= nr) {
			VEC_GROW(ent, nr, alloc);
			counts = xrealloc(counts, alloc, sizeof(*counts));
			ent[nr].id = id;
			counts[nr] = 0;
			nr++;
		}
		counts[id] += report_weight(rep, &rep->samples[i]);
	}
	for (i = 0; i < nr; i++)
		ent[i].count = counts[ent[i].id];
	sort(ent, nr, sizeof(*ent), folded_cmp, &strs);
	for (i = 0; i < nr; i++)
		fprintf(out, "%s %llu\n", strtab_str(&strs, ent[i].id), ent[i].count);
	free(ent);
	free(counts);
	strtab_free(&strs);
	sbuf_free(&sb);
}
