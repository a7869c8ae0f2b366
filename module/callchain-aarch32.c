// SPDX-License-Identifier: GPL-2.0
/*
 * cycsample - user callchains and registers of AArch32 (compat) tasks.
 *
 * 32-bit code has no single frame record layout.  Which one a function
 * uses follows from the state it runs in, and that state shows: the T bit
 * of the interrupted CPSR for the innermost function, bit 0 of each return
 * address (set: Thumb) for its caller.
 *
 *   ARM, APCS (gcc -marm -mapcs-frame): "mov ip, sp; push {fp, ip, lr, pc};
 *	sub fp, ip, #4" (or #20 when argument registers were pushed too).
 *	The record {fp, sp, lr} lies just below the saved pc that r11 points
 *	at; the saved sp, 4 to 20 bytes above r11, tells this layout apart.
 *   ARM, AAPCS (gcc -marm, no -mapcs-frame): "push {fp, lr}; add fp, sp,
 *	#4": the record {fp, lr} with r11 at its lr.
 *   Thumb: "push {r7, lr}; add r7, sp, #0" (clang: "mov r7, sp"): the
 *	record {r7, lr} with r7 at its start.  GCC points r7 at the bottom
 *	of a function's locals instead, below the record: the chain of a
 *	GCC-built Thumb function with locals cannot be followed without
 *	unwind tables (neither can perf's).
 *
 * A function that calls nothing may save only its frame pointer (GCC:
 * "push {r7}" or "str fp, [sp, #-4]!"): its caller is then in lr, which
 * every sample records and cycread puts back; the walk goes on at the saved
 * frame pointer without writing a frame.
 *
 * ARM and Thumb code keep separate frame pointers, and a record holds only
 * its own state's.  Each state's chain therefore resumes, when the walk
 * crosses back into that state, from the value of its register that was
 * last known (interrupted, or read from a record of that state): correct
 * as long as code in the other state left the register alone, as code that
 * keeps its own frame pointer in the other register does.  Records must lie
 * at increasing addresses at or above the interrupted sp, which bounds the
 * walk however the stack is laid out.
 */
#include <linux/uaccess.h>
#include <linux/ptrace.h>
#include <linux/limits.h>

#include "cycsample.h"

/* A saved sp this far above r11 marks an APCS record (4 + pushed r0..r3). */
#define CYCS_A32_APCS_MIN 4
#define CYCS_A32_APCS_MAX 20

struct cycs_a32_walk {
	u32 fp[2]; /* [0]: r11 for ARM code, [1]: r7 for Thumb code */
	u32 floor; /* the next record lies at or above this address */
	bool thumb; /* state of the function whose record comes next */
	bool first; /* that function is the interrupted one */
};

/*
 * @words 32-bit words of user memory at @addr (4-byte aligned), read as
 * callchain-arm64.c reads a frame record: page faults are disabled by
 * cycs_arch_user_chain(), one access_ok() for the lot, inline loads.
 */
static __always_inline bool cycs_a32_read(u32 *dst, u32 addr, unsigned int words)
{
	const u32 __user *src = (const u32 __user *)(unsigned long)addr;
	unsigned int i;

	if (!user_access_begin(src, words * sizeof(*src)))
		return false;
	for (i = 0; i < words; i++)
		unsafe_get_user(dst[i], &src[i], out_fault);
	user_access_end();
	return true;

out_fault:
	user_access_end();
	return false;
}

/*
 * Read the record of the function in ARM state at w->fp[0].  Return 1 with
 * its return address in *lr, 0 for a lone saved frame pointer (nothing to
 * write), -1 to end the walk.
 */
