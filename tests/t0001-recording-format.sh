#!/usr/bin/env bash
test_description='the recording file format: writer and reader round trips, growth rules, damage'
# The tests themselves are C, in tests/unit/test-recording.c (built by `make unit-tests`); each of its TAP
# tests is reported as one of this script's. They need no root, no BPF and no fixtures.
. "$(dirname "$0")/test-lib.sh"

test_unit_tap "$UNIT_DIR/test-recording"

# Not byte for byte: zstd may compress differently from one version to the next.
test_expect_success 'test-recording --write-corpus writes the seed corpus of tests/fuzz/' '
	"$UNIT_DIR/test-recording" --write-corpus corpus &&
	(cd corpus && ls) >actual &&
	(cd "$TESTS/fuzz/corpus" && ls) >expect &&
	test_cmp expect actual
'

test_done
