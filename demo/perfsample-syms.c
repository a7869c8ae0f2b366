// SPDX-License-Identifier: GPL-2.0
/*
 * perfsample-syms.c - names for perfsample's addresses, as small as it can
 * be and still be right for the demo: the target's executable mappings as
 * perf reported them (PERF_RECORD_MMAP), the symbol table of each mapped
 * ELF file, and /proc/kallsyms for the kernel.
 *
 * A user address becomes a name in three steps, the same as in cycread
 * (tool/README.md, "Symbolization"):
 *
 *	file offset   = addr - map start + map pgoff
 *	ELF address   = file offset - PT_LOAD p_offset + PT_LOAD p_vaddr
 *	symbol        = the FUNC symbol whose [value, value + size) holds it
 *
 * No debug files, no demangling, 64-bit ELF only: cycread does the rest.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perfsample.h"

struct ps_sym {
	uint64_t addr;
	uint64_t size; /* 0: up to the next symbol (kallsyms has no sizes) */
	const char *name;
};

struct ps_table {
	struct ps_sym *v;
	size_t n;
	size_t cap;
};

struct ps_load {
	uint64_t off;
	uint64_t filesz;
	uint64_t vaddr;
};

#define PS_MAX_LOADS 16

/* One ELF file, opened once, kept mapped: symbol names point into it. */
struct ps_elf {
	char *path;
	const char *base; /* basename of path */
	char *unnamed; /* "[base]": addresses no symbol covers */
	struct ps_table syms;
	struct ps_load load[PS_MAX_LOADS];
	unsigned int nload;
	struct ps_elf *next;
};

struct ps_map {
	uint64_t start;
	uint64_t len;
	uint64_t pgoff;
	char *path;
};

static struct ps_map *maps;
static size_t nr_maps, cap_maps;
static struct ps_elf *elves;
static struct ps_table ksyms;
static int ksyms_loaded;

static void ps_table_add(struct ps_table *t, uint64_t addr, uint64_t size, const char *name)
{
	t->v = ps_grow(t->v, &t->cap, t->n, sizeof(*t->v));
	t->v[t->n++] = (struct ps_sym){ .addr = addr, .size = size, .name = name };
}

static int ps_sym_cmp(const void *a, const void *b)
{
	const struct ps_sym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The symbol covering @addr: the last one starting at or below it. */
static const struct ps_sym *ps_table_find(const struct ps_table *t, uint64_t addr)
{
	size_t lo = 0, hi = t->n;
	const struct ps_sym *s;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->v[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	s = &t->v[lo - 1];
	if (s->size && addr - s->addr >= s->size)
		return NULL;
	return s;
}

void ps_add_map(uint64_t start, uint64_t len, uint64_t pgoff, const char *path)
{
	char *copy = strdup(path);

	if (!copy) {
		perror("perfsample: strdup");
		exit(1);
	}
	maps = ps_grow(maps, &cap_maps, nr_maps, sizeof(*maps));
	maps[nr_maps++] =
		(struct ps_map){ .start = start, .len = len, .pgoff = pgoff, .path = copy };
}

/* The newest mapping that holds @addr: a later mmap() over it wins. */
static const struct ps_map *ps_find_map(uint64_t addr)
{
	size_t i;

	for (i = nr_maps; i-- > 0;)
		if (addr - maps[i].start < maps[i].len)
			return &maps[i];
	return NULL;
}

/* [off, off + len) lies inside a file of @size bytes. */
static int ps_inside(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

static void ps_elf_loads(struct ps_elf *e, const unsigned char *img, size_t size)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
	unsigned int i;

	if (eh->e_phentsize != sizeof(Elf64_Phdr) ||
	    !ps_inside(eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr), size))
		return;
	for (i = 0; i < eh->e_phnum && e->nload < PS_MAX_LOADS; i++) {
		const Elf64_Phdr *ph = (const Elf64_Phdr *)(img + eh->e_phoff) + i;

		if (ph->p_type == PT_LOAD)
			e->load[e->nload++] = (struct ps_load){ .off = ph->p_offset,
								.filesz = ph->p_filesz,
								.vaddr = ph->p_vaddr };
	}
}

/* Function symbols of one table section (SHT_SYMTAB or SHT_DYNSYM). */
static void ps_elf_symtab(struct ps_elf *e, const unsigned char *img, size_t size,
			  const Elf64_Shdr *sh, const Elf64_Shdr *strsh)
{
	const char *str = (const char *)img + strsh->sh_offset;
	size_t i, n;

	if (sh->sh_entsize != sizeof(Elf64_Sym) || !ps_inside(sh->sh_offset, sh->sh_size, size) ||
	    !ps_inside(strsh->sh_offset, strsh->sh_size, size))
		return;
	n = sh->sh_size / sizeof(Elf64_Sym);
	for (i = 0; i < n; i++) {
		const Elf64_Sym *s = (const Elf64_Sym *)(img + sh->sh_offset) + i;
		unsigned int type = ELF64_ST_TYPE(s->st_info);

		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || s->st_shndx == SHN_UNDEF ||
		    !s->st_value || s->st_name >= strsh->sh_size)
			continue;
		/* the name must end inside the string table */
		if (!memchr(str + s->st_name, '\0', strsh->sh_size - s->st_name))
			continue;
		ps_table_add(&e->syms, s->st_value, s->st_size ? s->st_size : 1, str + s->st_name);
	}
}

