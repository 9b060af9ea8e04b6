/*
 * convert.c — `stackrec convert`: reads a recording, symbolizes it offline and writes one output format.
 *
 * Two passes over the file with the recording reader. Pass 1 loads everything but samples: the host
 * facts, the processes' mappings and execs, the kallsyms snapshot and the recorder's counters. Pass 2
 * streams the samples into the profile, which keeps only distinct stacks and locations, so memory grows
 * with what is distinct and never with the number of samples (but for the frames pass 1 decoded, kept for
 * pass 2 when they take at most RECORDING_KEEP_MAX, and the bounded memos: raw samples, fp stacks and fp
 * samples). A sample met before byte for byte is counted without being looked at again (raw_sample_memo.h).
 * Then every distinct location is symbolized once (symbolizer.c), the profile is sorted (profile_finish) and the
 * format writes it.
 *
 * A damaged or cut-short recording converts everything intact, writes the output, prints the reader's
 * one-line error and exits EXIT_PARTIAL (3). Output to -o goes through a temporary file and a rename (output_create), so
 * a failed convert never leaves half a file behind.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

#include "../cache_dir.h"
#include "debug_copies.h"
#include "../commands.h"
#include "../formats/output.h"
#include "../formats/recording_reader.h"
#include "../util.h"
#include "archive.h"
#include "call_site.h"
#include "debuginfod_client.h"
#include "enrich.h"
#include "explain.h"
#include "jit_maps.h"
#include "kernel_symbols.h"
#include "memo_window.h"
#include "module_prefetch.h"
#include "placed.h"
#include "process_maps.h"
#include "profile.h"
#include "profile_cache.h"
#include "raw_sample_memo.h"
#include "stack_memo.h"
#include "symbolizer.h"
#include "unwind.h"

/*
 * A frame's location, remembered by its place (placed.h): the place decides its module and offset, its JIT name
 * (perf maps are whole after pass 1) and so its location.
 */
struct placed_location {
	struct placed_key key;
	uint32_t location;
};

#define PLACED_LOCATIONS 4096

struct convert {
	struct profile profile;
	struct process_maps maps;
	struct kernel_symbols kernel;
	struct jit_maps jit;
	unsigned char *vdso_image; /* the recording's [vdso], from its FILE blocks */
	bool vdso_too_large;	   /* they held more than VDSO_IMAGE_MAX bytes: no image */
	char *archive_of; /* the file is an archive (stackrec archive) of this recording, not a recording */
	size_t vdso_size;
	char vdso_build_id[2 * SREC_BUILD_ID_MAX + 1]; /* that image's, or "" */
	uint32_t kernel_module; /* "[kernel.kallsyms]", interned on the first kernel frame */
	struct unwinder *unwinder;
	struct stack_memo stacks; /* fp stacks' user locations by their raw form */
	/* By location: whether a frame-pointer walk's return address there follows a call (RETURN_*), asked once */
	uint8_t *return_checked;
	size_t return_checked_cap;
	/* leaf_caller_follows_no_call's answers: the same few leaves repaired in sample after sample */
	struct leaf_caller_check {
		bool used, no_call;
		uint32_t pid;
		uint64_t period, caller;
	} leaf_caller_checks[64];
	struct stack_memo samples; /* fp samples' profile stacks by their raw form (sample_key) */
	struct memo_window stacks_window, samples_window; /* whether each is worth asking (memo_window.h) */
	struct raw_sample_memo raw; /* samples' profile stacks by their blocks' bytes */
	struct placed_location placed[PLACED_LOCATIONS];
	struct { /* the last period sample_period found: most samples are of the process and period before them */
		bool used;
		uint32_t pid;
		uint64_t from, until, period;
	} period;
	struct module_prefetch *prefetch; /* modules opened for the symbolizer while unwinding; NULL with -j 1 */
	uint32_t guess_pid; /* the process of the first mapping, whose modules are guessed; 0: none yet */
	struct guess_range *guess_ranges; /* its mappings whose modules are not guessed yet (see guess_from_sample) */
	size_t guess_range_count, guess_range_cap;
	uint64_t guess_samples; /* samples met in pass 1 */
	char *call_graph; /* the recording's --call-graph mode (HOST block), or NULL */
	uint32_t max_stack; /* the most IPs a walk gave (HOST block; 0: not said, SREC_MAX_STACK_DEPTH) */
	uint64_t bad_blocks;	/* blocks whose body made no sense, skipped */
	struct enricher *enricher;
	uint64_t hit_ordinal;	/* PROBE_HIT blocks met in this pass: the same numbers in every pass */
	uint64_t metrics_limit; /* the most PROCESS_METRICS kept: bounded by the file's size */
	bool have_stats;
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: stackrec convert FILE [-f FORMAT] [-o OUT] [options]\n"
		"\n"
		"Symbolizes a recording offline and writes it in one format (default folded) to stdout or OUT.\n"
		"\n"
		"  -f, --format FORMAT   output format:\n");
	for (size_t i = 0; output_formats[i]; i++)
		fprintf(out, "                          %-11s %s\n", output_formats[i]->name,
			output_formats[i]->description);
	fprintf(out,
		"  -o, --output OUT      write to OUT (0600, through a temporary file renamed when complete; never\n"
		"                        through another user's symbolic link); - is stdout\n"
		"      --kind KIND       what folded, d3 and speedscope show (pprof and trace carry all of it):\n"
		"                          on    on-CPU samples: folded and d3 count samples\n"
		"                          off   off-CPU time: folded and d3 in microseconds (bcc offcputime -f)\n"
		"                          wall  on-CPU plus off-CPU time of each thread, microseconds; an\n"
		"                                on-CPU sample counts its period\n"
		"                        default: on when the recording has on-CPU samples, else off;\n"
		"                        speedscope shows the intervals of that kind in nanoseconds\n"
		"      --pid             group by process: folded \"comm-PID\"\n"
		"      --tid             group by thread: folded \"comm-PID/TID\"\n"
		"      --annotate        mark inlined frames _[i] (kernel frames always end in _[k])\n"
		"      --addrs           show unnamed frames as [module <0xOFFSET>], not [module]\n"
		"      --thread-names    folded: process name first, then the thread's name as a frame\n"
		"      --no-demangle     keep C++ and Rust names mangled\n"
		"      --debug-dir DIR   also look for files by build ID in DIR/.build-id/ (repeatable)\n"
		"      --symfs DIR       the recording machine's files are under DIR: recorded paths and\n"
		"                        /usr/lib/debug are looked up there, not on this machine (as perf's)\n"
		"      --cache-dir DIR   the build-ID cache that record fills (default $STACKREC_CACHE_DIR,\n"
		"                        else $XDG_CACHE_HOME/stackrec, else ~/.cache/stackrec)\n"
		"      --no-cache        do not use the build-ID cache, the symbol cache, kept decompressed debug files\n"
		"                        or the profile cache (a conversion of the same recording before)\n"
		"      --debuginfod URL  ask this debuginfod server for files by build ID (default: $DEBUGINFOD_URLS)\n"
		"      --archive FILE    also use the files bundled by `stackrec archive`\n"
		"      --all-events      report: also one report per sample with a frame with probe context\n"
		"      --explain         list unnamed frames by module and reason, with what to do, on stderr;\n"
		"                        and how many frames show probe values, or why none do\n"
		"  -j, --jobs N          symbolize N modules at a time (default: the online CPUs, at most 16);\n"
		"                        above 1, also decode and open modules on other threads while\n"
		"                        unwinding; the output is the same for every N\n"
		"  -v, --verbose         explain symbolization on stderr, end with a summary line\n"
		"  -h, --help            show this help\n"
		"\n"
		"Exits 0; 3 (partial) when the output was written from a damaged or incomplete recording or\n"
		"archive; 1 when nothing could be written; 2 for bad usage. See docs/convert.md.\n");
}

#define JOBS_MAX 16 /* more threads than modules with locations buy nothing; few recordings have more */

/* The default of -j: one thread per online CPU, at most JOBS_MAX. */
static unsigned int default_jobs(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : n > JOBS_MAX ? JOBS_MAX : (unsigned int)n;
}

static int parse_jobs(const char *text, unsigned int *jobs)
{
	char *end;
	unsigned long n;

	errno = 0;
	n = strtoul(text, &end, 10);
	if (errno || end == text || *end || text[0] == '-' || n < 1 || n > JOBS_MAX)
		return error("-j '%s': give a number of threads from 1 to %d", text, JOBS_MAX);
	*jobs = (unsigned int)n;
	return 0;
}

/* The most bytes of a recorded [vdso] image used: a vDSO is 8 KB (x86-64, Linux 6.x). */
#define VDSO_IMAGE_MAX (1u << 20)

/* Pass 1. */

static void host_fact(void *ctx, const char *key, const char *value)
{
	struct profile_info *info = &((struct convert *)ctx)->profile.info;
	char **field = NULL;

	if (!strcmp(key, SREC_HOST_COMMAND_LINE))
		field = &info->command_line;
	else if (!strcmp(key, SREC_HOST_HOSTNAME))
		field = &info->hostname;
	else if (!strcmp(key, SREC_HOST_KERNEL_RELEASE))
		field = &info->kernel_release;
	else if (!strcmp(key, SREC_HOST_EVENT))
		field = &info->event;
	else if (!strcmp(key, SREC_HOST_FREQUENCY))
		info->frequency_hz = strtoull(value, NULL, 10);
	else if (!strcmp(key, SREC_HOST_START_REALTIME))
		info->start_realtime_ns = strtoull(value, NULL, 10);
	else if (!strcmp(key, SREC_HOST_START_MONOTONIC))
		info->start_monotonic_ns = strtoull(value, NULL, 10);
	else if (!strcmp(key, SREC_HOST_CALL_GRAPH))
		field = &((struct convert *)ctx)->call_graph;
	else if (!strcmp(key, SREC_HOST_MAX_STACK))
		((struct convert *)ctx)->max_stack = (uint32_t)strtoul(value, NULL, 10);
	else if (!strcmp(key, SREC_HOST_ARCHIVE_OF))
		field = &((struct convert *)ctx)->archive_of;
	if (field) {
		free(*field);
		*field = xstrdup(value);
	}
}

