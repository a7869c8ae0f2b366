#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# guest-e2e.sh [KERNEL-ID [OPTIONS]] - build cycread and the demo programs
# for the kernel's architecture, boot the guest with scripts/cycsample-vm
# and run tests/guest/e2e-guest.sh there: complete call chains, leaf-caller
# repair, the shared-library function, -p/-t/-a, --user-only,
# --no-call-graph, -c, Ctrl-C, CMD exit status and exec failure, EXEC,
# children, a deleted binary, a JIT perf map, capture files, cycsample.ko's
# own frames with source lines (--kmod-dir), and demo/perfsample
# (perf_event_open alone) against cycread on the demo; trees, filters, time
# slices; on arm64 a 32-bit armhf program (demo/a32demo): ARM and Thumb
# chains and the AArch32 register dump; on a guest with two PMUs the
# big.LITTLE checks (each CPU's PMU samples, the header lists both, --sort
# pmu, capture files keep them); then go tool pprof reads the guest's
# --pprof file as the guest's cycread reported it (tests/check-pprof.py).
# A second boot, under -icount and with the same PMUs, holds the demo's
# shares to its model (tests/guest/shares-guest.sh) and counts the reads of
# /proc that children of CMD cost (tests/guest/told-guest.sh).
# Default kernel: arm64-6.1.  Exit status: the guest's, or 1 when a host
# check failed.
#
# Options: --pmus N and --add DIR go to scripts/cycsample-vm; --then CMD runs
# in the guest after the checks (scripts/check runs sampling suites there),
# and the checks' status stays the guest's; --no-build boots the module and
# cycread already built (scripts/check built them).  What is staged and kept lies in
# build/KERNEL-ID/, so that two kernels can be tested at once.

set -eu
kernel=${1:-arm64-6.1}
[ $# -gt 0 ] && shift
vm_args=
build=1
pmus=
then=true
while [ $# -gt 0 ]; do
	case $1 in
	--pmus) vm_args="$vm_args --pmus $2"; pmus="--pmus $2"; shift 2 ;;
	--add) vm_args="$vm_args --add $2"; shift 2 ;;
	--then) then=$2; shift 2 ;;
	--no-build) build=0; vm_args="$vm_args --no-build"; shift ;;
	*) echo "guest-e2e.sh: unknown option '$1'" >&2; exit 2 ;;
	esac
done
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
# --no-build: built already, and another job may be reading the build
[ $build = 0 ] ||
	make -s -C "$top/tool" OUT="$top/build/$arch/tool" ARCH=$arch CROSS_COMPILE=$cross -j2
stage=$top/build/$kernel/e2e-stage
rm -rf "$stage"
make -s -C "$top/demo" OUT="$stage" ARCH=$arch
cp "$top/tool/tests/guest/e2e-guest.sh" "$top/tool/tests/guest/shares-guest.sh" \
	"$top/tool/tests/guest/told-guest.sh" "$top/tool/tests/guest/tap.sh" \
	"$top/tool/tests/guest/folded.sh" "$stage/"
triplet=$([ $arch = arm64 ] && echo aarch64-linux-gnu || echo x86_64-linux-gnu)
${cross}gcc -O2 -g -Wall -Wextra -Werror -o "$stage/lzmawork" "$top/tool/tests/guest/lzmawork.c" \
	-llzma
for prog in twothreads sigchld-ignored; do
	${cross}gcc -O2 -Wall -Wextra -Werror -pthread -o "$stage/$prog" \
		"$top/tool/tests/guest/$prog.c"
done
readelf --debug-dump=frames "$(realpath "/usr/lib/$triplet/liblzma.so.5")" |
	sed -n 's/.* FDE .*pc=0*\([0-9a-f]*\)\.\..*/\1/p' >"$stage/lzma-fdes.txt"
out=$top/build/$kernel/e2e-out
rm -rf "$out"
mkdir -p "$out"
{
	# set -e: a failing guest must still leave its status for the host checks
	vm=0
	# shellcheck disable=SC2086 # vm_args holds separate options
	"$top/scripts/cycsample-vm" --kernel "$kernel" --add "$stage" $vm_args --timeout 1800 -- \
		sh -c "sh /mnt/add/e2e-guest.sh $arch; st=\$?; $then; exit \$st" || vm=$?
	echo $vm >"$out/rc"
} | tee "$out/guest.log"
rc=$(cat "$out/rc")

# What needs a clock that counts instructions, in a boot of its own under
# -icount with the same PMUs: the demo's shares against its model, the
# reads of /proc for children (each script's header says why).
{
	src=0
	# shellcheck disable=SC2086,SC2016 # pmus: an option and its value; $st is the guest's
	"$top/scripts/cycsample-vm" --kernel "$kernel" --no-build --icount --add "$stage" $pmus \
		--timeout 900 -- sh -c \
		'st=0; sh /mnt/add/shares-guest.sh || st=1; sh /mnt/add/told-guest.sh || st=1; exit $st' ||
		src=$?
	echo $src >"$out/shares-rc"
} | tee "$out/shares.log"
[ "$rc" -ne 0 ] || rc=$(cat "$out/shares-rc")

