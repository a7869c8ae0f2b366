#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# run.sh - the in-guest half of scripts/bench (busybox sh).  Runs from the
# --add directory holding benchwork, demo, libdemo.so, lib.sh (what
# trace-runs.sh shares) and perf.tar (the tree of bench/perf-root, unpacked
# here into /tmp/perf).
#
# Usage: run.sh [PHASE...]   phases: cost loss agree depth (default: all)
# Environment:
#   REPS (3)          repetitions of every cost run
#   FREQS ("1000 4000 10000 20000"), WORKLOADS ("demo deep16 mt")
#   NSAMP (4000)      samples a cost run takes at the requested rate: the
#                     work shrinks as the rate grows, so that every figure
#                     rests on about as many samples.  A run's own jitter,
#                     tens of microseconds a second, weighs against the
#                     2 ms of sampling cost in 1000 samples at 1 kHz (3 %
#                     between boots); and 4000 samples fill the default
#                     ring past its watermark, so the readers' drains
#                     during the run count, as in a real session (not
#                     perf's without callchains: its records, under 64
#                     bytes, stay below the watermark)
#   PIN (1)           run the single-threaded workloads and their sampler on
#                     CPU 0 (below)
#   MT_PIN (0)        bind each of mt's two threads to a CPU of its own
#   MT_SHARE (1)      mt's cost runs draw their work from one pool (below)
#   MT_CPUS (1)       CPUs online for mt's cost runs: 1 (the others are
#                     taken offline for them, below) or all
#   LOSS_FREQS ("10000 20000"), LOSS_SECS (1): mt for LOSS_SECS guest seconds
#   DEPTHS ("1 16 64 200"), DEPTH_FREQ (4000)
#   AGREE_PERIOD (c2000000: -c 2000000 for the fixed-period agreement run)
#   SETTLE (1): settle the kernel's handler-time average before each run
#   REST (6): seconds of guest time between the settling and each run
#   QUIET (1): no periodic memory housekeeping during the runs (below);
#                     0: the kernel's defaults
#
# Output: one "@r key=value..." line per run, and "@file NAME" ... "@end"
# around the reports the host compares.  The host parses nothing else.
#
# Under -icount every clock of the guest counts instructions, and the two
# vCPUs share one clock: work on either CPU moves it.  Pinned to one CPU,
# a single-threaded workload and its sampler leave the other CPU idle, so
# the workload's CPU time (which includes the interrupts it took) is what
# the sample path cost it, and its elapsed time minus its CPU time is what
# the sampler's reader took from it.  mt's cost runs do the same with CPU 1
# offline (MT_CPUS=1): its two threads and the sampler share CPU 0.  With
# both CPUs busy (MT_CPUS=all, and the loss and agreement runs) QEMU takes
# turns between the vCPUs at points the host's timing moves, and a CPU
# that waits for the other (a lock, a cross-CPU call) spins until the
# other's turn comes, in guest time: the same run under a sampler spread
# by 0.34 ms, against 0.02 ms on one CPU (Documentation/performance.rst,
# "mt on one CPU").  mt is not pinned (MT_PIN=1 binds one thread to each
# CPU, for a guest booted with CPU 1 in nohz_full mode: scripts/bench's
# header).  Every run starts with kernel.perf_event_max_sample_rate back
# at 100000; the limit the kernel left after the run is reported as
# rate_after.
#
# mt's cost runs (MT_SHARE=1) give its two threads one pool of work: how
# QEMU splits its turns between the vCPUs is not repeatable, and with a
# fixed share each, the thread that gets more turns ends first and leaves
# its CPU idle, so the same work took up to 17 % more or fewer samples and
# ticks from run to run.  From one pool both threads work until the end.
# The agreement run keeps a fixed share each (its expected shares are per
# thread and overall).
#
# Address-space randomization is off (kernel.randomize_va_space=0): where
# the loader puts the libraries and the stack changes how many instructions
# page faults and the dynamic loader take, which moved the same workload's
# time by 0.6 ms from run to run on 6.12.
#
# QUIET=1 turns off three kinds of memory housekeeping that the kernel
# does on its own timers, whichever run they fall into: khugepaged, woken
# by every new process whose memory may become huge pages (it drains the
# page lists of every CPU before it scans), proactive compaction (kcompactd,
# every 500 ms) and the per-CPU statistics folding (vmstat_update, every
# second).  Transparent huge pages go from "always" to "madvise", so memory
# that asks for them (cycread's queue) still gets them.  Twelve runs of mt
# alone then took 0.6 ms less each (of 500): Documentation/performance.rst,
# "Deferred work between the runs".
#
# mt runs with kernel.perf_cpu_time_max_percent=0 (no throttle): the vCPUs
# take turns on one host thread, and a turn of the other vCPU that falls
# inside an overflow handler counts as handler time (tens of microseconds),
# so with the default 25 % the kernel lowers the limit to 250 for both tools
# and throttles them to a few hundred samples/s, an effect of the emulator.

