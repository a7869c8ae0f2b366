// SPDX-License-Identifier: GPL-2.0
/*
 * PLT stubs decoded to the GOT slot they jump through, and named by that
 * slot's relocation (see plt.h).
 */
#include <elf.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "plt.h"

/* A PLT this large is not one. */
#define MAX_PLT_BYTES (64U << 20)

static u32 le32(const u8 *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (u32)p[3] << 24;
}

/* x86_64: the first "jmp *disp32(%rip)" of the stub (after endbr64 or bnd, if any). */
static bool x86_64_slot(const u8 *p, u32 len, u64 addr, u64 *got)
{
	u32 k;

	for (k = 0; k + 6 <= len; k++) {
		if (p[k] == 0xff && p[k + 1] == 0x25) {
			*got = addr + k + 6 + (s64)(int32_t)le32(p + k + 2);
			return true;
		}
	}
	return false;
}

/* arm64: "adrp x16, page" then "ldr x17, [x16, #off]" (a bti c may come first). */
static bool arm64_slot(const u8 *p, u32 len, u64 addr, u64 *got)
{
	u32 k, adrp, ldr;
	u64 page, imm;

	for (k = 0; k + 8 <= len; k += 4) {
		adrp = le32(p + k);
		ldr = le32(p + k + 4);
		if ((adrp & 0x9f00001f) != 0x90000010 || (ldr & 0xffc003e0) != 0xf9400200)
			continue;
		imm = ((adrp >> 5) & 0x7ffff) << 2 | ((adrp >> 29) & 3);
		if (imm & (1ULL << 20)) /* 21-bit signed page count */
			imm |= ~0ULL << 21;
		page = ((addr + k) & ~0xfffULL) + (imm << 12);
		*got = page + ((ldr >> 10) & 0xfff) * 8;
		return true;
	}
	return false;
}

/* GOT slot address -> function name, from every relocation against .dynsym. */
static void read_slots(Elf *elf, struct u64map *slots)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh, symsh;
		Elf_Data *data, *syms;
		Elf_Scn *symscn;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_RELA && sh.sh_type != SHT_REL) ||
		    !sh.sh_entsize)
			continue;
		symscn = elf_getscn(elf, sh.sh_link);
		if (!symscn || !gelf_getshdr(symscn, &symsh) || symsh.sh_type != SHT_DYNSYM)
			continue;
		data = elf_getdata(scn, NULL);
		syms = elf_getdata(symscn, NULL);
		if (!data || !syms)
			continue;
		n = data->d_size / sh.sh_entsize;
		for (i = 0; i < n; i++) {
			GElf_Rela rela;
			GElf_Rel rel;
			GElf_Sym sym;
			const char *name;
			u64 info, off;

			if (sh.sh_type == SHT_RELA) {
				if (!gelf_getrela(data, i, &rela))
					break;
				info = rela.r_info;
				off = rela.r_offset;
			} else {
				if (!gelf_getrel(data, i, &rel))
					break;
				info = rel.r_info;
				off = rel.r_offset;
			}
			if (!GELF_R_SYM(info) || !gelf_getsym(syms, GELF_R_SYM(info), &sym))
				continue;
			name = elf_strptr(elf, symsh.sh_link, sym.st_name);
			if (name && *name)
				u64map_put(slots, off, (uintptr_t)name);
		}
	}
}

static bool is_plt(const char *name)
{
	return !strcmp(name, ".plt") || !strcmp(name, ".plt.sec") || !strcmp(name, ".plt.got");
}

u32 plt_entries(void *elfp, u16 machine, struct plt_entry **out)
{
	bool (*slot)(const u8 *, u32, u64, u64 *);
	struct u64map slots = { 0 };
	Elf *elf = elfp;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	u32 nr = 0, alloc = 0;

	*out = NULL;
	if (machine == EM_X86_64)
		slot = x86_64_slot;
	else if (machine == EM_AARCH64)
		slot = arm64_slot;
	else
		return 0;
	if (elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	read_slots(elf, &slots);
	while (slots.nr && (scn = elf_nextscn(elf, scn))) {
		const char *name;
		Elf_Data *data;
		GElf_Shdr sh;
		u64 off, got, fn, size;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR))
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || !is_plt(name))
			continue;
		data = elf_getdata(scn, NULL);
		if (!data || !data->d_buf || data->d_size > MAX_PLT_BYTES)
			continue;
		/* each stub is one entry: .plt.got's are 8 bytes (16 with IBT), the rest 16 */
		size = sh.sh_entsize >= 8 && sh.sh_entsize <= 64 ? sh.sh_entsize : 16;
		for (off = 0; off + size <= data->d_size; off += size) {
			if (!slot((const u8 *)data->d_buf + off, size, sh.sh_addr + off, &got) ||
			    !u64map_get(&slots, got, &fn))
				continue; /* the PLT header, or a stub without a named slot */
			VEC_GROW(*out, nr, alloc);
			(*out)[nr++] = (struct plt_entry){ .addr = sh.sh_addr + off,
							   .size = size,
							   .name = (const char *)(uintptr_t)fn };
		}
	}
	u64map_free(&slots);
	return nr;
}
