/*
 * recording_writer.c — writes the block file described in recording.h: a file header, then blocks packed
 * into independently decodable zstd frames, each behind a small header with a sync magic and a CRC.
 */
#include "recording_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <libdeflate.h>
#include <zstd.h>

#include "../util.h"
#include "recording.h"

/* zstd level 3 (its default) compresses raw stacks about 5-10x at far above sampling rates. */
#define COMPRESSION_LEVEL 3

/*
 * adapt_level: the level for a frame by the raw bytes per second the recording produces, the highest whose
 * compression costs about 2% of a core or less at that rate. zstd's speeds on 256 KiB frames of fp samples
 * (bench/workloads/cpu.c, a busy 2-core machine): level 3 400-1000 MB/s, 7 100-140, 10 63-98, 12 37-66, 19
 * 2.1-3.7. The levels left out gain little over the one below them for their cost (4 and 5 are as slow as 7
 * and compress worse; 8 and 9 hardly better than 7; 11-18 hardly better than 10 at a half to a tenth of its
 * speed). An fp recording of one busy thread comes to 1.4 MB/s at 4999 Hz, 0.28 MB/s at 999 Hz, 0.04 MB/s
 * at 99 Hz; off-CPU (40 MB/s and more) and dwarf ones of deep stacks stay at level 3.
 */
static const struct {
	double max_bytes_per_s;
	int level;
} level_by_rate[] = {
	{ 48e3, 19 },
	{ 1.5e6, 10 },
	{ 2.5e6, 7 },
};

int recording_writer_level_for_rate(double bytes_per_s)
{
	for (size_t i = 0; i < sizeof(level_by_rate) / sizeof(level_by_rate[0]); i++)
		if (bytes_per_s <= level_by_rate[i].max_bytes_per_s)
			return level_by_rate[i].level;
	return COMPRESSION_LEVEL;
}

static uint64_t clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int write_all(struct recording_writer *w, const void *data, size_t size)
{
	const unsigned char *p = data;

	while (size > 0) {
		ssize_t n = write(w->fd, p, size);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			if (!w->failed)
				error("cannot write '%s': %s", w->path, strerror(errno));
			w->failed = 1;
			return -1;
		}
		p += n;
		size -= (size_t)n;
	}
	return 0;
}

/* Sets w up on w->fd (open, w->path set) and writes the file header. */
static int start(struct recording_writer *w)
{
	struct srec_file_header header = {
		.version_major = SREC_VERSION_MAJOR,
		.version_minor = SREC_VERSION_MINOR,
		.byte_order = SREC_BYTE_ORDER_MARK,
		.header_size = sizeof(struct srec_file_header),
	};

	w->cctx = ZSTD_createCCtx();
	if (!w->cctx) {
		recording_writer_abandon(w);
		return error("cannot create a zstd context");
	}
	/* No zstd content checksum (4 bytes a frame, a tenth of the fixed part of a 1-second recording): the
	 * frame header's CRC-32 already finds damage, before decompression, and the size it must decompress to
	 * is checked too. Files before 1.4 have one; readers verify it where it is. */
	ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_checksumFlag, 0);
	w->opened_ns = clock_ns();
	memcpy(header.magic, SREC_FILE_MAGIC, sizeof(header.magic));
	if (write_all(w, &header, sizeof(header)) < 0) {
		recording_writer_abandon(w);
		return -1;
	}
	return 0;
}

int recording_writer_open(struct recording_writer *w, const char *path)
{
	memset(w, 0, sizeof(*w));
	w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (w->fd < 0)
		return error("cannot create '%s': %s", path, strerror(errno));
	w->path = xstrdup(path);
	return start(w);
}

int recording_writer_open_replacing(struct recording_writer *w, const char *path)
{
	memset(w, 0, sizeof(*w));
	w->fd = output_create(path, &w->out);
	if (w->fd < 0)
		return -1;
	w->path = xstrdup(path);
	w->renamed = w->out.tmp != NULL;
	return start(w);
}

