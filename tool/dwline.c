// SPDX-License-Identifier: GPL-2.0
/*
 * .debug_line decoding (see dwline.h): the header with its directory and
 * file tables, then the line program into rows, ordered as libdw orders
 * them.
 */
#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

#include "dwline.h"
#include "dwread.h"

/* The string at @off of a string section; NULL when outside or unterminated. */
static const char *sec_str(const u8 *sec, size_t size, u64 off)
{
	if (!sec || off >= size || !memchr(sec + off, 0, size - off))
		return NULL;
	return (const char *)sec + off;
}

/* The line program header's fields that decoding needs. */
struct header {
	u16 version;
	u32 offset_size;
	u8 min_insn;
	u8 max_ops;
	bool default_stmt;
	int8_t line_base;
	u8 line_range;
	u8 opcode_base;
	const u8 *opcode_lengths; /* [opcode - 1] */
	const u8 *prog; /* the program */
	const u8 *prog_end;
};

/* One field of a DWARF 5 directory or file entry. */
struct field {
	const char *str; /* path forms */
	u64 num; /* constant forms */
	bool is_str;
	bool is_num;
};

/* Read one value of @form (the ones line tables use); false: unknown form. */
static bool read_form(struct dwcur *c, const struct dwline_secs *s, u32 offset_size, u64 form,
		      struct field *f)
{
	memset(f, 0, sizeof(*f));
	switch (form) {
	case DW_FORM_string:
		f->str = dw_str(c);
		f->is_str = true;
		break;
	case DW_FORM_line_strp:
		f->str = sec_str(s->line_str, s->line_str_size, dw_uint(c, offset_size));
		f->is_str = true;
		break;
	case DW_FORM_strp:
		f->str = sec_str(s->str, s->str_size, dw_uint(c, offset_size));
		f->is_str = true;
		break;
	case DW_FORM_udata:
		f->num = dw_uleb(c);
		f->is_num = true;
		break;
	case DW_FORM_sdata:
		dw_sleb(c);
		break;
	case DW_FORM_data1:
	case DW_FORM_data2:
	case DW_FORM_data4:
	case DW_FORM_data8:
		f->num = dw_uint(c, form == DW_FORM_data1   ? 1
				    : form == DW_FORM_data2 ? 2
				    : form == DW_FORM_data4 ? 4
							    : 8);
		f->is_num = true;
		break;
	case DW_FORM_data16:
		if (dw_need(c, 16))
			c->p += 16;
		break;
	case DW_FORM_block:
	case DW_FORM_block1:
	case DW_FORM_block2:
	case DW_FORM_block4: {
		u64 n = form == DW_FORM_block ? dw_uleb(c)
					      : dw_uint(c, form == DW_FORM_block1   ? 1
							   : form == DW_FORM_block2 ? 2
										    : 4);

		if (n > (u64)(c->end - c->p))
			c->bad = true;
		else
			c->p += n;
		break;
	}
	default:
		return false;
	}
	return !c->bad;
}

/* A file @name in @dir: relative names are joined to it when asked for, as libdw does. */
static void add_file(struct dwline *t, const char *dir, const char *name)
{
	VEC_GROW(t->files, t->nr_files, t->alloc_files);
	t->files[t->nr_files++] =
		(struct dwline_file){ .dir = name[0] == '/' ? NULL : dir, .name = name };
}

void dwline_add_file(struct dwline *t, const char *name)
{
	VEC_GROW(t->files, t->nr_files, t->alloc_files);
	t->files[t->nr_files++] =
		(struct dwline_file){ .name = name ? xstrdup(name) : NULL, .owned = true };
}

/* An entry format of DWARF 5: up to 255 (type, form) pairs. */
struct format {
	u8 n;
	u64 type[255];
	u64 form[255];
};

static bool read_format(struct dwcur *c, struct format *fmt)
{
	u32 i;

	fmt->n = dw_u8(c);
	for (i = 0; i < fmt->n; i++) {
		fmt->type[i] = dw_uleb(c);
		fmt->form[i] = dw_uleb(c);
	}
	return !c->bad;
}

/*
 * One DWARF 5 entry of @fmt: its path into *@path, its directory index
 * into *@dir (when asked for).
 */
