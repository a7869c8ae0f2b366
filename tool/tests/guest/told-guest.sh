#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# told-guest.sh - children of CMD that exec while the module writes MMAP
# records cost the workload no read of /proc: their EXEC record names them
# and their MMAP records tell every mapping since (tool/session.c,
# first_sample()).  Run by tests/guest-e2e.sh in the -icount boot of
# shares-guest.sh.  Prints TAP; exits non-zero when a check failed.
#
# Why -icount: a child is read when it was sampled between its fork and its
# exec (the reader is woken for it, and /proc then still shows what it
# inherited).  Under plain TCG that window took 62 ms of the guest's time
# on arm64 6.1, so every child fell in it; under -icount it is about 0.5 ms,
# a 1 in 8 chance at 250 Hz.  cycread reads the maps of CMD once, before
# START; six children that each read them make seven reads, the rule
# broken.  Four or fewer pass: four or more of six children sampled before
# their exec is about 1 in 330 at that chance, and -icount makes a run
# repeat itself on the same kernel.  The reader must
# see each child's samples while it lives (a read of a process gone fails
# and is not counted): the demo's 100 rounds and a 32 KiB ring, half of
# which wakes the reader, give each child several drains.  All on CPU 0:
# unpinned, a CI run on arm64 6.1 with two PMUs sampled every child before
# its exec (seven reads), pinned one read; probably a child's counter for
# the other CPU's PMU, whose event never ran in the parent, starts with
# the short first period of a frequency event.
#
# Then children that never exec (subshells of sh): the module's FORK
# records say each has its parent's maps, which cycread copies
# (tool/maps.c, maps_fork()), so the only read is CMD's before START.
# Without FORK records each sampled child is read at its first sample.

C=/cycsample/cycread
D=/mnt/add
T=/tmp/told
KIDS=6
mkdir -p $T
# check (numbered TAP)
. "$(dirname "$0")/tap.sh"
# chain_count
. "$(dirname "$0")/folded.sh"

echo "# children that exec, on $(uname -r) $(uname -m)"
taskset -c 0 $C -v -F 250 -m 32K --folded -- sh -c "i=0; while [ \$i -lt $KIDS ]; do $D/demo 100 >/dev/null; \
i=\$((i + 1)); done" >$T/kids.folded 2>$T/kids.err
check $? "cycread -v -- sh running the demo $KIDS times: exit 0"
line=$(grep "while recording:" $T/kids.err)
echo "# $line"
reads=$(echo "$line" | sed -n 's/.* \([0-9]*\) reads of \/proc\/PID\/maps.*/\1/p')
mrec=$(echo "$line" | sed -n 's/.* \([0-9]*\) MMAP records.*/\1/p')
[ "$(chain_count $T/kids.folded 'main;do_round;hot_loop')" -gt 0 ]
check $? "the children's samples resolve"
if [ "${mrec:-1}" != 0 ]; then
	[ "${reads:-99}" -le $((KIDS - 2)) ]
	check $? "$KIDS children that exec'd: ${reads:-?} reads of /proc/PID/maps (at most $((KIDS - 2)))"
else
	echo "ok $((n + 1)) # SKIP the module writes no MMAP records here"
	n=$((n + 1))
fi
echo "# children that do not exec"
taskset -c 0 $C -v -F 250 -m 32K --folded -- sh -c "k=0; while [ \$k -lt $KIDS ]; do \
( i=0; while [ \$i -lt 20000 ]; do i=\$((i + 1)); done ); k=\$((k + 1)); done" \
	>$T/forks.folded 2>$T/forks.err
check $? "cycread -v -- sh running $KIDS subshells: exit 0"
line=$(grep "while recording:" $T/forks.err)
echo "# $line"
reads=$(echo "$line" | sed -n 's/.* \([0-9]*\) reads of \/proc\/PID\/maps.*/\1/p')
forks=$(echo "$line" | sed -n 's/.* \([0-9]*\) processes with their parent.s maps.*/\1/p')
# the user pc of each sample (the last frame that is not the kernel's) is
# looked up in the maps copied from the parent; the frames above it come
# from frame records, which x86_64's busybox does not keep
unknown=$(awk '{ c = $NF; s = $0; sub(/ [0-9]+$/, "", s); k = split(s, fr, ";");
	while (k > 1 && fr[k] ~ /_\[k\]$/) k--; if (fr[k] == "[unknown]") u += c; t += c }
	END { print int(u * 100 / (t ? t : 1)) }' $T/forks.folded)
[ "${unknown:-100}" -le 5 ]
check $? "the subshells' samples resolve (${unknown:-?} % with an unknown user pc, at most 5)"
if [ "${mrec:-1}" != 0 ]; then
	[ "${reads:-99}" -le 1 ] && [ "${forks:-0}" -ge $((KIDS - 2)) ]
	check $? "$KIDS children without an exec: ${reads:-?} reads of /proc/PID/maps (at most 1), \
${forks:-?} told by FORK records (at least $((KIDS - 2)))"
else
	echo "ok $((n + 1)) # SKIP the module writes no MMAP records here"
	n=$((n + 1))
fi
echo "# told: $n checks, $failed failed"
[ "$failed" -eq 0 ]
