// SPDX-License-Identifier: GPL-2.0
/*
 * cycread - record CPU cycle samples through /dev/cycsample and report them.
 *
 * The data's path: session.c drives device.c (rings) and records.c (decode,
 * time order) while maps.c follows the processes; resolve.c names the frames
 * with elfsym.c, kallsyms.c, perfmap.c, demangle.c and leaf.c; report*.c
 * print them and capture.c saves or loads a whole session.
 */
#include <errno.h>
#include <getopt.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture.h"
#include "debuginfo.h"
#include "demangle.h"
#include "ehframe.h"
#include "srcline.h"
#include "report.h"
#include "session.h"

struct options {
	struct record_opts rec;
	struct report_opts rep;
	const char *input;
	const char *output;
	const char *symfs;
	const char *debug_dir;
	const char *kallsyms;
	const char *kmod_dir;
	const char *vmlinux;
	bool report_cmd;
	bool quiet;
	bool no_demangle;
	bool no_leaf_repair;
	bool no_inline;
	bool debuginfod;
	int nr_targets;
	/* -p and -t: the target when recording, filters with -i */
	const char *pid_arg;
	const char *tid_arg;
	int nr_ids;
};

enum long_only {
	OPT_NO_CALL_GRAPH = 256,
	OPT_USER_ONLY,
	OPT_REGS,
	OPT_NO_FALLBACK,
	OPT_MAX_STACK,
	OPT_SYMFS,
	OPT_RAW,
	OPT_FOLDED,
	OPT_SVG,
	OPT_CHILDREN,
	OPT_PERCENT_LIMIT,
	OPT_NO_DEMANGLE,
	OPT_NO_LEAF_REPAIR,
	OPT_DEBUG_DIR,
	OPT_KALLSYMS,
	OPT_KMOD_DIR,
	OPT_VMLINUX,
	OPT_NO_INLINE,
	OPT_DEBUGINFOD,
	OPT_PPROF,
	OPT_WEIGHT,
	OPT_COMM,
	OPT_DSO,
	OPT_SYMBOL,
	OPT_TIME,
	OPT_HISTOGRAM,
	OPT_RAW_DETAILS,
	OPT_SHOW_TASK,
	OPT_SHOW_LOST,
};

