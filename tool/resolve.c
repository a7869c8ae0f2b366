// SPDX-License-Identifier: GPL-2.0
/*
 * Addresses to frames: mappings, ELF symbols, JIT maps,
 * kallsyms, demangling, and the arm64 leaf-caller repair.
 */
#include <elf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "demangle.h"
#include "ehframe.h"
#include "resolve.h"
#include "srcline.h"

/* Re-read a process's maps for unknown addresses at most this often. */
#define REFRESH_INTERVAL_NS (20 * 1000 * 1000ULL)
#define REFRESH_MAX 2000

const char *const unres_reason_str[UR_MAX] = {
	[UR_NONE] = "resolved",
	[UR_NO_MAPPING] = "no mapping",
	[UR_NO_FILE] = "file not readable",
	[UR_NO_SYMBOLS] = "no symbols (stripped, no debug file)",
	[UR_NO_SYMBOL] = "address outside any symbol",
	[UR_JIT_NO_MAP] = "JIT/anonymous code without perf map",
	[UR_KERNEL_HIDDEN] = "kernel address hidden",
	[UR_KERNEL_UNKNOWN] = "kernel address not in kallsyms",
	[UR_PID_HIDDEN] = "process outside this PID namespace (pid 0)",
};

void res_init(struct resolver *r, struct maps *maps, bool live)
{
	memset(r, 0, sizeof(*r));
	r->maps = maps;
	r->live = live;
	r->demangle = true;
	r->leaf_repair = true;
	r->inline_frames = true;
	r->jit_dir = "/tmp";
	strtab_intern(&r->strs, ""); /* RES_NO_STR */
}

void res_free(struct resolver *r)
{
	u32 i;

	ksyms_free(&r->ksyms);
	kmods_free(&r->kmods);
	for (i = 0; i < r->nr_jits; i++) {
		jitmap_free(r->jits[i]);
		free(r->jits[i]);
	}
	free(r->jits);
	u64map_free(&r->jit_index);
	strtab_free(&r->strs);
	free(r->fis);
	for (i = 0; i < r->nr_map_cache; i++)
		u64map_free(&r->map_cache[i]);
	free(r->map_cache);
	for (i = 0; i < r->nr_unmapped; i++)
		u64map_free(&r->unmapped[i].fis);
	free(r->unmapped);
	u64map_free(&r->unmapped_index);
	free(r->fast);
	free(r->seen);
	u64map_free(&r->kcache);
	u64map_free(&r->demangled);
	memset(r, 0, sizeof(*r));
}

void stack_free(struct stack *st)
{
	free(st->f);
	memset(st, 0, sizeof(*st));
}

static u32 intern(struct resolver *r, const char *s)
{
	return strtab_intern(&r->strs, s);
}

static u32 new_fi(struct resolver *r)
{
	VEC_GROW(r->fis, r->nr_fis, r->alloc_fis);
	memset(&r->fis[r->nr_fis], 0, sizeof(r->fis[0]));
	return r->nr_fis++;
}

static u32 display_name(struct resolver *r, const char *raw)
{
	u32 raw_id = intern(r, raw);
	char *dm;
	u64 id;

	if (!r->demangle)
		return raw_id;
	if (u64map_get(&r->demangled, raw_id, &id))
		return id;
	dm = demangle(raw);
	id = dm ? intern(r, dm) : raw_id;
	free(dm);
	u64map_put(&r->demangled, raw_id, id);
	return id;
}

static u32 bracketed(struct resolver *r, const char *name)
{
	char *s = xasprintf("[%s]", name);
	u32 id = intern(r, s);

	free(s);
	return id;
}

void res_load_kernel(struct resolver *r)
{
	if (r->ksyms_ready)
		return;
	r->ksyms_ready = true;
	if (r->live)
		ksyms_load(&r->ksyms, r->kallsyms_path, r->modules_path);
}

static void resolve_src(struct resolver *r, u32 idx);

/*
 * A module frame whose .ko is found: the .ko's function, and with its DWARF
 * the source line and inline frames.
 */
