// SPDX-License-Identifier: GPL-2.0
/*
 * The session's file descriptor and its shared mapping.
 *
 * Ring protocol (uapi/linux/cycsample.h): the module publishes data_head
 * with a release store after writing a record; we load it with acquire,
 * read the records in [tail, head) (each header where it lies, a record
 * copied out unless the caller takes it in place, runs of held records
 * copied in one piece) and publish data_tail with a release store, which
 * lets the module reuse the space.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "device.h"

void ring_copy(const struct cs_ring *r, u64 pos, void *dst, size_t len)
{
	u64 off = pos & (r->size - 1);
	size_t first = MIN(len, r->size - off);

	memcpy(dst, r->data + off, first);
	if (first < len)
		memcpy((u8 *)dst + first, r->data, len - first);
}

u64 ring_unread(const struct cs_ring *r)
{
	u64 head = __atomic_load_n(&r->hdr->data_head, __ATOMIC_ACQUIRE);

	return head - r->hdr->data_tail;
}

/*
 * Does the record wait?  A sample of *@pid (the process of the sample
 * @h->wait accepted last) does without asking; UINT32_MAX: ask.
 */
static bool waits(const struct ring_hold *h, void *ctx, const u8 *rec, u32 size, u32 *pid)
{
	u32 spid;
	bool sample;

	if (!h->wait)
		return false;
	sample = ring_sample_pid(rec, size, &spid);
	if (sample && *pid != UINT32_MAX && spid == *pid)
		return true;
	if (!h->wait(ctx, rec, size))
		return false;
	*pid = sample ? spid : UINT32_MAX;
	return true;
}

/*
 * The one drain loop: every record to @h->fn, except those @h->wait
 * accepts, which go to @h->keep in runs (ring_drain_hold()).
 */
static long drain(struct cs_ring *r, const struct ring_hold *h, void *ctx, u8 *bounce,
		  unsigned int flags)
{
	u64 head = __atomic_load_n(&r->hdr->data_head, __ATOMIC_ACQUIRE);
	/* only we write data_tail, so a plain load sees our last store */
	u64 tail = r->hdr->data_tail, run = 0;
	struct cycsample_record_header hd;
	const u8 *rec;
	long n = 0;
	u32 run_nr = 0, run_pid = UINT32_MAX;
	int ret = 0;

	if (head - tail > r->size || tail % 8) {
		/* a head behind the tail, a ring fuller than full, a tail off the records */
		r->corrupt++;
		tail = head;
	}
	while (head != tail) {
		u64 avail = head - tail;

		if (avail < sizeof(hd)) {
			r->corrupt++;
			break;
		}
		rec = r->data + (tail & (r->size - 1));
		/* records are 8-aligned: a header never straddles the end */
		memcpy(&hd, rec, sizeof(hd));
		if (hd.size < sizeof(hd) || hd.size % 8 || hd.size > avail) {
			r->corrupt++;
			break;
		}
		if (!(flags & RING_IN_PLACE) || rec + hd.size > r->data + r->size) {
			ring_copy(r, tail, bounce, hd.size);
			rec = bounce;
		}
		n++;
		if (waits(h, ctx, rec, hd.size, &run_pid)) {
			if (run_nr && tail + hd.size - run > RING_RUN_MAX) {
				h->keep(ctx, r, run, tail, run_nr);
				run_nr = 0;
				run_pid = UINT32_MAX;
			}
			if (!run_nr++)
				run = tail;
			tail += hd.size;
			continue;
		}
		/* what waits came first: it is kept before this record is decoded */
		if (run_nr) {
			h->keep(ctx, r, run, tail, run_nr);
			run_nr = 0;
		}
		run_pid = UINT32_MAX;
		tail += hd.size;
		ret = h->fn(ctx, rec, hd.size, r->cpu);
		if (ret < 0)
			break;
	}
	if (run_nr)
		h->keep(ctx, r, run, tail, run_nr);
	if (ret >= 0)
		tail = head;
	__atomic_store_n(&r->hdr->data_tail, tail, __ATOMIC_RELEASE);
	return ret < 0 ? ret : n;
}

long ring_drain(struct cs_ring *r, ring_record_fn fn, void *ctx, u8 *bounce, unsigned int flags)
{
	const struct ring_hold h = { .fn = fn };

	return drain(r, &h, ctx, bounce, flags);
}

long ring_drain_hold(struct cs_ring *r, const struct ring_hold *h, void *ctx, u8 *bounce)
{
	return drain(r, h, ctx, bounce, RING_IN_PLACE);
}

static bool is_pow2(u64 x)
{
	return x && !(x & (x - 1));
}

