#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# run-checks.sh OUT - every host test of cycread, run by "make check":
# unit tests, the same under AddressSanitizer+UBSan, golden report tests,
# command-line tests, and the fuzzers for FUZZ_TIME seconds each.  Prints
# one TAP line per suite (failures show their log) and "N passed, N failed";
# exits non-zero when anything failed.

set -u
out=$1
here=$(cd "$(dirname "$0")" && pwd)
tool=$out/cycread
fuzz_time=${FUZZ_TIME:-30}
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

unit()
{
	dir=$1
	label=$2
	for t in test_records test_interval test_elfsym test_srcline test_leaf test_capture; do
		log=$dir/$t.log
		"$dir/$t" >"$log" 2>&1
		rc=$?
		checks=$(grep -c '^ok\|^not ok' "$log")
		result $rc "$label$t ($checks checks)" "$log"
	done
}

echo "# cycread host tests"
unit "$out/tests" ""
ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
	unit "$out/asan" "asan+ubsan: "

# golden reports of the synthetic capture (tests/synth.h)
gdir=$out/golden
mkdir -p "$gdir"
"$out/tests/mkcapture" "$gdir/synth.cyc"
result $? "mkcapture writes the synthetic capture"
for spec in "top:" "children:--children" "sort:--sort comm,sym" "raw:--raw" \
	    "folded:--folded" "noleaf:--folded --no-leaf-repair"; do
	name=${spec%%:*}
	args=${spec#*:}
	# shellcheck disable=SC2086
	"$tool" report -i "$gdir/synth.cyc" $args >"$gdir/$name.txt" 2>"$gdir/$name.err"
	rc=$?
	if [ $rc -eq 0 ]; then
		diff -u "$here/golden/$name.txt" "$gdir/$name.txt" >"$gdir/$name.diff" 2>&1
		rc=$?
	fi
	result $rc "golden: report $args" "$gdir/$name.diff"
done
"$out/asan/cycread" report -i "$gdir/synth.cyc" --svg "$gdir/flame.svg" -q \
	>"$gdir/svg.err" 2>&1
rc=$?
[ $rc -eq 0 ] && diff -u "$here/golden/flame.svg" "$gdir/flame.svg" >"$gdir/svg.diff" 2>&1
rc=$((rc + $?))
result $rc "golden: --svg (written by the sanitizer build)" "$gdir/svg.diff"
"$here/check-svg.py" "$gdir/flame.svg" "$gdir/folded.txt" >"$gdir/svg-structure.log" 2>&1
result $? "svg structure: well-formed, one frame per tree node, script and controls" \
	"$gdir/svg-structure.log"

probe=$("$here/svg-interact.sh" "$gdir/flame.svg" compute memcpy 2>&1)
rc=$?
if [ $rc -eq 77 ]; then
	n=$((n + 1))
	pass=$((pass + 1))
	echo "ok $n # SKIP svg interaction: no chromium"
else
	echo "$probe" >"$gdir/svg-interact.log"
	case $probe in
	*"details=compute (10 samples, 58.82%)|width=1180.00|reset=1|Matched: 17.65%|hits=1"*)
		rc=0 ;;
	*)	rc=1 ;;
	esac
	result $rc "svg in headless Chromium: hover details, click zoom, search share" \
		"$gdir/svg-interact.log"
fi

# command line behaviour
"$here/cli.sh" "$tool" "$gdir/synth.cyc" >"$out/cli.log" 2>&1
rc=$?
result $rc "command line ($(grep -c '^ok' "$out/cli.log") checks)" "$out/cli.log"

# fuzzers, seeded with a capture and small ELF files
if [ -x "$out/fuzz/fuzz_capture" ] && [ -x "$out/fuzz/fuzz_elf" ]; then
	mkdir -p "$out/fuzz/corpus-capture" "$out/fuzz/corpus-elf"
	cp "$gdir/synth.cyc" "$out/fuzz/corpus-capture/"
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
	for f in capture elf; do
		log=$out/fuzz/fuzz_$f.log
		(cd "$out/fuzz" && ./fuzz_$f -max_total_time="$fuzz_time" -rss_limit_mb=2048 \
			-timeout=20 -print_final_stats=1 "corpus-$f" >"$log" 2>&1)
		rc=$?
		runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
		result $rc "fuzz_$f: ${fuzz_time}s, ${runs:-?} inputs, no crash" "$log"
	done
else
	result 1 "fuzzers built (clang with libFuzzer)"
fi

echo "1..$n"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
