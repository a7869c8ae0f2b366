// SPDX-License-Identifier: GPL-2.0
/*
 * test_srcline - source lines and inline frames against binutils: fixtures
 * built now (C inline functions across a header, C++ templates in nested
 * namespaces inlined into a member function, a GNU C nested function, a
 * header in a relative include directory of a unit whose comp_dir is
 * relative, with -O2 -g), every address of every function resolved
 * through the resolver and compared with what "addr2line -a -f -i -C"
 * prints for it; a function whose symbol starts before its DWARF; the
 * inline frames in the reports (folded, raw, --sort srcline, --no-inline);
 * a capture that reports lines and inline frames with the binary gone;
 * corrupt .debug_info and .debug_line: one warning, symbols kept, no
 * crash, and only the unit or function that is corrupt loses anything,
 * whatever the order of asking.
 */
#include <elf.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixtures.h"
#include "tap.h"
#include "../capture.h"
#include "../dwaranges.h"
#include "../srcline.h"

#define LT_PID 2000
#define LT_BASE 0x10000000ULL
/* addresses compared per fixture, spread over its functions */
#define LT_MAX_ADDRS 6000

struct lt {
	struct maps ms;
	struct resolver r;
	struct dso *d;
};

/* The whole file mapped at LT_BASE: runtime address = LT_BASE + file offset. */
static bool lt_open(struct lt *t, const char *bin)
{
	struct stat st;
	struct map *m;
	char *text;

	maps_init(&t->ms, false);
	res_init(&t->r, &t->ms, false);
	if (stat(bin, &st))
		return false;
	text = xasprintf("%llx-%llx r-xp 00000000 00:00 0 %s\n", LT_BASE,
			 LT_BASE + ((st.st_size + 4095) & ~4095ULL), bin);
	maps_read(&t->ms, LT_PID, 0, text);
	free(text);
	m = maps_find(&t->ms, LT_PID, 0, LT_BASE);
	t->d = m ? m->dso : NULL;
	if (t->d)
		dso_load_syms(t->d, NULL);
	return t->d != NULL;
}

static void lt_close(struct lt *t)
{
	res_free(&t->r);
	maps_free(&t->ms);
}

static u64 lt_addr(const struct dso *d, u64 vaddr)
{
	u32 i;

	for (i = 0; i < d->nr_segs; i++) {
		const struct dso_seg *g = &d->segs[i];

		if (vaddr >= g->vaddr && vaddr - g->vaddr < g->filesz)
			return LT_BASE + vaddr - g->vaddr + g->offset;
	}
	return 0;
}

/* One address, @addr, in addr2line -a -f -i -C layout, from the resolver's frames. */
static void fi_block(const struct resolver *r, u32 idx, u64 addr, struct sbuf *sb)
{
	const struct frame_info *fi = res_fi(r, idx);
	u32 k;

	sbuf_printf(sb, "0x%016llx\n", addr);
	for (k = 0; k <= fi->nr_inl; k++) {
		const struct frame_info *g = res_fi(r, k < fi->nr_inl ? fi->inl + k : idx);

		sbuf_printf(sb, "%s\n", res_str(r, g->func));
		/* addr2line: "??:0" knowing nothing, "??:?" knowing only the function */
		if (g->file == RES_NO_STR)
			sbuf_addstr(sb, g->flags & FI_RESOLVED ? "??:?\n" : "??:0\n");
		else if (!g->line)
			sbuf_printf(sb, "%s:?\n", res_str(r, g->file));
		else
			sbuf_printf(sb, "%s:%u\n", res_str(r, g->file), g->line);
	}
}

static void lt_block(struct lt *t, u32 idx, struct sbuf *sb)
{
	fi_block(&t->r, idx, res_fi(&t->r, idx)->vaddr, sb);
}

/* Split "0x...\n" blocks: the next block after *pos, NUL-terminated in place. */
static char *next_block(char **pos)
{
	char *start = *pos, *p;

	if (!start || !*start)
		return NULL;
	for (p = strchr(start, '\n'); p && p[1] && strncmp(p + 1, "0x", 2); p = strchr(p + 1, '\n'))
		;
	if (p && p[1]) {
		p[0] = '\0';
		*pos = p + 1;
	} else {
		*pos = NULL;
	}
	return start;
}

/*
 * Blocks of @ours (modified) against @theirs (addr2line's), in order: how
 * many differ; the first three are printed, labelled @what.
 */
static u32 blocks_differ(char *ours, char *theirs, const char *what)
{
	char *po = ours, *pt = theirs, *bo, *bt;
	u32 differ = 0;

	while ((bo = next_block(&po)), (bt = next_block(&pt)), bo || bt) {
		if (bo && bt && !strcmp(bo, bt))
			continue;
		if (differ++ < 3)
			printf("# %s: cycread:\n#   %s\n# addr2line:\n#   %s\n", what,
			       bo ? bo : "-", bt ? bt : "-");
	}
	return differ;
}

struct lt_stats {
	u32 addrs;
	u32 with_inline;
	u32 deepest;
	u32 differ;
	struct src_counts how; /* how the DWARF was read */
};

/*
 * Every address of every sized function of @bin, ours against addr2line's,
 * whose lines the sed program @sym turns into the symbol names cycread
 * shows, as perf does, where they differ from DWARF's (NULL: none).
 */
static struct lt_stats compare_addr2line(const char *bin, const char *what, const char *sym)
{
	struct sbuf ours = { 0 }, list = { 0 };
	struct lt_stats st = { 0 };
	char *theirs, *addrs = fx_path("addrs.txt");
	u64 total = 0, step, v;
	struct lt t;
	u32 i;
	FILE *f;

	if (!lt_open(&t, bin)) {
		ok(0, "%s: opened", what);
		free(addrs);
		return st;
	}
	/* PLT stubs: addr2line has no name for them (test_elfsym compares them with objdump) */
	for (i = 0; i < t.d->nr_syms; i++)
		if ((t.d->syms[i].flags & DSYM_SIZED) && !(t.d->syms[i].flags & DSYM_PLT))
			total += t.d->syms[i].end - t.d->syms[i].start;
	step = total / LT_MAX_ADDRS + 1;
	for (i = 0; i < t.d->nr_syms; i++) {
		const struct dso_sym *s = &t.d->syms[i];

		if (!(s->flags & DSYM_SIZED) || s->type != STT_FUNC || (s->flags & DSYM_PLT))
			continue;
		for (v = s->start; v < s->end; v += step) {
			u64 addr = lt_addr(t.d, v);
			u32 idx;

			if (!addr)
				continue;
			idx = res_user(&t.r, LT_PID, 0, addr);
			if (res_fi(&t.r, idx)->vaddr != v)
				continue;
			lt_block(&t, idx, &ours);
			sbuf_printf(&list, "0x%llx\n", v);
			st.addrs++;
			if (res_fi(&t.r, idx)->nr_inl)
				st.with_inline++;
			st.deepest = MAX(st.deepest, res_fi(&t.r, idx)->nr_inl + 1U);
		}
	}
	f = fopen(addrs, "w");
	if (f) {
		fputs(list.buf ? list.buf : "", f);
		fclose(f);
	}
	/* discriminators tell basic blocks of one line apart; reports show lines */
	theirs = fx_out("addr2line -a -f -i -C -e %s < %s | sed 's/ (discriminator [0-9]*)//; %s'",
			bin, addrs, sym ? sym : "");
	st.differ = blocks_differ(ours.buf, theirs, what);
	ok(st.addrs > 50 && !st.differ,
	   "%s: %u addresses (%u with inline frames, chains up to %u deep), %u differ from "
	   "addr2line -f -i -C",
	   what, st.addrs, st.with_inline, st.deepest, st.differ);
	dso_src_counts(t.d, &st.how);
	free(theirs);
	free(addrs);
	sbuf_free(&ours);
	sbuf_free(&list);
	lt_close(&t);
	return st;
}

static void build_fixtures(void)
{
	ok(!fx_sh("gcc -O2 -g -I%s/fixtures %s/fixtures/fx_inline.c -o fx_inline", TEST_SRCDIR,
		  TEST_SRCDIR),
	   "build the C fixture with inline functions (-O2 -g)");
	ok(!fx_sh("g++ -O2 -g %s/fixtures/fx_cxx.cc -o fx_cxx2", TEST_SRCDIR),
	   "build the C++ fixture (-O2 -g)");
	/* file names relative to the unit's directory, and the older DWARF version */
	ok(!fx_sh("D=$PWD && cd %s && gcc -O2 -g -Ifixtures fixtures/fx_inline.c -o $D/fx_inline_rel",
		  TEST_SRCDIR),
	   "build it from a relative path");
	ok(!fx_sh("gcc -O2 -gdwarf-4 -I%s/fixtures %s/fixtures/fx_inline.c -o fx_inline_d4",
		  TEST_SRCDIR, TEST_SRCDIR),
	   "build it with DWARF 4");
	ok(!fx_sh("gcc -O2 -g -c %s/fixtures/fx_nested.c -o fx_nested.o && "
		  "gcc fx_nested.o -o fx_nested && gcc -Wl,-x fx_nested.o -o fx_nested_x",
		  TEST_SRCDIR),
	   "build the fixture with a nested function (GNU C), and a link of it without local "
	   "symbols (ld -x)");
}

