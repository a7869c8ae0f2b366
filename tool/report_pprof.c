// SPDX-License-Identifier: GPL-2.0
/*
 * --pprof FILE: the profile as pprof's profile.proto, gzip-compressed, the
 * format go tool pprof, Grafana Pyroscope, Parca and Google Cloud Profiler
 * read.  The C is generated at build time by protoc-c from the schema that
 * Debian's golang-github-google-pprof-dev ships.
 *
 * What goes where:
 *  - sample types "samples/count" and "<event>/<unit>" (cycles/count, or
 *    cpu-clock/nanoseconds for the software clock: the periods summed), the
 *    default the one --weight chose; the period type is the event's;
 *  - one Mapping per executable mapping of an object (with its build-id and
 *    file offset), one for the kernel and one per module;
 *  - one Location per (resolved frame, address), with one Line per function
 *    there: the functions inlined at the address first (innermost first,
 *    unless --no-inline), then the one they were inlined into, each with its
 *    source line (0 when unknown);
 *  - one Function per (name, object, source file);
 *  - samples with the same stack and labels merged; labels pid, tid, cpu
 *    (numbers), comm and pmu (strings).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "profile.pb-c.h"
#include "report.h"

typedef Perftools__Profiles__Profile pb_profile;
typedef Perftools__Profiles__ValueType pb_value_type;
typedef Perftools__Profiles__Sample pb_sample;
typedef Perftools__Profiles__Label pb_label;
typedef Perftools__Profiles__Mapping pb_mapping;
typedef Perftools__Profiles__Location pb_location;
typedef Perftools__Profiles__Line pb_line;
typedef Perftools__Profiles__Function pb_function;

#define PP_LABELS 5 /* pid, tid, cpu, comm, pmu */

/* A table of protobuf messages: the messages and the pointers protobuf-c wants. */
#define PP_TABLE(type)       \
	struct {             \
		type *v;     \
		type **ptrs; \
		u32 nr;      \
		u32 alloc;   \
	}

struct pp {
	const struct report *rep;
	struct strtab strs;
	PP_TABLE(pb_mapping) maps;
	PP_TABLE(pb_location) locs;
	PP_TABLE(pb_function) fns;
	PP_TABLE(pb_sample) samples;
	/* exact keys behind the hash indexes below */
	u64 *map_key;
	u32 *loc_fi;
	u64 *loc_addr;
	struct fn_key *fn_key;
	pb_line *lines; /* the locations' lines, back to back */
	u32 nr_lines;
	u32 alloc_lines;
	u32 *loc_line; /* per location: its first line */
	u16 *loc_nr_lines;
	pb_line **line_ptrs;
	pb_label *labels; /* PP_LABELS per sample */
	pb_label **label_ptrs;
	u64 *sample_locs; /* location ids, per sample at sample_first[i] */
	size_t *sample_first;
	size_t nr_sample_locs;
	size_t alloc_sample_locs;
	int64_t *values; /* 2 per sample */
	int64_t *lbl_vals; /* PP_LABELS per sample: what the labels say */
	struct u64map map_index;
	struct u64map loc_index;
	struct u64map fn_index;
	struct u64map sample_index;
	struct u64map label_strs; /* comm of a pid, name of a PMU index: label_key() */
	u32 lbl_pid, lbl_tid, lbl_cpu, lbl_comm, lbl_pmu, lbl_unit;
	struct sbuf clean; /* a string made UTF-8 */
};

/* protobuf strings are UTF-8: protoc and Go's readers refuse the whole profile */
static int64_t str(struct pp *pp, const char *s)
{
	return strtab_intern(&pp->strs, s ? utf8_clean(s, &pp->clean) : "");
}

/* Room for one more message in a table; evaluates to its index. */
#define PP_ADD(t)                                                           \
	({                                                                  \
		if ((t).nr >= (t).alloc) {                                  \
			(t).alloc = (t).alloc ? 2 * (t).alloc : 64;         \
			(t).v = xrealloc((t).v, (t).alloc, sizeof(*(t).v)); \
		}                                                           \
		(t).nr++;                                                   \
	})

/*
 * Find @key in @m, probing on from its hash until an entry whose exact key
 * @same() confirms; UINT32_MAX and *@slot (the free hash) when absent.
 */
static u32 lookup(const struct u64map *m, u64 h, bool (*same)(const struct pp *, u32, const void *),
		  const struct pp *pp, const void *key, u64 *slot)
{
	u64 idx;

	while (u64map_get(m, h, &idx)) {
		if (same(pp, idx, key))
			return idx;
		h++;
	}
	*slot = h;
	return UINT32_MAX;
}

