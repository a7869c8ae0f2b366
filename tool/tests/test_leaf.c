// SPDX-License-Identifier: GPL-2.0
/*
 * test_leaf - the arm64 leaf-caller repair: instruction decoding, the
 * decision rules of leaf.h, and whole samples on real arm64 code compiled
 * now with the cross compiler (the case perf's frame-pointer mode misses:
 * a frameless leaf whose caller is only in LR).
 */
#include <elf.h>
#include <endian.h>

#include "fixtures.h"
#include "tap.h"
#include "../resolve.h"

#define PID 77
#define BASE 0x7f00000000ULL

static void test_decode(void)
{
	static const u32 with_frame[] = { 0xd503233f /* paciasp */, 0xa9bf7bfd /* stp */,
					  0x910003fd /* mov x29, sp */, 0xd65f03c0 };
	static const u32 sub_frame[] = { 0xd10083ff /* sub sp, sp, #32 */,
					 0xa9017bfd /* stp x29, x30, [sp, #16] */,
					 0x910043fd /* add x29, sp, #16 */ };
	static const u32 frameless[] = { 0x8b010000, 0xd503201f, 0xd65f03c0 };
	u8 code[64];
	u32 i, w;

	ok(a64_sets_fp(0x910003fd), "mov x29, sp sets the frame pointer");
	ok(a64_sets_fp(0x910043fd), "add x29, sp, #16 sets the frame pointer");
	ok(!a64_sets_fp(0xa9bf7bfd), "stp x29, x30, [sp, #-16]! does not (yet)");
	ok(!a64_sets_fp(0x910003e0), "mov x0, sp does not");
	ok(a64_is_ret(0xd65f03c0) && a64_is_ret(0xd65f0bff), "ret and retaa");
	ok(!a64_is_ret(0xd503201f), "nop is no ret");
	for (i = 0; i < ARRAY_SIZE(with_frame); i++) {
		w = htole32(with_frame[i]);
		memcpy(code + 4 * i, &w, 4);
	}
	is_u64(a64_frame_setup_offset(code, ARRAY_SIZE(with_frame)), 8,
	       "paciasp; stp; mov x29, sp: frame linked at +8");
	for (i = 0; i < ARRAY_SIZE(sub_frame); i++) {
		w = htole32(sub_frame[i]);
		memcpy(code + 4 * i, &w, 4);
	}
	is_u64(a64_frame_setup_offset(code, ARRAY_SIZE(sub_frame)), 8,
	       "sub sp; stp [sp, #16]; add x29, sp, #16: linked at +8");
	for (i = 0; i < ARRAY_SIZE(frameless); i++) {
		w = htole32(frameless[i]);
		memcpy(code + 4 * i, &w, 4);
	}
	ok(a64_frame_setup_offset(code, ARRAY_SIZE(frameless)) == FS_OFF_NONE,
	   "no frame setup: frameless");
	is_u64(a64_strip_pac(0x002a00aaaabbbbccULL), 0xaaaabbbbccULL, "PAC bits stripped");
}

static void test_rules(void)
{
	struct leaf_input in = { .pc_fn = 1, .lr_fn = 2, .caller_fn = 3 };

	in.code_known = true;
	in.fs_off = FS_OFF_NONE;
	ok(leaf_decide(&in) == LEAF_INSERT_FRAMELESS, "frameless function: insert LR's caller");
	in.fs_off = 8;
	in.pc_off = 4;
	ok(leaf_decide(&in) == LEAF_INSERT_PROLOGUE, "pc before mov x29, sp: insert");
	in.pc_off = 8;
	ok(leaf_decide(&in) == LEAF_INSERT_PROLOGUE, "pc on mov x29, sp (not yet run): insert");
	in.pc_off = 12;
	in.lr_fn = 3;
	ok(leaf_decide(&in) == LEAF_KEEP, "frame linked and LR = saved return: keep");
	in.lr_fn = 1;
	ok(leaf_decide(&in) == LEAF_KEEP, "LR inside the function itself (after a call): keep");
	in.pc_insn_known = true;
	in.pc_insn = 0xd65f03c0;
	in.lr_fn = 3;
	ok(leaf_decide(&in) == LEAF_INSERT_EPILOGUE, "pc on ret: frame already popped: insert");
	in = (struct leaf_input){ .pc_fn = 1, .lr_fn = 2, .caller_fn = 3 };
	ok(leaf_decide(&in) == LEAF_INSERT_LR, "code unknown, LR in a third function: insert");
	in.lr_fn = 3;
	ok(leaf_decide(&in) == LEAF_KEEP, "code unknown, LR = the chain's caller: keep");
	in.lr_fn = 0;
	in.code_known = true;
	in.fs_off = FS_OFF_NONE;
	ok(leaf_decide(&in) == LEAF_KEEP, "LR not in any function: keep");
}

/* Runtime address of ELF vaddr @v in a .so mapped at BASE with pgoff 0. */
static u64 rt(const struct dso *d, u64 v)
{
	u32 i;

	for (i = 0; i < d->nr_segs; i++)
		if (v >= d->segs[i].vaddr && v < d->segs[i].vaddr + d->segs[i].filesz)
			return BASE + v - d->segs[i].vaddr + d->segs[i].offset;
	return 0;
}

