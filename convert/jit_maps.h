/*
 * jit_maps.h — names for JIT-compiled code, from the perf maps (/tmp/perf-PID.map) the recorder embedded
 * as FILE blocks. A JIT (node --perf-basic-prof, the JVM with perf-map-agent, LuaJIT, ...) writes one
 * "START SIZE name" line (hex START and SIZE) per function it compiles; its code lives in anonymous
 * memory that no ELF file describes, so this map is the only way to name it.
 */
#ifndef STACKREC_CONVERT_JIT_MAPS_H
#define STACKREC_CONVERT_JIT_MAPS_H

#include <stddef.h>
#include <stdint.h>

struct jit_maps {
	struct jit_process *processes; /* sorted by pid after jit_maps_finish() */
	size_t count, cap;
	uint64_t bad_lines; /* lines of the maps that were not "START SIZE name" (one warning per map) */
	uint64_t text_bytes;	/* the maps' text kept, of all processes: text_max at most */
	uint64_t text_max;	/* JIT_MAPS_TEXT_MAX (jit_maps_init; a test makes it smaller) */
	uint64_t text_dropped;	/* bytes beyond that, not kept (one warning) */
	uint64_t symbols_left;	/* JIT_MAPS_SYMBOLS_MAX, less the symbols parsed so far */
	uint64_t symbols_dropped; /* lines beyond that, not parsed (one warning) */
};

/*
 * The text of all perf maps kept, at most: the recorder embeds up to 1 GiB of each process's map, and a
 * recording (another user's processes, or a forged file) can hold any number of them.
 */
#define JIT_MAPS_TEXT_MAX (1024ull << 20)
/*
 * The symbols of all perf maps kept, at most (32 bytes each): a line of six bytes ("1 1 x\n") is a symbol, so
 * the text's bound alone let a forged recording's maps take 9 GB. node's maps hold some 100,000 symbols.
 */
#define JIT_MAPS_SYMBOLS_MAX (8ull << 20)

void jit_maps_init(struct jit_maps *maps);
/* Adds a piece (at data_offset) of process pid's perf map text. */
void jit_maps_add_text(struct jit_maps *maps, uint32_t pid, uint64_t data_offset, const char *text, size_t size);
/* Parses and sorts what was added; a malformed line (a NUL byte in it, no START or SIZE) is skipped and
 * counted in bad_lines. */
void jit_maps_finish(struct jit_maps *maps);
/* True when process pid had a perf map at all. */
int jit_maps_has(const struct jit_maps *maps, uint32_t pid);
/* The JIT function of process pid covering address, or NULL. Later lines of a map win over earlier ones. */
const char *jit_maps_lookup(const struct jit_maps *maps, uint32_t pid, uint64_t address);
void jit_maps_release(struct jit_maps *maps);

#endif
