/*
 * recording_reader.c — reads the block file described in recording.h, frame by frame, surviving damage:
 * a frame that fails any check is skipped and the next one found by its magic, so that a damaged recording
 * still yields every intact block.
 */
#include "recording_reader.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <libdeflate.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "../util.h"

#define RELEASE_CHUNK (1u << 20) /* give read pages back in steps of this many bytes */

int recording_reader_open(struct recording_reader *r, const char *path)
{
	struct stat st;
	int fd;

	memset(r, 0, sizeof(*r));
	/* O_NONBLOCK: a FIFO put in the recording's place (another user's, in a shared directory) is refused below,
	 * not waited on for a writer forever (info, convert, archive and --archive hung) */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return error("cannot open '%s': %s", path, strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return error("cannot read '%s': not a regular file", path);
	}
	if ((size_t)st.st_size < sizeof(struct srec_file_header)) {
		close(fd);
		return error("cannot read '%s': too short to be a stackrec recording (%lld bytes)", path,
			     (long long)st.st_size);
	}
	r->size = (size_t)st.st_size;
	r->map = mmap(NULL, r->size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (r->map == MAP_FAILED) {
		r->map = NULL;
		return error("cannot map '%s': %s", path, strerror(errno));
	}
	r->path = xstrdup(path);
	memcpy(&r->header, r->map, sizeof(r->header));
	if (memcmp(r->header.magic, SREC_FILE_MAGIC, sizeof(r->header.magic)) != 0) {
		error("'%s' is not a stackrec recording (bad magic)", path);
		goto fail;
	}
	if (r->header.byte_order != SREC_BYTE_ORDER_MARK) {
		error("'%s' was recorded on a machine of the other byte order, which this reader cannot read", path);
		goto fail;
	}
	if (r->header.version_major != SREC_VERSION_MAJOR) {
		error("'%s' has format version %u.%u; this stackrec reads version %u.x", path,
		      r->header.version_major, r->header.version_minor, SREC_VERSION_MAJOR);
		goto fail;
	}
	if (r->header.header_size < sizeof(struct srec_file_header) || r->header.header_size > r->size) {
		error("'%s' has a corrupt file header (header size %u)", path, r->header.header_size);
		goto fail;
	}
	r->dctx = ZSTD_createDCtx();
	if (!r->dctx) {
		error("cannot create a zstd context");
		goto fail;
	}
	return 0;
fail:
	recording_reader_close(r);
	return -1;
}

void recording_reader_close(struct recording_reader *r)
{
	recording_reader_forget(r);
	if (r->map)
		munmap((void *)r->map, r->size);
	ZSTD_freeDCtx(r->dctx);
	free(r->numbers.seen);
	free(r->path);
	memset(r, 0, sizeof(*r));
}

/* Offset of the next frame magic at or after `from`, or r->size. */
static size_t find_frame_magic(const struct recording_reader *r, size_t from)
{
	uint32_t magic = SREC_FRAME_MAGIC;

	for (size_t off = from; off + sizeof(magic) <= r->size; off++) {
		const unsigned char *hit = memchr(r->map + off, ((const unsigned char *)&magic)[0], r->size - off);

		if (!hit)
			break;
		off = (size_t)(hit - r->map);
		if (off + sizeof(magic) > r->size)
			break;
		if (memcmp(r->map + off, &magic, sizeof(magic)) == 0)
			return off;
	}
	return r->size;
}

/*
 * Turns the frame's SAMPLE_TIME_DELTA and SAMPLE_TIMED_BY_FRAME blocks back into SAMPLE blocks with absolute
 * times, in place (recording.h, "Sample times" and "Sample times in a column"), so that everything
 * after the decoding sees the SAMPLE blocks of 1.2. Walks the blocks as the pass will and stops where it would
 * find damage; the pass reports that. One too short to hold a time becomes a SAMPLE all the same, which the
 * pass finds too short to be one. A SAMPLE_TIMED_BY_FRAME block takes the next delta of the frame's first
 * SAMPLE_TIMES block before it; one without a delta stays as it is, and the pass counts it as damage.
 */
static void undo_time_deltas(unsigned char *bytes, size_t len)
{
	const unsigned char *planes = NULL; /* of the frame's first SAMPLE_TIMES block */
	size_t count = 0, next = 0;
	bool timed = false;
	uint64_t last = 0;

	for (size_t off = 0; len - off >= sizeof(struct srec_block_header);) {
		struct srec_block_header bh;
		size_t padded;

		memcpy(&bh, bytes + off, sizeof(bh));
		padded = ((size_t)bh.size + SREC_BLOCK_ALIGN - 1) & ~(size_t)(SREC_BLOCK_ALIGN - 1);
		if (padded > len - off - sizeof(bh))
			return;
		if (bh.type == SREC_BLOCK_SAMPLE_TIMES && !timed) {
			struct srec_sample_times head;

			timed = true; /* only the first counts, whole or not */
			if (bh.size >= sizeof(head)) {
				memcpy(&head, bytes + off + sizeof(bh), sizeof(head));
				if ((bh.size - sizeof(head)) / 8 >= head.count) {
					planes = bytes + off + sizeof(bh) + sizeof(head);
					count = head.count;
				}
			}
		}
		if (bh.type == SREC_BLOCK_SAMPLE_TIMED_BY_FRAME && next < count) {
			/* Its delta, gathered from the planes, goes where SAMPLE_TIME_DELTA has it. Written out: gcc kept
			 * the loop, 56 instructions a sample (35 now), as much as the rest of undoing the deltas. */
			const unsigned char *d = planes + next;
			uint64_t delta = (uint64_t)d[0] | (uint64_t)d[count] << 8 | (uint64_t)d[2 * count] << 16 |
					 (uint64_t)d[3 * count] << 24 | (uint64_t)d[4 * count] << 32 |
					 (uint64_t)d[5 * count] << 40 | (uint64_t)d[6 * count] << 48 |
					 (uint64_t)d[7 * count] << 56;

			next++;
			if (bh.size >= sizeof(delta))
				memcpy(bytes + off + sizeof(bh), &delta, sizeof(delta));
			bh.type = SREC_BLOCK_SAMPLE_TIME_DELTA;
		}
		if (bh.type == SREC_BLOCK_SAMPLE_TIME_DELTA || bh.type == SREC_BLOCK_SAMPLE) {
			unsigned char *body = bytes + off + sizeof(bh);
			uint64_t time_ns;

			if (bh.size >= sizeof(time_ns)) {
				memcpy(&time_ns, body, sizeof(time_ns));
				if (bh.type == SREC_BLOCK_SAMPLE_TIME_DELTA) {
					time_ns += last; /* modulo 2^64, as written */
					memcpy(body, &time_ns, sizeof(time_ns));
				}
				last = time_ns;
			}
			bh.type = SREC_BLOCK_SAMPLE;
			memcpy(bytes + off, &bh, sizeof(bh));
		}
		off += sizeof(bh) + padded;
	}
}

#define DOES_NOT_FIT (-2) /* decode_frame's answer for a frame larger than a buffer it may not grow */

/*
 * Checks and decompresses the frame at off into *buf with dctx: *buf is grown as needed, unless fixed (then a
 * frame larger than *cap is not decompressed: DOES_NOT_FIT). Returns its uncompressed size, or -1 with *why and
 * *kind set.
 */
static long long decode_frame(const struct recording_reader *r, void *dctx, unsigned char **buf, size_t *cap,
			      bool fixed, size_t off, const char **why, enum recording_damage_kind *kind,
			      size_t *frame_end)
{
	struct srec_frame_header fh;
	const unsigned char *payload;
	size_t n, room;

	if (r->size - off < sizeof(fh)) {
		*why = "file ends inside a frame header";
		*kind = RECORDING_DAMAGE_PAST_END;
		return -1;
	}
	memcpy(&fh, r->map + off, sizeof(fh));
	if (fh.magic != SREC_FRAME_MAGIC) {
		*why = "no frame magic";
		*kind = RECORDING_DAMAGE_GARBAGE;
		return -1;
	}
	if (fh.uncompressed_size > SREC_FRAME_MAX_UNCOMPRESSED) {
		*why = "frame size is impossible";
		*kind = RECORDING_DAMAGE_SIZE;
		return -1;
	}
	if (fh.compressed_size > r->size - off - sizeof(fh)) {
		*why = "file ends inside a frame";
		*kind = RECORDING_DAMAGE_PAST_END;
		return -1;
	}
	payload = r->map + off + sizeof(fh);
	*frame_end = off + sizeof(fh) + fh.compressed_size;
	/* libdeflate's CRC-32 is zlib's (the format's), with the CPU's carry-less multiply: zlib's was 4% of `info` */
	if (libdeflate_crc32(0, payload, fh.compressed_size) != fh.crc32) {
		*why = "frame checksum mismatch";
		*kind = RECORDING_DAMAGE_CRC;
		return -1;
	}
	if (fixed && fh.uncompressed_size > *cap)
		return DOES_NOT_FIT;
	if (!fixed)
		GROW(*buf, *cap, (size_t)fh.uncompressed_size + 1);
	/* Room for the declared size and one byte more, whatever the buffer holds: a frame that decompresses to
	 * more is found out the same way into any buffer (the kept mapping has no room to spare). */
	room = (size_t)fh.uncompressed_size + 1 < *cap ? (size_t)fh.uncompressed_size + 1 : *cap;
	n = ZSTD_decompressDCtx(dctx, *buf, room, payload, fh.compressed_size);
	if (ZSTD_isError(n) && ZSTD_getErrorCode(n) != ZSTD_error_dstSize_tooSmall) {
		*why = ZSTD_getErrorName(n);
		*kind = RECORDING_DAMAGE_ZSTD;
		return -1;
	}
	if (ZSTD_isError(n) || n != fh.uncompressed_size) {
		*why = "frame decompresses to the wrong size";
		*kind = RECORDING_DAMAGE_WRONG_SIZE;
		return -1;
	}
	undo_time_deltas(*buf, n);
	return (long long)n;
}

/*
 * Gives back the mapped pages of the file below `upto`, which a pass has read and will not touch again: file
 * pages stay in the process's resident set once touched, so without this a convert of a recording with
 * millions of samples would grow with the file instead of with its distinct stacks. They are re-read from
 * the page cache if a later pass needs them.
 */
static void release_pages_below(struct recording_reader *r, size_t *released, size_t upto)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), end = upto / page * page;

	if (end >= *released + RELEASE_CHUNK) {
		madvise((void *)(r->map + *released), end - *released, MADV_DONTNEED);
		*released = end;
	}
}