static const struct dso_sym *sym_named(const struct dso *d, const char *name)
{
	u32 i;

	for (i = 0; i < d->nr_syms; i++)
		if (!strcmp(dso_sym_name(d, &d->syms[i]), name))
			return &d->syms[i];
	return NULL;
}

/* The return address of the first "bl" in @s. */
static u64 after_bl(const struct dso *d, const struct dso_sym *s)
{
	u64 v;
	u32 insn;

	for (v = s->start; v < s->end; v += 4)
		if (dso_read(d, v, &insn, 4) && (le32toh(insn) & 0xfc000000) == 0x94000000)
			return rt(d, v + 4);
	return 0;
}

struct sample_buf {
	struct cycsample_sample s;
	u64 frames[8];
};

static void sample(struct sample_buf *b, u8 arch, u64 pc, u64 lr, u64 ret1)
{
	memset(b, 0, sizeof(*b));
	b->s.hdr.type = CYCSAMPLE_REC_SAMPLE;
	b->s.hdr.size = sizeof(*b);
	b->s.pid = b->s.tid = PID;
	b->s.flags = CYCSAMPLE_SAMPLE_USER;
	b->s.arch = arch;
	b->s.pc = pc;
	b->s.lr = lr;
	b->s.nr_user = ret1 ? 2 : 1;
	b->frames[0] = pc;
	b->frames[1] = ret1;
}

static const char *frame_name(struct resolver *r, const struct stack *st, u32 i)
{
	return i < st->nr ? res_str(r, res_fi(r, st->f[i].fi)->func) : "(none)";
}

static void run(struct resolver *r, struct sample_buf *b, struct stack *st)
{
	struct rec_sample v;

	rec_sample_view(&b->s, &v);
	res_stack(r, &v, st);
}

static void test_real_code(void)
{
	const struct dso_sym *leaf, *caller, *outer;
	char *so = fx_path("leaf.so"), *maps;
	u64 ret_caller, ret_outer;
	struct sample_buf b;
	struct stack st = { 0 };
	struct resolver r;
	struct maps ms;
	struct map *m;
	struct dso *emb;
	u32 i;

	if (!have_tool("aarch64-linux-gnu-gcc")) {
		tap_skip("aarch64-linux-gnu-gcc not installed");
		free(so);
		return;
	}
	ok(!fx_sh("aarch64-linux-gnu-gcc -O2 -fno-omit-frame-pointer -fPIC -shared "
		  "%s/fixtures/fx_leaf.c -o leaf.so",
		  TEST_SRCDIR),
	   "build arm64 fixture");
	maps = xasprintf("%llx-%llx r-xp 00000000 00:00 0 %s\n", BASE, BASE + 0x10000, so);
	maps_init(&ms, false);
	res_init(&r, &ms, false);
	maps_read(&ms, PID, 0, maps);
	m = maps_find(&ms, PID, 0, BASE);
	ok(m && m->dso && m->dso->e_machine == EM_AARCH64, "arm64 library mapped");
	if (!m || !m->dso)
		goto out;
	dso_load_syms(m->dso, NULL);
	leaf = sym_named(m->dso, "leaf");
	caller = sym_named(m->dso, "caller");
	outer = sym_named(m->dso, "outer");
	ok(leaf && caller && outer, "fixture symbols found");
	if (!leaf || !caller || !outer)
		goto out;
	res_prologue(m->dso, (struct dso_sym *)leaf);
	res_prologue(m->dso, (struct dso_sym *)caller);
	ok(leaf->fs_off == FS_OFF_NONE, "GCC gave leaf() no frame record");
	ok(caller->fs_off >= 4, "caller() links its frame record at +%d", caller->fs_off);
	ret_caller = after_bl(m->dso, caller);
	ret_outer = after_bl(m->dso, outer);
	ok(ret_caller && ret_outer, "call sites found");

	/* frameless leaf: the FP chain skips caller(); LR has it */
	sample(&b, CYCSAMPLE_ARCH_ARM64, rt(m->dso, leaf->start + 8), ret_caller, ret_outer);
	run(&r, &b, &st);
	is_u64(st.nr, 3, "leaf sample: three frames after repair");
	is_str(frame_name(&r, &st, 0), "leaf", "frame 0: leaf");
	is_str(frame_name(&r, &st, 1), "caller", "frame 1: caller, from LR");
	ok(st.f[1].flags & SF_INSERTED, "frame 1 marked as inserted");
	is_str(frame_name(&r, &st, 2), "outer", "frame 2: outer");
	ok(st.leaf == LEAF_INSERT_FRAMELESS, "rule: frameless");

	r.leaf_repair = false;
	run(&r, &b, &st);
	ok(st.nr == 2 && !strcmp(frame_name(&r, &st, 1), "outer"),
	   "without repair the chain misses caller(), as perf's fp mode does");
	r.leaf_repair = true;

	/* PAC bits in LR do not matter */
	sample(&b, CYCSAMPLE_ARCH_ARM64, rt(m->dso, leaf->start + 8), ret_caller | (0x55ULL << 48),
	       ret_outer);
	run(&r, &b, &st);
	is_str(frame_name(&r, &st, 1), "caller", "signed LR: caller still inserted");

	/* prologue of caller(): the chain's first return skips outer() */
	sample(&b, CYCSAMPLE_ARCH_ARM64, rt(m->dso, caller->start), ret_outer, 0);
	run(&r, &b, &st);
	ok(st.nr == 2 && !strcmp(frame_name(&r, &st, 1), "outer") &&
		   st.leaf == LEAF_INSERT_PROLOGUE,
	   "pc at caller()'s first insn: outer inserted (prologue)");

	/* caller() after its frame is linked, LR = saved return: nothing to add */
	sample(&b, CYCSAMPLE_ARCH_ARM64, rt(m->dso, caller->start + caller->fs_off + 4), ret_outer,
	       ret_outer);
	run(&r, &b, &st);
	ok(st.nr == 2 && st.leaf == LEAF_KEEP, "frame linked, LR equals the chain: kept as is");

	/* after leaf() returned, LR points into caller() itself */
	sample(&b, CYCSAMPLE_ARCH_ARM64, ret_caller, ret_caller, ret_outer);
	run(&r, &b, &st);
	ok(st.nr == 2 && st.leaf == LEAF_KEEP, "LR inside the sampled function: kept");

	/* x86_64 samples are never repaired */
	sample(&b, CYCSAMPLE_ARCH_X86_64, rt(m->dso, leaf->start + 8), ret_caller, ret_outer);
	run(&r, &b, &st);
	ok(st.nr == 2, "x86_64 sample: no LR, no repair");

	/* without code (a capture's stored symbols): the LR rule decides */
	emb = dso_new_embedded(so);
	for (i = 0; i < m->dso->nr_segs; i++)
		dso_add_seg(emb, &m->dso->segs[i]);
	dso_add_sym(emb, leaf->start, leaf->end, "leaf", FS_OFF_UNKNOWN);
	dso_add_sym(emb, caller->start, caller->end, "caller", FS_OFF_UNKNOWN);
	dso_add_sym(emb, outer->start, outer->end, "outer", FS_OFF_UNKNOWN);
	dso_sort_syms(emb);
	m->dso = emb;
	res_free(&r);
	res_init(&r, &ms, false);
	sample(&b, CYCSAMPLE_ARCH_ARM64, rt(emb, leaf->start + 8), ret_caller, ret_outer);
	run(&r, &b, &st);
	ok(st.nr == 3 && !strcmp(frame_name(&r, &st, 1), "caller") && st.leaf == LEAF_INSERT_LR,
	   "code unknown: LR rule inserts caller");
	dso_free(emb);
out:
	stack_free(&st);
	res_free(&r);
	maps_free(&ms);
	free(maps);
	free(so);
}

