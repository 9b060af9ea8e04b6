/*
 * profile.h — the symbolized, aggregated profile that `convert` builds from a recording and every output
 * format writes. It is the one interface between convert/ and the output formats in formats/.
 *
 * Memory grows with distinct stacks and distinct addresses, not with samples: samples of the same kind
 * (on-CPU or off-CPU) with the same thread, name and locations are one `struct profile_stack` with its
 * values (a count and summed nanoseconds). Only when an output needs each sample's time (speedscope's
 * timelines, the trace's sample records) does the profile also keep a timeline of every sample, 24 bytes
 * each (profile.keep_timeline).
 *
 * Order: modules, locations and stacks are numbered in first-seen order while reading, then
 * profile_finish() sorts stacks into a deterministic order (by pid, tid, comm, kind, then locations root
 * first), so that converting the same file twice gives identical bytes in every format.
 */
#ifndef STACKREC_CONVERT_PROFILE_H
#define STACKREC_CONVERT_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../arena.h"

#define PROFILE_NO_MODULE UINT32_MAX

/* A file code ran from (an executable or library), the kernel, or a JIT region. */
struct profile_module {
	char *path;	     /* as recorded: "/usr/bin/app", "[kernel.kallsyms]", "[vdso]", "//anon" */
	char *build_id;	     /* lowercase hex, or NULL */
	uint64_t start, end; /* address range of the first mapping seen (for pprof's Mapping) */
	uint64_t file_offset;
	bool is_kernel;
	/* What symbolization found, for pprof's honest has_* flags: set when any location got one. */
	bool has_functions, has_filenames, has_line_numbers, has_inline_frames;
};

/* One function frame. An address inside inlined code yields several, innermost first. */
struct profile_frame {
	char *function;	   /* demangled name; NULL when unnamed (see profile_location.unnamed_reason) */
	char *system_name; /* the symbol's own (mangled) name; NULL when unnamed */
	char *file;	   /* source file, or NULL */
	uint32_t line;	   /* 0 when unknown */
	uint32_t column;   /* 0 when unknown */
	uint32_t start_line; /* line of the function's declaration, 0 when unknown */
	bool inlined;	   /* this frame was inlined into the next one (toward the root) */
	uint32_t discriminator; /* the line table's discriminator at the address (innermost frame), 0 if none */
};

enum profile_location_kind {
	PROFILE_LOCATION_USER = 1,   /* user-space code in a mapped file */
	PROFILE_LOCATION_KERNEL = 2, /* kernel code, named from the kallsyms snapshot */
	PROFILE_LOCATION_JIT = 3     /* reserved: code named from a JIT perf map */
};

/* How a frame was found. */
enum profile_unwind {
	PROFILE_UNWIND_FRAME_POINTER = 1, /* a frame-pointer step: while recording (fp mode) or offline (no CFI) */
	PROFILE_UNWIND_CFI = 2,		  /* a step with the module's CFI over the copied stack (dwarf mode) */
	PROFILE_UNWIND_FP_LEAF_FIX = 3,	  /* the caller of a frameless leaf, which the frame-pointer walk skipped */
	PROFILE_UNWIND_KERNEL = 4,	  /* the kernel's own stack walk */
	PROFILE_UNWIND_PC = 5,		  /* the interrupted pc itself, from the registers: the leaf */
	PROFILE_UNWIND_NONE = 6		  /* a marker, not a frame: "[truncated]", "[user stack error -EFAULT]" */
};

/* The unnamed_reason of a user address that no recorded mapping covers (--explain tells why it may be so). */
#define PROFILE_UNNAMED_NO_MAPPING "no mapping for the address"
/* ... of a JIT address whose perf map line gives an empty name. */
#define PROFILE_UNNAMED_EMPTY_JIT_NAME "its perf map entry has an empty name"
/* The unnamed_reasons of a kernel address: every name comes from the recording's kallsyms (kernel_symbols.h). */
#define PROFILE_UNNAMED_KERNEL_HIDDEN "kernel addresses were hidden (kernel.kptr_restrict) when recording"
#define PROFILE_UNNAMED_NO_KALLSYMS "no kernel symbols in the recording"
#define PROFILE_UNNAMED_KALLSYMS_CUT "the recording ended before its kernel symbols were written"
#define PROFILE_UNNAMED_NO_KERNEL_SYMBOL "no kernel symbol covers the address"

