// SPDX-License-Identifier: GPL-2.0
/*
 * perfsample - sample the CPU cycles of a command with perf_event_open(2)
 * alone, no module: the userspace half of the path perf record takes,
 * small enough to read in one sitting and to run next to cycread on the
 * same workload.  Documentation/design.rst walks both paths through the
 * kernel; Documentation/exercises.rst builds exercises on the comparison.
 *
 * The sequence (cycread makes the same steps against /dev/cycsample):
 *
 *	fork CMD, held on a pipe until the counter exists
 *	fd = perf_event_open(&attr, child, -1, -1, PERF_FLAG_FD_CLOEXEC)
 *	base = mmap(fd, 1 + 2^n pages): the control page, then the data ring
 *	release CMD: it execs, and attr.enable_on_exec starts the counter
 *	poll(fd), drain the ring, again, until POLLHUP: CMD has exited
 *	report the functions by samples
 *
 * Draining is the consumer half of the ring protocol:
 *
 *	head = load-acquire(data_head)     every record below head is complete
 *	read the records from tail to head (a record may wrap the ring's end)
 *	store-release(data_tail, tail)     done reading: the kernel may reuse it
 *
 * A record holds exactly the fields attr.sample_type asked for, in the
 * kernel's fixed order (here IP, TID, TIME, CPU, PERIOD, then CALLCHAIN
 * with -g), nothing else.  A reader that decodes a field it did not ask for
 * reads the next field's bytes instead, so every record is checked to end
 * exactly where its fields do.
 *
 * One counter follows CMD's first thread, not the threads it creates: perf
 * refuses to mmap() an inherited per-task counter (perf_mmap(), "cpu == -1
 * && inherit"), so perf record opens one inherited counter per CPU instead.
 * cycsample's kernel counters need no mapping of their own, so they
 * inherit (module/counters.c).
 *
 * Usage: perfsample [-F HZ | -c PERIOD] [-e cycles|clock] [-g] [-m PAGES]
 *                   [--raw | --folded] [--] CMD [ARGS]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "perfsample.h"

#define EXIT_RUNTIME 1
#define EXIT_USAGE 2

/* Every field of a sample, in the order the kernel writes them. */
#define PS_SAMPLE_TYPE \
	(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD)

struct ps_opts {
	unsigned long freq; /* Hz, or 0 with a period */
	unsigned long period; /* cycles (ns for the clock) */
	int clock; /* -e clock: the software clock */
	int callchain; /* -g */
	int raw; /* --raw */
	int folded; /* --folded */
	unsigned int pages; /* data pages, a power of two */
};

struct ps_sample {
	uint64_t ip;
	uint64_t time;
	uint64_t period;
	uint32_t pid;
	uint32_t tid;
	uint32_t cpu;
	uint16_t misc; /* PERF_RECORD_MISC_USER or _KERNEL */
	size_t first; /* frames[first .. first + nr): the callchain as recorded */
	size_t nr;
};

/* The mapping: one control page (struct perf_event_mmap_page), then data. */
struct ps_ring {
	void *base;
	size_t len;
	struct perf_event_mmap_page *meta;
	unsigned char *data;
	uint64_t size; /* a power of two */
	uint64_t tail; /* our read position; only we write data_tail */
};

struct ps_state {
	const struct ps_opts *opts;
	const char *event; /* the event in use, for the report */
	const char *comm;
	struct ps_sample *samples;
	size_t nr_samples, cap_samples;
	uint64_t *frames;
	size_t nr_frames, cap_frames;
	uint64_t lost; /* from PERF_RECORD_LOST */
	uint64_t throttles; /* PERF_RECORD_THROTTLE records */
	uint64_t malformed; /* records whose size does not fit their fields */
	uint64_t bytes; /* of SAMPLE records */
	uint64_t wrapped; /* records that crossed the end of the ring */
	unsigned char rec[65536]; /* a record that wraps, copied out (size is u16) */
};