cd "$(dirname "$0")" || exit 1
# shellcheck source=bench/guest/lib.sh
. ./lib.sh
PERF_DIR=/tmp/perf
REPS=${REPS:-3}
FREQS=${FREQS:-"1000 4000 10000 20000"}
WORKLOADS=${WORKLOADS:-"demo deep16 mt"}
NSAMP=${NSAMP:-4000}
PIN=${PIN:-1}
MT_PIN=${MT_PIN:-0}
MT_SHARE=${MT_SHARE:-1}
MT_CPUS=${MT_CPUS:-1}
LOSS_FREQS=${LOSS_FREQS:-"10000 20000"}
LOSS_SECS=${LOSS_SECS:-1}
DEPTHS=${DEPTHS:-"1 16 64 200"}
DEPTH_FREQ=${DEPTH_FREQ:-4000}
AGREE_PERIOD=${AGREE_PERIOD:-c2000000}
ASLR=/proc/sys/kernel/randomize_va_space
ASLR_DEFAULT=$(cat $ASLR)
T=/tmp/bench
mkdir -p $T $PERF_DIR
tar -xf perf.tar -C $PERF_DIR || exit 1

# The console is a tty: without --no-pager perf would wait in a pager.
perf_cmd()
{
	PAGER="cat" "$PERF_DIR/perf" --no-pager "$@"
}

# The first value of KEY in a capture file's text header.
cap_meta()
{
	head -c 8192 "$1" | grep -a "^$2=" | head -n 1 | cut -d= -f2
}

# The value of "KEY N" in the workload's output.
out_of()
{
	sed -n "s/^$2 //p" "$1" | head -n 1
}

# A sampling spec: N is -F N (Hz), cN is -c N (a fixed period in cycles).
samp()
{
	case $1 in
	c*) echo "-c ${1#c}" ;;
	*) echo "-F $1" ;;
	esac
}

# The work of one cost run: a size that takes about NSAMP samples at FREQ
# Hz (mt with both CPUs: on the two together).  Rates of work in guest
# time, measured under -icount on arm64-6.1 (the same within 7 % on 6.12
# and 7.3): deep16 21200 units/s, demo 166 rounds/s, mt 16600 units/s (on
# one CPU, and on two together: the vCPUs share one clock).  mt's size is
# each thread's share.
size_of()
{
	case $1 in
	deep16) echo $((21200 * NSAMP / $2)) ;;
	demo) echo $((166 * NSAMP / $2 + 1)) ;;
	mt) [ "$MT_CPUS" = 1 ] && echo $((8300 * NSAMP / $2)) ||
		echo $((8300 * NSAMP / $2 / 2)) ;;
	esac
}

# The command of workload $1 with size $2.
wl_cmd()
{
	case $1 in
	deep16) echo "./benchwork deep 16 $2 20" ;;
	demo) echo "./benchwork run ./demo $2" ;;
	mt) echo "./benchwork mt 2 $2 $(mt_pin) $(mt_share)" ;;
	esac
}

# The prefix that pins workload $1 (and the sampler that runs it).
pin_of()
{
	[ "$PIN" = 1 ] && [ "$1" != mt ] && echo "taskset -c 0"
}

# mt's own binding: one thread on each CPU (the sampler stays free).
mt_pin()
{
	[ "$MT_PIN" = 1 ] && echo pin
}

mt_share()
{
	[ "$MT_SHARE" = 1 ] && echo share
}