static bool read_entry(struct dwcur *c, const struct dwline_secs *s, const struct header *h,
		       const struct format *fmt, const char **path, u64 *dir)
{
	struct field f;
	bool have_dir = false;
	u32 i;

	*path = NULL;
	for (i = 0; i < fmt->n; i++) {
		if (!read_form(c, s, h->offset_size, fmt->form[i], &f))
			return false;
		if (fmt->type[i] == DW_LNCT_path && f.is_str)
			*path = f.str;
		else if (dir && fmt->type[i] == DW_LNCT_directory_index && f.is_num) {
			*dir = f.num;
			have_dir = true;
		}
	}
	return *path && (!dir || have_dir);
}

/* The directory and file tables of DWARF 5; files indexed from 0. */
static bool read_tables_v5(struct dwcur *c, const struct dwline_secs *s, const struct header *h,
			   struct dwline *t)
{
	struct format *fmt = xmalloc(sizeof(*fmt));
	const char *path;
	u64 nr_dirs, nr_files, i, dir;
	bool ok = false;

	if (!read_format(c, fmt))
		goto out;
	nr_dirs = dw_uleb(c);
	/* an entry takes a byte at least: more than the bytes left is not DWARF */
	if (c->bad || (nr_dirs && !fmt->n) || nr_dirs > (u64)(c->end - c->p))
		goto out;
	for (i = 0; i < nr_dirs; i++) {
		VEC_GROW(t->dirs, t->nr_dirs, t->alloc_dirs);
		if (!read_entry(c, s, h, fmt, &t->dirs[t->nr_dirs++], NULL))
			goto out;
	}
	if (!read_format(c, fmt))
		goto out;
	nr_files = dw_uleb(c);
	if (c->bad || (nr_files && !fmt->n) || nr_files > (u64)(c->end - c->p))
		goto out;
	if (!nr_files)
		add_file(t, NULL, "???"); /* libdw's placeholder for file 0 */
	for (i = 0; i < nr_files; i++) {
		if (!read_entry(c, s, h, fmt, &path, &dir) || dir >= nr_dirs)
			goto out;
		add_file(t, t->dirs[dir], path);
	}
	ok = true;
out:
	free(fmt);
	return ok;
}

/* The directory and file tables before DWARF 5; directory 0 is @comp_dir, file 0 none. */
static bool read_tables_v4(struct dwcur *c, const char *comp_dir, struct dwline *t)
{
	const char *name;
	u64 dir;

	VEC_GROW(t->dirs, t->nr_dirs, t->alloc_dirs);
	t->dirs[t->nr_dirs++] = comp_dir;
	while (dw_need(c, 1) && *c->p) {
		name = dw_str(c);
		VEC_GROW(t->dirs, t->nr_dirs, t->alloc_dirs);
		t->dirs[t->nr_dirs++] = name;
	}
	dw_u8(c);
	add_file(t, NULL, "???");
	while (dw_need(c, 1) && *c->p) {
		name = dw_str(c);
		dir = dw_uleb(c);
		dw_uleb(c); /* mtime */
		dw_uleb(c); /* length */
		if (c->bad || dir >= t->nr_dirs)
			return false;
		add_file(t, t->dirs[dir], name);
	}
	dw_u8(c);
	return !c->bad;
}

/* The header at @c (the unit's length read); @c ends up at the file tables. */
static bool read_header(struct dwcur *c, u32 addr_size, struct header *h)
{
	u64 hlen;

	h->version = dw_uint(c, 2);
	if (c->bad || h->version < 2 || h->version > 5)
		return false;
	if (h->version >= 5 && (dw_u8(c) != addr_size || dw_u8(c) != 0))
		return false; /* address size, segment selector size */
	hlen = dw_uint(c, h->offset_size);
	if (c->bad || hlen > (u64)(c->end - c->p))
		return false;
	h->prog = c->p + hlen;
	h->prog_end = c->end;
	c->end = h->prog; /* the tables end where the program begins */
	h->min_insn = dw_u8(c);
	h->max_ops = h->version >= 4 ? dw_u8(c) : 1;
	h->default_stmt = dw_u8(c);
	h->line_base = (int8_t)dw_u8(c);
	h->line_range = dw_u8(c);
	h->opcode_base = dw_u8(c);
	if (c->bad || !h->max_ops || !h->opcode_base || !dw_need(c, h->opcode_base - 1))
		return false;
	h->opcode_lengths = c->p;
	c->p += h->opcode_base - 1;
	return true;
}

