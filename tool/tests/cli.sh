#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# cli.sh CYCREAD CAPTURE LONG [ELF] - the command line: usage errors exit 2,
# runtime errors exit 1 with a message naming the PID or file and the cause.
# LONG is CAPTURE's samples twice, the second time 2^40 ns (18 minutes)
# later ("mkcapture LONG 34 1099511627776").  ELF, an executable with a
# symbol main for addr2sym, is CYCREAD itself unless given (CYCREAD may be a
# script that runs it under valgrind).

set -u
tool=$1
cap=$2
long=$3
elf=${4:-$tool}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
failed=0

# expect STATUS PATTERN DESCRIPTION -- COMMAND...
expect()
{
	want=$1
	pattern=$2
	what=$3
	shift 4
	"$@" >"$tmp/out" 2>"$tmp/err"
	got=$?
	n=$((n + 1))
	if [ "$got" -eq "$want" ] && grep -q -- "$pattern" "$tmp/out" "$tmp/err"; then
		echo "ok $n - $what"
	else
		failed=$((failed + 1))
		echo "not ok $n - $what (status $got, want $want; pattern '$pattern')"
		sed 's/^/#   /' "$tmp/err" "$tmp/out" | head -5
	fi
}

sh -c 'exit 0' &
dead=$!
wait $dead

expect 2 "nothing to profile" "no target: usage error" -- "$tool"
expect 2 "not a number" "-p abc: usage error" -- "$tool" -p abc
expect 2 "not a number" "-F 0: usage error" -- "$tool" -F 0 -p 1
expect 2 "one target" "two targets: usage error" -- "$tool" -p 1 -a
expect 2 "choose one" "--raw with --folded: usage error" -- "$tool" --raw --folded -p 1
expect 2 "power of two" "-m 3: usage error" -- "$tool" -m 3 -p 1
expect 2 "power of two" "-m 4097K: usage error" -- "$tool" -m 4097K -p 1
expect 2 "2 pages to 16 MiB" "-m 1: below two pages" -- "$tool" -m 1 -p 1
expect 2 "2 pages to 16 MiB" "-m 32M: above the bound in bytes" -- "$tool" -m 32M -p 1
expect 2 "$(( $(getconf PAGESIZE) * 8192 / 1024 )) KiB per CPU" \
	"-m 8192 pages: refused by their size in bytes" -- "$tool" -m 8192 -p 1
expect 1 "no such process" "-m 512K: a size is accepted" -- "$tool" -m 512K -p "$dead"
expect 2 "sort keys 'bogus': unknown key" "--sort bogus: usage error" -- "$tool" --sort bogus -p 1
expect 2 "a key given twice (use comm,pid,tid,dso,sym,srcline,pmu: at most 7, each once)" \
	"--sort dso,sym,dso: duplicate key, limit named" -- "$tool" --sort dso,sym,dso -i "$cap"
expect 0 "Self cycles  Samples  Command  Pid  Tid  Shared object .* PMU$" "--sort with every key once: accepted" -- \
	"$tool" -i "$cap" --sort comm,pid,tid,dso,sym,srcline,pmu
expect 2 "weight: 'cpu' (use period or samples)" "--weight cpu: usage error" -- \
	"$tool" -i "$cap" --weight cpu
expect 2 "call graph: 'upward'" "--call-graph upward: usage error" -- \
	"$tool" -i "$cap" --call-graph=upward
expect 2 "the limit is not a percentage" "--call-graph caller,x: usage error" -- \
	"$tool" -i "$cap" --call-graph caller,x
expect 0 "---__libc_start_main" "--call-graph caller (value after a space) prints trees" -- \
	"$tool" -i "$cap" --call-graph caller
expect 0 "samples per 2 s" "--histogram 2 (value after a space)" -- "$tool" -i "$cap" --histogram 2
too_long="--histogram: samples from 0.000 to 1099.512 s make 1099512 buckets of 0.001 s,"
too_long="$too_long more than 1000000; try --histogram=0.002 or wider"
too_long="$too_long (the session lasted 2.50 s: a corrupt sample time?)"
expect 1 "$too_long" "--histogram=0.001 over 18 min of a 2.5 s session: exit 1, a width that fits" \
	-- "$tool" -i "$long" --histogram=0.001
expect 1 "$too_long" "... also with --pprof, which it writes first" -- \
	"$tool" -i "$long" --histogram=0.001 --pprof "$tmp/long.pb.gz"
