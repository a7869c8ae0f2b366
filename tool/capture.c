// SPDX-License-Identifier: GPL-2.0
/*
 * Write and read capture files (format in capture.h).
 *
 * The reader treats the file as hostile: every length is checked against
 * what is left before it is used, every index against its table, records go
 * through the same validation as the live rings, and any inconsistency ends
 * the read with a message naming the section and offset.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "capture.h"
#include "ehframe.h"
#include "srcline.h"

#define CAP_HEADER_SIZE 32
#define CAP_BOM 0x01020304U
#define CAP_MAX_FILE (8ULL << 30)
#define CAP_MAX_STR (1U << 20)

/* ---- writing ------------------------------------------------------------ */

static void put_u8(struct sbuf *sb, u8 v)
{
	sbuf_add(sb, &v, 1);
}

static void put_u16(struct sbuf *sb, u16 v)
{
	sbuf_add(sb, &v, 2);
}

static void put_u32(struct sbuf *sb, u32 v)
{
	sbuf_add(sb, &v, 4);
}

static void put_u64(struct sbuf *sb, u64 v)
{
	sbuf_add(sb, &v, 8);
}

static void put_str(struct sbuf *sb, const char *s)
{
	u32 len = s ? strlen(s) : 0;

	put_u32(sb, len);
	sbuf_add(sb, s ? s : "", len);
}

/*
 * The file is written as it is produced: section payloads go through a small
 * buffer to the file, and each section's size is patched into its header
 * when the section ends, so no section (RECORDS can be gigabytes) is ever
 * held in memory twice.
 */
#define CAP_FLUSH_BYTES (1U << 20)

struct cap_out {
	FILE *f;
	struct sbuf sb; /* bytes not yet written */
	u64 flushed; /* bytes written to f */
	u64 sec_off; /* offset of the open section's header */
	u32 nr; /* sections so far */
	int err;
};

static u64 out_pos(const struct cap_out *w)
{
	return w->flushed + w->sb.len;
}

static void out_flush(struct cap_out *w)
{
	if (w->sb.len && !w->err && fwrite(w->sb.buf, 1, w->sb.len, w->f) != w->sb.len)
		w->err = -EIO;
	w->flushed += w->sb.len;
	sbuf_reset(&w->sb);
}

/* Call between items of a section: keeps the buffer small. */
static void out_maybe_flush(struct cap_out *w)
{
	if (w->sb.len >= CAP_FLUSH_BYTES)
		out_flush(w);
}

static void section_begin(struct cap_out *w, u32 type)
{
	w->sec_off = out_pos(w);
	put_u32(&w->sb, type);
	put_u32(&w->sb, 0);
	put_u64(&w->sb, 0); /* payload size, patched by section_end() */
}

static void section_end(struct cap_out *w)
{
	static const u8 zeros[8];
	u64 len = out_pos(w) - w->sec_off - 16;

	sbuf_add(&w->sb, zeros, ALIGN8(len) - len);
	w->nr++;
	if (w->sec_off >= w->flushed) {
		/* the header is still in the buffer */
		memcpy(w->sb.buf + (w->sec_off - w->flushed) + 8, &len, 8);
		return;
	}
	out_flush(w);
	if (w->err)
		return;
	if (fseeko(w->f, w->sec_off + 8, SEEK_SET) || fwrite(&len, 8, 1, w->f) != 1 ||
	    fseeko(w->f, 0, SEEK_END))
		w->err = errno ? -errno : -EIO;
}

static void meta_line(struct sbuf *sb, const char *key, const char *fmt, ...)
{
	size_t start;
	va_list ap;

	sbuf_printf(sb, "%s=", key);
	start = sb->len;
	va_start(ap, fmt);
	sbuf_vprintf(sb, fmt, ap);
	va_end(ap);
	/* one line per key: values never contain a newline */
	for (; start < sb->len; start++)
		if (sb->buf[start] == '\n' || sb->buf[start] == '\r')
			sb->buf[start] = ' ';
	sbuf_addch(sb, '\n');
}

/* "pmu.N=name type event fallback_reason fallback_errno nr_cpus samples cpulist" */
static void write_pmus(struct sbuf *sb, const struct prof_meta *m)
{
	struct sbuf cpus = { 0 }, key = { 0 };
	u32 i;

	for (i = 0; i < m->nr_pmus; i++) {
		const struct prof_pmu *p = &m->pmus[i];

		sbuf_reset(&cpus);
		sbuf_reset(&key);
		cpulist_format(p->cpus, ARRAY_SIZE(p->cpus), &cpus);
		sbuf_printf(&key, "pmu.%u", i);
		meta_line(sb, key.buf, "%.32s %u %u %u %d %u %llu %s", p->name[0] ? p->name : "-",
			  p->type, p->event, p->fallback_reason, p->fallback_errno, p->nr_cpus,
			  (unsigned long long)p->samples, cpus.buf ? cpus.buf : "");
	}
	sbuf_free(&cpus);
	sbuf_free(&key);
}

