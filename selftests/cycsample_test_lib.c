// SPDX-License-Identifier: GPL-2.0
/*
 * Shared helpers of the cycsample selftests; see cycsample_test_lib.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cycsample_test_lib.h"

/* ---------------------------------------------------------------------- */
/* Sessions                                                               */
/* ---------------------------------------------------------------------- */

int cs_open(void)
{
	int fd = open(CS_NODE, O_RDWR | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

int cs_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) < 0 ? errno : 0;
}

int cs_configure(int fd, const struct cycsample_config *cfg)
{
	return cs_ioctl(fd, CYCSAMPLE_IOC_CONFIGURE, (void *)cfg);
}

int cs_info(int fd, struct cycsample_info *info)
{
	int err;

	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	err = cs_ioctl(fd, CYCSAMPLE_IOC_INFO, info);
	if (err != ENOTTY)
		return err;
	/* a module from before the PMU list: the fields it lacks stay zero */
	info->size = CYCSAMPLE_INFO_SIZE_VER0;
	return cs_ioctl(fd, CYCSAMPLE_IOC_INFO_VER0, info);
}

int cs_start(int fd)
{
	return ioctl(fd, CYCSAMPLE_IOC_START) < 0 ? errno : 0;
}

int cs_stop(int fd)
{
	return ioctl(fd, CYCSAMPLE_IOC_STOP) < 0 ? errno : 0;
}

void cs_config_init(struct cycsample_config *cfg, __u32 target_type, __s32 target)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->size = sizeof(*cfg);
	cfg->target_type = target_type;
	cfg->target = target;
	cfg->event = CYCSAMPLE_EVENT_CYCLES;
	cfg->sample_period = CS_PERIOD;
}

int cs_session_open(struct cs_session *s, const struct cycsample_config *cfg, const char **step)
{
	const char *dummy;
	void *base;
	int err;

	if (!step)
		step = &dummy;
	memset(s, 0, sizeof(*s));
	s->fd = cs_open();
	if (s->fd < 0) {
		*step = "open " CS_NODE;
		err = -s->fd;
		s->fd = -1;
		return err;
	}
	*step = "CONFIGURE";
	err = cs_configure(s->fd, cfg);
	if (err)
		goto out_close;
	*step = "INFO";
	err = cs_session_info(s);
	if (err)
		goto out_close;
	*step = "mmap";
	base = mmap(NULL, s->info.mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, 0);
	if (base == MAP_FAILED) {
		err = errno;
		goto out_close;
	}
	s->base = base;
	s->map_len = s->info.mmap_size;
	return 0;

out_close:
	close(s->fd);
	s->fd = -1;
	return err;
}

int cs_sample_for(const struct cycsample_config *cfg, unsigned int ms, struct cs_recs *out,
		  struct cycsample_info *info, const char **step)
{
	struct cs_session s;
	int err;

	err = cs_session_open(&s, cfg, step);
	if (err)
		return err;
	*step = "START";
	err = cs_start(s.fd);
	if (err)
		goto out_close;
	cs_collect_for(&s, ms, out);
	*step = "INFO";
	err = cs_session_info(&s);
	if (err)
		goto out_close;
	if (s.info.state == CYCSAMPLE_STATE_RUNNING) {
		*step = "STOP";
		err = cs_stop(s.fd);
		if (err)
			goto out_close;
	}
	cs_drain(&s, out);
	*step = "INFO";
	err = cs_info(s.fd, info);
out_close:
	cs_session_close(&s);
	return err;
}

int cs_session_info(struct cs_session *s)
{
	return cs_info(s->fd, &s->info);
}

