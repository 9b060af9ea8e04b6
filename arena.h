/*
 * arena.h — a bump allocator (implemented in util.c). Apart from util.h so that headers of data structures that
 * hold an arena (profile.h, the memos') need not bring in all of util.h with them.
 */
#ifndef STACKREC_ARENA_H
#define STACKREC_ARENA_H

#include <stddef.h>

/*
 * A bump allocator for many small blocks that live and die together (a memo's entries, a profile's stacks): they
 * are cut one after another from chunks of 64 KiB (a larger block gets a chunk of its own) and freed all at once,
 * with no malloc header, call or free each. A warm fp conversion of 95,000 xz samples made 63,000 such blocks,
 * and malloc and free cost it as much as it spent in the memos themselves. Zero-initialized is empty. Blocks are
 * aligned to 8 bytes.
 */
struct arena {
	struct arena_chunk *chunk; /* the newest, which blocks are cut from; each links to the one before */
	size_t used, size;	   /* bytes of it cut, and its size */
};

void *arena_alloc_slow(struct arena *a, size_t size);
/* size bytes, uninitialized, until arena_release. Inline where the current chunk has room. */
static inline void *arena_alloc(struct arena *a, size_t size)
{
	size = (size + 7) & ~(size_t)7;
	if (a->chunk && a->size - a->used >= size) {
		void *block = (char *)a->chunk + a->used;

		a->used += size;
		return block;
	}
	return arena_alloc_slow(a, size);
}
/* Frees every block, and leaves a empty. */
void arena_release(struct arena *a);

#endif
