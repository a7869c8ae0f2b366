#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# run.sh - the guest half of scripts/check-exercises.  Runs the check of
# every exercise staged under ex/ next to this script, in order, each with
# what its solution changed: ex/NN/cycsample.ko is loaded instead of the
# module for its check (and the original loaded again afterwards),
# ex/NN/bin/cycread and ex/NN/selftests/ replace /cycsample's, ex/NN/demo/
# holds the demo programs.  Each check prints "ok - WHAT" or "not ok - WHAT"
# lines; this script numbers them as TAP.

cd "$(dirname "$0")" || exit 1
top=$PWD
rate=/proc/sys/kernel/perf_event_max_sample_rate
n=0

tap()
{
	n=$((n + 1))
	echo "$1 $n $2"
}

for d in ex/*/; do
	name=${d#ex/}
	name=${name%/}
	# every check starts from the boot's sample-rate limit
	echo 100000 >$rate
	swapped=
	if [ -f "$d/cycsample.ko" ]; then
		if ! rmmod cycsample || ! insmod "$d/cycsample.ko"; then
			tap "not ok" "$name: its module loads"
			insmod /cycsample/cycsample.ko 2>/dev/null
			continue
		fi
		swapped=1
	fi
	ex=$top/$d
	cycread=/cycsample/cycread
	[ -x "$ex/bin/cycread" ] && cycread=$ex/bin/cycread
	selftests=/cycsample/selftests
	[ -d "$ex/selftests" ] && selftests=$ex/selftests
	echo "# --- $name"
	(cd "$ex" && EX=$ex CYCREAD=$cycread SELFTESTS=$selftests DEMO=$ex/demo \
		LIB=$top/lib.sh sh ./check.sh) >/tmp/check.out 2>&1
	rc=$?
	fails=0
	while IFS= read -r line; do
		case $line in
		"ok - "*) tap ok "$name: ${line#ok - }" ;;
		"not ok - "*)
			tap "not ok" "$name: ${line#not ok - }"
			fails=$((fails + 1))
			;;
		*) echo "# $line" ;;
		esac
	done </tmp/check.out
	[ $rc -eq 0 ] || [ $fails -gt 0 ] || tap "not ok" "$name: its check exited with status $rc"
	if [ -n "$swapped" ]; then
		rmmod cycsample
		insmod /cycsample/cycsample.ko || tap "not ok" "$name: the original module loads again"
	fi
done
echo "1..$n"
