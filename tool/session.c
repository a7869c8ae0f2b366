// SPDX-License-Identifier: GPL-2.0
/*
 * The recording loop.
 *
 * With "-- CMD" the child is forked first and waits on a pipe; the session
 * is configured with its pid and CYCSAMPLE_CFG_ENABLE_ON_EXEC and started,
 * then the child is released and execs: the counters start at that exec, so
 * no sample shows cycread's own code in the child.  A second, close-on-exec
 * pipe tells us whether the exec failed.  Sampling ends with the EXIT
 * record and POLLHUP once the rings are drained: when the target and every
 * child it forked have exited.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "configure.h"
#include "device.h"
#include "recqueue.h"
#include "session.h"

/* how often to look again where nothing tells us (see poll_timeout()) */
#define POLL_MS 50
#define STATUS_INTERVAL_NS (500 * 1000 * 1000ULL)
/* after the target is gone, wait this long for the module's POLLHUP */
#define END_GRACE_NS (2000 * 1000 * 1000ULL)
/* after this long, a CMD that ignores SIGTERM is named (end_child()) */
#define END_WAIT_MS 5000

/* SIGINT and SIGTERM received: the first stops the recording (loop()), the next end CMD */
static volatile sig_atomic_t nr_stop_signals;

static void on_signal(int sig)
{
	(void)sig;
	nr_stop_signals++;
}

struct child {
	pid_t pid;
	int go_fd; /* write a byte: exec now */
	int err_fd; /* exec's errno, or EOF when exec worked */
	int status;
	bool reaped;
	bool killed; /* by us, at a second signal (end_child()) */
};

