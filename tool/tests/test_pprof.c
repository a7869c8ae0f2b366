// SPDX-License-Identifier: GPL-2.0
/*
 * test_pprof - what --pprof writes, read back with protobuf-c: the sample
 * and period types, one mapping per object with its build-id and offset,
 * locations and functions, labels, merged samples and their sums, the
 * times, the default type --weight chose, the software clock's unit, and a
 * gzip file that inflates to the same message.  tests/check-pprof.py shows
 * that go tool pprof reads it as cycread reports it.
 */
#include <errno.h>
#include <zlib.h>

#include "fixtures.h"
#include "profile.pb-c.h"
#include "synth.h"
#include "tap.h"
#include "../report.h"

typedef Perftools__Profiles__Profile pb_profile;

struct sess {
	struct profile p;
	struct maps ms;
	struct resolver r;
	struct report rep;
};

static void sess_init(struct sess *s)
{
	prof_init(&s->p);
	maps_init(&s->ms, false);
	res_init(&s->r, &s->ms, false);
	synth_build(&s->p, &s->ms, &s->r);
	report_build(&s->rep, &s->p, &s->r);
}

static void sess_free(struct sess *s)
{
	report_free(&s->rep);
	res_free(&s->r);
	maps_free(&s->ms);
	prof_free(&s->p);
}

static pb_profile *encode(const struct report *rep)
{
	pb_profile *prof;
	size_t len;
	u8 *buf;

	report_pprof_mem(rep, &buf, &len);
	prof = perftools__profiles__profile__unpack(NULL, len, buf);
	free(buf);
	return prof;
}

static const char *s_(const pb_profile *p, int64_t i)
{
	return i >= 0 && (size_t)i < p->n_string_table ? p->string_table[i] : "(bad index)";
}

static const Perftools__Profiles__Mapping *mapping_named(const pb_profile *p, const char *name)
{
	size_t i;

	for (i = 0; i < p->n_mapping; i++)
		if (!strcmp(s_(p, p->mapping[i]->filename), name))
			return p->mapping[i];
	return NULL;
}

static const char *label_str(const pb_profile *p, const Perftools__Profiles__Sample *s,
			     const char *key)
{
	size_t i;

	for (i = 0; i < s->n_label; i++)
		if (!strcmp(s_(p, s->label[i]->key), key))
			return s_(p, s->label[i]->str);
	return NULL;
}

static int64_t label_num(const pb_profile *p, const Perftools__Profiles__Sample *s, const char *key)
{
	size_t i;

	for (i = 0; i < s->n_label; i++)
		if (!strcmp(s_(p, s->label[i]->key), key))
			return s->label[i]->num;
	return -1;
}

static void types_and_times(const pb_profile *p)
{
	is_u64(p->n_sample_type, 2, "two sample types");
	is_str(s_(p, p->sample_type[0]->type), "samples", "first type: samples");
	is_str(s_(p, p->sample_type[0]->unit), "count", "counted");
	is_str(s_(p, p->sample_type[1]->type), "cycles", "second type: cycles");
	is_str(s_(p, p->sample_type[1]->unit), "count", "counted");
	is_str(s_(p, p->default_sample_type), "cycles", "default type: cycles (--weight period)");
	ok(p->period_type && !strcmp(s_(p, p->period_type->type), "cycles"), "period type cycles");
	/* frequency mode: the mean period of the 17 samples */
	is_u64(p->period, 15600000 / 17, "period: the mean period in frequency mode");
	is_u64(p->time_nanos, 1700000000ULL * 1000000000ULL, "time_nanos: the session's start");
	is_u64(p->duration_nanos, 2500000000ULL, "duration_nanos: the session's length");
	ok(p->n_comment >= 3 && !strcmp(s_(p, p->comment[0]), "cycread test"),
	   "comments name cycread, the kernel and the host");
}