static void write_meta(struct sbuf *sb, const struct prof_meta *m)
{
	meta_line(sb, "tool_version", "%s", m->tool_version ? m->tool_version : "");
	meta_line(sb, "kernel_release", "%s", m->kernel_release ? m->kernel_release : "");
	meta_line(sb, "machine", "%s", m->machine ? m->machine : "");
	meta_line(sb, "hostname", "%s", m->hostname ? m->hostname : "");
	if (m->command)
		meta_line(sb, "command", "%s", m->command);
	meta_line(sb, "pmu_name", "%.32s", m->pmu_name);
	meta_line(sb, "event", "%u", m->event);
	meta_line(sb, "fallback_reason", "%u", m->fallback_reason);
	meta_line(sb, "fallback_errno", "%d", m->fallback_errno);
	meta_line(sb, "config_flags", "%u", m->config_flags);
	meta_line(sb, "target_type", "%u", m->target_type);
	meta_line(sb, "target", "%d", m->target);
	meta_line(sb, "sample_period", "%llu", m->sample_period);
	meta_line(sb, "clock_period_ns", "%llu", m->clock_period_ns);
	meta_line(sb, "start_time", "%llu", m->start_time);
	meta_line(sb, "duration_ns", "%llu", m->duration_ns);
	meta_line(sb, "samples", "%llu", m->samples);
	meta_line(sb, "lost", "%llu", m->lost);
	meta_line(sb, "throttled", "%llu", m->throttled);
	meta_line(sb, "dropped_kernel", "%llu", m->dropped_kernel);
	meta_line(sb, "dropped_other", "%llu", m->dropped_other);
	meta_line(sb, "cost_count", "%llu", m->cost_count);
	meta_line(sb, "cost_total_ns", "%llu", m->cost_total_ns);
	meta_line(sb, "cost_max_ns", "%llu", m->cost_max_ns);
	meta_line(sb, "cmd_status", "%d", m->cmd_status);
	meta_line(sb, "clock", "%u", m->clock);
	write_pmus(sb, m);
	meta_line(sb, "ksyms_hidden", "%d", m->ksyms_hidden);
	if (m->ksyms_note)
		meta_line(sb, "ksyms_note", "%s", m->ksyms_note);
}

static void write_records(struct cap_out *w, const struct profile *p)
{
	size_t i;

	for (i = 0; i < p->nr_ev; i++) {
		const struct cycsample_record_header *h = prof_rec(p, &p->ev[i]);

		sbuf_add(&w->sb, h, h->size);
		out_maybe_flush(w);
	}
}

static void write_comms(struct sbuf *sb, const struct profile *p)
{
	size_t pos = 0;
	u64 pid, id;

	while (u64map_next(&p->comm_index, &pos, &pid, &id)) {
		put_u32(sb, pid);
		put_str(sb, strtab_str(&p->comms, id));
	}
}

static u32 dso_index(const struct maps *ms, const struct dso *d)
{
	u32 i;

	for (i = 0; d && i < ms->nr_dsos; i++)
		if (ms->dsos[i] == d)
			return i;
	return UINT32_MAX;
}

/* Mark the symbols the samples hit: hits[dso][sym] */
static u8 **hit_symbols(const struct report *rep, const struct maps *ms)
{
	u8 **hits = xcalloc(ms->nr_dsos ? ms->nr_dsos : 1, sizeof(*hits));
	u32 i, di;

	for (i = 0; i < rep->r->nr_fis; i++) {
		const struct frame_info *fi = &rep->r->fis[i];

		/* synthetic .eh_frame symbols are written from their own table */
		if (!fi->d || !fi->sym || (fi->flags & FI_KERNEL) || (fi->sym->flags & DSYM_FDE))
			continue;
		di = dso_index(ms, fi->d);
		if (di == UINT32_MAX)
			continue;
		if (!hits[di])
			hits[di] = xcalloc(fi->d->nr_syms ? fi->d->nr_syms : 1, 1);
		hits[di][fi->sym - fi->d->syms] = 1;
	}
	return hits;
}

static void write_dsos(struct cap_out *w, const struct report *rep, const struct maps *ms)
{
	struct sbuf *sb = &w->sb, desc = { 0 };
	u8 **hits = hit_symbols(rep, ms);
	u32 i, j, n;

	for (i = 0; i < ms->nr_dsos; i++) {
		struct dso *d = ms->dsos[i];

		put_str(sb, d->path);
		put_u32(sb, d->build_id_len);
		sbuf_add(sb, d->build_id, d->build_id_len);
		put_u16(sb, d->e_type);
		put_u16(sb, d->e_machine);
		put_u32(sb, d->symsrc);
		sbuf_reset(&desc);
		if (d->symsrc == SYMSRC_EMBEDDED)
			sbuf_addstr(&desc, d->symsrc_path ? d->symsrc_path : ""); /* as recorded */
		else
			dso_symsrc_str(d, &desc);
		put_str(sb, desc.buf);
		put_u32(sb, d->nr_segs);
		for (j = 0; j < d->nr_segs; j++) {
			put_u64(sb, d->segs[j].vaddr);
			put_u64(sb, d->segs[j].memsz);
			put_u64(sb, d->segs[j].offset);
			put_u64(sb, d->segs[j].filesz);
			put_u32(sb, d->segs[j].flags);
		}
		for (j = 0, n = 0; hits[i] && j < d->nr_syms; j++)
			n += hits[i][j];
		put_u32(sb, n + dso_nr_fde_syms(d));
		for (j = 0; j < d->nr_syms + dso_nr_fde_syms(d); j++) {
			struct dso_sym *s = j < d->nr_syms ? &d->syms[j]
							   : dso_fde_sym_at(d, j - d->nr_syms);

			if (j < d->nr_syms && (!hits[i] || !hits[i][j]))
				continue;
			res_prologue(d, s);
			put_u64(sb, s->start);
			put_u64(sb, s->end);
			put_u32(sb, (u32)s->fs_off);
			put_u32(sb, s->flags);
			put_str(sb, dso_sym_name(d, s));
		}
		free(hits[i]);
		out_maybe_flush(w);
	}
	free(hits);
	sbuf_free(&desc);
}

/*
 * In the order maps_find() prefers them: the capture keeps no time of when
 * a mapping was known to be there, and a report from it prefers, in one
 * generation, the mapping read back last, as maps_prefer() did while
 * recording.
 */
static void write_maps(struct cap_out *w, const struct maps *ms)
{
	struct sbuf *sb = &w->sb;
	struct map **v;
	u32 i;

	v = xmalloc((ms->nr_all + 1) * sizeof(*v));
	if (ms->nr_all)
		memcpy(v, ms->all, ms->nr_all * sizeof(*v));
	maps_sort_preferred(v, ms->nr_all);
	for (i = 0; i < ms->nr_all; i++) {
		const struct map *m = v[i];

		put_u32(sb, m->pid);
		put_u32(sb, m->kind);
		put_u64(sb, m->gen_time);
		put_u64(sb, m->start);
		put_u64(sb, m->end);
		put_u64(sb, m->pgoff);
		put_u32(sb, m->prot);
		put_u32(sb, dso_index(ms, m->dso));
		put_u8(sb, m->deleted);
		put_str(sb, m->path);
		out_maybe_flush(w);
	}
	free(v);
}

