/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ELF symbolizer on libelf.
 *
 * A runtime address becomes a file offset through its mapping
 * (addr - map_start + map_pgoff); the PT_LOAD segment holding that offset
 * turns it into an ELF virtual address (off - p_offset + p_vaddr).  This is
 * right for executables, PIE and shared libraries alike, and for code in any
 * segment, unlike a single ".text delta".  Program headers always come from
 * the runtime file: objcopy --only-keep-debug rewrites them in debug files.
 *
 * Symbols: .symtab preferred (from a debug file when the binary is stripped),
 * .dynsym merged in; at one address the chosen alias is the first by
 * (sized, from .symtab, GLOBAL < WEAK < LOCAL, FUNC before NOTYPE, fewest
 * leading underscores, strcmp), so the choice never depends on table order.
 * A .symtab symbol of size 0 extends to the next symbol (within its
 * section); a .dynsym symbol of size 0 matches only its exact address,
 * because .dynsym is sparse and would swallow unrelated local functions.
 */
#ifndef CYCREAD_ELFSYM_H
#define CYCREAD_ELFSYM_H

#include "interval.h"
#include "util.h"

#define DSO_BUILD_ID_MAX 64
/* struct dso_sym.fs_off: where an arm64 function sets x29 (see leaf.h) */
#define FS_OFF_UNKNOWN (-2)
#define FS_OFF_NONE (-1)

struct dso_seg {
	u64 vaddr;
	u64 memsz;
	u64 offset;
	u64 filesz;
	u32 flags; /* PF_R/PF_W/PF_X */
};

#define DSYM_DYNSYM (1U << 0) /* came from .dynsym */
#define DSYM_SIZED (1U << 1) /* st_size was not 0 */
#define DSYM_FDE (1U << 2) /* no symbol: an .eh_frame FDE's range (ehframe.h) */
#define DSYM_PLT (1U << 3) /* a PLT entry, named SYMBOL@plt */
/* the flags a capture file keeps */
#define DSYM_STORED_MASK (DSYM_FDE | DSYM_PLT)

struct dso_sym {
	u64 start; /* struct ivhead: start and end first */
	u64 end; /* exclusive */
	u32 name; /* offset into dso.names */
	u8 bind;
	u8 type;
	u8 flags;
	s32 fs_off; /* FS_OFF_* or the byte offset, filled lazily */
};

enum dso_symsrc {
	SYMSRC_NONE, /* no symbols at all */
	SYMSRC_SYMTAB, /* the binary's own .symtab (+ .dynsym) */
	SYMSRC_DEBUG, /* .symtab of a separate debug file (+ .dynsym) */
	SYMSRC_DYNSYM, /* only .dynsym: stripped, no debug file found */
	SYMSRC_EMBEDDED, /* symbols stored in a capture file */
	SYMSRC_MINIDEBUG, /* .symtab of the .gnu_debugdata image (+ .dynsym) */
};

struct dso {
	char *path; /* as the process mapped it */
	const char *name; /* basename of path */
	int fd;
	void *elf; /* Elf *, kept opaque for users of this header */
	const u8 *image; /* the whole file (mmap by libelf) */
	size_t image_size;
	void *mem; /* our copy for dso_open_mem */
	u16 e_type;
	u16 e_machine;
	struct dso_seg *segs;
	u32 nr_segs;
	u8 build_id[DSO_BUILD_ID_MAX];
	u32 build_id_len;
	char *debuglink;
	u32 debuglink_crc;
	bool has_symtab;
	/* its symbols name local functions: not stripped of them (ld -x) */
	bool local_funcs;
	bool syms_loaded;
	enum dso_symsrc symsrc;
	char *symsrc_path; /* file the symbols came from */
	const char *symsrc_how; /* SYMSRC_DEBUG: how the debug file was found */
	void *debug_elf; /* Elf * of the separate debug file, kept for its DWARF */
	char *dwarf_path; /* file the DWARF comes from */
	struct dso_dwarf *dwarf; /* srcline.c, on first use */
	struct dso_src *src; /* source frames stored in a capture */
	struct dso_fdes *fdes; /* ehframe.c, on first use */
	struct dso_sym *syms; /* sorted by start once loaded */
	u32 nr_syms;
	u32 syms_alloc;
	struct ivindex sym_index;
	struct strpool names;
	/* identity for sharing one dso between mappings */
	u64 dev;
	u64 ino;
	u64 size;
	u64 mtime_ns;
};

/* Where separate debug files are looked for. */
struct dso_search {
	const char *root; /* prefix for every path (--symfs), or NULL */
	const char *debug_dir; /* default /usr/lib/debug */
	bool debuginfod; /* --debuginfod: ask $DEBUGINFOD_URLS too */
};

/*
 * Open an ELF file.  dso_open_fd() takes the descriptor (also on failure).
 * On failure NULL and *why say why ("not an ELF file", ...).
 */
struct dso *dso_open_fd(int fd, const char *path, const char **why);
struct dso *dso_open_path(const char *path, const char **why);
struct dso *dso_open_mem(const void *data, size_t size, const char *name, const char **why);
/* A dso without a file, filled from a capture file. */
struct dso *dso_new_embedded(const char *path);
void dso_add_seg(struct dso *d, const struct dso_seg *seg);
void dso_add_sym(struct dso *d, u64 start, u64 end, const char *name, s32 fs_off);
/* Sort and de-duplicate symbols added with dso_add_sym(). */
void dso_sort_syms(struct dso *d);
void dso_free(struct dso *d);

/* Load symbols once (idempotent); -v says where they came from. */
void dso_load_syms(struct dso *d, const struct dso_search *s);
/* "debug file /usr/lib/debug/... (found by build-id)" and the like, into @sb. */
void dso_symsrc_str(const struct dso *d, struct sbuf *sb);

/* File offset -> ELF virtual address through the PT_LOAD containing it. */
bool dso_off_to_vaddr(const struct dso *d, u64 off, u64 *vaddr);
/* The symbol containing @vaddr, or NULL. */
struct dso_sym *dso_find(struct dso *d, u64 vaddr);

static inline const char *dso_sym_name(const struct dso *d, const struct dso_sym *s)
{
	return strpool_str(&d->names, s->name);
}
/* Copy file bytes at ELF virtual address @vaddr (code reading). */
bool dso_read(const struct dso *d, u64 vaddr, void *buf, size_t len);

/* "abcd1234..." into @buf (2 * DSO_BUILD_ID_MAX + 1 bytes). */
void build_id_hex(const u8 *id, u32 len, char *buf);

/* Read the GNU build-id of an open ELF image; 0 if none. */
u32 elf_build_id(void *elf, u8 *out);
/* Header checks for an ELF image of @file_size bytes; false with *why. */
bool elf_sane(void *elf, size_t file_size, const char **why);
/* Does @elf (an Elf *, may be NULL) have a section @name with contents? */
bool elf_has_section(void *elf, const char *name);

#endif /* CYCREAD_ELFSYM_H */
