# SPDX-License-Identifier: GPL-2.0
# Exercise 8: perfsample asks for the user LR and restores the leaf's caller.
. "$LIB"
cd "$DEMO" || exit 1
./perfsample -g --folded -- ./demo 50 >/tmp/p.folded 2>/tmp/p.err
cat /tmp/p.err
all=$(leaf_count /tmp/p.folded hot_loop)
full=$(chain_count /tmp/p.folded 'main;do_round;hot_loop')
[ "$all" -gt 0 ] && [ $((full * 100)) -ge $((all * 90)) ]
check $? "perfsample: main;do_round;hot_loop in $full of $all hot_loop samples (>= 90 %)"
all=$(leaf_count /tmp/p.folded warm_inner)
full=$(chain_count /tmp/p.folded 'do_round;warm_outer;warm_inner')
[ "$all" -gt 0 ] && [ $((full * 100)) -ge $((all * 90)) ]
check $? "and warm_outer restored under warm_inner in $full of $all"