/* Counts one damaged frame (or stretch of garbage) of this kind at file offset off. */
static void count_damage(struct recording_damage *d, enum recording_damage_kind kind, size_t off)
{
	if (d->count[kind] < RECORDING_DAMAGE_FIRST)
		d->first[kind][d->count[kind]] = off;
	d->count[kind]++;
}

/* Adds n to the set of frame numbers read. Returns false when it was there already. */
static bool numbers_insert(struct recording_frame_numbers *f, uint64_t n)
{
	uint64_t key = n + 1; /* n is never UINT64_MAX: see check_frame */
	size_t mask, i;

	if (2 * (f->count + 1) > f->cap) {
		struct recording_frame_numbers grown = { .cap = f->cap ? 2 * f->cap : 64 };

		grown.seen = xcalloc(grown.cap, sizeof(*grown.seen));
		for (size_t j = 0; j < f->cap; j++)
			if (f->seen[j])
				numbers_insert(&grown, f->seen[j] - 1);
		free(f->seen);
		f->seen = grown.seen;
		f->cap = grown.cap;
	}
	mask = f->cap - 1;
	for (i = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 32) & mask; f->seen[i]; i = (i + 1) & mask)
		if (f->seen[i] == key)
			return false;
	f->seen[i] = key;
	f->count++;
	return true;
}

/*
 * The frame layer (recording.h, "Frame numbers") for the intact frame of len bytes at off, just decoded:
 * checks the number in its FRAME block against those read before. Returns false for a duplicate, which is
 * skipped whole.
 */
