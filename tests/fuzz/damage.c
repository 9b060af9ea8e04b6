/*
 * damage.c — makes damaged variants of a recording for the damage campaign (tests/fuzz/damage-campaign.sh),
 * and says of each how many samples a reader must still salvage from it.
 *
 *   damage reframe IN OUT N        rewrites IN through recording_writer, N blocks a frame: a recording of this
 *                                  format (numbered frames) with many frames, from a checked-in one
 *   damage variants IN PREFIX COUNT SEED
 *                                  writes PREFIX-KIND-NNNN.rec variants of IN and prints one line per variant:
 *                                  path, kind, the fewest and the most samples a reader may read from it (the
 *                                  samples of every frame left intact; -1 -1 when the file header was hit and
 *                                  no promise holds), and 1 when the damage must be reported (exit status not 0)
 *
 * The variants: cuts at every kind of boundary (inside the file header, at and inside each frame header, at
 * each frame's end) and at random offsets; single bits flipped anywhere; frames removed, duplicated (next to
 * themselves and elsewhere) and swapped; a block's size made to run past its frame; a sample's depths, a
 * mapping's path size, a FILE's data size and a sample's register and stack counts made absurd (the frame
 * recompressed with a valid CRC, so that only the block checks can catch them).
 *
 * IN is walked here without stackrec's reader, which is what is under test: frames by their headers, blocks by
 * theirs, as docs/format.md describes.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "formats/recording.h"
#include "formats/recording_reader.h"
#include "formats/recording_writer.h"
#include "util.h"

struct block_info {
	size_t pos;	  /* in the frame's blocks */
	uint32_t type, size;
	bool sample;	  /* a SAMPLE a reader counts */
};

struct frame_info {
	size_t offset, end; /* of the frame header; one past the compressed bytes */
	unsigned char *blocks;
	size_t len;
	struct block_info *b;
	size_t nb;
	long samples;
};

struct input {
	unsigned char *file;
	size_t size, header_size;
	struct frame_info *f;
	size_t nf;
	long samples;
};

static uint64_t rng_state;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static size_t rnd_below(size_t n)
{
	return n ? (size_t)(rnd() % n) : 0;
}

static unsigned char *read_file(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = NULL;
	size_t cap = 0, n;

	if (!f) {
		perror(path);
		exit(2);
	}
	*size = 0;
	do {
		GROW(buf, cap, *size + 65536);
		n = fread(buf + *size, 1, cap - *size, f);
		*size += n;
	} while (n > 0);
	fclose(f);
	return buf;
}

static void write_file(const char *path, const void *a, size_t an, const void *b, size_t bn, const void *c, size_t cn)
{
	FILE *f = fopen(path, "wb");

	if (!f || fwrite(a, 1, an, f) != an || (bn && fwrite(b, 1, bn, f) != bn) || (cn && fwrite(c, 1, cn, f) != cn) ||
	    fclose(f) != 0) {
		perror(path);
		exit(2);
	}
}

/* A sample as the reader's rules take it (docs/format.md, SAMPLE). */
static bool valid_sample(const unsigned char *body, uint32_t size)
{
	struct srec_sample s;

	if (size < sizeof(s))
		return false;
	memcpy(&s, body, sizeof(s));
	return s.user_depth <= SREC_MAX_STACK_DEPTH && s.kernel_depth <= SREC_MAX_STACK_DEPTH &&
	       (size - sizeof(s)) / 8 >= (size_t)s.user_depth + s.kernel_depth;
}

