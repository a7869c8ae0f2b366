// SPDX-License-Identifier: GPL-2.0
/*
 * test_capture - capture files: a written session reads back into the same
 * reports; every truncation and thousands of random corruptions of a
 * capture end in a clear error or a valid report, never in a crash.
 */
#include <errno.h>

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
	report_raw(&rep, f);
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
 * --symfs: a capture names a real library; reported without it, only the
 * stored symbols are known; with the library found under --symfs (build-id
 * equal), a symbol the recording never hit resolves too.
 */
static void test_symfs(void)
{
	char *root = fx_path("root"), *cap = fx_path("lib.cyc"), *lib = fx_path("libfx.so");
	char *maps;
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
	ok(!capture_read(cap, &s.p, &s.ms, &s.r, root, (char[256]){ 0 }, 256), "read with --symfs");
	is_str(res_str(&s.r, res_fi(&s.r, res_user(&s.r, SY_PID, 10, unhit + 1))->func),
	       "lib_static", "with --symfs the real file names every symbol");
	sess_free(&s);
out:
	free(maps);
	free(root);
	free(cap);
	free(lib);
}

int main(void)
{
	char *path = fx_path("s.cyc"), *a, *b = NULL, *data, err[256];
	struct report rep;
	struct sess s;
	size_t len, i, failed = 0, silent = 0, parsed = 0;
	u32 seed = 4242, v;
	int ret;

	sess_init(&s);
	synth_build(&s.p, &s.ms, &s.r);
	a = reports(&s);
	report_build(&rep, &s.p, &s.r);
	ok(!capture_write(path, &rep, &s.ms), "capture written");
	report_free(&rep);
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

	/* every prefix of the file: a clear error each time */
	for (i = 0; i < len; i++) {
		err[0] = '\0';
		if (read_mem(data, i, err, sizeof(err), NULL) != -1)
			failed++;
		else if (!err[0])
			silent++;
	}
	ok(!failed, "all %zu truncations rejected", len);
	ok(!silent, "each with a message");
	read_mem(data, len / 2, err, sizeof(err), NULL);
	ok(strstr(err, "truncated") != NULL, "half a file: '%s'", err);

	/* random corruption: errors or valid reports, nothing else */
	for (i = 0; i < 3000; i++) {
		char *copy = xmalloc(len), *out = NULL;
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
		if (!read_mem(copy, len, err, sizeof(err), &out))
			parsed++;
		free(out);
		free(copy);
	}
	ok(1, "3000 corrupted captures handled (%zu still parsed)", parsed);

	memcpy(data, "XYZ", 3);
	read_mem(data, len, err, sizeof(err), NULL);
	ok(strstr(err, "bad magic") != NULL, "bad magic: '%s'", err);
	memcpy(data, "CYCSCAP", 3);
	v = 99;
	memcpy(data + 8, &v, 4);
	read_mem(data, len, err, sizeof(err), NULL);
	ok(strstr(err, "version 99") != NULL, "newer version: '%s'", err);
	free(data);
	free(a);
	free(path);
	test_symfs();
	return tap_done();
}
