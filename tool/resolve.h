/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Turn a sample's addresses into named frames.
 *
 * User addresses go through the maps of the sample's process at the
 * sample's time, then the mapped file's symbols (elfsym.h) and source
 * lines (srcline.h), or a JIT map for anonymous code; kernel addresses
 * through kallsyms.  Results are cached per (mapping, address).  Frames that
 * stay unnamed carry a reason, counted per frame for the report's footer.
 * On arm64 the leaf-caller repair of leaf.h may insert one frame.
 *
 * How a report gets a frame's function, file, line and inline chain:
 *
 *	const struct frame_info *fi = res_fi(r, stack_frame.fi);
 *	res_str(r, fi->func)	function (demangled unless --no-demangle)
 *	res_str(r, fi->dso)	short object name, res_str(r, fi->path) its path
 *	res_str(r, fi->file)	source file ("" when unknown), fi->line (0: unknown)
 *	fi->flags & FI_INLINE	an inlined function (no symbol of its own)
 *
 * Inline frames are frames of their own: res_stack() puts a function's
 * inlined callees before it in the stack (innermost first, flagged
 * SF_INLINE), each with the file and line where it is, its caller with the
 * line of the call, exactly as addr2line -i lists them.  Every report then
 * treats them like any other frame; --no-inline (resolver.inline_frames)
 * leaves them out.  For one frame_info, fi->nr_inl and fi->inl give the
 * inline frames at its address (res_fi(r, fi->inl + k), k = 0 innermost).
 */
#ifndef CYCREAD_RESOLVE_H
#define CYCREAD_RESOLVE_H

#include "kallsyms.h"
#include "kmod.h"
#include "leaf.h"
#include "maps.h"
#include "perfmap.h"
#include "records.h"
#include "util.h"

enum unres_reason {
	UR_NONE = 0,
	UR_NO_MAPPING, /* no mapping covers the address */
	UR_NO_FILE, /* the mapped file could not be opened */
	UR_NO_SYMBOLS, /* the file has no symbol table at all */
	UR_NO_SYMBOL, /* the address lies outside every symbol */
	UR_JIT_NO_MAP, /* anonymous code without /tmp/perf-PID.map */
	UR_KERNEL_HIDDEN, /* kernel addresses withheld (kptr_restrict/REGS_HIDDEN) */
	UR_KERNEL_UNKNOWN, /* kernel address outside kallsyms */
	UR_PID_HIDDEN, /* user code of pid 0: a process outside our PID namespace */
	UR_MAX
};

extern const char *const unres_reason_str[UR_MAX];

#define FI_KERNEL (1U << 0)
#define FI_RESOLVED (1U << 1) /* func is a real symbol name */
#define FI_JIT (1U << 2)
#define FI_INLINE (1U << 3) /* an inlined function, named by DWARF */
#define FI_FDE (1U << 4) /* no symbol, grouped by its .eh_frame FDE as "file+0xSTART" */

/* One resolved location (shared by every sample that hits the address). */
struct frame_info {
	u32 func; /* strtab id: symbol name, or "[file]" / "[unknown]" */
	u32 dso; /* strtab id: short file name ("libc.so.6", "[kernel.kallsyms]") */
	u32 path; /* strtab id: full path */
	u32 file; /* strtab id: source file, RES_NO_STR ("") when unknown */
	u32 line; /* source line, 0 when unknown */
	u32 inl; /* index of the first inline frame at this address */
	u16 nr_inl; /* inline frames at this address (FI_INLINE, innermost first) */
	u8 reason; /* enum unres_reason */
	u8 flags; /* FI_* */
	u64 off; /* looked-up address - symbol start, or file offset */
	u64 vaddr; /* ELF virtual address looked up (file frames) */
	struct dso *d; /* the mapped file, may be NULL */
	struct dso_sym *sym;
	const struct map *map;
};

/* strtab id 0 is always "": the unknown file */
#define RES_NO_STR 0

#define SF_KERNEL (1U << 0)
#define SF_INSERTED (1U << 1) /* added by the leaf-caller repair */
#define SF_INLINE (1U << 2) /* an inline frame (before the frame it is inlined in) */

struct stack_frame {
	u32 fi; /* index of struct frame_info */
	u64 addr; /* as recorded */
	u64 off; /* addr - symbol start (or file offset) */
	u8 flags;
};

/* A sample's frames, innermost first: kernel frames, then user frames. */
struct stack {
	struct stack_frame *f;
	u32 nr;
	u32 alloc;
	u8 leaf; /* enum leaf_verdict applied */
};

struct unmapped_cache {
	u32 pid;
	u32 maps_version; /* proc_maps.version it was filled under */
	struct u64map fis; /* address -> fi */
};

/*
 * A direct-mapped cache of (pid, address) -> frame: one probe per frame
 * instead of the process, interval and per-mapping lookups.  An answer
 * holds for samples from the newest generation of the process's mappings
 * on (from 0 without an EXEC: fast_from()).  Any new mapping (maps'
 * version) empties it; it grows with the number of frames resolved,
 * sixteen slots per frame, so collisions stay rare (with four, 6 % of the
 * frames of a 64 000-address profile missed), from 2^12 to 2^20 slots.
 */
