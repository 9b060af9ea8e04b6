#!/usr/bin/env bash
test_description='convert the checked-in fixture recordings offline and compare every format exactly'
. "$(dirname "$0")/test-lib.sh"

# The fixture binaries are found only by build ID through --debug-dir: the recorded paths were deleted
# right after recording (fixtures/Makefile).
convert() { stackrec convert "$FIXTURES/$1.rec" --debug-dir "$FIXTURES/debug" "${@:2}"; }

for rec in inline short; do
	for format in folded pprof speedscope d3 trace; do
		test_expect_success "$rec.rec converts to the expected $format" "
			convert $rec -f $format -o $rec.$format &&
			cmp $rec.$format \"\$FIXTURES/expected/$rec.$format\"
		"
	done
done

# The expected files were produced by stackrec itself: check them against what the programs do.
test_expect_success 'expected inline.folded has the full inlined path in at least 95% of samples' '
	awk "{ n = \$NF; total += n; if (index(\$0, \";main;top;mid;hot_inline;leaf\")) hit += n }
		END { print hit, total; exit !(total > 0 && hit * 100 >= total * 95) }" "$FIXTURES/expected/inline.folded"
'

test_expect_success 'expected short.folded names short_lived_work in five processes worth of samples' '
	grep -q "^short;.*main;short_lived_work" "$FIXTURES/expected/short.folded"
'

test_expect_success 'the recorded binary paths are gone, so names came from --debug-dir' '
	stackrec info "$FIXTURES/inline.rec" >info.out &&
	grep -q "/tmp/stackrec-fixtures/inline" info.out &&
	test ! -e /tmp/stackrec-fixtures/inline
'

test_expect_success 'without --debug-dir the fixture binaries cannot be found and frames say so' '
	stackrec convert "$FIXTURES/inline.rec" -f folded >nodebug.folded &&
	! grep -q "hot_inline" nodebug.folded &&
	grep -q "inline+0x" nodebug.folded
'

test_done
