// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_elf - libFuzzer target: open an ELF image from memory, load its
 * symbols (debug file search rooted where nothing exists), and look up
 * addresses at and around every segment and symbol, as the symbolizer does,
 * source lines and inline frames (DWARF) included.
 */
#include "../resolve.h"
#include "../srcline.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct dso_search s = { .root = "/nonexistent-root" };
	struct src_frame src[SRC_MAX_FRAMES];
	const char *why;
	struct dso *d;
	u8 buf[64];
	u64 v;
	u32 i;

	d = dso_open_mem(data, size, "fuzz.elf", &why);
	if (!d)
		return 0;
	dso_load_syms(d, &s);
	for (i = 0; i < d->nr_segs; i++) {
		dso_off_to_vaddr(d, d->segs[i].offset + 1, &v);
		dso_find(d, d->segs[i].vaddr + 4);
		dso_read(d, d->segs[i].vaddr, buf, sizeof(buf));
		dso_src_frames(d, d->segs[i].vaddr + 4, src, SRC_MAX_FRAMES);
	}
	for (i = 0; i < d->nr_syms && i < 4096; i++) {
		dso_find(d, d->syms[i].start);
		dso_find(d, d->syms[i].end);
		res_prologue(d, &d->syms[i]);
		dso_src_frames(d, d->syms[i].start + 1, src, SRC_MAX_FRAMES);
	}
	dso_free(d);
	return 0;
}