/*
 * A table stripped of local symbols (ld -x) keeps .symtab and the DWARF,
 * but the nested function's code is in no symbol: its frames are still
 * found in its parent's tree, asked for first (no tree read before), as
 * in the link that names it.
 */
static void test_nested_no_locals(void)
{
	char *bin = fx_path("fx_nested"), *xbin = fx_path("fx_nested_x");
	u32 i, addrs = 0, inl = 0, differ = 0;
	const struct dso_sym *s = NULL;
	struct lt t, x;
	u64 v;

	if (!lt_open(&t, bin) || !lt_open(&x, xbin)) {
		ok(0, "fixtures opened");
		free(bin);
		free(xbin);
		return;
	}
	for (i = 0; i < t.d->nr_syms && !s; i++)
		if (!strcmp(dso_sym_name(t.d, &t.d->syms[i]), "nx_inner.0"))
			s = &t.d->syms[i];
	for (v = s ? s->start : 0; s && v < s->end; v++) {
		const struct frame_info *a =
			res_fi(&t.r, res_user(&t.r, LT_PID, 0, lt_addr(t.d, v)));
		const struct frame_info *b =
			res_fi(&x.r, res_user(&x.r, LT_PID, 0, lt_addr(x.d, v)));

		addrs++;
		inl += b->nr_inl > 0;
		differ += a->nr_inl != b->nr_inl || a->line != b->line ||
			  strcmp(res_str(&t.r, a->file), res_str(&x.r, b->file));
	}
	ok(!x.d->local_funcs && s && inl && !differ,
	   "nested function without a symbol (ld -x): %u addresses, %u with inline frames, %u "
	   "differ from the link with local symbols",
	   addrs, inl, differ);
	lt_close(&x);
	lt_close(&t);
	free(xbin);
	free(bin);
}

/*
 * clang's DWARF 5 names the primary source file as file 0 of the line
 * table, and so DW_AT_call_file 0 is fx_twice's and fx_mix's call site in
 * fx_inline.c (before DWARF 5, 0 means no file).
 */
static void test_clang_dwarf5(void)
{
	char *bin = fx_path("fx_inline_clang5");
	struct lt_stats st;

	if (!have_tool("clang")) {
		tap_skip("clang missing: DW_AT_call_file 0 of DWARF 5 untested");
		free(bin);
		return;
	}
	ok(!fx_sh("clang -O2 -gdwarf-5 -I%s/fixtures %s/fixtures/fx_inline.c -o fx_inline_clang5",
		  TEST_SRCDIR, TEST_SRCDIR),
	   "build the C fixture with clang -O2 -gdwarf-5");
	st = compare_addr2line(bin, "clang, DWARF 5, call sites in file 0", NULL);
	ok(st.with_inline > 10 && st.deepest >= 3,
	   "clang: inline chains three deep, their call sites in the primary file");
	ok(st.how.trees_scanned >= 3 && !st.how.trees_walked && !st.how.insts_libdw,
	   "clang: the %u functions' trees scanned (addresses through .debug_addr), %u walked "
	   "by libdw, %u instances' ranges read by libdw",
	   st.how.trees_scanned, st.how.trees_walked, st.how.insts_libdw);
	free(bin);
	/*
	 * gcc's units with .debug_aranges, clang's without: the units aranges
	 * say nothing about are found by their own ranges.
	 */
	bin = fx_path("fx_mixed");
	ok(!fx_sh("clang -O2 -g -c %s/fixtures/fx_kdup_b.c -o mixed_b.o && "
		  "gcc -O2 -g -I%s/fixtures %s/fixtures/fx_inline.c mixed_b.o -o fx_mixed && "
		  "readelf -wr fx_mixed | grep -q 'Offset into .debug_info'",
		  TEST_SRCDIR, TEST_SRCDIR, TEST_SRCDIR),
	   "build gcc's units (aranges) with a clang unit (none)");
	compare_addr2line(bin, "a unit without aranges among units with them", NULL);
	free(bin);
}

static void test_against_addr2line(void)
{
	struct lt_stats c, cxx;
	char *bin = fx_path("fx_inline"), *cbin = fx_path("fx_cxx2");
	char *rel = fx_path("fx_inline_rel"), *d4 = fx_path("fx_inline_d4");

	compare_addr2line(rel, "C inlines, relative file names", NULL);
	compare_addr2line(d4, "C inlines, DWARF 4", NULL);
	free(rel);
	free(d4);
	c = compare_addr2line(bin, "C inlines", NULL);
	ok(c.with_inline > 10 && c.deepest >= 3,
	   "C: addresses three functions deep (fx_mix in fx_twice in fx_outer)");
	ok(c.how.trees_scanned >= 3 && !c.how.trees_walked && !c.how.insts_libdw,
	   "C: the %u functions' inlined instances read by dwscan.c, %u by libdw's walk, %u "
	   "instances' ranges by libdw",
	   c.how.trees_scanned, c.how.trees_walked, c.how.insts_libdw);
	cxx = compare_addr2line(cbin, "C++ templates and namespaces", NULL);
	ok(cxx.with_inline > 0, "C++: the inlined template shows as a frame");
	free(bin);
	free(cbin);
	bin = fx_path("fx_nested");
	/* its symbol: GCC's local name, nx_inner.0 */
	c = compare_addr2line(bin, "C, a nested function", "s/^nx_inner$/nx_inner.0/");
	ok(c.with_inline > 0, "C nested function: its inline frames found in its parent's tree");
	free(bin);
}

/* The address of @name's first sample-worthy byte with @depth source frames. */
static u64 find_addr(struct lt *t, const char *name, u32 depth)
{
	u32 i, idx;
	u64 v;

	for (i = 0; i < t->d->nr_syms; i++) {
		const struct dso_sym *s = &t->d->syms[i];

		if (strcmp(dso_sym_name(t->d, s), name))
			continue;
		for (v = s->start; v < s->end; v++) {
			idx = res_user(&t->r, LT_PID, 0, lt_addr(t->d, v));
			if (res_fi(&t->r, idx)->nr_inl + 1U == depth)
				return lt_addr(t->d, v);
		}
	}
	return 0;
}

/*
 * A relative DW_AT_comp_dir, as -fdebug-prefix-map=DIR=. makes it (Debian
 * builds so): addr2line joins it to the names of relative include
 * directories too, rows' and call sites' alike, and before DWARF 5 not
 * again to those of directory 0, which is the comp_dir itself.
 * fx_relinc.c is built in src/ with its header in ../inc (comp_dir ./src,
 * as glibc's units in ./stdlib include ../sysdeps), or (@top) in the top
 * directory with -I./inc (comp_dir ".", as kbuild compiles).
 */
struct relinc {
	const char *name;
	bool top;
	int dwarf;
	/* the frames' files at fx_ri_step inlined into fx_ri_sum, into fx_ri_outer */
	const char *files;
};

static const struct relinc relincs[] = {
	{ "src4", false, 4, "./src/../inc/fx_relinc.h ./src/../inc/fx_relinc.h ./src/fx_relinc.c" },
	{ "src5", false, 5,
	  "./src/../inc/fx_relinc.h ./src/../inc/fx_relinc.h ./src/./src/fx_relinc.c" },
	{ "top4", true, 4, "././inc/fx_relinc.h ././inc/fx_relinc.h ./src/fx_relinc.c" },
	{ "top5", true, 5, "././inc/fx_relinc.h ././inc/fx_relinc.h ./src/fx_relinc.c" },
};

/*
 * The shell command building fx_relinc.c as @ri says, in relinc_NAME/ of
 * the fixture directory, with the compiler's further @args; $P names
 * relinc_NAME/.
 */
static char *relinc_build(const struct relinc *ri, const char *args)
{
	return xasprintf("rm -rf relinc_%s && mkdir -p relinc_%s/src relinc_%s/inc && "
			 "cp %s/fixtures/fx_relinc.c relinc_%s/src && "
			 "cp %s/fixtures/fx_relinc.h relinc_%s/inc && "
			 "(cd relinc_%s && P=$PWD && %s gcc -O2 -gdwarf-%d -fdebug-prefix-map=$P=. "
			 "%s %s)",
			 ri->name, ri->name, ri->name, TEST_SRCDIR, ri->name, TEST_SRCDIR, ri->name,
			 ri->name, ri->top ? "" : "cd src &&", ri->dwarf,
			 ri->top ? "-I./inc src/fx_relinc.c" : "-I../inc fx_relinc.c", args);
}

/* The files of the frames at @addr, innermost first, one space between. */
static char *frame_files(struct lt *t, u64 addr)
{
	u32 idx = res_user(&t->r, LT_PID, 0, addr), k;
	const struct frame_info *fi = res_fi(&t->r, idx);
	struct sbuf sb = { 0 };

	for (k = 0; k <= fi->nr_inl; k++) {
		const struct frame_info *g = res_fi(&t->r, k < fi->nr_inl ? fi->inl + k : idx);

		sbuf_printf(&sb, "%s%s", k ? " " : "", res_str(&t->r, g->file));
	}
	return sb.buf;
}

