/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A DWARF 2 to 5 line program decoder (.debug_line) of cycread's own.
 *
 * libdw's dwarf_getsrclines() builds a list node per row, then sorts all
 * of a unit's rows; on a large unit that was two thirds of the work of
 * symbolizing a real profile.  This decoder writes the rows into one
 * array, orders them by moving whole sequences (a sequence's rows are
 * already in address order) and sorts row by row only when sequences
 * overlap.  The result is the table libdw gives, in libdw's order (by
 * address; at one address a sequence's end before other rows, otherwise
 * program order), with the same file names (a relative name joined to its
 * directory; directory 0 is the unit's DW_AT_comp_dir before DWARF 5) and
 * its last row marked as ending a sequence, less the rows no lookup can
 * find: of two rows in a row of one sequence at one address only the
 * later is kept (dwline_read(); dwline_sort() keeps every row it is
 * given).  dwline_find() gives the same row for every address as in
 * libdw's table.  The file table also serves DW_AT_call_file of inlined
 * instances.
 *
 * Every read is bounded by the section: a corrupt or hostile program
 * fails with false, never reads past its data, never loops without
 * consuming bytes.
 */
#ifndef CYCREAD_DWLINE_H
#define CYCREAD_DWLINE_H

#include <stddef.h>

#include "util.h"

/*
 * The most rows the decoder makes room for before it has them: beyond,
 * the array doubles as rows come.
 */
#define DWLINE_ROWS_AT_ONCE (1U << 20)

struct dwline_row {
	u64 addr;
	u32 file; /* index into dwline.files */
	u32 line;
	u32 idx; /* program order */
	bool end; /* ends a sequence: no code from here */
};

/* A file of the table: its name joined to its directory when first asked for. */
struct dwline_file {
	const char *dir; /* NULL: none, or the name is absolute */
	const char *name; /* in the sections, or owned (from another reader) */
	char *full; /* dir/name, built once; owned */
	bool owned;
	bool in_comp_dir; /* dir is DW_AT_comp_dir: directory 0 before DWARF 5 */
};

struct dwline {
	u16 version; /* the line table's: from 5 on, file 0 is the unit's primary file */
	struct dwline_file *files;
	u32 nr_files;
	u32 alloc_files;
	const char **dirs; /* strings in the sections; dirs[0] may be NULL */
	u32 nr_dirs;
	u32 alloc_dirs;
	struct dwline_row *rows;
	size_t nr_rows;
	size_t alloc_rows;
};

/* The sections a line program refers to (a missing one: NULL, 0). */
struct dwline_secs {
	const u8 *line;
	size_t line_size;
	const u8 *str; /* .debug_str: DW_FORM_strp */
	size_t str_size;
	const u8 *line_str; /* .debug_line_str: DW_FORM_line_strp */
	size_t line_str_size;
	bool big_endian;
};

/*
 * Decode the program at @off of @s->line for a unit of @addr_size (4 or
 * 8) byte addresses compiled in @comp_dir (NULL: unknown) into @t, which
 * is zeroed (a table is decoded into once).  False when the program is
 * corrupt, or makes UINT32_MAX rows (@t is then to be freed all the same).
 */
bool dwline_read(const struct dwline_secs *s, u64 off, u32 addr_size, const char *comp_dir,
		 struct dwline *t);

/* The name of file @idx as libdw gives it, or NULL (no such file). */
const char *dwline_file(struct dwline *t, u64 idx);

/*
 * Whether that name is joined to the unit's DW_AT_comp_dir already (a
 * relative name in directory 0 before DWARF 5): addr2line joins the
 * comp_dir to the others whose directory is relative, not to these.
 */
bool dwline_file_in_comp_dir(const struct dwline *t, u64 idx);

/*
 * Add a file (its name as libdw joins it, @in_comp_dir as above) or a row
 * (tables built from another reader, libdwfl's relocated DWARF of a .ko);
 * then dwline_sort() once.  Rows past UINT32_MAX - 1 are dropped (their
 * program order would not fit).
 */
void dwline_add_file(struct dwline *t, const char *name, bool in_comp_dir);
void dwline_add_row(struct dwline *t, u64 addr, u32 file, u32 line, bool end);
void dwline_sort(struct dwline *t);

/* The row for @addr, as dwarf_getsrc_die() finds it: NULL between sequences. */
const struct dwline_row *dwline_find(const struct dwline *t, u64 addr);

void dwline_free(struct dwline *t);

#endif /* CYCREAD_DWLINE_H */
