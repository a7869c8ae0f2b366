// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/PID/maps parsing, mapping generations, and the cache of
 * opened files behind the mappings.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "maps.h"

#define MAPS_MAX_BYTES (64U << 20)
#define VDSO_MAX_BYTES (1U << 20)
#define DELETED_SUFFIX " (deleted)"
/* a [vdso] dso's inode: no file has it (dev 0 too) */
#define MAPS_VDSO_INO UINT64_MAX

void maps_init(struct maps *ms, bool live)
{
	memset(ms, 0, sizeof(*ms));
	ms->live = live;
	ms->proc_root = "/proc";
}

void maps_free(struct maps *ms)
{
	u32 i;

	for (i = 0; i < ms->nr_all; i++) {
		free(ms->all[i]->path);
		free(ms->all[i]);
	}
	for (i = 0; i < ms->nr_procs; i++) {
		free(ms->procs[i]->v);
		free(ms->procs[i]->last_text);
		iv_free(&ms->procs[i]->index);
		u64map_free(&ms->procs[i]->known);
		free(ms->procs[i]);
	}
	for (i = 0; i < ms->nr_dsos; i++)
		dso_free(ms->dsos[i]);
	for (i = 0; i < ms->nr_pending; i++) {
		close(ms->pending[i].fd);
		free(ms->pending[i].path);
	}
	free(ms->pending);
	free(ms->all);
	free(ms->procs);
	free(ms->dsos);
	u64map_free(&ms->proc_index);
	memset(ms, 0, sizeof(*ms));
}

static u32 classify(const char *path)
{
	if (!*path || !strncmp(path, "[anon:", 6) || !strncmp(path, "//anon", 6) ||
	    !strncmp(path, "/dev/zero", 9) || !strncmp(path, "/anon_hugepage", 14))
		return MAP_ANON;
	if (!strcmp(path, "[vdso]"))
		return MAP_VDSO;
	if (path[0] == '[')
		return MAP_SPECIAL;
	return MAP_FILE;
}

/*
 * One number of a maps line in @base, after optional blanks, ended by @stop
 * (or by a blank, a newline or the end when @stop is ' ').  Hand-made: the
 * reader parses the maps of every new process while it runs, and sscanf()
 * took most of that time.
 */
