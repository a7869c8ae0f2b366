// SPDX-License-Identifier: GPL-2.0
/*
 * test_capture - capture files: a written session reads back into the same
 * reports; every truncation and thousands of random corruptions of a
 * capture end in a clear error or a valid report, never in a crash.  And
 * which side records (EXEC, EXIT, LOST) --raw prints under the filters.
 */
#include <errno.h>
#include <fcntl.h>

#include "fixtures.h"
#include "synth.h"
#include "tap.h"
#include "../capture.h"

struct sess {
	struct profile p;
	struct maps ms;
	struct resolver r;
};

static void sess_init(struct sess *s)
{
	prof_init(&s->p);
	maps_init(&s->ms, false);
	res_init(&s->r, &s->ms, false);
}

static void sess_free(struct sess *s)
{
	res_free(&s->r);
	maps_free(&s->ms);
	prof_free(&s->p);
}

/* All text reports of a session, concatenated. */
static char *reports(struct sess *s)
{
	struct report_opts o = { .keys = { KEY_DSO, KEY_SYM }, .nr_keys = 2 };
	struct report rep;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	report_build(&rep, &s->p, &s->r);
	report_header(&rep, f);
	report_top(&rep, &o, f);
	o.children = true;
	report_top(&rep, &o, f);
	report_footer(&rep, f);
	report_raw(&rep, &o, f);
	report_folded(&rep, f);
	report_free(&rep);
	fclose(f);
	return buf;
}

static char *slurp(const char *path, size_t *len)
{
	char *buf = NULL;

	if (read_file(path, &buf, len, 1 << 24))
		return NULL;
	return buf;
}

static int read_mem(const void *data, size_t len, char *err, size_t errlen, char **out)
{
	struct sess s;
	int ret;

	sess_init(&s);
	ret = capture_read_mem(data, len, &s.p, &s.ms, &s.r, "/nonexistent", err, errlen);
	if (!ret && out)
		*out = reports(&s);
	sess_free(&s);
	return ret;
}

/*
 * A stripped copy with the right build-id under --symfs must not replace
 * the stored symbols: a sample in lib_static (not in .dynsym) keeps its
 * name, and -v says why the copy was not used.
 */
static void test_stripped_copy(const char *cap0, const char *root, u64 in_static)
{
	char *cap = fx_path("static.cyc"), *root2 = fx_path("root2"), *log;
	char *lib = xasprintf("%s%s/libfx.so", root, fx_tmpdir());
	struct report rep;
	struct sess s;
	u64 u[1] = { in_static + 1 };

	(void)cap0;
	sess_init(&s);
	{
		char *maps = xasprintf("7f0000000000-7f0000100000 r-xp 00000000 00:00 0 %s\n", lib);

		maps_read(&s.ms, SY_PID, 0, maps);
		free(maps);
	}
	sy_sample(&s.p, 10, 0, CYCSAMPLE_SAMPLE_USER, 0, NULL, 0, u, 1);
	prof_sort(&s.p);
	report_build(&rep, &s.p, &s.r);
	ok(!capture_write(cap, &rep, &s.ms), "capture with a sample in lib_static");
	report_free(&rep);
	sess_free(&s);
	ok(!fx_sh("mkdir -p $(dirname %s%s) && strip --strip-all -o %s%s %s", root2, lib, root2,
		  lib, lib),
	   "a stripped copy (same build-id) under another symfs");

	verbose = 1;
	fx_stderr_begin();
	sess_init(&s);
	ok(!capture_read(cap, &s.p, &s.ms, &s.r, root2, (char[256]){ 0 }, 256),
	   "read with the stripped copy's --symfs");
	log = fx_stderr_back();
	verbose = 0;
	is_str(res_str(&s.r, res_fi(&s.r, res_user(&s.r, SY_PID, 10, in_static + 1))->func),
	       "lib_static", "the stored name stays (the copy would give [libfx.so])");
	ok(s.ms.real_found == 1 && !s.ms.real_taken, "found, not taken");
	ok(strstr(log, "libfx.so: 1 symbols: stored in the capture") != NULL,
	   "-v: the library's symbols come from the capture");
	ok(strstr(log, "not used, the capture's symbols stay: it names 0 of the 1 symbols") != NULL,
	   "-v: the copy names 0 of the 1 stored symbols");
	if (!strstr(log, "names 0 of the 1"))
		printf("# stderr: %s\n", log);
	sess_free(&s);
	free(log);
	free(lib);
	free(root2);
	free(cap);
}