expect 0 "^ok$" "... whole" -- sh -c 'gzip -t "$1" && echo ok' sh "$tmp/long.pb.gz"
expect 0 "1099.000     1100.000       17" "--histogram over them: 1100 buckets" -- \
	"$tool" -i "$long" --histogram
expect 2 "takes no target or command" "-g callerprog: a command, not a graph order" -- \
	"$tool" -i "$cap" -g callerprog
expect 2 "choose one" "--raw with --histogram: usage error" -- "$tool" -i "$cap" --raw --histogram
expect 2 "-p 'abc': not a list of numbers" "-i with -p abc: usage error" -- "$tool" -i "$cap" -p abc
expect 2 "give each once" "-i with -p twice: usage error" -- "$tool" -i "$cap" -p 1 -p 2
expect 2 "--time '3,1': END is not after START" "--time 3,1: usage error" -- \
	"$tool" -i "$cap" --time 3,1
expect 2 "--time 'soon': not START,END" "--time soon: usage error" -- "$tool" -i "$cap" --time soon
expect 1 "--comm ap: no sample has that command (app)" "--comm of no sample: exit 1, names them" \
	-- "$tool" -i "$cap" --comm ap
expect 1 "--pid 99: no sample has that pid (100)" "-i with -p of no sample: exit 1" -- \
	"$tool" -i "$cap" -p 99
expect 1 "--tid 7: no sample has that tid (100, 101)" "-t of no sample: exit 1" -- \
	"$tool" -i "$cap" -t 7
expect 1 "--dso libz.so: no sample has that object" "--dso of no sample: exit 1" -- \
	"$tool" -i "$cap" --dso libz.so
expect 1 "--symbol memcopy: no sample has that function (compute, memcpy," \
	"--symbol of no sample: exit 1, names them" -- "$tool" -i "$cap" --symbol memcopy
expect 1 "--time: no sample in that slice (samples span 0 to 0.000 s)" \
	"--time past the end: exit 1" -- "$tool" -i "$cap" --time 1,
expect 1 "wrote" "a filter of no sample still writes the capture first" -- \
	"$tool" -i "$cap" --comm nosuch -o "$tmp/kept.cyc"
expect 0 "compute" "... and the capture it wrote reports" -- "$tool" -i "$tmp/kept.cyc"
expect 2 "needs -i" "report without -i: usage error" -- "$tool" report
expect 2 "'nan' is not a percentage" "--percent-limit nan: usage error" -- \
	"$tool" -i "$cap" --percent-limit nan
expect 2 "Try" "unknown option: usage error" -- "$tool" --bogus
expect 0 "Usage: cycread" "--help" -- "$tool" --help
expect 0 "cycread 0\." "--version" -- "$tool" --version
expect 1 "pid $dead: no such process" "dead pid: 'pid N: no such process'" -- \
	"$tool" -p "$dead"
expect 1 "tid $dead: no such process" "dead tid" -- "$tool" -t "$dead"
expect 1 "is the cycsample module loaded" "missing device named with a hint" -- \
	env CYCREAD_DEVICE="$tmp/nodev" "$tool" -p $$
expect 1 "No such file" "missing capture file" -- "$tool" report -i "$tmp/none.cyc"
head -c 100 "$cap" >"$tmp/cut.cyc"
expect 1 "truncated" "truncated capture: clear error" -- "$tool" report -i "$tmp/cut.cyc"
echo "hello" >"$tmp/text.cyc"
expect 1 "not a cycread capture" "not a capture" -- "$tool" report -i "$tmp/text.cyc"
expect 1 "nodir/x.svg" "unwritable --svg path" -- "$tool" report -i "$cap" --svg "$tmp/nodir/x.svg"
expect 0 "compute" "report -i capture" -- "$tool" report -i "$cap"
expect 0 "compute" "-i without the report word" -- "$tool" -i "$cap"
expect 0 "wrote" "report -i A -o B rewrites a capture" -- "$tool" report -i "$cap" -o "$tmp/b.cyc"
expect 0 "main;do_work;compute 4725000" "the rewritten capture reports the same" -- \
	"$tool" report -i "$tmp/b.cyc" --folded
# output files: nothing prepared beside the name is used, a link at the name
# is replaced like a file, and a FIFO, a device or /dev/stdout is written into
echo precious >"$tmp/victim"
ln -s "$tmp/victim" "$tmp/c.cyc.tmp"
ln -s "$tmp/victim" "$tmp/c.pb.gz.tmp"
expect 0 "wrote" "-o FILE: a link at FILE.tmp is left alone" -- \
	"$tool" report -i "$cap" --pprof "$tmp/c.pb.gz" -o "$tmp/c.cyc"
