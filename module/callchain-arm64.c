// SPDX-License-Identifier: GPL-2.0
/*
 * cycsample - arm64 registers and user callchains.
 *
 * AArch64 code keeps a chain of 16-byte frame records {x29, x30} linked
 * through x29.  AArch32 (compat) tasks are walked by callchain-aarch32.c.
 */
#include <linux/uaccess.h>
#include <linux/ptrace.h>
#include <linux/compat.h>

#include "cycsample.h"

const u8 cycs_arch = CYCSAMPLE_ARCH_ARM64;

struct cycs_frame64 {
	u64 fp;
	u64 lr;
};

/*
 * Remove a pointer authentication code from a return address with XPACLRI,
 * user or kernel (bit 55 selects which translation regime's layout applies).
 * It is encoded in the hint space (hint #7), so it is a NOP on CPUs without
 * PAC and assembles everywhere.  Our own copy, because the kernel's helper
 * changed name and form between 6.1 and 6.6.
 */
static inline u64 cycs_strip_pac(u64 addr)
{
	register u64 x30 asm("x30") = addr;

	asm("hint #7" : "+r"(x30));
	return x30;
}

/* A 32-bit (AArch32) user context. */
bool cycs_arch_compat(struct pt_regs *regs)
{
#ifdef CONFIG_COMPAT
	return compat_user_mode(regs);
#else
	return false;
#endif
}

void cycs_arch_sample_regs(struct cycsample_sample *smp, struct pt_regs *regs)
{
	smp->pc = regs->pc;
	if (cycs_arch_compat(regs)) {
		smp->sp = (u32)regs->compat_sp;
		/* the frame pointer of the code's state: r7 in Thumb, r11 in ARM */
		smp->fp = (u32)(compat_thumb_mode(regs) ? regs->regs[7] : regs->compat_fp);
		smp->lr = (u32)regs->compat_lr;
		return;
	}
	smp->sp = regs->sp;
	smp->fp = regs->regs[29];
	/* x30 holds a signed address between a function's PACIASP and AUTIASP */
	smp->lr = cycs_strip_pac(regs->regs[30]);
}

/* Interrupts (or, with pseudo-NMI, their priority) masked at the sample. */
bool cycs_arch_irqs_masked(struct pt_regs *regs)
{
	return !interrupts_enabled(regs);
}

/*
 * With interrupts masked the sample may sit inside a context switch, where
 * current and the user address space disagree, and the user chain walk
 * would read whichever is loaded: another process's memory.
 */
bool cycs_arch_user_chain_unsafe(struct pt_regs *regs)
{
	return cycs_arch_irqs_masked(regs);
}

/*
 * One frame record, read where the caller disabled page faults: a fault
 * ends the walk through the exception table instead of sleeping.  Two
 * inline unprivileged loads (LDTR) after one access_ok(), where
 * copy_from_user_nofault() cost a call, the usercopy hardening checks and
 * the copy routine per record.  Where arm64 has no user_access_begin() of
 * its own (5.10, 6.1), linux/uaccess.h makes it access_ok() and
 * unsafe_get_user() __get_user(): the same loads.
 */
static __always_inline bool cycs_read_frame64(u64 fp, struct cycs_frame64 *f)
{
	const struct cycs_frame64 __user *p = (const struct cycs_frame64 __user *)fp;

	if (!user_access_begin(p, sizeof(*p)))
		return false;
	unsafe_get_user(f->fp, &p->fp, out_fault);
	unsafe_get_user(f->lr, &p->lr, out_fault);
	user_access_end();
	return true;

out_fault:
	user_access_end();
	return false;
}

static unsigned int cycs_chain64(struct pt_regs *uregs, u64 *out, unsigned int n, unsigned int max,
				 u32 *flags)
{
	u64 fp = uregs->regs[29];
	struct cycs_frame64 f;

	/* Records are 8-byte aligned and lie at strictly increasing addresses. */
	while (fp && !(fp & 7)) {
		if (n >= max) {
			*flags |= CYCSAMPLE_SAMPLE_UCHAIN_TRUNC;
			break;
		}
		if (!cycs_read_frame64(fp, &f))
			break;
		f.lr = cycs_strip_pac(f.lr);
		if (!f.lr)
			break;
		out[n++] = f.lr;
		if (f.fp <= fp)
			break;
		fp = f.fp;
	}
	return n;
}

/**
 * cycs_arch_user_chain - user pc and return addresses, innermost first
 * @uregs: user-mode registers
 * @out: where the frames go
 * @max: room in @out
 * @flags: gets UCHAIN_TRUNC when the walk hit @max
 */
unsigned int cycs_arch_user_chain(struct pt_regs *uregs, u64 *out, unsigned int max, u32 *flags)
{
	unsigned int n;

	if (!max)
		return 0;
	out[0] = uregs->pc;
	/*
	 * Once for the whole walk, as copy_from_user_nofault() did per record.
	 * arm64 has no nmi_uaccess_okay() to ask: the loaded address space is
	 * current's unless interrupts were masked (cycs_user_regs() refuses).
	 */
	pagefault_disable();
	if (cycs_arch_compat(uregs))
		n = cycs_a32_user_chain(uregs, out, 1, max, flags);
	else
		n = cycs_chain64(uregs, out, 1, max, flags);
	pagefault_enable();
	return n;
}

/* x0..x30, sp, pc, pstate; for a compat task r0..r12, sp, lr, pc, cpsr */
unsigned int cycs_arch_user_regs(struct pt_regs *uregs, u64 *out)
{
	unsigned int i;

	if (cycs_arch_compat(uregs))
		return cycs_a32_user_regs(uregs, out);
	for (i = 0; i < 31; i++)
		out[i] = uregs->regs[i];
	out[31] = uregs->sp;
	out[32] = uregs->pc;
	out[33] = uregs->pstate;
	return 34;
}
