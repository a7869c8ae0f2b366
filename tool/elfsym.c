// SPDX-License-Identifier: GPL-2.0
/*
 * Load an ELF file's segments and symbols with libelf, find the
 * separate debug file of a stripped binary, and map addresses to symbols.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "debuginfo.h"
#include "ehframe.h"
#include "elfsym.h"
#include "plt.h"
#include "srcline.h"

/* Bounds that no real binary reaches; beyond them the file is hostile. */
#define MAX_SECTIONS (1U << 20)
#define MAX_SEGMENTS 4096U
#define MAX_SYMBOLS (1U << 24)

static bool libelf_ready(void)
{
	static int state; /* 0 unknown, 1 ok, -1 failed */

	if (!state)
		state = elf_version(EV_CURRENT) == EV_NONE ? -1 : 1;
	return state > 0;
}

static struct dso *dso_alloc(const char *path)
{
	struct dso *d = xcalloc(1, sizeof(*d));
	const char *slash;

	d->fd = -1;
	d->path = xstrdup(path);
	slash = strrchr(d->path, '/');
	d->name = slash && slash[1] ? slash + 1 : d->path;
	return d;
}

void dso_free(struct dso *d)
{
	if (!d)
		return;
	dso_src_free(d);
	dso_fde_free(d);
	if (d->debug_elf)
		elf_end(d->debug_elf);
	free(d->dwarf_path);
	if (d->elf)
		elf_end(d->elf);
	if (d->fd >= 0)
		close(d->fd);
	free(d->mem);
	free(d->path);
	free(d->segs);
	free(d->debuglink);
	free(d->symsrc_path);
	free(d->syms);
	iv_free(&d->sym_index);
	strpool_free(&d->names);
	free(d);
}

void build_id_hex(const u8 *id, u32 len, char *buf)
{
	static const char hex[] = "0123456789abcdef";
	u32 i;

	for (i = 0; i < len && i < DSO_BUILD_ID_MAX; i++) {
		buf[2 * i] = hex[id[i] >> 4];
		buf[2 * i + 1] = hex[id[i] & 15];
	}
	buf[2 * i] = '\0';
}

static u32 note_build_id(Elf_Data *data, u8 *out)
{
	size_t off = 0, next, name_off, desc_off;
	GElf_Nhdr nh;

	while (off < data->d_size &&
	       (next = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    !memcmp((char *)data->d_buf + name_off, "GNU", 4) && nh.n_descsz > 0 &&
		    nh.n_descsz <= DSO_BUILD_ID_MAX) {
			memcpy(out, (char *)data->d_buf + desc_off, nh.n_descsz);
			return nh.n_descsz;
		}
		off = next;
	}
	return 0;
}

u32 elf_build_id(void *elfp, u8 *out)
{
	Elf *elf = elfp;
	Elf_Scn *scn = NULL;
	size_t i, nph;
	u32 len;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		len = data && data->d_buf ? note_build_id(data, out) : 0;
		if (len)
			return len;
	}
	/* no section headers (or no note section): try the program headers */
	if (elf_getphdrnum(elf, &nph) || nph > MAX_SEGMENTS)
		return 0;
	for (i = 0; i < nph; i++) {
		GElf_Phdr ph;
		Elf_Data *data;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_NOTE)
			continue;
		data = elf_getdata_rawchunk(elf, ph.p_offset, ph.p_filesz, ELF_T_NHDR);
		len = data && data->d_buf ? note_build_id(data, out) : 0;
		if (len)
			return len;
	}
	return 0;
}

static const char *section_name(Elf *elf, size_t shstrndx, const GElf_Shdr *sh)
{
	const char *name = elf_strptr(elf, shstrndx, sh->sh_name);

	return name ? name : "";
}

static void read_debuglink(struct dso *d, Elf *elf)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		size_t len;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    strcmp(section_name(elf, shstrndx, &sh), ".gnu_debuglink"))
			continue;
		data = elf_getdata(scn, NULL);
		if (!data || !data->d_buf || data->d_size < 8)
			return;
		/* file name, NUL, padding to 4, then the CRC32 of the debug file */
		len = strnlen(data->d_buf, data->d_size);
		if (!len || ((len + 4) & ~(size_t)3) + 4 > data->d_size)
			return;
		d->debuglink = xstrndup(data->d_buf, len);
		memcpy(&d->debuglink_crc, (char *)data->d_buf + ((len + 4) & ~(size_t)3), 4);
		if (elf_getident(elf, NULL)[EI_DATA] != ELFDATA2LSB)
			d->debuglink_crc = __builtin_bswap32(d->debuglink_crc);
		return;
	}
}

