// SPDX-License-Identifier: GPL-2.0
/*
 * The queue of records held back while the workload runs (recqueue.h).
 */
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "recqueue.h"

/*
 * 2 MiB, aligned to 2 MiB: where transparent huge pages are on (Debian's
 * "always", or "madvise") a chunk is one huge page, one fault and one
 * allocation; 4 KiB pages took a fault each, most of a chunk's cost
 * (Documentation/performance.rst, "The queue in huge pages").  The 130 to
 * 350 KB of a one-second run fit in the first chunk.
 */
#define RQ_CHUNK_BYTES (2UL << 20)

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

struct rq_chunk {
	struct rq_chunk *next;
	size_t size; /* of the mapping, this header included */
	size_t used; /* bytes of entries after the header */
	u8 data[] __attribute__((aligned(8)));
};

/* an entry: a run of whole records of one ring, @size bytes */
struct rq_entry {
	u32 cpu;
	u32 size;
};

/* @size bytes at an address aligned to RQ_CHUNK_BYTES: map more, trim the ends */
static void *map_aligned(size_t size)
{
	size_t head;
	u8 *m;

	m = mmap(NULL, size + RQ_CHUNK_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	if (m == MAP_FAILED)
		out_of_memory(size);
	head = -(uintptr_t)m & (RQ_CHUNK_BYTES - 1);
	if (head)
		munmap(m, head);
	munmap(m + head + size, RQ_CHUNK_BYTES - head);
	return m + head;
}

/*
 * Fill the pages now, not at the copies of a drain; a kernel before 5.14
 * has no MADV_POPULATE_WRITE: a write per page faults them in.
 */
static void populate(u8 *m, size_t size)
{
	size_t page = sysconf(_SC_PAGESIZE), off;

	if (!madvise(m, size, MADV_POPULATE_WRITE))
		return;
	for (off = 0; off < size; off += page)
		((volatile u8 *)m)[off] = 0;
}

static struct rq_chunk *chunk_map(size_t need)
{
	size_t size = MAX(RQ_CHUNK_BYTES, sizeof(struct rq_chunk) + need);
	struct rq_chunk *c;

	size = (size + RQ_CHUNK_BYTES - 1) & ~(RQ_CHUNK_BYTES - 1);
	c = map_aligned(size);
	/* without huge pages (none, "never", 32 MiB ones with 16 KiB pages): base pages */
	madvise(c, size, MADV_HUGEPAGE);
	populate((u8 *)c, size);
	c->next = NULL;
	c->size = size;
	c->used = 0;
	return c;
}

static size_t chunk_room(const struct rq_chunk *c)
{
	return c->size - sizeof(*c) - c->used;
}

void rq_prepare(struct recqueue *q)
{
	if (!q->first)
		q->first = q->last = chunk_map(0);
}

/* Room for an entry of @size bytes; returns where its records go. */
static u8 *entry_add(struct recqueue *q, u32 size, u32 cpu)
{
	struct rq_entry e = { .cpu = cpu, .size = size };
	size_t need = sizeof(e) + size;
	struct rq_chunk *c = q->last;
	u8 *dst;

	if (!c || chunk_room(c) < need) {
		struct rq_chunk *n = chunk_map(need);

		if (c)
			c->next = n;
		else
			q->first = n;
		q->last = c = n;
	}
	dst = c->data + c->used;
	memcpy(dst, &e, sizeof(e));
	c->used += need;
	q->len += need;
	return dst + sizeof(e);
}

void rq_push(struct recqueue *q, const void *rec, u32 size, u32 cpu)
{
	u32 pid;

	memcpy(entry_add(q, size, cpu), rec, size);
	q->nr++;
	q->nr_total++;
	if (ring_sample_pid(rec, size, &pid))
		q->nr_samples++;
}

void rq_push_ring(struct recqueue *q, const struct cs_ring *r, u64 from, u64 to, u32 nr)
{
	u32 size = to - from;

	ring_copy(r, from, entry_add(q, size, r->cpu), size);
	q->nr += nr;
	q->nr_total += nr;
	q->nr_samples += nr;
}

/* Unmap every chunk after @keep (all of them if @keep is NULL). */
static void unmap_after(struct recqueue *q, struct rq_chunk *keep)
{
	struct rq_chunk *c = keep ? keep->next : q->first, *next;

	for (; c; c = next) {
		next = c->next;
		munmap(c, c->size);
	}
	if (keep) {
		keep->next = NULL;
		keep->used = 0;
	}
	q->first = q->last = keep;
}

/*
 * The records of one entry, 8-aligned: entries and records are multiples
 * of 8.  A run's record sizes are read again from the copy: one that does
 * not fit now ends the entry, counted.
 */
static int replay_entry(struct recqueue *q, const u8 *data, const struct rq_entry *e,
			ring_record_fn fn, void *ctx)
{
	const struct cycsample_record_header *h;
	u32 off = 0;
	int ret = 0;

	while (e->size - off >= sizeof(*h) && ret >= 0) {
		h = (const void *)(data + off);
		if (h->size < sizeof(*h) || h->size % 8 || h->size > e->size - off)
			break;
		ret = fn(ctx, h, h->size, e->cpu);
		off += h->size;
	}
	if (ret >= 0 && off != e->size)
		q->corrupt++;
	return ret;
}

int rq_replay(struct recqueue *q, ring_record_fn fn, void *ctx)
{
	struct rq_chunk *c;
	int ret = 0;

	if (q->len)
		q->nr_replays++;
	for (c = q->first; c && ret >= 0; c = c->next) {
		size_t off = 0;

		while (off < c->used && ret >= 0) {
			struct rq_entry e;

			memcpy(&e, c->data + off, sizeof(e));
			off += sizeof(e);
			ret = replay_entry(q, c->data + off, &e, fn, ctx);
			off += e.size;
		}
	}
	unmap_after(q, q->first);
	q->len = 0;
	q->nr = 0;
	q->nr_samples = 0;
	return ret < 0 ? ret : 0;
}

void rq_free(struct recqueue *q)
{
	unmap_after(q, NULL);
	*q = (struct recqueue){ 0 };
}
