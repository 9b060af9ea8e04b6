/*
 * raw_sample_memo.c — sample blocks met again byte for byte (see raw_sample_memo.h).
 */
#include "raw_sample_memo.h"

#include <stdlib.h>
#include <string.h>

#include "../formats/recording.h"
#include "../util.h"

/* Where the key starts, after time_ns and weight; and the word whose low half is the CPU, left out too. */
#define KEY_FROM offsetof(struct srec_sample, pid)
#define CPU_WORD offsetof(struct srec_sample, cpu)
#define REST_FROM (CPU_WORD + sizeof(uint64_t))
_Static_assert(KEY_FROM == 16 && CPU_WORD == 24 && offsetof(struct srec_sample, kind) == 28,
	       "a sample's pid and tid are the key's first word, its cpu the low half of the second");

/*
 * Most of a real program's samples do not repeat byte for byte: a dwarf one's stack bytes hold changing values
 * (python3: 1,279 samples of 2 KiB, none alike), and so do the stack words an fp sample keeps for its leaf repair
 * (xz: 96,462 samples, 96,355 distinct). The memo is then left out for a while (memo_window.h, the caller's
 * raw_sample_memo_wanted): warm conversions of those recordings cost 0.7% (xz, fp), 0.2% (python3, fp) and 2.0%
 * (python3, dwarf: the first window's copies of 2 KiB) more than before the memo.
 */

struct raw_sample_entry {
	uint64_t hash, period;
	uint32_t size;
	struct raw_sample_answer answer;
	uint64_t head[2]; /* the block's bytes 16 to 32, the CPU zeroed */
	unsigned char rest[]; /* its bytes from 32 on */
};

static inline uint64_t load64(const unsigned char *p)
{
	uint64_t w;

	memcpy(&w, p, sizeof(w));
	return w;
}

/* The block's bytes 16 to 32 as the key has them: pid and tid, then kind and flags without the CPU below them. */
static inline void key_head(const unsigned char *p, uint64_t head[2])
{
	head[0] = load64(p + KEY_FROM);
	head[1] = load64(p + CPU_WORD) & ~(uint64_t)UINT32_MAX;
}

void raw_sample_memo_init(struct raw_sample_memo *m, raw_sample_spill_fn *spill, void *spill_ctx)
{
	memset(m, 0, sizeof(*m));
	m->max_bytes = RAW_SAMPLE_MEMO_MAX_BYTES;
	m->spill = spill;
	m->spill_ctx = spill_ctx;
	memo_window_init(&m->window, MEMO_WINDOW / 4); /* a quarter: a hit saves about what three misses cost */
}

/*
 * The most bytes after the header's first 32 that the hash reads: the errors, depths and name, then the first IPs
 * of an fp sample, or the first registers of a dwarf one, which tell most distinct samples apart; the compare reads
 * the rest all the same. Hashing all of an fp sample's 136 bytes (528 of a dwarf one's) cost a repeated sample 55
 * instructions more (dwarf 170). Samples alike in these bytes share a hash, though: CROWD bounds how many of them
 * the memo keeps.
 */
#define HASHED_BYTES 64

/*
 * The most entries of one hash (alike in their hashed bytes, unlike past them) that a look-up compares, and so that
 * the memo keeps. xz's fp samples, 96,462 of them, alike in their first IPs and distinct in the stack words they
 * keep for the leaf repair, shared hashes by the thousand: without a bound every look-up compared its way along
 * them, 73 billion instructions for a warm conversion (200 million before the memo).
 */
#define CROWD 8

/*
 * Where the hashed bytes start, for a memo of dwarf samples (dwarf set): HASHED_BYTES before a sample's stack bytes
 * (its last registers, rip among them), else after the header's first 32 bytes (an fp sample's first IPs). A dwarf
 * sample's first bytes there held one register of 17 (rax): the samples of a 4999 Hz cpu.c recording were compared
 * 1.5 times a look-up. Only where the recording says dwarf: asking every sample whether it is one cost fp samples
 * 7 instructions.
 */
static inline __attribute__((always_inline)) uint32_t hashed_from(const unsigned char *p, uint32_t size)
{
	uint16_t flags, user_depth, kernel_depth, reg_count;
	size_t regs_at, stack_at;

	memcpy(&flags, p + offsetof(struct srec_sample, flags), sizeof(flags));
	if (!(flags & SREC_SAMPLE_USER_REGS))
		return REST_FROM;
	memcpy(&user_depth, p + offsetof(struct srec_sample, user_depth), sizeof(user_depth));
	memcpy(&kernel_depth, p + offsetof(struct srec_sample, kernel_depth), sizeof(kernel_depth));
	regs_at = sizeof(struct srec_sample) + ((size_t)user_depth + kernel_depth) * sizeof(uint64_t);
	if (regs_at + sizeof(struct srec_user_regs) > size)
		return REST_FROM;
	memcpy(&reg_count, p + regs_at + offsetof(struct srec_user_regs, reg_count), sizeof(reg_count));
	stack_at = regs_at + sizeof(struct srec_user_regs) + (size_t)reg_count * sizeof(uint64_t);
	if (stack_at > size || stack_at < REST_FROM + HASHED_BYTES)
		return REST_FROM;
	return (uint32_t)(stack_at - HASHED_BYTES);
}

/*
 * Two chains of one exclusive or and one multiplication a word, as stack_memo.c's key_hash: the hash is most of a
 * repeated sample's cost. A weaker hash costs at most a longer probe: blocks are compared whole. The usual case,
 * all HASHED_BYTES there, without a loop.
 */