static int cycs_a32_arm_frame(struct cycs_a32_walk *w, u32 sp, u32 *lr)
{
	u32 fp = w->fp[0], rec, next, win[4]; /* [fp - 12] .. [fp] */

	/* the floor only rises: nothing of a record may lie at or above 4 GiB */
	if (fp & 3 || fp < 12 || fp < w->floor || fp > U32_MAX - 4)
		return -1;
	if (!cycs_a32_read(win, fp - 12, ARRAY_SIZE(win)))
		return -1;
	if (w->first && fp == sp) {
		/* "str fp, [sp, #-4]!; add fp, sp, #0": only fp saved, at fp */
		rec = fp;
		next = win[3];
		*lr = 0;
	} else if (win[1] - fp >= CYCS_A32_APCS_MIN && win[1] - fp <= CYCS_A32_APCS_MAX &&
		   !(win[1] & 3)) {
		rec = fp - 12; /* APCS {fp, sp, lr} */
		next = win[0];
		*lr = win[2];
	} else {
		rec = fp - 4; /* AAPCS {fp, lr} */
		next = win[2];
		*lr = win[3];
	}
	if (rec < w->floor)
		return -1;
	w->floor = fp + 4;
	w->fp[0] = next;
	return *lr ? 1 : 0;
}

/* The same for a function in Thumb state, at w->fp[1]. */
static int cycs_a32_thumb_frame(struct cycs_a32_walk *w, u32 *lr)
{
	u32 fp = w->fp[1], rec[2]; /* {r7, lr} */

	if (fp & 3 || fp < w->floor || fp > U32_MAX - 8 || !cycs_a32_read(rec, fp, ARRAY_SIZE(rec)))
		return -1;
	/*
	 * "push {r7}; add r7, sp, #0": the word after the saved r7 is the
	 * caller's record, which starts where the saved r7 points, 4 bytes up.
	 * A full record is 8 bytes, so its caller's starts 8 or more bytes up.
	 */
	if (w->first && rec[0] > fp && rec[0] < fp + 8) {
		w->floor = fp + 4;
		w->fp[1] = rec[0];
		*lr = 0;
		return 0;
	}
	w->floor = fp + 8;
	w->fp[1] = rec[0];
	*lr = rec[1];
	return *lr ? 1 : 0;
}

/**
 * cycs_a32_user_chain - return addresses of an AArch32 task, innermost first
 * @uregs: its user-mode registers
 * @out: where the frames go; out[0..@n) are already written (the pc)
 * @n: frames already in @out
 * @max: room in @out
 * @flags: gets UCHAIN_TRUNC when the walk hit @max
 *
 * Return addresses are written as the code saved them: bit 0 set for a
 * return into Thumb code.
 *
 * Return: the number of frames in @out.
 */
unsigned int cycs_a32_user_chain(struct pt_regs *uregs, u64 *out, unsigned int n, unsigned int max,
				 u32 *flags)
{
	struct cycs_a32_walk w = {
		.fp = { (u32)uregs->compat_fp, (u32)uregs->regs[7] },
		.floor = (u32)uregs->compat_sp,
		.thumb = compat_thumb_mode(uregs),
		.first = true,
	};
	u32 sp = w.floor, lr;
	unsigned int steps;
	int got;

	/* Each step reads a record or a lone frame pointer: at most 2 per frame. */
	for (steps = 0; steps < 2 * CYCSAMPLE_MAX_STACK; steps++) {
		if (n >= max) {
			*flags |= CYCSAMPLE_SAMPLE_UCHAIN_TRUNC;
			break;
		}
		got = w.thumb ? cycs_a32_thumb_frame(&w, &lr) : cycs_a32_arm_frame(&w, sp, &lr);
		if (got < 0)
			break;
		w.first = false;
		if (!got)
			continue; /* a lone frame pointer: the same state goes on */
		out[n++] = lr;
		w.thumb = lr & 1;
	}
	return n;
}

/* r0..r12, sp, lr, pc, cpsr: the AArch32 view, not the AArch64 one. */
unsigned int cycs_a32_user_regs(struct pt_regs *uregs, u64 *out)
{
	unsigned int i;

	/* r13 and r14 of user mode are x13 and x14 (compat_sp, compat_lr) */
	for (i = 0; i < 15; i++)
		out[i] = (u32)uregs->regs[i];
	out[15] = (u32)uregs->pc;
	out[16] = (u32)uregs->pstate;
	return 17;
}