void cs_session_close(struct cs_session *s)
{
	if (s->base)
		munmap(s->base, s->map_len);
	s->base = NULL;
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

struct cycsample_control *cs_control(const struct cs_session *s)
{
	return s->base;
}

struct cycsample_ring_header *cs_ring(const struct cs_session *s, unsigned int i)
{
	return (void *)((char *)s->base + cs_control(s)->rings[i].header_offset);
}

const unsigned char *cs_ring_data(const struct cs_session *s, unsigned int i)
{
	return (const unsigned char *)s->base + cs_control(s)->rings[i].data_offset;
}

#define PROBLEM(...)                             \
	do {                                     \
		snprintf(buf, len, __VA_ARGS__); \
		return buf;                      \
	} while (0)

const char *cs_control_problem(const struct cs_session *s, char *buf, size_t len)
{
	const struct cycsample_control *c = cs_control(s);
	uint64_t page = s->info.page_size, data = s->info.ring_data_size, off;
	unsigned int i;

	if (c->magic != CYCSAMPLE_MAGIC)
		PROBLEM("magic %#llx", (unsigned long long)c->magic);
	if (c->abi_version != CYCSAMPLE_ABI_VERSION)
		PROBLEM("abi_version %u", c->abi_version);
	if (c->page_size != page || page != (uint64_t)getpagesize())
		PROBLEM("page_size %u, info %llu", c->page_size, (unsigned long long)page);
	if (c->nr_rings != s->info.nr_rings || !c->nr_rings)
		PROBLEM("nr_rings %u, info %u", c->nr_rings, s->info.nr_rings);
	if (!c->control_size || c->control_size % page ||
	    c->control_size < sizeof(*c) + c->nr_rings * sizeof(c->rings[0]))
		PROBLEM("control_size %u", c->control_size);
	for (i = 0; i < 5; i++)
		if (c->reserved[i])
			PROBLEM("control reserved[%u] = %#llx", i,
				(unsigned long long)c->reserved[i]);
	if (s->info.mmap_size != c->control_size + c->nr_rings * (page + data))
		PROBLEM("mmap_size %llu != control %u + %u x (%llu + %llu)",
			(unsigned long long)s->info.mmap_size, c->control_size, c->nr_rings,
			(unsigned long long)page, (unsigned long long)data);
	if (!data || data & (data - 1))
		PROBLEM("ring_data_size %llu not a power of two", (unsigned long long)data);

	for (i = 0; i < c->nr_rings; i++) {
		const struct cycsample_ring_desc *d = &c->rings[i];
		const struct cycsample_ring_header *h;

		off = c->control_size + i * (page + data);
		if (d->header_offset != off || d->data_offset != off + page)
			PROBLEM("ring %u at %llu/%llu, layout says %llu/%llu", i,
				(unsigned long long)d->header_offset,
				(unsigned long long)d->data_offset, (unsigned long long)off,
				(unsigned long long)(off + page));
		if (d->data_size != data)
			PROBLEM("ring %u data_size %llu", i, (unsigned long long)d->data_size);
		if (d->reserved)
			PROBLEM("ring %u desc reserved %u", i, d->reserved);
		if (i && d->cpu <= c->rings[i - 1].cpu)
			PROBLEM("ring %u cpu %u not ascending", i, d->cpu);
		h = cs_ring(s, i);
		if (h->cpu != d->cpu || h->data_size != d->data_size)
			PROBLEM("ring %u header cpu %u size %llu, directory %u %llu", i, h->cpu,
				(unsigned long long)h->data_size, d->cpu,
				(unsigned long long)d->data_size);
	}
	return NULL;
}

/* ---------------------------------------------------------------------- */
/* Ring reader                                                            */
/* ---------------------------------------------------------------------- */

/* Copy @n bytes at free-running position @pos out of a ring of @size bytes. */
static void ring_copy(const unsigned char *data, uint64_t size, uint64_t pos, void *dst, size_t n)
{
	uint64_t off = pos & (size - 1);
	size_t first = n;

	if (first > size - off)
		first = size - off;
	memcpy(dst, data + off, first);
	memcpy((char *)dst + first, data, n - first);
}

static void recs_error(struct cs_recs *out, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void recs_error(struct cs_recs *out, const char *fmt, ...)
{
	va_list ap;

	if (!out->errors++) {
		va_start(ap, fmt);
		vsnprintf(out->error, sizeof(out->error), fmt, ap);
		va_end(ap);
	}
}

static int recs_append(struct cs_recs *out, unsigned int ring, unsigned int cpu, uint64_t pos,
		       void *buf)
{
	if (out->n == out->cap) {
		size_t cap = out->cap ? out->cap * 2 : 256;
		struct cs_rec *v = realloc(out->v, cap * sizeof(*v));

		if (!v)
			return ENOMEM;
		out->v = v;
		out->cap = cap;
	}
	out->v[out->n++] = (struct cs_rec){ .ring = ring, .ring_cpu = cpu, .pos = pos, .buf = buf };
	return 0;
}

long cs_drain_ring(struct cs_session *s, unsigned int i, struct cs_recs *out)
{
	const struct cycsample_control *c = cs_control(s);
	const struct cycsample_ring_desc *d = &c->rings[i];
	struct cycsample_ring_header *h;
	const unsigned char *data;
	uint64_t head, pos, size = d->data_size;
	long n = 0;

	if (d->header_offset + s->info.page_size > s->map_len ||
	    d->data_offset + size > s->map_len || !size || size & (size - 1)) {
		recs_error(out, "ring %u: directory entry outside the mapping", i);
		return 0;
	}
	h = cs_ring(s, i);
	data = cs_ring_data(s, i);

	/* Pairs with the producer's store_release of data_head: records are complete. */
	head = __atomic_load_n(&h->data_head, __ATOMIC_ACQUIRE);
	pos = h->data_tail; /* only this reader writes it */
	if (head - pos > size) {
		recs_error(out, "ring %u: head %llu tail %llu more than %llu apart", i,
			   (unsigned long long)head, (unsigned long long)pos,
			   (unsigned long long)size);
		pos = head;
		goto release;
	}
	while (pos != head) {
		struct cycsample_record_header rh;
		void *buf;

		if (head - pos < sizeof(rh)) {
			recs_error(out, "ring %u: %llu stray bytes at %llu", i,
				   (unsigned long long)(head - pos), (unsigned long long)pos);
			pos = head;
			break;
		}
		ring_copy(data, size, pos, &rh, sizeof(rh));
		if (rh.size < sizeof(rh) || rh.size % 8 || rh.size > CYCSAMPLE_MAX_RECORD_SIZE ||
		    rh.size > head - pos) {
			recs_error(out, "ring %u: record at %llu type %u size %u (unread %llu)", i,
				   (unsigned long long)pos, rh.type, rh.size,
				   (unsigned long long)(head - pos));
			pos = head;
			break;
		}
		buf = malloc(rh.size);
		if (!buf) {
			recs_error(out, "out of memory");
			break;
		}
		ring_copy(data, size, pos, buf, rh.size);
		if (recs_append(out, i, d->cpu, pos, buf)) {
			free(buf);
			recs_error(out, "out of memory");
			break;
		}
		pos += rh.size;
		n++;
	}
release:
	/* The copies are made: hand the space back to the producer. */
	__atomic_store_n(&h->data_tail, pos, __ATOMIC_RELEASE);
	return n;
}

long cs_drain(struct cs_session *s, struct cs_recs *out)
{
	unsigned int i;
	long n = 0;

	for (i = 0; i < cs_control(s)->nr_rings; i++)
		n += cs_drain_ring(s, i, out);
	return n;
}

uint64_t cs_ring_unread(const struct cs_session *s, unsigned int i)
{
	struct cycsample_ring_header *h = cs_ring(s, i);

	return __atomic_load_n(&h->data_head, __ATOMIC_ACQUIRE) - h->data_tail;
}

long cs_collect_for(struct cs_session *s, unsigned int ms, struct cs_recs *out)
{
	uint64_t end = cs_now_ms() + ms;
	long n = 0;

	for (;;) {
		uint64_t now = cs_now_ms();
		struct pollfd p = { .fd = s->fd, .events = POLLIN };
		int left = now < end ? (int)(end - now) : 0;

		if (!left)
			break;
		if (poll(&p, 1, left < 100 ? left : 100) < 0 && errno != EINTR)
			break;
		n += cs_drain(s, out);
		if (p.revents & (POLLHUP | POLLERR | POLLNVAL))
			break;
	}
	return n + cs_drain(s, out);
}

void cs_recs_free(struct cs_recs *r)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		free(r->v[i].buf);
	free(r->v);
	memset(r, 0, sizeof(*r));
}

int cs_pmu_of_cpu(const struct cycsample_info *info, unsigned int cpu)
{
	unsigned int i;

	for (i = 0; i < info->nr_pmus && i < CYCSAMPLE_MAX_PMUS; i++)
		if (cpu < CYCSAMPLE_PMU_CPUS && (info->pmus[i].cpus[cpu / 64] >> (cpu % 64) & 1))
			return i;
	return -1;
}

/* The event in use where @smp was taken: its PMU's, or the session's before the PMU list. */
static __u32 sample_event(const struct cycsample_sample *smp, const struct cycsample_info *info)
{
	if (info->nr_pmus && smp->pmu < info->nr_pmus)
		return info->pmus[smp->pmu].event;
	return info->event;
}

static const char *sample_problem(const struct cycsample_sample *smp, const struct cs_rec *r,
				  const struct cycsample_info *info, char *buf, size_t len)
{
	bool hw = sample_event(smp, info) == CYCSAMPLE_EVENT_HW_CYCLES;
	__u32 cfl = info->config_flags;
	size_t want;

	want = sizeof(*smp) +
	       sizeof(__u64) * ((size_t)smp->nr_kernel + smp->nr_user + smp->nr_regs);
	if (smp->hdr.size != want)
		PROBLEM("sample size %u, counts imply %zu", smp->hdr.size, want);
	if (smp->arch != CS_ARCH)
		PROBLEM("arch %u", smp->arch);
	if (smp->reserved2)
		PROBLEM("reserved2 %llu", (unsigned long long)smp->reserved2);
	if (info->nr_pmus ? smp->pmu >= info->nr_pmus : smp->pmu)
		PROBLEM("pmu index %u, INFO lists %u", smp->pmu, info->nr_pmus);
	/* the PMU that took it covers the CPU it was taken on */
	if (info->nr_pmus && smp->cpu < CYCSAMPLE_PMU_CPUS &&
	    cs_pmu_of_cpu(info, smp->cpu) != smp->pmu)
		PROBLEM("sample on cpu %u from pmu %u, whose mask lacks that cpu", smp->cpu,
			smp->pmu);
	if (smp->flags & ~CYCSAMPLE_SAMPLE_ALL_FLAGS)
		PROBLEM("unknown flags %#x", smp->flags);
	if ((smp->flags & CYCSAMPLE_SAMPLE_NMI) && (smp->flags & CYCSAMPLE_SAMPLE_SW_CLOCK))
		PROBLEM("flags %#x: the software clock is an hrtimer, never an NMI", smp->flags);
	/* an IRQ cannot interrupt code with IRQs masked, and user mode never is */
	if ((smp->flags & CYCSAMPLE_SAMPLE_IRQS_OFF) &&
	    (!(smp->flags & CYCSAMPLE_SAMPLE_NMI) || !(smp->flags & CYCSAMPLE_SAMPLE_KERNEL)))
		PROBLEM("flags %#x: IRQS_OFF without NMI or in user mode", smp->flags);
#ifdef __aarch64__
	/* inside a context switch current and the user address space may disagree */
	if ((smp->flags & CYCSAMPLE_SAMPLE_IRQS_OFF) && smp->nr_user)
		PROBLEM("%u user frames with IRQs masked", smp->nr_user);
#endif
	if (!(smp->flags & CYCSAMPLE_SAMPLE_USER) == !(smp->flags & CYCSAMPLE_SAMPLE_KERNEL))
		PROBLEM("flags %#x: not exactly one of USER, KERNEL", smp->flags);
	if (smp->cpu != r->ring_cpu)
		PROBLEM("sample cpu %u in the ring of cpu %u", smp->cpu, r->ring_cpu);
	if (!smp->period)
		PROBLEM("period 0");
	if (!!(smp->flags & CYCSAMPLE_SAMPLE_SW_CLOCK) == hw)
		PROBLEM("flags %#x with info.event %u", smp->flags, info->event);
	if ((cfl & CYCSAMPLE_CFG_USER_ONLY) && (smp->flags & CYCSAMPLE_SAMPLE_KERNEL))
		PROBLEM("kernel-mode sample in a user-only session");
	if (smp->nr_kernel > info->max_stack || smp->nr_user > info->max_stack)
		PROBLEM("chains %u/%u over max_stack %u", smp->nr_kernel, smp->nr_user,
			info->max_stack);
	if (smp->nr_kernel && !(cfl & CYCSAMPLE_CFG_KERNEL_CHAIN))
		PROBLEM("%u kernel frames without KERNEL_CHAIN", smp->nr_kernel);
	if (smp->nr_user && !(cfl & CYCSAMPLE_CFG_USER_CHAIN))
		PROBLEM("%u user frames without USER_CHAIN", smp->nr_user);
	if (smp->nr_regs != ((cfl & CYCSAMPLE_CFG_REGS_USER) ? CS_NR_USER_REGS : 0) &&
	    smp->nr_regs != 0)
		PROBLEM("nr_regs %u", smp->nr_regs);
	if ((smp->flags & CYCSAMPLE_SAMPLE_KCHAIN_TRUNC) && smp->nr_kernel != info->max_stack)
		PROBLEM("KCHAIN_TRUNC with %u frames", smp->nr_kernel);
	if ((smp->flags & CYCSAMPLE_SAMPLE_UCHAIN_TRUNC) && smp->nr_user != info->max_stack)
		PROBLEM("UCHAIN_TRUNC with %u frames", smp->nr_user);
	if ((smp->flags & CYCSAMPLE_SAMPLE_USER) && smp->nr_kernel)
		PROBLEM("user-mode sample with %u kernel frames", smp->nr_kernel);
	if ((smp->flags & CYCSAMPLE_SAMPLE_REGS_HIDDEN) &&
	    (smp->pc || smp->sp || smp->fp || smp->lr))
		PROBLEM("REGS_HIDDEN but registers not zero");
	if (smp->nr_kernel && !(smp->flags & CYCSAMPLE_SAMPLE_REGS_HIDDEN) &&
	    cs_kernel_frames(smp)[0] != smp->pc)
		PROBLEM("kernel chain starts at %#llx, pc %#llx",
			(unsigned long long)cs_kernel_frames(smp)[0], (unsigned long long)smp->pc);
	if ((smp->flags & CYCSAMPLE_SAMPLE_USER) && smp->nr_user &&
	    cs_user_frames(smp)[0] != smp->pc)
		PROBLEM("user chain starts at %#llx, pc %#llx",
			(unsigned long long)cs_user_frames(smp)[0], (unsigned long long)smp->pc);
	if (smp->nr_regs && smp->nr_user &&
	    cs_user_regs(smp)[CS_USER_REG_PC] != cs_user_frames(smp)[0])
		PROBLEM("user regs pc %#llx, user chain starts at %#llx",
			(unsigned long long)cs_user_regs(smp)[CS_USER_REG_PC],
			(unsigned long long)cs_user_frames(smp)[0]);
	return NULL;
}

/* An MMAP record: only with the flag, its size what its path implies, padding zero. */
static const char *mmap_problem(const struct cycsample_mmap *m, const struct cycsample_info *info,
				char *buf, size_t len)
{
	size_t size = m->hdr.size, i;

	if (!(info->config_flags & CYCSAMPLE_CFG_MMAP))
		PROBLEM("MMAP record in a session without CYCSAMPLE_CFG_MMAP");
	if (size < sizeof(*m) + 8 || size > sizeof(*m) + CYCSAMPLE_MMAP_PATH_MAX)
		PROBLEM("MMAP record of %zu bytes", size);
	if (size != ((sizeof(*m) + m->path_len + 1 + 7) & ~(size_t)7))
		PROBLEM("MMAP record of %zu bytes for a path of %u", size, m->path_len);
	for (i = m->path_len; i < size - sizeof(*m); i++)
		if (m->path[i])
			PROBLEM("MMAP record: byte %zu after the path is %#x", i, m->path[i]);
	if (memchr(m->path, 0, m->path_len))
		PROBLEM("MMAP record: NUL inside a path of %u", m->path_len);
	if (!m->pid || !m->tid || !m->len || m->reserved || (m->flags & ~CYCSAMPLE_MMAP_ALL_FLAGS))
		PROBLEM("MMAP record pid %u tid %u len %llu flags %#x reserved %u", m->pid, m->tid,
			(unsigned long long)m->len, m->flags, m->reserved);
	if (!(m->prot & CYCSAMPLE_PROT_EXEC))
		PROBLEM("MMAP record of a mapping with prot %#x", m->prot);
	return NULL;
}

/*
 * A SAMPLE_PC record: only with the flag, 48 bytes, and otherwise what the
 * SAMPLE record it stands for would have to be (no chains, no registers).
 */
static const char *sample_pc_problem(const struct cycsample_sample_pc *pc, const struct cs_rec *r,
				     const struct cycsample_info *info, char *buf, size_t len)
{
	struct cycsample_sample smp = {
		.hdr = { CYCSAMPLE_REC_SAMPLE, sizeof(smp) },
		.time = pc->time,
		.pid = pc->pid,
		.tid = pc->tid,
		.cpu = pc->cpu,
		.flags = pc->flags,
		.period = pc->period,
		.pc = pc->pc,
		.arch = pc->arch,
		.pmu = pc->pmu,
	};

	if (!(info->config_flags & CYCSAMPLE_CFG_PC_ONLY))
		PROBLEM("SAMPLE_PC record in a session without CYCSAMPLE_CFG_PC_ONLY");
	if (pc->hdr.size != sizeof(*pc))
		PROBLEM("SAMPLE_PC record of %u bytes", pc->hdr.size);
	if (pc->flags & (CYCSAMPLE_SAMPLE_KCHAIN_TRUNC | CYCSAMPLE_SAMPLE_UCHAIN_TRUNC))
		PROBLEM("SAMPLE_PC record with chain flags %#x", pc->flags);
	return sample_problem(&smp, r, info, buf, len);
}

const char *cs_record_problem(const struct cs_rec *r, const struct cycsample_info *info, char *buf,
			      size_t len)
{
	const struct cycsample_record_header *h = cs_hdr(r);
	const struct cycsample_task_event *te;
	const struct cycsample_lost *lost;

	switch (h->type) {
	case CYCSAMPLE_REC_SAMPLE:
		if (h->size < sizeof(struct cycsample_sample))
			PROBLEM("sample of %u bytes", h->size);
		if (info->config_flags & CYCSAMPLE_CFG_PC_ONLY)
			PROBLEM("SAMPLE record in a CYCSAMPLE_CFG_PC_ONLY session");
		return sample_problem(r->buf, r, info, buf, len);
	case CYCSAMPLE_REC_SAMPLE_PC:
		if (h->size < sizeof(struct cycsample_sample_pc))
			PROBLEM("SAMPLE_PC record of %u bytes", h->size);
		return sample_pc_problem(r->buf, r, info, buf, len);
	case CYCSAMPLE_REC_LOST:
		lost = r->buf;
		if (h->size != sizeof(*lost))
			PROBLEM("LOST record of %u bytes", h->size);
		if (!lost->lost)
			PROBLEM("LOST record with a count of 0");
		return NULL;
	case CYCSAMPLE_REC_EXEC:
	case CYCSAMPLE_REC_EXIT:
		te = r->buf;
		if (h->size != sizeof(*te))
			PROBLEM("task record type %u of %u bytes", h->type, h->size);
		if (!te->pid || !te->tid)
			PROBLEM("task record type %u pid %u tid %u", h->type, te->pid, te->tid);
		if (!memchr(te->comm, 0, sizeof(te->comm)))
			PROBLEM("task record comm not terminated");
		return NULL;
	case CYCSAMPLE_REC_MMAP:
		return mmap_problem(r->buf, info, buf, len);
	case CYCSAMPLE_REC_FORK: {
		const struct cycsample_fork *f = r->buf;

		if (h->size != sizeof(*f))
			PROBLEM("FORK record of %u bytes", h->size);
		if (!f->pid || !f->tid || !f->ppid || f->ppid == f->pid || f->reserved)
			PROBLEM("FORK record pid %u tid %u ppid %u reserved %u", f->pid, f->tid,
				f->ppid, f->reserved);
		if (!memchr(f->comm, 0, sizeof(f->comm)))
			PROBLEM("FORK record comm not terminated");
		return NULL;
	}
	default:
		PROBLEM("unknown record type %u (size %u)", h->type, h->size);
	}
}

const char *cs_recs_problem(const struct cs_recs *r, const struct cycsample_info *info, char *buf,
			    size_t len)
{
	uint64_t last_time[1024] = { 0 };
	size_t i;

	if (r->errors)
		PROBLEM("%u read errors, first: %s", r->errors, r->error);
	for (i = 0; i < r->n; i++) {
		const struct cs_rec *rec = &r->v[i];
		const char *p = cs_record_problem(rec, info, buf, len);
		uint64_t t;

		if (p) {
			size_t l = strlen(buf);

			snprintf(buf + l, len - l, " (ring %u pos %llu)", rec->ring,
				 (unsigned long long)rec->pos);
			return buf;
		}
		/* Every record type starts with the header, then the time. */
		t = ((const uint64_t *)rec->buf)[1];
		if (rec->ring < 1024) {
			if (t < last_time[rec->ring])
				PROBLEM("ring %u pos %llu: time %llu before %llu", rec->ring,
					(unsigned long long)rec->pos, (unsigned long long)t,
					(unsigned long long)last_time[rec->ring]);
			last_time[rec->ring] = t;
		}
	}
	return NULL;
}

const void *cs_find_record(const struct cs_recs *r, __u32 type)
{
	const void *found = NULL;
	size_t i;

	for (i = 0; i < r->n; i++)
		if (cs_hdr(&r->v[i])->type == type)
			found = r->v[i].buf;
	return found;
}

void cs_count(const struct cs_recs *r, struct cs_counts *c)
{
	size_t i;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < r->n; i++) {
		const struct cycsample_record_header *h = cs_hdr(&r->v[i]);
		struct cs_sample_head sh;

		c->records++;
		if (cs_sample_head(&r->v[i], &sh)) {
			c->samples++;
			c->pc_only += h->type == CYCSAMPLE_REC_SAMPLE_PC;
			if (sh.flags & CYCSAMPLE_SAMPLE_USER)
				c->user++;
			if (sh.flags & CYCSAMPLE_SAMPLE_KERNEL)
				c->kernel++;
			continue;
		}
		switch (h->type) {
		case CYCSAMPLE_REC_LOST:
			c->lost_records++;
			c->lost += ((const struct cycsample_lost *)r->v[i].buf)->lost;
			break;
		case CYCSAMPLE_REC_EXEC:
			c->exec++;
			break;
		case CYCSAMPLE_REC_EXIT:
			c->exits++;
			break;
		case CYCSAMPLE_REC_MMAP:
			c->mmaps++;
			break;
		case CYCSAMPLE_REC_FORK:
			c->forks++;
			break;
		}
	}
}

