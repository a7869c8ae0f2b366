// SPDX-License-Identifier: GPL-2.0
/*
 * Separate debug files (build-id, .gnu_debuglink, debuginfod) and
 * MiniDebugInfo (see debuginfo.h).
 */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <lzma.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#ifndef CYCREAD_NO_DEBUGINFOD
#include <dlfcn.h>
#endif

#include "debuginfo.h"

/* A compressed symbol table bigger than this is not one. */
#define MINIDEBUG_MAX_BYTES (256U << 20)

/* Why @path is not @d's debug file, or NULL when it is. */
static const char *check_candidate(struct dso *d, Elf *elf, bool by_crc)
{
	u8 id[DSO_BUILD_ID_MAX];
	const char *why = NULL;
	size_t size;
	char *image;
	u32 len;

	image = elf_rawfile(elf, &size);
	if (!image)
		return "cannot read the file";
	if (!elf_sane(elf, size, &why))
		return why;
	len = elf_build_id(elf, id);
	if (d->build_id_len && len)
		return len == d->build_id_len && !memcmp(id, d->build_id, len)
			       ? NULL
			       : "its build-id is another build's";
	if (!by_crc)
		return d->build_id_len ? "it has no build-id" : "the binary has no build-id";
	if (crc32(0, (const Bytef *)image, size) != d->debuglink_crc)
		return "its CRC32 is not the one .gnu_debuglink gives";
	return NULL;
}

/* Take the file open as @fd (consumed) as a candidate; true when accepted. */
static bool try_fd(struct dso *d, int fd, const char *path, bool by_crc, const char *how,
		   struct debug_file *out)
{
	const char *why;
	struct stat st;
	Elf *elf;

	if (fstat(fd, &st) || (d->ino && st.st_dev == d->dev && st.st_ino == d->ino)) {
		pr_debug("%s: debug file %s (%s) not used: it is the binary itself", d->path, path,
			 how);
		close(fd);
		return false;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	why = elf ? check_candidate(d, elf, by_crc) : elf_errmsg(-1);
	if (why) {
		pr_debug("%s: debug file %s (%s) not used: %s", d->path, path, how, why);
		if (elf)
			elf_end(elf);
		close(fd);
		return false;
	}
	/* libelf has mapped the whole file: the descriptor can go */
	if (!elf_cntl(elf, ELF_C_FDDONE))
		close(fd);
	out->elf = elf;
	out->path = xstrdup(path);
	out->how = how;
	return true;
}

static bool try_path(struct dso *d, const char *path, bool by_crc, const char *how,
		     struct debug_file *out)
{
	int fd = open_regular(path);

	if (fd < 0) {
		if (fd == -ENOENT && verbose < 2)
			return false;
		pr_debug("%s: debug file %s (%s) not used: %s", d->path, path, how, err_str(-fd));
		return false;
	}
	return try_fd(d, fd, path, by_crc, how, out);
}

#ifndef CYCREAD_NO_DEBUGINFOD
/* libdebuginfod, loaded on first use so that cycread runs without it. */
struct debuginfod_api {
	void *client;
	int (*find_debuginfo)(void *client, const unsigned char *id, int len, char **path);
	bool tried;
};

static struct debuginfod_api *debuginfod_api(const char **why)
{
	static struct debuginfod_api api;
	void *(*begin)(void);
	void *lib;

	if (api.tried) {
		*why = api.client ? NULL : "libdebuginfod.so.1 could not be used";
		return api.client ? &api : NULL;
	}
	api.tried = true;
	lib = dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		*why = "libdebuginfod.so.1 not found (Debian package libdebuginfod1)";
		return NULL;
	}
	begin = (void *(*)(void))dlsym(lib, "debuginfod_begin");
	api.find_debuginfo = (int (*)(void *, const unsigned char *, int,
				      char **))dlsym(lib, "debuginfod_find_debuginfo");
	api.client = begin && api.find_debuginfo ? begin() : NULL;
	*why = api.client ? NULL : "libdebuginfod.so.1 could not be used";
	return api.client ? &api : NULL;
}

bool debuginfod_available(const char **why)
{
	return debuginfod_api(why) != NULL;
}