static const struct option long_opts[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "tid", required_argument, NULL, 't' },
	{ "all-cpus", no_argument, NULL, 'a' },
	{ "freq", required_argument, NULL, 'F' },
	{ "count", required_argument, NULL, 'c' },
	{ "event", required_argument, NULL, 'e' },
	{ "duration", required_argument, NULL, 'd' },
	{ "call-graph", optional_argument, NULL, 'g' },
	{ "no-call-graph", no_argument, NULL, OPT_NO_CALL_GRAPH },
	{ "user-only", no_argument, NULL, OPT_USER_ONLY },
	{ "regs", no_argument, NULL, OPT_REGS },
	{ "no-fallback", no_argument, NULL, OPT_NO_FALLBACK },
	{ "mmap-pages", required_argument, NULL, 'm' },
	{ "max-stack", required_argument, NULL, OPT_MAX_STACK },
	{ "output", required_argument, NULL, 'o' },
	{ "input", required_argument, NULL, 'i' },
	{ "symfs", required_argument, NULL, OPT_SYMFS },
	{ "debug-dir", required_argument, NULL, OPT_DEBUG_DIR },
	{ "kallsyms", required_argument, NULL, OPT_KALLSYMS },
	{ "kmod-dir", required_argument, NULL, OPT_KMOD_DIR },
	{ "vmlinux", required_argument, NULL, OPT_VMLINUX },
	{ "debuginfod", no_argument, NULL, OPT_DEBUGINFOD },
	{ "raw", no_argument, NULL, OPT_RAW },
	{ "raw-details", no_argument, NULL, OPT_RAW_DETAILS },
	{ "show-task-events", no_argument, NULL, OPT_SHOW_TASK },
	{ "show-lost-events", no_argument, NULL, OPT_SHOW_LOST },
	{ "pprof", required_argument, NULL, OPT_PPROF },
	{ "weight", required_argument, NULL, OPT_WEIGHT },
	{ "comm", required_argument, NULL, OPT_COMM },
	{ "comms", required_argument, NULL, OPT_COMM },
	{ "dso", required_argument, NULL, OPT_DSO },
	{ "dsos", required_argument, NULL, OPT_DSO },
	{ "symbol", required_argument, NULL, OPT_SYMBOL },
	{ "symbols", required_argument, NULL, OPT_SYMBOL },
	{ "time", required_argument, NULL, OPT_TIME },
	{ "histogram", optional_argument, NULL, OPT_HISTOGRAM },
	{ "folded", no_argument, NULL, OPT_FOLDED },
	{ "svg", required_argument, NULL, OPT_SVG },
	{ "children", no_argument, NULL, OPT_CHILDREN },
	{ "sort", required_argument, NULL, 's' },
	{ "percent-limit", required_argument, NULL, OPT_PERCENT_LIMIT },
	{ "no-demangle", no_argument, NULL, OPT_NO_DEMANGLE },
	{ "no-leaf-repair", no_argument, NULL, OPT_NO_LEAF_REPAIR },
	{ "no-inline", no_argument, NULL, OPT_NO_INLINE },
	{ "quiet", no_argument, NULL, 'q' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 }
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: cycread [options] [-p PID | -t TID | -a | [--] CMD [ARGS]]\n"
		"       cycread report -i FILE [report options]\n"
		"       cycread addr2sym -e ELF [-i] [ADDR...]\n"
		"Sample CPU cycles through " CYCSAMPLE_DEVICE " and show where the time goes.\n"
		"\n"
		"Target (one):\n"
		"  -p, --pid PID         every thread of process PID, and its new children\n"
		"  -t, --tid TID         one thread\n"
		"  -a, --all-cpus        every CPU, whatever runs there\n"
		"  [--] CMD [ARGS]       start CMD and profile it until it exits\n"
		"Sampling:\n"
		"  -F, --freq HZ         samples/s per busy CPU (default %d: low overhead, not\n"
		"                        throttled under QEMU TCG, ~10k samples in 10 s)\n"
		"  -c, --count PERIOD    one sample every PERIOD cycles instead\n"
		"  -e, --event EV        cycles (default; software clock if the PMU cannot) | clock\n"
		"      --no-fallback     cycles or an error: never the software clock\n"
		"  -d, --duration SECS   stop after SECS (default: target exit or Ctrl-C)\n"
		"  -g, --call-graph      record callchains (default); --no-call-graph: pc only\n"
		"      --user-only       leave kernel mode out\n"
		"      --regs            record user registers (leaf callers inside syscalls)\n"
		"  -m, --mmap-pages N    ring per CPU: N pages (a power of two) or a size such\n"
		"                        as 512K or 4M (default perf record's, 512K at the\n"
		"                        kernel's defaults; at most %uM)\n"
		"      --max-stack N     frames per chain (default %d, at most %d)\n"
		"  -o, --output FILE     also save a capture file (for cycread report -i)\n"
		"Report:\n"
		"  -i, --input FILE      report a capture file; --symfs DIR: binaries under DIR\n"
		"      --weight W        period (default: cycles, as perf report) or samples\n"
		"      --children        add inclusive percentages\n"
		"  -s, --sort KEYS       from comm,pid,tid,dso,sym,srcline,pmu (default dso,sym)\n"
		"      --percent-limit P hide rows below P %%\n"
		"  -g, --call-graph caller|callee[,P]  a call tree under each row (P: 0.5 %%);\n"
		"                        -G alone: caller (as perf report -G)\n"
		"  -p, -t, --comm, --dso, --symbol LIST  with -i: only these pids, tids,\n"
		"                        commands, sampled objects or functions (a,b,...)\n"
		"      --time START,END  only seconds START to END after the first record\n"
		"      --histogram[=S]   samples per S seconds (default 1), to find slices\n"
		"      --raw             the samples as perf script prints them; with\n"
		"                        --raw-details, --show-task-events, --show-lost-events\n"
		"      --folded          collapsed stacks for FlameGraph or speedscope\n"
		"      --svg FILE        write an interactive flame graph\n"
		"      --pprof FILE      write a gzipped pprof profile (go tool pprof, Pyroscope)\n"
		"      --no-inline       no frames for inlined functions (source lines stay)\n"
		"      --no-demangle, --no-leaf-repair, --debug-dir DIR, --kallsyms FILE\n"
		"      --kmod-dir DIR    kernel modules' .ko files (lines in module code)\n"
		"      --vmlinux FILE    the kernel's vmlinux (lines in kernel code)\n"
		"      --debuginfod      also ask $DEBUGINFOD_URLS for debug files (off by default)\n"
		"  -q, --quiet           no report on stdout;  -v, --verbose\n"
		"  -h, --help;  -V, --version\n"
		"Exit status: 0 success, 1 runtime error, 2 usage error.\n",
		DEFAULT_FREQ, CYCSAMPLE_MAX_RING_BYTES >> 20, CYCSAMPLE_DEFAULT_STACK,
		CYCSAMPLE_MAX_STACK);
}

static void __noreturn bad_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "%s: ", prog_name);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry '%s --help'.\n", prog_name);
	exit(EXIT_USAGE);
}