expect 0 "^precious$" "... and so is what it points to" -- cat "$tmp/victim"
expect 0 "compute" "... and FILE is the capture" -- "$tool" report -i "$tmp/c.cyc"
expect 0 "^640$" "-o FILE: a new file gets the umask's mode" -- \
	sh -c 'umask 027 && "$1" report -q -i "$2" -o "$3" && stat -c %a "$3"' sh \
	"$tool" "$cap" "$tmp/m.cyc"
mkfifo "$tmp/fifo.cyc" "$tmp/fifo.pb.gz"
expect 1 "needs seeking: not a pipe" "-o FIFO: refused (a capture is written with seeks)" -- \
	timeout 20 "$tool" report -i "$cap" -o "$tmp/fifo.cyc"
timeout 60 cat "$tmp/fifo.pb.gz" >"$tmp/from-fifo.pb.gz" &
reader=$!
expect 0 "compute" "--pprof FIFO: written into the FIFO" -- \
	timeout 20 "$tool" report -i "$cap" --pprof "$tmp/fifo.pb.gz"
wait $reader
expect 0 "^p" "... which stays a FIFO" -- ls -l "$tmp/fifo.pb.gz"
expect 0 "^ok$" "... and its reader got the profile" -- \
	sh -c 'gzip -t "$1" && echo ok' sh "$tmp/from-fifo.pb.gz"
expect 0 "^ok$" "--pprof /dev/stdout into a file: written through, not replaced" -- \
	sh -c '"$1" report -q -i "$2" --pprof /dev/stdout >"$3" && gzip -t "$3" && echo ok' sh \
	"$tool" "$cap" "$tmp/stdout.pb.gz"
cp "$tmp/b.cyc" "$tmp/b-copy.cyc"
ln -s "$tmp/b.cyc" "$tmp/latest.cyc"
expect 0 "wrote" "-i LINK -o LINK: the link replaced by the new capture" -- \
	"$tool" report -i "$tmp/latest.cyc" -o "$tmp/latest.cyc"
expect 0 "^-" "... which is a file now" -- ls -l "$tmp/latest.cyc"
expect 0 "^same$" "... and the capture it pointed to is whole" -- \
	sh -c 'cmp "$1" "$2" && echo same' sh "$tmp/b.cyc" "$tmp/b-copy.cyc"
: >"$tmp/real.svg"
ln -s "$tmp/real.svg" "$tmp/link.svg"
expect 0 "compute" "--svg LINK: written" -- "$tool" report -i "$cap" --svg "$tmp/link.svg"
expect 0 "</svg>" "... into a file of its own" -- cat "$tmp/link.svg"
expect 0 "^0$" "... leaving what the link pointed to alone" -- stat -c %s "$tmp/real.svg"
# a terminal cannot be seeked either: refused before anything is written
# (script(1) gives the command a pseudo-terminal as its standard output)
expect 1 "needs seeking: not a terminal" "-o /dev/stdout on a terminal: refused" -- \
	script -qec "$(printf '%s ' "$tool" report -q -i "$cap" -o /dev/stdout)" /dev/null
# a file that can be written in a directory that takes no new file is
# written in place; the capture -i reads is not, it would be truncated
# while mapped.  Root needs CAP_DAC_OVERRIDE dropped to be refused.  The
# same through /dev/stdout, which is written in place wherever it leads.
cp "$cap" "$tmp/in-out.cyc"
expect 1 "being read (-i): written in place it would be truncated" \
	"-i FILE -o /dev/stdout >>FILE: refused" -- \
	sh -c '"$1" report -q -i "$2" -o /dev/stdout >>"$2"' sh "$tool" "$tmp/in-out.cyc"
expect 0 "^same$" "... and the capture is whole" -- \
	sh -c 'cmp "$1" "$2" && echo same' sh "$cap" "$tmp/in-out.cyc"