int dev_parse_control(void *base, size_t map_size, struct cs_ring **ringsp, u32 *nrp,
		      const char **why)
{
	const struct cycsample_control *c = base;
	struct cs_ring *rings;
	u32 i;

	if (map_size < sizeof(*c)) {
		*why = "mapping smaller than the control page";
		return -EPROTO;
	}
	if (c->magic != CYCSAMPLE_MAGIC) {
		*why = "bad magic in the control page";
		return -EPROTO;
	}
	if (c->abi_version != CYCSAMPLE_ABI_VERSION) {
		*why = "the module speaks another ABI version";
		return -EPROTO;
	}
	if (!is_pow2(c->page_size) || !c->nr_rings || c->nr_rings > 65536 ||
	    c->control_size > map_size ||
	    c->control_size < sizeof(*c) + (u64)c->nr_rings * sizeof(c->rings[0])) {
		*why = "inconsistent control page";
		return -EPROTO;
	}
	rings = xcalloc(c->nr_rings, sizeof(*rings));
	for (i = 0; i < c->nr_rings; i++) {
		const struct cycsample_ring_desc *d = &c->rings[i];

		if (d->header_offset % 8 || d->header_offset > map_size ||
		    map_size - d->header_offset < sizeof(struct cycsample_ring_header) ||
		    d->data_offset > map_size || map_size - d->data_offset < d->data_size ||
		    !is_pow2(d->data_size) || d->data_size < 8) {
			free(rings);
			*why = "ring directory points outside the mapping";
			return -EPROTO;
		}
		rings[i].hdr = (struct cycsample_ring_header *)((u8 *)base + d->header_offset);
		rings[i].data = (const u8 *)base + d->data_offset;
		rings[i].size = d->data_size;
		rings[i].cpu = d->cpu;
	}
	*ringsp = rings;
	*nrp = c->nr_rings;
	return 0;
}

int dev_open(struct cs_device *d, const char *path)
{
	memset(d, 0, sizeof(*d));
	d->fd = open(path, O_RDWR | O_CLOEXEC);
	if (d->fd < 0)
		return -errno;
	return 0;
}

int dev_configure(struct cs_device *d, const struct cycsample_config *cfg)
{
	if (ioctl(d->fd, CYCSAMPLE_IOC_CONFIGURE, cfg) < 0)
		return -errno;
	return 0;
}

int dev_info(struct cs_device *d)
{
	memset(&d->info, 0, sizeof(d->info));
	d->info.size = sizeof(d->info);
	if (!ioctl(d->fd, CYCSAMPLE_IOC_INFO, &d->info))
		return 0;
	if (errno != ENOTTY)
		return -errno;
	/* a module from before the PMU list knows only the first size */
	memset(&d->info, 0, sizeof(d->info));
	d->info.size = CYCSAMPLE_INFO_SIZE_VER0;
	if (ioctl(d->fd, CYCSAMPLE_IOC_INFO_VER0, &d->info) < 0)
		return -errno;
	return 0;
}

int dev_map(struct cs_device *d, const char **why)
{
	u64 max = 0;
	void *base;
	u32 i;
	int ret;

	ret = dev_info(d);
	if (ret)
		return ret;
	base = mmap(NULL, d->info.mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED, d->fd, 0);
	if (base == MAP_FAILED)
		return -errno;
	ret = dev_parse_control(base, d->info.mmap_size, &d->rings, &d->nr_rings, why);
	if (ret) {
		munmap(base, d->info.mmap_size);
		return ret;
	}
	d->base = base;
	d->map_size = d->info.mmap_size;
	for (i = 0; i < d->nr_rings; i++)
		max = MAX(max, d->rings[i].size);
	d->bounce = xmalloc(max);
	return 0;
}

bool dev_pids_foreign(const struct cycsample_info *info, u64 ns_ino)
{
	return !(info->features & CYCSAMPLE_FEATURE_PIDNS) && ns_ino &&
	       ns_ino != DEV_INIT_PID_NS_INO;
}

int dev_start(struct cs_device *d)
{
	return ioctl(d->fd, CYCSAMPLE_IOC_START) < 0 ? -errno : 0;
}

int dev_stop(struct cs_device *d)
{
	return ioctl(d->fd, CYCSAMPLE_IOC_STOP) < 0 ? -errno : 0;
}

int dev_poll(struct cs_device *d, int timeout_ms, const sigset_t *mask)
{
	struct pollfd pfd = { .fd = d->fd, .events = POLLIN };
	struct timespec ts, *tsp = NULL;
	int ret;

	if (timeout_ms >= 0) {
		ts.tv_sec = timeout_ms / 1000;
		ts.tv_nsec = (timeout_ms % 1000) * 1000000L;
		tsp = &ts;
	}
	ret = ppoll(&pfd, 1, tsp, mask);

	if (ret < 0)
		return -errno;
	return ret ? pfd.revents : 0;
}

static long drain_all(struct cs_device *d, const struct ring_hold *h, void *ctx, unsigned int flags)
{
	long total = 0, n;
	u32 i;

	for (i = 0; i < d->nr_rings; i++) {
		u64 before = d->rings[i].corrupt;

		n = drain(&d->rings[i], h, ctx, d->bounce, flags);
		d->corrupt += d->rings[i].corrupt - before;
		if (n < 0)
			return n;
		total += n;
	}
	return total;
}

long dev_drain(struct cs_device *d, ring_record_fn fn, void *ctx, unsigned int flags)
{
	const struct ring_hold h = { .fn = fn };

	return drain_all(d, &h, ctx, flags);
}

long dev_drain_hold(struct cs_device *d, const struct ring_hold *h, void *ctx)
{
	return drain_all(d, h, ctx, RING_IN_PLACE);
}

u64 dev_lost(const struct cs_device *d)
{
	u64 lost = 0;
	u32 i;

	for (i = 0; i < d->nr_rings; i++)
		lost += __atomic_load_n(&d->rings[i].hdr->lost, __ATOMIC_RELAXED);
	return lost;
}

void dev_close(struct cs_device *d)
{
	if (d->base)
		munmap(d->base, d->map_size);
	if (d->fd >= 0)
		close(d->fd);
	free(d->rings);
	free(d->bounce);
	d->base = NULL;
	d->rings = NULL;
	d->bounce = NULL;
	d->fd = -1;
}