static bool has_section_type(Elf *elf, u32 type)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == type)
			return true;
	return false;
}

/* Header checks shared by runtime and debug files. */
static bool elf_header_sane(Elf *elf, size_t file_size, GElf_Ehdr *eh, const char **why)
{
	size_t shnum, count, entsize;

	if (elf_kind(elf) != ELF_K_ELF) {
		*why = "not an ELF file";
		return false;
	}
	if (!gelf_getehdr(elf, eh)) {
		*why = "bad ELF header";
		return false;
	}
	if (elf_getshdrnum(elf, &shnum)) {
		*why = "bad section header table";
		return false;
	}
	/*
	 * libelf quietly treats a table that does not fit as empty; the
	 * header's own count (or the extended count) tells us it was hostile.
	 */
	count = eh->e_shnum ? eh->e_shnum : shnum;
	entsize = eh->e_shentsize ? eh->e_shentsize : 1;
	if (count > MAX_SECTIONS) {
		*why = "absurd section count";
		return false;
	}
	if (count && (eh->e_shoff > file_size || (file_size - eh->e_shoff) / entsize < count)) {
		*why = "section header table runs past the end of the file";
		return false;
	}
	return true;
}

bool elf_sane(void *elf, size_t file_size, const char **why)
{
	GElf_Ehdr eh;

	return elf_header_sane(elf, file_size, &eh, why);
}

bool elf_has_section(void *elfp, const char *name)
{
	Elf *elf = elfp;
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type != SHT_NOBITS &&
		    !strcmp(section_name(elf, shstrndx, &sh), name))
			return true;
	}
	return false;
}

static struct dso *dso_setup(struct dso *d, Elf *elf, const char **why)
{
	GElf_Ehdr eh;
	size_t i, nph;

	d->elf = elf;
	d->image = (const u8 *)elf_rawfile(elf, &d->image_size);
	if (!d->image) {
		*why = "cannot read the file";
		goto fail;
	}
	if (!elf_header_sane(elf, d->image_size, &eh, why))
		goto fail;
	d->e_type = eh.e_type;
	d->e_machine = eh.e_machine;
	if (elf_getphdrnum(elf, &nph) || nph > MAX_SEGMENTS) {
		*why = "bad program header table";
		goto fail;
	}
	for (i = 0; i < nph; i++) {
		GElf_Phdr ph;
		struct dso_seg seg;

		if (!gelf_getphdr(elf, i, &ph)) {
			*why = "bad program header";
			goto fail;
		}
		if (ph.p_type != PT_LOAD)
			continue;
		seg.vaddr = ph.p_vaddr;
		seg.memsz = ph.p_memsz;
		seg.offset = ph.p_offset;
		seg.filesz = ph.p_filesz;
		seg.flags = ph.p_flags;
		dso_add_seg(d, &seg);
	}
	d->build_id_len = elf_build_id(elf, d->build_id);
	read_debuglink(d, elf);
	d->has_symtab = has_section_type(elf, SHT_SYMTAB);
	return d;
fail:
	dso_free(d);
	return NULL;
}

struct dso *dso_open_fd(int fd, const char *path, const char **why)
{
	struct dso *d;
	struct stat st;
	Elf *elf;

	if (!libelf_ready()) {
		*why = "libelf version mismatch";
		close(fd);
		return NULL;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		*why = "not a regular file";
		close(fd);
		return NULL;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf) {
		*why = elf_errmsg(-1);
		close(fd);
		return NULL;
	}
	d = dso_alloc(path);
	d->fd = fd;
	d->dev = st.st_dev;
	d->ino = st.st_ino;
	d->size = st.st_size;
	d->mtime_ns = (u64)st.st_mtim.tv_sec * 1000000000ULL + st.st_mtim.tv_nsec;
	d = dso_setup(d, elf, why);
	/*
	 * libelf mapped the whole file: the mapping keeps a deleted or
	 * replaced binary alive, so the descriptor can go (system-wide
	 * sessions open many files).
	 */
	if (d && !elf_cntl(d->elf, ELF_C_FDDONE)) {
		close(d->fd);
		d->fd = -1;
	}
	return d;
}