/* ---- mappings ----------------------------------------------------------- */

static bool map_same(const struct pp *pp, u32 idx, const void *key)
{
	return pp->map_key[idx] == *(const u64 *)key;
}

/* The mapping a frame belongs to: its process mapping, or one per kernel object. */
static u64 frame_map_key(const struct frame_info *fi)
{
	if (fi->map)
		return fi->map->id + 1;
	return (fi->flags & FI_KERNEL ? 1ULL << 40 : 2ULL << 40) | fi->dso;
}

static void build_id_str(const u8 *id, u32 len, struct sbuf *sb)
{
	char hex[2 * DSO_BUILD_ID_MAX + 1];

	build_id_hex(id, MIN(len, (u32)DSO_BUILD_ID_MAX), hex);
	sbuf_addstr(sb, hex);
}

static u32 mapping(struct pp *pp, const struct frame_info *fi, u64 addr)
{
	const struct resolver *r = pp->rep->r;
	u64 key = frame_map_key(fi), slot = 0;
	u32 idx = lookup(&pp->map_index, hash64(key), map_same, pp, &key, &slot);
	struct sbuf sb = { 0 };
	const struct map *m = fi->map;
	pb_mapping *pm;

	if (idx != UINT32_MAX) {
		pm = &pp->maps.v[idx];
		if (!m) {
			/* kernel objects: the range of the addresses seen */
			pm->memory_start = MIN(pm->memory_start, addr);
			pm->memory_limit = MAX(pm->memory_limit, addr + 1);
		}
		pm->has_functions |= !!(fi->flags & FI_RESOLVED);
		return idx;
	}
	idx = PP_ADD(pp->maps);
	pp->map_key = xrealloc(pp->map_key, pp->maps.alloc, sizeof(*pp->map_key));
	pp->map_key[idx] = key;
	u64map_put(&pp->map_index, slot, idx);
	pm = &pp->maps.v[idx];
	*pm = (pb_mapping)PERFTOOLS__PROFILES__MAPPING__INIT;
	pm->id = idx + 1;
	pm->has_functions = !!(fi->flags & FI_RESOLVED);
	if (m) {
		pm->memory_start = m->start;
		pm->memory_limit = m->end;
		pm->file_offset = m->pgoff;
		pm->filename = str(pp, m->path && *m->path ? m->path : res_str(r, fi->dso));
		if (m->dso && m->dso->build_id_len)
			build_id_str(m->dso->build_id, m->dso->build_id_len, &sb);
		else if (m->build_id_len)
			build_id_str(m->build_id, m->build_id_len, &sb);
	} else {
		pm->memory_start = addr;
		pm->memory_limit = addr + 1;
		pm->filename = str(pp, res_str(r, fi->dso));
	}
	pm->build_id = str(pp, sb.buf);
	sbuf_free(&sb);
	return idx;
}

/* ---- functions and locations -------------------------------------------- */

struct fn_key {
	u32 name;
	u32 dso;
	u32 file;
};

static bool fn_same(const struct pp *pp, u32 idx, const void *key)
{
	return !memcmp(&pp->fn_key[idx], key, sizeof(struct fn_key));
}

static u32 function(struct pp *pp, const struct frame_info *fi)
{
	const struct resolver *r = pp->rep->r;
	struct fn_key key = { .name = fi->func, .dso = fi->dso, .file = fi->file };
	u64 slot = 0;
	u32 idx = lookup(&pp->fn_index, hash_bytes(&key, sizeof(key), 0), fn_same, pp, &key, &slot);
	pb_function *pf;

	if (idx != UINT32_MAX)
		return idx;
	idx = PP_ADD(pp->fns);
	pp->fn_key = xrealloc(pp->fn_key, pp->fns.alloc, sizeof(*pp->fn_key));
	pp->fn_key[idx] = key;
	u64map_put(&pp->fn_index, slot, idx);
	pf = &pp->fns.v[idx];
	*pf = (pb_function)PERFTOOLS__PROFILES__FUNCTION__INIT;
	pf->id = idx + 1;
	pf->name = str(pp, res_str(r, fi->func));
	pf->system_name = pf->name;
	pf->filename = str(pp, res_str(r, fi->file));
	return idx;
}

