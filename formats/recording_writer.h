/*
 * recording_writer.h — writes a recording file (see recording.h for the format).
 *
 * Blocks are collected in memory and written as one zstd frame when SREC_FRAME_TARGET bytes are reached
 * or recording_writer_flush() is called. The file is written in place, not through a temporary file: a
 * recorder that is killed must still leave every frame it completed readable.
 */
#ifndef STACKREC_FORMATS_RECORDING_WRITER_H
#define STACKREC_FORMATS_RECORDING_WRITER_H

#include <stddef.h>
#include <stdint.h>

struct recording_writer {
	char *path;
	int fd;
	void *cctx; /* ZSTD_CCtx */
	unsigned char *blocks;
	size_t blocks_len, blocks_cap;
	unsigned char *compressed;
	size_t compressed_cap;
	uint64_t block_count;
	int failed; /* a write failed; the error was reported once and everything after is dropped */
};

/* Creates (or truncates) path and writes the file header. Returns 0 or -1 with an error printed. */
int recording_writer_open(struct recording_writer *w, const char *path);

/* Appends one block whose body is head followed by tail (either may be empty). Returns 0 or -1. */
int recording_writer_add(struct recording_writer *w, uint32_t type, const void *head, size_t head_size,
			 const void *tail, size_t tail_size);

/* Compresses and writes the blocks collected so far as one frame. Returns 0 or -1. */
int recording_writer_flush(struct recording_writer *w);

/* Writes the END block, the last frame, fsyncs and closes. Returns 0 or -1; frees w either way. */
int recording_writer_close(struct recording_writer *w, uint64_t end_time_ns);

/* Renames the file being written to path (same filesystem); later messages name path. Returns 0 or -1. */
int recording_writer_rename(struct recording_writer *w, const char *path);

/* Frees w without writing END: the file stays as a cut-short recording. */
void recording_writer_abandon(struct recording_writer *w);

#endif