struct dso *dso_open_path(const char *path, const char **why)
{
	int fd = open_regular(path);

	if (fd < 0) {
		*why = err_str(-fd);
		return NULL;
	}
	return dso_open_fd(fd, path, why);
}

struct dso *dso_open_mem(const void *data, size_t size, const char *name, const char **why)
{
	struct dso *d;
	Elf *elf;

	if (!libelf_ready()) {
		*why = "libelf version mismatch";
		return NULL;
	}
	d = dso_alloc(name);
	d->mem = xmalloc(size);
	memcpy(d->mem, data, size);
	d->size = size;
	elf = elf_memory(d->mem, size);
	if (!elf) {
		*why = elf_errmsg(-1);
		dso_free(d);
		return NULL;
	}
	return dso_setup(d, elf, why);
}

struct dso *dso_new_embedded(const char *path)
{
	struct dso *d = dso_alloc(path);

	d->syms_loaded = true;
	d->symsrc = SYMSRC_EMBEDDED;
	return d;
}

void dso_add_seg(struct dso *d, const struct dso_seg *seg)
{
	d->segs = xrealloc(d->segs, d->nr_segs + 1, sizeof(*d->segs));
	d->segs[d->nr_segs++] = *seg;
}

static struct dso_sym *new_sym(struct dso *d)
{
	VEC_GROW(d->syms, d->nr_syms, d->syms_alloc);
	return memset(&d->syms[d->nr_syms++], 0, sizeof(struct dso_sym));
}

void dso_add_sym(struct dso *d, u64 start, u64 end, const char *name, s32 fs_off)
{
	struct dso_sym *s = new_sym(d);

	s->start = start;
	s->end = end > start ? end : start + 1;
	s->name = strpool_add(&d->names, name);
	s->bind = STB_GLOBAL;
	s->type = STT_FUNC;
	s->flags = DSYM_SIZED;
	s->fs_off = fs_off;
}

/* Per-section facts a symbol needs: is it code, where does it end. */
struct sec_info {
	u64 end;
	bool exec;
};

static struct sec_info *section_table(Elf *elf, size_t *nr)
{
	struct sec_info *t;
	Elf_Scn *scn = NULL;
	size_t shnum;

	if (elf_getshdrnum(elf, &shnum) || shnum > MAX_SECTIONS)
		return NULL;
	t = xcalloc(shnum ? shnum : 1, sizeof(*t));
	while ((scn = elf_nextscn(elf, scn))) {
		size_t idx = elf_ndxscn(scn);
		GElf_Shdr sh;

		if (idx >= shnum || !gelf_getshdr(scn, &sh))
			continue;
		t[idx].end = sh.sh_addr + sh.sh_size;
		t[idx].exec = sh.sh_flags & SHF_EXECINSTR;
	}
	*nr = shnum;
	return t;
}

/* A symbol that can name code, by all but its name (which costs a lookup). */
static bool want_symbol(const GElf_Sym *sym, bool dynsym, const struct sec_info *secs,
			size_t nr_secs)
{
	u8 type = GELF_ST_TYPE(sym->st_info);
	u8 bind = GELF_ST_BIND(sym->st_info);

	if (!sym->st_value)
		return false;
	if (sym->st_shndx == SHN_UNDEF || sym->st_shndx >= SHN_LORESERVE ||
	    sym->st_shndx >= nr_secs)
		return false;
	if (type == STT_FUNC || type == STT_GNU_IFUNC)
		return true;
	/*
	 * Code labels from assembly sources, never in .dynsym: global ones,
	 * and local ones given a size (arm64's el1h_64_sync and the other
	 * vectors' entries).  A local label without one is most often a
	 * branch target inside a function, which it must not split.
	 */
	if (type != STT_NOTYPE || dynsym || !secs[sym->st_shndx].exec)
		return false;
	return bind != STB_LOCAL || sym->st_size;
}

static bool want_name(const char *name)
{
	/* arm64/arm mapping symbols ($x, $d) and assembler locals are not functions */
	return name && *name && name[0] != '$' && strncmp(name, ".L", 2);
}