/* One Line: @fi's function and source line. */
static void add_line(struct pp *pp, const struct frame_info *fi)
{
	u32 fn = function(pp, fi);
	pb_line *l;

	VEC_GROW(pp->lines, pp->nr_lines, pp->alloc_lines);
	l = &pp->lines[pp->nr_lines++];
	*l = (pb_line)PERFTOOLS__PROFILES__LINE__INIT;
	l->function_id = fn + 1;
	l->line = fi->line;
}

struct loc_key {
	u32 fi;
	u64 addr;
};

static bool loc_same(const struct pp *pp, u32 idx, const void *key)
{
	const struct loc_key *k = key;

	return pp->loc_fi[idx] == k->fi && pp->loc_addr[idx] == k->addr;
}

static u32 location(struct pp *pp, u32 fi_idx, u64 addr)
{
	const struct resolver *r = pp->rep->r;
	const struct frame_info *fi = res_fi(r, fi_idx);
	struct loc_key key = { .fi = fi_idx, .addr = addr };
	u32 idx, map, k, nr_inl = r->inline_frames ? fi->nr_inl : 0;
	pb_mapping *pm;
	pb_location *pl;
	u64 slot = 0;

	idx = lookup(&pp->loc_index, hash64(addr ^ hash64(fi_idx)), loc_same, pp, &key, &slot);
	if (idx != UINT32_MAX)
		return idx;
	map = mapping(pp, fi, addr);
	idx = PP_ADD(pp->locs);
	pp->loc_fi = xrealloc(pp->loc_fi, pp->locs.alloc, sizeof(*pp->loc_fi));
	pp->loc_addr = xrealloc(pp->loc_addr, pp->locs.alloc, sizeof(*pp->loc_addr));
	pp->loc_line = xrealloc(pp->loc_line, pp->locs.alloc, sizeof(*pp->loc_line));
	pp->loc_nr_lines = xrealloc(pp->loc_nr_lines, pp->locs.alloc, sizeof(u16));
	pp->loc_fi[idx] = fi_idx;
	pp->loc_addr[idx] = addr;
	u64map_put(&pp->loc_index, slot, idx);
	pl = &pp->locs.v[idx];
	*pl = (pb_location)PERFTOOLS__PROFILES__LOCATION__INIT;
	pl->id = idx + 1;
	pl->mapping_id = map + 1;
	pl->address = addr;
	pp->loc_line[idx] = pp->nr_lines;
	pp->loc_nr_lines[idx] = nr_inl + 1;
	for (k = 0; k < nr_inl; k++)
		add_line(pp, res_fi(r, fi->inl + k));
	add_line(pp, fi);
	pm = &pp->maps.v[map];
	pm->has_filenames |= fi->file != RES_NO_STR;
	pm->has_line_numbers |= fi->line != 0;
	pm->has_inline_frames |= nr_inl != 0;
	return idx;
}

/* ---- samples ------------------------------------------------------------ */

/* Keys of label_strs: a pid's comm, a PMU index's name. */
static u64 label_key(bool pmu, u32 v)
{
	return (u64)v << 1 | pmu;
}

/*
 * The PMU a sample was taken on (its own index: a big.LITTLE session has
 * several) as a string table index, once per index; 0 (no label) for the
 * software clock or a PMU of no name.
 */
static int64_t sample_pmu(struct pp *pp, u32 idx)
{
	const struct prof_meta *m = &pp->rep->p->meta;
	const struct prof_pmu *pmu = meta_pmu(m, idx);
	const char *name = pmu ? pmu->name : m->pmu_name;
	u32 event = pmu ? pmu->event : m->event;
	u64 key = label_key(true, idx), val;
	struct sbuf sb = { 0 };

	if (u64map_get(&pp->label_strs, key, &val))
		return val;
	val = 0;
	if ((!m->nr_pmus || pmu) && event == CYCSAMPLE_EVENT_HW_CYCLES && name[0]) {
		sbuf_printf(&sb, "%.32s", name);
		val = str(pp, sb.buf);
		sbuf_free(&sb);
	}
	u64map_put(&pp->label_strs, key, val);
	return val;
}

/* A sample's comm label: its process's name, once per pid. */
static int64_t sample_comm(struct pp *pp, u32 pid)
{
	u64 key = label_key(false, pid), val;
	struct sbuf sb = { 0 };

	if (u64map_get(&pp->label_strs, key, &val))
		return val;
	report_comm_name(pp->rep, pid, &sb);
	val = str(pp, sb.buf);
	sbuf_free(&sb);
	u64map_put(&pp->label_strs, key, val);
	return val;
}