# emit PHASE TOOL WORKLOAD FREQ REP KEY=VALUE...
emit()
{
	echo "@r phase=$1 tool=$2 wl=$3 freq=$4 rep=$5 $6"
}

times_of()
{
	echo "elapsed_ns=$(out_of $T/out elapsed_ns) cpu_ns=$(out_of $T/out cpu_ns)" \
		"tool_cpu_ns=$(out_of $T/out tool_cpu_ns)"
}

# run_alone PHASE WORKLOAD REP CMD...
run_alone()
{
	p=$1 w=$2 r=$3
	shift 3
	limits_for "$w"
	"$@" >$T/out 2>$T/err
	emit "$p" none "$w" 0 "$r" "status=$? $(times_of) size=$SIZE"
}

# run_cyc PHASE WORKLOAD FREQ REP "CYCREAD OPTIONS" [PIN...] -- CMD...
# (capture in $T/c.cyc)
run_cyc()
{
	p=$1 w=$2 f=$3 r=$4 o=$5
	shift 5
	pin=
	while [ "$1" != -- ]; do
		pin="$pin $1"
		shift
	done
	shift
	limits_for "$w"
	rm -f $T/c.cyc
	# shellcheck disable=SC2086
	$pin ./benchwork tool cycread $(samp "$f") $o -q -o $T/c.cyc -- "$@" >$T/out 2>$T/err
	st=$?
	tag=cycsample
	case $o in *--no-call-graph*) tag=cycsample-nocg ;; esac
	emit "$p" $tag "$w" "$f" "$r" "status=$st $(times_of) size=$SIZE \
samples=$(cap_meta $T/c.cyc samples) lost=$(cap_meta $T/c.cyc lost) \
throttled=$(cap_meta $T/c.cyc throttled) cost_count=$(cap_meta $T/c.cyc cost_count) \
cost_total_ns=$(cap_meta $T/c.cyc cost_total_ns) cost_max_ns=$(cap_meta $T/c.cyc cost_max_ns) \
duration_ns=$(cap_meta $T/c.cyc duration_ns) rate_after=$(cat $RATE) pct=$(cat $PCT)"
	[ $st = 0 ] || sed 's/^/# cycread: /' $T/err | tail -n 5
}

# run_perf PHASE WORKLOAD FREQ REP "PERF RECORD OPTIONS" [PIN...] -- CMD...
# ($T/p.data)
run_perf()
{
	p=$1 w=$2 f=$3 r=$4 o=$5
	shift 5
	pin=
	while [ "$1" != -- ]; do
		pin="$pin $1"
		shift
	done
	shift
	limits_for "$w"
	rm -f $T/p.data
	# shellcheck disable=SC2086
	$pin ./benchwork tool "$PERF_DIR/perf" --no-pager record $(samp "$f") $o \
		-o $T/p.data -- "$@" >$T/out 2>$T/err
	st=$?
	tag=perf
	case $o in *-g*) ;; *) tag=perf-nocg ;; esac
	n=$(sed -n 's/.*(\([0-9]*\) samples).*/\1/p' $T/err | tail -n 1)
	emit "$p" $tag "$w" "$f" "$r" "status=$st $(times_of) size=$SIZE samples=$n \
rate_after=$(cat $RATE) pct=$(cat $PCT)"
	[ $st = 0 ] || sed 's/^/# perf: /' $T/err | tail -n 5
}

