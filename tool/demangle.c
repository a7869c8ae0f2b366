// SPDX-License-Identifier: GPL-2.0
/*
 * Call the C++ runtime's demangler.
 */
#include <stdlib.h>
#include <string.h>

#include "demangle.h"

/* namespace abi in <cxxabi.h>, extern "C" there, so callable from C */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

char *demangle(const char *name)
{
	char *out;
	int status = 0;

	/* Itanium C++ ABI names (and legacy Rust, which uses the same scheme) */
	if (strncmp(name, "_Z", 2))
		return NULL;
	out = __cxa_demangle(name, NULL, NULL, &status);
	if (status) {
		free(out);
		return NULL;
	}
	return out;
}