struct sample_key {
	const u64 *locs;
	size_t nr;
	const int64_t *lbl; /* PP_LABELS values */
};

static bool sample_same(const struct pp *pp, u32 idx, const void *key)
{
	const struct sample_key *k = key;

	return pp->samples.v[idx].n_location_id == k->nr &&
	       !memcmp(pp->sample_locs + pp->sample_first[idx], k->locs, k->nr * sizeof(u64)) &&
	       !memcmp(pp->lbl_vals + (size_t)idx * PP_LABELS, k->lbl, PP_LABELS * sizeof(int64_t));
}

static void set_labels(struct pp *pp, u32 idx, const int64_t *lbl)
{
	static const bool is_num[PP_LABELS] = { true, true, true, false, false };
	const u32 keys[PP_LABELS] = { pp->lbl_pid, pp->lbl_tid, pp->lbl_cpu, pp->lbl_comm,
				      pp->lbl_pmu };
	pb_label *l = &pp->labels[(size_t)idx * PP_LABELS];
	u32 i, n = 0;

	for (i = 0; i < PP_LABELS; i++) {
		if (!is_num[i] && !lbl[i])
			continue; /* no pmu (software clock) */
		l[n] = (pb_label)PERFTOOLS__PROFILES__LABEL__INIT;
		l[n].key = keys[i];
		if (is_num[i]) {
			/* with a unit, pprof keeps a 0 (cpu 0, pid 0) */
			l[n].num = lbl[i];
			l[n].num_unit = pp->lbl_unit;
		} else
			l[n].str = lbl[i];
		n++;
	}
	for (i = n; i < PP_LABELS; i++)
		l[i] = (pb_label)PERFTOOLS__PROFILES__LABEL__INIT;
	pp->samples.v[idx].n_label = n;
}

/* pprof's values are signed: a damaged capture's periods saturate (report_select()). */
static int64_t period_add(int64_t sum, u64 period)
{
	return period > (u64)(INT64_MAX - sum) ? INT64_MAX : sum + (int64_t)period;
}

static void add_sample(struct pp *pp, const struct rsample *rs)
{
	const struct report *rep = pp->rep;
	const struct cycsample_sample *s = prof_rec(rep->p, &rep->p->ev[rs->ev]);
	size_t first = pp->nr_sample_locs;
	struct sample_key key;
	int64_t lbl[PP_LABELS];
	u64 slot = 0;
	u32 j, idx;

	for (j = 0; j < rs->nr; j++) {
		u32 loc;

		/* an inline frame is a Line of the location of the frame after it */
		if (rep->frame_flags[rs->first + j] & SF_INLINE)
			continue;
		loc = location(pp, rep->frames[rs->first + j], rep->frame_addr[rs->first + j]);
		VEC_GROW(pp->sample_locs, pp->nr_sample_locs, pp->alloc_sample_locs);
		pp->sample_locs[pp->nr_sample_locs++] = loc + 1;
	}
	/* a stack without locations (none, or inline frames only): still an address for them */
	VEC_GROW(pp->sample_locs, pp->nr_sample_locs, pp->alloc_sample_locs);
	lbl[0] = s->pid;
	lbl[1] = s->tid;
	lbl[2] = s->cpu;
	lbl[3] = sample_comm(pp, s->pid);
	lbl[4] = sample_pmu(pp, s->pmu);
	key = (struct sample_key){ .locs = pp->sample_locs + first,
				   .nr = pp->nr_sample_locs - first,
				   .lbl = lbl };
	idx = lookup(&pp->sample_index,
		     hash_bytes(key.locs, key.nr * sizeof(u64), hash_bytes(lbl, sizeof(lbl), 0)),
		     sample_same, pp, &key, &slot);
	if (idx != UINT32_MAX) {
		pp->nr_sample_locs = first; /* the same stack is stored already */
		pp->values[2 * idx] += 1;
		pp->values[2 * idx + 1] = period_add(pp->values[2 * idx + 1], rs->period);
		return;
	}
	idx = PP_ADD(pp->samples);
	pp->sample_first = xrealloc(pp->sample_first, pp->samples.alloc, sizeof(size_t));
	pp->values = xrealloc(pp->values, pp->samples.alloc, 2 * sizeof(int64_t));
	pp->labels = xrealloc(pp->labels, pp->samples.alloc, PP_LABELS * sizeof(pb_label));
	pp->lbl_vals = xrealloc(pp->lbl_vals, pp->samples.alloc, PP_LABELS * sizeof(int64_t));
	memcpy(pp->lbl_vals + (size_t)idx * PP_LABELS, lbl, sizeof(lbl));
	pp->sample_first[idx] = first;
	pp->values[2 * idx] = 1;
	pp->values[2 * idx + 1] = period_add(0, rs->period);
	u64map_put(&pp->sample_index, slot, idx);
	pp->samples.v[idx] = (pb_sample)PERFTOOLS__PROFILES__SAMPLE__INIT;
	pp->samples.v[idx].n_location_id = key.nr;
	pp->samples.v[idx].n_value = 2;
	set_labels(pp, idx, lbl);
}