int recording_writer_commit(struct recording_writer *w)
{
	/* on failure the temporary file goes when w is freed */
	return output_replace(&w->out, w->path, w->keep_old);
}

/* Appends one block to *buf (*len bytes of *cap): its header, head and tail, padding. */
static void put_block(unsigned char **buf, size_t *len, size_t *cap, uint32_t type, const void *head,
		      size_t head_size, const void *tail, size_t tail_size)
{
	struct srec_block_header bh = { .type = type, .size = (uint32_t)(head_size + tail_size) };
	size_t padded = (head_size + tail_size + SREC_BLOCK_ALIGN - 1) & ~(size_t)(SREC_BLOCK_ALIGN - 1);
	unsigned char *p;

	GROW(*buf, *cap, *len + sizeof(bh) + padded);
	p = *buf + *len;
	memcpy(p, &bh, sizeof(bh));
	if (head_size)
		memcpy(p + sizeof(bh), head, head_size);
	if (tail_size)
		memcpy(p + sizeof(bh) + head_size, tail, tail_size);
	memset(p + sizeof(bh) + head_size + tail_size, 0, padded - head_size - tail_size);
	*len += sizeof(bh) + padded;
}

/* Appends one block to the frame being collected; the caller has made room for it in the frame. */
static void append_block(struct recording_writer *w, uint32_t type, const void *head, size_t head_size,
			 const void *tail, size_t tail_size)
{
	put_block(&w->blocks, &w->blocks_len, &w->blocks_cap, type, head, head_size, tail, tail_size);
	w->block_count++;
}

/* What a frame's FRAME block takes of it, which a block must leave room for. */
#define FRAME_BLOCK_SIZE (sizeof(struct srec_block_header) + sizeof(struct srec_frame))

/* What the SAMPLE_TIMES block of a frame with n samples takes of it (a multiple of 8: no padding). */
static size_t times_block_size(size_t n)
{
	return n ? sizeof(struct srec_block_header) + sizeof(struct srec_sample_times) + 8 * n : 0;
}

/*
 * Makes room for a block of `need` bytes (header and padded body), and for its time when it is a sample, in
 * the frame being collected: flushes the frame if they would not fit, and starts a new frame with its FRAME
 * block (recording.h, "Frame numbers").
 */
static int make_room(struct recording_writer *w, size_t need, bool sample)
{
	if (w->blocks_len + need + times_block_size(w->times_len + sample) > SREC_FRAME_MAX_UNCOMPRESSED &&
	    recording_writer_flush(w) < 0)
		return -1;
	if (w->blocks_len == 0) {
		struct srec_frame frame = { .sequence = w->frame_count, .blocks_before = w->block_count };

		append_block(w, SREC_BLOCK_FRAME, &frame, sizeof(frame), NULL, 0);
		w->last_sample_ns = 0; /* sample times are deltas within a frame only */
	}
	return 0;
}

/* Keeps a copy of the block for the rewrite at close, as long as the recording is small enough for one. */
static void log_block(struct recording_writer *w, uint32_t type, const void *head, size_t head_size,
		      const void *tail, size_t tail_size)
{
	size_t padded = (head_size + tail_size + SREC_BLOCK_ALIGN - 1) & ~(size_t)(SREC_BLOCK_ALIGN - 1);

	if (w->log_len + sizeof(struct srec_block_header) + padded > RECORDING_REPACK_MAX) {
		free(w->log); /* too large to rewrite: frames stay as they were flushed */
		w->log = NULL;
		w->log_len = w->log_cap = 0;
		w->repack = 0;
		return;
	}
	put_block(&w->log, &w->log_len, &w->log_cap, type, head, head_size, tail, tail_size);
}

