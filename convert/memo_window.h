/*
 * memo_window.h — whether a memo of samples is worth asking: its look-ups judged a window at a time.
 *
 * A memo answers a sample met before for the price of a look-up, but a sample it does not know costs it the look-up
 * and the copy it then keeps, in memory never touched before. Where samples seldom come again that is all it does:
 * an fp walk through code built without frame pointers takes a word of the caller's locals (a loop counter, a
 * pointer) for the next frame, often another at every sample (pingpong built so: 29,964 off-CPU samples, none
 * alike), and the stack memo, asked only when the sample memo had no answer, found 496 of node's 10,567 and none of
 * pingpong's. So the look-ups are judged MEMO_WINDOW at a time; a window that found fewer than the memo's least
 * leaves it out for the next MEMO_PAUSE samples, after which a window judges it again: one sample in 64 asked. The
 * least is about where a hit saves what the misses around it cost: a quarter for the raw sample memo (fp: some 600
 * instructions a hit against 200 a miss) and the stack memo; a sixteenth for convert's sample memo, whose hit saves
 * a whole walk, and which fills slowly: node's first windows found 25 to 48 of 256, later ones over 200, and a
 * quarter paused it at the start, for a third more instructions.
 */
#ifndef STACKREC_CONVERT_MEMO_WINDOW_H
#define STACKREC_CONVERT_MEMO_WINDOW_H

#include <stdbool.h>
#include <stdint.h>

#define MEMO_WINDOW 256		      /* look-ups judged together */
#define MEMO_PAUSE (63 * MEMO_WINDOW) /* samples left out after a window that found few */

struct memo_window {
	uint32_t least;		/* fewer answers than this in a window pause the memo */
	uint32_t lookups, hits; /* of the window under way */
	uint32_t paused;	/* samples still to leave out */
};

/* A memo asked from the next sample on, paused by a window with fewer than least answers of MEMO_WINDOW. */
static inline void memo_window_init(struct memo_window *w, uint32_t least)
{
	*w = (struct memo_window){ .least = least };
}

/* Whether to ask the memo about the next sample at all (when not, it neither looks up nor remembers it). */
static inline bool memo_window_wanted(struct memo_window *w)
{
	if (!w->paused)
		return true;
	w->paused--;
	return false;
}

/* Counts a look-up, answered or not; the window's last judges it. */
static inline void memo_window_count(struct memo_window *w, bool answered)
{
	w->hits += answered;
	if (++w->lookups < MEMO_WINDOW)
		return;
	if (w->hits < w->least)
		w->paused = MEMO_PAUSE;
	w->lookups = w->hits = 0;
}

#endif