/* LR comes from x30, or r14 for AArch32, and from the dump in kernel mode. */
static void test_user_lr(void)
{
	u64 buf[(sizeof(struct cycsample_sample) + 40 * 8) / 8] = { 0 };
	struct cycsample_sample *s = (void *)buf;
	struct rec_sample v;

	s->arch = CYCSAMPLE_ARCH_ARM64;
	s->flags = CYCSAMPLE_SAMPLE_USER;
	s->lr = 0x002a00aaaabbbbccULL;
	rec_sample_view(s, &v);
	is_u64(leaf_user_lr(&v), 0xaaaabbbbccULL, "AArch64 user sample: lr without PAC bits");
	s->flags = CYCSAMPLE_SAMPLE_USER | CYCSAMPLE_SAMPLE_COMPAT;
	s->lr = 0x10465;
	is_u64(leaf_user_lr(&v), 0x10465, "AArch32 user sample: lr as is, Thumb bit kept");
	s->flags = CYCSAMPLE_SAMPLE_KERNEL | CYCSAMPLE_SAMPLE_COMPAT;
	s->nr_regs = 17;
	rec_sample_view(s, &v);
	s->frames[14] = 0x10571;
	s->frames[30] = 0xdead;
	is_u64(leaf_user_lr(&v), 0x10571, "AArch32 kernel sample: r14 of the dump");
	s->flags = CYCSAMPLE_SAMPLE_KERNEL;
	s->nr_regs = 34;
	is_u64(leaf_user_lr(&v), 0xdead, "AArch64 kernel sample: x30 of the dump");
	s->nr_regs = 0;
	is_u64(leaf_user_lr(&v), 0, "kernel sample without a dump: unknown");
	s->arch = CYCSAMPLE_ARCH_X86_64;
	s->flags = CYCSAMPLE_SAMPLE_USER;
	is_u64(leaf_user_lr(&v), 0, "x86_64: no link register");
}

int main(void)
{
	test_user_lr();
	test_decode();
	test_rules();
	test_real_code();
	return tap_done();
}
