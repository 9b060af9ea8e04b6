#!/usr/bin/env bash
test_description='a module whose binary is gone but whose separate debug file is there (--debug-dir, an archive,
/usr/lib/debug of another machine): found by build ID, placed by the recorded mapping, named from its symbols
and DWARF, and unwound through its .debug_frame'
. "$(dirname "$0")/test-lib.sh"

if command -v gcc >/dev/null && command -v objcopy >/dev/null && command -v readelf >/dev/null; then
	test_set_prereq GCC
else
	test_unset_prereq GCC "gcc and binutils are not installed (apt-get install gcc binutils)"
fi
libc_so=$(gcc -print-file-name=libc.so.6 2>/dev/null)
libc_id=$(readelf -n "$libc_so" 2>/dev/null | awk '/Build ID/ { print $3 }')
libc_debug=/usr/lib/debug/.build-id/${libc_id:0:2}/${libc_id:2}.debug
if [ -n "$libc_id" ] && [ -e "$libc_debug" ]; then
	test_set_prereq LIBC_DBG
else
	test_unset_prereq LIBC_DBG "no debug file for libc ('$libc_so', build ID ${libc_id:-unknown}) in /usr/lib/debug (apt-get install libc6-dbg)"
fi

# stack_share FOLDED COMM PATTERN: the percentage of COMM's samples whose stack (kernel frames dropped) matches
# the extended regular expression PATTERN, and its most common stacks.
stack_share() {
	awk -v comm="$2" '{
		n = $NF; line = $0; sub(/ [0-9]+$/, "", line); k = split(line, f, ";")
		if (f[1] != comm) next
		s = ""; leaf = ""
		for (i = 2; i <= k; i++) if (f[i] !~ /_\[k\]$/) { s = s ";" f[i]; leaf = f[i] }
		if (ENVIRON["LEAF"] != "" && leaf != ENVIRON["LEAF"]) next
		total += n; if (s ~ ENVIRON["PATTERN"]) hit += n
		by[s] += n
	} END {
		for (s in by) printf "# %d %s\n", by[s], s | "sort -k2,2nr | head -n 5 >&2"
		printf "%d\n", total ? 100 * hit / total : 0
	}' "$1"
}

test_expect_success GCC 'build chain.c with .debug_frame as its only CFI, and qsort_cb.c' '
	gcc -O2 -g -fomit-frame-pointer -fno-asynchronous-unwind-tables -fno-unwind-tables -o chain "$FIXTURES/chain.c" &&
	readelf -SW chain >sections &&
	grep -q " \.debug_frame " sections &&
	gcc -O2 -g -o qsort_cb "$FIXTURES/qsort_cb.c"
'

test_expect_success BPF,GCC 'a binary gone, its debug file alone: named and unwound through .debug_frame' '
	stackrec record -F 999 -o chain.rec -- ./chain 1500 &&
	keep_debug_only chain dbg &&
	readelf -lW dbg/.build-id/*/*.debug >segments &&
	grep -E "^ +LOAD .* 0x0+ 0x[0-9a-f]+ R E" segments &&
	rm chain && mkdir empty &&
	stackrec convert chain.rec --symfs empty --no-cache --debug-dir dbg -f folded -o chain.folded 2>convert.err &&
	cat convert.err &&
	share=$(PATTERN=";main;top;mid;leaf_a$" stack_share chain.folded chain) &&
	leaf=$(PATTERN=";leaf_a$" stack_share chain.folded chain) &&
	echo "main;top;mid;leaf_a: $share%, leaf_a: $leaf%" &&
	test "$leaf" -ge 90 && test "$share" -ge 90
'

# The unwinder decompresses only .debug_frame of a separate debug file (the symbolizer reads the rest): a
# stripped binary whose only CFI is the .debug_frame of its zlib-compressed debug file still unwinds, cold
# and warm, and -v says the other sections were left out for the unwinder. -j 1 in the cold run: no module is
# prepared for the symbolizer ahead (module_prefetch.h), so the unwinder asks first, before the symbolizer's
# whole copy is kept; the warm run unwinds with that copy.
test_expect_success BPF,GCC 'the .debug_frame of a compressed separate debug file unwinds a stripped binary' '
	gcc -O2 -g -fomit-frame-pointer -fno-asynchronous-unwind-tables -fno-unwind-tables -o chain-z "$FIXTURES/chain.c" &&
	id=$(build_id chain-z) &&
	mkdir -p dbgz/.build-id/${id:0:2} &&
	objcopy --only-keep-debug --compress-debug-sections=zlib chain-z dbgz/.build-id/${id:0:2}/${id:2}.debug &&
	readelf -SW dbgz/.build-id/${id:0:2}/${id:2}.debug | grep " \.debug_frame .* C " &&
	strip --strip-debug chain-z &&
	! readelf -SW chain-z | grep -q "\.debug_frame" &&
	stackrec record -F 999 -o chainz.rec -- ./chain-z 1500 &&
	STACKREC_CACHE_DIR=$PWD/zcache stackrec convert -j 1 -v chainz.rec --debug-dir dbgz -f folded -o cold.folded 2>cold.err &&
	grep "decompressed 1 compressed sections (0 zstd, .*), left out [1-9][0-9]* not read by the unwinder$" cold.err &&
	# the profile cache emptied: this warm run unwinds the samples again (docs/profile-cache.md)
	rm -r zcache/profiles &&
	STACKREC_CACHE_DIR=$PWD/zcache stackrec convert -v chainz.rec --debug-dir dbgz -f folded -o warm.folded 2>warm.err &&
	test_cmp cold.folded warm.folded &&
	# the symbolizer kept a whole copy in the cold run (debug_copies.h); the warm one unwinds with it
	grep "${id:2}.debug.: its decompressed copy .*/zcache/decompressed/[0-9a-f]*.debug. is used" warm.err &&
	! grep "not read by the unwinder" warm.err &&
	share=$(PATTERN=";main;top;mid;leaf_a$" stack_share cold.folded chain-z) &&
	echo "main;top;mid;leaf_a: $share%" &&
	test "$share" -ge 90