static void put_ksym(struct cap_out *w, const struct kallsyms *k, struct u64map *seen,
		     const struct ksym *s)
{
	if (!s || u64map_get(seen, s->start, NULL))
		return;
	u64map_put(seen, s->start, 1);
	put_u64(&w->sb, s->start);
	put_u64(&w->sb, s->end);
	put_u8(&w->sb, s->type);
	put_str(&w->sb, ksym_name(k, s));
	put_str(&w->sb, ksym_module(k, s));
	out_maybe_flush(w);
}

/* The symbols the samples hit, and the one the vmlinux's offset was learnt from. */
static void write_ksyms(struct cap_out *w, const struct report *rep)
{
	const struct resolver *r = rep->r;
	const struct kallsyms *k = &r->ksyms;
	struct u64map seen = { 0 };
	size_t pos = 0;
	u64 addr, idx;

	put_u32(&w->sb, k->hidden);
	while (u64map_next(&r->kcache, &pos, &addr, &idx))
		put_ksym(w, k, &seen, ksyms_find(k, addr));
	if (kmods_kernel_anchor(&r->kmods, &addr))
		put_ksym(w, k, &seen, ksyms_find(k, addr));
	u64map_free(&seen);
}

static void write_jit(struct cap_out *w, const struct resolver *r)
{
	struct sbuf *sb = &w->sb;
	u32 i, j;

	for (i = 0; i < r->nr_jits; i++) {
		const struct jitmap *jm = r->jits[i];

		for (j = 0; j < jm->nr; j++) {
			put_u32(sb, jm->pid);
			put_u64(sb, jm->syms[j].start);
			put_u64(sb, jm->syms[j].end);
			put_str(sb, jitsym_name(jm, &jm->syms[j]));
			out_maybe_flush(w);
		}
	}
}

/* One (file, address) once, whichever mapping or process hit it. */
static bool first_src(struct u64map *seen, u32 nr_dsos, u32 di, u64 vaddr)
{
	u64 key = hash64(vaddr * nr_dsos + di);

	/* a collision drops an entry's lines, never mislabels one */
	if (u64map_get(seen, key, NULL))
		return false;
	u64map_put(seen, key, 1);
	return true;
}

/*
 * LINES: a string table, then per address: DSOS index, ELF virtual address,
 * source frames (function, file: string indexes; line).
 */
static void write_lines(struct cap_out *w, const struct report *rep, const struct maps *ms)
{
	struct src_frame src[SRC_MAX_FRAMES];
	struct strtab strs = { 0 };
	struct sbuf ent = { 0 };
	struct u64map seen = { 0 };
	u32 i, k, n, di;

	strtab_intern(&strs, "");
	for (i = 0; i < rep->r->nr_fis; i++) {
		const struct frame_info *fi = &rep->r->fis[i];

		if (!fi->d || (fi->flags & (FI_INLINE | FI_KERNEL)) || !fi->file)
			continue;
		di = dso_index(ms, fi->d);
		if (di == UINT32_MAX || !first_src(&seen, ms->nr_dsos, di, fi->vaddr))
			continue;
		n = dso_src_frames(fi->d, fi->vaddr, src, SRC_MAX_FRAMES);
		if (!n)
			continue;
		put_u32(&ent, di);
		put_u64(&ent, fi->vaddr);
		put_u32(&ent, n);
		for (k = 0; k < n; k++) {
			put_u32(&ent, strtab_intern(&strs, src[k].func ? src[k].func : ""));
			put_u32(&ent, strtab_intern(&strs, src[k].file ? src[k].file : ""));
			put_u32(&ent, src[k].line);
		}
	}
	put_u32(&w->sb, strs.nr);
	for (i = 0; i < strs.nr; i++) {
		put_str(&w->sb, strtab_str(&strs, i));
		out_maybe_flush(w);
	}
	sbuf_add(&w->sb, ent.buf ? ent.buf : "", ent.len);
	sbuf_free(&ent);
	strtab_free(&strs);
	u64map_free(&seen);
}

/* One module's part of KMODS, collected while walking the kernel addresses. */
struct kmod_out {
	u8 *hits; /* per symbol of the module's dso */
	struct sbuf lines;
	u32 nr_lines;
};

static void kmod_mark(struct kmod_out *o, const struct dso *d, const struct dso_sym *s)
{
	if (!s)
		return;
	if (!o->hits)
		o->hits = xcalloc(d->nr_syms ? d->nr_syms : 1, 1);
	o->hits[s - d->syms] = 1;
}

/*
 * A module frame (or the kernel image's) resolved in its dso: mark its
 * functions, add its source frames.
 */
static void kmod_collect(const struct resolver *r, struct kmod_out *out, struct u64map *seen,
			 u64 addr, const struct frame_info *fi)
{
	struct src_frame src[SRC_MAX_FRAMES];
	const struct ksym *ks = ksyms_find(&r->ksyms, addr);
	const char *name;
	const u8 *id;
	u32 mi, n, k, id_len;
	struct dso *d;

	if (!ks)
		return;
	mi = kmods_index(&r->kmods, ks->module ? ksym_module(&r->ksyms, ks) : KMOD_KERNEL);
	if (mi == UINT32_MAX)
		return;
	d = kmods_module(&r->kmods, mi, &name, &id, &id_len);
	if (!d || d != fi->d)
		return;
	kmod_mark(&out[mi], d, kmods_func(&r->kmods, mi, ksym_name(&r->ksyms, ks)));
	kmod_mark(&out[mi], d, dso_find(d, fi->vaddr));
	if (!first_src(seen, r->kmods.nr_mods, mi, fi->vaddr))
		return;
	n = dso_src_frames(d, fi->vaddr, src, SRC_MAX_FRAMES);
	if (!n)
		return;
	put_u64(&out[mi].lines, fi->vaddr);
	put_u32(&out[mi].lines, n);
	for (k = 0; k < n; k++) {
		put_str(&out[mi].lines, src[k].func ? src[k].func : "");
		put_str(&out[mi].lines, src[k].file ? src[k].file : "");
		put_u32(&out[mi].lines, src[k].line);
	}
	out[mi].nr_lines++;
}