static void resolve_module(struct resolver *r, u32 idx, const struct ksym *ks, u64 addr)
{
	struct frame_info *fi = &r->fis[idx];
	const struct dso_sym *sym;
	struct dso *d;
	u64 vaddr;

	if (!kmods_locate(&r->kmods, ksym_module(&r->ksyms, ks), ksym_name(&r->ksyms, ks),
			  addr - ks->start, &d, &vaddr))
		return;
	sym = dso_find(d, vaddr);
	if (sym) {
		fi->func = display_name(r, dso_sym_name(d, sym));
		fi->off = vaddr - sym->start;
	}
	fi->d = d;
	fi->vaddr = vaddr;
	resolve_src(r, idx);
}

/*
 * The kernel image's offset, learnt from the frame's function or, when its
 * name is not unique, from the first kallsyms function whose name is; once.
 */
static bool kernel_offset(struct resolver *r, const struct ksym *ks)
{
	int ret;
	u32 i;

	if (r->no_image_offset)
		return false;
	ret = kmods_kernel_offset(&r->kmods, ksym_name(&r->ksyms, ks), ks->start);
	for (i = 0; !ret && i < r->ksyms.nr; i++) {
		const struct ksym *o = &r->ksyms.syms[i];

		if (!o->module)
			ret = kmods_kernel_offset(&r->kmods, ksym_name(&r->ksyms, o), o->start);
	}
	if (!ret)
		pr_warn("%s: no kallsyms function of the kernel has its name there once (not the "
			"kernel that ran?); kernel frames keep their kallsyms names",
			kmods_kernel_file(&r->kmods));
	r->no_image_offset = ret != 1;
	return ret == 1;
}

/* A core kernel frame, with a vmlinux (or a capture's copy of its lines). */
static void resolve_image(struct resolver *r, u32 idx, const struct ksym *ks, u64 addr)
{
	struct frame_info *fi = &r->fis[idx];
	struct dso *d;
	u64 vaddr;

	if (!kernel_offset(r, ks) ||
	    !kmods_locate_kernel(&r->kmods, ksym_name(&r->ksyms, ks), ks->start, addr, &d, &vaddr))
		return;
	fi->d = d;
	fi->vaddr = vaddr;
	resolve_src(r, idx);
}

u32 res_kernel(struct resolver *r, u64 addr)
{
	const struct ksym *ks;
	struct frame_info *fi;
	u64 idx;
	u32 i;

	if (u64map_get(&r->kcache, addr, &idx))
		return idx;
	res_load_kernel(r);
	i = new_fi(r);
	fi = &r->fis[i];
	fi->flags = FI_KERNEL;
	ks = (addr && !r->ksyms.hidden) ? ksyms_find(&r->ksyms, addr) : NULL;
	if (ks) {
		fi->func = display_name(r, ksym_name(&r->ksyms, ks));
		fi->dso = ks->module ? bracketed(r, ksym_module(&r->ksyms, ks))
				     : intern(r, "[kernel.kallsyms]");
		fi->path = fi->dso;
		fi->off = addr - ks->start;
		fi->flags |= FI_RESOLVED;
		if (ks->module)
			resolve_module(r, i, ks, addr);
		else
			resolve_image(r, i, ks, addr);
	} else {
		fi->reason = (!addr || r->ksyms.hidden || !r->ksyms.nr) ? UR_KERNEL_HIDDEN
									: UR_KERNEL_UNKNOWN;
		fi->func = intern(r, fi->reason == UR_KERNEL_HIDDEN ? "[kernel]" : "[unknown]");
		fi->dso = intern(r, "[kernel.kallsyms]");
		fi->path = fi->dso;
		fi->off = addr;
	}
	u64map_put(&r->kcache, addr, i);
	return i;
}

/*
 * (Re)read the process's perf map.  The file must belong to the process's
 * user (or root), as perf requires; once the process is gone, to the user
 * it had when last seen.  When no file is found (a JIT may delete its map
 * when it exits), what was read before is kept.
 */