unsigned long cs_count_pc_in(const struct cs_recs *r, pid_t pid, const void *lo, const void *hi)
{
	unsigned long n = 0;
	size_t i;

	for (i = 0; i < r->n; i++) {
		struct cs_sample_head sh;

		if (cs_sample_head(&r->v[i], &sh) && (!pid || sh.pid == (__u32)pid) &&
		    sh.pc >= (uintptr_t)lo && sh.pc < (uintptr_t)hi)
			n++;
	}
	return n;
}

/* ---------------------------------------------------------------------- */
/* Workloads                                                              */
/* ---------------------------------------------------------------------- */

static volatile unsigned long cs_sink;
/* Never set: the spin loops can end, so the compiler keeps their frames. */
static volatile int cs_stop_spinning;

/* An empty asm after a call keeps the call from becoming a tail call. */
#define NO_TAIL_CALL() __asm__ __volatile__("" ::: "memory")

__attribute__((noinline, used, section("cs_text_leaf"))) static void cs_spin_leaf(void)
{
	/*
	 * The leaf must set up its frame pointer.  gcc 12 on x86_64 omits it in
	 * leaf functions that need no stack despite -mno-omit-leaf-frame-pointer,
	 * and drops the prologue of functions it proves never return: so a loop
	 * that may end, on a counter that lives on the stack.
	 */
	volatile unsigned long n = 0;

	while (!cs_stop_spinning)
		n++;
	cs_sink = n;
}

