/*
 * unwind-seeds.c — writes seeds for fuzz-unwind.c from a real recording: what COUNT of its dwarf-mode samples
 * carry after their IPs (struct srec_user_regs, the registers, the stack bytes), one file each, spread over
 * the recording.
 *
 *   unwind-seeds RECORDING COUNT PREFIX      writes PREFIX-1.bin ... PREFIX-COUNT.bin
 *
 * `make fuzz-unwind-seeds` runs it on fixtures/unwind.rec and fixtures/deep.rec into tests/fuzz/unwind-corpus/.
 */
#include <stdio.h>
#include <stdlib.h>

#include "formats/recording.h"
#include "formats/recording_reader.h"

struct seeds {
	unsigned long wanted, every, seen, written;
	const char *prefix;
	int failed;
};

static int count_samples(void *ctx, uint32_t type, const void *body, uint32_t size)
{
	struct srec_sample s;
	struct srec_user_regs h;
	const uint64_t *ips, *regs;
	const uint8_t *stack;

	if (type == SREC_BLOCK_SAMPLE && recording_parse_sample(body, size, &s, &ips) == 0 &&
	    recording_parse_user_regs(body, size, &s, &h, &regs, &stack) == 0)
		((struct seeds *)ctx)->seen++;
	return 0;
}

static int write_seed(void *ctx, uint32_t type, const void *body, uint32_t size)
{
	struct seeds *seeds = ctx;
	struct srec_sample s;
	struct srec_user_regs h;
	const uint64_t *ips, *regs;
	const uint8_t *stack;
	char path[4096];
	FILE *f;

	if (type != SREC_BLOCK_SAMPLE || recording_parse_sample(body, size, &s, &ips) != 0 ||
	    recording_parse_user_regs(body, size, &s, &h, &regs, &stack) != 0)
		return 0;
	if (seeds->seen++ % seeds->every || seeds->written == seeds->wanted)
		return 0;
	snprintf(path, sizeof(path), "%s-%lu.bin", seeds->prefix, ++seeds->written);
	f = fopen(path, "wb");
	if (!f || fwrite(&h, sizeof(h), 1, f) != 1 ||
	    (h.reg_count && fwrite(regs, sizeof(*regs), h.reg_count, f) != h.reg_count) ||
	    (h.stack_size && fwrite(stack, 1, h.stack_size, f) != h.stack_size) || fclose(f) != 0) {
		fprintf(stderr, "unwind-seeds: cannot write '%s'\n", path);
		seeds->failed = 1;
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct recording_reader r;
	struct seeds seeds = { 0 };

	if (argc != 4 || (seeds.wanted = strtoul(argv[2], NULL, 10)) == 0) {
		fprintf(stderr, "usage: unwind-seeds RECORDING COUNT PREFIX\n");
		return 2;
	}
	seeds.prefix = argv[3];
	if (recording_reader_open(&r, argv[1]) < 0)
		return 1;
	recording_reader_for_each(&r, count_samples, &seeds, RECORDING_WARN_SUMMARY);
	if (seeds.seen == 0) {
		fprintf(stderr, "unwind-seeds: '%s' has no sample with registers\n", argv[1]);
		recording_reader_close(&r);
		return 1;
	}
	seeds.every = seeds.seen / seeds.wanted ? seeds.seen / seeds.wanted : 1;
	seeds.seen = 0;
	recording_reader_for_each(&r, write_seed, &seeds, RECORDING_WARN_SUMMARY);
	recording_reader_close(&r);
	return seeds.failed;
}
