// SPDX-License-Identifier: GPL-2.0
/*
 * Record validation and the in-memory record store.
 *
 * Validation is strict about sizes (every byte a decoder touches must lie
 * inside the record) and lenient about growth (a record may be longer than
 * this reader knows; unknown types are skipped), as the uapi's
 * compatibility rules require.
 */
#include <stdlib.h>
#include <string.h>

#include "records.h"

static bool sample_size_ok(const void *rec, u32 size, const char **why)
{
	struct cycsample_sample s;
	u64 need = sizeof(s);

	/* copy: capture files and fuzzers may hand us unaligned data */
	memcpy(&s, rec, sizeof(s));
	need += ((u64)s.nr_kernel + s.nr_user + s.nr_regs) * sizeof(u64);
	if (need > size) {
		*why = "sample frames run past the record";
		return false;
	}
	return true;
}

enum rec_status rec_check(const void *buf, size_t avail, u32 *size, const char **why)
{
	struct cycsample_record_header hdr;
	size_t min;

	if (avail < sizeof(hdr)) {
		*why = "record header cut short";
		return REC_CORRUPT;
	}
	memcpy(&hdr, buf, sizeof(hdr));
	if (hdr.size < sizeof(hdr) || hdr.size % 8) {
		*why = "record size not a non-zero multiple of 8";
		return REC_CORRUPT;
	}
	if (hdr.size > avail) {
		*why = "record size larger than the data";
		return REC_CORRUPT;
	}
	*size = hdr.size;
	switch (hdr.type) {
	case CYCSAMPLE_REC_SAMPLE:
		min = sizeof(struct cycsample_sample);
		break;
	case CYCSAMPLE_REC_SAMPLE_PC:
		min = sizeof(struct cycsample_sample_pc);
		break;
	case CYCSAMPLE_REC_LOST:
		min = sizeof(struct cycsample_lost);
		break;
	case CYCSAMPLE_REC_EXEC:
	case CYCSAMPLE_REC_EXIT:
		min = sizeof(struct cycsample_task_event);
		break;
	default:
		if (hdr.type == 0) {
			*why = "record type 0";
			return REC_CORRUPT;
		}
		return REC_SKIP;
	}
	if (hdr.size < min) {
		*why = "record shorter than its type";
		return REC_CORRUPT;
	}
	if (hdr.type == CYCSAMPLE_REC_SAMPLE && !sample_size_ok(buf, hdr.size, why))
		return REC_CORRUPT;
	return REC_VALID;
}

void rec_sample_view(const void *rec, struct rec_sample *v)
{
	const struct cycsample_sample *s = rec;

	v->s = s;
	v->kframes = s->frames;
	v->uframes = s->frames + s->nr_kernel;
	v->regs = v->uframes + s->nr_user;
}

static const char *const a64_regs[] = {
	"x0",  "x1",  "x2",  "x3",  "x4",  "x5",  "x6",	 "x7",	"x8",  "x9",	 "x10", "x11",
	"x12", "x13", "x14", "x15", "x16", "x17", "x18", "x19", "x20", "x21",	 "x22", "x23",
	"x24", "x25", "x26", "x27", "x28", "x29", "x30", "sp",	"pc",  "pstate",
};

static const char *const a32_regs[] = {
	"r0", "r1",  "r2",  "r3",  "r4", "r5", "r6", "r7",   "r8",
	"r9", "r10", "r11", "r12", "sp", "lr", "pc", "cpsr",
};

/* struct pt_regs of x86_64 */
static const char *const x86_regs[] = {
	"r15", "r14", "r13", "r12", "bp",      "bx", "r11", "r10",   "r9", "r8", "ax",
	"cx",  "dx",  "si",  "di",  "orig_ax", "ip", "cs",  "flags", "sp", "ss",
};