/*
 * --symfs: a capture names a real library; reported without it, only the
 * stored symbols are known; with the library found under --symfs (build-id
 * equal), a symbol the recording never hit resolves too.
 */
static void test_symfs(void)
{
	char *root = fx_path("root"), *cap = fx_path("lib.cyc"), *lib = fx_path("libfx.so");
	char *maps, *log;
	u64 unhit = 0, hit = 0;
	struct report rep;
	struct sess s;
	struct map *m;
	u32 i;

	ok(!fx_sh("gcc -O1 -g -fPIC -shared %s/fixtures/fx_lib.c -o libfx.so", TEST_SRCDIR),
	   "build a library");
	maps = xasprintf("7f0000000000-7f0000100000 r-xp 00000000 00:00 0 %s\n", lib);
	sess_init(&s);
	maps_read(&s.ms, SY_PID, 0, maps);
	m = maps_find(&s.ms, SY_PID, 0, 0x7f0000000000ULL);
	ok(m && m->dso && m->build_id_len, "library mapped, with a build-id");
	if (!m || !m->dso)
		goto out;
	dso_load_syms(m->dso, NULL);
	for (i = 0; i < m->dso->nr_syms; i++) {
		const char *name = dso_sym_name(m->dso, &m->dso->syms[i]);

		if (!strcmp(name, "lib_static"))
			unhit = 0x7f0000000000ULL + m->dso->syms[i].start;
		if (!strcmp(name, "lib_func"))
			hit = 0x7f0000000000ULL + m->dso->syms[i].start;
	}
	ok(unhit && hit, "symbols found");
	/* one sample in lib_func only */
	{
		u64 u[1] = { hit + 1 };

		sy_sample(&s.p, 10, 0, CYCSAMPLE_SAMPLE_USER, 0, NULL, 0, u, 1);
	}
	prof_sort(&s.p);
	report_build(&rep, &s.p, &s.r);
	ok(!capture_write(cap, &rep, &s.ms), "capture naming the library written");
	report_free(&rep);
	sess_free(&s);
	ok(!fx_sh("mkdir -p root%s && mv libfx.so root%s/", fx_tmpdir(), fx_tmpdir()),
	   "move the library under a symfs root");

	sess_init(&s);
	ok(!capture_read(cap, &s.p, &s.ms, &s.r, NULL, (char[256]){ 0 }, 256),
	   "read without --symfs");
	ok(res_fi(&s.r, res_user(&s.r, SY_PID, 10, hit + 1))->flags & FI_RESOLVED,
	   "stored symbol resolves without binaries");
	ok(!(res_fi(&s.r, res_user(&s.r, SY_PID, 10, unhit + 1))->flags & FI_RESOLVED),
	   "a symbol never hit is unknown without the binary");
	sess_free(&s);

	sess_init(&s);
	verbose = 1;
	fx_stderr_begin();
	ok(!capture_read(cap, &s.p, &s.ms, &s.r, root, (char[256]){ 0 }, 256), "read with --symfs");
	log = fx_stderr_back();
	verbose = 0;
	is_str(res_str(&s.r, res_fi(&s.r, res_user(&s.r, SY_PID, 10, unhit + 1))->func),
	       "lib_static", "with --symfs the real file names every symbol");
	ok(s.ms.real_found == 1 && s.ms.real_taken == 1, "one file found and taken");
	ok(strstr(log, "libfx.so: replaces the capture's symbols of ") != NULL,
	   "-v: the symfs file named as the new source");
	free(log);
	sess_free(&s);
	test_stripped_copy(cap, root, unhit);
out:
	free(maps);
	free(root);
	free(cap);
	free(lib);
}

/* A cut inside the END section is reported as one, not as an unknown section. */
static void test_cut_in_end(const char *data, size_t len)
{
	char err[256] = "";

	read_mem(data, len - 8, err, sizeof(err), NULL);
	ok(strstr(err, "END section") != NULL, "cut inside END: '%s'", err);
}

