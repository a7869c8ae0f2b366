#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# e2e-guest.sh ARCH - cycread end to end against the real module, run inside
# a guest by tests/guest-e2e.sh with the demo programs in /mnt/add.  Prints
# TAP; exits non-zero when a check failed.
#
# The demo's shares against its model are checked in a boot of their own
# under -icount (tests/guest/shares-guest.sh says why); here the samples
# only have to be enough, and the period weighting exact: the table's share
# equals the periods that --raw prints, summed.  Shares among the samples
# also decide which function perfsample and cycread both put on top.
#
# Files the host checks (the pprof file and the tables go tool pprof must
# agree with, a capture of kernel code) are printed base64-encoded between
# "#-- file NAME" and "#-- end NAME", each line as a "#= " TAP comment.

arch=${1:-arm64}
C=/cycsample/cycread
D=/mnt/add
T=/tmp/e2e
mkdir -p $T
# check (numbered TAP)
. "$(dirname "$0")/tap.sh"
# leaf_count, chain_count, share10, top_leaf, within
. "$(dirname "$0")/folded.sh"

echo "# cycread end-to-end on $(uname -r) $(uname -m)"
echo "# event in use and module: $(cat /sys/module/cycsample/version 2>/dev/null)"

# 1. the demo, recorded with a capture file and a flame graph
$C -o $T/demo.cyc --svg $T/demo.svg -- $D/demo >$T/top.txt 2>$T/top.err
check $? "cycread -- demo: exit 0"
sed 's/^/# /' $T/top.txt | head -16
grep -q "command exited with status 0" $T/top.txt
check $? "report names the command's exit status"
grep -q "libdemo.so  *lib_checksum" $T/top.txt
check $? "shared-library function named with its file (libdemo.so lib_checksum)"
$C report -i $T/demo.cyc --folded >$T/demo.folded
check $? "report -i capture --folded"
$C report -i $T/demo.cyc --folded --weight samples >$T/demo-n.folded
work=$(( $(leaf_count $T/demo-n.folded hot_loop) + $(leaf_count $T/demo-n.folded lib_checksum) +
	 $(leaf_count $T/demo-n.folded warm_inner) + $(leaf_count $T/demo-n.folded tiny_leaf) ))
