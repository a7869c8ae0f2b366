/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where a stripped binary's symbols and DWARF are: separate debug files and
 * MiniDebugInfo.
 *
 * Debug file candidates, in the order gdb and perf try them:
 *
 *	ROOT DEBUG_DIR/.build-id/xx/rest.debug	accepted when its build-id is
 *						the binary's
 *	ROOT DIR/NAME, ROOT DIR/.debug/NAME,	NAME from .gnu_debuglink, DIR the
 *	ROOT DEBUG_DIR DIR/NAME			binary's directory: accepted when
 *						the build-ids match or, without
 *						build-ids, the file's CRC32 is
 *						the debuglink's
 *	debuginfod, by build-id			only with --debuginfod
 *
 * (ROOT is --symfs, DEBUG_DIR --debug-dir or /usr/lib/debug.)  Under -v each
 * candidate that exists but is not taken is named with the reason, and -vv
 * also names the ones that do not exist.
 *
 * MiniDebugInfo: a .gnu_debugdata section holding an xz-compressed ELF
 * file whose .symtab lists the functions .dynsym lacks (Fedora ships it in
 * every binary).  It is used when no debug file gives a .symtab.
 */
#ifndef CYCREAD_DEBUGINFO_H
#define CYCREAD_DEBUGINFO_H

#include "elfsym.h"

struct debug_file {
	void *elf; /* Elf *, its file mapped (no descriptor kept) */
	char *path;
	const char *how; /* "build-id", ".gnu_debuglink", "debuginfod" */
};

/* Find @d's debug file; false when no candidate is acceptable. */
bool debug_file_find(struct dso *d, const struct dso_search *s, struct debug_file *out);

/*
 * The bytes of PROGBITS section @name of the libelf Elf @elf (a .debug_
 * name also matches its .zdebug_ form): as stored when @raw, else as
 * libelf gives them (inflated, once libdw has opened the file).  NULL
 * when there is none.
 */
const void *elf_section_bytes(void *elf, const char *name, bool raw, size_t *size);

/*
 * The ELF image inside @d's .gnu_debugdata (malloc()ed, *size bytes), or
 * NULL: no such section, or (with a -v message) one that does not unpack.
 */
void *debug_minidebuginfo(struct dso *d, size_t *size);

/* Can this build ask debuginfod servers?  (Static builds cannot.) */
bool debuginfod_available(const char **why);

#endif /* CYCREAD_DEBUGINFO_H */
