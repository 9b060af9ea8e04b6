/*
 * output.h — the one small interface every output format implements. Adding a format means one new
 * file in formats/ and one entry in the table in formats/output.c.
 *
 * A format receives the finished, sorted profile (convert/profile.h) and the user's options and writes to
 * `out`. It must be deterministic: the same profile gives the same bytes.
 */
#ifndef STACKREC_FORMATS_OUTPUT_H
#define STACKREC_FORMATS_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>

#include "../convert/profile.h"

/*
 * What the name-based formats (folded, d3, speedscope) show, from --kind; pprof and trace carry every value.
 * Folded and d3 write it in the unit output_kind_unit() names.
 */
enum output_kind {
	OUTPUT_KIND_DEFAULT = 0, /* ON_CPU when the profile has on-CPU samples, else OFF_CPU */
	OUTPUT_KIND_ON_CPU,	 /* on-CPU samples: a count */
	OUTPUT_KIND_OFF_CPU,	 /* off-CPU time, microseconds (as bcc's offcputime -f) */
	OUTPUT_KIND_WALL	 /* on-CPU time (each sample its period) plus off-CPU time, microseconds */
};

struct output_options {
	enum output_kind kind; /* --kind */
	bool per_pid;	    /* --pid: folded "comm-PID", per-process grouping */
	bool per_tid;	    /* --tid: folded "comm-PID/TID", per-thread grouping */
	bool annotate;	    /* --annotate: _[k] kernel, _[j] JIT, _[i] inlined on every such frame */
	bool addrs;	    /* --addrs: unnamed frames as "[module <offset>]" */
	bool thread_names;  /* --thread-names */
	bool all_events;    /* --all-events: report also every sample with a frame with probe context (needs the
			       profile's timeline) */
};

struct output_format {
	const char *name;	 /* the -f value */
	const char *description; /* one line for --help */
	bool binary;		 /* refuses to write to a terminal */
	bool timeline;		 /* shows each sample in time: needs profile.timeline (memory per sample) */
	bool one_kind;		 /* shows one kind of value, --kind's (pprof and trace carry every kind) */
	/* Writes the same bytes whatever the order of profile.stacks, but with --thread-names (folded, which sorts its
	 * lines; its process_comm looks for a process's main thread among the stacks next to one). */
	bool stacks_in_any_order;
	/* Returns 0, or -1 with an error printed. */
	int (*write)(const struct profile *profile, const struct output_options *options, FILE *out);
};

/* Parses "on", "off" or "wall". Returns 0, or -1 for anything else. */
int output_kind_parse(const char *name, enum output_kind *kind);
/* The kind to show: options->kind (options may be NULL), or the default for this profile. Never DEFAULT. */
enum output_kind output_kind_of(const struct profile *profile, const struct output_options *options);
/* "samples" (ON_CPU) or "microseconds" (OFF_CPU, WALL). */
const char *output_kind_unit(enum output_kind kind);
/* What a stack contributes under kind, in that kind's unit: 0 for a stack of the other kind. Time is
 * rounded to the nearest microsecond per stack, so that sums over stacks are the same in every format. */
uint64_t output_stack_value(const struct profile_stack *stack, enum output_kind kind);

/* The format named name, or NULL. */
const struct output_format *output_format_find(const char *name);
/* All formats, NULL-terminated, for --help. */
extern const struct output_format *const output_formats[];

#endif
