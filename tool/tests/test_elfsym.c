// SPDX-License-Identifier: GPL-2.0
/*
 * test_elfsym - address -> symbol on fixtures built now: PIE and non-PIE
 * executables, a shared library, a stripped binary with a .gnu_debuglink
 * file and with a build-id debug file, a C++ binary, a multi-segment
 * executable, size-0 and aliased symbols, a deleted binary of a live
 * process, the vdso, perf JIT maps, kallsyms, and hostile ELF files.
 *
 * The fixtures print their functions' runtime addresses and their own
 * /proc/self/maps, so every expectation comes from the running program.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#include "fixtures.h"
#include "tap.h"
#include "../capture.h"
#include "../debuginfo.h"
#include "../ehframe.h"
#include "../kmod.h"
#include "../resolve.h"

#define FX_PID 1000

static const char *maps_of(const char *out)
{
	const char *m = strstr(out, "MAPS\n");

	return m ? m + 5 : "";
}

/* A resolver over the maps a fixture printed (files opened by path). */
struct fx {
	struct maps ms;
	struct resolver r;
	char *out;
};

static void fx_load(struct fx *f, const char *out, const char *debug_dir)
{
	maps_init(&f->ms, false);
	f->ms.search.debug_dir = debug_dir;
	res_init(&f->r, &f->ms, false);
	f->out = xstrdup(out);
	maps_read(&f->ms, FX_PID, 0, maps_of(out));
}

static void fx_free(struct fx *f)
{
	res_free(&f->r);
	maps_free(&f->ms);
	free(f->out);
}

static const struct frame_info *lookup(struct fx *f, u64 addr)
{
	return res_fi(&f->r, res_user(&f->r, FX_PID, 0, addr));
}

/* The function printed as @name resolves to @want at its start and inside. */
static void expect_sym(struct fx *f, const char *name, const char *want, const char *what)
{
	u64 addr = fx_addr(f->out, name);
	const struct frame_info *fi;
	char msg[256];

	ok(addr, "%s: fixture printed the address of %s", what, name);
	fi = lookup(f, addr);
	snprintf(msg, sizeof(msg), "%s: %s at its first byte", what, name);
	is_str(res_str(&f->r, fi->func), want, msg);
	is_u64(fi->off, 0, "offset 0 at the first byte");
	fi = lookup(f, addr + 2);
	snprintf(msg, sizeof(msg), "%s: %s two bytes in", what, name);
	is_str(res_str(&f->r, fi->func), want, msg);
	is_u64(fi->off, 2, "offset 2 inside");
}

static char *run_fixture(const char *bin)
{
	return fx_out("./%s", bin);
}

static void build_fixtures(void)
{
	const char *cc = "gcc -O1 -g -fno-inline";

	ok(!fx_sh("%s -fPIC -shared %s/fixtures/fx_lib.c -o libfx.so", cc, TEST_SRCDIR),
	   "build shared library");
	ok(!fx_sh("%s -fPIE -pie %s/fixtures/fx_main.c -L. -lfx -Wl,-rpath,$PWD "
		  "-Wl,--no-warn-rwx-segments -o fx_pie",
		  cc, TEST_SRCDIR),
	   "build PIE executable");
	ok(!fx_sh("%s -fno-pie -no-pie %s/fixtures/fx_main.c -L. -lfx -Wl,-rpath,$PWD "
		  "-Wl,--no-warn-rwx-segments -o fx_nopie",
		  cc, TEST_SRCDIR),
	   "build non-PIE executable");
	ok(!fx_sh("%s -fPIE -pie -DSWAP_ALIAS %s/fixtures/fx_main.c -L. -lfx -Wl,-rpath,$PWD "
		  "-Wl,--no-warn-rwx-segments -o fx_swap",
		  cc, TEST_SRCDIR),
	   "build executable with swapped alias definitions");
	ok(!fx_sh("cp fx_pie fx_strip && objcopy --only-keep-debug fx_strip fx_strip.debug && "
		  "strip --strip-all fx_strip && "
		  "objcopy --add-gnu-debuglink=fx_strip.debug fx_strip"),
	   "strip a copy and give it a .gnu_debuglink");
	ok(!fx_sh("g++ -O1 -g %s/fixtures/fx_cxx.cc -o fx_cxx", TEST_SRCDIR),
	   "build C++ executable");
}

static void test_executables(void)
{
	static const char *const bins[] = { "fx_pie", "fx_nopie", "fx_swap" };
	struct fx f;
	u32 i;

	for (i = 0; i < ARRAY_SIZE(bins); i++) {
		char *out = run_fixture(bins[i]);
		struct map *m;

		fx_load(&f, out, NULL);
		m = maps_find(&f.ms, FX_PID, 0, fx_addr(out, "global_func"));
		ok(m && m->dso, "%s: mapping of the executable found and opened", bins[i]);
		if (m && m->dso)
			is_u64(m->dso->e_type, i == 1 ? ET_EXEC : ET_DYN, "ELF type");
		expect_sym(&f, "local_func", "local_func", bins[i]);
		expect_sym(&f, "global_func", "global_func", bins[i]);
		expect_sym(&f, "lib_func", "lib_func", bins[i]);
		expect_sym(&f, "lib_static", "lib_static", bins[i]);
		/* alias choice does not depend on which name the source defined */
		is_str(res_str(&f.r, lookup(&f, fx_addr(out, "alias_target"))->func),
		       "alias_target", "aliases: the GLOBAL name that sorts first is chosen");
		/* size-0 symbol: extends to the next symbol */
		is_str(res_str(&f.r, lookup(&f, fx_addr(out, "sizeless_fn") + 3)->func),
		       "sizeless_fn", "size-0 .symtab symbol covers its code");
		ok(lookup(&f, fx_addr(out, "lib_func"))->dso ==
			   strtab_intern(&f.r.strs, "libfx.so"),
		   "shared library frame names libfx.so");
		fx_free(&f);
		free(out);
	}
}

static void test_multi_segment(void)
{
	char *out = run_fixture("fx_pie");
	u64 deltas[8];
	u32 i, nx = 0;
	struct map *m;
	struct fx f;
	bool differ = false;

	fx_load(&f, out, NULL);
	m = maps_find(&f.ms, FX_PID, 0, fx_addr(out, "far_func"));
	ok(m && m->dso, "far_func lies in a mapping of the executable");
	if (!m || !m->dso)
		goto out;
	for (i = 0; i < m->dso->nr_segs && nx < 8; i++) {
		if (!(m->dso->segs[i].flags & PF_X))
			continue;
		deltas[nx++] = m->dso->segs[i].vaddr - m->dso->segs[i].offset;
		if (nx > 1 && deltas[nx - 1] != deltas[0])
			differ = true;
	}
	ok(nx >= 2 && differ,
	   "fixture has two executable PT_LOADs with different vaddr-offset deltas");
	expect_sym(&f, "far_func", "far_func", "second executable segment");
out:
	fx_free(&f);
	free(out);
}

static void test_stripped(void)
{
	char *out = run_fixture("fx_strip"), *dbg = fx_path("dbg"), *log;
	char id[2 * DSO_BUILD_ID_MAX + 1];
	struct map *m;
	struct fx f;

	fx_load(&f, out, NULL);
	m = maps_find(&f.ms, FX_PID, 0, fx_addr(out, "local_func"));
	ok(m && m->dso && !m->dso->has_symtab, "stripped binary has no .symtab");
	expect_sym(&f, "local_func", "local_func", "debuglink");
	ok(m && m->dso && m->dso->symsrc == SYMSRC_DEBUG, "symbols came from the debug file");
	ok(m && m->dso && m->dso->debuglink && !strcmp(m->dso->debuglink, "fx_strip.debug"),
	   ".gnu_debuglink names fx_strip.debug");
	build_id_hex(m->dso->build_id, m->dso->build_id_len, id);
	fx_free(&f);

	/* the same debug file found by build-id only */
	ok(!fx_sh("mkdir -p dbg/.build-id/%.2s && mv fx_strip.debug dbg/.build-id/%.2s/%s.debug",
		  id, id, id + 2),
	   "move the debug file under .build-id/");
	verbose = 1;
	fx_stderr_begin();
	fx_load(&f, out, dbg);
	expect_sym(&f, "local_func", "local_func", "build-id debug file");
	fx_free(&f);
	log = fx_stderr_back();
	verbose = 0;
	ok(strstr(log, "symbols: debug file ") && strstr(log, ".debug (found by build-id)"),
	   "-v: 'symbols: debug file .../.build-id/xx/....debug (found by build-id)'");
	free(log);

	/* a debug file of another build: build-ids differ, it must be refused */
	ok(!fx_sh("rm -rf dbg && objcopy --only-keep-debug fx_swap fx_strip.debug"),
	   "put a foreign debug file in place");
	fx_load(&f, out, dbg);
	ok(lookup(&f, fx_addr(out, "local_func"))->reason == UR_NO_SYMBOL ||
		   lookup(&f, fx_addr(out, "local_func"))->reason == UR_NO_SYMBOLS,
	   "foreign debug file refused: local_func stays unnamed");
	ok(!strncmp(res_str(&f.r, lookup(&f, fx_addr(out, "local_func"))->func), "fx_strip+0x",
		    11) &&
		   (lookup(&f, fx_addr(out, "local_func"))->flags & FI_FDE),
	   "unnamed frame shows the file and its function's start (.eh_frame)");
	fx_free(&f);

	/*
	 * FIFOs where both debug files would be: never opened for reading, so
	 * never waited on (alarm() turns a hang into a failure); -v says why.
	 */
	ok(!fx_sh("rm -f fx_strip.debug && mkfifo fx_strip.debug && mkdir -p dbg/.build-id/%.2s && "
		  "mkfifo dbg/.build-id/%.2s/%s.debug",
		  id, id, id + 2),
	   "FIFOs as the debuglink and the build-id debug file");
	alarm(60);
	verbose = 1;
	fx_stderr_begin();
	fx_load(&f, out, dbg);
	ok(lookup(&f, fx_addr(out, "local_func"))->flags & FI_FDE,
	   "FIFO debug files skipped: local_func grouped by .eh_frame");
	fx_free(&f);
	log = fx_stderr_back();
	verbose = 0;
	alarm(0);
	ok(strstr(log, "fx_strip.debug (.gnu_debuglink) not used: not a regular file") &&
		   strstr(log, ".debug (build-id) not used: not a regular file"),
	   "-v: both FIFOs named, 'not a regular file'");
	if (!strstr(log, "not a regular file"))
		printf("# stderr: %s\n", log);
	free(log);
	ok(!fx_sh("rm -rf fx_strip.debug dbg"), "remove the FIFOs");
	free(dbg);
	free(out);
}