int recording_writer_add(struct recording_writer *w, uint32_t type, const void *head, size_t head_size,
			 const void *tail, size_t tail_size)
{
	size_t padded = (head_size + tail_size + SREC_BLOCK_ALIGN - 1) & ~(size_t)(SREC_BLOCK_ALIGN - 1);
	bool sample = type == SREC_BLOCK_SAMPLE && head_size >= sizeof(uint64_t);

	if (w->failed)
		return -1;
	if (head_size + tail_size >
	    SREC_FRAME_MAX_UNCOMPRESSED - sizeof(struct srec_block_header) - FRAME_BLOCK_SIZE - times_block_size(1))
		return error("block of %zu bytes is too large for '%s'", head_size + tail_size, w->path);
	if (make_room(w, sizeof(struct srec_block_header) + padded, sample) < 0)
		return -1;
	if (sample) {
		/* Its time goes to the frame's SAMPLE_TIMES block, as a delta from the sample before it
		 * (recording.h, "Sample times in a column"); the frame's copy says 0. */
		size_t time_at = w->blocks_len + sizeof(struct srec_block_header); /* append_block may move blocks */
		uint64_t time_ns, zero = 0;

		memcpy(&time_ns, head, sizeof(time_ns));
		GROW(w->times, w->times_cap, w->times_len + 1);
		w->times[w->times_len++] = time_ns - w->last_sample_ns;
		w->last_sample_ns = time_ns;
		append_block(w, SREC_BLOCK_SAMPLE_TIMED_BY_FRAME, head, head_size, tail, tail_size);
		memcpy(w->blocks + time_at, &zero, sizeof(zero));
	} else {
		append_block(w, type, head, head_size, tail, tail_size);
	}
	if (w->repack)
		log_block(w, type, head, head_size, tail, tail_size);
	if (w->blocks_len + times_block_size(w->times_len) >= SREC_FRAME_TARGET)
		return recording_writer_flush(w);
	return 0;
}

/* Compresses blocks (len bytes) into one frame at zstd level `level` and writes it. The writer's thread's,
 * once it has one. */
/*
 * try_min_match: a frame of at most this many bytes written at level 19 or more by a writer that may take the
 * time (w->try_min_match, the rewrite at close) is compressed a second time with zstd's minimum match 4 instead
 * of level 19's 3 for such sizes, and the smaller kept: 3-4% smaller for fp samples at 99 Hz (1 s: 1430 -> 1372
 * bytes, 1587 -> 1546), worse for dwarf ones (4848 -> 4968). Twice the time: 10-45 ms more for 1 s at 99 Hz.
 */
#define TRY_MIN_MATCH_MAX (128u << 10)

static int write_frame(struct recording_writer *w, const unsigned char *blocks, size_t len, int level)
{
	struct srec_frame_header fh = { .magic = SREC_FRAME_MAGIC };
	size_t bound = ZSTD_compressBound(len), n;

	GROW(w->compressed, w->compressed_cap, bound);
	ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, level);
	n = ZSTD_compress2(w->cctx, w->compressed, bound, blocks, len);
	if (ZSTD_isError(n)) {
		w->failed = 1;
		return error("cannot compress a frame of '%s': %s", w->path, ZSTD_getErrorName(n));
	}
	if (w->try_min_match && level >= 19 && len <= TRY_MIN_MATCH_MAX) {
		unsigned char *other = xmalloc(bound);
		size_t m;

		ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_minMatch, 4);
		m = ZSTD_compress2(w->cctx, other, bound, blocks, len);
		ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_minMatch, 0); /* the level's again */
		if (!ZSTD_isError(m) && m < n) {
			memcpy(w->compressed, other, m);
			n = m;
		}
		free(other);
	}
	fh.compressed_size = (uint32_t)n;
	fh.uncompressed_size = (uint32_t)len;
	fh.crc32 = libdeflate_crc32(0, w->compressed, n);
	if (write_all(w, &fh, sizeof(fh)) < 0 || write_all(w, w->compressed, n) < 0)
		return -1;
	return 0;
}

