// SPDX-License-Identifier: GPL-2.0
/*
 * benchwork - CPU-bound workloads for the cycsample benchmarks.
 *
 *   benchwork deep DEPTH UNITS [KPCT]
 *	Recurse DEPTH frames (each a real frame record), then do UNITS units
 *	of work: KPCT percent of them (default 20) read 64 KiB from /dev/zero,
 *	which is time in the kernel (kernel callchains), the rest spin in the
 *	leaf deep_spin().  Samples then carry a DEPTH+2 deep user chain.
 *   benchwork mt THREADS UNITS|-SECS [pin] [share]
 *	THREADS threads (at most 4), each running its own mix of the leaf
 *	functions below; with a negative count each thread spins for SECS
 *	seconds instead of a fixed amount of work.  With "share" the
 *	THREADS * UNITS units are one pool that the threads draw from a
 *	round (10 units) at a time, so they all work until the pool is
 *	empty and end within a round of each other, however the CPUs'
 *	time was split between them; without it each thread does its own
 *	UNITS.  Under -icount the split is not repeatable, and a thread
 *	that ends early leaves its CPU idle: fewer samples and ticks for
 *	the same work (Documentation/performance.rst, "mt's work in one
 *	pool").  The shares below then hold per thread, not overall.
 *	With "pin", thread i is bound to CPU i (modulo the CPUs online), so
 *	that in a guest whose CPU 1 runs nohz_full one thread is always the
 *	task there (binding alone did not make the runs repeat:
 *	Documentation/performance.rst, "mt on a CPU without its tick").
 *	Expected self shares of the work when both threads of "mt 2" get a
 *	CPU each:
 *	  thread 0: mt_alpha 60 %, mt_beta 40 %
 *	  thread 1: mt_gamma 70 %, mt_delta 30 %
 *	  overall:  alpha 30, beta 20, gamma 35, delta 15 (half the time each)
 *   benchwork run CMD [ARGS...]
 *	Run CMD (the demo, which does not time itself) and wait for it.
 *   benchwork settle SAMPLES
 *	On every CPU in turn, take SAMPLES cycle-counter overflows of its own
 *	work with a plain perf event (fixed period, no ring: the samples are
 *	dropped), which brings the kernel's per-CPU average of PMU interrupt
 *	time to the same low level before every benchmark run (run.sh).
 *   benchwork tool CMD [ARGS...]
 *	Run CMD (a sampler that runs a workload), wait for it and print
 *	"tool_cpu_ns N": the CPU time of CMD and of every descendant it
 *	waited for, from start-up to exit.  Less the workload's own cpu_ns,
 *	that is the sampler's own CPU time.
 *
 * The workload modes print "elapsed_ns N" (CLOCK_MONOTONIC, the work only)
 * and "cpu_ns N" (the CPU time of the process, and in "run" of the command,
 * over the same stretch) on stdout, so the sampler's start-up and
 * post-processing are not counted.  Under QEMU -icount both clocks count
 * the instructions the guest executed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define STEPS_PER_UNIT 10000UL

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static unsigned long long tv_ns(const struct timeval *tv)
{
	return tv->tv_sec * 1000000000ULL + tv->tv_usec * 1000ULL;
}

/* CPU time of this process, every thread, user and system */
static unsigned long long cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* xorshift steps the compiler can neither fold nor vectorise */
static inline unsigned long spin(unsigned long x, unsigned long steps)
{
	unsigned long i;

	for (i = 0; i < steps; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

/* ---- deep ---------------------------------------------------------------- */

static char zbuf[65536];
static int zfd = -1;

NOINLINE unsigned long deep_spin(unsigned long x)
{
	return spin(x, STEPS_PER_UNIT);
}

NOINLINE unsigned long deep_kernel(unsigned long x)
{
	if (read(zfd, zbuf, sizeof(zbuf)) < 0)
		x++;
	return x + (unsigned char)zbuf[x & 4095];
}

static unsigned long deep_work(unsigned long x, unsigned long units, unsigned int kpct)
{
	unsigned long i;

	for (i = 0; i < units; i++) {
		if (i % 100 < kpct)
			x = deep_kernel(x);
		else
			x = deep_spin(x);
	}
	return x;
}

/* Each level keeps a frame record: the asm uses the frame address. */
NOINLINE unsigned long deep_level(unsigned int depth, unsigned long x, unsigned long units,
				  unsigned int kpct)
{
	__asm__ volatile("" : : "r"(__builtin_frame_address(0)));
	if (depth > 1)
		x = deep_level(depth - 1, x, units, kpct);
	else
		x = deep_work(x, units, kpct);
	__asm__ volatile("" : "+r"(x));
	return x + 1;
}

static int run_deep(int argc, char **argv)
{
	unsigned int depth, kpct = 20;
	unsigned long units, x = 88172645463325252UL;
	unsigned long long t0, c0;

	if (argc < 4)
		return 2;
	depth = strtoul(argv[2], NULL, 0);
	units = strtoul(argv[3], NULL, 0);
	if (argc > 4)
		kpct = strtoul(argv[4], NULL, 0);
	if (!depth || kpct > 100)
		return 2;
	zfd = open("/dev/zero", O_RDONLY);
	if (zfd < 0) {
		perror("/dev/zero");
		return 1;
	}
	c0 = cpu_ns();
	t0 = now_ns();
	x = deep_level(depth, x, units, kpct);
	t0 = now_ns() - t0;
	printf("elapsed_ns %llu\ncpu_ns %llu\nresult %lu\n", t0, cpu_ns() - c0, x & 1);
	return 0;
}

/* ---- mt ------------------------------------------------------------------ */

NOINLINE unsigned long mt_alpha(unsigned long x, unsigned long n)
{
	return spin(x, n);
}

NOINLINE unsigned long mt_beta(unsigned long x, unsigned long n)
{
	return spin(x, n);
}

NOINLINE unsigned long mt_gamma(unsigned long x, unsigned long n)
{
	return spin(x, n);
}

NOINLINE unsigned long mt_delta(unsigned long x, unsigned long n)
{
	return spin(x, n);
}

struct mt_arg {
	int id;
	int cpu;			/* < 0: not bound */
	long units;			/* < 0: -seconds */
	long *pool;			/* rounds left to all threads, or NULL */
	unsigned long x;
};

/* Whether the thread is to do one more round (r done so far). */
static int mt_more(const struct mt_arg *a, long r, unsigned long long end)
{
	if (a->units < 0)
		return now_ns() < end;
	if (a->pool)
		return __atomic_fetch_sub(a->pool, 1, __ATOMIC_RELAXED) > 0;
	return r < a->units / 10;
}

/* One round is 10 units split by the thread's mix. */
static unsigned long mt_round(int id, unsigned long x)
{
	const unsigned long u = STEPS_PER_UNIT;

	switch (id % 2) {
	case 0:
		x = mt_alpha(x, 6 * u);
		x = mt_beta(x, 4 * u);
		break;
	default:
		x = mt_gamma(x, 7 * u);
		x = mt_delta(x, 3 * u);
		break;
	}
	return x;
}

static void *mt_thread(void *p)
{
	struct mt_arg *a = p;
	unsigned long long end = 0;
	cpu_set_t set;
	long r;

	if (a->cpu >= 0) {
		CPU_ZERO(&set);
		CPU_SET(a->cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			fprintf(stderr, "mt: thread %d on CPU %d: %s\n", a->id, a->cpu,
				strerror(errno));
	}
	if (a->units < 0)
		end = now_ns() + (unsigned long long)(-a->units) * 1000000000ULL;
	for (r = 0; mt_more(a, r, end); r++)
		a->x = mt_round(a->id, a->x);
	return NULL;
}

static int run_mt(int argc, char **argv)
{
	struct mt_arg args[4];
	pthread_t th[4];
	unsigned long long t0, c0;
	long ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	long units, pool;
	int n, i, err, pin = 0, share = 0;

	if (argc < 4 || argc > 6)
		return 2;
	n = atoi(argv[2]);
	units = atol(argv[3]);
	for (i = 4; i < argc; i++) {
		if (!strcmp(argv[i], "pin"))
			pin = 1;
		else if (!strcmp(argv[i], "share"))
			share = 1;
		else
			return 2;
	}
	if (n < 1 || n > 4 || ncpus < 1 || (share && units < 0))
		return 2;
	pool = n * (units / 10);
	c0 = cpu_ns();
	t0 = now_ns();
	for (i = 0; i < n; i++) {
		args[i].id = i;
		args[i].cpu = pin ? (int)(i % ncpus) : -1;
		args[i].units = units;
		args[i].pool = share ? &pool : NULL;
		args[i].x = 88172645463325252UL + i;
		err = pthread_create(&th[i], NULL, mt_thread, &args[i]);
		if (err) {
			fprintf(stderr, "pthread_create: %s\n", strerror(err));
			return 1;
		}
	}
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	t0 = now_ns() - t0;
	printf("elapsed_ns %llu\ncpu_ns %llu\n", t0, cpu_ns() - c0);
	return 0;
}

/* ---- settle -------------------------------------------------------------- */

/* 50 us at 1 GHz: the 20 kHz of the runs' highest rate under -icount */
#define SETTLE_PERIOD 50000ULL

/*
 * SAMPLES overflows on CPU cpu; 1 when the CPU cannot be used (offline).
 * spin()'s asm keeps the work: its result need not be used.
 */
static int settle_cpu(int cpu, unsigned long samples)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_HARDWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_HW_CPU_CYCLES,
		.sample_period = SETTLE_PERIOD,
		.sample_type = PERF_SAMPLE_IP,
		.exclude_hv = 1,
	};
	unsigned long x = 88172645463325252UL;
	uint64_t count = 0;
	cpu_set_t set;
	int fd;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		return 1;
	fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "benchwork: perf_event_open on CPU %d: %s\n", cpu,
			strerror(errno));
		return -1;
	}
	while (count < samples * SETTLE_PERIOD) {
		x = spin(x, STEPS_PER_UNIT);
		if (read(fd, &count, sizeof(count)) != sizeof(count)) {
			perror("benchwork: read of the settle counter");
			close(fd);
			return -1;
		}
	}
	close(fd);
	return 0;
}

