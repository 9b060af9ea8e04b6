/*
 * fuzz-recording.c — libFuzzer target for the recording reader (formats/recording_reader.c): whatever bytes a
 * file holds, opening it, walking its blocks and parsing every body must neither crash nor read out of bounds,
 * and what the parse helpers accept must be safe to use.
 *
 * Built and run by `make fuzz` (clang -fsanitize=fuzzer,address,undefined); tests/t0002-fuzz-recording.sh
 * replays the seed corpus tests/fuzz/corpus/ (written by `test-recording --write-corpus`) and fuzzes briefly.
 *
 * Random bytes rarely get past a frame's CRC-32, so every input is tried in up to two or three forms:
 *   - as the file itself;
 *   - again with the CRC of every frame header that fits in the input set right, so that mutations inside the
 *     compressed bytes reach zstd and the block walk;
 *   - input that starts with "SRBLOCKS" is a raw block stream: it is compressed into one valid frame behind a
 *     valid file header, so that the fuzzer works on blocks and bodies directly.
 * The file is written to a memfd and opened by its /proc path, through the same recording_reader_open() that
 * `stackrec convert` uses.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/recording.h"
#include "formats/recording_reader.h"
#include "tests/fuzz/fuzz-input.h"

#define BLOCKS_PREFIX "SRBLOCKS"

static int memfd = -1;
static char memfd_path[64];
static volatile uint64_t sink; /* keeps the reads below from being optimized away */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	memfd = fuzz_memfd("fuzz-recording.rec", memfd_path, sizeof(memfd_path));
	return 0;
}

static void host_cb(void *ctx, const char *key, const char *value)
{
	(void)ctx;
	sink += strlen(key) + strlen(value);
}

/* Every parse helper on every body, whatever its type; whatever they accept is used in full. */
static int visit(void *ctx, uint32_t type, const void *body, uint32_t size)
{
	const unsigned char *bytes = body;
	struct srec_sample sample;
	struct srec_mapping mapping;
	struct srec_task task;
	struct srec_stats stats;
	struct srec_end end;
	const uint64_t *ips;
	const char *path;

	(void)ctx;
	ASSERT((uintptr_t)body % SREC_BLOCK_ALIGN == 0);
	if (size)
		sink += bytes[0] + bytes[size - 1];
	sink += recording_block_name(type) != NULL;
	if (recording_parse_sample(body, size, &sample, &ips) == 0) {
		size_t depth = (size_t)sample.user_depth + sample.kernel_depth;

		ASSERT(sample.user_depth <= SREC_MAX_STACK_DEPTH && sample.kernel_depth <= SREC_MAX_STACK_DEPTH);
		ASSERT(sizeof(sample) + depth * sizeof(uint64_t) <= size);
		ASSERT((const unsigned char *)ips == bytes + sizeof(sample));
		for (size_t i = 0; i < depth; i++)
			sink += ips[i];
		{
			struct srec_user_regs regs;
			const uint64_t *values;
			const uint8_t *stack;

			if (recording_parse_user_regs(body, size, &sample, &regs, &values, &stack) == 0) {
				ASSERT(regs.stack_size <= SREC_USER_STACK_MAX && regs.reg_count <= SREC_USER_REGS_MAX);
				ASSERT((const unsigned char *)values + regs.reg_count * sizeof(uint64_t) == stack);
				ASSERT(stack + regs.stack_size <= bytes + size);
				for (size_t i = 0; i < regs.reg_count; i++)
					sink += values[i];
				if (regs.stack_size)
					sink += stack[regs.stack_size - 1];
			}
		}
		{
			struct srec_sample_event event;
			const char *name;

			if (recording_parse_sample_event(body, size, &sample, &event, &name) == 0) {
				ASSERT(sample.kind == SREC_SAMPLE_EVENT && (sample.flags & SREC_SAMPLE_EVENT_INFO));
				ASSERT(event.name_size <= SREC_EVENT_NAME_MAX);
				ASSERT(!event.name_size || ((const unsigned char *)name >= bytes + sizeof(sample) &&
							    (const unsigned char *)name + event.name_size <= bytes + size));
				ASSERT(strlen(name) < (event.name_size ? event.name_size : 1));
				sink += event.type + event.address;
			}
		}
	}
	{
		struct recording_probe probe;
		struct srec_probe_hit hit;
		struct srec_process_metrics metrics;
		const uint64_t *values;
		const uint8_t *strings;

		if (recording_parse_probe(body, size, &probe) == 0) {
			ASSERT(probe.header.arg_count <= SREC_PROBE_ARGS_MAX);
			ASSERT(probe.header.build_id_size <= SREC_BUILD_ID_MAX);
			ASSERT(probe.binary[0] && probe.function[0]);
			ASSERT((const unsigned char *)probe.function + strlen(probe.function) < bytes + size);
			for (uint32_t a = 0; a < probe.header.arg_count; a++) {
				ASSERT(probe.args[a].name_len >= 1 && probe.args[a].name_len <= RECORDING_ARG_NAME_MAX);
				ASSERT((const unsigned char *)probe.args[a].name + probe.args[a].name_len < bytes + size);
				ASSERT(probe.args[a].type <= RECORDING_ARG_STR);
				sink += (unsigned char)probe.args[a].name[probe.args[a].name_len - 1];
			}
			sink += strlen(probe.binary);
		}
		if (recording_parse_probe_hit(body, size, &hit, &values, &strings) == 0) {
			const char *ptrs[SREC_PROBE_ARGS_MAX];
			uint32_t lens[SREC_PROBE_ARGS_MAX];
			bool cut[SREC_PROBE_ARGS_MAX];

			ASSERT(hit.value_count <= SREC_PROBE_ARGS_MAX);
			ASSERT(strings + hit.strings_size <= bytes + size);
			for (uint32_t i = 0; i < hit.value_count; i++)
				sink += values[i];
			/* Any number of strings may be asked for: the split must stay inside the bytes. */
			for (uint32_t n = 0; n <= SREC_PROBE_ARGS_MAX; n++)
				if (recording_split_hit_strings(strings, hit.strings_size, n, ptrs, lens, cut) == 0)
					for (uint32_t i = 0; i < n; i++) {
						ASSERT(!cut[i] || lens[i] == SREC_PROBE_STRING_MAX - 1);
						ASSERT(!ptrs[i] ? !lens[i] : (const uint8_t *)ptrs[i] + lens[i] <= strings + hit.strings_size);
						ASSERT(lens[i] < SREC_PROBE_STRING_MAX);
						if (lens[i])
							sink += (unsigned char)ptrs[i][lens[i] - 1];
					}
		}
		if (recording_parse_process_metrics(body, size, &metrics) == 0)
			sink += metrics.rss_bytes + metrics.threads;
	}
	if (recording_parse_mapping(body, size, &mapping, &path) == 0) {
		ASSERT(mapping.path_size >= 1 && mapping.path_size <= size - sizeof(mapping));
		ASSERT(path == (const char *)bytes + sizeof(mapping));
		ASSERT(strlen(path) < mapping.path_size);
		ASSERT(mapping.build_id_size <= SREC_BUILD_ID_MAX && mapping.start <= mapping.end);
	}
	if (recording_parse_task(body, size, &task) == 0) {
		ASSERT(task.comm[SREC_COMM_LEN - 1] == '\0');
		sink += strlen(task.comm);
	}
	if (recording_parse_stats(body, size, &stats) == 0)
		sink += stats.samples;
	if (recording_parse_end(body, size, &end) == 0)
		sink += end.blocks;
	recording_parse_host(body, size, host_cb, NULL);
	return 0;
}

