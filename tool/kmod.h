/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel modules' .ko files: symbols, source lines and inline frames for
 * samples in module code.
 *
 * kallsyms names a module frame "func+off [module]".  When a .ko of that
 * module is found (a --kmod-dir; recording, /lib/modules/RELEASE and the
 * debug tree /usr/lib/debug/lib/modules/RELEASE; reporting a capture, those
 * under --symfs), the frame's address in the .ko is the .ko's own symbol of
 * that name plus off, so no section address is needed from the running
 * kernel.  A .ko is relocatable: libdwfl lays its sections out and applies
 * the relocations of its DWARF, which srcline.c then reads as it reads a
 * user binary's (a separate debug file found by build-id serves as well).
 * Directories are searched once, recursively, for NAME.ko (also .ko.xz,
 * .ko.gz, .ko.zst), with '-' and '_' taken as equal, as the kernel does.
 * A file whose build-id is not the build that ran is refused with a
 * warning: recording, the loaded module's (sysfs, root only); reporting a
 * capture, the one it stores.  A capture stores, per module its samples
 * hit, that build-id and, when a .ko gave them, the functions and source
 * frames at the addresses hit (kmods_module(), kmods_add_stored()), so an
 * offline report needs no .ko; a .ko of the same build stands in for them,
 * another build never does.
 */
#ifndef CYCREAD_KMOD_H
#define CYCREAD_KMOD_H

#include "elfsym.h"

struct kmod;

struct kmods {
	bool live; /* a running kernel: its modules' build-ids are checked */
	char **dirs;
	u32 nr_dirs;
	bool scanned;
	/*
	 * Module and function names, interned: the indexes below are keyed
	 * by their ids, so two names never share an entry (a hash could).
	 */
	struct strtab strs;
	struct u64map files; /* module name's id -> index in paths */
	char **paths;
	u32 nr_files;
	u32 alloc_files;
	struct kmod **mods;
	u32 nr_mods;
	u32 alloc_mods;
	struct u64map mod_index; /* module name's id -> index in mods */
};

/* Search @dir too (in the order added); missing directories are skipped. */
void kmods_add_dir(struct kmods *k, const char *dir);
/* ROOT/usr/lib/debug/lib/modules/RELEASE, then ROOT/lib/modules/RELEASE. */
void kmods_add_release(struct kmods *k, const char *root, const char *release);

/*
 * The .ko address of @func + @off in @module, and the dso that resolves it
 * (its symbols and DWARF, laid out as libdwfl does); false when no .ko of
 * the module is found or it has no such function.
 */
bool kmods_locate(struct kmods *k, const char *module, const char *func, u64 off, struct dso **d,
		  u64 *vaddr);

/*
 * Reading a capture: module @module ran as build @id (@id_len 0: unknown);
 * @d (may be NULL, taken) holds its stored functions and source frames at
 * .ko addresses.
 */
void kmods_add_stored(struct kmods *k, const char *module, const u8 *id, u32 id_len, struct dso *d);

/*
 * Writing a capture: module @i (< nr_mods), its name, the build-id that
 * ran (the loaded module's, the capture's, or in a report the .ko's;
 * *@id_len 0 when unknown, also when recording took a .ko unchecked
 * because sysfs hid the loaded module's), and
 * the dso its frames resolve in (NULL: none); kmods_index() finds a module seen by name (UINT32_MAX: none), and
 * kmods_func() the function kallsyms calls @func in module @i's dso.
 */
struct dso *kmods_module(const struct kmods *k, u32 i, const char **name, const u8 **id,
			 u32 *id_len);
u32 kmods_index(const struct kmods *k, const char *module);
const struct dso_sym *kmods_func(const struct kmods *k, u32 i, const char *func);

void kmods_free(struct kmods *k);

#endif /* CYCREAD_KMOD_H */
