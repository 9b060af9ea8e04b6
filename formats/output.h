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

struct output_options {
	bool per_pid;	    /* --pid: folded "comm-PID", per-process grouping */
	bool per_tid;	    /* --tid: folded "comm-PID/TID", per-thread grouping */
	bool annotate;	    /* --annotate: _[k] kernel, _[j] JIT, _[i] inlined on every such frame */
	bool addrs;	    /* --addrs: unnamed frames as "[module <offset>]" */
	bool thread_names;  /* --thread-names */
};

struct output_format {
	const char *name;	 /* the -f value */
	const char *description; /* one line for --help */
	bool binary;		 /* refuses to write to a terminal */
	/* Returns 0, or -1 with an error printed. */
	int (*write)(const struct profile *profile, const struct output_options *options, FILE *out);
};

/* The format named name, or NULL. */
const struct output_format *output_format_find(const char *name);
/* All formats, NULL-terminated, for --help. */
extern const struct output_format *const output_formats[];

#endif