/* One distinct address in one module. */
struct profile_location {
	enum profile_location_kind kind;
	enum profile_unwind unwind;
	uint32_t module;	/* index into profile.modules, or PROFILE_NO_MODULE */
	uint64_t address;	/* runtime address as sampled (a return address for non-leaf frames) */
	uint64_t file_offset;	/* offset in the module's file of `address` (kernel: the address itself) */
	bool is_return_address; /* not the interrupted pc: symbolized at address - 1 */
	/* Frames innermost first (pprof's order); at least one. An unnamed location has one frame whose
	 * function is NULL and the reason in unnamed_reason ("no file with that build ID", ...). */
	struct profile_frame *frames;
	uint32_t frame_count;
	const char *unnamed_reason; /* static string, or NULL when named */
	bool synthetic;		    /* a marker convert made up, not an address: "[user stack error -EFAULT]" */
};

/*
 * What a sample measures. One recording may hold every kind; a stack holds samples of one kind. Events
 * (fatal signals, C++ exceptions) are stacks too, but they measure no time: their stacks have a count and no
 * nanoseconds, are counted apart (profile.events, not total_samples), and the outputs that show time or
 * samples (folded, d3, speedscope, pprof) leave them out; -f report and -f trace show them
 * (docs/formats.md).
 */
enum profile_sample_kind {
	PROFILE_SAMPLE_ON_CPU = 0,  /* timer/cycles samples: weight = the sampling period in ns */
	PROFILE_SAMPLE_OFF_CPU = 1, /* the thread left the CPU (sched_switch): weight = ns until it ran again */
	PROFILE_SAMPLE_EVENT = 2    /* something happened to the thread (profile_event): no weight */
};

#define PROFILE_NO_HIT UINT32_MAX

/* The type of a probe argument (the recording's "NAME:TYPE"). */
enum profile_arg_type {
	PROFILE_ARG_S64, /* an integer register, shown signed */
	PROFILE_ARG_U64, /* shown unsigned */
	PROFILE_ARG_PTR, /* an address, shown in hex */
	PROFILE_ARG_STR	 /* a string the argument pointed to, captured at the call */
};

#define PROFILE_PROBE_ARGS 6

/* A probe the recorder attached (`record --probe 'BINARY:FUNCTION(ARG, ...)'`). */
struct profile_probe {
	uint32_t probe_id; /* the recording's */
	char *binary;	   /* as recorded */
	char *function;
	char *build_id;	   /* the binary's, lowercase hex, or NULL: then no frame can be matched to it */
	uint64_t address;  /* the function's ELF address (st_value) in the binary */
	uint32_t arg_count;
	struct profile_probe_arg {
		char *name;
		enum profile_arg_type type;
	} args[PROFILE_PROBE_ARGS];
	uint64_t hits; /* PROBE_HIT blocks of this probe in the recording */
};

/*
 * The values one call of a probed function was entered with: the context of the frame of that call in
 * the stacks that show it (profile_stack.hits). Only the hits some frame shows are kept here.
 */
struct profile_hit {
	uint32_t probe;	  /* index into profile.probes */
	uint64_t time_ns; /* when the call was entered */
	uint64_t values[PROFILE_PROBE_ARGS]; /* raw argument registers, probe->arg_count of them */
	char *strings[PROFILE_PROBE_ARGS];   /* PROFILE_ARG_STR arguments: the captured string (up to a NUL), or
						NULL when it could not be read */
	uint8_t strings_cut;		     /* bit a: strings[a] is the start of a longer string */
};

/* What happened at an event (the recording's enum srec_event_type). */
enum profile_event_type {
	PROFILE_EVENT_SIGNAL = 1,   /* a fatal signal delivered to the thread */
	PROFILE_EVENT_EXCEPTION = 2 /* a C++ exception thrown */
};

/* One event: a fatal signal or an exception, with the stack of its thread at that moment. */
struct profile_event {
	uint64_t time_ns;
	uint32_t stack; /* index into profile.stacks: its thread, name and frames (kind PROFILE_SAMPLE_EVENT) */
	enum profile_event_type type;
	int32_t signo, code; /* signal: number and si_code */
	uint64_t address;    /* signal: the faulting address; exception: the thrown object */
	char *name;	     /* exception: the type's mangled name ("St13runtime_error"); else NULL */
};

/* A process's counters at one moment (PROCESS_METRICS). */
struct profile_metrics {
	uint64_t time_ns;
	uint32_t pid, tid;	/* tid: the thread of the event it was taken with, else 0 */
	bool at_event;		/* taken with an event of thread tid at time_ns; else an interval reading */
	uint32_t threads;
	uint64_t user_time_ns, system_time_ns, rss_bytes, vm_bytes;
};