static void ps_usage(FILE *f)
{
	fprintf(f,
		"Usage: perfsample [options] [--] CMD [ARGS]\n"
		"Sample CMD's CPU cycles with perf_event_open(2), without the cycsample module.\n"
		"  -F, --freq HZ        samples per second (default 999)\n"
		"  -c, --count PERIOD   one sample every PERIOD cycles instead\n"
		"  -e, --event EV       cycles (default; the software clock where the PMU\n"
		"                       cannot sample) or clock\n"
		"  -g, --call-graph     record callchains (PERF_SAMPLE_CALLCHAIN)\n"
		"  -m, --mmap-pages N   data pages of the ring, a power of two (default 64)\n"
		"      --raw            every sample with its fields\n"
		"      --folded         collapsed stacks, as cycread --folded\n"
		"  -h, --help           this text\n");
}

void *ps_grow(void *v, size_t *cap, size_t n, size_t size)
{
	void *nv;

	if (n < *cap)
		return v;
	*cap = *cap ? *cap * 2 : 1024;
	nv = realloc(v, *cap * size);
	if (!nv) {
		perror("perfsample: realloc");
		exit(EXIT_RUNTIME);
	}
	return nv;
}

/* ---- decoding records ------------------------------------------------ */

/* A bounded cursor over one record's body. */
struct ps_cursor {
	const unsigned char *p;
	const unsigned char *end;
};

static int ps_take(struct ps_cursor *c, void *dst, size_t len)
{
	if ((size_t)(c->end - c->p) < len)
		return -1;
	memcpy(dst, c->p, len);
	c->p += len;
	return 0;
}

/*
 * PERF_RECORD_SAMPLE with our sample_type: { u64 ip; u32 pid, tid; u64 time;
 * u32 cpu, res; u64 period; [u64 nr; u64 ips[nr];] }.  No ID field: we did
 * not ask for PERF_SAMPLE_ID, so there is none to skip.
 */
static int ps_sample(struct ps_state *st, const struct perf_event_header *h,
		     const unsigned char *rec)
{
	struct ps_cursor c = { rec + sizeof(*h), rec + h->size };
	struct ps_sample s = { .misc = h->misc & PERF_RECORD_MISC_CPUMODE_MASK };
	uint32_t res;
	uint64_t nr;

	if (ps_take(&c, &s.ip, 8) || ps_take(&c, &s.pid, 4) || ps_take(&c, &s.tid, 4) ||
	    ps_take(&c, &s.time, 8) || ps_take(&c, &s.cpu, 4) || ps_take(&c, &res, 4) ||
	    ps_take(&c, &s.period, 8))
		return -1;
	if (st->opts->callchain) {
		if (ps_take(&c, &nr, 8) || nr > (uint64_t)(c.end - c.p) / 8)
			return -1;
		st->frames = ps_grow(st->frames, &st->cap_frames, st->nr_frames + nr,
				     sizeof(*st->frames));
		s.first = st->nr_frames;
		s.nr = nr;
		if (ps_take(&c, st->frames + st->nr_frames, nr * 8))
			return -1;
		st->nr_frames += nr;
	}
	if (c.p != c.end)
		return -1; /* bytes we did not ask for: we misread sample_type */
	st->samples = ps_grow(st->samples, &st->cap_samples, st->nr_samples, sizeof(*st->samples));
	st->samples[st->nr_samples++] = s;
	st->bytes += h->size;
	return 0;
}

/* PERF_RECORD_MMAP: { u32 pid, tid; u64 addr, len, pgoff; char filename[]; } */
static int ps_mmap(const struct perf_event_header *h, const unsigned char *rec)
{
	struct ps_cursor c = { rec + sizeof(*h), rec + h->size };
	uint64_t addr, len, pgoff;
	uint32_t pid, tid;

	if (ps_take(&c, &pid, 4) || ps_take(&c, &tid, 4) || ps_take(&c, &addr, 8) ||
	    ps_take(&c, &len, 8) || ps_take(&c, &pgoff, 8) || !memchr(c.p, '\0', c.end - c.p))
		return -1;
	ps_add_map(addr, len, pgoff, (const char *)c.p);
	return 0;
}

static void ps_record(struct ps_state *st, const struct perf_event_header *h,
		      const unsigned char *rec)
{
	struct ps_cursor c = { rec + sizeof(*h), rec + h->size };
	uint64_t id, n;
	int err = 0;

	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		err = ps_sample(st, h, rec);
		break;
	case PERF_RECORD_MMAP:
		err = ps_mmap(h, rec);
		break;
	case PERF_RECORD_LOST:
		/* { u64 id, lost; }: records dropped because the ring was full */
		err = ps_take(&c, &id, 8) || ps_take(&c, &n, 8);
		if (!err)
			st->lost += n;
		break;
	case PERF_RECORD_THROTTLE:
		/* the kernel throttled the counter: too many interrupts per tick */
		st->throttles++;
		break;
	default:
		/* UNTHROTTLE, and anything a newer kernel adds */
		break;
	}
	if (err)
		st->malformed++;
}

