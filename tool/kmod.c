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
	Dwfl *dwfl; /* NULL: no usable .ko */
	struct dso *d; /* the .ko's functions at libdwfl's addresses, and its DWARF */
	struct u64map syms; /* hash of a function name -> index in d->syms */
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

static u64 name_hash(const char *s)
{
	return hash_bytes(s, strlen(s), 0);
}

static void add_file(struct kmods *k, char *name, const char *path)
{
	u64 h = name_hash(name), idx;

	/* the first directory that has it wins */
	if (u64map_get(&k->files, h, &idx) || k->nr_files >= KMOD_MAX_FILES) {
		free(name);
		return;
	}
	if (k->nr_files == k->alloc_files) {
		k->alloc_files = k->alloc_files ? 2 * k->alloc_files : 64;
		k->names = xrealloc(k->names, k->alloc_files, sizeof(*k->names));
		k->paths = xrealloc(k->paths, k->alloc_files, sizeof(*k->paths));
	}
	k->names[k->nr_files] = name;
	k->paths[k->nr_files] = xstrdup(path);
	u64map_put(&k->files, h, k->nr_files++);
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
	u32 k;

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
	for (k = 0; k < m->d->nr_syms; k++)
		u64map_put(&m->syms, name_hash(dso_sym_name(m->d, &m->d->syms[k])), k);
}

/*
 * Live, the running module's build-id (sysfs, root only) must be the
 * file's: a module loaded from elsewhere may differ from the installed one.
 * True when they match or the running one cannot be read.
 */
static bool same_build(struct kmods *k, struct kmod *m, Dwfl_Module *mod, const char *path)
{
	const unsigned char *bits;
	GElf_Addr at;
	char *note, *sys;
	size_t len;
	u32 namesz, descsz, off;
	int n;
	bool same = true;

	if (!k->live)
		return true;
	sys = xasprintf("/sys/module/%s/notes/.note.gnu.build-id", m->name);
	n = dwfl_module_build_id(mod, &bits, &at);
	if (!read_file(sys, &note, &len, 4096)) {
		if (len >= 12) {
			memcpy(&namesz, note, 4);
			memcpy(&descsz, note + 4, 4);
			off = 12 + ((namesz + 3) & ~3U);
			same = n > 0 && namesz < len && off + descsz <= len && descsz == (u32)n &&
			       !memcmp(note + off, bits, n);
		}
		free(note);
	}
	if (!same)
		pr_warn("%s: not the build of module %s that is loaded (build-id differs from %s); "
			"its kallsyms names stay",
			path, m->name, sys);
	free(sys);
	return same;
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

static struct kmod *kmod_get(struct kmods *k, const char *module)
{
	u64 h = name_hash(module), idx;
	struct kmod *m;
	u32 i;

	if (u64map_get(&k->mod_index, h, &idx))
		return strcmp(k->mods[idx]->name, module) ? NULL : k->mods[idx];
	if (!k->scanned) {
		k->scanned = true;
		for (i = 0; i < k->nr_dirs; i++)
			scan_dir(k, k->dirs[i], 0);
	}
	m = xcalloc(1, sizeof(*m));
	m->name = xstrdup(module);
	if (u64map_get(&k->files, h, &idx) && !strcmp(k->names[idx], module) &&
	    !kmod_open(k, m, k->paths[idx]) && m->dwfl) {
		dwfl_end(m->dwfl);
		m->dwfl = NULL;
	}
	VEC_GROW(k->mods, k->nr_mods, k->alloc_mods);
	u64map_put(&k->mod_index, h, k->nr_mods);
	k->mods[k->nr_mods++] = m;
	return m;
}

bool kmods_locate(struct kmods *k, const char *module, const char *func, u64 off, struct dso **d,
		  u64 *vaddr)
{
	struct kmod *m;
	u64 idx;

	if (!k->nr_dirs)
		return false;
	m = kmod_get(k, module);
	if (!m || !m->d || !u64map_get(&m->syms, name_hash(func), &idx) ||
	    strcmp(dso_sym_name(m->d, &m->d->syms[idx]), func))
		return false;
	*d = m->d;
	*vaddr = m->d->syms[idx].start + off;
	return true;
}

void kmods_free(struct kmods *k)
{
	u32 i;

	for (i = 0; i < k->nr_mods; i++) {
		struct kmod *m = k->mods[i];

		/* the dso borrows libdwfl's DWARF: free it first */
		dso_free(m->d);
		if (m->dwfl)
			dwfl_end(m->dwfl);
		u64map_free(&m->syms);
		free(m->name);
		free(m);
	}
	for (i = 0; i < k->nr_files; i++) {
		free(k->names[i]);
		free(k->paths[i]);
	}
	for (i = 0; i < k->nr_dirs; i++)
		free(k->dirs[i]);
	free(k->mods);
	free(k->names);
	free(k->paths);
	free(k->dirs);
	u64map_free(&k->files);
	u64map_free(&k->mod_index);
	memset(k, 0, sizeof(*k));
}
