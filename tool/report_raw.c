// SPDX-License-Identifier: GPL-2.0
/*
 * --raw: the samples in time order, one block per sample in the layout of
 * "perf script --ns" (so speedscope and FlameGraph's stackcollapse-perf.pl
 * read it too), each block ending with an empty line:
 *
 *   comm pid/tid [cpu] secs.nsecs: period event:
 *   <tab>address symbol+0xoff (file)
 *
 * An inlined function's frame reads "<tab>address name (inlined)" and comes
 * before the frame it was inlined into, as in perf script.
 *
 * Side records (EXEC, EXIT, LOST) only with --show-task-events and
 * --show-lost-events: a tool that reads every block as a sample would count
 * them as samples.  The filters choose them as they choose samples, where
 * the record has what a filter looks at: --time every one; -p, -t and
 * --comm an EXEC or EXIT by its task (a LOST record has none); --dso and
 * --symbol none, since no side record has a frame.  --raw-details adds
 * what perf script does not print by default: the mode, registers and flags
 * after the event, the source line (when known) after each frame, and the
 * leaf-caller repair's mark after an inserted frame.  The registers are pc, sp, fp and lr, then the dump of
 * --regs as "regs NAME:0xVALUE ...", named for the task's layout (AArch64,
 * AArch32 or x86_64).
 */
#include <string.h>

#include "report.h"

/* " [CPU] SECONDS.NANOSECONDS:", which follows a record's task: without printf. */
static void raw_when(u32 cpu, u64 ns, struct sbuf *sb)
{
	sbuf_add(sb, " [", 2);
	sbuf_adddec(sb, cpu, 3);
	sbuf_add(sb, "] ", 2);
	sbuf_adddec(sb, ns / 1000000000ULL, 0);
	sbuf_addch(sb, '.');
	sbuf_adddec(sb, ns % 1000000000ULL, 9);
	sbuf_addch(sb, ':');
}

/* What starts each record's line, into @sb anew: "COMM PID/TID [CPU] SECONDS.NANOSECONDS:". */
static void raw_head(const struct report *rep, u32 pid, u32 tid, u32 cpu, u64 ns, struct sbuf *sb)
{
	sbuf_reset(sb);
	report_comm_name(rep, pid, sb);
	sbuf_addch(sb, ' ');
	sbuf_adddec(sb, pid, 0);
	sbuf_addch(sb, '/');
	sbuf_adddec(sb, tid, 0);
	raw_when(cpu, ns, sb);
}

/* The register dump of --regs, named for its layout: " regs r0:0x1 ... cpsr:0x10". */
static void raw_regs(const struct cycsample_sample *s, FILE *out)
{
	const u64 *regs = s->frames + s->nr_kernel + s->nr_user;
	const char *name;
	u32 i;

	if (!s->nr_regs)
		return;
	fputs(" regs", out);
	for (i = 0; i < s->nr_regs; i++) {
		name = rec_reg_name(s, i);
		fprintf(out, " %s:0x%llx", name ? name : "?", regs[i]);
	}
}

static void raw_details(const struct report *rep, const struct cycsample_sample *s, FILE *out)
{
	fprintf(out, " %s pc 0x%llx", s->flags & CYCSAMPLE_SAMPLE_KERNEL ? "kernel" : "user",
		s->pc);
	/* a session of SAMPLE_PC records recorded no sp, fp or lr */
	if (!(rep->p->meta.config_flags & CYCSAMPLE_CFG_PC_ONLY))
		fprintf(out, " sp 0x%llx fp 0x%llx lr 0x%llx", s->sp, s->fp, s->lr);
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
	raw_regs(s, out);
}

static void raw_sample(const struct report *rep, const struct rsample *rs, bool details, FILE *out,
		       struct sbuf *sb)
{
	const struct cycsample_sample *s = prof_rec(rep->p, &rep->p->ev[rs->ev]);
	u32 j;