static u64 number(const char *arg, const char *what, u64 min, u64 max)
{
	u64 v;

	if (!parse_u64(arg, 0, &v) || v < min || v > max) {
		fprintf(stderr, "%s: %s: '%s' is not a number from %llu to %llu\n", prog_name, what,
			arg, min, max);
		fprintf(stderr, "Try '%s --help'.\n", prog_name);
		exit(EXIT_USAGE);
	}
	return v;
}

/*
 * -m: pages, or bytes with a K, M or G suffix as perf's -m takes them.  The
 * bound is in bytes: 4096 pages are 16 MiB with 4 KiB pages but 64 MiB with
 * 16 KiB ones.
 */
static u32 ring_pages_arg(const char *arg)
{
	u64 page = (u64)sysconf(_SC_PAGESIZE), v, bytes;
	size_t len = strlen(arg);
	unsigned int shift = 0;
	char num[24], msg[160];

	if (len && strchr("kK", arg[len - 1]))
		shift = 10;
	else if (len && strchr("mM", arg[len - 1]))
		shift = 20;
	else if (len && strchr("gG", arg[len - 1]))
		shift = 30;
	if (len - !!shift >= sizeof(num))
		bad_usage("mmap pages: '%s' is not a page count or a size such as 512K", arg);
	memcpy(num, arg, len - !!shift);
	num[len - !!shift] = '\0';
	if (!parse_u64(num, 10, &v) || !v || v > UINT32_MAX)
		bad_usage("mmap pages: '%s' is not a page count or a size such as 512K", arg);
	bytes = shift ? v << shift : v * page;
	if (bytes % page || (bytes / page) & (bytes / page - 1))
		bad_usage("mmap pages: '%s' is not a power of two pages", arg);
	if (bytes / page < CYCSAMPLE_MIN_RING_PAGES || bytes > CYCSAMPLE_MAX_RING_BYTES) {
		snprintf(msg, sizeof(msg),
			 "mmap pages: '%s' is %llu KiB per CPU with %llu KiB pages; rings are %u "
			 "pages to %u MiB",
			 arg, bytes >> 10, page >> 10, (unsigned int)CYCSAMPLE_MIN_RING_PAGES,
			 CYCSAMPLE_MAX_RING_BYTES >> 20);
		bad_usage("%s", msg);
	}
	return bytes / page;
}

static void set_target(struct options *o, u32 type, const char *arg)
{
	o->nr_targets++;
	o->rec.target_type = type;
	if (arg)
		o->rec.target =
			number(arg, type == CYCSAMPLE_TARGET_TID ? "tid" : "pid", 1, INT_MAX);
}

/* "cycread: OPT 'ARG': WHY" and exit 2 */
static void __noreturn bad_value(const char *opt, const char *arg, const char *why)
{
	fprintf(stderr, "%s: %s '%s': %s\n", prog_name, opt, arg, why);
	fprintf(stderr, "Try '%s --help'.\n", prog_name);
	exit(EXIT_USAGE);
}

static void filter(struct options *o, enum filter_kind kind, const char *opt, const char *arg)
{
	const char *why;

	if (!report_parse_filter(&o->rep, kind, arg, &why))
		bad_value(opt, arg, why);
}

/* --call-graph [caller|callee][,PERCENT]: a bare one records callchains. */
static void call_graph(struct options *o, const char *arg)
{
	const char *comma = arg ? strchr(arg, ',') : NULL;
	size_t len = comma ? (size_t)(comma - arg) : arg ? strlen(arg) : 0;
	char *end;

	if (!arg) {
		o->rec.callchain = true;
		return;
	}
	if (len == 6 && !strncmp(arg, "caller", 6))
		o->rep.graph = GRAPH_CALLER;
	else if (len == 6 && !strncmp(arg, "callee", 6))
		o->rep.graph = GRAPH_CALLEE;
	else
		bad_usage("call graph: '%s' (use caller or callee, then ,PERCENT)", arg);
	if (!comma)
		return;
	errno = 0;
	o->rep.graph_limit = strtod(comma + 1, &end);
	if (errno || *end || end == comma + 1 || !(o->rep.graph_limit >= 0) ||
	    o->rep.graph_limit > 100)
		bad_usage("call graph: '%s': the limit is not a percentage", arg);
}

/*
 * An optional value given after a space ("--call-graph caller"): the next
 * argument when @is_value says it is one, so a command ("-g ./prog") stays
 * a command.
 */
static const char *peek_arg(int argc, char **argv, bool (*is_value)(const char *))
{
	if (optarg || optind >= argc || !is_value(argv[optind]))
		return optarg;
	return argv[optind++];
}