/*
 * A symbol table's strings: read in place when the section ends in a NUL,
 * as linkers write it (every name is then terminated inside it), else
 * through elf_strptr(), which checks each.  A vmlinux has 190 000 names.
 */
struct sym_strs {
	Elf *elf;
	size_t link;
	const char *buf;
	size_t size;
};

static void sym_strs_init(struct sym_strs *st, Elf *elf, size_t link)
{
	Elf_Scn *scn = elf_getscn(elf, link);
	Elf_Data *data = NULL;
	GElf_Shdr sh;

	*st = (struct sym_strs){ .elf = elf, .link = link };
	if (scn && gelf_getshdr(scn, &sh) && sh.sh_type == SHT_STRTAB &&
	    !(sh.sh_flags & SHF_COMPRESSED))
		data = elf_getdata(scn, NULL);
	if (data && data->d_buf && data->d_size && !elf_getdata(scn, data) &&
	    !((const char *)data->d_buf)[data->d_size - 1]) {
		st->buf = data->d_buf;
		st->size = data->d_size;
	}
}

static const char *sym_str(const struct sym_strs *st, size_t off)
{
	if (!st->buf)
		return elf_strptr(st->elf, st->link, off);
	return off < st->size ? st->buf + off : NULL;
}

/*
 * Symbol @i of @data: a 64-bit table in the host's order is read in place
 * (it may be unaligned: memcpy); GElf_Sym is Elf64_Sym.
 */
static bool get_sym(Elf_Data *data, bool in_place, size_t i, GElf_Sym *sym)
{
	if (!in_place)
		return gelf_getsym(data, i, sym);
	memcpy(sym, (const char *)data->d_buf + i * sizeof(Elf64_Sym), sizeof(Elf64_Sym));
	return true;
}

static void load_table(struct dso *d, Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, bool dynsym,
		       const struct sec_info *secs, size_t nr_secs)
{
	size_t entsize = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
	Elf_Data *data = elf_getdata(scn, NULL);
	struct sym_strs strs;
	bool in_place;
	size_t i, n;

	if (!data || !data->d_buf || !entsize || sh->sh_entsize != entsize)
		return;
	/* elf_getdata() converted the table to the host's order */
	in_place = gelf_getclass(elf) == ELFCLASS64 && data->d_type == ELF_T_SYM;
	sym_strs_init(&strs, elf, sh->sh_link);
	n = MIN(data->d_size / entsize, (size_t)MAX_SYMBOLS);
	for (i = 0; i < n; i++) {
		struct dso_sym *s;
		const char *name;
		GElf_Sym sym;
		u64 start;

		if (!get_sym(data, in_place, i, &sym))
			break;
		if (!want_symbol(&sym, dynsym, secs, nr_secs))
			continue;
		name = sym_str(&strs, sym.st_name);
		if (!want_name(name))
			continue;
		start = sym.st_value;
		if (d->e_machine == EM_ARM)
			start &= ~1ULL; /* Thumb bit */
		s = new_sym(d);
		s->start = start;
		if (sym.st_size) {
			s->end = start + sym.st_size < start ? UINT64_MAX : start + sym.st_size;
			s->flags |= DSYM_SIZED;
		} else {
			/* provisional bound, replaced by the next symbol in finish_syms() */
			s->end = secs[sym.st_shndx].end;
		}
		if (dynsym)
			s->flags |= DSYM_DYNSYM;
		s->bind = GELF_ST_BIND(sym.st_info);
		s->type = GELF_ST_TYPE(sym.st_info);
		s->fs_off = FS_OFF_UNKNOWN;
		if (!dynsym && s->bind == STB_LOCAL && s->type == STT_FUNC)
			d->local_funcs = true;
		s->name = strpool_add(&d->names, name);
	}
}

/* Read .symtab and/or .dynsym of @elf; returns whether a .symtab was seen. */
static bool load_tables(struct dso *d, Elf *elf, bool want_symtab, bool want_dynsym)
{
	struct sec_info *secs;
	Elf_Scn *scn = NULL;
	bool seen = false;
	size_t nr_secs;

	secs = section_table(elf, &nr_secs);
	if (!secs)
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB && want_symtab) {
			load_table(d, elf, scn, &sh, false, secs, nr_secs);
			seen = true;
		} else if (sh.sh_type == SHT_DYNSYM && want_dynsym) {
			load_table(d, elf, scn, &sh, true, secs, nr_secs);
		}
	}
	free(secs);
	return seen;
}

