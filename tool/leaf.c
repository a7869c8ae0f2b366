// SPDX-License-Identifier: GPL-2.0
/*
 * The arm64 leaf-caller rules of leaf.h, kept free of I/O so the
 * tests can feed them instruction words and function identities directly.
 */
#include <endian.h>
#include <string.h>

#include "elfsym.h"
#include "leaf.h"

bool a64_sets_fp(u32 insn)
{
	/* ADD (immediate), 64-bit, Rn = sp (31), Rd = x29; optional LSL #12 */
	return (insn & 0xff8003ff) == 0x910003fd;
}

bool a64_is_ret(u32 insn)
{
	return (insn & 0xfffffc1f) == 0xd65f0000 || /* ret Xn */
	       insn == 0xd65f0bff || insn == 0xd65f0fff; /* retaa, retab */
}

s32 a64_frame_setup_offset(const u8 *code, u32 n)
{
	u32 i, insn;

	for (i = 0; i < n; i++) {
		memcpy(&insn, code + 4 * i, 4);
		insn = le32toh(insn); /* A64 code is little-endian data */
		if (a64_sets_fp(insn))
			return 4 * i;
	}
	return FS_OFF_NONE;
}

u64 a64_strip_pac(u64 addr)
{
	/* PAC and tag bits live above the 48-bit user address space */
	return addr & ((1ULL << 48) - 1);
}

u64 leaf_user_lr(const struct rec_sample *v)
{
	const struct cycsample_sample *s = v->s;
	bool a32 = s->flags & CYCSAMPLE_SAMPLE_COMPAT;
	u32 idx = a32 ? 14 : 30; /* r14 or x30 in the dump */
	u64 lr;

	if (s->arch != CYCSAMPLE_ARCH_ARM64)
		return 0;
	if (s->flags & CYCSAMPLE_SAMPLE_USER)
		lr = s->lr;
	else if (s->nr_regs > idx)
		lr = v->regs[idx];
	else
		return 0;
	return a32 ? lr : a64_strip_pac(lr);
}

enum leaf_verdict leaf_decide(const struct leaf_input *in)
{
	if (!in->lr_fn)
		return LEAF_KEEP;
	if (in->code_known) {
		if (in->fs_off == FS_OFF_NONE)
			return LEAF_INSERT_FRAMELESS;
		if (in->pc_off <= (u64)in->fs_off)
			return LEAF_INSERT_PROLOGUE;
		if (in->pc_insn_known && a64_is_ret(in->pc_insn))
			return LEAF_INSERT_EPILOGUE;
	}
	if (in->lr_fn != in->pc_fn && in->lr_fn != in->caller_fn)
		return LEAF_INSERT_LR;
	return LEAF_KEEP;
}

const char *leaf_verdict_str(enum leaf_verdict v)
{
	switch (v) {
	case LEAF_INSERT_FRAMELESS:
		return "frameless";
	case LEAF_INSERT_PROLOGUE:
		return "prologue";
	case LEAF_INSERT_EPILOGUE:
		return "epilogue";
	case LEAF_INSERT_LR:
		return "lr";
	default:
		return "keep";
	}
}