__attribute__((noinline, used, section("cs_text_mid"))) static void cs_spin_mid(void)
{
	cs_spin_leaf();
	NO_TAIL_CALL();
}

__attribute__((noinline, used, section("cs_text_outer"))) void cs_spin_outer(void)
{
	cs_spin_mid();
	NO_TAIL_CALL();
	abort();
}

/*
 * Spin for @ms of the thread's CPU time (a clock read every 100000 rounds).
 * Inlined into each caller, so that the loop is in the caller's section.
 */
static inline __attribute__((always_inline)) void cs_spin_for_ms(unsigned int ms)
{
	struct timespec ts;
	uint64_t end, now;
	unsigned int i;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	end = ts.tv_sec * 1000ULL + ts.tv_nsec / 1000000 + ms;
	do {
		for (i = 0; i < 100000; i++)
			cs_sink++;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
		now = ts.tv_sec * 1000ULL + ts.tv_nsec / 1000000;
	} while (now < end);
}

void cs_spin_cpu_ms(unsigned int ms)
{
	cs_spin_for_ms(ms);
}

__attribute__((noinline, used, section("cs_text_mark"))) void cs_spin_mark_ms(unsigned int ms)
{
	cs_spin_for_ms(ms);
}

void cs_spin_syscalls(void)
{
	for (;;)
		getppid();
}

