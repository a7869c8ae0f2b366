# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2154  # the caller sets top, work, rows, failures, kcol, scol
#
# check-lib.sh - what scripts/check and scripts/check-debug share: the rows of
# the summary table, build-like steps, TAP counting, the failure list and the
# summary itself.  Sourced, not run.  The caller sets:
#   top       the tree's top directory
#   work      the directory for logs
#   rows      the file of summary rows (KERNEL|SUITE|PASS|FAIL|SKIP)
#   failures  the file of failure details printed after the summary
#   kcol      width of the KERNEL column (14 for check, 11 for check-debug)
#   scol      width of the SUITE column

# row KERNEL SUITE PASS FAIL SKIP
row()
{
	printf '%s|%s|%s|%s|%s\n' "$@" >>"$rows"
}

# step KERNEL NAME CMD...: run a build-like step with its output in a log;
# one pass or one fail.  The log is shown when the step fails.
step()
{
	local kernel=$1 name=$2 log t0 rc
	shift 2

	log=$work/$(echo "$kernel-$name" | tr -c 'A-Za-z0-9._\n-' '_').log
	t0=$(date +%s)
	"$@" >"$log" 2>&1
	rc=$?
	if ((rc == 0)); then
		printf "ok   %-${kcol}s %-34s %4ss\n" "$kernel" "$name" "$(($(date +%s) - t0))"
		row "$kernel" "$name" 1 0 0
	else
		printf "FAIL %-${kcol}s %-34s %4ss (log: %s)\n" "$kernel" "$name" \
			"$(($(date +%s) - t0))" "${log#"$top"/}"
		tail -n 40 "$log" | sed 's/^/    /'
		row "$kernel" "$name" 0 1 0
		failure_lines "$kernel" "$name" "$log" 6
	fi
	return $rc
}

# failure_lines KERNEL NAME FILE N: the last N lines of a failed step's log
# for the failure list (a build error's own lines come last).
failure_lines()
{
	{
		echo "$1 $2: failed; the end of ${3#"$top"/}:"
		tail -n "$4" "$3" | cut -c1-160 | sed 's/^/    /'
	} >>"$failures"
}

# failed_cases KERNEL SUITE FILE: keep the failed cases of one TAP stream,
# each with the last two diagnostic lines before it, for the summary: the
# end of the output then says which tests failed and why.
failed_cases()
{
	awk -v k="$1" -v suite="$2" '
		/^#/ { d1 = d2; d2 = $0; next }
		/^not ok .*# *[Tt][Oo][Dd][Oo]/ { next }
		/^(not ok |Bail out!)/ {
			print k " " suite ": " $0
			if (d1 != "") print "    " substr(d1, 1, 160)
			if (d2 != "") print "    " substr(d2, 1, 160)
		}
		{ d1 = d2 = "" }
	' "$3" >>"$failures"
}

# guest_row KERNEL STATUS LOG: the row "guest: load, dmesg, rmmod" of one
# boot.  When it fails, the failure list gets scripts/cycsample-vm's own
# verdict lines from LOG: the timeout, the kernel's splat (the first lines
# of it), a failed insmod or rmmod, the taint, so that the end of the
# output says why and not only that.
guest_row()
{
	local k=$1 st=$2 log=$3

	if ((st == 0)); then
		row "$k" "guest: load, dmesg, rmmod" 1 0 0
		return
	fi
	row "$k" "guest: load, dmesg, rmmod" 0 1 0
	{
		echo "$k guest: load, dmesg, rmmod: exit $st"
		grep -E '^(cycsample-vm: |  ! )' "$log" | head -n 16 | cut -c1-160 |
			sed 's/^/    /'
	} >>"$failures"
}

# tap_counts FILE STATUS -> "pass fail skip" of one suite's TAP stream; a
# suite that never finished or exited non-zero without a failed case fails.
tap_counts()
{
	awk -v status="$2" '
		/^ok [0-9]+.*# *[Ss][Kk][Ii][Pp]/ { skip++; next }
		/^ok / { pass++; next }
		/^not ok .*# *[Tt][Oo][Dd][Oo]/ { next }
		/^not ok / { fail++; next }
		/^1\.\.0 .*# *[Ss][Kk][Ii][Pp]/ { wholeskip = 1; next }
		/^Bail out!/ { fail++; next }
		END {
			n = pass + fail + skip
			if (status == "") {
				fail++		# the suite never finished
			} else if (status != 0 && fail == 0) {
				if (status == 4 && pass == 0)
					skip++	# KSFT_SKIP
				else
					fail++	# a crash or a bad exit after the cases
			} else if (n == 0) {
				if (wholeskip) skip++; else pass++
			}
			printf "%d %d %d\n", pass, fail, skip
		}' "$1"
}

# summary SECONDS: the table, the failure list again after it, and the last
# line "N passed, N failed"; returns non-zero on any failure.
summary()
{
	local passed failed

	echo
	echo "== summary ($1s)"
	awk -F'|' -v kcol="$kcol" -v scol="$scol" '
		BEGIN { fmt = "%-" kcol "s %-" scol "s"; printf fmt " %6s %6s %6s\n", "KERNEL", "SUITE", "PASS", "FAIL", "SKIP" }
		{
			printf fmt " %6d %6d %6d%s\n", $1, $2, $3, $4, $5, ($4 > 0 ? "  <--" : "")
			p += $3; f += $4; s += $5
		}
		END { printf fmt " %6d %6d %6d\n", "total", "", p, f, s }
	' "$rows"
	passed=$(awk -F'|' '{ n += $3 } END { print n + 0 }' "$rows")
	failed=$(awk -F'|' '{ n += $4 } END { print n + 0 }' "$rows")
	if ((failed > 0)); then
		# Again, after the long table: what failed, and why.
		echo
		echo "== failed"
		awk -F'|' '$4 > 0 { printf "%s %s: %d failed\n", $1, $2, $4 }' "$rows"
		head -n 60 "$failures"
	fi
	echo "$passed passed, $failed failed"
	((failed == 0 && passed > 0))
}
