#!/usr/bin/env bash
test_description='stackrec symbolize: the same bytes as GNU addr2line with the same flags, --json, answers streamed through a pipe'
. "$(dirname "$0")/test-lib.sh"

unset DEBUGINFOD_URLS
if command -v addr2line >/dev/null && command -v objdump >/dev/null; then
	test_set_prereq ADDR2LINE
else
	test_unset_prereq ADDR2LINE "no addr2line/objdump (apt-get install binutils)"
fi
if command -v g++ >/dev/null; then test_set_prereq CXX; else test_unset_prereq CXX "no g++"; fi
# clang, which builds the BPF programs, is always there where stackrec builds
if command -v clang++ >/dev/null; then test_set_prereq CLANGXX; else test_unset_prereq CLANGXX "no clang++ (apt-get install clang)"; fi
# `make check` installs dwz (TEST_PACKAGES): on CI a missing dwz fails its test instead of skipping it.
if command -v dwz >/dev/null; then test_set_prereq DWZ; else test_unset_prereq DWZ "no dwz (apt-get install dwz)"; fi
# ... and golang-go
if command -v go >/dev/null; then test_set_prereq GO; else test_unset_prereq GO "no go (apt-get install golang-go)"; fi

# leaf and middle are inlined into outer twice; leaf calls atoi, itself inlined from <stdlib.h>.
cat >inline.c <<'SRC'
#include <stdio.h>
#include <stdlib.h>

static inline __attribute__((always_inline)) int leaf(int x)
{
	int r = x * 3;
	if (r > 100)
		r -= atoi("7");
	return r;
}

static inline __attribute__((always_inline)) int middle(int x)
{
	int s = 0;
	for (int i = 0; i < x; i++)
		s += leaf(i);
	return s;
}

__attribute__((noinline)) int outer(int n)
{
	return middle(n) + middle(n / 2);
}

__attribute__((noinline)) void spin(volatile int *p)
{
	for (int i = 0; i < 1000; i++)
		*p += outer(i);
}

int main(int argc, char **argv)
{
	volatile int v = 0;
	(void)argv;
	spin(&v);
	printf("%d\n", v + argc);
	return 0;
}
SRC

cat >cxx.cc <<'SRC'
#include <cstdio>
#include <vector>
namespace ns {
template <typename T> struct Box {
	std::vector<T> v;
	__attribute__((noinline)) void add(T x) { v.push_back(x); }
	T sum() const { T s{}; for (auto &e : v) s += e; return s; }
};
__attribute__((noinline)) int work(int n, char c)
{
	Box<int> b;
	for (int i = 0; i < n; i++)
		b.add(i * c);
	return b.sum();
}
}
int main(int argc, char **) { std::printf("%d\n", ns::work(argc * 100, 'x')); }
SRC

# addresses BINARY: every function symbol's start, 5 and 37 bytes in, each call instruction (inlined call
# sites among them), every instruction of outer (lines with discriminators), and addresses in no function:
# .rodata, past the end, 0.
addresses() {
	nm --defined-only "$1" | awk '$2 ~ /^[tTwW]$/ { print $1 }' >starts &&
	while read -r a; do
		printf '%x\n%x\n%x\n' $((0x$a)) $((0x$a + 5)) $((0x$a + 37))
	done <starts &&
	objdump -d --no-show-raw-insn "$1" | awk '/\tcall / { sub(":", "", $1); print $1 }' &&
	objdump -d --no-show-raw-insn --disassemble=outer "$1" | awk -F: '/^ +[0-9a-f]+:/ { print $1 }' &&
	objdump -h "$1" | awk '$2 == ".rodata" { print $4 }' &&
	echo 0x10000000 && echo 0
}

FLAGS_LIST="- -f -i -a -p -C -s -fi -fa -fp -ip -ap -fia -fiap -fipC -fiC -aipsf"

# compare BINARY ADDRESS_FILE: for each flag set, addresses on the command line and on stdin.
compare() {
	for flags in $FLAGS_LIST; do
		[ "$flags" = - ] && flags=
		addr2line -e "$1" $flags <"$2" >expect &&
		stackrec symbolize -e "$1" $flags <"$2" >actual &&
		test_cmp expect actual &&
		addr2line -e "$1" $flags $(cat "$2") >expect &&
		stackrec symbolize -e "$1" $flags $(cat "$2") >actual &&
		test_cmp expect actual || { echo "flags: $flags"; return 1; }
	done
}