/* -v names where each file's symbols came from and why a debug file was refused. */
static void test_verbose_sources(void)
{
	char *out = run_fixture("fx_strip"), *log;
	struct fx f;

	ok(!fx_sh("objcopy --only-keep-debug fx_pie fx_strip.debug"), "the right debug file again");
	verbose = 1;
	fx_stderr_begin();
	fx_load(&f, out, NULL);
	lookup(&f, fx_addr(out, "local_func"));
	lookup(&f, fx_addr(out, "lib_func"));
	fx_free(&f);
	log = fx_stderr_back();
	verbose = 0;
	ok(strstr(log, "fx_strip: ") && strstr(log, "symbols: debug file ") &&
		   strstr(log, "fx_strip.debug (found by .gnu_debuglink)"),
	   "-v: 'symbols: debug file .../fx_strip.debug (found by .gnu_debuglink)'");
	ok(strstr(log, "libfx.so: ") && strstr(log, "symbols: .symtab of "),
	   "-v: the library's own .symtab");
	free(log);

	ok(!fx_sh("objcopy --only-keep-debug fx_swap fx_strip.debug"), "a foreign debug file");
	verbose = 1;
	fx_stderr_begin();
	fx_load(&f, out, NULL);
	lookup(&f, fx_addr(out, "local_func"));
	fx_free(&f);
	log = fx_stderr_back();
	verbose = 0;
	ok(strstr(log,
		  "fx_strip.debug (.gnu_debuglink) not used: its build-id is another build's") !=
		   NULL,
	   "-v: the foreign debug file named, with the reason it was refused");
	ok(strstr(log, "fx_strip only (stripped, no debug file)") != NULL,
	   "-v: what is left instead (.dynsym and PLT only)");
	free(log);
	free(out);
}

/*
 * Without build-ids only .gnu_debuglink's CRC32 tells the right debug file:
 * the file it was made from is taken, the same file with one byte more is
 * refused, and -v says so.
 */
static void test_debuglink_crc(void)
{
	char *out, *log;
	struct fx f;

	ok(!fx_sh("gcc -O1 -g -fno-inline -fPIE -pie %s/fixtures/fx_main.c -L. -lfx "
		  "-Wl,-rpath,$PWD -Wl,--no-warn-rwx-segments -Wl,--build-id=none -o fx_nobid && "
		  "objcopy --only-keep-debug fx_nobid fx_nobid.debug && strip --strip-all fx_nobid && "
		  "objcopy --add-gnu-debuglink=fx_nobid.debug fx_nobid",
		  TEST_SRCDIR),
	   "a stripped binary without build-id, with a .gnu_debuglink");
	out = run_fixture("fx_nobid");
	fx_load(&f, out, NULL);
	expect_sym(&f, "local_func", "local_func", "debuglink by CRC32");
	fx_free(&f);

	ok(!fx_sh("printf x >> fx_nobid.debug"), "one byte appended to the debug file");
	verbose = 1;
	fx_stderr_begin();
	fx_load(&f, out, NULL);
	ok(!(lookup(&f, fx_addr(out, "local_func"))->flags & FI_RESOLVED) ||
		   strcmp(res_str(&f.r, lookup(&f, fx_addr(out, "local_func"))->func),
			  "local_func"),
	   "debug file with another CRC32 refused: local_func unnamed");
	fx_free(&f);
	log = fx_stderr_back();
	verbose = 0;
	ok(strstr(log, "fx_nobid.debug (.gnu_debuglink) not used: its CRC32 is not the one "
		       ".gnu_debuglink gives") != NULL,
	   "-v: the debug file named, with its CRC32 as the reason");
	free(log);
	free(out);
}

/*
 * MiniDebugInfo, made the way distributions make it: the function symbols
 * .dynsym lacks, in an xz-compressed ELF file in .gnu_debugdata of a fully
 * stripped binary.  Every address of every function gets the function name
 * addr2line -f finds in the unstripped original.
 */
static void test_minidebuginfo(void)
{
	char *out, *bin = fx_path("fx_mini"), *theirs, *list = fx_path("mini.addrs"), *log;
	struct sbuf ours = { 0 }, addrs = { 0 };
	u32 i, n = 0, differ = 0;
	struct map *m;
	struct fx f;
	FILE *fp;

	if (!have_tool("xz")) {
		tap_skip("MiniDebugInfo: no xz");
		free(bin);
		free(list);
		return;
	}
	ok(!fx_sh("nm -D fx_pie --format=posix --defined-only | awk '{ print $1 }' | sort > dyn && "
		  "nm fx_pie --format=posix --defined-only | "
		  "awk '$2 ~ /^[TtW]$/ { print $1 }' | sort > funcs && "
		  "comm -13 dyn funcs > keep && "
		  "objcopy --only-keep-debug fx_pie mini.full && "
		  "objcopy -S --remove-section .comment --keep-symbols=keep mini.full mini && "
		  "rm -f mini.xz && xz -k mini && "
		  "strip --strip-all -o fx_mini fx_pie && "
		  "objcopy --add-section .gnu_debugdata=mini.xz fx_mini"),
	   "MiniDebugInfo binary made with objcopy and xz");
	out = run_fixture("fx_mini");
	verbose = 1;
	fx_stderr_begin();
	fx_load(&f, out, NULL);
	m = maps_find(&f.ms, FX_PID, 0, fx_addr(out, "local_func"));
	ok(m && m->dso && !m->dso->has_symtab, "no .symtab in the binary");
	expect_sym(&f, "local_func", "local_func", "MiniDebugInfo");
	log = fx_stderr_back();
	verbose = 0;
	ok(strstr(log, "fx_mini: ") && strstr(log, "symbols: MiniDebugInfo (.gnu_debugdata) of "),
	   "-v: 'symbols: MiniDebugInfo (.gnu_debugdata) of .../fx_mini'");
	free(log);
	ok(m && m->dso && m->dso->symsrc == SYMSRC_MINIDEBUG, "symbols from .gnu_debugdata");
	for (i = 0; m && m->dso && i < m->dso->nr_syms; i++) {
		const struct dso_sym *s = &m->dso->syms[i];
		u64 v;

		/* PLT stubs: addr2line has no name for them */
		if (!(s->flags & DSYM_SIZED) || s->type != STT_FUNC || (s->flags & DSYM_PLT))
			continue;
		for (v = s->start; v < s->end; v += 3) {
			sbuf_printf(&addrs, "0x%llx\n", v);
			sbuf_printf(&ours, "%s\n", dso_sym_name(m->dso, s));
			n++;
		}
	}
	fp = fopen(list, "w");
	if (fp) {
		fputs(addrs.buf ? addrs.buf : "", fp);
		fclose(fp);
	}
	theirs = fx_out("addr2line -f -C -e fx_pie < %s | awk 'NR %% 2 == 1'", list);
	{
		char *a = ours.buf, *b = theirs;

		while (a && b && *a && *b) {
			size_t la = strcspn(a, "\n"), lb = strcspn(b, "\n");

			if (la != lb || strncmp(a, b, la)) {
				if (differ++ < 3)
					printf("# cycread %.*s, addr2line %.*s\n", (int)la, a,
					       (int)lb, b);
			}
			a += la + (a[la] ? 1 : 0);
			b += lb + (b[lb] ? 1 : 0);
		}
	}
	ok(n > 20 && !differ,
	   "%u addresses: the function addr2line names in the original (%u differ)", n, differ);
	free(theirs);
	sbuf_free(&ours);
	sbuf_free(&addrs);
	fx_free(&f);
	free(out);
	free(bin);
	free(list);
}

/*
 * --debuginfod, against a server on this machine serving the debug file
 * by build-id: off by default, used when asked.
 */
static void test_debuginfod(void)
{
	char id[2 * DSO_BUILD_ID_MAX + 1], *out, *log, *port_line, *url, *cache;
	const char *why;
	struct map *m;
	struct fx f;
	int tries;

	if (!debuginfod_available(&why)) {
		tap_skip(why);
		return;
	}
	ok(!fx_sh("strip --strip-all -o fx_dbgd fx_pie && objcopy --only-keep-debug fx_pie dbgd.debug"),
	   "a stripped binary and its debug file, no debuglink");
	out = run_fixture("fx_dbgd");
	fx_load(&f, out, NULL);
	m = maps_find(&f.ms, FX_PID, 0, fx_addr(out, "local_func"));
	if (!m || !m->dso) {
		ok(0, "fixture mapped");
		fx_free(&f);
		free(out);
		return;
	}
	build_id_hex(m->dso->build_id, m->dso->build_id_len, id);
	fx_free(&f);
	ok(!fx_sh("mkdir -p srv/buildid/%s && cp dbgd.debug srv/buildid/%s/debuginfo && "
		  "(python3 -u -m http.server 0 --bind 127.0.0.1 --directory srv > srv.log 2>&1 & "
		  "echo $! > srv.pid)",
		  id, id),
	   "a local debuginfod-style server");
	for (tries = 0, port_line = NULL; tries < 50; tries++) {
		log = fx_out("cat srv.log 2>/dev/null || true");
		port_line = strstr(log, " port ") ? xstrdup(strstr(log, " port ") + 6) : NULL;
		free(log);
		if (port_line)
			break;
		usleep(100000);
	}
	ok(port_line != NULL, "server listening");
	if (!port_line)
		goto out;
	url = xasprintf("http://127.0.0.1:%d", atoi(port_line));
	cache = fx_path("dcache");
	setenv("DEBUGINFOD_URLS", url, 1);
	setenv("DEBUGINFOD_CACHE_PATH", cache, 1);
	fx_load(&f, out, NULL);
	ok(!(lookup(&f, fx_addr(out, "local_func"))->flags & FI_RESOLVED),
	   "server up, DEBUGINFOD_URLS set, no --debuginfod: nothing asked, local_func unnamed");
	fx_free(&f);
	fx_load(&f, out, NULL);
	f.ms.search.debuginfod = true;
	expect_sym(&f, "local_func", "local_func", "--debuginfod");
	m = maps_find(&f.ms, FX_PID, 0, fx_addr(out, "local_func"));
	ok(m && m->dso && m->dso->symsrc == SYMSRC_DEBUG && m->dso->symsrc_how &&
		   !strcmp(m->dso->symsrc_how, "debuginfod"),
	   "symbols from the debug file debuginfod gave");
	fx_free(&f);
	unsetenv("DEBUGINFOD_URLS");
	free(url);
	free(cache);
	free(port_line);
out:
	fx_sh("kill $(cat srv.pid)");
	free(out);
}

/* The FDE ranges readelf lists for @bin: "start end" lines, hex. */
static char *fde_list(const char *bin)
{
	return fx_out("readelf --debug-dump=frames %s | "
		      "sed -n 's/.* FDE .*pc=\\([0-9a-f]*\\)\\.\\.\\([0-9a-f]*\\)$/\\1 \\2/p'",
		      bin);
}

