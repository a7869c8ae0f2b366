/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Records held back while the workload runs, to be decoded after it.
 *
 * Decoding a record (its checks, the copy into the profile, a look-up per
 * user frame) and all the rest of a drain took about 1.4 µs of guest time
 * per sample of a 16-deep chain on arm64 6.1 under QEMU -icount, 4 times
 * what a drain that only copies the records takes; a reader that shares a
 * CPU with the workload takes that time from it.  The session queues the
 * records here in the order it drained them, a run of consecutive samples
 * as one entry and one copy, and hands them to the same decoder later
 * (Documentation/performance.rst, "Records decoded after the run").
 *
 * The queue is a list of chunks of 2 MiB, filled before they are used
 * (MADV_POPULATE_WRITE): a growing heap buffer took a page fault per 4 KiB
 * (the drains of a 1 kHz run: 534 µs with 67 faults, 305 µs with chunks)
 * and a copy at each realloc.  Aligned to 2 MiB, a chunk is one
 * transparent huge page where the kernel has them: a new chunk of 4 KiB
 * pages cost 0.8 ms of guest time, one huge page far less (recqueue.c).
 */
#ifndef CYCREAD_RECQUEUE_H
#define CYCREAD_RECQUEUE_H

#include "device.h"

/* a queue this large is decoded at once, so memory stays bounded */
#define RQ_MAX_BYTES (64UL << 20)

struct rq_chunk;

struct recqueue {
	struct rq_chunk *first, *last;
	size_t len; /* bytes of entries queued */
	u64 nr; /* records queued now */
	u64 nr_samples; /* ... of which samples (SAMPLE or SAMPLE_PC records) */
	u64 nr_total; /* records ever queued */
	u32 nr_replays; /* times the queue was decoded */
	u64 corrupt; /* records dropped at replay: a size that no longer fit */
};

/* Map the first chunk now, before the workload runs (else the first push does). */
void rq_prepare(struct recqueue *q);

/*
 * Queue a copy of @rec (8-aligned, @size a multiple of 8 and the size its
 * header gives) from ring @cpu.
 */
void rq_push(struct recqueue *q, const void *rec, u32 size, u32 cpu);

/*
 * Queue bytes [@from, @to) of ring @r, @nr whole records that
 * ring_drain_hold() checked, as one entry; all of them count as samples
 * (the session holds nothing else).
 */
void rq_push_ring(struct recqueue *q, const struct cs_ring *r, u64 from, u64 to, u32 nr);

static inline bool rq_full(const struct recqueue *q)
{
	return q->len >= RQ_MAX_BYTES;
}

/*
 * Hand every queued record to @fn in the order queued, 8-aligned, as
 * ring_drain() would have, and empty the queue (its first chunk is kept for
 * what comes next).  The copy is checked again: where a record's size no
 * longer fits its entry (the ring changed under the drain), the rest of the
 * entry is dropped and counted in @q->corrupt.  Stops at @fn's first
 * negative return, which it returns; the records not yet handed on are
 * dropped with the rest.
 */
int rq_replay(struct recqueue *q, ring_record_fn fn, void *ctx);

void rq_free(struct recqueue *q);

#endif /* CYCREAD_RECQUEUE_H */