/* The function the vmlinux's offset was learnt from, for a report to learn it. */
static void kmod_anchor(const struct resolver *r, struct kmod_out *out)
{
	u32 mi = kmods_index(&r->kmods, KMOD_KERNEL), id_len;
	const struct ksym *ks;
	const char *name;
	const u8 *id;
	struct dso *d;
	u64 kstart;

	if (mi == UINT32_MAX || !kmods_kernel_anchor(&r->kmods, &kstart))
		return;
	ks = ksyms_find(&r->ksyms, kstart);
	d = kmods_module(&r->kmods, mi, &name, &id, &id_len);
	if (ks && d)
		kmod_mark(&out[mi], d, kmods_func(&r->kmods, mi, ksym_name(&r->ksyms, ks)));
}

/*
 * KMODS: per module the samples hit (and the kernel image, KMOD_KERNEL),
 * its name and build-id; when a .ko (vmlinux) resolved its frames, the
 * functions kallsyms names or an address lies in (start, end, name) and per
 * address its source frames (ELF address of the .ko as libdwfl lays it out,
 * the vmlinux's own, then function, file, line per frame).
 */
static void write_kmods(struct cap_out *w, const struct report *rep)
{
	const struct resolver *r = rep->r;
	u32 nr = r->kmods.nr_mods, i, j, n, id_len;
	struct kmod_out *out = xcalloc(nr ? nr : 1, sizeof(*out));
	struct u64map seen = { 0 };
	struct sbuf *sb = &w->sb;
	const char *name;
	const u8 *id;
	size_t pos = 0;
	u64 addr, idx;

	while (u64map_next(&r->kcache, &pos, &addr, &idx))
		kmod_collect(r, out, &seen, addr, &r->fis[idx]);
	kmod_anchor(r, out);
	for (i = 0; i < nr; i++) {
		struct dso *d = kmods_module(&r->kmods, i, &name, &id, &id_len);

		if (!id_len && !out[i].nr_lines && !out[i].hits)
			goto next;
		put_str(sb, name);
		put_u32(sb, id_len);
		sbuf_add(sb, id, id_len);
		for (j = 0, n = 0; out[i].hits && j < d->nr_syms; j++)
			n += out[i].hits[j];
		put_u32(sb, n);
		for (j = 0; out[i].hits && j < d->nr_syms; j++) {
			if (!out[i].hits[j])
				continue;
			put_u64(sb, d->syms[j].start);
			put_u64(sb, d->syms[j].end);
			put_str(sb, dso_sym_name(d, &d->syms[j]));
		}
		put_u32(sb, out[i].nr_lines);
		sbuf_add(sb, out[i].lines.buf ? out[i].lines.buf : "", out[i].lines.len);
		out_maybe_flush(w);
next:
		free(out[i].hits);
		sbuf_free(&out[i].lines);
	}
	free(out);
	u64map_free(&seen);
}

static void write_sections(struct cap_out *w, const struct report *rep, const struct maps *ms)
{
	u64 end_off;

	sbuf_add(&w->sb, CAP_MAGIC, 8);
	put_u32(&w->sb, CAP_VERSION);
	put_u32(&w->sb, CAP_HEADER_SIZE);
	put_u32(&w->sb, CAP_BOM);
	put_u32(&w->sb, 0);
	put_u64(&w->sb, 0);

	section_begin(w, CAP_META);
	write_meta(&w->sb, &rep->p->meta);
	section_end(w);
	section_begin(w, CAP_RECORDS);
	write_records(w, rep->p);
	section_end(w);
	section_begin(w, CAP_COMMS);
	write_comms(&w->sb, rep->p);
	section_end(w);
	section_begin(w, CAP_DSOS);
	write_dsos(w, rep, ms);
	section_end(w);
	section_begin(w, CAP_MAPS);
	write_maps(w, ms);
	section_end(w);
	section_begin(w, CAP_KSYMS);
	write_ksyms(w, rep);
	section_end(w);
	section_begin(w, CAP_JIT);
	write_jit(w, rep->r);
	section_end(w);
	section_begin(w, CAP_LINES);
	write_lines(w, rep, ms);
	section_end(w);
	section_begin(w, CAP_KMODS);
	write_kmods(w, rep);
	section_end(w);
	end_off = out_pos(w);
	section_begin(w, CAP_END);
	put_u64(&w->sb, w->nr);
	put_u64(&w->sb, end_off);
	section_end(w);
	out_flush(w);
}

int capture_write(const char *path, const struct report *rep, const struct maps *ms)
{
	struct cap_out w = { 0 };
	struct out_file o;
	int ret;

	ret = out_open(&o, path);
	if (ret)
		return ret;
	w.f = o.f;
	write_sections(&w, rep, ms);
	ret = out_close(&o, w.err);
	sbuf_free(&w.sb);
	return ret;
}

/* ---- reading ------------------------------------------------------------ */

struct cursor {
	const u8 *p;
	size_t len;
	size_t pos;
	bool bad;
};

static bool need(struct cursor *c, size_t n)
{
	if (c->bad || c->len - c->pos < n) {
		c->bad = true;
		return false;
	}
	return true;
}

static u64 get_n(struct cursor *c, size_t n)
{
	u64 v = 0;

	if (!need(c, n))
		return 0;
	memcpy(&v, c->p + c->pos, n); /* little-endian host assumed (checked by BOM) */
	c->pos += n;
	return v;
}

