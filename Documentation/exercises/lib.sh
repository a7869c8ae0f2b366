# SPDX-License-Identifier: GPL-2.0
#
# lib.sh - what the exercises' checks share, sourced by each check.sh.  In
# the guest run.sh sets: EX (the exercise's directory, also the current
# one), CYCREAD, SELFTESTS and DEMO (what the solution built, or the
# originals), LIB (this file).

. "$(dirname "$LIB")/folded.sh"

# check STATUS WHAT: one TAP line, numbered by run.sh
check()
{
	if [ "$1" -eq 0 ]; then
		echo "ok - $2"
	else
		echo "not ok - $2"
	fi
}

# between VALUE LOW HIGH: LOW <= VALUE <= HIGH (integers)
between()
{
	[ -n "$1" ] && [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]
}

# field NAME REPORT: the number after "NAME: " in a cycread or perfsample
# report header ("# samples: 902, lost: 0, ..." -> field lost FILE = 0)
field()
{
	sed -n "s/^#.*[ ,]$1: \([0-9][0-9]*\).*/\1/p" "$2" | head -n 1
}

# run_ms REPORT: the run time on a cycread report's first line
# ("# cycread 0.1.0: pid 106 (./demo 100), 0.62 s, ..." -> 620)
run_ms()
{
	sed -n 's/^# cycread [^,]*, \([0-9]*\)\.\([0-9][0-9]\) s,.*/\1\20/p' "$1" | head -n 1 |
		sed 's/^0*\([0-9]\)/\1/'
}

# selftest NAME TEST: run one test of a selftest binary (its output goes
# to /tmp/NAME-TEST.out); exit status 0 when it passed, 1 when it failed,
# 2 when it skipped, 3 when it did not run at all
selftest()
{
	out=/tmp/$1-$2.out
	"$SELFTESTS/$1" -t "$2" >"$out" 2>&1
	if grep -q "^ok 1 .*\.$2 # SKIP" "$out"; then
		return 2
	elif grep -q "^ok 1 .*\.$2\$" "$out"; then
		return 0
	elif grep -q "^not ok 1 .*\.$2" "$out"; then
		return 1
	fi
	return 3
}

# check_selftest passes|fails NAME TEST: one check line saying whether one
# test of a selftest binary passed or failed as the exercise predicts
check_selftest()
{
	selftest "$2" "$3"
	rc=$?
	grep Expected "/tmp/$2-$3.out" | head -n 2
	case $1 in
	passes) [ $rc -eq 0 ] ;;
	*) [ $rc -eq 1 ] ;;
	esac
	check $? "${2%_test}.$3 $1 (status $rc)"
}
