// SPDX-License-Identifier: GPL-2.0
/*
 * cycsample - ring memory, the reader's mapping and the producer side.
 *
 * One vmalloc_user() area holds everything the reader maps:
 *
 *	[control pages][ring 0 header][ring 0 data ...][ring 1 header] ...
 *
 * The producer (the overflow handler on the ring's CPU) keeps its head in
 * kernel memory and only publishes it; the reader owns data_tail, which the
 * producer reads with acquire semantics and never trusts.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/overflow.h>
#include <linux/cpumask.h>
#include <linux/log2.h>

#include "cycsample.h"
#include "compat.h"

static size_t cycs_ctl_bytes(unsigned int nr_rings)
{
	return sizeof(struct cycsample_control) +
	       (size_t)nr_rings * sizeof(struct cycsample_ring_desc);
}

/* Fill the control page and the ring headers the reader sees. */
static void cycs_rings_layout(struct cycs_rings *rings)
{
	struct cycsample_control *ctl = rings->base;
	unsigned long per_ring = (1 + rings->ring_pages) << PAGE_SHIFT;
	unsigned long off = rings->ctl_pages << PAGE_SHIFT;
	unsigned int i = 0;
	int cpu;

	ctl->magic = CYCSAMPLE_MAGIC;
	ctl->abi_version = CYCSAMPLE_ABI_VERSION;
	ctl->page_size = PAGE_SIZE;
	ctl->nr_rings = rings->nr_rings;
	ctl->control_size = rings->ctl_pages << PAGE_SHIFT;

	for_each_possible_cpu(cpu) {
		struct cycs_ring *r = &rings->ring[i];

		r->hdr = rings->base + off;
		r->data = rings->base + off + PAGE_SIZE;
		r->cpu = cpu;
		r->hdr->data_size = rings->data_size;
		r->hdr->cpu = cpu;
		rings->by_cpu[cpu] = r;

		ctl->rings[i].cpu = cpu;
		ctl->rings[i].header_offset = off;
		ctl->rings[i].data_offset = off + PAGE_SIZE;
		ctl->rings[i].data_size = rings->data_size;
		off += per_ring;
		i++;
	}
}

/**
 * cycs_rings_alloc - allocate and lay out the rings of a session
 * @ring_pages: data pages per ring, a validated power of two
 * @wakeup_bytes: watermark, already checked against the ring size; 0 = default
 * @old: the charge of the rings these will replace, or NULL (limits.c)
 * @sc: the sysctls that bound how much memory the caller may lock
 *
 * The memory is charged to the caller as perf_mmap() charges perf's
 * buffers (limits.c) and given back when the rings are freed.
 *
 * Return: the rings with one reference, or an ERR_PTR(): -ENOMEM, or
 * -EPERM when the caller may not lock that much memory.
 */
struct cycs_rings *cycs_rings_alloc(u32 ring_pages, u32 wakeup_bytes, const struct cycs_charge *old,
				    const struct cycs_sysctls *sc)
{
	unsigned int nr_rings = num_possible_cpus();
	unsigned long ctl_pages, pages;
	struct cycs_rings *rings;
	int err;

	ctl_pages = DIV_ROUND_UP(cycs_ctl_bytes(nr_rings), PAGE_SIZE);
	/* pages = ctl_pages + nr_rings * (1 + ring_pages), overflow-checked */
	if (check_mul_overflow((unsigned long)nr_rings, 1UL + ring_pages, &pages) ||
	    check_add_overflow(pages, ctl_pages, &pages))
		return ERR_PTR(-ENOMEM);
	/* Refuse what would take more than half of RAM before vmalloc tries. */
	if (pages > totalram_pages() / 2)
		return ERR_PTR(-ENOMEM);

	rings = kzalloc(struct_size(rings, ring, nr_rings), GFP_KERNEL);
	if (!rings)
		return ERR_PTR(-ENOMEM);
	err = cycs_charge_rings(&rings->charge, pages, old, sc);
	if (err)
		goto out_free_rings;
	err = -ENOMEM;
	rings->by_cpu = kcalloc(nr_cpu_ids, sizeof(*rings->by_cpu), GFP_KERNEL);
	if (!rings->by_cpu)
		goto out_uncharge;
	rings->size = pages << PAGE_SHIFT;
	rings->base = vmalloc_user(rings->size);
	if (!rings->base)
		goto out_free_by_cpu;

	kref_init(&rings->ref);
	atomic_set(&rings->maps, 0);
	rings->nr_rings = nr_rings;
	rings->ctl_pages = ctl_pages;
	rings->ring_pages = ring_pages;
	rings->data_size = (u64)ring_pages << PAGE_SHIFT;
	rings->wakeup_bytes = wakeup_bytes ?: rings->data_size / 4;
	cycs_rings_layout(rings);
	return rings;

out_free_by_cpu:
	kfree(rings->by_cpu);
out_uncharge:
	cycs_uncharge_rings(&rings->charge);
out_free_rings:
	kfree(rings);
	return ERR_PTR(err);
}

