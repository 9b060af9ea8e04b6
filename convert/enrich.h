/*
 * enrich.h — probe context: convert's stage between unwinding and symbolizing a sample and aggregating it,
 * which gives a frame whose function has a probe the values of the call active in that frame.
 *
 * `record --probe 'BINARY:FUNCTION(ARG, ...)'` writes a PROBE block per probe and a PROBE_HIT block per call
 * entered: thread, time, the call's canonical frame address (CFA) and the argument values. A frame of a
 * sample shows the hit that is, on the sample's thread (same pid and tid), of the frame's probe, at or
 * before the sample's time, and of the frame's CFA, the most recent. Why that is the frame's own call: while
 * a call is active its frame occupies the stack at its CFA, so no other call of any function can be entered
 * at that CFA on that thread until it returns; the last entry at that CFA before the sample is the call
 * itself. A call that returned is no frame of a later stack; one at another depth (recursion) has another
 * CFA, so the innermost frame gets the innermost call. This holds only if no hit is missing: a lost hit
 * would let an earlier call's values stand in for the call that was lost, so when the recording lost hits
 * (STATS.lost_probe_hits), has damaged frames, has no STATS block (cut short: losses unknown) or has hits
 * that cannot be read, no frame gets context, and convert says why (profile.context_omitted).
 *
 * Which frames have a probe: a frame whose module has the probe binary's build ID and whose address lies in
 * the ELF symbol that starts at the probe's address (srec_probe.address, the symbol's st_value) — not a
 * match by name, which two binaries or two static functions may share. The context belongs to that
 * location's physical function (its last frame; inlined copies of the function are not probed).
 *
 * Frames whose CFA is unknown get no context (true before pretty): frames of fp-mode recordings, which
 * carry only IPs, and an interrupted frame unwound without CFI (unwind.h, unwind_frame.cfa).
 *
 * Memory: a hit costs 40 bytes until the hits are sorted, indexed by (pid, tid, probe, CFA, time) so that
 * a frame's look-up is a binary search; argument values and strings are kept only for the hits some frame
 * shows, read in a last pass over the file. The hits kept are bounded by the file's size (a quarter of a
 * hit per byte, ten times the file's size in memory): a small file that decompresses to millions of hits
 * cannot take more, and gets no context rather than a wrong one.
 */
#ifndef STACKREC_CONVERT_ENRICH_H
#define STACKREC_CONVERT_ENRICH_H

#include <stdbool.h>
#include <stdint.h>

#include "../formats/recording_reader.h"
#include "profile.h"
#include "unwind.h"

struct enricher;

/* An enricher that adds probes and hits to profile p, for a recording of file_size bytes in format 1.version_minor. */
struct enricher *enricher_new(struct profile *p, uint64_t file_size, unsigned int version_minor);
void enricher_free(struct enricher *e);

/* Pass 1, in file order: a PROBE block (-1 when it repeats a probe_id: skipped, count it as bad). */
int enrich_add_probe(struct enricher *e, const struct recording_probe *probe);
/*
 * Pass 1: the ordinal-th PROBE_HIT block of the file (counting every one, readable or not). Returns 0, or -1
 * when it names no probe or does not fit it (count it as bad; it also ends context, see above).
 */
int enrich_add_hit(struct enricher *e, uint64_t ordinal, const void *body, uint32_t size);
/*
 * After pass 1: sorts the hits for look-ups, and decides whether context can be trusted: damaged says the
 * file had damaged frames or blocks, have_stats that a STATS block was read (p->lost_probe_hits set).
 */
void enrich_finish_hits(struct enricher *e, bool damaged, bool have_stats);

/*
 * Pass 2, per sample: for each of its depth locations (leaf first) with a known CFA (cfas[d], 0 when
 * unknown), the profile.hits index of the call active in its frame, else PROFILE_NO_HIT, into hits[].
 * Returns whether any frame got context.
 */
bool enrich_stack(struct enricher *e, struct unwinder *u, uint32_t pid, uint32_t tid, uint64_t time_ns,
		  const uint32_t *locations, const uint64_t *cfas, uint32_t depth, uint32_t *hits);

/* Whether a last pass must read the values of hits that frames show (enrich_add_hit_values). */
bool enrich_wants_values(const struct enricher *e);
/* Pass 3, in file order: the ordinal-th PROBE_HIT block again; its values are kept if a frame shows it. */
void enrich_add_hit_values(struct enricher *e, uint64_t ordinal, const void *body, uint32_t size);

/* Frames of probed functions that got no context because their CFA was unknown (for --explain). */
uint64_t enrich_frames_without_cfa(const struct enricher *e);

#endif