/* "caller" or "callee", alone or with ",PERCENT" */
static bool is_graph(const char *s)
{
	return (!strncmp(s, "caller", 6) || !strncmp(s, "callee", 6)) && (!s[6] || s[6] == ',');
}

/* a number, wholly */
static bool is_number(const char *s)
{
	char *end;

	strtod(s, &end);
	return end != s && !*end;
}

static void parse(struct options *o, int argc, char **argv)
{
	const char *bad;
	double secs;
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "+p:t:aF:c:e:d:gGm:o:i:s:qvhV", long_opts, NULL)) !=
	       -1) {
		switch (c) {
		case 'p':
			o->nr_ids += !!o->pid_arg;
			o->pid_arg = optarg;
			o->nr_ids++;
			break;
		case 't':
			o->nr_ids += !!o->tid_arg;
			o->tid_arg = optarg;
			o->nr_ids++;
			break;
		case 'a':
			set_target(o, CYCSAMPLE_TARGET_CPUS, NULL);
			break;
		case 'F':
			o->rec.freq = number(optarg, "frequency", 1, CYCSAMPLE_MAX_FREQ);
			break;
		case 'c':
			o->rec.period = number(optarg, "period", 1, CYCSAMPLE_MAX_PERIOD);
			break;
		case 'e':
			if (!strcmp(optarg, "cycles"))
				o->rec.event = CYCSAMPLE_EVENT_CYCLES;
			else if (!strcmp(optarg, "clock") || !strcmp(optarg, "cpu-clock"))
				o->rec.event = CYCSAMPLE_EVENT_CLOCK;
			else
				bad_usage("unknown event '%s' (cycles or clock)", optarg);
			break;
		case 'd':
			errno = 0;
			secs = strtod(optarg, &end);
			if (errno || *end || end == optarg || !(secs > 0) || secs > 1e7)
				bad_usage("duration: '%s' is not a positive number of seconds",
					  optarg);
			o->rec.duration = secs;
			break;
		case 'g':
			call_graph(o, peek_arg(argc, argv, is_graph));
			break;
		case 'G':
			o->rep.graph = GRAPH_CALLER;
			break;
		case OPT_NO_CALL_GRAPH:
			o->rec.callchain = false;
			break;
		case OPT_USER_ONLY:
			o->rec.user_only = true;
			break;
		case OPT_REGS:
			o->rec.regs_user = true;
			break;
		case OPT_NO_FALLBACK:
			o->rec.no_fallback = true;
			break;
		case 'm':
			o->rec.ring_pages = ring_pages_arg(optarg);
			break;
		case OPT_MAX_STACK:
			o->rec.max_stack = number(optarg, "max stack", 1, CYCSAMPLE_MAX_STACK);
			break;
		case 'o':
			o->output = optarg;
			break;
		case 'i':
			o->input = optarg;
			break;
		case OPT_SYMFS:
			o->symfs = optarg;
			break;
		case OPT_DEBUG_DIR:
			o->debug_dir = optarg;
			break;
		case OPT_KALLSYMS:
			o->kallsyms = optarg;
			break;
		case OPT_KMOD_DIR:
			o->kmod_dir = optarg;
			break;
		case OPT_VMLINUX:
			o->vmlinux = optarg;
			break;
		case OPT_RAW:
			o->rep.raw = true;
			break;
		case OPT_RAW_DETAILS:
			o->rep.raw_details = true;
			break;
		case OPT_SHOW_TASK:
			o->rep.show_task_events = true;
			break;
		case OPT_SHOW_LOST:
			o->rep.show_lost_events = true;
			break;
		case OPT_PPROF:
			o->rep.pprof_path = optarg;
			break;
		case OPT_WEIGHT:
			if (!strcmp(optarg, "period") || !strcmp(optarg, "cycles"))
				o->rep.weight = WEIGHT_PERIOD;
			else if (!strcmp(optarg, "samples"))
				o->rep.weight = WEIGHT_SAMPLES;
			else
				bad_usage("weight: '%s' (use period or samples)", optarg);
			break;
		case OPT_COMM:
			filter(o, FILTER_COMM, "--comm", optarg);
			break;
		case OPT_DSO:
			filter(o, FILTER_DSO, "--dso", optarg);
			break;
		case OPT_SYMBOL:
			filter(o, FILTER_SYMBOL, "--symbol", optarg);
			break;
		case OPT_TIME:
			if (!report_parse_time(&o->rep, optarg, &bad))
				bad_value("--time", optarg, bad);
			break;
		case OPT_HISTOGRAM:
			optarg = (char *)peek_arg(argc, argv, is_number);
			o->rep.histogram = optarg ? strtod(optarg, &end) : 1;
			if (optarg && (*end || end == optarg || !(o->rep.histogram >= 1e-6) ||
				       o->rep.histogram > 1e6))
				bad_usage("histogram: '%s' is not a bucket width in seconds",
					  optarg);
			break;
		case OPT_FOLDED:
			o->rep.folded = true;
			break;
		case OPT_SVG:
			o->rep.svg_path = optarg;
			break;
		case OPT_CHILDREN:
			o->rep.children = true;
			break;
		case 's':
			if (!report_parse_sort(&o->rep, optarg, &bad))
				bad_value("sort keys", optarg, bad);
			break;
		case OPT_PERCENT_LIMIT:
			errno = 0;
			o->rep.min_percent = strtod(optarg, &end);
			if (errno || *end || end == optarg || !(o->rep.min_percent >= 0) ||
			    o->rep.min_percent > 100)
				bad_usage("percent limit: '%s' is not a percentage", optarg);
			break;
		case OPT_NO_DEMANGLE:
			o->no_demangle = true;
			break;
		case OPT_NO_LEAF_REPAIR:
			o->no_leaf_repair = true;
			break;
		case OPT_NO_INLINE:
			o->no_inline = true;
			break;
		case OPT_DEBUGINFOD:
			o->debuginfod = true;
			break;
		case 'q':
			o->quiet = true;
			o->rec.quiet = true;
			break;
		case 'v':
			verbose++;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			printf("cycread %s (cycsample ABI %d)\n", CYCSAMPLE_VERSION,
			       CYCSAMPLE_ABI_VERSION);
			exit(0);
		default:
			fprintf(stderr, "Try '%s --help'.\n", prog_name);
			exit(EXIT_USAGE);
		}
	}
	if (optind < argc) {
		o->rec.cmd = argv + optind;
		o->nr_targets++;
		o->rec.target_type = CYCSAMPLE_TARGET_PID;
	}
	if (o->rep.raw + o->rep.folded + (o->rep.histogram > 0) > 1)
		bad_usage("%s",
			  "--raw, --folded and --histogram are different outputs; choose one");
	if (o->rec.freq && o->rec.period)
		bad_usage("%s", "-F and -c both set the rate; choose one");
	if (o->input || o->report_cmd) {
		if (!o->input)
			bad_usage("%s", "report needs -i FILE");
		if (o->nr_targets)
			bad_usage("%s", "-i reads a capture; it takes no target or command");
		/* with a capture, -p and -t choose samples, as in perf report */
		if (o->nr_ids > !!o->pid_arg + !!o->tid_arg)
			bad_usage("%s", "-p and -t take a list (a,b,...): give each once");
		if (o->pid_arg)
			filter(o, FILTER_PID, "-p", o->pid_arg);
		if (o->tid_arg)
			filter(o, FILTER_TID, "-t", o->tid_arg);
		return;
	}
	if (o->symfs)
		bad_usage("%s", "--symfs applies to -i FILE");
	if (o->pid_arg)
		set_target(o, CYCSAMPLE_TARGET_PID, o->pid_arg);
	if (o->tid_arg)
		set_target(o, CYCSAMPLE_TARGET_TID, o->tid_arg);
	if (o->nr_ids > 1)
		o->nr_targets = 2; /* "give one target" */
	if (o->nr_targets != 1)
		bad_usage("%s",
			  o->nr_targets
				  ? "give one target: -p, -t, -a or a command"
				  : "nothing to profile: give -p PID, -t TID, -a or a command");
}

