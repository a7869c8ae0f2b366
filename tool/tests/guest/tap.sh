# SPDX-License-Identifier: GPL-2.0
#
# tap.sh - numbered TAP for the guest scripts (tests/guest/e2e-guest.sh,
# tests/guest/shares-guest.sh, tests/guest/told-guest.sh) and the host's
# checks in tests/guest-e2e.sh, sourced.  POSIX sh.

n=0
failed=0

# check STATUS TEXT: "ok N - TEXT" when STATUS is 0, else "not ok N - TEXT"
# and one more in $failed
check()
{
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - $2"
	else
		failed=$((failed + 1))
		echo "not ok $n - $2"
	fi
}