static bool check_frame(struct recording_reader *r, const unsigned char *bytes, size_t len, size_t off, bool each)
{
	struct recording_frame_numbers *f = &r->numbers;
	struct recording_damage *d = &r->damage;
	struct srec_block_header bh;
	struct srec_frame frame;
	uint64_t next;

	memset(&frame, 0, sizeof(frame));
	if (len >= sizeof(bh) + sizeof(frame)) {
		memcpy(&bh, bytes, sizeof(bh));
		memcpy(&frame, bytes + sizeof(bh), sizeof(frame));
	}
	if (len < sizeof(bh) + sizeof(frame) || bh.type != SREC_BLOCK_FRAME || bh.size < sizeof(frame) ||
	    bh.size > len - sizeof(bh) || frame.sequence == UINT64_MAX) {
		/* Damage only in a file whose other frames are numbered: said at the end of the pass. */
		count_damage(d, RECORDING_DAMAGE_UNNUMBERED, off);
		return true;
	}
	if (!numbers_insert(f, frame.sequence)) {
		count_damage(d, RECORDING_DAMAGE_DUPLICATE, off);
		if (each)
			warning("'%s': the frame at offset %zu is number %llu again; skipped", r->path, off,
				(unsigned long long)frame.sequence);
		return false;
	}
	next = d->numbered_frames++ ? f->max + 1 : 0;
	if (frame.sequence < next) {
		count_damage(d, RECORDING_DAMAGE_ORDER, off);
		if (each)
			warning("'%s': the frame at offset %zu is number %llu, after number %llu", r->path, off,
				(unsigned long long)frame.sequence, (unsigned long long)f->max);
	} else {
		/* Numbers skipped here are lost frames, unless damaged frames since the last one were them. */
		if (frame.sequence - next > f->bad_since) {
			if (f->gaps < RECORDING_DAMAGE_FIRST)
				d->first[RECORDING_DAMAGE_MISSING][f->gaps] = off;
			f->gaps++;
			if (each)
				warning("'%s': the frame at offset %zu is number %llu, expected %llu: %llu missing", r->path,
					off, (unsigned long long)frame.sequence, (unsigned long long)next,
					(unsigned long long)(frame.sequence - next - f->bad_since));
		}
		f->max = frame.sequence;
		f->bad_before_max = d->bad_frames;
	}
	f->bad_since = 0;
	return true;
}

/*
 * At the end of a pass: the frames missing, and END's count where nothing else explains a difference, when the
 * pass was whole (complete); a pass its callback stopped knows neither.
 */
static void finish_frames(struct recording_reader *r, bool complete)
{
	struct recording_frame_numbers *f = &r->numbers;
	struct recording_damage *d = &r->damage;

	if (!d->numbered_frames) {
		d->count[RECORDING_DAMAGE_UNNUMBERED] = 0; /* a file of format 1.1: no frame has a number */
		memset(d->first[RECORDING_DAMAGE_UNNUMBERED], 0, sizeof(d->first[RECORDING_DAMAGE_UNNUMBERED]));
	}
	if (!complete)
		return;
	if (d->numbered_frames) {
		uint64_t absent = f->max - (f->count - 1); /* numbers 0..max not read */

		d->count[RECORDING_DAMAGE_MISSING] = absent > f->bad_before_max ? absent - f->bad_before_max : 0;
	}
	/* A clean file has END's count of blocks before END, and none after it. */
	if (d->has_end && (d->end_blocks != d->blocks_before_end || d->blocks > d->blocks_before_end + 1) &&
	    !d->bad_frames && !d->bad_blocks) {
		bool explained = false;

		for (int kind = RECORDING_DAMAGE_MISSING; kind < RECORDING_DAMAGE_END_COUNT; kind++)
			explained |= d->count[kind] > 0;
		if (!explained)
			d->count[RECORDING_DAMAGE_END_COUNT] = 1;
	}
}

/*
 * Decoding ahead (r->decode_ahead). Decompression is a good part of a pass whose callback does real work
 * (convert's pass over the samples: a fifth of a warm conversion), and frames decode independently: so a
 * second thread decodes the frame after the one the pass is reading, into the other of two buffers. (For a
 * pass that only looks at the blocks, the pass would just wait for that thread: it decodes itself.) Where each frame starts follows
 * from the frame before it alone (its end when it decodes, else the next magic), so the thread walks the
 * same frames in the same order as the pass would, and the pass does everything else as before: the damage
 * and the blocks it sees do not depend on the thread. Memory: two frames (each at most
 * SREC_FRAME_MAX_UNCOMPRESSED) instead of one.
 */
struct decoded {
	size_t off, frame_end, next; /* next: where the frame after this one is looked for */
	long long len;		     /* decode_frame's answer, with why and kind when -1 */
	const char *why;
	enum recording_damage_kind kind;
	unsigned char *buf;
	size_t cap;
};

#define DECODE_AHEAD 2 /* buffers: the one read, the one decoded */

/*
 * A pass's decoded frames, kept for the passes after it (r->keep): decompressed straight into one mapping sized
 * from the frame headers (copying them there from the pass's buffer was a sixth of a warm fp conversion), in
 * huge pages where the kernel gives them (a page fault per 4 KiB cost as much as decoding did).
 */
struct recording_kept {
	unsigned char *map; /* the mapping, map_size bytes; bytes is its 2 MiB-aligned part */
	size_t map_size;
	unsigned char *bytes;
	size_t size, used;
	struct decoded *frames; /* each buf points into bytes */
	size_t count, cap;
};

#define KEEP_ALIGN (2u << 20) /* a huge page on x86-64 */

static struct recording_kept *kept_new(size_t size)
{
	struct recording_kept *kept = xcalloc(1, sizeof(*kept));
	uintptr_t start;