/* ---- the ring ----------------------------------------------------------- */

static int ps_ring_map(struct ps_ring *r, int fd, unsigned int pages)
{
	long psz = sysconf(_SC_PAGESIZE);

	r->len = (1 + (size_t)pages) * psz;
	r->base = mmap(NULL, r->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (r->base == MAP_FAILED)
		return -1;
	r->meta = r->base;
	/* data_offset and data_size exist since Linux 4.1; before, data began at page 1 */
	r->data = (unsigned char *)r->base + (r->meta->data_offset ?: (uint64_t)psz);
	r->size = r->meta->data_size ?: (uint64_t)pages * psz;
	r->tail = r->meta->data_tail;
	return 0;
}

/* Read every complete record, then give their space back. */
static void ps_ring_drain(struct ps_state *st, struct ps_ring *r)
{
	/* Pairs with the kernel's release of data_head: the records are written. */
	uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);

	while (r->tail < head) {
		uint64_t off = r->tail & (r->size - 1);
		const unsigned char *rec = r->data + off;
		struct perf_event_header h;

		/* records are 8-byte aligned, so a header never wraps */
		memcpy(&h, rec, sizeof(h));
		if (h.size < sizeof(h) || h.size > head - r->tail) {
			/* cannot happen with a sane kernel; never loop on it */
			st->malformed++;
			r->tail = head;
			break;
		}
		if (off + h.size > r->size) {
			uint64_t first = r->size - off;

			memcpy(st->rec, rec, first);
			memcpy(st->rec + first, r->data, h.size - first);
			rec = st->rec;
			st->wrapped++;
		}
		ps_record(st, &h, rec);
		r->tail += h.size;
	}
	/*
	 * Pairs with the kernel's acquire of data_tail (perf_output_begin()):
	 * our reads of the records above are done before it may overwrite them.
	 */
	__atomic_store_n(&r->meta->data_tail, r->tail, __ATOMIC_RELEASE);
}

/* ---- the counter ---------------------------------------------------------- */

static void ps_fill_attr(const struct ps_opts *o, struct perf_event_attr *a, int clock,
			 uint64_t ring_bytes)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	if (clock) {
		a->type = PERF_TYPE_SOFTWARE;
		a->config = PERF_COUNT_SW_TASK_CLOCK;
	} else {
		a->type = PERF_TYPE_HARDWARE;
		a->config = PERF_COUNT_HW_CPU_CYCLES;
	}
	if (o->freq) {
		a->freq = 1;
		a->sample_freq = o->freq;
	} else {
		/* the clock counts ns: a cycle period at 1 GHz, as cycsample's fallback */
		a->sample_period = o->period;
	}
	a->sample_type = PS_SAMPLE_TYPE | (o->callchain ? PERF_SAMPLE_CALLCHAIN : 0);
	a->disabled = 1;
	a->enable_on_exec = 1; /* counting starts at CMD's exec, not in our fork */
	a->exclude_hv = 1;
	a->mmap = 1; /* PERF_RECORD_MMAP for every executable mapping */
	/* POLLIN once a quarter of the ring is unread, as cycsample's default */
	a->watermark = 1;
	a->wakeup_watermark = ring_bytes / 4;
}

static int ps_open(const struct ps_opts *o, pid_t pid, uint64_t ring_bytes, int clock)
{
	struct perf_event_attr attr;

	ps_fill_attr(o, &attr, clock, ring_bytes);
	return syscall(SYS_perf_event_open, &attr, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

/*
 * perf_event_open() refuses a frequency above this sysctl with EINVAL, and
 * the kernel lowers the sysctl itself when sample interrupts take too long
 * (perf_sample_event_took()): ask for no more, as perf record does.
 */
static void ps_cap_freq(struct ps_opts *o)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "r");
	unsigned long max;

	if (!f)
		return;
	if (fscanf(f, "%lu", &max) == 1 && max && o->freq > max) {
		fprintf(stderr,
			"perfsample: sampling at %lu Hz, not %lu Hz: "
			"kernel.perf_event_max_sample_rate is %lu\n",
			max, o->freq, max);
		o->freq = max;
	}
	fclose(f);
}

