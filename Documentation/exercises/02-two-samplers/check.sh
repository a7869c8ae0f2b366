# SPDX-License-Identifier: GPL-2.0
# Exercise 2: perfsample and cycread agree on the demo; what one perf record
# of a user sample holds.
. "$LIB"
cd "$DEMO" || exit 1
$CYCREAD --folded --weight samples -- ./demo 50 >/tmp/c.folded 2>/dev/null
./perfsample -g --folded -- ./demo 50 >/tmp/p.folded 2>/dev/null
./perfsample -g -- ./demo 50 >/tmp/p.txt 2>&1
top_c=$(top_leaf /tmp/c.folded)
top_p=$(top_leaf /tmp/p.folded)
sc=$(share10 /tmp/c.folded hot_loop)
sp=$(share10 /tmp/p.folded hot_loop)
echo "cycread: top $top_c, hot_loop $sc/1000; perfsample: top $top_p, hot_loop $sp/1000"
[ "$top_c" = hot_loop ] && [ "$top_p" = hot_loop ]
check $? "both name hot_loop on top ($top_c, $top_p)"
d=$((sp - sc))
[ "${d#-}" -le 60 ]
check $? "hot_loop's share of the work: $((sp / 10)) % and $((sc / 10)) %, within 6 points"
n=$(sed -n 's/^# samples: \([0-9]*\) .*/\1/p' /tmp/p.txt)
bytes=$(sed -n 's/^# samples: [0-9]* (\([0-9]*\) bytes).*/\1/p' /tmp/p.txt)
avg=$((bytes / n))
echo "perfsample: $n samples, $bytes bytes: $avg bytes each"
# 8 header + 5 x 8 fields + 8 nr + 8 x (PERF_CONTEXT_USER + pc + 4 returns) = 104
between "$avg" 100 112
check $? "a perfsample record is about 104 bytes ($avg on average)"
