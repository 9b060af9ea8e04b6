/*
 * fuzz-profile-cache.c — libFuzzer target for the profile cache's reader (convert/profile_cache.c): whatever bytes
 * an entry holds, profile_cache_parse() must neither crash, leak nor read out of bounds, and a profile it accepts
 * must keep the profile's invariants (every index inside its array, every frame named), be finished as convert
 * finishes it, and be written back to the same bytes.
 *
 * Built by `make fuzz-profile-cache-build`; tests/t0005-fuzz-parsers.sh replays the seeds in
 * tests/fuzz/profile-cache-corpus/ (entries convert wrote for fixtures/) and fuzzes briefly.
 *
 * Random bytes rarely match a CRC-32, so every input is tried twice: as it is, and with its header's file size
 * and CRC set right, so that mutations reach the checks of the body.
 */
#include <libdeflate.h>
#include <stddef.h>

#include "convert/profile_cache.h"
#include "fuzz-input.h"

static void check_profile(const struct profile *p, const struct profile_cache_walk *modules)
{
	for (size_t i = 0; i < modules->count; i++)
		ASSERT(modules->list[i].module < p->module_count && modules->list[i].identity);
	ASSERT(!modules->vdso_build_id || (*modules->vdso_build_id && strlen(modules->vdso_build_id) <= 40 &&
					   strspn(modules->vdso_build_id, "0123456789abcdef") == strlen(modules->vdso_build_id)));
	ASSERT(!modules->vdso_size == !modules->vdso_image);
	for (size_t i = 0; i < p->module_count; i++)
		ASSERT(p->modules[i].path && (!p->modules[i].build_id ||
					      strspn(p->modules[i].build_id, "0123456789abcdef") == strlen(p->modules[i].build_id)));
	for (size_t i = 0; i < p->location_count; i++) {
		const struct profile_location *l = &p->locations[i];

		ASSERT(l->module == PROFILE_NO_MODULE || l->module < p->module_count);
		/* named (a marker, JIT code, a kernel address), or a kernel address kallsyms does not name, and why */
		if (l->unnamed_reason)
			ASSERT(l->kind == PROFILE_LOCATION_KERNEL && l->frames == PROFILE_UNNAMED_FRAMES && l->frame_count == 1);
		else
			ASSERT(l->frame_count <= 1 &&
			       (!l->frame_count || (l->frames[0].function && l->frames[0].system_name)));
	}
	for (size_t i = 0; i < p->stack_count; i++) {
		const struct profile_stack *s = &p->stacks[i];

		ASSERT(s->kind <= PROFILE_SAMPLE_EVENT && !s->comm[15]);
		for (uint32_t d = 0; d < s->depth; d++) {
			ASSERT(s->locations[d] < p->location_count);
			ASSERT(!s->hits || s->hits[d] == PROFILE_NO_HIT || s->hits[d] < p->hit_count);
		}
	}
	for (size_t i = 0; i < p->timeline_count; i++)
		ASSERT(p->timeline[i].stack < p->stack_count);
	for (size_t i = 0; i < p->event_count; i++)
		ASSERT(p->events[i].stack < p->stack_count);
	for (size_t i = 0; i < p->hit_count; i++)
		ASSERT(p->hits[i].probe < p->probe_count);
	for (size_t i = 0; i < p->probe_count; i++)
		ASSERT(p->probes[i].arg_count <= PROFILE_PROBE_ARGS);
	ASSERT(p->unwind_stop_count <= 8);
}

static void check(const void *data, size_t size)
{
	struct profile p;
	struct profile_cache_walk modules;
	void *again;
	size_t again_size;

	if (profile_cache_parse(data, size, NULL, &p, &modules))
		return;
	check_profile(&p, &modules);
	/* What an accepted entry says is what it would be written as: parse and serialize agree field by field. */
	{
		uint32_t len;

		memcpy(&len, (const char *)data + sizeof(struct profile_cache_header), sizeof(len));
		char *key = strndup((const char *)data + sizeof(struct profile_cache_header) + sizeof(len), len);

		again = profile_cache_serialize(key, &p, &modules, &again_size);
		ASSERT(again_size == size && !memcmp(again, data, size));
		free(again);
		free(key);
	}
	profile_index_modules(&p);
	profile_finish(&p);
	profile_release(&p);
	profile_cache_walk_release(&modules);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char *copy = malloc(size ? size : 1);
	struct profile_cache_header h;

	memcpy(copy, data, size);
	check(copy, size);
	if (size >= sizeof(h)) {
		memcpy(&h, copy, sizeof(h));
		h.file_size = size;
		h.crc = libdeflate_crc32(0, copy + sizeof(h), size - sizeof(h));
		memcpy(copy, &h, sizeof(h));
		check(copy, size);
	}
	free(copy);
	return 0;
}
