/*
 * u64_set.h — a set of 64-bit values (open addressing, linear probing). The recorder keeps the processes
 * that had samples and the distinct kernel addresses it saw: sets that grow with distinct values, never
 * with samples.
 */
#ifndef STACKREC_RECORD_U64_SET_H
#define STACKREC_RECORD_U64_SET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct u64_set {
	uint64_t *slots; /* 0 marks an empty slot; the value 0 is kept in has_zero */
	size_t cap, count;
	bool has_zero;
};

/* Adds v; returns true when it was not there yet. */
bool u64_set_add(struct u64_set *set, uint64_t v);
/* Whether v is in the set. */
bool u64_set_has(const struct u64_set *set, uint64_t v);
/* Calls fn for every value, in no particular order. */
void u64_set_for_each(const struct u64_set *set, void (*fn)(void *ctx, uint64_t v), void *ctx);
void u64_set_release(struct u64_set *set);

#endif