static int leading_underscores(const char *s)
{
	int n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

static int bind_rank(u8 bind)
{
	return bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2;
}

/*
 * A local label of no type (taken only with a size: want_symbol()): a
 * part of code some other symbol may name as a whole.
 */
static bool local_label(const struct dso_sym *s)
{
	return s->type == STT_NOTYPE && s->bind == STB_LOCAL;
}

/*
 * At one start: the order that makes alias choice independent of table
 * order.  A local label comes last: a global one at its start names the
 * code as kallsyms does (x86's swapgs_restore_regs_and_return_to_usermode
 * over common_interrupt_return), and may reach past the local one's size.
 */
static int sym_cmp(const void *a, const void *b, void *arg)
{
	const struct dso_sym *x = a, *y = b;
	const struct dso *dso = arg;
	const char *nx, *ny;
	int d;

	if (local_label(x) != local_label(y))
		return local_label(x) ? 1 : -1;
	if ((x->flags & DSYM_SIZED) != (y->flags & DSYM_SIZED))
		return x->flags & DSYM_SIZED ? -1 : 1;
	if ((x->flags & DSYM_DYNSYM) != (y->flags & DSYM_DYNSYM))
		return x->flags & DSYM_DYNSYM ? 1 : -1;
	d = bind_rank(x->bind) - bind_rank(y->bind);
	if (d)
		return d;
	if ((x->type == STT_NOTYPE) != (y->type == STT_NOTYPE))
		return x->type == STT_NOTYPE ? 1 : -1;
	nx = dso_sym_name(dso, x);
	ny = dso_sym_name(dso, y);
	d = leading_underscores(nx) - leading_underscores(ny);
	if (d)
		return d;
	d = strcmp(nx, ny);
	if (d)
		return d;
	return x->end < y->end ? 1 : x->end > y->end ? -1 : 0;
}

/*
 * A symbol without a size reaches up to the next one, local labels passed
 * over: one inside it names its own bytes (the innermost symbol wins), the
 * code after it is still the outer one's.  Each label is passed over by one
 * symbol at most.
 */
static void finish_syms(struct dso *d)
{
	u32 i, j, n;

	/* one symbol per address: the first after sorting is the chosen alias */
	n = iv_sort_unique(d->syms, d->nr_syms, sizeof(*d->syms), sym_cmp, d);
	d->nr_syms = n;
	for (i = 0; i < n; i++) {
		struct dso_sym *s = &d->syms[i];

		if (s->flags & DSYM_SIZED)
			continue;
		if (s->flags & DSYM_DYNSYM) {
			s->end = s->start + 1;
			continue;
		}
		for (j = i + 1; j < n && local_label(&d->syms[j]); j++)
			;
		if (j < n && d->syms[j].start < s->end)
			s->end = d->syms[j].start;
		if (s->end <= s->start)
			s->end = s->start + 1;
	}
	iv_build(&d->sym_index, d->syms, n, sizeof(*d->syms));
}

void dso_sort_syms(struct dso *d)
{
	finish_syms(d);
}

/* One symbol per PLT stub, "name@plt": no table lists them (plt.h). */
static void load_plt(struct dso *d)
{
	struct plt_entry *plt;
	u32 i, n = plt_entries(d->elf, d->e_machine, &plt);

	for (i = 0; i < n; i++) {
		struct dso_sym *s = new_sym(d);
		char *name = xasprintf("%s@plt", plt[i].name);

		s->start = plt[i].addr;
		s->end = plt[i].addr + plt[i].size;
		s->name = strpool_add(&d->names, name);
		s->bind = STB_GLOBAL;
		s->type = STT_FUNC;
		s->flags = DSYM_SIZED | DSYM_PLT;
		s->fs_off = FS_OFF_UNKNOWN;
		free(name);
	}
	free(plt);
}

/* A .gnu_debugdata image's .symtab, merged in; true when it had one. */
static bool load_minidebuginfo(struct dso *d)
{
	const char *why;
	size_t size;
	void *image;
	bool loaded = false;
	Elf *elf;

	image = debug_minidebuginfo(d, &size);
	if (!image)
		return false;
	elf = elf_memory(image, size);
	if (elf && elf_sane(elf, size, &why))
		loaded = load_tables(d, elf, true, false);
	else
		pr_debug("%s: .gnu_debugdata holds no usable ELF file", d->path);
	if (elf)
		elf_end(elf);
	free(image);
	return loaded;
}

void dso_load_syms(struct dso *d, const struct dso_search *s)
{
	struct debug_file dbg;

	if (d->syms_loaded)
		return;
	d->syms_loaded = true;
	if (!d->elf)
		return;
	load_tables(d, d->elf, d->has_symtab, true);
	load_plt(d);
	d->symsrc = d->has_symtab ? SYMSRC_SYMTAB : SYMSRC_DYNSYM;
	d->symsrc_path = xstrdup(d->path);
	/* a debug file: the symbols of a stripped binary, the DWARF of any without its own */
	if ((!d->has_symtab || !elf_has_section(d->elf, ".debug_info")) &&
	    debug_file_find(d, s, &dbg)) {
		d->debug_elf = dbg.elf;
		if (!d->has_symtab && load_tables(d, dbg.elf, true, false)) {
			d->symsrc = SYMSRC_DEBUG;
			d->symsrc_how = dbg.how;
			free(d->symsrc_path);
			d->symsrc_path = dbg.path;
		} else {
			pr_debug("%s: debug file %s (%s): DWARF only", d->path, dbg.path, dbg.how);
			free(dbg.path);
		}
	}
	if (d->symsrc == SYMSRC_DYNSYM && load_minidebuginfo(d))
		d->symsrc = SYMSRC_MINIDEBUG;
	finish_syms(d);
	if (!d->nr_syms)
		d->symsrc = SYMSRC_NONE;
	if (verbose) {
		struct sbuf sb = { 0 };

		dso_symsrc_str(d, &sb);
		pr_debug("%s: %u symbols: %s", d->path, d->nr_syms, sb.buf);
		sbuf_free(&sb);
	}
}

void dso_symsrc_str(const struct dso *d, struct sbuf *sb)
{
	switch (d->symsrc) {
	case SYMSRC_SYMTAB:
		sbuf_printf(sb, ".symtab of %s", d->symsrc_path);
		break;
	case SYMSRC_DEBUG:
		sbuf_printf(sb, "debug file %s (found by %s)", d->symsrc_path, d->symsrc_how);
		break;
	case SYMSRC_MINIDEBUG:
		sbuf_printf(sb, "MiniDebugInfo (.gnu_debugdata) of %s", d->symsrc_path);
		break;
	case SYMSRC_DYNSYM:
		sbuf_printf(sb, ".dynsym of %s only (stripped, no debug file)", d->symsrc_path);
		break;
	case SYMSRC_EMBEDDED:
		sbuf_addstr(sb, "stored in the capture");
		if (d->symsrc_path && *d->symsrc_path)
			sbuf_printf(sb, " (recorded from %s)", d->symsrc_path);
		break;
	default:
		sbuf_addstr(sb, "none (stripped, no debug file)");
	}
}

bool dso_off_to_vaddr(const struct dso *d, u64 off, u64 *vaddr)
{
	u32 i;

	for (i = 0; i < d->nr_segs; i++) {
		const struct dso_seg *g = &d->segs[i];

		if (off >= g->offset && off - g->offset < MAX(g->filesz, 1)) {
			*vaddr = off - g->offset + g->vaddr;
			return true;
		}
	}
	return false;
}

struct dso_sym *dso_find(struct dso *d, u64 vaddr)
{
	u32 i = iv_find(&d->sym_index, d->syms, sizeof(*d->syms), vaddr);

	return i == IV_NONE ? NULL : &d->syms[i];
}

bool dso_read(const struct dso *d, u64 vaddr, void *buf, size_t len)
{
	u32 i;

	if (!d->image)
		return false;
	for (i = 0; i < d->nr_segs; i++) {
		const struct dso_seg *g = &d->segs[i];
		u64 off;

		if (vaddr < g->vaddr || vaddr - g->vaddr >= g->filesz ||
		    g->filesz - (vaddr - g->vaddr) < len)
			continue;
		off = vaddr - g->vaddr + g->offset;
		if (off > d->image_size || d->image_size - off < len)
			return false;
		memcpy(buf, d->image + off, len);
		return true;
	}
	return false;
}