	kept->map_size = size + KEEP_ALIGN;
	kept->map = mmap(NULL, kept->map_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (kept->map == MAP_FAILED) {
		free(kept);
		return NULL; /* every pass decodes, as without r->keep */
	}
	start = ((uintptr_t)kept->map + KEEP_ALIGN - 1) & ~(uintptr_t)(KEEP_ALIGN - 1);
	kept->bytes = (unsigned char *)start;
	kept->size = size;
	madvise(kept->bytes, (size + KEEP_ALIGN - 1) & ~(size_t)(KEEP_ALIGN - 1), MADV_HUGEPAGE);
	return kept;
}

static void kept_free(struct recording_kept *kept)
{
	if (!kept)
		return;
	munmap(kept->map, kept->map_size);
	free(kept->frames);
	free(kept);
}

void recording_reader_forget(struct recording_reader *r)
{
	kept_free(r->kept);
	r->kept = NULL;
}

/*
 * What the frames of an intact file decode to in all (each rounded up to 8 bytes, as kept), from their
 * headers alone, when it is at most limit bytes; else 0. A file with damage is not kept: its frames are found
 * by their magic, not by their sizes.
 */
static size_t decoded_size(const struct recording_reader *r, size_t limit)
{
	size_t total = 0;

	for (size_t off = r->header.header_size; off < r->size;) {
		struct srec_frame_header fh;

		if (r->size - off < sizeof(fh))
			return 0;
		memcpy(&fh, r->map + off, sizeof(fh));
		if (fh.magic != SREC_FRAME_MAGIC || fh.compressed_size > r->size - off - sizeof(fh) ||
		    fh.uncompressed_size > SREC_FRAME_MAX_UNCOMPRESSED ||
		    ((fh.uncompressed_size + 7) & ~(size_t)7) > limit - total)
			return 0;
		total += (fh.uncompressed_size + 7) & ~(size_t)7;
		off += sizeof(fh) + fh.compressed_size;
	}
	return total;
}

struct decoder {
	struct recording_reader *r;
	void *dctx; /* the thread's own ZSTD_DCtx */
	pthread_t thread;
	bool threaded;
	pthread_mutex_t lock;
	pthread_cond_t changed;
	struct decoded slots[DECODE_AHEAD];
	const struct recording_kept *replay; /* the frames to hand out instead of decoding, or NULL */
	struct recording_kept *keeping;	     /* where this pass decodes its frames to keep them, or NULL */
	size_t produced, consumed; /* frames decoded, frames the pass is done with */
	size_t off;		   /* where the next frame to decode starts */
	bool finished, stop;
};

/*
 * Decodes the frame at d->off into slot's buffer; or, while keeping, into the kept mapping, as a kept frame,
 * which it returns. A frame that does not fit there (damage the headers did not show) ends the keeping.
 */
static struct decoded *decode_one(struct decoder *d, struct decoded *slot, void *dctx)
{
	const struct recording_reader *r = d->r;
	struct recording_kept *kept = d->keeping;
	struct decoded *f = slot;

	if (kept) {
		GROW(kept->frames, kept->cap, kept->count + 1);
		f = &kept->frames[kept->count];
		f->buf = kept->bytes + kept->used;
		f->cap = kept->size - kept->used;
	}
	f->off = d->off;
	f->why = NULL;
	f->kind = RECORDING_DAMAGE_GARBAGE;
	f->frame_end = 0;
	f->len = decode_frame(r, dctx, &f->buf, &f->cap, kept != NULL, d->off, &f->why, &f->kind, &f->frame_end);
	if (f->len == DOES_NOT_FIT) {
		kept_free(kept);
		d->keeping = NULL;
		return decode_one(d, slot, dctx);
	}
	f->next = f->len < 0 ? find_frame_magic(r, d->off + 1) : f->frame_end;
	d->off = f->next;
	if (kept) {
		kept->count++;
		f->cap = f->len > 0 ? (size_t)f->len : 0;
		kept->used += (f->cap + 7) & ~(size_t)7; /* blocks are read in place: 8-byte aligned, as in the slot */
	}
	return f;
}

static void *decode_ahead(void *arg)
{
	struct decoder *d = arg;

	pthread_mutex_lock(&d->lock);
	while (!d->stop && d->off < d->r->size) {
		struct decoded *slot;

		if (d->produced - d->consumed == DECODE_AHEAD) {
			pthread_cond_wait(&d->changed, &d->lock);
			continue;
		}
		slot = &d->slots[d->produced % DECODE_AHEAD];
		pthread_mutex_unlock(&d->lock);
		decode_one(d, slot, d->dctx);
		pthread_mutex_lock(&d->lock);
		d->produced++;
		pthread_cond_broadcast(&d->changed);
	}
	d->finished = true;
	pthread_cond_broadcast(&d->changed);
	pthread_mutex_unlock(&d->lock);
	return NULL;
}

static void decoder_start(struct decoder *d, struct recording_reader *r, size_t off, struct recording_kept *keeping)
{
	memset(d, 0, sizeof(*d));
	d->r = r;
	d->off = off;
	pthread_mutex_init(&d->lock, NULL);
	pthread_cond_init(&d->changed, NULL);
	d->replay = r->kept;
	d->keeping = keeping;
	if (d->replay)
		return; /* nothing to decode: no thread, no context */
	/* A pass that keeps its frames decodes them itself, one after the other, into the kept mapping. */
	d->dctx = r->decode_ahead && !keeping ? ZSTD_createDCtx() : NULL;
	/* Without a second context or thread, the pass decodes each frame itself (decoder_next). */
	d->threaded = r->decode_ahead && d->dctx && thread_start_without_signals(&d->thread, decode_ahead, d) == 0;
}

/* The next frame of the pass, decoded; NULL at the end of the file. Frees the one returned before. */
static struct decoded *decoder_next(struct decoder *d, bool first)
{
	struct decoded *slot;

