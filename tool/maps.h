/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The memory maps of the profiled processes, over time.
 *
 * Maps are read from /proc/PID/maps when a process is first seen, again
 * after an EXEC record (a new generation, valid from the record's time) and
 * when a sample hits an address no mapping covers.  Each mapped file is
 * opened at once through /proc/PID/map_files/START-END (falling back to
 * /proc/PID/root/PATH, then PATH) and kept open, so a binary that is
 * deleted, replaced or exits early still resolves.  While recording
 * (maps.defer_parse) a new file is only opened and told from the others
 * by fstat(); its ELF headers are read by maps_parse_pending() once the
 * recording ends, not while the workload runs.  For the same reason a
 * re-read whose text is what the last read of that generation found
 * parses nothing, and a native task's [vdso] is read once per session
 * (every native task of a kernel maps the same image; a 32-bit task's is
 * read from it).
 */
#ifndef CYCREAD_MAPS_H
#define CYCREAD_MAPS_H

#include "elfsym.h"
#include "util.h"

enum map_kind {
	MAP_FILE,
	MAP_ANON, /* anonymous (JIT code lives here) */
	MAP_VDSO,
	MAP_SPECIAL, /* [heap], [stack], [vsyscall], ... */
};

#define MAP_R 1U
#define MAP_W 2U
#define MAP_X 4U

struct map {
	u32 id; /* index in maps.all */
	u32 pid;
	u64 gen_time; /* valid for samples from this time on */
	u64 map_time; /* when an MMAP or FORK record told it (0: read from /proc) */
	u64 seen_time; /* when it was first known to be there: record or /proc read */
	u64 start;
	u64 end;
	u64 pgoff;
	u32 prot;
	u32 kind; /* enum map_kind */
	u64 ino;
	u32 dev_major;
	u32 dev_minor;
	char *path; /* as in maps, without " (deleted)" */
	bool deleted;
	bool copied; /* a FORK record's copy of the parent's mapping */
	struct dso *dso; /* NULL when it could not be opened */
	const char *open_err; /* why dso is NULL */
	u8 build_id[DSO_BUILD_ID_MAX];
	u32 build_id_len;
	u32 pending; /* 1 + index in maps.pending while its file waits to be parsed */
};

/* A file opened while recording, parsed when the recording ends. */
struct maps_pending {
	int fd;
	char *path;
	u64 dev;
	u64 ino;
	u64 size;
	u64 mtime_ns;
};

/* A process's view of one mapping, for its interval index. */
struct pmap {
	u64 start; /* struct ivhead */
	u64 end;
	u32 id; /* into maps.all */
};

struct proc_maps {
	u32 pid;
	struct pmap *v; /* v[0..nr_sorted) sorted by start, then added ones */
	u32 nr;
	u32 alloc;
	u32 nr_sorted;
	struct ivindex index; /* over v[0..nr_sorted) */
	struct u64map known; /* hash of (generation, mapping) -> id: re-reads add no twins */
	u32 version; /* bumped whenever a mapping is added */
	u64 newest_gen; /* of its mappings' generations (0: no EXEC): a lookup after it sees all */
	u64 cur_gen;
	u64 exec_gen; /* cur_gen, when begun by an EXEC record while MMAP records tell maps */
	u64 told_gen; /* ... and an MMAP record of it came: a real exec (maps_told()) */
	u64 fork_gen; /* cur_gen, when copied from the parent's by a FORK record (maps_fork()) */
	u64 last_refresh; /* now_ns() */
	u64 read_seen; /* kernel_mono_ns() of the last read of /proc, of generation read_gen */
	u64 read_gen;
	u32 nr_refresh;
	bool read_failed;
	bool sampled; /* a sample of it was observed since the last read */
	char *last_text; /* the maps text of the last read, of generation last_gen */
	size_t last_len;
	u64 last_gen;
};

struct maps {
	struct map **all; /* every mapping ever seen (capture files list them) */
	u32 nr_all;
	u32 alloc_all;
	struct proc_maps **procs;
	u32 nr_procs;
	u32 alloc_procs;
	struct u64map proc_index; /* pid -> index in procs */
	struct dso **dsos; /* every opened file, shared between mappings */
	u32 nr_dsos;
	u32 alloc_dsos;
	struct dso_search search;
	u32 version; /* bumped whenever any process gains a mapping */
	u32 real_found; /* capture files: real files found for stored ones */
	u32 real_taken; /* ... and used instead of them */
	bool live; /* may read /proc */
	bool defer_parse; /* see maps_parse_pending() */
	struct maps_pending *pending;
	u32 nr_pending;
	u32 alloc_pending;
	const char *proc_root; /* "/proc" unless tests say otherwise */
	struct dso *vdso_native; /* the native tasks' [vdso], once read (in dsos) */
	/* reads of /proc while recording, for -v and the tests */
	u32 nr_maps_reads; /* /proc/PID/maps read */
	u32 nr_maps_same; /* ... and found as it was at the last read */
	u32 nr_vdso_reads; /* [vdso] images read */
	u32 nr_pending_shared; /* mappings of a pending file, not opened again */
	u32 nr_forks; /* processes whose maps were copied from their parent's (maps_fork()) */
};

void maps_init(struct maps *ms, bool live);
void maps_free(struct maps *ms);

/* Parse one /proc/PID/maps line; false if malformed. m->path is allocated. */
bool maps_parse_line(const char *line, struct map *m);

/*
 * Read /proc/PID/maps (or @text when not NULL) as generation @gen_time.
 * Mappings already known in that generation are kept.  Returns 0, or -errno
 * when the process is gone.
 */
int maps_read(struct maps *ms, u32 pid, u64 gen_time, const char *text);

/* Start a new generation for @pid at @time (EXEC record) and read it. */
int maps_exec(struct maps *ms, u32 pid, u64 time);

/* The same without reading: MMAP records will tell the new program's maps. */
void maps_new_gen(struct maps *ms, u32 pid, u64 time);

/*
 * A FORK record: @pid, forked by @ppid, ran nothing since, so its mappings
 * are @ppid's at @time: those of its generations up to @time, but not
 * the mappings its MMAP records told after @time.  They are copied into a
 * generation of @pid that begins at @time, each sharing the parent's
 * opened file: nothing is read or opened.  @told: the parent's maps are
 * complete (no record was lost), and @pid's need no read of /proc;
 * otherwise the copy only serves where a read finds nothing (the child
 * gone).  Returns the number copied, or -1 when @ppid's maps are unknown.
 */
int maps_fork(struct maps *ms, u32 pid, u32 ppid, u64 time, bool told);

/*
 * Did MMAP records tell @p's maps since its last exec: maps_new_gen() began
 * its generation, an MMAP record of that generation came (the module also
 * repeats an EXEC record for a process whose exec id it could not keep, so
 * only a new program's mappings prove an exec), and no record was lost
 * since (maps_records_lost())?
 * Then reading /proc adds nothing: what it shows the records told, and
 * what the process ran before the exec it no longer shows.
 */
bool maps_told(const struct proc_maps *p);

/*
 * Has /proc anything to tell of @p's maps: never read, and not told by
 * records since its exec (MMAP records, or a FORK record and then MMAP
 * records)?  The rule of a process's first read.
 */
bool maps_need_read(const struct proc_maps *p);

/* Records were lost: no generation's maps are known to be complete. */
void maps_records_lost(struct maps *ms);

/*
 * A mapping the kernel reported at @time (MMAP record): @tmpl's pid, range,
 * offset, prot, device and inode, and @path_len bytes at tmpl->path (not
 * NUL-terminated; " (deleted)" is taken off).  Added to the process's
 * generation of that time, and its file opened, unless already known.
 */
void maps_mapped(struct maps *ms, const struct map *tmpl, size_t path_len, u64 time);

/* The mapping of @addr in @pid at @time, or NULL. */
struct map *maps_find(struct maps *ms, u32 pid, u64 time, u64 addr);
/* Of two mappings of one address, >0 if maps_find() prefers @x, <0 if @y. */
int maps_prefer(const struct map *x, const struct map *y);
/* Sort @v so that what maps_find() prefers comes last. */
void maps_sort_preferred(struct map **v, u32 n);

/* Known process? */
struct proc_maps *maps_proc(struct maps *ms, u32 pid, bool create);

/*
 * Add a mapping from a capture file (no /proc access); the dso is attached
 * by the caller.
 */
struct map *maps_add(struct maps *ms, const struct map *tmpl);

/*
 * Parse the files opened while ms->defer_parse was set, give their
 * mappings their dso (or open_err: also for a file whose size or mtime
 * changed since it was opened), and clear defer_parse.
 */
void maps_parse_pending(struct maps *ms);

/* Find or open the dso for @path (opened as @fd, taken); shares identical files. */
struct dso *maps_dso_from_fd(struct maps *ms, int fd, const char *path, const char **why);

#endif /* CYCREAD_MAPS_H */
