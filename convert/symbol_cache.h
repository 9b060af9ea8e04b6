/*
 * symbol_cache.h — the symbol cache: each binary's answers, kept between runs so that a later run maps them
 * and reads no DWARF for addresses named before. The file format is specified here and in
 * docs/symbol-cache.md.
 *
 * An entry is CACHE/symbols/BUILDID.RULES, where CACHE is the build-ID cache's directory (cache_dir.h) and RULES
 * names the revision of the answers and the naming rules they follow ("profile" for convert, "addr2line" for
 * symbolize, with "-C" when names are demangled: "3-addr2line-C"): the same address is named differently by each.
 * It holds, for every address asked so far, the chain of frames symbolizer_name_address (convert) or symbolize's
 * covered() gave, sorted by address. It is keyed by build ID and by the identity of the files it came from (the
 * module's file and its separate debug file: path, size, modification time), so an entry made from a symbol table
 * alone is replaced once a debug file turns up. Answers for new addresses are added when the module is closed: the
 * file is rewritten, whole, as a temporary file renamed over the old one, so concurrent runs each leave a complete
 * entry. The directory is trimmed to a size cap (STACKREC_SYMBOL_CACHE_MB, default 256), least recently used first.
 *
 * Why answers per address and not the whole module's ranges: building a module's full table means walking
 * every DIE and line table of its debug file, which on libc costs more than symbolizing 20,000 addresses
 * cold; profiles and scripts ask the same addresses again, and a new address costs one DWARF lookup.
 *
 * The file is read as hostile input (another run may have been killed halfway, a disk may be full): every
 * offset, count and string is checked when it is mapped, and a file that fails any check is not used (the
 * answers come from DWARF, and the entry is rewritten).
 *
 * Format, version 1, host byte order (the magic tells another byte order apart), all offsets from the start:
 *   header (struct symbol_cache_header, 96 bytes): magic "STKSYMC\n", version, header size, file size, CRC-32
 *     of every byte after the crc field, flags, and the string offsets of the build ID, rules, identity
 *     and the reason the module has no DWARF; then the three sections' offsets and counts;
 *   addresses: struct symbol_cache_address[count], strictly increasing by address, each naming a run of
 *     frames (count 0: nothing names the address);
 *   frames: struct symbol_cache_frame[count], innermost first within a run; addresses with the same answer
 *     share one run (the reader needs nothing of it: any run inside the section is valid);
 *   strings: NUL-terminated, referred to by offset into the section; SYMBOL_CACHE_NONE for none.
 * Bump SYMBOL_CACHE_VERSION when any of this changes: older entries are then rebuilt, not misread.
 */
#ifndef STACKREC_CONVERT_SYMBOL_CACHE_H
#define STACKREC_CONVERT_SYMBOL_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile.h"

#define SYMBOL_CACHE_MAGIC "STKSYMC\n"
#define SYMBOL_CACHE_VERSION 1
/* Bump when a fix changes the answer for some address: it leads RULES, so older answers are not used. */
#define SYMBOL_ANSWERS_REVISION 7
#define SYMBOL_CACHE_NONE UINT32_MAX	    /* no string */
#define SYMBOL_CACHE_MAX_FRAMES 4096	    /* frames of one address: deeper inline chains are not kept */
#define SYMBOL_CACHE_FLAG_HAS_SYMTAB 1u	    /* the module has a symbol table or DWARF */

struct symbol_cache_header {
	char magic[8];
	uint32_t version;
	uint32_t header_size; /* sizeof(struct symbol_cache_header) */
	uint64_t file_size;
	uint32_t crc;	      /* CRC-32 (zlib) of the bytes from flags to the end of the file */
	uint32_t flags;
	uint32_t build_id, rules, identity, debug_reason; /* string offsets */
	uint64_t addresses_offset, address_count;
	uint64_t frames_offset, frame_count;
	uint64_t strings_offset, strings_size;
};

struct symbol_cache_address {
	uint64_t address;
	uint32_t first_frame, frame_count;
};

struct symbol_cache_frame {
	uint32_t function, system_name, file; /* string offsets */
	uint32_t line, column, discriminator, start_line;
	uint32_t flags; /* 1: inlined */
};

/* What an entry must match to be used. */
struct symbol_cache_key {
	const char *build_id; /* lowercase hex; a Go build ID: "go-" and hex (module_file_go_build_id) */
	const char *rules;
	const char *identity;
};

/* A checked view of an entry's bytes. */
struct symbol_cache_view {
	const struct symbol_cache_header *header;
	const struct symbol_cache_address *addresses;
	const struct symbol_cache_frame *frames;
	const char *strings;
	size_t address_count, frame_count, strings_size;
	/* NULL for an entry. The answers added in a run (symbol_cache.c) keep each distinct frame once: an
	 * answer's run is then of indexes into frames, its first at frame_ids[first_frame]. */
	const uint32_t *frame_ids;
};