/* The state machine's registers that rows keep. */
struct regs {
	u64 addr;
	u64 op_index;
	u64 file;
	u64 line; /* wraps as the program says: checked when a row is made */
};

static void reset(struct regs *r)
{
	*r = (struct regs){ .file = 1, .line = 1 };
}

static void advance(const struct header *h, struct regs *r, u64 ops)
{
	r->addr += h->min_insn * ((r->op_index + ops) / h->max_ops);
	r->op_index = (r->op_index + ops) % h->max_ops;
}

/* Out of the decoding loop: room is made once, ahead, nearly always. */
static void __attribute__((noinline)) grow_rows(struct dwline *t)
{
	VEC_GROW(t->rows, t->nr_rows, t->alloc_rows);
}

static inline void push_row(struct dwline *t, u64 addr, u32 file, u32 line, bool end)
{
	if (t->nr_rows >= t->alloc_rows)
		grow_rows(t);
	t->rows[t->nr_rows] = (struct dwline_row){
		.addr = addr, .file = file, .line = line, .idx = t->nr_rows, .end = end
	};
	t->nr_rows++;
}

/* A row, refused (corrupt) where libdw's fields would not hold it. */
static inline bool emit(struct dwline *t, const struct regs *r, bool end)
{
	if (r->line > INT32_MAX || r->file > UINT32_MAX || t->nr_rows >= UINT32_MAX)
		return false;
	push_row(t, r->addr, r->file, r->line, end);
	return true;
}

/* An extended opcode (after its 0); false when corrupt. */
static bool extended(struct dwcur *c, u32 addr_size, struct dwline *t, struct regs *r)
{
	u64 len = dw_uleb(c);
	const u8 *next;
	const char *name;
	u64 dir;
	u8 op;

	if (c->bad || !len || len > (u64)(c->end - c->p))
		return false;
	next = c->p + len;
	op = dw_u8(c);
	switch (op) {
	case DW_LNE_end_sequence:
		if (!emit(t, r, true))
			return false;
		reset(r);
		break;
	case DW_LNE_set_address:
		if (len - 1 != addr_size)
			return false;
		r->addr = dw_uint(c, addr_size);
		r->op_index = 0;
		break;
	case DW_LNE_define_file:
		name = dw_str(c);
		dir = dw_uleb(c);
		if (c->bad || dir >= t->nr_dirs)
			return false;
		add_file(t, t->dirs[dir], name);
		break;
	default:
		break; /* set_discriminator and the unknown: their bytes skipped */
	}
	if (c->bad || c->p > next)
		return false;
	c->p = next;
	return true;
}

/* A standard opcode; false when corrupt. */
static bool standard(struct dwcur *c, const struct header *h, struct dwline *t, struct regs *r,
		     u8 op)
{
	u32 i;

	switch (op) {
	case DW_LNS_copy:
		return emit(t, r, false);
	case DW_LNS_advance_pc:
		advance(h, r, dw_uleb(c));
		break;
	case DW_LNS_advance_line:
		r->line += (u64)dw_sleb(c);
		break;
	case DW_LNS_set_file:
		r->file = dw_uleb(c);
		break;
	case DW_LNS_const_add_pc:
		if (!h->line_range)
			return false;
		advance(h, r, (255 - h->opcode_base) / h->line_range);
		break;
	case DW_LNS_fixed_advance_pc:
		r->addr += dw_uint(c, 2);
		r->op_index = 0;
		break;
	case DW_LNS_set_column:
	case DW_LNS_set_isa:
	case DW_LNS_negate_stmt:
	case DW_LNS_set_basic_block:
	case DW_LNS_set_prologue_end:
	case DW_LNS_set_epilogue_begin:
	default:
		/* what rows do not keep: skip the operands the header declares */
		for (i = 0; i < h->opcode_lengths[op - 1]; i++)
			dw_uleb(c);
		break;
	}
	return !c->bad;
}

/* What a special opcode adds to the line and to the operation index. */
struct special {
	s64 line;
	u64 ops;
};

/*
 * The program: each step consumes a byte at least, so it ends with the
 * section.  Special opcodes, most of a program, are looked up in a table
 * of the header's values made once; without VLIW bundles (max_ops 1, every
 * compiler's) the operation index stays 0 and an advance is a product.
 */