/* Walks IN, which must be intact: every frame, decompressed, and its blocks. */
static void load(struct input *in, const char *path)
{
	struct srec_file_header h;
	size_t off;

	memset(in, 0, sizeof(*in));
	in->file = read_file(path, &in->size);
	if (in->size < sizeof(h)) {
		fprintf(stderr, "damage: '%s' is too short\n", path);
		exit(2);
	}
	memcpy(&h, in->file, sizeof(h));
	in->header_size = h.header_size;
	for (off = h.header_size; off + sizeof(struct srec_frame_header) <= in->size;) {
		struct srec_frame_header fh;
		struct frame_info *f;
		size_t n;

		memcpy(&fh, in->file + off, sizeof(fh));
		if (fh.magic != SREC_FRAME_MAGIC || fh.compressed_size > in->size - off - sizeof(fh) ||
		    fh.uncompressed_size > SREC_FRAME_MAX_UNCOMPRESSED) {
			fprintf(stderr, "damage: '%s' is not intact at offset %zu\n", path, off);
			exit(2);
		}
		in->f = xrealloc(in->f, (in->nf + 1) * sizeof(*in->f));
		f = &in->f[in->nf++];
		memset(f, 0, sizeof(*f));
		f->offset = off;
		f->end = off + sizeof(fh) + fh.compressed_size;
		f->blocks = xmalloc(fh.uncompressed_size + 1);
		n = ZSTD_decompress(f->blocks, fh.uncompressed_size + 1, in->file + off + sizeof(fh), fh.compressed_size);
		if (ZSTD_isError(n) || n != fh.uncompressed_size) {
			fprintf(stderr, "damage: '%s': the frame at %zu does not decompress\n", path, off);
			exit(2);
		}
		f->len = n;
		for (size_t pos = 0; pos + sizeof(struct srec_block_header) <= n;) {
			struct srec_block_header bh;
			size_t padded;

			memcpy(&bh, f->blocks + pos, sizeof(bh));
			padded = ((size_t)bh.size + 7) & ~(size_t)7;
			if (padded > n - pos - sizeof(bh))
				break;
			f->b = xrealloc(f->b, (f->nb + 1) * sizeof(*f->b));
			f->b[f->nb] = (struct block_info){ pos, bh.type, bh.size, false };
			/* 1.3 writes samples as SAMPLE_TIME_DELTA, 1.4 as SAMPLE_TIMED_BY_FRAME: a SAMPLE's body but
			 * for the time (1.4's in the frame's SAMPLE_TIMES, which comes before them) */
			if ((bh.type == SREC_BLOCK_SAMPLE || bh.type == SREC_BLOCK_SAMPLE_TIME_DELTA ||
			     bh.type == SREC_BLOCK_SAMPLE_TIMED_BY_FRAME) &&
			    valid_sample(f->blocks + pos + sizeof(bh), bh.size)) {
				f->b[f->nb].sample = true;
				f->samples++;
			}
			f->nb++;
			pos += sizeof(bh) + padded;
		}
		in->samples += f->samples;
		off = f->end;
	}
}

/* ---- reframe ---- */

struct reframe {
	struct recording_writer w;
	unsigned per_frame, in_frame;
	uint64_t end_ns;
};

static int reframe_block(void *ctx, uint32_t type, const void *body, uint32_t size)
{
	struct reframe *r = ctx;

	if (type == SREC_BLOCK_END) {
		struct srec_end end;

		recording_parse_end(body, size, &end);
		r->end_ns = end.time_ns;
		return 0;
	}
	if (recording_writer_add(&r->w, type, body, size, NULL, 0) < 0)
		return -1;
	if (++r->in_frame >= r->per_frame) {
		r->in_frame = 0;
		return recording_writer_flush(&r->w);
	}
	return 0;
}

static int reframe(const char *in_path, const char *out_path, unsigned per_frame)
{
	struct recording_reader reader;
	struct reframe r = { .per_frame = per_frame ? per_frame : 1 };

	if (recording_reader_open(&reader, in_path) < 0)
		return 2;
	if (recording_writer_open(&r.w, out_path) < 0)
		return 2;
	if (recording_reader_for_each(&reader, reframe_block, &r, RECORDING_WARN_SUMMARY) ||
	    recording_reader_report_damage(&reader)) {
		recording_writer_abandon(&r.w);
		return 2;
	}
	recording_reader_close(&reader);
	return recording_writer_close(&r.w, r.end_ns) < 0 ? 2 : 0;
}