static char *svg_title(const struct profile *p)
{
	const struct prof_meta *m = &p->meta;
	char target[64];

	if (m->target_type == CYCSAMPLE_TARGET_CPUS)
		snprintf(target, sizeof(target), "all CPUs");
	else
		snprintf(target, sizeof(target), "%s %d",
			 m->target_type == CYCSAMPLE_TARGET_TID ? "tid" : "pid", m->target);
	return xasprintf("cycread: %s, %llu samples of %s", m->command ? m->command : target,
			 (unsigned long long)p->nr_samples, meta_event_name(m->event));
}

static int output(struct options *o, struct profile *p, struct maps *ms, struct resolver *r)
{
	struct report rep;
	char err[512];
	int ret = 0;

	if (o->rep.raw || o->rep.pprof_path)
		report_build(&rep, p, r);
	else
		report_build_no_addrs(&rep, p, r);
	if (r->live && r->ksyms.hidden) {
		p->meta.ksyms_hidden = true;
		free(p->meta.ksyms_note);
		p->meta.ksyms_note = xstrdup(r->ksyms.note);
	}
	if (o->output) {
		ret = capture_write(o->output, &rep, ms);
		if (ret) {
			pr_err("%s: %s", o->output, out_strerror(-ret));
			ret = EXIT_RUNTIME;
			goto out;
		}
		if (!o->quiet)
			fprintf(stderr, "%s: wrote %llu samples to %s\n", prog_name,
				(unsigned long long)p->nr_samples, o->output);
	}
	/* after the capture: a filter that matches nothing loses no recording */
	if (report_select(&rep, &o->rep, err, sizeof(err))) {
		pr_err("%s", err);
		ret = EXIT_RUNTIME;
		goto out;
	}
	if (o->rep.pprof_path) {
		ret = report_pprof(&rep, o->rep.pprof_path);
		if (ret) {
			pr_err("%s: %s", o->rep.pprof_path, out_strerror(-ret));
			ret = EXIT_RUNTIME;
			goto out;
		}
	}
	if (o->rep.svg_path) {
		char *title = svg_title(p);
		u64 pruned;

		ret = report_svg(&rep, o->rep.svg_path, title, &pruned);
		free(title);
		if (ret) {
			pr_err("%s: %s", o->rep.svg_path, out_strerror(-ret));
			ret = EXIT_RUNTIME;
			goto out;
		}
		if (pruned && !o->quiet)
			fprintf(stderr, "%s: %s: %llu frames narrower than a pixel not drawn\n",
				prog_name, o->rep.svg_path, (unsigned long long)pruned);
	}
	if (o->quiet)
		goto out;
	if (o->rep.raw) {
		report_raw(&rep, &o->rep, stdout);
	} else if (o->rep.folded) {
		report_folded(&rep, stdout);
	} else if (o->rep.histogram > 0) {
		/* after -o, --svg and --pprof: a histogram too long costs them nothing */
		if (report_histogram_check(&rep, o->rep.histogram, err, sizeof(err))) {
			pr_err("%s", err);
			ret = EXIT_RUNTIME;
			goto out;
		}
		report_header(&rep, stdout);
		report_histogram(&rep, o->rep.histogram, stdout);
	} else {
		report_header(&rep, stdout);
		report_top(&rep, &o->rep, stdout);
		report_footer(&rep, stdout);
	}
	if (fflush(stdout) || ferror(stdout)) {
		pr_err("stdout: %s", strerror(errno));
		ret = EXIT_RUNTIME;
	}
out:
	report_free(&rep);
	return ret;
}

