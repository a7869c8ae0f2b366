# SPDX-License-Identifier: GPL-2.0
# Exercise 5: the head published before the copy: every record shows one
# record late, and the last one of each ring never.
. "$LIB"
check_selftest fails ring_test counters_agree_between_headers_info_and_records
cd "$DEMO" || exit 1
# attached for a while rather than "-- ./demo": the EXIT record would never
# show, and cycread would spend 2 s polling for it
./demo 1000 >/dev/null &
pid=$!
$CYCREAD -p $pid -d 0.3 >/tmp/s.txt 2>&1
kill $pid
wait $pid 2>/dev/null
grep '^# note:\|^# warning:' /tmp/s.txt
wrote=$(sed -n 's/^# note: the module wrote \([0-9]*\) samples, \([0-9]*\) were read$/\1/p' /tmp/s.txt)
read=$(sed -n 's/^# note: the module wrote \([0-9]*\) samples, \([0-9]*\) were read$/\2/p' /tmp/s.txt)
[ -n "$wrote" ] && between $((wrote - read)) 1 2
check $? "cycread read $read of $wrote samples: one per ring that got any is never seen"
! grep -q "corrupt records skipped" /tmp/s.txt
check $? "no half-written record was ever read"
