/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Mangled names made readable: C++, Rust legacy (without its hash) and
 * Rust v0, through libiberty (Debian's libiberty-dev, a static library for
 * every architecture), so names read as addr2line -C and objdump -C print
 * them.  A "@plt" or "@@VERSION" suffix is kept.
 */
#ifndef CYCREAD_DEMANGLE_H
#define CYCREAD_DEMANGLE_H

/* A malloc()ed demangled name, or NULL if @name is not mangled (or invalid). */
char *demangle(const char *name);

#endif /* CYCREAD_DEMANGLE_H */
