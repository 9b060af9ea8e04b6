/*
 * fuzz-archive.c — libFuzzer target for the archive reader (convert/archive.c, archive_extract): whatever an
 * archive holds, extracting it must neither crash nor hang, must write nothing outside its own new directory,
 * and must leave nothing behind once that directory is removed.
 *
 * The input is tried as fuzz-recording.c tries it: as the file itself, again with its frames' CRCs set right,
 * and, when it starts with "SRBLOCKS", as a raw block stream (FILE blocks, mostly) in one valid frame.
 * Built by `make fuzz-archive-build`; tests/t0005-fuzz-parsers.sh replays tests/fuzz/archive-corpus/.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "convert/archive.h"
#include "tests/fuzz/fuzz-input.h"

#define BLOCKS_PREFIX "SRBLOCKS"

static int memfd = -1;
static char memfd_path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	memfd = fuzz_memfd("fuzz-archive.archive", memfd_path, sizeof(memfd_path));
	return 0;
}

static void extract(const void *data, size_t size)
{
	bool damaged = false;
	char *dir, *copy;

	fuzz_memfd_fill(memfd, data, size);
	dir = archive_extract(memfd_path, &damaged);
	if (!dir)
		return;
	/* Its own directory, new and private: the one mkdtemp() made. */
	size_t parent = strlen(archive_temp_parent());

	ASSERT(!strncmp(dir, archive_temp_parent(), parent) && !strncmp(dir + parent, "/stackrec-archive.", 18) &&
	       !strchr(dir + parent + 18, '/'));
	copy = strdup(dir);
	ASSERT(copy);
	archive_remove_dir(dir);
	ASSERT(opendir(copy) == NULL);
	free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char *copy;

	if (size >= strlen(BLOCKS_PREFIX) && memcmp(data, BLOCKS_PREFIX, strlen(BLOCKS_PREFIX)) == 0) {
		size_t file_size;
		unsigned char *file = fuzz_wrap_blocks(data + strlen(BLOCKS_PREFIX), size - strlen(BLOCKS_PREFIX),
						       &file_size);

		extract(file, file_size);
		free(file);
		return 0;
	}
	extract(data, size);
	copy = malloc(size ? size : 1);
	ASSERT(copy);
	memcpy(copy, data, size);
	if (fuzz_fix_crcs(copy, size))
		extract(copy, size);
	free(copy);
	return 0;
}