/*
 * The frames handed over and not yet written, oldest first. Bounded by FRAMES_MAX and, past one frame, by
 * BYTES_MAX: a disk slower than the recording makes the drain thread wait, as when it wrote them itself.
 * Written buffers come back as spares, so that a busy recording does not allocate a frame's buffer per frame.
 */
#define FRAMES_MAX 8
#define BYTES_MAX (32u << 20)

struct frame_buffer {
	unsigned char *data;
	size_t len, cap;
	int level; /* the zstd level to compress it at */
};

struct frame_thread {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t more, room;
	struct frame_buffer queue[FRAMES_MAX], spares[FRAMES_MAX];
	size_t head, count, bytes, spare_count;
	bool closing;
	/* adapt_level: bytes handed over in the window of a second now filling and in the one before it */
	uint64_t window_ns, last_window_ns; /* when they started (the thread's start at first) */
	uint64_t window_bytes, last_window_bytes;
};

static void *frame_writer(void *arg)
{
	struct recording_writer *w = arg;
	struct frame_thread *t = w->thread;

	pthread_mutex_lock(&t->lock);
	for (;;) {
		struct frame_buffer f;

		while (!t->count && !t->closing)
			pthread_cond_wait(&t->more, &t->lock);
		if (!t->count)
			break;
		f = t->queue[t->head];
		pthread_mutex_unlock(&t->lock);
		if (!w->failed)
			write_frame(w, f.data, f.len, f.level);
		pthread_mutex_lock(&t->lock);
		t->head = (t->head + 1) % FRAMES_MAX;
		t->count--;
		t->bytes -= f.len;
		if (t->spare_count < FRAMES_MAX)
			t->spares[t->spare_count++] = f;
		else
			free(f.data);
		pthread_cond_broadcast(&t->room);
	}
	pthread_mutex_unlock(&t->lock);
	return NULL;
}

int recording_writer_start_thread(struct recording_writer *w)
{
	struct frame_thread *t = xcalloc(1, sizeof(*t));

	pthread_mutex_init(&t->lock, NULL);
	pthread_cond_init(&t->more, NULL);
	pthread_cond_init(&t->room, NULL);
	t->window_ns = t->last_window_ns = clock_ns();
	w->thread = t;
	if (thread_start_without_signals(&t->thread, frame_writer, w) != 0) {
		w->thread = NULL;
		free(t);
		return -1;
	}
	return 0;
}

/*
 * adapt_level: the level for a frame of len bytes handed over now, by the rate over the last one to two
 * seconds. Not by the time since the last frame: the drain thread reads samples in batches (every 100 ms, or
 * when a quarter of the ring buffer waits), so frames close in bursts, a few milliseconds or a few hundred
 * apart at the same rate. A gap counts as 2 s at most, so that a burst after a pause goes down to level 3
 * within a few frames, and a frame's own bytes bound its cost: at level 19 it is at most 96 KB (~45 ms), at 10
 * at most 3 MB (~50 ms; a 256 KiB one ~3 ms).
 */
#define RATE_WINDOW_NS 1000000000ull

static int frame_level(struct recording_writer *w, size_t len)
{
	struct frame_thread *t = w->thread;
	uint64_t now = clock_ns(), span;

	if (now - t->window_ns >= RATE_WINDOW_NS) {
		t->last_window_ns = t->window_ns;
		t->last_window_bytes = t->window_bytes;
		t->window_ns = now;
		t->window_bytes = 0;
	}
	t->window_bytes += len;
	span = now - t->last_window_ns;
	if (span > 2 * RATE_WINDOW_NS)
		span = 2 * RATE_WINDOW_NS;
	if (span == 0)
		span = 1;
	return recording_writer_level_for_rate((double)(t->last_window_bytes + t->window_bytes) * 1e9 / (double)span);
}