struct guess_range {
	uint64_t start, end;
	uint32_t module;
};

/* One sample in this many is looked at in pass 1 for modules to prepare early: enough to find the modules
 * most samples land in within the first few hundred samples, at a cost pass 1 does not notice. Only the first
 * GUESS_SAMPLES_MAX are: the mappings no sample has landed in by then (a library's data segments, modules the
 * program loaded but hardly ran) stay on the list and were compared with every address of every sample looked
 * at to the end (3.7% of a warm conversion's instructions on 50,000 node samples); the symbolizer prepares the
 * modules samples need after pass 1 all the same. */
#define GUESS_SAMPLE_EVERY 16
#define GUESS_SAMPLES_MAX (256 * GUESS_SAMPLE_EVERY)

/*
 * A module of the first process is prepared for the symbolizer while pass 1 reads the file (module_prefetch_
 * guess) once a sample of that process is seen to have an address in one of its mappings: preparing every
 * module the program maps read the DWARF of its libm, say, on every warm run, though no sample needed it. Out of
 * line: inlined, it made load_block save and restore registers for every sample (20 instructions of its 32).
 */
static __attribute__((noinline)) void guess_from_sample(struct convert *c, const void *body, uint32_t size)
{
	struct srec_sample s;
	const uint64_t *ips;

	if (recording_parse_sample(body, size, &s, &ips) < 0 || s.pid != c->guess_pid)
		return;
	for (uint16_t i = 0; i < s.user_depth && c->guess_range_count; i++) {
		for (size_t r = 0; r < c->guess_range_count; r++) {
			uint32_t module = c->guess_ranges[r].module;

			if (ips[i] < c->guess_ranges[r].start || ips[i] >= c->guess_ranges[r].end)
				continue;
			module_prefetch_guess(c->prefetch, module, &c->profile.modules[module]);
			for (size_t k = 0; k < c->guess_range_count;) /* its other mappings are of no more use */
				if (c->guess_ranges[k].module == module)
					c->guess_ranges[k] = c->guess_ranges[--c->guess_range_count];
				else
					k++;
			break;
		}
	}
}

static int load_other_block(struct convert *c, uint32_t type, const void *body, uint32_t size);

/* Pass 1's callback. Samples, nearly every block, are looked at first and apart from the rest, whose locals and
 * switch each sample paid for. */
static int load_block(void *ctx, uint32_t type, const void *body, uint32_t size)
{
	struct convert *c = ctx;

	if (type != SREC_BLOCK_SAMPLE)
		return load_other_block(c, type, body, size);
	if (c->guess_range_count && c->guess_samples++ % GUESS_SAMPLE_EVERY == 0) {
		guess_from_sample(c, body, size);
		if (c->guess_samples >= GUESS_SAMPLES_MAX)
			c->guess_range_count = 0;
	}
	return 0;
}

static __attribute__((noinline)) int load_other_block(struct convert *c, uint32_t type, const void *body,
						      uint32_t size)
{
	struct srec_mapping mapping;
	struct srec_task task;
	struct srec_stats stats;
	const char *path;
	uint32_t module;

	switch (type) {
	case SREC_BLOCK_HOST:
		recording_parse_host(body, size, host_fact, c);
		break;
	case SREC_BLOCK_MAPPING:
		if (recording_parse_mapping(body, size, &mapping, &path) < 0) {
			c->bad_blocks++;
			break;
		}
		module = process_maps_add_mapping(&c->maps, &c->profile, &mapping, path);
		/* Its module may be prepared while the file is read when it is the first process's (the recorded
		 * program, mostly; not a system's every process) and samples land in it. */
		if (!c->guess_pid)
			c->guess_pid = mapping.pid;
		if (c->prefetch && mapping.pid == c->guess_pid && mapping.end > mapping.start) {
			GROW(c->guess_ranges, c->guess_range_cap, c->guess_range_count + 1);
			c->guess_ranges[c->guess_range_count++] =
				(struct guess_range){ mapping.start, mapping.end, module };
		}
		break;
	case SREC_BLOCK_TASK:
		if (recording_parse_task(body, size, &task) < 0) {
			c->bad_blocks++;
			break;
		}
		if (task.event == SREC_TASK_EXEC)
			process_maps_add_exec(&c->maps, task.pid, task.time_ns);
		if (task.event == SREC_TASK_FORK) {
			process_maps_add_fork(&c->maps, task.pid, task.parent_pid, task.time_ns);
			profile_add_fork(&c->profile, task.pid, task.parent_pid, task.time_ns);
		}
		if (task.event == SREC_TASK_EXISTING)
			process_maps_add_existing(&c->maps, task.pid);
		if (task.pid == task.tid && task.comm[0])
			profile_set_process_name(&c->profile, task.pid, task.comm, task.time_ns);
		break;
	case SREC_BLOCK_KALLSYMS:
		kernel_symbols_add_text(&c->kernel, body, size);
		break;
	case SREC_BLOCK_FILE: {
		struct srec_file file;
		const char *file_path;
		const void *data;

		if (recording_parse_file(body, size, &file, &file_path, &data) < 0) {
			c->bad_blocks++;
			break;
		}
		if (file.kind == SREC_FILE_PERF_MAP)
			jit_maps_add_text(&c->jit, file.pid, file.data_offset, data, file.data_size);
		/* A vDSO is 8 KB; the image is kept whole, copied again, and goes into the profile cache: a forged
		 * recording's 1 GB one was all three */
		if (file.kind == SREC_FILE_VDSO && file.data_offset == c->vdso_size && !c->vdso_too_large &&
		    file.data_size > VDSO_IMAGE_MAX - c->vdso_size) {
			c->vdso_too_large = true;
			free(c->vdso_image);
			c->vdso_image = NULL;
			c->vdso_size = 0;
			c->vdso_build_id[0] = '\0'; /* nor looked for by its build ID: its frames stay unnamed */
			warning("the recording's [vdso] image is larger than %u bytes: not used (its frames stay "
				"unnamed)",
				VDSO_IMAGE_MAX);
		} else if (file.kind == SREC_FILE_VDSO && file.data_offset == c->vdso_size && !c->vdso_too_large) {
			c->vdso_image = xrealloc(c->vdso_image, c->vdso_size + file.data_size);
			memcpy(c->vdso_image + c->vdso_size, data, file.data_size);
			c->vdso_size += file.data_size;
			hex_encode(c->vdso_build_id, file.build_id, file.build_id_size);
		}
		break;
	}
	case SREC_BLOCK_STATS:
		recording_parse_stats(body, size, &stats);
		c->profile.lost_samples = stats.lost_samples;
		c->profile.info.duration_ns = stats.duration_ns;
		c->profile.lost_probe_hits = stats.lost_probe_hits;
		c->profile.lost_event_samples = stats.lost_event_samples;
		c->have_stats = true;
		break;
	case SREC_BLOCK_PROBE: {
		struct recording_probe probe;

		if (recording_parse_probe(body, size, &probe) < 0 || enrich_add_probe(c->enricher, &probe) < 0)
			c->bad_blocks++;
		break;
	}
	case SREC_BLOCK_PROBE_HIT:
		if (enrich_add_hit(c->enricher, c->hit_ordinal++, body, size) < 0)
			c->bad_blocks++;
		break;
	case SREC_BLOCK_PROCESS_METRICS: {
		struct srec_process_metrics m;
		struct profile *p = &c->profile;

		if (recording_parse_process_metrics(body, size, &m) < 0) {
			c->bad_blocks++;
			break;
		}
		if (p->metrics_count >= c->metrics_limit)
			break;
		GROW(p->metrics, p->metrics_cap, p->metrics_count + 1);
		p->metrics[p->metrics_count++] = (struct profile_metrics){
			.time_ns = m.time_ns,
			.pid = m.pid,
			.tid = m.tid,
			.at_event = m.reason == SREC_METRICS_EVENT,
			.threads = m.threads,
			.user_time_ns = m.user_time_ns,
			.system_time_ns = m.system_time_ns,
			.rss_bytes = m.rss_bytes,
			.vm_bytes = m.vm_bytes,
		};
		break;
	}
	default: /* samples are pass 2's; unknown types are skipped */
		break;
	}
	return 0;
}

/* Pass 2. */

static char *stack_error_name(const char *which, int32_t err)
{
	const char *name = err < 0 ? errno_name(err) : NULL;

	if (name)
		return xasprintf("[%s stack error -%s]", which, name);
	return xasprintf("[%s stack error %d]", which, err);
}

/*
 * A JIT-compiled function of pid at ip, named from its embedded perf map: a location of its own module
 * "/tmp/perf-PID.map" (as perf names it), named here, so the symbolizer leaves it alone.
 */
