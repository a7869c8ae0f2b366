// SPDX-License-Identifier: GPL-2.0
/*
 * Error messages, checked allocation, growable strings, file
 * reading and the two hash tables cycread uses (u64 -> u64, string interning).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

const char *prog_name = "cycread";
int verbose;

static void vmsg(const char *prefix, const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: %s", prog_name, prefix);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void pr_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
}

void pr_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("warning: ", fmt, ap);
	va_end(ap);
}

void pr_debug(const char *fmt, ...)
{
	va_list ap;

	if (!verbose)
		return;
	va_start(ap, fmt);
	vmsg("debug: ", fmt, ap);
	va_end(ap);
}

static void __noreturn out_of_memory(size_t size)
{
	pr_err("out of memory (%zu bytes)", size);
	exit(EXIT_RUNTIME);
}

void *xmalloc(size_t size)
{
	void *p = malloc(size ? size : 1);

	if (!p)
		out_of_memory(size);
	return p;
}

void *xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);

	if (!p)
		out_of_memory(nmemb * size);
	return p;
}

void *xrealloc(void *ptr, size_t nmemb, size_t size)
{
	void *p;

	if (size && nmemb > SIZE_MAX / size)
		out_of_memory(SIZE_MAX);
	p = realloc(ptr, (nmemb && size) ? nmemb * size : 1);
	if (!p)
		out_of_memory(nmemb * size);
	return p;
}

char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	struct sbuf sb = { 0 };
	va_list ap;

	va_start(ap, fmt);
	sbuf_vprintf(&sb, fmt, ap);
	va_end(ap);
	return sb.buf;
}

static void sbuf_reserve(struct sbuf *sb, size_t extra)
{
	size_t need = sb->len + extra + 1;

	if (need <= sb->alloc)
		return;
	if (need < 2 * sb->alloc)
		need = 2 * sb->alloc;
	if (need < 64)
		need = 64;
	sb->buf = xrealloc(sb->buf, need, 1);
	sb->alloc = need;
}

void sbuf_add(struct sbuf *sb, const void *data, size_t len)
{
	sbuf_reserve(sb, len);
	memcpy(sb->buf + sb->len, data, len);
	sb->len += len;
	sb->buf[sb->len] = '\0';
}

void sbuf_addstr(struct sbuf *sb, const char *s)
{
	sbuf_add(sb, s, strlen(s));
}

void sbuf_addch(struct sbuf *sb, char c)
{
	sbuf_add(sb, &c, 1);
}

void sbuf_vprintf(struct sbuf *sb, const char *fmt, va_list ap)
{
	va_list cp;
	int n;

	va_copy(cp, ap);
	n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0)
		return;
	sbuf_reserve(sb, n);
	vsnprintf(sb->buf + sb->len, n + 1, fmt, ap);
	sb->len += n;
}

void sbuf_printf(struct sbuf *sb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sbuf_vprintf(sb, fmt, ap);
	va_end(ap);
}

void sbuf_reset(struct sbuf *sb)
{
	sb->len = 0;
	if (sb->buf)
		sb->buf[0] = '\0';
}

void sbuf_free(struct sbuf *sb)
{
	free(sb->buf);
	sb->buf = NULL;
	sb->len = 0;
	sb->alloc = 0;
}

int read_fd(int fd, char **bufp, size_t *lenp, size_t max)
{
	size_t len = 0, alloc = 4096;
	struct stat st;
	ssize_t n;
	char *buf;

	/* regular files say how big they are; /proc files say 0 */
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_size > 0 && (u64)st.st_size < max)
		alloc = st.st_size + 2;
	buf = xmalloc(alloc);

	for (;;) {
		if (len + 1 >= alloc) {
			if (alloc > max) {
				free(buf);
				return -EFBIG;
			}
			alloc *= 2;
			buf = xrealloc(buf, alloc, 1);
		}
		n = read(fd, buf + len, alloc - len - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			n = -errno;
			free(buf);
			return n;
		}
		if (n == 0)
			break;
		len += n;
	}
	if (len > max) {
		free(buf);
		return -EFBIG;
	}
	buf[len] = '\0';
	*bufp = buf;
	if (lenp)
		*lenp = len;
	return 0;
}