static bool maps_field(const char **pp, unsigned int base, char stop, u64 *out)
{
	const char *p = *pp, *digits;
	u64 v = 0;
	unsigned int d;

	while (*p == ' ' || *p == '\t')
		p++;
	for (digits = p;; p++) {
		char c = *p | 0x20;

		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if (base == 16 && c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else
			break;
		if (v > (UINT64_MAX - d) / base)
			return false;
		v = v * base + d;
	}
	if (p == digits)
		return false;
	if (*p == stop)
		p++;
	else if (stop != ' ' || (*p != '\t' && *p != '\n' && *p))
		return false;
	*pp = p;
	*out = v;
	return true;
}

/* The fields of a maps line; the path (@len bytes at *@path) is not copied. */
static bool maps_parse_fields(const char *line, struct map *m, const char **path, size_t *len)
{
	u64 start, end, pgoff, major, minor, ino;
	const char *p = line, *perms;

	if (!maps_field(&p, 16, '-', &start) || !maps_field(&p, 16, ' ', &end))
		return false;
	while (*p == ' ' || *p == '\t')
		p++;
	perms = p;
	while (*p && *p != ' ' && *p != '\t' && *p != '\n')
		p++;
	if (p - perms != 4 || !maps_field(&p, 16, ' ', &pgoff) ||
	    !maps_field(&p, 16, ':', &major) || !maps_field(&p, 16, ' ', &minor) ||
	    !maps_field(&p, 10, ' ', &ino) || start >= end || major > UINT32_MAX ||
	    minor > UINT32_MAX)
		return false;
	memset(m, 0, sizeof(*m));
	m->start = start;
	m->end = end;
	m->pgoff = pgoff;
	m->ino = ino;
	m->dev_major = major;
	m->dev_minor = minor;
	m->prot = (perms[0] == 'r' ? MAP_R : 0) | (perms[1] == 'w' ? MAP_W : 0) |
		  (perms[2] == 'x' ? MAP_X : 0);
	while (*p == ' ' || *p == '\t')
		p++;
	*len = strcspn(p, "\n");
	if (*len > strlen(DELETED_SUFFIX) &&
	    !strncmp(p + *len - strlen(DELETED_SUFFIX), DELETED_SUFFIX, strlen(DELETED_SUFFIX))) {
		m->deleted = true;
		*len -= strlen(DELETED_SUFFIX);
	}
	*path = p;
	return true;
}

static void maps_set_path(struct map *m, const char *path, size_t len)
{
	m->path = xstrndup(path, len);
	m->kind = classify(m->path);
}

bool maps_parse_line(const char *line, struct map *m)
{
	const char *path;
	size_t len;

	if (!maps_parse_fields(line, m, &path, &len))
		return false;
	maps_set_path(m, path, len);
	return true;
}

struct proc_maps *maps_proc(struct maps *ms, u32 pid, bool create)
{
	struct proc_maps *p;
	u64 idx;

	if (u64map_get(&ms->proc_index, pid, &idx))
		return ms->procs[idx];
	if (!create)
		return NULL;
	p = xcalloc(1, sizeof(*p));
	p->pid = pid;
	VEC_GROW(ms->procs, ms->nr_procs, ms->alloc_procs);
	u64map_put(&ms->proc_index, pid, ms->nr_procs);
	ms->procs[ms->nr_procs++] = p;
	return p;
}

/* The identity of a mapping within its generation. */
static u64 map_key(const struct map *m)
{
	u64 h = hash_bytes(m->path, strlen(m->path), m->gen_time);

	h = hash64(h ^ m->start) + m->end;
	h = hash64(h ^ m->pgoff) + m->ino;
	return hash64(h);
}

/* Added mappings wait in the tail until a lookup needs them: O(1) per add. */
static void proc_insert(struct maps *ms, struct proc_maps *p, u32 id)
{
	const struct map *m = ms->all[id];

	VEC_GROW(p->v, p->nr, p->alloc);
	p->v[p->nr++] = (struct pmap){ .start = m->start, .end = m->end, .id = id };
	u64map_put(&p->known, map_key(m), id);
	p->version++;
	p->newest_gen = MAX(p->newest_gen, m->gen_time);
	ms->version++;
}

static int pmap_cmp(const void *a, const void *b, void *arg)
{
	const struct pmap *x = a, *y = b;

	(void)arg;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Sort the tail, merge it into the sorted part, and index the whole: O(n + k log k). */
static void proc_index(struct proc_maps *p)
{
	u32 i, j, k, nr_new = p->nr - p->nr_sorted;
	struct pmap *merged;

	if (!nr_new)
		return;
	sort(p->v + p->nr_sorted, nr_new, sizeof(*p->v), pmap_cmp, NULL);
	merged = xmalloc(p->alloc * sizeof(*merged));
	for (i = 0, j = p->nr_sorted, k = 0; i < p->nr_sorted || j < p->nr;) {
		if (j == p->nr || (i < p->nr_sorted && pmap_cmp(&p->v[i], &p->v[j], NULL) <= 0))
			merged[k++] = p->v[i++];
		else
			merged[k++] = p->v[j++];
	}
	free(p->v);
	p->v = merged;
	p->nr_sorted = p->nr;
	iv_build(&p->index, p->v, p->nr, sizeof(*p->v));
}

struct map *maps_add(struct maps *ms, const struct map *tmpl)
{
	struct map *m = xmalloc(sizeof(*m));

	*m = *tmpl;
	m->path = xstrdup(tmpl->path ? tmpl->path : "");
	m->id = ms->nr_all;
	VEC_GROW(ms->all, ms->nr_all, ms->alloc_all);
	ms->all[ms->nr_all++] = m;
	proc_insert(ms, maps_proc(ms, m->pid, true), m->id);
	return m;
}

static u64 mtime_ns(const struct stat *st)
{
	return (u64)st->st_mtim.tv_sec * 1000000000ULL + st->st_mtim.tv_nsec;
}

/* An opened dso of the file @st describes, or NULL. */
static struct dso *known_dso(const struct maps *ms, const struct stat *st)
{
	struct dso *d;
	u32 i;

	for (i = 0; i < ms->nr_dsos; i++) {
		d = ms->dsos[i];
		if (d->ino == st->st_ino && d->dev == st->st_dev && d->size == (u64)st->st_size &&
		    d->mtime_ns == mtime_ns(st))
			return d;
	}
	return NULL;
}

struct dso *maps_dso_from_fd(struct maps *ms, int fd, const char *path, const char **why)
{
	struct stat st;
	struct dso *d;

	if (fstat(fd, &st)) {
		*why = strerror(errno);
		close(fd);
		return NULL;
	}
	d = known_dso(ms, &st);
	if (d) {
		close(fd);
		return d;
	}
	d = dso_open_fd(fd, path, why);
	if (d) {
		VEC_GROW(ms->dsos, ms->nr_dsos, ms->alloc_dsos);
		ms->dsos[ms->nr_dsos++] = d;
	}
	return d;
}

/*
 * While recording: the dso of @fd if that file is parsed already, else
 * the file joins (or is found in) the pending list and m->pending says
 * where.  NULL and *@why on error.
 */
/*
 * A pending file keeps its descriptor open until the run ends: past this
 * many (a system-wide run on a busy machine), files are parsed at once and
 * closed, as in a report, so the reader never runs out of descriptors for
 * /proc reads and further files (a soft limit of 1024 is common).
 */
#define MAPS_MAX_PENDING 256

static struct dso *defer_dso(struct maps *ms, struct map *m, int fd, const char **why)
{
	struct maps_pending *e;
	struct stat st;
	struct dso *d;
	u32 i;

	if (fstat(fd, &st)) {
		*why = strerror(errno);
		close(fd);
		return NULL;
	}
	d = known_dso(ms, &st);
	for (i = 0; !d && i < ms->nr_pending; i++) {
		e = &ms->pending[i];
		if (e->ino == st.st_ino && e->dev == st.st_dev && e->size == (u64)st.st_size &&
		    e->mtime_ns == mtime_ns(&st))
			break;
	}
	if (d || i < ms->nr_pending) {
		close(fd);
		m->pending = d ? 0 : i + 1;
		return d;
	}
	VEC_GROW(ms->pending, ms->nr_pending, ms->alloc_pending);
	ms->pending[ms->nr_pending++] = (struct maps_pending){
		.fd = fd,
		.path = xstrdup(m->path),
		.dev = st.st_dev,
		.ino = st.st_ino,
		.size = st.st_size,
		.mtime_ns = mtime_ns(&st),
	};
	m->pending = ms->nr_pending;
	return NULL;
}

static int open_mapped_file(struct maps *ms, const struct map *m)
{
	char buf[4096];
	int fd;

	if (!ms->live)
		return open_regular(m->path);
	/* the inode the process really maps, even if deleted or replaced */
	snprintf(buf, sizeof(buf), "%s/%u/map_files/%llx-%llx", ms->proc_root, m->pid, m->start,
		 m->end);
	fd = open_regular(buf);
	if (fd >= 0)
		return fd;
	/* without CAP_SYS_ADMIN: the path in the process's mount namespace */
	snprintf(buf, sizeof(buf), "%s/%u/root%s", ms->proc_root, m->pid, m->path);
	fd = open_regular(buf);
	if (fd >= 0 || m->deleted)
		return fd;
	return open_regular(m->path);
}

/*
 * A 64-bit task's [vdso] lies above 4 GiB; a 32-bit (compat, x32) task's
 * below, and it is another image.  The kernel maps one image per ABI into
 * every task, so two native mappings of one size are the same image.
 */
static bool vdso_native(const struct map *m)
{
	return sizeof(void *) == 8 && m->start >= 1ULL << 32;
}

/* Our own [vdso]: the image of every native task of this kernel. */
static const void *own_vdso(u64 size)
{
	const void *base = (const void *)getauxval(AT_SYSINFO_EHDR);
	char *buf, *line;
	bool same = false;
	struct map m;

	if (!base || read_file("/proc/self/maps", &buf, NULL, MAPS_MAX_BYTES))
		return NULL;
	for (line = buf; line && !same; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		if (!maps_parse_line(line, &m))
			continue;
		same = m.kind == MAP_VDSO && m.start == (u64)(uintptr_t)base &&
		       m.end - m.start == size;
		free(m.path);
	}
	free(buf);
	return same ? base : NULL;
}

/* A [vdso] dso read before with the bytes of @image. */
static struct dso *known_vdso(const struct maps *ms, const void *image, u64 size)
{
	u32 i;

	for (i = 0; i < ms->nr_dsos; i++) {
		const struct dso *d = ms->dsos[i];

		if (d->dev == 0 && d->ino == MAPS_VDSO_INO && d->size == size &&
		    !memcmp(d->mem, image, size))
			return ms->dsos[i];
	}
	return NULL;
}

/*
 * The dso of a [vdso] mapping.  A native one of the size read before is
 * that image, without reading (38 to 53 us of the workload's time per
 * process under -icount, most of it reading /proc/PID/mem); any other is
 * read from the process and compared with those read before.
 */
static struct dso *vdso_dso(struct maps *ms, const struct map *m, const char **why)
{
	u64 size = m->end - m->start;
	const void *image;
	void *buf = NULL;
	struct dso *d;
	char path[64];
	int fd;

	if (size > VDSO_MAX_BYTES) {
		*why = "vdso too large";
		return NULL;
	}
	if (vdso_native(m) && ms->vdso_native && ms->vdso_native->size == size)
		return ms->vdso_native;
	ms->nr_vdso_reads++;
	buf = xmalloc(size);
	image = buf;
	snprintf(path, sizeof(path), "%s/%u/mem", ms->proc_root, m->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || pread(fd, buf, size, m->start) != (ssize_t)size) {
		/* ours stands in for a native task's only: a compat task's differs */
		image = vdso_native(m) ? own_vdso(size) : NULL;
		if (!image) {
			*why = "vdso not readable";
			d = NULL;
			goto out;
		}
	}
	d = known_vdso(ms, image, size);
	if (!d) {
		d = dso_open_mem(image, size, "[vdso]", why);
		if (!d)
			goto out;
		d->ino = MAPS_VDSO_INO;
		VEC_GROW(ms->dsos, ms->nr_dsos, ms->alloc_dsos);
		ms->dsos[ms->nr_dsos++] = d;
	}
	if (vdso_native(m))
		ms->vdso_native = d;
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return d;
}

static void set_dso(struct map *m, struct dso *d, const char *why)
{
	m->dso = d;
	if (d) {
		m->build_id_len = d->build_id_len;
		memcpy(m->build_id, d->build_id, m->build_id_len);
	} else if (why) {
		m->open_err = why;
		pr_debug("pid %u: %s: %s", m->pid, m->path, why);
	}
}

/*
 * A mapping of a file that already waits to be parsed, by the device, inode
 * and path of its maps line: not opened again.  The pending descriptor keeps
 * that inode alive, so its number names no other file of the device
 * meanwhile, and pending_still_same() checks it as for the first mapping.
 * A child of CMD sampled before its exec maps every file its parent did: its
 * first read cost an open of each through /proc/PID/map_files.
 */
static bool pending_shared(struct maps *ms, struct map *m)
{
	u64 dev = makedev(m->dev_major, m->dev_minor);
	const struct maps_pending *e;
	u32 i;

	if (!ms->defer_parse || !m->ino)
		return false;
	for (i = 0; i < ms->nr_pending; i++) {
		e = &ms->pending[i];
		if (e->ino == m->ino && e->dev == dev && !strcmp(e->path, m->path)) {
			m->pending = i + 1;
			ms->nr_pending_shared++;
			return true;
		}
	}
	return false;
}

static void attach_dso(struct maps *ms, struct map *m)
{
	struct dso *d = NULL;
	const char *why = NULL;
	int fd;

	if (m->kind == MAP_VDSO && ms->live) {
		d = vdso_dso(ms, m, &why);
	} else if (m->kind == MAP_FILE && !pending_shared(ms, m)) {
		fd = open_mapped_file(ms, m);
		if (fd < 0)
			why = err_str(-fd);
		else if (ms->defer_parse && ms->nr_pending < MAPS_MAX_PENDING)
			d = defer_dso(ms, m, fd, &why);
		else
			d = maps_dso_from_fd(ms, fd, m->path, &why);
	}
	if (!m->pending)
		set_dso(m, d, why);
}

/*
 * Is the file opened while recording still what it was then?  Rewritten
 * in place since (same inode, other size or mtime), its ELF headers now
 * describe other code than the process mapped: no dso rather than a wrong
 * one.  Closes the descriptor when not.
 */
static bool pending_still_same(const struct maps_pending *e, const char **why)
{
	struct stat st;

	if (fstat(e->fd, &st)) {
		*why = strerror(errno);
	} else if ((u64)st.st_size != e->size || mtime_ns(&st) != e->mtime_ns) {
		*why = "file changed since it was mapped";
	} else {
		return true;
	}
	close(e->fd);
	return false;
}

void maps_parse_pending(struct maps *ms)
{
	struct dso **d = xcalloc(ms->nr_pending + 1, sizeof(*d));
	const char **why = xcalloc(ms->nr_pending + 1, sizeof(*why));
	struct maps_pending *e;
	u32 i;

	for (i = 0; i < ms->nr_pending; i++) {
		e = &ms->pending[i];
		d[i] = pending_still_same(e, &why[i])
			       ? maps_dso_from_fd(ms, e->fd, e->path, &why[i])
			       : NULL;
		free(e->path);
	}
	for (i = 0; i < ms->nr_all; i++) {
		struct map *m = ms->all[i];

		if (m->pending) {
			set_dso(m, d[m->pending - 1], why[m->pending - 1]);
			m->pending = 0;
		}
	}
	free(d);
	free(why);
	free(ms->pending);
	ms->pending = NULL;
	ms->nr_pending = 0;
	ms->alloc_pending = 0;
	ms->defer_parse = false;
}

static bool known_in_gen(struct maps *ms, struct proc_maps *p, const struct map *m)
{
	const struct map *o;
	u64 id;

	if (!u64map_get(&p->known, map_key(m), &id))
		return false;
	o = ms->all[id];
	/* a hash collision only costs a twin entry, never a wrong one */
	return o->gen_time == m->gen_time && o->start == m->start && o->end == m->end &&
	       o->pgoff == m->pgoff && o->ino == m->ino && !strcmp(o->path, m->path);
}

int maps_read(struct maps *ms, u32 pid, u64 gen_time, const char *text)
{
	struct proc_maps *p = maps_proc(ms, pid, true);
	char *buf = NULL, *line, *next;
	u64 seen = kernel_mono_ns();
	const char *mpath;
	char path[64];
	size_t len;
	int ret;

	p->last_refresh = now_ns();
	p->read_seen = seen;
	p->read_gen = gen_time;
	p->nr_refresh++;
	p->sampled = false;
	if (!text) {
		snprintf(path, sizeof(path), "%s/%u/maps", ms->proc_root, pid);
		ret = read_file(path, &buf, &len, MAPS_MAX_BYTES);
		if (ret) {
			p->read_failed = true;
			return ret;
		}
		ms->nr_maps_reads++;
		/* the same text in the same generation: nothing to add */
		if (p->last_text && gen_time == p->last_gen && len == p->last_len &&
		    !memcmp(buf, p->last_text, len)) {
			ms->nr_maps_same++;
			free(buf);
			return 0;
		}
		free(p->last_text);
		p->last_text = buf;
		p->last_len = len;
		p->last_gen = gen_time;
		text = buf;
	}
	for (line = (char *)text; line && *line; line = next) {
		struct map m;

		next = strchr(line, '\n');
		if (next)
			next++;
		/* only code can hold a sampled pc or a return address */
		if (!maps_parse_fields(line, &m, &mpath, &len) || !(m.prot & MAP_X))
			continue;
		maps_set_path(&m, mpath, len);
		m.pid = pid;
		m.gen_time = gen_time;
		m.seen_time = seen;
		if (known_in_gen(ms, p, &m)) {
			free(m.path);
			continue;
		}
		attach_dso(ms, maps_add(ms, &m));
		free(m.path);
	}
	return 0;
}

/*
 * A read of /proc made after the exec at @time but filed under an older
 * program (its EXEC record was drained late): it may show this program,
 * not that one, so it gets no say over that one's MMAP records (seen_time
 * 0), as before maps_prefer() looked at times.
 */
static void unsee_late_read(struct maps *ms, struct proc_maps *p, u64 time)
{
	u32 i;

	if (p->read_seen <= time || p->read_gen >= time)
		return;
	for (i = 0; i < p->nr; i++) {
		struct map *m = ms->all[p->v[i].id];

		if (m->gen_time == p->read_gen && m->seen_time == p->read_seen)
			m->seen_time = 0;
	}
	p->read_gen = time;
	p->version++;
	ms->version++;
}

/*
 * A generation of @p begins at @time (its exec, or its fork's copy), told
 * by a record settled after what the process did since: its MMAP records
 * from @time on (a FORK record waits for the end of its drain, an EXEC
 * record may lie in a ring read later) and, with @reads, what a
 * read of its /proc showed since, were filed under an older generation and
 * would lose to this one's mappings wherever they overlap.  Moved into
 * this one.  A later generation already known took what came after it
 * when it began (here, or unsee_late_read() for a read), so what is left
 * is this one's.  The key of the older generation that still names a
 * moved mapping finds nothing (known_in_gen() compares).
 */
static void refile_late(struct maps *ms, struct proc_maps *p, u64 time, bool reads)
{
	bool moved = false;
	u32 i;

	for (i = 0; i < p->nr; i++) {
		struct map *m = ms->all[p->v[i].id];

		/* a read's mapping has no map_time; seen_time is when it was known */
		if (m->gen_time >= time || m->seen_time < time || (!m->map_time && !reads))
			continue;
		m->gen_time = time;
		u64map_put(&p->known, map_key(m), m->id);
		moved = true;
	}
	if (!moved)
		return;
	if (reads && p->read_seen >= time)
		p->read_gen = MAX(p->read_gen, time);
	p->newest_gen = MAX(p->newest_gen, time);
	p->version++;
	ms->version++;
}

static struct proc_maps *new_gen(struct maps *ms, u32 pid, u64 time)
{
	struct proc_maps *p = maps_proc(ms, pid, true);

	refile_late(ms, p, time, false);
	if (time > p->cur_gen)
		p->cur_gen = time;
	unsee_late_read(ms, p, time);
	return p;
}

void maps_new_gen(struct maps *ms, u32 pid, u64 time)
{
	struct proc_maps *p = new_gen(ms, pid, time);

	/* an EXEC drained after a later one (another ring) tells nothing of now */
	if (p->cur_gen == time)
		p->exec_gen = time;
}

bool maps_told(const struct proc_maps *p)
{
	return p->told_gen && p->told_gen == p->cur_gen;
}

bool maps_need_read(const struct proc_maps *p)
{
	return !p->nr_refresh && !maps_told(p) && !(p->fork_gen && p->fork_gen == p->cur_gen);
}

void maps_records_lost(struct maps *ms)
{
	u32 i;

	for (i = 0; i < ms->nr_procs; i++) {
		ms->procs[i]->exec_gen = 0;
		ms->procs[i]->told_gen = 0;
		ms->procs[i]->fork_gen = 0;
	}
}

/*
 * Which of two mappings of one address maps_find() prefers: the later
 * generation, then, in one generation, the one known to be there later
 * (an MMAP record's time, a /proc read's), then, at one time, the
 * child's own over its parent's copy, then the one added later.  An
 * exec's MMAP record drained after a read of /proc/PID/maps is older
 * than what the read showed: the kernel maps ld.so over its whole span,
 * then unmaps all but its first segment, and code mapped later in that
 * hole (a JIT's) is not ld.so's.  Positive when @x is preferred.
 */
int maps_prefer(const struct map *x, const struct map *y)
{
	if (x->gen_time != y->gen_time)
		return x->gen_time > y->gen_time ? 1 : -1;
	if (x->seen_time != y->seen_time)
		return x->seen_time > y->seen_time ? 1 : -1;
	/* a child's MMAP record may bear its fork's time (a coarse clock) */
	if (x->copied != y->copied)
		return x->copied ? -1 : 1;
	return x->id > y->id ? 1 : x->id < y->id ? -1 : 0;
}

static int map_prefer_cmp(const void *a, const void *b, void *arg)
{
	(void)arg;
	return maps_prefer(*(struct map *const *)a, *(struct map *const *)b);
}

void maps_sort_preferred(struct map **v, u32 n)
{
	sort(v, n, sizeof(*v), map_prefer_cmp, NULL);
}

int maps_fork(struct maps *ms, u32 pid, u32 ppid, u64 time, bool told)
{
	struct proc_maps *pp = maps_proc(ms, ppid, false), *p;
	struct map **v, m;
	u32 i, n = 0;

	/* a parent never read (or whose read failed) and not told: nothing to copy */
	if (!pp || pid == ppid || maps_need_read(pp) || (pp->read_failed && !pp->nr))
		return -1;
	/* what the parent had at @time, of every generation maps_find() may fall back to */
	v = xmalloc((pp->nr + 1) * sizeof(*v));
	for (i = 0; i < pp->nr; i++) {
		struct map *pm = ms->all[pp->v[i].id];

		if (pm->gen_time <= time && pm->map_time <= time)
			v[n++] = pm;
	}
	/*
	 * One generation, @time, in the parent's order: the copy a look-up
	 * prefers (the last added) is the mapping it prefers in the parent.
	 */
	maps_sort_preferred(v, n);
	p = maps_proc(ms, pid, true);
	/* the child's own, known at @time or later: they win over the copies where they overlap */
	refile_late(ms, p, time, true);
	if (time > p->cur_gen)
		p->cur_gen = time;
	for (i = 0; i < n; i++) {
		m = *v[i];
		m.pid = pid;
		m.gen_time = time;
		m.map_time = time;
		/* in the parent's order: the ids decide between the copies */
		m.seen_time = time;
		m.copied = true;
		if (!known_in_gen(ms, p, &m))
			maps_add(ms, &m);
	}
	free(v);
	if (told && p->cur_gen == time)
		p->fork_gen = time;
	ms->nr_forks++;
	return n;
}

int maps_exec(struct maps *ms, u32 pid, u64 time)
{
	struct proc_maps *p = new_gen(ms, pid, time);

	return maps_read(ms, pid, p->cur_gen, NULL);
}

void maps_mapped(struct maps *ms, const struct map *tmpl, size_t path_len, u64 time)
{
	struct proc_maps *p = maps_proc(ms, tmpl->pid, true);
	size_t suffix = strlen(DELETED_SUFFIX);
	struct map m = *tmpl;

	if (path_len > suffix && !memcmp(tmpl->path + path_len - suffix, DELETED_SUFFIX, suffix)) {
		m.deleted = true;
		path_len -= suffix;
	}
	maps_set_path(&m, tmpl->path, path_len);
	/*
	 * The generation of the program the process ran then: its EXEC record
	 * comes first on the ring, so cur_gen is it, unless this record was
	 * drained after a later exec's (another ring): then its own time.
	 */
	m.gen_time = time >= p->cur_gen ? p->cur_gen : time;
	m.map_time = time;
	m.seen_time = time;
	if (p->exec_gen && p->exec_gen == p->cur_gen && m.gen_time == p->exec_gen)
		p->told_gen = p->exec_gen;
	if (!known_in_gen(ms, p, &m))
		attach_dso(ms, maps_add(ms, &m));
	free(m.path);
}

struct map *maps_find(struct maps *ms, u32 pid, u64 time, u64 addr)
{
	struct proc_maps *p = maps_proc(ms, pid, false);
	struct map *best = NULL;
	u32 i;

	if (!p)
		return NULL;
	proc_index(p);
	/* every mapping containing addr, of every generation */
	for (i = iv_find(&p->index, p->v, sizeof(*p->v), addr); i != IV_NONE;
	     i = iv_next(&p->index, p->v, sizeof(*p->v), addr, i)) {
		struct map *m = ms->all[p->v[i].id];

		if (m->gen_time > time)
			continue;
		if (!best || maps_prefer(m, best) > 0)
			best = m;
	}
	return best;
}