static bool jit_location(struct convert *c, uint32_t pid, const struct unwind_frame *f, uint32_t *out)
{
	const char *name = jit_maps_lookup(&c->jit, pid, f->is_return_address ? f->pc - 1 : f->pc);
	struct profile *p = &c->profile;
	struct profile_location *loc;
	uint32_t module;
	char path[64];

	if (!name)
		return false;
	snprintf(path, sizeof(path), "/tmp/perf-%u.map", pid);
	module = profile_intern_module(p, path, NULL, 0, 0, 0, false);
	p->modules[module].has_functions = true;
	*out = profile_intern_location(p, PROFILE_LOCATION_JIT, module, f->pc, f->pc, f->is_return_address, f->method);
	loc = &p->locations[*out];
	if (!loc->frame_count) {
		loc->frames = xcalloc(1, sizeof(*loc->frames));
		loc->frame_count = 1;
		/* A line "START SIZE " names nothing: unnamed, as every output shows an unnamed frame (folded wrote
		 * "[unknown]", d3 "[perf-PID.map]", trace a function "") */
		if (!*name) {
			loc->unnamed_reason = PROFILE_UNNAMED_EMPTY_JIT_NAME;
			return true;
		}
		loc->frames[0].function = xstrdup(name);
		loc->frames[0].system_name = xstrdup(name);
	}
	return true;
}

/* process_maps_period of a sample of pid at time_ns, after pass 1 (the mappings' history is whole). */
static uint64_t sample_period(struct convert *c, uint32_t pid, uint64_t time_ns)
{
	if (!c->period.used || c->period.pid != pid || time_ns < c->period.from || time_ns >= c->period.until) {
		c->period.period = process_maps_period_span(&c->maps, pid, time_ns, &c->period.from, &c->period.until);
		c->period.pid = pid;
		c->period.used = true;
	}
	return c->period.period;
}

static uint32_t user_location(struct convert *c, uint32_t pid, const struct unwind_frame *f)
{
	uint32_t location;

	if (jit_location(c, pid, f, &location))
		return location;
	if (c->prefetch && f->module != PROFILE_NO_MODULE)
		module_prefetch_want(c->prefetch, f->module, &c->profile.modules[f->module]);
	return profile_intern_location(&c->profile, PROFILE_LOCATION_USER, f->module, f->pc, f->file_offset,
				       f->is_return_address, f->method);
}

/* placed_location's way for a frame not remembered: into entry l, under key. Out of line: the remembered
 * frames, 98% of them, are found without saving a register. */
static __attribute__((noinline)) uint32_t placed_location_miss(struct convert *c, uint32_t pid, uint64_t time_ns,
							       struct placed_location *l, const struct placed_key *key,
							       struct unwind_frame *f, bool resolved)
{
	if (!resolved)
		unwind_resolve(c->unwinder, pid, time_ns, f);
	*l = (struct placed_location){ .key = *key, .location = user_location(c, pid, f) };
	return l->location;
}

/*
 * user_location of frame f of a sample of pid at time_ns, in period (process_maps_period) of its mappings'
 * history; f is resolved first (unwind_resolve) where it is not yet (!resolved) and not remembered.
 */
static inline uint32_t placed_location(struct convert *c, uint32_t pid, uint64_t time_ns, uint64_t period,
				       struct unwind_frame *f, bool resolved)
{
	struct placed_key key = placed_key(pid, period, f);
	bool found;
	struct placed_location *l = placed_entry(c->placed, sizeof(*c->placed), PLACED_LOCATIONS, &key, &found);

	return found ? l->location : placed_location_miss(c, pid, time_ns, l, &key, f, resolved);
}

/* placed_location of a return address pc that a frame-pointer walk found by method. */
static inline uint32_t placed_return_address(struct convert *c, uint32_t pid, uint64_t time_ns, uint64_t period,
					     uint64_t pc, enum profile_unwind method)
{
	struct unwind_frame frame = { .pc = pc, .is_return_address = true, .method = method };

	return placed_location(c, pid, time_ns, period, &frame, false);
}

/* follows_no_call's answers, per location: RETURN_SIGRETURN and RETURN_STARTS_CONTEXT are made returns
 * (call_site_made_return) named at their own address, the second the end of its stack */
enum { RETURN_UNCHECKED, RETURN_AFTER_CALL, RETURN_AFTER_NO_CALL, RETURN_SIGRETURN, RETURN_STARTS_CONTEXT };

#define WALK_CUT UINT32_MAX /* no location: the last word of a cut walk's memo entry */

/* Why a frame-pointer walk's stack is cut (walked_locations), for --explain (explain.c has its advice). */
#define FP_CUT_REASON "a return address that follows no call"

/*
 * The file of module (a profile module index) whose code the return-address checks read, or NULL where it cannot
 * be: JIT code, a module whose file was not found, or one found by its path alone (no build ID), which may not be
 * the code that ran. What cannot be read passes every check.
 */
static const struct module_file *checked_code(struct convert *c, uint32_t module)
{
	return module != PROFILE_NO_MODULE && c->profile.modules[module].build_id ? unwind_module_file(c->unwinder, module)
										   : NULL;
}

/* Whether return address file_offset of module follows no call instruction in its code (call_site_follows_no_call). */
static bool module_code_follows_no_call(struct convert *c, uint32_t module, uint64_t file_offset)
{
	const struct module_file *mf = checked_code(c, module);

	return mf && call_site_follows_no_call(mf, file_offset);
}

/*
 * Whether return-address location loc follows no call (module_code_follows_no_call): a frame-pointer walk
 * through code without frame pointers took a saved register or a word of data for a return address there
 * (bash's function pointers, values in cc1's frames). Asked once a location. Also notes the made returns of
 * signal handlers and makecontext functions (RETURN_SIGRETURN, RETURN_STARTS_CONTEXT).
 */
static bool follows_no_call(struct convert *c, uint32_t loc)
{
	const struct profile_location *l = &c->profile.locations[loc];

	if (loc >= c->return_checked_cap) {
		size_t old = c->return_checked_cap;

		GROW(c->return_checked, c->return_checked_cap, (size_t)loc + 1);
		memset(c->return_checked + old, RETURN_UNCHECKED, c->return_checked_cap - old);
	}
	if (c->return_checked[loc] == RETURN_UNCHECKED) {
		const struct module_file *mf = l->kind == PROFILE_LOCATION_USER ? checked_code(c, l->module) : NULL;

		enum call_site_made made = mf ? call_site_made_return(mf, l->file_offset) : CALL_SITE_MADE_NONE;

		c->return_checked[loc] = !mf ? RETURN_AFTER_CALL
					 : made == CALL_SITE_MADE_START_CONTEXT ? RETURN_STARTS_CONTEXT
					 : made == CALL_SITE_MADE_SIGRETURN ? RETURN_SIGRETURN
					 : call_site_follows_no_call(mf, l->file_offset) ? RETURN_AFTER_NO_CALL
											   : RETURN_AFTER_CALL;
	}
	return c->return_checked[loc] == RETURN_AFTER_NO_CALL;
}

/* The leaf of a frame-pointer walk, and the caller the walk skipped that its registers put back, if any. */
struct walked_leaf {
	uint32_t depth;		   /* user IPs but the 0 that ends a walk; 0: no leaf */
	struct unwind_frame frame; /* the leaf, resolved (when depth is not 0) */
	bool fixed;
	uint64_t caller;		  /* when fixed: the return address put back */
	bool cut; /* the walk is cut at a return address that follows no call (follows_no_call) */
	bool ended; /* ... ended at makecontext's __start_context, its outermost frame: not cut, not too deep */
	struct unwind_leaf_recipe recipe; /* how the caller was found, for the sample memo to find it again */
};

/* Whether the caller a leaf repair would put back follows no call: the word the leaf's CFI pointed at was not
 * its return address (the repair is wrong, not the walk), and nothing is put back. */
static bool leaf_caller_follows_no_call(struct convert *c, const struct unwind_input *in, uint64_t caller)
{
	uint64_t period = sample_period(c, in->pid, in->time_ns);
	struct leaf_caller_check *check =
		&c->leaf_caller_checks[address_hash(caller ^ period << 48 ^ in->pid) % ARRAY_SIZE(c->leaf_caller_checks)];
	struct unwind_frame frame = { .pc = caller - 1 };

	if (check->used && check->caller == caller && check->pid == in->pid && check->period == period)
		return check->no_call;
	unwind_resolve(c->unwinder, in->pid, in->time_ns, &frame);
	*check = (struct leaf_caller_check){ .used = true, .pid = in->pid, .period = period, .caller = caller,
					     .no_call = module_code_follows_no_call(c, frame.module, frame.file_offset + 1) };
	return check->no_call;
}

/*
 * Whether the sample's registers and top words put back the caller the walk skipped under the leaf: by the
 * recipe found for this leaf before (known), or else the long way, which sets leaf->recipe. Inlined in both
 * callers: gcc left it out of line once remembered_leaf read the recipe in place, 40 instructions a sample.
 */
static inline __attribute__((always_inline)) void repair_leaf(struct convert *c, const uint64_t *ips,
							    const struct unwind_input *in,
							    const struct unwind_leaf_recipe *known,
							    struct walked_leaf *leaf)
{
	uint64_t caller = 0;

	leaf->fixed = leaf->depth && in &&
		      (known ? unwind_leaf_caller_by(c->unwinder, known, in, &leaf->frame, &caller)
			     : unwind_leaf_caller_recipe(c->unwinder, in, &leaf->frame, &caller, &leaf->recipe)) &&
		      (leaf->depth < 2 || ips[1] != caller) && !leaf_caller_follows_no_call(c, in, caller);
	leaf->caller = leaf->fixed ? caller : 0;
	if (leaf->fixed)
		c->profile.leaf_fixes++;
}

/*
 * The user locations of a frame-pointer walk, into locations: the sampled pc, then return addresses. The 0
 * that ends a walk (the outermost frame's saved frame pointer) is not a frame. The walk is cut before the first
 * return address that follows no call: neither that word nor anything the walk found beyond it is the stack
 * (leaf->cut). When the sample kept its registers and top words, the caller of a leaf function without a frame
 * of its own, which the walk skipped, is put back. Returns how many; *leaf says what the leaf was. A stack seen
 * before in the same process and period of its mappings is answered from the memo (stack_memo.h): only the
 * leaf is resolved, for its repair. The memo is asked only while a quarter of its look-ups answer
 * (stacks_window, memo_window.h).
 */
