/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The capture file (-o FILE, report -i FILE).
 *
 * Layout, all integers little-endian, every section 8-byte aligned:
 *
 *	header	"CYCSCAP\0", u32 version, u32 header size, u32 byte-order mark
 *		0x01020304, u32 reserved, u64 reserved
 *	section	u32 type, u32 flags, u64 payload size, payload, zero padding to 8
 *	...
 *	END	u64 number of sections before it, u64 offset of END
 *
 * Sections: META (text "key=value" lines: tool and kernel versions, event,
 * PMU, period, target, counters), RECORDS (the session's records exactly
 * as the rings held them, in time order), COMMS (pid -> name), DSOS (for
 * every mapped file: path, build-id, PT_LOAD segments, where its symbols
 * came from, and the symbols the session's samples hit, so a report needs
 * no binaries), MAPS (the executable mappings seen, per process and
 * generation, each naming its DSOS entry), KSYMS (the kernel and module
 * symbols the samples hit, or the note that they were hidden), JIT
 * (perf-PID.map symbols), LINES (for each address the samples hit, its
 * source frames: file, line and inline chain, see srcline.h), KMODS (per
 * kernel module the samples hit, and the kernel image as "[kernel]": its
 * build-id and, when its .ko or vmlinux was found, the functions and
 * source frames hit, see kmod.h).  Unknown
 * section types are skipped; a missing END means the file was cut short.
 *
 * Version 2 added LINES, the symbol source of each DSOS entry and a flags
 * word per symbol (DSYM_*); version 1 files still read.
 *
 * When reading, a file found at --symfs DIR + path (or at the path itself,
 * when the capture has its build-id) replaces the stored symbols if it is
 * the same build, names every stored symbol and has source lines where the
 * capture has them; -v says which files were taken and why others were not,
 * and maps.real_found / real_taken count them.
 */
#ifndef CYCREAD_CAPTURE_H
#define CYCREAD_CAPTURE_H

#include "report.h"

#define CAP_MAGIC "CYCSCAP" /* plus the terminating NUL: 8 bytes */
#define CAP_VERSION 2

enum cap_section_type {
	CAP_META = 1,
	CAP_RECORDS = 2,
	CAP_COMMS = 3,
	CAP_DSOS = 4,
	CAP_MAPS = 5,
	CAP_KSYMS = 6,
	CAP_JIT = 7,
	CAP_LINES = 8,
	CAP_KMODS = 9,
	CAP_END = 0xffff,
};

/* Write @rep (already built) and @ms to @path; 0 or -errno. */
int capture_write(const char *path, const struct report *rep, const struct maps *ms);

/*
 * Read a capture into @p, @ms and @r (initialised, offline).  On failure
 * returns -1 with a message in @err (never crashes on hostile input).
 * @symfs may be NULL.
 */
int capture_read_mem(const void *data, size_t size, struct profile *p, struct maps *ms,
		     struct resolver *r, const char *symfs, char *err, size_t errlen);
/* The same from a file, mapped: @p keeps the mapping and reads its records in place. */
int capture_read(const char *path, struct profile *p, struct maps *ms, struct resolver *r,
		 const char *symfs, char *err, size_t errlen);

#endif /* CYCREAD_CAPTURE_H */
