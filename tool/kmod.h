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
 * capture, the one it stores.
 *
 * A name that several functions of a .ko have (static ones) names none:
 * such a frame keeps its kallsyms name.
 *
 * The kernel image itself is one more entry, named KMOD_KERNEL (no module
 * can be: module names are C identifiers): its file is a vmlinux with
 * symbols, --vmlinux or the first of the standard places (the debug
 * package's /usr/lib/debug/boot/vmlinux-RELEASE, /boot/vmlinux-RELEASE,
 * /usr/lib/debug/lib/modules/RELEASE/vmlinux, the build tree's
 * /lib/modules/RELEASE/build/vmlinux) that is the build that ran
 * (/sys/kernel/notes, readable by all).  Unlike a module, the image is laid
 * out as one piece, so a core kernel frame's vmlinux address is its
 * kallsyms address less one offset (KASLR's), learnt once from a function
 * whose name is unique: static functions share names (397 of the 49 648
 * function names of Debian's 6.1 arm64 vmlinux), a name alone cannot say
 * which one ran.
 *
 * A capture stores, per module its samples hit (and for the image), the
 * build-id and, when a file gave them, the functions and source frames at
 * the addresses hit (kmods_module(), kmods_add_stored()), so an offline
 * report needs no file; a file of the same build stands in for them,
 * another build never does.  For the image it also stores the function
 * the offset was learnt from (kmods_kernel_anchor()), in KSYMS and KMODS.
 */
#ifndef CYCREAD_KMOD_H
#define CYCREAD_KMOD_H

#include "elfsym.h"

struct kmod;

/* The kernel image's entry (see above). */
#define KMOD_KERNEL "[kernel]"

struct kmods {
	bool live; /* a running kernel: its modules' build-ids are checked */
	char **dirs;
	u32 nr_dirs;
	char **images; /* candidate vmlinux files, in order */
	u32 nr_images;
	bool image_given; /* --vmlinux: the only candidate */
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
/*
 * ROOT/usr/lib/debug/lib/modules/RELEASE, then ROOT/lib/modules/RELEASE;
 * and the standard vmlinux files of RELEASE under ROOT, unless
 * kmods_set_vmlinux() named one.
 */
void kmods_add_release(struct kmods *k, const char *root, const char *release);
/* The kernel image's file is @path and no other. */
void kmods_set_vmlinux(struct kmods *k, const char *path);

/*
 * The .ko address of @func + @off in @module, and the dso that resolves it
 * (its symbols and DWARF, laid out as libdwfl does); false when no .ko of
 * the module is found or it has no such function.
 */
bool kmods_locate(struct kmods *k, const char *module, const char *func, u64 off, struct dso **d,
		  u64 *vaddr);

/*
 * Learn the kernel image's offset from core kernel function @func at
 * kallsyms address @kstart: 1 when it is known (now or before), 0 when
 * @func cannot teach it (not in the image, or its name is not unique),
 * -1 when there is no image to resolve in.
 */
int kmods_kernel_offset(struct kmods *k, const char *func, u64 kstart);

/*
 * The vmlinux address of core kernel address @addr (in kallsyms function
 * @func at @kstart), and the dso that resolves it; false without an image,
 * its offset, or a function of that name there.
 */
bool kmods_locate_kernel(struct kmods *k, const char *func, u64 kstart, u64 addr, struct dso **d,
			 u64 *vaddr);
/*
 * The kallsyms address of the function the image's offset was learnt
 * from: a capture stores that function, so that a report can learn it too.
 */
bool kmods_kernel_anchor(const struct kmods *k, u64 *kstart);
/* The vmlinux the kernel's frames resolve in, for messages. */
const char *kmods_kernel_file(const struct kmods *k);

/*
 * The GNU build-id note among the ELF notes of @buf (a module's sysfs
 * file has one, /sys/kernel/notes several): false when there is none.
 */
bool kmod_note_build_id(const char *buf, size_t len, u8 *id, u32 *id_len);

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
 * kmods_func() the function kallsyms calls @func in module @i's dso (NULL
 * when none is, or several are).
 */
struct dso *kmods_module(const struct kmods *k, u32 i, const char **name, const u8 **id,
			 u32 *id_len);
u32 kmods_index(const struct kmods *k, const char *module);
const struct dso_sym *kmods_func(const struct kmods *k, u32 i, const char *func);

void kmods_free(struct kmods *k);

#endif /* CYCREAD_KMOD_H */