static void cs_deep(unsigned int depth);
/* Called through a pointer so the compiler neither unrolls nor flags the recursion. */
static void (*volatile cs_deep_next)(unsigned int) = cs_deep;

__attribute__((noinline)) static void cs_deep(unsigned int depth)
{
	if (!depth)
		cs_spin_outer();
	cs_deep_next(depth - 1);
	NO_TAIL_CALL();
}

void cs_spin_deep(unsigned int depth)
{
	cs_deep(depth);
	abort();
}

__attribute__((noinline, used, section("cs_text_priv"))) static void cs_spin_priv(void)
{
	while (!cs_stop_spinning)
		cs_sink++;
}

/* The same for @ms of CPU time (a clock read every 100000 rounds). */
__attribute__((noinline, used, section("cs_text_priv"))) static void
cs_spin_priv_ms(unsigned int ms)
{
	cs_spin_for_ms(ms);
}

/* ---- the exec race: see CS_SPIN_ENV "race" and "race-priv" ---- */

static char *cs_race_env[5];

static void cs_race_exec(const char *path, const char *mode)
{
	static char m[64], e[4200], h[4200], c[4200];
	const char *count = getenv(CS_RACE_COUNT);
	char *argv[] = { (char *)path, NULL };

	snprintf(m, sizeof(m), CS_SPIN_ENV "=%s", mode);
	snprintf(e, sizeof(e), CS_RACE_EXE "=%s", getenv(CS_RACE_EXE));
	snprintf(h, sizeof(h), CS_RACE_HELPER "=%s", getenv(CS_RACE_HELPER));
	snprintf(c, sizeof(c), CS_RACE_COUNT "=%s", count ? count : "");
	cs_race_env[0] = m;
	cs_race_env[1] = e;
	cs_race_env[2] = h;
	cs_race_env[3] = c;
	execve(path, argv, cs_race_env);
	_exit(3);
}