static void cycs_rings_free(struct kref *ref)
{
	struct cycs_rings *rings = container_of(ref, struct cycs_rings, ref);

	vfree(rings->base);
	kfree(rings->by_cpu);
	cycs_uncharge_rings(&rings->charge);
	kfree(rings);
}

void cycs_rings_put(struct cycs_rings *rings)
{
	if (rings)
		kref_put(&rings->ref, cycs_rings_free);
}

bool cycs_rings_mapped(struct cycs_rings *rings)
{
	return atomic_read(&rings->maps) > 0;
}

/* ---- the mapping ------------------------------------------------------- */

/* Page @idx of the mapping is a ring header, the only writable kind. */
static bool cycs_rings_is_header(struct cycs_rings *rings, unsigned long idx)
{
	if (idx < rings->ctl_pages)
		return false;
	return (idx - rings->ctl_pages) % (1 + rings->ring_pages) == 0;
}

/**
 * cycs_rings_get_map - a reference that counts as a mapping
 * @rings: the rings
 *
 * Taken for each VMA, and by mmap() before it maps anything: CONFIGURE
 * refuses to replace rings that have one (cycs_rings_mapped()).
 */
void cycs_rings_get_map(struct cycs_rings *rings)
{
	kref_get(&rings->ref);
	atomic_inc(&rings->maps);
}

/* Drop a reference of cycs_rings_get_map(); may free the rings. */
void cycs_rings_put_map(struct cycs_rings *rings)
{
	atomic_dec(&rings->maps);
	cycs_rings_put(rings);
}

static void cycs_vm_open(struct vm_area_struct *vma)
{
	cycs_rings_get_map(vma->vm_private_data);
}

static void cycs_vm_close(struct vm_area_struct *vma)
{
	cycs_rings_put_map(vma->vm_private_data);
}

/*
 * A write fault on a page mapped without write permission.  Header pages
 * may become writable (after mprotect() back to PROT_WRITE); any other page
 * is read-only for good.  Having this callback also makes the core keep
 * the whole VMA write-protected across mprotect(), so such writes always
 * come here instead of silently gaining write access.
 */
static vm_fault_t cycs_vm_pfn_mkwrite(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct cycs_rings *rings = vma->vm_private_data;
	unsigned long idx = (vmf->address - vma->vm_start) >> PAGE_SHIFT;

	return cycs_rings_is_header(rings, idx) ? 0 : VM_FAULT_SIGBUS;
}

/* The mapping is all or nothing: no partial munmap, no mprotect of part. */
static int cycs_vm_may_split(struct vm_area_struct *vma, unsigned long addr)
{
	return -EINVAL;
}

/* Moving it would gain nothing and complicate the page checks above. */
static int cycs_vm_mremap(CYCS_VM_MREMAP_PARAMS)
{
	return -EINVAL;
}

static const struct vm_operations_struct cycs_vm_ops = {
	.open = cycs_vm_open,
	.close = cycs_vm_close,
	.CYCS_VM_OP_MAY_SPLIT = cycs_vm_may_split,
	.mremap = cycs_vm_mremap,
	.pfn_mkwrite = cycs_vm_pfn_mkwrite,
};

/**
 * cycs_rings_mmap - map the whole ring area into @vma
 * @rings: the session's rings, with a reference of cycs_rings_get_map()
 *	   that the VMA keeps on success
 * @vma: the new mapping, checked here
 *
 * Each page is inserted on its own so that it gets its own protection: ring
 * headers as the mapping asked, everything else read-only.
 *
 * Not remap_vmalloc_range(), the usual way to map vmalloc_user() memory: it
 * maps every page with the VMA's one protection, so a PROT_WRITE mapping
 * would make data and control pages writable, and it inserts them as
 * ordinary pages (VM_MIXEDMAP).  A write-protected ordinary page in a shared
 * mapping faults into ->page_mkwrite(), whose core expects a page of a file
 * (page->mapping) and retries forever without one; vmalloc pages have
 * none.  A PFN mapping faults into ->pfn_mkwrite() instead, which can say
 * yes or SIGBUS per page.  perf maps its own ring buffers the same way, for
 * the same reasons (kernel/events/core.c, map_range() in 7.x).
 */