#define get_u8(c) ((u8)get_n(c, 1))
#define get_u16(c) ((u16)get_n(c, 2))
#define get_u32(c) ((u32)get_n(c, 4))
#define get_u64(c) (get_n(c, 8))

/* A NUL-terminated copy; NULL (and c->bad) on a bad length. */
static char *get_str(struct cursor *c)
{
	u32 len = get_u32(c);
	char *s;

	if (len > CAP_MAX_STR || !need(c, len)) {
		c->bad = true;
		return NULL;
	}
	s = xstrndup((const char *)c->p + c->pos, len);
	c->pos += len;
	if (strlen(s) != len) {
		/* embedded NUL: not something we wrote */
		free(s);
		c->bad = true;
		return NULL;
	}
	return s;
}

static int fail(char *err, size_t len, const char *fmt, ...) __printf(3, 4);

static int fail(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -1;
}

static bool meta_u64(const char *val, u64 *out)
{
	return parse_u64(val, 10, out);
}

static bool meta_int(const char *val, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(val, &end, 10);
	if (errno || *end || end == val || v < INT32_MIN || v > INT32_MAX)
		return false;
	*out = v;
	return true;
}

/* One pmu.N line; entries must come in order, a bad one is ignored. */
static void meta_pmu_set(struct prof_meta *m, const char *key, const char *val)
{
	char name[32], cpus[4096];
	struct prof_pmu p = { 0 };
	unsigned long long samples;
	char *end;
	unsigned long idx;

	idx = strtoul(key, &end, 10);
	if (*end || end == key || idx != m->nr_pmus || idx >= CYCSAMPLE_MAX_PMUS)
		return;
	cpus[0] = '\0';
	if (sscanf(val, "%31s %u %u %u %d %u %llu %4095s", name, &p.type, &p.event,
		   &p.fallback_reason, &p.fallback_errno, &p.nr_cpus, &samples, cpus) < 7)
		return;
	if (!cpulist_parse(cpus, p.cpus, ARRAY_SIZE(p.cpus)))
		return;
	snprintf(p.name, sizeof(p.name), "%s", strcmp(name, "-") ? name : "");
	p.samples = samples;
	m->pmus[m->nr_pmus++] = p;
}

static void meta_set(struct prof_meta *m, const char *key, const char *val)
{
	static const struct {
		const char *key;
		size_t off;
	} u64s[] = {
		{ "sample_period", offsetof(struct prof_meta, sample_period) },
		{ "clock_period_ns", offsetof(struct prof_meta, clock_period_ns) },
		{ "start_time", offsetof(struct prof_meta, start_time) },
		{ "duration_ns", offsetof(struct prof_meta, duration_ns) },
		{ "samples", offsetof(struct prof_meta, samples) },
		{ "lost", offsetof(struct prof_meta, lost) },
		{ "throttled", offsetof(struct prof_meta, throttled) },
		{ "dropped_kernel", offsetof(struct prof_meta, dropped_kernel) },
		{ "dropped_other", offsetof(struct prof_meta, dropped_other) },
		{ "cost_count", offsetof(struct prof_meta, cost_count) },
		{ "cost_total_ns", offsetof(struct prof_meta, cost_total_ns) },
		{ "cost_max_ns", offsetof(struct prof_meta, cost_max_ns) },
	};
	static const struct {
		const char *key;
		size_t off;
	} u32s[] = {
		{ "event", offsetof(struct prof_meta, event) },
		{ "fallback_reason", offsetof(struct prof_meta, fallback_reason) },
		{ "config_flags", offsetof(struct prof_meta, config_flags) },
		{ "target_type", offsetof(struct prof_meta, target_type) },
		{ "clock", offsetof(struct prof_meta, clock) },
	};
	static const struct {
		const char *key;
		size_t off;
	} strs[] = {
		{ "tool_version", offsetof(struct prof_meta, tool_version) },
		{ "kernel_release", offsetof(struct prof_meta, kernel_release) },
		{ "machine", offsetof(struct prof_meta, machine) },
		{ "hostname", offsetof(struct prof_meta, hostname) },
		{ "command", offsetof(struct prof_meta, command) },
		{ "ksyms_note", offsetof(struct prof_meta, ksyms_note) },
	};
	u64 v;
	int iv;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(u64s); i++)
		if (!strcmp(key, u64s[i].key) && meta_u64(val, &v))
			*(u64 *)((char *)m + u64s[i].off) = v;
	for (i = 0; i < ARRAY_SIZE(u32s); i++)
		if (!strcmp(key, u32s[i].key) && meta_u64(val, &v) && v <= UINT32_MAX)
			*(u32 *)((char *)m + u32s[i].off) = v;
	for (i = 0; i < ARRAY_SIZE(strs); i++) {
		char **dst = (char **)((char *)m + strs[i].off);

		if (!strcmp(key, strs[i].key)) {
			free(*dst);
			*dst = xstrdup(val);
		}
	}
	if (!strncmp(key, "pmu.", 4))
		meta_pmu_set(m, key + 4, val);
	else if (!strcmp(key, "pmu_name"))
		snprintf(m->pmu_name, sizeof(m->pmu_name), "%s", val);
	else if (!strcmp(key, "target") && meta_int(val, &iv))
		m->target = iv;
	else if (!strcmp(key, "fallback_errno") && meta_int(val, &iv))
		m->fallback_errno = iv;
	else if (!strcmp(key, "cmd_status") && meta_int(val, &iv))
		m->cmd_status = iv;
	else if (!strcmp(key, "ksyms_hidden") && meta_int(val, &iv))
		m->ksyms_hidden = iv;
}

static int read_meta(const u8 *data, size_t len, struct prof_meta *m, char *err, size_t errlen)
{
	char *text = xstrndup((const char *)data, len), *line, *next, *eq;

	if (strlen(text) != len) {
		free(text);
		return fail(err, errlen, "META section contains a NUL byte");
	}
	for (line = text; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		eq = strchr(line, '=');
		if (!eq) {
			free(text);
			return fail(err, errlen, "META line without '='");
		}
		*eq = '\0';
		meta_set(m, line, eq + 1);
	}
	free(text);
	return 0;
}

