#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# lib.sh - what bench/guest/run.sh and trace-runs.sh share (busybox sh,
# sourced from the directory that holds benchwork): the limits, settling
# and rest before a run, and the housekeeping that QUIET=1 turns off.
# Environment: SETTLE (1), REST (6), QUIET (1), MT_CPUS (1): run.sh's header.

RATE=/proc/sys/kernel/perf_event_max_sample_rate
PCT=/proc/sys/kernel/perf_cpu_time_max_percent
PCT_DEFAULT=$(cat $PCT)
THP=/sys/kernel/mm/transparent_hugepage/enabled
STAT=/proc/sys/vm/stat_interval
PROACT=/proc/sys/vm/compaction_proactiveness
QUIET=${QUIET:-1}
REST=${REST:-6}

# The transparent huge page mode in force (the bracketed word).
thp_mode()
{
	sed 's/.*\[\(.*\)\].*/\1/' $THP 2>/dev/null
}

# quiet on|off: the housekeeping of QUIET=1 off, or back to what it was.
# Each knob is optional (compaction_proactiveness is 5.9's).
quiet()
{
	[ "$QUIET" = 1 ] || return 0
	if [ "$1" = on ]; then
		THP_DEFAULT=$(thp_mode)
		STAT_DEFAULT=$(cat $STAT)
		PROACT_DEFAULT=$(cat $PROACT 2>/dev/null)
		[ -n "$THP_DEFAULT" ] && echo madvise >$THP
		echo 3600 >$STAT
		[ -n "$PROACT_DEFAULT" ] && echo 0 >$PROACT
	else
		[ -n "$THP_DEFAULT" ] && echo "$THP_DEFAULT" >$THP
		echo "$STAT_DEFAULT" >$STAT
		[ -n "$PROACT_DEFAULT" ] && echo "$PROACT_DEFAULT" >$PROACT
	fi
	return 0
}

# cpus_for WORKLOAD: CPU 1 and up offline for mt (MT_CPUS=1), online for
# anything else.  The module's counters follow CPU hotplug.
cpus_for()
{
	[ "${MT_CPUS:-1}" = 1 ] || return 0
	on=1
	[ "$1" = mt ] && on=0
	for c in /sys/devices/system/cpu/cpu[1-9]*/online; do
		[ -e "$c" ] || continue
		[ "$(cat "$c")" = $on ] && continue
		echo $on >"$c" || echo "# $c: cannot write $on"
	done
}

# After the last run: the throttle and the housekeeping as they were.
restore()
{
	echo "$PCT_DEFAULT" >$PCT
	quiet off
}

# The limits a run of workload $1 starts with (run.sh's header), after REST
# seconds of rest: work the previous run left behind then runs before the
# clock starts, not during the run, where it moved the next run's time by
# up to 0.2 ms (mt) or 0.5 ms.  Two such pieces come on the kernel's own
# timers: a second after the last per-task perf event is closed (the
# settling's own included) perf turns its scheduler hooks off, patching
# the kernel's text with both CPUs stopped (perf_sched_delayed), and
# memory freed with kfree_rcu() (the module's session) is freed in a batch
# five seconds later (KFREE_DRAIN_JIFFIES); with a second of rest, the
# first fell into some runs and not others.  An idle guest costs no wall
# time under -icount sleep=off.
limits_for()
{
	# the kernel refuses a new rate while perf_cpu_time_max_percent is 0
	# (throttling off): the default percentage first, then the rate
	echo "$PCT_DEFAULT" >$PCT
	echo 100000 >$RATE
	settle
	sleep "$REST"
	echo 100000 >$RATE
	[ "$1" = mt ] && echo 0 >$PCT
	return 0
}

# The kernel judges a PMU interrupt by a per-CPU running sum of the last
# 128 or so handler times (perf_sample_event_took()), and lowers the rate
# when its average passes the allowed share.  That sum outlives a run and
# is not reset with the rate: a run that follows perf -g on deep16 started
# with perf's average (about 3.8 us) and had the rate lowered at its first
# sample, whatever its own handler cost.  So before every run the same
# cheap sampling (700 overflows on each CPU of a perf event without a ring,
# benchwork settle) brings both CPUs' sums to the same low level.  It used
# to be perf record without callchains: the same effect, but perf's own
# start and finish made up half of the bench's wall time.  SETTLE=0: none.
settle()
{
	[ "${SETTLE:-1}" = 1 ] || return 0
	./benchwork settle 700 || echo "# settle failed"
}