mkdir "$tmp/ro"
cp "$cap" "$tmp/ro/in.cyc"
: >"$tmp/ro/out.cyc"
chmod 555 "$tmp/ro"
unpriv=
[ "$(id -u)" -eq 0 ] && unpriv="setpriv --bounding-set -dac_override,-dac_read_search --"
if [ -z "$unpriv" ] || $unpriv true 2>/dev/null; then
	expect 0 "wrote" "-o FILE in an unwritable directory: written in place" -- \
		$unpriv "$tool" report -i "$cap" -o "$tmp/ro/out.cyc"
	expect 0 "main;do_work;compute 4725000" "... a whole capture" -- \
		"$tool" report -i "$tmp/ro/out.cyc" --folded
	expect 1 "being read (-i): written in place it would be truncated" \
		"-i FILE -o FILE there: refused" -- \
		$unpriv "$tool" report -i "$tmp/ro/in.cyc" -o "$tmp/ro/in.cyc"
	expect 0 "^same$" "... and the capture is whole" -- \
		sh -c 'cmp "$1" "$2" && echo same' sh "$cap" "$tmp/ro/in.cyc"
else
	for what in "written in place" "a whole capture" "-i FILE -o FILE refused" "capture whole"; do
		n=$((n + 1))
		echo "ok $n - # SKIP $what: no setpriv --bounding-set here"
	done
fi
chmod 755 "$tmp/ro"
expect 1 "a directory" "-o DIRECTORY: an error" -- "$tool" report -i "$cap" -q -o "$tmp"
expect 1 "Is a directory" "--svg DIRECTORY: an error" -- "$tool" report -i "$cap" -q --svg "$tmp"
expect 0 "^none$" "no temporary file left by any of them" -- \
	sh -c 'ls "$1" | grep -E "\.[A-Za-z0-9]{6}$" || echo none' sh "$tmp"
# options that point at nothing usable are errors, never silent fallbacks
mkdir -p "$tmp/emptyroot"
ln -s "$tmp/loop" "$tmp/loop"
expect 1 "symfs $tmp/none: No such file" "--symfs that does not exist" -- \
	"$tool" report -i "$cap" --symfs "$tmp/none"
expect 1 "not a directory" "--symfs /dev/zero" -- "$tool" report -i "$cap" --symfs /dev/zero
expect 1 "Too many levels of symbolic links" "--symfs a symlink loop" -- \
	"$tool" report -i "$cap" --symfs "$tmp/loop"
expect 1 "not a directory" "--debug-dir a file" -- \
	"$tool" report -i "$cap" --debug-dir "$cap"
expect 1 "debug-dir $tmp/none: No such file" "--debug-dir that does not exist" -- \
	"$tool" report -i "$cap" --debug-dir "$tmp/none"
expect 1 "not a directory" "--debug-dir /dev/zero" -- \
	"$tool" report -i "$cap" --debug-dir /dev/zero
expect 1 "Too many levels of symbolic links" "--debug-dir a symlink loop" -- \
	"$tool" report -i "$cap" --debug-dir "$tmp/loop"
expect 0 "none of the capture's" "--symfs with none of the files: a warning" -- \
	"$tool" report -i "$cap" --symfs "$tmp/emptyroot"
expect 1 "kallsyms-none: No such file" "--kallsyms that does not exist" -- \
	"$tool" report -i "$cap" --kallsyms "$tmp/kallsyms-none"
expect 1 "/dev/zero: not a regular file" "--kallsyms /dev/zero" -- \
	"$tool" report -i "$cap" --kallsyms /dev/zero
expect 1 "$tmp: Is a directory" "--kallsyms a directory" -- \
	"$tool" report -i "$cap" --kallsyms "$tmp"
expect 1 "not a directory" "--symfs a file" -- "$tool" report -i "$cap" --symfs "$cap"
printf '0000000000000000 T _text\n0000000000000000 T el0_svc\n' >"$tmp/kzero"
expect 1 "every address is 0" "--kallsyms with zeroed addresses" -- \
	"$tool" report -i "$cap" --kallsyms "$tmp/kzero"
printf 'ffff800008001000 T renamed_svc\nffff800008002000 T renamed_read\nffff800008003000 T _etext\n' \
	>"$tmp/kallsyms"
expect 0 "renamed_read" "--kallsyms names a capture's kernel frames" -- \
	"$tool" report -i "$cap" --kallsyms "$tmp/kallsyms"