/* ---- variants ---- */

static const char *prefix;
static unsigned serial;

static void emit(const char *kind, const void *a, size_t an, const void *b, size_t bn, const void *c, size_t cn,
		 long min, long max, int must_detect)
{
	char *path = xasprintf("%s-%s-%04u.rec", prefix, kind, serial++);

	write_file(path, a, an, b, bn, c, cn);
	printf("%s\t%s\t%ld\t%ld\t%d\n", path, kind, min, max, must_detect);
	free(path);
}

/* Samples of the frames before frame k. */
static long samples_before(const struct input *in, size_t k)
{
	long n = 0;

	for (size_t i = 0; i < k && i < in->nf; i++)
		n += in->f[i].samples;
	return n;
}

/* The file cut to `at` bytes: the frames wholly before the cut are intact. */
static void cut(const struct input *in, size_t at)
{
	size_t k = 0;

	while (k < in->nf && in->f[k].end <= at)
		k++;
	if (at < sizeof(struct srec_file_header))
		emit("cut", in->file, at, NULL, 0, NULL, 0, 0, 0, 1);
	else
		emit("cut", in->file, at, NULL, 0, NULL, 0, samples_before(in, k), samples_before(in, k), at < in->size);
}

/* The frame that holds file offset off, or in->nf (the file header). */
static size_t frame_at(const struct input *in, size_t off)
{
	for (size_t k = 0; k < in->nf; k++)
		if (off >= in->f[k].offset && off < in->f[k].end)
			return k;
	return in->nf;
}

static void flip(const struct input *in)
{
	size_t off = rnd_below(in->size);
	unsigned char *copy = xmalloc(in->size);
	size_t k = frame_at(in, off);

	memcpy(copy, in->file, in->size);
	copy[off] ^= (unsigned char)(1u << rnd_below(8));
	if (k == in->nf)
		emit("flip-header", copy, in->size, NULL, 0, NULL, 0, -1, -1, 0);
	else
		emit("flip", copy, in->size, NULL, 0, NULL, 0, in->samples - in->f[k].samples,
		     in->samples - in->f[k].samples, 1);
	free(copy);
}

static void remove_frame(const struct input *in, size_t k)
{
	long left = in->samples - in->f[k].samples;

	emit("remove", in->file, in->f[k].offset, in->file + in->f[k].end, in->size - in->f[k].end, NULL, 0, left, left,
	     1);
}

/*
 * Frame k copied to just before frame `before` (in->nf: at the end). Numbered frames: the copy is skipped, every
 * sample is read once. Without numbers the copy's samples may be read twice, but the damage is still found
 * (END's count), except for a copy of the last frame put after it: then nothing tells it from the original
 * whose END comes first, and its samples are read twice (the reader sees blocks after the END block).
 */
static void duplicate_frame(const struct input *in, size_t k, size_t before, bool numbered)
{
	size_t at = before < in->nf ? in->f[before].offset : in->size;
	size_t len = in->f[k].end - in->f[k].offset;
	unsigned char *copy = xmalloc(in->size + len);

	memcpy(copy, in->file, at);
	memcpy(copy + at, in->file + in->f[k].offset, len);
	memcpy(copy + at + len, in->file + at, in->size - at);
	emit("duplicate", copy, in->size + len, NULL, 0, NULL, 0, in->samples,
	     numbered ? in->samples : in->samples + in->f[k].samples, 1);
	free(copy);
}