/* Cycles, or the software clock where the PMU cannot sample; says which. */
static int ps_open_counter(struct ps_state *st, pid_t pid, uint64_t ring_bytes)
{
	const struct ps_opts *o = st->opts;
	int fd, err;

	if (!o->clock) {
		fd = ps_open(o, pid, ring_bytes, 0);
		if (fd >= 0) {
			st->event = "cycles (PERF_TYPE_HARDWARE)";
			return fd;
		}
		err = errno;
		if (err != ENOENT && err != EOPNOTSUPP)
			goto out_err;
		fprintf(stderr, "perfsample: cycles: %s; using the software clock\n",
			strerror(err));
	}
	fd = ps_open(o, pid, ring_bytes, 1);
	if (fd >= 0) {
		st->event = "task-clock (PERF_TYPE_SOFTWARE)";
		return fd;
	}
	err = errno;
out_err:
	fprintf(stderr, "perfsample: perf_event_open on pid %d: %s%s\n", pid, strerror(err),
		err == EACCES || err == EPERM ? " (see /proc/sys/kernel/perf_event_paranoid)"
		: err == EINVAL && o->freq ? " (above /proc/sys/kernel/perf_event_max_sample_rate?)"
					   : "");
	return -1;
}

/* ---- the report ------------------------------------------------------------- */

struct ps_row {
	const char *dso;
	const char *sym;
	unsigned long n;
};

static int ps_row_cmp(const void *a, const void *b)
{
	const struct ps_row *x = a, *y = b;

	if (x->n != y->n)
		return x->n < y->n ? 1 : -1;
	return strcmp(x->sym, y->sym);
}

/* A frame of a callchain is a context marker, not an address. */
static int ps_is_context(uint64_t v)
{
	return v >= (uint64_t)PERF_CONTEXT_MAX;
}

static void ps_report_top(const struct ps_state *st)
{
	struct ps_row *rows = NULL;
	size_t nrows = 0, cap = 0, i, j;

	for (i = 0; i < st->nr_samples; i++) {
		const struct ps_sample *s = &st->samples[i];
		struct ps_name nm;

		ps_resolve(s->ip, s->misc == PERF_RECORD_MISC_KERNEL, 0, &nm);
		/* the names are interned, so equal names are equal pointers */
		for (j = 0; j < nrows; j++)
			if (rows[j].dso == nm.dso && rows[j].sym == nm.sym)
				break;
		if (j == nrows) {
			rows = ps_grow(rows, &cap, nrows, sizeof(*rows));
			rows[nrows++] = (struct ps_row){ .dso = nm.dso, .sym = nm.sym };
		}
		rows[j].n++;
	}
	if (!rows)
		return;
	qsort(rows, nrows, sizeof(*rows), ps_row_cmp);
	printf("#\n#     Self  Samples  %-22s Symbol\n", "Shared object");
	for (i = 0; i < nrows && i < 25; i++)
		printf("   %6.2f%%  %7lu  %-22s %s%s\n", 100.0 * rows[i].n / st->nr_samples,
		       rows[i].n, rows[i].dso, rows[i].sym,
		       !strcmp(rows[i].dso, "[kernel.kallsyms]") ? " [k]" : "");
	free(rows);
}

/*
 * The frames of @s, innermost first, as (address, kernel, return address).
 * The first address after a context marker is where that context was
 * interrupted; the others are return addresses.
 */
static size_t ps_frames(const struct ps_state *st, const struct ps_sample *s, uint64_t *addr,
			unsigned char *kern, unsigned char *ret, size_t max)
{
	int kernel = s->misc == PERF_RECORD_MISC_KERNEL, first = 1;
	size_t i, n = 0;

	if (!s->nr) {
		addr[0] = s->ip;
		kern[0] = kernel;
		ret[0] = 0;
		return 1;
	}
	for (i = 0; i < s->nr && n < max; i++) {
		uint64_t v = st->frames[s->first + i];

		if (ps_is_context(v)) {
			kernel = v == (uint64_t)PERF_CONTEXT_KERNEL;
			first = 1;
			continue;
		}
		addr[n] = v;
		kern[n] = kernel;
		ret[n] = !first;
		first = 0;
		n++;
	}
	return n;
}