	raw_head(rep, s->pid, s->tid, s->cpu, s->time, sb);
	sbuf_addch(sb, ' ');
	sbuf_adddec(sb, s->period, 0);
	sbuf_addch(sb, ' ');
	report_event_name(rep, s->pmu, sb);
	sbuf_addch(sb, ':');
	fwrite(sb->buf, 1, sb->len, out);
	if (details)
		raw_details(rep, s, out);
	fputc('\n', out);
	for (j = 0; j < rs->nr; j++) {
		struct stack_frame f = {
			.fi = rep->frames[rs->first + j],
			.addr = rep->frame_addr[rs->first + j],
			.off = rep->frame_off[rs->first + j],
			.flags = rep->frame_flags[rs->first + j],
		};
		const struct frame_info *fi = res_fi(rep->r, f.fi);

		/* a line per frame: built without printf, written at once */
		sbuf_reset(sb);
		sbuf_addch(sb, '\t');
		sbuf_addhex(sb, f.addr, 16);
		sbuf_addch(sb, ' ');
		res_format_frame(rep->r, &f, sb);
		if (fi->flags & FI_INLINE) {
			sbuf_addstr(sb, " (inlined)");
		} else {
			sbuf_add(sb, " (", 2);
			sbuf_addstr(sb, res_str(rep->r, fi->path));
			sbuf_addch(sb, ')');
		}
		if (details && fi->file != RES_NO_STR) {
			sbuf_addch(sb, ' ');
			res_format_srcline(rep->r, f.fi, true, sb);
		}
		if (details && (f.flags & SF_INSERTED) && !(f.flags & SF_INLINE))
			sbuf_printf(sb, " [caller from lr: %s]", leaf_verdict_str(rs->leaf));
		sbuf_addch(sb, '\n');
		fwrite(sb->buf, 1, sb->len, out);
	}
	fputc('\n', out);
}

static void raw_task(const struct report *rep, const struct prof_event *e, FILE *out,
		     struct sbuf *sb)
{
	const struct cycsample_task_event *t = prof_rec(rep->p, e);
	char comm[sizeof(t->comm) + 1];

	memcpy(comm, t->comm, sizeof(t->comm));
	comm[sizeof(t->comm)] = '\0';
	raw_head(rep, t->pid, t->tid, e->cpu, t->time, sb);
	if (e->type == CYCSAMPLE_REC_EXEC)
		fprintf(out, "%s EXEC %s\n\n", sb->buf, comm);
	else
		fprintf(out, "%s EXIT\n\n", sb->buf);
}

static void raw_lost(const struct report *rep, const struct prof_event *e, FILE *out,
		     struct sbuf *sb)
{
	sbuf_reset(sb);
	sbuf_addstr(sb, "[lost] -1/-1");
	raw_when(e->cpu, e->time, sb);
	fprintf(out, "%s LOST %llu samples\n\n", sb->buf,
		((const struct cycsample_lost *)prof_rec(rep->p, e))->lost);
}

/* Whether the filters keep side record @e (see the top of this file). */
static bool raw_side_selected(const struct report *rep, const struct report_filter *f,
			      const struct prof_event *e)
{
	const struct cycsample_task_event *t;

	if (!report_time_selected(rep, f, e->time))
		return false;
	if (e->type == CYCSAMPLE_REC_LOST)
		return true;
	t = prof_rec(rep->p, e);
	return report_task_selected(rep, f, t->pid, t->tid);
}

void report_raw(const struct report *rep, const struct report_opts *o, FILE *out)
{
	struct sbuf sb = { 0 };
	size_t i;
	u32 next = 0;

	for (i = 0; i < rep->p->nr_ev; i++) {
		const struct prof_event *e = &rep->p->ev[i];

		switch (e->type) {
		case CYCSAMPLE_REC_SAMPLE:
			/* report_build() kept samples in event order */
			if (next < rep->nr_samples && rep->samples[next].ev == i)
				raw_sample(rep, &rep->samples[next++], o->raw_details, out, &sb);
			break;
		case CYCSAMPLE_REC_LOST:
			if (o->show_lost_events && raw_side_selected(rep, &o->filter, e))
				raw_lost(rep, e, out, &sb);
			break;
		case CYCSAMPLE_REC_EXEC:
		case CYCSAMPLE_REC_EXIT:
			if (o->show_task_events && raw_side_selected(rep, &o->filter, e))
				raw_task(rep, e, out, &sb);
			break;
		}
	}
	sbuf_free(&sb);
}
