#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# run-checks.sh OUT - every host test of cycread, run by "make check":
# unit tests, the same under AddressSanitizer+UBSan and under valgrind's
# memcheck, golden report tests, command-line tests, and the fuzzers for
# FUZZ_TIME seconds each (each corpus replayed under memcheck after) from seed
# FUZZ_SEED (default 1: every run tries the same inputs in the same order,
# as far as its time goes, so a crash is the change's and repeats; 0: a new
# seed each run, to explore).  The unit tests are the Makefile's TESTS.
# Prints one TAP line per suite (failures show their log) and "N passed,
# N failed"; exits non-zero when anything failed.

set -u
out=$1
here=$(cd "$(dirname "$0")" && pwd)
tool=$out/cycread
fuzz_time=${FUZZ_TIME:-30}
fuzz_seed=${FUZZ_SEED:-1}
tests=${TESTS:?run by make check, which names the unit tests in TESTS}
n=0
pass=0
fail=0

result()
{
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		pass=$((pass + 1))
		echo "ok $n - $2"
	else
		fail=$((fail + 1))
		echo "not ok $n - $2"
		[ -n "${3:-}" ] && [ -f "$3" ] && sed 's/^/#   /' "$3" | grep -v '^#   ok ' | tail -40
	fi
}

# A check this machine cannot make: counted as passed, with why (TAP's SKIP).
skip()
{
	n=$((n + 1))
	pass=$((pass + 1))
	echo "ok $n # SKIP $1"
}

# valgrind's memcheck, the exit status 99 on any error; empty without valgrind
memcheck=
command -v valgrind >/dev/null 2>&1 && memcheck="valgrind -q --error-exitcode=99"

unit()
{
	dir=$1
	label=$2
	suffix=$3
	shift 3
	for t in $tests; do
		log=$dir/$t$suffix.log
		"$@" "$dir/$t" >"$log" 2>&1
		rc=$?
		checks=$(grep -c '^ok\|^not ok' "$log")
		result $rc "$label$t ($checks checks)" "$log"
	done
}

echo "# cycread host tests"
unit "$out/tests" "" ""
ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
	unit "$out/asan" "asan+ubsan: " ""
# AddressSanitizer does not track what memory was written: a branch on
# bytes never set (a cache's entries half reset) shows only under memcheck
if [ -n "$memcheck" ]; then
	# shellcheck disable=SC2086
	unit "$out/tests" "memcheck: " .memcheck $memcheck
else
	skip "memcheck of the unit tests: no valgrind"
fi

# golden reports of the synthetic capture (tests/synth.h), and of the same
# samples repeated once a second for four seconds (time slices, histogram);
# for cli.sh, the samples again 2^40 ns later (a histogram too long)
gdir=$out/golden
mkdir -p "$gdir"
"$out/tests/mkcapture" "$gdir/synth.cyc" &&
	"$out/tests/mkcapture" "$gdir/synth4s.cyc" 68 1000000000 &&
	"$out/tests/mkcapture" "$gdir/long.cyc" 34 1099511627776
result $? "mkcapture writes the synthetic captures"
# NAME:ARGS, one a line: tests/golden/NAME.txt is the report with ARGS
golden_specs="top:
children:--children
sort:--sort comm,sym
sort-tid:--sort tid,sym
raw:--raw
raw-details:--raw --raw-details --show-task-events --show-lost-events
raw-side-time:--raw --show-task-events --show-lost-events --time 0.000002,0.000004
raw-side-tid:--raw --show-task-events --show-lost-events -t 101
folded:--folded
noleaf:--folded --no-leaf-repair
weight-samples:--weight samples --children
graph-caller:-G
graph-callee:--children --call-graph callee,10
graph-memcpy:--symbol memcpy --call-graph=callee --weight samples
filter-tid-dso:-t 101 --dso app,/lib/aarch64-linux-gnu/libc.so.6
filter-comm-pid:--comm app -p 100 --sort pid,dso,sym --percent-limit 10
4s-histogram:--histogram
4s-histogram-slice:--histogram=0.5 --time 1.5, --weight samples
4s-time:--time 1,3 --children"

