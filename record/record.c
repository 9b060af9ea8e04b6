/*
 * record.c — `stackrec record`: options, the order in which the recorder is set up, the main loop, the
 * ways it stops, and the one-line summary. The parts are in the other files of record/ (see recorder.h).
 *
 * Every way of stopping — the command exits, --duration runs out, SIGINT/SIGTERM, every -p process gone —
 * goes through the same end: drain the buffers, write the kernel symbols, STATS and END, close the file.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../cache_dir.h"
#include "../commands.h"
#include "../formats/recording.h"
#include "../interrupt_cleanup.h"
#include "../util.h"
#include "recorder.h"

#include <linux/types.h>

#include "../bpf/profile.h"

#define DEFAULT_FREQUENCY 99 /* Hz: off the beat of 100 Hz timers, like bcc's profile (49) and perf's -F 99 */
#define DEFAULT_OUTPUT "stackrec.rec"
#define DEFAULT_CACHE_SIZE_MB 2048
#define FLUSH_INTERVAL_NS 1000000000ull /* a killed recorder loses at most this much */
#define POLL_MS 100
/*
 * While processes are being made (a fork or exec record in the last NEW_PROCESS_NS, or the start), the
 * side-band buffers are read every SIDE_BAND_MS, not only when the sample ring buffer wakes us (a quarter
 * full) or every POLL_MS: a new process must be seen while it lives, for its uids (embedded_note_process)
 * and its /proc/PID/map_files, and a 30 ms process read 100 ms late is gone, its perf map then refused. Not
 * by having the kernel wake us at each record (wakeup_watermark 1): that costs the recorded processes an
 * interrupt per record, 15-20% more CPU time for an exec storm (2,000 /bin/true) on a 2-core VM. Not always
 * either: 100 turns a second cost the recorder some 20% more CPU time on node's steady state, which makes
 * no process.
 */
#define SIDE_BAND_MS 10
#define NEW_PROCESS_NS 1000000000ull
#define DEFAULT_METRICS_INTERVAL_MS 1000 /* with probes or events: process metrics once a second */

static volatile sig_atomic_t stop_signal;
static volatile sig_atomic_t signal_count; /* a signal during target_reap's wait kills the command */

void drain_timed(struct recorder *rec, enum drain_work what, uint64_t start_ns)
{
	uint64_t took = monotonic_ns() - start_ns;

	if (took > rec->drain_max_ns[what])
		rec->drain_max_ns[what] = took;
	if (took >= 1000000)
		rec->drain_long_pauses++;
}

/* -v: how long, at most, the drain thread was away from the ring buffer, and doing what. */
static void report_drain(const struct recorder *rec)
{
	static const char *const names[DRAIN_WORK_KINDS] = { "a sample", "side-band records", "a frame flush",
							     "process metrics" };
	char what[256];
	size_t len = 0;
	uint64_t longest = 0;

	for (int i = 0; i < DRAIN_WORK_KINDS; i++) {
		len += (size_t)snprintf(what + len, sizeof(what) - len, "%s%s %.2f ms", i ? ", " : "", names[i],
					(double)rec->drain_max_ns[i] / 1e6);
		if (rec->drain_max_ns[i] > longest)
			longest = rec->drain_max_ns[i];
	}
	debug("drain thread: longest pause %.2f ms, %llu pauses of 1 ms or more (at most: %s); woken %llu times; "
	      "waited %llu times for the frame writer",
	      (double)longest / 1e6, (unsigned long long)rec->drain_long_pauses, what, (unsigned long long)rec->wakeups,
	      (unsigned long long)rec->writer.handover_waits);
}