static void test_relative_comp_dir(void)
{
	u32 i;

	for (i = 0; i < ARRAY_SIZE(relincs); i++) {
		const struct relinc *ri = &relincs[i];
		char *bin = xasprintf("fx_relinc_%s", ri->name), *path = fx_path(bin);
		char *out = xasprintf("-o $P/../%s", bin), *cmd = relinc_build(ri, out);
		char *what, *files = NULL;
		struct lt_stats st;
		struct lt t;
		u64 addr;

		ok(!fx_sh("%s && readelf -wi %s | grep -q 'DW_AT_comp_dir.*: [.]'", cmd, bin),
		   "build fx_relinc.c with a relative comp_dir, DWARF %d, %s", ri->dwarf,
		   ri->top ? "in ., its header in ./inc" : "in ./src, its header in ../inc");
		what = xasprintf("a relative comp_dir (%s)", ri->name);
		st = compare_addr2line(path, what, NULL);
		ok(st.with_inline > 10 && st.deepest >= 3,
		   "%s: inline chains three deep, a call site in the header", what);
		if (lt_open(&t, path)) {
			addr = find_addr(&t, "fx_ri_outer", 3);
			files = addr ? frame_files(&t, addr) : NULL;
			lt_close(&t);
		}
		ok(files && !strcmp(files, ri->files), "%s: the files of an inline chain: %s", what,
		   files ? files : "(none)");
		if (!files || strcmp(files, ri->files))
			printf("# want: %s\n", ri->files);
		free(files);
		free(what);
		free(cmd);
		free(out);
		free(path);
		free(bin);
	}
}

/* Two resolvers of kallsyms @ks: one to be given kernel files, one without. */
static void kern_resolvers(struct resolver *r, struct resolver *plain, struct maps *ms,
			   const char *ks)
{
	maps_init(ms, false);
	res_init(r, ms, false);
	res_init(plain, ms, false);
	ok(!ksyms_load(&r->ksyms, ks, "/nonexistent") &&
		   !ksyms_load(&plain->ksyms, ks, "/nonexistent"),
	   "kallsyms read");
	r->ksyms_ready = plain->ksyms_ready = true;
}

/*
 * kallsyms of a module built as a relocatable object (a .ko is one),
 * "fx-mod.ko" in $KMOD/ ('-' and '_' are one in module names), each
 * section's functions at their own kernel address, into $KMOD.kallsyms;
 * and every byte of every function as "KADDR SECTION OFFSET" (OFFSET: in
 * the section, as addr2line -j SECTION takes it), a section's addresses
 * together, into $KMOD.addrs.
 */
static const char kmod_gen[] =
	"python3 - \"$KMOD\" <<'EOF'\n"
	"import re, subprocess, sys\n"
	"ko = sys.argv[1] + '/fx-mod.ko'\n"
	"out = subprocess.run(['readelf', '-SsW', ko], capture_output=True, text=True).stdout\n"
	"secs = dict(re.findall(r'^\\s*\\[\\s*(\\d+)\\] (\\S+)', out, re.M))\n"
	"ks, addrs = open(sys.argv[1] + '.kallsyms', 'w'), open(sys.argv[1] + '.addrs', 'w')\n"
	"ks.write('ffffffff81000000 T _stext\\n')\n"
	"fns = []\n"
	"for m in re.finditer(r'^\\s*\\d+: ([0-9a-f]+)\\s+(\\d+) FUNC\\s+\\S+\\s+\\S+\\s+(\\d+) (\\S+)',\n"
	"                     out, re.M):\n"
	"    fns.append((int(m.group(3)), int(m.group(1), 16), int(m.group(2)), m.group(4)))\n"
	"for ndx, val, size, name in sorted(fns):\n"
	"    k = 0xffffffffc0100000 + ndx * 0x10000 + val\n"
	"    ks.write('%x t %s\\t[fx_mod]\\n' % (k, name))\n"
	"    for off in range(size):\n"
	"        addrs.write('%x %s %x\\n' % (k + off, secs[str(ndx)], val + off))\n"
	"EOF\n";

/*
 * Samples in a module's code: with its .ko found in a --kmod-dir, every
 * address gets the .ko's function, source line and inline frames, the same
 * as addr2line -f -i on the .ko; without it, the kallsyms name alone.  The
 * module: $KMOD/fx-mod.o as the shell command @build leaves it, in @name/
 * of the fixture directory, at least @min_addrs bytes of code, of them at
 * least @min_inline in inlined code.
 */
static void test_kernel_module(const char *name, const char *build, u32 min_addrs, u32 min_inline)
{
	char *dir = fx_path(name), *ks = xasprintf("%s.kallsyms", dir),
	     *addr_list = xasprintf("%s.addrs", dir);
	char *list = NULL, *theirs, *line, *next;
	struct sbuf ours = { 0 };
	u32 addrs = 0, with_inline = 0, differ = 0, idx;
	struct resolver r, plain;
	struct maps ms;
	size_t len;

	ok(!fx_sh("KMOD=%s && mkdir -p $KMOD/extra && %s && "
		  "ld -r --build-id=sha1 $KMOD/fx-mod.o -o $KMOD/fx-mod.ko && "
		  "rm $KMOD/fx-mod.o && %s",
		  name, build, kmod_gen),
	   "module fixture %s: a relocatable object with a build-id (ld -r, as kbuild links a "
	   ".ko), its kallsyms",
	   name);
	kern_resolvers(&r, &plain, &ms, ks);
	kmods_add_dir(&r.kmods, "/nonexistent");
	kmods_add_dir(&r.kmods, dir);
	read_file(addr_list, &list, &len, 1 << 24);
	for (line = list; line && *line; line = next) {
		unsigned long long kaddr, off;
		char sec[64];

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (sscanf(line, "%llx %63s %llx", &kaddr, sec, &off) != 3)
			continue;
		idx = res_kernel(&r, kaddr);
		fi_block(&r, idx, off, &ours);
		addrs++;
		with_inline += res_fi(&r, idx)->nr_inl > 0;
		if (addrs == 1) {
			const struct frame_info *fi = res_fi(&plain, res_kernel(&plain, kaddr));

			ok(res_fi(&r, idx)->file != RES_NO_STR && fi->file == RES_NO_STR &&
				   !strcmp(res_str(&r, res_fi(&r, idx)->func),
					   res_str(&plain, fi->func)),
			   "the .ko gives a line; without it, the kallsyms name alone (%s)",
			   res_str(&plain, fi->func));
			is_str(res_str(&r, res_fi(&r, idx)->dso), "[fx_mod]", "the frame's dso");
		}
	}
	theirs = fx_out("cut -d' ' -f2 %s.addrs | uniq | while read s; do "
			"awk -v s=$s '$2 == s { print $3 }' %s.addrs | "
			"addr2line -a -f -i -C -e %s/fx-mod.ko -j $s; done | "
			"sed 's/ (discriminator [0-9]*)//'",
			name, name, name);
	differ = blocks_differ(ours.buf, theirs, name);
	ok(addrs > min_addrs && with_inline > min_inline && !differ,
	   "module code (%s): %u addresses (%u with inline frames), %u differ from addr2line "
	   "-f -i on the .ko",
	   name, addrs, with_inline, differ);
	free(theirs);
	free(list);
	sbuf_free(&ours);
	res_free(&plain);
	res_free(&r);
	maps_free(&ms);
	free(addr_list);
	free(ks);
	free(dir);
}

/*
 * Relative comp_dirs in a module: libdw reads its relocated line table,
 * whose names say not which directory they were joined to.
 */
static void test_kernel_module_relative(void)
{
	u32 i;

	for (i = 0; i < ARRAY_SIZE(relincs); i++) {
		char *name = xasprintf("kmod_%s", relincs[i].name);
		char *cmd = relinc_build(&relincs[i], "-c -o $P/../$KMOD/fx-mod.o");

		test_kernel_module(name, cmd, 50, 10);
		free(cmd);
		free(name);
	}
}

/* A sample whose one frame is @pc, a user address or (@kernel) a kernel one. */
static void add_sample(struct profile *p, u64 time, u64 pc, bool kernel)
{
	struct {
		struct cycsample_sample s;
		u64 frames[1];
	} rec;
	const char *why;
	u32 size;

	memset(&rec, 0, sizeof(rec));
	rec.s.hdr.type = CYCSAMPLE_REC_SAMPLE;
	rec.s.hdr.size = sizeof(rec);
	rec.s.time = time;
	rec.s.pid = rec.s.tid = LT_PID;
	rec.s.flags = kernel ? CYCSAMPLE_SAMPLE_KERNEL : CYCSAMPLE_SAMPLE_USER;
	rec.s.pc = pc;
	rec.s.nr_user = !kernel;
	rec.s.nr_kernel = kernel;
	rec.s.arch = CYCSAMPLE_ARCH_X86_64;
	rec.frames[0] = pc;
	prof_add_record(p, &rec, sizeof(rec), 0, &size, &why);
}