/* Frames k and k+1 swapped: every sample is there. Only numbered frames tell. */
static void swap_frames(const struct input *in, size_t k, bool numbered)
{
	const struct frame_info *a = &in->f[k], *b = &in->f[k + 1];
	unsigned char *copy = xmalloc(in->size);
	size_t pos = a->offset;

	memcpy(copy, in->file, a->offset);
	memcpy(copy + pos, in->file + b->offset, b->end - b->offset);
	pos += b->end - b->offset;
	memcpy(copy + pos, in->file + a->offset, a->end - a->offset);
	pos += a->end - a->offset;
	memcpy(copy + pos, in->file + b->end, in->size - b->end);
	emit("swap", copy, in->size, NULL, 0, NULL, 0, in->samples, in->samples, numbered);
	free(copy);
}

/* Frame k with its blocks replaced by `blocks`, recompressed behind a frame header that checks out. */
static void emit_reencoded(const struct input *in, size_t k, const char *kind, const unsigned char *blocks, long min,
			   long max, int must_detect)
{
	struct srec_frame_header fh = { .magic = SREC_FRAME_MAGIC, .uncompressed_size = (uint32_t)in->f[k].len };
	size_t bound = ZSTD_compressBound(in->f[k].len), n;
	unsigned char *z = xmalloc(sizeof(fh) + bound);

	n = ZSTD_compress(z + sizeof(fh), bound, blocks, in->f[k].len, 3);
	if (ZSTD_isError(n)) {
		fprintf(stderr, "damage: cannot compress: %s\n", ZSTD_getErrorName(n));
		exit(2);
	}
	fh.compressed_size = (uint32_t)n;
	fh.crc32 = (uint32_t)crc32(0L, z + sizeof(fh), (uInt)n);
	memcpy(z, &fh, sizeof(fh));
	emit(kind, in->file, in->f[k].offset, z, sizeof(fh) + n, in->file + in->f[k].end, in->size - in->f[k].end, min,
	     max, must_detect);
	free(z);
}

/* Block j of frame k declares a size past its frame: it and the rest of the frame are lost. */
static void oversize_block(const struct input *in, size_t k, size_t j)
{
	const struct frame_info *f = &in->f[k];
	unsigned char *blocks = xmalloc(f->len);
	uint32_t sizes[] = { 0xffffffffu, 0x80000000u, (uint32_t)(f->len - f->b[j].pos - 7),
			     (uint32_t)(f->len - f->b[j].pos) };
	uint32_t size = sizes[rnd_below(ARRAY_SIZE(sizes))];
	long lost = 0;

	for (size_t i = j; i < f->nb; i++)
		lost += f->b[i].sample;
	memcpy(blocks, f->blocks, f->len);
	memcpy(blocks + f->b[j].pos + 4, &size, sizeof(size));
	emit_reencoded(in, k, "block-size", blocks, in->samples - lost, in->samples - lost, 1);
	free(blocks);
}

/*
 * A count inside block j of frame k made absurd: a sample's depths (the sample is refused), its register count
 * or stack size (the sample counts, its registers are refused), a mapping's path size, a FILE's data size.
 */