int cycs_rings_mmap(struct cycs_rings *rings, struct vm_area_struct *vma)
{
	pgprot_t ro = vm_get_page_prot(VM_READ | VM_SHARED);
	unsigned long off;
	int err;

	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	if (vma->vm_pgoff)
		return -EINVAL;
	if (vma->vm_end - vma->vm_start != rings->size)
		return -EINVAL;
	if (vma->vm_flags & VM_EXEC)
		return -EPERM;

	cycs_vm_flags_mod(vma, VM_DONTCOPY | VM_DONTEXPAND | VM_DONTDUMP, VM_MAYEXEC);

	for (off = 0; off < rings->size; off += PAGE_SIZE) {
		bool hdr = cycs_rings_is_header(rings, off >> PAGE_SHIFT);

		err = remap_pfn_range(vma, vma->vm_start + off, vmalloc_to_pfn(rings->base + off),
				      PAGE_SIZE, hdr ? vma->vm_page_prot : ro);
		if (err)
			return err; /* the core zaps what was mapped */
	}

	/* Only now: a failed mmap must not call our close(). */
	vma->vm_private_data = rings;
	vma->vm_ops = &cycs_vm_ops;
	return 0;
}

/* ---- producer ---------------------------------------------------------- */

/*
 * Bytes the reader has not consumed, or U64_MAX when data_tail is outside
 * [head - data_size, head]: a reader that writes nonsense gets a full ring.
 */
static u64 cycs_ring_used(struct cycs_rings *rings, struct cycs_ring *r)
{
	/*
	 * Pairs with the reader's store-release of data_tail: it has finished
	 * reading the bytes below tail before we may overwrite them.
	 */
	u64 tail = smp_load_acquire(&r->hdr->data_tail);
	u64 used = r->head - tail;

	return used > rings->data_size ? U64_MAX : used;
}

static void cycs_ring_copy(struct cycs_rings *rings, struct cycs_ring *r, const void *rec, u32 len)
{
	u64 off = r->head & (rings->data_size - 1);
	u64 first = min_t(u64, len, rings->data_size - off);

	memcpy(r->data + off, rec, first);
	if (first < len)
		memcpy(r->data, rec + first, len - first);
	/* poll() reads the private head from another CPU */
	WRITE_ONCE(r->head, r->head + len);
}

static void cycs_ring_publish(struct cycs_ring *r)
{
	WRITE_ONCE(r->hdr->lost, r->lost);
	WRITE_ONCE(r->hdr->samples, r->samples);
	/* Orders the record's bytes before the head that covers them. */
	smp_store_release(&r->hdr->data_head, r->head);
}

static void cycs_ring_write_lost(struct cycs_ring *r, struct cycs_rings *rings, u64 now)
{
	struct cycsample_lost lost = {
		.hdr.type = CYCSAMPLE_REC_LOST,
		.hdr.size = sizeof(lost),
		.time = now,
		.lost = r->lost_pending,
	};

	cycs_ring_copy(rings, r, &lost, sizeof(lost));
	r->lost_pending = 0;
}

/**
 * cycs_ring_lose - count a record that did not fit
 * @r: the ring; the caller is its only producer right now
 *
 * The LOST record that reports it goes in front of the next record that fits.
 */
void cycs_ring_lose(struct cycs_ring *r)
{
	r->lost_pending++;
	r->lost++;
	WRITE_ONCE(r->hdr->lost, r->lost);
}

/*
 * A wakeup when the unread bytes reach wakeup_bytes, and one more per
 * wakeup_bytes written while that much stays unread: a reader that drained
 * before the last wakeup and went back to sleep with less than wakeup_bytes
 * unread still hears of the ring filling up.  @used: unread bytes before
 * the @need bytes just written.
 */
static enum cycs_put_result cycs_ring_wake(struct cycs_rings *rings, struct cycs_ring *r, u64 used,
					   u64 need)
{
	if (used + need >= rings->wakeup_bytes &&
	    (used < rings->wakeup_bytes || r->head - r->wake_head >= rings->wakeup_bytes)) {
		r->wake_head = r->head;
		return CYCS_PUT_WAKE;
	}
	return CYCS_PUT_OK;
}

/**
 * cycs_ring_put - append one record to a CPU's ring
 * @rings: the session's rings
 * @r: the ring; the caller is its only producer right now
 * @rec: the record
 * @len: its size in bytes, a multiple of 8
 * @now: timestamp for a LOST record written first
 *
 * A LOST record for earlier drops goes in front when both fit; when they do
 * not, the record is dropped and counted, unread data is never overwritten.
 * Safe in NMI: no locks, bounded work.
 */