static void *cs_race_spinner(void *arg)
{
	cs_spin_outer();
}

/* One of the threads: spin a little while, then exec the setuid helper. */
static void *cs_race_execer(void *arg)
{
	cs_spin_cpu_ms(1 + (unsigned int)getpid() % 8);
	cs_race_exec(getenv(CS_RACE_HELPER), "race-priv");
	return NULL;
}

/* The unprivileged image: spinning threads, one of which execs the helper. */
static void cs_race_unprivileged(void)
{
	pthread_t t;
	int i;

	if (!getenv(CS_RACE_EXE) || !getenv(CS_RACE_HELPER))
		_exit(4);
	for (i = 0; i < CS_RACE_THREADS - 1; i++)
		if (pthread_create(&t, NULL, cs_race_spinner, NULL))
			_exit(5);
	if (pthread_create(&t, NULL, cs_race_execer, NULL))
		_exit(5);
	for (;;)
		pause();
}

/* The setuid-root image: spin in the privileged code, drop to nobody, exec back. */
static void cs_race_privileged(void)
{
	const char *count = getenv(CS_RACE_COUNT);
	int fd;

	if (count && geteuid() == 0) {
		fd = open(count, O_WRONLY | O_APPEND | O_CLOEXEC);
		if (fd >= 0 && write(fd, "p", 1) != 1)
			_exit(6);
		if (fd >= 0)
			close(fd);
	}
	cs_spin_priv_ms(10);
	if (setresgid(CS_NOBODY, CS_NOBODY, CS_NOBODY) ||
	    setresuid(CS_NOBODY, CS_NOBODY, CS_NOBODY))
		_exit(7);
	cs_race_exec(getenv(CS_RACE_EXE), "race");
}

