#!/usr/bin/env bash
test_description='fuzz the parsers: perf maps, kallsyms, the archive reader, ELF and debug-file loading, the profile cache, convert as a whole, the addresses symbolize reads'
# The targets are tests/fuzz/fuzz-{jit-maps,kallsyms,archive,elf,profile-cache,convert,symbolize}.c, built by
# `make fuzz-NAME-build` next to the unit tests (in the directory above $UNIT_DIR), with clang's libFuzzer
# runtime (Debian: libclang-rt-14-dev; without it the tests are skipped with that reason). Each replays its seed
# corpus tests/fuzz/NAME-corpus/ (crash-* and leak-* seeds are inputs that once failed; fuzz-convert also the
# fixture recordings, fixtures/*.rec), then runs FUZZ_RUNS more inputs (default 1000) mutated from it. `make
# fuzz` fuzzes each for FUZZ_SECONDS.
. "$(dirname "$0")/test-lib.sh"

fuzz_prereq
FUZZ_RUNS=${FUZZ_RUNS:-1000}

# fuzz_target NAME MAX_LEN [SEEDS [OPTIONS]]: fuzz-NAME builds, replays SEEDS (default its corpus; globs
# expanded when each test runs) and FUZZ_RUNS inputs mutated from them, with OPTIONS, none failing.
fuzz_target() {
	name=$1 max_len=$2 seeds=${3:-"\$TESTS/fuzz/$1-corpus/*"} options=${4:-}
	test_expect_success FUZZER "fuzz-$name builds" '
		make -s -C "$SRC_DIR" OUT="$BUILD_DIR" CLANG="$CLANG" fuzz-$name-build &&
		test -x "$BUILD_DIR/fuzz/fuzz-$name"
	'
	test_expect_success FUZZER "fuzz-$name: every seed without a crash, a leak or a UBSan report" '
		eval "\"\$BUILD_DIR/fuzz/fuzz-$name\" -close_fd_mask=3 $seeds"
	'
	test_expect_success FUZZER "fuzz-$name: $FUZZ_RUNS mutated inputs without one" '
		mkdir -p corpus-$name &&
		eval "cp $seeds corpus-$name/" &&
		"$BUILD_DIR/fuzz/fuzz-$name" -runs="$FUZZ_RUNS" -seed=1 -close_fd_mask=3 -max_len=$max_len $options \
			-artifact_prefix="$TEST_DIR/$name-" -print_final_stats=1 corpus-$name
	'
}

for t in jit-maps kallsyms archive elf profile-cache; do
	fuzz_target $t 65536
done
# convert as a whole: every block's handling, the probe context, every writer
fuzz_target convert 65536 "\$SRC_DIR/fixtures/*.rec \$TESTS/fuzz/convert-corpus/*" "-dict=$TESTS/fuzz/fuzz-recording.dict"
# symbolize's reading of addresses on standard input: as strtoull reads them, and answered whatever the bytes
fuzz_target symbolize 4096

test_done
