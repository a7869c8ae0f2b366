#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# run.sh - the in-guest half of scripts/bench (busybox sh).  Runs from the
# --add directory holding benchwork, demo, libdemo.so and perf/.
#
# Usage: run.sh [PHASE...]   phases: slowdown agree cost loss depth (default: all)
# Environment: REPS (default 2), DEMO_ROUNDS (600), DEEP_UNITS (20000),
#   LOSS_SECS (10), LOSS_FREQS ("1000 4000 10000 20000"), SLOW_FREQS
#   ("1000 4000 10000"), COST_FREQ (4000), DEPTHS ("1 4 16 64 126 200"),
#   AGREE_PERIOD (c2000000: -c 2000000 for the fixed-period agreement run).
#
# Output: one "@r key=value..." line per run, and "@file NAME" ... "@end"
# around the reports the host compares.  The host parses nothing else.
# Every run starts with kernel.perf_event_max_sample_rate back at 100000,
# because under TCG every sample is slow and the kernel lowers the limit;
# the limit left after the run is reported as rate_after.

cd "$(dirname "$0")" || exit 1
HERE=$(pwd)
PERF_DIR=$HERE/perf
REPS=${REPS:-2}
DEMO_ROUNDS=${DEMO_ROUNDS:-600}
DEEP_UNITS=${DEEP_UNITS:-20000}
LOSS_SECS=${LOSS_SECS:-10}
LOSS_FREQS=${LOSS_FREQS:-"1000 4000 10000 20000"}
SLOW_FREQS=${SLOW_FREQS:-"1000 4000 10000"}
COST_FREQ=${COST_FREQ:-4000}
AGREE_PERIOD=${AGREE_PERIOD:-c2000000}
DEPTHS=${DEPTHS:-"1 4 16 64 126 200"}
RATE=/proc/sys/kernel/perf_event_max_sample_rate
T=/tmp/bench
mkdir -p $T

# The console is a tty: without --no-pager perf would wait in a pager.
perf_cmd()
{
	LD_LIBRARY_PATH=$PERF_DIR/lib PAGER=cat "$PERF_DIR/usr/bin/perf" --no-pager "$@"
}

# The first value of KEY in a capture file's text header.
cap_meta()
{
	head -c 8192 "$1" | grep -a "^$2=" | head -n 1 | cut -d= -f2
}

elapsed_of()
{
	sed -n 's/^elapsed_ns //p' "$1" | head -n 1
}

# A sampling spec: N is -F N (Hz), cN is -c N (a fixed period in cycles).
samp()
{
	case $1 in
	c*) echo "-c ${1#c}" ;;
	*) echo "-F $1" ;;
	esac
}

# emit PHASE TOOL WORKLOAD FREQ REP KEY=VALUE...
emit()
{
	echo "@r phase=$1 tool=$2 wl=$3 freq=$4 rep=$5 $6"
}

# run_alone PHASE WORKLOAD REP CMD...
run_alone()
{
	p=$1 w=$2 r=$3
	shift 3
	"$@" >$T/out 2>$T/err
	emit "$p" none "$w" 0 "$r" "status=$? elapsed_ns=$(elapsed_of $T/out)"
}

# run_cyc PHASE WORKLOAD FREQ REP "CYCREAD OPTIONS" CMD...  (capture in $T/c.cyc)
run_cyc()
{
	p=$1 w=$2 f=$3 r=$4 o=$5
	shift 5
	echo 100000 >$RATE
	rm -f $T/c.cyc
	# shellcheck disable=SC2086
	cycread $(samp "$f") $o -q -o $T/c.cyc -- "$@" >$T/out 2>$T/err
	st=$?
	tag=cycsample
	case $o in *--no-call-graph*) tag=cycsample-nocg ;; esac
	emit "$p" $tag "$w" "$f" "$r" "status=$st elapsed_ns=$(elapsed_of $T/out) \
samples=$(cap_meta $T/c.cyc samples) lost=$(cap_meta $T/c.cyc lost) \
throttled=$(cap_meta $T/c.cyc throttled) cost_count=$(cap_meta $T/c.cyc cost_count) \
cost_total_ns=$(cap_meta $T/c.cyc cost_total_ns) cost_max_ns=$(cap_meta $T/c.cyc cost_max_ns) \
duration_ns=$(cap_meta $T/c.cyc duration_ns) rate_after=$(cat $RATE)"
	[ $st = 0 ] || sed 's/^/# cycread: /' $T/err | tail -n 5
}

# run_perf PHASE WORKLOAD FREQ REP "PERF RECORD OPTIONS" CMD...  ($T/p.data)
run_perf()
{
	p=$1 w=$2 f=$3 r=$4 o=$5
	shift 5
	echo 100000 >$RATE
	rm -f $T/p.data
	# shellcheck disable=SC2086
	perf_cmd record $(samp "$f") $o -o $T/p.data -- "$@" >$T/out 2>$T/err
	st=$?
	tag=perf
	case $o in *-g*) ;; *) tag=perf-nocg ;; esac
	n=$(sed -n 's/.*(\([0-9]*\) samples).*/\1/p' $T/err | tail -n 1)
	emit "$p" $tag "$w" "$f" "$r" "status=$st elapsed_ns=$(elapsed_of $T/out) \
samples=$n rate_after=$(cat $RATE)"
	[ $st = 0 ] || sed 's/^/# perf: /' $T/err | tail -n 5
}

