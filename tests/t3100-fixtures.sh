#!/usr/bin/env bash
test_description='convert the checked-in fixture recordings offline and compare every format exactly'
. "$(dirname "$0")/test-lib.sh"

# The fixture binaries are found only by build ID through --debug-dir: the recorded paths were deleted
# right after recording (fixtures/Makefile).
# --symfs with an empty system root and --no-cache: nothing of this machine is used, so the expected outputs
# hold on any machine, whatever its libc (fixtures/sysroot/README.md).
convert() { stackrec convert "$FIXTURES/$1.rec" --symfs "$FIXTURES/sysroot" --no-cache --debug-dir "$FIXTURES/debug" "${@:2}"; }

# The fixture programs are found by build ID in fixtures/debug, the vDSO is the image embedded in the
# recording; libc and ld.so stay unnamed. -v says where each module came from, shown when a test fails.
for rec in inline short chain unwind deep offcpu crash; do
	for format in folded pprof speedscope d3 trace; do
		if [ $format = pprof ]; then compare=pprof_cmp; else compare=test_cmp; fi
		test_expect_success "$rec.rec converts to the expected $format" "
			convert $rec -f $format -o $rec.$format -v 2>convert.err &&
			$compare \"\$FIXTURES/expected/$rec.$format\" $rec.$format ||
			{ cat convert.err; false; }
		"
	done
done

# Modules are symbolized by as many threads as -j says (default: the CPUs): the output must not depend on it.
test_expect_success 'convert -j 1 and -j 16 write the same bytes as the expected files' '
	for rec in short unwind offcpu; do
		for j in 1 16; do
			convert $rec -j $j -f trace -o $rec.j$j.trace &&
			test_cmp "$FIXTURES/expected/$rec.trace" $rec.j$j.trace &&
			convert $rec -j $j -f pprof -o $rec.j$j.pprof &&
			pprof_cmp "$FIXTURES/expected/$rec.pprof" $rec.j$j.pprof || return 1
		done
	done
'

# With more than one job, modules are opened for the symbolizer on another thread while the samples are still
# being unwound (convert/module_prefetch.h); those it has not reached when they are done are opened after, as
# with -j 1. Either way each module is opened once and the output is the same.
test_expect_success 'convert -j 2 opens each module once, while unwinding or after; -j 1 after; same output' '
	for i in 1 2 3; do
		convert unwind -j 2 -f folded -o unwind.j2.folded -v 2>j2.err &&
		test_cmp "$FIXTURES/expected/unwind.folded" unwind.j2.folded &&
		test "$(grep -c "/unwind.: symbolizing from" j2.err)" = 1 || { cat j2.err; return 1; }
	done &&
	convert unwind -j 1 -f folded -o unwind.j1.folded -v 2>j1.err &&
	test_cmp "$FIXTURES/expected/unwind.folded" unwind.j1.folded &&
	! grep -q "while unwinding" j1.err &&
	test "$(grep -c "/unwind.: symbolizing from" j1.err)" = 1
'

test_expect_success 'convert -j refuses 0, a negative number and a word, exit status 2' '
	for j in 0 -3 many 17; do
		{ convert short -j "$j" -f folded -o /dev/null 2>err; test $? = 2; } &&
		grep -q "from 1 to 16" err || return 1
	done
'

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

# folded alone leaves the profile's stacks in the order they were first met (profile.h: stacks_in_any_order) and
# sorts its own lines; -v, --explain (and --thread-names, events, a timeline) have the stacks sorted first. -v and
# --explain write to stderr only, so each option's folded output is the same bytes both ways (the expected files
# were made with -v), its lines in C order of their stacks (the count after the last space left out), each once.
# --thread-names is sorted both ways (folded asserts it never meets unsorted stacks).
test_expect_success 'folded: stacks as first met or sorted (-v, --explain) give the same lines, in C sort order' '
	for rec in inline short chain unwind deep offcpu crash; do
		convert $rec -f folded -o any.folded &&
		test_cmp "$FIXTURES/expected/$rec.folded" any.folded &&
		convert $rec -f folded --explain -o explained.folded 2>explain.err &&
		test_cmp any.folded explained.folded || { echo "# $rec.rec"; return 1; }
		for opts in --pid --tid --annotate --addrs "--tid --annotate --addrs" "--kind wall" "--kind off" \
			--no-demangle --thread-names; do
			convert $rec -f folded $opts -o any.folded &&
			convert $rec -f folded $opts -v -o sorted.folded 2>verbose.err &&
			test_cmp sorted.folded any.folded &&
			sed "s/ [0-9]*\$//" any.folded >stacks &&
			LC_ALL=C sort -c -u stacks || { echo "# $rec.rec, options: $opts"; return 1; }
		done
	done
'

test_expect_success '--symfs DIR: recorded paths are looked up under DIR, as perf does' '
	mkdir -p root/tmp/stackrec-fixtures &&
	cp "$FIXTURES/bin/inline" root/tmp/stackrec-fixtures/ &&
	stackrec convert "$FIXTURES/inline.rec" --symfs root --no-cache -v -f folded >symfs.folded 2>symfs.err &&
	grep -q ";main;top;mid;hot_inline;leaf [0-9]*$" symfs.folded &&
	grep "symbolizing from $PWD/root/tmp/stackrec-fixtures/inline$" symfs.err &&
	test_must_fail stackrec convert "$FIXTURES/inline.rec" --symfs no-such-dir 2>err &&
	grep "cannot use --symfs .no-such-dir." err
'

test_expect_success 'the recorded binary paths are gone, so names came from --debug-dir' '
	stackrec info "$FIXTURES/inline.rec" >info.out &&
	grep -q "/tmp/stackrec-fixtures/inline" info.out &&
	test ! -e /tmp/stackrec-fixtures/inline
'

test_expect_success 'without --debug-dir the fixture binaries cannot be found and frames say so' '
	stackrec convert "$FIXTURES/inline.rec" -f folded >nodebug.folded &&
	! grep -q "hot_inline" nodebug.folded &&
	grep -q "\[inline\]" nodebug.folded
'

test_done