# The golden report $spec names, into $gdir/NAME$gsuffix.txt and .err, made
# by "$@": the tool, or the tool under a checker.
golden_run()
{
	name=${spec%%:*}
	args=${spec#*:}
	cap=$gdir/synth.cyc
	case $name in 4s-*) cap=$gdir/synth4s.cyc ;; esac
	# shellcheck disable=SC2086
	"$@" report -i "$cap" $args >"$gdir/$name$gsuffix.txt" 2>"$gdir/$name$gsuffix.err"
}

gsuffix=

while IFS= read -r spec; do
	golden_run "$tool"
	rc=$?
	if [ $rc -eq 0 ]; then
		diff -u "$here/golden/$name.txt" "$gdir/$name.txt" >"$gdir/$name.diff" 2>&1
		rc=$?
	fi
	result $rc "golden: report $args" "$gdir/$name.diff"
done <<EOF
$golden_specs
EOF
# cycread whole under memcheck, option parsing and output included (the
# unit tests call its parts): every golden report again, its output unchecked
if [ -n "$memcheck" ]; then
	rc=0
	gsuffix=.memcheck
	: >"$gdir/memcheck.log"
	while IFS= read -r spec; do
		# shellcheck disable=SC2086
		if ! golden_run $memcheck "$tool"; then
			rc=1
			echo "report $args:" >>"$gdir/memcheck.log"
			cat "$gdir/$name$gsuffix.err" >>"$gdir/memcheck.log"
		fi
	done <<EOF
$golden_specs
EOF
	result $rc "memcheck: cycread, every golden report" "$gdir/memcheck.log"
else
	skip "memcheck of cycread's reports: no valgrind"
fi
"$out/asan/cycread" report -i "$gdir/synth.cyc" --svg "$gdir/flame.svg" -q \
	>"$gdir/svg.err" 2>&1
rc=$?
[ $rc -eq 0 ] && diff -u "$here/golden/flame.svg" "$gdir/flame.svg" >"$gdir/svg.diff" 2>&1
rc=$((rc + $?))
result $rc "golden: --svg (written by the sanitizer build)" "$gdir/svg.diff"
"$here/check-svg.py" "$gdir/flame.svg" "$gdir/folded.txt" >"$gdir/svg-structure.log" 2>&1
result $? "svg structure: well-formed, one frame per tree node, script and controls" \
	"$gdir/svg-structure.log"

# a large, branching capture: folded lines in strcmp order, each stack once;
# SVG frames narrower than a pixel left out and counted
"$out/tests/mkcapture" --deep 20000 16 "$gdir/deep.cyc" &&
	"$tool" report -i "$gdir/deep.cyc" --folded --weight samples >"$gdir/deep.folded" &&
	python3 -c '
import sys
lines = [l.rstrip("\n").rsplit(" ", 1) for l in open(sys.argv[1], encoding="utf-8")]
stacks = [s for s, _ in lines]
assert stacks == sorted(stacks, key=lambda s: s.encode()), "not in strcmp order"
assert len(set(stacks)) == len(stacks), "a stack on two lines"
assert sum(int(c) for _, c in lines) == 20000, "samples lost"
print(len(stacks), "stacks")' "$gdir/deep.folded" >"$gdir/deep.log" 2>&1
result $? "folded of 20000 branching stacks: strcmp order, each stack once, every sample" \
	"$gdir/deep.log"
"$tool" report -i "$gdir/deep.cyc" --svg "$gdir/deep.svg" --weight samples -q \
	>"$gdir/deep-svg.log" 2>&1 &&
	"$here/check-svg.py" "$gdir/deep.svg" "$gdir/deep.folded" >>"$gdir/deep-svg.log" 2>&1 &&
	grep -q 'id="pruned"' "$gdir/deep.svg"
result $? "svg of it: frames narrower than a pixel pruned, the rest exact, the count said" \
	"$gdir/deep-svg.log"

probe=$("$here/svg-interact.sh" "$gdir/flame.svg" compute memcpy 2>&1)
rc=$?
if [ $rc -eq 77 ]; then
	skip "svg interaction: no chromium"
else
	echo "$probe" >"$gdir/svg-interact.log"
	case $probe in
	*"details=compute (7050000 cycles, 45.19%)|width=1180.00|reset=1|Matched: 14.90%|hits=1"*)
		rc=0 ;;
	*)	rc=1 ;;
	esac
	result $rc "svg in headless Chromium: hover details, click zoom, search share" \
		"$gdir/svg-interact.log"
