// SPDX-License-Identifier: GPL-2.0
/*
 * The FDE ranges of .eh_frame (framing read by libdw's dwarf_next_cfi(),
 * the encoded addresses decoded here) and the synthetic symbols made from
 * them (see ehframe.h).
 */
#include <elfutils/libdw.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "ehframe.h"

/* No real binary has more FDEs; beyond it the section is hostile. */
#define MAX_FDES (1U << 22)

/* DW_EH_PE_*: the format in the low nibble, how to apply it in the next three bits. */
#define PE_OMIT 0xff
#define PE_FORMAT 0x0f
#define PE_APPLY 0x70
#define PE_INDIRECT 0x80
#define PE_PCREL 0x10

struct dso_fdes {
	struct ivhead *v; /* FDE ranges, sorted */
	u32 nr;
	u32 alloc;
	struct ivindex index;
	bool built;
	struct dso_sym **syms; /* synthetic symbols made, each allocated once */
	u32 nr_syms;
	u32 alloc_syms;
	struct u64map by_start; /* FDE start -> index in syms */
};

struct cfi_reader {
	const u8 *base; /* the section's bytes */
	size_t size;
	u64 addr; /* the section's address */
	u8 ptr_size;
	bool big_endian;
};

static bool get_uint(const struct cfi_reader *c, const u8 **p, const u8 *end, u32 n, u64 *v)
{
	u32 i;

	if ((size_t)(end - *p) < n)
		return false;
	*v = 0;
	for (i = 0; i < n; i++)
		*v |= (u64)(*p)[c->big_endian ? n - 1 - i : i] << (8 * i);
	*p += n;
	return true;
}

static bool get_leb(const u8 **p, const u8 *end, bool is_signed, u64 *v)
{
	u32 shift = 0;
	u8 b;

	*v = 0;
	do {
		if (*p >= end || shift > 63)
			return false;
		b = *(*p)++;
		*v |= (u64)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (is_signed && shift < 64 && (b & 0x40))
		*v |= ~0ULL << shift;
	return true;
}

static u64 sign_extend(u64 v, u32 bytes)
{
	u32 bits = 8 * bytes;

	return bits < 64 && (v >> (bits - 1) & 1) ? v | ~0ULL << bits : v;
}

/* One DW_EH_PE-encoded value at *p; false for an encoding .eh_frame FDEs do not use. */
static bool get_encoded(const struct cfi_reader *c, const u8 **p, const u8 *end, u8 enc, u64 *v)
{
	const u8 *at = *p;
	bool ok;

	if (enc & PE_INDIRECT)
		return false;
	switch (enc & PE_FORMAT) {
	case 0x00: /* absptr */
		ok = get_uint(c, p, end, c->ptr_size, v);
		break;
	case 0x01:
		ok = get_leb(p, end, false, v);
		break;
	case 0x02:
	case 0x03:
	case 0x04:
		ok = get_uint(c, p, end, 1U << ((enc & PE_FORMAT) - 1), v);
		break;
	case 0x09:
		ok = get_leb(p, end, true, v);
		break;
	case 0x0a:
	case 0x0b:
	case 0x0c:
		ok = get_uint(c, p, end, 1U << ((enc & PE_FORMAT) - 9), v);
		if (ok)
			*v = sign_extend(*v, 1U << ((enc & PE_FORMAT) - 9));
		break;
	default:
		return false;
	}
	if (!ok)
		return false;
	if ((enc & PE_APPLY) == PE_PCREL)
		*v += c->addr + (u64)(at - c->base);
	else if (enc & PE_APPLY)
		return false; /* datarel, textrel, funcrel: not in FDEs of our targets */
	return true;
}

/* The FDE pointer encoding a CIE's augmentation gives ('R'), absptr without one. */
static bool cie_encoding(const struct cfi_reader *c, const Dwarf_CIE *cie, u8 *enc)
{
	const char *aug = cie->augmentation;
	const u8 *p = cie->augmentation_data, *end = p + cie->augmentation_data_size;
	u64 skip;

	*enc = 0;
	if (!aug || !*aug)
		return true;
	if (*aug != 'z')
		return false; /* augmentation data of unknown size */
	for (aug++; *aug; aug++) {
		switch (*aug) {
		case 'R':
			if (p >= end)
				return false;
			*enc = *p;
			return true;
		case 'L':
			p++;
			break;
		case 'P': {
			u8 penc;

			if (p >= end)
				return false;
			penc = *p++;
			/* the personality pointer: how it applies does not change its size */
			if (!get_encoded(c, &p, end, penc & PE_FORMAT, &skip))
				return false;
			break;
		}
		case 'S':
		case 'B':
			break;
		default:
			return true; /* the rest is not ours to know: no 'R' seen */
		}
	}
	return true;
}

static Elf_Data *eh_frame(Elf *elf, u64 *addr)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && !strcmp(name, ".eh_frame")) {
			*addr = sh.sh_addr;
			return elf_rawdata(scn, NULL);
		}
	}
	return NULL;
}