'

test_expect_success BPF,GCC,LIBC_DBG 'libc gone, its Debian debug file alone: its functions named' '
	stackrec record -F 999 -o qsort.rec -- ./qsort_cb 1500 &&
	id=$(build_id qsort_cb) &&
	mkdir -p dbg2/.build-id/${id:0:2} dbg2/.build-id/${libc_id:0:2} &&
	cp qsort_cb dbg2/.build-id/${id:0:2}/${id:2} &&
	cp "$libc_debug" dbg2/.build-id/${libc_id:0:2}/ &&
	mkdir -p empty &&
	stackrec convert qsort.rec --symfs empty --no-cache --debug-dir dbg2 -f folded -o qsort.folded &&
	stackrec convert qsort.rec --symfs empty --no-cache --debug-dir dbg2 -f folded --addrs -o qsort.addrs &&
	grep -E "^qsort_cb;.*(msort_with_tmp|__qsort_r)" qsort.folded >named &&
	head -n 3 named &&
	# A sample can land in libc'"'"'s PLT stubs (msort calls memcpy through them), which no symbol covers, in
	# the binary as in its debug file: allow those few, not libc unnamed.
	awk "{ n = \$NF; total += n } /\\[libc\\.so\\.6/ { unnamed += n } END { print unnamed + 0, total; exit !(total > 0 && unnamed * 100 < total) }" qsort.addrs &&
	# its debug file keeps no .eh_frame: a walk stopped in libc says so, and what to do (it was "code without
	# unwind information (JIT, hand-written assembly)")
	stackrec convert qsort.rec --symfs empty --no-cache --debug-dir dbg2 --explain -o /dev/null 2>explain &&
	grep "end in \[incomplete\]: only a debug file of the module was found, and it has no CFI: make the binary itself available" explain
'

test_expect_success BPF,GCC,LIBC_DBG 'an archive holding libc and its debug file: the binary is used, libc named and unwound' '
	stackrec archive qsort.rec -o qsort.archive &&
	stackrec convert qsort.rec --symfs empty --no-cache --archive qsort.archive -f folded -o archived.folded &&
	# Of the samples in compare_keys (how much time the program spends there is its own business), those
	# unwound through libc back to main.
	share=$(LEAF=compare_keys PATTERN="main;(qsort|__qsort_r).*msort_with_tmp.*;compare_keys$" stack_share archived.folded qsort_cb) &&
	echo "main;qsort;...;compare_keys: $share% of compare_keys samples" &&
	test "$share" -ge 95
'

# With an archive no decompressed copy is kept (its files are extracted to a new directory each time: a copy
# keyed by that path would never be used again), and none is read: the same folded stacks as with --no-cache.
test_expect_success BPF,GCC,LIBC_DBG 'convert --archive keeps no decompressed copy, with the cache on' '
	rm -rf acache &&
	STACKREC_CACHE_DIR=$PWD/acache stackrec convert -v qsort.rec --symfs empty --archive qsort.archive -f folded \
		-o archived-cache.folded 2>archived.err &&
	test_cmp archived.folded archived-cache.folded &&
	grep "decompressed [0-9]* compressed sections" archived.err &&
	! grep "decompressed copy" archived.err &&
	test_must_fail test -e acache/decompressed
'

test_expect_success GCC 'stackrec symbolize on a debug file alone takes addresses as they are' '
	gcc -O2 -g -o chain2 "$FIXTURES/chain.c" &&
	objcopy --only-keep-debug chain2 chain2.debug &&
	a=$(nm chain2.debug | awk "\$3 == \"mid\" { print \$1 }") &&
	stackrec symbolize -f -e chain2.debug 0x$a >sym.out &&
	cat sym.out &&
	test "$(head -n 1 sym.out)" = mid
'

test_done