/*
 * Sections beyond 4 GiB: a capture whose first section is a 5 GiB hole of an
 * unknown type (a sparse file: nothing is written or read there) still
 * reads, END offset and all.
 */
static void test_beyond_4g(const char *data, size_t len)
{
	char *path = fx_path("big.cyc"), err[256] = "";
	const u64 hole = 5ULL << 30;
	u8 hdr[16] = { 0 };
	u32 type = 0x7777, nr;
	u64 end_off;
	struct sess s;
	int fd, ret;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	memcpy(hdr, &type, 4);
	memcpy(hdr + 8, &hole, 8);
	/* header, the hole's section header, the hole, then every original section */
	ok(fd >= 0 && pwrite(fd, data, 32, 0) == 32 && pwrite(fd, hdr, 16, 32) == 16 &&
		   pwrite(fd, data + 32, len - 32, 48 + hole) == (ssize_t)(len - 32),
	   "sparse capture with a 5 GiB section written");
	/* END: one more section before it, and its offset moved by the hole */
	memcpy(&nr, data + len - 16, 4);
	memcpy(&end_off, data + len - 8, 8);
	nr++;
	end_off += 16 + hole;
	ok(pwrite(fd, &nr, 4, 16 + hole + len - 16) == 4 &&
		   pwrite(fd, &end_off, 8, 16 + hole + len - 8) == 8,
	   "END patched: offset %llu", (unsigned long long)end_off);
	close(fd);
	sess_init(&s);
	ret = capture_read(path, &s.p, &s.ms, &s.r, "/nonexistent", err, sizeof(err));
	ok(!ret, "read back across 4 GiB%s%s", ret ? ": " : "", err);
	is_u64(s.p.nr_samples, 17, "all 17 samples of the synthetic session there");
	sess_free(&s);
	unlink(path);
	free(path);
}

/* More than the writer's 1 MiB buffer: section sizes are patched in place. */
static void test_large_round_trip(void)
{
	char *path = fx_path("large.cyc"), err[256] = "", *live, *back = NULL, *data;
	struct report rep;
	struct sess s;
	size_t len;

	sess_init(&s);
	synth_build(&s.p, &s.ms, &s.r);
	synth_scale(&s.p, 30000, 10000);
	live = reports(&s);
	report_build(&rep, &s.p, &s.r);
	ok(!capture_write(path, &rep, &s.ms), "large capture written");
	report_free(&rep);
	sess_free(&s);
	data = slurp(path, &len);
	ok(data && len > (2U << 20), "larger than the write buffer (%zu bytes)", len);
	ok(data && !read_mem(data, len, err, sizeof(err), &back), "large capture parsed %s", err);
	ok(back && !strcmp(live, back), "its reports equal the live ones");
	free(data);
	free(back);
	free(live);
	free(path);
}

/* A line "KEY: N kB" of /proc/self/status, in kB; -1 when absent. */
static long status_kb(const char *key)
{
	char *text = NULL, *p;
	size_t len;
	long kb = -1;

	if (read_file("/proc/self/status", &text, &len, 1 << 16))
		return -1;
	p = strstr(text, key);
	if (p)
		kb = strtol(p + strlen(key) + 1, NULL, 10);
	free(text);
	return kb;
}

/*
 * Writing a capture adds a bounded amount of memory to what the session
 * holds, whatever its size: the peak RSS (reset by clear_refs just before)
 * grows by far less than the file.  A writer that built the capture in
 * memory first would grow it by the whole file.
 */
static void test_write_memory_bounded(void)
{
	char *path = fx_path("big.cyc");
	struct report rep;
	struct sess s;
	struct stat st;
	u64 u[128];
	long rss, hwm;
	u32 i, k;
	int fd;

	sess_init(&s);
	synth_build(&s.p, &s.ms, &s.r);
	for (k = 0; k < ARRAY_SIZE(u); k++)
		u[k] = SY_APP + 0x1010 + 0x10 * (k % 4);
	/* 48 000 samples of 128 frames: a capture of about 50 MB */
	for (i = 0; i < 48000; i++)
		sy_sample(&s.p, 10000 + i, i & 1, CYCSAMPLE_SAMPLE_USER, 0, NULL, 0, u, 128);
	prof_sort(&s.p);
	report_build(&rep, &s.p, &s.r);
	fd = open("/proc/self/clear_refs", O_WRONLY);
	if (fd < 0 || write(fd, "5", 1) != 1) {
		tap_skip("cannot reset the peak RSS (/proc/self/clear_refs)");
	} else {
		rss = status_kb("VmRSS:");
		ok(!capture_write(path, &rep, &s.ms), "50 MB capture written");
		hwm = status_kb("VmHWM:");
		if (stat(path, &st))
			st.st_size = 0;
		ok(st.st_size > (48 << 20), "the file is %lld bytes", (long long)st.st_size);
		ok(rss > 0 && hwm > 0 && (hwm - rss) * 1024 < st.st_size / 8,
		   "writing it raised the peak RSS by %ld kB (at most an eighth of the file)",
		   hwm - rss);
	}
	if (fd >= 0)
		close(fd);
	report_free(&rep);
	sess_free(&s);
	unlink(path);
	free(path);
}

