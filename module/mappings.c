// SPDX-License-Identifier: GPL-2.0
/*
 * cycsample - MMAP records: the executable mappings a target makes.
 *
 * A reader that learns a process's mappings from /proc/PID/maps must read
 * the file again after every exec and every dlopen(), and misses whatever a
 * short-lived process mapped and unmapped between two reads.  perf has its
 * kernel write a record for each new mapping: perf_event_mmap(), called by
 * mmap_region(), by mprotect_fixup() and by the installation of special
 * mappings such as the vdso, on every kernel from 5.10 to 7.3, in the
 * thread that maps, before it returns to user space.  No tracepoint marks
 * those points, and perf's own side-band records go only to the perf ring
 * buffer of a user-space event (event->rb), which an in-kernel counter has
 * not.  So, while a session with CYCSAMPLE_CFG_MMAP runs, a kprobe on
 * perf_event_mmap() writes a CYCSAMPLE_REC_MMAP record of each executable
 * mapping into the ring of the mapping thread's CPU, for every session
 * that samples that thread (forks.c's rule: it counts with one of the
 * session's counters; CPU sessions, privileged only, take every task).
 *
 * An exec maps the new program and its interpreter after begin_new_exec()
 * changed self_exec_id: the probe runs sampler.c's EXEC check first, so the
 * EXEC record precedes the new program's MMAP records, on the same ring.
 *
 * The probe runs in the mapping thread, mmap_lock held, with preemption
 * disabled (arm64: in the breakpoint exception, interrupts masked; x86:
 * through ftrace).  The path is built by d_path(), which does not sleep,
 * in a per-CPU buffer: perf_event_mmap() is never called from interrupt
 * context, so nothing else on the CPU can use it meanwhile.  The ring is
 * written as every producer writes it (interrupts off, the per-CPU guard
 * held), so an overflow handler that nests sees the guard and drops.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dcache.h>
#include <linux/fs.h>
#include <linux/kdev_t.h>
#include <linux/kprobes.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/percpu.h>
#include <linux/rculist.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/timekeeping.h>

#include "cycsample.h"
#include "compat.h"

/* A record under construction: the fixed part, then room for the path. */
struct cycs_maps_buf {
	struct cycsample_mmap rec;
	char path[CYCSAMPLE_MMAP_PATH_MAX];
};

/* Serializes arming and disarming: the list's writers and the registration. */
static DEFINE_MUTEX(cycs_maps_mutex);
/* The armed sessions (RCU: the probe reads it). */
static LIST_HEAD(cycs_maps_sessions);
static unsigned int cycs_maps_nr_armed;
static struct cycs_maps_buf __percpu *cycs_maps_bufs;
static struct kprobe cycs_maps_kp;

/*
 * Does the mapping thread belong to @s?  rcu_read_lock() held.  A process
 * session's threads and children carry its inherited counters; a thread
 * session counts one thread, but that thread sees every mapping of its
 * process, so the other threads' mappings count too when the session may
 * profile them.
 */
static bool cycs_maps_wanted(struct cycs_session *s)
{
	struct perf_event_context *ctx;
	struct perf_event *event;
	unsigned int n;

	/* pairs with START's release: exec_ids are cleared before */
	if (!smp_load_acquire(&s->active))
		return false;
	if (s->cfg.target_type == CYCSAMPLE_TARGET_CPUS)
		return true;
	for (n = 0; n < CYCS_NR_TASK_CONTEXTS; n++) {
		ctx = cycs_task_context(current, n);
		if (!ctx)
			continue;
		cycs_for_each_context_event(event, ctx) {
			if (READ_ONCE(event->overflow_handler) == cycs_overflow &&
			    event->overflow_handler_context == s)
				return true;
		}
	}
	/*
	 * The target's process by its signal struct: a tgid number could be
	 * another process's by now (target_task is held until after halt).
	 */
	return s->cfg.target_type == CYCSAMPLE_TARGET_TID &&
	       current->signal == s->target_task->signal && !cycs_may_profile(s, current);
}

static u32 cycs_maps_prot(unsigned long vm_flags)
{
	u32 prot = 0;

	if (vm_flags & VM_READ)
		prot |= CYCSAMPLE_PROT_READ;
	if (vm_flags & VM_WRITE)
		prot |= CYCSAMPLE_PROT_WRITE;
	if (vm_flags & VM_EXEC)
		prot |= CYCSAMPLE_PROT_EXEC;
	return prot;
}

