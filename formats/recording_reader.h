/*
 * recording_reader.h — reads a recording file (see recording.h for the format), block by block.
 *
 * The reader never trusts the file. Every frame is checked (magic, sizes, CRC, zstd checksum if any) before its
 * blocks are handed out; a damaged frame is skipped, the next frame is found by its magic, and the damage
 * is counted so that the caller can report it and exit non-zero after converting everything intact.
 * Frame numbers (FRAME blocks, recording.h) are the reader's business: it takes them out of the block stream,
 * skips a frame whose number was read before, and counts frames missing and out of order; END's block count
 * checks a file without them.
 * Block bodies are checked by the recording_parse_* helpers before their fields are used.
 */
#ifndef STACKREC_FORMATS_RECORDING_READER_H
#define STACKREC_FORMATS_RECORDING_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "recording.h"

/* The kinds of damage a pass tells apart; each is one line of the summary (see recording_warn). */
enum recording_damage_kind {
	RECORDING_DAMAGE_CRC,		/* a frame whose compressed bytes fail their CRC */
	RECORDING_DAMAGE_GARBAGE,	/* bytes with no frame magic where a frame should start */
	RECORDING_DAMAGE_SIZE,		/* a frame declaring more uncompressed bytes than any frame may hold */
	RECORDING_DAMAGE_PAST_END,	/* a frame whose size runs past the end of the file, with frames after it */
	RECORDING_DAMAGE_ZSTD,		/* a frame whose zstd data does not decompress */
	RECORDING_DAMAGE_WRONG_SIZE,	/* a frame decompressing to another size than its header says */
	RECORDING_DAMAGE_BLOCK,		/* an intact frame whose last block runs past its end */
	RECORDING_DAMAGE_STRAY,		/* an intact frame ending in bytes too few for a block header */
	RECORDING_DAMAGE_TRUNCATED,	/* the last frame, cut short by the end of the file */
	RECORDING_DAMAGE_MISSING,	/* frame numbers never read, more than the damaged frames account for */
	RECORDING_DAMAGE_UNTIMED,	/* an intact frame with samples its SAMPLE_TIMES block has no time for */
	RECORDING_DAMAGE_DUPLICATE,	/* an intact frame whose number was read before: skipped */
	RECORDING_DAMAGE_ORDER,		/* an intact frame numbered lower than one before it in the file */
	RECORDING_DAMAGE_UNNUMBERED,	/* an intact frame without a FRAME block, in a file whose frames have them */
	RECORDING_DAMAGE_END_COUNT,	/* END counts other blocks than were read, and nothing else explains it */
	RECORDING_DAMAGE_KINDS
};

#define RECORDING_DAMAGE_FIRST 3 /* offsets kept, and shown in a summary line, per kind */

/* What one pass over the file found wrong with it. */
struct recording_damage {
	uint64_t frames;	/* intact frames read */
	uint64_t bad_frames;	/* frames skipped: bad CRC, bad zstd data, impossible sizes */
	uint64_t bad_blocks;	/* blocks whose header ran past their frame (the rest of that frame is lost) */
	uint64_t skipped_bytes; /* bytes of file skipped while looking for the next frame */
	bool truncated;		/* the file ends inside a frame */
	bool has_end;		/* an END block was read: the recorder finished cleanly */
	uint64_t count[RECORDING_DAMAGE_KINDS];				/* of each kind */
	uint64_t first[RECORDING_DAMAGE_KINDS][RECORDING_DAMAGE_FIRST]; /* file offsets of the first frames */
	uint64_t numbered_frames; /* intact frames with a frame number (1.2); 0 for a file without them */
	uint64_t blocks;	  /* blocks read, FRAME blocks included, those of skipped duplicates not */
	uint64_t end_blocks;	  /* the first END block's count of the blocks before it */
	uint64_t blocks_before_end; /* blocks read before that END block */
};

/* What the reader keeps of the frame numbers of one pass (see recording_reader_for_each). */
struct recording_frame_numbers {
	uint64_t *seen; /* open-addressing set of the numbers read, stored plus one (0 is an empty slot) */
	size_t cap, count;
	uint64_t max;		 /* the highest number read */
	uint64_t bad_before_max; /* damaged frames before the frame with that number */
	uint64_t bad_since;	 /* damaged frames since the last numbered one */
	uint64_t gaps;		 /* forward jumps of the numbers not accounted for by damaged frames */
};

/*
 * How recording_reader_for_each() tells of damage. One warning per damaged frame drowns a badly damaged
 * file's report in lines (thousands for a file with thousands of frames), so by default there is one per
 * kind: 'x.rec': 37 frames with a bad CRC (first at offsets 4096, 8192, 12288, ...). Every one is for -v.
 */
enum recording_warn {
	RECORDING_WARN_NONE,	/* count only: recording_reader_report_damage() says it in one line */
	RECORDING_WARN_SUMMARY, /* at the end of the pass, one warning per kind: its count and first offsets */
	RECORDING_WARN_EACH,	/* one warning per damaged frame, with its offset, as it is found */
};

struct recording_reader {
	char *path;
	const unsigned char *map; /* the whole file, read-only */
	size_t size;
	struct srec_file_header header;
	void *dctx; /* ZSTD_DCtx, for a pass that decodes its frames itself (when no thread decodes ahead) */
	/* Passes decode the next frame on a second thread while the callback reads this one: worth it when the
	 * callback does more than look at the blocks (convert's pass over the samples). Off by default. */
	bool decode_ahead;
	/* Keep the frames a pass decodes for the passes after it (see recording_reader_forget). Off by default. */
	bool keep;
	struct recording_kept *kept; /* the frames kept, all of the file's; NULL when none are */
	struct recording_damage damage; /* of the last recording_reader_for_each() pass */
	struct recording_frame_numbers numbers;
};