static uint32_t walked_locations(struct convert *c, const struct srec_sample *s, const uint64_t *ips,
				 const struct unwind_input *in, uint32_t *locations, struct walked_leaf *leaf)
{
	uint32_t depth = s->user_depth, n = 0, count;
	uint64_t key[SREC_MAX_STACK_DEPTH + 3], hash = 0;
	const uint32_t *known;
	bool memo;

	while (depth > 0 && ips[depth - 1] == 0)
		depth--;
	*leaf = (struct walked_leaf){ .depth = depth };
	if (!depth)
		return 0;
	leaf->frame = (struct unwind_frame){ .pc = ips[0], .method = PROFILE_UNWIND_PC };
	unwind_resolve(c->unwinder, s->pid, s->time_ns, &leaf->frame);
	repair_leaf(c, ips, in, NULL, leaf);
	key[0] = s->pid | (uint64_t)leaf->fixed << 32;
	key[1] = sample_period(c, s->pid, s->time_ns);
	key[2] = leaf->caller;
	memo = memo_window_wanted(&c->stacks_window);
	if (memo) {
		memcpy(key + 3, ips, depth * sizeof(*ips));
		known = stack_memo_find_hashed(&c->stacks, key, depth + 3, &count, &hash);
		memo_window_count(&c->stacks_window, known != NULL);
		if (known) {
			memcpy(locations, known, count * sizeof(*locations));
			leaf->cut = count && locations[count - 1] == WALK_CUT; /* remembered with WALK_CUT last */
			leaf->ended = !leaf->cut && count < depth + leaf->fixed; /* only an end keeps fewer */
			return count - leaf->cut;
		}
	}
	locations[n++] = placed_location(c, s->pid, s->time_ns, key[1], &leaf->frame, true);
	if (leaf->fixed)
		locations[n++] = placed_return_address(c, s->pid, s->time_ns, key[1], leaf->caller,
						       PROFILE_UNWIND_FP_LEAF_FIX);
	for (uint32_t i = 1; i < depth; i++)
		locations[n++] = placed_return_address(c, s->pid, s->time_ns, key[1], ips[i],
						       PROFILE_UNWIND_FRAME_POINTER);
	for (uint32_t i = 1; i < n && !leaf->cut; i++) {
		/* the repair's caller was checked (repair_leaf), but may be a made return too */
		if (follows_no_call(c, locations[i]) && i >= 1u + leaf->fixed) {
			n = i;
			leaf->cut = true;
		} else if (c->return_checked[locations[i]] >= RETURN_SIGRETURN) {
			/* a signal handler's __restore_rt or makecontext's __start_context, named where it is (the
			 * byte before is no function's); the walk went on from __start_context through the
			 * context's data to callers that never called (enum call_site_made) */
			const struct profile_location *l = &c->profile.locations[locations[i]];
			bool end = c->return_checked[locations[i]] == RETURN_STARTS_CONTEXT;
			struct unwind_frame made = { .pc = l->address, .method = l->unwind };

			locations[i] = placed_location(c, s->pid, s->time_ns, key[1], &made, false);
			if (end) {
				n = i + 1;
				leaf->ended = true;
			}
		}
	}
	if (leaf->cut)
		locations[n] = WALK_CUT; /* for the memo only */
	if (memo)
		stack_memo_add_hashed(&c->stacks, hash, key, depth + 3, locations, n + leaf->cut);
	return n;
}

/*
 * The sample memo (convert.samples): a frame-pointer sample's raw form to the profile stack it was counted in.
 * Two samples with the same thread, name, kind, flags, stack errors and IPs, of a process in the same period
 * of its mappings' history (process_maps_period), whose leaves were repaired alike (the repair reads each
 * sample's own stack words, which the key leaves out: so the answer is kept per repair, SAMPLE_REPAIRS at
 * most), are the same profile stack: kernel locations and markers follow from the IPs and errors, user ones
 * as in the stack memo. A repeated sample then costs its parsing, the period, one hash, its leaf's repair (by
 * the remembered leaf's recipe: no mapping or rule look-up, one word read) and a count. Not for samples unwound
 * offline (dwarf: the frames come from the stack bytes), events (kept one by one), or recordings with probes (a
 * frame's context depends on the sample's time); asked only while a sixteenth of its look-ups answer
 * (samples_window, memo_window.h).
 */
#define SAMPLE_KEY_HEAD 7     /* words before the IPs */
#define SAMPLE_KEY_UNHASHED 4 /* the first of them, kind and flags, errors and name: seldom all that differs */
#define SAMPLE_REPAIRS 4
#define SAMPLE_MEMO_MAX_BYTES (32u << 20)

/*
 * The memo's value, in uint32_t words: the leaf and how its caller was found (its repair's recipe: a repeated
 * sample reads the word the recipe says, without looking the leaf's rule up), then up to SAMPLE_REPAIRS repairs
 * and their stacks.
 */
enum {
	SAMPLE_LEAF_RECIPE,
	SAMPLE_LEAF_MODULE = sizeof(struct unwind_leaf_recipe) / sizeof(uint32_t),
	SAMPLE_LEAF_OFFSET,
	SAMPLE_LEAF_DEPTH = SAMPLE_LEAF_OFFSET + 2,
	SAMPLE_REPAIR_COUNT,
	SAMPLE_REPAIR
};
enum { REPAIR_FIXED, REPAIR_CALLER, REPAIR_STACK = 3, REPAIR_WORDS };
#define SAMPLE_VALUE_WORDS (SAMPLE_REPAIR + SAMPLE_REPAIRS * REPAIR_WORDS)

static uint32_t sample_key(struct convert *c, const struct srec_sample *s, const uint64_t *ips, uint64_t *key)
{
	uint32_t n = s->user_depth + s->kernel_depth;

	key[0] = s->kind | (uint64_t)s->flags << 16;
	key[1] = (uint32_t)s->user_stack_error | (uint64_t)(uint32_t)s->kernel_stack_error << 32;
	memcpy(key + 2, s->comm, 2 * sizeof(*key));
	key[4] = s->pid | (uint64_t)s->tid << 32;
	key[5] = sample_period(c, s->pid, s->time_ns);
	key[6] = s->user_depth | (uint64_t)s->kernel_depth << 32;
	memcpy(key + SAMPLE_KEY_HEAD, ips, n * sizeof(*ips));
	return SAMPLE_KEY_HEAD + n;
}
_Static_assert(SREC_COMM_LEN == 2 * sizeof(uint64_t), "a sample's name is two words of the memo's key");
_Static_assert(sizeof(struct unwind_leaf_recipe) % sizeof(uint32_t) == 0,
	       "a leaf's recipe is whole words of the memo's value");

static void put64(uint32_t *words, uint64_t value)
{
	words[0] = (uint32_t)value;
	words[1] = (uint32_t)(value >> 32);
}

static uint64_t get64(const uint32_t *words)
{
	return words[0] | (uint64_t)words[1] << 32;
}

/* The stack remembered for a sample of this memo value whose leaf was repaired so, or UINT32_MAX. */
static uint32_t remembered_stack(const uint32_t *value, const struct walked_leaf *leaf)
{
	for (uint32_t i = 0; i < value[SAMPLE_REPAIR_COUNT]; i++) {
		const uint32_t *r = value + SAMPLE_REPAIR + i * REPAIR_WORDS;

		if (r[REPAIR_FIXED] == leaf->fixed && get64(r + REPAIR_CALLER) == leaf->caller)
			return r[REPAIR_STACK];
	}
	return UINT32_MAX;
}

/*
 * Remembers stack for the sample of key (hash: its hash in the sample memo; value: what the memo holds for it, or
 * NULL) repaired as leaf says.
 */
static void remember_sample(struct convert *c, const uint64_t *key, uint32_t key_words, uint64_t hash,
			    uint32_t *value, const struct walked_leaf *leaf, uint32_t stack)
{
	uint32_t fresh[SAMPLE_VALUE_WORDS] = { 0 }, *r;

	if (!value) {
		value = fresh;
		value[SAMPLE_LEAF_MODULE] = leaf->frame.module;
		put64(value + SAMPLE_LEAF_OFFSET, leaf->frame.file_offset);
		value[SAMPLE_LEAF_DEPTH] = leaf->depth;
		memcpy(value + SAMPLE_LEAF_RECIPE, &leaf->recipe, sizeof(leaf->recipe));
	}
	if (value[SAMPLE_REPAIR_COUNT] == SAMPLE_REPAIRS)
		return; /* a leaf repaired many ways: the others are found the long way */
	r = value + SAMPLE_REPAIR + value[SAMPLE_REPAIR_COUNT]++ * REPAIR_WORDS;
	r[REPAIR_FIXED] = leaf->fixed;
	put64(r + REPAIR_CALLER, leaf->caller);
	r[REPAIR_STACK] = stack;
	if (value == fresh)
		stack_memo_add_hashed(&c->samples, hash, key, key_words, fresh, SAMPLE_VALUE_WORDS);
}

/*
 * The leaf of the memo's value, as walked_locations found it, then repaired for this sample by its recipe: only
 * what remembered_stack and the sample's count read (leaf->frame only when there is a leaf; not leaf->recipe,
 * which the memo has), not the whole of *leaf zeroed first, which was a tenth of a repeated sample's own work.
 * The recipe is read in place: remember_sample copied it there whole (so it has its type), and the value starts
 * after the key's words, aligned as they are.
 */