static void read_fdes(struct dso *d, struct dso_fdes *t)
{
	struct cfi_reader c = { 0 };
	struct u64map cies = { 0 }; /* CIE offset -> encoding + 1 */
	Dwarf_Off off = 0, next;
	Dwarf_CFI_Entry e, cie;
	const u8 *ident;
	Elf_Data *data;
	u64 enc, start, range;

	data = eh_frame(d->elf, &c.addr);
	ident = (const u8 *)elf_getident(d->elf, NULL);
	if (!data || !data->d_buf || !ident)
		return;
	c.base = data->d_buf;
	c.size = data->d_size;
	c.ptr_size = ident[EI_CLASS] == ELFCLASS32 ? 4 : 8;
	c.big_endian = ident[EI_DATA] == ELFDATA2MSB;
	while (t->nr < MAX_FDES && dwarf_next_cfi(ident, data, true, off, &next, &e) == 0 &&
	       next > off) {
		off = next;
		if (dwarf_cfi_cie_p(&e))
			continue;
		if (!u64map_get(&cies, e.fde.CIE_pointer, &enc)) {
			Dwarf_Off dummy;
			u8 pe = PE_OMIT;

			if (dwarf_next_cfi(ident, data, true, e.fde.CIE_pointer, &dummy, &cie) ||
			    !dwarf_cfi_cie_p(&cie) || !cie_encoding(&c, &cie.cie, &pe))
				pe = PE_OMIT;
			enc = pe + 1ULL;
			u64map_put(&cies, e.fde.CIE_pointer, enc);
		}
		if (enc == PE_OMIT + 1ULL)
			continue;
		{
			const u8 *p = e.fde.start, *end = e.fde.end;

			if (!get_encoded(&c, &p, end, enc - 1, &start) ||
			    !get_encoded(&c, &p, end, (enc - 1) & PE_FORMAT, &range) || !start ||
			    !range || start + range < start)
				continue;
		}
		VEC_GROW(t->v, t->nr, t->alloc);
		t->v[t->nr++] = (struct ivhead){ start, start + range };
	}
	u64map_free(&cies);
}

static int range_cmp(const void *a, const void *b, void *arg)
{
	const struct ivhead *x = a, *y = b;

	(void)arg;
	return x->end < y->end ? 1 : x->end > y->end ? -1 : 0;
}

static struct dso_fdes *fdes(struct dso *d)
{
	struct dso_fdes *t = d->fdes;
	u32 i;

	if (!t)
		t = d->fdes = xcalloc(1, sizeof(*t));
	if (t->built)
		return t;
	t->built = true;
	if (d->elf) {
		read_fdes(d, t);
	} else {
		/* a capture's: the stored synthetic symbols are the table */
		for (i = 0; i < t->nr_syms; i++) {
			VEC_GROW(t->v, t->nr, t->alloc);
			t->v[t->nr++] = (struct ivhead){ t->syms[i]->start, t->syms[i]->end };
		}
	}
	t->nr = iv_sort_unique(t->v, t->nr, sizeof(*t->v), range_cmp, NULL);
	iv_build(&t->index, t->v, t->nr, sizeof(*t->v));
	return t;
}

static struct dso_sym *new_fde_sym(struct dso_fdes *t, u64 start, u64 end, u32 name, s32 fs_off)
{
	struct dso_sym *s = xcalloc(1, sizeof(*s));

	s->start = start;
	s->end = end;
	s->name = name;
	s->bind = STB_LOCAL;
	s->type = STT_FUNC;
	s->flags = DSYM_SIZED | DSYM_FDE;
	s->fs_off = fs_off;
	VEC_GROW(t->syms, t->nr_syms, t->alloc_syms);
	u64map_put(&t->by_start, start, t->nr_syms);
	t->syms[t->nr_syms++] = s;
	return s;
}

struct dso_sym *dso_fde_sym(struct dso *d, u64 vaddr, const char *base)
{
	struct dso_fdes *t = fdes(d);
	const struct ivhead *r;
	char *name;
	u32 i, off;
	u64 idx;

	i = iv_find(&t->index, t->v, sizeof(*t->v), vaddr);
	if (i == IV_NONE)
		return NULL;
	r = &t->v[i];
	if (u64map_get(&t->by_start, r->start, &idx))
		return t->syms[idx];
	name = xasprintf("%s+0x%llx", base, r->start);
	off = strpool_add(&d->names, name);
	free(name);
	return new_fde_sym(t, r->start, r->end, off, FS_OFF_UNKNOWN);
}

void dso_add_fde_sym(struct dso *d, u64 start, u64 end, const char *name, s32 fs_off)
{
	struct dso_fdes *t = d->fdes;

	if (!t)
		t = d->fdes = xcalloc(1, sizeof(*t));
	if (!u64map_get(&t->by_start, start, NULL) && end > start)
		new_fde_sym(t, start, end, strpool_add(&d->names, name), fs_off);
}

u32 dso_nr_fde_syms(const struct dso *d)
{
	return d->fdes ? d->fdes->nr_syms : 0;
}

struct dso_sym *dso_fde_sym_at(const struct dso *d, u32 i)
{
	return d->fdes->syms[i];
}

void dso_fde_free(struct dso *d)
{
	struct dso_fdes *t = d->fdes;
	u32 i;

	if (!t)
		return;
	for (i = 0; i < t->nr_syms; i++)
		free(t->syms[i]);
	free(t->syms);
	free(t->v);
	iv_free(&t->index);
	u64map_free(&t->by_start);
	free(t);
	d->fdes = NULL;
}