# a .ko of the capture's module (cycsample_handler+0x10 [cycsample]), built with -g
mkdir -p "$tmp/kmod/kernel"
cat >"$tmp/handler.c" <<'EOF'
int cycsample_handler(int x, int y)
{
	int s = 0;

	while (y--)
		s += x * 3 + y;
	return s;
}
EOF
gcc -O2 -g -c "$tmp/handler.c" -o "$tmp/kmod/kernel/cycsample.ko"
expect 0 "cycsample_handler+0x10 (\[cycsample\]) $tmp/handler.c:[0-9]" \
	"--kmod-dir: a module frame's source line from its .ko" -- \
	"$tool" report -i "$cap" --kmod-dir "$tmp/kmod" --raw --raw-details
expect 0 "cycsample_handler+0x10 (\[cycsample\])$" "without it, the kallsyms name alone" -- \
	"$tool" report -i "$cap" --raw --raw-details
expect 1 "kmod-dir $tmp/none: No such file" "--kmod-dir that does not exist" -- \
	"$tool" report -i "$cap" --kmod-dir "$tmp/none"
expect 1 "not a directory" "--kmod-dir a file" -- \
	"$tool" report -i "$cap" --kmod-dir "$cap"
# a vmlinux of the capture's kernel functions (el0_svc, do_sys_read at
# kallsyms' distance), built with -g; one with do_sys_read elsewhere
cat >"$tmp/vm.c" <<'EOF'
#define KFN(name, sec) \
	__attribute__((section(sec), noinline)) int name(int x, int y) \
	{ \
		int s = 0; \
		while (y--) \
			s += x * 7 + y * y - (s >> 3); \
		return s; \
	}
KFN(el0_svc, "ktext1")
KFN(do_sys_read, "ktext2")
void _start(void)
{
}
EOF
for at in 502000 503000; do
	gcc -O1 -g -nostdlib -static -Wl,--build-id=sha1 -Wl,--section-start=ktext1=0x501000 \
		-Wl,--section-start=ktext2=0x$at "$tmp/vm.c" -o "$tmp/vmlinux-$at"
done
expect 0 "do_sys_read+0x10 (\[kernel.kallsyms\]) $tmp/vm.c:[0-9]" \
	"--vmlinux: a kernel frame's source line" -- \
	"$tool" report -i "$cap" --vmlinux "$tmp/vmlinux-502000" --raw --raw-details
expect 0 "do_sys_read+0x10 (\[kernel.kallsyms\])$" "without it, the kallsyms name alone" -- \
	"$tool" report -i "$cap" --raw --raw-details
expect 0 "vmlinux-503000: [a-z0-9_]* is not where kallsyms puts it" \
	"a vmlinux whose functions are elsewhere: a warning" -- \
	"$tool" report -i "$cap" --vmlinux "$tmp/vmlinux-503000"
strip -o "$tmp/vmlinux-stripped" "$tmp/vmlinux-502000"
expect 0 "vmlinux-stripped: no function symbols; the kernel keeps its kallsyms names" \
	"--vmlinux without symbols: a warning" -- \
	"$tool" report -i "$cap" --vmlinux "$tmp/vmlinux-stripped"
expect 1 "vmlinux $tmp/none: No such file" "--vmlinux that does not exist" -- \
	"$tool" report -i "$cap" --vmlinux "$tmp/none"
expect 1 "vmlinux $tmp: not a regular file" "--vmlinux a directory" -- \
	"$tool" report -i "$cap" --vmlinux "$tmp"
expect 1 "vmlinux /dev/zero: not a regular file" "--vmlinux /dev/zero" -- \
	"$tool" report -i "$cap" --vmlinux /dev/zero
expect 1 "DEBUGINFOD_URLS is not set" "--debuginfod without a server" -- \
	env -u DEBUGINFOD_URLS "$tool" report -i "$cap" --debuginfod
# a FIFO where a binary should be: never opened for reading, so never hangs
mkdir -p "$tmp/fifo/usr/bin"
mkfifo "$tmp/fifo/usr/bin/app"
expect 0 "usr/bin/app: not used for /usr/bin/app: not a regular file" \
	"a FIFO in the symfs is skipped, not waited on" -- \
	timeout 20 "$tool" report -i "$cap" --symfs "$tmp/fifo" -v
main=$(nm "$elf" | sed -n 's/^\([0-9a-f]*\) T main$/\1/p')
expect 1 "D $tmp/none: No such file" "addr2sym -D that does not exist" -- \
	"$tool" addr2sym -e "$elf" -D "$tmp/none" 0
expect 0 "main+0x0" "addr2sym names an address of an ELF file" -- "$tool" addr2sym -e "$elf" "$main"
echo "1..$n"
[ "$failed" -eq 0 ]
