/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Arm64 leaf-caller repair.
 *
 * The frame-pointer unwinder starts from x29.  Until a function has stored
 * its frame record and pointed x29 at it, x29 still holds its caller's
 * frame, so the chain goes pc -> caller's caller and the caller is missing.
 * The caller's return address is then in x30 (LR), which every sample
 * records.  cycread inserts LR's function as the caller when:
 *
 *  A (prologue rule, when the function's code is readable): the function
 *    never sets x29 from sp in its first 16 instructions (a frameless leaf),
 *    or the pc is at or before that instruction ("stp x29, x30, [sp, #-N]!;
 *    mov x29, sp": the record is linked only once mov/add x29, sp has run),
 *    or the pc is on a ret (the epilogue has already restored x29);
 *  B (LR rule, always): LR lies in a function that is neither the sampled
 *    function (LR after one of its own calls) nor the function of the first
 *    return address in the chain (LR still equal to the saved one).
 *
 * No insertion when LR is 0, does not resolve to a function, or equals the
 * chain's first return address.  LR is stripped of pointer-authentication
 * bits first (user addresses are below 2^48 on Debian's arm64 kernels).
 */
#ifndef CYCREAD_LEAF_H
#define CYCREAD_LEAF_H

#include "records.h"
#include "util.h"

#define LEAF_SCAN_INSNS 16

enum leaf_verdict {
	LEAF_KEEP = 0,
	LEAF_INSERT_FRAMELESS, /* rule A: function has no frame record */
	LEAF_INSERT_PROLOGUE, /* rule A: pc before x29 is set */
	LEAF_INSERT_EPILOGUE, /* rule A: pc on a ret */
	LEAF_INSERT_LR, /* rule B */
};

struct leaf_input {
	bool code_known; /* fs_off is valid */
	s32 fs_off; /* FS_OFF_NONE or byte offset of "add x29, sp, #imm" */
	u64 pc_off; /* pc - function start */
	bool pc_insn_known;
	u32 pc_insn;
	u64 pc_fn; /* function identities, 0 = unknown */
	u64 lr_fn;
	u64 caller_fn; /* function of the chain's first return address */
};

/* "add x29, sp, #imm" (mov x29, sp is #0) */
bool a64_sets_fp(u32 insn);
bool a64_is_ret(u32 insn);
/* Byte offset of the frame-setup instruction in @n little-endian words, or FS_OFF_NONE. */
s32 a64_frame_setup_offset(const u8 *code, u32 n);
u64 a64_strip_pac(u64 addr);
/*
 * The user LR of an arm64 sample: the interrupted x30 (AArch32: r14), or
 * for a kernel-mode sample the one in its register dump; 0 when unknown.
 * AArch64 values are stripped of pointer-authentication bits; AArch32 ones
 * keep bit 0, set for a return into Thumb code.
 */
u64 leaf_user_lr(const struct rec_sample *v);
enum leaf_verdict leaf_decide(const struct leaf_input *in);
const char *leaf_verdict_str(enum leaf_verdict v);

#endif /* CYCREAD_LEAF_H */