static void jit_load_live(struct resolver *r, struct jitmap *j)
{
	struct jitmap fresh = { .pid = j->pid, .owner_uid = j->owner_uid };
	struct stat st;
	char path[4096];
	u32 pid = j->pid;

	j->loaded_at = now_ns();
	snprintf(path, sizeof(path), "/proc/%u", pid);
	if (!stat(path, &st))
		j->owner_uid = fresh.owner_uid = st.st_uid;
	/* the process's /tmp first (containers), then ours */
	snprintf(path, sizeof(path), "/proc/%u/root%s/perf-%u.map", pid, r->jit_dir, pid);
	if (jitmap_load(&fresh, path, fresh.owner_uid)) {
		snprintf(path, sizeof(path), "%s/perf-%u.map", r->jit_dir, pid);
		if (jitmap_load(&fresh, path, fresh.owner_uid)) {
			jitmap_free(&fresh);
			return;
		}
	}
	fresh.loaded_at = j->loaded_at;
	fresh.reread = j->reread;
	jitmap_free(j);
	*j = fresh;
}

struct jitmap *res_jitmap(struct resolver *r, u32 pid, bool create)
{
	struct jitmap *j;
	u64 idx;

	if (u64map_get(&r->jit_index, pid, &idx))
		return r->jits[idx];
	if (!create && !r->live)
		return NULL;
	j = xcalloc(1, sizeof(*j));
	j->pid = pid;
	j->owner_uid = -1;
	if (r->live)
		jit_load_live(r, j);
	VEC_GROW(r->jits, r->nr_jits, r->alloc_jits);
	u64map_put(&r->jit_index, pid, r->nr_jits);
	r->jits[r->nr_jits++] = j;
	return j;
}

/*
 * While recording: JIT code appears and its map grows, and a JIT may delete
 * its map when it exits, so read it as soon as anonymous code is sampled and
 * again (rate-limited) when an address is not in it yet.
 */
static void observe_jit(struct resolver *r, u32 pid, u64 addr)
{
	struct jitmap *j = res_jitmap(r, pid, true);

	if (!jitmap_find(j, addr) && now_ns() - j->loaded_at >= REFRESH_INTERVAL_NS * 5)
		jit_load_live(r, j);
}

void res_prologue(struct dso *d, struct dso_sym *sym)
{
	u8 code[4 * LEAF_SCAN_INSNS];
	u64 n;

	if (sym->fs_off != FS_OFF_UNKNOWN || d->e_machine != EM_AARCH64)
		return;
	n = MIN((sym->end - sym->start) / 4, (u64)LEAF_SCAN_INSNS);
	if (n && dso_read(d, sym->start, code, 4 * n))
		sym->fs_off = a64_frame_setup_offset(code, n);
}

/*
 * The report's first miss in a live session's map reads it once more: the
 * rate limit of observe_jit() can leave the last load older than the JIT's
 * last lines (an early stray frame loads the map before the JIT wrote it,
 * and every later look falls in the same interval).  The file outlives
 * the process, so this read still finds it after the run.
 */
static const struct jitsym *find_jit(struct resolver *r, struct jitmap *j, u64 addr)
{
	const struct jitsym *js = jitmap_find(j, addr);

	if (!js && r->live && !j->reread) {
		jit_load_live(r, j);
		j->reread = true;
		js = jitmap_find(j, addr);
	}
	return js;
}

static void resolve_anon(struct resolver *r, struct frame_info *fi, u32 pid, u64 addr)
{
	struct jitmap *j = res_jitmap(r, pid, false);
	const struct jitsym *js = j ? find_jit(r, j, addr) : NULL;

	if (js) {
		fi->func = display_name(r, jitsym_name(j, js));
		fi->dso = intern(r, "[jit]");
		fi->off = addr - js->start;
		fi->flags |= FI_RESOLVED | FI_JIT;
	} else {
		fi->reason = UR_JIT_NO_MAP;
		fi->func = intern(r, "[anon]");
		fi->dso = fi->func;
		fi->off = addr;
	}
	fi->path = fi->dso;
}

/*
 * The source frames at the address: the frame's own file and line, and one
 * frame_info per inlined function, right after @idx (innermost first).
 */
