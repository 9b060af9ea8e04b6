/*
 * stack_memo.c — raw fp stacks to their user locations (see stack_memo.h).
 */
#include "stack_memo.h"

#include <stdlib.h>
#include <string.h>

#include "../util.h"

struct stack_memo_entry {
	uint64_t hash;
	uint32_t key_words, count;
	uint64_t words[]; /* key_words words of key, then count locations (uint32_t, packed) */
};

void stack_memo_init(struct stack_memo *m)
{
	memset(m, 0, sizeof(*m));
	m->max_bytes = STACK_MEMO_MAX_BYTES;
}

/*
 * A key's hash: its length and its words but the first m->unhashed, in two chains, the even ones in one and the
 * odd ones in the other, each word one exclusive or and one multiplication, then the chains mixed together and
 * down to the low bits the table uses. Keys are whole words, and util.h's hash_words mixes each word down to the
 * low bits as it goes, which took 8 instructions a word: the look-up of a warm fp conversion's sample memo (a
 * dozen words a sample) hashed for as long as it read and decompressed. Four words a turn of the loop, which
 * costs as much as two of them. A weaker hash costs at most a longer probe: keys are compared whole. Inlined,
 * as slot_of: a look-up is one function, which saves registers once.
 */
static inline __attribute__((always_inline)) uint64_t key_hash(const struct stack_memo *m, const uint64_t *key,
							       uint32_t key_words)
{
	const uint64_t k = 0x9e3779b97f4a7c15ull, k2 = 0xc2b2ae3d27d4eb4full;
	const uint64_t *end = key + key_words;
	uint64_t a = key_words, b = 0, h;

	for (key += m->unhashed; end - key >= 4; key += 4) {
		a = (a ^ key[0]) * k;
		b = (b ^ key[1]) * k2;
		a = (a ^ key[2]) * k;
		b = (b ^ key[3]) * k2;
	}
	if (end - key >= 2) {
		a = (a ^ key[0]) * k;
		b = (b ^ key[1]) * k2;
		key += 2;
	}
	if (key < end)
		a = (a ^ key[0]) * k;
	h = a ^ (b << 31 | b >> 33);
	h ^= h >> 32;
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 29);
}

static inline __attribute__((always_inline)) size_t slot_of(const struct stack_memo *m, uint64_t hash,
						     const uint64_t *key, uint32_t key_words)
{
	size_t i;

	for (i = hash & (m->cap - 1); m->slots[i]; i = (i + 1) & (m->cap - 1)) {
		const struct stack_memo_entry *e = m->slots[i];

		if (e->hash == hash && e->key_words == key_words && !memcmp(e->words, key, key_words * sizeof(*key)))
			break;
	}
	return i;
}

uint32_t *stack_memo_find(const struct stack_memo *m, const uint64_t *key, uint32_t key_words, uint32_t *count)
{
	uint64_t hash;

	return stack_memo_find_hashed(m, key, key_words, count, &hash);
}

uint32_t *stack_memo_find_hashed(const struct stack_memo *m, const uint64_t *key, uint32_t key_words, uint32_t *count,
				 uint64_t *hash)
{
	struct stack_memo_entry *e;

	*hash = key_hash(m, key, key_words);
	if (!m->count)
		return NULL;
	e = m->slots[slot_of(m, *hash, key, key_words)];
	if (!e)
		return NULL;
	*count = e->count;
	return (uint32_t *)(e->words + e->key_words);
}

static void grow(struct stack_memo *m)
{
	struct stack_memo grown = { .cap = m->cap ? 2 * m->cap : 1024 };

	grown.slots = xcalloc(grown.cap, sizeof(*grown.slots));
	for (size_t i = 0; i < m->cap; i++) {
		struct stack_memo_entry *e = m->slots[i];
		size_t j;

		if (!e)
			continue;
		for (j = e->hash & (grown.cap - 1); grown.slots[j]; j = (j + 1) & (grown.cap - 1))
			;
		grown.slots[j] = e;
	}
	free(m->slots);
	m->slots = grown.slots;
	m->cap = grown.cap;
}

void stack_memo_add(struct stack_memo *m, const uint64_t *key, uint32_t key_words, const uint32_t *locations,
		    uint32_t count)
{
	stack_memo_add_hashed(m, key_hash(m, key, key_words), key, key_words, locations, count);
}

void stack_memo_add_hashed(struct stack_memo *m, uint64_t hash, const uint64_t *key, uint32_t key_words,
			   const uint32_t *locations, uint32_t count)
{
	uint32_t unhashed = m->unhashed;
	size_t size = sizeof(struct stack_memo_entry) + key_words * sizeof(*key) + count * sizeof(*locations);
	struct stack_memo_entry *e;

	if (m->bytes + size + 2 * sizeof(*m->slots) > m->max_bytes) {
		size_t max = m->max_bytes;

		stack_memo_release(m); /* start over: memory stays bounded whatever the recording */
		m->max_bytes = max;
		m->unhashed = unhashed;
	}
	if (2 * (m->count + 1) > m->cap)
		grow(m);
	e = arena_alloc(&m->entries, size);
	e->hash = hash;
	e->key_words = key_words;
	e->count = count;
	memcpy(e->words, key, key_words * sizeof(*key));
	memcpy(e->words + key_words, locations, count * sizeof(*locations));
	m->slots[slot_of(m, hash, key, key_words)] = e;
	m->count++;
	m->bytes += size + 2 * sizeof(*m->slots);
}

void stack_memo_release(struct stack_memo *m)
{
	arena_release(&m->entries);
	free(m->slots);
	memset(m, 0, sizeof(*m));
}