/* Hands the frame collected to the writer's thread, and takes a spare buffer for the next. */
static void hand_over(struct recording_writer *w)
{
	struct frame_thread *t = w->thread;
	struct frame_buffer f = { .data = w->blocks, .len = w->blocks_len, .cap = w->blocks_cap };

	f.level = w->adapt_level ? frame_level(w, f.len) : COMPRESSION_LEVEL;
	pthread_mutex_lock(&t->lock);
	if (t->count == FRAMES_MAX || (t->count && t->bytes + f.len > BYTES_MAX))
		w->handover_waits++;
	while (t->count == FRAMES_MAX || (t->count && t->bytes + f.len > BYTES_MAX))
		pthread_cond_wait(&t->room, &t->lock);
	t->queue[(t->head + t->count) % FRAMES_MAX] = f;
	t->count++;
	t->bytes += f.len;
	if (t->spare_count) {
		struct frame_buffer spare = t->spares[--t->spare_count];

		w->blocks = spare.data;
		w->blocks_cap = spare.cap;
	} else {
		w->blocks = NULL;
		w->blocks_cap = 0;
	}
	pthread_cond_signal(&t->more);
	pthread_mutex_unlock(&t->lock);
}

/* Waits for every frame handed over to be written, and ends the writer's thread. */
static void stop_thread(struct recording_writer *w)
{
	struct frame_thread *t = w->thread;

	if (!t)
		return;
	pthread_mutex_lock(&t->lock);
	t->closing = true;
	pthread_cond_signal(&t->more);
	pthread_mutex_unlock(&t->lock);
	pthread_join(t->thread, NULL);
	for (size_t i = 0; i < t->spare_count; i++)
		free(t->spares[i].data);
	pthread_mutex_destroy(&t->lock);
	pthread_cond_destroy(&t->more);
	pthread_cond_destroy(&t->room);
	free(t);
	w->thread = NULL;
}

/*
 * Puts the frame's SAMPLE_TIMES block right after its FRAME block, before the samples it times (recording.h,
 * "Sample times in a column"): the deltas as 8 planes of bytes, least significant first. There, a block
 * that breaks later in the frame costs the samples before it nothing. make_room left room for it.
 */
static void insert_times(struct recording_writer *w)
{
	struct srec_block_header bh = { .type = SREC_BLOCK_SAMPLE_TIMES };
	struct srec_sample_times head = { .count = (uint32_t)w->times_len };
	size_t n = w->times_len, size = times_block_size(n);
	unsigned char *p;

	if (!n)
		return;
	bh.size = (uint32_t)(size - sizeof(bh));
	GROW(w->blocks, w->blocks_cap, w->blocks_len + size);
	p = w->blocks + FRAME_BLOCK_SIZE;
	memmove(p + size, p, w->blocks_len - FRAME_BLOCK_SIZE);
	memcpy(p, &bh, sizeof(bh));
	memcpy(p + sizeof(bh), &head, sizeof(head));
	p += sizeof(bh) + sizeof(head);
	for (size_t k = 0; k < 8; k++)
		for (size_t i = 0; i < n; i++)
			p[k * n + i] = (unsigned char)(w->times[i] >> (8 * k));
	w->blocks_len += size;
	w->block_count++;
	w->times_len = 0;
}

int recording_writer_flush(struct recording_writer *w)
{
	if (w->failed)
		return -1;
	if (w->blocks_len == 0)
		return 0;
	insert_times(w);
	if (w->thread)
		hand_over(w);
	else if (write_frame(w, w->blocks, w->blocks_len, w->level ? w->level : COMPRESSION_LEVEL) < 0)
		return -1;
	w->blocks_len = 0;
	w->frame_count++;
	return 0;
}

/* Frees w; a temporary file never committed is removed, so that no failure leaves one behind. */
static void writer_free(struct recording_writer *w)
{
	stop_thread(w);
	if (w->fd >= 0)
		close(w->fd);
	output_discard(&w->out);
	ZSTD_freeCCtx(w->cctx);
	free(w->blocks);
	free(w->times);
	free(w->log);
	free(w->compressed);
	free(w->path);
	memset(w, 0, sizeof(*w));
	w->fd = -1;
}