static void resolve_src(struct resolver *r, u32 idx)
{
	struct src_frame src[SRC_MAX_FRAMES];
	struct frame_info *fi = &r->fis[idx];
	u32 n, k, first = r->nr_fis;

	n = dso_src_frames(fi->d, fi->vaddr, src, SRC_MAX_FRAMES);
	if (!n)
		return;
	fi->file = src[n - 1].file ? intern(r, src[n - 1].file) : RES_NO_STR;
	fi->line = src[n - 1].line;
	for (k = 0; k + 1 < n; k++) {
		u32 i = new_fi(r);
		struct frame_info *in = &r->fis[i], *real = &r->fis[idx];

		*in = *real;
		in->func = display_name(r, src[k].func ? src[k].func : "??");
		in->file = src[k].file ? intern(r, src[k].file) : RES_NO_STR;
		in->line = src[k].line;
		in->off = 0;
		in->sym = NULL;
		in->reason = UR_NONE;
		in->flags = FI_RESOLVED | FI_INLINE;
		in->nr_inl = 0;
	}
	r->fis[idx].inl = first;
	r->fis[idx].nr_inl = n - 1;
}

static void resolve_file(struct resolver *r, u32 idx, const struct map *m, u64 addr)
{
	struct frame_info *fi = &r->fis[idx];
	u64 off = addr - m->start + m->pgoff, vaddr;
	struct dso *d = m->dso;
	const char *base;

	base = strrchr(m->path, '/');
	base = base ? base + 1 : m->path;
	fi->dso = intern(r, base);
	fi->path = intern(r, m->path);
	fi->off = off;
	if (!d) {
		fi->reason = UR_NO_FILE;
		fi->func = bracketed(r, base);
		return;
	}
	fi->d = d;
	dso_load_syms(d, &r->maps->search);
	if (!dso_off_to_vaddr(d, off, &vaddr)) {
		fi->reason = d->nr_syms ? UR_NO_SYMBOL : UR_NO_SYMBOLS;
		fi->func = bracketed(r, base);
		return;
	}
	fi->vaddr = vaddr;
	fi->sym = dso_find(d, vaddr);
	if (fi->sym) {
		fi->func = display_name(r, dso_sym_name(d, fi->sym));
		fi->off = vaddr - fi->sym->start;
		fi->flags |= FI_RESOLVED;
	} else {
		fi->reason = d->nr_syms ? UR_NO_SYMBOL : UR_NO_SYMBOLS;
		/* no name, but a function all the same: its .eh_frame FDE's range */
		fi->sym = dso_fde_sym(d, vaddr, base);
		if (fi->sym) {
			fi->func = intern(r, dso_sym_name(d, fi->sym));
			fi->off = vaddr - fi->sym->start;
			fi->flags |= FI_FDE;
		} else {
			/* "[libc.so.6]": made only when it is the name */
			fi->func = bracketed(r, base);
		}
	}
	resolve_src(r, idx);
}

static struct map *find_map(struct resolver *r, u32 pid, u64 time, u64 addr)
{
	struct map *m = maps_find(r->maps, pid, time, addr);
	struct proc_maps *p;

	if (m || !r->live)
		return m;
	p = maps_proc(r->maps, pid, true);
	if (p->read_failed || p->nr_refresh >= REFRESH_MAX ||
	    now_ns() - p->last_refresh < REFRESH_INTERVAL_NS)
		return NULL;
	maps_read(r->maps, pid, p->cur_gen, NULL);
	return maps_find(r->maps, pid, time, addr);
}

/*
 * The cache of addresses outside every mapping of @pid, emptied when the
 * process's maps have grown since (a live re-read may have covered them).
 */
static struct u64map *unmapped_cache(struct resolver *r, u32 pid)
{
	const struct proc_maps *p = maps_proc(r->maps, pid, false);
	u32 version = p ? p->version : 0;
	struct unmapped_cache *c;
	u64 idx;

