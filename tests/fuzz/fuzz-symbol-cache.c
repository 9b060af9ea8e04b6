/*
 * fuzz-symbol-cache.c — libFuzzer target for the symbol cache's reader (convert/symbol_cache.c): whatever
 * bytes an entry holds, symbol_cache_check() must neither crash nor read out of bounds, and every answer of an
 * entry it accepts must be safe to use (strings terminated inside the file, frames inside it).
 *
 * Built and run by `make fuzz-symbol-cache` (clang -fsanitize=fuzzer,address,undefined);
 * tests/t0006-fuzz-symbol-cache.sh replays the seeds in tests/fuzz/symbol-cache-corpus/ (entries written by
 * `stackrec symbolize` and `convert`: `make fuzz-symbol-cache-seeds`) and fuzzes briefly.
 *
 * Random bytes rarely match a CRC-32, so every input is tried twice: as it is, and with its header's file size
 * and CRC set right, so that mutations reach the checks of sections, addresses, frames and strings.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "convert/symbol_cache.h"

static volatile uint64_t sink; /* keeps the reads below from being optimized away */

/* A broken invariant is a bug in the reader, not in the input: crash so that libFuzzer keeps the input. */
#define ASSERT(cond)              \
	do {                      \
		if (!(cond))      \
			abort();  \
	} while (0)

static void use(const struct symbol_cache_view *v, uint64_t address)
{
	struct profile_frame *frames = NULL;
	uint32_t count = 0;

	if (!symbol_cache_view_find(v, address, &frames, &count))
		return;
	ASSERT(count <= SYMBOL_CACHE_MAX_FRAMES);
	ASSERT(!count == !frames);
	for (uint32_t i = 0; i < count; i++)
		sink += (frames[i].function ? strlen(frames[i].function) : 0) +
			(frames[i].system_name ? strlen(frames[i].system_name) : 0) +
			(frames[i].file ? strlen(frames[i].file) : 0) + frames[i].line;
	profile_frames_free(frames, count);
}

static void check(const void *data, size_t size)
{
	struct symbol_cache_view v;
	struct symbol_cache_key key = { .build_id = "0123456789abcdef", .rules = "addr2line", .identity = "x" };

	symbol_cache_check(data, size, &key, &v);
	if (symbol_cache_check(data, size, NULL, &v))
		return;
	for (size_t i = 0; i < v.address_count && i < 64; i++) {
		use(&v, v.addresses[i].address);
		use(&v, v.addresses[i].address + 1);
	}
	use(&v, 0);
	use(&v, UINT64_MAX);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* An entry is mapped, so page aligned: give the reader 8-byte aligned bytes too. */
	uint64_t *copy = malloc(size ? (size + 7) / 8 * 8 : 8);
	struct symbol_cache_header h;

	memcpy(copy, data, size);
	check(copy, size);
	if (size >= sizeof(h)) {
		size_t skip = offsetof(struct symbol_cache_header, flags);

		memcpy(&h, copy, sizeof(h));
		h.file_size = size;
		memcpy(copy, &h, sizeof(h));
		h.crc = (uint32_t)crc32(crc32(0, Z_NULL, 0), (const unsigned char *)copy + skip, (uInt)(size - skip));
		memcpy(copy, &h, sizeof(h));
		check(copy, size);
	}
	free(copy);
	return 0;
}
