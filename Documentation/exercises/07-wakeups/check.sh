# SPDX-License-Identifier: GPL-2.0
# Exercise 7: perf wakes the reader once per watermark of bytes written.
. "$LIB"
cd "$DEMO" || exit 1
for m in 4 64; do
	./perfsample -g -m $m -- ./demo 50 >/tmp/w$m.txt 2>&1
	grep '^# samples:\|^# wakeups:' /tmp/w$m.txt
done
bytes=$(sed -n 's/^# samples: [0-9]* (\([0-9]*\) bytes).*/\1/p' /tmp/w4.txt)
w=$(field wakeups /tmp/w4.txt)
want=$((bytes / 4096))
between "$w" $((want - 1)) $((want + 1))
check $? "-m 4: $w wakeups for $bytes bytes, predicted $want (one per 4 KiB) +- 1"
w=$(field wakeups /tmp/w64.txt)
between "$w" 0 1
check $? "-m 64: $w wakeups: $bytes bytes do not reach 64 KiB"
