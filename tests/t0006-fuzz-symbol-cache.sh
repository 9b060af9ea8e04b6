#!/usr/bin/env bash
test_description='fuzz the symbol cache reader: replay the seed entries, then fuzz for a bounded time'
# The target is tests/fuzz/fuzz-symbol-cache.c, built by `make fuzz-symbol-cache-build` next to the unit tests (in
# the directory above $UNIT_DIR); skipped, with the reason, without clang's libFuzzer runtime. FUZZ_SECONDS
# (default 20) bounds the fuzzing; `make fuzz-symbol-cache` fuzzes for longer.
. "$(dirname "$0")/test-lib.sh"

fuzz_prereq
FUZZER=$BUILD_DIR/fuzz/fuzz-symbol-cache

test_expect_success FUZZER 'the fuzz target builds' '
	make -s -C "$SRC_DIR" OUT="$BUILD_DIR" CLANG="$CLANG" fuzz-symbol-cache-build &&
	test -x "$FUZZER"
'

test_expect_success FUZZER 'every seed entry reads without a crash' '
	"$FUZZER" "$TESTS"/fuzz/symbol-cache-corpus/*
'

test_expect_success FUZZER "fuzzing for $FUZZ_SECONDS seconds finds no crash" '
	mkdir corpus &&
	cp "$TESTS"/fuzz/symbol-cache-corpus/* corpus/ &&
	"$FUZZER" -max_total_time="$FUZZ_SECONDS" -max_len=16384 -artifact_prefix="$TEST_DIR/" \
		-print_final_stats=1 corpus
'

test_done