/* A whole file mapped at 0x10000000 in process FX_PID + 1: address = base + file offset. */
static struct dso *map_whole(struct fx *f, const char *bin)
{
	char *text = xasprintf("10000000-20000000 r-xp 00000000 00:00 0 %s\n", bin);
	struct map *m;

	maps_init(&f->ms, false);
	res_init(&f->r, &f->ms, false);
	f->out = xstrdup("");
	maps_read(&f->ms, FX_PID + 1, 0, text);
	free(text);
	m = maps_find(&f->ms, FX_PID + 1, 0, 0x10000000);
	if (m && m->dso)
		dso_load_syms(m->dso, &(struct dso_search){ .root = "/nonexistent" });
	return m ? m->dso : NULL;
}

static u64 whole_addr(const struct dso *d, u64 vaddr)
{
	u32 i;

	for (i = 0; i < d->nr_segs; i++)
		if (vaddr >= d->segs[i].vaddr && vaddr - d->segs[i].vaddr < d->segs[i].filesz)
			return 0x10000000 + vaddr - d->segs[i].vaddr + d->segs[i].offset;
	return 0;
}

struct fde_check {
	u32 fdes; /* FDE ranges checked */
	u32 addrs;
	u32 wrong; /* addresses not named base+0xSTART of their FDE */
	u32 named; /* FDE ranges that a symbol names instead */
};

/* Every few bytes of every FDE of @bin: named by a symbol, or base+0xSTART. */
static struct fde_check check_fdes(struct fx *f, struct dso *d, const char *bin)
{
	char *list = fde_list(bin), *line, *next;
	struct fde_check c = { 0 };
	char want[256];

	for (line = list; line && *line; line = next) {
		unsigned long long start, end, v;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (sscanf(line, "%llx %llx", &start, &end) != 2 || !whole_addr(d, start))
			continue;
		if (dso_find(d, start)) {
			c.named++;
			continue;
		}
		c.fdes++;
		snprintf(want, sizeof(want), "%s+0x%llx", d->name, start);
		for (v = start; v < end; v += 1 + (end - start) / 16) {
			const struct frame_info *fi =
				res_fi(&f->r, res_user(&f->r, FX_PID + 1, 0, whole_addr(d, v)));

			c.addrs++;
			if (dso_find(d, v))
				continue; /* a symbol inside the range wins */
			if (strcmp(res_str(&f->r, fi->func), want) || !(fi->flags & FI_FDE) ||
			    fi->off != v - start) {
				if (c.wrong++ < 3)
					printf("# 0x%llx: %s, want %s\n", v,
					       res_str(&f->r, fi->func), want);
			}
		}
	}
	free(list);
	return c;
}

/*
 * A fully stripped fixture: each of its functions is one group, named for
 * the function's start, which the unstripped original's .symtab confirms;
 * a capture keeps the groups.
 */
static void test_eh_frame_groups(void)
{
	char *bin = fx_path("fx_allstrip"), *cap = fx_path("fde.cyc"), *pie = fx_path("fx_pie");
	u64 local = 0, global = 0;
	struct fde_check c;
	struct report rep;
	struct profile p, q;
	struct dso *d, *orig;
	struct fx f, g;
	u32 i;

	ok(!fx_sh("strip --strip-all -o fx_allstrip fx_pie"), "strip every symbol of a copy");
	d = map_whole(&f, bin);
	orig = dso_open_path(pie, &(const char *){ NULL });
	ok(d && orig && !d->has_symtab, "the copy has no .symtab");
	if (!d || !orig)
		goto out;
	dso_load_syms(orig, NULL);
	c = check_fdes(&f, d, bin);
	ok(c.fdes >= 6 && !c.wrong,
	   "%u FDE ranges, %u addresses: each named file+0xSTART of its FDE (%u wrong)", c.fdes,
	   c.addrs, c.wrong);
	for (i = 0; i < orig->nr_syms; i++) {
		const char *name = dso_sym_name(orig, &orig->syms[i]);

		if (!strcmp(name, "local_func"))
			local = orig->syms[i].start;
		if (!strcmp(name, "global_func"))
			global = orig->syms[i].start;
	}
	{
		char wl[64], wg[64];
		const struct frame_info *a, *b;

		snprintf(wl, sizeof(wl), "fx_allstrip+0x%llx", local);
		snprintf(wg, sizeof(wg), "fx_allstrip+0x%llx", global);
		a = res_fi(&f.r, res_user(&f.r, FX_PID + 1, 0, whole_addr(d, local + 3)));
		is_str(res_str(&f.r, a->func), wl, "local_func's samples: the group of its start");
		b = res_fi(&f.r, res_user(&f.r, FX_PID + 1, 0, whole_addr(d, global + 1)));
		is_str(res_str(&f.r, b->func), wg, "global_func's: another group, its own start");
	}
	/* a capture keeps the groups for offline reports */
	prof_init(&p);
	{
		u64 u[1] = { whole_addr(d, local + 3) };
		struct cycsample_sample *s = xcalloc(1, sizeof(*s) + 8);
		const char *why;
		u32 size;

		s->hdr.type = CYCSAMPLE_REC_SAMPLE;
		s->hdr.size = sizeof(*s) + 8;
		s->pid = s->tid = FX_PID + 1;
		s->flags = CYCSAMPLE_SAMPLE_USER;
		s->nr_user = 1;
		s->pc = u[0];
		memcpy(s->frames, u, 8);
		prof_add_record(&p, s, s->hdr.size, 0, &size, &why);
		free(s);
	}
	prof_sort(&p);
	report_build(&rep, &p, &f.r);
	ok(!capture_write(cap, &rep, &f.ms), "capture of a sample in a group written");
	report_free(&rep);
	prof_init(&q);
	maps_init(&g.ms, false);
	res_init(&g.r, &g.ms, false);
	g.out = xstrdup("");
	ok(!capture_read(cap, &q, &g.ms, &g.r, "/nonexistent", (char[256]){ 0 }, 256),
	   "read back without the binary");
	{
		char wl[64];
		const struct frame_info *a =
			res_fi(&g.r, res_user(&g.r, FX_PID + 1, 0, whole_addr(d, local + 2)));

		snprintf(wl, sizeof(wl), "fx_allstrip+0x%llx", local);
		is_str(res_str(&g.r, a->func), wl, "offline: the stored group names the address");
		ok(a->flags & FI_FDE, "offline: still marked as an .eh_frame group");
	}
	fx_free(&g);
	prof_free(&q);
	prof_free(&p);
out:
	dso_free(orig);
	fx_free(&f);
	free(bin);
	free(cap);
	free(pie);
}

/*
 * Debian's own stripped liblzma (the example, on the host's
 * architecture): its unnamed functions are told apart by .eh_frame.
 */
static void test_eh_frame_liblzma(void)
{
	/* the host's, and the arm64 one the guests get (libdw-dev:arm64 pulls it in) */
	static const char *const paths[] = { "/usr/lib/x86_64-linux-gnu/liblzma.so.5",
					     "/usr/lib/aarch64-linux-gnu/liblzma.so.5" };
	char real[4096];
	struct fde_check c;
	struct dso *d;
	struct fx f;
	u32 i, seen = 0;

	for (i = 0; i < ARRAY_SIZE(paths); i++) {
		if (!realpath(paths[i], real))
			continue;
		seen++;
		d = map_whole(&f, real);
		ok(d && !d->has_symtab, "%s: Debian's build, stripped (no .symtab)", real);
		if (d) {
			c = check_fdes(&f, d, real);
			ok(c.fdes > 100 && !c.wrong,
			   "%u unnamed functions told apart by their FDEs (%u addresses, %u wrong; "
			   "%u named by .dynsym)",
			   c.fdes, c.addrs, c.wrong, c.named);
		}
		fx_free(&f);
	}
	if (!seen)
		tap_skip("no liblzma.so.5 on this machine");
}

/*
 * PLT stubs named SYMBOL@plt: every label objdump -d prints in .plt,
 * .plt.sec and .plt.got names the same stub here, for x86_64 (lazy PLT,
 * and IBT's .plt.sec with .plt.got) and an arm64 build.
 */
static void check_plt(const char *bin, const char *objdump, const char *what)
{
	char *labels = fx_out("%s -d -j .plt -j .plt.sec -j .plt.got %s 2>/dev/null | "
			      "sed -n 's/^\\([0-9a-f]*\\) <\\(.*@plt\\)>:$/\\1 \\2/p'",
			      objdump, bin);
	char *path = fx_path(bin), *line, *next, name[256];
	u32 n = 0, differ = 0;
	struct dso *d;
	struct fx f;

	d = map_whole(&f, path);
	for (line = labels; d && line && *line; line = next) {
		unsigned long long addr;
		const struct frame_info *fi;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (sscanf(line, "%llx %255s", &addr, name) != 2)
			continue;
		n++;
		fi = res_fi(&f.r, res_user(&f.r, FX_PID + 1, 0, whole_addr(d, addr + 3)));
		if (strcmp(res_str(&f.r, fi->func), name) || fi->off != 3) {
			if (differ++ < 3)
				printf("# 0x%llx: %s, objdump says %s\n", addr,
				       res_str(&f.r, fi->func), name);
		}
	}
	ok(n >= 4 && !differ, "%s: %u PLT stubs named as objdump names them (%u differ)", what, n,
	   differ);
	fx_free(&f);
	free(labels);
	free(path);
}

static void test_plt(void)
{
	const char *src = TEST_SRCDIR "/fixtures/fx_plt.c";

	ok(!fx_sh("gcc -O1 %s -o fx_plt && gcc -O1 -fcf-protection=full -Wl,-z,ibtplt %s -o fx_ibt",
		  src, src),
	   "build PLT fixtures (lazy PLT; IBT with .plt.sec and .plt.got)");
	check_plt("fx_plt", "objdump", "x86_64 .plt");
	check_plt("fx_ibt", "objdump", "x86_64 .plt.sec and .plt.got");
	if (have_tool("aarch64-linux-gnu-gcc")) {
		ok(!fx_sh("aarch64-linux-gnu-gcc -O1 %s -o fx_plt_a64", src), "build it for arm64");
		check_plt("fx_plt_a64", "aarch64-linux-gnu-objdump", "arm64 .plt");
	} else {
		tap_skip("no arm64 cross compiler");
	}
}

/*
 * A Rust-mangled symbol table (legacy and v0 names): every address of every
 * function named as addr2line -f -C names it, legacy hashes dropped;
 * --no-demangle keeps the symbol.
 */
