# SPDX-License-Identifier: GPL-2.0
# Exercise 6: return addresses kept with their pointer-authentication codes.
. "$LIB"
check_selftest fails sampling_test user_chain_strips_pointer_authentication
cd "$DEMO" || exit 1
$CYCREAD --folded --weight samples -- ./demo 50 >/tmp/d.folded 2>/dev/null
all=$(leaf_count /tmp/d.folded hot_loop)
full=$(chain_count /tmp/d.folded 'main;do_round;hot_loop')
[ "$all" -gt 0 ] && [ $((full * 100)) -ge $((all * 90)) ]
check $? "the demo's chains are still whole ($full of $all): it signs no return address"
