#!/usr/bin/env bash
test_description='decompressed copies of compressed debug files: kept by the first run, used by later ones, the same answers; checked before use, no symlink followed, capped, none with --no-cache'
. "$(dirname "$0")/test-lib.sh"

# test-lib.sh points STACKREC_CACHE_DIR at this test's directory: the user's cache is never touched.
unset DEBUGINFOD_URLS
CACHE=$STACKREC_CACHE_DIR
if command -v gcc >/dev/null && command -v objcopy >/dev/null && command -v nm >/dev/null; then
	test_set_prereq TOOLS
else
	test_unset_prereq TOOLS "no gcc, objcopy or nm (apt-get install gcc binutils)"
fi
LIBC=$(readlink -f /lib/x86_64-linux-gnu/libc.so.6 2>/dev/null)
libc_id=$(readelf -n "$LIBC" 2>/dev/null | sed -n 's/.*Build ID: //p')
if [ -n "$libc_id" ] && [ -f "/usr/lib/debug/.build-id/${libc_id:0:2}/${libc_id:2}.debug" ]; then
	test_set_prereq LIBC_DBG
else
	test_unset_prereq LIBC_DBG "no libc debug file (apt-get install libc6-dbg)"
fi

build_id() { readelf -n "$1" 2>/dev/null | sed -n 's/.*Build ID: //p'; }
copies() { find "$CACHE/decompressed" -maxdepth 1 -name '*.debug' 2>/dev/null | sort; }

# A stripped program and its debug file, zlib-compressed as Debian ships them, under dbg/.build-id/.
cat >prog.c <<'SRC'
#include <stdio.h>
static inline __attribute__((always_inline)) int leaf(int x) { return x * 3 + (x > 7 ? x / 3 : 1); }
__attribute__((noinline)) int outer(int n) { int s = 0; for (int i = 0; i < n; i++) s += leaf(i); return s; }
int main(int argc, char **argv) { (void)argv; printf("%d\n", outer(argc * 1000)); return 0; }
SRC

test_expect_success TOOLS 'build a stripped program with a zlib-compressed separate debug file' '
	gcc -O2 -g -o prog prog.c &&
	nm --defined-only prog | awk "\$2 ~ /^[tT]\$/ { print \$1 }" >addrs &&
	objdump -d --no-show-raw-insn --disassemble=outer prog | awk -F: "/^ +[0-9a-f]+:/ { print \$1 }" >>addrs &&
	test_line_count addrs -gt 20 &&
	id=$(build_id prog) && echo "$id" >id &&
	mkdir -p dbg/.build-id/${id:0:2} &&
	# 1.2 MB of numbers in a debug section of its own (libdw passes it over), a quarter of that compressed:
	# copies of a size the MiB cap below can tell apart (zeros would compress past what stackrec inflates)
	seq 1 175000 >pad.bin &&
	objcopy --only-keep-debug prog full.debug &&
	objcopy --add-section .debug_pad=pad.bin --set-section-flags .debug_pad=readonly,debug full.debug padded.debug &&
	objcopy --compress-debug-sections=zlib padded.debug dbg/.build-id/${id:0:2}/${id:2}.debug &&
	readelf -SW dbg/.build-id/${id:0:2}/${id:2}.debug 2>/dev/null | grep -E " \.debug_info .* C " &&
	readelf -SW dbg/.build-id/${id:0:2}/${id:2}.debug 2>/dev/null | grep -E " \.debug_pad .* C " &&
	test "$(stat -c %s dbg/.build-id/${id:0:2}/${id:2}.debug)" -lt 600000 &&
	strip prog
'

test_expect_success TOOLS 'the first run keeps a copy (0600); a later one uses it; the answers are those without it' '
	rm -rf "$CACHE" &&
	stackrec symbolize --no-cache --debug-dir dbg -e prog -a -f -i <addrs >expect &&
	grep -q "outer" expect &&
	test_must_fail test -e "$CACHE/decompressed" &&
	stackrec symbolize -v --debug-dir dbg -e prog -a -f -i <addrs >first 2>first.err &&
	grep "decompressed copy .*/decompressed/[0-9a-f]\{16\}\.debug. kept" first.err &&
	copies >kept && test_line_count kept = 1 &&
	test "$(stat -c %a "$(cat kept)")" = 600 &&
	test "$(stat -c %a "$CACHE/decompressed")" = 700 &&
	rm -rf "$CACHE/symbols" &&
	stackrec symbolize -v --debug-dir dbg -e prog -a -f -i <addrs >second 2>second.err &&
	grep "its decompressed copy .* is used" second.err &&
	! grep "decompressed [0-9]* compressed sections" second.err &&
	test_cmp expect first && test_cmp expect second
