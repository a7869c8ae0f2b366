// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_dwline - libFuzzer target: the input as a .debug_line section (and
 * as the string sections its DWARF 5 entries point into), decoded for 8-
 * and 4-byte addresses, then every file name and a spread of addresses
 * looked up, as srcline.c does.  The ELF fuzzer reaches the decoder only
 * through a whole ELF image; this one mutates line programs directly.
 */
#include "../dwline.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct dwline_secs s = {
		.line = data,
		.line_size = size,
		.str = data,
		.str_size = size,
		.line_str = data,
		.line_str_size = size,
	};
	static const u32 asize[] = { 8, 4 };
	u32 i, f;

	for (i = 0; i < ARRAY_SIZE(asize); i++) {
		struct dwline t = { 0 };
		size_t r;

		if (dwline_read(&s, 0, asize[i], "/comp", &t)) {
			if (t.nr_rows > size)
				__builtin_trap(); /* every row takes a byte of the program */
			for (f = 0; f <= t.nr_files; f++)
				dwline_file(&t, f);
			for (r = 0; r < t.nr_rows; r += 1 + t.nr_rows / 16) {
				dwline_find(&t, t.rows[r].addr);
				dwline_find(&t, t.rows[r].addr - 1);
			}
		}
		dwline_free(&t);
	}
	return 0;
}
