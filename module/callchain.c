// SPDX-License-Identifier: GPL-2.0
/*
 * cycsample - callchain pieces common to all architectures.
 *
 * Both run inside the overflow handler (hardirq or NMI): bounded loops,
 * no locks, user memory read with page faults disabled (the walkers of
 * callchain-<arch>.c).
 */
#include <linux/stacktrace.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/ptrace.h>

#include "cycsample.h"
#include "compat.h"

/**
 * cycs_kernel_chain - the kernel callchain of the interrupted context
 * @regs: the interrupted kernel-mode registers
 * @raw: CYCS_KSTACK_ENTRIES of scratch for the unwinder
 * @out: where the frames go
 * @max: room in @out
 * @flags: gets CYCSAMPLE_SAMPLE_KCHAIN_TRUNC when the chain was cut
 *
 * stack_trace_save_regs() is not exported, so unwind from here and cut the
 * frames of the handler, perf and the interrupt entry: the unwinders of both
 * architectures report the interrupted pc when they cross the exception
 * frame, and the chain we want starts there.  If the pc is not found (an
 * unwinder that cannot cross this kind of frame), only the pc is recorded.
 *
 * Return: number of frames written.
 */
unsigned int cycs_kernel_chain(struct pt_regs *regs, unsigned long *raw, u64 *out, unsigned int max,
			       u32 *flags)
{
	unsigned long pc = instruction_pointer(regs);
	unsigned int n, i, k;

	if (!max)
		return 0;
	n = stack_trace_save(raw, CYCS_KSTACK_ENTRIES, 0);
	for (i = 0; i < n; i++)
		if (raw[i] == pc)
			break;
	if (i == n) {
		out[0] = pc;
		return 1;
	}

	k = min(n - i, max);
	if (n - i > max || n == CYCS_KSTACK_ENTRIES)
		*flags |= CYCSAMPLE_SAMPLE_KCHAIN_TRUNC;
	for (n = 0; n < k; n++)
		out[n] = raw[i + n];
	return k;
}

/**
 * cycs_user_regs - the user-mode registers behind a sample, if any
 * @regs: the interrupted registers
 *
 * A kernel-mode sample of a user task still has the registers saved at its
 * last kernel entry.  Kernel threads (and user workers, which have an mm
 * but no user context of their own) have none.
 */
struct pt_regs *cycs_user_regs(struct pt_regs *regs)
{
	if (user_mode(regs))
		return regs;
	if (!current->mm || (current->flags & CYCS_PF_NO_USER))
		return NULL;
	/*
	 * Inside execve() the saved user registers are the old program's (with
	 * ENABLE_ON_EXEC, the reader's own child) and the address space may
	 * already be the new one: neither chain nor registers would be true.
	 */
	if (cycs_in_execve(current))
		return NULL;
	/* inside a context switch, on an architecture where that matters */
	if (cycs_arch_user_chain_unsafe(regs))
		return NULL;
	return task_pt_regs(current);
}
