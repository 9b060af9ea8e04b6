/*
 * fuzz-convert.c — libFuzzer target for `stackrec convert` as a whole: whatever a recording holds, converting it
 * to any format must neither crash, leak nor read out of bounds, and must end with a documented status (0, 1
 * nothing written, 3 partial). The reader has its own target (fuzz-recording.c), the unwinder, the symbol cache
 * and each file parser theirs; this one reaches what lies between: convert.c's handling of every block (HOST's
 * keys and values, mappings, tasks, samples, kallsyms, embedded files), the probe context (enrich.c: PROBE and
 * PROBE_HIT blocks, events), the aggregation and every writer (formats/, the JSON writer among them).
 *
 * Each input runs cmd_convert in this process, its format and options chosen by the input's last byte, with
 * --symfs fixtures/sysroot and --debug-dir fixtures/debug, as the damage campaign converts (so the fixture
 * recordings that seed it find their binaries, and nothing of this machine is read), --no-cache and -j 1 (no
 * thread, no file written but to /dev/null). Inputs are tried as fuzz-recording.c tries them: as the file, with
 * the frames' CRCs set right, and a raw block stream ("SRBLOCKS...") wrapped into a valid file.
 *
 * Built by `make fuzz-convert-build`; tests/t0005-fuzz-parsers.sh replays the fixture recordings and fuzzes briefly.
 */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "tests/fuzz/fuzz-input.h"

#ifndef FUZZ_FIXTURES_DIR
#define FUZZ_FIXTURES_DIR "fixtures"
#endif
#define BLOCKS_PREFIX "SRBLOCKS"

static int memfd = -1;
static char memfd_path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	memfd = fuzz_memfd("fuzz-convert.rec", memfd_path, sizeof(memfd_path));
	unsetenv("DEBUGINFOD_URLS"); /* nothing from the network */
	return 0;
}

static void convert_file(const void *data, size_t size, uint8_t choice)
{
	static const char *const formats[] = { "folded", "pprof", "speedscope", "d3", "trace", "report" };
	static const char *const kinds[] = { "on", "off", "wall", NULL };
	char *argv[32];
	int argc = 0, status;

	fuzz_memfd_fill(memfd, data, size);
	argv[argc++] = "convert";
	argv[argc++] = memfd_path;
	argv[argc++] = "-f";
	argv[argc++] = (char *)formats[choice % 6];
	argv[argc++] = "-o";
	argv[argc++] = getenv("FUZZ_CONVERT_OUT") ? getenv("FUZZ_CONVERT_OUT") : "/dev/null"; /* to look at */
	argv[argc++] = "--no-cache";
	argv[argc++] = "-j";
	argv[argc++] = "1";
	argv[argc++] = "--symfs";
	argv[argc++] = FUZZ_FIXTURES_DIR "/sysroot";
	argv[argc++] = "--debug-dir";
	argv[argc++] = FUZZ_FIXTURES_DIR "/debug";
	if (kinds[(choice >> 3) & 3]) {
		argv[argc++] = "--kind";
		argv[argc++] = (char *)kinds[(choice >> 3) & 3];
	}
	if (choice & 0x20) {
		argv[argc++] = "--tid";
		argv[argc++] = "--annotate";
		argv[argc++] = "--addrs";
		argv[argc++] = "--thread-names";
	}
	if (choice & 0x40)
		argv[argc++] = "--explain";
	if (choice & 0x80)
		argv[argc++] = "--all-events";
	argv[argc] = NULL;
	optind = 0; /* getopt starts over for each input */
	status = cmd_convert(argc, argv);
	ASSERT(status == 0 || status == 1 || status == 3);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t choice = size ? data[size - 1] : 0;
	unsigned char *copy;

	if (size >= sizeof(BLOCKS_PREFIX) - 1 && !memcmp(data, BLOCKS_PREFIX, sizeof(BLOCKS_PREFIX) - 1)) {
		size_t file_size;
		unsigned char *file = fuzz_wrap_blocks(data + sizeof(BLOCKS_PREFIX) - 1,
						       size - (sizeof(BLOCKS_PREFIX) - 1), &file_size);

		convert_file(file, file_size, choice);
		free(file);
		return 0;
	}
	convert_file(data, size, choice);
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	if (fuzz_fix_crcs(copy, size))
		convert_file(copy, size, choice);
	free(copy);
	return 0;
}
