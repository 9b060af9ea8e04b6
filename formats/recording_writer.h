/*
 * recording_writer.h — writes a recording file (see recording.h for the format).
 *
 * Blocks are collected in memory and written as one zstd frame when SREC_FRAME_TARGET bytes are reached
 * or recording_writer_flush() is called. The file is written in place, not through a temporary file to the
 * end: a recorder that is killed must still leave every frame it completed readable. Only its start goes
 * through a temporary file (recording_writer_open_replacing, see output_create in util.h), so that a run that
 * fails before it is under way leaves an existing file as it was.
 */
#ifndef STACKREC_FORMATS_RECORDING_WRITER_H
#define STACKREC_FORMATS_RECORDING_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "../util.h" /* struct output_file */

struct recording_writer {
	char *path; /* the name the user gave: every message says it, never the temporary name */
	int fd;
	void *cctx; /* ZSTD_CCtx */
	unsigned char *blocks;
	size_t blocks_len, blocks_cap;
	unsigned char *compressed;
	size_t compressed_cap;
	uint64_t block_count; /* blocks added, FRAME blocks included */
	uint64_t frame_count; /* frames written */
	uint64_t last_sample_ns; /* the time of the frame's last sample: the next one's is written as a delta */
	uint64_t *times;	 /* the deltas of the frame's samples so far: its SAMPLE_TIMES block, at flush */
	size_t times_len, times_cap;
	_Atomic int failed; /* a write failed; the error was reported once and everything after is dropped */
	struct output_file out; /* open_replacing: out.tmp is renamed to path at commit; NULL once committed */
	int keep_old; /* set after open_replacing: commit keeps a regular file at path as PATH.old */
	struct frame_thread *thread; /* recording_writer_start_thread: frames are compressed and written there */
	uint64_t handover_waits;     /* frames handed over only after waiting for that thread to catch up */
	int adapt_level; /* set after start_thread: that thread's zstd level follows the rate (below) */
	/* Set by the recorder after open_replacing: at close, a recording whose blocks came to at most
	 * RECORDING_REPACK_MAX bytes is rewritten with full frames (recording_writer_close). */
	int repack;
	unsigned char *log; /* while repack: every block added, as a 1.2 block stream (samples with their times) */
	size_t log_len, log_cap;
	uint64_t opened_ns; /* when the writer was opened: the rate, for the level of the rewrite */
	int level;	    /* the zstd level of frames written without the thread; 0: level 3 */
	int renamed;	    /* opened through a temporary file: the file can be replaced whole */
	int try_min_match;  /* a small frame at level 19 is compressed twice, the smaller kept (write_frame) */
};

/*
 * The most block bytes a recording may have for recording_writer_close to rewrite it: memory kept for it while
 * recording, and the cost of compressing it again (at zstd level 19, which only a recording slower than 48
 * KB/s gets, 0.3-0.5 s of CPU for 1 MiB, that is after 21 s of recording or more).
 */
#define RECORDING_REPACK_MAX (1u << 20)

/* Creates (or truncates) path, 0600, and writes the file header. Returns 0 or -1 with an error printed. */
int recording_writer_open(struct recording_writer *w, const char *path);

/* Appends one block whose body is head followed by tail (either may be empty). Returns 0 or -1. */
int recording_writer_add(struct recording_writer *w, uint32_t type, const void *head, size_t head_size,
			 const void *tail, size_t tail_size);

/* Compresses and writes the blocks collected so far as one frame. Returns 0 or -1. */
int recording_writer_flush(struct recording_writer *w);

/*
 * Writes the END block, the last frame, fsyncs, closes and commits. Returns 0 or -1; frees w either way.
 * With w->repack, a file of more frames than its blocks need (flushed every second: a slow or loaded recording
 * is a small frame a second, each compressed without the others) is then rewritten through a temporary file
 * renamed over it, with frames of SREC_FRAME_TARGET: the same blocks in fewer frames. Only a recording that
 * finished cleanly, is a regular file written through a temporary one and came to at most RECORDING_REPACK_MAX
 * bytes of blocks; a rewrite that fails leaves the file as it was written.
 */
int recording_writer_close(struct recording_writer *w, uint64_t end_time_ns);

/*
 * Like recording_writer_open, but through output_create (util.h): writes a temporary file in PATH's directory
 * until recording_writer_commit (or close) renames it to PATH, and abandoning it or failing before then
 * removes it, so an existing PATH is replaced only by a file that got under way. A device, FIFO or trusted
 * symbolic link is written in place; another user's symbolic link is refused. Errors name PATH.
 */
int recording_writer_open_replacing(struct recording_writer *w, const char *path);

/*
 * From now on, frames are compressed and written by a thread of the writer's own, in the order they were
 * closed: recording_writer_add and _flush only hand a full frame over (and wait when too much waits already).
 * For the recorder, whose one thread must be back at the kernel's buffers at once. A write error is then
 * reported by that thread, and makes the calls after it fail. Close and abandon wait for every frame.
 * Returns 0, or -1 when no thread could be started (frames are then written as before).
 */
int recording_writer_start_thread(struct recording_writer *w);

/*
 * The zstd level recording_writer's thread compresses a frame at when w->adapt_level is set (the recorder):
 * the highest of a small table whose cost at a recording's raw bytes per second stays about 2% of a core or
 * under, so that a slow stream (fp samples at 99-4999 Hz) is written smaller and a fast one (dwarf stacks,
 * off-CPU switches) stays at the fixed level 3 every other writer uses. Any level decodes the same.
 */
int recording_writer_level_for_rate(double bytes_per_s);

/* Renames the temporary file to PATH (nothing for a writer opened otherwise). Returns 0 or -1. */
int recording_writer_commit(struct recording_writer *w);

/* Frees w without writing END: the file stays as a cut-short recording (or, never committed, is removed). */
void recording_writer_abandon(struct recording_writer *w);

#endif
