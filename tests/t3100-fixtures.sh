#!/usr/bin/env bash
test_description='convert the checked-in fixture recordings offline and compare every format exactly'
. "$(dirname "$0")/test-lib.sh"

# The fixture binaries are found only by build ID through --debug-dir: the recorded paths were deleted
# right after recording (fixtures/Makefile).
convert() { stackrec convert "$FIXTURES/$1.rec" --debug-dir "$FIXTURES/debug" "${@:2}"; }

# The recordings' libc and ld.so frames are named from this machine's Debian 12 libc6 and libc6-dbg, found by
# the recorded build IDs; the vDSO from the image embedded in the recording. -v says where each module came
# from, so a failure shows, for example, a libc whose build ID is not the recorded one (regenerate).
for rec in inline short; do
	for format in folded pprof speedscope d3 trace; do
		if [ $format = pprof ]; then compare=cmp; else compare=test_cmp; fi
		test_expect_success "$rec.rec converts to the expected $format" "
			convert $rec -f $format -o $rec.$format -v 2>convert.err &&
			$compare \"\$FIXTURES/expected/$rec.$format\" $rec.$format ||
			{ cat convert.err; false; }
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

test_expect_success 'every frame of the fixture program has its source file and line, the inlined chain too' '
	python3 -c "
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    for f in r.get(\"frames\", []):
        if f[\"function\"] in (\"main\", \"top\", \"mid\", \"hot_inline\", \"leaf\"):
            assert f[\"file\"] and f[\"file\"].endswith(\"/inline.c\") and f[\"line\"], f
" "$FIXTURES/expected/inline.trace"
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
