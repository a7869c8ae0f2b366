// SPDX-License-Identifier: GPL-2.0
/*
 * --raw: every record in time order, one block per sample in
 * the layout of "perf script" (so speedscope and FlameGraph's
 * stackcollapse-perf.pl read it too):
 *
 *   comm pid/tid [cpu] secs.nsecs: period event: mode regs
 *   <tab>address symbol+0xoff (file) source.c:line
 *
 * An inlined function's frame reads "<tab>address name (inlined) file:line"
 * and comes before the frame it was inlined into, as in perf script.  The
 * source line, when known, ends the frame's line.
 */
#include <string.h>

#include "report.h"

static void time_str(u64 ns, char *buf, size_t len)
{
	snprintf(buf, len, "%llu.%09llu", ns / 1000000000ULL, ns % 1000000000ULL);
}

static void raw_sample(const struct report *rep, const struct rsample *rs, FILE *out,
		       struct sbuf *sb)
{
	const struct cycsample_sample *s = prof_rec(rep->p, &rep->p->ev[rs->ev]);
	const char *ev = meta_event_name(rep->p->meta.event);
	char t[32];
	u32 j;

	sbuf_reset(sb);
	report_comm_name(rep, s->pid, sb);
	time_str(s->time, t, sizeof(t));
	fprintf(out, "%s %u/%u [%03u] %s: %llu %s: %s pc 0x%llx sp 0x%llx fp 0x%llx lr 0x%llx",
		sb->buf, s->pid, s->tid, s->cpu, t, s->period, ev,
		s->flags & CYCSAMPLE_SAMPLE_KERNEL ? "kernel" : "user", s->pc, s->sp, s->fp, s->lr);
	if (s->flags & CYCSAMPLE_SAMPLE_THROTTLED)
		fputs(" throttled", out);
	if (s->flags & CYCSAMPLE_SAMPLE_REGS_HIDDEN)
		fputs(" regs-hidden", out);
	if (s->flags & CYCSAMPLE_SAMPLE_NMI)
		fputs(" nmi", out);
	if (s->flags & CYCSAMPLE_SAMPLE_IRQS_OFF)
		fputs(" irqs-off", out);
	if (s->flags & (CYCSAMPLE_SAMPLE_KCHAIN_TRUNC | CYCSAMPLE_SAMPLE_UCHAIN_TRUNC))
		fputs(" chain-truncated", out);
	fputc('\n', out);
	for (j = 0; j < rs->nr; j++) {
		struct stack_frame f = {
			.fi = rep->frames[rs->first + j],
			.addr = rep->frame_addr[rs->first + j],
			.off = rep->frame_off[rs->first + j],
			.flags = rep->frame_flags[rs->first + j],
		};
		const struct frame_info *fi = res_fi(rep->r, f.fi);

		sbuf_reset(sb);
		res_format_frame(rep->r, &f, sb);
		if (fi->flags & FI_INLINE)
			fprintf(out, "\t%16llx %s (inlined)", f.addr, sb->buf);
		else
			fprintf(out, "\t%16llx %s (%s)", f.addr, sb->buf,
				res_str(rep->r, fi->path));
		if (fi->file != RES_NO_STR) {
			sbuf_reset(sb);
			res_format_srcline(rep->r, f.fi, true, sb);
			fprintf(out, " %s", sb->buf);
		}
		if ((f.flags & SF_INSERTED) && !(f.flags & SF_INLINE))
			fprintf(out, " [caller from lr: %s]", leaf_verdict_str(rs->leaf));
		fputc('\n', out);
	}
	fputc('\n', out);
}

static void raw_task(const struct report *rep, const struct prof_event *e, FILE *out,
		     struct sbuf *sb)
{
	const struct cycsample_task_event *t = prof_rec(rep->p, e);
	char ts[32], comm[sizeof(t->comm) + 1];

	memcpy(comm, t->comm, sizeof(t->comm));
	comm[sizeof(t->comm)] = '\0';
	sbuf_reset(sb);
	report_comm_name(rep, t->pid, sb);
	time_str(t->time, ts, sizeof(ts));
	if (e->type == CYCSAMPLE_REC_EXEC)
		fprintf(out, "%s %u/%u [%03u] %s: EXEC %s\n\n", sb->buf, t->pid, t->tid, e->cpu, ts,
			comm);
	else
		fprintf(out, "%s %u/%u [%03u] %s: EXIT\n\n", sb->buf, t->pid, t->tid, e->cpu, ts);
}

void report_raw(const struct report *rep, FILE *out)
{
	struct sbuf sb = { 0 };
	size_t i;
	u32 next = 0;
	char ts[32];

	for (i = 0; i < rep->p->nr_ev; i++) {
		const struct prof_event *e = &rep->p->ev[i];

		switch (e->type) {
		case CYCSAMPLE_REC_SAMPLE:
			/* report_build() kept samples in event order */
			if (next < rep->nr_samples && rep->samples[next].ev == i)
				raw_sample(rep, &rep->samples[next++], out, &sb);
			break;
		case CYCSAMPLE_REC_LOST:
			time_str(e->time, ts, sizeof(ts));
			fprintf(out, "[lost] -1/-1 [%03u] %s: LOST %llu samples\n\n", e->cpu, ts,
				((const struct cycsample_lost *)prof_rec(rep->p, e))->lost);
			break;
		case CYCSAMPLE_REC_EXEC:
		case CYCSAMPLE_REC_EXIT:
			raw_task(rep, e, out, &sb);
			break;
		}
	}
	sbuf_free(&sb);
}