/* See CS_SPIN_ENV: turn this exec of a test binary into a target. */
__attribute__((constructor)) static void cs_spin_on_request(void)
{
	const char *mode = getenv(CS_SPIN_ENV);
	int euid;

	if (!mode)
		return;
	if (!strcmp(mode, "user"))
		cs_spin_outer();
	if (!strncmp(mode, "priv:", 5)) {
		euid = geteuid();
		if (write(atoi(mode + 5), &euid, sizeof(euid)) != sizeof(euid))
			_exit(1);
		cs_spin_priv();
	}
	if (!strcmp(mode, "race"))
		cs_race_unprivileged();
	if (!strcmp(mode, "race-priv"))
		cs_race_privileged();
	_exit(2);
}

const char *cs_self_exe(void)
{
	static char path[4096];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);

	if (n <= 0)
		return NULL;
	path[n] = 0;
	return path;
}

/* ---------------------------------------------------------------------- */
/* Processes                                                              */
/* ---------------------------------------------------------------------- */

static pid_t spawn(int (*fn)(void *), void *arg, bool pin)
{
	pid_t ppid = getpid();
	cpu_set_t mine;
	pid_t pid;
	int err;

	fflush(stdout);
	fflush(stderr);
	/*
	 * The child is born pinned (the caller's mask, set around the fork):
	 * a caller's later cs_pin() of it cannot lose a race against the
	 * child pinning itself.  One CPU, or none to keep it on: it runs.
	 */
	pin = pin && !sched_getaffinity(0, sizeof(mine), &mine) && !cs_pin_last_cpu(0);
	pid = fork();
	err = errno;
	if (pid && pin)
		sched_setaffinity(0, sizeof(mine), &mine);
	if (pid < 0)
		return -err;
	if (pid)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != ppid)
		_exit(1);
	_exit(fn(arg));
}

/*
 * A target installs and removes counters in its tasks at every START and
 * STOP, and its children get copies at fork.  Doing that while the task
 * migrates trips a kernel perf bug that perf_event_open() alone
 * reproduces (selftests/perf_migrate_race.c; once in a make check, a
 * garbage counter index oopsed 6.1 in the PMU interrupt under STOP), so
 * targets stay on one CPU; CYCSAMPLE_STRESS_RACES=1 on the guest's
 * command line asks for that bug and lets them run anywhere.
 */
pid_t cs_spawn(int (*fn)(void *), void *arg)
{
	return spawn(fn, arg, !getenv("CYCSAMPLE_STRESS_RACES"));
}

pid_t cs_spawn_anywhere(int (*fn)(void *), void *arg)
{
	return spawn(fn, arg, false);
}

static int run_spinner(void *arg)
{
	cs_spin_outer();
}

static int run_syscaller(void *arg)
{
	cs_spin_syscalls();
}

pid_t cs_spawn_spinner(void)
{
	return cs_spawn(run_spinner, NULL);
}

pid_t cs_spawn_syscaller(void)
{
	return cs_spawn(run_syscaller, NULL);
}

void cs_kill(pid_t pid)
{
	if (pid <= 0)
		return;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

int cs_wait_ms(pid_t pid, unsigned int ms)
{
	uint64_t end = cs_now_ms() + ms;
	int status;

	do {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			return status;
		if (r < 0)
			return -1;
		cs_sleep_ms(10);
	} while (cs_now_ms() < end);
	return -1;
}

int cs_run_as(uid_t uid, gid_t gid, int (*fn)(void *), void *arg)
{
	pid_t pid;
	int status;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		if (setgroups(0, NULL) || setresgid(gid, gid, gid) || setresuid(uid, uid, uid))
			_exit(255);
		/*
		 * A uid change clears the death signal and makes the process
		 * non-dumpable; an ordinary user's process is dumpable.
		 */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		prctl(PR_SET_DUMPABLE, 1);
		_exit(fn(arg));
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) == 255)
		return -1;
	return WEXITSTATUS(status);
}

