/* u64_set.c — a set of 64-bit values, see u64_set.h. */
#include "u64_set.h"

#include <stdlib.h>

#include "../util.h"

static size_t slot_of(uint64_t v, size_t cap)
{
	v ^= v >> 33;
	v *= 0xff51afd7ed558ccdull;
	v ^= v >> 33;
	return (size_t)v & (cap - 1);
}

static void insert(uint64_t *slots, size_t cap, uint64_t v)
{
	size_t i = slot_of(v, cap);

	while (slots[i] && slots[i] != v)
		i = (i + 1) & (cap - 1);
	slots[i] = v;
}

bool u64_set_has(const struct u64_set *set, uint64_t v)
{
	if (v == 0)
		return set->has_zero;
	if (!set->cap)
		return false;
	for (size_t i = slot_of(v, set->cap); set->slots[i]; i = (i + 1) & (set->cap - 1))
		if (set->slots[i] == v)
			return true;
	return false;
}

bool u64_set_add(struct u64_set *set, uint64_t v)
{
	size_t i;

	if (v == 0) {
		bool added = !set->has_zero;

		set->has_zero = true;
		return added;
	}
	if ((set->count + 1) * 2 > set->cap) {
		size_t cap = set->cap ? set->cap * 2 : 64;
		uint64_t *slots = xcalloc(cap, sizeof(*slots));

		for (size_t j = 0; j < set->cap; j++)
			if (set->slots[j])
				insert(slots, cap, set->slots[j]);
		free(set->slots);
		set->slots = slots;
		set->cap = cap;
	}
	for (i = slot_of(v, set->cap); set->slots[i]; i = (i + 1) & (set->cap - 1))
		if (set->slots[i] == v)
			return false;
	set->slots[i] = v;
	set->count++;
	return true;
}

void u64_set_for_each(const struct u64_set *set, void (*fn)(void *ctx, uint64_t v), void *ctx)
{
	if (set->has_zero)
		fn(ctx, 0);
	for (size_t i = 0; i < set->cap; i++)
		if (set->slots[i])
			fn(ctx, set->slots[i]);
}

void u64_set_release(struct u64_set *set)
{
	free(set->slots);
	set->slots = NULL;
	set->cap = set->count = 0;
	set->has_zero = false;
}
