#!/usr/bin/env bash
test_description='stackrec archive carries every file the lookup finds: dwz (.gnu_debugaltlink) files, once however
many modules share them, and debug files found only through .gnu_debuglink; convert --archive on a machine
without them gives the same functions, inline frames and lines'
. "$(dirname "$0")/test-lib.sh"

# Nothing here may touch the user's own cache.
export STACKREC_CACHE_DIR="$TEST_DIR/cache"
unset DEBUGINFOD_URLS

# `make check` installs dwz (TEST_PACKAGES): on CI a missing dwz fails its test instead of skipping it.
if command -v dwz >/dev/null; then test_set_prereq DWZ; else test_unset_prereq DWZ "no dwz (apt-get install dwz)"; fi
as=/usr/bin/x86_64-linux-gnu-as
as_id=$(readelf -n "$as" 2>/dev/null | awk '/Build ID/ { print $3 }')
if [ -n "$as_id" ] && readelf -p .gnu_debugaltlink "/usr/lib/debug/.build-id/${as_id:0:2}/${as_id:2}.debug" 2>/dev/null |
	grep -q "/usr/lib/debug/.dwz/"; then
	test_set_prereq AS_DWZ
else
	test_unset_prereq AS_DWZ "no dwz-compressed debug file for $as (apt-get install binutils-x86-64-linux-gnu-dbg)"
fi

# split_debug FILE DIR: FILE's debug file alone to DIR/.build-id/xx/rest.debug, then FILE stripped of it.
split_debug() { keep_debug_only "$1" "$2" && strip -g "$1"; }

# Three programs of the same source (the variants make their build IDs differ): one and two have their
# shared DWARF in one dwz file, named without ".debug" at an absolute path, and debug files by build ID in
# dbg/; three has its debug file beside it, found only through its .gnu_debuglink (named without ".debug").
test_expect_success DWZ 'build two programs sharing a dwz file and one with a .gnu_debuglink only' '
	for n in 2 3; do echo "int variant = $n;" >variant$n.c; done &&
	gcc -O2 -g -fno-omit-frame-pointer -o one "$FIXTURES/inline.c" &&
	gcc -O2 -g -fno-omit-frame-pointer -o two "$FIXTURES/inline.c" variant2.c &&
	gcc -O2 -g -fno-omit-frame-pointer -o three "$FIXTURES/inline.c" variant3.c &&
	mkdir dwzdir && dwz -m "$PWD/dwzdir/common" one two &&
	readelf -p .gnu_debugaltlink one | grep -q "$PWD/dwzdir/common" &&
	split_debug one dbg && split_debug two dbg &&
	readelf -p .gnu_debugaltlink dbg/.build-id/*/*.debug | grep -c "$PWD/dwzdir/common" >count &&
	echo 2 >expect && test_cmp expect count &&
	objcopy --only-keep-debug three three.dbg && strip -g three && objcopy --add-gnu-debuglink=three.dbg three &&
	test "$(build_id one)" != "$(build_id two)" && test "$(build_id one)" != "$(build_id three)" &&
	for p in one two three; do build_id $p >id-$p || return 1; done
'

# one's dwz file where convert looks for it: with --symfs, under the tree only (libdw read this machine's, the
# tree's promise broken, silently); found in a debug directory, there, whatever lies at its path on this
# machine (a FIFO there dropped the DWARF of a right archive). A recording of one sample in one's hot_inline.
test_expect_success DWZ 'the dwz file under --symfs is the tree'"'"'s, and one a debug directory has is used' '
	BASE=$((0x555555554000)) &&
	hot=$(nm one | awk "\$3 == \"hot_inline\" || \$3 == \"main\" { print \$1; exit }") &&
	{
		text_mapping 700 one $(build_id one) 1 &&
		echo "sample 700 700 one 10 $(runtime $hot) -" &&
		echo end
	} | write_rec dwz.rec >/dev/null &&
	stackrec convert dwz.rec --no-cache --debug-dir dbg -f trace -o dwz-here.trace &&
	grep -q "\"line\":[1-9]" dwz-here.trace &&
	mkdir -p "tree$PWD" tree/usr/lib/debug && cp one "tree$PWD/one" && cp -r dbg/.build-id tree/usr/lib/debug/ &&
	stackrec convert dwz.rec --no-cache --symfs tree -f trace -o dwz-tree.trace 2>err &&
	cat err &&
	grep "its dwz file .$PWD/dwzdir/common. (build ID [0-9a-f]*) is not under --symfs: its DWARF is not read" err &&
	! grep -q "\"line\":[1-9]" dwz-tree.trace &&
	alt_id=$(build_id dwzdir/common) &&
	mkdir -p "altdbg/.build-id/${alt_id:0:2}" &&
	mv dwzdir/common "altdbg/.build-id/${alt_id:0:2}/${alt_id:2}.debug" &&
	{
		# the dwz file back in its place whatever happens, for the tests after this one
		mkfifo dwzdir/common
		stackrec convert dwz.rec --no-cache --debug-dir dbg --debug-dir altdbg -f trace -o dwz-fifo.trace 2>err
		rc=$?
		rm -f dwzdir/common
		mv "altdbg/.build-id/${alt_id:0:2}/${alt_id:2}.debug" dwzdir/common
		test $rc -eq 0
	} &&
	cat err &&
	! grep FIFO err &&
	test_cmp dwz-here.trace dwz-fifo.trace
'

test_expect_success BPF,DWZ 'the archive carries the dwz file once and the .gnu_debuglink target; convert --archive without them gives the same frames and lines' '
	stackrec record -F 499 -o three.rec -- sh -c "./one 300 && ./two 300 && ./three 300" &&
	stackrec convert three.rec --no-cache --debug-dir dbg -f trace -o here.trace &&
	for p in one two three; do
		grep "\"module\":\"$PWD/$p\"" here.trace | grep "\"function\":\"hot_inline\"" | grep -q "\"inlined\":true" ||
		{ echo "no inlined hot_inline with a line in $p"; exit 1; }
	done &&
	stackrec archive three.rec --no-cache --debug-dir dbg -o three.archive -v 2>err &&
	grep "^stackrec: archived [0-9]* files" err &&
	rm -rf one two three three.dbg dbg dwzdir "$STACKREC_CACHE_DIR" &&
	stackrec convert three.rec --no-cache -f trace -o gone.trace &&
	! grep -q "\"function\":\"hot_inline\"" gone.trace &&
	stackrec convert three.rec --no-cache --archive three.archive -f trace -o there.trace &&
	test_cmp here.trace there.trace &&
	grep -c "^stackrec: archived $PWD/dwzdir/common as .$PWD/dwzdir/common\.debug. " err >count &&
	echo 1 >expect && test_cmp expect count &&
	grep "^stackrec: archived $PWD/three.dbg as .$PWD/three\.dbg\.debug. " err
'

test_expect_success BPF,DWZ 'convert --archive again uses the symbol cache entries the first run wrote' '
	# the archive is extracted to a new directory at every run: its path and its files'"'"' times were in the
	# entries'"'"' keys, so each run found them "made from other files" and wrote them again
	# (extracted under a $TMPDIR reached through a symbolic link, with a trailing slash: the key is the same)
	rm -rf "$STACKREC_CACHE_DIR" && mkdir realtmp && ln -s "$PWD/realtmp" linktmp &&
	TMPDIR=$PWD/linktmp/ stackrec convert -v three.rec --archive three.archive -f trace -o cold.trace 2>cold.err &&
	grep "symbol cache entry .*/$(cat id-one).* written$" cold.err &&
	TMPDIR=$PWD/linktmp/ stackrec convert -v three.rec --archive three.archive -f trace -o warm.trace 2>warm.err &&
	cat warm.err &&
	! grep -e "not used" -e " written$" warm.err &&
	for p in one two three; do grep "symbol cache entry .*/$(cat id-$p)\..*: [0-9]* addresses$" warm.err || return 1; done &&
	test_cmp there.trace cold.trace &&
	test_cmp there.trace warm.trace