	if (!u64map_get(&r->unmapped_index, pid, &idx)) {
		VEC_GROW(r->unmapped, r->nr_unmapped, r->alloc_unmapped);
		idx = r->nr_unmapped++;
		r->unmapped[idx] = (struct unmapped_cache){ .pid = pid, .maps_version = version };
		u64map_put(&r->unmapped_index, pid, idx);
	}
	c = &r->unmapped[idx];
	if (c->maps_version != version) {
		u64map_free(&c->fis);
		c->maps_version = version;
	}
	return &c->fis;
}

static u32 resolve_unmapped(struct resolver *r, u32 pid, u64 addr)
{
	struct u64map *cache = unmapped_cache(r, pid);
	u64 idx;
	u32 i;

	if (u64map_get(cache, addr, &idx))
		return idx;
	i = new_fi(r);
	/*
	 * The idle task runs no user code: pid 0 there is a process that the
	 * session's PID namespace cannot see (a CPUS session in a container),
	 * with no maps or perf map of ours to read.
	 */
	if (!pid) {
		r->fis[i].reason = UR_PID_HIDDEN;
	} else {
		/* JIT code may also live in memory the maps did not show us */
		resolve_anon(r, &r->fis[i], pid, addr);
		if (r->fis[i].reason)
			r->fis[i].reason = UR_NO_MAPPING;
	}
	if (!(r->fis[i].flags & FI_RESOLVED)) {
		r->fis[i].func = intern(r, "[unknown]");
		r->fis[i].dso = r->fis[i].func;
		r->fis[i].path = r->fis[i].func;
	}
	u64map_put(cache, addr, i);
	return i;
}

static inline u32 fast_hash(u32 pid, u64 addr, u32 bits)
{
	return hash64(addr ^ (u64)pid << 40) & ((1U << bits) - 1);
}

/*
 * The fast cache's answer for (@pid, @addr) at @time, or UINT32_MAX: once
 * per frame, so cheap.
 */
static inline u32 fast_get(const struct resolver *r, u32 pid, u64 time, u64 addr)
{
	const struct res_fast *f;

	if (!r->fast || r->fast_version != r->maps->version)
		return UINT32_MAX;
	f = &r->fast[fast_hash(pid, addr, r->fast_bits)];
	return f->addr == addr && f->pid == pid && time >= f->from ? f->fi : UINT32_MAX;
}

/*
 * From what time on an answer found for @p at @time holds until a mapping
 * is added, or UINT64_MAX: not for a time yet to come.  maps_find() takes
 * any mapping of a generation begun by then and prefers the newest: at or
 * after the newest generation of them all (0 without an EXEC), every one
 * is a candidate, whatever the time.
 */
static u64 fast_from(const struct proc_maps *p, u64 time)
{
	return p && time >= p->newest_gen ? p->newest_gen : UINT64_MAX;
}

/* Store an answer, first growing (or emptying, after new mappings) the cache. */
static void fast_put(struct resolver *r, u32 pid, u64 addr, u64 from, u32 fi)
{
	u32 bits = r->fast_bits ? r->fast_bits : RES_FAST_MIN_BITS, i;

	while ((u64)r->nr_fis * RES_FAST_PER_FI > 1ULL << bits && bits < RES_FAST_MAX_BITS)
		bits++;
	if (!r->fast || bits != r->fast_bits || r->fast_version != r->maps->version) {
		if (bits != r->fast_bits) {
			free(r->fast);
			r->fast = xmalloc(sizeof(*r->fast) << bits);
			r->fast_bits = bits;
		}
		/* whole entries: a lookup compares the address before it looks at fi */
		for (i = 0; i < 1U << bits; i++)
			r->fast[i] = (struct res_fast){ .fi = UINT32_MAX };
		r->fast_version = r->maps->version;
	}
	r->fast[fast_hash(pid, addr, bits)] =
		(struct res_fast){ .addr = addr, .from = from, .pid = pid, .fi = fi };
}

static u32 res_user_slow(struct resolver *r, u32 pid, u64 time, u64 addr, u64 *from);

/* Out of line: res_user()'s fast path then needs no registers saved. */
static __noinline u32 res_user_miss(struct resolver *r, u32 pid, u64 time, u64 addr)
{
	u64 from;
	u32 fi = res_user_slow(r, pid, time, addr, &from);

	if (from != UINT64_MAX)
		fast_put(r, pid, addr, from, fi);
	return fi;
}