/* ---- the profile -------------------------------------------------------- */

/* Point every message at its parts once the tables stop moving. */
static void link_tables(struct pp *pp)
{
	u32 i, n;

	pp->maps.ptrs = xcalloc(pp->maps.nr + 1, sizeof(void *));
	for (i = 0; i < pp->maps.nr; i++)
		pp->maps.ptrs[i] = &pp->maps.v[i];
	pp->fns.ptrs = xcalloc(pp->fns.nr + 1, sizeof(void *));
	for (i = 0; i < pp->fns.nr; i++)
		pp->fns.ptrs[i] = &pp->fns.v[i];
	pp->locs.ptrs = xcalloc(pp->locs.nr + 1, sizeof(void *));
	pp->line_ptrs = xcalloc(pp->nr_lines + 1, sizeof(void *));
	for (i = 0; i < pp->nr_lines; i++)
		pp->line_ptrs[i] = &pp->lines[i];
	for (i = 0; i < pp->locs.nr; i++) {
		pp->locs.ptrs[i] = &pp->locs.v[i];
		pp->locs.v[i].n_line = pp->loc_nr_lines[i];
		pp->locs.v[i].line = &pp->line_ptrs[pp->loc_line[i]];
	}
	pp->samples.ptrs = xcalloc(pp->samples.nr + 1, sizeof(void *));
	pp->label_ptrs = xcalloc((size_t)pp->samples.nr * PP_LABELS + 1, sizeof(void *));
	for (i = 0; i < pp->samples.nr; i++) {
		pb_sample *ps = &pp->samples.v[i];

		pp->samples.ptrs[i] = ps;
		ps->location_id = (uint64_t *)(pp->sample_locs + pp->sample_first[i]);
		ps->value = &pp->values[2 * i];
		for (n = 0; n < PP_LABELS; n++)
			pp->label_ptrs[(size_t)i * PP_LABELS + n] =
				&pp->labels[(size_t)i * PP_LABELS + n];
		ps->label = &pp->label_ptrs[(size_t)i * PP_LABELS];
	}
}

static void pp_free(struct pp *pp)
{
	free(pp->maps.v);
	free(pp->maps.ptrs);
	free(pp->locs.v);
	free(pp->locs.ptrs);
	free(pp->fns.v);
	free(pp->fns.ptrs);
	free(pp->samples.v);
	free(pp->samples.ptrs);
	free(pp->map_key);
	free(pp->loc_fi);
	free(pp->loc_addr);
	free(pp->fn_key);
	free(pp->lines);
	free(pp->loc_line);
	free(pp->loc_nr_lines);
	free(pp->line_ptrs);
	free(pp->labels);
	free(pp->label_ptrs);
	free(pp->sample_locs);
	free(pp->sample_first);
	free(pp->values);
	free(pp->lbl_vals);
	u64map_free(&pp->map_index);
	u64map_free(&pp->loc_index);
	u64map_free(&pp->fn_index);
	u64map_free(&pp->sample_index);
	u64map_free(&pp->label_strs);
	strtab_free(&pp->strs);
	sbuf_free(&pp->clean);
}

/* pprof's names for what a period counts. */
static const char *event_unit(u32 event)
{
	return event == CYCSAMPLE_EVENT_SW_CPU_CLOCK || event == CYCSAMPLE_EVENT_SW_TASK_CLOCK ||
			       event == CYCSAMPLE_EVENT_CLOCK
		       ? "nanoseconds"
		       : "count";
}

static void add_comment(struct pp *pp, int64_t *comments, size_t *nr, const char *fmt,
			const char *a, const char *b)
{
	char *s = xasprintf(fmt, a ? a : "", b ? b : "");

	comments[(*nr)++] = str(pp, s);
	free(s);
}

