// SPDX-License-Identifier: GPL-2.0
/*
 * Demangle with libiberty, the demangler binutils and gdb use: C++ (Itanium
 * ABI), Rust legacy (its hash dropped) and Rust v0.
 */
#include <libiberty/demangle.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* not util.h: libiberty.h, which demangle.h includes, declares its own xmalloc() family */
#include "demangle.h"

/* The flags addr2line -C and objdump -C use: parameters, ANSI qualifiers. */
#define DEMANGLE_FLAGS (DMGL_PARAMS | DMGL_ANSI)

static char *demangle_whole(const char *name)
{
	char *out;

	if (strncmp(name, "_Z", 2) && strncmp(name, "_R", 2))
		return NULL;
	/* legacy Rust names are valid C++ names too: Rust first, as libiberty's AUTO does */
	out = rust_demangle(name, DEMANGLE_FLAGS);
	if (!out && name[1] == 'Z')
		out = cplus_demangle_v3(name, DEMANGLE_FLAGS);
	return out;
}

char *demangle(const char *name)
{
	const char *at = strchr(name, '@');
	char *base, *out;

	if (!at)
		return demangle_whole(name);
	/* "_Z3putv@plt": the name, then the suffix as it was */
	base = strndup(name, at - name);
	out = base ? demangle_whole(base) : NULL;
	free(base);
	if (out) {
		size_t len = strlen(out) + strlen(at) + 1;
		char *full = malloc(len);

		if (full)
			snprintf(full, len, "%s%s", out, at);
		free(out);
		out = full;
	}
	return out;
}
