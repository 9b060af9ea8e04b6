/*
 * profile_cache.h — the profile cache: what `convert` made of a recording's samples, kept between runs so that
 * converting the same recording again (another format, or the same one) reads the samples' stacks instead of
 * unwinding every sample again. The symbol cache (symbol_cache.h) spares a second run the DWARF; this spares it
 * the samples, which were then most of its time: a warm conversion of 50,000 node samples spent 20 of its 35 ms
 * unwinding and counting them, against 9 ms to read the file.
 *
 * An entry holds the profile as it stands after the passes over the samples and before symbolization (every
 * module, location, stack, event, probe hit and counter; no function names of files, which the symbol cache keeps
 * per build ID; kernel addresses named, from the recording's kallsyms alone), with the recording's [vdso] image,
 * and is used only where it is the profile those passes would build now:
 *   - the key (profile_cache_key) names the recording by its bytes (size, CRC-32 and Adler-32 of every byte, so a
 *     copy of it is the same recording), this stackrec by its own build ID (another version may unwind otherwise), and
 *     every option that changes what the passes make: whether the format keeps each sample's time, --symfs, the
 *     --debug-dir list and the cache directory (where files are looked for). The whole key is stored in the entry
 *     and compared: its file name is only a hash of it.
 *   - every module the unwinder opened (its CFI decides frames) is listed with the identity of what it found
 *     (module_file_identity: the file and each place a debug file could come from, by path, size and modification
 *     time), or why none was found; each is looked for again before the entry is used, and one that differs
 *     (a debug package installed since, a binary rebuilt) makes the run convert from scratch and replace it.
 * Not used (neither read nor written) with --no-cache, --explain (which reports on the walk itself), --archive
 * (its files come from a new directory each run) or a debuginfod server (what it would find now cannot be
 * looked at without asking it). Written only after a clean run: no damage in the recording, no warning or error
 * printed, so that a run that used the entry says everything the first run said.
 *
 * CACHE/profiles/HASH, where HASH is 16 hex digits of the key's hash; trimmed to STACKREC_PROFILE_CACHE_MB
 * (default 256) least recently used first, written as a temporary file renamed into place. The file is read as
 * hostile input: every count, index and string is checked, and an entry that fails any check is not used.
 *
 * Format, version 2, host byte order, all integers unaligned:
 *   header (struct profile_cache_header, 32 bytes): magic "STKPROF\n", version, header size, file size, CRC-32
 *     of every byte after the header;
 *   then, in order: the key; the unwinder's modules (count, then index and identity or reason each) and the count
 *   of probed functions' frames it found no CFA for; the recording's [vdso] image (u64 size, bytes) and its build
 *   ID (a string); the profile's facts, processes, modules, locations (a marker's, JIT code's or a kernel
 *   address's one named frame, or for a kernel address kallsyms does not name, all ones and why), stacks
 *   (locations and probe hits, leaf first), timeline, totals, events, probes, hits, process metrics and counters,
 *   each array as its count then its elements, as profile_cache.c's save_profile writes them. A string is its
 *   length (u32; all ones for none) and its bytes, no NUL.
 * Bump PROFILE_CACHE_VERSION when any of this changes; a new stackrec has another build ID, so its entries are
 * apart anyway.
 */
#ifndef STACKREC_CONVERT_PROFILE_CACHE_H
#define STACKREC_CONVERT_PROFILE_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "debug_file.h"
#include "module_file.h"
#include "profile.h"

#define PROFILE_CACHE_MAGIC "STKPROF\n"
#define PROFILE_CACHE_VERSION 3

struct profile_cache_header {
	char magic[8];
	uint32_t version;
	uint32_t header_size; /* sizeof(struct profile_cache_header) */
	uint64_t file_size;
	uint32_t crc; /* CRC-32 of the bytes after the header */
	uint32_t flags; /* 0 */
};

/* A module the unwinder opened, and what it found: module_file_identity, or "missing: " and the reason. */
struct profile_cache_module {
	uint32_t module; /* profile module index */
	char *identity;
};

/* What the walk over the samples read and counted besides the profile, and what of the recording names its
 * frames besides the files looked for: a run that uses the entry need not read the recording again. */
struct profile_cache_walk {
	struct profile_cache_module *list; /* the modules the unwinder opened */
	size_t count, cap;
	uint64_t frames_without_cfa; /* enrich_frames_without_cfa: what -v says of probe context */
	unsigned char *vdso_image;   /* the recording's [vdso] image (FILE blocks), or NULL */
	size_t vdso_size;
	char *vdso_build_id; /* that image's build ID (hex), or NULL */
};

/*
 * The key of a conversion of the size bytes of a recording mapped read-only at data (page aligned: the reader's
 * map, whose pages a large file gives back), whose profile keeps a timeline or not, with files looked for by
 * search (its symfs, debug dirs and cache directory). Allocated; NULL when this stackrec has no build ID (then
 * nothing would tell its entries from another build's: the cache is not used).
 */
char *profile_cache_key(const void *data, size_t size, bool keep_timeline, const struct debug_file_search *search);

/* What the profile cache keeps of the unwinder's module mf (index module): its identity, or why it has none. */
void profile_cache_add_module(struct profile_cache_walk *modules, uint32_t module, const struct module_file *mf,
			      const char *build_id, const struct debug_file_search *search);
/*
 * Whether every module in modules finds what it found then (each opened again as the unwinder opens it). p is the
 * profile of the recording's first pass: a module the entry lists that pass did not make is not looked for (it
 * does not hold).
 */
bool profile_cache_walk_holds(const struct profile_cache_walk *modules, const struct profile *p,
				const struct debug_file_search *search);
void profile_cache_walk_release(struct profile_cache_walk *modules);

/*
 * Checks size bytes at data as an entry for key (NULL: any) and reads it into *out (profile_init'ed by it) and
 * *modules. Returns NULL, or a static string saying what is wrong (then out and modules are released).
 */
const char *profile_cache_parse(const void *data, size_t size, const char *key, struct profile *out,
				struct profile_cache_walk *modules);

/* The entry for key under cache_dir, read into *out and *modules: true when there is a valid one. */
bool profile_cache_load(const char *cache_dir, const char *key, struct profile *out,
			struct profile_cache_walk *modules);

/* The bytes of an entry for key of profile p (before symbolization), with the unwinder's modules. Allocated. */
void *profile_cache_serialize(const char *key, const struct profile *p, const struct profile_cache_walk *modules,
			      size_t *size);

/* Writes the entry for key under cache_dir (made when missing), and trims the directory to its cap. */
void profile_cache_save(const char *cache_dir, const char *key, const struct profile *p,
			const struct profile_cache_walk *modules);

/*
 * Whether cached (an entry's profile) is what the passes over the samples would make of a recording whose first
 * pass made first: cached's modules start with first's, in the same order, and its facts are first's.
 */
bool profile_cache_fits(const struct profile *first, const struct profile *cached);
/*
 * Makes *first cached (which profile_cache_fits) and empties cached. first's strings that cached has too (the
 * modules' paths and build IDs, the recording's facts) are the ones kept: others may still point to them (the
 * module prefetcher, the debug file search's kernel release).
 */
void profile_cache_take(struct profile *first, struct profile *cached);

#endif