/* The path of @vma's file, or its special name, into b->path; its length. */
static u32 cycs_maps_name(struct cycs_maps_buf *b, struct vm_area_struct *vma, u32 *flags)
{
	const char *name = NULL;
	char *p;
	ssize_t n;

	if (vma->vm_file) {
		p = d_path(cycs_file_user_path(vma->vm_file), b->path, sizeof(b->path));
		if (IS_ERR(p)) {
			*flags |= CYCSAMPLE_MMAP_PATH_LONG;
			return 0;
		}
		/* d_path() builds the name at the end of the buffer */
		n = b->path + sizeof(b->path) - 1 - p;
		memmove(b->path, p, n + 1);
		return n;
	}
	*flags |= CYCSAMPLE_MMAP_ANON;
	/* "[vdso]" and the other special mappings, as /proc/PID/maps names them */
	if (vma->vm_ops && vma->vm_ops->name)
		name = vma->vm_ops->name(vma);
	n = name ? strscpy(b->path, name, sizeof(b->path)) : 0;
	if (n == -E2BIG)
		*flags |= CYCSAMPLE_MMAP_PATH_LONG;
	return n > 0 ? n : 0;
}

/* Fill the record of @vma in @b, time and ids excepted; returns its size. */
static u32 cycs_maps_build(struct cycs_maps_buf *b, struct vm_area_struct *vma)
{
	struct cycsample_mmap *m = &b->rec;
	const struct inode *inode;
	u32 flags = 0, len, size;

	/* the path follows the fixed part, as in the record */
	BUILD_BUG_ON(offsetof(struct cycs_maps_buf, path) != sizeof(struct cycsample_mmap));
	BUILD_BUG_ON(offsetof(struct cycsample_mmap, path) != sizeof(struct cycsample_mmap));
	memset(m, 0, sizeof(*m));
	m->hdr.type = CYCSAMPLE_REC_MMAP;
	m->start = vma->vm_start;
	m->len = vma->vm_end - vma->vm_start;
	m->prot = cycs_maps_prot(vma->vm_flags);
	/* /proc/PID/maps's 's': shared as mmap() was asked, writable or not */
	if (vma->vm_flags & VM_MAYSHARE)
		flags |= CYCSAMPLE_MMAP_SHARED;
	if (vma->vm_file) {
		inode = cycs_file_user_inode(vma->vm_file);
		m->pgoff = (u64)vma->vm_pgoff << PAGE_SHIFT;
		m->ino = inode->i_ino;
		m->dev_major = MAJOR(inode->i_sb->s_dev);
		m->dev_minor = MINOR(inode->i_sb->s_dev);
		m->ino_generation = inode->i_generation;
	}
	len = cycs_maps_name(b, vma, &flags);
	m->flags = flags;
	m->path_len = len;
	size = ALIGN(sizeof(*m) + len + 1, 8);
	/* the NUL and the padding: no byte of an older record shows through */
	memset(b->path + len, 0, size - sizeof(*m) - len);
	m->hdr.size = size;
	return size;
}

/* Write @rec into the current CPU's ring of @s, after the EXEC record it may need. */
static void cycs_maps_emit(struct cycs_session *s, struct cycsample_mmap *rec)
{
	unsigned long irqflags;
	struct cycs_ring *r;
	bool urgent, wake = false;
	u64 now, lost;
	u32 ids[2];

	/*
	 * Each session's own numbers: they may be in different PID namespaces.
	 * A process the reader's cannot see (a CPUS session's) would be filed
	 * under pid 0 with every other such process: its mappings are left out.
	 */
	cycs_task_ids(s, current, ids);
	if (!ids[0])
		return;
	local_irq_save(irqflags);
	/* only a handler can hold it, and none runs under us: kept for the rule */
	if (this_cpu_inc_return(cycs_scratch->nest) != 1) {
		this_cpu_inc(s->stats->dropped_other);
		goto out_unnest;
	}
	r = s->rings->by_cpu[smp_processor_id()];
	now = ktime_get_mono_fast_ns();
	lost = r->lost;
	urgent = cycs_check_exec(s, r, now, &wake);
	/*
	 * An EXEC record that did not fit: the new program's mappings must not
	 * go in ahead of it, should the reader free room meanwhile.  Lost too.
	 */
	if (r->lost != lost) {
		cycs_ring_lose(r);
		this_cpu_inc(s->stats->lost);
		goto out_wake;
	}
	rec->pid = ids[0];
	rec->tid = ids[1];
	/* never before the EXEC record in time, whatever the reader's sort */
	rec->time = ktime_get_mono_fast_ns();
	/* urgent: a process new to the session, the reader wants its maps now */
	cycs_put_done(s, r, cycs_ring_put(s->rings, r, rec, rec->hdr.size, rec->time), urgent,
		      &wake);
out_wake:
	if (wake)
		irq_work_queue(&s->wake_work);
out_unnest:
	this_cpu_dec(cycs_scratch->nest);
	local_irq_restore(irqflags);
}