/*
 * One distinct stack of one thread and one kind, with its values. The kind is part of the stack's key, so
 * that the on-CPU and the off-CPU samples of the same code path stay apart in every output. Of on_cpu_ns and
 * off_cpu_ns only the one of the stack's kind is non-zero; both are here so that outputs that carry every
 * value (pprof's three sample types, the trace) need not ask the kind.
 */
struct profile_stack {
	uint32_t pid, tid;
	char comm[16];	      /* thread name at sample time */
	enum profile_sample_kind kind;
	uint32_t *locations;  /* indexes into profile.locations, leaf first */
	uint32_t depth;
	uint64_t count;	      /* samples */
	uint64_t on_cpu_ns;   /* summed periods of its on-CPU samples */
	uint64_t off_cpu_ns;  /* summed time off the CPU of its off-CPU samples */
	int32_t user_error;   /* 0, or the -errno of the first failed user stack read (stack still counted) */
	int32_t kernel_error; /* likewise for the kernel stack */
	uint64_t first_ns;    /* its earliest sample's (or event's) time: the process is named as it was then */
	/* NULL, or per location (leaf first) the index into profile.hits of the call whose values its frame
	 * shows, or PROFILE_NO_HIT: the frame's context (convert/enrich.c). Part of the stack's key: the same
	 * frames with other values are another stack. */
	uint32_t *hits;
};

/*
 * One sample in time, kept only with profile.keep_timeline: 24 bytes a sample, where the stack holds
 * everything else (thread, kind, frames). The interval it covers is [time_ns, time_ns + weight_ns): an
 * on-CPU sample its period, an off-CPU sample the time from leaving the CPU to running again.
 */
struct profile_sample {
	uint64_t time_ns;   /* on the recording's clock (SREC_HOST_CLOCK): on-CPU the sample, off-CPU leaving the CPU */
	uint64_t weight_ns; /* period (on-CPU) or time off the CPU (off-CPU) */
	uint32_t stack;	    /* index into profile.stacks */
};
_Static_assert(sizeof(struct profile_sample) == 24, "docs/convert.md promises 24 bytes per sample");

/* Facts about the recording that outputs print (pprof comments, time, period). */
struct profile_info {
	char *command_line;	    /* the record command line, or NULL */
	char *hostname;		    /* or NULL */
	char *kernel_release;	    /* or NULL */
	char *event;		    /* "cpu-clock" or "cycles", or NULL */
	uint64_t frequency_hz;	    /* 0 when unknown */
	uint64_t start_realtime_ns; /* wall-clock start, 0 when unknown */
	uint64_t start_monotonic_ns; /* the same instant on the clock of the samples' time_ns, 0 when unknown */
	uint64_t duration_ns;	    /* 0 when unknown */
};

/* A process's name: the name of its main thread (tid == pid), from the recording's TASK blocks. */
struct profile_process {
	uint32_t pid;
	char name[16];
	uint64_t time_ns; /* when it got that name */
};