static char *report_text(struct profile *p, struct resolver *r, int kind)
{
	/* counted in samples; --raw-details: the source lines after the frames */
	struct report_opts o = {
		.keys = { KEY_SRCLINE }, .nr_keys = 1, .weight = WEIGHT_SAMPLES, .raw_details = true
	};
	struct report rep;
	char *buf = NULL, err[256];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	report_build(&rep, p, r);
	report_select(&rep, &o, err, sizeof(err));
	if (kind == 0)
		report_folded(&rep, f);
	else if (kind == 1)
		report_raw(&rep, &o, f);
	else
		report_top(&rep, &o, f);
	report_free(&rep);
	fclose(f);
	return buf;
}

/*
 * A function whose symbol starts before the code its DIE describes, the
 * line table covering the gap: what a kernel built for ftrace has at every
 * function (-fpatchable-function-entry NOPs).  Made from fx_inline.c's
 * assembly: two NOPs after fx_outer's label, before GCC's, under a line
 * row of their own (line 7).  With each function in its own section
 * (@sections) no unit range spans the gap; without, the unit's .text range
 * does, and the gap is in the unit but in none of its functions.  Either
 * way the NOPs are fx_outer's entry, not a nested function's code: no
 * function's tree is read for them (every tree of the unit was, one
 * address in seven of an arm64 kernel profile).
 */
static void test_entry_gap(bool sections)
{
	const char *name = sections ? "fx_entry_gap" : "fx_entry_gap_text";
	char *bin = fx_path(name);
	struct sbuf ours = { 0 }, want = { 0 };
	const struct dso_sym *s;
	struct src_counts how;
	struct lt t;
	u32 i;

	ok(!fx_sh("gcc -O2 -g %s -S -I%s/fixtures %s/fixtures/fx_inline.c "
		  "-o %s.s && F=$(grep -m1 '^[[:space:]]*[.]file 1 ' %s.s) && "
		  "awk -v f=\"$F\" '$0 == f { next } { print } /^fx_outer:$/ { print f; "
		  "print \"\\t.loc 1 7 0\\n\\tnop\\n\\tnop\" } "
		  "/^[[:space:]]*[.]size[[:space:]]+fx_outer,/ { print \"\\t.skip 8\" }' "
		  "%s.s > %s2.s && "
		  "gcc -g %s2.s -o %s",
		  sections ? "-ffunction-sections" : "", TEST_SRCDIR, TEST_SRCDIR, name, name, name,
		  name, name, name),
	   "build fx_inline.c with two NOPs at fx_outer before its DWARF (%s)", name);
	if (!lt_open(&t, bin)) {
		ok(0, "fixture opened");
		free(bin);
		return;
	}
	for (i = 0; i < t.d->nr_syms; i++)
		if (!strcmp(dso_sym_name(t.d, &t.d->syms[i]), "fx_outer"))
			break;
	s = i < t.d->nr_syms ? &t.d->syms[i] : NULL;
	for (i = 0; s && i < 2; i++) {
		u64 v = s->start + i;

		lt_block(&t, res_user(&t.r, LT_PID, 0, lt_addr(t.d, v)), &ours);
		sbuf_printf(&want, "0x%016llx\nfx_outer\n%s/fixtures/fx_inline.c:7\n",
			    (unsigned long long)v, TEST_SRCDIR);
	}
	ok(s && ours.buf && !strcmp(ours.buf, want.buf),
	   "%s: the NOPs before fx_outer's DWARF: fx_outer, the line table's line 7", name);
	if (!s || !ours.buf || strcmp(ours.buf, want.buf))
		printf("# got:\n%s# want:\n%s", ours.buf ? ours.buf : "", want.buf ? want.buf : "");
	/* 8 bytes after fx_outer's symbol: padding, in the unit's .text range */
	if (s && !sections) {
		char *line = fx_out("addr2line -e %s 0x%llx | sed 's/ (discriminator [0-9]*)//'",
				    bin, (unsigned long long)s->end);

		sbuf_free(&ours);
		sbuf_free(&want);
		lt_block(&t, res_user(&t.r, LT_PID, 0, lt_addr(t.d, s->end)), &ours);
		sbuf_printf(&want, "0x%016llx\n[%s]\n%s", (unsigned long long)s->end, name,
			    line ? line : "");
		free(line);
	}
	if (!sections) {
		ok(s && ours.buf && want.buf && !strcmp(ours.buf, want.buf),
		   "%s: the padding after fx_outer's symbol: no function, addr2line's line", name);
		if (!s || !ours.buf || !want.buf || strcmp(ours.buf, want.buf))
			printf("# got:\n%s# want:\n%s", ours.buf ? ours.buf : "",
			       want.buf ? want.buf : "");
	}
	dso_src_counts(t.d, &how);
	ok(!how.trees_scanned && !how.trees_walked,
	   "%s: no function's tree read for any (%u scanned, %u walked)", name, how.trees_scanned,
	   how.trees_walked);
	sbuf_free(&ours);
	sbuf_free(&want);
	lt_close(&t);
	free(bin);
}

/* Inline frames in the reports, and in a capture read without the binary. */
static void test_reports(void)
{
	char *bin = fx_path("fx_inline"), *cap = fx_path("inline.cyc"), *text, *gone;
	struct profile p, q;
	struct report rep;
	struct maps ms;
	struct resolver r;
	struct lt t;
	u64 deep, plain;
	char err[256];
	int i;

	if (!lt_open(&t, bin)) {
		ok(0, "fixture opened");
		goto out;
	}
	deep = find_addr(&t, "fx_outer", 3);
	plain = find_addr(&t, "fx_plain", 1);
	ok(deep && plain, "addresses with three frames and with one found");
	prof_init(&p);
	prof_set_comm(&p, LT_PID, "fx_inline");
	for (i = 0; i < 3; i++)
		add_sample(&p, 10 + i, deep, false);
	add_sample(&p, 20, plain, false);
	prof_sort(&p);

	text = report_text(&p, &t.r, 0);
	ok(strstr(text, "fx_inline;fx_outer;fx_twice_[i];fx_mix_[i] 3") != NULL,
	   "folded: the inline frames after their caller, marked _[i]");
	free(text);
	text = report_text(&p, &t.r, 1);
	ok(strstr(text, " fx_mix (inlined) ") && strstr(text, "fx_inline.h:") &&
		   strstr(text, " fx_outer+0x"),
	   "--raw --raw-details: 'fx_mix (inlined) .../fx_inline.h:N' before the fx_outer frame");
	free(text);
	text = report_text(&p, &t.r, 2);
	ok(strstr(text, "fx_inline.h:") != NULL, "--sort srcline: rows by file:line");
	free(text);

	report_build(&rep, &p, &t.r);
	ok(!capture_write(cap, &rep, &t.ms), "capture written");
	report_free(&rep);
	t.r.inline_frames = false;
	res_forget(&t.r);
	text = report_text(&p, &t.r, 0);
	ok(!strstr(text, "_[i]") && strstr(text, "fx_inline;fx_outer 3"),
	   "--no-inline: the function alone");
	free(text);
	t.r.inline_frames = true;
	text = report_text(&p, &t.r, 0);
	lt_close(&t);

	/* offline: the binary is gone, the capture has its lines */
	gone = xasprintf("%s.gone", bin);
	ok(!rename(bin, gone), "binary moved away");
	prof_init(&q);
	maps_init(&ms, false);
	res_init(&r, &ms, false);
	ok(!capture_read(cap, &q, &ms, &r, NULL, err, sizeof(err)), "capture read");
	{
		char *back = report_text(&q, &r, 0), *raw = report_text(&q, &r, 1);

		ok(!strcmp(text, back), "folded from the capture equals the live one");
		ok(strstr(raw, "fx_inline.h:") != NULL, "--raw from the capture has source lines");
		free(back);
		free(raw);
	}
	ok(!rename(gone, bin), "binary back");
	free(gone);
	free(text);
	res_free(&r);
	maps_free(&ms);
	prof_free(&q);
	prof_free(&p);
out:
	free(bin);
	free(cap);
}

/* Resolve a few addresses of @bin, stderr in *@log; returns the fx_outer frame's name. */
static char *resolve_logged(const char *bin, char **log, bool *has_line)
{
	char *name = NULL;
	struct lt t;
	u32 i, idx;

	fx_stderr_begin();
	*has_line = false;
	if (lt_open(&t, bin)) {
		for (i = 0; i < t.d->nr_syms; i++) {
			const struct dso_sym *s = &t.d->syms[i];
			u64 v;

			for (v = s->start; v < s->end && v < s->start + 64; v++) {
				idx = res_user(&t.r, LT_PID, 0, lt_addr(t.d, v));
				*has_line |= res_fi(&t.r, idx)->line != 0;
			}
			if (!strcmp(dso_sym_name(t.d, s), "fx_outer")) {
				idx = res_user(&t.r, LT_PID, 0, lt_addr(t.d, s->start + 4));
				free(name);
				name = xstrdup(res_str(&t.r, res_fi(&t.r, idx)->func));
			}
		}
		lt_close(&t);
	}
	*log = fx_stderr_back();
	return name;
}