#define PS_MAX_FRAMES 256

static void ps_report_raw(const struct ps_state *st)
{
	uint64_t addr[PS_MAX_FRAMES];
	unsigned char kern[PS_MAX_FRAMES], ret[PS_MAX_FRAMES];
	size_t i, j, n;

	for (i = 0; i < st->nr_samples; i++) {
		const struct ps_sample *s = &st->samples[i];

		printf("%s %u/%u [%03u] %llu.%09llu: %llu %s: %s ip %#llx\n", st->comm, s->pid,
		       s->tid, s->cpu, (unsigned long long)(s->time / 1000000000),
		       (unsigned long long)(s->time % 1000000000), (unsigned long long)s->period,
		       st->event, s->misc == PERF_RECORD_MISC_KERNEL ? "kernel" : "user",
		       (unsigned long long)s->ip);
		n = ps_frames(st, s, addr, kern, ret, PS_MAX_FRAMES);
		for (j = 0; j < n; j++) {
			struct ps_name nm;

			ps_resolve(addr[j], kern[j], ret[j], &nm);
			if (nm.named)
				printf("\t%16llx %s+%#llx (%s)\n", (unsigned long long)addr[j],
				       nm.sym, (unsigned long long)nm.off, nm.dso);
			else
				printf("\t%16llx %s+%#llx\n", (unsigned long long)addr[j], nm.dso,
				       (unsigned long long)nm.off);
		}
		printf("\n");
	}
}

static int ps_str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* comm;outermost;...;innermost COUNT, sorted: the layout of cycread --folded */
static void ps_report_folded(const struct ps_state *st)
{
	uint64_t addr[PS_MAX_FRAMES];
	unsigned char kern[PS_MAX_FRAMES], ret[PS_MAX_FRAMES];
	char **lines = calloc(st->nr_samples + 1, sizeof(*lines));
	size_t i, j, n, len;

	if (!lines) {
		perror("perfsample: calloc");
		exit(EXIT_RUNTIME);
	}
	for (i = 0; i < st->nr_samples; i++) {
		FILE *f = open_memstream(&lines[i], &len);

		if (!f) {
			perror("perfsample: open_memstream");
			exit(EXIT_RUNTIME);
		}
		n = ps_frames(st, &st->samples[i], addr, kern, ret, PS_MAX_FRAMES);
		fputs(st->comm, f);
		while (n-- > 0) {
			struct ps_name nm;

			ps_resolve(addr[n], kern[n], ret[n], &nm);
			fprintf(f, ";%s%s", nm.sym, kern[n] ? "_[k]" : "");
		}
		fclose(f);
	}
	qsort(lines, st->nr_samples, sizeof(*lines), ps_str_cmp);
	for (i = 0; i < st->nr_samples; i = j) {
		for (j = i + 1; j < st->nr_samples && !strcmp(lines[i], lines[j]); j++)
			;
		printf("%s %zu\n", lines[i], j - i);
	}
	for (i = 0; i < st->nr_samples; i++)
		free(lines[i]);
	free(lines);
}

/* ---- the command and the loop ---------------------------------------------- */

