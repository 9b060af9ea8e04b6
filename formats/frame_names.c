/*
 * frame_names.c — shared naming rules of the JSON formats (see frame_names.h).
 */
#include "frame_names.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../util.h"

char *frame_display_name(const struct profile *profile, const struct profile_location *loc, uint32_t frame,
			 const struct output_options *options)
{
	const struct profile_frame *f = &loc->frames[frame];
	const char *suffix = "";
	char *base, *name;

	if (loc->kind == PROFILE_LOCATION_KERNEL)
		suffix = "_[k]";
	else if (options && options->annotate && loc->kind == PROFILE_LOCATION_JIT)
		suffix = "_[j]";
	else if (options && options->annotate && f->inlined)
		suffix = "_[i]";
	if (f->function && *f->function)
		return xasprintf("%s%s", f->function, suffix);
	if (options && options->addrs) {
		char *module = loc->module < profile->module_count ?
				       profile_module_short_name(&profile->modules[loc->module]) :
				       xstrdup("unknown");

		name = xasprintf("[%s <0x%" PRIx64 ">]%s", module, loc->file_offset, suffix);
		free(module);
		return name;
	}
	base = profile_location_fallback_name(profile, loc);
	name = xasprintf("%s%s", base, suffix);
	free(base);
	return name;
}

const char *shown_comm(const char *comm, char out[17])
{
	size_t n = strnlen(comm, 16);

	if (!n)
		return "[unknown]";
	memcpy(out, comm, n);
	out[n] = '\0';
	return out;
}

const char *process_comm(const struct profile *profile, size_t stack_index)
{
	const struct profile_stack *stacks = profile->stacks;
	uint32_t pid = stacks[stack_index].pid;
	const char *name = profile_process_name(profile, pid, stacks[stack_index].first_ns);
	size_t i = stack_index;

	if (name && name[0])
		return name;

	while (i > 0 && stacks[i - 1].pid == pid)
		i--;
	for (; i < profile->stack_count && stacks[i].pid == pid; i++)
		if (stacks[i].tid == pid)
			return stacks[i].comm;
	return stacks[stack_index].comm;
}

static uint64_t key_hash(const void *key, size_t len)
{
	const unsigned char *p = key;
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull; /* FNV-1a */
	}
	return h;
}

void key_index_init(struct key_index *index)
{
	memset(index, 0, sizeof(*index));
}

void key_index_release(struct key_index *index)
{
	for (size_t i = 0; i < index->count; i++)
		free(index->keys[i]);
	free(index->keys);
	free(index->lengths);
	free(index->slots);
	memset(index, 0, sizeof(*index));
}

static void key_index_rehash(struct key_index *index)
{
	size_t n = index->slot_count ? index->slot_count * 2 : 1024;

	free(index->slots);
	index->slots = xcalloc(n, sizeof(*index->slots));
	index->slot_count = n;
	for (size_t i = 0; i < index->count; i++) {
		size_t slot = key_hash(index->keys[i], index->lengths[i]) & (n - 1);

		while (index->slots[slot])
			slot = (slot + 1) & (n - 1);
		index->slots[slot] = i + 1;
	}
}

size_t key_index_get(struct key_index *index, const void *key, size_t len, bool *added)
{
	size_t slot, capacity;

	if ((index->count + 1) * 2 > index->slot_count)
		key_index_rehash(index);
	slot = key_hash(key, len) & (index->slot_count - 1);
	while (index->slots[slot]) {
		size_t i = index->slots[slot] - 1;

		if (index->lengths[i] == len && !memcmp(index->keys[i], key, len)) {
			*added = false;
			return i;
		}
		slot = (slot + 1) & (index->slot_count - 1);
	}
	capacity = index->capacity;
	GROW(index->keys, index->capacity, index->count + 1);
	GROW(index->lengths, capacity, index->count + 1);
	index->keys[index->count] = xmalloc(len + 1);
	memcpy(index->keys[index->count], key, len);
	index->keys[index->count][len] = '\0';
	index->lengths[index->count] = len;
	index->slots[slot] = index->count + 1;
	*added = true;
	return index->count++;
}