static int read_records(const u8 *data, size_t len, size_t file_off, struct profile *p, bool borrow,
			char *err, size_t errlen)
{
	size_t pos = 0;
	const char *why;
	u32 size;

	/* a file's records stay in its mapping: no copy of hundreds of MB */
	if (borrow && prof_borrow_records(p, data, len))
		return 0;
	/* the smallest record is a LOST record: never more records than this */
	prof_reserve(p, len, MIN(len / sizeof(struct cycsample_lost), len / 64 + 1024));
	while (pos < len) {
		if (prof_add_record(p, data + pos, len - pos, 0, &size, &why) == REC_CORRUPT)
			return fail(err, errlen, "corrupt record at offset %zu: %s", file_off + pos,
				    why);
		pos += size;
	}
	return 0;
}

static int read_comms(struct cursor *c, struct profile *p)
{
	while (c->pos < c->len && !c->bad) {
		u32 pid = get_u32(c);
		char *comm = get_str(c);

		if (comm)
			prof_set_comm(p, pid, comm);
		free(comm);
	}
	return c->bad ? -1 : 0;
}

static int read_one_dso(struct cursor *c, struct maps *ms, u32 version)
{
	u8 id[DSO_BUILD_ID_MAX];
	u32 id_len, nr, i;
	struct dso *d;
	char *path;

	path = get_str(c);
	id_len = get_u32(c);
	if (!path || id_len > DSO_BUILD_ID_MAX || !need(c, id_len)) {
		free(path);
		return -1;
	}
	memcpy(id, c->p + c->pos, id_len);
	c->pos += id_len;
	d = dso_new_embedded(path);
	d->build_id_len = id_len;
	memcpy(d->build_id, id, id_len);
	d->e_type = get_u16(c);
	d->e_machine = get_u16(c);
	(void)get_u32(c); /* symbol source at record time: informational */
	if (version >= 2) {
		d->symsrc_path = get_str(c); /* the file they came from */
		if (!d->symsrc_path) {
			free(path);
			dso_free(d);
			return -1;
		}
	}
	nr = get_u32(c);
	for (i = 0; i < nr && !c->bad; i++) {
		struct dso_seg g;

		if (!need(c, 36))
			break;
		g.vaddr = get_u64(c);
		g.memsz = get_u64(c);
		g.offset = get_u64(c);
		g.filesz = get_u64(c);
		g.flags = get_u32(c);
		dso_add_seg(d, &g);
	}
	nr = get_u32(c);
	for (i = 0; i < nr && !c->bad; i++) {
		u64 start = get_u64(c), end = get_u64(c);
		s32 fs_off = (s32)get_u32(c);
		u32 flags = version >= 2 ? get_u32(c) : DSYM_SIZED;
		char *name = get_str(c);

		if (!name)
			break;
		if (fs_off < FS_OFF_UNKNOWN || fs_off > 4 * 64)
			fs_off = FS_OFF_UNKNOWN;
		if (flags & DSYM_FDE) {
			dso_add_fde_sym(d, start, end, name, fs_off);
		} else {
			dso_add_sym(d, start, end, name, fs_off);
			d->syms[d->nr_syms - 1].flags = (flags & DSYM_STORED_MASK) | DSYM_SIZED;
		}
		free(name);
	}
	dso_sort_syms(d);
	free(path);
	VEC_GROW(ms->dsos, ms->nr_dsos, ms->alloc_dsos);
	ms->dsos[ms->nr_dsos++] = d;
	return c->bad ? -1 : 0;
}

static int read_lines(struct cursor *c, struct maps *ms, u32 first_dso)
{
	struct src_frame src[SRC_MAX_FRAMES];
	u32 nr_strs = get_u32(c), i, k, n, di;
	char **strs;
	int ret = -1;

	/* every string takes at least its 4-byte length */
	if (c->bad || nr_strs > (c->len - c->pos) / 4 + 1)
		return -1;
	strs = xcalloc(nr_strs ? nr_strs : 1, sizeof(*strs));
	for (i = 0; i < nr_strs; i++) {
		strs[i] = get_str(c);
		if (!strs[i])
			goto out;
	}
	while (c->pos < c->len && !c->bad) {
		u64 vaddr;
		struct dso *d;

		di = get_u32(c);
		vaddr = get_u64(c);
		n = get_u32(c);
		if (c->bad || di >= ms->nr_dsos - first_dso || !n || n > SRC_MAX_FRAMES)
			goto out;
		for (k = 0; k < n; k++) {
			u32 func = get_u32(c), file = get_u32(c);

			src[k].line = get_u32(c);
			if (c->bad || func >= nr_strs || file >= nr_strs)
				goto out;
			src[k].func = *strs[func] ? strs[func] : NULL;
			src[k].file = *strs[file] ? strs[file] : NULL;
		}
		d = ms->dsos[first_dso + di];
		/* a real file found under --symfs has its own DWARF */
		if (!d->elf)
			dso_add_src(d, vaddr, src, n);
	}
	ret = c->bad ? -1 : 0;
out:
	for (i = 0; i < nr_strs; i++)
		free(strs[i]);
	free(strs);
	for (i = first_dso; i < ms->nr_dsos; i++)
		dso_sort_src(ms->dsos[i]);
	return ret;
}

/*
 * Why the real file @cand may not stand in for the stored @d, or NULL: it
 * must be the same build, name every symbol the capture stores, and have
 * source lines where the capture has them.  A stripped copy with the right
 * build-id would otherwise turn named frames into [file].
 */
