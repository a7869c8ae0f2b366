/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tap.h - a few lines of Test Anything Protocol for cycread's unit tests:
 * one "ok N - what" or "not ok N - what" per check, the plan at the end, and
 * a non-zero exit status when anything failed.
 */
#ifndef CYCREAD_TAP_H
#define CYCREAD_TAP_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int tap_count, tap_failed;

static void __attribute__((format(printf, 4, 5)))
tap_ok(int pass, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	tap_count++;
	if (!pass)
		tap_failed++;
	printf("%sok %d - ", pass ? "" : "not ", tap_count);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!pass)
		printf("#   failed at %s:%d\n", file, line);
	fflush(stdout);
}

#define ok(cond, ...) tap_ok(!!(cond), __FILE__, __LINE__, __VA_ARGS__)

#define is_str(got, want, what)                                                         \
	do {                                                                            \
		const char *__g = (got), *__w = (want);                                 \
		ok(__g && !strcmp(__g, __w), "%s", what);                               \
		if (!__g || strcmp(__g, __w))                                           \
			printf("#   got '%s', want '%s'\n", __g ? __g : "(null)", __w); \
	} while (0)

#define is_u64(got, want, what)                                                                    \
	do {                                                                                       \
		unsigned long long __g = (got), __w = (want);                                      \
		ok(__g == __w, "%s", what);                                                        \
		if (__g != __w)                                                                    \
			printf("#   got %llu (0x%llx), want %llu (0x%llx)\n", __g, __g, __w, __w); \
	} while (0)

static inline void tap_skip(const char *why)
{
	tap_count++;
	printf("ok %d # SKIP %s\n", tap_count, why);
}

static int tap_done(void)
{
	printf("1..%d\n", tap_count);
	if (tap_failed)
		printf("# %d of %d failed\n", tap_failed, tap_count);
	return tap_failed ? 1 : 0;
}

#endif /* CYCREAD_TAP_H */