/*
 * Options that name files must name usable ones: a missing directory, a
 * file where a directory belongs (or the reverse) or a symlink loop is an
 * error, not a silent fallback to the stored or default symbols.
 */
static int check_path(const char *opt, const char *path, bool dir)
{
	struct stat st;

	if (stat(path, &st)) {
		pr_err("%s %s: %s", opt, path, strerror(errno));
		return EXIT_RUNTIME;
	}
	if (dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)) {
		pr_err("%s %s: %s", opt, path, dir ? "not a directory" : "not a regular file");
		return EXIT_RUNTIME;
	}
	return 0;
}

static int check_dir(const char *opt, const char *path)
{
	return check_path(opt, path, true);
}

/*
 * Is the character device @st a terminal: /dev/tty, or the one behind our
 * standard input, output or error?  Told without opening it: opening a
 * device can do things (a serial line's DTR, a watchdog, a tape's rewind).
 */
static bool check_output_tty(const struct stat *st)
{
	struct stat fd_st;
	int fd;

	if (st->st_rdev == makedev(5, 0))
		return true;
	for (fd = 0; fd <= 2; fd++)
		if (!fstat(fd, &fd_st) && S_ISCHR(fd_st.st_mode) && fd_st.st_rdev == st->st_rdev &&
		    isatty(fd))
			return true;
	return false;
}

/*
 * A capture is written with seeks back to each section's header, so -o
 * cannot be a pipe, a socket or a terminal: said before a session records
 * anything, not after.  A directory, too.
 */
static int check_output(const char *path)
{
	const char *why = NULL;
	struct stat st;

	if (stat(path, &st))
		return 0; /* a new file */
	if (S_ISDIR(st.st_mode))
		why = "a directory";
	else if (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))
		why = "a capture file needs seeking: not a pipe or socket";
	else if (S_ISCHR(st.st_mode) && check_output_tty(&st))
		why = "a capture file needs seeking: not a terminal";
	if (!why)
		return 0;
	pr_err("-o %s: %s", path, why);
	return EXIT_RUNTIME;
}