/*
 * The rewrite of recording_writer_close: w's blocks again, through a writer of its own that writes full frames
 * to a temporary file and renames it over w's (fsynced first: a crash leaves one file or the other, whole). At
 * the level the recorder's rate calls for, over the whole recording. Frames w wrote that its blocks need anyway
 * (one, or one per SREC_FRAME_TARGET) are not worth it.
 */
static void repack(struct recording_writer *w, uint64_t end_time_ns, const struct stat *written)
{
	struct recording_writer r;
	struct stat now;
	uint64_t span = clock_ns() - w->opened_ns + 1;
	int level = w->adapt_level ? recording_writer_level_for_rate((double)w->log_len * 1e9 / (double)span)
				   : COMPRESSION_LEVEL;

	if (!w->repack || !w->renamed || w->frame_count <= w->log_len / SREC_FRAME_TARGET + 1)
		return;
	/* Still the file written, not something put in its place since (which output_create could write through) */
	if (lstat(w->path, &now) < 0 || !S_ISREG(now.st_mode) || now.st_dev != written->st_dev ||
	    now.st_ino != written->st_ino)
		return;
	if (recording_writer_open_replacing(&r, w->path) < 0)
		return;
	r.level = level;
	r.try_min_match = 1;
	for (size_t off = 0; off < w->log_len;) {
		struct srec_block_header bh;

		memcpy(&bh, w->log + off, sizeof(bh));
		if (recording_writer_add(&r, bh.type, w->log + off + sizeof(bh), bh.size, NULL, 0) < 0)
			break;
		off += sizeof(bh) + ((bh.size + SREC_BLOCK_ALIGN - 1) & ~(size_t)(SREC_BLOCK_ALIGN - 1));
	}
	if (r.failed) {
		recording_writer_abandon(&r); /* never committed: the temporary file goes */
		warning("'%s' stays in the %llu frames it was recorded in", w->path, (unsigned long long)w->frame_count);
		return;
	}
	if (recording_writer_close(&r, end_time_ns) < 0)
		warning("'%s' stays in the %llu frames it was recorded in", w->path, (unsigned long long)w->frame_count);
	else
		debug("'%s' rewritten with full frames at zstd level %d: %zu bytes of blocks, recorded in %llu frames",
		      w->path, level, w->log_len, (unsigned long long)w->frame_count);
}

int recording_writer_close(struct recording_writer *w, uint64_t end_time_ns)
{
	struct srec_end end = { .time_ns = end_time_ns };
	struct stat written;
	int ret = 0;

	/* END counts the blocks before it, the FRAME block of a frame it starts included. */
	if (w->failed || make_room(w, sizeof(struct srec_block_header) + sizeof(end), false) < 0) {
		ret = -1;
	} else {
		insert_times(w); /* END stays the last block */
		end.blocks = w->block_count;
		append_block(w, SREC_BLOCK_END, &end, sizeof(end), NULL, 0);
		if (recording_writer_flush(w) < 0)
			ret = -1;
	}
	stop_thread(w); /* every frame written, or the error said */
	if (w->failed)
		ret = -1;
	if (ret == 0 && fsync(w->fd) < 0 && errno != EINVAL)
		ret = error("cannot sync '%s': %s", w->path, strerror(errno));
	if (ret == 0 && fstat(w->fd, &written) < 0)
		memset(&written, 0, sizeof(written)); /* no inode 0: not rewritten */
	if (ret == 0) {
		int fd = w->fd;

		w->fd = -1; /* closed even when close() fails: never close it twice */
		if (close(fd) < 0)
			ret = error("cannot close '%s': %s", w->path, strerror(errno));
	}
	if (ret == 0)
		ret = recording_writer_commit(w);
	if (ret == 0)
		repack(w, end_time_ns, &written);
	writer_free(w);
	return ret;
}

void recording_writer_abandon(struct recording_writer *w)
{
	if (!w->out.tmp) /* never committed: writer_free removes it and the file it replaces stays as it was */
		recording_writer_flush(w);
	writer_free(w);
}
