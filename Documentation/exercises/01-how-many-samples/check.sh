# SPDX-License-Identifier: GPL-2.0
# Exercise 1: samples = cycles / period; with -F, samples = rate x run time.
# Under --icount a cycle is an instruction is a nanosecond, and a round of
# the demo is 1000 units of 1000 steps of 6 instructions (the loop of
# hot_loop and its siblings): 6,000,000 cycles.
. "$LIB"
cd "$DEMO" || exit 1
$CYCREAD -c 2000000 -- ./demo 50 >/tmp/c2.txt 2>&1
$CYCREAD -c 1000000 -- ./demo 50 >/tmp/c1.txt 2>&1
$CYCREAD -F 999 -- ./demo 100 >/tmp/f.txt 2>&1
n2=$(field samples /tmp/c2.txt)
n1=$(field samples /tmp/c1.txt)
nf=$(field samples /tmp/f.txt)
echo "-c 2000000: $n2 samples; -c 1000000: $n1; -F 999 on demo 100: $nf"
want=$((50 * 6000000 / 2000000))
between "$n2" $((want * 9 / 10)) $((want * 11 / 10))
check $? "-c 2000000 on demo 50: $n2 samples, predicted $want (cycles / period) +- 10 %"
want=$((50 * 6000000 / 1000000))
between "$n1" $((want * 9 / 10)) $((want * 11 / 10))
check $? "-c 1000000: $n1 samples, predicted $want +- 10 %"
# demo 100: 600,000,000 cycles, 0.6 s
want=$((100 * 6000000 * 999 / 1000000000))
between "$nf" $((want * 9 / 10)) $((want * 11 / 10))
check $? "-F 999 on demo 100: $nf samples, predicted $want (999 Hz x 0.6 s) +- 10 %"
