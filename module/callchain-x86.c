// SPDX-License-Identifier: GPL-2.0
/*
 * cycsample - x86_64 registers and user callchains.
 *
 * User code built with frame pointers links {saved rbp, return address}
 * records through rbp (4-byte fields for ia32 tasks).  The handler runs in
 * NMI, so user memory is read with copy_from_user_nmi(), which also checks
 * that the loaded address space is current's.
 */
#include <linux/uaccess.h>
#include <linux/ptrace.h>

#include "cycsample.h"

const u8 cycs_arch = CYCSAMPLE_ARCH_X86_64;

struct cycs_frame64 {
	u64 next;
	u64 ret;
};

struct cycs_frame32 {
	u32 next;
	u32 ret;
};

void cycs_arch_sample_regs(struct cycsample_sample *smp, struct pt_regs *regs)
{
	smp->pc = regs->ip;
	smp->sp = regs->sp;
	smp->fp = regs->bp;
	smp->lr = 0;
}

/* Interrupts masked at the sample: only the PMU's NMI sees such code. */
bool cycs_arch_irqs_masked(struct pt_regs *regs)
{
	return !(regs->flags & X86_EFLAGS_IF);
}

/*
 * Inside a context switch current and the loaded address space may
 * disagree, but copy_from_user_nmi() refuses a foreign address space
 * (nmi_uaccess_okay()), so the user chain stays safe to read.
 */
bool cycs_arch_user_chain_unsafe(struct pt_regs *regs)
{
	return false;
}

/* An ia32 user context. */
bool cycs_arch_compat(struct pt_regs *uregs)
{
	return !user_64bit_mode(uregs);
}

static unsigned int cycs_chain64(struct pt_regs *uregs, u64 *out, unsigned int n, unsigned int max,
				 u32 *flags)
{
	u64 fp = uregs->bp;
	struct cycs_frame64 f;

	while (fp && !(fp & 7)) {
		if (n >= max) {
			*flags |= CYCSAMPLE_SAMPLE_UCHAIN_TRUNC;
			break;
		}
		if (copy_from_user_nmi(&f, (const void __user *)fp, sizeof(f)))
			break;
		if (!f.ret)
			break;
		out[n++] = f.ret;
		if (f.next <= fp)
			break;
		fp = f.next;
	}
	return n;
}

static unsigned int cycs_chain32(struct pt_regs *uregs, u64 *out, unsigned int n, unsigned int max,
				 u32 *flags)
{
	u32 fp = uregs->bp;
	struct cycs_frame32 f;

	while (fp && !(fp & 3)) {
		if (n >= max) {
			*flags |= CYCSAMPLE_SAMPLE_UCHAIN_TRUNC;
			break;
		}
		if (copy_from_user_nmi(&f, (const void __user *)(unsigned long)fp, sizeof(f)))
			break;
		if (!f.ret)
			break;
		out[n++] = f.ret;
		if (f.next <= fp)
			break;
		fp = f.next;
	}
	return n;
}

unsigned int cycs_arch_user_chain(struct pt_regs *uregs, u64 *out, unsigned int max, u32 *flags)
{
	if (!max)
		return 0;
	out[0] = uregs->ip;
	if (cycs_arch_compat(uregs))
		return cycs_chain32(uregs, out, 1, max, flags);
	return cycs_chain64(uregs, out, 1, max, flags);
}

/* struct pt_regs in its own order: r15 .. ss */
unsigned int cycs_arch_user_regs(struct pt_regs *uregs, u64 *out)
{
	const unsigned long *src = (const unsigned long *)uregs;
	unsigned int i, n = sizeof(*uregs) / sizeof(unsigned long);

	/* CYCSAMPLE_MAX_RECORD_SIZE leaves room for 40 registers */
	BUILD_BUG_ON(sizeof(*uregs) / sizeof(unsigned long) > 40);

	for (i = 0; i < n; i++)
		out[i] = src[i];
	return n;
}