struct profile {
	struct profile_info info;
	struct profile_process *processes; /* sorted by pid by profile_finish() */
	size_t process_count, process_cap;
	struct profile_fork *forks; /* until profile_finish: who forked whom, for names (profile_add_fork) */
	size_t fork_count, fork_cap;
	struct profile_module *modules;
	size_t module_count;
	struct profile_location *locations;
	size_t location_count;
	struct profile_stack *stacks; /* sorted by profile_finish(), unless stacks_in_any_order */
	size_t stack_count;
	/*
	 * Set before profile_finish() when what reads the profile writes the same bytes whatever the order of its
	 * stacks (folded, which sorts its own lines): they are then left in the order they were first met, which
	 * depends on the recording alone too, and not sorted (a sixteenth of a warm conversion of 20,000 stacks).
	 * The timeline and events, when kept, are sorted, and with them the stacks all the same.
	 */
	bool stacks_in_any_order;
	/* Every sample in time order (then by stack), when keep_timeline was set before the first sample. */
	bool keep_timeline;
	struct profile_sample *timeline;
	size_t timeline_count, timeline_cap;
	uint64_t total_samples;	   /* on-CPU and off-CPU */
	uint64_t on_cpu_samples;   /* of which on-CPU */
	uint64_t off_cpu_samples;  /* of which off-CPU */
	uint64_t total_on_cpu_ns;  /* summed on_cpu_ns of every stack */
	uint64_t total_off_cpu_ns; /* summed off_cpu_ns of every stack */
	/* Events (fatal signals, exceptions), sorted by time then stack by profile_finish(). */
	struct profile_event *events;
	size_t event_count, event_cap;
	/* Probes, in the recording's order; the hits frames show; process metrics by pid, then time. */
	struct profile_probe *probes;
	size_t probe_count, probe_cap;
	struct profile_hit *hits;
	size_t hit_count, hit_cap;
	struct profile_metrics *metrics;
	size_t metrics_count, metrics_cap;
	uint64_t probe_hits;	     /* PROBE_HIT blocks read */
	uint64_t lost_probe_hits;    /* from STATS: hits the recorder dropped */
	uint64_t lost_event_samples; /* from STATS: events the recorder dropped */
	const char *context_omitted; /* why no frame got context although probes were hit (static), or NULL */
	/* Honest summary counters. */
	uint64_t lost_samples;	      /* from the recording's STATS block */
	uint64_t user_stack_errors;   /* samples whose user stack failed */
	uint64_t kernel_stack_errors; /* samples whose kernel stack failed */
	uint64_t unnamed_locations;   /* locations the symbolizer could not name (synthetic ones excluded) */
	uint64_t leaf_fixes;	      /* fp samples whose skipped leaf caller was put back */
	uint64_t truncated_stacks;    /* samples whose user stack ends in [truncated] */
	uint64_t incomplete_stacks;   /* samples whose user stack ends in [incomplete] */
	struct profile_unwind_stop {
		const char *reason; /* static string: "stack copy too small", "no CFI and no frame pointer", ... */
		bool truncated;	    /* the stacks end in [truncated], else [incomplete] */
		uint64_t samples;
	} unwind_stops[8];
	size_t unwind_stop_count;
	struct profile_tables *tables; /* private to convert/profile.c while building; NULL once finished */
	struct arena stack_arrays;     /* the stacks' locations and hits arrays, freed together by profile_release */
	size_t module_cap, location_cap, stack_cap;
};

/*
 * Building a profile (convert/profile.c). `convert` interns modules, locations and stacks while it reads,
 * the symbolizer fills every location's frames, then profile_finish() sorts. Outputs only read.
 */
void profile_init(struct profile *p);
/* The module with this build ID (lowercase hex), or else this path; added when new. Returns its index. */
uint32_t profile_intern_module(struct profile *p, const char *path, const char *build_id, uint64_t start,
			       uint64_t end, uint64_t file_offset, bool is_kernel);
/*
 * Indexes the modules of a profile that was not built by interning (profile_cache.c reads one whole), so that
 * profile_intern_module finds them (the symbolizer adds the kernel's modules). Its locations and stacks are not
 * indexed: nothing adds those after the samples.
 */
void profile_index_modules(struct profile *p);
/*
 * The location of (kind, module, file_offset, is_return_address, unwind); added, without frames, when new.
 * How a frame was found is part of it, so that every output can say it of every frame.
 * address is kept from the first sample that used it. Returns its index.
 */
uint32_t profile_intern_location(struct profile *p, enum profile_location_kind kind, uint32_t module,
				 uint64_t address, uint64_t file_offset, bool is_return_address, enum profile_unwind unwind);
/* A synthetic location named name (kept as given), e.g. "[user stack error -EFAULT]"; one per name. */
uint32_t profile_intern_marker(struct profile *p, enum profile_location_kind kind, const char *name);
/* A sample as convert hands it to the profile. */
struct profile_sample_info {
	uint32_t pid, tid;
	const char *comm;
	enum profile_sample_kind kind;
	uint64_t time_ns;
	uint64_t weight_ns; /* period (on-CPU) or time off the CPU (off-CPU) */
	int32_t user_error, kernel_error;
	const uint32_t *hits; /* NULL, or per location the profile.hits index of its context (PROFILE_NO_HIT) */
};
/*
 * Counts one sample of this stack (locations leaf first), and keeps it in the timeline if asked to (not an
 * event: see profile_add_event). Returns the stack's index (valid until profile_finish).
 */
uint32_t profile_add_sample(struct profile *p, const struct profile_sample_info *sample, const uint32_t *locations,
			uint32_t depth);
/*
 * Counts one more sample of stack index, which profile_add_sample returned for a sample of the same thread, name,
 * kind, locations and context: what profile_add_sample does once it has found the stack.
 */