static int check_options(const struct options *o)
{
	const char *urls = getenv("DEBUGINFOD_URLS"), *why;

	if (o->symfs && check_dir("--symfs", o->symfs))
		return EXIT_RUNTIME;
	if (o->debug_dir && check_dir("--debug-dir", o->debug_dir))
		return EXIT_RUNTIME;
	if (o->kmod_dir && check_dir("--kmod-dir", o->kmod_dir))
		return EXIT_RUNTIME;
	if (o->vmlinux && check_path("--vmlinux", o->vmlinux, false))
		return EXIT_RUNTIME;
	if (o->output && check_output(o->output))
		return EXIT_RUNTIME;
	if (o->debuginfod && !debuginfod_available(&why)) {
		pr_err("--debuginfod: %s", why);
		return EXIT_RUNTIME;
	}
	if (o->debuginfod && (!urls || !*urls)) {
		pr_err("--debuginfod: DEBUGINFOD_URLS is not set: no server to ask");
		return EXIT_RUNTIME;
	}
	return 0;
}

/*
 * --kallsyms FILE: the kernel symbols, live or for a capture (replacing
 * the stored ones).  A file that gives no usable symbol is an error.  A
 * capture comes from another boot, maybe another machine: this machine's
 * /proc/modules does not bound its modules.
 */
static int load_kallsyms(const struct options *o, struct resolver *r)
{
	struct kallsyms k;
	int ret;

	ret = ksyms_load(&k, o->kallsyms, o->input ? "" : NULL);
	if (ret || k.hidden || !k.nr) {
		pr_err("%s: %s", o->kallsyms,
		       ret	  ? err_str(-ret)
		       : k.hidden ? "every address is 0 (kernel.kptr_restrict): no symbols"
				  : "no kernel text symbols in it");
		ksyms_free(&k);
		return EXIT_RUNTIME;
	}
	if (o->input)
		pr_debug("%s: %u kernel symbols instead of the %u stored in the capture",
			 o->kallsyms, k.nr, r->ksyms.nr);
	ksyms_free(&r->ksyms);
	r->ksyms = k;
	r->ksyms_ready = true;
	return 0;
}

/*
 * Where modules' .ko files are looked for: --kmod-dir, then the release's
 * module trees, the running kernel's when recording, the capture's under
 * --symfs when reporting (a capture from elsewhere has other modules than
 * this machine's).  The kernel's vmlinux: --vmlinux alone, else the
 * release's standard places, alike.
 */
static void kmod_dirs(const struct options *o, const struct profile *p, struct resolver *r)
{
	struct utsname u;

	if (o->kmod_dir)
		kmods_add_dir(&r->kmods, o->kmod_dir);
	if (o->vmlinux)
		kmods_set_vmlinux(&r->kmods, o->vmlinux);
	if (!o->input && !uname(&u)) {
		r->kmods.live = true;
		kmods_add_release(&r->kmods, NULL, u.release);
	} else if (o->input && o->symfs) {
		kmods_add_release(&r->kmods, o->symfs, p->meta.kernel_release);
	}
}

/* --symfs named a directory; say when it gave nothing. */
static void symfs_verdict(const struct options *o, const struct maps *ms)
{
	if (!o->symfs || !ms->nr_dsos)
		return;
	if (!ms->real_found)
		pr_warn("--symfs %s: none of the capture's %u files is there", o->symfs,
			ms->nr_dsos);
	else if (!ms->real_taken)
		pr_warn("--symfs %s: no file there can replace the capture's symbols (-v says why)",
			o->symfs);
}

/* A name as reports show it: demangled when it is mangled. */
static void put_name(struct sbuf *sb, const char *name)
{
	char *dm = name ? demangle(name) : NULL;

	sbuf_addstr(sb, dm ? dm : name ? name : "??");
	free(dm);
}

/*
 * One address the way addr2line -a -f -i -C prints it: the address, then per
 * source frame (innermost first) its function and file:line; the last frame
 * is named by its symbol, as cycread's reports name it.
 */
static void a2l_lines(struct dso *d, u64 addr, struct sbuf *sb)
{
	struct src_frame src[SRC_MAX_FRAMES];
	const struct dso_sym *s = dso_find(d, addr);
	u32 n = dso_src_frames(d, addr, src, SRC_MAX_FRAMES), k;

	if (!s)
		s = dso_fde_sym(d, addr, d->name);

	sbuf_printf(sb, "0x%016llx\n", addr);
	if (!n) {
		src[0] = (struct src_frame){ 0 };
		n = 1;
	}
	for (k = 0; k < n; k++) {
		const char *func = k + 1 == n && s ? dso_sym_name(d, s) : src[k].func;

		put_name(sb, func);
		/* as addr2line: "??:0" knowing nothing, "??:?" knowing the function */
		if (src[k].file && src[k].line)
			sbuf_printf(sb, "\n%s:%u\n", src[k].file, src[k].line);
		else if (src[k].file)
			sbuf_printf(sb, "\n%s:?\n", src[k].file);
		else
			sbuf_addstr(sb, func ? "\n??:?\n" : "\n??:0\n");
	}
}

