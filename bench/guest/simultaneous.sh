#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The guest half of bench/simultaneous (busybox sh): for each CASE, start the
# workload, perf record on it, then cycread on it for WIN seconds, and print
# both flat profiles by sample count (perf's -n column: its Overhead column
# weights samples by period).
cd "$(dirname "$0")" || exit 1
P=/tmp/perf
mkdir -p $P
tar -xf perf.tar -C $P || exit 1
WIN=${WIN:-15}
RATE=/proc/sys/kernel/perf_event_max_sample_rate
T=/tmp/simultaneous
mkdir -p $T

perf() { PAGER="cat" "$P/perf" --no-pager "$@"; }

run_case()
{
	name=$1
	case $2 in c*) opt="-c ${2#c}" ;; *) opt="-F ${2#F}" ;; esac
	shift 2
	echo 100000 >$RATE
	"$@" >/dev/null 2>&1 &
	wl=$!
	sleep 2
	# shellcheck disable=SC2086
	perf record $opt -g -p $wl -o $T/$name.data -- sleep 600 >$T/$name.perf.out 2>&1 &
	pr=$!
	i=0
	while [ $i -lt 120 ] && ! ls -l /proc/$pr/fd 2>/dev/null | grep -q perf_event; do
		sleep 1
		i=$((i + 1))
	done
	sleep 1
	# shellcheck disable=SC2086
	./cycread $opt -p $wl -d "$WIN" -q -o $T/$name.cyc >$T/$name.cyc.out 2>&1
	kill -INT $pr
	wait $pr
	kill $wl
	echo "=== $name: $* ($opt, ${WIN} s; perf_event_max_sample_rate now $(cat $RATE))"
	echo "--- cycsample"
	./cycread report -i $T/$name.cyc -s sym 2>&1 | head -n 20
	echo "--- perf"
	perf report -i $T/$name.data --stdio --no-children --sort sym -n -g none \
		--percent-limit 0.5 2>&1 | grep -v '^$' | head -n 24
}

for c in "$@"; do
	name=${c%%:*}
	rest=${c#*:}
	# shellcheck disable=SC2046
	run_case "$name" "${rest%%:*}" $(echo "${rest#*:}" | tr ',' ' ')
done
