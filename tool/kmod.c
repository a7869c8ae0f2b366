// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel modules' .ko files and the kernel's vmlinux (see kmod.h): a .ko
 * found by name in the search directories, a vmlinux at its standard
 * places; opened with libdwfl, which places the sections of a relocatable
 * file and relocates its DWARF.
 */
#include <dirent.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kmod.h"
#include "srcline.h"

/* /lib/modules/RELEASE is some 6 levels deep; beyond this, a loop of bind mounts. */
#define KMOD_MAX_DEPTH 12
#define KMOD_MAX_FILES (1U << 20)
/* A function's name, for kmods_func(): the name's hash first, then its symbol. */
struct fn_name {
	u64 hash;
	const char *name; /* libdwfl's (the file's string table); NULL: the stored symbol's */
	u32 sym; /* index in the syms of kmod_dso(), set by index_syms() */
	u64 addr; /* of the symbol that gave the name */
};

struct kmod {
	char *name;
	bool opened; /* its .ko looked for */
	Dwfl *dwfl; /* NULL: no usable .ko */
	Dwfl_Module *mod; /* the file's, in dwfl */
	struct dso *d; /* the .ko's functions at libdwfl's addresses, and its DWARF */
	struct dso *stored; /* what a capture stores of it, or NULL */
	u8 id[DSO_BUILD_ID_MAX]; /* the build that ran: loaded module's, capture's or .ko's */
	u32 id_len; /* 0: unknown */
	/*
	 * id is the build that ran (the loaded module's or the capture's),
	 * not only the .ko's own: a capture stores it only then.
	 */
	bool id_checked;
	bool same_build; /* the file's build-id is the known one of the build that ran */
	u32 name_id; /* in kmods.strs */
	struct fn_name *names; /* the functions' names, by hash (index_syms()) */
	u32 nr_names;
	u32 alloc_names;
	bool image; /* the kernel image (KMOD_KERNEL), not a module */
	bool offset_known;
	u64 offset; /* image: kallsyms address less vmlinux address */
	u64 anchor; /* image: the kallsyms address the offset was learnt at */
	u32 misplaced; /* image: functions not where the offset puts them */
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

static void add_image(struct kmods *k, char *path)
{
	k->images = xrealloc(k->images, k->nr_images + 1, sizeof(*k->images));
	k->images[k->nr_images++] = path;
}

void kmods_add_release(struct kmods *k, const char *root, const char *release)
{
	/* where Debian's debug package, /boot and a build tree keep a vmlinux */
	static const char *const images[] = {
		"%s/usr/lib/debug/boot/vmlinux-%s",
		"%s/boot/vmlinux-%s",
		"%s/usr/lib/debug/lib/modules/%s/vmlinux",
		"%s/lib/modules/%s/build/vmlinux",
	};
	const char *r = root ? root : "";
	char *dir;
	size_t i;

	if (!release || !*release || strchr(release, '/'))
		return;
	dir = xasprintf("%s/usr/lib/debug/lib/modules/%s", r, release);
	kmods_add_dir(k, dir);
	free(dir);
	dir = xasprintf("%s/lib/modules/%s", r, release);
	kmods_add_dir(k, dir);
	free(dir);
	for (i = 0; !k->image_given && i < ARRAY_SIZE(images); i++)
		add_image(k, xasprintf(images[i], r, release));
}

void kmods_set_vmlinux(struct kmods *k, const char *path)
{
	while (k->nr_images)
		free(k->images[--k->nr_images]);
	add_image(k, xstrdup(path));
	k->image_given = true;
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

/*
 * A function; in the image also a sized label of no type in code: the
 * kernel's assembly entry code (arm64's el0t_64_sync, ret_to_user) is one.
 */
static bool code_sym(const struct kmod *m, const GElf_Sym *sym, Elf *elf, GElf_Word shndx)
{
	int type = GELF_ST_TYPE(sym->st_info);
	GElf_Shdr sh;

	if (type == STT_FUNC)
		return true;
	if (!m->image || type != STT_NOTYPE || !sym->st_size)
		return false;
	return gelf_getshdr(elf_getscn(elf, shndx), &sh) && (sh.sh_flags & SHF_EXECINSTR);
}

/*
 * Symbol @i of the file when it is code: its name, at libdwfl's address
 * @addr; *@local: a local function.
 */
static const char *code_at(const struct kmod *m, int i, GElf_Addr *addr, GElf_Xword *size,
			   bool *local)
{
	GElf_Sym sym;
	GElf_Word shndx;
	Dwarf_Addr bias;
	Elf *elf;
	const char *s = dwfl_module_getsym_info(m->mod, i, &sym, addr, &shndx, &elf, &bias);

	if (!s || !*s || shndx == SHN_UNDEF || !code_sym(m, &sym, elf, shndx))
		return NULL;
	*size = sym.st_size;
	*local = GELF_ST_BIND(sym.st_info) == STB_LOCAL && GELF_ST_TYPE(sym.st_info) == STT_FUNC;
	return s;
}

static void add_name(struct kmod *m, const char *name, u64 addr)
{
	VEC_GROW(m->names, m->nr_names, m->alloc_names);
	m->names[m->nr_names++] = (struct fn_name){ .hash = hash_bytes(name, strlen(name), 0),
						    .name = name,
						    .addr = addr };
}

/*
 * The file's functions, at the addresses libdwfl gave its sections; every
 * name kept for index_syms() (the dso keeps one name of aliases, memset
 * and __memset), so that the table is walked once.
 */
static void read_symbols(struct kmod *m)
{
	int n = dwfl_module_getsymtab(m->mod), i;
	GElf_Xword size;
	GElf_Addr addr;
	bool local;

	for (i = 1; i < n; i++) {
		const char *s = code_at(m, i, &addr, &size, &local);

		if (!s)
			continue;
		dso_add_sym(m->d, addr, addr + (size ? size : 1), s, 0);
		add_name(m, s, addr);
		m->d->local_funcs |= local;
	}
	dso_sort_syms(m->d);
}

bool kmod_note_build_id(const char *buf, size_t len, u8 *id, u32 *id_len)
{
	size_t off = 0;

	while (len - off >= 12) {
		u32 namesz, descsz, type;
		size_t name, desc, next;

		memcpy(&namesz, buf + off, 4);
		memcpy(&descsz, buf + off + 4, 4);
		memcpy(&type, buf + off + 8, 4);
		name = off + 12;
		desc = name + ((namesz + 3ULL) & ~3ULL);
		next = desc + ((descsz + 3ULL) & ~3ULL);
		if (desc > len || descsz > len - desc)
			return false;
		if (type == NT_GNU_BUILD_ID && namesz == 4 && !memcmp(buf + name, "GNU", 4) &&
		    descsz && descsz <= DSO_BUILD_ID_MAX) {
			memcpy(id, buf + desc, descsz);
			*id_len = descsz;
			return true;
		}
		if (next > len)
			return false;
		off = next;
	}
	return false;
}

/*
 * The running build's id into m->id, if readable: a module's from sysfs
 * (root only), the kernel's from /sys/kernel/notes (readable by all).
 */
static void read_loaded_id(struct kmod *m)
{
	char *note, *sys = m->image ? xstrdup("/sys/kernel/notes")
				    : xasprintf("/sys/module/%s/notes/.note.gnu.build-id", m->name);
	size_t len;

	if (!read_file(sys, &note, &len, 65536)) {
		if (kmod_note_build_id(note, len, m->id, &m->id_len))
			m->id_checked = true;
		free(note);
	}
	free(sys);
}

/* "module NAME" or "the kernel", for messages */
static char *kmod_label(const struct kmod *m)
{
	return m->image ? xstrdup("the kernel") : xasprintf("module %s", m->name);
}

/* A refusal: a warning, or (@quiet: one of several places tried) for -v. */
#define kmod_say(quiet, ...)                   \
	do {                                   \
		if (quiet)                     \
			pr_debug(__VA_ARGS__); \
		else                           \
			pr_warn(__VA_ARGS__);  \
	} while (0)

/* What stays when a file is refused. */
static const char *kmod_stays(const struct kmod *m)
{
	return m->stored && m->stored->nr_syms ? "the capture's lines" : "its kallsyms names";
}

/*
 * The file must be the build that ran: the loaded module's or the running
 * kernel's (live), or the one the capture recorded.  A module loaded from
 * elsewhere may differ from the installed one, and a report's directories
 * may hold another kernel's.  True when they match or the build that ran
 * is unknown.
 */
static bool same_build(struct kmods *k, struct kmod *m, Dwfl_Module *mod, const char *path,
		       bool quiet)
{
	const unsigned char *bits;
	GElf_Addr at;
	int n = dwfl_module_build_id(mod, &bits, &at);
	char *w;

	if (!m->id_len)
		return true;
	if (n > 0 && (u32)n == m->id_len && !memcmp(m->id, bits, n)) {
		m->same_build = true;
		return true;
	}
	w = kmod_label(m);
	if (k->live && m->image)
		kmod_say(quiet,
			 "%s: not the build of the kernel that runs (build-id differs from "
			 "/sys/kernel/notes); its kallsyms names stay",
			 path);
	else if (k->live)
		kmod_say(quiet,
			 "%s: not the build of module %s that is loaded (build-id differs from "
			 "/sys/module/%s/notes); its kallsyms names stay",
			 path, m->name, m->name);
	else
		kmod_say(quiet,
			 "%s: not the build of %s the capture recorded (build-id differs); %s stay",
			 path, w, kmod_stays(m));
	free(w);
	return false;
}

/*
 * The build that ran was unknown: the file's is the one a capture stores,
 * except while recording (not root: sysfs hides a module's notes), where
 * it is a guess a capture must not store as the build that ran.
 */
static void adopt_build(struct kmods *k, struct kmod *m)
{
	const unsigned char *bits;
	GElf_Addr at;
	int n = dwfl_module_build_id(m->mod, &bits, &at);

	if (m->id_len || n <= 0 || n > DSO_BUILD_ID_MAX)
		return;
	memcpy(m->id, bits, n);
	m->id_len = n;
	m->id_checked = !k->live;
}

/* Open @path for @m; @quiet: refusals are for -v (other places follow). */
static bool kmod_open(struct kmods *k, struct kmod *m, const char *path, bool quiet)
{
	Dwfl_Module *mod;
	Dwarf_Addr bias;
	Dwarf *dw;
	char *w = kmod_label(m);
	int fd = open_regular(path);
	bool ok = false;

	if (fd < 0) {
		kmod_say(quiet, "%s: %s; %s keeps %s", path, err_str(fd), w, kmod_stays(m));
		goto out;
	}
	m->dwfl = dwfl_begin(&kmod_callbacks);
	mod = m->dwfl ? dwfl_report_offline(m->dwfl, m->name, path, fd) : NULL;
	if (!mod) {
		kmod_say(quiet, "%s: %s; %s keeps %s", path, dwfl_errmsg(-1), w, kmod_stays(m));
		close(fd);
		goto out;
	}
	dwfl_report_end(m->dwfl, NULL, NULL);
	if (!same_build(k, m, mod, path, quiet))
		goto out;
	m->mod = mod;
	m->d = dso_new_embedded(path);
	read_symbols(m);
	if (!m->d->nr_syms) {
		kmod_say(quiet, "%s: no function symbols; %s keeps %s", path, w, kmod_stays(m));
		goto out;
	}
	adopt_build(k, m);
	dw = dwfl_module_getdwarf(mod, &bias);
	if (dw)
		dso_use_dwarf(m->d, dw, bias, path);
	pr_debug("%s: %s: %u functions%s", path, w, m->d->nr_syms,
		 dw ? ", source lines" : ", no DWARF");
	ok = true;
out:
	free(w);
	return ok;
}

/* Drop what a refused file left behind. */
static void kmod_close(struct kmod *m)
{
	dso_free(m->d);
	m->d = NULL;
	if (m->dwfl)
		dwfl_end(m->dwfl);
	m->dwfl = NULL;
	m->mod = NULL;
	m->same_build = false;
	m->nr_names = 0; /* they were libdwfl's */
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
	m->image = !strcmp(module, KMOD_KERNEL);
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

/*
 * Index the functions of the dso the module's frames resolve in, by name:
 * the names of the file's own symbol table (read_symbols() kept them),
 * else what the capture stores; each name that is a function's start, by
 * hash (a radix sort: a vmlinux has 190 000 names, a map of interned
 * copies of them took a tenth of a kernel report).
 */
static void index_syms(struct kmod *m)
{
	struct dso *d = kmod_dso(m);
	struct u64key *key, *tmp;
	struct fn_name *sorted;
	u32 i, k = 0;

	if (!m->d) {
		m->nr_names = 0;
		for (i = 0; d && i < d->nr_syms; i++) {
			const char *name = dso_sym_name(d, &d->syms[i]);

			add_name(m, name, d->syms[i].start);
			m->names[i].name = NULL; /* the pool may grow: asked for again */
		}
	}
	for (i = 0; i < m->nr_names; i++) {
		const struct dso_sym *s = dso_find(d, m->names[i].addr);

		if (s && s->start == m->names[i].addr) {
			m->names[k] = m->names[i];
			m->names[k++].sym = s - d->syms;
		}
	}
	m->nr_names = k;
	key = xmalloc((k ? k : 1) * sizeof(*key));
	tmp = xmalloc((k ? k : 1) * sizeof(*tmp));
	sorted = xmalloc((k ? k : 1) * sizeof(*sorted));
	for (i = 0; i < k; i++)
		key[i] = (struct u64key){ m->names[i].hash, i };
	radix_sort(key, tmp, k);
	for (i = 0; i < k; i++)
		sorted[i] = m->names[key[i].i];
	free(m->names);
	m->names = sorted;
	m->alloc_names = k ? k : 1;
	free(tmp);
	free(key);
}

/*
 * The first vmlinux candidate that is the build that ran.  The standard
 * places may hold other kernels' files: each refusal is for -v, and one
 * warning says when none would do.
 */
static void image_open(struct kmods *k, struct kmod *m)
{
	bool quiet = !k->image_given;
	u32 i, found = 0;
	struct stat st;

	for (i = 0; i < k->nr_images && !m->d; i++) {
		/* an empty standard place is no news; --vmlinux is checked at start */
		if (stat(k->images[i], &st) && errno == ENOENT) {
			pr_debug("%s: not there", k->images[i]);
			continue;
		}
		found++;
		if (!kmod_open(k, m, k->images[i], quiet))
			kmod_close(m);
	}
	if (quiet && found && !m->d)
		pr_warn("the kernel: none of the %u vmlinux files at the standard places is the "
			"build that ran, with symbols (-v says why); %s stay",
			found, kmod_stays(m));
}

/*
 * The file, once: live, checked against the build that runs; from a
 * capture, against the build it recorded.  A capture's stored lines without
 * a build-id to check a file by stay.
 */
static void kmod_look(struct kmods *k, struct kmod *m)
{
	char *w = kmod_label(m);
	u64 idx;
	u32 i;

	m->opened = true;
	if (k->live)
		read_loaded_id(m);
	if (!m->image && !k->scanned) {
		k->scanned = true;
		for (i = 0; i < k->nr_dirs; i++)
			scan_dir(k, k->dirs[i], 0);
	}
	if (m->stored && !m->id_len)
		pr_debug("%s: the capture's lines stay (no build-id to check a file by)", w);
	else if (m->image)
		image_open(k, m);
	else if (u64map_get(&k->files, m->name_id, &idx) && !kmod_open(k, m, k->paths[idx], false))
		kmod_close(m);
	if (m->stored && !m->d)
		pr_debug("%s: %u functions from the capture", w, m->stored->nr_syms);
	free(w);
	index_syms(m);
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

/* The function named @func; a name at two addresses (static functions) names none. */
const struct dso_sym *kmods_func(const struct kmods *k, u32 i, const char *func)
{
	const struct kmod *m = k->mods[i];
	struct dso *d = kmod_dso(m);
	u64 h = hash_bytes(func, strlen(func), 0);
	u32 lo = 0, hi = m->nr_names, found = UINT32_MAX;

	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;

		if (m->names[mid].hash < h)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; d && lo < m->nr_names && m->names[lo].hash == h; lo++) {
		const struct fn_name *n = &m->names[lo];

		if (strcmp(n->name ? n->name : dso_sym_name(d, &d->syms[n->sym]), func))
			continue;
		if (found != UINT32_MAX && d->syms[found].start != d->syms[n->sym].start)
			return NULL;
		found = n->sym;
	}
	return found == UINT32_MAX ? NULL : &d->syms[found];
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

/*
 * The image's offset, from a function whose name is unique in it.  A
 * kallsyms address below the vmlinux one (no KASLR on a relocated build)
 * wraps, which the subtraction in kmods_locate_kernel() undoes.
 */
int kmods_kernel_offset(struct kmods *k, const char *func, u64 kstart)
{
	const struct dso_sym *sym;
	Dwarf_Addr bias = 0; /* libdwfl's address less the file's own */
	struct kmod *m;

	if (!k->nr_images && !k->nr_mods)
		return -1;
	m = kmod_get(k, KMOD_KERNEL);
	/* a capture may store the kernel's build-id alone */
	if (!kmod_dso(m) || !kmod_dso(m)->nr_syms)
		return -1;
	if (m->offset_known)
		return 1;
	sym = kmods_func(k, kmods_index(k, KMOD_KERNEL), func);
	if (!sym)
		return 0;
	m->offset = kstart - sym->start;
	m->offset_known = true;
	m->anchor = kstart;
	if (m->mod)
		dwfl_module_getelf(m->mod, &bias);
	pr_debug("the kernel: kallsyms %s at %#llx, vmlinux %#llx", func,
		 (unsigned long long)kstart, (unsigned long long)(sym->start - bias));
	return 1;
}

bool kmods_kernel_anchor(const struct kmods *k, u64 *kstart)
{
	struct kmod *m = kmod_find(k, KMOD_KERNEL);

	if (!m || !m->offset_known)
		return false;
	*kstart = m->anchor;
	return true;
}

const char *kmods_kernel_file(const struct kmods *k)
{
	struct kmod *m = kmod_find(k, KMOD_KERNEL);

	return m && m->d ? m->d->path : "the capture's kernel functions";
}

/*
 * By address, not by name: the kallsyms address less the offset.  The
 * function of that name (or an alias of it: memset, __memset) must begin
 * there, or one of the static functions sharing it.  A name the vmlinux
 * does not have (a label without size) is taken on trust from the build
 * that ran (checked, or the capture's record of it): its DWARF may know
 * code its symbols do not.  Else the kallsyms name stays.
 */
bool kmods_locate_kernel(struct kmods *k, const char *func, u64 kstart, u64 addr, struct dso **d,
			 u64 *vaddr)
{
	const struct dso_sym *by_name, *s;
	struct kmod *m;
	u64 at;

	if (kmods_kernel_offset(k, func, kstart) != 1)
		return false;
	m = kmod_find(k, KMOD_KERNEL);
	*d = kmod_dso(m);
	at = kstart - m->offset;
	by_name = kmods_func(k, kmods_index(k, KMOD_KERNEL), func);
	if (by_name && by_name->start != at) {
		if (!m->misplaced++)
			pr_warn("%s: %s is not where kallsyms puts it (not the kernel that ran?); "
				"such frames keep their kallsyms names",
				kmods_kernel_file(k), func);
		return false;
	}
	if (!by_name && m->d && !m->same_build) {
		/* unchecked: only one of the static functions that share the name */
		s = dso_find(*d, at);
		if (!s || s->start != at || strcmp(dso_sym_name(*d, s), func))
			return false;
	}
	*vaddr = addr - m->offset;
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
		free(m->names);
		free(m->name);
		free(m);
	}
	for (i = 0; i < k->nr_files; i++)
		free(k->paths[i]);
	for (i = 0; i < k->nr_dirs; i++)
		free(k->dirs[i]);
	for (i = 0; i < k->nr_images; i++)
		free(k->images[i]);
	free(k->images);
	free(k->mods);
	free(k->paths);
	strtab_free(&k->strs);
	free(k->dirs);
	u64map_free(&k->files);
	u64map_free(&k->mod_index);
	memset(k, 0, sizeof(*k));
}