	if (d->replay) {
		if (!first)
			d->consumed++;
		return d->consumed < d->replay->count ? &d->replay->frames[d->consumed] : NULL;
	}
	if (!d->threaded) {
		if (d->off >= d->r->size)
			return NULL;
		return decode_one(d, &d->slots[0], d->r->dctx);
	}
	pthread_mutex_lock(&d->lock);
	if (!first) {
		d->consumed++;
		pthread_cond_broadcast(&d->changed);
	}
	while (d->consumed == d->produced && !d->finished)
		pthread_cond_wait(&d->changed, &d->lock);
	slot = d->consumed == d->produced ? NULL : &d->slots[d->consumed % DECODE_AHEAD];
	pthread_mutex_unlock(&d->lock);
	return slot;
}

static void decoder_end(struct decoder *d)
{
	if (d->threaded) {
		pthread_mutex_lock(&d->lock);
		d->stop = true;
		pthread_cond_broadcast(&d->changed);
		pthread_mutex_unlock(&d->lock);
		pthread_join(d->thread, NULL);
	}
	for (size_t i = 0; i < DECODE_AHEAD; i++)
		free(d->slots[i].buf);
	kept_free(d->keeping); /* a pass stopped part way: it kept only part of the file */
	ZSTD_freeDCtx(d->dctx);
	pthread_cond_destroy(&d->changed);
	pthread_mutex_destroy(&d->lock);
}

int recording_reader_for_each(struct recording_reader *r, recording_block_fn fn, void *ctx, enum recording_warn warn)
{
	size_t released = 0;
	bool each = warn == RECORDING_WARN_EACH;
	struct recording_kept *keeping = NULL;
	struct decoder dec;
	struct decoded *f;
	size_t untimed; /* samples of the frame without their times */
	int ret = 0;

	memset(&r->damage, 0, sizeof(r->damage));
	free(r->numbers.seen);
	memset(&r->numbers, 0, sizeof(r->numbers));
	if (r->keep && !r->kept) {
		size_t size = decoded_size(r, RECORDING_KEEP_MAX);

		keeping = size ? kept_new(size) : NULL;
	}
	decoder_start(&dec, r, r->header.header_size, keeping);
	for (bool first = true; (f = decoder_next(&dec, first)); first = false) {
		enum recording_damage_kind kind = f->kind;
		size_t off = f->off, next = f->next;
		long long len = f->len;
		const unsigned char *frame = f->buf;

		if (len < 0) {
			/* Ending inside a frame with no frame after it is a cut, not corruption (docs/format.md). */
			if (next >= r->size && kind == RECORDING_DAMAGE_PAST_END) {
				kind = RECORDING_DAMAGE_TRUNCATED;
				r->damage.truncated = true;
			} else {
				r->damage.bad_frames++;
				r->numbers.bad_since++;
			}
			count_damage(&r->damage, kind, off);
			if (each)
				warning("'%s': damaged data at offset %zu (%s); skipped %zu bytes", r->path, off, f->why,
					next - off);
			r->damage.skipped_bytes += next - off;
			continue;
		}
		r->damage.frames++;
		if (!check_frame(r, frame, (size_t)len, off, each))
			continue;
		untimed = 0;
		for (size_t pos = 0; pos < (size_t)len;) {
			struct srec_block_header bh;
			size_t padded;

			if ((size_t)len - pos < sizeof(bh)) {
				r->damage.bad_blocks++;
				count_damage(&r->damage, RECORDING_DAMAGE_STRAY, off);
				if (each)
					warning("'%s': the frame at offset %zu ends in %zu stray bytes, too few for a block",
						r->path, off, (size_t)len - pos);
				break;
			}
			memcpy(&bh, frame + pos, sizeof(bh));
			padded = ((size_t)bh.size + SREC_BLOCK_ALIGN - 1) & ~(size_t)(SREC_BLOCK_ALIGN - 1);
			if (padded > (size_t)len - pos - sizeof(bh)) {
				r->damage.bad_blocks++;
				count_damage(&r->damage, RECORDING_DAMAGE_BLOCK, off);
				if (each)
					warning("'%s': block at offset %zu of the frame at %zu runs past its frame",
						r->path, pos, off);
				break;
			}
			if (bh.type == SREC_BLOCK_SAMPLE) { /* nearly every block: none of the questions below */
				r->damage.blocks++;
				ret = fn(ctx, bh.type, frame + pos + sizeof(bh), bh.size);
				if (ret)
					goto done;
				pos += sizeof(bh) + padded;
				continue;
			}
			if (bh.type == SREC_BLOCK_END && !r->damage.has_end) {
				struct srec_end end;

				/* A shorter END (format.md allows one) has no count to check. */
				recording_parse_end(frame + pos + sizeof(bh), bh.size, &end);
				r->damage.has_end = true;
				r->damage.end_blocks = bh.size >= sizeof(end) ? end.blocks : r->damage.blocks;
				r->damage.blocks_before_end = r->damage.blocks;
			}
			r->damage.blocks++;
			if (bh.type == SREC_BLOCK_SAMPLE_TIMED_BY_FRAME && !untimed++) {
				/* Left by undo_time_deltas: a sample whose time the frame does not hold. */
				count_damage(&r->damage, RECORDING_DAMAGE_UNTIMED, off);
				if (each)
					warning("'%s': the frame at offset %zu has samples without their times; "
						"they were skipped", r->path, off);
			}
			/* FRAME blocks are the frame layer's (check_frame), and SAMPLE_TIMES the decoding's
			 * (undo_time_deltas), not the caller's; a sample without its time is no sample. */
			if (bh.type != SREC_BLOCK_FRAME && bh.type != SREC_BLOCK_SAMPLE_TIMES &&
			    bh.type != SREC_BLOCK_SAMPLE_TIMED_BY_FRAME) {
				ret = fn(ctx, bh.type, frame + pos + sizeof(bh), bh.size);
				if (ret)
					goto done;
			}
			pos += sizeof(bh) + padded;
		}
		if (!dec.replay)
			release_pages_below(r, &released, f->frame_end);
	}
	finish_frames(r, true);
	if (dec.keeping) { /* a whole pass: the next ones read these */
		r->kept = dec.keeping;
		dec.keeping = NULL;
	}
done:
	decoder_end(&dec);
	if (ret)
		finish_frames(r, false);
	if (warn == RECORDING_WARN_SUMMARY)
		recording_reader_warn_damage(r);
	return ret;
}

/* What each kind of damage is called in a summary line: one, several. */
static const char *const damage_names[RECORDING_DAMAGE_KINDS][2] = {
	[RECORDING_DAMAGE_CRC] = { "frame with a bad CRC", "frames with a bad CRC" },
	[RECORDING_DAMAGE_GARBAGE] = { "stretch of bytes that is not a frame", "stretches of bytes that are not frames" },
	[RECORDING_DAMAGE_SIZE] = { "frame with an impossible size", "frames with an impossible size" },
	[RECORDING_DAMAGE_PAST_END] = { "frame whose size runs past the end of the file",
					"frames whose size runs past the end of the file" },
	[RECORDING_DAMAGE_ZSTD] = { "frame that does not decompress", "frames that do not decompress" },
	[RECORDING_DAMAGE_WRONG_SIZE] = { "frame that decompresses to the wrong size",
					  "frames that decompress to the wrong size" },
	[RECORDING_DAMAGE_BLOCK] = { "frame with a block running past its end",
				     "frames with a block running past their end" },
	[RECORDING_DAMAGE_STRAY] = { "frame ending in stray bytes", "frames ending in stray bytes" },
	[RECORDING_DAMAGE_TRUNCATED] = { "frame cut short by the end of the file",
					 "frames cut short by the end of the file" },
	[RECORDING_DAMAGE_MISSING] = { "frame missing", "frames missing" },
	[RECORDING_DAMAGE_UNTIMED] = { "frame with samples without their times",
				       "frames with samples without their times" },
	[RECORDING_DAMAGE_DUPLICATE] = { "frame read twice, the copy skipped", "frames read twice, the copies skipped" },
	[RECORDING_DAMAGE_ORDER] = { "frame out of order", "frames out of order" },
	[RECORDING_DAMAGE_UNNUMBERED] = { "frame without a frame number", "frames without a frame number" },
	[RECORDING_DAMAGE_END_COUNT] = { "end marker counting other blocks than were read", "" },
};

void recording_reader_warn_damage(const struct recording_reader *r)
{
	const struct recording_damage *d = &r->damage;

	for (int kind = 0; kind < RECORDING_DAMAGE_KINDS; kind++) {
		uint64_t n = d->count[kind], shown = n;
		const char *where = n > RECORDING_DAMAGE_FIRST ? "first at offsets" : n == 1 ? "at offset" : "at offsets";
		char offsets[RECORDING_DAMAGE_FIRST * 24 + 8];
		size_t len = 0;

		if (!n)
			continue;
		if (kind == RECORDING_DAMAGE_END_COUNT) {
			warning("'%s': the end marker counts %llu blocks before it, %llu were read before it and %llu after "
				"it: frames are missing or were read twice", r->path, (unsigned long long)d->end_blocks,
				(unsigned long long)d->blocks_before_end,
				(unsigned long long)(d->blocks - d->blocks_before_end - 1));
			continue;
		}
		if (kind == RECORDING_DAMAGE_MISSING) {
			/* Offsets of the frames their numbers jump to, not of the frames (which are not there). */
			shown = r->numbers.gaps;
			where = shown > 1 ? "numbers skipped before the frames at offsets" : "numbers skipped before the frame at offset";
			if (!shown) {
				warning("'%s': %llu %s", r->path, (unsigned long long)n, damage_names[kind][n != 1]);
				continue;
			}
		}
		for (uint64_t i = 0; i < shown && i < RECORDING_DAMAGE_FIRST; i++)
			len += (size_t)snprintf(offsets + len, sizeof(offsets) - len, "%s%llu", i ? ", " : "",
						(unsigned long long)d->first[kind][i]);
		if (shown > RECORDING_DAMAGE_FIRST)
			snprintf(offsets + len, sizeof(offsets) - len, ", ...");
		warning("'%s': %llu %s (%s %s)", r->path, (unsigned long long)n, damage_names[kind][n != 1], where, offsets);
	}
}

bool recording_reader_damaged(const struct recording_reader *r)
{
	const struct recording_damage *d = &r->damage;

	for (int kind = RECORDING_DAMAGE_MISSING; kind < RECORDING_DAMAGE_KINDS; kind++)
		if (d->count[kind])
			return true;
	return d->bad_frames || d->bad_blocks || d->truncated || !d->has_end;
}

bool recording_reader_report_damage(const struct recording_reader *r)
{
	const struct recording_damage *d = &r->damage;
	char more[256] = "";
	size_t len = 0;

	/* Frames lost, read twice or moved as a whole: each frame checks out by itself (see check_frame). */
	for (int kind = RECORDING_DAMAGE_MISSING; kind < RECORDING_DAMAGE_KINDS; kind++) {
		uint64_t n = d->count[kind];

		if (!n)
			continue;
		if (kind == RECORDING_DAMAGE_END_COUNT)
			len += (size_t)snprintf(more + len, sizeof(more) - len, ", the end marker counts %llu blocks before "
						"it, %llu were read before it and %llu after it",
						(unsigned long long)d->end_blocks, (unsigned long long)d->blocks_before_end,
						(unsigned long long)(d->blocks - d->blocks_before_end - 1));
		else
			len += (size_t)snprintf(more + len, sizeof(more) - len, ", %llu %s", (unsigned long long)n,
						damage_names[kind][n != 1]);
		if (len >= sizeof(more))
			len = sizeof(more) - 1;
	}
	if (d->bad_frames || d->bad_blocks || len) {
		error("'%s' is damaged: %llu of %llu frames unreadable, %llu frames ending in a broken block, %llu bytes "
		      "skipped%s%s; every intact block was read",
		      r->path, (unsigned long long)d->bad_frames, (unsigned long long)(d->frames + d->bad_frames),
		      (unsigned long long)d->bad_blocks, (unsigned long long)d->skipped_bytes, more,
		      d->truncated || !d->has_end ? ", no end marker" : "");
		return true;
	}
	if (d->truncated || !d->has_end) {
		error("'%s' is cut short (no end marker: was the recorder killed?); its %llu intact frames were read",
		      r->path, (unsigned long long)d->frames);
		return true;
	}
	return false;
}

/* Copies min(size, fixed) bytes of body into out and zero-fills the rest of out. */
static void copy_fixed(void *out, size_t fixed, const void *body, uint32_t size)
{
	size_t n = size < fixed ? size : fixed;

	memcpy(out, body, n);
	memset((char *)out + n, 0, fixed - n);
}

int recording_parse_sample(const void *body, uint32_t size, struct srec_sample *out, const uint64_t **ips)
{
	/* Samples have a variable tail at a fixed offset, so their fixed part never grows (see recording.h). */
	if (size < sizeof(*out))
		return -1;
	memcpy(out, body, sizeof(*out));
	if (out->user_depth > SREC_MAX_STACK_DEPTH || out->kernel_depth > SREC_MAX_STACK_DEPTH)
		return -1;
	if ((size - sizeof(*out)) / sizeof(uint64_t) < (size_t)out->user_depth + out->kernel_depth)
		return -1;
	*ips = (const uint64_t *)((const unsigned char *)body + sizeof(*out));
	return 0;
}

/*
 * The bits set in x, counted in place: without -mpopcnt __builtin_popcountll is a call into libgcc, and the call
 * made recording_parse_user_regs save and restore registers too, for every sample that kept its registers.
 */
static unsigned int bits_set(uint64_t x)
{
	x -= (x >> 1) & 0x5555555555555555ull;
	x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
	return (unsigned int)((x * 0x0101010101010101ull) >> 56);
}

int recording_parse_user_regs(const void *body, uint32_t size, const struct srec_sample *s, struct srec_user_regs *out,
			      const uint64_t **regs, const uint8_t **stack)
{
	size_t offset = sizeof(*s) + ((size_t)s->user_depth + s->kernel_depth) * sizeof(uint64_t);
	const unsigned char *p = body;

	if (!(s->flags & SREC_SAMPLE_USER_REGS))
		return 1;
	if (size < offset || size - offset < sizeof(*out))
		return -1;
	memcpy(out, p + offset, sizeof(*out));
	offset += sizeof(*out);
	if (out->stack_size > SREC_USER_STACK_MAX || out->reg_count > SREC_USER_REGS_MAX ||
	    bits_set(out->reg_mask) != out->reg_count ||
	    (size - offset) / sizeof(uint64_t) < out->reg_count)
		return -1;
	*regs = (const uint64_t *)(p + offset);
	offset += (size_t)out->reg_count * sizeof(uint64_t);
	if (size - offset < out->stack_size)
		return -1;
	*stack = p + offset;
	return 0;
}

/*
 * recording_parse_sample_event of a sample that has an event. Apart, so that the question asked of every sample,
 * whether it has one, costs no saving of the registers this takes (a third of its cost for a warm convert).
 */
static __attribute__((noinline)) int parse_event(const void *body, uint32_t size, const struct srec_sample *s,
						 struct srec_sample_event *out, const char **name)
{
	size_t offset = sizeof(*s) + ((size_t)s->user_depth + s->kernel_depth) * sizeof(uint64_t);
	const unsigned char *p = body;
	const char *n;