/* Names that are not UTF-8 (a JIT's, say) leave the SVG well-formed XML. */
static void test_svg_utf8(void)
{
	char *svg = fx_path("utf8.svg"), *text = NULL;
	struct jitmap *j;
	struct report rep;
	struct sess s;
	size_t len;
	u64 u[2];

	sess_init(&s);
	synth_build(&s.p, &s.ms, &s.r);
	j = res_jitmap(&s.r, SY_PID, true);
	jitmap_add(j, SY_JIT + 0x2000, SY_JIT + 0x2100,
		   "jit::\xff\xfe cut \xc3( surrogate \xed\xa0\x80 ctl \x01 ok \xc3\xa9");
	jitmap_finish(j);
	u[0] = SY_JIT + 0x2010;
	u[1] = SY_APP + 0x1010;
	sy_sample(&s.p, 9000, 0, CYCSAMPLE_SAMPLE_USER, 0, NULL, 0, u, 2);
	prof_sort(&s.p);
	report_build(&rep, &s.p, &s.r);
	ok(!report_svg(&rep, svg, "utf8 \xff", NULL), "svg written");
	report_free(&rep);
	sess_free(&s);
	ok(!fx_sh("python3 -c 'import sys, xml.dom.minidom as m; m.parse(sys.argv[1])' %s", svg),
	   "the SVG parses as XML");
	text = slurp(svg, &len);
	ok(text && strstr(text, "ok \xc3\xa9") && strstr(text, "jit::\xef\xbf\xbd"),
	   "valid UTF-8 kept, invalid bytes shown as U+FFFD");
	free(text);
	free(svg);
}

/*
 * A capture is written with SAMPLE records only (a SAMPLE_PC record is
 * kept as the sample it stands for), but one that holds a SAMPLE_PC record
 * (another writer, a hand-made file) reads back with it as a sample.  The
 * first sample of the file becomes a SAMPLE_PC record and a record of an
 * unknown type that fills the rest of its bytes.
 */
static char *with_sample_pc(const char *data, size_t len, const u8 *first)
{
	const struct cycsample_sample *orig = (const void *)first;
	struct cycsample_record_header filler;
	struct cycsample_sample_pc pc = {
		.hdr = { CYCSAMPLE_REC_SAMPLE_PC, sizeof(pc) },
		.time = orig->time,
		.pid = orig->pid,
		.tid = orig->tid,
		.cpu = orig->cpu,
		.flags = orig->flags | CYCSAMPLE_SAMPLE_UCHAIN_TRUNC,
		.arch = orig->arch,
		.pmu = orig->pmu,
		.period = orig->period,
		.pc = orig->pc,
	};
	char *copy = xmalloc(len), *at;

	memcpy(copy, data, len);
	at = memmem(copy, len, first, orig->hdr.size);
	ok(at && orig->hdr.size >= sizeof(pc) + 8, "the first sample found in the capture");
	if (!at) {
		free(copy);
		return NULL;
	}
	filler.type = 99;
	filler.size = orig->hdr.size - sizeof(pc);
	memcpy(at, &pc, sizeof(pc));
	memcpy(at + sizeof(pc), &filler, sizeof(filler));
	return copy;
}

