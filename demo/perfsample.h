/* SPDX-License-Identifier: GPL-2.0 */
/*
 * perfsample.h - between perfsample's two halves: perfsample.c talks to
 * perf (the system call, the ring, the records) and perfsample-syms.c
 * turns addresses into names (the mappings perf reported, ELF symbol
 * tables, /proc/kallsyms).
 */
#ifndef PERFSAMPLE_H
#define PERFSAMPLE_H

#include <stddef.h>
#include <stdint.h>

/* Where an address lands.  The strings live until the program ends. */
struct ps_name {
	const char *dso; /* file basename, "[kernel.kallsyms]", "[unknown]" */
	const char *sym; /* the symbol, or "[dso]" when none covers the address */
	uint64_t off; /* from the symbol's start; from the file's when !named */
	int named; /* a symbol was found */
};

/* Room for element @n of the array @v of @cap elements of @size bytes. */
void *ps_grow(void *v, size_t *cap, size_t n, size_t size);

/* An executable mapping of the target, from a PERF_RECORD_MMAP record. */
void ps_add_map(uint64_t start, uint64_t len, uint64_t pgoff, const char *path);

/*
 * Name @addr.  @kernel: a kernel address.  @ret: a return address, which
 * is looked up one byte back so that a call at the very end of a function
 * is charged to that function and not to the next one.
 */
void ps_resolve(uint64_t addr, int kernel, int ret, struct ps_name *out);

#endif /* PERFSAMPLE_H */