	if (s->flags & SREC_SAMPLE_USER_REGS) {
		struct srec_user_regs regs;
		const uint64_t *values;
		const uint8_t *stack;

		if (recording_parse_user_regs(body, size, s, &regs, &values, &stack) < 0)
			return -1;
		offset = (size_t)(stack - p) + regs.stack_size;
	}
	/* After stack bytes of any length the event need not be aligned: copied, never cast. */
	if (size < offset || size - offset < sizeof(*out))
		return -1;
	memcpy(out, p + offset, sizeof(*out));
	offset += sizeof(*out);
	if (out->name_size > SREC_EVENT_NAME_MAX || out->name_size > size - offset)
		return -1;
	n = (const char *)p + offset;
	if (out->name_size && n[out->name_size - 1] != '\0')
		return -1;
	*name = out->name_size ? n : "";
	return 0;
}

int recording_parse_sample_event(const void *body, uint32_t size, const struct srec_sample *s,
				 struct srec_sample_event *out, const char **name)
{
	if ((s->kind == SREC_SAMPLE_EVENT) != !!(s->flags & SREC_SAMPLE_EVENT_INFO))
		return -1;
	if (!(s->flags & SREC_SAMPLE_EVENT_INFO))
		return 1;
	return parse_event(body, size, s, out, name);
}

static const char *const arg_type_names[] = { [RECORDING_ARG_S64] = "s64", [RECORDING_ARG_U64] = "u64",
					       [RECORDING_ARG_PTR] = "ptr", [RECORDING_ARG_STR] = "str" };

const char *recording_arg_type_name(enum recording_arg_type type)
{
	return (size_t)type < ARRAY_SIZE(arg_type_names) ? arg_type_names[type] : "?";
}

/* The type named by the TYPE of an argument's "NAME:TYPE", or -1. */
static int arg_type(const char *type)
{
	for (size_t i = 0; i < ARRAY_SIZE(arg_type_names); i++)
		if (!strcmp(type, arg_type_names[i]))
			return (int)i;
	return -1;
}

int recording_parse_probe(const void *body, uint32_t size, struct recording_probe *out)
{
	const char *p, *end;

	memset(out, 0, sizeof(*out));
	if (size < sizeof(out->header))
		return -1;
	memcpy(&out->header, body, sizeof(out->header));
	if (out->header.arg_count > SREC_PROBE_ARGS_MAX || out->header.build_id_size > SREC_BUILD_ID_MAX ||
	    out->header.strings_size > size - sizeof(out->header))
		return -1;
	p = (const char *)body + sizeof(out->header);
	end = p + out->header.strings_size;
	/* binary, function, then one "NAME:TYPE" per argument: each string ends before `end` in a NUL. */
	for (uint32_t i = 0; i < 2 + out->header.arg_count; i++) {
		const char *nul = memchr(p, '\0', (size_t)(end - p)), *colon;
		int type;

		if (!nul || nul == p)
			return -1;
		if (i == 0) {
			out->binary = p;
		} else if (i == 1) {
			out->function = p;
		} else {
			struct recording_probe_arg *a = &out->args[i - 2];

			colon = memchr(p, ':', (size_t)(nul - p));
			if (!colon || colon == p || colon - p > RECORDING_ARG_NAME_MAX || (type = arg_type(colon + 1)) < 0)
				return -1;
			for (const char *c = p; c < colon; c++)
				if (!(*c == '_' || (*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'z') ||
				      (*c >= 'A' && *c <= 'Z')))
					return -1;
			a->name = p;
			a->name_len = (uint32_t)(colon - p);
			a->type = (enum recording_arg_type)type;
		}
		p = nul + 1;
	}
	return 0;
}

int recording_parse_probe_hit(const void *body, uint32_t size, struct srec_probe_hit *out, const uint64_t **values,
			      const uint8_t **strings)
{
	const unsigned char *p = body;
	size_t need;

	if (size < sizeof(*out))
		return -1;
	memcpy(out, body, sizeof(*out));
	if (out->value_count > SREC_PROBE_ARGS_MAX)
		return -1;
	need = sizeof(*out) + (size_t)out->value_count * sizeof(uint64_t) + out->strings_size;
	if (need > size)
		return -1;
	*values = (const uint64_t *)(p + sizeof(*out));
	*strings = p + sizeof(*out) + (size_t)out->value_count * sizeof(uint64_t);
	return 0;
}

int recording_split_hit_strings(const uint8_t *strings, uint32_t size, uint32_t count, const char **ptrs,
				uint32_t *lens, bool *cut)
{
	uint32_t off = 0;

	for (uint32_t i = 0; i < count; i++) {
		uint16_t len;

		if (size - off < sizeof(len))
			return -1;
		memcpy(&len, strings + off, sizeof(len)); /* packed: not aligned */
		off += sizeof(len);
		cut[i] = false;
		if (len == SREC_PROBE_STRING_UNREAD) {
			ptrs[i] = NULL;
			lens[i] = 0;
			continue;
		}
		if (len & SREC_PROBE_STRING_CUT) {
			/* only a full buffer is cut */
			len &= (uint16_t)~SREC_PROBE_STRING_CUT;
			if (len != SREC_PROBE_STRING_MAX - 1)
				return -1;
			cut[i] = true;
		}
		if (len > SREC_PROBE_STRING_MAX - 1 || len > size - off)
			return -1;
		ptrs[i] = (const char *)strings + off;
		lens[i] = len;
		off += len;
	}
	return off == size ? 0 : -1;
}

int recording_parse_process_metrics(const void *body, uint32_t size, struct srec_process_metrics *out)
{
	if (size < offsetof(struct srec_process_metrics, user_time_ns))
		return -1;
	copy_fixed(out, sizeof(*out), body, size);
	return 0;
}

int recording_parse_mapping(const void *body, uint32_t size, struct srec_mapping *out, const char **path)
{
	const char *p;

	if (size < sizeof(*out))
		return -1;
	memcpy(out, body, sizeof(*out));
	if (out->path_size == 0 || out->path_size > size - sizeof(*out))
		return -1;
	p = (const char *)body + sizeof(*out);
	if (p[out->path_size - 1] != '\0' || out->end < out->start || out->build_id_size > SREC_BUILD_ID_MAX)
		return -1;
	*path = p;
	return 0;
}

int recording_parse_file(const void *body, uint32_t size, struct srec_file *out, const char **path,
			 const void **data)
{
	const char *p;

	if (size < sizeof(*out))
		return -1;
	memcpy(out, body, sizeof(*out));
	if (out->path_size == 0 || out->path_size > size - sizeof(*out) ||
	    out->data_size != size - sizeof(*out) - out->path_size || out->build_id_size > SREC_BUILD_ID_MAX ||
	    out->data_offset > UINT64_MAX - out->data_size)
		return -1;
	p = (const char *)body + sizeof(*out);
	if (p[out->path_size - 1] != '\0')
		return -1;
	*path = p;
	*data = p + out->path_size;
	return 0;
}

int recording_parse_task(const void *body, uint32_t size, struct srec_task *out)
{
	if (size < offsetof(struct srec_task, comm))
		return -1;
	copy_fixed(out, sizeof(*out), body, size);
	out->comm[SREC_COMM_LEN - 1] = '\0';
	return 0;
}

int recording_parse_stats(const void *body, uint32_t size, struct srec_stats *out)
{
	copy_fixed(out, sizeof(*out), body, size);
	return 0;
}

int recording_parse_end(const void *body, uint32_t size, struct srec_end *out)
{
	copy_fixed(out, sizeof(*out), body, size);
	return 0;
}

void recording_parse_host(const void *body, uint32_t size, recording_host_fn fn, void *ctx)
{
	const char *p = body, *end = p + size;

	while (p < end) {
		const char *nul = memchr(p, '\0', (size_t)(end - p));
		const char *eq;
		char *key;

		if (!nul)
			return;
		eq = memchr(p, '=', (size_t)(nul - p));
		if (eq) {
			key = xstrndup(p, (size_t)(eq - p));
			fn(ctx, key, eq + 1);
			free(key);
		}
		p = nul + 1;
	}
}

const char *recording_block_name(uint32_t type)
{
	switch (type) {
	case SREC_BLOCK_HOST: return "host";
	case SREC_BLOCK_SAMPLE: return "sample";
	case SREC_BLOCK_TASK: return "task";
	case SREC_BLOCK_MAPPING: return "mapping";
	case SREC_BLOCK_KALLSYMS: return "kallsyms";
	case SREC_BLOCK_STATS: return "stats";
	case SREC_BLOCK_FILE: return "file";
	case SREC_BLOCK_END: return "end";
	case SREC_BLOCK_PROBE: return "probe";
	case SREC_BLOCK_PROBE_HIT: return "probe hit";
	case SREC_BLOCK_PROCESS_METRICS: return "process metrics";
	case SREC_BLOCK_FRAME: return "frame";
	case SREC_BLOCK_SAMPLE_TIMES: return "sample times";
	default: return NULL;
	}
}