/*
 * Checks size bytes at data (aligned to 8) as an entry for key (every check of the format above; with key
 * NULL, the format only). Returns NULL with view filled, or a static string saying what is wrong.
 */
const char *symbol_cache_check(const void *data, size_t size, const struct symbol_cache_key *key,
			       struct symbol_cache_view *view);

/* The answer for address in a checked view: true with *frames allocated (NULL when *count is 0). */
bool symbol_cache_view_find(const struct symbol_cache_view *view, uint64_t address, struct profile_frame **frames,
			    uint32_t *count);

struct symbol_cache_pool;
struct symbol_cache_stable_frame;

/* Distinct runs of frames (share_run in symbol_cache.c): open addressing on a run's hash, each slot the
 * index + 1 of the answer that owns the run (0: empty), its hash in hashes. */
struct symbol_cache_runs {
	uint32_t *slots, *hashes;
	size_t slot_count, count;
};

struct symbol_cache {
	char *dir;			 /* CACHE/symbols, NULL when the cache is not used */
	char *name;			 /* BUILDID.RULES */
	struct symbol_cache_key key;	 /* owned copies */
	const void *map;		 /* the entry, mapped, or NULL */
	size_t map_size;
	struct symbol_cache_view view;	 /* of map, when valid */
	bool valid;
	uint32_t *bucket_first;		 /* the view's addresses by bucket (index_build in symbol_cache.c) */
	size_t bucket_count;
	unsigned int bucket_shift;
	struct symbol_cache_address *pending; /* answers to add: their runs of frames in pending_frames */
	size_t pending_count, pending_capacity;
	uint32_t *pending_frames; /* each frame as its index in frames */
	size_t pending_frame_count, pending_frame_capacity;
	struct symbol_cache_frame *frames; /* the distinct frames of the pending answers, as the entry holds them,
					    * strings in pool: 1,539 of a C++ program's 9,973 frames in 2,105 runs */
	size_t frame_count, frame_capacity;
	struct symbol_cache_runs frame_table; /* frames by content (slots: index + 1) */
	struct symbol_cache_stable_frame *recent_frames; /* symbol_cache_add_stable's last frames (symbol_cache.c) */
	struct symbol_cache_pool *pool;
	uint32_t *pending_slots; /* open addressing on the address: index + 1, 0 for an empty slot */
	size_t slot_count;
	struct symbol_cache_runs runs; /* pending_frames' distinct runs: each stored once (symbol_cache.c) */
};

/*
 * Opens the entry of a module in cache directory cache_dir (NULL: none, the cache is off). A missing or
 * unusable entry leaves c->valid false: lookups then miss and symbol_cache_close writes a new one.
 */
void symbol_cache_open(struct symbol_cache *c, const char *cache_dir, const struct symbol_cache_key *key);

/* The answer for address from the entry or added in this run: true with *frames allocated (free with
 * profile_frames_free). */
bool symbol_cache_lookup(const struct symbol_cache *c, uint64_t address, struct profile_frame **frames,
			 uint32_t *count);

/* The same, its strings borrowed from the cache (valid until the next symbol_cache_add or symbol_cache_close),
 * into frames[0, SYMBOL_CACHE_MAX_FRAMES), nothing allocated: for a caller that asks many addresses and
 * prints each answer at once (stackrec symbolize), the allocation was a tenth of a lookup. *pending says
 * whether the answer was added in this run (else it is the entry's). */
bool symbol_cache_peek_into(const struct symbol_cache *c, uint64_t address, struct profile_frame *frames,
			    uint32_t *count, bool *pending);

/* Remembers the answer for address (copied, as the entry will hold it), to be written by symbol_cache_close. */
void symbol_cache_add(struct symbol_cache *c, uint64_t address, const struct profile_frame *frames, uint32_t count);

/* The same, for frames whose strings stay valid and unchanged until symbol_cache_close (the module's own:
 * symbolizer_module.borrow_names): each string is pooled once per pointer, not hashed again for every frame, and
 * a frame given again soon after is found by its strings' pointers. */
void symbol_cache_add_stable(struct symbol_cache *c, uint64_t address, const struct profile_frame *frames,
			     uint32_t count);

/* Writes the entry when answers were added (has_symtab and debug_reason describe the module), trims the
 * directory, and frees everything. */
void symbol_cache_close(struct symbol_cache *c, bool has_symtab, const char *debug_reason);

/* The module facts of a valid entry. */
bool symbol_cache_has_symtab(const struct symbol_cache *c);
const char *symbol_cache_debug_reason(const struct symbol_cache *c); /* NULL: none */

#endif