static void test_sample_pc_in_capture(const char *copy, size_t len, const u8 *first, u32 nr)
{
	const struct cycsample_sample *orig = (const void *)first, *got = NULL;
	char err[256] = "";
	struct sess s;
	size_t i;

	sess_init(&s);
	ok(!capture_read_mem(copy, len, &s.p, &s.ms, &s.r, "/nonexistent", err, sizeof(err)),
	   "a capture with a SAMPLE_PC record parses%s%s", err[0] ? ": " : "", err);
	is_u64(s.p.nr_samples, nr, "as many samples as written");
	for (i = 0; i < s.p.nr_ev && !got; i++) {
		const struct cycsample_sample *x = prof_rec(&s.p, &s.p.ev[i]);

		if (s.p.ev[i].type == CYCSAMPLE_REC_SAMPLE && x->time == orig->time &&
		    !x->nr_user && !x->nr_kernel)
			got = x;
	}
	ok(got && got->hdr.type == CYCSAMPLE_REC_SAMPLE && got->hdr.size == 88 &&
		   got->pc == orig->pc && got->pid == orig->pid && got->tid == orig->tid &&
		   got->period == orig->period && !got->sp && !got->lr && got->flags == orig->flags,
	   "it reads back as a sample with its pc and no chain (chain flags dropped)");
	sess_free(&s);
}

/* Every prefix of @data: a clear error each time. */
static void test_truncations(const char *data, size_t len, const char *what)
{
	size_t i, failed = 0, silent = 0;
	char err[256];

	for (i = 0; i < len; i++) {
		err[0] = '\0';
		if (read_mem(data, i, err, sizeof(err), NULL) != -1)
			failed++;
		else if (!err[0])
			silent++;
	}
	ok(!failed, "%s: all %zu truncations rejected", what, len);
	ok(!silent, "%s: each with a message", what);
}

/*
 * Random corruption of @data: each copy is parsed into reports or rejected
 * with a message (-1), nothing else; and some are rejected, or the
 * corruptions never reached the reader's checks.
 */
static void test_corruptions(const char *data, size_t len, u32 seed, const char *what)
{
	size_t i, parsed = 0, rejected = 0, silent = 0, other = 0;
	char err[256];
	u32 v;

	for (i = 0; i < 3000; i++) {
		char *copy = xmalloc(len), *out = NULL;
		int ret;
		u32 k;

		memcpy(copy, data, len);
		for (k = 0; k <= i % 4; k++) {
			seed = seed * 1103515245 + 12345;
			v = seed >> 8;
			if (i % 5 == 0)
				memset(copy + v % len, 0xff, MIN(4, len - v % len));
			else
				copy[v % len] ^= 1 << (seed & 7);
		}
		err[0] = '\0';
		ret = read_mem(copy, len, err, sizeof(err), &out);
		if (!ret && out) {
			parsed++;
		} else if (ret == -1) {
			rejected++;
			silent += !err[0];
		} else {
			other++;
		}
		free(out);
		free(copy);
	}
	ok(!other, "%s: 3000 corrupted captures, each parsed (%zu) or rejected (%zu)", what, parsed,
	   rejected);
	ok(!silent, "%s: each rejection with a message (%zu without)", what, silent);
	ok(rejected > 0, "%s: corruptions reach the reader's checks", what);
}

/*
 * The mapping a live session prefers at an address (maps_prefer(): the one
 * known to be there later) is the one a report of its capture finds: an
 * ld.so record older than the /proc read that showed a JIT page in its hole.
 */
static void test_map_order_kept(void)
{
	struct map rec = { .pid = 9, .start = 0x10000, .end = 0x40000, .prot = MAP_R | MAP_X };
	char *path = fx_path("maps.cyc"), err[256] = "";
	const struct map *m;
	struct report rep;
	struct sess s;
	u64 before;

	sess_init(&s);
	maps_new_gen(&s.ms, 9, 1000);
	before = kernel_mono_ns();
	maps_read(&s.ms, 9, 1000, "00030000-00031000 rwxp 00000000 00:00 0\n");
	rec.path = "/nonexistent/ld.so";
	maps_mapped(&s.ms, &rec, strlen(rec.path), before - 1);
	m = maps_find(&s.ms, 9, UINT64_MAX, 0x30010);
	ok(m && m->kind == MAP_ANON, "live: the page read later wins over the older record");
	report_build(&rep, &s.p, &s.r);
	ok(!capture_write(path, &rep, &s.ms), "capture of the two mappings written");
	report_free(&rep);
	sess_free(&s);
	sess_init(&s);
	ok(!capture_read(path, &s.p, &s.ms, &s.r, "/nonexistent", err, sizeof(err)),
	   "capture of the two mappings read %s", err);
	m = maps_find(&s.ms, 9, UINT64_MAX, 0x30010);
	ok(m && m->kind == MAP_ANON, "from the capture: the same mapping wins");
	sess_free(&s);
	unlink(path);
	free(path);
}