/* addr2sym: name ELF virtual addresses of one file (tests and benchmarks). */
static int addr2sym(int argc, char **argv)
{
	struct dso_search search = { 0 };
	const char *elf = NULL, *why;
	struct sbuf line = { 0 };
	bool a2l = false;
	struct dso *d;
	char buf[256];
	int c, i;

	while ((c = getopt(argc, argv, "e:D:i")) != -1) {
		if (c == 'e')
			elf = optarg;
		else if (c == 'D')
			search.debug_dir = optarg;
		else if (c == 'i')
			a2l = true;
		else
			return EXIT_USAGE;
	}
	if (!elf)
		bad_usage("%s", "addr2sym needs -e FILE");
	if (search.debug_dir && check_dir("-D", search.debug_dir))
		return EXIT_RUNTIME;
	d = dso_open_path(elf, &why);
	if (!d) {
		pr_err("%s: %s", elf, why);
		return EXIT_RUNTIME;
	}
	dso_load_syms(d, &search);
	for (i = optind; i < argc || (i == argc && optind == argc); i++) {
		const char *arg = argv[i];
		struct dso_sym *s;
		u64 addr;

		if (optind == argc) {
			if (!fgets(buf, sizeof(buf), stdin))
				break;
			buf[strcspn(buf, "\n")] = '\0';
			arg = buf;
			i--;
		}
		if (!parse_u64(arg, 16, &addr) && !parse_u64(arg, 0, &addr)) {
			pr_err("%s: not an address", arg);
			continue;
		}
		sbuf_reset(&line);
		if (a2l) {
			a2l_lines(d, addr, &line);
		} else {
			s = dso_find(d, addr);
			if (!s)
				s = dso_fde_sym(d, addr, d->name); /* unnamed: its function */
			sbuf_printf(&line, "0x%llx ", addr);
			if (s) {
				put_name(&line, dso_sym_name(d, s));
				sbuf_printf(&line, "+0x%llx\n", addr - s->start);
			} else {
				sbuf_addstr(&line, "??\n");
			}
		}
		fputs(line.buf, stdout);
	}
	sbuf_free(&line);
	dso_free(d);
	return 0;
}

int main(int argc, char **argv)
{
	struct options o = { 0 };
	struct resolver r;
	struct profile p;
	struct maps ms;
	char err[512];
	int ret;

	if (argc > 1 && !strcmp(argv[1], "addr2sym"))
		return addr2sym(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "report")) {
		o.report_cmd = true;
		argc--;
		argv++;
	}
	o.rec.callchain = true;
	o.rec.event = CYCSAMPLE_EVENT_CYCLES;
	o.rec.device = getenv("CYCREAD_DEVICE") ? getenv("CYCREAD_DEVICE") : CYCSAMPLE_DEVICE;
	o.rep.keys[0] = KEY_DSO;
	o.rep.keys[1] = KEY_SYM;
	o.rep.nr_keys = 2;
	o.rep.graph_limit = 0.5;
	parse(&o, argc, argv);
	if (!o.rec.freq && !o.rec.period)
		o.rec.freq = DEFAULT_FREQ;
	ret = check_options(&o);
	if (ret)
		return ret;

	prof_init(&p);
	maps_init(&ms, !o.input);
	ms.search.root = o.symfs;
	ms.search.debug_dir = o.debug_dir;
	ms.search.debuginfod = o.debuginfod;
	res_init(&r, &ms, !o.input);
	r.demangle = !o.no_demangle;
	r.leaf_repair = !o.no_leaf_repair;
	r.inline_frames = !o.no_inline;

	if (o.input) {
		if (capture_read(o.input, &p, &ms, &r, o.symfs, err, sizeof(err))) {
			pr_err("%s: %s", o.input, err);
			ret = EXIT_RUNTIME;
			goto out;
		}
		symfs_verdict(&o, &ms);
	}
	if (o.kallsyms) {
		ret = load_kallsyms(&o, &r);
		if (ret)
			goto out;
	}
	kmod_dirs(&o, &p, &r);
	if (!o.input) {
		ret = session_record(&o.rec, &p, &ms, &r);
		if (ret)
			goto out;
		prof_sort(&p);
	}
	ret = output(&o, &p, &ms, &r);
out:
	res_free(&r);
	maps_free(&ms);
	prof_free(&p);
	report_opts_free(&o.rep);
	return ret;
}