/* Fork CMD, stopped on a pipe until @go is written; -1 on failure. */
static pid_t ps_spawn(char **argv, int *go)
{
	int p[2];
	pid_t pid;
	char c;

	if (pipe2(p, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (!pid) {
		close(p[1]);
		/* EOF instead of a byte: the parent failed, do not run */
		if (read(p[0], &c, 1) != 1)
			_exit(127);
		execvp(argv[0], argv);
		fprintf(stderr, "perfsample: %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(p[0]);
	*go = p[1];
	return pid;
}

/* Poll and drain until CMD has exited and its last records are read. */
static int ps_record_loop(struct ps_state *st, struct ps_ring *r, int fd, pid_t pid)
{
	int status = 0;

	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };

		if (poll(&pfd, 1, 100) < 0 && errno != EINTR) {
			perror("perfsample: poll");
			return -1;
		}
		ps_ring_drain(st, r);
		/* POLLHUP: the counter's task is gone; its records are all written */
		if (pfd.revents & (POLLHUP | POLLERR))
			break;
		if (waitpid(pid, &status, WNOHANG) == pid) {
			pid = 0;
			break;
		}
	}
	ps_ring_drain(st, r);
	if (pid && waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}

static int ps_parse(int argc, char **argv, struct ps_opts *o)
{
	static const struct option longopts[] = {
		{ "freq", required_argument, NULL, 'F' },
		{ "count", required_argument, NULL, 'c' },
		{ "event", required_argument, NULL, 'e' },
		{ "call-graph", no_argument, NULL, 'g' },
		{ "mmap-pages", required_argument, NULL, 'm' },
		{ "raw", no_argument, NULL, 'R' },
		{ "folded", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "+F:c:e:gm:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'F':
			o->freq = strtoul(optarg, &end, 10);
			o->period = 0;
			if (*end || !o->freq)
				return -1;
			break;
		case 'c':
			o->period = strtoul(optarg, &end, 10);
			o->freq = 0;
			if (*end || !o->period)
				return -1;
			break;
		case 'e':
			if (strcmp(optarg, "cycles") && strcmp(optarg, "clock"))
				return -1;
			o->clock = !strcmp(optarg, "clock");
			break;
		case 'g':
			o->callchain = 1;
			break;
		case 'm':
			o->pages = strtoul(optarg, &end, 10);
			if (*end || !o->pages || (o->pages & (o->pages - 1)))
				return -1;
			break;
		case 'R':
			o->raw = 1;
			break;
		case 'f':
			o->folded = 1;
			break;
		case 'h':
			ps_usage(stdout);
			exit(0);
		default:
			return -1;
		}
	}
	return optind < argc && !(o->raw && o->folded) ? optind : -1;
}

int main(int argc, char **argv)
{
	struct ps_opts o = { .freq = 999, .pages = 64 };
	static struct ps_state st;
	struct ps_ring r;
	int first, fd, go, status;
	long psz = sysconf(_SC_PAGESIZE);
	pid_t pid;

	first = ps_parse(argc, argv, &o);
	if (first < 0) {
		ps_usage(stderr);
		return EXIT_USAGE;
	}
	if (o.freq)
		ps_cap_freq(&o);
	st.opts = &o;
	st.comm = strrchr(argv[first], '/') ? strrchr(argv[first], '/') + 1 : argv[first];

	pid = ps_spawn(argv + first, &go);
	if (pid < 0) {
		perror("perfsample: fork");
		return EXIT_RUNTIME;
	}
	fd = ps_open_counter(&st, pid, (uint64_t)o.pages * psz);
	if (fd < 0)
		goto out_kill;
	if (ps_ring_map(&r, fd, o.pages)) {
		fprintf(stderr, "perfsample: mmap of %u pages: %s\n", o.pages, strerror(errno));
		goto out_close;
	}
	/* the counter exists and is mapped: let CMD exec */
	if (write(go, "x", 1) != 1) {
		perror("perfsample: release the command");
		goto out_unmap;
	}
	close(go);
	status = ps_record_loop(&st, &r, fd, pid);
	munmap(r.base, r.len);
	close(fd);
	if (status < 0)
		return EXIT_RUNTIME;

	if (o.raw) {
		ps_report_raw(&st);
	} else if (o.folded) {
		ps_report_folded(&st);
	} else {
		printf("# perfsample: pid %d (%s), %s, ", pid, argv[first], st.event);
		if (o.freq)
			printf("%lu Hz", o.freq);
		else
			printf("period %lu", o.period);
		printf("%s\n", o.callchain ? ", callchains" : "");
		printf("# samples: %zu (%llu bytes), lost: %llu, throttle records: %llu\n",
		       st.nr_samples, (unsigned long long)st.bytes, (unsigned long long)st.lost,
		       (unsigned long long)st.throttles);
		printf("# ring: %u pages, %llu records wrapped its end, %llu malformed\n", o.pages,
		       (unsigned long long)st.wrapped, (unsigned long long)st.malformed);
		if (WIFEXITED(status))
			printf("# command exited with status %d\n", WEXITSTATUS(status));
		else if (WIFSIGNALED(status))
			printf("# command killed by signal %d\n", WTERMSIG(status));
		if (st.nr_samples)
			ps_report_top(&st);
	}
	return st.malformed ? EXIT_RUNTIME : 0;

out_unmap:
	munmap(r.base, r.len);
out_close:
	close(fd);
out_kill:
	close(go); /* the child reads EOF and exits without running CMD */
	waitpid(pid, NULL, 0);
	return EXIT_RUNTIME;
}