const char *rec_reg_name(const struct cycsample_sample *s, u32 i)
{
	if (s->arch == CYCSAMPLE_ARCH_ARM64 && (s->flags & CYCSAMPLE_SAMPLE_COMPAT))
		return i < ARRAY_SIZE(a32_regs) ? a32_regs[i] : NULL;
	if (s->arch == CYCSAMPLE_ARCH_ARM64)
		return i < ARRAY_SIZE(a64_regs) ? a64_regs[i] : NULL;
	if (s->arch == CYCSAMPLE_ARCH_X86_64)
		return i < ARRAY_SIZE(x86_regs) ? x86_regs[i] : NULL;
	return NULL;
}

void meta_free(struct prof_meta *m)
{
	free(m->tool_version);
	free(m->kernel_release);
	free(m->machine);
	free(m->hostname);
	free(m->command);
	free(m->ksyms_note);
	memset(m, 0, sizeof(*m));
}

const char *meta_event_name(u32 event)
{
	switch (event) {
	case CYCSAMPLE_EVENT_HW_CYCLES:
	case CYCSAMPLE_EVENT_CYCLES:
		return "cycles";
	case CYCSAMPLE_EVENT_SW_CPU_CLOCK:
		return "cpu-clock";
	case CYCSAMPLE_EVENT_SW_TASK_CLOCK:
		return "task-clock";
	case CYCSAMPLE_EVENT_CLOCK:
		return "clock";
	default:
		return "unknown-event";
	}
}

const struct prof_pmu *meta_pmu(const struct prof_meta *m, u32 idx)
{
	return idx < m->nr_pmus && idx < CYCSAMPLE_MAX_PMUS ? &m->pmus[idx] : NULL;
}

static bool mask_bit(const u64 *mask, u32 words, u32 cpu)
{
	return cpu / 64 < words && (mask[cpu / 64] >> (cpu % 64) & 1);
}

void cpulist_format(const u64 *mask, u32 words, struct sbuf *sb)
{
	u32 cpu, end;
	bool first = true;

	for (cpu = 0; cpu < words * 64; cpu++) {
		if (!mask_bit(mask, words, cpu))
			continue;
		for (end = cpu; mask_bit(mask, words, end + 1); end++)
			;
		sbuf_printf(sb, "%s%u", first ? "" : ",", cpu);
		if (end > cpu)
			sbuf_printf(sb, "-%u", end);
		first = false;
		cpu = end;
	}
}

bool cpulist_parse(const char *s, u64 *mask, u32 words)
{
	u64 a, b, c;
	char *end;

	memset(mask, 0, words * sizeof(*mask));
	while (*s) {
		if (*s < '0' || *s > '9')
			return false;
		a = strtoull(s, &end, 10);
		b = a;
		if (*end == '-') {
			if (end[1] < '0' || end[1] > '9')
				return false;
			b = strtoull(end + 1, &end, 10);
		}
		if (b < a || b >= (u64)words * 64)
			return false;
		for (c = a; c <= b; c++)
			mask[c / 64] |= 1ULL << (c % 64);
		if (*end == ',')
			end++;
		else if (*end)
			return false;
		s = end;
	}
	return true;
}

void prof_init(struct profile *p)
{
	memset(p, 0, sizeof(*p));
	p->meta.cmd_status = -1;
}

/* Records borrowed from a capture become the profile's own before it adds any. */
static void own_records(struct profile *p)
{
	u8 *own;

	if (!p->recs_borrowed)
		return;
	own = xmalloc(p->recs_len ? p->recs_len : 1);
	memcpy(own, p->recs, p->recs_len);
	p->recs = own;
	p->recs_alloc = p->recs_len;
	p->recs_borrowed = false;
}

void prof_reserve(struct profile *p, size_t bytes, size_t nr)
{
	own_records(p);
	if (p->recs_len + bytes > p->recs_alloc) {
		p->recs_alloc = p->recs_len + bytes;
		p->recs = xrealloc(p->recs, p->recs_alloc, 1);
	}
	if (p->nr_ev + nr > p->ev_alloc) {
		p->ev_alloc = p->nr_ev + nr;
		p->ev = xrealloc(p->ev, p->ev_alloc, sizeof(*p->ev));
	}
}

