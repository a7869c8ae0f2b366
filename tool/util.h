/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Small helpers shared by every stage of cycread: error messages,
 * allocation that cannot fail silently, growable buffers and hash tables.
 */
#ifndef CYCREAD_UTIL_H
#define CYCREAD_UTIL_H

#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <linux/types.h>

/* the uapi's types, so record fields and ours mix without casts (u64 is %llu) */
typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef __s32 s32;
typedef __s64 s64;

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define ALIGN8(x) (((x) + 7) & ~(u64)7)
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

#define __printf(a, b) __attribute__((format(printf, a, b)))
#define __noreturn __attribute__((noreturn))
#define __noinline __attribute__((noinline))

/* Exit statuses, as in the kernel's tools: 1 runtime failure, 2 usage. */
#define EXIT_RUNTIME 1
#define EXIT_USAGE 2

extern const char *prog_name;
extern int verbose;

/* "cycread: <message>" on stderr. */
void pr_err(const char *fmt, ...) __printf(1, 2);
/* "cycread: warning: <message>" on stderr. */
void pr_warn(const char *fmt, ...) __printf(1, 2);
/* Only with -v. */
void pr_debug(const char *fmt, ...) __printf(1, 2);

/* Say so and exit (EXIT_RUNTIME): what x*alloc() do when memory runs out. */
void __noreturn out_of_memory(size_t size);
void *xmalloc(size_t size);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *ptr, size_t nmemb, size_t size);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __printf(1, 2);

/*
 * Grow an array held as (ptr, nr, alloc) so that one more element fits.
 * Usage: VEC_GROW(v, nr, alloc); v[nr++] = x;
 */
#define VEC_GROW(ptr, nr, alloc)                                          \
	do {                                                              \
		if ((nr) >= (alloc)) {                                    \
			(alloc) = (alloc) ? 2 * (alloc) : 16;             \
			(ptr) = xrealloc((ptr), (alloc), sizeof(*(ptr))); \
		}                                                         \
	} while (0)

/* A growable byte string, always NUL-terminated. */
struct sbuf {
	char *buf;
	size_t len;
	size_t alloc;
};

void sbuf_add(struct sbuf *sb, const void *data, size_t len);
void sbuf_addstr(struct sbuf *sb, const char *s);
void sbuf_addch(struct sbuf *sb, char c);
/* @v as printf's "%*llx" (@width) writes it, without printf's cost per call. */
void sbuf_addhex(struct sbuf *sb, u64 v, u32 width);
/* @v in decimal, zero-padded to @width digits: printf's "%0*llu". */
void sbuf_adddec(struct sbuf *sb, u64 v, u32 width);
void sbuf_printf(struct sbuf *sb, const char *fmt, ...) __printf(2, 3);
void sbuf_vprintf(struct sbuf *sb, const char *fmt, va_list ap);
void sbuf_reset(struct sbuf *sb);
void sbuf_free(struct sbuf *sb);

/* A private errno value: the path names a directory, FIFO, device or socket. */
#define ENOTREG 4096

/*
 * Open @path for reading without ever blocking (O_NONBLOCK: a FIFO with no
 * writer would hang open() and read()) and only if it is a regular file.
 * Returns the descriptor (blocking again, close-on-exec) or -errno.
 */
int open_regular(const char *path);
/* strerror() that knows ENOTREG. */
const char *err_str(int err);

/*
 * Read a whole file (also /proc files whose size is 0) into a NUL-terminated
 * buffer.  Returns 0 or -errno; @max bounds the size (-EFBIG beyond it).
 */
int read_file(const char *path, char **buf, size_t *len, size_t max); /* via open_regular() */
int read_fd(int fd, char **buf, size_t *len, size_t max);

/*
 * Map a regular file read-only (see open_regular()); an empty file gives an
 * empty buffer.  Returns 0 or -errno (-EFBIG beyond @max).
 */
int map_file(const char *path, size_t max, const void **data, size_t *len);
void unmap_file(const void *data, size_t len);

/*
 * An output file (-o, --svg, --pprof) written whole or not at all: it is
 * written under a fresh temporary name beside @path (mkstemp: never a name
 * someone else prepared) and renamed over @path at the end, so readers see
 * the old file or the whole new one; a symbolic link at @path is replaced
 * like a file.  A device such as /dev/null, a FIFO or a socket (also behind
 * a link), and a link to a descriptor's file (/dev/stdout), are written in
 * place, as a shell's redirection would: a rename would replace them.  So is
 * a writable file in a directory where no file can be made.  A file
 * map_file() has mapped (the capture -i reads) is never written in place:
 * truncated, it would take the mapping with it (OUT_EMAPPED).
 */
