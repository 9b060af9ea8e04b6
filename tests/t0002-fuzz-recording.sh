#!/usr/bin/env bash
test_description='fuzz the recording reader: replay the seed corpus, then fuzz for a bounded time'
# The target is tests/fuzz/fuzz-recording.c, built by `make fuzz-build` next to the unit tests (in the directory
# above $UNIT_DIR). It needs clang's libFuzzer runtime (Debian: libclang-rt-14-dev); without it the tests are
# skipped with that reason. FUZZ_SECONDS (default 20) bounds the fuzzing; `make fuzz` fuzzes for longer.
. "$(dirname "$0")/test-lib.sh"

fuzz_prereq
FUZZER=$BUILD_DIR/fuzz/fuzz-recording

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