static void remembered_leaf(struct convert *c, const uint32_t *value, const uint64_t *ips,
			    const struct unwind_input *in, struct walked_leaf *leaf)
{
	leaf->depth = value[SAMPLE_LEAF_DEPTH];
	if (leaf->depth)
		leaf->frame = (struct unwind_frame){ .pc = ips[0], .method = PROFILE_UNWIND_PC,
						     .module = value[SAMPLE_LEAF_MODULE],
						     .file_offset = get64(value + SAMPLE_LEAF_OFFSET) };
	repair_leaf(c, ips, in, (const struct unwind_leaf_recipe *)(value + SAMPLE_LEAF_RECIPE), leaf);
}

/* What the profile counts of a sample; comm, when not NULL, its name as a string. */
static struct profile_sample_info sample_info(const struct srec_sample *s, const char *comm)
{
	/* Any kind but off-CPU and event is counted as on-CPU, as recordings before off-CPU recording had only
	 * that. */
	return (struct profile_sample_info){
		.pid = s->pid,
		.tid = s->tid,
		.comm = comm,
		.kind = s->kind == SREC_SAMPLE_OFF_CPU ? PROFILE_SAMPLE_OFF_CPU
			: s->kind == SREC_SAMPLE_EVENT ? PROFILE_SAMPLE_EVENT
						       : PROFILE_SAMPLE_ON_CPU,
		.time_ns = s->time_ns,
		.weight_ns = s->kind == SREC_SAMPLE_EVENT ? 0 : s->weight,
		.user_error = s->user_stack_error,
		.kernel_error = s->kernel_stack_error,
	};
}

/*
 * A sample block the long way: parsed, its stack found (by the fp memos, or unwound) and counted. Returns the
 * profile stack it was counted in, or UINT32_MAX for a block that made no sense; *answer (unless NULL) says what
 * else counting it did, for the raw sample memo (its stack set by the caller).
 */
static __attribute__((noinline)) uint32_t count_sample(struct convert *c, const void *body, uint32_t size,
						       struct raw_sample_answer *answer)
{
	struct profile *p = &c->profile;
	uint32_t locations[2 * SREC_MAX_STACK_DEPTH + 3];
	struct unwind_frame frames[SREC_MAX_STACK_DEPTH + 1];
	struct srec_user_regs regs_header;
	struct srec_sample_event event;
	const char *event_name = NULL;
	uint64_t cfas[2 * SREC_MAX_STACK_DEPTH + 3]; /* 0 (unknown) but for dwarf frames: filled at the end */
	uint32_t hits[2 * SREC_MAX_STACK_DEPTH + 3];
	struct profile_sample_info info;
	struct unwind_input input, *in = NULL;
	enum unwind_end end = UNWIND_COMPLETE;
	const char *why = NULL;
	struct srec_sample s;
	const uint64_t *ips;
	uint32_t depth = 0, user = 0, user_from, index, key_words = 0, *remembered = NULL, count;
	uint64_t key[SAMPLE_KEY_HEAD + 2 * SREC_MAX_STACK_DEPTH], key_hash = 0, pc;
	struct walked_leaf leaf;
	char comm[SREC_COMM_LEN + 1] = { 0 };
	bool memo;
	int regs;

	if (recording_parse_sample(body, size, &s, &ips) < 0) {
		c->bad_blocks++;
		return UINT32_MAX;
	}
	regs = recording_parse_user_regs(body, size, &s, &regs_header, &input.regs, &input.stack);
	if (regs < 0 || recording_parse_sample_event(body, size, &s, &event, &event_name) < 0) {
		c->bad_blocks++;
		return UINT32_MAX;
	}
	if (regs == 0) {
		input.pid = s.pid;
		input.time_ns = s.time_ns;
		input.header = &regs_header;
		in = &input;
	}
	memcpy(comm, s.comm, SREC_COMM_LEN);
	info = sample_info(&s, comm);
	/* Inside execve, after the exec record: the user pc is the old image's (process_maps_exec_pc_time), and
	 * its frames are resolved as of then; info keeps the sample's own time. */
	if (s.user_stack_error && s.kind != SREC_SAMPLE_EVENT &&
	    (s.user_depth ? (pc = ips[0], true) : in && unwind_input_pc(in, &pc)))
		s.time_ns = input.time_ns = process_maps_exec_pc_time(&c->maps, s.pid, s.time_ns, pc);
	memo = !(s.flags & SREC_SAMPLE_USER_UNWIND) && s.kind != SREC_SAMPLE_EVENT && !p->probe_count &&
	       s.user_depth + s.kernel_depth <= 2 * SREC_MAX_STACK_DEPTH && memo_window_wanted(&c->samples_window);
	if (memo) {
		key_words = sample_key(c, &s, ips, key);
		remembered = stack_memo_find_hashed(&c->samples, key, key_words, &count, &key_hash);
		index = UINT32_MAX;
		if (remembered) {
			remembered_leaf(c, remembered, ips, in, &leaf);
			index = remembered_stack(remembered, &leaf);
		}
		memo_window_count(&c->samples_window, index != UINT32_MAX);
		if (index != UINT32_MAX) {
			profile_count_sample(p, index, &info);
			return index;
		}
		if (remembered)
			p->leaf_fixes -= leaf.fixed; /* counted again the long way */
	}

	/* Leaf first: the kernel part (a failed read as one marker frame), then the user part. */
	if (s.kernel_stack_error) {
		char *name = stack_error_name("kernel", s.kernel_stack_error);

		locations[depth++] = profile_intern_marker(p, PROFILE_LOCATION_KERNEL, name);
		free(name);
	}
	for (uint32_t i = 0; i < s.kernel_depth; i++) {
		uint64_t ip = ips[s.user_depth + i];

		if (c->kernel_module == PROFILE_NO_MODULE)
			c->kernel_module = profile_intern_module(p, "[kernel.kallsyms]", NULL, 0, 0, 0, true);
		locations[depth++] = profile_intern_location(p, PROFILE_LOCATION_KERNEL, c->kernel_module, ip, ip, i > 0,
							     PROFILE_UNWIND_KERNEL);
	}
	user_from = depth;
	if (s.flags & SREC_SAMPLE_USER_UNWIND) {
		uint64_t period = sample_period(c, s.pid, s.time_ns);

		if (in)
			user = unwind_user_stack(c->unwinder, in, frames, SREC_MAX_STACK_DEPTH, &end, &why);
		/* Cut where every off-CPU copy is (bpf/profile.bpf.c): a larger SIZE would not have helped. */
		if (why && !strcmp(why, UNWIND_COPY_TOO_SMALL) && s.kind == SREC_SAMPLE_OFF_CPU &&
		    regs_header.stack_size >= SREC_OFF_CPU_STACK_MAX)
			why = UNWIND_OFF_CPU_COPY_AT_MOST;
		for (uint32_t i = 0; i < user; i++) {
			locations[depth] = frames[i].location;
			if (locations[depth] == UNWIND_NO_LOCATION) {
				locations[depth] = placed_location(c, s.pid, s.time_ns, period, &frames[i], true);
				unwind_keep_location(c->unwinder, &frames[i], locations[depth]);
			}
			depth++;
		}
	} else {
		depth += walked_locations(c, &s, ips, in, locations + depth, &leaf); /* CFAs unknown (user stays 0) */
		if (leaf.cut) {
			end = UNWIND_LOST;
			why = FP_CUT_REASON;
			memo = false; /* a sample the fp sample memo answers is not counted as a stop (count_repeats is) */
		} else if (!leaf.ended && leaf.depth >= (c->max_stack && c->max_stack < SREC_MAX_STACK_DEPTH ? c->max_stack
											   : SREC_MAX_STACK_DEPTH)) {
			/* the walk gives at most this many IPs (kernel.perf_event_max_stack, 127 at most): the
			 * stack went on (a chance of one in a stack that has exactly that many frames); a walk that
			 * reached a 0 return address before (leaf.depth does not count it) ended */
			end = UNWIND_TRUNCATED;
			why = UNWIND_TOO_DEEP;
			memo = false;
		}
	}
	if (s.user_stack_error) {
		char *name = stack_error_name("user", s.user_stack_error);

		locations[depth++] = profile_intern_marker(p, PROFILE_LOCATION_USER, name);
		free(name);
	}
	/* A stack that was cut says so, at its root end; a stack that could not be read at all says that. */
	if (end != UNWIND_COMPLETE && !s.user_stack_error) {
		locations[depth++] = profile_intern_marker(p, PROFILE_LOCATION_USER,
							   end == UNWIND_TRUNCATED ? "[truncated]" : "[incomplete]");
		profile_count_unwind_stop(p, end == UNWIND_TRUNCATED, why);
		if (answer) {
			answer->stopped = true;
			answer->truncated = end == UNWIND_TRUNCATED;
			answer->stop_reason = why;
		}
	}
	/* Zeroed here, as deep as the stack, not the whole array: it is 2 KiB, and this runs for every sample. */
	memset(cfas, 0, depth * sizeof(*cfas));
	for (uint32_t i = 0; i < user; i++)
		cfas[user_from + i] = frames[i].cfa;
	if (enrich_stack(c->enricher, c->unwinder, s.pid, s.tid, info.time_ns, locations, cfas, depth, hits))
		info.hits = hits;
	index = profile_add_sample(p, &info, locations, depth);
	if (memo)
		remember_sample(c, key, key_words, key_hash, remembered, &leaf, index);
	if (s.kind == SREC_SAMPLE_EVENT)
		profile_add_event(p, &(struct profile_event){
					     .time_ns = s.time_ns,
					     .stack = index,
					     .type = event.type,
					     .signo = event.signo,
					     .code = event.code,
					     .address = event.address,
					     .name = event_name[0] ? xstrdup(event_name) : NULL,
				     });
	return index;
}