static void mappings(const pb_profile *p)
{
	const Perftools__Profiles__Mapping *app = mapping_named(p, "/usr/bin/app");
	const Perftools__Profiles__Mapping *libc =
		mapping_named(p, "/lib/aarch64-linux-gnu/libc.so.6");
	const Perftools__Profiles__Mapping *k = mapping_named(p, "[kernel.kallsyms]");

	is_u64(p->n_mapping, 6, "six mappings: app, libc, kernel, module, jit, unknown");
	ok(app && libc && k && mapping_named(p, "[cycsample]") && mapping_named(p, "[jit]"),
	   "mappings named by path or kernel object");
	if (!app || !libc || !k)
		return;
	is_str(s_(p, app->build_id), "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "app build-id");
	is_str(s_(p, libc->build_id), "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", "libc build-id");
	is_u64(app->memory_start, SY_APP, "app mapped where the process had it");
	is_u64(app->memory_limit, SY_APP + 0x10000, "... up to its end");
	is_u64(app->file_offset, 0, "... from file offset 0");
	ok(app->has_functions && !app->has_line_numbers, "app: functions, no lines yet");
	is_u64(k->memory_start, SY_K + 0x1020, "kernel mapping starts at the lowest sampled pc");
	is_u64(k->memory_limit, SY_K + 0x2014 + 1, "... and ends after the highest");
}

/* Every location's line names a function; every id is in range. */
static void locations(const pb_profile *p)
{
	size_t i, bad = 0, compute = 0;

	for (i = 0; i < p->n_location; i++) {
		const Perftools__Profiles__Location *l = p->location[i];
		u64 fn;

		if (l->id != i + 1 || !l->mapping_id || l->mapping_id > p->n_mapping ||
		    l->n_line != 1) {
			bad++;
			continue;
		}
		fn = l->line[0]->function_id;
		if (!fn || fn > p->n_function) {
			bad++;
			continue;
		}
		if (!strcmp(s_(p, p->function[fn - 1]->name), "compute"))
			compute++;
	}
	ok(!bad, "%zu locations, each with a mapping and a function", p->n_location);
	/*
	 * six sampled pcs in compute, and the return address 0x1210 once more:
	 * as a leaf it is compute+0x10, as a caller it is looked up one byte
	 * back, so it is a location of its own
	 */
	is_u64(compute, 7, "one location per address and lookup: seven in compute");
	is_u64(p->n_function, 12, "one function per name and object");
}

static void samples(const pb_profile *p)
{
	u64 n = 0, cycles = 0, cpu1 = 0;
	size_t i;
	int bad = 0;

	for (i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];

		if (s->n_value != 2 || !s->n_location_id) {
			bad++;
			continue;
		}
		n += s->value[0];
		cycles += s->value[1];
		if (label_num(p, s, "pid") != 100 || !label_str(p, s, "comm") ||
		    strcmp(label_str(p, s, "comm"), "app") || !label_str(p, s, "pmu") ||
		    strcmp(label_str(p, s, "pmu"), "armv8_pmuv3"))
			bad++;
		if (label_num(p, s, "cpu") == 1) {
			cpu1 += s->value[0];
			bad += label_num(p, s, "tid") != 101;
		} else {
			bad += label_num(p, s, "cpu") != 0 || label_num(p, s, "tid") != 100;
		}
	}
	ok(!bad, "every sample: two values, pid, tid, cpu, comm and pmu labels");
	is_u64(n, 17, "samples summed: 17");
	is_u64(cycles, 15600000, "periods summed: the table's total");
	is_u64(cpu1, 9, "nine samples on cpu 1 (tid 101)");
	/* two pairs of samples share stack and labels (memcpy on cpu 0, compute+0x4) */
	is_u64(p->n_sample, 15, "identical stacks and labels merged: 15 samples");
}

static void weight_and_clock(void)
{
	struct report_opts o = { .weight = WEIGHT_SAMPLES };
	struct sess s;
	pb_profile *p;
	char err[256];

	sess_init(&s);
	ok(report_parse_time(&o, "0.000003,", (const char *[]){ NULL }), "--time 0.000003,");
	ok(!report_select(&s.rep, &o, err, sizeof(err)), "select");
	p = encode(&s.rep);
	ok(p != NULL, "unpacked");
	if (p) {
		is_str(s_(p, p->default_sample_type), "samples", "--weight samples: default type");
		is_u64(p->time_nanos, 1700000000ULL * 1000000000ULL + 3000,
		       "a --time slice moves time_nanos");
		is_u64(p->duration_nanos, 2500000000ULL - 3000, "... and shortens the duration");
		perftools__profiles__profile__free_unpacked(p, NULL);
	}
	sess_free(&s);

	sess_init(&s);
	s.p.meta.event = CYCSAMPLE_EVENT_SW_CPU_CLOCK;
	p = encode(&s.rep);
	ok(p != NULL, "software clock: unpacked");
	if (p) {
		is_str(s_(p, p->sample_type[1]->type), "cpu-clock", "software clock: cpu-clock");
		is_str(s_(p, p->sample_type[1]->unit), "nanoseconds", "... in nanoseconds");
		ok(!label_str(p, p->sample[0], "pmu"), "... and no pmu label");
		perftools__profiles__profile__free_unpacked(p, NULL);
	}
	sess_free(&s);
}

/*
 * A big.LITTLE session: each sample's pmu label names the PMU it was taken
 * on, none for a PMU on the software clock; and a comm that is not UTF-8
 * reaches the string table as UTF-8 (protoc and Go refuse anything else).
 */