/* .symtab when the file has one (not stripped), else .dynsym. */
static void ps_elf_syms(struct ps_elf *e, const unsigned char *img, size_t size)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
	const Elf64_Shdr *sh, *pick = NULL;
	unsigned int i;

	if (eh->e_shentsize != sizeof(Elf64_Shdr) ||
	    !ps_inside(eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr), size))
		return;
	sh = (const Elf64_Shdr *)(img + eh->e_shoff);
	for (i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_type == SHT_SYMTAB || (sh[i].sh_type == SHT_DYNSYM && !pick))
			pick = &sh[i];
	}
	if (pick && pick->sh_link < eh->e_shnum)
		ps_elf_symtab(e, img, size, pick, &sh[pick->sh_link]);
	qsort(e->syms.v, e->syms.n, sizeof(*e->syms.v), ps_sym_cmp);
}

/* Open @path once; a file that cannot be read simply has no symbols. */
static struct ps_elf *ps_elf_get(const char *path)
{
	struct ps_elf *e;
	const unsigned char *img;
	struct stat stbuf;
	int fd;

	for (e = elves; e; e = e->next)
		if (!strcmp(e->path, path))
			return e;
	e = calloc(1, sizeof(*e));
	if (!e || !(e->path = strdup(path))) {
		perror("perfsample: out of memory");
		exit(1);
	}
	e->base = strrchr(e->path, '/') ? strrchr(e->path, '/') + 1 : e->path;
	if (asprintf(&e->unnamed, "[%s]", e->base) < 0) {
		perror("perfsample: out of memory");
		exit(1);
	}
	e->next = elves;
	elves = e;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return e;
	if (fstat(fd, &stbuf) || stbuf.st_size < (off_t)sizeof(Elf64_Ehdr)) {
		close(fd);
		return e;
	}
	img = mmap(NULL, stbuf.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (img == MAP_FAILED)
		return e;
	if (memcmp(img, ELFMAG, SELFMAG) || img[EI_CLASS] != ELFCLASS64) {
		munmap((void *)img, stbuf.st_size);
		return e;
	}
	ps_elf_loads(e, img, stbuf.st_size);
	ps_elf_syms(e, img, stbuf.st_size);
	/* stays mapped: the names point into it */
	return e;
}

/* Text symbols of /proc/kallsyms; all zero when kptr_restrict hides them. */
static void ps_load_kallsyms(void)
{
	char line[512], name[256], type;
	unsigned long long addr;
	FILE *f;

	ksyms_loaded = 1;
	f = fopen("/proc/kallsyms", "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *copy;

		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3 || !addr)
			continue;
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		copy = strdup(name);
		if (!copy) {
			perror("perfsample: strdup");
			exit(1);
		}
		ps_table_add(&ksyms, addr, 0, copy);
	}
	fclose(f);
	qsort(ksyms.v, ksyms.n, sizeof(*ksyms.v), ps_sym_cmp);
}

static void ps_resolve_kernel(uint64_t addr, struct ps_name *out)
{
	const struct ps_sym *s;

	if (!ksyms_loaded)
		ps_load_kallsyms();
	out->dso = "[kernel.kallsyms]";
	out->sym = "[kernel]";
	s = ps_table_find(&ksyms, addr);
	if (s) {
		out->sym = s->name;
		out->off = addr - s->addr;
		out->named = 1;
	}
}

void ps_resolve(uint64_t addr, int kernel, int ret, struct ps_name *out)
{
	uint64_t look = ret ? addr - 1 : addr, off, vaddr;
	const struct ps_map *m;
	const struct ps_sym *s;
	struct ps_elf *e;
	unsigned int i;

	*out = (struct ps_name){ .dso = "[unknown]", .sym = "[unknown]", .off = addr };
	if (kernel) {
		ps_resolve_kernel(look, out);
		return;
	}
	m = ps_find_map(look);
	if (!m)
		return;
	off = look - m->start + m->pgoff;
	out->off = off;
	if (m->path[0] != '/') {
		/* [vdso], //anon: nothing to read symbols from */
		out->dso = out->sym = m->path[0] == '[' ? m->path : "[anon]";
		return;
	}
	e = ps_elf_get(m->path);
	out->dso = e->base;
	out->sym = e->unnamed;
	for (i = 0; i < e->nload; i++) {
		if (off - e->load[i].off >= e->load[i].filesz)
			continue;
		vaddr = off - e->load[i].off + e->load[i].vaddr;
		s = ps_table_find(&e->syms, vaddr);
		if (s) {
			out->sym = s->name;
			out->off = vaddr - s->addr;
			out->named = 1;
		}
		return;
	}
}