u32 res_user(struct resolver *r, u32 pid, u64 time, u64 addr)
{
	u32 fi = fast_get(r, pid, time, addr);

	return fi != UINT32_MAX ? fi : res_user_miss(r, pid, time, addr);
}

/* The frame of @addr in @pid at @time; *@from: fast_from() of the answer. */
static u32 res_user_slow(struct resolver *r, u32 pid, u64 time, u64 addr, u64 *from)
{
	struct map *m = pid ? find_map(r, pid, time, addr) : NULL;
	struct frame_info *fi;
	struct u64map *cache;
	u64 idx;
	u32 i;

	/* after find_map(), which may have read the maps */
	*from = fast_from(maps_proc(r->maps, pid, false), time);
	if (!m)
		return resolve_unmapped(r, pid, addr);
	if (m->id >= r->nr_map_cache) {
		u32 n = MAX(m->id + 1, 2 * r->nr_map_cache);

		r->map_cache = xrealloc(r->map_cache, n, sizeof(*r->map_cache));
		memset(r->map_cache + r->nr_map_cache, 0,
		       (n - r->nr_map_cache) * sizeof(*r->map_cache));
		r->nr_map_cache = n;
	}
	cache = &r->map_cache[m->id];
	if (u64map_get(cache, addr, &idx))
		return idx;
	i = new_fi(r);
	fi = &r->fis[i];
	fi->map = m;
	if (m->kind == MAP_FILE || (m->kind == MAP_VDSO && m->dso))
		resolve_file(r, i, m, addr);
	else
		resolve_anon(r, fi, pid, addr);
	u64map_put(cache, addr, i);
	return i;
}

static inline struct res_seen *seen_slot(struct resolver *r, u32 pid, u64 page)
{
	return &r->seen[hash64(page ^ (u64)pid << 40) & ((1U << RES_SEEN_BITS) - 1)];
}

/*
 * Was @page of @p found in a mapping that is not anonymous, of its latest
 * generation, with no mapping added since?  Then maps_find() for any
 * address of it at a time after that generation's start gives such a
 * mapping again.
 */
static inline bool seen_file_page(struct resolver *r, const struct proc_maps *p, u64 time, u64 page)
{
	const struct res_seen *e = seen_slot(r, p->pid, page);

	return page && e->page == page && e->pid == p->pid && e->version == p->version &&
	       e->gen == p->cur_gen && time >= p->cur_gen;
}

struct proc_maps *res_observe_process(struct resolver *r, u32 pid)
{
	struct proc_maps *p = maps_proc(r->maps, pid, true);

	if (maps_need_read(p))
		maps_read(r->maps, pid, p->cur_gen, NULL);
	return p;
}

void res_observe(struct resolver *r, const struct rec_sample *v)
{
	const struct cycsample_sample *s = v->s;
	struct proc_maps *p;
	const struct map *m;
	u64 page;
	u32 i;

	/* the idle task, or a process our PID namespace cannot see: no /proc */
	if (!s->pid)
		return;
	p = res_observe_process(r, s->pid);
	p->sampled = true;
	if (!r->seen)
		r->seen = xcalloc(1U << RES_SEEN_BITS, sizeof(*r->seen));
	for (i = 0; i < s->nr_user || (i == 0 && (s->flags & CYCSAMPLE_SAMPLE_USER)); i++) {
		u64 addr = s->nr_user ? v->uframes[i] : s->pc;

		if (rec_frame_is_marker(addr) || !addr)
			continue;
		page = addr >> RES_SEEN_PAGE_SHIFT;
		if (seen_file_page(r, p, s->time, page))
			continue;
		m = find_map(r, s->pid, s->time, addr);
		if (!m || m->kind == MAP_ANON)
			observe_jit(r, s->pid, addr);
		if (!m)
			break; /* one refresh per sample is enough */
		/* find_map() may have re-read the maps: p's version is the one m is of */
		if (m->kind != MAP_ANON && m->gen_time == p->cur_gen && s->time >= p->cur_gen)
			*seen_slot(r, s->pid, page) = (struct res_seen){ .page = page,
									 .gen = p->cur_gen,
									 .pid = s->pid,
									 .version = p->version };
	}
}