'

test_expect_success TOOLS 'the copy is the debug file with its sections decompressed: readelf reads the same DWARF' '
	id=$(cat id) &&
	copy=$(copies) &&
	objcopy --decompress-debug-sections dbg/.build-id/${id:0:2}/${id:2}.debug plain.debug &&
	readelf --debug-dump=info plain.debug 2>/dev/null | sed 1,3d >expect.info &&
	readelf --debug-dump=info "$copy" 2>/dev/null | sed 1,3d >actual.info &&
	test_line_count expect.info -gt 50 &&
	test_cmp expect.info actual.info &&
	! readelf -SW "$copy" 2>/dev/null | grep -E " \.debug_(info|line|str|abbrev) .* C "
'

test_expect_success TOOLS 'a copy cut short, or of another file, is made again and never read' '
	copy=$(copies) &&
	size=$(stat -c %s "$copy") &&
	# zeros over all but the ELF header and the trailer, and one byte less: read, it would name nothing
	dd if=/dev/zero of="$copy" bs=1 seek=64 count=$((size - 4096)) conv=notrunc 2>/dev/null &&
	truncate -s $((size - 1)) "$copy" &&
	rm -rf "$CACHE/symbols" &&
	stackrec symbolize -v --debug-dir dbg -e prog -a -f -i <addrs >actual 2>err &&
	grep "cut short: made again" err && grep "decompressed copy .* kept$" err &&
	test_cmp expect actual &&
	test "$(stat -c %s "$copy")" = "$size" &&
	# the same size, another file'"'"'s identity in the trailer
	python3 -c "
