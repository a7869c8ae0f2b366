/* SPDX-License-Identifier: GPL-2.0 */
/*
 * C++ (and legacy Rust) names through libstdc++'s demangler,
 * abi::__cxa_demangle, which has C linkage and ships in libsupc++.a even
 * for static cross builds.
 */
#ifndef CYCREAD_DEMANGLE_H
#define CYCREAD_DEMANGLE_H

/* A malloc()ed demangled name, or NULL if @name is not mangled (or invalid). */
char *demangle(const char *name);

#endif /* CYCREAD_DEMANGLE_H */
