/*
 * raw_sample_memo.h — a sample block met again byte for byte, answered with what counting it did the first time.
 *
 * A recording of a steady program repeats its samples exactly: 50,000 samples of a 10 s cpu-bound fp recording are
 * 91 distinct blocks but for their time, weight and CPU, and a dwarf one's, registers and copied stack bytes
 * included, are 123. Everything convert makes of a sample but its count follows from those bytes and the period
 * of its process's mappings' history (process_maps_period): the user frames (an fp walk and its leaf repair, or a
 * dwarf walk, which reads nothing but the sample's registers and stack bytes), the kernel frames, the error and
 * cut-stack markers, and so the profile stack. So a repeated sample costs one hash of its block and one compare,
 * not its parsing, the look-ups of the fp memos (stack_memo.h) or a dwarf walk. Not for events (kept one by one)
 * nor recordings with probes (a frame's context depends on the sample's time): the caller leaves those out.
 *
 * The key leaves out the block's time_ns, weight and cpu (struct srec_sample): the caller counts the sample with
 * its own time and weight, and the CPU is read by nothing. Memory is bounded (RAW_SAMPLE_MEMO_MAX_BYTES: past it
 * the memo starts over), and a memo that seldom answers costs little more: see raw_sample_memo_wanted.
 */
#ifndef STACKREC_CONVERT_RAW_SAMPLE_MEMO_H
#define STACKREC_CONVERT_RAW_SAMPLE_MEMO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../arena.h"
#include "memo_window.h"

#define RAW_SAMPLE_MEMO_MAX_BYTES (32u << 20)

/*
 * What counting a sample did, for its repeats to do again: count it in its stack, with its kind and errors, and
 * move the summary counters it moved. Its repeats are counted here (repeats, repeat_weight_ns) and handed to the
 * spill function all at once, when the memo starts over or is released: a repeat's own cost is then its look-up,
 * not the profile's dozen counters.
 */
struct raw_sample_answer {
	uint32_t stack;		 /* the profile stack it was counted in */
	uint32_t leaf_fixes;	 /* how much it added to profile.leaf_fixes (fp: 1 when its leaf's caller was put back) */
	const char *stop_reason; /* when stopped: profile_count_unwind_stop's reason (static, or NULL) */
	bool stopped;		 /* its user stack was cut or lost: profile_count_unwind_stop was called */
	bool truncated;		 /* and with this */
	bool off_cpu;		 /* an off-CPU sample (else on-CPU: events are never remembered) */
	int32_t user_error, kernel_error;
	uint64_t repeats, repeat_weight_ns; /* repeats found since it was added or spilled, and their weights' sum */
};

/* Counts answer's repeats (answer->repeats is not 0) wherever they belong: the profile, for convert. */
typedef void raw_sample_spill_fn(void *ctx, const struct raw_sample_answer *answer);

struct raw_sample_memo {
	struct raw_sample_entry **slots; /* open addressing; NULL is empty */
	struct arena entries;		 /* where the entries are: they are all freed together */
	size_t cap, count, bytes;
	size_t max_bytes; /* RAW_SAMPLE_MEMO_MAX_BYTES (a test may set less) */
	struct memo_window window; /* whether it is worth asking (see raw_sample_memo_wanted) */
	bool crowded; /* the last look-up met too many entries of its hash: its block is not remembered */
	bool dwarf; /* the recording's samples are dwarf ones (--call-graph dwarf): hashed by their last registers */
	raw_sample_spill_fn *spill;
	void *spill_ctx;
};

/* spill is called for every answer with repeats before the memo forgets it (starting over, or released). */
void raw_sample_memo_init(struct raw_sample_memo *m, raw_sample_spill_fn *spill, void *spill_ctx);
/*
 * Whether to look the next sample up at all: not for a while after a window of look-ups that found few (a real
 * program's samples, whose stack bytes hold changing values: memo_window.h).
 */
static inline bool raw_sample_memo_wanted(struct raw_sample_memo *m)
{
	return memo_window_wanted(&m->window);
}
/*
 * The answer remembered for this block of size bytes (at least the 64 of struct srec_sample) in this period of its
 * process's mappings (the caller counts a repeat in it), or NULL; *hash is the block's, for raw_sample_memo_add.
 */
struct raw_sample_answer *raw_sample_memo_find(struct raw_sample_memo *m, const void *body, uint32_t size,
					       uint64_t period, uint64_t *hash);
/*
 * Remembers the answer (without repeats) for the block that raw_sample_memo_find did not find last (hash: its),
 * unless too many blocks alike in their first bytes are remembered already.
 */
void raw_sample_memo_add(struct raw_sample_memo *m, uint64_t hash, const void *body, uint32_t size, uint64_t period,
			 const struct raw_sample_answer *answer);
/* Spills every answer's repeats, then frees the memo. */
void raw_sample_memo_release(struct raw_sample_memo *m);

#endif
