#!/usr/bin/env bash
test_description='fuzz the parsers: perf maps, kallsyms, the archive reader, ELF and debug-file loading, the profile cache, convert as a whole, the addresses symbolize reads'
# The targets are tests/fuzz/fuzz-{jit-maps,kallsyms,archive,elf,profile-cache}.c, built by `make fuzz-NAME-build` next to
# the unit tests (in the directory above $UNIT_DIR), with clang's libFuzzer runtime (Debian:
# libclang-rt-14-dev; without it the tests are skipped with that reason). Each replays its seed corpus
# tests/fuzz/NAME-corpus/ (crash-* and leak-* seeds are inputs that once failed), then runs FUZZ_RUNS more
# inputs (default 1000) mutated from it. `make fuzz` fuzzes each for FUZZ_SECONDS.
. "$(dirname "$0")/test-lib.sh"

fuzz_prereq
FUZZ_RUNS=${FUZZ_RUNS:-1000}

for t in jit-maps kallsyms archive elf profile-cache; do
	test_expect_success FUZZER "fuzz-$t builds" '
		make -s -C "$SRC_DIR" OUT="$BUILD_DIR" CLANG="$CLANG" fuzz-$t-build &&
		test -x "$BUILD_DIR/fuzz/fuzz-$t"
	'
	test_expect_success FUZZER "fuzz-$t: every seed without a crash, a leak or a UBSan report" '
		"$BUILD_DIR/fuzz/fuzz-$t" -close_fd_mask=2 "$TESTS"/fuzz/$t-corpus/*
	'
	test_expect_success FUZZER "fuzz-$t: $FUZZ_RUNS mutated inputs without one" '
		mkdir -p corpus-$t &&
		cp "$TESTS"/fuzz/$t-corpus/* corpus-$t/ &&
		"$BUILD_DIR/fuzz/fuzz-$t" -runs="$FUZZ_RUNS" -seed=1 -close_fd_mask=2 -max_len=65536 \
			-artifact_prefix="$TEST_DIR/$t-" -print_final_stats=1 corpus-$t
	'
done

# convert as a whole (tests/fuzz/fuzz-convert.c), seeded by the fixture recordings (fixtures/*.rec): every block's
# handling, the probe context, every writer.
test_expect_success FUZZER "fuzz-convert builds" '
	make -s -C "$SRC_DIR" OUT="$BUILD_DIR" CLANG="$CLANG" fuzz-convert-build &&
	test -x "$BUILD_DIR/fuzz/fuzz-convert"
'
test_expect_success FUZZER "fuzz-convert: every fixture recording and seed without a crash, a leak or a UBSan report" '
	"$BUILD_DIR/fuzz/fuzz-convert" -close_fd_mask=3 "$SRC_DIR"/fixtures/*.rec "$TESTS"/fuzz/convert-corpus/*
'
test_expect_success FUZZER "fuzz-convert: $FUZZ_RUNS mutated inputs without one" '
	mkdir -p corpus-convert &&
	cp "$SRC_DIR"/fixtures/*.rec "$TESTS"/fuzz/convert-corpus/* corpus-convert/ &&
	"$BUILD_DIR/fuzz/fuzz-convert" -runs="$FUZZ_RUNS" -seed=1 -close_fd_mask=3 -max_len=65536 \
		-dict="$TESTS/fuzz/fuzz-recording.dict" -artifact_prefix="$TEST_DIR/convert-" -print_final_stats=1 corpus-convert
'

# symbolize's reading of addresses on standard input (tests/fuzz/fuzz-symbolize.c): as strtoull reads them,
# and answered whatever the bytes.
test_expect_success FUZZER "fuzz-symbolize builds" '
	make -s -C "$SRC_DIR" OUT="$BUILD_DIR" CLANG="$CLANG" fuzz-symbolize-build &&
	test -x "$BUILD_DIR/fuzz/fuzz-symbolize"
'
test_expect_success FUZZER "fuzz-symbolize: every seed without a crash, a leak or a UBSan report" '
	"$BUILD_DIR/fuzz/fuzz-symbolize" "$TESTS"/fuzz/symbolize-corpus/*
'
test_expect_success FUZZER "fuzz-symbolize: $FUZZ_RUNS mutated inputs without one" '
	mkdir -p corpus-symbolize &&
	cp "$TESTS"/fuzz/symbolize-corpus/* corpus-symbolize/ &&
	"$BUILD_DIR/fuzz/fuzz-symbolize" -runs="$FUZZ_RUNS" -seed=1 -max_len=4096 \
		-artifact_prefix="$TEST_DIR/symbolize-" -print_final_stats=1 corpus-symbolize
'

test_done