void report_pprof_mem(const struct report *rep, u8 **buf, size_t *len)
{
	const struct prof_meta *m = &rep->p->meta;
	const char *ev = meta_event_name(m->event);
	pb_profile prof = PERFTOOLS__PROFILES__PROFILE__INIT;
	pb_value_type types[2] = { PERFTOOLS__PROFILES__VALUE_TYPE__INIT,
				   PERFTOOLS__PROFILES__VALUE_TYPE__INIT };
	pb_value_type *type_ptrs[2] = { &types[0], &types[1] };
	pb_value_type period = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	struct pp pp = { .rep = rep };
	int64_t comments[4];
	size_t nr_comments = 0;
	u32 i;

	str(&pp, ""); /* pprof's string 0 */
	types[0].type = str(&pp, "samples");
	types[0].unit = str(&pp, "count");
	types[1].type = str(&pp, ev);
	types[1].unit = str(&pp, event_unit(m->event));
	period = types[1];
	pp.lbl_pid = str(&pp, "pid");
	pp.lbl_tid = str(&pp, "tid");
	pp.lbl_cpu = str(&pp, "cpu");
	pp.lbl_comm = str(&pp, "comm");
	pp.lbl_pmu = str(&pp, "pmu");
	pp.lbl_unit = str(&pp, "id");
	for (i = 0; i < rep->nr_samples; i++)
		add_sample(&pp, &rep->samples[i]);
	link_tables(&pp);
	add_comment(&pp, comments, &nr_comments, "cycread %s%s", m->tool_version, NULL);
	if (m->kernel_release)
		add_comment(&pp, comments, &nr_comments, "kernel %s %s", m->kernel_release,
			    m->machine);
	if (m->hostname)
		add_comment(&pp, comments, &nr_comments, "host %s%s", m->hostname, NULL);
	if (m->command)
		add_comment(&pp, comments, &nr_comments, "command %s%s", m->command, NULL);

	prof.n_sample_type = 2;
	prof.sample_type = type_ptrs;
	prof.default_sample_type = rep->by_period ? types[1].type : types[0].type;
	prof.period_type = &period;
	/* frequency mode changes the period as it goes: give the mean */
	if (m->config_flags & CYCSAMPLE_CFG_FREQ)
		prof.period = rep->nr_samples ? rep->total_period / rep->nr_samples : 0;
	else
		prof.period = m->sample_period;
	prof.time_nanos = m->start_time * 1000000000LL + rep->time_from;
	prof.duration_nanos =
		MIN(m->duration_ns, rep->time_to) - MIN(m->duration_ns, rep->time_from);
	prof.n_comment = nr_comments;
	prof.comment = comments;
	prof.n_sample = pp.samples.nr;
	prof.sample = pp.samples.ptrs;
	prof.n_mapping = pp.maps.nr;
	prof.mapping = pp.maps.ptrs;
	prof.n_location = pp.locs.nr;
	prof.location = pp.locs.ptrs;
	prof.n_function = pp.fns.nr;
	prof.function = pp.fns.ptrs;
	prof.n_string_table = pp.strs.nr;
	prof.string_table = pp.strs.strs;

	*len = perftools__profiles__profile__get_packed_size(&prof);
	*buf = xmalloc(*len ? *len : 1);
	perftools__profiles__profile__pack(&prof, *buf);
	pp_free(&pp);
}

/* gzip @in into @out; 0 or -errno. */
static int gzip(const u8 *in, size_t len, struct sbuf *out)
{
	z_stream zs = { 0 };
	u8 chunk[65536];
	int ret;

	if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
	    Z_OK)
		return -ENOMEM;
	zs.next_in = (u8 *)in;
	zs.avail_in = len; /* profiles stay far below 4 GiB */
	do {
		zs.next_out = chunk;
		zs.avail_out = sizeof(chunk);
		ret = deflate(&zs, Z_FINISH);
		if (ret == Z_STREAM_ERROR)
			break;
		sbuf_add(out, chunk, sizeof(chunk) - zs.avail_out);
	} while (ret != Z_STREAM_END);
	deflateEnd(&zs);
	return ret == Z_STREAM_END ? 0 : -EIO;
}

int report_pprof(const struct report *rep, const char *path)
{
	struct sbuf gz = { 0 };
	struct out_file o;
	size_t len;
	u8 *buf;
	int ret;

	report_pprof_mem(rep, &buf, &len);
	ret = gzip(buf, len, &gz);
	free(buf);
	if (!ret)
		ret = out_open(&o, path);
	if (!ret)
		ret = out_close(&o, fwrite(gz.buf, 1, gz.len, o.f) != gz.len ? -EIO : 0);
	sbuf_free(&gz);
	return ret;
}