# Lost samples of the last perf run: LOST records (ring full) and, where the
# kernel reports them, LOST_SAMPLES; THROTTLE records; --stats reads every
# event, no symbols.
perf_loss()
{
	perf_cmd report -i $T/p.data --stats >$T/stats 2>&1
	sed -n 's/^ *\(LOST\|LOST_SAMPLES\|SAMPLE\|THROTTLE\) events: *\([0-9]*\).*/\1=\2/p' \
		$T/stats | tr '\n' ' '
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
	# --no-inline: perf's sym column names the ELF symbol, never an inline
	cycread report -i $T/c.cyc -s dso,sym --no-inline 2>&1 | top_rows
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

# Per-sample cost: for every workload and rate, REPS times in turn the
# workload alone and under both tools, with and without callchains (every
# figure's repetitions close together; a cut-short run still has whole cells).
phase_cost()
{
	for w in $WORKLOADS; do
		pin=$(pin_of "$w")
		cpus_for "$w"
		for f in $FREQS; do
			SIZE=$(size_of "$w" "$f")
			# shellcheck disable=SC2046
			set -- $(wl_cmd "$w" "$SIZE")
			r=1
			while [ $r -le "$REPS" ]; do
				# shellcheck disable=SC2086
				run_alone cost "$w" $r $pin "$@"
				run_cyc cost "$w" "$f" $r "-g" $pin -- "$@"
				run_perf cost "$w" "$f" $r "-g" $pin -- "$@"
				run_cyc cost "$w" "$f" $r "--no-call-graph" $pin -- "$@"
				run_perf cost "$w" "$f" $r "" $pin -- "$@"
				r=$((r + 1))
			done
		done
	done
	cpus_for none
}

# Ring loss: mt (both CPUs busy) for LOSS_SECS, default rings and buffers.
phase_loss()
{
	SIZE=-$LOSS_SECS
	for f in $LOSS_FREQS; do
		run_cyc loss mt "$f" 1 "-g" -- ./benchwork mt 2 -"$LOSS_SECS" $(mt_pin)
		run_perf loss mt "$f" 1 "-g" -- ./benchwork mt 2 -"$LOSS_SECS" $(mt_pin)
		emit loss perf-stats mt "$f" 1 "$(perf_loss)"
	done
}

# Agreement of the flat profiles: the demo in frequency mode and with a
# fixed period (the frequency mode starts every counter at period 1 and
# adapts, which weighs start-up differently depending on when each tool
# enables its counters), and mt.
phase_agree()
{
	SIZE=60
	pin=$(pin_of demo)
	for f in 4000 "$AGREE_PERIOD"; do
		# not $tag: busybox sh has no local variables, and run_cyc sets tag
		name=demo
		case $f in c*) name=demo-fixed ;; esac
		# shellcheck disable=SC2086
		run_cyc agree demo "$f" 1 "-g" $pin -- ./benchwork run ./demo $SIZE
		file_cyc "$name-cycsample"
		# shellcheck disable=SC2086
		run_perf agree demo "$f" 1 "-g" $pin -- ./benchwork run ./demo $SIZE
		file_perf "$name-perf"
	done
	SIZE=3000
	run_cyc agree mt 4000 1 "-g" -- ./benchwork mt 2 $SIZE $(mt_pin)
	file_cyc "mt-cycsample"
	run_perf agree mt 4000 1 "-g" -- ./benchwork mt 2 $SIZE $(mt_pin)
	file_perf "mt-perf"
}

# The module's handler cost against the user chain's depth.
phase_depth()
{
	SIZE=2000
	pin=$(pin_of deep)
	for d in $DEPTHS; do
		# shellcheck disable=SC2086
		run_cyc depth "deep$d" "$DEPTH_FREQ" 1 "-g --max-stack 127" $pin -- \
			./benchwork deep "$d" $SIZE 0
	done
}

echo 0 >$ASLR
quiet on
echo "@info kernel=$(uname -r) cpus=$(grep -c ^processor /proc/cpuinfo) \
perf=$(perf_cmd version 2>&1 | tr ' ' _) cycread=$(cycread -V 2>&1 | head -n 1 | tr ' ' _) \
mlock_kb=$(cat /proc/sys/kernel/perf_event_mlock_kb) \
cpu_time_max_percent=$(cat /proc/sys/kernel/perf_cpu_time_max_percent) \
reps=$REPS nsamp=$NSAMP pin=$PIN mt_pin=$MT_PIN mt_share=$MT_SHARE mt_cpus=$MT_CPUS aslr=0 \
quiet=$QUIET rest=$REST \
thp=$(thp_mode) stat_interval=$(cat $STAT) \
proactiveness=$(cat $PROACT 2>/dev/null)"
[ $# -gt 0 ] || set -- cost loss agree depth
for ph in "$@"; do
	echo "@phase $ph $(cut -d' ' -f1 /proc/uptime)"
	"phase_$ph"
done
echo "$ASLR_DEFAULT" >$ASLR
restore
echo "@done $(cut -d' ' -f1 /proc/uptime)"