/* An EXEC or EXIT of a process that took no sample. */
static void other_task(struct profile *p, u32 type, u64 time)
{
	struct cycsample_task_event t = { .hdr = { type, sizeof(t) }, .time = time };

	t.pid = t.tid = SY_PID + 100;
	strcpy(t.comm, "sh");
	sy_add(p, &t);
}

/* --raw of the synthetic session and a process "sh", with side records and @filter. */
static char *raw_side(enum filter_kind kind, const char *filter)
{
	struct report_opts o = { .raw = true, .show_task_events = true, .show_lost_events = true };
	const char *why = NULL;
	struct report rep;
	char *buf = NULL, err[256] = "";
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct sess s;

	sess_init(&s);
	synth_build(&s.p, &s.ms, &s.r);
	other_task(&s.p, CYCSAMPLE_REC_EXEC, 1500);
	other_task(&s.p, CYCSAMPLE_REC_EXIT, 5800);
	prof_sort(&s.p);
	report_build(&rep, &s.p, &s.r);
	if (filter && !report_parse_filter(&o, kind, filter, &why))
		ok(0, "filter %s: %s", filter, why);
	else if (report_select(&rep, &o, err, sizeof(err)))
		ok(0, "filter %s: %s", filter, err);
	report_raw(&rep, &o, f);
	fclose(f);
	report_free(&rep);
	report_opts_free(&o);
	sess_free(&s);
	return buf;
}

/*
 * -p, -t and --comm keep the EXEC and EXIT records of the tasks they name
 * and every LOST record (it has no task); --dso and --symbol keep them all
 * (they have no frame).  The --time slice: golden raw-side-time.
 */
static void test_raw_side_records(void)
{
	static const struct {
		const char *opt; /* as the command line names the filter */
		enum filter_kind kind;
		const char *filter;
		bool app, sh;
	} c[] = {
		{ "(no filter)", FILTER_COMM, NULL, true, true },
		{ "--comm", FILTER_COMM, "app", true, false },
		{ "-p", FILTER_PID, "100", true, false },
		{ "-t", FILTER_TID, "101", false, false },
		{ "--dso", FILTER_DSO, "app", true, true },
		{ "--symbol", FILTER_SYMBOL, "compute", true, true },
	};
	u32 i;

	for (i = 0; i < ARRAY_SIZE(c); i++) {
		char *raw = raw_side(c[i].kind, c[i].filter);

		ok(!!strstr(raw, "app 100/100 [000] 0.000001000: EXEC app") == c[i].app &&
			   !!strstr(raw, "app 100/100 [000] 0.000006000: EXIT") == c[i].app &&
			   !!strstr(raw, "sh 200/200 [000] 0.000001500: EXEC sh") == c[i].sh &&
			   !!strstr(raw, "sh 200/200 [000] 0.000005800: EXIT") == c[i].sh &&
			   strstr(raw, "LOST 3 samples"),
		   "--raw %s%s%s: app's EXEC and EXIT %s, sh's %s, the LOST record kept", c[i].opt,
		   c[i].filter ? " " : "", c[i].filter ? c[i].filter : "",
		   c[i].app ? "kept" : "left out", c[i].sh ? "kept" : "left out");
		free(raw);
	}
}

/*
 * Periods that add up past 2^63 (a damaged capture): weighed by samples,
 * with a warning, never shares of a wrapped sum.
 */