/*
 * Overwrite the middle of section @sec of a copy of fx_inline with
 * garbage, or (@seed 0) only its last byte, a string section's final NUL.
 */
static bool corrupt(const char *sec, const char *out, u32 seed)
{
	return !fx_sh("objcopy --dump-section %s=sec.bin fx_inline && "
		      "python3 -c \"import random,sys; d=bytearray(open('sec.bin','rb').read()); "
		      "r=random.Random(%u); n=len(d)\n"
		      "for i in range(n//4 if %u else n-1, n): d[i]=r.randrange(1, 256)\n"
		      "open('sec.bin','wb').write(d)\" && "
		      "objcopy --update-section %s=sec.bin fx_inline %s",
		      sec, seed, seed, sec, out);
}

static void test_corrupt_dwarf(void)
{
	static const char *const secs[] = { ".debug_info", ".debug_line", ".debug_line_str" };
	char *text, *name;
	bool line;
	u32 i;

	for (i = 0; i < ARRAY_SIZE(secs); i++) {
		char *bad = fx_path(secs[i] + 1);

		/* the last: libdw hands out its file names, read to a NUL that is not there */
		ok(corrupt(secs[i], bad, i < 2 ? 7 + i : 0),
		   "%s of a copy overwritten with garbage%s", secs[i],
		   i < 2 ? "" : " (its final NUL)");
		name = resolve_logged(bad, &text, &line);
		is_str(name ? name : "(none)", "fx_outer", "symbols still name the frames");
		ok(text && strstr(text, "warning: ") && strstr(text, bad) &&
			   strstr(text, "without source lines"),
		   "%s: one clear warning naming the file", secs[i]);
		if (text && !strstr(text, "warning: "))
			printf("# stderr: %s\n", text);
		ok(!line, "%s: symbol-only output (no lines)", secs[i]);
		free(text);
		free(name);
		free(bad);
	}
}

/*
 * What the first byte of one function gave: its line, its innermost inline
 * frame; whether its third byte, asked after both first bytes, had one.
 */
struct first_byte {
	u32 line;
	char *inl;
	bool inl_later;
};

/*
 * The first byte of each of the two functions @names of @bin, resolved
 * @swap ? second then first : first then second, then the third byte of
 * each; @log gets stderr, @how how the DWARF was read.
 */
static bool first_bytes(const char *bin, const char *const names[2], bool swap,
			struct first_byte out[2], char **log, struct src_counts *how)
{
	const struct frame_info *fi;
	u64 at[2] = { 0, 0 };
	u32 i, k, idx;
	struct lt t;

	memset(out, 0, 2 * sizeof(*out));
	memset(how, 0, sizeof(*how));
	fx_stderr_begin();
	if (!lt_open(&t, bin)) {
		*log = fx_stderr_back();
		return false;
	}
	for (i = 0; i < t.d->nr_syms; i++)
		for (k = 0; k < 2; k++)
			if (!strcmp(dso_sym_name(t.d, &t.d->syms[i]), names[k]))
				at[k] = lt_addr(t.d, t.d->syms[i].start);
	for (i = 0; i < 2 && at[0] && at[1]; i++) {
		k = swap ? 1 - i : i;
		idx = res_user(&t.r, LT_PID, 0, at[k]);
		fi = res_fi(&t.r, idx);
		out[k].line = fi->line;
		if (fi->nr_inl)
			out[k].inl = xstrdup(res_str(&t.r, res_fi(&t.r, fi->inl)->func));
	}
	for (k = 0; k < 2 && at[0] && at[1]; k++)
		out[k].inl_later = res_fi(&t.r, res_user(&t.r, LT_PID, 0, at[k] + 2))->nr_inl;
	dso_src_counts(t.d, how);
	lt_close(&t);
	*log = fx_stderr_back();
	return at[0] && at[1];
}

/*
 * Corrupt DWARF found in one unit or one function costs that unit its
 * lines, or that function its inline frames, and nothing else: what an
 * address gets does not depend on which addresses were asked before it.
 * Two units (fx_kdup_a.c, fx_kdup_b.c with -g), the second's line program
 * given a version no DWARF has; one unit read by libdw's walk whose
 * fx_outer holds blocks that would be walked 2^24 times
 * (fixtures/fx_treeloop.s) beside a sound fx_plain.
 */
static void test_corrupt_alone(void)
{
	static const char *const units[2] = { "kdup_a", "kdup_b" };
	static const char *const funcs[2] = { "fx_outer", "fx_plain" };
	char *two = fx_path("fx_two.so"), *loop = fx_path("fx_treeloop"), *log;
	struct first_byte fb[2];
	struct src_counts how;
	u32 swap;

	ok(!fx_sh("gcc -O2 -g -shared -fPIC %s/fixtures/fx_kdup_a.c %s/fixtures/fx_kdup_b.c "
		  "-o two.so && objcopy --dump-section .debug_line=line.bin two.so && "
		  "python3 -c \"import struct; d=bytearray(open('line.bin','rb').read()); "
		  "o=4+struct.unpack_from('<I', d)[0]; d[o+4:o+6]=struct.pack('<H', 99); "
		  "open('line.bin','wb').write(d)\" && "
		  "objcopy --update-section .debug_line=line.bin two.so %s",
		  TEST_SRCDIR, TEST_SRCDIR, two),
	   "two units, the second's line program of version 99");
	for (swap = 0; swap < 2; swap++) {
		ok(first_bytes(two, units, swap, fb, &log, &how),
		   "two units: both functions found");
		ok(fb[0].line, "%s first: the sound unit keeps its lines", units[swap]);
		ok(!fb[1].line, "%s first: the corrupt unit has none", units[swap]);
		ok(log && strstr(log, "warning: ") && strstr(log, two) &&
			   strstr(log, "corrupt .debug_line (the unit at 0x"),
		   "%s first: a warning naming the file and the unit", units[swap]);
		free(log);
		free(fb[0].inl);
		free(fb[1].inl);
	}

	ok(!fx_sh("gcc -O2 -I%s/fixtures %s/fixtures/fx_inline.c %s/fixtures/fx_treeloop.s -o %s",
		  TEST_SRCDIR, TEST_SRCDIR, TEST_SRCDIR, loop),
	   "one unit: fx_outer's tree loops, fx_plain's is sound");
	for (swap = 0; swap < 2; swap++) {
		alarm(60);
		ok(first_bytes(loop, funcs, swap, fb, &log, &how),
		   "tree loop: both functions found");
		alarm(0);
		ok(how.trees_walked == 1 && !how.trees_scanned,
		   "%s first: fx_plain's tree read by libdw's walk (%u walked, %u scanned)",
		   funcs[swap], how.trees_walked, how.trees_scanned);
		ok(fb[1].inl && !strcmp(fb[1].inl, "fx_inl_plain") && fb[1].inl_later,
		   "%s first: the sound function keeps its inline frame (%s)", funcs[swap],
		   fb[1].inl ? fb[1].inl : "none");
		ok(!fb[0].inl && !fb[0].inl_later,
		   "%s first: the corrupt one has none, then or later", funcs[swap]);
		ok(fb[0].line == 20 && fb[1].line == 9,
		   "%s first: both keep their lines (%u, %u; want 20 and fx_plain's call site 9)",
		   funcs[swap], fb[0].line, fb[1].line);
		ok(log && strstr(log, "warning: ") && strstr(log, loop) &&
			   strstr(log,
				  "corrupt inlined instances in .debug_info (the function at 0x"),
		   "%s first: a warning naming the file and the function", funcs[swap]);
		if (log && !strstr(log, "warning: "))
			printf("# stderr: %s\n", log);
		free(log);
		free(fb[0].inl);
		free(fb[1].inl);
	}
	free(two);
	free(loop);
}

/*
 * Sibling links that point back into the children just walked: without a
 * bound the walk takes 2^40 steps (fixtures/fx_nsloop.s).  SIGALRM ends
 * the test, failed, if it hangs.
 */
static void test_looping_siblings(void)
{
	char *bin = fx_path("fx_nsloop"), *text, *name;
	bool line;

	ok(!fx_sh("gcc -O2 -I%s/fixtures %s/fixtures/fx_inline.c %s/fixtures/fx_nsloop.s -o %s",
		  TEST_SRCDIR, TEST_SRCDIR, TEST_SRCDIR, bin),
	   "build a binary whose DWARF nests 40 namespaces with siblings pointing back");
	alarm(60);
	name = resolve_logged(bin, &text, &line);
	alarm(0);
	is_str(name ? name : "(none)", "fx_outer",
	       "looping siblings: symbols still name the frames");
	ok(text && strstr(text, "warning: ") && strstr(text, bin),
	   "looping siblings: one clear warning naming the file");
	ok(!line, "looping siblings: symbol-only output (no lines)");
	free(text);
	free(name);
	free(bin);
}