/*
 * Most a file's frames may decode to in all for r->keep to keep them: a bound on the memory it costs, so that
 * memory does not grow with the number of samples past it. A larger file is decoded in every pass, as without
 * r->keep.
 */
#define RECORDING_KEEP_MAX (32u << 20)

/*
 * Called for each block of each intact frame, in file order. body is 8-byte aligned and valid until the
 * callback returns. A non-zero return stops the pass and is returned by recording_reader_for_each().
 */
typedef int (*recording_block_fn)(void *ctx, uint32_t type, const void *body, uint32_t size);

/* Opens path and checks its file header. Returns 0, or -1 with a one-line error naming the file. */
int recording_reader_open(struct recording_reader *r, const char *path);

/*
 * Reads every intact block, skipping damage, and fills r->damage; warn says what it prints about the damage
 * (see enum recording_warn; a pass stopped by its callback summarizes what it found so far). Returns 0, or
 * the callback's non-zero value.
 */
int recording_reader_for_each(struct recording_reader *r, recording_block_fn fn, void *ctx, enum recording_warn warn);

/*
 * With r->keep set, a pass over an intact file whose frames decode to at most RECORDING_KEEP_MAX bytes keeps
 * them, and the passes after it read them, not the file, until recording_reader_forget frees them: convert
 * reads a recording twice, and decompression was a third of a warm conversion. The passes see the same
 * blocks and the same damage either way.
 */
void recording_reader_forget(struct recording_reader *r);

/* Prints the summary of RECORDING_WARN_SUMMARY for the last pass: one warning per kind of damage found. */
void recording_reader_warn_damage(const struct recording_reader *r);

/* Whether the last pass met damage of any kind, or no end marker: what recording_reader_report_damage reports. */
bool recording_reader_damaged(const struct recording_reader *r);
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
 * The event that ends an event sample (SREC_SAMPLE_EVENT_INFO): after the IPs, and after the user registers
 * and stack bytes when s has SREC_SAMPLE_USER_REGS. Returns 0 with *out and *name (NUL-terminated, "" when the
 * event has none) set, 1 when the sample carries no event, -1 when it does not fit the block, the flag and the
 * kind disagree, or the name is unterminated or longer than SREC_EVENT_NAME_MAX.
 */
int recording_parse_sample_event(const void *body, uint32_t size, const struct srec_sample *s,
				 struct srec_sample_event *out, const char **name);

/* The type of a probe argument, from the "NAME:TYPE" strings of a PROBE block. */
enum recording_arg_type {
	RECORDING_ARG_S64, /* "s64": an integer, shown signed */
	RECORDING_ARG_U64, /* "u64" */
	RECORDING_ARG_PTR, /* "ptr": an address, shown in hex */
	RECORDING_ARG_STR  /* "str": a captured string (the value is its address) */
};

#define RECORDING_ARG_NAME_MAX 64 /* the longest argument name a PROBE block may carry */

/* A PROBE block, checked: every pointer points into the block body and every string is NUL-terminated. */
struct recording_probe {
	struct srec_probe header;
	const char *binary;   /* the binary's path as recorded, non-empty */
	const char *function; /* the function's name, non-empty */
	struct recording_probe_arg {
		const char *name; /* not NUL-terminated at the ':': name_len bytes of [A-Za-z0-9_] */
		uint32_t name_len;
		enum recording_arg_type type;
	} args[SREC_PROBE_ARGS_MAX]; /* header.arg_count of them */
};
int recording_parse_probe(const void *body, uint32_t size, struct recording_probe *out);
/* "s64", "u64", "ptr" or "str", as PROBE blocks spell them. */
const char *recording_arg_type_name(enum recording_arg_type type);

/*
 * A PROBE_HIT block: *values its value_count (at most SREC_PROBE_ARGS_MAX) raw values, *strings its
 * strings_size bytes of packed strings (split them with recording_split_hit_strings).
 */
int recording_parse_probe_hit(const void *body, uint32_t size, struct srec_probe_hit *out, const uint64_t **values,
			      const uint8_t **strings);
/*
 * Splits the packed strings of a probe hit into count strings (one per "str" argument, in order): ptrs[i]
 * and lens[i] (bytes, no NUL; not NUL-terminated in the block); ptrs[i] NULL and lens[i] 0 for one that could
 * not be read (SREC_PROBE_STRING_UNREAD; in files before 1.6, length 0 said that too: the reader's version
 * tells); cut[i] true when the string went on past the bytes kept (SREC_PROBE_STRING_CUT). Returns 0, or -1
 * when they do not fill exactly size bytes, one is longer than SREC_PROBE_STRING_MAX - 1, or one shorter than
 * that is marked cut.
 */
int recording_split_hit_strings(const uint8_t *strings, uint32_t size, uint32_t count, const char **ptrs,
				uint32_t *lens, bool *cut);
/* A PROCESS_METRICS block (a shorter body is zero-filled past its thread count). */
int recording_parse_process_metrics(const void *body, uint32_t size, struct srec_process_metrics *out);

/*
 * HOST block: calls fn for each "key=value" string with key and value split. Strings without '=' or not
 * terminated are skipped.
 */
typedef void (*recording_host_fn)(void *ctx, const char *key, const char *value);
void recording_parse_host(const void *body, uint32_t size, recording_host_fn fn, void *ctx);

/* A human name for a block type ("sample", "mapping", ...), or NULL for types this reader does not know. */
const char *recording_block_name(uint32_t type);

#endif
