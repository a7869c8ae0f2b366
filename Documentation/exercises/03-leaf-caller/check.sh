# SPDX-License-Identifier: GPL-2.0
# Exercise 3: the leaf's caller, from LR (cycread) or not at all (perfsample).
. "$LIB"
cd "$DEMO" || exit 1
$CYCREAD -q -o /tmp/l.cyc -- ./demo 50 >/dev/null 2>&1
$CYCREAD report -i /tmp/l.cyc --folded --weight samples >/tmp/r.folded 2>/dev/null
$CYCREAD report -i /tmp/l.cyc --folded --weight samples --no-leaf-repair >/tmp/n.folded 2>/dev/null
./perfsample -g --folded -- ./demo 50 >/tmp/p.folded 2>/dev/null
for f in r n p; do
	all=$(leaf_count /tmp/$f.folded hot_loop)
	full=$(chain_count /tmp/$f.folded 'main;do_round;hot_loop')
	short=$(chain_count /tmp/$f.folded 'main;hot_loop')
	echo "$f: hot_loop $all, main;do_round;hot_loop $full, main;hot_loop $short"
	eval "all_$f=$all full_$f=$full short_$f=$short"
done
[ "$all_r" -gt 0 ] && [ $((full_r * 100)) -ge $((all_r * 90)) ]
check $? "cycread: do_round restored in $full_r of $all_r hot_loop samples (>= 90 %)"
[ "$all_n" -gt 0 ] && [ $((short_n * 100)) -ge $((all_n * 90)) ]
check $? "--no-leaf-repair: main;hot_loop in $short_n of $all_n (>= 90 %)"
[ "$all_p" -gt 0 ] && [ $((short_p * 100)) -ge $((all_p * 90)) ]
check $? "perfsample: main;hot_loop in $short_p of $all_p (>= 90 %)"