static void test_rust_names(void)
{
	char *bin = fx_path("fx_rust"), *list = fx_path("rust.addrs"), *theirs;
	struct sbuf ours = { 0 }, addrs = { 0 };
	u32 i, n = 0, differ = 0;
	struct dso *d;
	struct fx f;
	FILE *fp;

	ok(!fx_sh("gcc -O1 %s/fixtures/fx_rust.c -o fx_rust", TEST_SRCDIR),
	   "build the Rust-named fixture (no -g: names from .symtab)");
	d = map_whole(&f, bin);
	for (i = 0; d && i < d->nr_syms; i++) {
		const struct dso_sym *s = &d->syms[i];
		u64 v;

		if (!(s->flags & DSYM_SIZED) || s->type != STT_FUNC || (s->flags & DSYM_PLT))
			continue;
		for (v = s->start; v < s->end; v++) {
			const struct frame_info *fi =
				res_fi(&f.r, res_user(&f.r, FX_PID + 1, 0, whole_addr(d, v)));

			sbuf_printf(&addrs, "0x%llx\n", v);
			sbuf_printf(&ours, "%s\n", res_str(&f.r, fi->func));
			n++;
		}
	}
	fp = fopen(list, "w");
	if (fp) {
		fputs(addrs.buf ? addrs.buf : "", fp);
		fclose(fp);
	}
	theirs = fx_out("addr2line -f -C -e fx_rust < %s | awk 'NR %% 2 == 1'", list);
	{
		char *a = ours.buf, *b = theirs;

		while (a && b && *a && *b) {
			size_t la = strcspn(a, "\n"), lb = strcspn(b, "\n");

			if ((la != lb || strncmp(a, b, la)) && differ++ < 3)
				printf("# cycread %.*s, addr2line %.*s\n", (int)la, a, (int)lb, b);
			a += la + (a[la] ? 1 : 0);
			b += lb + (b[lb] ? 1 : 0);
		}
	}
	ok(n > 20 && !differ, "%u addresses named as addr2line -f -C names them (%u differ)", n,
	   differ);
	ok(strstr(ours.buf ? ours.buf : "", "core::fmt::write\n") &&
		   strstr(ours.buf ? ours.buf : "", "mycrate::mod::foo\n"),
	   "legacy without its hash (core::fmt::write), v0 (mycrate::mod::foo)");
	fx_free(&f);
	d = map_whole(&f, bin);
	f.r.demangle = false;
	for (i = 0; d && i < d->nr_syms; i++)
		if (!strcmp(dso_sym_name(d, &d->syms[i]), "_RNvNtCs1234_7mycrate3mod3foo"))
			is_str(res_str(&f.r, res_fi(&f.r, res_user(&f.r, FX_PID + 1, 0,
								   whole_addr(d, d->syms[i].start)))
						     ->func),
			       "_RNvNtCs1234_7mycrate3mod3foo", "--no-demangle keeps the v0 name");
	fx_free(&f);
	free(theirs);
	sbuf_free(&ours);
	sbuf_free(&addrs);
	free(bin);
	free(list);
}

/* fx_labels.S's label @name: its value, and its end when it has a size (else 0). */
static u64 label_at(const char *name, u64 *end)
{
	char *out = fx_out("readelf -sW fx_labels.so | awk '$8 == \"%s\" { print $2, $3 }'", name);
	unsigned long long v = 0, size = 0;

	if (!out || sscanf(out, "%llx %llu", &v, &size) != 2)
		v = size = 0;
	free(out);
	if (end)
		*end = size ? v + size : 0;
	return v;
}

/*
 * The labels of fx_labels.S, every byte: sized ones name their bytes as
 * addr2line -f names them; a local one without a size names none
 * (addr2line takes it; perf and cycread do not, or each branch target
 * would split its function); a sized local label neither cuts short a
 * global label without a size that holds it nor wins over one at its start.
 */
static void test_asm_labels(void)
{
	static const struct {
		const char *from, *to; /* bytes [from, to); to NULL: from's end */
		const char *want; /* NULL: named by no label */
	} spans[] = {
		{ "gfunc", "lsized", "gfunc" }, { "lsized", "lbare", "lsized" },
		{ "lbare", "glabel", NULL },	{ "glabel", "lhelp", "glabel" },
		{ "lhelp", NULL, "lhelp" },	{ "lhelp", "galias", "glabel" },
		{ "galias", "gend", "galias" }, { "gend", NULL, "gend" },
	};
	char *bin = fx_path("fx_labels.so"), *theirs;
	u32 i, wrong = 0, n = 0;
	u64 lsized, linner;
	struct dso *d;
	struct fx f;

	ok(!fx_sh("gcc -shared -nostdlib %s/fixtures/fx_labels.S -o fx_labels.so", TEST_SRCDIR),
	   "build the assembly labels fixture");
	d = map_whole(&f, bin);
	for (i = 0; d && i < sizeof(spans) / sizeof(spans[0]); i++) {
		u64 end, from = label_at(spans[i].from, &end), to, v;

		/* "lhelp" to "galias": from lhelp's end */
		if (spans[i].to && !strcmp(spans[i].from, "lhelp"))
			from = end;
		to = spans[i].to ? label_at(spans[i].to, NULL) : end;
		if (!from || to <= from) {
			wrong++;
			printf("# %s: no such span in the fixture\n", spans[i].from);
			continue;
		}
		for (v = from; v < to; v++, n++) {
			u32 idx = res_user(&f.r, FX_PID + 1, 0, whole_addr(d, v));
			const char *name = res_str(&f.r, res_fi(&f.r, idx)->func);
			bool bad = spans[i].want ? strcmp(name, spans[i].want) != 0
						 : !strncmp(name, "l", 1) || !strncmp(name, "g", 1);

			if (bad && wrong++ < 4)
				printf("# 0x%llx: %s, expected %s\n", (unsigned long long)v, name,
				       spans[i].want ? spans[i].want : "no label's name");
		}
	}
	ok(n > 20 && !wrong,
	   "%u bytes: gfunc, lsized through linner, lbare named by none, glabel around lhelp, "
	   "galias over lalias, gend",
	   n);
	lsized = label_at("lsized", NULL);
	linner = label_at("linner", NULL);
	theirs = fx_out("printf '0x%llx\\n0x%llx\\n' | addr2line -f -e fx_labels.so | "
			"awk 'NR %% 2 == 1'",
			(unsigned long long)lsized, (unsigned long long)linner);
	is_str(theirs, "lsized\nlsized\n", "addr2line names lsized and linner's bytes so too");
	fx_free(&f);
	free(theirs);
	free(bin);
}

static void test_cxx(void)
{
	char *out = run_fixture("fx_cxx");
	struct fx f;

	fx_load(&f, out, NULL);
	expect_sym(&f, "compute", "demo::util::compute(int)", "C++");
	expect_sym(&f, "twice", "int demo::twice<int>(int)", "C++ template");
	expect_sym(&f, "spin", "demo::Widget::spin(int)", "C++ member");
	f.r.demangle = false;
	res_forget(&f.r);
	is_str(res_str(&f.r, lookup(&f, fx_addr(out, "compute") + 1)->func),
	       "_ZN4demo4util7computeEi", "--no-demangle keeps the mangled name");
	fx_free(&f);
	free(out);
}