/*
 * Every @step-th address of @file (kmod.addrs: kallsyms address, .ko
 * offset; kimg.addrs: kallsyms address, vmlinux address) into @a and @off.
 */
static u32 kern_sample_addrs(const char *file, u64 *a, u64 *off, u32 max, u32 step)
{
	char *path = fx_path(file), *list = NULL, *line, *next;
	u32 n = 0, i = 0;
	size_t len;

	read_file(path, &list, &len, 1 << 24);
	for (line = list; line && *line && n < max; line = next, i++) {
		unsigned long long kaddr, o;
		char sec[64];

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (i % step || sscanf(line, "%llx %63s %llx", &kaddr, sec, &o) != 3)
			continue;
		a[n] = kaddr;
		off[n++] = o;
	}
	free(list);
	free(path);
	return n;
}

/* The frames of every address as fi_block() prints them, then the raw report. */
static char *kmod_text(struct resolver *r, struct profile *p, const u64 *a, const u64 *off, u32 n)
{
	struct sbuf sb = { 0 };
	char *raw;
	u32 i;

	for (i = 0; i < n; i++)
		fi_block(r, res_kernel(r, a[i]), off[i], &sb);
	raw = report_text(p, r, 1);
	sbuf_addstr(&sb, raw);
	free(raw);
	return sb.buf;
}

/*
 * A report of @cap with --kmod-dir @dir, --vmlinux @dir, or the standard
 * places of release 6.1.0-fx under @dir (@how; @dir NULL: none); stderr into @log; whether kernel address @xa, which the
 * capture did not sample, got a source line into @x_line.
 */
/* how kern_offline() is given its file */
enum { KF_KMOD_DIR, KF_VMLINUX, KF_ROOT };

static char *kern_offline(const char *cap, const char *dir, int how, const u64 *a, const u64 *off,
			  u32 n, u64 xa, bool *x_line, char **log)
{
	struct profile q;
	struct resolver r;
	struct maps ms;
	char err[256] = "", *text;

	prof_init(&q);
	maps_init(&ms, false);
	res_init(&r, &ms, false);
	fx_stderr_begin();
	if (capture_read(cap, &q, &ms, &r, "/nonexistent", err, sizeof(err)))
		printf("# %s: %s\n", cap, err);
	if (dir && how == KF_VMLINUX)
		kmods_set_vmlinux(&r.kmods, dir);
	else if (dir && how == KF_ROOT)
		kmods_add_release(&r.kmods, dir, "6.1.0-fx");
	else if (dir)
		kmods_add_dir(&r.kmods, dir);
	text = kmod_text(&r, &q, a, off, n);
	*x_line = res_fi(&r, res_kernel(&r, xa))->file != RES_NO_STR;
	*log = fx_stderr_back();
	res_free(&r);
	maps_free(&ms);
	prof_free(&q);
	return text;
}

/*
 * Samples at @a (kallsyms @ks) into @p, resolved with --kmod-dir @file or
 * (@vmlinux) --vmlinux @file; their frames as kmod_text() gives them, and
 * the capture @cap written.
 */
static char *kern_record(struct profile *p, const char *cap, const char *ks, const char *file,
			 bool vmlinux, const u64 *a, const u64 *off, u32 n)
{
	struct report rep;
	struct resolver r;
	struct maps ms;
	char *live;
	u32 i;

	prof_init(p);
	maps_init(&ms, false);
	res_init(&r, &ms, false);
	ok(!ksyms_load(&r.ksyms, ks, "/nonexistent"), "kallsyms read");
	r.ksyms_ready = true;
	if (vmlinux)
		kmods_set_vmlinux(&r.kmods, file);
	else
		kmods_add_dir(&r.kmods, file);
	for (i = 0; i < n; i++)
		add_sample(p, 10 + i, a[i], true);
	prof_sort(p);
	live = kmod_text(&r, p, a, off, n);
	report_build(&rep, p, &r);
	ok(!capture_write(cap, &rep, &ms), "capture of the kernel samples written");
	report_free(&rep);
	res_free(&r);
	maps_free(&ms);
	return live;
}

/*
 * Reports of @cap, a capture of kernel samples that gave @live when
 * recorded, with (@vmlinux) --vmlinux or --kmod-dir: without a file the
 * capture's frames; with another build @other too, refused with a warning
 * that begins with @refused; with the recorded build @same, taken: it gives
 * a line at @xa, which the capture did not sample.
 */
static void kern_offline_checks(const char *cap, const char *other, const char *same, bool vmlinux,
				const char *refused, const u64 *a, const u64 *off, u32 n, u64 xa,
				const char *live)
{
	const char *what = vmlinux ? "vmlinux" : ".ko";
	int how = vmlinux ? KF_VMLINUX : KF_KMOD_DIR;
	char *text, *log, *want;
	bool x_line;

	text = kern_offline(cap, NULL, how, a, off, n, xa, &x_line, &log);
	ok(!strcmp(text, live) && !x_line,
	   "offline, no %s: the capture's functions, lines and inline frames, no more", what);
	if (strcmp(text, live))
		printf("# offline:\n%.600s\n# live:\n%.600s\n", text, live);
	free(text);
	free(log);
	text = kern_offline(cap, other, how, a, off, n, xa, &x_line, &log);
	ok(!strcmp(text, live) && !x_line, "offline, another build's %s: the capture's stay", what);
	want = xasprintf("%s the capture recorded (build-id differs); the capture's lines stay",
			 refused);
	ok(strstr(log, want) != NULL, "the other build is refused with a warning naming it");
	if (!strstr(log, want))
		printf("# stderr: %s\n", log);
	free(want);
	free(text);
	free(log);
	text = kern_offline(cap, same, how, a, off, n, xa, &x_line, &log);
	ok(!strcmp(text, live) && x_line && !strstr(log, "not the build"),
	   "offline, the recorded build's %s: taken, the same frames, and a line where the "
	   "capture has none",
	   what);
	if (strcmp(text, live) || !x_line)
		printf("# line at the unsampled address: %d; stderr: %s\n# offline:\n%.600s\n",
		       x_line, log, text);
	free(text);
	free(log);
}

/*
 * A module whose two static functions share a name (fx_kdup_a.c and
 * fx_kdup_b.c, ld -r into one .ko): kallsyms' "kdup" cannot say which one
 * ran, so both keep the kallsyms name, without a line; kdup_a, named once,
 * gets its line.
 */
static void test_kernel_module_shared_name(void)
{
	char *ks = fx_path("kdupmod.kallsyms"), *dir = fx_path("kdupmod");
	struct resolver r, plain;
	const struct frame_info *fi;
	unsigned long long kdup = 0, kdup_a = 0;
	char *list, *line;
	struct maps ms;

	ok(!fx_sh("mkdir -p kdupmod && cd kdupmod && gcc -O2 -g -c %s/fixtures/fx_kdup_a.c && "
		  "gcc -O2 -g -c %s/fixtures/fx_kdup_b.c && ld -r --build-id=sha1 fx_kdup_a.o "
		  "fx_kdup_b.o -o fx_dup.ko && rm fx_kdup_?.o && readelf -sW fx_dup.ko | "
		  "python3 -c 'import sys\n"
		  "for f in (l.split() for l in sys.stdin):\n"
		  "    if len(f) == 8 and f[3] == \"FUNC\":\n"
		  "        print(\"%%x t %%s\\t[fx_dup]\" %% (0xffffffffc0200000 + int(f[1], 16), "
		  "f[7]))' > ../kdupmod.kallsyms",
		  TEST_SRCDIR, TEST_SRCDIR),
	   "a module with two static kdup, its kallsyms");
	list = fx_out("cat kdupmod.kallsyms");
	for (line = list; line && *line;
	     line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		unsigned long long a;
		char name[64];

		if (sscanf(line, "%llx t %63s", &a, name) != 2)
			continue;
		if (!strcmp(name, "kdup") && !kdup)
			kdup = a;
		if (!strcmp(name, "kdup_a"))
			kdup_a = a;
	}
	free(list);
	kern_resolvers(&r, &plain, &ms, ks);
	kmods_add_dir(&r.kmods, dir);
	fi = res_fi(&r, res_kernel(&r, kdup + 1));
	ok(kdup && fi->file == RES_NO_STR && !strcmp(res_str(&r, fi->func), "kdup"),
	   "a name two functions of the .ko share: the kallsyms name, no line");
	fi = res_fi(&r, res_kernel(&r, kdup_a + 1));
	ok(kdup_a && fi->file != RES_NO_STR && strstr(res_str(&r, fi->file), "fx_kdup_a.c"),
	   "a name the .ko has once: its line");
	res_free(&plain);
	res_free(&r);
	maps_free(&ms);
	free(dir);
	free(ks);
}

/*
 * A capture of samples in module code, recorded with the .ko, reported
 * elsewhere: without any .ko the same functions, lines and inline frames
 * as live; a .ko of another build (same module, -O1) in --kmod-dir never
 * replaces them, and says why; the same build's .ko gives them too.
 */