[ "$work" -ge 500 ]
check $? "at least 500 samples in the work functions ($work)"
# the event the session used: cycles, or cpu-clock where there is no PMU
ev=$(sed -n 's/^# event: \([a-z-]*\).*/\1/p' $T/top.txt | head -n 1)
grep -q "Self $ev  Samples" $T/top.txt && grep -q "^# total: [0-9]* samples, [0-9]* $ev\$" $T/top.txt
check $? "the table weighs by period and says so (Self $ev, total $ev)"
# hot_loop's share of cycles from --raw's periods (the sampled frame first)
$C report -i $T/demo.cyc --raw >$T/raw.txt
# (the event, "PMU/event/" on a guest with two PMUs)
want=$(awk -v ev="$ev" '$0 ~ "^demo .*: [0-9]+ (" ev "|[a-z0-9_]+/" ev "/):$" { p = $(NF - 1); t += p; first = 1; next }
	first && /^\t/ { if ($0 ~ / hot_loop\+0x/) h += p; first = 0 }
	END { if (t) printf "%.2f%%", 100 * h / t }' $T/raw.txt)
got=$($C report -i $T/demo.cyc | awk '$NF == "hot_loop" && $3 == "demo" { print $1 }')
[ -n "$want" ] && [ "$got" = "$want" ]
check $? "hot_loop's Self cycles $got is its periods' share in --raw ($want)"
for ch in main:do_round:hot_loop main:do_round:lib_checksum \
	  main:do_round:warm_phase_[i]:warm_outer:warm_inner main:do_round:tiny_leaf; do
	chain=$(echo "$ch" | tr : ';')
	leaf=${ch##*:}
	all=$(leaf_count $T/demo.folded "$leaf")
	good=$(chain_count $T/demo.folded "$chain")
	[ "$all" -gt 0 ] && [ $((good * 100)) -ge $((all * 90)) ]
	check $? "complete chain $chain in $good of $all cycles (>= 90 %)"
done
if [ "$arch" = arm64 ]; then
	$C report -i $T/demo.cyc --folded --no-leaf-repair >$T/noleaf.folded
	all=$(leaf_count $T/noleaf.folded hot_loop)
	good=$(chain_count $T/noleaf.folded "main;do_round;hot_loop")
	[ "$all" -gt 0 ] && [ $((good * 100)) -lt $((all * 10)) ]
	check $? "without leaf repair do_round is missing ($good of $all): the repair matters"
	grep -q "leaf-caller repair: caller inserted" $T/top.txt
	check $? "report counts the leaf-caller repairs"
fi
grep -Eq "^demo [0-9]+/[0-9]+ \[[0-9]+\] [0-9]+\.[0-9]+: [0-9]+ ($ev|[a-z0-9_]+/$ev/):\$" $T/raw.txt &&
	grep -q "hot_loop+0x[0-9a-f]* (/mnt/add/demo)$" $T/raw.txt
check $? "--raw: perf script's sample header and 'symbol+0xoff (file)' frames"
! grep -q "EXEC\|EXIT" $T/raw.txt && $C report -i $T/demo.cyc --raw --show-task-events |
	grep -q ": EXEC demo$"
check $? "--raw: EXEC and EXIT only with --show-task-events"
$C report -i $T/demo.cyc -G --symbol hot_loop >$T/tree.txt
grep -q "^           ---" $T/tree.txt && grep -A8 -- "---" $T/tree.txt | grep -q "do_round" &&
	grep -A8 -- "---" $T/tree.txt | grep -q "hot_loop"
check $? "-G --symbol hot_loop: a caller tree through do_round down to hot_loop"
$C report -i $T/demo.cyc --histogram >$T/hist.txt
hist=$(awk '/^  *[0-9.]+ +[0-9.]+ +[0-9]+ / { n += $3 } END { print n + 0 }' $T/hist.txt)
tot=$(sed -n 's/^# total: \([0-9]*\) samples.*/\1/p' $T/hist.txt)
[ "$hist" -gt 0 ] && [ "$hist" = "$tot" ]
check $? "--histogram: the seconds' samples add up to the total ($hist of $tot)"
want=$(awk '/^  *[0-9.]+ +[0-9.]+ +[0-9]+ / && $1 >= 1 { n += $3 } END { print n + 0 }' $T/hist.txt)
$C report -i $T/demo.cyc --time 1, --weight samples >$T/slice.txt 2>$T/slice.err
st=$?
if [ "$want" -eq 0 ]; then
	# a run shorter than a second (the x86_64 guest's software clock): nothing from 1 s on
	[ $st -eq 1 ] && grep -q "no sample in that slice" $T/slice.err
	check $? "--time 1, after a run of under a second: exit 1, 'no sample in that slice'"
else
	sl=$(sed -n 's/^# total: \([0-9]*\) samples.*/\1/p' $T/slice.txt)
	[ "$sl" = "$want" ]
	check $? "--time 1,: the samples of the histogram's seconds from 1 on ($sl of $want)"
fi
$C report -i $T/demo.cyc --comm nosuch >/dev/null 2>$T/comm.err
[ $? -eq 1 ] && grep -q "no sample has that command (demo" $T/comm.err
check $? "--comm of no sample: exit 1 naming the commands there are"
$C report -i $T/demo.cyc --pprof $T/demo.pb.gz -q && [ -s $T/demo.pb.gz ]
check $? "report -i capture --pprof FILE"
$C report -i $T/demo.cyc --sort sym --children >$T/pp-period.txt
$C report -i $T/demo.cyc --sort sym --children --weight samples >$T/pp-samples.txt
for f in demo.pb.gz pp-period.txt pp-samples.txt; do
	echo "#-- file $f"
	base64 $T/$f | sed 's/^/#= /'
	echo "#-- end $f"
done
# source lines and inline frames (DWARF of the demo, which is built with -g):
# perf script prints no source line by default, --raw-details does
$C report -i $T/demo.cyc --raw --raw-details >$T/rawd.txt
grep -q "hot_loop+0x[0-9a-f]* (/mnt/add/demo) .*demo\.c:[0-9][0-9]*" $T/rawd.txt
check $? "--raw --raw-details: a source line on the demo's frames (demo.c:N)"
grep -q "warm_phase (inlined)$" $T/raw.txt &&
	grep -q "warm_phase (inlined) .*demo\.c:[0-9][0-9]*" $T/rawd.txt
check $? "--raw: the inlined warm_phase as an inline frame (with its line in --raw-details)"
# module code: 500 opens of /dev/cycsample put cycsample.ko's own open and
# release path in the kernel chains (0.4 s of guest time under -icount; 4 kHz
# for enough samples there); with --kmod-dir its frames get the .ko's
# function and source line, and the capture keeps them (reported without it)
$C -o $T/kmod.cyc -F 4000 --kmod-dir /cycsample -- sh -c \
	'i=0; while [ $i -lt 500 ]; do : </dev/cycsample; i=$((i + 1)); done' >/dev/null 2>&1
$C report -i $T/kmod.cyc --raw --raw-details >$T/kmod.txt 2>&1
grep -q "cycs_[a-z_]*+0x[0-9a-f]* (\[cycsample\]) .*module/[a-z_]*\.c:[0-9][0-9]*" $T/kmod.txt
check $? "--kmod-dir: cycsample.ko's frames with a function and a source line ($(grep -c \
	"(\[cycsample\]) .*\.c:[0-9]" $T/kmod.txt) of $(grep -c "(\[cycsample\])" $T/kmod.txt))"
# the kernel's own code: the guest has no vmlinux, but the capture holds the
# running kernel's build-id (from /sys/kernel/notes), by which a file of
# another build (here the module, named as a vmlinux) is refused
$C report -i $T/kmod.cyc --vmlinux /cycsample/cycsample.ko >/dev/null 2>$T/vml.err
grep -q "cycsample.ko: not the build of the kernel the capture recorded" $T/vml.err
check $? "--vmlinux of another build: refused by the build-id the capture took from the kernel"
# and for the host, which has the kernel's vmlinux (too large for the guest):
# the kernel frames of this capture get their lines there (guest-e2e.sh)
echo "#-- file kmod.cyc"
base64 $T/kmod.cyc | sed 's/^/#= /'
echo "#-- end kmod.cyc"
$C report -i $T/demo.cyc --sort srcline >$T/srcline.txt 2>&1
grep -q "demo\.c:[0-9][0-9]*" $T/srcline.txt
check $? "--sort srcline: rows by demo.c:line"
head -c 9 $T/demo.svg | grep -q "<?xml" && tail -c 8 $T/demo.svg | grep -q "</svg>" &&
	grep -q "hot_loop" $T/demo.svg
check $? "--svg written, complete, names hot_loop"
head -c 300 $T/demo.cyc >$T/cut.cyc
$C report -i $T/cut.cyc >/dev/null 2>$T/cut.err
[ $? -eq 1 ] && grep -q truncated $T/cut.err
check $? "truncated capture: exit 1 and 'truncated'"

# 1b. a stripped library without debug files: its functions told apart by
# .eh_frame, each named for its start (an FDE start that readelf lists)
$C --folded -- $D/lzmawork 2 >$T/lzma.folded 2>$T/lzma.err
check $? "cycread -- lzmawork (liblzma at preset 6, as xz -6): exit 0"
# leaf frames of the folded stacks: "NAME COUNT" per line
awk '{ c = $NF; s = $0; sub(/ [0-9]+$/, "", s); k = split(s, fr, ";"); print fr[k], c }' \
	$T/lzma.folded >$T/lzma.leaves
grouped=$(awk '$1 ~ /^liblzma\.so\.5[.0-9]*\+0x[0-9a-f]+$/ { t += $2 } END { print t + 0 }' \
	$T/lzma.leaves)
ungrouped=$(awk '$1 ~ /^\[liblzma/ { t += $2 } END { print t + 0 }' $T/lzma.leaves)
sed -n 's/^liblzma\.so\.5[.0-9]*+0x\([0-9a-f]*\) .*/\1/p' $T/lzma.leaves | sort -u >$T/lzma.starts
echo "# liblzma leaf samples: $grouped grouped by .eh_frame, $ungrouped ungrouped;" \
	"$(wc -l <$T/lzma.starts) functions"
[ "$grouped" -ge 50 ] && [ $((ungrouped * 10)) -le "$grouped" ] && [ "$(wc -l <$T/lzma.starts)" -ge 3 ]
check $? "liblzma: >= 90 % of its samples grouped into >= 3 functions (not one [liblzma] row)"
bad=$(grep -vxFf $D/lzma-fdes.txt $T/lzma.starts | head -3)
[ -s $T/lzma.starts ] && [ -z "$bad" ]
check $? "every liblzma group is named for an FDE start ($bad)"

# 2. attach to a running process, by pid and by thread
$D/demo 100000 >/dev/null &
pid=$!
sleep 1
$C -p $pid -d 2 --folded >$T/p.folded 2>$T/p.err
check $? "-p PID -d 2: exit 0"
[ "$(leaf_count $T/p.folded hot_loop)" -gt 0 ]
check $? "-p PID: hot_loop sampled"
$C -t $pid -d 1 --folded >$T/t.folded 2>/dev/null
[ "$(leaf_count $T/t.folded hot_loop)" -gt 0 ]
check $? "-t TID: hot_loop sampled"
# -p wants a process: a thread's id is refused naming the thread's process
$D/twothreads >$T/tt.out &
ttpid=$!
i=0
while [ $i -lt 100 ] && ! [ -s $T/tt.out ]; do
	sleep 0.2
	i=$((i + 1))
done
tid=$(head -n 1 $T/tt.out)
$C -p "$tid" -d 1 >/dev/null 2>$T/tt.err
rc=$?
[ $rc -eq 1 ] && grep -q "pid $tid: a thread of process $ttpid: use -t $tid or -p $ttpid" $T/tt.err
check $? "-p TID of a thread: exit 1 naming its process ($rc: $(tail -n 1 $T/tt.err))"
kill $ttpid
wait $ttpid 2>/dev/null
$C -p $pid -d 1 --user-only --folded >$T/u.folded 2>/dev/null
[ -s $T/u.folded ] && ! grep -q '_\[k\]' $T/u.folded
check $? "--user-only: no kernel frames"
$C -p $pid -d 1 --no-call-graph --folded >$T/ng.folded 2>/dev/null
# One address per sample: "comm;function", and the functions inlined at
# that address after it, marked _[i] ("demo;do_round;warm_phase_[i]").
one_frame='{ s = $0; sub(/ [0-9]+$/, "", s); if (gsub(";", ";", s) - gsub(/_\[i\]/, "", s) != 1) bad = 1 }'
[ -s $T/ng.folded ] && ! awk "$one_frame"' END { exit bad ? 0 : 1 }' $T/ng.folded
rc=$?
[ $rc -eq 0 ] || { wc -l <$T/ng.folded; awk "$one_frame"' bad { print; bad = 0 }' $T/ng.folded |
	head -n 5; } | sed 's/^/# ng.folded: /'
check $rc "--no-call-graph: one frame per sample (and the functions inlined there)"
# Without chains the module writes 48-byte SAMPLE_PC records
# (CYCSAMPLE_CFG_PC_ONLY, 512 in the capture's config_flags), kept as
# samples with no sp, fp or lr.
$C -p $pid -d 1 --no-call-graph -q -o $T/ng.cyc >/dev/null 2>&1
f=$(head -c 8192 $T/ng.cyc | grep -a '^config_flags=' | head -n 1 | cut -d= -f2)
$C report -i $T/ng.cyc --raw --raw-details >$T/ng.raw 2>/dev/null
[ $((${f:-0} & 512)) -ne 0 ] && grep -q ' user pc 0x' $T/ng.raw &&
	grep -q hot_loop $T/ng.raw && ! grep -q ' sp 0x' $T/ng.raw
check $? "--no-call-graph: SAMPLE_PC records (config_flags ${f:-none}), no sp/fp/lr in --raw-details"
$C -p $pid -d 1 -c 2000000 >$T/c.txt 2>/dev/null
grep -q "period 2000000" $T/c.txt
check $? "-c PERIOD shown in the report"
rate=/proc/sys/kernel/perf_event_max_sample_rate
oldrate=$(cat $rate)
echo 500 >$rate
$C -p $pid -d 1 -F 4000 --folded >$T/f.folded 2>$T/f.err
echo "$oldrate" >$rate
grep -q "sampling at 500 Hz, not 4000 Hz" $T/f.err && [ -s $T/f.folded ]
check $? "-F above perf_event_max_sample_rate: lowered to it, as perf does"
$C -a -d 1 --folded >$T/a.folded 2>/dev/null
[ "$(awk -F';' '{ print $1 }' $T/a.folded | sort -u | wc -l)" -ge 2 ] && grep -q '_\[k\]' $T/a.folded
check $? "-a: several commands and kernel frames"
kill $pid
wait $pid 2>/dev/null

# 2b. in a PID namespace with its own /proc, as in a container: the records
# number processes as that namespace does, so cycread finds their maps
# there (the module's numbers from outside named nothing there: no symbol)
if unshare -p -f -m --mount-proc true 2>/dev/null; then
	unshare -p -f -m --mount-proc sh -c "$D/demo 100000 >/dev/null & p=\$!; sleep 1;
		$C -p \$p -d 2 --folded; st=\$?; kill \$p; exit \$st" >$T/ns.folded 2>$T/ns.err
	rc=$?
	[ $rc -eq 0 ] && [ "$(leaf_count $T/ns.folded hot_loop)" -gt 0 ]
	check $? "-p PID inside a PID namespace: hot_loop sampled and named ($rc)"
	# -a there: a process outside is pid 0 in the records, its code not looked up
	$D/demo 100000 >/dev/null &
	opid=$!
	unshare -p -f -m --mount-proc $C -a -d 1 >$T/nsa.txt 2>&1
	rc=$?
	kill $opid
	wait $opid 2>/dev/null
	[ $rc -eq 0 ] && grep -q "unresolved frames: .*process outside this PID namespace (pid 0): [1-9]" \
		$T/nsa.txt && ! grep -q "hot_loop" $T/nsa.txt
	check $? "-a inside a PID namespace: a process outside counted as such, not named ($rc)"
else
	for what in "-p PID" "-a"; do
		n=$((n + 1))
		echo "ok $n - $what inside a PID namespace # SKIP unshare -p fails here"
	done
fi

# 3. Ctrl-C stops cleanly and still reports
$C -- $D/demo 100000 >$T/int.txt 2>$T/int.err &
cpid=$!
sleep 3
kill -INT $cpid
wait $cpid
rc=$?
[ $rc -eq 0 ] && grep -q hot_loop $T/int.txt && grep -q "stopped by signal" $T/int.err
check $? "SIGINT: exit 0, report printed ($rc)"

# 4. the command's fate
$C -- sh -c 'exit 3' >$T/x.txt 2>/dev/null
grep -q "command exited with status 3" $T/x.txt
check $? "exit status of CMD reported"
$C -- /nonexistent/prog >/dev/null 2>$T/ne.err
[ $? -eq 1 ] && grep -q "No such file" $T/ne.err
check $? "CMD that cannot exec: exit 1 with the cause"
# started with SIGCHLD ignored (which auto-reaps children), cycread still
# waits for CMD and reports its status
$D/sigchld-ignored $C -- sh -c 'exit 3' >$T/chld.txt 2>/dev/null
grep -q "command exited with status 3" $T/chld.txt
check $? "SIGCHLD ignored by cycread's parent: CMD's exit status still reported"
# CMD runs with the limits it was given (cycread raises its own fd limit)
$C -q -- sh -c 'ulimit -Sn' >$T/nofile.txt 2>/dev/null
want=$(sh -c 'ulimit -Sn')
[ "$(head -n 1 $T/nofile.txt)" = "$want" ]
check $? "CMD keeps its soft fd limit ($(head -n 1 $T/nofile.txt), want $want)"
# a CMD that ignores SIGTERM once -d has stopped the session: named after
# 5 s, and killed at a second signal, the report printed (a watchdog kills
# a cycread that would wait on)
$C -d 1 -- sh -c 'trap "" TERM; while :; do :; done' >$T/term.txt 2>$T/term.err &
cpid=$!
(sleep 120 && kill -9 $cpid) 2>/dev/null &
wd=$!
i=0
while [ $i -lt 300 ] && ! grep -q "still runs 5 s after SIGTERM" $T/term.err; do
	sleep 0.2
	i=$((i + 1))
done
kill -INT $cpid
wait $cpid
rc=$?
kill $wd 2>/dev/null
[ $rc -eq 0 ] && grep -q "killed at a second signal" $T/term.err && grep -q "Self" $T/term.txt
check $? "-d 1 -- CMD ignoring SIGTERM: named after 5 s, killed at Ctrl-C, reported (rc $rc)"
# --no-fallback: cycles where the PMU can (arm64), a clear error where it
# cannot (the x86_64 guest has no PMU)
$C --no-fallback -q -- sh -c 'exit 0' >/dev/null 2>$T/nf.err
rc=$?
if ls /sys/bus/event_source/devices | grep -q armv8; then
	[ $rc -eq 0 ]
else
	[ $rc -eq 1 ] && grep -q "no-fallback forbids the software clock" $T/nf.err
fi
check $? "--no-fallback: cycles, or exit 1 naming the cause"
$C --folded -- sh -c "exec $D/demo 100" >$T/exec.folded 2>/dev/null
[ "$(chain_count $T/exec.folded 'main;do_round;hot_loop')" -gt 0 ]
check $? "EXEC during the session: the new program resolves"
$C --folded -- sh -c "$D/demo 60; $D/demo 60" >$T/kids.folded 2>/dev/null
[ "$(leaf_count $T/kids.folded hot_loop)" -gt 0 ]
check $? "short-lived children of CMD resolve"
# samples decoded after the run (tool/recqueue.h): where the module writes
# MMAP records, every sample of a short run waits in the queue, and the
# processes that come and go while it waits still resolve
$C -v -o $T/held.cyc --folded -- sh -c "$D/demo 60; $D/demo 60" >$T/held.folded 2>$T/held.err
held=$(sed -n 's/.*; \([0-9]*\) samples decoded after the run.*/\1/p' $T/held.err)
mrec=$(sed -n 's/.* \([0-9]*\) MMAP records.*/\1/p' $T/held.err)
total=$(head -c 8192 $T/held.cyc | grep -a "^samples=" | head -n 1 | cut -d= -f2)
if [ "${mrec:-0}" -gt 0 ]; then
	[ "${held:-x}" = "$total" ] && [ "$total" -gt 0 ] &&
		[ "$(chain_count $T/held.folded 'main;do_round;hot_loop')" -gt 0 ]
else
	[ "${held:-x}" = 0 ]
fi
check $? "samples held until the run ends: ${held:-?} of ${total:-?} (${mrec:-?} MMAP records), children resolve"
# the default ring is perf record's: perf_event_mlock_kb less a page, in a
# power of two of pages; 256 KiB where that is not more (tool/session.c)
kpage=$(awk '/^KernelPageSize:/ { print $2; exit }' /proc/self/smaps)
mlock=$(cat /proc/sys/kernel/perf_event_mlock_kb)
want=$(awk -v kb="$mlock" -v pg="${kpage:-4}" 'BEGIN { p = 1
	while (p * 2 * pg <= kb - pg && p * 2 * pg <= 16384) p *= 2
	print (p * pg > 256 ? p * pg : 256) }')
ring=$(sed -n 's/.* rings of \([0-9]*\) KiB, woken at \([0-9]*\) KiB$/\1 \2/p' $T/held.err)
[ "$ring" = "$want $((want / 2))" ]
check $? "default ring: ${ring:-?} KiB and its wakeup (want $want, ${kpage:-?} KiB pages, \
perf_event_mlock_kb $mlock)"
# the session lives while a child of CMD runs, also after CMD has exited
$C -v --folded -- sh -c "$D/demo 60 &" >$T/bg.folded 2>$T/bg.err
[ "$(chain_count $T/bg.folded 'main;do_round;hot_loop')" -gt 20 ]
st=$?
check $st "a child that outlives CMD is sampled until it ends ($(leaf_count $T/bg.folded hot_loop) in hot_loop)"
# seen once, under load, and not understood: keep what would explain it
[ $st -eq 0 ] || { awk '{ print $NF, $0 }' $T/bg.folded | sort -n -r | head -n 8
	tail -n 8 $T/bg.err; } | sed 's/^/# /'
# sampling starts at CMD's exec: nothing of cycread's own code in the child
own=$(grep -c '(/cycsample/cycread)' $T/raw.txt)
[ "$own" -eq 0 ]
check $? "no frame of cycread's own code in the profile of CMD ($own)"

# 5. a binary deleted while it runs
mkdir -p $T/del && cp $D/demo $D/libdemo.so $T/del/
$T/del/demo 100000 >/dev/null &
pid=$!
sleep 1
rm $T/del/demo
$C -p $pid -d 2 --folded >$T/del.folded 2>/dev/null
[ "$(chain_count $T/del.folded 'main;do_round;hot_loop')" -gt 0 ]
check $? "deleted binary still resolves (map_files)"
kill $pid
wait $pid 2>/dev/null

# 6. JIT code named through /tmp/perf-PID.map.  It failed in three loaded
# boots: the JIT page lay in a hole of ld.so's first MMAP record, drained
# after /proc showed the page (tool/maps.c:maps_prefer()).  On failure, say
# what cycread saw.
$C -v --folded -- $D/jitdemo 200 >$T/jit.folded 2>$T/jit.err
[ "$(leaf_count $T/jit.folded jit_spin)" -gt 0 ]
st=$?
check $st "JIT code named from /tmp/perf-PID.map"
if [ $st -ne 0 ]; then
	awk '{ print $NF, $0 }' $T/jit.folded | sort -rn | head -n 5 | sed 's/^/# folded: /'
	grep -i "jit\|perf-\|anon\|map" $T/jit.err | head -n 20 | sed 's/^/# stderr: /'
fi

# 7. kptr_restrict hides kernel addresses even from root: say so
old=$(cat /proc/sys/kernel/kptr_restrict)
echo 2 >/proc/sys/kernel/kptr_restrict
$C -- $D/demo 60 >$T/kptr.txt 2>/dev/null
echo "$old" >/proc/sys/kernel/kptr_restrict
grep -q "kernel addresses are hidden" $T/kptr.txt && grep -q '\[kernel\]' $T/kptr.txt
check $? "kptr_restrict=2: kernel frames shown as [kernel] with a note"

# 8. an unprivileged user profiles its own process (module unprivileged=1)
par=/sys/module/cycsample/parameters/unprivileged
if [ -w $par ] && command -v su >/dev/null; then
	oldp=$(cat $par)
	oldm=$(stat -c %a /dev/cycsample)
	oldpar=$(cat /proc/sys/kernel/perf_event_paranoid)
	echo 1 >$par
	echo 2 >/proc/sys/kernel/perf_event_paranoid
	chmod 666 /dev/cycsample
	mkdir -p $T/u && cp $D/demo $D/libdemo.so $T/u/ && chmod -R a+rx $T/u $T
	chmod a+rx /cycsample /cycsample/cycread
	su -s /bin/sh nobody -c "$C -- $T/u/demo 100" >$T/unpriv.txt 2>$T/unpriv.err
	rc=$?
	[ $rc -eq 0 ] && grep -q "user space only" $T/unpriv.err && grep -q hot_loop $T/unpriv.txt
	check $? "unprivileged: own process profiled, user space only, with a warning"
	su -s /bin/sh nobody -c "$C -p 1 -d 1" >/dev/null 2>$T/unpriv1.err
	[ $? -eq 1 ] && grep -q "pid 1: permission denied" $T/unpriv1.err
	check $? "unprivileged: someone else's process: 'pid 1: permission denied'"
	# Two refusals, one behind the other: kernel callchains (EACCES), then
	# perf's ring over the user's budget (EPERM).  perf_event_mlock_kb 1040
	# makes perf's ring 1 MiB; with CPU 1 offline the budget is 1040 KiB
	# (per online CPU) for rings on both possible CPUs, and without
	# RLIMIT_MEMLOCK nothing may go over it: the module's 256 KiB fit.
	cpu1=/sys/devices/system/cpu/cpu1/online
	oldmk=$(cat /proc/sys/kernel/perf_event_mlock_kb)
	if [ -w $cpu1 ] && echo 0 >$cpu1; then
		echo 1040 >/proc/sys/kernel/perf_event_mlock_kb
		su -s /bin/sh nobody -c "ulimit -l 0 && $C -v -- $T/u/demo 100" \
			>$T/unpriv2.txt 2>$T/unpriv2.err
		rc=$?
		echo 1 >$cpu1
		echo "$oldmk" >/proc/sys/kernel/perf_event_mlock_kb
		[ $rc -eq 0 ] && grep -q "user space only" $T/unpriv2.err &&
			grep -q "default ring exceeds the memory you may lock" $T/unpriv2.err &&
			grep -q hot_loop $T/unpriv2.txt
		st=$?
		check $st "unprivileged, CPU 1 offline: user space only and the module's ring"
		[ $st -eq 0 ] || sed 's/^/# stderr: /' $T/unpriv2.err | tail -n 8
	fi
	echo "$oldp" >$par
	echo "$oldpar" >/proc/sys/kernel/perf_event_paranoid
	chmod "$oldm" /dev/cycsample
fi

# 9. the same demo through perf_event_open() alone (demo/perfsample.c):
# samples come, every record decodes, records that wrap the ring's end too,
# and the top function and its share agree with cycread's run of part 1
# within 6 points: both runs are plain TCG, whose shares move with host
# load by a few points (tests/guest/shares-guest.sh), while a record decoded
# wrongly loses the top function or most of its share.  Each run starts from the boot's sample-rate
# limit, as cycread's did.
# perfsample opens one counter on the generic cycles event, which counts on
# one PMU only, the one perf core chose (not the same on every kernel): on a
# guest with two, it and the demo stay on the CPU where a short run samples.
pin=
if [ -x $D/perfsample ] &&
	[ "$(ls -d /sys/bus/event_source/devices/armv8_* 2>/dev/null | wc -l)" -ge 2 ]; then
	for cpu in 0 1; do
		taskset -c $cpu $D/perfsample -- $D/demo 20 2>&1 | grep -q '^# samples: [1-9]' &&
			pin="taskset -c $cpu" && break
	done
	echo "# perfsample's cycles event samples with: ${pin:-no CPU}"
fi
if [ -x $D/perfsample ]; then
	rate=/proc/sys/kernel/perf_event_max_sample_rate
	oldrate=$(cat $rate)
	echo 100000 >$rate
	$pin $D/perfsample -g --folded -- $D/demo >$T/ps.folded 2>$T/ps.err
	check $? "perfsample -g --folded -- demo: exit 0"
	top_c=$(top_leaf $T/demo-n.folded)
	top_p=$(top_leaf $T/ps.folded)
	sc=$(share10 $T/demo-n.folded "$top_c")
	sp=$(share10 $T/ps.folded "$top_p")
	d=$((sp - sc))
	[ -n "$top_c" ] && [ "$top_p" = "$top_c" ] && [ "${d#-}" -le 60 ]
	check $? "perfsample's top function $top_p ($((sp / 10)).$((sp % 10)) %) is cycread's $top_c ($((sc / 10)).$((sc % 10)) %), within 6 points"
	echo 100000 >$rate
	$pin $D/perfsample -g -m 2 -- $D/demo 300 >$T/ps-small.txt 2>&1
	rc=$?
	sed 's/^/# /' $T/ps-small.txt | head -4
	wrapped=$(sed -n 's/^# ring: 2 pages, \([0-9]*\) records wrapped.*, 0 malformed$/\1/p' \
		$T/ps-small.txt)
	[ $rc -eq 0 ] && [ "${wrapped:-0}" -gt 0 ] && grep -q hot_loop $T/ps-small.txt
	check $? "perfsample on a 2-page ring: ${wrapped:-no} records wrapped, none malformed"
	echo "$oldrate" >$rate
fi

# An AArch32 task (arm64 guests): demo/a32demo is a 32-bit armhf program
# whose chains cross between ARM code (APCS and AAPCS frame records) and
# Thumb code (r7 frames), one of them into a Thumb shared library.  The
# module walks each record by the state of its code; cycread reads the
# 32-bit ELF files and puts back the callers of the leaves from lr.
#
# Debian's armhf libraries are linked for 4 KiB pages (LOAD segments aligned
# to 0x1000), which a kernel with larger pages cannot map: there the
# dynamically linked program dies at start, said explicitly below, and the
# same program linked statically for 64 KiB pages (a32demo-static, with
# lib32_checksum in the executable) is profiled instead.
if [ "$arch" = arm64 ]; then
	[ -x $D/a32demo ]
	check $? "demo/a32demo (32-bit armhf) staged for the arm64 guest"
else
	echo "# AArch32 task: skipped, $arch has no 32-bit ARM mode"
fi
if [ -x $D/a32demo ]; then
	kpage=$(awk '/^KernelPageSize:/ { print $2; exit }' /proc/self/smaps)
	a32=$D/a32demo
	if [ "${kpage:-4}" -gt 4 ]; then
		$D/a32demo 1 >/dev/null 2>&1
		[ $? -ge 128 ]
		check $? "AArch32 with ${kpage} KiB pages: the 4 KiB-aligned armhf libraries cannot be mapped"
		a32=$D/a32demo-static
	fi
	$C -o $T/a32.cyc --regs -- $a32 2000 >$T/a32.txt 2>&1
	check $? "cycread --regs -- ${a32##*/} (32-bit armhf): exit 0"
	sed 's/^/# /' $T/a32.txt | sed -n '7,12p'
	$C report -i $T/a32.cyc --folded --weight samples >$T/a32.folded
	for ch in main:arm_outer:thumb_mid:thumb_leaf main:arm_outer:thumb_mid:lib32_checksum \
		  main:thumb_outer:arm_mid:arm_leaf; do
		chain=$(echo "$ch" | tr : ';')
		leaf=${ch##*:}
		all=$(leaf_count $T/a32.folded "$leaf")
		good=$(chain_count $T/a32.folded "$chain")
		[ "$all" -ge 20 ] && [ $((good * 10)) -ge $((all * 9)) ]
		check $? "AArch32 chain $chain in $good of $all samples (>= 90 %)"
	done
	$C report -i $T/a32.cyc --folded --weight samples --no-leaf-repair \
		>$T/a32-noleaf.folded
	all=$(leaf_count $T/a32-noleaf.folded thumb_leaf)
	good=$(chain_count $T/a32-noleaf.folded "thumb_mid;thumb_leaf")
	[ "$all" -gt 0 ] && [ "$good" -eq 0 ]
	check $? "AArch32 without leaf repair thumb_mid is missing ($good of $all): lr supplies it"
	# The register dump is the AArch32 one, and the T bit of its cpsr says
	# which instruction set the sampled function is in.
	$C report -i $T/a32.cyc --raw --raw-details >$T/a32.raw
	awk '
		/^[^\t]/ { hdr = $0; first = 1; next }
		first && /\t/ {
			first = 0
			if (hdr !~ / regs r0:0x[0-9a-f]+ .* r12:0x[0-9a-f]+ sp:0x[0-9a-f]+ lr:0x[0-9a-f]+ pc:0x[0-9a-f]+ cpsr:0x[0-9a-f]+$/)
				next
			if (hdr ~ / x29:/) { bad++; next }
			# T is bit 5 (0x20): bit 1 of the second hex digit from the right
			cpsr = hdr; sub(/.* cpsr:0x/, "", cpsr)
			d = index("0123456789abcdef", substr(cpsr, length(cpsr) - 1, 1)) - 1
			tbit = length(cpsr) >= 2 && d % 4 >= 2
			if ($0 ~ / thumb_leaf\+/) { thumb++; if (!tbit) bad++ }
			if ($0 ~ / arm_leaf\+/) { arm++; if (tbit) bad++ }
		}
		END { printf "%d %d %d\n", thumb, arm, bad }' $T/a32.raw >$T/a32.regs
	read -r thumb arm bad <$T/a32.regs
	[ "${thumb:-0}" -gt 0 ] && [ "${arm:-0}" -gt 0 ] && [ "${bad:-1}" -eq 0 ]
	check $? "AArch32 --regs: r0..r12 sp lr pc cpsr, T bit set in $thumb thumb_leaf samples, clear in $arm arm_leaf ones (${bad:-?} wrong)"
fi

# 10. two PMUs (scripts/cycsample-vm --pmus 2, as big.LITTLE boards have
# them: armv8_cortex_a53 on CPU 0, armv8_cortex_a72 on CPU 1)
if [ "$(ls -d /sys/bus/event_source/devices/armv8_* 2>/dev/null | wc -l)" -ge 2 ]; then
	$C -- taskset -c 1 $D/demo 100 >$T/big.txt 2>&1
	sed 's/^/# /' $T/big.txt | sed -n '2,5p'
	ns=$(sed -n 's/^# samples: \([0-9]*\),.*/\1/p' $T/big.txt)
	[ "${ns:-0}" -ge 50 ] && grep -q '^# PMU 1: armv8_cortex_a72, CPU 1: cycles, [1-9]' $T/big.txt
	check $? "CMD on the second CPU: sampled by its PMU (${ns:-no} samples)"
	$C -o $T/two.cyc -- sh -c "taskset -c 0 $D/demo 100 & taskset -c 1 $D/demo 100; wait" \
		>$T/two.txt 2>&1
	grep -q '^# event: cycles on 2 PMUs' $T/two.txt &&
		grep -q '^# PMU 0: armv8_cortex_a53, CPU 0: cycles, [1-9]' $T/two.txt &&
		grep -q '^# PMU 1: armv8_cortex_a72, CPU 1: cycles, [1-9]' $T/two.txt
	check $? "one process on each CPU: the header names both PMUs, each with samples"
	$C report -i $T/two.cyc --sort pmu >$T/pmu.txt
	grep -q '^# PMU 1: armv8_cortex_a72' $T/pmu.txt &&
		[ "$(grep -c '%  *[0-9]*  armv8_cortex_a[57][32]$' $T/pmu.txt)" -eq 2 ]
	check $? "capture file keeps the PMUs; --sort pmu has one row per PMU"
	$C report -i $T/two.cyc --raw >$T/two.raw
	grep -q ' armv8_cortex_a53/cycles/:$' $T/two.raw && grep -q ' armv8_cortex_a72/cycles/:$' $T/two.raw
	check $? "--raw names each sample's PMU as perf does (PMU/cycles/)"
	$C -a -d 1 >$T/a2.txt 2>&1
	grep -q '^# PMU 0: armv8_cortex_a53, CPU 0: cycles' $T/a2.txt &&
		grep -q '^# PMU 1: armv8_cortex_a72, CPU 1: cycles' $T/a2.txt
	check $? "-a: the header names both PMUs"
fi

echo "1..$n"
echo "# $((n - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