test_expect_success ADDR2LINE 'build a C program with inlined functions at -O2 -g and list its addresses' '
	gcc -O2 -g -o inline inline.c &&
	addresses inline >addrs &&
	test_line_count addrs -gt 30 &&
	addr2line -e inline -i $(objdump -d inline | awk "/call.*<strtol@plt>/ { sub(\":\", \"\", \$1); print \$1 }") >chain &&
	test_line_count chain -ge 3 &&
	addr2line -e inline -i <addrs >lines &&
	grep " (discriminator [0-9]*)$" lines
'

test_expect_success ADDR2LINE 'C program: the same bytes as addr2line for every flag set' '
	compare inline addrs
'

test_expect_success ADDR2LINE '-j .text: addresses are section offsets, as addr2line takes them' '
	text=$(objdump -h inline | awk "\$2 == \".text\" { print \$4 }") &&
	while read -r a; do
		o=$((0x${a#0x} - 0x$text)) && if [ $o -ge 0 ]; then printf "%x\n" $o; fi
	done <addrs >offsets &&
	test_line_count offsets -gt 30 &&
	addr2line -e inline -j .text -a -f -i <offsets >expect &&
	stackrec symbolize -e inline -j .text -a -f -i <offsets >actual &&
	test_cmp expect actual &&
	test_must_fail stackrec symbolize -e inline -j .no-such 0 2>err &&
	grep -F "no section" err
'

test_expect_success ADDR2LINE 'the leading 0x is optional and upper case is read' '
	a=$(nm inline | awk "\$3 == \"outer\" { print \$1 }") &&
	stackrec symbolize -e inline -f 0x$a >expect &&
	stackrec symbolize -e inline -f $a >actual && test_cmp expect actual &&
	stackrec symbolize -e inline -f 0X${a^^} >actual && test_cmp expect actual &&
	printf "outer\n%s/inline.c:21\n" "$PWD" >expect && test_cmp expect actual
'

# libdwfl gives an address in code no unit describes (_start, crt's functions) the unit before as its unit, and
# libdw that unit's last line row (fixtures/cold_split.c). The linker's _edata
# (of .data) and __bss_start (of .bss) share an address; a name of the other section does not count.
test_expect_success ADDR2LINE 'code no unit describes gets no line; a symbol names only addresses of its own section' '
	printf "int x = 1;\nint y;\nint main(void) { return x + y; }\n" >vars.c &&
	gcc -O2 -g -o split "$FIXTURES/cold_split.c" && gcc -O2 -g -o vars vars.c &&
	for binary in split vars; do
		nm $binary | awk "\$3 ~ /^(_start|deregister_tm_clones|frame_dummy|_edata|__bss_start)\$/ { print \$1 }" |
		while read -r a; do
			for i in 0 1 2 3 5 8 13 17; do printf "%x\n" $((0x$a + i)); done
		done >$binary-addrs &&
		addr2line -e $binary -a -f <$binary-addrs >expect &&
		grep -x "_start" expect &&
		stackrec symbolize -e $binary -a -f <$binary-addrs >actual &&
		test_cmp expect actual || return 1
	done
'

# Lines are read fast when they are just an address and by strtoull otherwise, answers to addresses asked again
# are copied from the first (symbolize.c, answer_batch_text): every form must still read as addr2line reads it.
test_expect_success ADDR2LINE 'odd address lines, and addresses asked again, read and answered as addr2line does' '
	a=$(nm inline | awk "\$3 == \"outer\" { print \$1 }") &&
	m=$(nm inline | awk "\$3 == \"main\" { print \$1 }") &&
	{
		printf "%s\n" "$a" "0x$a" "0X${a^^}" "${a^^}" "  $a" "	0x$a" "0000000000000000$a" \
			"$a junk" "${a}zz" "0x" "zz" "" "fffffffffffffffff1" "ffffffffffffffff" "$m" "$a" &&
		printf "%s\r\n" "$m" &&
		printf "%s" "$m"
	} >odd &&
	addr2line -e inline -a -f -i <odd >expect &&
	stackrec symbolize -e inline -a -f -i <odd >actual &&
	test_cmp expect actual &&
	for i in $(seq 200); do cat addrs; done | awk "BEGIN { srand(1) } { print rand() \"\t\" \$0 }" | sort -n | cut -f 2 >many &&
	test_line_count many -gt 6000 &&
	addr2line -e inline -a -f -i -p <many >expect &&
	stackrec symbolize -e inline -a -f -i -p <many >actual &&
	test_cmp expect actual
'

# binutils 2.40 reads the file of some line-table rows of gcc 12's DWARF 5 one entry off (cxx.cc:439 in a
# 17-line cxx.cc, where libdw says vector.tcc:439): byte for byte with DWARF 4, and for DWARF 5 every line we
# print exists in its file (docs/symbolize.md, Differences).
# Built with relative paths (src/inline.c from the project's directory), a file's line-table directory is
# relative: libdw gave src/inline.c, where binutils, eu-addr2line and llvm-symbolizer print it under the
# compilation directory. DWARF 4 and 5 name it differently (5: directory 0 is the compilation directory).
test_expect_success ADDR2LINE 'a build with relative paths: files under the compilation directory, as addr2line, DWARF 4 and 5' '
	mkdir -p project/src &&
	cp inline.c project/src/ &&
	(cd project && gcc -O2 -g -gdwarf-5 -o inline5 src/inline.c && gcc -O2 -g -gdwarf-4 -o inline4 src/inline.c) &&
	addresses project/inline5 >raddrs5 &&
	compare project/inline5 raddrs5 &&
	stackrec symbolize -e project/inline5 -i <raddrs5 >out5 &&
	grep -F "$PWD/project/src/inline.c:" out5 &&
	addresses project/inline4 >raddrs4 &&
	compare project/inline4 raddrs4 &&
	stackrec symbolize -e project/inline4 -i <raddrs4 >out4 &&
	grep -F "$PWD/project/src/inline.c:" out4
'

test_expect_success ADDR2LINE,CXX 'C++ program: the same bytes as addr2line, names mangled without -C and demangled with it' '
	g++ -O2 -g -gdwarf-4 -o cxx cxx.cc &&
	addresses cxx >caddrs &&
	compare cxx caddrs &&
	a=$(nm cxx | awk "/ T _ZN2ns4workEic\$/ { print \$1 }") &&
	stackrec symbolize -e cxx -f $a >names && grep -x _ZN2ns4workEic names &&
	stackrec symbolize -e cxx -f -C $a >names && grep -Fx "ns::work(int, char)" names
'

# clang writes a function defined in a namespace inside the namespace's DIE (gcc at the top level, with
# DW_AT_specification). The walk pruned the namespace: ns::work lost its inlined frames and took their
# lines. GNU addr2line and eu-addr2line lose some of them too (docs/symbolize.md, Differences):
# llvm-symbolizer (package llvm, which builds stackrec) has them all.
test_expect_success ADDR2LINE,CLANGXX 'C++ built by clang: functions in a namespace keep their inlined frames, as llvm-symbolizer' '
	clang++ -O2 -g -o cxx-clang cxx.cc &&
	for f in _ZN2ns4workEic _ZN2ns3BoxIiE3addEi; do
		objdump -d --no-show-raw-insn --disassemble=$f cxx-clang | awk -F: "/^ +[0-9a-f]+:/ { gsub(/ /, \"\", \$1); print \"0x\" \$1 }"
	done >ns-addrs &&
	test $(wc -l <ns-addrs) -gt 20 &&
	llvm-symbolizer --output-style=GNU -f -i -C --obj=cxx-clang <ns-addrs | awk "NR % 2" >expect &&
	stackrec symbolize -e cxx-clang -f -i -C <ns-addrs | awk "NR % 2" >actual &&
	test_cmp expect actual &&
	grep -Fx "std::vector<int, std::allocator<int> >::push_back(int const&)" actual &&
	grep -Fx "ns::Box<int>::sum() const" actual
'

test_expect_success ADDR2LINE,CXX 'C++ program with DWARF 5: every FILE:LINE printed is a line of that file' '
	g++ -O2 -g -gdwarf-5 -o cxx5 cxx.cc &&
	addresses cxx5 >caddrs5 &&
	stackrec symbolize -e cxx5 -i <caddrs5 >actual &&
	sed -n "s/^\(\/[^:]*\):\([0-9][0-9]*\).*/\1 \2/p" actual | sort -u >positions &&
	test_line_count positions -gt 5 &&
	while read -r file line; do
		test "$line" -le "$(wc -l <"$file")" || { echo "$file has no line $line"; exit 1; }
	done <positions
'

test_expect_success ADDR2LINE 'a stripped binary is named from its debug file in a --debug-dir .build-id tree, as convert finds it' '
	cp inline stripped && objcopy --only-keep-debug stripped stripped.dbg && strip stripped &&
	id=$(readelf -n stripped | awk "/Build ID/ { print \$3 }") && test -n "$id" &&
	mkdir -p debug/.build-id/${id:0:2} && mv stripped.dbg debug/.build-id/${id:0:2}/${id:2}.debug &&
	stackrec symbolize -e inline -f -i <addrs >expect &&
	stackrec symbolize -e stripped --debug-dir debug -f -i <addrs >actual &&
	test_cmp expect actual
'

# stackrec decompresses a debug file's compressed sections itself, on all cores (convert/zstd_sections.c):
# zlib ones as objcopy and Debian's debug packages write them, and zstd ones, which elfutils 0.188 cannot read.
# The location lists (.debug_loclists of gcc -O2 -g) are never read, and left out: the answers stay the same.
test_expect_success ADDR2LINE 'a debug file found by build ID with zlib- or zstd-compressed sections gives the same answers' '
	stackrec symbolize --no-cache -e inline -f -i <addrs >expect &&
	id=$(readelf -n stripped | awk "/Build ID/ { print \$3 }") &&
	for type in zlib zstd; do
		rm -rf debug-$type && mkdir -p debug-$type/.build-id/${id:0:2} &&
		objcopy --compress-debug-sections=$type debug/.build-id/${id:0:2}/${id:2}.debug \
			debug-$type/.build-id/${id:0:2}/${id:2}.debug &&
		readelf -t debug-$type/.build-id/${id:0:2}/${id:2}.debug | grep -qi $type &&
		stackrec symbolize --no-cache -v -e stripped --debug-dir debug-$type -f -i <addrs >actual 2>err &&
		test_cmp expect actual &&
		readelf -S debug-$type/.build-id/${id:0:2}/${id:2}.debug | grep -q "\.debug_loclists" &&
		grep "decompressed [1-9][0-9]* compressed sections (.*), left out 1 never read$" err || return 1
	done
'

# A debug file found by the binary's .gnu_debuglink (beside it), not by build ID, goes the same way: elfutils
# 0.188 alone would read no line nor inlined frame from a zstd one.
test_expect_success ADDR2LINE 'a debug file found by .gnu_debuglink with zlib- or zstd-compressed sections gives the same answers' '
	for type in none zlib zstd; do
		rm -rf link-$type && mkdir link-$type &&
		objcopy --only-keep-debug --compress-debug-sections=$type inline link-$type/prog.debug &&
		objcopy --strip-debug inline link-$type/prog &&
		(cd link-$type && objcopy --add-gnu-debuglink=prog.debug prog) || return 1
	done &&
	stackrec symbolize --no-cache -e link-none/prog -f -i <addrs >expect &&
	grep -q "inline.c:[0-9]" expect &&
	for type in zlib zstd; do
		stackrec symbolize --no-cache -v -e link-$type/prog -f -i <addrs >actual 2>err &&
		test_cmp expect actual &&
		grep "link-$type/prog.debug.: decompressed [1-9][0-9]* compressed sections" err || return 1
	done
'

# A dwz file (.gnu_debugaltlink, as Debian's binutils debug files have) is found as libdw finds it, by build ID
# (here in a --debug-dir, where libdw alone does not look) or at the link's path, and decompressed by stackrec:
# elfutils 0.188 alone reads nothing from a zstd one, and the names of functions inlined twice (whose DIEs dwz
# moved there, shared by both programs) are lost.
test_expect_success ADDR2LINE,DWZ 'a dwz file with zstd-compressed sections, at its link or by build ID, gives the same answers' '
	rm -rf dwz && mkdir dwz && gcc -O2 -g -o dwz/one inline.c && gcc -O2 -g -DTWO -o dwz/two inline.c &&
	(cd dwz && dwz -m common.debug one two) &&
	readelf -p .gnu_debugaltlink dwz/one | grep -q common.debug &&
	stackrec symbolize --no-cache -e dwz/one -f -i <addrs >expect &&
	grep -qx middle expect && grep -qx leaf expect &&
	id=$(readelf -n dwz/common.debug | awk "/Build ID/ { print \$3 }") && test -n "$id" &&
	mkdir -p dwz-dir/.build-id/${id:0:2} &&
	objcopy --compress-debug-sections=zstd dwz/common.debug dwz-dir/.build-id/${id:0:2}/${id:2}.debug &&
	cp dwz-dir/.build-id/${id:0:2}/${id:2}.debug dwz/common.debug &&
	readelf -t dwz/common.debug | grep -qi zstd &&
	stackrec symbolize --no-cache -v -e dwz/one -f -i <addrs >actual 2>err &&
	test_cmp expect actual &&
	grep "/dwz/common.debug.: decompressed [1-9][0-9]* compressed sections ([1-9][0-9]* zstd" err &&
	rm dwz/common.debug &&
	stackrec symbolize --no-cache -v -e dwz/one --debug-dir dwz-dir -f -i <addrs >actual 2>err &&
	test_cmp expect actual &&
	grep "dwz-dir/.build-id/${id:0:2}/${id:2}.debug.: decompressed" err &&
	DEBUGINFOD_URLS=http://127.0.0.1:9 stackrec symbolize --no-cache -e dwz/one --debug-dir dwz-dir -f -i <addrs >actual &&
	test_cmp expect actual
'

# A binary's own zlib sections go through the same copy when it cannot have split DWARF (no .debug_addr): the
# copy has no directory, and a skeleton unit's .dwo named relative to the binary would not be found from it.
test_expect_success ADDR2LINE 'a binary with its own zlib-compressed sections and no split DWARF: the same answers, through the copy' '
	stackrec symbolize --no-cache -e inline -f -i <addrs >expect &&
	objcopy --compress-debug-sections=zlib inline own-zlib &&
	readelf -t own-zlib | grep -qi zlib &&
	stackrec symbolize --no-cache -v -e own-zlib -f -i <addrs >actual 2>err &&
	test_cmp expect actual &&
	grep "own-zlib.: decompressed [1-9][0-9]* compressed sections (0 zstd, .*), left out 1 never read$" err
'

# The copy is made when DWARF or the symbol table is first read, not when the binary is opened: a warm run,
# which the symbol cache answers, inflates nothing (a Go binary's whole DWARF was inflated on every warm run).
test_expect_success ADDR2LINE 'a binary with its own zlib sections: the copy is made cold, not when the symbol cache answers' '
	rm -rf own-cache &&
	STACKREC_CACHE_DIR=$PWD/own-cache stackrec symbolize -v -e own-zlib -f -i <addrs >cold 2>err &&
	test_cmp expect cold &&
	grep "own-zlib.: decompressed [1-9][0-9]* compressed sections" err &&
	STACKREC_CACHE_DIR=$PWD/own-cache stackrec symbolize -v -e own-zlib -f -i <addrs >warm 2>err &&
	test_cmp expect warm &&
	grep -q "symbol cache entry .*: [1-9][0-9]* addresses" err &&
	! grep "decompressed" err
'

test_expect_success ADDR2LINE 'a binary with zlib-compressed sections and split DWARF found only beside it: left to libelf' '
	rm -rf split-build split-moved && mkdir split-build &&
	(cd split-build && gcc -O2 -g -gsplit-dwarf -o prog ../inline.c &&
	 objcopy --compress-debug-sections=zlib prog) &&
	readelf -S split-build/prog | grep -q "\.debug_addr" &&
	ls split-build/*.dwo >/dev/null &&
	mv split-build split-moved &&
	stackrec symbolize --no-cache -v -e split-moved/prog -f -i <addrs >actual 2>err &&
	! grep "decompressed" err &&
	grep -q "inline.c:[0-9]" actual
'

test_expect_success ADDR2LINE '--json: one valid object per address, with the fields of -f -i' '
	stackrec symbolize -e inline --json <addrs >json &&
	stackrec symbolize -e inline -f -i -a <addrs >text &&
	python3 - json text <<-\PY
	import json, sys
	objs = [json.loads(l) for l in open(sys.argv[1])]
	text = open(sys.argv[2]).read().split("\n0x")
	assert len(objs) == len(text) == len([l for l in open("addrs")]), (len(objs), len(text))
	inlined = 0
	for o, t in zip(objs, text):
	    assert set(o) == {"address", "function", "file", "line", "column", "discriminator", "inlined_by"}, o
	    lines = t.strip().split("\n")[1:]
	    frames = [o] + o["inlined_by"]
	    assert len(lines) == 2 * len(frames), (o, lines)
	    for f, (fn, pos) in zip(frames, zip(lines[0::2], lines[1::2])):
	        assert fn == (f["function"] or "??"), (f, fn)
	        file, line = pos.split(" ")[0].rsplit(":", 1)
	        assert file == (f["file"] or "??"), (f, pos)
	        assert line == (str(f["line"]) if f["line"] else "0" if fn == "??" and file == "??" and f is o else "?"), (f, pos)
	    inlined += len(o["inlined_by"]) > 0
	assert inlined > 3, inlined
	PY
'

test_expect_success ADDR2LINE 'answers stream: each is written before the next address is read' '
	main=$(nm inline | awk "\$3 == \"main\" { print \$1 }") &&
	outer=$(nm inline | awk "\$3 == \"outer\" { print \$1 }") &&
	coproc SYM { "$STACKREC" symbolize -e inline -f; } &&
	echo "$main" >&${SYM[1]} &&
	read -t 10 -r f1 <&${SYM[0]} && read -t 10 -r l1 <&${SYM[0]} &&
	echo "$outer" >&${SYM[1]} &&
	read -t 10 -r f2 <&${SYM[0]} && read -t 10 -r l2 <&${SYM[0]} &&
	eval "exec ${SYM[1]}>&-" &&
	wait $SYM_PID &&
	test "$f1 $f2" = "main outer" &&
	test "$l2" = "$PWD/inline.c:21"
'

# A binary rebuilt or copied over in place (`cp new old` keeps the inode and truncates it) while one symbolize
# serves a pipe: its mapping loses its pages, and the next read of them is a SIGBUS. test-convert, built with -g
# from many sources: the second address is in another source file, whose names and lines are read from the
# file only when asked, so the cut is certain to be met. One line naming the file and exit 1, not a bus error.
test_expect_success 'a binary cut short while symbolize serves a pipe: one line naming it, exit 1' '
	cp "$UNIT_DIR/test-convert" cut-prog &&
	main=$(nm cut-prog | awk "\$3 == \"main\" { print \$1 }") &&
	other=$(nm cut-prog | awk "\$3 == \"recording_reader_open\" { print \$1 }") &&
	test -n "$main" && test -n "$other" &&
	coproc CUT { "$STACKREC" symbolize --no-cache -e cut-prog -f 2>cut.err; } &&
	cut_pid=$CUT_PID && # bash unsets CUT_PID once the coprocess has ended, before the wait below may run
	echo "$main" >&${CUT[1]} &&
	read -t 10 -r f1 <&${CUT[0]} && read -t 10 -r l1 <&${CUT[0]} &&
	test "$f1" = main &&
	truncate -s 0 cut-prog &&
	echo "$other" >&${CUT[1]} &&
	eval "exec ${CUT[1]}>&-" &&
	{ wait $cut_pid; rc=$?; } ;
	cat cut.err &&
	test "$rc" = 1 &&
	test_line_count cut.err = 1 &&
	grep -x "stackrec: error: .$PWD/cut-prog. was cut short by another program while it was read" cut.err
'

test_expect_success 'a missing binary, a FIFO or a directory is one error line naming it, exit 1; bad usage exits 2; --version, -V, -H' '
	test_expect_code() { want=$1; shift; "$@"; test $? = $want; } &&
	test_expect_code 1 stackrec symbolize -e no-such-binary 1000 >out 2>err &&
	test_line_count err = 1 && grep -F "no-such-binary" err && test_line_count out = 0 &&
	echo "not elf" >text.txt &&
	test_expect_code 1 stackrec symbolize -e text.txt 1000 2>err &&
	test_line_count err = 1 && grep -F "text.txt" err &&
	test_expect_code 2 stackrec symbolize --no-such-option 2>err &&
	grep -F usage err &&
	mkfifo not-a-binary &&
	test_expect_code 1 timeout 10 "$STACKREC" symbolize -e not-a-binary 1000 2>err &&
	test_line_count err = 1 && grep -x "stackrec: error: .not-a-binary. is not a regular file" err &&
	test_expect_code 1 stackrec symbolize -e . 1000 2>err &&
	test_line_count err = 1 && grep -x "stackrec: error: .\.. is not a regular file" err &&
	stackrec --help >help && grep "^   symbolize " help &&
	for flag in --version -V; do
		stackrec symbolize $flag >out && grep -x "stackrec symbolize [0-9.]*" out || return 1
	done &&
	stackrec symbolize -H >out && grep "^usage: stackrec symbolize" out &&
	# -b: any ELF target (libelf reads the file'"'"'s own), a bogus one refused as addr2line does, exit 1
	stackrec symbolize -b elf64-x86-64 -e /bin/true 0 >out &&
	test_expect_code 1 stackrec symbolize -b bogus -e /bin/true 0 >out 2>err &&
	test_line_count err = 1 && grep -x "stackrec: error: .bogus.: invalid bfd target: only ELF is read (.*)" err
'

# An ELF file whose header tables are not there: it was answered ??:0 for every address, exit 0, where addr2line
# says "file format not recognized" and exits 1.
# DWARF whose partial units each import the next one twice, 40 deep: 2^40 walks of a file of a few KB. The
# scope walk (and libdw's) never ended; a unit that takes more than SCOPE_VISITS_MAX steps gets no scopes.
test_expect_success 'a unit importing another twice over, 40 deep: answered, not walked 2^40 times' '
	cat >imports.py <<-\PY &&
	import struct, sys
	# abbrevs
	def uleb(v):
	    out=b""
	    while True:
	        b=v&0x7f; v>>=7
	        if v: out+=bytes([b|0x80])
	        else: out+=bytes([b]); return out
	DW_TAG_compile_unit=0x11; DW_TAG_partial_unit=0x3c; DW_TAG_imported_unit=0x3d
	DW_AT_low_pc=0x11; DW_AT_high_pc=0x12; DW_AT_import=0x18; DW_AT_name=0x03
	DW_FORM_addr=0x01; DW_FORM_data8=0x07; DW_FORM_ref_addr=0x10; DW_FORM_string=0x08
	abbrev = (uleb(1)+uleb(DW_TAG_compile_unit)+b"\x01"+uleb(DW_AT_name)+uleb(DW_FORM_string)+uleb(DW_AT_low_pc)+uleb(DW_FORM_addr)+uleb(DW_AT_high_pc)+uleb(DW_FORM_data8)+b"\x00\x00"
	        + uleb(2)+uleb(DW_TAG_imported_unit)+b"\x00"+uleb(DW_AT_import)+uleb(DW_FORM_ref_addr)+b"\x00\x00"
	        + uleb(3)+uleb(DW_TAG_partial_unit)+b"\x01"+b"\x00\x00" + b"\x00")
	low=int(sys.argv[1],16); size=int(sys.argv[2],16); depth=int(sys.argv[3])
	# unit layout: each unit = header(11 bytes) + DIEs
	def unit(body):
	    return struct.pack("<IHIB", 7+len(body), 4, 0, 8)+body
	cu_body_len = len(uleb(1)+b"x\x00"+struct.pack("<QQ",0,0)+ (uleb(2)+b"\0"*4)*2 + b"\x00")
	pu_body_len = len(uleb(3)+(uleb(2)+b"\0"*4)*2+b"\x00\x00")
	last_len = len(uleb(3)+b"\x00"+b"\x00")  # partial unit with children flag then null child? 
	units=[]
	cu_size = 11+cu_body_len
	pu_size = 11+pu_body_len
	off_pu = lambda i: cu_size + (i-1)*pu_size + 11  # the DIE of unit i, from 1
	# CU
	body = uleb(1)+b"x\x00"+struct.pack("<QQ",low,size) + (uleb(2)+struct.pack("<I",off_pu(1)))*2 + b"\x00"
	assert len(body)==cu_body_len
	units.append(unit(body))
	for i in range(1,depth+1):
	    target = off_pu(i+1)
	    body = uleb(3)+(uleb(2)+struct.pack("<I",target))*2+b"\x00\x00"
	    units.append(unit(body))
	# final empty partial unit
	units.append(unit(uleb(3)+b"\x00\x00"))
	open("info.bin","wb").write(b"".join(units)); open("abbrev.bin","wb").write(abbrev)
	PY
	printf "int main(void) { return 0; }\n" >imports.c &&
	gcc -O1 -o imports imports.c &&
	set -- $(objdump -h imports | awk "\$2 == \".text\" { print \$4, \$3 }") &&
	python3 imports.py $1 $2 40 &&
	objcopy --remove-section=.debug_info --remove-section=.debug_abbrev --add-section .debug_info=info.bin \
		--add-section .debug_abbrev=abbrev.bin imports imports-bad &&
	a=$(nm imports | awk "\$3 == \"main\" { print \$1 }") &&
	timeout 60 "$STACKREC" symbolize --no-cache -e imports-bad -f $a >out &&
	cat out &&
	test "$(head -n 1 out)" = main
'

test_expect_success 'a binary cut short, or with a damaged section count or name index: one line naming it, exit 1' '
	head -c 3000 /bin/true >cut-true &&
	test_expect_code() { want=$1; shift; "$@"; test $? = $want; } &&
	test_expect_code 1 stackrec symbolize -e cut-true 1000 >out 2>err &&
	test_line_count out = 0 && test_line_count err = 1 &&
	grep -x "stackrec: error: cannot use .cut-true.: its section headers lie past its end: cut short, or a damaged header" err &&
	cp /bin/true many-sections && printf "\377\377" | dd of=many-sections bs=1 seek=60 conv=notrunc 2>/dev/null &&
	test_expect_code 1 stackrec symbolize -e many-sections 1000 2>err &&
	test_line_count err = 1 && grep "cannot use .many-sections.: its section headers lie past its end" err &&
	cp /bin/true bad-names && printf "\360\377" | dd of=bad-names bs=1 seek=62 conv=notrunc 2>/dev/null &&
	test_expect_code 1 stackrec symbolize -e bad-names 1000 2>err &&
	test_line_count err = 1 && grep -x "stackrec: error: cannot use .bad-names.: its section names are damaged" err &&
	stackrec symbolize -e /bin/true 1000 >out
'

# A .o: libdwfl lays its sections out elsewhere than at their zero addresses, and offsets named other code than
# addr2line reads there (main at 0x111, past .text). -j of a section not loaded: its address 0 made its offsets
# the text'"'"'s (main, where addr2line prints ??:0).
test_expect_success ADDR2LINE 'a relocatable object is refused in one line; -j of a section not loaded names nothing' '
	printf "%s\n" "int f(int x) { return x * 3; }" "int main(void) { return f(2); }" >rel.c &&
	gcc -O2 -g -c rel.c -o rel.o &&
	test_expect_code() { want=$1; shift; "$@"; test $? = $want; } &&
	test_expect_code 1 stackrec symbolize -e rel.o 10 >out 2>err &&
	test_line_count out = 0 && test_line_count err = 1 &&
	grep -x "stackrec: error: cannot use .rel.o.: a relocatable object file (.o, .ko): symbolize reads executables and shared objects" err &&
	gcc -O2 -g -o rel rel.c &&
	main=$(nm rel | sed -n "s/^0*\([0-9a-f]*\) T main$/\1/p") &&
	addr2line -e rel -f -j .debug_info "$main" >expect &&
	stackrec symbolize -e rel -f -j .debug_info "$main" >actual &&
	test_cmp expect actual &&
	printf "%s\n" "??" "??:0" >expect && test_cmp expect actual
'

# Several symbols at one address and no DWARF: binutils 2.40 and llvm-symbolizer name it by the largest, a local
# one too, and not by a marker of size 0 (Go'"'"'s runtime.text at the start of .text); stackrec took the first
# in the table, also for addresses only the larger one covers.
test_expect_success ADDR2LINE 'symbols at one address: the largest names it, as addr2line and llvm-symbolizer' '
	cat >same_address.s <<-\EOF &&
		.text
		.globl	b_small
		.type	b_small, @function
	b_small:
		.type	b_big, @function
	b_big:
		nop; nop; nop; nop; ret
		.size	b_small, 2
		.size	b_big, 5
		.globl	c_big
		.type	c_big, @function
	c_big:
		.globl	c_small
		.type	c_small, @function
	c_small:
		nop; nop; nop; nop; ret
		.size	c_small, 2
		.size	c_big, 5
		.globl	d_zero
	d_zero:
		.globl	d_big
		.type	d_big, @function
	d_big:
		nop; nop; nop; nop; ret
		.size	d_big, 5
		.section	.note.GNU-stack,"",@progbits
	EOF
	echo "int main(void) { return 0; }" >same_address_main.c &&
	gcc -O2 -o same_address same_address_main.c same_address.s &&
	for s in b_small c_big d_zero; do
		a=$(nm same_address | awk -v s=$s "\$3 == s { print \$1 }") &&
		printf "%x\n%x\n" $((0x$a)) $((0x$a + 3)) || return 1
	done >same_addrs &&
	compare same_address same_addrs &&
	stackrec symbolize -e same_address -f <same_addrs | grep -v :\? >names &&
	printf "%s\n" b_big b_big c_big c_big d_big d_big >expect &&
	test_cmp expect names
'

# A function DWARF names by DW_AT_name alone, in a language other than C and its kin: binutils and llvm-symbolizer
# name it by the symbol starting where it does. Go'"'"'s assembly functions took their DWARF name
# (runtime.rt0_go for runtime.rt0_go.abi0): 111 of 5,000 random .text addresses of a Go program named
# otherwise than llvm-symbolizer names them, none now.
test_expect_success ADDR2LINE,GO 'Go: assembly functions are named by their symbols (.abi0), as addr2line and llvm-symbolizer' '
	printf "%s\n" "package main" "func main() { println(len(\"x\")) }" >asm.go &&
	GOCACHE=$PWD/gocache GOPATH=$PWD/gopath GO111MODULE=off go build -o goasm asm.go &&
	nm goasm | awk "\$2 ~ /^[tT]\$/ && \$3 ~ /\\.abi0\$/ { print \$1 }" >abi0 &&
	test_line_count abi0 -gt 50 &&
	addr2line -e goasm -f <abi0 | awk "NR % 2 == 1" >expect &&
	stackrec symbolize -e goasm -f <abi0 | awk "NR % 2 == 1" >actual &&
	grep -x runtime.rt0_go.abi0 actual &&
	test_cmp expect actual
'

test_done