/*
 * count_sample, and what it did in the raw sample memo, which did not find the block (hash and period are
 * raw_sample_memo_find's and sample_period's).
 */
static int count_new_sample(struct convert *c, const void *body, uint32_t size, uint64_t hash, uint64_t period)
{
	struct raw_sample_answer answer = { 0 };
	uint64_t leaf_fixes = c->profile.leaf_fixes;
	uint32_t index = count_sample(c, body, size, &answer);

	if (index != UINT32_MAX) {
		struct srec_sample s;

		memcpy(&s, body, sizeof(s));
		answer.stack = index;
		answer.leaf_fixes = (uint32_t)(c->profile.leaf_fixes - leaf_fixes);
		answer.off_cpu = s.kind == SREC_SAMPLE_OFF_CPU;
		answer.user_error = s.user_stack_error;
		answer.kernel_error = s.kernel_stack_error;
		raw_sample_memo_add(&c->raw, hash, body, size, period, &answer);
	}
	return 0;
}

/*
 * Pass 2's callback. A sample block met before byte for byte (but its time, weight and CPU) in the same period of
 * its process's mappings is counted as that one was, by the raw sample memo (raw_sample_memo.h): no parsing, no
 * fp memo look-ups, no dwarf walk. Not events (each is kept with its details) nor recordings with probes (a
 * frame's context depends on the sample's time), as the fp sample memo.
 */
static int add_sample(void *ctx, uint32_t type, const void *body, uint32_t size)
{
	struct convert *c = ctx;
	struct raw_sample_answer *known;
	uint64_t hash, period, time_ns, weight;
	uint32_t pid;
	uint16_t kind;

	if (type != SREC_BLOCK_SAMPLE)
		return 0;
	if (size < sizeof(struct srec_sample) || c->profile.probe_count || !raw_sample_memo_wanted(&c->raw)) {
		count_sample(c, body, size, NULL);
		return 0;
	}
	/* Only what a repeat needs is read, not the whole header. */
	memcpy(&kind, (const char *)body + offsetof(struct srec_sample, kind), sizeof(kind));
	if (kind == SREC_SAMPLE_EVENT) {
		count_sample(c, body, size, NULL);
		return 0;
	}
	memcpy(&pid, (const char *)body + offsetof(struct srec_sample, pid), sizeof(pid));
	memcpy(&time_ns, (const char *)body + offsetof(struct srec_sample, time_ns), sizeof(time_ns));
	memcpy(&weight, (const char *)body + offsetof(struct srec_sample, weight), sizeof(weight));
	period = sample_period(c, pid, time_ns);
	known = raw_sample_memo_find(&c->raw, body, size, period, &hash);
	if (!known)
		return count_new_sample(c, body, size, hash, period);
	known->repeats++;
	known->repeat_weight_ns = add_saturating(known->repeat_weight_ns, weight); /* hostile weights: no wrap */
	if (c->profile.keep_timeline)
		profile_keep_sample(&c->profile, time_ns, weight, known->stack);
	return 0;
}

/* The raw sample memo's spill function: a remembered sample's repeats, into the profile at once. */
static void count_repeats(void *ctx, const struct raw_sample_answer *a)
{
	struct profile *p = ctx;
	struct profile_sample_info info = {
		.kind = a->off_cpu ? PROFILE_SAMPLE_OFF_CPU : PROFILE_SAMPLE_ON_CPU,
		.weight_ns = a->repeat_weight_ns,
		.user_error = a->user_error,
		.kernel_error = a->kernel_error,
	};

	p->leaf_fixes += a->repeats * a->leaf_fixes;
	if (a->stopped)
		profile_count_unwind_stops(p, a->truncated, a->stop_reason, a->repeats);
	profile_count_samples(p, a->stack, &info, a->repeats);
}

/* Pass 3: the values of the probe hits that frames show. */
static int add_hit_values(void *ctx, uint32_t type, const void *body, uint32_t size)
{
	struct convert *c = ctx;

	if (type == SREC_BLOCK_PROBE_HIT)
		enrich_add_hit_values(c->enricher, c->hit_ordinal++, body, size);
	return 0;
}

/* Output. */

/*
 * A format that shows one kind of value, asked for a kind the recording has no sample of, writes an empty
 * profile: say why, as a user otherwise gets an empty flame graph without a word (no error: the profile is what
 * was asked for).
 */
static void warn_kind_missing(const struct output_format *format, const struct profile *p,
			      const struct output_options *options, const char *path)
{
	enum output_kind kind = output_kind_of(p, options);

	if (!format->one_kind || !p->total_samples)
		return;
	if (kind == OUTPUT_KIND_ON_CPU && !p->on_cpu_samples)
		warning("'%s' has no on-CPU samples (it has %" PRIu64 " off-CPU ones): --kind on shows nothing; "
			"--kind off or wall shows them",
			path, p->off_cpu_samples);
	else if (kind == OUTPUT_KIND_OFF_CPU && !p->off_cpu_samples)
		warning("'%s' has no off-CPU samples (it has %" PRIu64 " on-CPU ones; record --off-cpu for them): "
			"--kind off shows nothing",
			path, p->on_cpu_samples);
}

static int write_output(const struct output_format *format, const struct profile *p,
			const struct output_options *options, const char *out_path)
{
	struct output_file output;
	FILE *out;
	int fd, ret;

	if (!out_path) {
		ret = format->write(p, options, stdout);
		if (fflush(stdout) != 0 || ferror(stdout))
			return error("cannot write to standard output: %s", strerror(errno));
		return ret;
	}
	/* A regular or new file is written as a temporary file and renamed, so a failed convert never leaves half
	 * a file; /dev/null and the like are written in place (output.tmp stays NULL). See output_create. */
	fd = output_create(out_path, &output);
	if (fd < 0)
		return -1;
	out = fdopen(fd, "w");
	if (!out) {
		ret = error("cannot create '%s': %s", out_path, strerror(errno));
		close(fd);
		goto done;
	}
	ret = format->write(p, options, out);
	if (ret == 0 && (fflush(out) != 0 || ferror(out) || (output.tmp && fsync(fileno(out)) < 0)))
		ret = error("cannot write '%s': %s", out_path, strerror(errno)); /* the name given, never tmp's */
	if (fclose(out) != 0 && ret == 0)
		ret = error("cannot write '%s': %s", out_path, strerror(errno));
	if (ret == 0)
		ret = output_replace(&output, out_path, false);
done:
	output_discard(&output); /* what was not replaced */
	return ret;
}

/* -v: one line of counts, then why locations stayed unnamed. */
static void summary(const struct convert *c, const char *path)
{
	const struct profile *p = &c->profile;
	const char *reasons[32];
	uint64_t counts[32];
	size_t nreasons = 0;

	if (!verbose)
		return;
	for (size_t i = 0; i < p->location_count; i++) {
		const char *r = p->locations[i].unnamed_reason;
		size_t j;

		if (!r)
			continue;
		for (j = 0; j < nreasons && strcmp(reasons[j], r); j++)
			;
		if (j == nreasons) {
			if (nreasons == ARRAY_SIZE(reasons))
				continue;
			reasons[nreasons] = r;
			counts[nreasons++] = 0;
		}
		counts[j]++;
	}
	for (size_t j = 0; j < nreasons; j++)
		debug("%" PRIu64 " unnamed locations: %s", counts[j], reasons[j]);
	debug("'%s': %" PRIu64 " samples, %zu stacks, %zu locations, %" PRIu64 " unnamed, %zu modules, %" PRIu64
	      " samples lost while recording",
	      path, p->total_samples, p->stack_count, p->location_count, p->unnamed_locations, p->module_count,
	      p->lost_samples);
}

/* profile_cache_add_module for each module the unwinder opened. */
struct unwinder_modules {
	struct profile_cache_walk *walk;
	const struct profile *profile;
	const struct debug_file_search *search;
};

static void add_unwinder_module(void *ctx, uint32_t module, const struct module_file *mf)
{
	struct unwinder_modules *u = ctx;

	profile_cache_add_module(u->walk, module, mf, u->profile->modules[module].build_id, u->search);
}

/*
 * Passes 2 and 3: unwinds and counts every sample into the profile, then reads the values of the probe hits its
 * frames show. *walk gets what the walk read and counted besides the profile (for the profile cache).
 */
static void read_samples(struct convert *c, struct recording_reader *reader, struct symbolizer_options *sym,
			 struct profile_cache_walk *walk)
{
	struct unwinder_modules unwound = { .walk = walk, .profile = &c->profile, .search = &sym->search };

