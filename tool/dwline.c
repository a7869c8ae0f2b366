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

/*
 * Read one value of @form (the ones line tables use); false: unknown form.
 * Inline: each file of each unit hit passes here, 200 000 on a kernel.
 */
static inline __attribute__((always_inline)) bool
read_form(struct dwcur *c, const struct dwline_secs *s, u32 offset_size, u64 form, struct field *f)
{
	*f = (struct field){ 0 };
	switch (form) {
	case DW_FORM_string:
		f->str = dw_str(c);
		f->is_str = true;
		break;
	case DW_FORM_line_strp:
		f->str = dw_sec_str(s->line_str, s->line_str_size, dw_uint(c, offset_size));
		f->is_str = true;
		break;
	case DW_FORM_strp:
		f->str = dw_sec_str(s->str, s->str_size, dw_uint(c, offset_size));
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

/* libdw's placeholder of a file that is none: file 0 before DWARF 5, or of no files. */
static void add_no_file(struct dwline *t)
{
	VEC_GROW(t->files, t->nr_files, t->alloc_files);
	t->files[t->nr_files++] = (struct dwline_file){ .name = "???" };
}

/*
 * A file @name in directory @dir (checked): relative names are joined to
 * it when asked for, as libdw does.  Before DWARF 5 directory 0 is the
 * comp_dir (read_tables_v4()): such a name has it already.
 */
static void add_file(struct dwline *t, u64 dir, const char *name)
{
	bool joined = name[0] != '/' && t->dirs[dir];

	VEC_GROW(t->files, t->nr_files, t->alloc_files);
	t->files[t->nr_files++] = (struct dwline_file){
		.dir = joined ? t->dirs[dir] : NULL,
		.name = name,
		.in_comp_dir = joined && !dir && t->version < 5,
	};
}

void dwline_add_file(struct dwline *t, const char *name, bool in_comp_dir)
{
	VEC_GROW(t->files, t->nr_files, t->alloc_files);
	t->files[t->nr_files++] = (struct dwline_file){ .name = name ? xstrdup(name) : NULL,
							.owned = true,
							.in_comp_dir = in_comp_dir };
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
		add_no_file(t);
	for (i = 0; i < nr_files; i++) {
		if (!read_entry(c, s, h, fmt, &path, &dir) || dir >= nr_dirs)
			goto out;
		add_file(t, dir, path);
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
	add_no_file(t);
	while (dw_need(c, 1) && *c->p) {
		name = dw_str(c);
		dir = dw_uleb(c);
		dw_uleb(c); /* mtime */
		dw_uleb(c); /* length */
		if (c->bad || dir >= t->nr_dirs)
			return false;
		add_file(t, dir, name);
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

/* Rows in program order that are also in address order: a sequence, or a part of one. */
struct run {
	u64 addr;
	size_t first;
	size_t nr;
};

/* What ordering the rows will need (order_rows()), learnt as they are made. */
struct runs {
	struct run *v;
	size_t nr;
	size_t alloc;
	bool fell; /* a run starts below the row before it: runs to order */
	bool ends_last; /* a sequence ends after a row at its address */
};

static void __attribute__((noinline))
start_run(struct runs *runs, u64 addr, size_t first, bool fell)
{
	VEC_GROW(runs->v, runs->nr, runs->alloc);
	runs->v[runs->nr++] = (struct run){ .addr = addr, .first = first };
	runs->fell |= fell;
}

/*
 * What a row at @addr (@end: ending its sequence) following one at @last
 * (@last_end: that one ended its sequence, or there is none) tells the
 * ordering: a run starts at it, or a sequence ends after a row at its
 * address.  True for a row at the address of the row before it that ends
 * nothing: no lookup can find the row before (the decoder lets it take
 * that one's place).
 */
static inline __attribute__((always_inline)) bool note_row(struct runs *runs, size_t nr, u64 addr,
							   bool end, u64 last, bool last_end)
{
	if (last_end || addr < last) {
		start_run(runs, addr, nr, addr < last);
	} else if (addr == last) {
		if (!end)
			return true;
		runs->ends_last = true;
	}
	return false;
}

/* Room for more rows, up to the u32 their program order is kept in: false when full. */
static bool __attribute__((noinline)) grow_rows(struct dwline *t, size_t nr)
{
	if (nr >= UINT32_MAX)
		return false;
	t->alloc_rows = MIN(t->alloc_rows ? 2 * (u64)t->alloc_rows : 16, (u64)UINT32_MAX);
	t->rows = xrealloc(t->rows, t->alloc_rows, sizeof(*t->rows));
	return true;
}

/*
 * A LEB128's value and the byte after it (NULL: bad).  The decoding
 * loop's cursor is passed and returned by value, so that it stays in a
 * register: its address given to a call would keep it in memory.
 */
struct leb {
	u64 v;
	const u8 *p;
};

/* One of more than a byte, through dwread.h. */
static struct leb __attribute__((noinline)) long_leb(const u8 *p, const u8 *end, bool sign)
{
	struct dwcur c = { .p = p, .end = end };
	u64 v = sign ? (u64)dw_sleb(&c) : dw_uleb(&c);

	return (struct leb){ v, c.bad ? NULL : c.p };
}

/* An unsigned LEB128 at @p: one byte inline. */
static inline struct leb uleb(const u8 *p, const u8 *end)
{
	if (p < end && !(*p & 0x80))
		return (struct leb){ *p, p + 1 };
	return long_leb(p, end, false);
}

/* A signed one: the advance of a line, one byte nearly always. */
static inline struct leb sleb(const u8 *p, const u8 *end)
{
	if (p < end && !(*p & 0x80))
		return (struct leb){ (u64)((s64)((u64)*p << 57) >> 57), p + 1 };
	return long_leb(p, end, true);
}

/* The operand @l into *@v, the cursor past it; false when bad (inline: no address escapes). */
static inline __attribute__((always_inline)) bool take(struct leb l, const u8 **p, u64 *v)
{
	*p = l.p;
	*v = l.v;
	return l.p;
}

/* An extended opcode's effect on the registers the loop keeps, and where the next begins. */
struct ext {
	enum ext_kind { EXT_BAD, EXT_NONE, EXT_END, EXT_ADDR } kind;
	u64 addr;
	const u8 *next;
};

/* The extended opcode after a 0 at @p. */
static struct ext __attribute__((noinline))
extended(const u8 *p, const u8 *end, bool big, u32 addr_size, struct dwline *t)
{
	struct dwcur c = { .p = p, .end = end, .big = big };
	struct ext e = { .kind = EXT_NONE };
	u64 len = dw_uleb(&c), dir;
	const char *name;

	if (c.bad || !len || len > (u64)(c.end - c.p))
		return (struct ext){ .kind = EXT_BAD };
	e.next = c.p + len;
	switch (dw_u8(&c)) {
	case DW_LNE_end_sequence:
		e.kind = EXT_END;
		break;
	case DW_LNE_set_address:
		if (len - 1 != addr_size)
			return (struct ext){ .kind = EXT_BAD };
		e.kind = EXT_ADDR;
		e.addr = dw_uint(&c, addr_size);
		break;
	case DW_LNE_define_file:
		name = dw_str(&c);
		dir = dw_uleb(&c);
		if (c.bad || dir >= t->nr_dirs)
			return (struct ext){ .kind = EXT_BAD };
		add_file(t, dir, name);
		break;
	default:
		break; /* set_discriminator and the unknown: their bytes skipped */
	}
	if (c.bad || c.p > e.next)
		return (struct ext){ .kind = EXT_BAD };
	return e;
}

/* An advance by @ops operations in VLIW bundles of @max_ops. */
static inline __attribute__((always_inline)) void vliw_advance(u64 *addr, u64 *op_index, u64 ops,
							       u32 min_insn, u32 max_ops)
{
	*addr += min_insn * ((*op_index + ops) / max_ops);
	*op_index = (*op_index + ops) % max_ops;
}

/*
 * What a special opcode adds to the line, and to the operation index
 * (VLIW, max_ops above 1) or the address (the rest: min_insn multiplied in).
 */
struct special {
	s64 line;
	u64 step;
};

/*
 * The program, into rows: each step consumes a byte at least, so it ends
 * with the section.  The registers and the rows' end are locals (through
 * t->rows a row's store could change t->nr_rows), the common opcodes
 * decoded in the loop, a one-byte LEB128 inline.  Special opcodes, most
 * rows, are looked up in @sp.  Made twice (run()): with @vliw and without,
 * where the operation index stays 0 and an advance is an addition.  A row
 * is refused (corrupt) where libdw's fields would not hold it.
 *
 * A row at the address of the row before it in its sequence takes that
 * row's place: dwline_find() gives the last row of an address, and in
 * libdw's order the later of two such rows is after the earlier (GCC's
 * views make two in three of the kernel's rows so: a row of a statement
 * that has no code of its own).  A sequence's end is kept (libdw puts it
 * first).
 */
static inline __attribute__((always_inline)) bool
decode(const u8 *p, const u8 *end, const struct header *h, const struct special *sp, u32 addr_size,
       bool big, struct dwline *t, struct runs *runs, const bool vliw)
{
	u64 addr = 0, op_index = 0, file = 1, line = 1, last_addr = 0, ops, v;
	const u32 min_insn = h->min_insn, max_ops = h->max_ops, base = h->opcode_base;
	const u32 line_range = h->line_range;
	const u64 const_add = line_range ? (255 - base) / line_range : 0;
	struct dwline_row *rows = t->rows;
	size_t nr = t->nr_rows, cap = t->alloc_rows;
	bool last_end = true; /* the first row starts a run */
	bool ok = false, is_end;
	struct ext e;
	u32 i;
	u8 op;

	while (p < end) {
		op = *p++;
		is_end = false;
		if (op >= base) {
			if (!line_range)
				goto out;
			line += (u64)sp[op].line;
			if (vliw)
				vliw_advance(&addr, &op_index, sp[op].step, min_insn, max_ops);
			else
				addr += sp[op].step;
			goto row;
		}
		switch (op) {
		case 0:
			e = extended(p, end, big, addr_size, t);
			if (e.kind == EXT_BAD)
				goto out;
			p = e.next;
			if (e.kind == EXT_ADDR) {
				addr = e.addr;
				op_index = 0;
			}
			if (e.kind != EXT_END)
				continue;
			is_end = true;
			goto row;
		case DW_LNS_copy:
			goto row;
		case DW_LNS_advance_pc:
			if (!take(uleb(p, end), &p, &ops))
				goto out;
			break;
		case DW_LNS_advance_line:
			if (!take(sleb(p, end), &p, &v))
				goto out;
			line += v;
			continue;
		case DW_LNS_set_file:
			if (!take(uleb(p, end), &p, &file))
				goto out;
			continue;
		case DW_LNS_set_column:
		case DW_LNS_set_isa:
			/* the one operand lengths_sane() let through */
			if (!take(uleb(p, end), &p, &v))
				goto out;
			continue;
		case DW_LNS_const_add_pc:
			if (!line_range)
				goto out;
			ops = const_add;
			break;
		case DW_LNS_fixed_advance_pc:
			if (end - p < 2)
				goto out;
			addr += big ? (u16)(p[0] << 8 | p[1]) : (u16)(p[1] << 8 | p[0]);
			p += 2;
			op_index = 0;
			continue;
		case DW_LNS_negate_stmt:
		case DW_LNS_set_basic_block:
		case DW_LNS_set_prologue_end:
		case DW_LNS_set_epilogue_begin:
			continue;
		default:
			/* the unknown: the operands the header declares */
			for (i = 0; i < h->opcode_lengths[op - 1]; i++)
				if (!take(uleb(p, end), &p, &v))
					goto out;
			continue;
		}
		/* advance_pc, const_add_pc: no row */
		if (vliw)
			vliw_advance(&addr, &op_index, ops, min_insn, max_ops);
		else
			addr += min_insn * ops;
		continue;
row:
		if ((line | file >> 1) > INT32_MAX)
			goto out; /* line above INT32_MAX or file above UINT32_MAX */
		if (nr >= cap) {
			t->nr_rows = nr;
			if (!grow_rows(t, nr))
				goto out;
			rows = t->rows;
			cap = t->alloc_rows;
		}
		if (note_row(runs, nr, addr, is_end, last_addr, last_end)) {
			/* the row before, at this address: no lookup finds it now */
			rows[nr - 1].file = file;
			rows[nr - 1].line = line;
			continue;
		}
		rows[nr].addr = addr;
		rows[nr].file = file;
		rows[nr].line = line;
		rows[nr].idx = nr;
		rows[nr].end = is_end;
		nr++;
		last_addr = addr;
		last_end = is_end;
		if (is_end) {
			addr = op_index = 0;
			file = line = 1;
		}
	}
	ok = true;
out:
	t->nr_rows = nr;
	return ok;
}

static bool run(const u8 *p, const u8 *end, const struct header *h, u32 addr_size, bool big,
		struct dwline *t, struct runs *runs)
{
	const bool vliw = h->max_ops > 1;
	struct special sp[256];
	u32 i;

	for (i = h->opcode_base; h->line_range && i < 256; i++) {
		u64 ops = (i - h->opcode_base) / h->line_range;

		sp[i] = (struct special){
			.line = (s64)h->line_base + (i - h->opcode_base) % h->line_range,
			.step = vliw ? ops : h->min_insn * ops,
		};
	}
	if (vliw)
		return decode(p, end, h, sp, addr_size, big, t, runs, true);
	return decode(p, end, h, sp, addr_size, big, t, runs, false);
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

static void order_rows(struct dwline *t, struct runs *runs);

bool dwline_read(const struct dwline_secs *s, u64 off, u32 addr_size, const char *comp_dir,
		 struct dwline *t)
{
	struct dwcur c = { .big = s->big_endian };
	struct header h = { .offset_size = 4 };
	struct runs runs = { 0 };
	size_t guess;
	bool ok;
	u64 len;

	if (!s->line || off >= s->line_size || (addr_size != 4 && addr_size != 8) || t->nr_rows)
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
	ok = run(c.p, c.end, &h, addr_size, s->big_endian, t, &runs);
	if (ok && !t->nr_rows) {
		free(t->rows); /* a program of no rows keeps no room */
		t->rows = NULL;
		t->alloc_rows = 0;
	} else if (ok && t->alloc_rows > t->nr_rows) {
		t->rows = xrealloc(t->rows, t->nr_rows, sizeof(*t->rows));
		t->alloc_rows = t->nr_rows;
	}
	if (ok)
		order_rows(t, &runs);
	free(runs.v);
	return ok;
}

void dwline_add_row(struct dwline *t, u64 addr, u32 file, u32 line, bool end)
{
	if (t->nr_rows >= t->alloc_rows && !grow_rows(t, t->nr_rows))
		return;
	t->rows[t->nr_rows] = (struct dwline_row){
		.addr = addr, .file = file, .line = line, .idx = t->nr_rows, .end = end
	};
	t->nr_rows++;
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

static int run_cmp(const void *a, const void *b, void *arg)
{
	const struct run *x = a, *y = b;

	(void)arg;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->first < y->first ? -1 : 1;
}

/*
 * Sequences come in any order, each in address order: ordering the runs
 * orders the rows by address, unless they overlap (then false).  The
 * whole is in order when each run starts at or after the last row before
 * it.  Each run's first becomes its place among the ordered rows.
 */
static bool sort_runs(struct dwline *t, struct runs *runs)
{
	struct dwline_row *out;
	bool ordered = true;
	size_t i, k = 0;

	sort(runs->v, runs->nr, sizeof(*runs->v), run_cmp, NULL);
	out = xmalloc(t->nr_rows * sizeof(*out));
	for (i = 0; i < runs->nr; i++) {
		struct run *u = &runs->v[i];

		if (k && out[k - 1].addr > u->addr)
			ordered = false;
		memcpy(out + k, t->rows + u->first, u->nr * sizeof(*out));
		u->first = k;
		k += u->nr;
	}
	free(t->rows);
	t->rows = out;
	t->alloc_rows = t->nr_rows;
	return ordered;
}

/*
 * Each address's rows in libdw's order, where runs meet: inside a run
 * rows come in program order and only its last row can end a sequence,
 * so the rows of one address are out of that order only where they take
 * in a run's last row.  Groups of one address are short.
 */
static void sort_ties(struct dwline *t, const struct runs *runs)
{
	struct dwline_row *rows = t->rows;
	size_t i, a, b = 0, k;

	for (i = 0; i < runs->nr; i++) {
		size_t e = runs->v[i].first + runs->v[i].nr - 1;
		bool sorted = true;

		if (e < b)
			continue; /* in the group before */
		for (a = e; a && rows[a - 1].addr == rows[e].addr; a--)
			;
		for (b = e + 1; b < t->nr_rows && rows[b].addr == rows[e].addr; b++)
			;
		for (k = a + 1; k < b && sorted; k++)
			sorted = row_cmp(&rows[k - 1], &rows[k], NULL) <= 0;
		if (!sorted)
			sort(rows + a, b - a, sizeof(*rows), row_cmp, NULL);
	}
}

/*
 * The order is total (program order breaks ties), so ordering runs and
 * then ties gives the one table a sort of all rows gives.  @runs: the
 * runs of the rows in program order, each one's length still to count.
 */
static void order_rows(struct dwline *t, struct runs *runs)
{
	size_t i;

	if (!t->nr_rows)
		return;
	for (i = 0; i < runs->nr; i++)
		runs->v[i].nr =
			(i + 1 < runs->nr ? runs->v[i + 1].first : t->nr_rows) - runs->v[i].first;
	if (runs->fell && !sort_runs(t, runs))
		sort(t->rows, t->nr_rows, sizeof(*t->rows), row_cmp, NULL);
	else if (runs->fell || runs->ends_last)
		sort_ties(t, runs);
	/* the last row ends a sequence, as libdw makes it (compilers forget) */
	t->rows[t->nr_rows - 1].end = true;
}

/* Rows another reader added (dwline_add_row()), in program order: their runs, then the order. */
void dwline_sort(struct dwline *t)
{
	struct runs runs = { 0 };
	size_t i;

	/* every row kept: another reader's table is libdw's, rows no lookup finds included */
	for (i = 0; i < t->nr_rows; i++)
		note_row(&runs, i, t->rows[i].addr, t->rows[i].end, i ? t->rows[i - 1].addr : 0,
			 !i || t->rows[i - 1].end);
	order_rows(t, &runs);
	free(runs.v);
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

bool dwline_file_in_comp_dir(const struct dwline *t, u64 idx)
{
	return idx < t->nr_files && t->files[idx].in_comp_dir;
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
