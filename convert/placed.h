/*
 * placed.h — a frame's place: where it was met, the key of the small memos that answer a frame met again.
 *
 * Within one period of a process's mappings' history (process_maps_period) every address of the process
 * resolves the same, so (process, period, pc, return address or not, how the frame was found) decides the
 * frame's module and file offset, and what follows from them: its CFI rule (the unwinder's memo) and its
 * profile location (convert's). Each memo is a direct-mapped table of entries that begin with a struct
 * placed_key: a frame met again costs one hash and one compare, not a search of the process's mappings, of the
 * rules or of the interned locations. An entry another frame took over is found again the long way: the
 * answers are the same.
 */
#ifndef STACKREC_CONVERT_PLACED_H
#define STACKREC_CONVERT_PLACED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../util.h"
#include "unwind.h"

struct placed_key {
	uint64_t pc, period;
	uint32_t pid;
	bool used; /* false: an empty entry */
	bool is_return_address;
	uint8_t method; /* enum profile_unwind */
};

/* Frame f (pc, is_return_address and method set) of process pid, met in period of its mappings' history. */
static inline struct placed_key placed_key(uint32_t pid, uint64_t period, const struct unwind_frame *f)
{
	return (struct placed_key){ .pc = f->pc, .period = period, .pid = pid, .used = true,
				    .is_return_address = f->is_return_address, .method = (uint8_t)f->method };
}

/*
 * The entry for key in table, an array of slots entries of entry_size bytes that each begin with a struct
 * placed_key; *found says whether it holds key (else the caller fills it, key first).
 */
static inline void *placed_entry(void *table, size_t entry_size, size_t slots, const struct placed_key *key,
				 bool *found)
{
	size_t i = address_hash(key->pc ^ (uint64_t)key->pid << 32 ^ key->period << 48 ^ key->is_return_address ^
				(uint64_t)key->method << 1) %
		   slots;
	const struct placed_key *e = (const struct placed_key *)((char *)table + i * entry_size);

	*found = e->used && e->pc == key->pc && e->pid == key->pid && e->period == key->period &&
		 e->is_return_address == key->is_return_address && e->method == key->method;
	return (char *)table + i * entry_size;
}

#endif