	c->unwinder = unwinder_new(&c->profile, &c->maps, &sym->search);
	stack_memo_init(&c->stacks);
	stack_memo_init(&c->samples);
	memo_window_init(&c->stacks_window, MEMO_WINDOW / 4);
	memo_window_init(&c->samples_window, MEMO_WINDOW / 16); /* a hit saves a whole walk; it fills slowly */
	c->samples.unhashed = SAMPLE_KEY_UNHASHED;
	c->samples.max_bytes = SAMPLE_MEMO_MAX_BYTES;
	raw_sample_memo_init(&c->raw, count_repeats, &c->profile);
	c->raw.dwarf = c->call_graph && !strncmp(c->call_graph, "dwarf", 5);
	/* With one job, modules are opened one at a time, after the samples, as before there were threads. */
	if (sym->jobs > 1 && !c->prefetch)
		c->prefetch = module_prefetch_new(sym);
	/* Damage is said once, in the reader's one-line error at the end; with -v, frame by frame too. Unwinding
	 * and aggregating take longer than decompressing: for a file whose frames pass 1 did not keep, a second
	 * thread decodes the next frame meanwhile (-j 1: one thread does all). */
	reader->decode_ahead = sym->jobs > 1;
	recording_reader_for_each(reader, add_sample, c, verbose ? RECORDING_WARN_EACH : RECORDING_WARN_NONE);
	if (enrich_wants_values(c->enricher)) {
		c->hit_ordinal = 0;
		recording_reader_for_each(reader, add_hit_values, c, RECORDING_WARN_NONE);
	}
	unwinder_for_each_module(c->unwinder, add_unwinder_module, &unwound);
	unwinder_free(c->unwinder);
	c->unwinder = NULL;
	stack_memo_release(&c->stacks);
	stack_memo_release(&c->samples);
	free(c->return_checked);
	c->return_checked = NULL;
	c->return_checked_cap = 0;
	raw_sample_memo_release(&c->raw); /* counts the repeats it still held */
	walk->frames_without_cfa = enrich_frames_without_cfa(c->enricher);
}

/* Keeps what the passes over the samples made for the next conversion of the same recording (profile_cache.h):
 * only after a clean run, whose every message a run that uses it says all the same. */
static void keep_profile(struct convert *c, const struct recording_reader *reader, const char *cache_dir,
			 const char *key, const struct profile_cache_walk *modules)
{
	if (problems_reported || c->bad_blocks || recording_reader_damaged(reader)) {
		debug("profile cache: not kept: this run was not clean (damage, a warning or an error)");
		return;
	}
	for (size_t i = 0; i < c->profile.location_count; i++) {
		const struct profile_location *l = &c->profile.locations[i];

		if ((l->unnamed_reason && l->kind != PROFILE_LOCATION_KERNEL) || l->frame_count > 1)
			return; /* not a profile before symbolization (but for the kernel's names): nothing made so yet */
	}
	for (size_t i = 0; i < modules->count; i++)
		if (!modules->list[i].identity) {
			debug("profile cache: not kept: '%s' cannot be told apart from another file later",
			      c->profile.modules[modules->list[i].module].path);
			return;
		}
	profile_name_processes(&c->profile); /* forked children's names too: the entry keeps no forks */
	profile_cache_save(cache_dir, key, &c->profile, modules);
}

/* What pass 2 would have asked for as frames landed in modules of a kept profile: their opening, on the prefetch
 * thread. */
static void want_kept_modules(struct convert *c)
{
	bool *wanted;

	if (!c->prefetch)
		return;
	wanted = xcalloc(c->profile.module_count + 1, sizeof(*wanted));
	for (size_t i = 0; i < c->profile.location_count; i++) {
		const struct profile_location *l = &c->profile.locations[i];

		if (l->kind != PROFILE_LOCATION_USER || l->module == PROFILE_NO_MODULE || wanted[l->module])
			continue;
		wanted[l->module] = true;
		module_prefetch_want(c->prefetch, l->module, &c->profile.modules[l->module]);
	}
	free(wanted);
}

/*
 * The profile of the previous conversion of this recording, when every file it read finds the same now and its
 * modules start with those pass 1 made: then it replaces the pass's profile. *cached is released either way.
 */
static bool use_kept_profile(struct convert *c, struct profile *cached, struct profile_cache_walk *modules,
			     const struct debug_file_search *search)
{
	/* Its modules are the recording's before any of them is looked for: no file an entry names is opened else. */
	bool used = profile_cache_fits(&c->profile, cached);

	if (!used)
		debug("profile cache: not used: its modules or facts are not those of the recording");
	else if ((used = profile_cache_walk_holds(modules, &c->profile, search)))
		profile_cache_take(&c->profile, cached);
	profile_release(cached);
	if (used)
		want_kept_modules(c);
	return used;
}

/*
 * Without -v, the profile of the previous conversion of this recording when every file it read finds the same
 * now: then nothing else of the recording is needed (its kernel addresses are named in it, from the recording's
 * kallsyms, and it holds the recording's [vdso] image), and the recording is not read again: that reading was
 * half of a warm conversion. -v reports what the reading finds (mappings, why a frame is in none), so it reads it
 * and uses the entry as use_kept_profile does. *cached is released either way, and the image taken from modules.
 */
static bool adopt_kept_profile(struct convert *c, struct profile *cached, struct profile_cache_walk *modules,
			       struct debug_file_search *search)
{
	bool used;

	/* the unwinder's files are looked for as the first run looked for them: [vdso] in the recording's image */
	search->kernel_release = cached->info.kernel_release;
	search->vdso_image = modules->vdso_image;
	search->vdso_size = modules->vdso_size;
	used = (!modules->vdso_build_id || strlen(modules->vdso_build_id) < sizeof(c->vdso_build_id)) &&
	       profile_cache_walk_holds(modules, cached, search);
	search->kernel_release = NULL;
	search->vdso_image = NULL;
	search->vdso_size = 0;
	if (!used) {
		profile_release(cached);
		return false;
	}
	cached->keep_timeline = c->profile.keep_timeline;
	profile_release(&c->profile);
	c->profile = *cached;
	memset(cached, 0, sizeof(*cached));
	profile_index_modules(&c->profile); /* the symbolizer adds the kernel's modules */
	c->vdso_image = modules->vdso_image;
	c->vdso_size = modules->vdso_size;
	modules->vdso_image = NULL;
	modules->vdso_size = 0;
	snprintf(c->vdso_build_id, sizeof(c->vdso_build_id), "%s", modules->vdso_build_id ? modules->vdso_build_id : "");
	want_kept_modules(c);
	return true;
}

