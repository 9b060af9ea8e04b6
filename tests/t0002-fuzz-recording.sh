#!/usr/bin/env bash
test_description='fuzz the recording reader: replay the seed corpus, then fuzz for a bounded time'
# The target is tests/fuzz/fuzz-recording.c, built by `make fuzz-build` next to the unit tests (in the directory
# above $UNIT_DIR). It needs clang's libFuzzer runtime (Debian: libclang-rt-14-dev); without it the tests are
# skipped with that reason. FUZZ_SECONDS (default 20) bounds the fuzzing; `make fuzz` fuzzes for longer.
. "$(dirname "$0")/test-lib.sh"

CLANG=${CLANG:-clang}
FUZZ_SECONDS=${FUZZ_SECONDS:-20}
BUILD_DIR=$(cd "$UNIT_DIR/.." 2>/dev/null && pwd || echo "$SRC_DIR/build")
FUZZER=$BUILD_DIR/fuzz/fuzz-recording

printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
	'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }' >probe.c
if ! command -v "$CLANG" >/dev/null; then
	test_unset_prereq FUZZER "no $CLANG"
elif "$CLANG" -fsanitize=fuzzer,address,undefined probe.c -o probe 2>probe.err; then
	test_set_prereq FUZZER
else
	test_unset_prereq FUZZER "$CLANG cannot link -fsanitize=fuzzer: clang's libFuzzer runtime is not installed (apt-get install libclang-rt-14-dev)"
fi

test_expect_success FUZZER 'the fuzz target builds' '
	make -s -C "$SRC_DIR" OUT="$BUILD_DIR" CLANG="$CLANG" fuzz-build &&
	test -x "$FUZZER"
'

test_expect_success FUZZER 'every seed of the corpus reads without a crash' '
	"$FUZZER" -close_fd_mask=2 "$TESTS"/fuzz/corpus/*
'

test_expect_success FUZZER "fuzzing for $FUZZ_SECONDS seconds finds no crash" '
	mkdir corpus &&
	cp "$TESTS"/fuzz/corpus/* corpus/ &&
	"$FUZZER" -max_total_time="$FUZZ_SECONDS" -close_fd_mask=2 -max_len=16384 \
		-dict="$TESTS/fuzz/fuzz-recording.dict" -artifact_prefix="$TEST_DIR/" -print_final_stats=1 corpus
'

test_done
