// SPDX-License-Identifier: GPL-2.0
/*
 * lzmawork [ROUNDS] - compress a generated 256 KiB buffer with liblzma at
 * preset 6, what "xz -6" does, ROUNDS times (default 2).  Its time goes to
 * Debian's own liblzma.so.5, stripped and without a debug package: the
 * end-to-end test checks that cycread tells that library's functions apart
 * by their .eh_frame entries.
 */
#include <lzma.h>
#include <stdio.h>
#include <stdlib.h>

#define SIZE (256U << 10)

int main(int argc, char **argv)
{
	unsigned long x = 88172645463325252UL, rounds = argc > 1 ? strtoul(argv[1], NULL, 0) : 2;
	size_t out_size = lzma_stream_buffer_bound(SIZE), out_pos = 0, i, r;
	unsigned char *in = malloc(SIZE), *out = malloc(out_size);

	if (!in || !out)
		return 1;
	/* text-like and compressible: a few dozen letters with runs */
	for (i = 0; i < SIZE; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		in[i] = (x % 7) ? 'a' + (x >> 8) % 26 : ' ';
	}
	for (r = 0; r < rounds; r++) {
		out_pos = 0;
		if (lzma_easy_buffer_encode(6, LZMA_CHECK_CRC64, NULL, in, SIZE, out, &out_pos,
					    out_size) != LZMA_OK)
			return 1;
	}
	printf("lzmawork: %lu rounds, %zu -> %zu bytes\n", rounds, (size_t)SIZE, out_pos);
	free(in);
	free(out);
	return 0;
}