static bool is_directory(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int cmd_convert(int argc, char **argv)
{
	static const struct option long_options[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "kind", required_argument, NULL, 'k' },
		{ "pid", no_argument, NULL, 'P' },
		{ "tid", no_argument, NULL, 'T' },
		{ "annotate", no_argument, NULL, 'A' },
		{ "addrs", no_argument, NULL, 'a' },
		{ "thread-names", no_argument, NULL, 'N' },
		{ "no-demangle", no_argument, NULL, 'D' },
		{ "debug-dir", required_argument, NULL, 'd' },
		{ "symfs", required_argument, NULL, 'S' },
		{ "cache-dir", required_argument, NULL, 'C' },
		{ "no-cache", no_argument, NULL, 'K' },
		{ "debuginfod", required_argument, NULL, 'U' },
		{ "archive", required_argument, NULL, 'R' },
		{ "explain", no_argument, NULL, 'E' },
		{ "all-events", no_argument, NULL, 'e' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct output_options options = { 0 };
	struct symbolizer_options sym = { .demangle = true, .jobs = default_jobs() };
	const char *format_name = "folded", *out_path = NULL, *path;
	const struct output_format *format;
	struct recording_reader reader;
	struct convert *c;
	const char *cache_dir_option = NULL, *archive_path = NULL;
	char *cache_dir = NULL, *archive_dir = NULL, *archive_identity = NULL, *symfs = NULL;
	bool no_cache = false, explain = false;
	int opt, status = 0;
	bool damaged;
	char *profile_key = NULL;
	struct profile cached;
	struct profile_cache_walk cached_modules;
	bool have_cached = false, used_cached = false, adopted = false;
	struct profile_cache_walk unwound = { 0 };
	uint64_t frames_without_cfa = 0; /* of probed functions' frames: the walk's, or the kept profile's */

	optind = 0;
	while ((opt = getopt_long(argc, argv, "f:o:j:vh", long_options, NULL)) != -1) {
		switch (opt) {
		case 'f': format_name = optarg; break;
		case 'o': out_path = strcmp(optarg, "-") ? optarg : NULL; break;
		case 'k':
			if (output_kind_parse(optarg, &options.kind) < 0) {
				error("'%s' is not a kind: on, off or wall", optarg);
				status = 2;
				goto release_options;
			}
			break;
		case 'P': options.per_pid = true; break;
		case 'T': options.per_tid = true; break;
		case 'A': options.annotate = true; break;
		case 'a': options.addrs = true; break;
		case 'N': options.thread_names = true; break;
		case 'D': sym.demangle = false; break;
		case 'd':
			if (symbolizer_options_add_debug_dir(&sym, optarg) < 0) {
				status = 2;
				goto release_options;
			}
			break;
		case 'S':
			free(symfs);
			symfs = realpath(optarg, NULL);
			if (!symfs || !is_directory(symfs)) {
				error("cannot use --symfs '%s': %s", optarg, symfs ? strerror(ENOTDIR) : strerror(errno));
				status = 2;
				goto release_options;
			}
			sym.search.symfs = strcmp(symfs, "/") ? symfs : NULL; /* "/" is this machine itself */
			break;
		case 'C': cache_dir_option = optarg; break;
		case 'K': no_cache = true; break;
		case 'U': setenv("DEBUGINFOD_URLS", optarg, 1); break; /* libdebuginfod and libdwfl read it */
		case 'R': archive_path = optarg; break;
		case 'E': explain = true; break;
		case 'e': options.all_events = true; break;
		case 'j':
			if (parse_jobs(optarg, &sym.jobs) < 0) {
				status = 2;
				goto release_options;
			}
			break;
		case 'v': verbose = true; break;
		case 'h': usage(stdout); goto release_options;
		default: usage(stderr); status = 2; goto release_options;
		}
	}
	if (optind != argc - 1) {
		error(optind >= argc ? "convert needs a recording file" : "convert takes one recording file");
		usage(stderr);
		status = 2;
		goto release_options;
	}
	path = argv[optind];
	format = output_format_find(format_name);
	if (!format) {
		error("'%s' is not an output format (try 'stackrec convert --help')", format_name);
		status = 2;
		goto release_options;
	}
	/* A report option elsewhere changes nothing: said, not silently ignored. Not counted by warning(): it is
	 * said on every run alike, not something of this recording the profile cache would leave unsaid. */
	if (options.all_events && strcmp(format->name, "report"))
		fprintf(stderr, "stackrec: warning: --all-events is for -f report; it changes nothing in -f %s\n",
			format->name);
	if (format->binary && !out_path && isatty(STDOUT_FILENO)) {
		error("'%s' is a binary format: use -o FILE or redirect standard output", format_name);
		status = 2;
		goto release_options;
	}
	if (recording_reader_open(&reader, path) < 0) {
		status = 1;
		goto release_options;
	}

	c = xcalloc(1, sizeof(*c));
	profile_init(&c->profile);
	process_maps_init(&c->maps);
	kernel_symbols_init(&c->kernel);
	jit_maps_init(&c->jit);
	c->kernel_module = PROFILE_NO_MODULE;
	/* Memory per sample only for the formats that show time, and for the report of every enriched sample. */
	c->profile.keep_timeline = format->timeline || options.all_events;
	c->enricher = enricher_new(&c->profile, reader.size, reader.header.version_minor);
	c->metrics_limit = reader.size / 8 + 1024;

	if (!no_cache)
		cache_dir = cache_dir_option ? xstrdup(cache_dir_option) : cache_dir_default();
	sym.search.cache_dir = cache_dir;
	sym.symbol_cache_dir = cache_dir; /* the symbol cache lives beside the build-ID cache */
	/* and so do decompressed debug files, but not with an archive: its files are extracted to a new directory
	 * each time, and a copy keyed by that path would never be used again (none is kept or read then) */
	debug_copies_set_dir(archive_path ? NULL : cache_dir);
	/*
	 * Modules are opened for the symbolizer on a thread of their own (module_prefetch.h): from pass 1 on, the
	 * first process's modules its samples land in (guess_from_sample), on the core pass 1 leaves idle (libc's
	 * debug file takes longer to inflate than pass 1 takes to read 50,000 samples). Not with an archive, whose
	 * directory the search gets only after pass 1. With one job, modules are opened one at a time, after the
	 * samples, as before there were threads.
	 */
	if (sym.jobs > 1 && !archive_path)
		c->prefetch = module_prefetch_new(&sym);
	/*
	 * The profile cache (profile_cache.h): not with --explain, which reports on the walk over the samples; not with
	 * an archive, extracted to a new directory each run; not with a debuginfod server, whose answers cannot be
	 * looked at without asking it.
	 */
	if (cache_dir && !explain && !archive_path && !debuginfod_client_wanted()) {
		profile_key = profile_cache_key(reader.map, reader.size, c->profile.keep_timeline, &sym.search);
		have_cached = profile_key && profile_cache_load(cache_dir, profile_key, &cached, &cached_modules);
	}
	if (have_cached && !verbose) {
		adopted = adopt_kept_profile(c, &cached, &cached_modules, &sym.search);
		used_cached = adopted;
		have_cached = false; /* released: not tried again after pass 1 */
		frames_without_cfa = cached_modules.frames_without_cfa;
		profile_cache_walk_release(&cached_modules);
	}
	if (!adopted) {
		/* Pass 2 (and 3) read the frames pass 1 decoded, for a file that decodes to at most RECORDING_KEEP_MAX. */
		reader.keep = !have_cached;
		recording_reader_for_each(&reader, load_block, c, RECORDING_WARN_NONE);
		enrich_finish_hits(c->enricher, reader.damage.bad_frames || reader.damage.bad_blocks || c->bad_blocks,
				   c->have_stats);
		process_maps_finish(&c->maps);
		kernel_symbols_finish(&c->kernel);
		c->kernel.cut = !c->kernel.count && !c->have_stats;
		jit_maps_finish(&c->jit);
		debug("'%s': %" PRIu64 " mappings in %zu processes, %" PRIu64 " execs, %" PRIu64 " forks, %zu kernel "
		      "symbols%s",
		      path, c->maps.mappings, c->maps.count, c->maps.execs, c->maps.forks, c->kernel.count,
		      c->kernel.hidden ? " (addresses hidden by kptr_restrict)" : "");
	}

	sym.search.kernel_release = c->profile.info.kernel_release;
	sym.search.vdso_image = c->vdso_image;
	sym.search.vdso_size = c->vdso_size;
	if (archive_path) {
		bool archive_damaged = false;

		archive_dir = archive_extract(archive_path, &archive_damaged);
		if (!archive_dir || archive_damaged) {
			status = EXIT_PARTIAL; /* converted all the same, with what the archive had intact or without it */
		}
		if (archive_dir) {
			sym.search.dirs = xrealloc(sym.search.dirs, (sym.search.dir_count + 1) * sizeof(char *));
			sym.search.dirs[sym.search.dir_count++] = xstrdup(archive_dir);
			sym.search.archive_dir = archive_dir;
			sym.search.archive_identity = archive_identity = archive_file_identity(archive_path);
		}
	}
	if (have_cached) {
		used_cached = use_kept_profile(c, &cached, &cached_modules, &sym.search);
		frames_without_cfa = cached_modules.frames_without_cfa;
		profile_cache_walk_release(&cached_modules);
	}
	if (!used_cached) {
		read_samples(c, &reader, &sym, &unwound);
		frames_without_cfa = unwound.frames_without_cfa;
		/* The kernel's names come from the recording alone: kept with the profile, which a later run can then
		 * use without reading the recording (adopt_kept_profile), as can its [vdso] image. */
		symbolize_kernel_locations(&c->profile, &c->kernel);
		if (profile_key && !c->archive_of) {
			if (c->vdso_size) {
				unwound.vdso_image = memcpy(xmalloc(c->vdso_size), c->vdso_image, c->vdso_size);
				unwound.vdso_size = c->vdso_size;
			}
			unwound.vdso_build_id = c->vdso_build_id[0] ? xstrdup(c->vdso_build_id) : NULL;
			keep_profile(c, &reader, cache_dir, profile_key, &unwound);
		}
		profile_cache_walk_release(&unwound);
	}
	recording_reader_forget(&reader); /* the memory is the symbolizer's now */
	/* Hits, and frames of probed functions, but none could be told which call it is in: said as the reasons
	 * enrich.c finds are (docs/convert.md), not only under --explain. Set after the profile cache kept the
	 * profile, and the same from its entry's count (frames_without_cfa). */
	if (!c->profile.context_omitted && c->profile.probe_hits && !c->profile.hit_count && frames_without_cfa)
		c->profile.context_omitted = "no frame of a probed function has a known stack address (CFA) to tell "
					     "which call it is in (a --call-graph fp recording has none): record with "
					     "--call-graph dwarf";
	if (c->profile.context_omitted)
		warning("'%s': no probe context shown: %s", path, c->profile.context_omitted);
	/* The kernel records no build ID for [vdso] mappings; the image the recorder embedded has one. */
	for (size_t i = 0; i < c->profile.module_count && c->vdso_build_id[0]; i++) {
		struct profile_module *m = &c->profile.modules[i];

		if (!m->build_id && !strcmp(m->path, "[vdso]"))
			m->build_id = xstrdup(c->vdso_build_id);
	}
	if (c->prefetch) {
		module_prefetch_finish(c->prefetch);
		symbolize_profile_prepared(&c->profile, &c->kernel, &sym, module_prefetch_take, c->prefetch);
	} else {
		symbolize_profile(&c->profile, &c->kernel, &sym);
	}
	module_prefetch_free(c->prefetch);
	c->prefetch = NULL;
	/* --explain and -v number what they list in the stacks' order */
	c->profile.stacks_in_any_order = format->stacks_in_any_order && !options.thread_names && !explain && !verbose;
	profile_finish(&c->profile);

	/* An archive is a file of the same format, of files and no samples: converted, it gave an empty output
	 * and exit 0 (while a recording given as --archive is refused) */
	if (c->archive_of) {
		error("'%s' is an archive (stackrec archive of '%s'), not a recording: convert the recording with "
		      "--archive '%s'",
		      path, c->archive_of, path);
		status = 1;
	} else {
		warn_kind_missing(format, &c->profile, &options, path);
		if (write_output(format, &c->profile, &options, out_path) < 0)
			status = 1; /* no output: worse than partial */
		summary(c, path);
	}
	if (explain || verbose) {
		explain_unnamed(&c->profile, &c->maps, c->call_graph, stderr);
		explain_unwinding(&c->profile, c->call_graph, stderr);
		explain_context(&c->profile, frames_without_cfa, c->call_graph, stderr);
	}

	/* An adopted entry was kept by a clean run of these very bytes, which were not read again. */
	damaged = !adopted && recording_reader_report_damage(&reader);
	if (!damaged && c->bad_blocks)
		error("'%s' is damaged: %" PRIu64 " blocks could not be parsed and were skipped; converted the rest",
		      path, c->bad_blocks);
	if ((damaged || c->bad_blocks) && status == 0)
		status = EXIT_PARTIAL;

	recording_reader_close(&reader);
	profile_release(&c->profile);
	process_maps_release(&c->maps);
	kernel_symbols_release(&c->kernel);
	jit_maps_release(&c->jit);
	enricher_free(c->enricher);
	free(c->vdso_image);
	free(c->archive_of);
	free(c->guess_ranges);
	free(c->call_graph);
	debug_copies_set_dir(NULL);
	free(cache_dir);
	free(profile_key);
	archive_remove_dir(archive_dir);
	free(archive_identity);
	free(c);
release_options:
	symbolizer_options_release(&sym);
	free(symfs);
	return status;
}
