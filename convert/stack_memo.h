/*
 * stack_memo.h — the user locations of a frame-pointer stack, remembered by its raw form.
 *
 * In a fp-mode recording most samples repeat a stack seen before, and two samples of one process with the same
 * instruction pointers (and the same repaired leaf) in the same span of its mappings' history
 * (process_maps_period) resolve to the same locations: a repeated stack costs one hash look-up, not a mapping
 * look-up, a perf-map look-up and an interning per frame. Memory follows distinct raw stacks, and is bounded:
 * past STACK_MEMO_MAX_BYTES the memo starts over (answers are found again, the same).
 */
#ifndef STACKREC_CONVERT_STACK_MEMO_H
#define STACKREC_CONVERT_STACK_MEMO_H

#include <stddef.h>
#include <stdint.h>

#include "../arena.h"

#define STACK_MEMO_MAX_BYTES (64u << 20)

struct stack_memo {
	struct stack_memo_entry **slots; /* open addressing; NULL is empty */
	struct arena entries;		 /* where the entries are: they are all freed together */
	size_t cap, count, bytes;
	size_t max_bytes; /* STACK_MEMO_MAX_BYTES (a test may set less) */
	/*
	 * How many leading words of every key (each has at least as many) the hash leaves out, 0 unless set after
	 * stack_memo_init: words that seldom tell keys apart, compared all the same, which a look-up need not hash.
	 */
	uint32_t unhashed;
};

void stack_memo_init(struct stack_memo *m);
/*
 * The locations remembered for the key of key_words words (*count of them), or NULL. Valid until the next
 * stack_memo_add; the caller may change them in place (convert's sample memo keeps counts there).
 */
uint32_t *stack_memo_find(const struct stack_memo *m, const uint64_t *key, uint32_t key_words, uint32_t *count);
/* stack_memo_find, which also gives the key's hash, for stack_memo_add_hashed when the key is not there. */
uint32_t *stack_memo_find_hashed(const struct stack_memo *m, const uint64_t *key, uint32_t key_words, uint32_t *count,
				 uint64_t *hash);
/* Remembers count locations for the key (not already there). */
void stack_memo_add(struct stack_memo *m, const uint64_t *key, uint32_t key_words, const uint32_t *locations,
		    uint32_t count);
/* stack_memo_add of a key whose hash stack_memo_find_hashed gave: a miss then costs one hash, not two. */
void stack_memo_add_hashed(struct stack_memo *m, uint64_t hash, const uint64_t *key, uint32_t key_words,
			   const uint32_t *locations, uint32_t count);
void stack_memo_release(struct stack_memo *m);

#endif