static void oversize_count(const struct input *in, size_t k, size_t j)
{
	const struct frame_info *f = &in->f[k];
	const struct block_info *b = &f->b[j];
	unsigned char *blocks = xmalloc(f->len), *body;
	long lost = 0;
	uint32_t big32 = rnd() & 1 ? 0xffffffffu : 0x10000u;
	uint16_t big16 = rnd() & 1 ? 0xffffu : SREC_MAX_STACK_DEPTH + 1;

	memcpy(blocks, f->blocks, f->len);
	body = blocks + b->pos + sizeof(struct srec_block_header);
	switch (b->type) {
	case SREC_BLOCK_SAMPLE:
	case SREC_BLOCK_SAMPLE_TIME_DELTA:
	case SREC_BLOCK_SAMPLE_TIMED_BY_FRAME: {
		struct srec_sample s;

		if (b->size < sizeof(s))
			goto none;
		memcpy(&s, body, sizeof(s));
		if (s.flags & SREC_SAMPLE_USER_REGS && rnd() & 1) {
			size_t at = sizeof(s) + 8 * ((size_t)s.user_depth + s.kernel_depth);

			if (at + sizeof(struct srec_user_regs) > b->size)
				goto none;
			if (rnd() & 1)
				memcpy(body + at + offsetof(struct srec_user_regs, stack_size), &big32, 4);
			else
				memcpy(body + at + offsetof(struct srec_user_regs, reg_count), &big16, 2);
		} else {
			memcpy(body + (rnd() & 1 ? offsetof(struct srec_sample, user_depth)
						 : offsetof(struct srec_sample, kernel_depth)),
			       &big16, 2);
			lost = b->sample;
		}
		break;
	}
	case SREC_BLOCK_MAPPING:
		if (b->size < sizeof(struct srec_mapping))
			goto none;
		memcpy(body + offsetof(struct srec_mapping, path_size), &big32, 4);
		break;
	case SREC_BLOCK_FILE: {
		uint64_t big64 = rnd() & 1 ? UINT64_MAX : (uint64_t)b->size;

		if (b->size < sizeof(struct srec_file))
			goto none;
		memcpy(body + offsetof(struct srec_file, data_size), &big64, 8);
		break;
	}
	default:
		goto none;
	}
	emit_reencoded(in, k, "count", blocks, in->samples - lost, in->samples - lost, 1);
none:
	free(blocks);
}

static int variants(const char *in_path, unsigned count, uint64_t seed)
{
	struct input in;
	bool numbered;
	unsigned made;

	load(&in, in_path);
	rng_state = seed ? seed : 88172645463325252ull;
	numbered = in.nf && in.f[0].nb && in.f[0].b[0].type == SREC_BLOCK_FRAME;
	/* Every kind of boundary, once each: inside the file header, each frame header, each frame's end. */
	cut(&in, 0);
	cut(&in, 8);
	cut(&in, sizeof(struct srec_file_header) - 1);
	cut(&in, in.header_size);
	for (size_t k = 0; k < in.nf; k++) {
		cut(&in, in.f[k].offset + 4);
		cut(&in, in.f[k].offset + sizeof(struct srec_frame_header));
		cut(&in, in.f[k].end - 1);
		remove_frame(&in, k);
		duplicate_frame(&in, k, k + 1 < in.nf ? k + 1 : in.nf, numbered);
		if (k + 1 < in.nf)
			swap_frames(&in, k, numbered);
	}
	/* Then at random, up to COUNT in all. */
	for (made = serial; made < count; made = serial) {
		size_t k = rnd_below(in.nf), r = rnd_below(100);

		if (!in.nf || r < 25) {
			cut(&in, rnd_below(in.size));
		} else if (r < 55) {
			flip(&in);
		} else if (r < 62) {
			remove_frame(&in, k);
		} else if (r < 69) {
			duplicate_frame(&in, k, rnd_below(in.nf + 1), numbered);
		} else if (r < 74 && in.nf > 1) {
			swap_frames(&in, rnd_below(in.nf - 1), numbered);
		} else if (r < 87 && in.f[k].nb) {
			oversize_block(&in, k, rnd_below(in.f[k].nb));
		} else if (in.f[k].nb) {
			oversize_count(&in, k, rnd_below(in.f[k].nb));
		}
	}
	for (size_t k = 0; k < in.nf; k++) {
		free(in.f[k].blocks);
		free(in.f[k].b);
	}
	free(in.f);
	free(in.file);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "reframe"))
		return reframe(argv[2], argv[3], (unsigned)strtoul(argv[4], NULL, 10));
	if (argc == 6 && !strcmp(argv[1], "variants")) {
		prefix = argv[3];
		return variants(argv[2], (unsigned)strtoul(argv[4], NULL, 10), strtoull(argv[5], NULL, 10));
	}
	fprintf(stderr, "usage: damage reframe IN OUT BLOCKS_PER_FRAME\n"
			"       damage variants IN PREFIX COUNT SEED\n");
	return 2;
}