static int run_settle(int argc, char **argv)
{
	long cpu, ncpus = sysconf(_SC_NPROCESSORS_CONF);
	unsigned long samples;

	if (argc < 3)
		return 2;
	samples = strtoul(argv[2], NULL, 0);
	for (cpu = 0; cpu < ncpus && cpu < CPU_SETSIZE; cpu++)
		if (settle_cpu(cpu, samples) < 0)
			return 1;
	return 0;
}

/* Fork and exec argv[0]; wait for it with its CPU time (*ru). */
static int spawn(char **argv, struct rusage *ru)
{
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return -1;
	}
	if (!pid) {
		execvp(argv[0], argv);
		perror(argv[0]);
		_exit(127);
	}
	if (wait4(pid, &status, 0, ru) < 0) {
		perror("wait4");
		return -1;
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

/* Time a child from fork to exit; a sampler following children sees it all. */
static int run_cmd(int argc, char **argv)
{
	unsigned long long t0;
	struct rusage ru;
	int ret;

	if (argc < 3)
		return 2;
	t0 = now_ns();
	ret = spawn(argv + 2, &ru);
	if (ret < 0)
		return 1;
	printf("elapsed_ns %llu\ncpu_ns %llu\n", now_ns() - t0,
	       tv_ns(&ru.ru_utime) + tv_ns(&ru.ru_stime));
	return ret;
}

/* The CPU time of a sampler and the workload it ran and reaped. */
static int run_tool(int argc, char **argv)
{
	struct rusage ru;
	int ret;

	if (argc < 3)
		return 2;
	ret = spawn(argv + 2, &ru);
	if (ret < 0)
		return 1;
	printf("tool_cpu_ns %llu\n", tv_ns(&ru.ru_utime) + tv_ns(&ru.ru_stime));
	return ret;
}

int main(int argc, char **argv)
{
	int ret = 2;

	if (argc > 1 && !strcmp(argv[1], "deep"))
		ret = run_deep(argc, argv);
	else if (argc > 1 && !strcmp(argv[1], "mt"))
		ret = run_mt(argc, argv);
	else if (argc > 1 && !strcmp(argv[1], "run"))
		ret = run_cmd(argc, argv);
	else if (argc > 1 && !strcmp(argv[1], "tool"))
		ret = run_tool(argc, argv);
	else if (argc > 1 && !strcmp(argv[1], "settle"))
		ret = run_settle(argc, argv);
	if (ret == 2)
		fprintf(stderr, "usage: benchwork deep DEPTH UNITS [KPCT] | mt THREADS UNITS|-SECS [pin] [share]"
			" | run CMD... | tool CMD... | settle SAMPLES\n");
	return ret;
}