void profile_count_sample(struct profile *p, uint32_t index, const struct profile_sample_info *sample);
/*
 * Counts n samples (not events) of stack index at once, as n calls of profile_count_sample would, sample's weight_ns
 * being their weights' sum; but keeps none of them in the timeline (profile_keep_sample keeps one).
 */
void profile_count_samples(struct profile *p, uint32_t index, const struct profile_sample_info *sample, uint64_t n);
/* Keeps a sample of stack index in the timeline (keep_timeline set), as profile_count_sample does. */
void profile_keep_sample(struct profile *p, uint64_t time_ns, uint64_t weight_ns, uint32_t index);
/* Adds an event whose stack profile_add_sample (kind PROFILE_SAMPLE_EVENT) returned; takes event->name. */
void profile_add_event(struct profile *p, const struct profile_event *event);
/* The metrics of the event of tid at time_ns, else the latest interval reading of pid before it, or NULL. */
const struct profile_metrics *profile_metrics_near(const struct profile *p, uint32_t pid, uint32_t tid,
						   uint64_t time_ns);
/* Counts a sample whose user stack did not reach its outermost frame, and why (a static string or NULL). */
void profile_count_unwind_stop(struct profile *p, bool truncated, const char *reason);
/* The same for n samples at once. */
void profile_count_unwind_stops(struct profile *p, bool truncated, const char *reason, uint64_t n);
/* Gives frameless locations an unnamed frame, sorts stacks deterministically (but see stacks_in_any_order; and
 * the timeline by time, its stack indexes following the stacks), frees the lookup tables. */
void profile_finish(struct profile *p);
/* Records that process pid is named name since time_ns; the latest name wins (side-band records from
 * different CPUs reach the file out of time order). */
void profile_set_process_name(struct profile *p, uint32_t pid, const char *name, uint64_t time_ns);
struct profile_fork {
	uint32_t child, parent;
	uint64_t time_ns;
};
/* Records that process child was forked from parent at time_ns: a child that exec'd nothing and was never
 * renamed is named as its parent was then (the kernel's fork record carries no name). */
void profile_add_fork(struct profile *p, uint32_t child, uint32_t parent, uint64_t time_ns);
/* Settles the process names: sorted by pid and time, forked children named (profile_finish does it). */
void profile_name_processes(struct profile *p);
/*
 * The name of process pid at time_ns: the last it was given then (or its first, for a time before any), as
 * a pid execs or is used again by another process; NULL when the recording did not say (only valid after
 * profile_finish).
 */
const char *profile_process_name(const struct profile *p, uint32_t pid, uint64_t time_ns);
void profile_release(struct profile *p);
/*
 * The frame of an unnamed location (every field 0), which they all share rather than allocate one each (a
 * program without symbols has one per address sampled): read-only, and left alone by profile_frames_free.
 */
extern const struct profile_frame profile_unnamed_frame;
#define PROFILE_UNNAMED_FRAMES ((struct profile_frame *)&profile_unnamed_frame)
/* Frees count frames and the array holding them (a location's, or symbolizer_name_address's). */
void profile_frames_free(struct profile_frame *frames, uint32_t count);

/*
 * The display name of an unnamed location, for outputs: "[libc.so.6]" (the module's basename, as perf and
 * stackcollapse-perf.pl name it), or "[unknown]" without a module. One name per module, not per address,
 * so that a flame graph shows one box where the module's unnamed code ran, not a comb of addresses
 * (outputs show those with --addrs). Returns a malloc'd string.
 */
char *profile_location_fallback_name(const struct profile *p, const struct profile_location *loc);
/* How a frame was found, as outputs spell it: "frame_pointer", "cfi", "frame_pointer_leaf_fix", "kernel",
 * "pc", "none". */
const char *profile_unwind_name(enum profile_unwind unwind);
/* A sample kind as outputs spell it: "on_cpu", "off_cpu", "event". */
const char *profile_sample_kind_name(enum profile_sample_kind kind);
/* An argument type as the recording spells it: "s64", "u64", "ptr", "str". */
const char *profile_arg_type_name(enum profile_arg_type type);
/* The stack's location d shows the context of hit profile.hits[*hit] in its outermost (physical) frame. */
bool profile_stack_context(const struct profile_stack *s, uint32_t d, uint32_t *hit);
/* The basename of a module's path without brackets or " (deleted)": "libc.so.6", "vdso", "kernel.kallsyms". */
char *profile_module_short_name(const struct profile_module *m);

#endif
