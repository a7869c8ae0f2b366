// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel modules' .ko files (see kmod.h): found by name in the search
 * directories, opened with libdwfl, which places the sections of a
 * relocatable file and relocates its DWARF.
 */
#include <dirent.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kmod.h"
#include "srcline.h"

/* /lib/modules/RELEASE is some 6 levels deep; beyond this, a loop of bind mounts. */
#define KMOD_MAX_DEPTH 12
#define KMOD_MAX_FILES (1U << 20)

struct kmod {
	char *name;
	bool opened; /* its .ko looked for */
	Dwfl *dwfl; /* NULL: no usable .ko */
	struct dso *d; /* the .ko's functions at libdwfl's addresses, and its DWARF */
	struct dso *stored; /* what a capture stores of it, or NULL */
	u8 id[DSO_BUILD_ID_MAX]; /* the build that ran: loaded module's, capture's or .ko's */
	u32 id_len; /* 0: unknown */
	/*
	 * id is the build that ran (the loaded module's or the capture's),
	 * not only the .ko's own: a capture stores it only then.
	 */
	bool id_checked;
	u32 name_id; /* in kmods.strs */
	struct u64map syms; /* function name's id -> index in the syms of kmod_dso() */
};

static const Dwfl_Callbacks kmod_callbacks = {
	.find_elf = NULL,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

void kmods_add_dir(struct kmods *k, const char *dir)
{
	k->dirs = xrealloc(k->dirs, k->nr_dirs + 1, sizeof(*k->dirs));
	k->dirs[k->nr_dirs++] = xstrdup(dir);
	k->scanned = false;
}

void kmods_add_release(struct kmods *k, const char *root, const char *release)
{
	char *dir;

	if (!release || !*release || strchr(release, '/'))
		return;
	dir = xasprintf("%s/usr/lib/debug/lib/modules/%s", root ? root : "", release);
	kmods_add_dir(k, dir);
	free(dir);
	dir = xasprintf("%s/lib/modules/%s", root ? root : "", release);
	kmods_add_dir(k, dir);
	free(dir);
}

/* "snd-hda_intel.ko.xz" -> "snd_hda_intel"; NULL when no module file. */
static char *module_name(const char *file)
{
	static const char *const exts[] = { ".ko", ".ko.xz", ".ko.gz", ".ko.zst" };
	size_t len = strlen(file), i;
	char *name, *p;

	for (i = 0; i < ARRAY_SIZE(exts); i++) {
		size_t n = strlen(exts[i]);

		if (len > n && !strcmp(file + len - n, exts[i]))
			break;
	}
	if (i == ARRAY_SIZE(exts))
		return NULL;
	name = xstrndup(file, len - strlen(exts[i]));
	for (p = name; *p; p++)
		if (*p == '-')
			*p = '_';
	return name;
}

static void add_file(struct kmods *k, char *name, const char *path)
{
	u64 idx;
	u32 id;

	/* the first directory that has it wins */
	if (k->nr_files >= KMOD_MAX_FILES) {
		free(name);
		return;
	}
	id = strtab_intern(&k->strs, name);
	free(name);
	if (u64map_get(&k->files, id, &idx))
		return;
	if (k->nr_files == k->alloc_files) {
		k->alloc_files = k->alloc_files ? 2 * k->alloc_files : 64;
		k->paths = xrealloc(k->paths, k->alloc_files, sizeof(*k->paths));
	}
	k->paths[k->nr_files] = xstrdup(path);
	u64map_put(&k->files, id, k->nr_files++);
}

/* Module files under @dir, not following symlinks to directories (build/, source/). */
static void scan_dir(struct kmods *k, const char *dir, u32 depth)
{
	struct dirent *e;
	DIR *dh;

	if (depth > KMOD_MAX_DEPTH)
		return;
	dh = opendir(dir);
	if (!dh)
		return;
	while ((e = readdir(dh))) {
		char *path, *name;

		if (e->d_name[0] == '.')
			continue;
		path = xasprintf("%s/%s", dir, e->d_name);
		if (e->d_type == DT_DIR) {
			scan_dir(k, path, depth + 1);
		} else if (e->d_type == DT_REG || e->d_type == DT_LNK || e->d_type == DT_UNKNOWN) {
			/* a link to a .ko is opened (open_regular() checks it), never walked */
			name = module_name(e->d_name);
			if (name)
				add_file(k, name, path);
		}
		free(path);
	}
	closedir(dh);
}

/* Index the .ko's functions by name, at the addresses libdwfl gave its sections. */
static void read_symbols(struct kmod *m, Dwfl_Module *mod)
{
	int n = dwfl_module_getsymtab(mod), i;

	for (i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *s = dwfl_module_getsym_info(mod, i, &sym, &addr, &shndx, NULL, NULL);

		if (!s || !*s || GELF_ST_TYPE(sym.st_info) != STT_FUNC || shndx == SHN_UNDEF)
			continue;
		dso_add_sym(m->d, addr, addr + (sym.st_size ? sym.st_size : 1), s, 0);
	}
	dso_sort_syms(m->d);
}

/* The loaded module's build-id from sysfs (root only) into m->id, if readable. */
static void read_loaded_id(struct kmod *m)
{
	char *note, *sys = xasprintf("/sys/module/%s/notes/.note.gnu.build-id", m->name);
	u32 namesz, descsz, off;
	size_t len;

	if (!read_file(sys, &note, &len, 4096)) {
		if (len >= 12) {
			memcpy(&namesz, note, 4);
			memcpy(&descsz, note + 4, 4);
			off = 12 + ((namesz + 3) & ~3U);
			if (namesz < len && off <= len && descsz <= len - off &&
			    descsz <= DSO_BUILD_ID_MAX) {
				memcpy(m->id, note + off, descsz);
				m->id_len = descsz;
				m->id_checked = true;
			}
		}
		free(note);
	}
	free(sys);
}

/*
 * The .ko must be the build that ran: the loaded module's (live) or the
 * one the capture recorded.  A module loaded from elsewhere may differ
 * from the installed one, and a report's directories may hold another
 * kernel's.  True when they match or the build that ran is unknown; then
 * the .ko's build-id is the one a capture stores, except while recording
 * (not root: sysfs hides the notes), where it is unchecked: a capture
 * must not store it as the build that ran.
 */
static bool same_build(struct kmods *k, struct kmod *m, Dwfl_Module *mod, const char *path)
{
	const unsigned char *bits;
	GElf_Addr at;
	int n = dwfl_module_build_id(mod, &bits, &at);

	if (!m->id_len) {
		if (n > 0 && n <= DSO_BUILD_ID_MAX) {
			memcpy(m->id, bits, n);
			m->id_len = n;
			/* a report's .ko is the build its lines come from; a live one's is a guess */
			m->id_checked = !k->live;
		}
		return true;
	}
	if (n > 0 && (u32)n == m->id_len && !memcmp(m->id, bits, n))
		return true;
	if (k->live)
		pr_warn("%s: not the build of module %s that is loaded (build-id differs from "
			"/sys/module/%s/notes); its kallsyms names stay",
			path, m->name, m->name);
	else
		pr_warn("%s: not the build of module %s the capture recorded (build-id differs); "
			"%s stay",
			path, m->name, m->stored ? "the capture's lines" : "its kallsyms names");
	return false;
}

static bool kmod_open(struct kmods *k, struct kmod *m, const char *path)
{
	Dwfl_Module *mod;
	Dwarf_Addr bias;
	Dwarf *dw;
	int fd = open_regular(path);

	if (fd < 0) {
		pr_warn("%s: %s; module %s keeps its kallsyms names", path, err_str(fd), m->name);
		return false;
	}
	m->dwfl = dwfl_begin(&kmod_callbacks);
	mod = m->dwfl ? dwfl_report_offline(m->dwfl, m->name, path, fd) : NULL;
	if (!mod) {
		pr_warn("%s: %s; module %s keeps its kallsyms names", path, dwfl_errmsg(-1),
			m->name);
		close(fd);
		return false;
	}
	dwfl_report_end(m->dwfl, NULL, NULL);
	if (!same_build(k, m, mod, path))
		return false;
	m->d = dso_new_embedded(path);
	read_symbols(m, mod);
	dw = dwfl_module_getdwarf(mod, &bias);
	if (dw)
		dso_use_dwarf(m->d, dw, bias, path);
	pr_debug("%s: module %s: %u functions%s", path, m->name, m->d->nr_syms,
		 dw ? ", source lines" : ", no DWARF");
	return true;
}

/* The dso a module's frames resolve in: its .ko, else what the capture stores. */
static struct dso *kmod_dso(const struct kmod *m)
{
	return m->d ? m->d : m->stored;
}

static struct kmod *kmod_new(struct kmods *k, const char *module)
{
	struct kmod *m = xcalloc(1, sizeof(*m));

	m->name = xstrdup(module);
	m->name_id = strtab_intern(&k->strs, module);
	VEC_GROW(k->mods, k->nr_mods, k->alloc_mods);
	u64map_put(&k->mod_index, m->name_id, k->nr_mods);
	k->mods[k->nr_mods++] = m;
	return m;
}

/* The index in mods of @module, UINT32_MAX when not seen. */
static u32 kmod_index(const struct kmods *k, const char *module)
{
	u32 id = strtab_find(&k->strs, module);
	u64 idx;

	if (id == UINT32_MAX || !u64map_get(&k->mod_index, id, &idx))
		return UINT32_MAX;
	return idx;
}

static struct kmod *kmod_find(const struct kmods *k, const char *module)
{
	u32 i = kmod_index(k, module);

	return i == UINT32_MAX ? NULL : k->mods[i];
}

/* Index the functions of the dso the module's frames resolve in, by name. */
static void index_syms(struct kmods *k, struct kmod *m)
{
	struct dso *d = kmod_dso(m);
	u32 i;

	for (i = 0; d && i < d->nr_syms; i++)
		u64map_put(&m->syms, strtab_intern(&k->strs, dso_sym_name(d, &d->syms[i])), i);
}

/*
 * The .ko, once: live, checked against the loaded module; from a capture,
 * against the build it recorded.  A capture's stored lines without a
 * build-id to check a .ko by stay.
 */
static void kmod_look(struct kmods *k, struct kmod *m)
{
	u64 idx;
	u32 i;

	m->opened = true;
	if (k->live)
		read_loaded_id(m);
	if (!k->scanned) {
		k->scanned = true;
		for (i = 0; i < k->nr_dirs; i++)
			scan_dir(k, k->dirs[i], 0);
	}
	if (m->stored && !m->id_len) {
		pr_debug("module %s: the capture's lines stay (no build-id to check a .ko by)",
			 m->name);
	} else if (u64map_get(&k->files, m->name_id, &idx) && !kmod_open(k, m, k->paths[idx])) {
		dso_free(m->d);
		m->d = NULL;
		if (m->dwfl)
			dwfl_end(m->dwfl);
		m->dwfl = NULL;
	}
	if (m->stored && !m->d)
		pr_debug("module %s: %u functions from the capture", m->name, m->stored->nr_syms);
	index_syms(k, m);
}

static struct kmod *kmod_get(struct kmods *k, const char *module)
{
	struct kmod *m = kmod_find(k, module);

	if (!m)
		m = kmod_new(k, module);
	if (!m->opened)
		kmod_look(k, m);
	return m;
}

void kmods_add_stored(struct kmods *k, const char *module, const u8 *id, u32 id_len, struct dso *d)
{
	struct kmod *m = kmod_find(k, module);

	if (m || id_len > DSO_BUILD_ID_MAX) {
		dso_free(d); /* a module stored twice: the first stays */
		return;
	}
	m = kmod_new(k, module);
	m->stored = d;
	memcpy(m->id, id, id_len);
	m->id_len = id_len;
	m->id_checked = id_len > 0;
}

struct dso *kmods_module(const struct kmods *k, u32 i, const char **name, const u8 **id,
			 u32 *id_len)
{
	*name = k->mods[i]->name;
	*id = k->mods[i]->id;
	*id_len = k->mods[i]->id_checked ? k->mods[i]->id_len : 0;
	return kmod_dso(k->mods[i]);
}

u32 kmods_index(const struct kmods *k, const char *module)
{
	return kmod_index(k, module);
}

const struct dso_sym *kmods_func(const struct kmods *k, u32 i, const char *func)
{
	struct kmod *m = k->mods[i];
	struct dso *d = kmod_dso(m);
	u32 id = strtab_find(&k->strs, func);
	u64 idx;

	if (!d || id == UINT32_MAX || !u64map_get(&m->syms, id, &idx))
		return NULL;
	return &d->syms[idx];
}

bool kmods_locate(struct kmods *k, const char *module, const char *func, u64 off, struct dso **d,
		  u64 *vaddr)
{
	const struct dso_sym *sym;

	if (!k->nr_dirs && !k->nr_mods)
		return false;
	kmod_get(k, module);
	sym = kmods_func(k, kmods_index(k, module), func);
	if (!sym)
		return false;
	*d = kmod_dso(kmod_find(k, module));
	*vaddr = sym->start + off;
	return true;
}

void kmods_free(struct kmods *k)
{
	u32 i;

	for (i = 0; i < k->nr_mods; i++) {
		struct kmod *m = k->mods[i];

		/* the dso borrows libdwfl's DWARF: free it first */
		dso_free(m->d);
		dso_free(m->stored);
		if (m->dwfl)
			dwfl_end(m->dwfl);
		u64map_free(&m->syms);
		free(m->name);
		free(m);
	}
	for (i = 0; i < k->nr_files; i++)
		free(k->paths[i]);
	for (i = 0; i < k->nr_dirs; i++)
		free(k->dirs[i]);
	free(k->mods);
	free(k->paths);
	strtab_free(&k->strs);
	free(k->dirs);
	u64map_free(&k->files);
	u64map_free(&k->mod_index);
	memset(k, 0, sizeof(*k));
}
