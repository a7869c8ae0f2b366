// SPDX-License-Identifier: GPL-2.0
/*
 * perf_migrate_race - reproduce, without cycsample, the kernel perf bug
 * that stress.start_stop_races_with_a_migrating_target runs into.
 *
 * Each pair is a spinning child (the target) and a process that, in a
 * tight loop, opens an inherited cycles counter on it with
 * perf_event_open(), enables it and closes it: the target's perf context
 * goes from 0 to 1 event and back ~1000 times a second while the target
 * runs and migrates between CPUs.  On Debian's arm64 6.1 and 7.3 kernels
 * under QEMU this desynchronises the task context from the CPU context
 * within seconds to minutes: WARNING in ctx_sched_in() (cpuctx->task_ctx != ctx) or
 * in event_function() (!ctx->is_active), and later oopses.  This program
 * only creates the load; the kernel log says whether it hit.  Boot with
 * panic_on_warn=1 to stop at the first warning (scripts/perf-migrate-race
 * does that for each kernel of the bench).
 *
 *   perf_migrate_race [-s SECS] [-n PAIRS] [-b BUSY] [-p] [-c] [-w]
 *
 *   -s SECS   run time (default 60)
 *   -n PAIRS  target/opener pairs (default 1)
 *   -b BUSY   spinning processes besides the targets (default 1): with the
 *             openers they keep the CPUs contended, so the scheduler moves
 *             the targets around; without them it rarely hits
 *   -p        keep each target on the last CPU (no migration: no bug seen)
 *   -c        counting only, no sampling (hits too, more slowly)
 *   -w        software task-clock instead of hardware cycles
 *
 * Needs perf_event_paranoid <= 2 or CAP_PERFMON for a cycles counter on
 * one's own children; the guests run it as root.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_PAIRS 16

struct options {
	unsigned int secs, pairs, busy;
	bool pin, counting, software;
};

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static int last_cpu(void)
{
	cpu_set_t set;
	int cpu, last = 0;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 0;
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &set))
			last = cpu;
	return last;
}

static pid_t spawn_target(bool pin)
{
	pid_t pid = fork();

	if (pid == 0) {
		if (pin) {
			cpu_set_t one;

			CPU_ZERO(&one);
			CPU_SET(last_cpu(), &one);
			if (sched_setaffinity(0, sizeof(one), &one))
				perror("perf_migrate_race: sched_setaffinity");
		}
		for (;;)
			;
	}
	return pid;
}

/* Open, enable, close a counter on @target until @end; count in *done. */
static int churn(const struct options *o, pid_t target, long long end, unsigned long *done)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = o->software ? PERF_TYPE_SOFTWARE : PERF_TYPE_HARDWARE;
	a.config = o->software ? PERF_COUNT_SW_TASK_CLOCK : PERF_COUNT_HW_CPU_CYCLES;
	if (!o->counting) {
		a.sample_period = 1000000;
		a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN;
	}
	a.disabled = 1;
	a.exclude_hv = 1;
	a.inherit = 1;

	while (now_ms() < end) {
		int fd = syscall(SYS_perf_event_open, &a, target, -1, -1, 0);

		if (fd < 0) {
			fprintf(stderr, "perf_migrate_race: perf_event_open on pid %d: %s\n",
				target, strerror(errno));
			return 1;
		}
		ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
		close(fd);
		__atomic_fetch_add(done, 1, __ATOMIC_RELAXED);
	}
	return 0;
}

static int parse(int argc, char **argv, struct options *o)
{
	int c;

	*o = (struct options){ .secs = 60, .pairs = 1, .busy = 1 };
	while ((c = getopt(argc, argv, "s:n:b:pcw")) != -1) {
		switch (c) {
		case 's':
			o->secs = strtoul(optarg, NULL, 0);
			break;
		case 'n':
			o->pairs = strtoul(optarg, NULL, 0);
			break;
		case 'b':
			o->busy = strtoul(optarg, NULL, 0);
			break;
		case 'p':
			o->pin = true;
			break;
		case 'c':
			o->counting = true;
			break;
		case 'w':
			o->software = true;
			break;
		default:
			return -1;
		}
	}
	if (!o->secs || !o->pairs || o->pairs > MAX_PAIRS || o->busy > MAX_PAIRS) {
		fprintf(stderr, "perf_migrate_race: -s must be > 0, -n 1..%d, -b 0..%d\n",
			MAX_PAIRS, MAX_PAIRS);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	pid_t targets[MAX_PAIRS], openers[MAX_PAIRS], busy[MAX_PAIRS];
	unsigned long *done, sum = 0, prev = 0;
	long long t0, end, last;
	struct options o;
	unsigned int i;
	int status, err = 0;

	if (parse(argc, argv, &o))
		return 2;
	done = mmap(NULL, MAX_PAIRS * sizeof(*done), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (done == MAP_FAILED)
		return 1;

	for (i = 0; i < o.busy; i++)
		busy[i] = spawn_target(false);
	t0 = last = now_ms();
	end = t0 + o.secs * 1000LL;
	for (i = 0; i < o.pairs; i++) {
		targets[i] = spawn_target(o.pin);
		openers[i] = fork();
		if (openers[i] == 0)
			_exit(churn(&o, targets[i], end, &done[i]));
	}
	printf("perf_migrate_race: %u pair(s), %u busy, %s %s, target %s, %u s\n", o.pairs, o.busy,
	       o.software ? "task-clock" : "cycles", o.counting ? "counting" : "sampling",
	       o.pin ? "pinned" : "free to migrate", o.secs);
	while (now_ms() < end) {
		sleep(end - now_ms() < 10000 ? 1 : 10);
		for (sum = 0, i = 0; i < o.pairs; i++)
			sum += done[i];
		if (now_ms() - last >= 10000 || now_ms() >= end) {
			printf("perf_migrate_race: %lu open/enable/close cycles, %.0f/s\n", sum,
			       (sum - prev) * 1000.0 / (now_ms() - last));
			fflush(stdout);
			prev = sum;
			last = now_ms();
		}
	}
	for (i = 0; i < o.pairs; i++) {
		waitpid(openers[i], &status, 0);
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			err = 1;
		kill(targets[i], SIGKILL);
		waitpid(targets[i], NULL, 0);
	}
	for (i = 0; i < o.busy; i++) {
		kill(busy[i], SIGKILL);
		waitpid(busy[i], NULL, 0);
	}
	for (sum = 0, i = 0; i < o.pairs; i++)
		sum += done[i];
	printf("perf_migrate_race: %lu cycles in %lld ms%s\n", sum, now_ms() - t0,
	       err ? ", an opener failed" : "");
	return err;
}