static void test_kernel_module_capture(void)
{
	char *cap = fx_path("kmod.cyc"), *ks = fx_path("kmod.kallsyms"), *dir = fx_path("kmod"),
	     *other = fx_path("kmod-other"), *live, *text;
	u64 a[400], off[400], x[2], xo[2];
	struct resolver direct;
	struct profile p;
	struct maps ms;
	u32 n;

	kern_sample_addrs("kmod.addrs", x, xo, 2, 1);
	n = kern_sample_addrs("kmod.addrs", a, off, 400, 2);
	ok(n > 50, "%u module addresses sampled", n);
	ok(!fx_sh("mkdir -p kmod-other && gcc -O1 -g -c -I%s/fixtures "
		  "%s/fixtures/fx_inline.c -o kmod-other/fx-mod.o && ld -r "
		  "--build-id=sha1 kmod-other/fx-mod.o -o kmod-other/fx-mod.ko && "
		  "rm kmod-other/fx-mod.o",
		  TEST_SRCDIR, TEST_SRCDIR),
	   "another build of the module (-O1, its own build-id)");
	live = kern_record(&p, cap, ks, dir, false, a, off, n);
	ok(strstr(live, "fx_inline.h:") && strstr(live, " fx_mix (inlined) "),
	   "live: module frames have source lines and inline frames, in the report too");

	/* the other build, used directly, gives other lines: the check below can fail */
	maps_init(&ms, false);
	res_init(&direct, &ms, false);
	ksyms_load(&direct.ksyms, ks, "/nonexistent");
	direct.ksyms_ready = true;
	kmods_add_dir(&direct.kmods, other);
	text = kmod_text(&direct, &p, a, off, n);
	ok(strcmp(text, live) && strstr(text, "fx_inline.h:"),
	   "the -O1 build's .ko, used directly, gives lines, other ones than the recorded build's");
	free(text);
	res_free(&direct);
	maps_free(&ms);
	prof_free(&p);

	kern_offline_checks(cap, other, dir, false, "fx-mod.ko: not the build of module fx_mod", a,
			    off, n, x[1], live);
	free(live);
	free(other);
	free(dir);
	free(ks);
	free(cap);
}

/* tests/fixtures/mkvmlinux.sh's kernel image stand-in in @dir, built -O@opt. */
static bool kimg_build(const char *dir, int opt)
{
	return !fx_sh("sh %s/fixtures/mkvmlinux.sh %s/fixtures %s %d", TEST_SRCDIR, TEST_SRCDIR,
		      dir, opt);
}

/*
 * kinner, a label kallsyms lists and the vmlinux has no function of: a
 * vmlinux whose build is not known to be the one that ran gives it nothing,
 * and says nothing (a kernel has such labels).
 */
static void kinner_alone(struct resolver *r)
{
	u64 xa, xva;
	char *log;
	u32 idx;

	kern_sample_addrs("kimg.kinner", &xa, &xva, 1, 1);
	fx_stderr_begin();
	idx = res_kernel(r, xa);
	log = fx_stderr_back();
	ok(res_fi(r, idx)->file == RES_NO_STR &&
		   !strcmp(res_str(r, res_fi(r, idx)->func), "kinner") && !*log,
	   "a label the unchecked vmlinux has no function of: its kallsyms name, no line, no "
	   "warning");
	if (*log)
		printf("# stderr: %s\n", log);
	free(log);
}

/*
 * Samples in core kernel code: with a vmlinux, every address gets its
 * function, source line and inline frames, the same as addr2line -f -i on
 * the vmlinux, both static kdup functions their own; without it, the
 * kallsyms name alone.
 */
static void test_kernel_image(void)
{
	char *vml = fx_path("kimg/vmlinux"), *ks = fx_path("kimg.kallsyms");
	char *theirs;
	struct sbuf ours = { 0 };
	u32 n, i, with_inline = 0, differ = 0, lines = 0;
	struct resolver r, plain;
	struct maps ms;
	u64 *a = xcalloc(1 << 16, sizeof(*a)), *va = xcalloc(1 << 16, sizeof(*va));

	ok(kimg_build("kimg", 2), "kernel image fixture: a vmlinux with -g and a build-id, two "
				  "static kdup and entry code of no type, its kallsyms shifted as "
				  "KASLR shifts");
	n = kern_sample_addrs("kimg.addrs", a, va, 1 << 16, 1);
	kern_resolvers(&r, &plain, &ms, ks);
	kmods_set_vmlinux(&r.kmods, vml);
	for (i = 0; i < n; i++) {
		u32 idx = res_kernel(&r, a[i]);

		fi_block(&r, idx, va[i], &ours);
		with_inline += res_fi(&r, idx)->nr_inl > 0;
		lines += res_fi(&r, idx)->file != RES_NO_STR;
		if (!i) {
			const struct frame_info *fi = res_fi(&plain, res_kernel(&plain, a[i]));

			ok(res_fi(&r, idx)->file != RES_NO_STR && fi->file == RES_NO_STR &&
				   !strcmp(res_str(&plain, fi->func), "kdup"),
			   "the first frame, in a kdup: the vmlinux gives a line; without it, the "
			   "kallsyms name alone");
			is_str(res_str(&r, res_fi(&r, idx)->dso), "[kernel.kallsyms]",
			       "the frame's dso");
		}
	}
	theirs = fx_out("cut -d' ' -f3 kimg.addrs | addr2line -a -f -i -C -e kimg/vmlinux | "
			"sed 's/ (discriminator [0-9]*)//'");
	ok(theirs && strstr(theirs, "kdup_a.c:") && strstr(theirs, "kdup_b.c:") &&
		   strstr(theirs, "fx_kasm.S:"),
	   "addr2line names both kdup files and the entry code's");
	kinner_alone(&r);
	{
		u32 ki = kmods_index(&r.kmods, KMOD_KERNEL), id_len;
		const struct dso *kd = NULL;
		const char *kname;
		const u8 *id;

		if (ki != UINT32_MAX)
			kd = kmods_module(&r.kmods, ki, &kname, &id, &id_len);
		/* then an address in no symbol is in no nested function: no tree is read for it */
		ok(kd && kd->local_funcs, "the vmlinux's symbols name its local functions");
	}
	differ = blocks_differ(ours.buf, theirs, "kernel");
	ok(n > 100 && lines == n && with_inline > 10 && !differ,
	   "kernel code: %u addresses (%u with lines, %u with inline frames), %u differ from "
	   "addr2line -f -i on the vmlinux",
	   n, lines, with_inline, differ);
	free(theirs);
	sbuf_free(&ours);
	res_free(&plain);
	res_free(&r);
	maps_free(&ms);
	free(va);
	free(a);
	free(ks);
	free(vml);
}

/*
 * A capture of kernel samples recorded with a vmlinux, reported elsewhere:
 * without it the same frames; another build's vmlinux (-O1) never replaces
 * them, and says why; the recorded build's gives them too.
 */
static void test_kernel_image_capture(void)
{
	char *cap = fx_path("kimg.cyc"), *ks = fx_path("kimg.kallsyms"),
	     *vml = fx_path("kimg/vmlinux"), *other = fx_path("kimg-other/vmlinux"), *live;
	u64 a[400], va[400], x[2], xo[2];
	struct profile p;
	u32 n;

	n = kern_sample_addrs("kimg.addrs", a, va, 400, 3);
	ok(n > 50, "%u kernel addresses sampled", n);
	ok(kimg_build("kimg-other", 1), "another build of the kernel (-O1, its own build-id)");
	live = kern_record(&p, cap, ks, vml, true, a, va, n);
	ok(strstr(live, "dup_b.c:") && strstr(live, "fx_inline.h:") &&
		   strstr(live, " fx_mix (inlined) "),
	   "live: kernel frames have source lines and inline frames, in the report too");
	prof_free(&p);

	/* the second address of the list: in a sampled function, not sampled */
	kern_sample_addrs("kimg.addrs", x, xo, 2, 1);
	kern_offline_checks(cap, other, vml, true,
			    "kimg-other/vmlinux: not the build of the kernel", a, va, n, x[1],
			    live);
	free(live);
	free(other);
	free(vml);
	free(ks);
	free(cap);
}

/*
 * kinner again, in a capture: the recorded build's vmlinux, checked
 * against the build-id the capture stores, is trusted where kallsyms names
 * a label it has no function of: its DWARF gives the line.
 */
static void test_kernel_image_trusted(void)
{
	char *cap = fx_path("kinner.cyc"), *ks = fx_path("kimg.kallsyms"),
	     *vml = fx_path("kimg/vmlinux"), *live, *text, *log;
	struct profile p;
	u64 x[2], xo[2];
	bool x_line;

	kern_sample_addrs("kimg.kinner", x, xo, 2, 1);
	live = kern_record(&p, cap, ks, vml, true, x, xo, 1);
	prof_free(&p);
	text = kern_offline(cap, vml, KF_VMLINUX, x, xo, 1, x[1], &x_line, &log);
	ok(!strstr(live, "fx_kasm.S:") && strstr(text, "kinner\n") && strstr(text, "fx_kasm.S:") &&
		   x_line,
	   "a label the checked vmlinux has no function of: its kallsyms name and the line its "
	   "DWARF gives (unchecked, when recorded: none)");
	free(text);
	free(log);
	free(live);
	free(vml);
	free(ks);
	free(cap);
}