void prof_free(struct profile *p)
{
	if (!p->recs_borrowed)
		free(p->recs);
	unmap_file(p->map, p->map_len);
	free(p->ev);
	meta_free(&p->meta);
	u64map_free(&p->comm_index);
	strtab_free(&p->comms);
	memset(p, 0, sizeof(*p));
}

static u64 record_time(const void *rec, u32 type)
{
	switch (type) {
	case CYCSAMPLE_REC_SAMPLE:
		return ((const struct cycsample_sample *)rec)->time;
	case CYCSAMPLE_REC_LOST:
		return ((const struct cycsample_lost *)rec)->time;
	default:
		return ((const struct cycsample_task_event *)rec)->time;
	}
}

static void account(struct profile *p, const void *rec, u32 type)
{
	const struct cycsample_sample *s = rec;
	const struct cycsample_task_event *t = rec;

	switch (type) {
	case CYCSAMPLE_REC_SAMPLE:
		p->nr_samples++;
		if (s->flags & CYCSAMPLE_SAMPLE_THROTTLED)
			p->nr_throttled++;
		if (s->flags & CYCSAMPLE_SAMPLE_NMI)
			p->nr_nmi++;
		if (s->pmu < CYCSAMPLE_MAX_PMUS)
			p->pmu_samples[s->pmu]++;
		break;
	case CYCSAMPLE_REC_LOST:
		p->nr_lost_records++;
		p->lost_samples =
			add_sat(p->lost_samples, ((const struct cycsample_lost *)rec)->lost);
		break;
	case CYCSAMPLE_REC_EXEC:
	case CYCSAMPLE_REC_EXIT:
		if (type == CYCSAMPLE_REC_EXEC)
			p->nr_exec++;
		else
			p->nr_exit++;
		if (type == CYCSAMPLE_REC_EXEC)
			prof_set_record_comm(p, t->pid, t->comm, sizeof(t->comm));
		break;
	}
}

/* The event of the valid record at recs + @off, which came from ring @cpu. */
static void add_event(struct profile *p, size_t off, u32 cpu)
{
	const void *rec = p->recs + off;
	u32 type = ((const struct cycsample_record_header *)rec)->type;
	struct prof_event *e;

	VEC_GROW(p->ev, p->nr_ev, p->ev_alloc);
	e = &p->ev[p->nr_ev];
	e->off = off;
	e->type = type;
	e->cpu = type == CYCSAMPLE_REC_SAMPLE ? ((const struct cycsample_sample *)rec)->cpu : cpu;
	e->time = record_time(rec, type);
	e->seq = p->nr_ev;
	p->nr_ev++;
	account(p, rec, type);
}

/*
 * A SAMPLE_PC record as the SAMPLE record it stands for, with no chains
 * and no registers but the pc: the rest of the reader, and capture files,
 * know only the one kind of sample.
 */
static void sample_from_pc(struct cycsample_sample *s, const void *rec)
{
	struct cycsample_sample_pc pc;

	memcpy(&pc, rec, sizeof(pc));
	memset(s, 0, sizeof(*s));
	s->hdr.type = CYCSAMPLE_REC_SAMPLE;
	s->hdr.size = sizeof(*s);
	s->time = pc.time;
	s->pid = pc.pid;
	s->tid = pc.tid;
	s->cpu = pc.cpu;
	/* no chain flags here: a chain that was never walked was not cut */
	s->flags = pc.flags & ~(CYCSAMPLE_SAMPLE_KCHAIN_TRUNC | CYCSAMPLE_SAMPLE_UCHAIN_TRUNC);
	s->period = pc.period;
	s->pc = pc.pc;
	s->arch = pc.arch;
	s->pmu = pc.pmu;
}