import sys
p = sys.argv[1]
b = bytearray(open(p, \"rb\").read())
n = int.from_bytes(b[-8:], \"little\")
assert b[-16:-8] == b\"STKDCPY1\" and 0 < n < len(b)
b[-16 - n] ^= 0x20  # the first byte of the path in the trailer
b[64:len(b) - 4096] = bytes(len(b) - 4096 - 64)  # and zeros over the DWARF: read, it would name nothing
open(p, \"wb\").write(b)
" "$copy" &&
	rm -rf "$CACHE/symbols" &&
	stackrec symbolize -v --debug-dir dbg -e prog -a -f -i <addrs >actual 2>err &&
	grep "is not of it, or cut short: made again" err &&
	test_cmp expect actual &&
	rm -rf "$CACHE/symbols" &&
	stackrec symbolize -v --debug-dir dbg -e prog -a -f -i <addrs >actual 2>err &&
	grep "is used" err && test_cmp expect actual
'

test_expect_success TOOLS 'a symlink where a copy goes is not followed, even to a valid copy, and is replaced' '
	copy=$(copies) &&
	mv "$copy" valid.copy && cp valid.copy valid.orig &&
	ln -s "$PWD/valid.copy" "$copy" &&
	rm -rf "$CACHE/symbols" &&
	stackrec symbolize -v --debug-dir dbg -e prog -a -f -i <addrs >actual 2>err &&
	! grep "is used" err && grep "decompressed copy .* kept$" err &&
	test_cmp expect actual &&
	cmp valid.orig valid.copy &&
	test -f "$copy" && ! test -L "$copy"
'

test_expect_success TOOLS 'a debug file rewritten in place, its size and modification time kept, gets a copy of its own' '
	id=$(cat id) && debug=dbg/.build-id/${id:0:2}/${id:2}.debug &&
	cp -p "$debug" same.debug && touch -r "$debug" same.debug &&
	cat same.debug >"$debug" && touch -r same.debug "$debug" &&
	rm -rf "$CACHE/symbols" &&
	stackrec symbolize -v --debug-dir dbg -e prog -a -f -i <addrs >actual 2>err &&
	grep "decompressed copy .* kept$" err &&
	test_cmp expect actual &&
	copies >kept && test_line_count kept = 2
'

test_expect_success TOOLS 'STACKREC_DECOMPRESSED_CACHE_MB: least recently used first; a copy over the cap is not kept' '
	rm -rf "$CACHE" &&
	STACKREC_DECOMPRESSED_CACHE_MB=1 stackrec symbolize -v --debug-dir dbg -e prog -a -f -i <addrs >actual 2>err &&
	test_cmp expect actual &&
	! grep "decompressed copy .* kept$" err && test -z "$(copies)" &&
	# two copies (two identities of the debug file), 1.2 MB each: with a cap of 2 MiB, keeping the newer
	# evicts the older
	id=$(cat id) && debug=dbg/.build-id/${id:0:2}/${id:2}.debug &&
	touch -d "2001-01-01" "$debug" &&
	STACKREC_DECOMPRESSED_CACHE_MB=2 stackrec symbolize --debug-dir dbg -e prog -f <addrs >/dev/null &&
	copies >old && test_line_count old = 1 &&
	touch -d "2002-02-02" "$debug" &&
	rm -rf "$CACHE/symbols" &&
	STACKREC_DECOMPRESSED_CACHE_MB=2 stackrec symbolize -v --debug-dir dbg -e prog -a -f -i <addrs >actual 2>err &&
	test_cmp expect actual &&
	grep "evicted .$(basename "$(cat old)"). from the decompressed debug files" err &&
	copies >new && test_line_count new = 1 &&
	! test_cmp old new
'

# A copy's blocks are reserved before it is written: a full disk then makes a memory copy of it (the same
# answers, nothing kept), not a half-written one. Here the cache is a 1 MiB tmpfs, private to the test's mount
# namespace.
test_expect_success ROOT,TOOLS 'a full disk: no copy kept, no crash, the same answers' '
	rm -rf "$CACHE" small && mkdir small &&
	STACKREC=$STACKREC unshare -m sh -c "mount -t tmpfs -o size=1m none small &&
		STACKREC_CACHE_DIR=\$PWD/small \"\$STACKREC\" symbolize -v --debug-dir dbg -e prog -a -f -i <addrs >actual 2>err;
		echo \$? >status; ls -A small/decompressed >left 2>&1" &&
	cat err &&
	test "$(cat status)" = 0 &&
	grep "no room to keep a decompressed copy" err &&
	test_cmp expect actual &&
	test_line_count left = 0
'

# Sections are inflated in pieces, each written to the copy before the next (zstd_sections.c, STREAM_PIECE): 17 MB
# of numbers here, 4 MB compressed, come out whole.
test_expect_success TOOLS 'a large debug file: its sections written to the copy in pieces, the same answers; a damaged stream keeps nothing' '
	id=$(cat id) && mkdir -p big/.build-id/${id:0:2} &&
	seq 1 2400000 >bigpad.bin &&
	objcopy --add-section .debug_pad=bigpad.bin --set-section-flags .debug_pad=readonly,debug full.debug bigpadded.debug &&
	objcopy --compress-debug-sections=zlib bigpadded.debug big/.build-id/${id:0:2}/${id:2}.debug &&
	rm -rf "$CACHE" &&
	stackrec symbolize -v --debug-dir big -e prog -a -f -i <addrs >actual 2>err &&
	grep "decompressed copy .* kept$" err &&
	test_cmp expect actual &&
	objcopy --decompress-debug-sections big/.build-id/${id:0:2}/${id:2}.debug bigplain.debug &&
	objcopy -O binary --only-section=.debug_pad bigplain.debug expect.pad &&
	objcopy -O binary --only-section=.debug_pad "$(copies)" actual.pad &&
	cmp expect.pad actual.pad &&
	rm -rf "$CACHE/symbols" &&
	stackrec symbolize -v --debug-dir big -e prog -a -f -i <addrs >actual 2>err &&
	grep "is used" err && test_cmp expect actual &&
	# a byte of the middle of the compressed .debug_pad flipped: its stream fails, no copy is kept, the rest of
	# the file is still read for names
	python3 - big/.build-id/${id:0:2}/${id:2}.debug <<-\PY &&
	import subprocess, sys
	path = sys.argv[1]
	for l in subprocess.check_output(["readelf", "-SW", path], stderr=subprocess.DEVNULL).decode().splitlines():
	    if " .debug_pad " in l:
	        f = l.split("]")[1].split(); off, size = int(f[3], 16), int(f[4], 16)
	b = bytearray(open(path, "rb").read())
	b[off + size // 2] ^= 0xff
	open(path, "wb").write(b)
	PY
	rm -rf "$CACHE" &&
	stackrec symbolize -v --debug-dir big -e prog -a -f -i <addrs >damaged 2>err &&
	grep "cannot decompress its compressed sections" err &&
	test_cmp expect damaged &&
	! grep "decompressed copy .* kept$" err && test -z "$(copies)" &&
	test -z "$(ls -A "$CACHE/decompressed")"
'

# Without Debian's libisal2 (dlopen'ed when a copy is first made) zlib sections are inflated whole by libdeflate:
# the same copy, byte for byte. Here libisal.so.2 is hidden behind an empty file in a private mount namespace.
test_expect_success ROOT,TOOLS 'without ISA-L: the same copy, inflated whole' '
	isal=$(ldconfig -p | awk "/libisal\\.so\\.2 .*x86-64/ { print \$NF; exit }") &&
	test -n "$isal" &&
	rm -rf "$CACHE" &&
	stackrec symbolize --debug-dir dbg -e prog -a -f -i <addrs >with.isal &&
	cp "$(copies)" with-isal.copy &&
	rm -rf "$CACHE" && : >empty.so &&
	STACKREC=$STACKREC unshare -m sh -c "mount --bind empty.so \"$isal\" &&
		\"\$STACKREC\" symbolize -v --debug-dir dbg -e prog -a -f -i <addrs >without.isal 2>err" &&
	grep "libisal.so.2 (Debian.s libisal2) not loaded" err &&
	grep "decompressed copy .* kept$" err &&
	test_cmp with.isal without.isal &&
	cmp with-isal.copy "$(copies)"
'

test_expect_success TOOLS 'symbolize --no-cache keeps no copy and reads none that is there' '
	rm -rf "$CACHE" &&
	stackrec symbolize --debug-dir dbg -e prog -f <addrs >/dev/null &&
	test -n "$(copies)" && rm -rf "$CACHE/symbols" &&
	stackrec symbolize -v --no-cache --debug-dir dbg -e prog -a -f -i <addrs >actual 2>err &&
	test_cmp expect actual &&
	! grep "is used" err && ! grep "decompressed copy .* kept$" err &&
	grep "decompressed [0-9]* compressed sections" err &&
	test_must_fail test -e "$CACHE/symbols"
'

test_expect_success LIBC_DBG 'libc with its Debian debug file: the same answers from the copy as without it' '
	python3 - "$LIBC" >libc.addrs <<-\PY &&
	import subprocess, sys
	for l in subprocess.check_output(["readelf", "-SW", sys.argv[1]]).decode().splitlines():
	    if " .text " in l:
	        f = l.split("]")[1].split(); start, size = int(f[2], 16), int(f[4], 16)
	print("\n".join("0x%x" % (start + i * (size // 400)) for i in range(400)))
	PY
	rm -rf "$CACHE" &&
	stackrec symbolize --no-cache -e "$LIBC" -a -f -i <libc.addrs >expect.libc &&
	test "$(grep -c "^??$" expect.libc)" -lt 10 &&
	stackrec symbolize -v -e "$LIBC" -a -f -i <libc.addrs >first.libc 2>err &&
	grep "decompressed copy .* kept$" err &&
	rm -rf "$CACHE/symbols" &&
	stackrec symbolize -v -e "$LIBC" -a -f -i <libc.addrs >second.libc 2>err &&
	grep "is used" err &&
	test_cmp expect.libc first.libc && test_cmp expect.libc second.libc
'

# Root working for a user (sudo) keeps copies in that user's cache: not of a file the user cannot reach. The check
# was the file's own mode, so a world-readable debug file in another user's 0700 directory was copied.
test_expect_success ROOT,TOOLS 'root working for a user keeps no copy of a debug file that user cannot reach' '
	rm -rf private usercache &&
	mkdir usercache && chown 65534:65534 usercache &&
	# 0750, group root: a check made with root'"'"'s groups (faccessat under setfsuid) let this through too
	mkdir private && cp -r dbg private/ && chmod -R a+rX private && chgrp 0 private && chmod 750 private &&
	stackrec symbolize --no-cache --debug-dir private/dbg -e prog -a -f -i <addrs >expect &&
	SUDO_UID=65534 SUDO_GID=65534 STACKREC_CACHE_DIR=$PWD/usercache \
		stackrec symbolize -v --debug-dir private/dbg -e prog -a -f -i <addrs >hidden 2>hidden.err &&
	test_cmp expect hidden &&
	! grep "decompressed copy .* kept" hidden.err &&
	test -z "$(find usercache -name "*.debug")" &&
	chmod 755 private && rm -rf usercache/symbols &&
	SUDO_UID=65534 SUDO_GID=65534 STACKREC_CACHE_DIR=$PWD/usercache \
		stackrec symbolize -v --debug-dir private/dbg -e prog -a -f -i <addrs >open 2>open.err &&
	test_cmp expect open &&
	grep "decompressed copy .* kept" open.err &&
	find usercache -name "*.debug" >one && test_line_count one = 1 &&
	test "$(stat -c %u "$(cat one)")" = 65534
'

test_done