static inline __attribute__((always_inline)) uint64_t block_hash(const unsigned char *p, uint32_t size,
								 uint64_t period, bool dwarf)
{
	const uint64_t k = 0x9e3779b97f4a7c15ull, k2 = 0xc2b2ae3d27d4eb4full;
	const unsigned char *end;
	uint64_t head[2], a, b, h;
	uint32_t from = dwarf ? hashed_from(p, size) : REST_FROM, n = size - from;

	key_head(p, head);
	a = (size ^ head[0]) * k;
	b = (period ^ head[1]) * k2;
	p += from;
	if (n >= HASHED_BYTES) {
		_Static_assert(HASHED_BYTES == 64, "the usual case hashes eight words");
		a = (a ^ load64(p)) * k;
		b = (b ^ load64(p + 8)) * k2;
		a = (a ^ load64(p + 16)) * k;
		b = (b ^ load64(p + 24)) * k2;
		a = (a ^ load64(p + 32)) * k;
		b = (b ^ load64(p + 40)) * k2;
		a = (a ^ load64(p + 48)) * k;
		b = (b ^ load64(p + 56)) * k2;
	} else {
		for (end = p + n; end - p >= 8; p += 8)
			a = (a ^ load64(p)) * k;
		if (p < end) { /* a dwarf sample's stack bytes may end anywhere */
			uint64_t w = 0;

			memcpy(&w, p, (size_t)(end - p));
			b = (b ^ w) * k2;
		}
	}
	h = a ^ (b << 31 | b >> 33);
	h ^= h >> 32;
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 29);
}

static inline bool same(const struct raw_sample_entry *e, const unsigned char *p, uint32_t size, uint64_t period)
{
	uint64_t head[2];

	if (e->size != size || e->period != period)
		return false;
	key_head(p, head);
	return e->head[0] == head[0] && e->head[1] == head[1] && !memcmp(e->rest, p + REST_FROM, size - REST_FROM);
}

struct raw_sample_answer *raw_sample_memo_find(struct raw_sample_memo *m, const void *body, uint32_t size,
					       uint64_t period, uint64_t *hash)
{
	uint64_t h = m->dwarf ? block_hash(body, size, period, true) : block_hash(body, size, period, false);
	uint32_t alike = 0;

	*hash = h;
	for (size_t i = h & (m->cap - 1); m->cap && m->slots[i]; i = (i + 1) & (m->cap - 1)) {
		struct raw_sample_entry *e = m->slots[i];

		if (e->hash != h)
			continue;
		if (same(e, body, size, period)) {
			memo_window_count(&m->window, true);
			return &e->answer;
		}
		if (++alike == CROWD)
			break;
	}
	memo_window_count(&m->window, false);
	m->crowded = alike == CROWD;
	return NULL;
}

static void grow(struct raw_sample_memo *m)
{
	size_t cap = m->cap ? 2 * m->cap : 256;
	struct raw_sample_entry **slots = xcalloc(cap, sizeof(*slots));

	for (size_t i = 0; i < m->cap; i++) {
		struct raw_sample_entry *e = m->slots[i];
		size_t j;

		if (!e)
			continue;
		for (j = e->hash & (cap - 1); slots[j]; j = (j + 1) & (cap - 1))
			;
		slots[j] = e;
	}
	free(m->slots);
	m->slots = slots;
	m->cap = cap;
}

void raw_sample_memo_add(struct raw_sample_memo *m, uint64_t hash, const void *body, uint32_t size, uint64_t period,
			 const struct raw_sample_answer *answer)
{
	size_t bytes = sizeof(struct raw_sample_entry) + (size - REST_FROM) + 2 * sizeof(*m->slots);
	const unsigned char *p = body;
	struct raw_sample_entry *e;
	size_t i;

	if (m->crowded) /* CROWD entries share its hash already */
		return;
	if (m->bytes + bytes > m->max_bytes) {
		struct raw_sample_memo fresh;

		raw_sample_memo_init(&fresh, m->spill, m->spill_ctx); /* start over: memory stays bounded */
		fresh.max_bytes = m->max_bytes;
		fresh.window = m->window;
		fresh.dwarf = m->dwarf;
		raw_sample_memo_release(m);
		*m = fresh;
		if (bytes > m->max_bytes)
			return;
	}
	if (2 * (m->count + 1) > m->cap)
		grow(m);
	e = arena_alloc(&m->entries, sizeof(*e) + (size - REST_FROM));
	e->hash = hash;
	e->period = period;
	e->size = size;
	e->answer = *answer;
	e->answer.repeats = e->answer.repeat_weight_ns = 0;
	key_head(p, e->head);
	memcpy(e->rest, p + REST_FROM, size - REST_FROM);
	for (i = hash & (m->cap - 1); m->slots[i]; i = (i + 1) & (m->cap - 1))
		;
	m->slots[i] = e;
	m->count++;
	m->bytes += bytes;
}

void raw_sample_memo_release(struct raw_sample_memo *m)
{
	/* In slot order, which depends on the hashes only: what the spill function does with the repeats must not
	 * depend on their order (convert's adds them up). */
	for (size_t i = 0; i < m->cap; i++) {
		if (m->slots[i] && m->slots[i]->answer.repeats)
			m->spill(m->spill_ctx, &m->slots[i]->answer);
	}
	arena_release(&m->entries);
	free(m->slots);
	memset(m, 0, sizeof(*m));
}