/* At the entry of perf_event_mmap(struct vm_area_struct *vma). */
static int cycs_maps_probe(struct kprobe *kp, struct pt_regs *regs)
{
	struct vm_area_struct *vma = (void *)regs_get_kernel_argument(regs, 0);
	struct cycs_maps_buf *b = NULL;
	struct cycs_session *s;

	/*
	 * Kernel threads, and a mapping of another mm: stack growth calls
	 * perf_event_mmap() too, and before 6.1 get_user_pages() could grow
	 * another process's stack (ptrace, /proc/PID/mem).  Stack growth
	 * holds mmap_lock for reading only, so start and len of such a
	 * record are as the probe saw them.
	 */
	if (!(vma->vm_flags & VM_EXEC) || (current->flags & CYCS_PF_NO_USER) ||
	    vma->vm_mm != current->mm)
		return 0;
	rcu_read_lock();
	list_for_each_entry_rcu(s, &cycs_maps_sessions, maps_node) {
		if (!cycs_maps_wanted(s))
			continue;
		/* built once, for the first session that wants it */
		if (!b) {
			b = this_cpu_ptr(cycs_maps_bufs);
			cycs_maps_build(b, vma);
		}
		cycs_maps_emit(s, &b->rec);
	}
	rcu_read_unlock();
	return 0;
}
NOKPROBE_SYMBOL(cycs_maps_probe);

/* cycs_maps_mutex held */
static int cycs_maps_register(void)
{
	int err;

	cycs_maps_bufs = alloc_percpu(struct cycs_maps_buf);
	if (!cycs_maps_bufs)
		return -ENOMEM;
	/* a kprobe is registered from zero: the last one left its address in */
	memset(&cycs_maps_kp, 0, sizeof(cycs_maps_kp));
	cycs_maps_kp.symbol_name = "perf_event_mmap";
	cycs_maps_kp.pre_handler = cycs_maps_probe;
	err = register_kprobe(&cycs_maps_kp);
	if (err) {
		pr_warn_ratelimited("perf_event_mmap: no kprobe (%d): MMAP records refused\n", err);
		free_percpu(cycs_maps_bufs);
		cycs_maps_bufs = NULL;
	}
	return err;
}

/**
 * cycs_maps_arm - write MMAP records for @s from now on
 * @s: a session configured with CYCSAMPLE_CFG_MMAP; s->lock held
 *
 * Registers the probe for the first armed session.  Records are written
 * once s->active is set (when every counter is in place), for the threads
 * that count with the session's counters by then.
 *
 * Return: 0, or the error of register_kprobe() (-EOPNOTSUPP without kprobes).
 */
int cycs_maps_arm(struct cycs_session *s)
{
	int err = 0;

	if (!IS_ENABLED(CONFIG_KPROBES) || IS_ENABLED(CONFIG_PREEMPT_RT))
		return -EOPNOTSUPP;
	mutex_lock(&cycs_maps_mutex);
	if (!cycs_maps_nr_armed)
		err = cycs_maps_register();
	if (!err) {
		cycs_maps_nr_armed++;
		list_add_rcu(&s->maps_node, &cycs_maps_sessions);
		s->maps_armed = true;
	}
	mutex_unlock(&cycs_maps_mutex);
	return err;
}

/**
 * cycs_maps_disarm - write no more MMAP records for @s
 * @s: the session; s->lock held; nothing if it was not armed
 *
 * When it returns no probe looks at @s, so its rings may go.
 */
void cycs_maps_disarm(struct cycs_session *s)
{
	bool last;

	if (!s->maps_armed)
		return;
	mutex_lock(&cycs_maps_mutex);
	list_del_rcu(&s->maps_node);
	last = !--cycs_maps_nr_armed;
	if (last) {
		/* waits for the probes in flight: then the buffers are free */
		unregister_kprobe(&cycs_maps_kp);
		free_percpu(cycs_maps_bufs);
		cycs_maps_bufs = NULL;
	}
	mutex_unlock(&cycs_maps_mutex);
	/* the probe reads sessions under rcu_read_lock() */
	synchronize_rcu();
	s->maps_armed = false;
}