static int spawn(char **argv, struct child *c)
{
	int go[2], er[2], e;
	ssize_t n;
	char b;

	if (pipe2(go, O_CLOEXEC))
		return -errno;
	if (pipe2(er, O_CLOEXEC)) {
		e = -errno;
		close(go[0]);
		close(go[1]);
		return e;
	}
	c->pid = fork();
	if (c->pid < 0) {
		e = -errno;
		close(go[0]);
		close(go[1]);
		close(er[0]);
		close(er[1]);
		return e;
	}
	if (!c->pid) {
		close(go[1]);
		close(er[0]);
		do {
			n = read(go[0], &b, 1);
		} while (n < 0 && errno == EINTR);
		if (n != 1)
			_exit(127); /* cycread gave up before starting */
		execvp(argv[0], argv);
		e = errno;
		if (write(er[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(er[1]);
	c->go_fd = go[1];
	c->err_fd = er[0];
	return 0;
}

/*
 * Release the child; returns its exec errno, EPIPE when it died before
 * (killed while START ran: SIGPIPE must not end cycread silently), or 0
 * when it runs CMD.
 */
static int release(struct child *c)
{
	struct sigaction ign = { .sa_handler = SIG_IGN }, old;
	ssize_t n;
	int e = 0;

	sigaction(SIGPIPE, &ign, &old);
	if (write(c->go_fd, "g", 1) != 1)
		e = errno;
	sigaction(SIGPIPE, &old, NULL);
	close(c->go_fd);
	c->go_fd = -1;
	if (!e) {
		do {
			n = read(c->err_fd, &e, sizeof(e));
		} while (n < 0 && errno == EINTR);
		if (n != sizeof(e))
			e = 0; /* EOF: the exec worked */
	}
	close(c->err_fd);
	c->err_fd = -1;
	return e;
}

static void reap(struct child *c, bool wait)
{
	pid_t r;

	if (!c->pid || c->reaped)
		return;
	r = waitpid(c->pid, &c->status, wait ? 0 : WNOHANG);
	/* ECHILD: reaped by the kernel, its status unknown (-1) */
	if (r == c->pid || (r < 0 && errno == ECHILD))
		c->reaped = true;
}

/*
 * We stopped first (a signal, -d): end CMD with SIGTERM, and SIGCONT for a
 * stopped one, as perf record ends its workload, and wait.  One that ignores
 * it is named after END_WAIT_MS; a further SIGINT or SIGTERM kills it.  A
 * signal that came while the last records were decoded is no such answer.
 */
static void end_child(struct child *c, const char *cmd, const sigset_t *wait_mask)
{
	const struct timespec tick = { .tv_nsec = 50 * 1000000 }, now = { 0 };
	sig_atomic_t seen;
	int waited;

	ppoll(NULL, 0, &now, wait_mask);
	seen = nr_stop_signals;
	kill(c->pid, SIGTERM);
	kill(c->pid, SIGCONT);
	for (waited = 0; nr_stop_signals == seen; waited += 50) {
		reap(c, false);
		if (c->reaped)
			return;
		if (waited == END_WAIT_MS)
			pr_warn("%s (pid %d) still runs %d s after SIGTERM; interrupt again to "
				"kill it",
				cmd, c->pid, END_WAIT_MS / 1000);
		ppoll(NULL, 0, &tick, wait_mask);
	}
	reap(c, false);
	if (c->reaped)
		return;
	pr_warn("%s (pid %d) killed at a second signal", cmd, c->pid);
	kill(c->pid, SIGKILL);
	c->killed = true;
	reap(c, true);
}

/*
 * The session is over: wait for CMD, ending it (end_child()) if we stopped
 * first or a stop signal comes meanwhile.  A CMD that outlives its session
 * without our stopping it lost its counters: an exec of a setuid or
 * file-capability program ends them, as it ends perf's.
 */
static void wait_child(struct child *c, const char *cmd, bool end, const sigset_t *wait_mask)
{
	const struct timespec tick = { .tv_nsec = 50 * 1000000 };
	sig_atomic_t seen = nr_stop_signals;
	int waited = 0;

	for (reap(c, false); !c->reaped && !end; reap(c, false), waited += 50) {
		if (waited == 1000)
			pr_warn("%s (pid %d) runs on but its session ended (an exec of a setuid or "
				"file-capability program ends the counters); waiting for it to end",
				cmd, c->pid);
		ppoll(NULL, 0, &tick, wait_mask);
		end = nr_stop_signals != seen;
	}
	if (!c->reaped)
		end_child(c, cmd, wait_mask);
}

static void abandon(struct child *c)
{
	if (!c->pid)
		return;
	if (c->go_fd >= 0)
		close(c->go_fd); /* the child sees EOF and exits 127 */
	if (c->err_fd >= 0)
		close(c->err_fd);
	c->go_fd = -1;
	c->err_fd = -1;
	reap(c, true);
}

/* A system-wide session may map many files: allow as many as we may. */
static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static char *join_argv(char **argv)
{
	struct sbuf sb = { 0 };
	int i;

	for (i = 0; argv[i]; i++)
		sbuf_printf(&sb, "%s%s", i ? " " : "", argv[i]);
	return sb.buf;
}

static void read_comm(struct profile *p, u32 pid)
{
	char path[64], *buf;

	snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	if (read_file(path, &buf, NULL, 4096))
		return;
	buf[strcspn(buf, "\n")] = '\0';
	if (*buf)
		prof_set_comm(p, pid, buf);
	free(buf);
}

/* An older module, read from a container: say why nothing will be named. */
static void warn_foreign_pids(const struct cs_device *d)
{
	struct stat st;

	if (stat("/proc/self/ns/pid", &st) || !dev_pids_foreign(&d->info, st.st_ino))
		return;
	pr_warn("cycsample %.16s numbers processes in the initial PID namespace, and cycread "
		"runs in another: their code will not be named (a newer module numbers them "
		"in cycread's namespace)",
		d->info.module_version);
}

static void fill_meta(struct prof_meta *m, const struct record_opts *o)
{
	struct utsname u;
	char host[256];

	m->tool_version = xstrdup(CYCSAMPLE_VERSION);
	if (!uname(&u)) {
		m->kernel_release = xstrdup(u.release);
		m->machine = xstrdup(u.machine);
	}
	if (!gethostname(host, sizeof(host))) {
		host[sizeof(host) - 1] = '\0';
		m->hostname = xstrdup(host);
	}
	if (o->cmd)
		m->command = join_argv(o->cmd);
	m->start_time = time(NULL);
}

static void copy_info(struct prof_meta *m, const struct cycsample_info *in)
{
	u32 i;

	m->event = in->event;
	m->fallback_reason = in->fallback_reason;
	m->fallback_errno = in->fallback_errno;
	memcpy(m->pmu_name, in->pmu_name, sizeof(m->pmu_name));
	m->sample_period = in->sample_period;
	m->clock_period_ns = in->clock_period_ns;
	m->config_flags = in->config_flags;
	m->target_type = in->target_type;
	m->target = in->target;
	m->samples = in->samples;
	m->lost = in->lost;
	m->throttled = in->throttled;
	m->dropped_kernel = in->dropped_kernel;
	m->dropped_other = in->dropped_other;
	m->cost_count = in->cost_count;
	m->cost_total_ns = in->cost_total_ns;
	m->cost_max_ns = in->cost_max_ns;
	m->clock = in->clock;
	m->nr_pmus = MIN(in->nr_pmus, CYCSAMPLE_MAX_PMUS);
	for (i = 0; i < m->nr_pmus; i++) {
		const struct cycsample_pmu *from = &in->pmus[i];
		struct prof_pmu *to = &m->pmus[i];

		memcpy(to->name, from->name, sizeof(to->name));
		to->name[sizeof(to->name) - 1] = '\0';
		to->type = from->type;
		to->event = from->event;
		to->fallback_reason = from->fallback_reason;
		to->fallback_errno = from->fallback_errno;
		to->nr_cpus = from->nr_cpus;
		to->samples = from->samples;
		memcpy(to->cpus, from->cpus, sizeof(to->cpus));
	}
}

/*
 * We drain at the watermark, so a process's samples may be read only after
 * it exited, when /proc no longer has its maps.  The EXEC record that woke
 * us came before the loader mapped the program's libraries: read the maps
 * of a process that exec'd, or that is new to us, again a little later.
 */
static const u64 reread_after_ns[] = { 20000000ULL, 500000000ULL };

/*
 * A first re-read that finds the maps as they were: the loader has not
 * mapped the libraries yet (a 32-bit one under QEMU can take longer than
 * 20 ms).  Look again every REREAD_RETRY_NS, up to REREAD_RETRIES times:
 * a process that exits before the 500 ms read leaves a library mapped
 * after the last read unknown.
 */
#define REREAD_RETRY_NS 20000000ULL
#define REREAD_RETRIES 5

struct reread {
	u32 pid;
	u32 step; /* index in reread_after_ns of the next read */
	u32 retries; /* first re-reads that found nothing new */
	u64 since; /* when we first read its maps, plus the retries' delays */
};

struct drain_ctx {
	struct profile *p;
	struct maps *ms;
	struct resolver *r;
	bool exited;
	bool warned;
	bool mmap_recs; /* the module writes MMAP records (CYCSAMPLE_CFG_MMAP) */
	bool mmap_lossy; /* ... and a ring dropped records: they may be missing */
	u32 nr_mmap; /* MMAP records applied */
	struct recqueue held; /* samples decoded after the run (recqueue.h) */
	u32 held_pid; /* the process of the last sample held (UINT32_MAX: none) */
	u32 *fresh; /* processes whose first samples this drain held (fresh_settle()) */
	u32 nr_fresh, alloc_fresh;
	struct cycsample_fork *forks; /* FORK records of this drain (fresh_settle()) */
	u32 nr_forks, alloc_forks;
	u64 ring_lost; /* the rings' lost counts at the last drain (rings_lost()) */
	u8 *bounce; /* the device's: on_record() reads a copy of the ring */
	struct reread *reread;
	u32 nr_reread, alloc_reread;
};

/* An EXEC of a process we already follow starts its schedule again. */
static void reread_add(struct drain_ctx *c, u32 pid)
{
	u32 i;

	for (i = 0; i < c->nr_reread && c->reread[i].pid != pid; i++)
		;
	if (i == c->nr_reread) {
		VEC_GROW(c->reread, c->nr_reread, c->alloc_reread);
		c->nr_reread++;
	}
	c->reread[i] = (struct reread){ .pid = pid, .since = now_ns() };
}

/* Read the maps that are due again; the time of the next one (UINT64_MAX: none). */
static u64 reread_due(struct drain_ctx *c)
{
	u64 now = now_ns(), next = UINT64_MAX;
	struct proc_maps *pm;
	u32 i = 0;

	while (i < c->nr_reread) {
		struct reread *e = &c->reread[i];

		if (now - e->since >= reread_after_ns[e->step]) {
			u32 same = c->ms->nr_maps_same;

			pm = maps_proc(c->ms, e->pid, false);
			/*
			 * Not again if a lookup of this drain has just read
			 * them, nor, before the last one, for a process with
			 * no sample since the last read (a parent that
			 * waits): should it run into a library mapped since,
			 * the lookup of that sample reads the maps again.
			 * The last one is always made: a process that maps a
			 * library unsampled, then runs it and exits before
			 * the next drain, is gone when its samples are read.
			 */
			if (pm && !pm->read_failed &&
			    (pm->sampled || e->step == ARRAY_SIZE(reread_after_ns) - 1) &&
			    pm->last_refresh < e->since + reread_after_ns[e->step])
				maps_read(c->ms, e->pid, pm->cur_gen, NULL);
			if (e->step == 0 && c->ms->nr_maps_same != same &&
			    e->retries < REREAD_RETRIES) {
				e->retries++;
				e->since += REREAD_RETRY_NS;
			} else {
				e->step++;
			}
		}
		if (e->step == ARRAY_SIZE(reread_after_ns)) {
			*e = c->reread[--c->nr_reread];
			continue;
		}
		next = MIN(next, e->since + reread_after_ns[e->step]);
		i++;
	}
	return next;
}

/*
 * Are the maps of processes the session samples known from MMAP records?
 * Then a process needs /proc/PID/maps read once, for what it had before
 * we knew it (the target at START, a child's maps inherited at fork), and
 * no re-read: its later mappings come as records.  After a drop they may
 * be incomplete, and the re-reads are made as without records.
 */
static bool maps_from_records(const struct drain_ctx *c)
{
	return c->mmap_recs && !c->mmap_lossy;
}

/* An MMAP record: the mapping it tells.  Malformed ones are skipped. */
static void on_mmap(struct drain_ctx *c, const void *rec, u32 size, u32 cpu)
{
	const struct cycsample_mmap *r = rec;
	struct map m;

	if (size < sizeof(*r) || r->path_len >= size - sizeof(*r) || !r->len ||
	    r->start + r->len < r->start) {
		if (!c->warned)
			pr_warn("ring of cpu %u: malformed MMAP record skipped", cpu);
		c->warned = true;
		return;
	}
	memset(&m, 0, sizeof(m));
	m.pid = r->pid;
	m.start = r->start;
	m.end = r->start + r->len;
	m.pgoff = r->pgoff;
	m.ino = r->ino;
	m.dev_major = r->dev_major;
	m.dev_minor = r->dev_minor;
	m.prot = (r->prot & CYCSAMPLE_PROT_READ ? MAP_R : 0) |
		 (r->prot & CYCSAMPLE_PROT_WRITE ? MAP_W : 0) |
		 (r->prot & CYCSAMPLE_PROT_EXEC ? MAP_X : 0);
	/* only the bytes before path_len: the record's padding is not trusted */
	m.path = (char *)r->path;
	maps_mapped(c->ms, &m, r->path_len, r->time);
	c->nr_mmap++;
}

static void first_sample(struct drain_ctx *c, u32 pid);

/*
 * A FORK record: kept until the end of the drain, when the records of its
 * parent, which may lie in another CPU's ring, are in.  Malformed ones are
 * skipped.
 */
static void on_fork(struct drain_ctx *c, const void *rec, u32 size, u32 cpu)
{
	if (size < sizeof(struct cycsample_fork)) {
		if (!c->warned)
			pr_warn("ring of cpu %u: malformed FORK record skipped", cpu);
		c->warned = true;
		return;
	}
	VEC_GROW(c->forks, c->nr_forks, c->alloc_forks);
	memcpy(&c->forks[c->nr_forks++], rec, sizeof(struct cycsample_fork));
}

static int fork_time_cmp(const void *a, const void *b, void *arg)
{
	const struct cycsample_fork *x = a, *y = b;

	(void)arg;
	return x->time < y->time ? -1 : x->time > y->time;
}

/*
 * The child's maps are its parent's: copied, nothing read from /proc.  A
 * parent whose own record this drain has not brought (written after its
 * ring was read) is read first; one gone leaves the child to its own
 * first sample's read.  After a lost record the copy is made all the
 * same, for a child that is gone when its first sample is drained, and
 * the child is read as well.
 */
static void fork_settle(struct drain_ctx *c, const struct cycsample_fork *f)
{
	const struct proc_maps *pp = maps_proc(c->ms, f->ppid, false);

	if (!pp || maps_need_read(pp))
		first_sample(c, f->ppid);
	if (maps_fork(c->ms, f->pid, f->ppid, f->time, maps_from_records(c)) >= 0)
		prof_set_record_comm(c->p, f->pid, f->comm, sizeof(f->comm));
}

/*
 * The first sample of a process: what must be read while it lives.  Not
 * for a process whose exec the records told (a child of CMD that exec'd):
 * its EXEC record gave the name, its MMAP records every mapping since, and
 * what it ran before the exec /proc no longer shows.
 */
static void first_sample(struct drain_ctx *c, u32 pid)
{
	struct proc_maps *pm;

	/* the idle task, or a process our PID namespace cannot see: not in /proc */
	if (!pid)
		return;
	pm = maps_proc(c->ms, pid, false);
	/* new to us (its MMAP records may have come first); told only while records are whole */
	if (pm && !maps_need_read(pm))
		return;
	read_comm(c->p, pid);
	if (!maps_from_records(c))
		reread_add(c, pid);
	res_observe_process(c->r, pid);
}

/*
 * A process new to us in the samples being held: its first_sample() waits
 * for the end of the drain, when every ring's records are in.  A child's
 * first sample after its exec may be drained before its EXEC record, which
 * lies in another CPU's ring: only then is it known whether /proc need be
 * read.
 */
static void fresh_add(struct drain_ctx *c, u32 pid)
{
	const struct proc_maps *pm = maps_proc(c->ms, pid, false);
	u32 i;

	if (pm && !maps_need_read(pm))
		return;
	for (i = 0; i < c->nr_fresh; i++)
		if (c->fresh[i] == pid)
			return;
	VEC_GROW(c->fresh, c->nr_fresh, c->alloc_fresh);
	c->fresh[c->nr_fresh++] = pid;
}

static void fresh_settle(struct drain_ctx *c)
{
	u32 i;

	/* parents first: a parent's own FORK record is older than its child's */
	sort(c->forks, c->nr_forks, sizeof(*c->forks), fork_time_cmp, NULL);
	for (i = 0; i < c->nr_forks; i++)
		fork_settle(c, &c->forks[i]);
	c->nr_forks = 0;
	for (i = 0; i < c->nr_fresh; i++)
		first_sample(c, c->fresh[i]);
	c->nr_fresh = 0;
}

/*
 * Records were lost: no process counts as told by them from now on.  One
 * told until now is read at its next sample (first_sample(), res_observe());
 * reading every process told so far here would read the dead too, and a
 * pid reused since would give another program's maps.
 */
static void records_lost(struct drain_ctx *c)
{
	c->mmap_lossy = true;
	maps_records_lost(c->ms);
}

static int on_record(void *arg, const void *rec, u32 size, u32 cpu)
{
	struct drain_ctx *c = arg;
	const struct cycsample_task_event *t;
	struct rec_sample v;
	enum rec_status st;
	const char *why;
	u32 sz;

	/* the records that tell maps, not kept in the profile */
	if (size >= sizeof(struct cycsample_record_header)) {
		switch (((const struct cycsample_record_header *)rec)->type) {
		case CYCSAMPLE_REC_MMAP:
			on_mmap(c, rec, size, cpu);
			return 0;
		case CYCSAMPLE_REC_FORK:
			on_fork(c, rec, size, cpu);
			return 0;
		}
	}
	st = prof_add_record(c->p, rec, size, cpu, &sz, &why);
	if (st == REC_CORRUPT && !c->warned) {
		pr_warn("ring of cpu %u: corrupt record skipped: %s", cpu, why);
		c->warned = true;
	}
	if (st != REC_VALID)
		return 0;
	rec = prof_rec(c->p, &c->p->ev[c->p->nr_ev - 1]);
	switch (((const struct cycsample_record_header *)rec)->type) {
	case CYCSAMPLE_REC_SAMPLE:
		rec_sample_view(rec, &v);
		first_sample(c, v.s->pid);
		res_observe(c->r, &v);
		break;
	case CYCSAMPLE_REC_EXEC:
		t = rec;
		if (maps_from_records(c)) {
			maps_new_gen(c->ms, t->pid, t->time);
			break;
		}
		maps_exec(c->ms, t->pid, t->time);
		reread_add(c, t->pid);
		break;
	case CYCSAMPLE_REC_LOST:
		if (maps_from_records(c))
			pr_debug("records lost: maps re-read from /proc as without MMAP records");
		records_lost(c);
		break;
	case CYCSAMPLE_REC_EXIT:
		c->exited = true;
		break;
	}
	return 0;
}

/* Decode the samples held back, in the order they were drained. */
static void decode_held(struct drain_ctx *c)
{
	rq_replay(&c->held, on_record, c);
}

/*
 * After a drain, before fresh_settle(): a ring that dropped samples since
 * the last drain may have dropped MMAP records too, of a process whose EXEC
 * and first MMAP were just drained, and its LOST record comes only with the
 * ring's next record.  Take the count as that record: what is held is
 * decoded, and no process counts as told by records from now on.
 */
static void rings_lost(struct drain_ctx *c, const struct cs_device *d)
{
	u64 lost = dev_lost(d);

	if (lost == c->ring_lost)
		return;
	c->ring_lost = lost;
	if (!maps_from_records(c))
		return;
	pr_debug("rings dropped samples: maps re-read from /proc as without MMAP records");
	decode_held(c);
	records_lost(c);
}

/*
 * While the workload runs, with the maps told by MMAP records: a sample
 * is queued, runs of them in one copy (ring_drain_hold()), and decoded
 * after the run, except for what cannot wait, the first read of its
 * process's name and maps (first_sample()).  Everything
 * else is the same whenever it is decoded: the maps a sample is looked up
 * in are those of its generation and time, and a report looks them up only
 * after the run.  Other records are few (EXEC, EXIT, MMAP) and decoded at
 * once.  A LOST record ends the maps from records: what is held is decoded
 * first, and the session goes on as without them (on_record()).
 */
static bool held_wait(void *arg, const void *rec, u32 size)
{
	struct drain_ctx *c = arg;
	const char *why;
	u32 sz, pid;

	/* in the ring (RING_IN_PLACE): read only to route it, decoded from a copy */
	if (!maps_from_records(c) || !ring_sample_pid(rec, size, &pid))
		return false;
	/* a process's samples come in runs: look it up when the pid changes */
	if (pid != c->held_pid || pid == UINT32_MAX) {
		/* what is not a valid sample is decoded now: on_record() says why */
		if (rec_check(rec, size, &sz, &why) != REC_VALID)
			return false;
		fresh_add(c, pid);
		c->held_pid = pid;
	}
	return true;
}

static void held_keep(void *arg, const struct cs_ring *r, u64 from, u64 to, u32 nr)
{
	struct drain_ctx *c = arg;

	rq_push_ring(&c->held, r, from, to, nr);
	if (rq_full(&c->held))
		decode_held(c);
}

static int held_now(void *arg, const void *rec, u32 size, u32 cpu)
{
	struct drain_ctx *c = arg;

	if (rec != c->bounce) {
		memcpy(c->bounce, rec, size);
		rec = c->bounce;
	}
	if (((const struct cycsample_record_header *)rec)->type == CYCSAMPLE_REC_LOST)
		decode_held(c);
	return on_record(c, rec, size, cpu);
}

static const struct ring_hold held_ops = {
	.fn = held_now,
	.wait = held_wait,
	.keep = held_keep,
};

static void status_line(const struct cs_device *d, const struct drain_ctx *c, u64 start, bool final)
{
	const struct profile *p = c->p;
	u64 samples = p->nr_samples + c->held.nr_samples;
	double secs = (now_ns() - start) / 1e9;

	if (final) {
		fputs("\r\033[K", stderr);
		return;
	}
	if (d->info.nr_pmus > 1) {
		fprintf(stderr, "\r[%6.1f s] %llu samples, %.0f/s, lost %llu, %u PMUs\033[K", secs,
			(unsigned long long)samples, secs > 0 ? samples / secs : 0.0,
			(unsigned long long)p->lost_samples, d->info.nr_pmus);
		return;
	}
	fprintf(stderr, "\r[%6.1f s] %llu samples, %.0f/s, lost %llu, event %s%s%.32s%s\033[K",
		secs, (unsigned long long)samples, secs > 0 ? samples / secs : 0.0,
		(unsigned long long)p->lost_samples, meta_event_name(d->info.event),
		d->info.pmu_name[0] ? " (" : "", d->info.pmu_name, d->info.pmu_name[0] ? ")" : "");
}

static const char *target_word(u32 type)
{
	return type == CYCSAMPLE_TARGET_TID ? "tid" : "pid";
}

/* The process a thread is of (Tgid in /proc/TID/status), or 0. */
static s32 tgid_of(s32 tid)
{
	char path[64], *buf, *t;
	long v = 0;

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	if (read_file(path, &buf, NULL, 1 << 16))
		return 0;
	t = strstr(buf, "\nTgid:");
	if (t)
		v = strtol(t + 6, NULL, 10);
	free(buf);
	return v > 0 && v <= INT32_MAX ? v : 0;
}

static void config_error(const struct record_opts *o, s32 target, int err)
{
	const char *w = target_word(o->target_type);
	s32 tgid;

	switch (err) {
	case -ESRCH:
		/* the module looks a PID up as a process: a thread's id is none */
		tgid = o->target_type == CYCSAMPLE_TARGET_PID ? tgid_of(target) : 0;
		if (tgid && tgid != target)
			pr_err("pid %d: a thread of process %d: use -t %d or -p %d", target, tgid,
			       target, tgid);
		else
			pr_err("%s %d: no such process", w, target);
		break;
	case -EACCES:
		if (o->target_type == CYCSAMPLE_TARGET_CPUS)
			pr_err("all CPUs: permission denied (needs CAP_PERFMON or root)");
		else
			pr_err("%s %d: permission denied (not your process, one of its threads "
			       "is not yours, it holds capabilities you lack or lives in another "
			       "user namespace, or kernel.perf_event_paranoid is 3)",
			       w, target);
		break;
	case -EPERM:
		pr_err("refused: the rings exceed the memory you may lock (kernel.perf_event_mlock_kb, "
		       "then ulimit -l: try a smaller -m), or the kernel is locked down and refuses "
		       "kernel callchains and register dumps (try --user-only)");
		break;
	case -EINVAL:
		pr_err("the module refused the configuration (period or frequency out of range? "
		       "-F 1..%u, -c %llu..%llu, -m a power of two of %u pages to %u MiB)",
		       CYCSAMPLE_MAX_FREQ, CYCSAMPLE_MIN_PERIOD, CYCSAMPLE_MAX_PERIOD,
		       CYCSAMPLE_MIN_RING_PAGES, CYCSAMPLE_MAX_RING_BYTES >> 20);
		break;
	default:
		pr_err("%s: configure: %s", o->device, strerror(-err));
	}
}

static int configure_device(void *dev, const struct cycsample_config *cfg)
{
	return dev_configure(dev, cfg);
}

static int open_device(struct cs_device *d, const char *path)
{
	int ret = dev_open(d, path);

	if (!ret)
		return 0;
	if (ret == -ENOENT)
		pr_err("%s: %s (is the cycsample module loaded?)", path, strerror(-ret));
	else if (ret == -EACCES || ret == -EPERM)
		pr_err("%s: permission denied (needs CAP_PERFMON, or the module parameter "
		       "unprivileged=1, kernel.perf_event_paranoid at most 2 and access to "
		       "the device node)",
		       path);
	else if (ret == -EBUSY)
		pr_err("%s: too many sessions open (module parameter max_sessions)", path);
	else
		pr_err("%s: %s", path, strerror(-ret));
	return ret;
}

/*
 * perf_event_open() refuses a frequency above kernel.perf_event_max_sample_rate
 * and perf lowers its request to that limit.  The module's in-kernel counters
 * get no such check: asked for more, perf throttles every sample, the period
 * collapses and each sample fires just after the counter restarts (at the tick
 * or when the thread is switched back in), which piles the profile onto the
 * scheduler.  So do what perf does.  The kernel lowers the limit itself when
 * handlers run long ("perf: interrupt took too long").
 */
static u64 cap_freq(u64 freq)
{
	static const char path[] = "/proc/sys/kernel/perf_event_max_sample_rate";
	char *buf = NULL;
	size_t len;
	u64 max;

	if (read_file(path, &buf, &len, 64))
		return freq;
	buf[strcspn(buf, "\n")] = '\0';
	if (parse_u64(buf, 10, &max) && max && freq > max) {
		pr_warn("%s is %llu: sampling at %llu Hz, not %llu Hz", path,
			(unsigned long long)max, (unsigned long long)max, (unsigned long long)freq);
		freq = max;
	}
	free(buf);
	return freq;
}

/*
 * The ring per CPU without -m: perf record's default, what
 * kernel.perf_event_mlock_kb (512 KiB plus one page unless changed) lets
 * every user lock per CPU, less the header page, in a power of two of
 * pages: 512 KiB at the kernel's default for every page size.  Twice the
 * module's own default: half as many wakeups of the reader while the
 * workload runs, and more room before a ring is full.  0 (the module's
 * default) when the sysctl cannot be read or gives no more than that; at
 * most CYCSAMPLE_MAX_RING_BYTES.
 */
static u32 default_ring_pages(void)
{
	u64 page = sysconf(_SC_PAGESIZE), pages = 1;
	long long kb;
	char *buf;

	if (read_file("/proc/sys/kernel/perf_event_mlock_kb", &buf, NULL, 64))
		return 0;
	kb = strtoll(buf, NULL, 10);
	free(buf);
	if (kb <= (long long)(page / 1024))
		return 0;
	while (pages * 2 * page <= ((u64)kb - page / 1024) * 1024 &&
	       pages * 2 * page <= CYCSAMPLE_MAX_RING_BYTES)
		pages *= 2;
	return pages * page > CYCSAMPLE_DEFAULT_RING_BYTES ? pages : 0;
}

static void build_config(const struct record_opts *o, s32 target, struct cycsample_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->size = sizeof(*cfg);
	cfg->target_type = o->target_type;
	cfg->target = target;
	cfg->event = o->event;
	cfg->max_stack = o->max_stack;
	cfg->ring_pages = o->ring_pages ?: default_ring_pages();
	if (o->period) {
		cfg->sample_period = o->period;
	} else {
		cfg->sample_period = cap_freq(o->freq);
		cfg->flags |= CYCSAMPLE_CFG_FREQ;
	}
	if (o->user_only)
		cfg->flags |= CYCSAMPLE_CFG_USER_ONLY;
	if (o->callchain) {
		cfg->flags |= CYCSAMPLE_CFG_USER_CHAIN;
		if (!o->user_only)
			cfg->flags |= CYCSAMPLE_CFG_KERNEL_CHAIN;
	}
	if (o->regs_user)
		cfg->flags |= CYCSAMPLE_CFG_REGS_USER;
	/* without chains or registers, perf's 48 bytes a sample instead of 88 */
	if (!o->callchain && !o->regs_user)
		cfg->flags |= CYCSAMPLE_CFG_PC_ONLY;
	if (o->no_fallback)
		cfg->flags |= CYCSAMPLE_CFG_NO_FALLBACK;
	cfg->wakeup_bytes = config_wakeup_bytes(cfg->ring_pages);
	if (o->cmd)
		cfg->flags |= CYCSAMPLE_CFG_ENABLE_ON_EXEC;
	/* the maps of what runs come from the kernel, not from /proc re-reads */
	cfg->flags |= CYCSAMPLE_CFG_MMAP;
	/* ... and a child's from its parent's: nothing read while it runs */
	if (o->target_type != CYCSAMPLE_TARGET_CPUS)
		cfg->flags |= CYCSAMPLE_CFG_FORK;
}

/*
 * A module with the PMU list (INFO larger than its first size) keeps a
 * process session until the target and every child it forked are gone,
 * and says so with POLLHUP.
 */
static bool module_ends_sessions(const struct cs_device *d)
{
	return d->info.size > CYCSAMPLE_INFO_SIZE_VER0;
}

/* Is the target still there?  (Only a fallback: the module says POLLHUP.) */
static bool target_alive(const struct record_opts *o, const struct cs_device *d, s32 target,
			 struct child *c)
{
	if (o->target_type == CYCSAMPLE_TARGET_CPUS)
		return true;
	if (module_ends_sessions(d)) {
		reap(c, false); /* the status, for the report */
		return true;
	}
	if (c->pid) {
		reap(c, false);
		return !c->reaped;
	}
	return !kill(target, 0) || errno != ESRCH;
}

/*
 * How long poll() may sleep, in ms (-1: until the module wakes us), with
 * @until the time of the next maps to read again.  The module wakes us at
 * the watermark, at an EXEC record (whose program's maps we read from /proc
 * while it runs) and when the session ends; a signal ends the sleep
 * (ppoll()).  Only those maps, the status line, -d and what the module
 * does not tell set a timeout: a CPU target's processes come and go
 * without a record, and a module from before the PMU list never ends a
 * session, so there we look every POLL_MS as before.
 */
static int poll_timeout(const struct record_opts *o, const struct cs_device *d, bool tty, u64 start,
			u64 last_status, u64 until)
{
	u64 now = now_ns();

	if (o->target_type == CYCSAMPLE_TARGET_CPUS || !module_ends_sessions(d))
		return POLL_MS;
	if (tty)
		until = MIN(until, last_status + STATUS_INTERVAL_NS);
	if (o->duration > 0)
		until = MIN(until, start + (u64)(o->duration * 1e9));
	if (until == UINT64_MAX)
		return -1;
	if (until <= now)
		return 0;
	return MIN((until - now + 999999) / 1000000, (u64)INT_MAX);
}

/*
 * START fails with EAGAIN, attaching nothing, when the target's threads
 * clone and exit faster than its scans of the thread list can follow: a
 * relay of short-lived threads on a slow machine.  It may well succeed
 * the next time.
 */
static int start_retrying(struct cs_device *d)
{
	int ret, i;

	for (i = 0; i < 10; i++) {
		ret = dev_start(d);
		if (ret != -EAGAIN)
			break;
		pr_debug("start: EAGAIN (threads clone and exit faster than they are attached)");
	}
	return ret;
}

/* Record until the session ends (0), we stop it first (1: a signal, -d) or polling fails (-1). */
static int loop(const struct record_opts *o, struct cs_device *d, struct drain_ctx *dc, s32 target,
		struct child *c, const sigset_t *wait_mask)
{
	u64 start = now_ns(), last_status = 0, gone_since = 0, reread = UINT64_MAX;
	bool tty = isatty(STDERR_FILENO) && !o->quiet;
	int rev, stopped = 0;

	for (;;) {
		rev = dev_poll(d, poll_timeout(o, d, tty, start, last_status, reread), wait_mask);
		if (rev < 0 && rev != -EINTR) {
			pr_err("%s: poll: %s", o->device, strerror(-rev));
			return -1;
		}
		dev_drain_hold(d, &held_ops, dc);
		rings_lost(dc, d);
		fresh_settle(dc);
		reread = reread_due(dc);
		if (tty && now_ns() - last_status >= STATUS_INTERVAL_NS) {
			dev_info(d);
			status_line(d, dc, start, false);
			last_status = now_ns();
		}
		if (rev > 0 && (rev & (POLLHUP | POLLERR)))
			break;
		if (nr_stop_signals || (o->duration > 0 && now_ns() - start >= o->duration * 1e9)) {
			stopped = 1;
			break;
		}
		if (!target_alive(o, d, target, c)) {
			if (!gone_since)
				gone_since = now_ns();
			else if (now_ns() - gone_since > END_GRACE_NS)
				break;
		}
	}
	if (tty)
		status_line(d, dc, start, true);
	dc->p->meta.duration_ns = now_ns() - start;
	return stopped;
}

int session_record(const struct record_opts *o, struct profile *p, struct maps *ms,
		   struct resolver *r)
{
	struct child c = { .go_fd = -1, .err_fd = -1, .status = -1 };
	struct drain_ctx dc = { .p = p, .ms = ms, .r = r, .held_pid = UINT32_MAX };
	struct sigaction sa = { .sa_handler = on_signal };
	struct cs_config_ctx cctx = { .device = o->device,
				      .what = prog_name,
				      .ring_given = o->ring_pages };
	struct cycsample_config cfg;
	struct cs_device d = { .fd = -1 };
	const char *why = "";
	s32 target = o->target;
	sigset_t stop_set, old_mask, wait_mask;
	int ret, e, stopped;
	bool by_signal;

	sigemptyset(&stop_set);
	sigaddset(&stop_set, SIGINT);
	sigaddset(&stop_set, SIGTERM);
	sigprocmask(SIG_BLOCK, NULL, &old_mask);
	sa.sa_mask = stop_set; /* one handler at a time: nr_stop_signals++ is not atomic */
	/* the stop signals come in while we wait, even if we were started with them blocked */
	wait_mask = old_mask;
	sigdelset(&wait_mask, SIGINT);
	sigdelset(&wait_mask, SIGTERM);
	fill_meta(&p->meta, o);
	if (o->cmd) {
		ret = spawn(o->cmd, &c);
		if (ret) {
			pr_err("%s: cannot start: %s", o->cmd[0], strerror(-ret));
			return EXIT_RUNTIME;
		}
		target = c.pid;
	} else if (o->target_type != CYCSAMPLE_TARGET_CPUS && kill(target, 0) && errno == ESRCH) {
		pr_err("%s %d: no such process", target_word(o->target_type), target);
		return EXIT_RUNTIME;
	}
	/*
	 * After the fork: CMD runs with the limit it was given, and with
	 * SIGCHLD ignored if we were; we wait for it, so we must not be.
	 */
	raise_fd_limit();
	signal(SIGCHLD, SIG_DFL);
	if (open_device(&d, o->device))
		goto out_child;
	/* the files' ELF headers are read after the run (maps.h) */
	ms->defer_parse = ms->live;
	build_config(o, target, &cfg);
	ret = config_negotiate(configure_device, &d, &cfg, &cctx);
	if (ret) {
		config_error(o, target, ret);
		goto out_close;
	}
	ret = dev_map(&d, &why);
	if (ret) {
		pr_err("%s: mmap: %s", o->device, ret == -EPROTO ? why : strerror(-ret));
		goto out_close;
	}
	warn_foreign_pids(&d);
	if (d.nr_rings)
		/* wakeup_bytes 0: the module's quarter */
		pr_debug("%s: %u rings of %llu KiB, woken at %llu KiB", o->device, d.nr_rings,
			 (unsigned long long)d.rings[0].size >> 10,
			 (unsigned long long)(cfg.wakeup_bytes ?: d.rings[0].size / 4) >> 10);
	/* the samples' queue is mapped before they come (recqueue.h) */
	if (cfg.flags & CYCSAMPLE_CFG_MMAP)
		rq_prepare(&dc.held);
	if (o->target_type != CYCSAMPLE_TARGET_CPUS) {
		/* the pid of a thread reads its process's maps too */
		maps_read(ms, target, 0, NULL);
		read_comm(p, target);
	}
	/* blocked but inside ppoll(): a signal cannot slip in before the sleep */
	sigprocmask(SIG_BLOCK, &stop_set, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	ret = start_retrying(&d);
	if (ret) {
		if (ret == -EAGAIN)
			pr_err("%s %d: its threads clone and exit faster than START can attach "
			       "counters to them; try again",
			       target_word(o->target_type), target);
		else if (ret == -ESRCH || ret == -EACCES)
			config_error(o, target, ret); /* the target changed since CONFIGURE */
		else if (o->no_fallback && o->event == CYCSAMPLE_EVENT_CYCLES)
			pr_err("%s: start: the PMU cannot sample cycles (%s), and --no-fallback "
			       "forbids the software clock",
			       o->device, strerror(-ret));
		else
			pr_err("%s: start: %s", o->device, strerror(-ret));
		goto out_close;
	}
	if (o->cmd) {
		e = release(&c);
		if (e) {
			pr_err("%s: %s", o->cmd[0],
			       e == EPIPE
				       ? "ended before its exec (killed while the session started?)"
				       : strerror(e));
			dev_stop(&d);
			goto out_close;
		}
	}
	dc.mmap_recs = cfg.flags & CYCSAMPLE_CFG_MMAP;
	dc.bounce = d.bounce;
	dev_info(&d);
	stopped = loop(o, &d, &dc, target, &c, &wait_mask);
	if (stopped < 0)
		goto out_stop;
	by_signal = nr_stop_signals;
	ret = dev_stop(&d);
	if (ret && ret != -EINVAL)
		pr_warn("%s: stop: %s", o->device, strerror(-ret));
	/* the last records as the others: FORK records settled before the samples */
	dev_drain_hold(&d, &held_ops, &dc);
	rings_lost(&dc, &d); /* a LOST record a full ring could not take */
	fresh_settle(&dc);
	decode_held(&dc);
	pr_debug("while recording: %u reads of /proc/PID/maps (%u as they were), %u of [vdso], "
		 "%u files to parse (%u more mappings of them), %u MMAP records%s, %u processes "
		 "with their parent's maps (FORK records); %llu samples decoded after the run "
		 "(%u times)",
		 ms->nr_maps_reads, ms->nr_maps_same, ms->nr_vdso_reads, ms->nr_pending,
		 ms->nr_pending_shared, dc.nr_mmap, dc.mmap_lossy ? " (some lost)" : "",
		 ms->nr_forks, (unsigned long long)dc.held.nr_total, dc.held.nr_replays);
	maps_parse_pending(ms);
	if (!dev_info(&d))
		copy_info(&p->meta, &d.info);
	if (d.corrupt + dc.held.corrupt)
		pr_warn("%llu times a ring held impossible data; records were skipped",
			(unsigned long long)(d.corrupt + dc.held.corrupt));
	dev_close(&d);
	rq_free(&dc.held);
	free(dc.fresh);
	free(dc.forks);
	free(dc.reread);
	if (c.pid) {
		wait_child(&c, o->cmd[0], stopped, &wait_mask);
		p->meta.cmd_status = c.status;
		if (c.status < 0)
			pr_warn("%s: exit status unknown", o->cmd[0]);
		else if (WIFEXITED(c.status) && WEXITSTATUS(c.status))
			pr_warn("%s exited with status %d", o->cmd[0], WEXITSTATUS(c.status));
		else if (WIFSIGNALED(c.status) && WTERMSIG(c.status) != SIGINT &&
			 WTERMSIG(c.status) != SIGTERM && !c.killed)
			pr_warn("%s killed by signal %d", o->cmd[0], WTERMSIG(c.status));
	}
	sigprocmask(SIG_SETMASK, &old_mask, NULL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	if (by_signal && !o->quiet)
		fprintf(stderr, "%s: stopped by signal, reporting what was recorded\n", prog_name);
	return 0;

out_stop:
	dev_stop(&d);
out_close:
	sigprocmask(SIG_SETMASK, &old_mask, NULL);
	dev_close(&d);
	rq_free(&dc.held);
	free(dc.fresh);
	free(dc.forks);
	free(dc.reread);
out_child:
	maps_parse_pending(ms);
	if (c.pid) {
		kill(c.pid, SIGKILL);
		abandon(&c);
	}
	return EXIT_RUNTIME;
}
