// SPDX-License-Identifier: GPL-2.0
/*
 * Error messages, checked allocation, growable strings, file
 * reading and the two hash tables cycread uses (u64 -> u64, string interning).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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

void __noreturn out_of_memory(size_t size)
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

/* The @n digits ending at @end, padded on the left with @pad to @width. */
static void sbuf_add_padded(struct sbuf *sb, const char *end, u32 n, u32 width, char pad)
{
	width = MAX(width, n);
	sbuf_reserve(sb, width);
	memset(sb->buf + sb->len, pad, width - n);
	memcpy(sb->buf + sb->len + width - n, end - n, n);
	sb->len += width;
	sb->buf[sb->len] = '\0';
}

void sbuf_addhex(struct sbuf *sb, u64 v, u32 width)
{
	char digits[16];
	u32 n = 0;

	do {
		digits[sizeof(digits) - 1 - n++] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	sbuf_add_padded(sb, digits + sizeof(digits), n, width, ' ');
}

void sbuf_adddec(struct sbuf *sb, u64 v, u32 width)
{
	char digits[20]; /* UINT64_MAX has 20 */
	u32 n = 0;

	do {
		digits[sizeof(digits) - 1 - n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	sbuf_add_padded(sb, digits + sizeof(digits), n, width, '0');
}

/* Formatted once into the room left, again only when the text did not fit. */
void sbuf_vprintf(struct sbuf *sb, const char *fmt, va_list ap)
{
	size_t room = sb->alloc - sb->len;
	va_list cp;
	int n;

	if (room < 64) {
		sbuf_reserve(sb, 64);
		room = sb->alloc - sb->len;
	}
	va_copy(cp, ap);
	n = vsnprintf(sb->buf + sb->len, room, fmt, cp);
	va_end(cp);
	if (n < 0) {
		sb->buf[sb->len] = '\0';
		return;
	}
	if ((size_t)n >= room) {
		sbuf_reserve(sb, n);
		vsnprintf(sb->buf + sb->len, n + 1, fmt, ap);
	}
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

/* The files map_file() holds mapped, which out_open() must not truncate. */
struct mapped_file {
	const void *data;
	dev_t dev;
	ino_t ino;
};

static struct mapped_file *mapped;
static size_t nr_mapped, alloc_mapped;

static bool is_mapped(const char *path)
{
	struct stat st;
	size_t i;

	if (stat(path, &st) || !S_ISREG(st.st_mode))
		return false;
	for (i = 0; i < nr_mapped; i++)
		if (mapped[i].dev == st.st_dev && mapped[i].ino == st.st_ino)
			return true;
	return false;
}

const char *out_strerror(int err)
{
	if (err == OUT_EMAPPED)
		return "being read (-i): written in place it would be truncated while it is "
		       "read; write elsewhere";
	return strerror(err);
}

/* What out_in_place() chose, or a file where no file can be made beside: opened as it is. */
static int out_open_in_place(struct out_file *o, const char *path)
{
	int fd;

	if (is_mapped(path))
		return -OUT_EMAPPED;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0)
		return -errno;
	o->f = fdopen(fd, "w");
	if (!o->f) {
		close(fd);
		return -ENOMEM;
	}
	return 0;
}

/*
 * Written into, never replaced: a device, FIFO or socket (itself or behind
 * a link), and a link to a descriptor's file (/dev/stdout, made by a
 * shell's redirection).  A link to a regular file, or to nothing, is
 * replaced like a file: a link prepared at the name never leads the write
 * elsewhere, and a capture read through it (-i) stays whole.
 */
static bool out_in_place(const char *path, const struct stat *st)
{
	char to[7];

	if (!S_ISREG(st->st_mode))
		return true;
	return readlink(path, to, sizeof(to)) == sizeof(to) && !memcmp(to, "/proc/", 6);
}

/* Interrupts wait while a temporary file exists, so that none is left. */
static void out_block_signals(struct out_file *o, bool block)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	if (block)
		sigprocmask(SIG_BLOCK, &set, &o->saved_mask);
	else
		sigprocmask(SIG_SETMASK, &o->saved_mask, NULL);
}

int out_open(struct out_file *o, const char *path)
{
	struct stat st;
	mode_t mask;
	int fd, err;

	o->path = path;
	o->tmp = NULL;
	/* what the name leads to; nothing there (a new name, a dangling link): replaced */
	if (!stat(path, &st)) {
		if (S_ISDIR(st.st_mode))
			return -EISDIR;
		if (out_in_place(path, &st))
			return out_open_in_place(o, path);
	}
	out_block_signals(o, true);
	o->tmp = xasprintf("%s.XXXXXX", path);
	fd = mkostemp(o->tmp, O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		goto out_free;
	}
	/* mkstemp() makes it 0600; give it the mode fopen() would have */
	mask = umask(0);
	umask(mask);
	o->f = fchmod(fd, 0666 & ~mask) ? NULL : fdopen(fd, "w");
	if (!o->f) {
		err = -errno;
		close(fd);
		unlink(o->tmp);
		goto out_free;
	}
	return 0;

out_free:
	free(o->tmp);
	o->tmp = NULL;
	out_block_signals(o, false);
	/* a file we may write in a directory we may not: written in place */
	if ((err == -EACCES || err == -EPERM) && !access(path, W_OK))
		return out_open_in_place(o, path);
	return err;
}

int out_close(struct out_file *o, int err)
{
	if (ferror(o->f) && !err)
		err = -EIO;
	if (fclose(o->f) && !err)
		err = -errno;
	o->f = NULL;
	if (!o->tmp)
		return err;
	if (!err && rename(o->tmp, o->path))
		err = -errno;
	if (err)
		unlink(o->tmp);
	free(o->tmp);
	o->tmp = NULL;
	out_block_signals(o, false);
	return err;
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

int open_regular(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	int flags, err;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		err = S_ISDIR(st.st_mode) ? -EISDIR : -ENOTREG;
		goto fail;
	}
	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0) {
		err = -errno;
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return err;
}

const char *err_str(int err)
{
	return err == ENOTREG ? "not a regular file" : strerror(err);
}

int read_file(const char *path, char **buf, size_t *len, size_t max)
{
	int fd = open_regular(path);
	int ret;

	if (fd < 0)
		return fd;
	ret = read_fd(fd, buf, len, max);
	close(fd);
	return ret;
}

int map_file(const char *path, size_t max, const void **data, size_t *len)
{
	int fd = open_regular(path), ret = 0;
	struct stat st;
	void *map;

	if (fd < 0)
		return fd;
	if (fstat(fd, &st)) {
		ret = -errno;
		goto out;
	}
	if ((u64)st.st_size > max) {
		ret = -EFBIG;
		goto out;
	}
	*len = st.st_size;
	*data = "";
	if (!st.st_size)
		goto out;
	map = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		ret = -errno;
		goto out;
	}
	*data = map;
	VEC_GROW(mapped, nr_mapped, alloc_mapped);
	mapped[nr_mapped++] =
		(struct mapped_file){ .data = map, .dev = st.st_dev, .ino = st.st_ino };
out:
	close(fd);
	return ret;
}

void unmap_file(const void *data, size_t len)
{
	size_t i;

	if (!len)
		return;
	munmap((void *)data, len);
	for (i = 0; i < nr_mapped; i++)
		if (mapped[i].data == data) {
			mapped[i] = mapped[--nr_mapped];
			break;
		}
	if (!nr_mapped) {
		free(mapped);
		mapped = NULL;
		alloc_mapped = 0;
	}
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
	n.slots = xcalloc(n.cap, sizeof(*n.slots));
	n.used = xcalloc(n.cap, 1);
	for (i = 0; i < m->cap; i++)
		if (m->used[i])
			u64map_put(&n, m->slots[i].key, m->slots[i].val);
	u64map_free(m);
	*m = n;
}

bool u64map_get(const struct u64map *m, u64 key, u64 *val)
{
	size_t i;

	if (!m->cap)
		return false;
	for (i = hash64(key) & (m->cap - 1); m->used[i]; i = (i + 1) & (m->cap - 1)) {
		if (m->slots[i].key == key) {
			if (val)
				*val = m->slots[i].val;
			return true;
		}
	}
	return false;
}

void u64map_put(struct u64map *m, u64 key, u64 val)
{
	size_t i;

	/* at most half full: probe sequences stay short */
	if ((m->nr + 1) * 2 > m->cap)
		u64map_grow(m);
	for (i = hash64(key) & (m->cap - 1); m->used[i]; i = (i + 1) & (m->cap - 1)) {
		if (m->slots[i].key == key) {
			m->slots[i].val = val;
			return;
		}
	}
	m->used[i] = 1;
	m->slots[i].key = key;
	m->slots[i].val = val;
	m->nr++;
}

bool u64map_next(const struct u64map *m, size_t *pos, u64 *key, u64 *val)
{
	for (; *pos < m->cap; (*pos)++) {
		if (m->used[*pos]) {
			*key = m->slots[*pos].key;
			*val = m->slots[*pos].val;
			(*pos)++;
			return true;
		}
	}
	return false;
}

void u64map_free(struct u64map *m)
{
	free(m->slots);
	free(m->used);
	memset(m, 0, sizeof(*m));
}

u32 strtab_find(const struct strtab *t, const char *s)
{
	u64 first;
	u32 id;

	if (!u64map_get(&t->index, hash_bytes(s, strlen(s), 0), &first))
		return UINT32_MAX;
	for (id = first; id != UINT32_MAX; id = t->next[id])
		if (!strcmp(t->strs[id], s))
			return id;
	return UINT32_MAX;
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

void sort(void *base, size_t nmemb, size_t size, sort_cmp_fn cmp, void *arg)
{
	if (nmemb > 1)
		qsort_r(base, nmemb, size, cmp, arg);
}

static int key_cmp(const void *a, const void *b, void *arg)
{
	const struct u64key *x = a, *y = b;

	(void)arg;
	return x->key < y->key ? -1 : x->key > y->key;
}

/*
 * A byte per pass from the lowest, skipping the bytes every key shares (an
 * object's addresses share their top bytes, packed ranks leave the high
 * ones zero).  A comparison sort calls a function twenty times per entry
 * for a million.
 */
void radix_sort(struct u64key *k, struct u64key *tmp, size_t n)
{
	size_t count[8][256];
	size_t i, b, sum;
	struct u64key *from = k, *to = tmp, *t;

	if (n < 64) {
		sort(k, n, sizeof(*k), key_cmp, NULL);
		return;
	}
	memset(count, 0, sizeof(count));
	for (i = 0; i < n; i++)
		for (b = 0; b < 8; b++)
			count[b][(k[i].key >> (8 * b)) & 0xff]++;
	for (b = 0; b < 8; b++) {
		if (count[b][(k[0].key >> (8 * b)) & 0xff] == n)
			continue;
		for (i = 0, sum = 0; i < 256; i++) {
			size_t c = count[b][i];

			count[b][i] = sum;
			sum += c;
		}
		for (i = 0; i < n; i++)
			to[count[b][(from[i].key >> (8 * b)) & 0xff]++] = from[i];
		t = from;
		from = to;
		to = t;
	}
	if (from != k)
		memcpy(k, from, n * sizeof(*k));
}

u32 strpool_addn(struct strpool *p, const char *s, size_t len)
{
	size_t off;

	if (!p->len) {
		p->alloc = 4096;
		p->buf = xmalloc(p->alloc);
		p->buf[0] = '\0';
		p->len = 1;
	}
	if (!len)
		return 0;
	if (p->len + len + 1 > UINT32_MAX) {
		pr_err("more than 4 GiB of names");
		exit(EXIT_RUNTIME);
	}
	if (p->len + len + 1 > p->alloc) {
		p->alloc = MAX(2 * p->alloc, p->len + len + 1);
		p->buf = xrealloc(p->buf, p->alloc, 1);
	}
	off = p->len;
	memcpy(p->buf + off, s, len);
	p->buf[off + len] = '\0';
	p->len += len + 1;
	return off;
}

u32 strpool_add(struct strpool *p, const char *s)
{
	return strpool_addn(p, s, strlen(s));
}

void strpool_free(struct strpool *p)
{
	free(p->buf);
	memset(p, 0, sizeof(*p));
}

size_t utf8_char_len(const char *str)
{
	const u8 *s = (const u8 *)str;
	u32 cp, min;
	size_t n, i;

	if (s[0] < 0x80)
		return s[0] >= 0x20 || s[0] == '\t' || s[0] == '\n' || s[0] == '\r' ? 1 : 0;
	if ((s[0] & 0xe0) == 0xc0) {
		n = 2, cp = s[0] & 0x1f, min = 0x80;
	} else if ((s[0] & 0xf0) == 0xe0) {
		n = 3, cp = s[0] & 0x0f, min = 0x800;
	} else if ((s[0] & 0xf8) == 0xf0) {
		n = 4, cp = s[0] & 0x07, min = 0x10000;
	} else {
		return 0;
	}
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80) /* also stops at the NUL */
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe ||
	    cp == 0xffff)
		return 0;
	return n;
}

const char *utf8_clean(const char *s, struct sbuf *sb)
{
	const char *p = s;
	size_t n;

	while (*p && (n = utf8_char_len(p)))
		p += n;
	if (!*p)
		return s;
	sbuf_reset(sb);
	sbuf_add(sb, s, p - s);
	for (; *p; p += n ? n : 1) {
		n = utf8_char_len(p);
		if (n)
			sbuf_add(sb, p, n);
		else
			sbuf_addstr(sb, "\xef\xbf\xbd");
	}
	return sb->buf;
}

u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* The time namespace's offset of CLOCK_MONOTONIC (0 outside one), read once. */
static s64 timens_mono_offset(void)
{
	static bool done;
	static s64 off;
	long long sec, nsec;
	char line[128];
	FILE *f;

	if (done)
		return off;
	done = true;
	f = fopen("/proc/self/timens_offsets", "re");
	if (!f)
		return off;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "monotonic %lld %lld", &sec, &nsec) == 2)
			off = (s64)sec * 1000000000LL + nsec;
	fclose(f);
	return off;
}

u64 kernel_mono_ns(void)
{
	return now_ns() - (u64)timens_mono_offset();
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