/*
 * The standard places, under a root as --symfs gives one: another build at
 * the first is passed over without a warning when the second has the
 * recorded one; one warning when none has it.
 */
static void test_kernel_image_places(void)
{
	char *cap = fx_path("kimg.cyc"), *root = fx_path("kroot"), *log, *text;
	u64 a[400], va[400], x[2], xo[2];
	bool x_line;
	u32 n;

	n = kern_sample_addrs("kimg.addrs", a, va, 400, 3);
	kern_sample_addrs("kimg.addrs", x, xo, 2, 1);
	ok(!fx_sh("mkdir -p kroot/usr/lib/debug/boot kroot/boot && "
		  "cp kimg-other/vmlinux kroot/usr/lib/debug/boot/vmlinux-6.1.0-fx && "
		  "cp kimg/vmlinux kroot/boot/vmlinux-6.1.0-fx"),
	   "a root with another build in the debug package's place, the recorded one in /boot");
	text = kern_offline(cap, root, KF_ROOT, a, va, n, x[1], &x_line, &log);
	ok(x_line && !*log, "the recorded build in /boot taken, the other passed over silently");
	if (*log)
		printf("# stderr: %s\n", log);
	free(text);
	free(log);
	ok(!fx_sh("rm kroot/boot/vmlinux-6.1.0-fx"), "the recorded build removed");
	text = kern_offline(cap, root, KF_ROOT, a, va, n, x[1], &x_line, &log);
	ok(!x_line && strstr(log, "the kernel: none of the 1 vmlinux files at the standard places "
				  "is the build that ran"),
	   "none of the build that ran: one warning");
	free(text);
	free(log);
	free(root);
	free(cap);
}

/* A .debug_aranges set (32-bit DWARF, 8-byte addresses) for the unit whose header is at @unit. */
static void put_set(struct sbuf *b, u64 unit, const struct dwarange *r, u32 n)
{
	u32 len = 2 + 4 + 1 + 1 + 4 + 16 * (n + 1), i;
	u64 pair[2];

	sbuf_add(b, &len, 4);
	sbuf_add(b, &(u16){ 2 }, 2);
	sbuf_add(b, &(u32){ unit }, 4);
	sbuf_add(b, &(u8[6]){ 8, 0 }, 6); /* address size, segment size, padding to 16 */
	for (i = 0; i <= n; i++) {
		pair[0] = i < n ? r[i].start : 0;
		pair[1] = i < n ? r[i].end - r[i].start : 0;
		sbuf_add(b, pair, 16);
	}
}

static int dwarange_cmp(const void *a, const void *b, void *arg)
{
	const struct dwarange *x = a, *y = b;

	(void)arg;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* Every function's frames in @v as in @t (another .debug_aranges, the same code): differences. */
static u32 frames_differ(struct lt *t, struct lt *v)
{
	u32 i, differ = 0;
	u64 a;

	for (i = 0; i < t->d->nr_syms; i++)
		for (a = t->d->syms[i].start; a < t->d->syms[i].end; a++) {
			const struct frame_info *x =
				res_fi(&t->r, res_user(&t->r, LT_PID, 0, lt_addr(t->d, a)));
			const struct frame_info *y =
				res_fi(&v->r, res_user(&v->r, LT_PID, 0, lt_addr(v->d, a)));

			differ += x->nr_inl != y->nr_inl || x->line != y->line ||
				  strcmp(res_str(&t->r, x->file), res_str(&v->r, y->file));
		}
	return differ;
}

/* The sets of @e in variant @v of test_aranges_layouts() (@a0: A's first entry; @b0: B's). */
static void put_variant(struct sbuf *b, const struct dwarange *e, u32 nr, u32 v,
			const struct dwarange *a0, const struct dwarange *b0)
{
	u32 i;

	for (i = 0; i < nr; i++) {
		struct dwarange r[2] = { e[i], e[i] };
		bool a = e[i].start == a0->start;

		if (v == 0 && e[i].unit == b0->unit)
			continue; /* B's entries gone */
		if (v == 0 && a) {
			r[0].end = b0->end; /* over B */
			r[1].start = a0->end - 1; /* A's last byte */
		} else if (v == 1 && a) {
			r[1].start = r[1].end = b0->start;
		}
		put_set(b, e[i].unit + (v == 2 && a ? 11 : 0), r, a && v < 2 ? 2 : 1);
	}
}

/*
 * .debug_aranges that producers do not write, put into a link of three
 * units with objcopy: an address finds the same unit, and so the same
 * frames, as in the link as built.  Unit A's entry stretched over unit B
 * (which loses its own), and another of A at A's last byte: the entry
 * starting last at or below an address is the one asked, as libdw asks, so
 * B's addresses find B by its own ranges.  An empty entry of A at B's start.
 * A set naming A by an offset inside it (libdw finds the unit around it).
 */
static void test_aranges_layouts(void)
{
	static const char *const what[] = {
		"an entry stretched over another unit, a later one at its own unit's end",
		"an empty entry at another unit's start",
		"a set naming its unit by an offset inside it",
	};
	char *orig = fx_path("ar_orig.bin"), *bin = fx_path("ar_three"), *sec = NULL;
	struct dwarange *e = NULL, a0, b0;
	struct lt t;
	size_t size;
	u32 nr = 0, i, v;

	ok(!fx_sh("gcc -O2 -g -c %s/fixtures/fx_kdup_b.c -o ar_b.o && "
		  "gcc -O2 -g -c %s/fixtures/fx_kdup_a.c -o ar_c.o && "
		  "gcc -O2 -g -I%s/fixtures %s/fixtures/fx_inline.c ar_b.o ar_c.o -o ar_three && "
		  "objcopy --dump-section .debug_aranges=ar_orig.bin ar_three",
		  TEST_SRCDIR, TEST_SRCDIR, TEST_SRCDIR, TEST_SRCDIR),
	   "build a link of three units, its .debug_aranges dumped");
	if (read_file(orig, &sec, &size, 1 << 20) ||
	    !dwaranges_read((const u8 *)sec, size, false, &e, &nr) || nr < 3 || !lt_open(&t, bin)) {
		ok(0, "the link's .debug_aranges read");
		goto out;
	}
	/* A: the unit of the lowest entry; B: another unit's entry above it */
	sort(e, nr, sizeof(*e), dwarange_cmp, NULL);
	a0 = e[0];
	for (i = 1, b0 = a0; i < nr && b0.unit == a0.unit; i++)
		b0 = e[i];
	for (v = 0; v < ARRAY_SIZE(what); v++) {
		char *file = xasprintf("ar_v%u", v);
		char *path = fx_path(file), *obj = xasprintf("%s.o", path);
		struct sbuf b = { 0 };
		struct lt x;
		bool put;
		FILE *f;

		put_variant(&b, e, nr, v, &a0, &b0);
		f = fopen(path, "w");
		put = f && fwrite(b.buf, 1, b.len, f) == b.len && !fclose(f) &&
		      !fx_sh("objcopy --update-section .debug_aranges=%s ar_three %s.o && "
			     "objcopy --dump-section .debug_aranges=%s.chk %s.o && cmp -s %s %s.chk",
			     file, file, file, file, file, file) &&
		      lt_open(&x, obj);
		ok(put && b0.unit != a0.unit, ".debug_aranges with %s put in", what[v]);
		ok(put && !frames_differ(&t, &x),
		   ".debug_aranges with %s: every address's frames as built", what[v]);
		if (put)
			lt_close(&x);
		sbuf_free(&b);
		free(obj);
		free(path);
		free(file);
	}
	lt_close(&t);
out:
	free(e);
	free(sec);
	free(orig);
	free(bin);
}

/* fx_inline.c's include directory and path, for a compiler's command line */
#define FX_INLINE TEST_SRCDIR "/fixtures " TEST_SRCDIR "/fixtures/fx_inline.c"

int main(void)
{
	if (!have_tool("addr2line") || !have_tool("objcopy")) {
		tap_skip("binutils missing");
		return tap_done();
	}
	build_fixtures();
	test_against_addr2line();
	test_relative_comp_dir();
	test_clang_dwarf5();
	test_nested_no_locals();
	test_entry_gap(true);
	test_entry_gap(false);
	test_reports();
	test_corrupt_dwarf();
	test_corrupt_alone();
	test_looping_siblings();
	test_aranges_layouts();
	test_kernel_module("kmod", "gcc -O2 -g -c -I" FX_INLINE " -o kmod/fx-mod.o", 100, 10);
	test_kernel_module_relative();
	test_kernel_module_capture();
	test_kernel_module_shared_name();
	test_kernel_image();
	test_kernel_image_capture();
	test_kernel_image_trusted();
	test_kernel_image_places();
	return tap_done();
}