int cs_pin(pid_t tid, int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(tid, sizeof(set), &set) ? errno : 0;
}

int cs_pin_last_cpu(pid_t tid)
{
	int cpu, last = -1;
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set))
		return errno;
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &set))
			last = cpu;
	if (last <= 0)
		return ENODEV;
	return cs_pin(tid, last);
}

void cs_sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

uint64_t cs_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ULL + ts.tv_nsec / 1000000;
}

/* ---------------------------------------------------------------------- */
/* System state                                                           */
/* ---------------------------------------------------------------------- */

int cs_read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;
	int err;

	if (fd < 0)
		return errno;
	n = read(fd, buf, len - 1);
	err = n < 0 ? errno : 0;
	close(fd);
	if (err)
		return err;
	buf[n] = 0;
	return 0;
}

int cs_write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;
	int err;

	if (fd < 0)
		return errno;
	n = write(fd, s, strlen(s));
	err = n < 0 ? errno : n != (ssize_t)strlen(s) ? EIO : 0;
	close(fd);
	return err;
}

static int read_long(const char *dir, const char *name, long *val)
{
	char path[128], buf[64];
	int err;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	err = cs_read_file(path, buf, sizeof(buf));
	if (err)
		return err;
	*val = strtol(buf, NULL, 0);
	return 0;
}

static int write_long(const char *dir, const char *name, long val)
{
	char path[128], buf[32];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(buf, sizeof(buf), "%ld", val);
	return cs_write_file(path, buf);
}

int cs_param_get(const char *name, long *val)
{
	return read_long(CS_PARAM_DIR, name, val);
}

int cs_param_set(const char *name, long val)
{
	return write_long(CS_PARAM_DIR, name, val);
}

int cs_sysctl_get(const char *name, long *val)
{
	return read_long("/proc/sys/kernel", name, val);
}

int cs_sysctl_set(const char *name, long val)
{
	return write_long("/proc/sys/kernel", name, val);
}

void cs_reset_sample_rate(void)
{
	cs_write_file(CS_SAMPLE_RATE, "100000");
}

/* perf_event_max_sample_rate now, -1 if unreadable. */
long cs_sample_rate(void)
{
	char buf[32];

	if (cs_read_file(CS_SAMPLE_RATE, buf, sizeof(buf)))
		return -1;
	return atol(buf);
}

int cs_module_refcnt(void)
{
	char buf[32];

	if (cs_read_file(CS_MODULE_DIR "/refcnt", buf, sizeof(buf)))
		return -1;
	return atoi(buf);
}

/* Wait up to 2 s for the module's refcount to come back to @want. */
int cs_module_refcnt_settles_at(int want)
{
	uint64_t end = cs_now_ms() + 2000;
	int n;

	do {
		n = cs_module_refcnt();
		if (n == want)
			return n;
		cs_sleep_ms(20);
	} while (cs_now_ms() < end);
	return n;
}

/* Number of CPUs in a cpulist file such as "0-1,3". */
static int count_cpulist(const char *path)
{
	char buf[256], *p;
	int n = 0;

	if (cs_read_file(path, buf, sizeof(buf)))
		return -1;
	for (p = buf; *p && *p != '\n';) {
		long a = strtol(p, &p, 10), b = a;

		if (*p == '-')
			b = strtol(p + 1, &p, 10);
		n += b - a + 1;
		if (*p == ',')
			p++;
	}
	return n;
}

int cs_nr_possible_cpus(void)
{
	return count_cpulist("/sys/devices/system/cpu/possible");
}

int cs_nr_online_cpus(void)
{
	return count_cpulist("/sys/devices/system/cpu/online");
}

__u32 cs_max_ring_pages(void)
{
	return CYCSAMPLE_MAX_RING_BYTES / sysconf(_SC_PAGESIZE);
}

__u64 cs_default_ring_bytes(void)
{
	__u64 page = sysconf(_SC_PAGESIZE);

	return CYCSAMPLE_DEFAULT_RING_BYTES > CYCSAMPLE_MIN_RING_PAGES * page
		       ? CYCSAMPLE_DEFAULT_RING_BYTES
		       : CYCSAMPLE_MIN_RING_PAGES * page;
}

int cs_rmmod(void)
{
	return syscall(SYS_delete_module, "cycsample", O_NONBLOCK) ? errno : 0;
}

bool cs_module_loaded(void)
{
	return access(CS_MODULE_DIR, F_OK) == 0;
}

const char *cs_ko_path(void)
{
	const char *p = getenv("CYCSAMPLE_KO");

	return p ? p : "/cycsample/cycsample.ko";
}

/* The last references of a closed session may take a moment to go. */
int cs_unload_module(void)
{
	int i, err;

	for (i = 0; i < 200; i++) {
		if (!cs_module_loaded())
			return 0;
		err = cs_rmmod();
		if (err != EWOULDBLOCK && err != EAGAIN)
			return err;
		cs_sleep_ms(10);
	}
	return EBUSY;
}

int cs_load_module(const char *params)
{
	int fd = open(cs_ko_path(), O_RDONLY | O_CLOEXEC);
	int err = 0;

	if (fd < 0)
		return errno;
	if (syscall(SYS_finit_module, fd, params, 0))
		err = errno;
	close(fd);
	return err;
}
