/*
 * fuzz-elf.c — libFuzzer target for loading a module's file offline (convert/debug_file.c, module_file.c,
 * zstd_sections.c, and the symbolizer on top, symbolizer.c, cu_index.c; then zstd_sections.c again as for a
 * debug file, zlib sections included): whatever bytes sit where a recording
 * says a binary is — a truncated ELF file, absurd section headers, compressed sections (zlib, zstd) that lie
 * about their size, a .gnu_debuglink to anything — naming addresses in it must neither crash, nor hang, nor
 * allocate without bound.
 *
 * The input is written to a regular file in a private directory (binaries are read by path, as convert
 * reads them) and symbolized as a module recorded without a build ID (so used unverified, at its path), at
 * file offsets 0, 0x1000 and those of the last 16 bytes of input, as return addresses and not. Its Go build
 * ID note is read as the symbol cache's key for a binary without a GNU build ID (module_file.c), and its
 * .gnu_debugaltlink as `stackrec archive` reads it (convert/archive.c).
 * Built by `make fuzz-elf-build`; tests/t0005-fuzz-parsers.sh replays tests/fuzz/elf-corpus/. Besides the small
 * hand-made files there, inline-dwarf5 and inline-dwarf5-zlib are fixtures/inline.c built with `gcc -O2 -g`
 * (and `-gz=zlib`): whole DWARF with inlined functions and line tables, for the symbolizer's paths over them.
 */
#include <fcntl.h>
#include <gelf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "convert/archive.h"
#include "convert/kernel_symbols.h"
#include "convert/module_file.h"
#include "convert/profile.h"
#include "convert/symbolizer.h"
#include "convert/zstd_sections.h"
#include "tests/fuzz/fuzz-input.h"

/*
 * elfutils 0.188 (Debian 12) leaks an Elf handle (and a file name) inside libdw when it looks for the debug file
 * of an ELF file whose section headers are corrupt: dwfl_standard_find_debuginfo opens the file itself as a
 * candidate, and dwfl_module_getsymtab's own search does the same, with none of our code below libdw on the
 * stack. One handle per module per convert, on corrupt input only; seeds elf-corpus/leak-libdw-*.so. Its
 * internal functions have no symbols, so leaks are suppressed for any stack through libdw: a leak of our own
 * made inside a libdwfl callback (module_file.c) would be hidden too, while the rest of this target's code is
 * still checked. Remove when elfutils is newer.
 */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libdw.so\n";
}

/* libelf has no frame pointers: only a slow unwind sees the libdw frames below its allocations. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "fast_unwind_on_malloc=0";
}

static char dir[] = "/tmp/fuzz-elf.XXXXXX";
static char *path;

static void remove_dir(void)
{
	unlink(path);
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	unsetenv("DEBUGINFOD_URLS"); /* no network: only the file itself */
	if (!mkdtemp(dir)) {
		perror("fuzz-elf: mkdtemp");
		exit(1);
	}
	if (asprintf(&path, "%s/module", dir) < 0)
		exit(1);
	atexit(remove_dir);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct symbolizer_options options = { .demangle = true };
	struct kernel_symbols kernel;
	struct profile profile;
	uint32_t module;
	uint64_t offsets[4] = { 0, 0x1000, 0, 0 };
	FILE *f = fopen(path, "wb");

	ASSERT(f);
	ASSERT(fwrite(data, 1, size, f) == size || size == 0);
	ASSERT(fclose(f) == 0);
	if (size >= 16) {
		memcpy(&offsets[2], data + size - 16, 8);
		memcpy(&offsets[3], data + size - 8, 8);
		offsets[2] %= size; /* somewhere in the file, most of the time in its text */
	}
	options.search.cache_dir = NULL;
	options.search.dirs = (const char *[]){ dir };
	options.search.dir_count = 1;
	profile_init(&profile);
	kernel_symbols_init(&kernel);
	module = profile_intern_module(&profile, path, NULL, 0x400000, 0x500000, 0, false);
	for (size_t i = 0; i < 4; i++) {
		profile_intern_location(&profile, PROFILE_LOCATION_USER, module, 0x400000 + offsets[i], offsets[i], i % 2,
					PROFILE_UNWIND_FRAME_POINTER);
	}
	symbolize_profile(&profile, &kernel, &options);
	for (size_t i = 0; i < profile.location_count; i++)
		for (uint32_t j = 0; j < profile.locations[i].frame_count; j++)
			ASSERT(!profile.locations[i].frames[j].function || strlen(profile.locations[i].frames[j].function) < (1u << 20));
	profile_release(&profile);
	kernel_symbols_release(&kernel);
	/* The same bytes as a debug file found by build ID: its zlib sections are decompressed by us too. */
	int fd = open(path, O_RDONLY | O_CLOEXEC), copy;

	ASSERT(fd >= 0);
	copy = zstd_sections_decompress(fd, path, true, false);
	if (copy >= 0)
		close(copy);
	/* The Go build ID: printable, bounded, and its hex after "go-", or none. */
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	char *go_build_id = module_file_go_build_id(elf);

	ASSERT(!go_build_id || (!strncmp(go_build_id, "go-", 3) && strlen(go_build_id) <= 3 + 2 * GO_BUILD_ID_MAX &&
				strspn(go_build_id + 3, "0123456789abcdef") == strlen(go_build_id) - 3));
	free(go_build_id);
	/* The dwz link: a name inside the file, and a build ID of 2 to 64 bytes in hex, or none. */
	const char *alt_name;
	char alt_hex[2 * 64 + 1];

	if (archive_debugaltlink(elf, &alt_name, alt_hex))
		ASSERT(*alt_name && strlen(alt_name) < size && strlen(alt_hex) >= 4 && strlen(alt_hex) <= 128 &&
		       strspn(alt_hex, "0123456789abcdef") == strlen(alt_hex));
	elf_end(elf);
	close(fd);
	return 0;
}
