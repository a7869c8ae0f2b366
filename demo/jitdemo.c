// SPDX-License-Identifier: GPL-2.0
/*
 * jitdemo - behave like a JIT for the perf map test: copy a function into
 * anonymous executable memory, name the copy "jit_spin" in
 * /tmp/perf-PID.map (the format perf and cycread read), and spend most of
 * the run in it.  Without the map its samples show as [anon].  The map
 * stays behind when the program ends, as JIT agents leave theirs for perf.
 *
 * Usage: jitdemo [ROUNDS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "work.h"

typedef unsigned long (*spin_fn)(unsigned long x, unsigned long units);

/* The code to copy: position independent, no calls, alone in its section. */
__attribute__((noinline, section("jitsrc"))) unsigned long spin_src(unsigned long x,
								    unsigned long units)
{
	DEMO_WORK(x, units * DEMO_UNIT);
	return x;
}

extern const char __start_jitsrc[], __stop_jitsrc[];

int main(int argc, char **argv)
{
	/* the linker's section bounds: two symbols, one object */
	// cppcheck-suppress comparePointers
	size_t len = __stop_jitsrc - __start_jitsrc;
	unsigned long rounds = argc > 1 ? strtoul(argv[1], NULL, 0) : 300, x = 1, i;
	char path[64];
	spin_fn fn;
	void *mem;
	FILE *f;

	mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		   0);
	if (mem == MAP_FAILED || len > 4096) {
		perror("jitdemo: mmap");
		return 1;
	}
	memcpy(mem, __start_jitsrc, len);
	__builtin___clear_cache((char *)mem, (char *)mem + len);
	fn = (spin_fn)mem;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", getpid());
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		return 1;
	}
	fprintf(f, "%lx %zx jit_spin\n", (unsigned long)mem, len);
	fclose(f);
	for (i = 0; i < rounds; i++)
		x = fn(x, 1000);
	printf("jitdemo: %lu rounds, checksum %lx\n", rounds, x);
	return 0;
}