static void pmus_and_names(void)
{
	u64 n[3] = { 0 }, w[3] = { 0 }, want[3] = { 0 };
	struct sess s;
	pb_profile *p;
	size_t i, k;
	u32 j = 0;

	prof_init(&s.p);
	maps_init(&s.ms, false);
	res_init(&s.r, &s.ms, false);
	synth_build(&s.p, &s.ms, &s.r);
	s.p.meta.nr_pmus = 3;
	memcpy(s.p.meta.pmus[0].name, "cortex_a53", 11);
	memcpy(s.p.meta.pmus[1].name, "cortex_a72", 11);
	memcpy(s.p.meta.pmus[2].name, "cortex_x1", 10);
	s.p.meta.pmus[0].event = CYCSAMPLE_EVENT_HW_CYCLES;
	s.p.meta.pmus[1].event = CYCSAMPLE_EVENT_HW_CYCLES;
	s.p.meta.pmus[2].event = CYCSAMPLE_EVENT_SW_CPU_CLOCK;
	for (i = 0; i < s.p.nr_ev; i++) {
		struct cycsample_sample *sm = (void *)prof_rec(&s.p, &s.p.ev[i]);

		if (s.p.ev[i].type != CYCSAMPLE_REC_SAMPLE)
			continue;
		sm->pmu = j++ % 3;
		want[sm->pmu] += sm->period;
	}
	prof_set_comm(&s.p, SY_PID, "caf\xe9");
	report_build(&s.rep, &s.p, &s.r);
	p = encode(&s.rep);
	ok(p != NULL, "three PMUs: unpacked");
	for (i = 0; p && i < p->n_sample; i++) {
		const char *pmu = label_str(p, p->sample[i], "pmu");

		k = !pmu ? 2 : !strcmp(pmu, "cortex_a53") ? 0 : !strcmp(pmu, "cortex_a72") ? 1 : 3;
		if (k < 3) {
			n[k]++;
			w[k] += p->sample[i]->value[1];
		}
	}
	ok(n[0] && n[1] && n[2] && w[0] == want[0] && w[1] == want[1] && w[2] == want[2],
	   "each sample labelled with its own PMU: %llu, %llu and %llu cycles (want %llu, %llu, "
	   "%llu), none for the clock",
	   (unsigned long long)w[0], (unsigned long long)w[1], (unsigned long long)w[2],
	   (unsigned long long)want[0], (unsigned long long)want[1], (unsigned long long)want[2]);
	if (p)
		is_str(label_str(p, p->sample[0], "comm"), "caf\xef\xbf\xbd",
		       "a comm that is not UTF-8: U+FFFD for the stray byte");
	if (p)
		perftools__profiles__profile__free_unpacked(p, NULL);
	sess_free(&s);
}

static void gzip_file(void)
{
	char *path = fx_path("p.pb.gz");
	static u8 out[1 << 16];
	u8 *raw;
	size_t raw_len;
	uLongf out_len = sizeof(out);
	struct sess s;
	z_stream zs = { 0 };
	FILE *f;
	u8 gz[1 << 16] = { 0 };
	size_t gz_len = 0;

	sess_init(&s);
	ok(!report_pprof(&s.rep, path), "report_pprof writes %s", path);
	report_pprof_mem(&s.rep, &raw, &raw_len);
	f = fopen(path, "r");
	if (f) {
		gz_len = fread(gz, 1, sizeof(gz), f);
		fclose(f);
	}
	ok(gz_len > 2 && gz[0] == 0x1f && gz[1] == 0x8b, "a gzip file");
	inflateInit2(&zs, 15 + 16);
	zs.next_in = gz;
	zs.avail_in = gz_len;
	zs.next_out = out;
	zs.avail_out = sizeof(out);
	ok(inflate(&zs, Z_FINISH) == Z_STREAM_END, "it inflates");
	out_len = sizeof(out) - zs.avail_out;
	inflateEnd(&zs);
	ok(out_len == raw_len && !memcmp(out, raw, raw_len), "to the profile message (%zu bytes)",
	   raw_len);
	ok(report_pprof(&s.rep, "/nonexistent-dir/p.pb.gz") == -ENOENT,
	   "an unwritable path: -ENOENT");
	free(raw);
	free(path);
	sess_free(&s);
}

int main(void)
{
	struct sess s;
	pb_profile *p;

	sess_init(&s);
	p = encode(&s.rep);
	ok(p != NULL, "the message unpacks");
	if (p) {
		types_and_times(p);
		mappings(p);
		locations(p);
		samples(p);
		perftools__profiles__profile__free_unpacked(p, NULL);
	}
	sess_free(&s);
	weight_and_clock();
	pmus_and_names();
	gzip_file();
	return tap_done();
}
