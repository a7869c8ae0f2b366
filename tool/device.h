/* SPDX-License-Identifier: GPL-2.0 */
/*
 * /dev/cycsample: open, configure, map, start/stop, and drain
 * the per-CPU rings with the uapi's head/tail protocol.
 */
#ifndef CYCREAD_DEVICE_H
#define CYCREAD_DEVICE_H

#include <signal.h>

#include <linux/cycsample.h>

#include "util.h"

/* One ring: header and data may be the module's pages or a test's memory. */
struct cs_ring {
	struct cycsample_ring_header *hdr;
	const u8 *data;
	u64 size; /* power of two */
	u32 cpu;
	u64 corrupt; /* times the ring held impossible data */
};

/*
 * Called once per record, with the record copied out of the ring (so it is
 * contiguous and 8-aligned even when it wrapped), or with RING_IN_PLACE
 * where it lies when it does not wrap.  A negative return stops the drain.
 */
typedef int (*ring_record_fn)(void *ctx, const void *rec, u32 size, u32 cpu);

/*
 * ring_drain() flag: give the callback a record that does not wrap where it
 * lies in the ring, without the copy.  The module does not write there until
 * the drain publishes the tail, but the memory is the kernel's: a callback
 * that checks a record and then trusts what it checked must take the copy
 * (the default).  For a callback that only routes records (ring_drain_hold())
 * or copies them before it trusts them.
 */
#define RING_IN_PLACE 0x1U

/*
 * Read every record between data_tail and data_head, then publish the new
 * tail.  @bounce must hold @r->size bytes.  A record with an impossible size
 * makes the rest of the unread data unusable: it is skipped (counted in
 * r->corrupt) and the tail still moves to the head, so the module can go on.
 * Returns the number of records delivered, or the callback's error.
 */
long ring_drain(struct cs_ring *r, ring_record_fn fn, void *ctx, u8 *bounce, unsigned int flags);

/*
 * A drain that leaves most records for later (the session's samples while
 * the workload runs): @wait looks at each record where it lies (or at its
 * copy when it wraps) and says whether it may wait; consecutive records
 * that may are handed to @keep as one run, bytes [from, to) of the ring,
 * whole records, at most RING_RUN_MAX bytes, before the next record that
 * may not goes to @fn.  One copy per run instead of a copy and a queue
 * entry per record: the drains of a 4-second run at 1 kHz took 0.7 ms of
 * guest time from the workload record by record.  What @keep copies is
 * read from the ring again: whoever replays it checks the sizes again.
 *
 * @wait is not asked again about a SAMPLE record of the process whose
 * sample it accepted last, until a record goes to @fn or a run to @keep:
 * such a sample waits too.  @wait must answer so (it may look at a sample
 * more closely only when its pid changes): asking it of every record was
 * a quarter of a drain's time.
 */
#define RING_RUN_MAX (256U << 10)

struct ring_hold {
	ring_record_fn fn;
	bool (*wait)(void *ctx, const void *rec, u32 size);
	void (*keep)(void *ctx, const struct cs_ring *r, u64 from, u64 to, u32 nr);
};

/* ring_drain() with RING_IN_PLACE, the records @h->wait accepts kept in runs. */
long ring_drain_hold(struct cs_ring *r, const struct ring_hold *h, void *ctx, u8 *bounce);

/* Copy @len bytes from ring position @pos (wrapping) to @dst. */
void ring_copy(const struct cs_ring *r, u64 pos, void *dst, size_t len);

/* Bytes waiting in a ring. */
u64 ring_unread(const struct cs_ring *r);

/*
 * The process of a sample record of either kind (SAMPLE, or SAMPLE_PC,
 * whose pid lies at the same offset), in a record of @size bytes at
 * least as long as its kind; false for any other record.  8-aligned.
 */
static inline bool ring_sample_pid(const void *rec, u32 size, u32 *pid)
{
	const struct cycsample_sample *s = rec;

	if (size < sizeof(struct cycsample_record_header))
		return false;
	switch (s->hdr.type) {
	case CYCSAMPLE_REC_SAMPLE:
		if (size < sizeof(struct cycsample_sample))
			return false;
		break;
	case CYCSAMPLE_REC_SAMPLE_PC:
		if (size < sizeof(struct cycsample_sample_pc))
			return false;
		break;
	default:
		return false;
	}
	*pid = s->pid;
	return true;
}

struct cs_device {
	int fd;
	void *base;
	size_t map_size;
	struct cycsample_info info;
	struct cs_ring *rings;
	u32 nr_rings;
	u8 *bounce;
	u64 corrupt;
};

/*
 * Each returns 0 or -errno and leaves the errno's meaning to the caller,
 * which knows the target and can word the message.
 */
int dev_open(struct cs_device *d, const char *path);
int dev_configure(struct cs_device *d, const struct cycsample_config *cfg);
int dev_info(struct cs_device *d);
/* mmap and check the control page; @why explains a bad layout (-EPROTO). */
int dev_map(struct cs_device *d, const char **why);
int dev_start(struct cs_device *d);
int dev_stop(struct cs_device *d);
/*
 * ppoll() for POLLIN with the signal mask @mask (NULL: the current one) and
 * a timeout (-1: none); returns the revents or -errno (0 on timeout).
 */
int dev_poll(struct cs_device *d, int timeout_ms, const sigset_t *mask);
long dev_drain(struct cs_device *d, ring_record_fn fn, void *ctx, unsigned int flags);
long dev_drain_hold(struct cs_device *d, const struct ring_hold *h, void *ctx);
/*
 * Samples every ring has dropped so far (the headers' lost counts).  The
 * module counts a drop at once but writes its LOST record only before the
 * ring's next record, so this may be ahead of the LOST records drained.
 */
u64 dev_lost(const struct cs_device *d);
void dev_close(struct cs_device *d);

/*
 * Check a mapped control area and fill the ring table; used on the live
 * mapping and on synthetic ones in the tests.
 */
int dev_parse_control(void *base, size_t map_size, struct cs_ring **rings, u32 *nr,
		      const char **why);

/* The inode number of the initial PID namespace, fixed by the kernel (PROC_PID_INIT_INO). */
#define DEV_INIT_PID_NS_INO 0xEFFFFFFCU

/*
 * Does the module number processes where we cannot find them?  A module
 * without CYCSAMPLE_FEATURE_PIDNS writes the initial PID namespace's pids,
 * which name nothing (or other processes) in the /proc of a reader in
 * another one.  @ns_ino: the inode of our /proc/self/ns/pid, 0 if unknown.
 */
bool dev_pids_foreign(const struct cycsample_info *info, u64 ns_ino);

#endif /* CYCREAD_DEVICE_H */