int read_file(const char *path, char **buf, size_t *len, size_t max)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int ret;

	if (fd < 0)
		return -errno;
	ret = read_fd(fd, buf, len, max);
	close(fd);
	return ret;
}

u64 hash64(u64 x)
{
	/* splitmix64 finaliser: cheap and spreads sequential addresses well */
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

u64 hash_bytes(const void *data, size_t len, u64 seed)
{
	const u8 *p = data;
	u64 h = 0xcbf29ce484222325ULL ^ seed; /* FNV-1a */
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

static void u64map_grow(struct u64map *m)
{
	struct u64map n = { 0 };
	size_t i;

	n.cap = m->cap ? 2 * m->cap : 64;
	n.keys = xcalloc(n.cap, sizeof(*n.keys));
	n.vals = xcalloc(n.cap, sizeof(*n.vals));
	n.used = xcalloc(n.cap, 1);
	for (i = 0; i < m->cap; i++)
		if (m->used[i])
			u64map_put(&n, m->keys[i], m->vals[i]);
	u64map_free(m);
	*m = n;
}

bool u64map_get(const struct u64map *m, u64 key, u64 *val)
{
	size_t i;

	if (!m->cap)
		return false;
	for (i = hash64(key) & (m->cap - 1); m->used[i]; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == key) {
			if (val)
				*val = m->vals[i];
			return true;
		}
	}
	return false;
}

void u64map_put(struct u64map *m, u64 key, u64 val)
{
	size_t i;

	if ((m->nr + 1) * 4 >= m->cap * 3)
		u64map_grow(m);
	for (i = hash64(key) & (m->cap - 1); m->used[i]; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == key) {
			m->vals[i] = val;
			return;
		}
	}
	m->used[i] = 1;
	m->keys[i] = key;
	m->vals[i] = val;
	m->nr++;
}

void u64map_free(struct u64map *m)
{
	free(m->keys);
	free(m->vals);
	free(m->used);
	memset(m, 0, sizeof(*m));
}

u32 strtab_intern(struct strtab *t, const char *s)
{
	u64 h = hash_bytes(s, strlen(s), 0);
	u64 first;
	u32 id;

	if (u64map_get(&t->index, h, &first)) {
		for (id = first; id != UINT32_MAX; id = t->next[id])
			if (!strcmp(t->strs[id], s))
				return id;
	} else {
		first = UINT32_MAX;
	}
	if (t->nr >= t->alloc) {
		t->alloc = t->alloc ? 2 * t->alloc : 64;
		t->strs = xrealloc(t->strs, t->alloc, sizeof(*t->strs));
		t->next = xrealloc(t->next, t->alloc, sizeof(*t->next));
	}
	id = t->nr++;
	t->strs[id] = xstrdup(s);
	t->next[id] = first;
	u64map_put(&t->index, h, id);
	return id;
}

void strtab_free(struct strtab *t)
{
	u32 i;

	for (i = 0; i < t->nr; i++)
		free(t->strs[i]);
	free(t->strs);
	free(t->next);
	u64map_free(&t->index);
	memset(t, 0, sizeof(*t));
}

void sort(void *base, size_t nmemb, size_t size, int (*cmp)(const void *, const void *))
{
	if (nmemb > 1)
		qsort(base, nmemb, size, cmp);
}

u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

bool parse_u64(const char *s, int base, u64 *out)
{
	unsigned long long v;
	char *end;

	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
		return false;
	errno = 0;
	v = strtoull(s, &end, base);
	if (errno || *end)
		return false;
	*out = v;
	return true;
}
