# SPDX-License-Identifier: GPL-2.0
# Exercise 4: a reader stopped for one second, with a 2-page and a 64-page ring.
. "$LIB"
cd "$DEMO" || exit 1
for m in 2 64; do
	./demo 1000 >/dev/null &
	pid=$!
	$CYCREAD -m $m -F 999 -p $pid -d 2 >/tmp/m$m.txt 2>&1 &
	reader=$!
	sleep 0.5
	kill -STOP $reader
	sleep 1
	kill -CONT $reader
	wait $reader
	kill $pid
	wait $pid 2>/dev/null
	echo "-m $m: $(grep '^# samples:' /tmp/m$m.txt)"
done
lost=$(field lost /tmp/m2.txt)
# 1 s at 999 Hz, less the 64 records of about 128 bytes that 8 KiB hold;
# the reader is stopped a little longer than "sleep 1" (1011 lost at load 8)
between "$lost" 800 1150
check $? "-m 2: $lost samples lost, predicted about 999 - 64 = 935"
lost=$(field lost /tmp/m64.txt)
[ "$lost" = 0 ]
check $? "-m 64: $lost lost: 256 KiB hold 2000 such records"