static void test_period_overflow(void)
{
	struct report_opts o = { .keys = { KEY_SYM }, .nr_keys = 1 };
	struct report rep;
	char *buf = NULL, *log, err[256] = "";
	size_t len = 0, i;
	FILE *f = open_memstream(&buf, &len);
	struct sess s;

	sess_init(&s);
	synth_build(&s.p, &s.ms, &s.r);
	for (i = 0; i < s.p.nr_ev; i++) {
		struct cycsample_sample *smp = (void *)prof_rec(&s.p, &s.p.ev[i]);

		if (s.p.ev[i].type == CYCSAMPLE_REC_SAMPLE)
			smp->period = 1ULL << 62;
	}
	report_build(&rep, &s.p, &s.r);
	fx_stderr_begin();
	ok(!report_select(&rep, &o, err, sizeof(err)), "periods of 2^62: selected");
	log = fx_stderr_back();
	report_top(&rep, &o, f);
	fclose(f);
	ok(!rep.by_period && rep.total == rep.nr_samples && rep.total_period == INT64_MAX,
	   "... weighed by samples (%llu of %u), the periods' sum saturated",
	   (unsigned long long)rep.total, rep.nr_samples);
	ok(strstr(log, "periods add up past 2^63") != NULL, "... and said: '%s'", log);
	ok(strstr(buf, "Self samples") && !strstr(buf, "cycles"), "... as the table's unit says");
	free(log);
	free(buf);
	report_free(&rep);
	report_opts_free(&o);
	sess_free(&s);
}

int main(void)
{
	char *path = fx_path("s.cyc"), *a, *b = NULL, *data, *pc_data, err[256];
	struct report rep;
	struct sess s;
	size_t len, i;
	u32 v, nr_samples;
	u8 *first = NULL;
	int ret;

	sess_init(&s);
	synth_build(&s.p, &s.ms, &s.r);
	a = reports(&s);
	report_build(&rep, &s.p, &s.r);
	ok(!capture_write(path, &rep, &s.ms), "capture written");
	report_free(&rep);
	for (i = 0; i < s.p.nr_ev && !first; i++) {
		const struct cycsample_sample *x = prof_rec(&s.p, &s.p.ev[i]);

		if (s.p.ev[i].type == CYCSAMPLE_REC_SAMPLE) {
			first = xmalloc(x->hdr.size);
			memcpy(first, x, x->hdr.size);
		}
	}
	nr_samples = s.p.nr_samples;
	sess_free(&s);

	data = slurp(path, &len);
	ok(data && len > 64, "capture read back from disk (%zu bytes)", len);
	if (!data)
		return tap_done();
	ok(!memcmp(data, "CYCSCAP", 8), "file starts with the magic");
	ret = read_mem(data, len, err, sizeof(err), &b);
	ok(!ret, "capture parsed%s%s", ret ? ": " : "", ret ? err : "");
	ok(b && !strcmp(a, b), "every report from the capture equals the live one");
	if (b && strcmp(a, b))
		printf("# live:\n%s\n# capture:\n%s\n", a, b);
	free(b);

	test_map_order_kept();
	test_period_overflow();
	test_truncations(data, len, "the capture");
	read_mem(data, len / 2, err, sizeof(err), NULL);
	ok(strstr(err, "truncated") != NULL, "half a file: '%s'", err);
	test_corruptions(data, len, 4242, "the capture");

	memcpy(data, "XYZ", 3);
	read_mem(data, len, err, sizeof(err), NULL);
	ok(strstr(err, "bad magic") != NULL, "bad magic: '%s'", err);
	memcpy(data, "CYCSCAP", 3);
	v = 99;
	memcpy(data + 8, &v, 4);
	read_mem(data, len, err, sizeof(err), NULL);
	ok(strstr(err, "version 99") != NULL, "newer version: '%s'", err);
	memcpy(data, "CYCSCAP", 3);
	v = CAP_VERSION;
	memcpy(data + 8, &v, 4);
	pc_data = first ? with_sample_pc(data, len, first) : NULL;
	if (pc_data) {
		test_sample_pc_in_capture(pc_data, len, first, nr_samples);
		/* the expansion of a SAMPLE_PC record reads what a corrupt file holds */
		test_truncations(pc_data, len, "with a SAMPLE_PC record");
		test_corruptions(pc_data, len, 2424, "with a SAMPLE_PC record");
		free(pc_data);
	}
	free(first);
	test_cut_in_end(data, len);
	test_beyond_4g(data, len);
	free(data);
	free(a);
	free(path);
	test_large_round_trip();
	test_write_memory_bounded();
	test_svg_utf8();
	test_symfs();
	test_raw_side_records();
	return tap_done();
}
