#!/usr/bin/env bash
test_description='fuzz the offline unwinder: replay the seed corpus, then fuzz for a bounded time'
# The target is tests/fuzz/fuzz-unwind.c, built by `make fuzz-unwind-build` next to the unit tests (in the
# directory above $UNIT_DIR). It walks fuzzed registers and stack bytes with the CFI of fixtures/bin/unwind.
# It needs clang's libFuzzer runtime (Debian: libclang-rt-14-dev); without it the tests are skipped with that
# reason. FUZZ_SECONDS (default 20) bounds the fuzzing; `make fuzz-unwind` fuzzes for longer.
. "$(dirname "$0")/test-lib.sh"

fuzz_prereq
FUZZER=$BUILD_DIR/fuzz/fuzz-unwind

test_expect_success FUZZER 'the fuzz target builds' '
	make -s -C "$SRC_DIR" OUT="$BUILD_DIR" CLANG="$CLANG" fuzz-unwind-build &&
	test -x "$FUZZER"
'

test_expect_success FUZZER 'every seed of the corpus unwinds without a crash' '
	"$FUZZER" "$TESTS"/fuzz/unwind-corpus/*
'

# What the harness sets up is what convert would: a seed from fixtures/unwind.rec crosses through_nocfi by its
# frame pointer (method 1) between CFI steps (2) up to main; one from deep.rec ends at its cut copy. (The
# frames above main are in this machine's libc, which may not be the recording's: not checked.)
test_expect_success FUZZER 'the seeds from the recordings unwind as convert unwinds them' '
	FUZZ_UNWIND_VERBOSE=1 "$FUZZER" "$TESTS"/fuzz/unwind-corpus/unwind-1.bin "$TESTS"/fuzz/unwind-corpus/deep-2.bin 2>err &&
	grep "^fuzz-unwind: [0-9]* frames, complete: 0x5575d3ace363/5 0x5575d3ace309/2 0x5575d3ace39c/2 0x5575d3ace25b/1 " err &&
	grep "^fuzz-unwind: 33 frames, truncated, stack copy too small: 0x560fe9347363/5 0x560fe93472ed/2 " err
'

# The edge-* seeds (tests/fuzz/unwind-edge-seeds.py) cut the copy where the first (s1) or second (s2) CFI step
# of unwind-1.bin's walk reads its saved rbp and return address, both steps by a rule's plan: at the end of
# those words the step is made, a byte or a word before it the walk ends there, truncated in a cut copy and
# complete at the top of a whole one. The replay above compared each walk by plans with the general way's.
test_expect_success FUZZER 'the edge seeds reach the planned steps they were cut for' '
	for seed in s1-end:2 s1-byte:1 s1-word:1 s2-end:3 s2-byte:2 s2-word:2; do
		frames=${seed#*:} seed=${seed%:*} &&
		FUZZ_UNWIND_VERBOSE=1 "$FUZZER" "$TESTS/fuzz/unwind-corpus/edge-$seed.bin" 2>err &&
		grep -q "^fuzz-unwind: $frames frames, truncated, stack copy too small: 0x5575d3ace363/5" err &&
		FUZZ_UNWIND_VERBOSE=1 "$FUZZER" "$TESTS/fuzz/unwind-corpus/edge-$seed-whole.bin" 2>err &&
		grep -q "^fuzz-unwind: $frames frames, complete: 0x5575d3ace363/5" err || { cat err; echo "# edge-$seed"; return 1; }
	done
'

test_expect_success FUZZER "fuzzing for $FUZZ_SECONDS seconds finds no crash" '
	mkdir corpus &&
	cp "$TESTS"/fuzz/unwind-corpus/* corpus/ &&
	"$FUZZER" -max_total_time="$FUZZ_SECONDS" -max_len=8192 -dict="$TESTS/fuzz/fuzz-unwind.dict" \
		-artifact_prefix="$TEST_DIR/" \
		-print_final_stats=1 corpus
'

test_done