static __noinline void stack_grow(struct stack *st)
{
	VEC_GROW(st->f, st->nr, st->alloc);
}

/* Once per frame of every sample: the growth out of line keeps it a few stores. */
static inline void push(struct stack *st, u32 fi, u64 addr, u64 off, u8 flags)
{
	if (st->nr >= st->alloc)
		stack_grow(st);
	st->f[st->nr++] =
		(struct stack_frame){ .fi = fi, .addr = addr, .off = off, .flags = flags };
}

/* Return addresses point after the call: look up the call itself. */
static u64 lookup_addr(u64 addr, bool is_return)
{
	return is_return && addr ? addr - 1 : addr;
}

static __noinline void push_inlines(struct resolver *r, struct stack *st, u32 fi, u64 addr,
				    u8 flags)
{
	u32 k;

	for (k = 0; k < r->fis[fi].nr_inl; k++)
		push(st, r->fis[fi].inl + k, addr, 0, flags | SF_INLINE);
}

/* A frame and, before it, the functions inlined at its address; the frame's index. */
static inline u32 push_expanded(struct resolver *r, struct stack *st, u32 fi, u64 addr, u64 off,
				u8 flags)
{
	if (r->inline_frames && r->fis[fi].nr_inl)
		push_inlines(r, st, fi, addr, flags);
	push(st, fi, addr, off, flags);
	return st->nr - 1;
}

static u32 push_user(struct resolver *r, struct stack *st, const struct cycsample_sample *s,
		     u64 addr, bool is_return, u8 flags)
{
	u32 fi = res_user(r, s->pid, s->time, lookup_addr(addr, is_return));

	return push_expanded(r, st, fi, addr, r->fis[fi].off + (is_return && addr ? 1 : 0), flags);
}

static void push_kernel(struct resolver *r, struct stack *st, u64 addr, bool is_return)
{
	u32 fi = res_kernel(r, lookup_addr(addr, is_return));

	push_expanded(r, st, fi, addr, r->fis[fi].off + (is_return && addr ? 1 : 0), SF_KERNEL);
}

static u64 fn_key(const struct frame_info *fi)
{
	if (!(fi->flags & (FI_RESOLVED | FI_FDE)))
		return 0;
	return ((u64)fi->dso << 32 | fi->func) + 1;
}

/* See leaf.h for the rules; called after the user pc frame was pushed. */
static void leaf_repair(struct resolver *r, struct stack *st, const struct rec_sample *v,
			u32 pc_frame)
{
	const struct cycsample_sample *s = v->s;
	struct leaf_input in = { 0 };
	const struct frame_info *pc_fi, *lr_fi;
	enum leaf_verdict verdict;
	u64 lr;
	u32 lr_idx, first_ret;

	/* AArch32 too: its code is never decoded (EM_ARM), rule B applies */
	lr = leaf_user_lr(v);
	if (!lr)
		return;
	/* the first real return address in the chain */
	for (first_ret = 1; first_ret < s->nr_user; first_ret++)
		if (!rec_frame_is_marker(v->uframes[first_ret]))
			break;
	if (first_ret < s->nr_user && v->uframes[first_ret] == lr)
		return;
	pc_fi = &r->fis[st->f[pc_frame].fi];
	lr_idx = res_user(r, s->pid, s->time, lr - 1);
	lr_fi = &r->fis[lr_idx];
	pc_fi = &r->fis[st->f[pc_frame].fi]; /* fis may have moved */
	in.pc_fn = fn_key(pc_fi);
	in.lr_fn = fn_key(lr_fi);
	if (first_ret < s->nr_user) {
		/* res_user() may grow r->fis: take the index first */
		u32 caller = res_user(r, s->pid, s->time, v->uframes[first_ret] - 1);

		in.caller_fn = fn_key(&r->fis[caller]);
	}
	pc_fi = &r->fis[st->f[pc_frame].fi];
	if (pc_fi->d && pc_fi->sym) {
		res_prologue(pc_fi->d, pc_fi->sym);
		in.pc_off = pc_fi->off;
		if (pc_fi->sym->fs_off != FS_OFF_UNKNOWN) {
			in.code_known = true;
			in.fs_off = pc_fi->sym->fs_off;
			in.pc_insn_known =
				dso_read(pc_fi->d, pc_fi->sym->start + pc_fi->off, &in.pc_insn, 4);
		}
	}
	verdict = leaf_decide(&in);
	if (verdict == LEAF_KEEP)
		return;
	st->leaf = verdict;
	r->leaf_inserted++;
	push_expanded(r, st, lr_idx, lr, r->fis[lr_idx].off + 1, SF_INSERTED);
}

