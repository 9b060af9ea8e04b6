/*
 * fuzz-jit-maps.c — libFuzzer target for the perf-map parser (convert/jit_maps.c): whatever text a recording
 * embeds as a JIT's /tmp/perf-PID.map, in however many FILE blocks at whatever offsets, parsing it must
 * neither crash nor hang, and every name a lookup returns must be a string of the map.
 *
 * Input: the text, cut into up to four pieces at the offsets its first bytes say (pieces of one map come in
 * order in a recording, but a hostile one may repeat, skip or go back), for one or two processes; then the
 * addresses looked up are every START of the text and a few taken from its last bytes.
 * Built by `make fuzz-jit-maps-build`; tests/t0005-fuzz-parsers.sh replays tests/fuzz/jit-maps-corpus/.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "convert/jit_maps.h"
#include "tests/fuzz/fuzz-input.h"

static volatile uint64_t sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jit_maps maps;
	const char *text;
	size_t len, pos = 0;
	uint8_t pieces, mode;

	if (size < 2)
		return 0;
	pieces = (uint8_t)(data[0] % 4 + 1);
	mode = data[1];
	text = (const char *)data + 2;
	len = size - 2;
	jit_maps_init(&maps);
	for (uint8_t i = 0; i < pieces; i++) {
		size_t n = i + 1 == pieces ? len - pos : (len - pos) / (size_t)(pieces - i);
		uint64_t offset = pos;

		if (mode & (1u << i))
			offset = (uint64_t)(mode >> 4) * 4096 * i; /* out of place: repeated, skipped or back */
		jit_maps_add_text(&maps, (mode & 0x80) && i % 2 ? 43 : 42, offset, text + pos, n);
		pos += n;
	}
	jit_maps_finish(&maps);
	sink += jit_maps_has(&maps, 42) + jit_maps_has(&maps, 7);
	/* The STARTs of the first lines, and one byte below each: a symbol's first byte and its neighbour's last. */
	{
		char *copy = malloc(len + 1);
		unsigned lines = 0;

		ASSERT(copy);
		memcpy(copy, text, len);
		copy[len] = '\0';
		for (size_t i = 0; i < len && lines < 32; i++) {
			if (i == 0 || copy[i - 1] == '\n') {
				uint64_t address = strtoull(copy + i, NULL, 16);
				const char *name = jit_maps_lookup(&maps, 42, address);

				if (name)
					sink += strlen(name);
				name = jit_maps_lookup(&maps, 42, address - 1);
				if (name)
					sink += strlen(name);
				lines++;
			}
		}
		free(copy);
	}
	for (size_t i = 0; i + 8 <= len && i < 64; i += 8) {
		uint64_t address;
		const char *name;

		memcpy(&address, text + len - 8 - i, 8);
		for (int d = -1; d <= 1; d++) {
			name = jit_maps_lookup(&maps, 42, address + (uint64_t)d);
			if (name)
				sink += strlen(name);
			name = jit_maps_lookup(&maps, 43, address);
			if (name)
				sink += strlen(name);
		}
	}
	jit_maps_release(&maps);
	return 0;
}
