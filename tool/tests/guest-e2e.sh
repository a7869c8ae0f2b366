#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# guest-e2e.sh [KERNEL-ID] - build cycread and the demo programs for the
# kernel's architecture, boot the guest with scripts/cycsample-vm and run
# tests/guest/e2e-guest.sh there: shares of the demo's functions, complete
# call chains, leaf-caller repair, the shared-library function, -p/-t/-a,
# --user-only, --no-call-graph, -c, Ctrl-C, CMD exit status and exec
# failure, EXEC, children, a deleted binary, a JIT perf map, capture files,
# and demo/perfsample (perf_event_open alone) against cycread on the demo.
# Default kernel: arm64-6.1.  Exit status: the guest's.

set -eu
kernel=${1:-arm64-6.1}
top=$(cd "$(dirname "$0")/../.." && pwd)
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
make -s -C "$top/tool" OUT="$top/build/$arch/tool" ARCH=$arch CROSS_COMPILE=$cross -j2
stage=$top/build/$arch/e2e
rm -rf "$stage"
make -s -C "$top/demo" OUT="$stage" ARCH=$arch
cp "$top/tool/tests/guest/e2e-guest.sh" "$stage/"
triplet=$([ $arch = arm64 ] && echo aarch64-linux-gnu || echo x86_64-linux-gnu)
${cross}gcc -O2 -g -Wall -Wextra -Werror -o "$stage/lzmawork" "$top/tool/tests/guest/lzmawork.c" \
	-llzma
readelf --debug-dump=frames "$(realpath "/usr/lib/$triplet/liblzma.so.5")" |
	sed -n 's/.* FDE .*pc=0*\([0-9a-f]*\)\.\..*/\1/p' >"$stage/lzma-fdes.txt"
exec "$top/scripts/cycsample-vm" --kernel "$kernel" --add "$stage" --timeout 900 -- \
	sh /mnt/add/e2e-guest.sh $arch