static bool run(struct dwcur *c, const struct header *h, u32 addr_size, struct dwline *t)
{
	struct special sp[256];
	struct regs r;
	u32 i;
	u8 op;

	for (i = h->opcode_base; h->line_range && i < 256; i++)
		sp[i] = (struct special){
			.line = (s64)h->line_base + (i - h->opcode_base) % h->line_range,
			.ops = (i - h->opcode_base) / h->line_range,
		};
	reset(&r);
	while (c->p < c->end) {
		op = *c->p++;
		if (op >= h->opcode_base) {
			if (!h->line_range)
				return false;
			r.line += (u64)sp[op].line;
			if (h->max_ops == 1)
				r.addr += h->min_insn * sp[op].ops;
			else
				advance(h, &r, sp[op].ops);
			if (!emit(t, &r, false))
				return false;
		} else if (!op) {
			if (!extended(c, addr_size, t, &r))
				return false;
		} else if (!standard(c, h, t, &r, op)) {
			return false;
		}
	}
	return true;
}

/* The standard opcodes' operand counts are the spec's, or the program is not DWARF. */
static bool lengths_sane(const struct header *h)
{
	static const u8 std[] = { 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1 };
	u32 i;

	for (i = 1; i < h->opcode_base && i <= ARRAY_SIZE(std); i++)
		if (h->opcode_lengths[i - 1] != std[i - 1])
			return false;
	return true;
}

bool dwline_read(const struct dwline_secs *s, u64 off, u32 addr_size, const char *comp_dir,
		 struct dwline *t)
{
	struct dwcur c = { .big = s->big_endian };
	struct header h = { .offset_size = 4 };
	size_t guess;
	u64 len;

	if (!s->line || off >= s->line_size || (addr_size != 4 && addr_size != 8))
		return false;
	c.p = s->line + off;
	c.end = s->line + s->line_size;
	len = dw_uint(&c, 4);
	if (len == 0xffffffff) {
		len = dw_uint(&c, 8);
		h.offset_size = 8;
	}
	if (c.bad || len > (u64)(c.end - c.p))
		return false;
	c.end = c.p + len;
	if (!read_header(&c, addr_size, &h) || !lengths_sane(&h))
		return false;
	t->version = h.version;
	if (!(h.version >= 5 ? read_tables_v5(&c, s, &h, t) : read_tables_v4(&c, comp_dir, t)))
		return false;
	if (c.p != c.end)
		return false; /* the tables end exactly where the header says */
	c.p = h.prog;
	c.end = h.prog_end;
	/*
	 * A row takes an opcode byte at least, so the program's size bounds
	 * the rows: room for that many is made once (compilers' rows take
	 * about 3.5 bytes, and growing by doubling copied the rows of the
	 * larger units twice), and what is left returned after.  Bounded all
	 * the same: a hostile length must not reserve gigabytes, and on a
	 * 32-bit host the product wraps from a 179 MiB program on.
	 */
	guess = MIN((size_t)(c.end - c.p), DWLINE_ROWS_AT_ONCE);
	if (!t->alloc_rows && guess > 16) {
		t->alloc_rows = guess;
		t->rows = xrealloc(NULL, guess, sizeof(*t->rows));
	}
	if (!run(&c, &h, addr_size, t))
		return false;
	if (!t->nr_rows) {
		free(t->rows); /* a program of no rows keeps no room */
		t->rows = NULL;
		t->alloc_rows = 0;
	} else if (t->alloc_rows > t->nr_rows) {
		t->rows = xrealloc(t->rows, t->nr_rows, sizeof(*t->rows));
		t->alloc_rows = t->nr_rows;
	}
	dwline_sort(t);
	return true;
}

void dwline_add_row(struct dwline *t, u64 addr, u32 file, u32 line, bool end)
{
	push_row(t, addr, file, line, end);
}

/* libdw's order: by address; at one address ends first; then program order. */
static int row_cmp(const void *a, const void *b, void *arg)
{
	const struct dwline_row *x = a, *y = b;

	(void)arg;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->end != y->end)
		return x->end ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* A run of rows in program order: one sequence, or a part of one. */
struct run {
	u64 addr;
	size_t first;
	size_t nr;
};

static int run_cmp(const void *a, const void *b, void *arg)
{
	const struct run *x = a, *y = b;

	(void)arg;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->first < y->first ? -1 : 1;
}