fi

# --raw in speedscope, the release build scripts/setup-host unpacked
ss=$(ls -d "${CYCSAMPLE_CACHE:-$HOME/.cache/cycsample}"/npm/speedscope-* 2>/dev/null | tail -n 1)
"$here/check-speedscope.py" "$tool" "$gdir/synth.cyc" "${ss:-/nonexistent}" >"$gdir/speedscope.log" 2>&1
rc=$?
if [ $rc -eq 77 ]; then
	skip "speedscope import: no chromium"
else
	result $rc "speedscope imports --raw as perf script output ($(grep -c '^ok' "$gdir/speedscope.log") checks)" \
		"$gdir/speedscope.log"
fi

# pprof files, read by go tool pprof (tests/check-pprof.py): the synthetic
# capture whole and filtered, and written by the sanitizer build
for spec in "the synthetic capture:synth.cyc:" \
	    "a time slice of one thread:synth4s.cyc:--time 1,3 -t 101" \
	    "two objects weighed by samples:synth.cyc:--dso app,libc.so.6 --weight samples"; do
	what=${spec%%:*}
	rest=${spec#*:}
	log=$gdir/pprof-$(echo "$what" | tr -c 'a-z0-9\n' '_').log
	"$here/check-pprof.py" --cycread "$tool" --capture "$gdir/${rest%%:*}" \
		--filter "${rest#*:}" --label "$what" >"$log" 2>&1
	rc=$?
	result $rc "go tool pprof reads --pprof of $what as cycread reports it ($(grep -c '^ok' "$log") checks)" "$log"
done
# source lines and inline frames: a real binary's DWARF (sym's fixture)
gcc -O2 -g -I"$here/fixtures" "$here/fixtures/fx_inline.c" -o "$gdir/fx_inline" &&
	"$out/tests/mkcapture" --elf "$gdir/fx_inline" "$gdir/lines.cyc" &&
	"$here/check-pprof.py" --cycread "$tool" --capture "$gdir/lines.cyc" --lines \
		--label "inline frames" >"$gdir/pprof-lines.log" 2>&1
result $? "go tool pprof: the lines and inline frames of a -g binary, as --raw-details shows them ($(grep -c '^ok' "$gdir/pprof-lines.log") checks)" \
	"$gdir/pprof-lines.log"
"$out/asan/cycread" report -i "$gdir/synth4s.cyc" --pprof "$gdir/asan.pb.gz" -q \
	>"$gdir/asan-pprof.log" 2>&1 &&
	go tool pprof -symbolize=none -top "$gdir/asan.pb.gz" >>"$gdir/asan-pprof.log" 2>&1 &&
	grep -q "compute" "$gdir/asan-pprof.log"
result $? "--pprof written by the sanitizer build reads in go tool pprof" "$gdir/asan-pprof.log"

# command line behaviour
"$here/cli.sh" "$tool" "$gdir/synth.cyc" "$gdir/long.cyc" >"$out/cli.log" 2>&1
rc=$?
result $rc "command line ($(grep -c '^ok' "$out/cli.log") checks)" "$out/cli.log"

# the same command lines under memcheck: the usage and error paths, the
# --symfs and --debug-dir refusals, live sessions without a device (1 min)
if [ -n "$memcheck" ]; then
	printf '#!/bin/sh\nexec %s "%s" "$@"\n' "$memcheck" "$tool" >"$out/cycread-memcheck"
	chmod +x "$out/cycread-memcheck"
	"$here/cli.sh" "$out/cycread-memcheck" "$gdir/synth.cyc" "$gdir/long.cyc" \
		"$tool" >"$out/cli.memcheck.log" 2>&1
	rc=$?
	result $rc "memcheck: command line ($(grep -c '^ok' "$out/cli.memcheck.log") checks)" \
		"$out/cli.memcheck.log"
else
	skip "memcheck of the command line: no valgrind"
fi

# fuzzers, seeded with a capture and small ELF files
if [ -x "$out/fuzz/fuzz_capture" ] && [ -x "$out/fuzz/fuzz_elf" ] && [ -x "$out/fuzz/fuzz_dwline" ]; then
	# made anew: the fuzzers add what they find to them, and each run with a
	# fixed seed must start from the same inputs
	rm -rf "$out/fuzz/corpus-capture" "$out/fuzz/corpus-elf" "$out/fuzz/corpus-dwline"
	mkdir -p "$out/fuzz/corpus-capture" "$out/fuzz/corpus-elf"
	cp "$gdir/synth.cyc" "$out/fuzz/corpus-capture/"
	# inputs the fuzzers once found a bug with: every run starts from them
	cp "$here"/fuzz-seeds/capture-* "$out/fuzz/corpus-capture/"
	# a capture with symbols, source lines and inline frames of a real binary
	gcc -O2 -g -I"$here/fixtures" "$here/fixtures/fx_inline.c" -o "$out/fuzz/fx_inline"
	"$out/tests/mkcapture" --elf "$out/fuzz/fx_inline" "$out/fuzz/corpus-capture/lines.cyc"
	gcc -O1 -g -fPIC -shared "$here/fixtures/fx_lib.c" -o "$out/fuzz/corpus-elf/lib.so"
	# DWARF with inline frames, so the fuzzer starts from real units and line programs
	cp "$out/fuzz/fx_inline" "$out/fuzz/corpus-elf/inline"
	strip -o "$out/fuzz/corpus-elf/lib-stripped.so" "$out/fuzz/corpus-elf/lib.so"
	# MiniDebugInfo: a stripped library with its symbols xz-compressed in .gnu_debugdata
	(cd "$out/fuzz" && objcopy --only-keep-debug corpus-elf/lib.so mini &&
		rm -f mini.xz && xz mini && objcopy --add-section .gnu_debugdata=mini.xz \
		corpus-elf/lib-stripped.so corpus-elf/lib-mini.so)
	# line programs of DWARF 5 and 4, as compilers write them
	mkdir -p "$out/fuzz/corpus-dwline"
	gcc -O2 -gdwarf-4 -I"$here/fixtures" "$here/fixtures/fx_inline.c" -o "$out/fuzz/fx_inline4"
	objcopy --dump-section .debug_line="$out/fuzz/corpus-dwline/v5" "$out/fuzz/fx_inline"
	objcopy --dump-section .debug_line="$out/fuzz/corpus-dwline/v4" "$out/fuzz/fx_inline4"
	cp "$here"/fuzz-seeds/dwline-* "$out/fuzz/corpus-dwline/"
	cp "$here"/fuzz-seeds/elf-* "$out/fuzz/corpus-elf/"
	# and units to scan: .debug_info after its size in 3 bytes, then .debug_abbrev
	for b in fx_inline fx_inline4; do
		(cd "$out/fuzz" && objcopy --dump-section .debug_info=info \
			--dump-section .debug_abbrev=abbrev "$b" scratch && rm scratch &&
			python3 - info abbrev >"corpus-dwline/scan-$b" <<'EOF'
import sys
info, abbrev = (open(name, "rb").read() for name in sys.argv[1:3])
sys.stdout.buffer.write(len(info).to_bytes(3, "little") + info + abbrev)
EOF
		)
	done
	for f in capture elf dwline; do
		log=$out/fuzz/fuzz_$f.log
		(cd "$out/fuzz" && ./fuzz_$f -seed="$fuzz_seed" -max_total_time="$fuzz_time" \
			-rss_limit_mb=2048 -timeout=20 -print_final_stats=1 "corpus-$f" >"$log" 2>&1)
		rc=$?
		runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
		seed=$(sed -n 's/^INFO: Seed: *//p' "$log")
		result $rc "fuzz_$f: ${fuzz_time}s from seed ${seed:-?}, ${runs:-?} inputs, no crash" "$log"
		# the corpus again under memcheck: it sees into libelf and libdw,
		# which AddressSanitizer does not instrument
		if [ -z "$memcheck" ]; then
			skip "memcheck of fuzz_$f's corpus: no valgrind"
			continue
		fi
		log=$out/fuzz/replay_$f.log
		# shellcheck disable=SC2086
		$memcheck "$out/fuzz/replay_fuzz_$f" "$out/fuzz/corpus-$f" >"$log" 2>&1
		rc=$?
		inputs=$(find "$out/fuzz/corpus-$f" -type f | wc -l)
		result $rc "memcheck: fuzz_$f's corpus replayed, $inputs inputs" "$log"
	done
else
	result 1 "fuzzers built (clang with libFuzzer)"
fi

echo "1..$n"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