'

# The real thing: Debian's assembler, whose debug file (binutils-x86-64-linux-gnu-dbg) takes most of its DWARF
# from /usr/lib/debug/.dwz/x86_64-linux-gnu/binutils-x86-64-linux-gnu.debug, converted in a mount namespace
# where /usr/lib/debug is empty and no recorded file is found (--symfs of an empty tree), as on another machine.
test_expect_success BPF,ROOT,AS_DWZ 'the assembler with Debian'"'"'s dwz debug files: convert --archive without /usr/lib/debug gives the same frames and lines' '
	for i in $(seq 20000); do printf "f%d:\n\tmovq %%rdi, %d(%%rsp)\n\taddq \$%d, %%rax\n\tjmp f%d\n" $i $((8 * i)) $i $((7 * i % 20000 + 1)); done >big.s &&
	stackrec record -F 999 -o as.rec -- "$as" -o big.o big.s &&
	stackrec convert as.rec --no-cache -f trace -o as-here.trace &&
	grep -q "\"module\":\"$as\".*\"file\":\"[^\"]*\",\"line\":[1-9]" as-here.trace &&
	stackrec archive as.rec --no-cache -o as.archive -v 2>err &&
	mkdir empty &&
	unshare -m --propagation private sh -c "mount -t tmpfs none /usr/lib/debug &&
		\"$STACKREC\" convert as.rec --no-cache --symfs empty --archive as.archive -f trace -o as-there.trace" &&
	test_cmp as-here.trace as-there.trace &&
	grep "^stackrec: archived /usr/lib/debug/.dwz/x86_64-linux-gnu/binutils-x86-64-linux-gnu.debug " err
'

test_done