/*
 * Sequences come in any order, each in address order: ordering the
 * sequences orders the rows by address, unless they overlap (then false).
 * The runs are cut where the address falls, so each is in address order
 * and the whole is when each run starts at or after the last row before.
 */
static bool sort_runs(struct dwline *t)
{
	struct run *runs = NULL;
	struct dwline_row *out;
	size_t nr = 0, alloc = 0, i, k = 0;
	bool ordered = true;

	for (i = 0; i < t->nr_rows; i++) {
		if (!i || t->rows[i - 1].end || t->rows[i].addr < t->rows[i - 1].addr) {
			VEC_GROW(runs, nr, alloc);
			runs[nr++] = (struct run){ .addr = t->rows[i].addr, .first = i };
		}
		runs[nr - 1].nr++;
	}
	sort(runs, nr, sizeof(*runs), run_cmp, NULL);
	out = xmalloc(t->nr_rows * sizeof(*out));
	for (i = 0; i < nr; i++) {
		if (k && out[k - 1].addr > runs[i].addr)
			ordered = false;
		memcpy(out + k, t->rows + runs[i].first, runs[i].nr * sizeof(*out));
		k += runs[i].nr;
	}
	free(runs);
	free(t->rows);
	t->rows = out;
	t->alloc_rows = t->nr_rows;
	return ordered;
}

/*
 * Rows in address order, each address's rows in libdw's order: a
 * sequence ending where its last row is, or where the next begins, puts
 * its end first.  Groups of one address are short.
 */
static void sort_ties(struct dwline *t)
{
	size_t i, k;

	for (i = 0; i < t->nr_rows; i = k) {
		bool sorted = true;

		for (k = i + 1; k < t->nr_rows && t->rows[k].addr == t->rows[i].addr; k++)
			sorted = sorted && row_cmp(&t->rows[k - 1], &t->rows[k], NULL) <= 0;
		if (!sorted)
			sort(t->rows + i, k - i, sizeof(*t->rows), row_cmp, NULL);
	}
}

/*
 * Rows in program order already in libdw's: by address (*@by_addr), and
 * no sequence's end after another row at its address (the rows of one
 * address then come as ends, then the others, each kind in program
 * order).  One pass tells both; most units of user space programs are so.
 */
static bool in_order(const struct dwline_row *r, size_t n, bool *by_addr)
{
	bool ends_first = true;
	size_t i;

	*by_addr = false;
	for (i = 1; i < n; i++) {
		if (r[i].addr > r[i - 1].addr)
			continue;
		if (r[i].addr < r[i - 1].addr)
			return false;
		if (r[i].end && !r[i - 1].end)
			ends_first = false;
	}
	*by_addr = true;
	return ends_first;
}

/*
 * The order is total (program order breaks ties), so ordering sequences
 * and then ties gives the one table a sort of all rows gives.
 */
void dwline_sort(struct dwline *t)
{
	bool by_addr;

	if (!t->nr_rows)
		return;
	if (!in_order(t->rows, t->nr_rows, &by_addr)) {
		if (!by_addr && !sort_runs(t))
			sort(t->rows, t->nr_rows, sizeof(*t->rows), row_cmp, NULL);
		sort_ties(t);
	}
	/* the last row ends a sequence, as libdw makes it (compilers forget) */
	t->rows[t->nr_rows - 1].end = true;
}

const char *dwline_file(struct dwline *t, u64 idx)
{
	struct dwline_file *f;

	if (idx >= t->nr_files)
		return NULL;
	f = &t->files[idx];
	if (!f->dir)
		return f->name;
	if (!f->full)
		f->full = xasprintf("%s/%s", f->dir, f->name);
	return f->full;
}

const struct dwline_row *dwline_find(const struct dwline *t, u64 addr)
{
	size_t lo = 0, hi = t->nr_rows;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->rows[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || t->rows[lo - 1].end)
		return NULL;
	return &t->rows[lo - 1];
}

void dwline_free(struct dwline *t)
{
	u32 i;

	for (i = 0; i < t->nr_files; i++) {
		free(t->files[i].full);
		if (t->files[i].owned)
			free((char *)t->files[i].name);
	}
	free(t->files);
	free(t->dirs);
	free(t->rows);
	memset(t, 0, sizeof(*t));
}