static void read_file(const void *data, size_t size)
{
	struct recording_reader r;

	fuzz_memfd_fill(memfd, data, size);
	if (recording_reader_open(&r, memfd_path) < 0)
		return;
	ASSERT(r.header.header_size >= sizeof(struct srec_file_header) && r.header.header_size <= r.size);
	/* Twice, as convert reads: the second pass reads the frames the first kept, and finds the same damage. */
	r.keep = true;
	ASSERT(recording_reader_for_each(&r, visit, NULL, RECORDING_WARN_NONE) == 0);
	{
		struct recording_damage first = r.damage;

		ASSERT(recording_reader_for_each(&r, visit, NULL, RECORDING_WARN_EACH) == 0);
		ASSERT(!memcmp(&first, &r.damage, sizeof(first)));
	}
	recording_reader_forget(&r);
	recording_reader_warn_damage(&r);
	ASSERT(r.damage.skipped_bytes <= r.size);
	/* Frame numbers: a duplicate or out-of-order frame is an intact one; END's count is of blocks read. */
	ASSERT(r.damage.count[RECORDING_DAMAGE_DUPLICATE] + r.damage.count[RECORDING_DAMAGE_ORDER] <= r.damage.frames);
	ASSERT(r.damage.numbered_frames + r.damage.count[RECORDING_DAMAGE_DUPLICATE] <= r.damage.frames);
	ASSERT(!r.damage.has_end || r.damage.blocks_before_end < r.damage.blocks);
	recording_reader_report_damage(&r);
	recording_reader_close(&r);
}

/* Wraps a raw block stream into a valid file: header, then one frame holding exactly those bytes. */
static void read_block_stream(const uint8_t *blocks, size_t len)
{
	size_t size;
	unsigned char *file = fuzz_wrap_blocks(blocks, len, &size);

	read_file(file, size);
	free(file);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char *copy;

	if (size >= strlen(BLOCKS_PREFIX) && memcmp(data, BLOCKS_PREFIX, strlen(BLOCKS_PREFIX)) == 0) {
		read_block_stream(data + strlen(BLOCKS_PREFIX), size - strlen(BLOCKS_PREFIX));
		return 0;
	}
	read_file(data, size);
	copy = malloc(size ? size : 1);
	if (!copy)
		abort();
	memcpy(copy, data, size);
	if (fuzz_fix_crcs(copy, size))
		read_file(copy, size);
	free(copy);
	return 0;
}