#define RES_FAST_MIN_BITS 12
#define RES_FAST_MAX_BITS 20
#define RES_FAST_PER_FI 16

struct res_fast {
	u64 addr;
	u64 from; /* the earliest sample time it answers */
	u32 pid;
	u32 fi; /* UINT32_MAX: empty */
};

/*
 * While recording, res_observe() asks of each user frame only whether a
 * mapping of its process covers it (if none, the maps are read again) and
 * whether that mapping is anonymous (JIT code: its perf map is loaded).
 * Mappings cover whole pages, so a page found in a mapping that is not
 * anonymous (a file, [vdso], ...) of the process's current generation
 * gives every address on it that answer until a mapping is added (a newer
 * one may cover the page, and maps_find() prefers the newest): a
 * direct-mapped cache of (pid, page), valid for that generation and maps
 * version, spares the interval lookup for every frame but the first on a
 * page.
 */
#define RES_SEEN_BITS 10
#define RES_SEEN_PAGE_SHIFT 12 /* the smallest page: any mapping is aligned to it */

struct res_seen {
	u64 page; /* addr >> RES_SEEN_PAGE_SHIFT, 0: empty */
	u64 gen; /* proc_maps.cur_gen it was found in */
	u32 pid;
	u32 version; /* proc_maps.version it was found under */
};

struct resolver {
	struct maps *maps;
	struct kallsyms ksyms;
	bool ksyms_ready; /* loaded (live) or filled from a capture */
	bool no_image_offset; /* no kallsyms function tells the vmlinux offset */
	const char *kallsyms_path;
	const char *modules_path;
	struct kmods kmods; /* .ko files of the modules in kallsyms */
	const char *jit_dir; /* where perf-PID.map files are (default /tmp) */
	struct jitmap **jits;
	u32 nr_jits;
	u32 alloc_jits;
	struct u64map jit_index; /* pid -> index */
	struct strtab strs;
	struct frame_info *fis;
	u32 nr_fis;
	u32 alloc_fis;
	struct u64map *map_cache; /* per map id: address -> fi */
	u32 nr_map_cache;
	struct unmapped_cache *unmapped; /* per process: addresses no mapping covers */
	u32 nr_unmapped;
	u32 alloc_unmapped;
	struct u64map unmapped_index; /* pid -> index in unmapped */
	struct res_fast *fast;
	u32 fast_bits;
	u32 fast_version; /* maps.version the fast cache was filled under */
	struct res_seen *seen; /* 1 << RES_SEEN_BITS entries, allocated by res_observe() */
	struct u64map kcache;
	struct u64map demangled; /* raw name id -> display name id */
	u64 reasons[UR_MAX];
	u64 frames;
	u64 leaf_inserted;
	u64 fde_frames; /* unnamed frames grouped by .eh_frame */
	bool live;
	bool demangle;
	bool leaf_repair;
	bool inline_frames; /* put inline frames in the stacks (default) */
};

void res_init(struct resolver *r, struct maps *maps, bool live);
void res_free(struct resolver *r);

/*
 * While recording: make sure the maps of the sample's process are known and
 * cover its user addresses; re-read them (rate-limited) when not.
 */
void res_observe(struct resolver *r, const struct rec_sample *v);

/*
 * The part of res_observe() that cannot wait while a process lives: the
 * first read of its maps (the mappings it had before its records could tell
 * them), made once per process, and none for a process whose maps MMAP
 * records told since its exec (maps_told()).  Returns the process's maps.
 */
struct proc_maps *res_observe_process(struct resolver *r, u32 pid);

/* Resolve every frame of a sample. */
void res_stack(struct resolver *r, const struct rec_sample *v, struct stack *st);
void stack_free(struct stack *st);

static inline const struct frame_info *res_fi(const struct resolver *r, u32 idx)
{
	return &r->fis[idx];
}

static inline const char *res_str(const struct resolver *r, u32 id)
{
	return strtab_str(&r->strs, id);
}
/* "name+0xoff" (or "file+0xoff" without a symbol, "name" for inline frames) into @sb. */
void res_format_frame(const struct resolver *r, const struct stack_frame *f, struct sbuf *sb);
/* "file:line" into @sb ("??:0" when unknown); the file's base name unless @full. */
void res_format_srcline(const struct resolver *r, u32 fi, bool full, struct sbuf *sb);

/* Forget every resolved address (after changing how names are shown: tests). */
void res_forget(struct resolver *r);
/* Resolve one user address of @pid (tests, addr2sym). */
u32 res_user(struct resolver *r, u32 pid, u64 time, u64 addr);
u32 res_kernel(struct resolver *r, u64 addr);
/* The jitmap of @pid, loaded on first use; NULL if none. */
struct jitmap *res_jitmap(struct resolver *r, u32 pid, bool create);
/* Make sure kernel symbols are loaded (live). */
void res_load_kernel(struct resolver *r);
/* Fill dso_sym.fs_off for arm64 code, reading the function's first insns. */
void res_prologue(struct dso *d, struct dso_sym *sym);

#endif /* CYCREAD_RESOLVE_H */