static const char *reject_candidate(const struct dso *d, struct dso *cand, struct maps *ms,
				    char *buf, size_t len)
{
	u32 i, named = 0;

	if (d->build_id_len && (cand->build_id_len != d->build_id_len ||
				memcmp(cand->build_id, d->build_id, d->build_id_len)))
		return "its build-id is another build's";
	dso_load_syms(cand, &ms->search);
	for (i = 0; i < d->nr_syms; i++) {
		const struct dso_sym *s = dso_find(cand, d->syms[i].start);

		named += s && s->start == d->syms[i].start &&
			 !strcmp(dso_sym_name(cand, s), dso_sym_name(d, &d->syms[i]));
	}
	if (named < d->nr_syms) {
		snprintf(buf, len, "it names %u of the %u symbols the capture stores", named,
			 d->nr_syms);
		return buf;
	}
	if (d->src && !dso_has_src(cand))
		return "it has no source lines and the capture has";
	return NULL;
}

static void replace_dso(struct maps *ms, u32 idx, struct dso *cand)
{
	struct dso *old = ms->dsos[idx];
	u32 i;

	for (i = 0; i < ms->nr_all; i++)
		if (ms->all[i]->dso == old)
			ms->all[i]->dso = cand;
	ms->dsos[idx] = cand;
	dso_free(old);
}

/*
 * Prefer the real files (under --symfs, or at their recorded paths when the
 * capture has build-ids to check them by) where they are provably at least
 * as good as what the capture stores; -v says which and why not.
 */
static void adopt_real_files(struct maps *ms, u32 first, const char *symfs)
{
	u32 i, found = 0, taken = 0;
	char buf[128];

	for (i = first; i < ms->nr_dsos; i++) {
		struct dso *d = ms->dsos[i], *cand;
		const char *why;
		char *full;

		if (verbose) {
			struct sbuf sb = { 0 };

			dso_symsrc_str(d, &sb);
			pr_debug("%s: %u symbols: %s", d->path, d->nr_syms, sb.buf);
			sbuf_free(&sb);
		}
		if (d->path[0] != '/' || (!d->build_id_len && !symfs))
			continue;
		full = xasprintf("%s%s", symfs ? symfs : "", d->path);
		cand = dso_open_path(full, &why);
		if (!cand) {
			if (symfs || verbose > 1)
				pr_debug("%s: not used for %s: %s", full, d->path, why);
			free(full);
			continue;
		}
		found++;
		why = reject_candidate(d, cand, ms, buf, sizeof(buf));
		if (why) {
			pr_debug("%s: not used, the capture's symbols stay: %s", full, why);
			dso_free(cand);
		} else {
			pr_debug("%s: replaces the capture's symbols of %s", full, d->path);
			replace_dso(ms, i, cand);
			taken++;
		}
		free(full);
	}
	ms->real_found += found;
	ms->real_taken += taken;
}

static int read_maps(struct cursor *c, struct maps *ms, u32 first_dso)
{
	while (c->pos < c->len && !c->bad) {
		struct map m = { 0 };
		u32 di;

		m.pid = get_u32(c);
		m.kind = get_u32(c);
		m.gen_time = get_u64(c);
		m.start = get_u64(c);
		m.end = get_u64(c);
		m.pgoff = get_u64(c);
		m.prot = get_u32(c);
		di = get_u32(c);
		m.deleted = get_u8(c);
		m.path = get_str(c);
		if (c->bad || m.start >= m.end || m.kind > MAP_SPECIAL ||
		    (di != UINT32_MAX && di >= ms->nr_dsos - first_dso)) {
			free(m.path);
			return -1;
		}
		if (di != UINT32_MAX) {
			m.dso = ms->dsos[first_dso + di];
			m.build_id_len = m.dso->build_id_len;
			memcpy(m.build_id, m.dso->build_id, m.build_id_len);
		}
		maps_add(ms, &m);
		free(m.path);
	}
	return c->bad ? -1 : 0;
}

static int read_ksyms(struct cursor *c, struct resolver *r)
{
	struct kallsyms *k = &r->ksyms;

	k->hidden = get_u32(c) != 0;
	while (c->pos < c->len && !c->bad) {
		u64 start = get_u64(c), end = get_u64(c);
		char type = get_u8(c), *name = get_str(c), *mod = get_str(c);

		if (name && mod && start < end)
			ksyms_add(k, start, end, type, name, *mod ? mod : NULL);
		free(name);
		free(mod);
	}
	ksyms_finish(k);
	r->ksyms_ready = true;
	return c->bad ? -1 : 0;
}

/* One module of KMODS: its build-id, stored functions and source frames. */
static int read_one_kmod(struct cursor *c, struct resolver *r)
{
	struct src_frame src[SRC_MAX_FRAMES];
	char *name = get_str(c), *strs[2 * SRC_MAX_FRAMES];
	u32 id_len = get_u32(c), nr, i, k, n;
	const u8 *id = c->p + c->pos;
	struct dso *d;
	int ret = -1;

	if (!name || c->bad || id_len > DSO_BUILD_ID_MAX || !need(c, id_len)) {
		free(name);
		return -1;
	}
	c->pos += id_len;
	d = dso_new_embedded(name);
	nr = get_u32(c);
	for (i = 0; i < nr && !c->bad; i++) {
		u64 start = get_u64(c), end = get_u64(c);
		char *sym = get_str(c);

		if (!sym || start >= end) {
			free(sym);
			goto out;
		}
		dso_add_sym(d, start, end, sym, FS_OFF_UNKNOWN);
		free(sym);
	}
	dso_sort_syms(d);
	nr = get_u32(c);
	for (i = 0; i < nr && !c->bad; i++) {
		u64 vaddr = get_u64(c);

		n = get_u32(c);
		if (c->bad || !n || n > SRC_MAX_FRAMES)
			goto out;
		for (k = 0; k < n; k++) {
			strs[2 * k] = get_str(c);
			strs[2 * k + 1] = get_str(c);
			src[k].line = get_u32(c);
			src[k].func = strs[2 * k] && *strs[2 * k] ? strs[2 * k] : NULL;
			src[k].file = strs[2 * k + 1] && *strs[2 * k + 1] ? strs[2 * k + 1] : NULL;
		}
		if (!c->bad)
			dso_add_src(d, vaddr, src, n);
		for (k = 0; k < 2 * n; k++)
			free(strs[k]);
	}
	dso_sort_src(d);
	ret = c->bad ? -1 : 0;
out:
	if (ret)
		dso_free(d);
	else
		kmods_add_stored(&r->kmods, name, id, id_len, d);
	free(name);
	return ret;
}

