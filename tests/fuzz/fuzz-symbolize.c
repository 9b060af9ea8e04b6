/*
 * fuzz-symbolize.c — libFuzzer target for `stackrec symbolize`'s reading of addresses (convert/symbolize.c,
 * included here for its static functions): whatever bytes come on standard input, symbolize must neither
 * crash, leak nor read out of bounds, must end with status 0, and must read every address as strtoull base 16
 * does (bfd_scan_vma's reading, which addr2line users rely on), its fast path included.
 *
 * Each input is checked twice:
 *   - its first line, as parse_address and parse_hex_address read it, against strtoull;
 *   - the whole input as symbolize's standard input, with -e fixtures/bin/inline (its DWARF, inline chains)
 *     and the flags the input's last byte chooses, --no-cache; the answers go to /dev/null.
 *
 * Built by `make fuzz-symbolize-build`; tests/t0005-fuzz-parsers.sh replays its seeds (tests/fuzz/
 * symbolize-corpus/) and fuzzes briefly.
 */
#include "convert/symbolize.c"

#include <fcntl.h>

#include "tests/fuzz/fuzz-input.h"

#ifndef FUZZ_FIXTURES_DIR
#define FUZZ_FIXTURES_DIR "fixtures"
#endif

static int input_fd = -1;
static char input_path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	int null = open("/dev/null", O_WRONLY | O_CLOEXEC);

	(void)argc, (void)argv;
	input_fd = fuzz_memfd("fuzz-symbolize.in", input_path, sizeof(input_path));
	if (null < 0 || dup2(null, STDOUT_FILENO) < 0) /* the answers: not the fuzzer's output */
		abort();
	close(null);
	unsetenv("DEBUGINFOD_URLS");
	return 0;
}

/* The first line of the input (up to 63 bytes) read both ways. */
static void check_parse(const uint8_t *data, size_t size)
{
	char text[64];
	size_t n = 0;
	uint64_t fast;
	const char *end;

	while (n < size && n < sizeof(text) - 1 && data[n] != '\n' && data[n] != '\0')
		n++;
	memcpy(text, data, n);
	text[n] = '\0';
	ASSERT(parse_address(text) == strtoull(text, NULL, 16));
	if (parse_hex_address(text, &fast, &end))
		ASSERT(fast == strtoull(text, NULL, 16) && end > text && end <= text + n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t choice = size ? data[size - 1] : 0;
	char *argv[16];
	int argc = 0, in;

	check_parse(data, size);
	fuzz_memfd_fill(input_fd, data, size);
	in = open(input_path, O_RDONLY | O_CLOEXEC); /* a new offset at 0 for each input */
	if (in < 0 || dup2(in, STDIN_FILENO) < 0)
		abort();
	close(in);
	argv[argc++] = "symbolize";
	argv[argc++] = "-e";
	argv[argc++] = FUZZ_FIXTURES_DIR "/bin/inline";
	argv[argc++] = "--no-cache";
	if (choice & 1)
		argv[argc++] = "-a";
	if (choice & 2)
		argv[argc++] = "-f";
	if (choice & 4)
		argv[argc++] = "-i";
	if (choice & 8)
		argv[argc++] = "-C";
	if (choice & 16)
		argv[argc++] = "--json";
	argv[argc] = NULL;
	optind = 0;
	ASSERT(cmd_symbolize(argc, argv) == 0);
	return 0;
}