/* A live process whose binary is deleted still resolves through map_files. */
static void test_deleted(void)
{
	char buf[65536], *bin = fx_path("fx_del");
	int in[2], outp[2];
	size_t len = 0;
	ssize_t n;
	struct maps ms;
	struct resolver r;
	pid_t pid;

	if (geteuid()) {
		tap_skip("deleted binary: /proc/PID/map_files needs root");
		free(bin);
		return;
	}
	ok(!fx_sh("cp fx_pie fx_del"), "copy the executable");
	if (pipe(in) || pipe(outp))
		return;
	pid = fork();
	if (!pid) {
		dup2(in[0], 0);
		dup2(outp[1], 1);
		close(in[1]);
		close(outp[0]);
		execl(bin, bin, "wait", (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(outp[1]);
	while (len < sizeof(buf) - 1 && (n = read(outp[0], buf + len, sizeof(buf) - 1 - len)) > 0) {
		len += n;
		buf[len] = '\0';
		if (strstr(buf, "END\n"))
			break;
	}
	buf[len] = '\0';
	ok(!unlink(bin), "delete the binary while it runs");
	maps_init(&ms, true);
	res_init(&r, &ms, true);
	maps_read(&ms, pid, 0, NULL);
	is_str(res_str(&r, res_fi(&r, res_user(&r, pid, 0, fx_addr(buf, "local_func")))->func),
	       "local_func", "deleted binary: local_func resolved");
	ok(maps_find(&ms, pid, 0, fx_addr(buf, "local_func")) &&
		   maps_find(&ms, pid, 0, fx_addr(buf, "local_func"))->deleted,
	   "mapping marked (deleted)");
	res_free(&r);
	maps_free(&ms);
	close(in[1]);
	close(outp[0]);
	waitpid(pid, NULL, 0);
	free(bin);
}

static void test_vdso(void)
{
	struct maps ms;
	struct resolver r;
	struct map *m = NULL;
	const struct frame_info *fi;
	u64 base = getauxval(AT_SYSINFO_EHDR);
	u32 i;

	if (!base) {
		tap_skip("no vdso");
		return;
	}
	maps_init(&ms, true);
	res_init(&r, &ms, true);
	maps_read(&ms, getpid(), 0, NULL);
	m = maps_find(&ms, getpid(), 0, base);
	ok(m && m->kind == MAP_VDSO && m->dso, "[vdso] mapped and read");
	if (m && m->dso) {
		dso_load_syms(m->dso, NULL);
		for (i = 0; i < m->dso->nr_syms; i++)
			if (!strcmp(dso_sym_name(m->dso, &m->dso->syms[i]), "__vdso_clock_gettime"))
				break;
		ok(i < m->dso->nr_syms, "vdso has __vdso_clock_gettime");
		if (i < m->dso->nr_syms) {
			u64 vaddr = m->dso->syms[i].start, off = 0;
			u32 s;

			for (s = 0; s < m->dso->nr_segs; s++) {
				const struct dso_seg *g = &m->dso->segs[s];

				if (vaddr >= g->vaddr && vaddr < g->vaddr + g->filesz)
					off = vaddr - g->vaddr + g->offset;
			}
			fi = res_fi(&r, res_user(&r, getpid(), 0, m->start + off - m->pgoff + 1));
			is_str(res_str(&r, fi->func), "__vdso_clock_gettime",
			       "vdso address resolves through the vdso image");
			is_str(res_str(&r, fi->dso), "[vdso]", "vdso frame names [vdso]");
		}
	}
	res_free(&r);
	maps_free(&ms);
}

/* Our own [vdso] line of /proc/self/maps (allocated), or NULL. */
static char *own_vdso_line(u64 *start, u64 *end)
{
	char *maps = fx_out("cat /proc/%d/maps", (int)getpid()), *line, *ret = NULL;
	struct map m;

	for (line = maps; line && *line && !ret; line = strchr(line, '\n') + 1) {
		if (maps_parse_line(line, &m) && m.kind == MAP_VDSO) {
			*start = m.start;
			*end = m.end;
			ret = xstrndup(line, strcspn(line, "\n"));
		}
		free(m.path);
		if (!strchr(line, '\n'))
			break;
	}
	free(maps);
	return ret;
}

/*
 * [vdso] of processes under a made-up /proc: a native task's image is read
 * once and given to every native task of that size without reading; a
 * 32-bit task's (below 4 GiB) is never taken for ours when unreadable.
 */
static void test_vdso_once(void)
{
	char *root = fx_path("vproc"), *line;
	struct map *a, *b, *c;
	struct maps ms;
	u64 start = 0, end = 0;

	line = own_vdso_line(&start, &end);
	if (!line || start < 1ULL << 32) {
		tap_skip("no native [vdso] above 4 GiB");
		free(line);
		free(root);
		return;
	}
	ok(!fx_sh("rm -rf vproc && mkdir -p vproc/100 vproc/101/mem vproc/102/mem && "
		  "ln -s /proc/%d/mem vproc/100/mem && echo '%s' > vproc/100/maps && "
		  "echo '%llx-%llx r-xp 00000000 00:00 0 [vdso]' > vproc/101/maps && "
		  "echo '%llx-%llx r-xp 00000000 00:00 0 [vdso]' > vproc/102/maps",
		  (int)getpid(), line, (unsigned long long)start + 0x100000,
		  (unsigned long long)end + 0x100000, 0x10000ULL, 0x10000ULL + end - start),
	   "a /proc with three processes' [vdso]");
	maps_init(&ms, true);
	ms.proc_root = root;
	maps_read(&ms, 100, 0, NULL);
	a = maps_find(&ms, 100, 0, start);
	ok(a && a->dso, "the first native [vdso] is read from the process");
	is_u64(ms.nr_vdso_reads, 1, "one read");
	/* 101's mem is unreadable (a directory): it must not be needed */
	maps_read(&ms, 101, 0, NULL);
	b = maps_find(&ms, 101, 0, start + 0x100000);
	ok(b && a && b->dso == a->dso, "a native [vdso] of the same size: the same image");
	is_u64(ms.nr_vdso_reads, 1, "... without reading it");
	maps_read(&ms, 102, 0, NULL);
	c = maps_find(&ms, 102, 0, 0x10000);
	ok(c && !c->dso && c->open_err, "an unreadable 32-bit [vdso] gets no dso, not ours");
	is_u64(ms.nr_vdso_reads, 2, "a 32-bit task's [vdso] is read, not assumed");
	maps_free(&ms);
	free(line);
	free(root);
}

/*
 * A re-read that finds the maps as they were adds nothing and parses
 * nothing; a changed text or a new generation is parsed.
 */
static void test_maps_unchanged(void)
{
	char *root = fx_path("uproc"), *lib = fx_path("libfx.so");
	struct maps ms;
	u32 nr;

	ok(!fx_sh("rm -rf uproc && mkdir -p uproc/200 && "
		  "echo '7f0000000000-7f0000001000 r-xp 00000000 00:00 0 [anon:x]' > uproc/200/maps"),
	   "a /proc with one process");
	maps_init(&ms, true);
	ms.proc_root = root;
	maps_read(&ms, 200, 0, NULL);
	nr = ms.nr_all;
	maps_read(&ms, 200, 0, NULL);
	is_u64(ms.nr_maps_reads, 2, "maps read twice");
	is_u64(ms.nr_maps_same, 1, "the second time as it was");
	is_u64(ms.nr_all, nr, "nothing added");
	ok(!fx_sh("echo '7f0000100000-7f0000101000 r-xp 00000000 00:00 0 %s' >> uproc/200/maps",
		  lib),
	   "the process maps a library");
	maps_read(&ms, 200, 0, NULL);
	is_u64(ms.nr_maps_same, 1, "a changed text is parsed");
	ok(maps_find(&ms, 200, 0, 0x7f0000100000) != NULL, "... and its new mapping found");
	maps_exec(&ms, 200, 5);
	is_u64(ms.nr_maps_same, 1, "the same text in a new generation is parsed");
	ok(maps_find(&ms, 200, 5, 0x7f0000000000) &&
		   maps_find(&ms, 200, 5, 0x7f0000000000)->gen_time == 5,
	   "... and its mappings belong to that generation");
	maps_free(&ms);
	free(root);
	free(lib);
}

/* The file a frame of @pid at @time in the resolver falls in ("" when none). */
static const char *file_at(struct resolver *r, u32 pid, u64 time, u64 addr)
{
	return res_str(r, res_fi(r, res_user(r, pid, time, addr))->dso);
}

/*
 * The resolver's fast cache across an EXEC: an answer found after the
 * newest generation serves later samples, never one from before it (out
 * of time order, as rings drain); a mapping added empties it.
 */
static void test_fast_generations(void)
{
	char *lib = fx_path("libfx.so"), *pie = fx_path("fx_pie"), *cxx = fx_path("fx_cxx");
	const u64 addr = 0x7f0000000100;
	struct resolver r;
	struct maps ms;
	char *text;
	u32 i, wrong = 0;

	maps_init(&ms, false);
	text = xasprintf("7f0000000000-7f0000001000 r-xp 00000000 00:00 0 %s\n", lib);
	maps_read(&ms, 600, 0, text);
	free(text);
	text = xasprintf("7f0000000000-7f0000001000 r-xp 00000000 00:00 0 %s\n", pie);
	maps_read(&ms, 600, 100, text);
	free(text);
	res_init(&r, &ms, false);
	for (i = 0; i < 4; i++) {
		/* after, before, at and after the EXEC, twice over: each from the cache the second time */
		static const u64 times[] = { 150, 50, 100, 99 };
		const char *want = times[i] >= 100 ? "fx_pie" : "libfx.so";
		u32 pass;

		for (pass = 0; pass < 2; pass++)
			if (strcmp(file_at(&r, 600, times[i], addr), want) && wrong++ < 3)
				printf("# time %llu, pass %u: %s, expected %s\n",
				       (unsigned long long)times[i], pass,
				       file_at(&r, 600, times[i], addr), want);
	}
	ok(!wrong, "an EXEC at 100: samples at 150 and 100 in fx_pie, at 50 and 99 in libfx.so");
	text = xasprintf("7f0000000000-7f0000001000 r-xp 00000000 00:00 0 %s\n", cxx);
	maps_read(&ms, 600, 200, text);
	free(text);
	is_str(file_at(&r, 600, 250, addr), "fx_cxx", "a later EXEC's mapping replaces the answer");
	is_str(file_at(&r, 600, 150, addr), "fx_pie", "... not for a sample before it");
	res_free(&r);
	maps_free(&ms);
	free(lib);
	free(pie);
	free(cxx);
}

/*
 * MMAP records: a mapping the kernel reported joins the generation of the
 * process's last EXEC (read nothing from /proc), its file opened, its
 * " (deleted)" taken off; the same record twice adds one mapping; one
 * drained after a later EXEC keeps its own time as generation.
 */
static void test_maps_mapped(void)
{
	static const char lib[] = "/libfx.so (deleted)";
	char *root = fx_path("mproc");
	struct map tmpl = { .pid = 400, .prot = MAP_R | MAP_X, .ino = 5 }, *m;
	struct maps ms;
	u32 nr;

	ok(!fx_sh("rm -rf mproc && mkdir -p mproc/400/map_files && "
		  "ln -s $PWD/libfx.so mproc/400/map_files/7f0000000000-7f0000001000 && "
		  "echo '00400000-00401000 r-xp 00000000 00:00 0 [anon:old]' > mproc/400/maps"),
	   "a /proc with a process before its exec");
	maps_init(&ms, true);
	ms.proc_root = root;
	maps_read(&ms, 400, 0, NULL);
	maps_new_gen(&ms, 400, 10);
	is_u64(ms.nr_maps_reads, 1, "a new generation from an EXEC record reads nothing");
	tmpl.start = 0x7f0000000000;
	tmpl.end = tmpl.start + 0x1000;
	tmpl.pgoff = 0x2000;
	tmpl.path = (char *)lib;
	maps_mapped(&ms, &tmpl, strlen(lib), 12);
	nr = ms.nr_all;
	m = maps_find(&ms, 400, 12, 0x7f0000000800);
	ok(m && m->gen_time == 10 && m->pgoff == 0x2000 && m->ino == 5 && m->kind == MAP_FILE,
	   "the mapping is of the EXEC's generation");
	ok(m && m->deleted && !strcmp(m->path, "/libfx.so"), "' (deleted)' is taken off: %s",
	   m ? m->path : "(none)");
	ok(m && m->dso, "its file is opened through map_files");
	maps_mapped(&ms, &tmpl, strlen(lib), 13);
	is_u64(ms.nr_all, nr, "the same mapping again adds nothing");
	tmpl.start = 0x7f0000100000;
	tmpl.end = tmpl.start + 0x1000;
	tmpl.path = (char *)"";
	maps_new_gen(&ms, 400, 20);
	maps_mapped(&ms, &tmpl, 0, 15);
	m = maps_find(&ms, 400, 16, 0x7f0000100000);
	ok(m && m->gen_time == 15 && m->kind == MAP_ANON,
	   "an anonymous one drained after a later EXEC keeps its own time");
	is_u64(ms.nr_maps_reads, 1, "still one read of /proc");
	maps_free(&ms);
	free(root);
}

/*
 * A process whose exec the records told (EXEC, then MMAP records) reads
 * nothing from /proc; an EXEC record alone (the module repeats one for a
 * process whose exec id it could not keep) tells nothing; one that exec'd
 * again, told by a read, reads; after a LOST record nothing is told.
 */
static void test_maps_told(void)
{
	char *root = fx_path("tproc");
	struct map tmpl = { .pid = 410,
			    .prot = MAP_R | MAP_X,
			    .start = 0x7f0000000000,
			    .end = 0x7f0000001000,
			    .path = (char *)"" };
	struct resolver r;
	struct maps ms;

	ok(!fx_sh("rm -rf tproc && mkdir -p tproc/410 tproc/411 && "
		  "echo '00400000-00401000 r-xp 00000000 00:00 0 [anon:x]' > tproc/410/maps && "
		  "cp tproc/410/maps tproc/411/maps"),
	   "a /proc with two processes");
	maps_init(&ms, true);
	ms.proc_root = root;
	res_init(&r, &ms, true);
	maps_new_gen(&ms, 410, 100);
	ok(!maps_told(maps_proc(&ms, 410, false)), "an EXEC record alone tells nothing");
	maps_mapped(&ms, &tmpl, 0, 101);
	ok(maps_told(maps_proc(&ms, 410, false)), "... with an MMAP record after it, it does");
	res_observe_process(&r, 410);
	is_u64(ms.nr_maps_reads, 0, "its process reads no maps");
	maps_new_gen(&ms, 410, 90);
	ok(maps_told(maps_proc(&ms, 410, false)),
	   "an EXEC drained late (another ring) leaves the later generation told");
	maps_exec(&ms, 410, 120);
	is_u64(ms.nr_maps_reads, 1, "an exec told by a read of /proc reads them");
	ok(!maps_told(maps_proc(&ms, 410, false)), "... and is not told by records");
	maps_new_gen(&ms, 411, 200);
	tmpl.pid = 411;
	maps_mapped(&ms, &tmpl, 0, 201);
	ok(maps_told(maps_proc(&ms, 411, false)), "another process, told");
	maps_records_lost(&ms);
	ok(!maps_told(maps_proc(&ms, 411, false)), "after a LOST record nothing is told");
	res_observe_process(&r, 411);
	is_u64(ms.nr_maps_reads, 2, "... and the maps are read");
	res_free(&r);
	maps_free(&ms);
	free(root);
}

/*
 * A FORK record: the child's maps are its parent's at the record's time,
 * copied without a read of /proc; a look-up in the child finds what it
 * would find in the parent then, not what the parent mapped later; its
 * own mappings and exec come on top; a lost record sends it back to /proc.
 */
static void test_maps_fork(void)
{
	char *root = fx_path("fproc");
	struct map tmpl = { .pid = 500, .prot = MAP_R | MAP_X, .path = (char *)"[anon:a]" };
	const struct map *m;
	struct resolver r;
	struct maps ms;
	u32 n, pid;

	ok(!fx_sh("rm -rf fproc && mkdir -p fproc/500 fproc/501 && "
		  "echo '00400000-00402000 r-xp 00000000 00:00 0 [anon:old]' > fproc/500/maps && "
		  "echo '00400000-00401000 r-xp 00000000 00:00 0 [anon:proc]' > fproc/501/maps"),
	   "a /proc with a parent and a child");
	maps_init(&ms, true);
	ms.proc_root = root;
	res_init(&r, &ms, true);
	is_u64(maps_fork(&ms, 501, 500, 50, true), (u64)-1, "a parent never seen: nothing copied");
	res_observe_process(&r, 502);
	is_u64(maps_fork(&ms, 501, 502, 50, true), (u64)-1,
	       "a parent whose read failed (gone): nothing copied");
	ok(maps_need_read(maps_proc(&ms, 501, true)), "... and the child is read");
	res_observe_process(&r, 500);
	is_u64(ms.nr_maps_reads, 1, "the parent's maps read once");
	/* the parent's exec at 100: a new program over the old one's range */
	maps_new_gen(&ms, 500, 100);
	tmpl.start = 0x400000;
	tmpl.end = 0x401000;
	maps_mapped(&ms, &tmpl, strlen(tmpl.path), 101);
	tmpl.path = (char *)"[anon:late]";
	tmpl.start = 0x500000;
	tmpl.end = 0x501000;
	maps_mapped(&ms, &tmpl, strlen(tmpl.path), 300);
	is_u64(maps_fork(&ms, 501, 500, 200, true), 2, "the child gets what the parent had at 200");
	ok(!maps_need_read(maps_proc(&ms, 501, false)), "... and needs no read of /proc");
	res_observe_process(&r, 501);
	is_u64(ms.nr_maps_reads, 1, "... nor makes one");
	m = maps_find(&ms, 501, 250, 0x400100);
	ok(m && !strcmp(m->path, "[anon:a]") && m->pid == 501,
	   "the child finds the parent's newer program first");
	m = maps_find(&ms, 501, 250, 0x401100);
	ok(m && !strcmp(m->path, "[anon:old]"), "... and the older mapping beyond it");
	ok(!maps_find(&ms, 501, 250, 0x500100), "... but nothing the parent mapped after the fork");
	ok(!maps_find(&ms, 501, 150, 0x400100), "... and nothing before its fork");
	tmpl.pid = 501;
	tmpl.path = (char *)"[anon:own]";
	maps_mapped(&ms, &tmpl, strlen(tmpl.path), 260);
	m = maps_find(&ms, 501, 270, 0x500100);
	ok(m && !strcmp(m->path, "[anon:own]"), "the child's own MMAP record adds to it");
	ok(!maps_need_read(maps_proc(&ms, 501, false)), "... still without a read");
	/* another child's MMAP record, filed before its FORK record was settled (drain's end) */
	tmpl.pid = 504;
	tmpl.path = (char *)"[anon:early]";
	tmpl.start = 0x400000;
	tmpl.end = 0x401000;
	maps_mapped(&ms, &tmpl, strlen(tmpl.path), 600);
	is_u64(maps_fork(&ms, 504, 500, 550, true), 3, "a child whose MMAP record came first");
	m = maps_find(&ms, 504, 610, 0x400100);
	ok(m && !strcmp(m->path, "[anon:early]"), "... finds its own mapping over the parent's");
	m = maps_find(&ms, 504, 610, 0x401100);
	ok(m && !strcmp(m->path, "[anon:old]") && m->pid == 504, "... and the parent's beside it");
	ok(!maps_need_read(maps_proc(&ms, 504, false)), "... without a read of /proc");
	n = ms.nr_all;
	maps_fork(&ms, 504, 500, 550, true);
	is_u64(ms.nr_all, n, "its FORK record settled twice adds nothing");
	m = maps_find(&ms, 504, 610, 0x400100);
	ok(m && !strcmp(m->path, "[anon:early]"), "... and its own mapping still wins");
	/* children that exec'd at 650: their new program's MMAP record (700) drained first */
	for (pid = 506; pid <= 507; pid++) {
		const char *order = pid == 506 ? "EXEC, then FORK" : "FORK, then EXEC";

		tmpl.pid = pid;
		tmpl.path = (char *)"[anon:new]";
		maps_mapped(&ms, &tmpl, strlen(tmpl.path), 700);
		if (pid == 506)
			maps_new_gen(&ms, pid, 650);
		maps_fork(&ms, pid, 500, 550, true);
		if (pid == 507)
			maps_new_gen(&ms, pid, 650);
		m = maps_find(&ms, pid, 600, 0x400100);
		ok(m && !strcmp(m->path, "[anon:a]"), "%s: before its exec the parent's code",
		   order);
		m = maps_find(&ms, pid, 710, 0x400100);
		ok(m && !strcmp(m->path, "[anon:new]"), "... after it the new program's");
	}
	/* a child's MMAP record bearing its fork's time (a coarse clock) */
	tmpl.pid = 509;
	tmpl.path = (char *)"[anon:tie]";
	maps_mapped(&ms, &tmpl, strlen(tmpl.path), 550);
	maps_fork(&ms, 509, 500, 550, true);
	m = maps_find(&ms, 509, 600, 0x400100);
	ok(m && !strcmp(m->path, "[anon:tie]"), "a child's own mapping of its fork's time wins");
	/* a child read from /proc after its fork, before its FORK record was drained */
	ok(!fx_sh("mkdir -p fproc/508 && "
		  "echo '00400000-00401000 r-xp 00000000 00:00 0 [anon:read]' > fproc/508/maps"),
	   "a child in /proc");
	res_observe_process(&r, 508);
	maps_fork(&ms, 508, 500, 550, true);
	m = maps_find(&ms, 508, 610, 0x400100);
	ok(m && !strcmp(m->path, "[anon:read]"), "a read of /proc made after the fork wins");
	m = maps_find(&ms, 508, 610, 0x401100);
	ok(m && !strcmp(m->path, "[anon:old]"), "... and the copies fill in beside it");
	maps_new_gen(&ms, 508, 600);
	m = maps_find(&ms, 508, 560, 0x400100);
	ok(m && !strcmp(m->path, "[anon:a]"), "... unless an exec came between: the read shows it");
	tmpl.pid = 501;
	tmpl.path = (char *)"[anon:own]";
	maps_new_gen(&ms, 501, 400);
	ok(maps_need_read(maps_proc(&ms, 501, false)),
	   "an EXEC record without MMAP records: the new program is not told");
	maps_records_lost(&ms);
	maps_proc(&ms, 501, false)->cur_gen = 200;
	ok(maps_need_read(maps_proc(&ms, 501, false)), "after a LOST record a copy tells nothing");
	is_u64(maps_fork(&ms, 503, 500, 250, false), 2, "a copy made after a LOST record");
	ok(maps_need_read(maps_proc(&ms, 503, false)), "... leaves the child to be read");
	ok(maps_find(&ms, 503, 260, 0x400100) != NULL, "... and serves if it is gone");
	res_free(&r);
	maps_free(&ms);
	free(root);
}

/*
 * A file opened while recording and rewritten in place before the run
 * ends (same inode, other size) is not parsed as if it were what the
 * process mapped; an untouched one is.
 */
static void test_pending_rewritten(void)
{
	char *root = fx_path("pproc");
	struct map *m, *k;
	struct maps ms;

	ok(!fx_sh("rm -rf pproc && mkdir -p pproc/300/map_files && cp libfx.so pproc/lib1.so && "
		  "cp libfx.so pproc/lib2.so && "
		  "ln -s $PWD/pproc/lib1.so pproc/300/map_files/7f0000000000-7f0000001000 && "
		  "ln -s $PWD/pproc/lib2.so pproc/300/map_files/7f0000100000-7f0000101000 && "
		  "printf '%%s\\n%%s\\n' "
		  "'7f0000000000-7f0000001000 r-xp 00000000 00:00 1 /lib1.so' "
		  "'7f0000100000-7f0000101000 r-xp 00000000 00:00 2 /lib2.so' > pproc/300/maps"),
	   "a /proc with a process mapping two libraries");
	maps_init(&ms, true);
	ms.proc_root = root;
	ms.defer_parse = true;
	maps_read(&ms, 300, 0, NULL);
	is_u64(ms.nr_pending, 2, "both wait to be parsed");
	ok(!fx_sh("cat fx_pie > pproc/lib1.so"), "one is rewritten in place");
	maps_parse_pending(&ms);
	m = maps_find(&ms, 300, 0, 0x7f0000000000);
	k = maps_find(&ms, 300, 0, 0x7f0000100000);
	ok(m && !m->dso && m->open_err && strstr(m->open_err, "changed"),
	   "the rewritten file gets no dso: %s", m && m->open_err ? m->open_err : "(none)");
	ok(k && k->dso, "the untouched one is parsed");
	maps_free(&ms);
	free(root);
}

/*
 * Two processes mapping one file, as a child at its fork maps its parent's
 * (same device, inode and path in both maps): the file is opened and parsed
 * once, and both mappings get its dso.  Another inode at the same path is a
 * file of its own.
 */
static void test_pending_shared(void)
{
	char *root = fx_path("sproc"), *lib = fx_path("sproc/lib1.so");
	const char *line = "7f0000000000-7f0000001000 r-xp 00000000 %02x:%02x %llu /lib1.so";
	char same[128], other[128];
	struct map *m, *k, *o;
	struct maps ms;
	struct stat st;

	ok(!fx_sh("rm -rf sproc && mkdir -p sproc/320/map_files sproc/321/map_files "
		  "sproc/322/map_files && cp libfx.so sproc/lib1.so && "
		  "for p in 320 321 322; do "
		  "ln -s $PWD/sproc/lib1.so sproc/$p/map_files/7f0000000000-7f0000001000; done"),
	   "a /proc with three processes mapping one library");
	ok(!stat(lib, &st), "its device and inode");
	snprintf(same, sizeof(same), line, major(st.st_dev), minor(st.st_dev),
		 (unsigned long long)st.st_ino);
	snprintf(other, sizeof(other), line, major(st.st_dev), minor(st.st_dev),
		 (unsigned long long)st.st_ino + 1);
	ok(!fx_sh("printf '%%s\\n' '%s' > sproc/320/maps && cp sproc/320/maps sproc/321/maps && "
		  "printf '%%s\\n' '%s' > sproc/322/maps",
		  same, other),
	   "two with its inode in their maps, one with another");
	maps_init(&ms, true);
	ms.proc_root = root;
	ms.defer_parse = true;
	maps_read(&ms, 320, 0, NULL);
	maps_read(&ms, 321, 0, NULL);
	is_u64(ms.nr_pending, 1, "one file waits to be parsed");
	is_u64(ms.nr_pending_shared, 1, "the second process's mapping of it is not opened again");
	maps_read(&ms, 322, 0, NULL);
	is_u64(ms.nr_pending_shared, 1, "the same path with another inode in its maps is opened");
	maps_parse_pending(&ms);
	m = maps_find(&ms, 320, 0, 0x7f0000000000);
	k = maps_find(&ms, 321, 0, 0x7f0000000000);
	o = maps_find(&ms, 322, 0, 0x7f0000000000);
	ok(m && m->dso && k && k->dso == m->dso, "both mappings get its dso");
	ok(o && o->dso, "the other inode's mapping gets one too");
	maps_free(&ms);
	free(lib);
	free(root);
}

/*
 * Kernel modules' build-ids: a .ko found while recording whose loaded
 * module's build-id sysfs does not show (not root, or no such module) is
 * used, but a capture must not store its build-id as the build that ran.
 */
static void test_kmod_unchecked(void)
{
	static const u8 stored_id[20] = { 1, 2, 3 };
	char *dir = fx_path("kmodv");
	struct kmods k = { 0 };
	const char *name;
	const u8 *id;
	struct dso *d;
	u64 vaddr;
	u32 id_len;

	ok(!fx_sh("rm -rf kmodv && mkdir kmodv && gcc -O1 -c %s/fixtures/fx_lib.c -o kmodv/x.o && "
		  "ld -r --build-id=sha1 kmodv/x.o -o kmodv/fx_unloaded.ko && rm kmodv/x.o",
		  TEST_SRCDIR),
	   "build a .ko of a module that is not loaded");
	k.live = true;
	kmods_add_dir(&k, dir);
	ok(kmods_locate(&k, "fx_unloaded", "lib_func", 0, &d, &vaddr), "its .ko is found and used");
	kmods_module(&k, kmods_index(&k, "fx_unloaded"), &name, &id, &id_len);
	is_u64(id_len, 0, "its unchecked build-id is not stored as the build that ran");
	kmods_add_stored(&k, "fx_stored", stored_id, sizeof(stored_id), NULL);
	kmods_module(&k, kmods_index(&k, "fx_stored"), &name, &id, &id_len);
	ok(id_len == sizeof(stored_id) && !memcmp(id, stored_id, id_len),
	   "a capture's build-id is kept");
	kmods_free(&k);
	free(dir);
}

/*
 * Two module names of one 64-bit FNV-1a hash (found with Brent's cycle
 * search over 11-character names): kmod.c keys its indexes by the name,
 * so both modules keep their own entry, stored and found as .ko files.
 */
static void test_kmod_same_hash(void)
{
	static const char a[] = "e1A.mzM5vBD", b[] = "1qukgvkhZPB";
	static const u8 id_a[20] = { 0xa }, id_b[20] = { 0xb };
	char *dir = fx_path("kmodh");
	struct kmods k = { 0 };
	const char *name;
	const u8 *id;
	struct dso *d;
	u32 ia, ib, id_len;
	u64 vaddr;

	is_u64(hash_bytes(a, strlen(a), 0), hash_bytes(b, strlen(b), 0),
	       "the two names have one hash");
	kmods_add_stored(&k, a, id_a, sizeof(id_a), NULL);
	kmods_add_stored(&k, b, id_b, sizeof(id_b), NULL);
	ia = kmods_index(&k, a);
	ib = kmods_index(&k, b);
	ok(ia != UINT32_MAX && ib != UINT32_MAX && ia != ib, "stored: each module has its entry");
	if (ia != UINT32_MAX) {
		kmods_module(&k, ia, &name, &id, &id_len);
		ok(!strcmp(name, a) && id_len == sizeof(id_a) && id[0] == 0xa,
		   "stored: the first keeps its name and build-id");
	}
	kmods_free(&k);
	ok(!fx_sh("rm -rf kmodh && mkdir kmodh && gcc -O1 -c %s/fixtures/fx_lib.c -o kmodh/x.o && "
		  "ld -r --build-id=sha1 kmodh/x.o -o kmodh/%s.ko && cp kmodh/%s.ko kmodh/%s.ko && "
		  "rm kmodh/x.o",
		  TEST_SRCDIR, a, a, b),
	   "a .ko of each name");
	memset(&k, 0, sizeof(k));
	kmods_add_dir(&k, dir);
	ok(kmods_locate(&k, a, "lib_func", 0, &d, &vaddr) &&
		   kmods_locate(&k, b, "lib_func", 0, &d, &vaddr),
	   "both .ko files are found");
	kmods_free(&k);
	free(dir);
}

static void test_perfmap(void)
{
	char *path = fx_path("perf-4242.map");
	struct jitmap j = { 0 }, *j2;
	struct maps ms;
	struct resolver r;
	const struct frame_info *fi;
	FILE *f = fopen(path, "w");

	fprintf(f, "7f0000001000 100 jitted::first(int)\n");
	fprintf(f, "7f0000001200 80 Lsome/Class;::method\n");
	fprintf(f, "garbage line\n");
	fprintf(f, "7f0000001000 40 recompiled_first\n");
	fclose(f);
	ok(!jitmap_load(&j, path, -1), "perf map parsed");
	is_u64(j.nr, 2, "two distinct entries (the rewritten address counts once)");
	is_str(jitsym_name(&j, jitmap_find(&j, 0x7f0000001010)), "recompiled_first",
	       "a later line for the same address wins");
	ok(!jitmap_find(&j, 0x7f0000001100), "address between entries: none");
	is_str(jitsym_name(&j, jitmap_find(&j, 0x7f000000127f)), "Lsome/Class;::method",
	       "name is the rest of the line");
	jitmap_free(&j);
	if (!geteuid()) {
		ok(!chown(path, 12345, 12345), "give the map to another user");
		ok(jitmap_load(&j, path, 0) == -EPERM, "a map owned by someone else is refused");
		jitmap_free(&j);
		ok(!chown(path, 0, 0), "give it back");
	}

	maps_init(&ms, false);
	res_init(&r, &ms, false);
	r.jit_dir = fx_tmpdir();
	maps_read(&ms, 4242, 0, "7f0000000000-7f0000100000 r-xp 00000000 00:00 0\n");
	/* offline resolvers only see maps they are given: load it as a live one would */
	jitmap_load(res_jitmap(&r, 4242, true), path, -1);
	fi = res_fi(&r, res_user(&r, 4242, 0, 0x7f0000001204));
	is_str(res_str(&r, fi->func), "Lsome/Class;::method", "anonymous code named by perf map");
	is_str(res_str(&r, fi->dso), "[jit]", "JIT frame shows [jit]");
	fi = res_fi(&r, res_user(&r, 4242, 0, 0x7f0000005000));
	ok(fi->reason == UR_JIT_NO_MAP, "anonymous code outside the map: reason JIT without map");
	is_str(res_str(&r, fi->func), "[anon]", "shown as [anon]");
	fi = res_fi(&r, res_user(&r, 4242, 0, 0x1000));
	ok(fi->reason == UR_NO_MAPPING, "address outside every mapping: reason no mapping");
	is_str(res_str(&r, fi->func), "[unknown]", "shown as [unknown]");
	/* the idle task runs no user code: pid 0 there is outside the session's PID namespace */
	maps_read(&ms, 0, 0, "7f0000000000-7f0000100000 r-xp 00000000 00:00 0\n");
	fi = res_fi(&r, res_user(&r, 0, 0, 0x7f0000001204));
	ok(fi->reason == UR_PID_HIDDEN, "user code of pid 0: reason outside the PID namespace");
	is_str(res_str(&r, fi->func), "[unknown]",
	       "shown as [unknown], no maps or perf map of pid 0 used");
	res_free(&r);
	maps_free(&ms);

	/*
	 * live: a map loaded before the JIT wrote it is read again by the report
	 * (a pid above PID_MAX_LIMIT: no /proc entry to look in first)
	 */
	maps_init(&ms, false);
	res_init(&r, &ms, true);
	r.jit_dir = fx_tmpdir();
	maps_read(&ms, 99999990, 0, "7f0000000000-7f0000100000 r-xp 00000000 00:00 0\n");
	j2 = res_jitmap(&r, 99999990, true);
	ok(!j2->present && !j2->nr, "live: no map file yet");
	free(path);
	path = fx_path("perf-99999990.map");
	f = fopen(path, "w");
	fprintf(f, "7f0000002000 100 written_late\n");
	fclose(f);
	fi = res_fi(&r, res_user(&r, 99999990, 0, 0x7f0000002010));
	is_str(res_str(&r, fi->func), "written_late", "live: the report reads a map written late");
	f = fopen(path, "a");
	fprintf(f, "7f0000009000 100 written_after_the_report\n");
	fclose(f);
	fi = res_fi(&r, res_user(&r, 99999990, 0, 0x7f0000009000));
	ok(fi->reason == UR_JIT_NO_MAP, "live: the report reads it once, not at every miss");
	res_free(&r);
	maps_free(&ms);
	unlink(path);
	free(path);

	/* live: a map deleted before the report (a JIT that cleans up) is not forgotten */
	maps_init(&ms, false);
	res_init(&r, &ms, true);
	r.jit_dir = fx_tmpdir();
	maps_read(&ms, 99999991, 0, "7f0000000000-7f0000100000 r-xp 00000000 00:00 0\n");
	path = fx_path("perf-99999991.map");
	f = fopen(path, "w");
	fprintf(f, "7f0000003000 100 read_while_alive\n");
	fclose(f);
	j2 = res_jitmap(&r, 99999991, true);
	ok(j2->present && j2->nr == 1, "live: the map read while the process ran");
	unlink(path);
	fi = res_fi(&r, res_user(&r, 99999991, 0, 0x7f0000008000));
	ok(fi->reason == UR_JIT_NO_MAP, "live: a miss after the map was deleted");
	fi = res_fi(&r, res_user(&r, 99999991, 0, 0x7f0000003010));
	is_str(res_str(&r, fi->func), "read_while_alive",
	       "live: what was read before the file went is kept");
	res_free(&r);
	maps_free(&ms);
	free(path);
}

static void test_kallsyms(void)
{
	char *ks = fx_path("kallsyms"), *mods = fx_path("modules"), *zero = fx_path("kzero");
	struct kallsyms k;
	FILE *f;

	f = fopen(ks, "w");
	fprintf(f, "ffff800008000000 T _text\n"
		   "ffff800008010000 T first_func\n"
		   "ffff800008010100 t second_func\n"
		   "ffff800008010100 T second_alias\n"
		   "ffff800008010200 D some_data\n"
		   "ffff800008010400 T last_func\n"
		   "ffff800008010500 T _etext\n"
		   "ffff800001000000 t mod_func\t[cycsample]\n"
		   "ffff800001000040 t $x\t[cycsample]\n"
		   "ffff800001000080 t $x.3\t[cycsample]\n"
		   "ffff800001000100 t mod_last\t[cycsample]\n");
	fclose(f);
	f = fopen(mods, "w");
	fprintf(f, "cycsample 4096 0 - Live 0xffff800001000000 (O)\n");
	fclose(f);
	ok(!ksyms_load(&k, ks, mods), "kallsyms parsed");
	ok(!k.hidden, "addresses visible");
	is_str(ksym_name(&k, ksyms_find(&k, 0xffff800008010010)), "first_func", "core symbol");
	is_str(ksym_name(&k, ksyms_find(&k, 0xffff800008010101)), "second_alias",
	       "global alias preferred over local");
	is_str(ksym_name(&k, ksyms_find(&k, 0xffff800008010300)), "second_alias",
	       "data symbols do not end text symbols: second_alias extends to last_func");
	ok(!ksyms_find(&k, 0xffff800008010600), "past _etext: unknown");
	is_str(ksym_name(&k, ksyms_find(&k, 0xffff800001000090)), "mod_func",
	       "arm64 mapping symbols ($x, $x.3) of a module are no functions");
	is_str(ksym_name(&k, ksyms_find(&k, 0xffff800001000f00)), "mod_last",
	       "module symbol bounded by the module's size");
	is_str(ksym_module(&k, ksyms_find(&k, 0xffff800001000f00)), "cycsample", "module name");
	ok(!ksyms_find(&k, 0xffff800001001000), "past the module's end: unknown");
	ksyms_free(&k);

	f = fopen(zero, "w");
	fprintf(f, "0000000000000000 T _text\n0000000000000000 T first_func\n");
	fclose(f);
	ok(!ksyms_load(&k, zero, mods), "zeroed kallsyms parsed");
	ok(k.hidden && k.note && strstr(k.note, "kptr_restrict"),
	   "all-zero kallsyms detected, note mentions kptr_restrict");
	ok(!ksyms_find(&k, 0x1000), "hidden kallsyms names nothing");
	ksyms_free(&k);
	free(ks);
	free(mods);
	free(zero);
}

static void put_u16_at(const char *path, long off, u16 v)
{
	int fd = open(path, O_WRONLY);

	if (fd < 0 || pwrite(fd, &v, 2, off) != 2)
		printf("# cannot patch %s\n", path);
	close(fd);
}

static void put_u64_at(const char *path, long off, u64 v)
{
	int fd = open(path, O_WRONLY);

	if (fd < 0 || pwrite(fd, &v, 8, off) != 8)
		printf("# cannot patch %s\n", path);
	close(fd);
}

static void poke(struct dso *d)
{
	u8 buf[64];
	u32 i;

	dso_load_syms(d, &(struct dso_search){ .root = "/nonexistent" });
	for (i = 0; i < d->nr_segs; i++) {
		u64 v;

		dso_off_to_vaddr(d, d->segs[i].offset, &v);
		dso_find(d, d->segs[i].vaddr);
		dso_read(d, d->segs[i].vaddr, buf, sizeof(buf));
	}
	for (i = 0; i < d->nr_syms; i += 7)
		dso_find(d, d->syms[i].start + 1);
}

static void test_hostile(void)
{
	static const long cuts[] = { 0, 3, 16, 63, 64, 65, 200, 1000, 4096, 9000 };
	char *src = fx_path("fx_pie"), *bad = fx_path("bad");
	const char *why = NULL;
	struct dso *d;
	struct stat st;
	u32 i, seed = 12345, k, opened = 0;
	char *img;
	FILE *f;

	stat(src, &st);
	for (i = 0; i < ARRAY_SIZE(cuts); i++) {
		fx_sh("head -c %ld fx_pie > bad", cuts[i]);
		d = dso_open_path(bad, &why);
		if (d) {
			poke(d);
			dso_free(d);
		}
		ok(cuts[i] >= 64 || !d, "ELF cut at %ld bytes: %s", cuts[i], d ? "opened" : why);
	}
	fx_sh("head -c %ld fx_pie > bad", (long)st.st_size - 1);
	d = dso_open_path(bad, &why);
	if (d) {
		poke(d);
		dso_free(d);
	}
	ok(1, "ELF missing its last byte: no crash");

	fx_sh("cp fx_pie bad");
	put_u16_at(bad, 60, 0xffff); /* e_shnum */
	d = dso_open_path(bad, &why);
	ok(!d && strstr(why, "section"), "absurd section count refused: %s", d ? "opened" : why);
	dso_free(d);
	fx_sh("cp fx_pie bad");
	put_u64_at(bad, 40, 0x7fffffffffffULL); /* e_shoff */
	d = dso_open_path(bad, &why);
	ok(!d && strstr(why, "past the end"), "section headers past the end refused: %s",
	   d ? "opened" : why);
	dso_free(d);
	fx_sh("echo 'not an ELF file at all' > bad");
	d = dso_open_path(bad, &why);
	ok(!d && !strcmp(why, "not an ELF file"), "text file: 'not an ELF file'");
	dso_free(d);

	/* random corruption: must never crash (the ASan build checks memory use) */
	img = xmalloc(st.st_size);
	f = fopen(src, "r");
	if (!f || fread(img, 1, st.st_size, f) != (size_t)st.st_size)
		printf("# cannot read fixture\n");
	if (f)
		fclose(f);
	for (i = 0; i < 300; i++) {
		char *copy = xmalloc(st.st_size);

		memcpy(copy, img, st.st_size);
		for (k = 0; k < 1 + i % 16; k++) {
			seed = seed * 1103515245 + 12345;
			copy[(seed >> 8) % (i % 3 ? 1024 : st.st_size)] ^= 1 << (seed & 7);
		}
		d = dso_open_mem(copy, st.st_size, "fuzzed", &why);
		if (d) {
			opened++;
			poke(d);
			dso_free(d);
		}
		free(copy);
	}
	ok(1, "300 randomly corrupted ELF images handled (%u opened)", opened);
	free(img);
	free(src);
	free(bad);
}

/* Append an ELF note (name with its NUL, 4-byte padding) to @sb. */
static void put_note(struct sbuf *sb, const char *name, u32 type, const void *desc, u32 descsz)
{
	u32 namesz = strlen(name) + 1, hdr[3] = { namesz, descsz, type };
	static const char zero[4];

	sbuf_add(sb, hdr, sizeof(hdr));
	sbuf_add(sb, name, namesz);
	sbuf_add(sb, zero, (4 - namesz % 4) % 4);
	sbuf_add(sb, desc, descsz);
	sbuf_add(sb, zero, (4 - descsz % 4) % 4);
}

/*
 * /sys/kernel/notes holds the Xen and Linux notes before the GNU build-id;
 * a GNU note of another type (ABI tag) is not it; a cut or lying note is
 * no build-id, and is not read beyond.
 */
static void test_kernel_notes(void)
{
	static const u8 id[20] = { 0xd3, 0x4e, 0xbf, 0xe0, 0xb6, 0x41, 0xcd, 0xfd, 0xc5, 0x46,
				   0x0d, 0x84, 0xa5, 0xd1, 0xf9, 0x38, 0x00, 0x50, 0xeb, 0x97 };
	static const u8 four[4] = { 1, 2, 3, 4 };
	struct sbuf sb = { 0 };
	u8 got[DSO_BUILD_ID_MAX];
	u32 len = 0, lie;
	char *cut;

	put_note(&sb, "Xen", 6, four, 4);
	put_note(&sb, "Linux", 0x100, four, 3);
	put_note(&sb, "GNU", NT_GNU_ABI_TAG, four, 4);
	put_note(&sb, "GNU", NT_GNU_BUILD_ID, id, sizeof(id));
	ok(kmod_note_build_id(sb.buf, sb.len, got, &len) && len == sizeof(id) &&
		   !memcmp(got, id, sizeof(id)),
	   "the GNU build-id after Xen, Linux and GNU ABI-tag notes");
	/* cut into a copy of its own, so that a read beyond the end is one the sanitizer sees */
	cut = xmalloc(sb.len - 1);
	memcpy(cut, sb.buf, sb.len - 1);
	len = 0;
	ok(!kmod_note_build_id(cut, sb.len - 1, got, &len) && !len,
	   "the same notes cut one byte short: no build-id");
	free(cut);
	lie = 0xfffffff0;
	memcpy(sb.buf + 4, &lie, 4); /* the Xen note's descsz */
	ok(!kmod_note_build_id(sb.buf, sb.len, got, &len) && !len,
	   "a note whose size runs past the end: no build-id");
	sbuf_free(&sb);
}

int main(void)
{
	build_fixtures();
	test_executables();
	test_multi_segment();
	test_stripped();
	test_verbose_sources();
	test_debuglink_crc();
	test_minidebuginfo();
	test_debuginfod();
	test_eh_frame_groups();
	test_eh_frame_liblzma();
	test_plt();
	test_rust_names();
	test_asm_labels();
	test_cxx();
	test_deleted();
	test_vdso();
	test_vdso_once();
	test_maps_unchanged();
	test_fast_generations();
	test_maps_mapped();
	test_maps_told();
	test_maps_fork();
	test_pending_shared();
	test_pending_rewritten();
	test_kmod_unchecked();
	test_kmod_same_hash();
	test_perfmap();
	test_kallsyms();
	test_kernel_notes();
	test_hostile();
	return tap_done();
}