struct out_file {
	FILE *f;
	const char *path;
	char *tmp; /* NULL when written in place */
	sigset_t saved_mask; /* SIGINT, SIGTERM, SIGHUP wait while @tmp exists */
};

/* Opens @o->f for @path; 0, -errno (-EISDIR for a directory) or -OUT_EMAPPED. */
int out_open(struct out_file *o, const char *path);

/* out_open()'s own error: the file is mapped and would be written in place */
#define OUT_EMAPPED 4096

/* strerror(), and OUT_EMAPPED's reason */
const char *out_strerror(int err);

/*
 * Closes @o->f and, unless @err (the caller's) or the close failed, renames
 * the temporary file over the path; on any error the temporary file is
 * removed.  Returns 0 or -errno.
 */
int out_close(struct out_file *o, int err);

/*
 * Open-addressing hash map from a 64-bit key to a 64-bit value.  Key and
 * value share a slot (one cache line per probe, not two): reports look up
 * a map per frame, millions of times.
 */
struct u64map_slot {
	u64 key;
	u64 val;
};

struct u64map {
	struct u64map_slot *slots;
	u8 *used;
	size_t cap;
	size_t nr;
};

bool u64map_get(const struct u64map *m, u64 key, u64 *val);
void u64map_put(struct u64map *m, u64 key, u64 val);
/* Iterate: start with *pos = 0; false once every entry was given. */
bool u64map_next(const struct u64map *m, size_t *pos, u64 *key, u64 *val);
void u64map_free(struct u64map *m);
/* splitmix64 finaliser: cheap and spreads sequential addresses well (inline: per frame) */
static inline u64 hash64(u64 x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

u64 hash_bytes(const void *data, size_t len, u64 seed);

/*
 * String interning: every distinct string gets a small id and one stored
 * copy, so reports compare frames by id.
 */
struct strtab {
	char **strs;
	u32 nr;
	u32 alloc;
	struct u64map index; /* hash -> first id; collisions chain via next[] */
	u32 *next;
};

u32 strtab_intern(struct strtab *t, const char *s);
/* The id of @s, UINT32_MAX when not interned. */
u32 strtab_find(const struct strtab *t, const char *s);
/* Is @id a valid id of @t? (for ids read from files) */
static inline bool strtab_has(const struct strtab *t, u32 id)
{
	return id < t->nr;
}

static inline const char *strtab_str(const struct strtab *t, u32 id)
{
	return t->strs[id];
}
void strtab_free(struct strtab *t);

/*
 * qsort_r(): the comparator gets @arg, so no state passes through globals;
 * an empty (NULL) array is fine.
 */
typedef int (*sort_cmp_fn)(const void *a, const void *b, void *arg);
void sort(void *base, size_t nmemb, size_t size, sort_cmp_fn cmp, void *arg);

/* A key and the index of what it keys. */
struct u64key {
	u64 key;
	u32 i;
};

/* Sort @n keys by key, stably, in linear time; @tmp has room for @n. */
void radix_sort(struct u64key *k, struct u64key *tmp, size_t n);

/*
 * A pool of names: NUL-terminated strings back to back, referred to by
 * offset (stable while the pool grows, unlike pointers).  Offset 0 is "".
 */
struct strpool {
	char *buf;
	size_t len;
	size_t alloc;
};

u32 strpool_add(struct strpool *p, const char *s);
u32 strpool_addn(struct strpool *p, const char *s, size_t len);

static inline const char *strpool_str(const struct strpool *p, u32 off)
{
	return p->buf ? p->buf + off : "";
}
void strpool_free(struct strpool *p);

/* a + b, but UINT64_MAX instead of wrapping (counters from untrusted records) */
static inline u64 add_sat(u64 a, u64 b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

/*
 * Length of the well-formed UTF-8 sequence at @s (1-4), or 0 when the bytes
 * there are not one (stray continuation, overlong form, surrogate, beyond
 * U+10FFFF, cut short) or encode a code point XML 1.0 forbids.
 */
size_t utf8_char_len(const char *s);

/*
 * @s when every character of it passes utf8_char_len(), else a copy in @sb
 * with U+FFFD for each byte that does not: a comm or a file name may hold
 * any bytes, and formats such as protobuf strings must be UTF-8.
 */
const char *utf8_clean(const char *s, struct sbuf *sb);

/* Monotonic clock in nanoseconds. */
u64 now_ns(void);
/*
 * CLOCK_MONOTONIC as the kernel stamps records (its time namespace's
 * offset taken off): comparable with a record's time.
 */
u64 kernel_mono_ns(void);

/* Parse an unsigned decimal/hex number, whole string; false on junk or overflow. */
bool parse_u64(const char *s, int base, u64 *out);

#endif /* CYCREAD_UTIL_H */
