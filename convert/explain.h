/*
 * explain.h — `convert --explain`: why frames stayed unnamed, grouped by module and reason, with the share of
 * samples each group touches, so that a user knows what to install or pass first.
 */
#ifndef STACKREC_CONVERT_EXPLAIN_H
#define STACKREC_CONVERT_EXPLAIN_H

#include <stdio.h>

#include "process_maps.h"
#include "profile.h"

/*
 * Prints one line per (module, reason) of unnamed, non-synthetic locations, sorted by the fraction of samples
 * whose stack holds at least one of them, largest first:
 *   "  37.5%  libfoo.so (build ID ab12...)  no file with that build ID: install its debug package or ..."
 * Prints a single line saying so when every frame was named. Call after symbolization, before or after
 * profile_finish().
 *
 * An address no mapping covers ("no mapping for the address") is explained by what the recording says of
 * its process and stack, from maps (NULL: nothing known):
 *   - the process was running when recording started, or the recording has none of its mappings: "the
 *     process started before recording or mapped it quickly";
 *   - else a return address found by walking frame pointers, above a frame of a known module: that module
 *     has no frame pointers, so the walk read garbage ("no frame pointers in libfoo.so (the frame below
 *     it); record with --call-graph dwarf"; in a dwarf recording (call_graph, the HOST block's), a walk
 *     through it had no CFI: the binary itself was not found), one line per such module;
 *   - else: the recorded mappings do not cover it (code before the exec, or mmap records lost).
 */
void explain_unnamed(const struct profile *p, const struct process_maps *maps, const char *call_graph, FILE *out);

/*
 * How the user frames were found (the share of each unwinding method, weighted by samples), and how many
 * samples' stacks ended early, why, and what to do about it:
 *   "explain: 4.1% of samples end in [truncated]: stack copy too small: record with a larger --call-graph dwarf,SIZE"
 * call_graph is the recording's mode ("dwarf,8192", "fp"), or NULL when the recording does not say.
 */
void explain_unwinding(const struct profile *p, const char *call_graph, FILE *out);

/*
 * Probe context: how many frames got it, why none did when probes were hit (profile.context_omitted), and
 * how many frames of probed functions got none because their CFA was unknown (fp-mode stacks carry none).
 */
void explain_context(const struct profile *p, uint64_t frames_without_cfa, const char *call_graph, FILE *out);

/* What a user can do about an unnamed reason (a symbolizer reason string); a generic hint when unknown. */
const char *explain_advice(const char *reason);

#endif