# The guest's pprof file and tables (base64 between "#-- file" and "#-- end"):
# go tool pprof, on the host, must read the demo's profile as cycread did.
for f in demo.pb.gz pp-period.txt pp-samples.txt; do
	tr -d '\r' <"$out/guest.log" |
		sed -n "/^#-- file $f\$/,/^#-- end $f\$/s/^#= //p" | base64 -d >"$out/$f" 2>/dev/null || true
done
prc=0
"$top/tool/tests/check-pprof.py" --pprof "$out/demo.pb.gz" --period "$out/pp-period.txt" \
	--samples "$out/pp-samples.txt" --label "guest demo ($kernel)" \
	--expect-inline warm_phase >"$out/pprof.tap" || prc=$?
grep -v '^1\.\.' "$out/pprof.tap"

# The kernel's own code with its vmlinux, on the host (arm64-6.1: Debian's
# linux-image-*-dbg, fetched once, too large for the guest's initramfs): in
# the guest's capture of cycsample.ko's open path, core kernel frames get
# source lines and inline frames, with no warning (the vmlinux is the build
# the capture recorded).
# shellcheck source=tool/tests/guest/tap.sh # check() and $failed, as in the guest
. "$top/tool/tests/guest/tap.sh"
vmlinux_checks()
{
	hc="$top/build/$kernel/host-tool"
	st=0

	tr -d '\r' <"$out/guest.log" |
		sed -n '/^#-- file kmod.cyc$/,/^#-- end kmod.cyc$/s/^#= //p' |
		base64 -d >"$out/kmod.cyc" 2>/dev/null || true
	make -s -C "$top/tool" OUT="$hc" -j2 all || st=1
	vml=$("$top/scripts/kernels" vmlinux "$kernel") || st=1
	[ $st -ne 0 ] || "$hc/cycread" report -i "$out/kmod.cyc" --vmlinux "$vml" --raw \
		--raw-details >"$out/kmod-vml.txt" 2>"$out/kmod-vml.err" || st=1
	[ $st -eq 0 ] && [ -s "$out/kmod.cyc" ] && ! grep -q warning "$out/kmod-vml.err" || st=1
	check $st "host: the guest's capture reported with the kernel's vmlinux, no warning"
	if [ $st -ne 0 ]; then
		sed 's/^/# /' "$out/kmod-vml.err" 2>/dev/null || true
		return 0
	fi
	k=$(grep -c "(\[kernel\.kallsyms\])" "$out/kmod-vml.txt" || true)
	lines=$(grep -c "(\[kernel\.kallsyms\]) [^ ]*\.[chS]:[0-9]" "$out/kmod-vml.txt" || true)
	st=1
	[ "$k" -gt 100 ] && [ $((lines * 100)) -ge $((k * 95)) ] && st=0
	check $st "host: core kernel frames with a source line from the vmlinux ($lines of $k)"
	st=1
	grep -q "^	[0-9a-f]* el0_svc+0x[0-9a-f]* (\[kernel\.kallsyms\]) .*entry-common\.c:[0-9]" \
		"$out/kmod-vml.txt" && st=0
	check $st "host: el0_svc's frames name arch/arm64/kernel/entry-common.c:N"
	inl=$(grep -c " (inlined) [^ ]*\.[ch]:[0-9]" "$out/kmod-vml.txt" || true)
	st=1
	[ "$inl" -gt 0 ] && st=0
	check $st "host: kernel functions inlined, as frames of their own ($inl)"
	# a real kernel's DWARF through every reader (units, trees, lines,
	# range lists): what the fixtures are too small to hold
	if ! command -v valgrind >/dev/null 2>&1; then
		echo "# memcheck of the vmlinux report: no valgrind"
		return 0
	fi
	st=0
	timeout 900 valgrind -q --error-exitcode=99 "$hc/cycread" report -i "$out/kmod.cyc" \
		--vmlinux "$vml" --raw --raw-details >"$out/kmod-vml.memcheck.txt" \
		2>"$out/kmod-vml.memcheck.err" || st=1
	cmp -s "$out/kmod-vml.txt" "$out/kmod-vml.memcheck.txt" || st=1
	check $st "host: the same report under memcheck: no error, the same output"
	[ $st -eq 0 ] && return 0
	head -n 20 "$out/kmod-vml.memcheck.err" | sed 's/^/# /'
}
[ "$kernel" = arm64-6.1 ] && vmlinux_checks
[ "$rc" -eq 0 ] || exit "$rc"
[ "$prc" -eq 0 ] || exit "$prc"
[ "$failed" -eq 0 ]
