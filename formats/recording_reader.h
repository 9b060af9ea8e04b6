/*
 * recording_reader.h — reads a recording file (see recording.h for the format), block by block.
 *
 * The reader never trusts the file. Every frame is checked (magic, sizes, CRC, zstd checksum) before its
 * blocks are handed out; a damaged frame is skipped, the next frame is found by its magic, and the damage
 * is counted so that the caller can report it and exit non-zero after converting everything intact.
 * Block bodies are checked by the recording_parse_* helpers before their fields are used.
 */
#ifndef STACKREC_FORMATS_RECORDING_READER_H
#define STACKREC_FORMATS_RECORDING_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "recording.h"

/* What one pass over the file found wrong with it. */
struct recording_damage {
	uint64_t frames;	/* intact frames read */
	uint64_t bad_frames;	/* frames skipped: bad CRC, bad zstd data, impossible sizes */
	uint64_t bad_blocks;	/* blocks whose header ran past their frame (the rest of that frame is lost) */
	uint64_t skipped_bytes; /* bytes of file skipped while looking for the next frame */
	bool truncated;		/* the file ends inside a frame */
	bool has_end;		/* an END block was read: the recorder finished cleanly */
};

struct recording_reader {
	char *path;
	const unsigned char *map; /* the whole file, read-only */
	size_t size;
	struct srec_file_header header;
	void *dctx; /* ZSTD_DCtx */
	unsigned char *frame;
	size_t frame_cap;
	struct recording_damage damage; /* of the last recording_reader_for_each() pass */
};

/*
 * Called for each block of each intact frame, in file order. body is 8-byte aligned and valid until the
 * callback returns. A non-zero return stops the pass and is returned by recording_reader_for_each().
 */
typedef int (*recording_block_fn)(void *ctx, uint32_t type, const void *body, uint32_t size);

/* Opens path and checks its file header. Returns 0, or -1 with a one-line error naming the file. */
int recording_reader_open(struct recording_reader *r, const char *path);

/*
 * Reads every intact block, skipping damage, and fills r->damage. With warn_damage, each damaged frame
 * gets one warning line naming the file and the offset. Returns 0, or the callback's non-zero value.
 */
int recording_reader_for_each(struct recording_reader *r, recording_block_fn fn, void *ctx, bool warn_damage);

/* True when the last pass found damage or no END block. Prints the one-line summary error if so. */
bool recording_reader_report_damage(const struct recording_reader *r);

void recording_reader_close(struct recording_reader *r);

/*
 * Block parsers: copy the fixed part into *out (zero-filling what a shorter body lacks) and point at the
 * variable part. Return 0, or -1 when the body cannot be what its type says (the block should be skipped
 * and counted as damage by the caller).
 */
int recording_parse_sample(const void *body, uint32_t size, struct srec_sample *out, const uint64_t **ips);
/*
 * The user registers and stack bytes after the IPs of sample s (parsed from the same body), when s has
 * SREC_SAMPLE_USER_REGS. Returns 0 with *out, *regs (reg_count values) and *stack (stack_size bytes) set,
 * 1 when the sample carries none, -1 when they do not fit the block or make no sense.
 */
int recording_parse_user_regs(const void *body, uint32_t size, const struct srec_sample *s, struct srec_user_regs *out,
			      const uint64_t **regs, const uint8_t **stack);
int recording_parse_mapping(const void *body, uint32_t size, struct srec_mapping *out, const char **path);
int recording_parse_task(const void *body, uint32_t size, struct srec_task *out);
int recording_parse_stats(const void *body, uint32_t size, struct srec_stats *out);
int recording_parse_end(const void *body, uint32_t size, struct srec_end *out);
/* A FILE block: *path its NUL-terminated path, *data its data_size bytes of content. */
int recording_parse_file(const void *body, uint32_t size, struct srec_file *out, const char **path,
			 const void **data);

/*
 * HOST block: calls fn for each "key=value" string with key and value split. Strings without '=' or not
 * terminated are skipped.
 */
typedef void (*recording_host_fn)(void *ctx, const char *key, const char *value);
void recording_parse_host(const void *body, uint32_t size, recording_host_fn fn, void *ctx);

/* A human name for a block type ("sample", "mapping", ...), or NULL for types this reader does not know. */
const char *recording_block_name(uint32_t type);

#endif