static void on_signal(int sig)
{
	stop_signal = sig;
	signal_count++;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: stackrec record [-F HZ] [-o FILE] [--call-graph fp|dwarf[,SIZE]] [--duration SECONDS]\n"
		"                      [--probe 'BINARY:FUNCTION(ARG, ...)']... [--signals|--no-signals] [--exceptions]\n"
		"                      (-- COMMAND [ARGS...] | -p PID[,PID...] | -t TID[,TID...] | -a [-- COMMAND [ARGS...]])\n"
		"\n"
		"Samples on-CPU stacks (user and kernel) with eBPF into a recording file. Needs root.\n"
		"\n"
		"  -F, --frequency HZ     samples per second per CPU (default %d)\n"
		"  -o, --output FILE      the recording (default %s), 0600 and under sudo the invoking user's;\n"
		"                         an existing one is kept as FILE.old; -o - (stdout) is refused\n"
		"  -p, --pid PID[,PID..]  record these running processes (and children they start)\n"
		"  -t, --tid TID[,TID..]  record these threads only, as perf record -t (not the process's other\n"
		"                         threads, nor the threads and processes they start)\n"
		"  -a, --all-cpus         record every process; with a COMMAND, until it exits (perf record -a -- CMD)\n"
		"      --call-graph MODE  how user stacks are taken (perf's spelling):\n"
		"                           dwarf[,SIZE]  copy the registers and up to SIZE bytes of the user stack\n"
		"                                         (default %d, at most %u) and unwind them offline with\n"
		"                                         the binaries' CFI: complete stacks without frame\n"
		"                                         pointers (the default)\n"
		"                           fp            walk frame pointers while recording: cheaper, but short\n"
		"                                         or wrong in code built without them\n"
		"  -g                     call graphs in the default mode (accepted for perf's sake; always on)\n"
		"      --off-cpu          record time off the CPU: a thread's stacks when it stops running, weighted\n"
		"                         by how long it stayed off (on-CPU sampling then only with --on-cpu)\n"
		"      --on-cpu           sample running threads at -F HZ (the default without --off-cpu)\n"
		"      --min-block-us US  --off-cpu: skip intervals shorter than this (default 1)\n"
		"      --max-block-us US  --off-cpu: skip intervals longer than this (default no limit)\n"
		"      --state STATE      --off-cpu: which switches count: all (default: preemption too),\n"
		"                         interruptible (sleeping) or uninterruptible (mostly disk I/O)\n"
		"      --probe 'BINARY:FUNCTION(ARG, ...)'  a uprobe at FUNCTION's entry recording ARGs on each call:\n"
		"                         DWARF parameter names, arg0..arg5, str(ARG) for a string (repeatable,\n"
		"                         at most %d)\n"
		"      --signals          record fatal signals (SEGV, BUS, FPE, ILL, ABRT, TRAP) of the targets with\n"
		"                         their stacks (the default with --probe; --no-signals turns it off)\n"
		"      --exceptions       record C++ exceptions thrown (libstdc++'s __cxa_throw) with their type\n"
		"      --metrics-interval MS  CPU time, RSS and threads of each target every MS milliseconds\n"
		"                         (default %d with --probe, --signals or --exceptions, else 0: off)\n"
		"      --duration SECONDS stop after this long (a spawned command is then sent SIGTERM)\n"
		"      --build-id-cache DIR  copy mapped executables here by build ID (default $STACKREC_CACHE_DIR,\n"
		"                         else $XDG_CACHE_HOME/stackrec, else ~/.cache/stackrec)\n"
		"      --cache-size MB    trim the cache to this size after recording, least recently used first;\n"
		"                         one recording copies no more than this into it\n"
		"                         (default %d)\n"
		"      --no-cache         do not copy executables into the build-ID cache\n"
		"      --archive          then bundle the files the recording needs into FILE.archive, for\n"
		"                         `stackrec convert FILE --archive FILE.archive` on another machine\n"
		"  -v, --verbose          libbpf and recorder diagnostics on stderr\n"
		"  -h, --help             show this help\n"
		"\n"
		"Stops when the command exits, when every -p process is gone, when --duration runs out, or on\n"
		"Ctrl-C/SIGTERM; always ends with a complete file and a summary line. Exits with the command's\n"
		"status (128 + N for signal N), or dies of the Ctrl-C/SIGTERM it stopped on. See docs/recording.md.\n",
		DEFAULT_FREQUENCY, DEFAULT_OUTPUT, DEFAULT_STACK_SIZE, SREC_USER_STACK_MAX, PROBES_MAX,
		DEFAULT_METRICS_INTERVAL_MS, DEFAULT_CACHE_SIZE_MB);
}