static bool try_debuginfod(struct dso *d, struct debug_file *out)
{
	struct debuginfod_api *api;
	const char *why;
	char *path = NULL;
	bool found;
	int fd;

	api = debuginfod_api(&why);
	if (!api)
		return false;
	fd = api->find_debuginfo(api->client, d->build_id, d->build_id_len, &path);
	if (fd < 0) {
		pr_debug("%s: debuginfod has no debug file: %s", d->path, strerror(-fd));
		free(path);
		return false;
	}
	found = try_fd(d, fd, path ? path : "(debuginfod)", false, "debuginfod", out);
	free(path);
	return found;
}
#else
bool debuginfod_available(const char **why)
{
	*why = "this cycread is a static build, which cannot load libdebuginfod";
	return false;
}

static bool try_debuginfod(struct dso *d, struct debug_file *out)
{
	(void)d;
	(void)out;
	return false;
}
#endif

bool debug_file_find(struct dso *d, const struct dso_search *s, struct debug_file *out)
{
	const char *root = s && s->root ? s->root : "";
	const char *ddir = s && s->debug_dir ? s->debug_dir : "/usr/lib/debug";
	char hex[2 * DSO_BUILD_ID_MAX + 1], *cand, *dir;
	const char *slash;
	bool found = false;
	int i;

	memset(out, 0, sizeof(*out));
	if (d->build_id_len >= 2) {
		build_id_hex(d->build_id, d->build_id_len, hex);
		cand = xasprintf("%s%s/.build-id/%.2s/%s.debug", root, ddir, hex, hex + 2);
		found = try_path(d, cand, false, "build-id", out);
		free(cand);
	}
	if (!found && d->debuglink && !strchr(d->debuglink, '/')) {
		slash = strrchr(d->path, '/');
		dir = slash ? xstrndup(d->path, slash - d->path) : xstrdup(".");
		for (i = 0; i < 3 && !found; i++) {
			if (i == 0)
				cand = xasprintf("%s%s/%s", root, dir, d->debuglink);
			else if (i == 1)
				cand = xasprintf("%s%s/.debug/%s", root, dir, d->debuglink);
			else
				cand = xasprintf("%s%s%s/%s", root, ddir, dir, d->debuglink);
			found = try_path(d, cand, true, ".gnu_debuglink", out);
			free(cand);
		}
		free(dir);
	}
	if (!found && s && s->debuginfod && d->build_id_len)
		found = try_debuginfod(d, out);
	return found;
}

const void *elf_section_bytes(void *elfp, const char *name, bool raw, size_t *size)
{
	Elf *elf = elfp;
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *n;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS)
			continue;
		n = elf_strptr(elf, shstrndx, sh.sh_name);
		/* ".debug_line" is also found as GNU's compressed ".zdebug_line" */
		if (!n || (strcmp(n, name) && (strncmp(n, ".z", 2) || strcmp(n + 2, name + 1))))
			continue;
		data = raw ? elf_rawdata(scn, NULL) : elf_getdata(scn, NULL);
		if (!data || !data->d_buf)
			return NULL;
		*size = data->d_size;
		return data->d_buf;
	}
	return NULL;
}

void *debug_minidebuginfo(struct dso *d, size_t *size)
{
	lzma_stream strm = LZMA_STREAM_INIT;
	size_t in_size, alloc = 1U << 16;
	const void *in;
	lzma_ret ret;
	u8 *out;

	if (!d->elf)
		return NULL;
	in = elf_section_bytes(d->elf, ".gnu_debugdata", true, &in_size);
	if (!in)
		return NULL;
	if (lzma_stream_decoder(&strm, MINIDEBUG_MAX_BYTES, 0) != LZMA_OK)
		return NULL;
	out = xmalloc(alloc);
	strm.next_in = in;
	strm.avail_in = in_size;
	strm.next_out = out;
	strm.avail_out = alloc;
	for (;;) {
		ret = lzma_code(&strm, LZMA_FINISH);
		if (ret == LZMA_STREAM_END)
			break;
		if (ret != LZMA_OK || (!strm.avail_in && strm.avail_out)) {
			pr_debug("%s: .gnu_debugdata does not unpack (xz error %d)", d->path, ret);
			goto fail;
		}
		if (!strm.avail_out) {
			if (alloc >= MINIDEBUG_MAX_BYTES) {
				pr_debug("%s: .gnu_debugdata unpacks to more than %u MiB", d->path,
					 MINIDEBUG_MAX_BYTES >> 20);
				goto fail;
			}
			out = xrealloc(out, 2 * alloc, 1);
			strm.next_out = out + alloc;
			strm.avail_out = alloc;
			alloc *= 2;
		}
	}
	*size = strm.total_out;
	lzma_end(&strm);
	return out;
fail:
	lzma_end(&strm);
	free(out);
	return NULL;
}
