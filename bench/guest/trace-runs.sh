#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# trace-runs.sh - what the kernel ran during each of N runs of mt (busybox
# sh, in the guest): the tracepoints of the scheduler, workqueues, timers,
# softirqs and interrupts, summed per task and per function, one block per
# run.  A diagnosis for Documentation/performance.rst ("Deferred work
# between the runs"), not a figure: the tracepoints cost time themselves.
#
# Usage: trace-runs.sh alone|cycread|perf
#   alone     trace mt's run alone, after a run of BEFORE (none, cycread,
#             perf) as in the bench
#   cycread, perf
#             trace the run under that tool, the workload's window only
#             (from its exec to its exit)
# Environment: N (8) runs, SIZE (4150: mt at 4 kHz in the bench), HZ
# (4000), OPTS (--no-call-graph for cycread, none for perf), REST (6)
# seconds of rest before each run, QUIET (1) housekeeping off as run.sh
# does, BEFORE (none), SHOW (an extended regular expression: the run's
# trace lines that match it, after its summary).  Softirqs and interrupts
# are counted per CPU (NAME@CPU).  Runs from a directory holding
# benchwork, lib.sh and, for perf, perf.tar (bench/perf-root's tree), e.g.
# the --add directory of scripts/cycsample-vm --icount --seed 1 --mem 2048.
# MT_SHARE=1 MT_CPUS=1 trace mt as the bench's cost phase runs it (one pool
# of work, CPU 1 offline); the defaults trace it with a share each on both
# CPUs, as the traces in performance.rst before 2026-12-05 night did.

cd "$(dirname "$0")" || exit 1
# shellcheck source=bench/guest/lib.sh
. ./lib.sh
T=/sys/kernel/tracing
N=${N:-8}
SIZE=${SIZE:-4150}
HZ=${HZ:-4000}
BEFORE=${BEFORE:-none}
MODE=${1:-alone}
MT_CPUS=${MT_CPUS:-all}
WL="./benchwork mt 2 $SIZE"
[ "${MT_SHARE:-0}" = 1 ] && WL="$WL share"

case $MODE in
alone | cycread | perf) ;;
*) echo "trace-runs.sh: unknown mode '$MODE' (alone, cycread, perf)" >&2; exit 2 ;;
esac
if [ "$MODE" = perf ] || [ "$BEFORE" = perf ]; then
	mkdir -p /tmp/perf && tar -xf perf.tar -C /tmp/perf || exit 1
fi
[ -d $T/events ] || mount -t tracefs nodev $T || exit 1
echo 0 >/proc/sys/kernel/randomize_va_space
quiet on
echo 16384 >$T/buffer_size_kb
for e in sched/sched_process_exec sched/sched_process_exit sched/sched_switch \
	workqueue/workqueue_execute_start irq/softirq_entry timer/timer_expire_entry \
	irq/irq_handler_entry; do
	echo 1 >$T/events/$e/enable
done
echo 0 >$T/tracing_on
cpus_for mt

# tool_run TOOL: mt under cycread or perf record
tool_run()
{
	case $1 in
	cycread)
		# shellcheck disable=SC2086
		./benchwork tool /cycsample/cycread -F "$HZ" ${OPTS---no-call-graph} -q \
			-o /tmp/c.cyc -- $WL ;;
	perf)
		# shellcheck disable=SC2086
		./benchwork tool /tmp/perf/perf --no-pager record -F "$HZ" $OPTS \
			-o /tmp/p.data -- $WL ;;
	none) ;;
	esac
}

# Sum the trace per task (switches in, time on a CPU) and per function.
# W=1: only from the exec of the second benchwork (the workload under
# "benchwork tool") to its exit.
summary()
{
	awk -v w="$1" '
	BEGIN { on = !w }
	w && /sched_process_exec:/ && /benchwork/ && ++nexec == 2 {
		on = 1; pid = $0; sub(/.* pid=/, "", pid); sub(/ .*/, "", pid)
	}
	w && on && /sched_process_exit:/ {
		p = $0; sub(/.* pid=/, "", p); sub(/ .*/, "", p)
		if (p == pid) on = 0
	}
	!on { next }
	{ match($0, /\[[0-9]+\]/); cpu = substr($0, RSTART + 1, RLENGTH - 2) + 0 }
	/sched_switch:/ {
		t = $0; sub(/^.*\] [^ ]+ +/, "", t); sub(/:.*/, "", t); t += 0
		n = $0; sub(/.*next_comm=/, "", n); sub(/ next_pid=.*/, "", n)
		if (cur[cpu] != "") run[cur[cpu]] += t - since[cpu]
		cur[cpu] = n; since[cpu] = t; sw[n]++; nsw++
	}
	/workqueue_execute_start:/ { f = $0; sub(/.*function /, "", f); wq[f]++ }
	/softirq_entry:/ { f = $0; sub(/.*action=/, "", f); sub(/\]$/, "", f); si[f "@" cpu]++ }
	/ timer_expire_entry:/ { f = $0; sub(/.*function=/, "", f); sub(/ .*/, "", f); tm[f]++ }
	/irq_handler_entry:/ { f = $0; sub(/.*name=/, "", f); ir[f "@" cpu]++ }
	END {
		printf "  switches %d;", nsw
		for (k in sw) if (k !~ /^swapper/) printf " %s:%d/%.0fus", k, sw[k], run[k] * 1e6
		printf "\n  wq:"; for (k in wq) printf " %s:%d", k, wq[k]
		printf "\n  softirq:"; for (k in si) printf " %s:%d", k, si[k]
		printf "\n  timer:"; for (k in tm) printf " %s:%d", k, tm[k]
		printf "\n  irq:"; for (k in ir) printf " %s:%d", k, ir[k]
		printf "\n"
	}' $T/trace
}

i=1
while [ "$i" -le "$N" ]; do
	if [ "$MODE" = alone ] && [ "$BEFORE" != none ]; then
		limits_for mt
		tool_run "$BEFORE" >/dev/null 2>&1
	fi
	limits_for mt
	echo >$T/trace
	echo 1 >$T/tracing_on
	if [ "$MODE" = alone ]; then
		$WL >/tmp/out 2>&1
	else
		tool_run "$MODE" >/tmp/out 2>&1
	fi
	echo 0 >$T/tracing_on
	echo "@run $i $(grep elapsed_ns /tmp/out)"
	summary "$([ "$MODE" = alone ] && echo 0 || echo 1)"
	[ -z "${SHOW:-}" ] || grep -E "$SHOW" $T/trace | sed 's/^/  | /'
	i=$((i + 1))
done
cpus_for none
restore