static char *join_args(int argc, char **argv)
{
	size_t len = 1;
	char *s;

	for (int i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	s = xcalloc(1, len);
	for (int i = 0; i < argc; i++) {
		if (i)
			strcat(s, " ");
		strcat(s, argv[i]);
	}
	return s;
}

/* --call-graph fp | dwarf[,SIZE]: SIZE in bytes, rounded up to 8 as perf does. */
static int parse_call_graph(struct recorder *rec, const char *arg)
{
	const char *size;
	char *end;
	long long n;

	if (!strcmp(arg, "fp")) {
		rec->call_graph = CALL_GRAPH_FP;
		return 0;
	}
	if (strncmp(arg, "dwarf", 5) || (arg[5] && arg[5] != ','))
		return error("--call-graph takes fp or dwarf[,SIZE], not '%s'", arg);
	rec->call_graph = CALL_GRAPH_DWARF;
	if (!arg[5])
		return 0;
	size = arg + 6;
	errno = 0;
	n = strtoll(size, &end, 0);
	if (*end || end == size || errno || n < 8 || n > SREC_USER_STACK_MAX)
		return error("--call-graph dwarf,SIZE takes a stack size from 8 to %u bytes, not '%s'", SREC_USER_STACK_MAX,
			     size);
	rec->stack_size = (unsigned int)((n + 7) & ~7ll);
	return 0;
}

static int parse_options(struct recorder *rec, int argc, char **argv)
{
	enum {
		OPT_DURATION = 256, OPT_CACHE_DIR, OPT_CACHE_SIZE, OPT_NO_CACHE, OPT_ARCHIVE, OPT_CALL_GRAPH,
		OPT_OFF_CPU, OPT_ON_CPU, OPT_MIN_BLOCK, OPT_MAX_BLOCK, OPT_STATE, OPT_PROBE, OPT_SIGNALS, OPT_NO_SIGNALS,
		OPT_EXCEPTIONS, OPT_METRICS_INTERVAL
	};
	static const struct option options[] = {
		{ "frequency", required_argument, NULL, 'F' }, { "output", required_argument, NULL, 'o' },
		{ "pid", required_argument, NULL, 'p' },       { "all-cpus", no_argument, NULL, 'a' },
		{ "tid", required_argument, NULL, 't' },
		{ "duration", required_argument, NULL, OPT_DURATION },
		{ "build-id-cache", required_argument, NULL, OPT_CACHE_DIR },
		{ "cache-size", required_argument, NULL, OPT_CACHE_SIZE },
		{ "no-cache", no_argument, NULL, OPT_NO_CACHE },
		{ "archive", no_argument, NULL, OPT_ARCHIVE },
		{ "call-graph", required_argument, NULL, OPT_CALL_GRAPH },
		{ "off-cpu", no_argument, NULL, OPT_OFF_CPU },
		{ "on-cpu", no_argument, NULL, OPT_ON_CPU },
		{ "min-block-us", required_argument, NULL, OPT_MIN_BLOCK },
		{ "max-block-us", required_argument, NULL, OPT_MAX_BLOCK },
		{ "state", required_argument, NULL, OPT_STATE },
		{ "probe", required_argument, NULL, OPT_PROBE },
		{ "signals", no_argument, NULL, OPT_SIGNALS },
		{ "no-signals", no_argument, NULL, OPT_NO_SIGNALS },
		{ "exceptions", no_argument, NULL, OPT_EXCEPTIONS },
		{ "metrics-interval", required_argument, NULL, OPT_METRICS_INTERVAL },
		{ "verbose", no_argument, NULL, 'v' },	       { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool have_pids = false, have_tids = false, all = false, no_cache = false, on_cpu = false;
	const char *off_cpu_option = NULL; /* the last option that shapes off-CPU samples only */
	int signals = -1, metrics_interval = -1; /* -1: not given, the default depends on --probe */
	const char *cache_dir = NULL;
	char *end;
	int c;

	rec->frequency = DEFAULT_FREQUENCY;
	rec->output = DEFAULT_OUTPUT;
	rec->cache_size_mb = DEFAULT_CACHE_SIZE_MB;
	rec->call_graph = CALL_GRAPH_DWARF;
	rec->stack_size = DEFAULT_STACK_SIZE;
	rec->min_block_us = 1;
	rec->max_block_us = UINT64_MAX;
	rec->command_line = join_args(argc, argv);
	while ((c = getopt_long(argc, argv, "+F:o:p:t:agvh", options, NULL)) != -1) {
		switch (c) {
		case 'F': {
			long hz = strtol(optarg, &end, 10);

			if (*end || hz <= 0 || hz > 100000)
				return error("-F takes a frequency from 1 to 100000 Hz, not '%s'", optarg);
			rec->frequency = (unsigned int)hz;
			break;
		}
		case 'o':
			/* Not a file named "-" by mistake; and stdout is refused rather than streamed, since --archive
			 * and FILE.old need a file (a FIFO or /dev/stdout still works, written in place). */
			if (!strcmp(optarg, "-"))
				return error("record cannot write to standard output (-o -): give a file name");
			rec->output = optarg;
			break;
		case 'p':
			if (target_parse_pids(rec, optarg) < 0)
				return -1;
			have_pids = true;
			break;
		case 't':
			if (target_parse_tids(rec, optarg) < 0)
				return -1;
			have_tids = true;
			break;
		case 'a':
			all = true;
			break;
		case OPT_DURATION:
			rec->duration_s = strtod(optarg, &end);
			/* at most 10^9 s (31 years), so that it counts in nanoseconds; not inf or nan */
			if (*end || end == optarg || !(rec->duration_s > 0 && rec->duration_s <= 1e9))
				return error("--duration takes a positive number of seconds (at most 1e9), not '%s'", optarg);
			break;
		case OPT_CACHE_DIR:
			cache_dir = optarg;
			break;
		case OPT_CACHE_SIZE: {
			long long mb;

			errno = 0;
			mb = strtoll(optarg, &end, 10);
			if (*end || end == optarg || mb < 0 || errno || (unsigned long long)mb > UINT64_MAX >> 21)
				return error("--cache-size takes a size in MB, not '%s'", optarg);
			rec->cache_size_mb = (uint64_t)mb;
			break;
		}
		case OPT_NO_CACHE:
			no_cache = true;
			break;
		case OPT_ARCHIVE:
			rec->archive = true;
			break;
		case OPT_CALL_GRAPH:
			if (parse_call_graph(rec, optarg) < 0)
				return -1;
			break;
		case 'g':
			break;
		case OPT_OFF_CPU:
			rec->off_cpu = true;
			break;
		case OPT_ON_CPU:
			on_cpu = true;
			break;
		case OPT_MIN_BLOCK:
		case OPT_MAX_BLOCK: {
			unsigned long long us;

			errno = 0;
			us = strtoull(optarg, &end, 10);
			if (*end || end == optarg || errno || optarg[0] == '-')
				return error("--%s takes microseconds, not '%s'", c == OPT_MIN_BLOCK ? "min-block-us" : "max-block-us",
					     optarg);
			off_cpu_option = c == OPT_MIN_BLOCK ? "--min-block-us" : "--max-block-us";
			if (c == OPT_MIN_BLOCK)
				rec->min_block_us = us;
			else
				rec->max_block_us = us;
			break;
		}
		case OPT_STATE:
			off_cpu_option = "--state";
			if (!strcmp(optarg, "all"))
				rec->off_cpu_state = OFF_CPU_STATE_ALL;
			else if (!strcmp(optarg, "interruptible"))
				rec->off_cpu_state = OFF_CPU_STATE_INTERRUPTIBLE;
			else if (!strcmp(optarg, "uninterruptible"))
				rec->off_cpu_state = OFF_CPU_STATE_UNINTERRUPTIBLE;
			else
				return error("--state takes all, interruptible or uninterruptible, not '%s'", optarg);
			break;
		case OPT_PROBE: {
			struct probe *p;

			if (rec->probe_count == PROBES_MAX)
				return error("at most %d --probe options", PROBES_MAX);
			p = &rec->probes[rec->probe_count++];
			if (probe_parse(p, optarg) < 0)
				return -1;
			p->id = (uint32_t)rec->probe_count;
			break;
		}
		case OPT_SIGNALS:
		case OPT_NO_SIGNALS:
			signals = c == OPT_SIGNALS;
			break;
		case OPT_EXCEPTIONS:
			rec->exceptions = true;
			break;
		case OPT_METRICS_INTERVAL: {
			long ms;

			errno = 0;
			ms = strtol(optarg, &end, 10);
			if (*end || end == optarg || errno || ms < 0 || ms > 3600000)
				return error("--metrics-interval takes milliseconds from 0 (off) to 3600000, not '%s'", optarg);
			metrics_interval = (int)ms;
			break;
		}
		case 'v':
			verbose = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	rec->on_cpu = on_cpu || !rec->off_cpu;
	rec->signals = signals >= 0 ? signals : rec->probe_count > 0;
	if (metrics_interval >= 0)
		rec->metrics_interval_ms = (unsigned int)metrics_interval;
	else if (rec->probe_count || rec->signals || rec->exceptions)
		rec->metrics_interval_ms = DEFAULT_METRICS_INTERVAL_MS;
	/* Before anything is loaded: a probe that names what the binary does not have is refused now. */
	for (size_t i = 0; i < rec->probe_count; i++) {
		if (probe_resolve(&rec->probes[i]) < 0)
			return -1;
		for (size_t j = 0; j < i; j++)
			if (probe_same_place(&rec->probes[j], &rec->probes[i]))
				return error("--probe '%s': %s in '%s' has a probe already (--probe '%s'), and a frame shows "
					     "one probe's values: name every argument in one probe",
					     rec->probes[i].spec, rec->probes[i].function, rec->probes[i].path,
					     rec->probes[j].spec);
	}
	if (off_cpu_option && !rec->off_cpu)
		return error("%s chooses off-CPU samples: it needs --off-cpu", off_cpu_option);
	if (rec->min_block_us > rec->max_block_us)
		return error("--min-block-us (%llu) is above --max-block-us (%llu)", (unsigned long long)rec->min_block_us,
			     (unsigned long long)rec->max_block_us);
	if (rec->off_cpu && rec->call_graph == CALL_GRAPH_DWARF && rec->stack_size > OFF_CPU_STACK_MAX)
		warning("off-CPU samples keep at most %u bytes of stack, whatever --call-graph dwarf,%u asks",
			OFF_CPU_STACK_MAX, rec->stack_size);
	if (!no_cache) {
		rec->cache_dir = cache_dir ? xstrdup(cache_dir) : cache_dir_default();
		if (!rec->cache_dir)
			warning("no build-ID cache: set $HOME (a directory that exists), $XDG_CACHE_HOME or $STACKREC_CACHE_DIR");
	}
	/* -a may have a COMMAND too, as in perf record -a -- CMD: everything is recorded until it exits. */
	if ((all || optind < argc) + have_pids + have_tids != 1) {
		error(optind < argc || have_pids || have_tids || all ? "give only one of -- COMMAND, -p PID, -t TID and -a"
								      : "nothing to record: give -- COMMAND, -p PID, -t TID or -a");
		usage(stderr);
		return -1;
	}
	if (optind < argc)
		rec->command = argv + optind;
	if (all)
		rec->target = TARGET_ALL;
	else
		rec->target = rec->command ? TARGET_COMMAND : have_pids ? TARGET_PIDS : TARGET_THREADS;
	return 0;
}

/* Processes counted by the summary: those with samples, and those with probe hits alone (a probed program that
 * ran for less than a sampling period, or was killed before one: "from 0 processes" though it was recorded). */
struct process_count {
	const struct u64_set *sampled;
	size_t count;
};

static void count_unsampled(void *ctx, uint64_t pid)
{
	struct process_count *c = ctx;

	c->count += !u64_set_has(c->sampled, pid);
}

static void print_summary(struct recorder *rec, double seconds, uint64_t lost)
{
	struct process_count processes = { &rec->sampled_pids, rec->sampled_pids.count + rec->sampled_pids.has_zero };
	char failed[512] = "", cut[160] = "", kinds[64] = "", untracked[96] = "";
	size_t len = 0;

	for (size_t i = 0; i < rec->error_count && len < sizeof(failed) - 64; i++)
		len += (size_t)snprintf(failed + len, sizeof(failed) - len, "%s%llu %s -%s", i ? ", " : ": ",
					(unsigned long long)rec->errors[i].count, rec->errors[i].kernel ? "kernel" : "user",
					errno_name(rec->errors[i].error) ?: "?");
	/* Copies whose stack mapping went on: convert ends in [truncated] those whose frames did (not a Go
	 * goroutine's, whose stack is in a heap mapping); a larger SIZE would reach further, but not for off-CPU
	 * samples cut at the most they keep, said apart. */
	if (rec->call_graph == CALL_GRAPH_DWARF && rec->cut_stacks) {
		uint64_t off_cpu = rec->stack_size >= OFF_CPU_STACK_MAX ? rec->cut_off_cpu_stacks : 0;
		int at = 0;

		if (rec->cut_stacks > off_cpu)
			at = snprintf(cut, sizeof(cut), ", %llu stack copies cut at %u bytes",
				      (unsigned long long)(rec->cut_stacks - off_cpu), rec->stack_size);
		if (off_cpu)
			snprintf(cut + at, sizeof(cut) - (size_t)at, ", %llu off-CPU stack copies cut at %u bytes (their most)",
				 (unsigned long long)off_cpu, OFF_CPU_STACK_MAX);
	}
	/* Counted in "lost" too; said apart because whole processes, not samples, went unrecorded. */
	if (rec->lost_targets)
		snprintf(untracked, sizeof(untracked), ", %llu processes not followed: the targets map was full",
			 (unsigned long long)rec->lost_targets);
	/* Events (signals, exceptions) are samples in the file (STATS counts them so) but said on the line after,
	 * with the probe hits: a crash 1 ms in was "1 samples ... 1 events". */
	if (rec->off_cpu)
		snprintf(kinds, sizeof(kinds), " (%llu on-CPU, %llu off-CPU)",
			 (unsigned long long)(rec->sample_count - rec->off_cpu_count - rec->event_count),
			 (unsigned long long)rec->off_cpu_count);
	u64_set_for_each(&rec->hit_pids, count_unsampled, &processes);
	fprintf(stderr,
		"stackrec: recorded %llu samples%s from %zu processes in %.2f s to '%s' (%llu lost, %llu failed stacks%s%s%s)\n",
		(unsigned long long)(rec->sample_count - rec->event_count), kinds, processes.count, seconds,
		rec->output, (unsigned long long)(lost + rec->lost_events),
		(unsigned long long)(rec->user_stack_errors + rec->kernel_stack_errors), failed, cut, untracked);
}

/* The second summary line, with probes or events: what they recorded and what the ring buffer lost. */
static void print_probe_summary(struct recorder *rec, uint64_t lost_hits, uint64_t lost_events)
{
	if (!rec->probe_count && !rec->signals && !rec->exceptions)
		return;
	fprintf(stderr, "stackrec: recorded %llu probe hits (%llu lost), %llu events (%llu lost), %llu process metrics\n",
		(unsigned long long)rec->probe_hits, (unsigned long long)lost_hits, (unsigned long long)rec->event_count,
		(unsigned long long)lost_events, (unsigned long long)rec->metrics_count);
}

static int finish(struct recorder *rec)
{
	uint64_t end_ns = monotonic_ns();
	uint64_t lost = sampler_lost_samples(rec);
	uint64_t lost_hits = probes_lost_hits(rec), lost_events = probes_lost_events(rec);
	struct srec_stats stats;
	int ret = 0;

	/* Processes not followed go into lost_events, the count of what the kernel could not give us. */
	rec->lost_targets = sampler_lost_targets(rec);
	rec->lost_events += rec->lost_targets;
	stats = (struct srec_stats){
		.samples = rec->sample_count,
		.lost_samples = lost,
		.lost_events = rec->lost_events,
		.user_stack_errors = rec->user_stack_errors,
		.kernel_stack_errors = rec->kernel_stack_errors,
		.processes = rec->sampled_pids.count + rec->sampled_pids.has_zero,
		.duration_ns = end_ns - rec->start_ns,
		.probe_hits = rec->probe_hits,
		.lost_probe_hits = lost_hits,
		.events = rec->event_count,
		.lost_event_samples = lost_events,
	};

	if (embedded_capture_remaining_perf_maps(rec) < 0 || kallsyms_write_used(rec) < 0 ||
	    recording_writer_add(&rec->writer, SREC_BLOCK_STATS, &stats, sizeof(stats), NULL, 0) < 0)
		ret = -1;
	report_drain(rec); /* before close frees the writer and its count */
	if (recording_writer_close(&rec->writer, end_ns) < 0)
		ret = -1;
	build_id_cache_trim(rec);
	{
		struct rusage self;

		/* the recorder's own threads, not the command it ran: what recording costs the machine */
		if (getrusage(RUSAGE_SELF, &self) == 0)
			debug("recorder CPU time: %.3f s user, %.3f s system",
			      (double)self.ru_utime.tv_sec + (double)self.ru_utime.tv_usec / 1e6,
			      (double)self.ru_stime.tv_sec + (double)self.ru_stime.tv_usec / 1e6);
	}
	if (ret == 0) {
		print_summary(rec, (double)stats.duration_ns / 1e9, lost);
		print_probe_summary(rec, lost_hits, lost_events);
		sampler_report_fp_walk_check(rec);
	}
	return ret;
}

/*
 * The recorder reads the buffers ahead of everything it records: starved of CPU among busy threads it falls
 * behind, and the kernel drops samples when they fill. bench/stress.sh (-a -F 4999, 64 spinning threads and
 * 300 execs a second on 2 CPUs) lost half of its samples at nice 0 and none at -10, for about 1 CPU-second
 * in 12 s. But at -10 every wakeup of the drain thread preempts the program it records on its CPU at once:
 * cpu-fp at -F 4999 (bench A) spent 54 ms of its 1.08 s off the CPU at -10, 30 at nice 0 and 14 unprofiled
 * (medians of 15 interleaved runs), where perf, at nice 0, costs it none. So the recorder keeps the
 * priority it was given until it falls behind: one read of the ring buffer finds 1/BEHIND_SHARE of it
 * waiting (it is read every 10 to 100 ms, at a few MB/s even under -a -F 4999), or the kernel lost a
 * sample or a side-band record. Then all its threads take RECORDER_NICE for the rest of the run: the frame
 * writer's too, or the drain thread waits for a starved writer with a full queue (stress.sh on a loaded
 * machine: 380 waits of up to 570 ms, a quarter of the samples lost), at HELPER_NICE, below the drain
 * thread (see the frame writer's start in run). A recorder that may not raise it (no CAP_SYS_NICE) keeps
 * the one it has.
 */
#define RECORDER_NICE (-10)
#define HELPER_NICE (-5)
#define BEHIND_SHARE 8

/* Thread tid (0: this one) to nice, unless it is there already; 1 when raised, -1 on failure. */
static int raise_thread(pid_t tid, int nice, int *was)
{
	errno = 0;
	*was = getpriority(PRIO_PROCESS, (id_t)tid); /* the nice value is per thread on Linux */
	if (errno != 0 || *was <= nice)
		return 0;
	return setpriority(PRIO_PROCESS, (id_t)tid, nice) < 0 ? -1 : 1;
}

static void raise_priority(struct recorder *rec, const char *why)
{
	DIR *tasks;
	struct dirent *d;
	int was, raised;

	if (rec->priority_raised)
		return;
	rec->priority_raised = true;
	raised = raise_thread(0, RECORDER_NICE, &was);
	if (raised < 0) {
		debug("cannot raise the recorder's priority to nice %d: %s", RECORDER_NICE, strerror(errno));
		return;
	}
	if (!raised)
		return;
	debug("raised the recorder's priority from nice %d to %d: %s", was, RECORDER_NICE, why);
	/* Its other threads (the frame writer, workers); those started later inherit the drain thread's. */
	tasks = opendir("/proc/self/task");
	while (tasks && (d = readdir(tasks))) {
		pid_t tid = (pid_t)strtol(d->d_name, NULL, 10);

		if (tid > 0 && tid != gettid() && raise_thread(tid, HELPER_NICE, &was) < 0)
			debug("cannot raise thread %d to nice %d: %s", tid, HELPER_NICE, strerror(errno));
	}
	if (tasks)
		closedir(tasks);
}

/* Bytes read from the ring buffer in one go that mean the recorder is behind. STACKREC_TEST_BEHIND_BYTES,
 * for tests, sets it. */
static uint64_t behind_bytes(const struct recorder *rec)
{
	const char *test = getenv("STACKREC_TEST_BEHIND_BYTES");

	return test ? strtoull(test, NULL, 10) : rec->ring_size / BEHIND_SHARE;
}

static int run(struct recorder *rec)
{
	uint64_t last_flush, last_sweep = 0, deadline = 0, behind;
	int kptr_restricted;

	/* An existing recording is replaced only once this one has started: a run that fails to load BPF or
	 * exec its command leaves it as it was. */
	if (recording_writer_open_replacing(&rec->writer, rec->output) < 0)
		return -1;
	rec->writer.keep_old = 1; /* as perf keeps perf.data.old: recording again never loses the last one */
	rec->writer.repack = 1;	  /* a short recording, flushed every second, ends in full frames */
	if (sampler_load(rec) < 0)
		return -1;
	behind = behind_bytes(rec); /* the ring buffer is sized now */
	kptr_restricted = kallsyms_snapshot(); /* after the load: without permission, that error alone is said */
	if (rec->command && target_spawn(rec) < 0)
		return -1;
	if (rec->target == TARGET_COMMAND && sampler_add_target(rec, rec->child, true) < 0)
		return -1;
	/* Compressing a frame takes a millisecond or more (256 KiB at zstd level 3): not on the drain thread.
	 * Never at the drain thread's priority once raise_priority has raised it, but below it: at the drain
	 * thread's -10, woken to take a frame it preempted the drain thread on its CPU and compressed first
	 * (pauses of 2-8 ms at every frame of node --perf-basic-prof's dwarf samples); below, it runs when the
	 * drain thread sleeps, and -v counts the times the drain thread had to wait for it. */
	if (recording_writer_start_thread(&rec->writer) < 0)
		debug("cannot start the thread that writes frames: writing them on the recording thread");
	else
		rec->writer.adapt_level = 1; /* a slow recording is written smaller: off the drain thread only */
	for (size_t i = 0; rec->target == TARGET_PIDS && i < rec->pid_count; i++)
		if (sampler_add_target(rec, rec->pids[i], false) < 0)
			return -1;
	for (size_t i = 0; i < rec->tid_count; i++)
		if (sampler_add_target(rec, rec->tids[i], false) < 0)
			return -1;
	if (side_band_open(rec) < 0 || sampler_attach(rec) < 0 || probes_attach(rec) < 0)
		return -1;
	if (host_write(rec, kptr_restricted > 0) < 0 || embedded_write_vdso(rec) < 0 || probes_write_blocks(rec) < 0)
		return -1;
	for (size_t i = 0; i < rec->pid_count; i++)
		proc_scan_process(rec, rec->pids[i]);
	if (rec->target == TARGET_ALL)
		proc_scan_all(rec);
	/* Ctrl-C while loading (which takes a second or two): the command never starts, and an existing
	 * recording is left as it was (it was moved to FILE.old, and the command run) */
	if (stop_signal)
		return error("stopped by %s before recording started: nothing recorded, '%s' left as it was",
			     strsignal(stop_signal), rec->output);
	if (rec->command && target_start(rec) < 0)
		return -1;
	target_warn_gone_at_start(rec); /* the programs are attached: anything alive now is sampled */
	if (recording_writer_commit(&rec->writer) < 0) /* under way: from now on a kill leaves OUT readable */
		return -1;
	debug("recording with %s at %u Hz", rec->event_name, rec->frequency);

	last_flush = monotonic_ns();
	rec->last_new_process_ns = last_flush; /* the command starts now, and may start others at once */
	if (rec->duration_s > 0)
		deadline = last_flush + (uint64_t)(rec->duration_s * 1e9);
	while (!stop_signal) {
		uint64_t now, read = rec->ring_bytes;

		if (sampler_poll(rec, monotonic_ns() - rec->last_new_process_ns < NEW_PROCESS_NS ? SIDE_BAND_MS : POLL_MS) < 0)
			return -1;
		rec->wakeups++;
		if (rec->ring_bytes - read >= behind)
			raise_priority(rec, "the sample ring buffer was filling");
		side_band_consume(rec);
		if (embedded_write_perf_maps(rec) < 0)
			return -1;
		/* The rest costs system calls (the targets map, waitpid, /proc): every POLL_MS at most, not at
		 * each of the 100 turns a second while processes are made. */
		now = monotonic_ns();
		if (now - last_sweep < POLL_MS * 1000000ull)
			continue;
		last_sweep = now;
		if (!rec->priority_raised && (rec->lost_events || sampler_dropped_samples(rec)))
			raise_priority(rec, "the kernel lost records");
		sampler_forget_exited(rec);
		if (target_gone(rec))
			break;
		if (deadline && now >= deadline)
			break;
		metrics_tick(rec, now);
		drain_timed(rec, DRAIN_METRICS, now);
		if (now - last_flush >= FLUSH_INTERVAL_NS) {
			uint64_t start = monotonic_ns();

			if (recording_writer_flush(&rec->writer) < 0)
				return -1;
			drain_timed(rec, DRAIN_FLUSH, start);
			last_flush = now;
		}
	}
	/* Samples and side-band records still in the buffers belong to the recording: read after the programs
	 * stop adding to them, so that the reading ends (the command may run on until target_stop). */
	sampler_stop(rec);
	side_band_consume(rec);
	sampler_drain(rec);
	side_band_consume(rec);
	return 0;
}

/* --archive: what `stackrec archive OUT` does, with this run's build-ID cache. */
static int archive_recording(const struct recorder *rec)
{
	char *argv[5] = { "archive" };
	int argc = 1;

	if (rec->cache_dir) {
		argv[argc++] = "--cache-dir";
		argv[argc++] = rec->cache_dir;
	} else {
		argv[argc++] = "--no-cache";
	}
	argv[argc++] = (char *)rec->output;
	optind = 0; /* getopt starts afresh */
	/* The recording is whole now: Ctrl-C stops the archive, not a recording long over, and leaves no part
	 * of it behind (interrupt_cleanup.c). */
	interrupt_cleanup_install();
	return cmd_archive(argc, argv) == 0 ? 0 : 1;
}

int cmd_record(int argc, char **argv)
{
	struct recorder rec = { 0 };
	struct sigaction sa = { .sa_handler = on_signal }, old;
	int ret = 1;

	rec.writer.fd = -1;
	if (parse_options(&rec, argc, argv) < 0) {
		free(rec.command_line);
		free(rec.pids);
		free(rec.tids);
		free(rec.cache_dir);
		probes_release(&rec);
		return 2;
	}
	target_note_signals(&rec); /* before the recorder's own handling changes them */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* A hang-up (the terminal or ssh session gone) ends the recording as Ctrl-C does, with a whole file, not
	 * a cut one: unless it was ignored when we started (nohup), and stays so. */
	if (sigaction(SIGHUP, NULL, &old) == 0 && old.sa_handler != SIG_IGN)
		sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (run(&rec) == 0) {
		/* The command is told to stop before the file is finished, and waited for after: the file is whole
		 * however long it takes (or if it ignores SIGTERM). */
		target_stop(&rec);
		ret = finish(&rec) == 0 ? 0 : 1;
		target_reap(&rec, &signal_count);
		if (ret == 0 && rec.archive)
			ret = archive_recording(&rec);
		if (ret == 0)
			ret = target_exit_status(&rec);
	} else {
		target_stop(&rec);
		target_reap(&rec, &signal_count);
		if (rec.writer.fd >= 0)
			recording_writer_abandon(&rec.writer);
	}
	side_band_close(&rec);
	sampler_close(&rec);
	kallsyms_release();
	embedded_release_vdso();
	build_id_cache_release();
	build_id_cache_report();
	embedded_release();
	u64_set_release(&rec.sampled_pids);
	u64_set_release(&rec.hit_pids);
	u64_set_release(&rec.mapped_pids);
	free(rec.cache_dir);
	u64_set_release(&rec.kernel_ips);
	free(rec.errors);
	probes_release(&rec);
	free(rec.pids);
	free(rec.tids);
	free(rec.command_line);
	/* Stopped by Ctrl-C, SIGTERM or a hang-up: die of it once the file is whole, as perf does, so that a
	 * shell loop around record stops too (it goes on after a child that exits 0). */
	if (stop_signal && ret == 0) {
		fflush(NULL);
		signal(stop_signal, SIG_DFL);
		raise(stop_signal);
	}
	return ret;
}
