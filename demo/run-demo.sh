#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# run-demo.sh [KERNEL-ID] [OUTDIR] - the cycsample demo, end to end:
# build cycread and the demo for the guest, profile the demo inside the
# guest (scripts/cycsample-vm), bring the capture file back to the host as
# base64 on the console, and report it here with the host's cycread (the
# capture carries the symbols, so no guest binaries are needed): the top
# table on stdout, OUTDIR/demo.svg (flame graph), OUTDIR/demo.folded.
# Defaults: arm64-6.1, build/demo-report.

set -eu
kernel=${1:-arm64-6.1}
top=$(cd "$(dirname "$0")/.." && pwd)
out=${2:-$top/build/demo-report}
case $kernel in
x86_64-*)
	arch=x86_64
	cross=
	;;
*)
	arch=arm64
	cross=aarch64-linux-gnu-
	;;
esac
mkdir -p "$out"
make -s -C "$top/tool" OUT="$top/build/$arch/tool" ARCH=$arch CROSS_COMPILE=$cross -j2
make -s -C "$top/tool" -j2
make -s -C "$top/demo" OUT="$top/build/$arch/demo" ARCH=$arch
echo "run-demo: profiling the demo in the $kernel guest (about a minute under QEMU)..." >&2
"$top/scripts/cycsample-vm" --kernel "$kernel" --add "$top/build/$arch/demo" -- sh -c \
	'cycread -q -o /tmp/demo.cyc -- /mnt/add/demo && echo "=== capture ===" &&
	 base64 /tmp/demo.cyc && echo "=== end ==="' >"$out/guest.log" 2>&1 || {
	cat "$out/guest.log" >&2
	exit 1
}
tr -d '\r' <"$out/guest.log" | sed -n '/^=== capture ===$/,/^=== end ===$/p' |
	sed '1d;$d' | base64 -d >"$out/demo.cyc"
host=$top/build/tool-host/cycread
"$host" report -i "$out/demo.cyc" --svg "$out/demo.svg" --percent-limit 0.5 | tee "$out/report.txt"
"$host" report -i "$out/demo.cyc" --folded >"$out/demo.folded"
echo
echo "run-demo: flame graph $out/demo.svg (open it in a browser: hover, click to zoom," \
     "Search or Ctrl-F)"
echo "run-demo: call chains, one a line with its cycles: $out/demo.folded"
echo "run-demo: report again from the capture: $host report -i $out/demo.cyc [--children|--raw]"
echo "run-demo: what to read next: Documentation/design.rst (one sample, from the PMU" \
     "interrupt to this report), module/sampler.c, then Documentation/exercises.rst"
