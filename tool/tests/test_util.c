// SPDX-License-Identifier: GPL-2.0
/*
 * test_util - util.c's growable string against snprintf: text that fits
 * the room left is formatted once, text that does not is formatted again
 * after growing, and every append leaves the string NUL-terminated; hex
 * digits written without printf as printf writes them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "../util.h"

/* Appends of every length from 0 to 300 bytes, each checked against snprintf. */
static void test_sbuf_printf(void)
{
	struct sbuf sb = { 0 }, want = { 0 };
	char pad[301], one[400];
	u32 n, wrong = 0, nul = 0;

	memset(pad, 'x', sizeof(pad) - 1);
	pad[sizeof(pad) - 1] = '\0';
	for (n = 0; n <= 300; n++) {
		size_t before = sb.len;

		sbuf_printf(&sb, "%u:%.*s;", n, (int)n, pad);
		snprintf(one, sizeof(one), "%u:%.*s;", n, (int)n, pad);
		sbuf_addstr(&want, one);
		if (sb.len - before != strlen(one) || memcmp(sb.buf + before, one, strlen(one)))
			wrong++;
		nul += sb.buf[sb.len] != '\0';
	}
	ok(!wrong && sb.len == want.len && !strcmp(sb.buf, want.buf),
	   "301 appends of 2 to 305 bytes, across every growth: the same text as snprintf's");
	ok(!nul && sb.alloc > sb.len, "NUL-terminated after each");
	sbuf_free(&sb);
	/* every text length against every fill: each boundary of the room met */
	wrong = 0;
	for (n = 0; n < 160; n++) {
		u32 len;

		for (len = 0; len <= 300; len++) {
			sbuf_add(&sb, pad, n);
			sbuf_printf(&sb, "%.*s", (int)len, pad);
			wrong += sb.len != n + len || strspn(sb.buf, "x") != n + len ||
				 sb.buf[sb.len] != '\0' || sb.alloc <= sb.len;
			sbuf_free(&sb);
		}
	}
	ok(!wrong, "0 to 300 bytes after 0 to 159: whole, NUL-terminated, within the room");
	sbuf_reset(&sb);
	sbuf_printf(&sb, "%s", "");
	ok(sb.len == 0 && sb.buf && !sb.buf[0], "an empty text keeps an empty string");
	sbuf_free(&sb);
	sbuf_printf(&sb, "%.*s", 1000, pad);
	is_str(sb.buf, pad, "a first text longer than the first room");
	sbuf_free(&sb);
	sbuf_free(&want);
}

/* sbuf_addhex() against printf's "%*llx": every digit count, widths 0 to 20. */
static void test_sbuf_addhex(void)
{
	struct sbuf sb = { 0 };
	char want[64];
	u32 shift, width, wrong = 0, n = 0;

	for (shift = 0; shift <= 64; shift++) {
		u64 vals[3] = { shift < 64 ? 1ULL << shift : 0, 0, 0 };

		vals[1] = vals[0] - 1; /* all ones below the bit: 0 at shift 0, ~0 at 64 */
		vals[2] = vals[0] * 0x9e3779b97f4a7c15ULL >> (shift & 63);
		for (width = 0; width <= 20; width++) {
			u32 k;

			for (k = 0; k < 3; k++, n++) {
				sbuf_reset(&sb);
				sbuf_addch(&sb, '<');
				sbuf_addhex(&sb, vals[k], width);
				snprintf(want, sizeof(want), "<%*llx", (int)width,
					 (unsigned long long)vals[k]);
				if (strcmp(sb.buf, want) || sb.len != strlen(want)) {
					if (wrong++ < 3)
						printf("# %s, printf %s\n", sb.buf, want);
				}
			}
		}
	}
	ok(!wrong, "%u values and widths: as printf's %%*llx writes them", n);
	sbuf_free(&sb);
}

/* sbuf_adddec() against printf's "%0*llu": every digit count, widths 0 to 22. */
static void test_sbuf_adddec(void)
{
	struct sbuf sb = { 0 };
	char want[64];
	u32 digits, width, wrong = 0, n = 0;
	u64 p10 = 1;

	for (digits = 1; digits <= 20; digits++, p10 *= 10) {
		/* the least and the most of this many digits, and one between */
		u64 most = digits == 20 ? UINT64_MAX : p10 * 10 - 1;
		u64 vals[3] = { digits == 1 ? 0 : p10, most,
				p10 + (p10 * 0x9e3779b97f4a7c15ULL >> 7) % (most - p10 + 1) };

		for (width = 0; width <= 22; width++) {
			u32 k;

			for (k = 0; k < 3; k++, n++) {
				sbuf_reset(&sb);
				sbuf_addch(&sb, '<');
				sbuf_adddec(&sb, vals[k], width);
				snprintf(want, sizeof(want), "<%0*llu", (int)width,
					 (unsigned long long)vals[k]);
				if (strcmp(sb.buf, want) || sb.len != strlen(want)) {
					if (wrong++ < 3)
						printf("# %s, printf %s\n", sb.buf, want);
				}
			}
		}
	}
	ok(!wrong, "%u values and widths: as printf's %%0*llu writes them", n);
	sbuf_free(&sb);
}

int main(void)
{
	test_sbuf_printf();
	test_sbuf_addhex();
	test_sbuf_adddec();
	return tap_done();
}