void res_stack(struct resolver *r, const struct rec_sample *v, struct stack *st)
{
	const struct cycsample_sample *s = v->s;
	bool first = true;
	u32 i, pc_frame;

	st->nr = 0;
	st->leaf = LEAF_KEEP;
	if (!s->nr_kernel && !s->nr_user) {
		if (s->flags & CYCSAMPLE_SAMPLE_KERNEL)
			push_kernel(r, st, s->pc, false);
		else
			push_user(r, st, s, s->pc, false, 0);
		goto count;
	}
	for (i = 0; i < s->nr_kernel; i++) {
		if (rec_frame_is_marker(v->kframes[i]))
			continue;
		push_kernel(r, st, v->kframes[i], !first);
		first = false;
	}
	/* in the kernel, chain withheld (REGS_HIDDEN: pc 0 gives "[kernel]") */
	if (!s->nr_kernel && (s->flags & CYCSAMPLE_SAMPLE_KERNEL))
		push_kernel(r, st, s->pc, false);
	first = true;
	for (i = 0; i < s->nr_user; i++) {
		if (rec_frame_is_marker(v->uframes[i]) || (!v->uframes[i] && !first))
			continue;
		pc_frame = push_user(r, st, s, v->uframes[i], !first, 0);
		if (first && r->leaf_repair)
			leaf_repair(r, st, v, pc_frame);
		first = false;
	}
count:
	r->frames += st->nr;
	for (i = 0; i < st->nr; i++) {
		const struct frame_info *fi = &r->fis[st->f[i].fi];

		r->reasons[fi->reason]++;
		r->fde_frames += !!(fi->flags & FI_FDE);
	}
}

/* Once per frame of --raw: without printf. */
void res_format_frame(const struct resolver *r, const struct stack_frame *f, struct sbuf *sb)
{
	const struct frame_info *fi = &r->fis[f->fi];
	bool in_dso = !(fi->flags & (FI_INLINE | FI_RESOLVED | FI_FDE)) &&
		      (fi->reason == UR_NO_FILE || fi->reason == UR_NO_SYMBOLS ||
		       fi->reason == UR_NO_SYMBOL);

	sbuf_addstr(sb, res_str(r, in_dso ? fi->dso : fi->func));
	if (in_dso || (!(fi->flags & FI_INLINE) && (fi->flags & (FI_RESOLVED | FI_FDE)))) {
		sbuf_add(sb, "+0x", 3);
		sbuf_addhex(sb, f->off, 0);
	}
}

void res_forget(struct resolver *r)
{
	u32 i;

	for (i = 0; i < r->nr_map_cache; i++)
		u64map_free(&r->map_cache[i]);
	for (i = 0; i < r->nr_unmapped; i++)
		u64map_free(&r->unmapped[i].fis);
	u64map_free(&r->kcache);
	free(r->fast);
	r->fast = NULL;
	r->fast_bits = 0;
}

void res_format_srcline(const struct resolver *r, u32 idx, bool full, struct sbuf *sb)
{
	const struct frame_info *fi = &r->fis[idx];
	const char *file = res_str(r, fi->file), *slash = strrchr(file, '/');

	if (!*file) {
		sbuf_addstr(sb, "??:0");
		return;
	}
	sbuf_printf(sb, "%s:%u", full || !slash ? file : slash + 1, fi->line);
}