static int read_jit(struct cursor *c, struct resolver *r)
{
	u32 i;

	while (c->pos < c->len && !c->bad) {
		u32 pid = get_u32(c);
		u64 start = get_u64(c), end = get_u64(c);
		char *name = get_str(c);

		if (name && start < end)
			jitmap_add(res_jitmap(r, pid, true), start, end, name);
		free(name);
	}
	for (i = 0; i < r->nr_jits; i++)
		jitmap_finish(r->jits[i]);
	return c->bad ? -1 : 0;
}

static const char *section_name(u32 type)
{
	switch (type) {
	case CAP_META:
		return "META";
	case CAP_RECORDS:
		return "RECORDS";
	case CAP_COMMS:
		return "COMMS";
	case CAP_DSOS:
		return "DSOS";
	case CAP_MAPS:
		return "MAPS";
	case CAP_KSYMS:
		return "KSYMS";
	case CAP_JIT:
		return "JIT";
	case CAP_LINES:
		return "LINES";
	case CAP_KMODS:
		return "KMODS";
	case CAP_END:
		return "END";
	default:
		return "unknown";
	}
}

/* With @borrow, the profile may keep pointers into @data (capture_read() hands it the mapping). */
static int read_mem(const void *data, size_t size, struct profile *p, struct maps *ms,
		    struct resolver *r, const char *symfs, bool borrow, char *err, size_t errlen)
{
	const u8 *base = data;
	size_t pos = CAP_HEADER_SIZE;
	u32 version, hsize, bom, nr = 0, first_dso = ms->nr_dsos;
	bool ended = false, have_records = false;

	if (size < CAP_HEADER_SIZE || memcmp(base, CAP_MAGIC, 8))
		return fail(err, errlen, "not a cycread capture file (bad magic)");
	memcpy(&version, base + 8, 4);
	memcpy(&hsize, base + 12, 4);
	memcpy(&bom, base + 16, 4);
	if (bom != CAP_BOM)
		return fail(err, errlen, "capture written with another byte order");
	if (version == 0 || version > CAP_VERSION)
		return fail(err, errlen, "capture format version %u, this cycread reads up to %u",
			    version, CAP_VERSION);
	if (hsize < CAP_HEADER_SIZE || hsize > size || hsize % 8)
		return fail(err, errlen, "bad header size %u", hsize);
	pos = hsize;
	while (!ended) {
		struct cursor c;
		u32 type;
		u64 len;
		int ret = 0;

		if (size - pos < 16)
			return fail(err, errlen,
				    "truncated: no END section (file cut short at %zu)", pos);
		memcpy(&type, base + pos, 4);
		memcpy(&len, base + pos + 8, 8);
		if (len > size - pos - 16 || ALIGN8(len) > size - pos - 16)
			return fail(err, errlen,
				    "truncated: %s section at offset %zu needs %llu bytes",
				    section_name(type), pos, len);
		c = (struct cursor){ .p = base + pos + 16, .len = len };
		switch (type) {
		case CAP_META:
			ret = read_meta(c.p, len, &p->meta, err, errlen);
			break;
		case CAP_RECORDS:
			ret = read_records(c.p, len, pos + 16, p, borrow, err, errlen);
			have_records = true;
			break;
		case CAP_COMMS:
			ret = read_comms(&c, p);
			break;
		case CAP_DSOS:
			while (!ret && c.pos < c.len)
				ret = read_one_dso(&c, ms, version);
			break;
		case CAP_MAPS:
			ret = read_maps(&c, ms, first_dso);
			break;
		case CAP_KSYMS:
			ret = read_ksyms(&c, r);
			break;
		case CAP_JIT:
			ret = read_jit(&c, r);
			break;
		case CAP_LINES:
			ret = read_lines(&c, ms, first_dso);
			break;
		case CAP_KMODS:
			while (!ret && c.pos < c.len)
				ret = read_one_kmod(&c, r);
			break;
		case CAP_END:
			if (len < 16 || get_u64(&c) != nr || get_u64(&c) != pos)
				return fail(err, errlen, "END section does not match the file");
			ended = true;
			break;
		default:
			break; /* a newer writer's section: skip it */
		}
		if (ret) {
			if (type != CAP_META && type != CAP_RECORDS)
				fail(err, errlen, "corrupt %s section at offset %zu",
				     section_name(type), pos);
			return -1;
		}
		nr++;
		pos += 16 + ALIGN8(len);
	}
	if (!have_records)
		return fail(err, errlen, "no RECORDS section");
	adopt_real_files(ms, first_dso, symfs);
	prof_sort(p);
	return 0;
}

int capture_read_mem(const void *data, size_t size, struct profile *p, struct maps *ms,
		     struct resolver *r, const char *symfs, char *err, size_t errlen)
{
	return read_mem(data, size, p, ms, r, symfs, false, err, errlen);
}

int capture_read(const char *path, struct profile *p, struct maps *ms, struct resolver *r,
		 const char *symfs, char *err, size_t errlen)
{
	const void *data;
	size_t len;
	int ret;

	/* mapped, not read: the records are used where they are, never copied */
	ret = map_file(path, CAP_MAX_FILE, &data, &len);
	if (ret)
		return fail(err, errlen, "%s", err_str(-ret));
	ret = read_mem(data, len, p, ms, r, symfs, !p->map, err, errlen);
	if (p->recs_borrowed && !p->map) {
		p->map = data;
		p->map_len = len;
	} else {
		unmap_file(data, len);
	}
	return ret;
}
