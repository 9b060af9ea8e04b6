/*
 * fuzz-input.h — what the libFuzzer targets of tests/fuzz/ share: an invariant check that crashes (so that
 * libFuzzer keeps the input), a memfd to hand an input to code that opens files by path, and the two ways
 * of getting random bytes past a recording's CRCs (fuzz-recording.c says why).
 */
#ifndef STACKREC_TESTS_FUZZ_INPUT_H
#define STACKREC_TESTS_FUZZ_INPUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "formats/recording.h"

/* A broken invariant is a bug in the code under test, not in the input: crash so that libFuzzer keeps it. */
#define ASSERT(cond)                                                                              \
	do {                                                                                      \
		if (!(cond)) {                                                                    \
			fprintf(stderr, "%s: invariant broken: %s (%s:%d)\n", __FILE__, #cond, __FILE__, \
				__LINE__);                                                        \
			abort();                                                                  \
		}                                                                                 \
	} while (0)

/* Creates a memfd named name and writes its /proc path into path. Exits on failure. */
static inline int fuzz_memfd(const char *name, char *path, size_t path_size)
{
	int fd = memfd_create(name, MFD_CLOEXEC);

	if (fd < 0) {
		perror("memfd_create");
		exit(1);
	}
	snprintf(path, path_size, "/proc/self/fd/%d", fd);
	return fd;
}

/* Makes the file open as fd hold exactly data. */
static inline void fuzz_memfd_fill(int fd, const void *data, size_t size)
{
	if (ftruncate(fd, 0) < 0 || (size && pwrite(fd, data, size, 0) != (ssize_t)size))
		abort();
}

/* Sets the CRC of every frame header found in a recording right. Returns true if any changed. */
static inline bool fuzz_fix_crcs(unsigned char *file, size_t size)
{
	const uint32_t magic = SREC_FRAME_MAGIC;
	bool changed = false;

	for (size_t off = sizeof(struct srec_file_header); off + sizeof(struct srec_frame_header) <= size; off++) {
		struct srec_frame_header fh;
		uint32_t crc;

		if (memcmp(file + off, &magic, sizeof(magic)) != 0)
			continue;
		memcpy(&fh, file + off, sizeof(fh));
		if (fh.compressed_size > size - off - sizeof(fh))
			continue;
		crc = (uint32_t)crc32(0L, file + off + sizeof(fh), fh.compressed_size);
		if (crc != fh.crc32) {
			fh.crc32 = crc;
			memcpy(file + off, &fh, sizeof(fh));
			changed = true;
		}
	}
	return changed;
}

/* A valid recording of a raw block stream: file header, then one frame holding exactly those bytes. */
static inline unsigned char *fuzz_wrap_blocks(const uint8_t *blocks, size_t len, size_t *file_size)
{
	struct srec_file_header h = { .version_major = SREC_VERSION_MAJOR, .version_minor = SREC_VERSION_MINOR,
				      .byte_order = SREC_BYTE_ORDER_MARK, .header_size = sizeof(h) };
	size_t bound = ZSTD_compressBound(len);
	unsigned char *file = malloc(sizeof(h) + sizeof(struct srec_frame_header) + bound);
	struct srec_frame_header fh = { .magic = SREC_FRAME_MAGIC, .uncompressed_size = (uint32_t)len };
	size_t n;

	if (!file)
		abort();
	memcpy(h.magic, SREC_FILE_MAGIC, sizeof(h.magic));
	memcpy(file, &h, sizeof(h));
	n = ZSTD_compress(file + sizeof(h) + sizeof(fh), bound, blocks, len, 1);
	ASSERT(!ZSTD_isError(n));
	fh.compressed_size = (uint32_t)n;
	fh.crc32 = (uint32_t)crc32(0L, file + sizeof(h) + sizeof(fh), (uInt)n);
	memcpy(file + sizeof(h), &fh, sizeof(fh));
	*file_size = sizeof(h) + sizeof(fh) + n;
	return file;
}

#endif