enum rec_status prof_add_record(struct profile *p, const void *rec, size_t avail, u32 cpu,
				u32 *size, const char **why)
{
	enum rec_status st = rec_check(rec, avail, size, why);
	struct cycsample_record_header hdr;
	u32 len;

	if (st == REC_CORRUPT) {
		p->nr_corrupt++;
		return st;
	}
	if (st == REC_SKIP) {
		p->nr_unknown++;
		return st;
	}
	own_records(p);
	memcpy(&hdr, rec, sizeof(hdr));
	len = hdr.type == CYCSAMPLE_REC_SAMPLE_PC ? sizeof(struct cycsample_sample) : hdr.size;
	if (p->recs_len + len > p->recs_alloc) {
		p->recs_alloc = MAX(p->recs_alloc * 2, p->recs_len + len + 65536);
		p->recs = xrealloc(p->recs, p->recs_alloc, 1);
	}
	if (hdr.type == CYCSAMPLE_REC_SAMPLE_PC)
		sample_from_pc((struct cycsample_sample *)(p->recs + p->recs_len), rec);
	else
		memcpy(p->recs + p->recs_len, rec, len);
	add_event(p, p->recs_len, cpu);
	p->recs_len += len;
	return REC_VALID;
}

bool prof_borrow_records(struct profile *p, const void *data, size_t len)
{
	const char *why;
	size_t pos, nr = 0;
	u32 size;

	/* 8-aligned as the decoders read them; the file's mapping is */
	if (p->recs_len || p->recs_borrowed || (uintptr_t)data % 8)
		return false;
	/* a SAMPLE_PC record needs a copy to be read as a sample */
	for (pos = 0; pos < len; pos += size, nr++)
		if (rec_check((const u8 *)data + pos, len - pos, &size, &why) != REC_VALID ||
		    ((const struct cycsample_record_header *)((const u8 *)data + pos))->type ==
			    CYCSAMPLE_REC_SAMPLE_PC)
			return false;
	free(p->recs);
	p->recs = (u8 *)data; /* never written: see recs_borrowed */
	p->recs_len = len;
	p->recs_alloc = 0;
	p->recs_borrowed = true;
	if (p->nr_ev + nr > p->ev_alloc) {
		p->ev_alloc = p->nr_ev + nr;
		p->ev = xrealloc(p->ev, p->ev_alloc, sizeof(*p->ev));
	}
	for (pos = 0; pos < len; pos += size) {
		size = ((const struct cycsample_record_header *)(p->recs + pos))->size;
		add_event(p, pos, 0);
	}
	return true;
}

static int event_cmp(const void *a, const void *b, void *arg)
{
	const struct prof_event *x = a, *y = b;

	(void)arg;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	/* an EXIT is the session's last record even if a sample has its time */
	if ((x->type == CYCSAMPLE_REC_EXIT) != (y->type == CYCSAMPLE_REC_EXIT))
		return x->type == CYCSAMPLE_REC_EXIT ? 1 : -1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void prof_sort(struct profile *p)
{
	size_t i;

	/* a capture's records are already in time order: one pass says so */
	for (i = 1; i < p->nr_ev; i++)
		if (event_cmp(&p->ev[i - 1], &p->ev[i], NULL) > 0)
			break;
	if (i < p->nr_ev)
		sort(p->ev, p->nr_ev, sizeof(*p->ev), event_cmp, NULL);
}

void prof_set_comm(struct profile *p, u32 pid, const char *comm)
{
	u32 id = strtab_intern(&p->comms, comm);

	u64map_put(&p->comm_index, pid, id);
}

void prof_set_record_comm(struct profile *p, u32 pid, const char *field, size_t len)
{
	char comm[CYCS_RECORD_COMM_MAX + 1];

	/* NUL-terminated by contract; do not rely on it */
	len = len < CYCS_RECORD_COMM_MAX ? len : CYCS_RECORD_COMM_MAX;
	memcpy(comm, field, len);
	comm[len] = '\0';
	if (comm[0])
		prof_set_comm(p, pid, comm);
}

const char *prof_comm(const struct profile *p, u32 pid)
{
	u64 id;

	if (!u64map_get(&p->comm_index, pid, &id))
		return NULL;
	return strtab_str(&p->comms, id);
}