# Lost samples of the last perf run: LOST records (ring full) and, where the
# kernel reports them, LOST_SAMPLES; --stats reads every event, no symbols.
perf_loss()
{
	perf_cmd report -i $T/p.data --stats >$T/stats 2>&1
	sed -n 's/^ *\(LOST\|LOST_SAMPLES\|SAMPLE\) events: *\([0-9]*\).*/\1=\2/p' $T/stats |
		tr '\n' ' '
	sed -n 's/.*lost \([0-9]*\) chunks.*/lost_chunks_warn=\1/p' $T/stats | head -n 1
}

# The first rows of a flat profile and the total of its sample column (the
# serial console is slow, and perf abbreviates its own total).
top_rows()
{
	awk '/^#/ { next } $1 ~ /%$/ { t += $2; if (++n <= 60) print } END { print "@total " t }'
}

file_cyc()
{
	echo "@file $1"
	cycread report -i $T/c.cyc -s dso,sym 2>&1 | top_rows
	echo "@end"
}

# Shares by sample count as cycread gives them: perf's Overhead column is
# weighted by period, which the frequency mode varies from sample to sample.
file_perf()
{
	echo "@file $1"
	perf_cmd report -i $T/p.data --stdio --no-children --sort dso,sym -n -g none \
		--percent-limit 0 2>/dev/null | top_rows
	echo "@end"
}

phase_slowdown()
{
	r=1
	while [ $r -le "$REPS" ]; do
		run_alone slowdown demo "$r" ./benchwork run ./demo "$DEMO_ROUNDS"
		for f in $SLOW_FREQS; do
			run_cyc slowdown demo "$f" "$r" "-g" ./benchwork run ./demo "$DEMO_ROUNDS"
			[ "$r$f" = 14000 ] && file_cyc "demo-cycsample"
			run_perf slowdown demo "$f" "$r" "-g" ./benchwork run ./demo "$DEMO_ROUNDS"
			[ "$r$f" = 14000 ] && file_perf "demo-perf"
		done
		r=$((r + 1))
	done
	run_alone slowdown demo "$r" ./benchwork run ./demo "$DEMO_ROUNDS"
}

phase_cost()
{
	set -- ./benchwork deep 16 "$DEEP_UNITS" 20
	r=1
	while [ $r -le $((REPS + 1)) ]; do
		run_alone cost deep16 "$r" "$@"
		run_cyc cost deep16 "$COST_FREQ" "$r" "-g" "$@"
		run_perf cost deep16 "$COST_FREQ" "$r" "-g" "$@"
		run_cyc cost deep16 "$COST_FREQ" "$r" "--no-call-graph" "$@"
		run_perf cost deep16 "$COST_FREQ" "$r" "" "$@"
		r=$((r + 1))
	done
	run_alone cost deep16 "$r" "$@"
}

phase_loss()
{
	for f in $LOSS_FREQS; do
		run_cyc loss mt2 "$f" 1 "-g" ./benchwork mt 2 -"$LOSS_SECS"
		[ "$f" = 4000 ] && file_cyc "mt-cycsample"
		run_perf loss mt2 "$f" 1 "-g" ./benchwork mt 2 -"$LOSS_SECS"
		emit loss perf-stats mt2 "$f" 1 "$(perf_loss)"
		[ "$f" = 4000 ] && file_perf "mt-perf"
	done
}

# Agreement with a fixed period as well: the frequency mode starts every
# counter at period 1 and adapts, which weighs start-up (exec, the dynamic
# loader) differently depending on when each tool enables its counters.
phase_agree()
{
	run_cyc agree demo "$AGREE_PERIOD" 1 "-g" ./benchwork run ./demo "$DEMO_ROUNDS"
	file_cyc "demo-fixed-cycsample"
	run_perf agree demo "$AGREE_PERIOD" 1 "-g" ./benchwork run ./demo "$DEMO_ROUNDS"
	file_perf "demo-fixed-perf"
}

phase_depth()
{
	for d in $DEPTHS; do
		run_cyc depth "deep$d" 1000 1 "-g --max-stack 127" ./benchwork deep "$d" 8000 0
	done
}

echo "@info kernel=$(uname -r) cpus=$(grep -c ^processor /proc/cpuinfo) \
perf=$(perf_cmd version 2>&1 | tr ' ' _) cycread=$(cycread -V 2>&1 | head -n 1 | tr ' ' _) \
mlock_kb=$(cat /proc/sys/kernel/perf_event_mlock_kb) \
cpu_time_max_percent=$(cat /proc/sys/kernel/perf_cpu_time_max_percent)"
[ $# -gt 0 ] || set -- slowdown agree cost loss depth
for ph in "$@"; do
	echo "@phase $ph $(date +%s)"
	"phase_$ph"
done
echo "@done $(date +%s)"