enum cycs_put_result cycs_ring_put(struct cycs_rings *rings, struct cycs_ring *r, const void *rec,
				   u32 len, u64 now)
{
	u64 need = len + (r->lost_pending ? sizeof(struct cycsample_lost) : 0);
	u64 used = cycs_ring_used(rings, r);
	u32 type;

	if (used == U64_MAX || rings->data_size - used < need) {
		cycs_ring_lose(r);
		return CYCS_PUT_LOST;
	}

	if (r->lost_pending)
		cycs_ring_write_lost(r, rings, now);
	cycs_ring_copy(rings, r, rec, len);
	type = ((const struct cycsample_record_header *)rec)->type;
	if (type == CYCSAMPLE_REC_SAMPLE || type == CYCSAMPLE_REC_SAMPLE_PC)
		r->samples++;
	cycs_ring_publish(r);
	return cycs_ring_wake(rings, r, used, need);
}

/**
 * cycs_ring_reserve - room for a sample written in place
 * @rings: the session's rings
 * @r: the ring; the caller is its only producer until cycs_ring_commit()
 * @min: the fewest bytes the sample can take
 * @max: the most
 * @full: set when not even @min bytes (and a pending LOST record) fit
 *
 * The sample then goes straight into the ring instead of a scratch buffer
 * and a copy.  Not when a LOST record has to go first, nor when the sample
 * could cross the end of the data area: then the caller builds it aside and
 * calls cycs_ring_put(), which copies it in two parts.  The reader may see
 * the bytes being written, but not as data before the head covers them.
 * The load-acquire of data_tail in cycs_ring_used() orders the writes into
 * the reserved bytes after the reader's last read of them (its
 * store-release of data_tail); cycs_ring_commit()'s store-release of
 * data_head orders them before the reader's load-acquire of the head.
 *
 * Return: where the sample goes, or NULL (with *@full set when the ring has
 * no room for any sample: the caller counts it with cycs_ring_lose() and
 * builds nothing).
 */
void *cycs_ring_reserve(struct cycs_rings *rings, struct cycs_ring *r, u32 min, u32 max, bool *full)
{
	u64 off = r->head & (rings->data_size - 1);
	u64 used = cycs_ring_used(rings, r);
	u64 room = used == U64_MAX ? 0 : rings->data_size - used;

	*full = room < min + (r->lost_pending ? sizeof(struct cycsample_lost) : 0);
	if (r->lost_pending || room < max || rings->data_size - off < max)
		return NULL;
	r->reserved_used = used;
	return r->data + off;
}

/**
 * cycs_ring_commit - publish the sample cycs_ring_reserve() gave room for
 * @rings: the session's rings
 * @r: the ring
 * @len: the sample's size, at most the reserved maximum
 */
enum cycs_put_result cycs_ring_commit(struct cycs_rings *rings, struct cycs_ring *r, u32 len)
{
	/* poll() reads the private head from another CPU */
	WRITE_ONCE(r->head, r->head + len);
	r->samples++;
	cycs_ring_publish(r);
	return cycs_ring_wake(rings, r, r->reserved_used, len);
}

/* Write a pending LOST record if it fits; for the end of a run. */
void cycs_ring_flush_lost(struct cycs_rings *rings, struct cycs_ring *r, u64 now)
{
	u64 used;

	if (!r->lost_pending)
		return;
	used = cycs_ring_used(rings, r);
	if (used == U64_MAX || rings->data_size - used < sizeof(struct cycsample_lost))
		return;
	cycs_ring_write_lost(r, rings, now);
	cycs_ring_publish(r);
}

/**
 * cycs_ring_mark_urgent - the record just written should not wait for the watermark
 * @r: the ring; the caller is its producer and queues the wakeup
 *
 * For an EXEC record: the reader reads the new program's mappings from
 * /proc when it sees one, which it can only do while the process lives.
 */
void cycs_ring_mark_urgent(struct cycs_ring *r)
{
	/* poll() reads it from another CPU, after the wakeup */
	WRITE_ONCE(r->urgent_head, r->head);
}

/* An urgent record of @r is still unread (a tail past it is nonsense, not unread). */
bool cycs_ring_urgent(struct cycs_ring *r)
{
	/* as in cycs_ring_used(): the reader's release of what it has read */
	u64 tail = smp_load_acquire(&r->hdr->data_tail);

	return (s64)(READ_ONCE(r->urgent_head) - tail) > 0;
}

/* Unread bytes of @r as the reader sees them (U64_MAX: bad tail). */
u64 cycs_ring_unread(struct cycs_rings *rings, struct cycs_ring *r)
{
	/* as in cycs_ring_used(); a stale head only delays a POLLIN */
	u64 tail = smp_load_acquire(&r->hdr->data_tail);
	u64 head = READ_ONCE(r->head);
	u64 used = head - tail;

	return used > rings->data_size ? U64_MAX : used;
}
