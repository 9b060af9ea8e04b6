#!/usr/bin/env bash
test_description='the symbol cache: the same bytes cold, warm and without it; safe files; a damaged entry is rebuilt; a debug file found later replaces an entry; LRU trim'
. "$(dirname "$0")/test-lib.sh"

# test-lib.sh points STACKREC_CACHE_DIR at this test's directory: the user's cache is never touched.
unset DEBUGINFOD_URLS
CACHE=$STACKREC_CACHE_DIR
if command -v nm >/dev/null && command -v objcopy >/dev/null; then test_set_prereq BINUTILS; else test_unset_prereq BINUTILS "no nm/objcopy (apt-get install binutils)"; fi
LIBC=$(readlink -f /lib/x86_64-linux-gnu/libc.so.6 2>/dev/null)
if [ -n "$LIBC" ] && command -v readelf >/dev/null &&
	[ -n "$(ls /usr/lib/debug/.build-id/*/*.debug 2>/dev/null | head -1)" ]; then
	test_set_prereq LIBC_DBG
else
	test_unset_prereq LIBC_DBG "no libc debug file (apt-get install libc6-dbg)"
fi

cat >prog.c <<'SRC'
#include <stdio.h>
static inline __attribute__((always_inline)) int leaf(int x) { return x * 3 + (x > 7 ? x / 3 : 1); }
__attribute__((noinline)) int outer(int n) { int s = 0; for (int i = 0; i < n; i++) s += leaf(i); return s; }
int main(int argc, char **argv) { (void)argv; printf("%d\n", outer(argc * 1000)); return 0; }
SRC

# every instruction of outer, each function start, and addresses in no function
addresses() {
	nm --defined-only "$1" | awk '$2 ~ /^[tTwW]$/ { print $1 }' &&
	objdump -d --no-show-raw-insn --disassemble=outer "$1" | awk -F: '/^ +[0-9a-f]+:/ { print $1 }' &&
	echo 0 && echo 10000000
}

entries() { ls "$CACHE/symbols" 2>/dev/null | grep -v '^\.' ; }

test_expect_success BINUTILS 'symbolize: cold, warm and --no-cache give the same bytes for every flag set' '
	gcc -O2 -g -o prog prog.c &&
	addresses prog >addrs && test_line_count addrs -gt 20 &&
	for flags in -f "-f -i" "-a -f -i -C" "-p -f -i -s" --json; do
		rm -rf "$CACHE" &&
		stackrec symbolize --no-cache -e prog $flags <addrs >expect &&
		test_must_fail test -e "$CACHE/symbols" &&
		stackrec symbolize -e prog $flags <addrs >cold &&
		test -n "$(entries)" &&
		stackrec symbolize -e prog $flags <addrs >warm &&
		test_cmp expect cold && test_cmp expect warm || return 1
	done
'

test_expect_success BINUTILS 'a warm run answers new addresses from DWARF and adds them to the entry' '
	rm -rf "$CACHE" &&
	head -5 addrs >first &&
	stackrec symbolize -e prog -f -i <first >/dev/null &&
	stackrec symbolize -e prog -f -i <addrs >actual &&
	stackrec symbolize --no-cache -e prog -f -i <addrs >expect &&
	test_cmp expect actual &&
	stackrec symbolize -v -e prog -f -i <addrs 2>err >actual &&
	test_cmp expect actual &&
	n=$(while read -r a; do printf "%d\n" 0x${a#0x}; done <addrs | sort -u | wc -l) &&
	grep -F ": $n addresses" err
'

test_expect_success BINUTILS 'an entry has the same bytes whatever the order its answers came in, and an address asked twice in a cold run is answered the same' '
	rm -rf "$CACHE" &&
	stackrec symbolize -e prog -f -i <addrs >/dev/null &&
	e=$(entries) && cp "$CACHE/symbols/$e" forward &&
	rm -rf "$CACHE" &&
	tac addrs >reversed &&
	stackrec symbolize -e prog -f -i <reversed >/dev/null &&
	cmp forward "$CACHE/symbols/$e" &&
	rm -rf "$CACHE" &&
	tail -7 addrs >last &&
	stackrec symbolize -e prog -f -i <last >/dev/null &&
	stackrec symbolize -e prog -f -i <reversed >/dev/null &&
	cmp forward "$CACHE/symbols/$e" &&
	rm -rf "$CACHE" &&
	cat addrs reversed addrs >twice &&
	stackrec symbolize --no-cache -e prog -f -i <twice >expect &&
	stackrec symbolize -e prog -f -i <twice >actual &&
	test_cmp expect actual
'

test_expect_success BINUTILS 'addresses with the same answer share one run of frames in the entry' '
	rm -rf "$CACHE" &&
	stackrec symbolize -e prog -f -i <addrs >/dev/null &&
	python3 - "$CACHE/symbols/$(entries)" <<-\PY
	import struct, sys
	data = open(sys.argv[1], "rb").read()
	addresses_offset, address_count, frames_offset, frame_count = struct.unpack_from("4Q", data, 48)
	runs = {}
	for i in range(address_count):
	    first, count = struct.unpack_from("II", data, addresses_offset + 16 * i + 8)
	    if count:
	        runs[(first, count)] = data[frames_offset + 32 * first:frames_offset + 32 * (first + count)]
	asked = sum(count for first, count in runs)
	# every instruction of outer: many lie on one line of leaf, inlined, and have one answer
	assert len(set(runs.values())) < address_count, (len(runs), address_count)
	assert len(set(runs.values())) == len(runs), "a run stored twice"
	assert sum(count for first, count in runs) == frame_count, (asked, frame_count)
	PY
'

test_expect_success BINUTILS 'entries are 0600 in a 0700 directory, owned by us' '
	test "$(stat -c %a "$CACHE/symbols")" = 700 &&
	for e in $(entries); do
		test "$(stat -c %a:%u "$CACHE/symbols/$e")" = "600:$(id -u)" || return 1
	done
'

test_expect_success BINUTILS 'a cut, flipped, emptied or foreign entry is not used, and is rebuilt' '
	stackrec symbolize --no-cache -e prog -a -f -i <addrs >expect &&
	stackrec symbolize -e prog -a -f -i <addrs >/dev/null &&
	e=$CACHE/symbols/$(entries | grep "addr2line$") && test -f "$e" &&
	cp "$e" good &&
	size=$(stat -c %s good) &&
	for damage in cut flip empty garbage header; do
		cp good "$e" &&
		case $damage in
		cut) truncate -s $((size / 2)) "$e" ;;
		flip) printf "\\377" | dd of="$e" bs=1 seek=$((size - 3)) conv=notrunc 2>/dev/null ;;
		empty) : >"$e" ;;
		garbage) head -c 4096 /dev/urandom >"$e" ;;
		header) printf "STKSYMC\\n\\002\\000\\000\\000" | dd of="$e" conv=notrunc 2>/dev/null ;;
		esac &&
		stackrec symbolize -v -e prog -a -f -i <addrs >actual 2>err &&
		test_cmp expect actual &&
		{ [ $damage = empty ] || grep -F "not used" err; } &&
		cmp -s good "$e" || { echo "damage: $damage"; return 1; }
	done
'

test_expect_success BINUTILS 'a symbolic link in place of an entry or of the directory is not followed' '
	e=$(entries | grep "addr2line$") &&
	rm "$CACHE/symbols/$e" && ln -s "$TEST_DIR/good" "$CACHE/symbols/$e" &&
	stackrec symbolize -e prog -a -f -i <addrs >actual && test_cmp expect actual &&
	test -f "$CACHE/symbols/$e" && ! test -L "$CACHE/symbols/$e" &&
	mv "$CACHE/symbols" elsewhere && mkdir elsewhere2 && ln -s "$TEST_DIR/elsewhere2" "$CACHE/symbols" &&
	stackrec symbolize -e prog -a -f -i <addrs >actual && test_cmp expect actual &&
	test -z "$(ls elsewhere2)" &&
	rm "$CACHE/symbols"
'

# A CACHE/symbols of another user, or one others may write to, may hold entries anyone planted: it was used,
# whoever owned it and whatever its mode, CACHE alone was checked.
test_expect_success BINUTILS,ROOT 'a symbols directory of another user, or writable by others, is neither read nor written' '
	mkdir shared-cache && chmod 0777 shared-cache &&
	for how in "chown nobody" "chmod 0777" "chmod 0770"; do
		mkdir shared-cache/symbols && $how shared-cache/symbols &&
		STACKREC_CACHE_DIR=$PWD/shared-cache stackrec symbolize -v -e prog -a -f -i <addrs >actual 2>err &&
		test_cmp expect actual &&
		grep "not using the symbol cache in .*shared-cache/symbols.*: not ours alone" err &&
		test -z "$(ls -A shared-cache/symbols)" &&
		rmdir shared-cache/symbols || exit 1
	done &&
	mkdir shared-cache/symbols && chmod 0700 shared-cache/symbols &&
	STACKREC_CACHE_DIR=$PWD/shared-cache stackrec symbolize -e prog -a -f -i <addrs >actual &&
	test_cmp expect actual &&
	test -n "$(ls -A shared-cache/symbols)"
'

test_expect_success BINUTILS 'a debug file found later replaces an entry made from the stripped binary alone' '
	rm -rf "$CACHE" &&
	cp prog stripped && objcopy --only-keep-debug stripped stripped.dbg && strip stripped &&
	id=$(readelf -n stripped | awk "/Build ID/ { print \$3 }") && test -n "$id" &&
	stackrec symbolize -e stripped -f -i <addrs >without &&
	! grep -F prog.c without &&
	mkdir -p debug/.build-id/${id:0:2} && mv stripped.dbg debug/.build-id/${id:0:2}/${id:2}.debug &&
	stackrec symbolize -e stripped --debug-dir debug -f -i <addrs >with &&
	stackrec symbolize --no-cache -e stripped --debug-dir debug -f -i <addrs >expect &&
	test_cmp expect with && grep -F prog.c with &&
	test "$(entries | wc -l)" = 1
'

# libdwfl looks for a .gnu_debuglink target under each debug directory after every tail of the binary's directory,
# down to DIR/LINK itself: one that turns up there makes another identity too (the profile cache's as well).
test_expect_success BINUTILS 'a debug file that turns up as DIR/LINK (its .gnu_debuglink under a debug directory) replaces an entry' '
	rm -rf "$CACHE" debug2 && mkdir debug2 &&
	cp prog linked && objcopy --only-keep-debug linked linked.dbg && strip linked &&
	objcopy --add-gnu-debuglink=linked.dbg linked && mv linked.dbg debug2-later.dbg &&
	stackrec symbolize -e linked --debug-dir debug2 -f -i <addrs >without &&
	! grep -F prog.c without &&
	mv debug2-later.dbg debug2/linked.dbg &&
	stackrec symbolize -e linked --debug-dir debug2 -f -i <addrs >with &&
	stackrec symbolize --no-cache -e linked --debug-dir debug2 -f -i <addrs >expect &&
	grep -F prog.c expect &&
	test_cmp expect with
'

test_expect_success BINUTILS 'the directory is trimmed to STACKREC_SYMBOL_CACHE_MB, least recently used first' '
	rm -rf "$CACHE" &&
	stackrec symbolize -e prog -f <addrs >/dev/null &&
	stackrec symbolize -e prog -f -C <addrs >/dev/null &&
	test "$(entries | wc -l)" = 2 &&
	STACKREC_SYMBOL_CACHE_MB=0 stackrec symbolize -e prog -f -i 0x1 >/dev/null &&
	test "$(entries | wc -l)" = 0
'

test_expect_success LIBC_DBG 'libc: 3000 random text addresses, the same bytes cold, warm and without the cache' '
	rm -rf "$CACHE" &&
	python3 - "$LIBC" >libc-addrs <<-\PY &&
	import random, subprocess, sys
	for l in subprocess.check_output(["readelf", "-SW", sys.argv[1]]).decode().splitlines():
	    if " .text " in l:
	        f = l.split("]")[1].split(); start, size = int(f[2], 16), int(f[4], 16)
	random.seed(11)
	print("\n".join("%x" % (start + random.randrange(size)) for _ in range(3000)))
	PY
	stackrec symbolize --no-cache -e "$LIBC" -a -f -i -C <libc-addrs >expect &&
	stackrec symbolize -e "$LIBC" -a -f -i -C <libc-addrs >cold &&
	stackrec symbolize -e "$LIBC" -a -f -i -C <libc-addrs >warm &&
	test_cmp expect cold && test_cmp expect warm
'

# convert with an empty build-ID cache of our own (--cache-dir): nothing of this machine is used, as in
# t3100-fixtures, but the symbol cache is on.
for rec in inline deep unwind; do
	test_expect_success "convert $rec.rec: every format the same, cold and warm, as expected" "
		rm -rf cc && mkdir cc &&
		for pass in cold warm; do
			for format in folded pprof speedscope d3 trace; do
				stackrec convert \"\$FIXTURES/$rec.rec\" --symfs \"\$FIXTURES/sysroot\" --cache-dir cc \
					--debug-dir \"\$FIXTURES/debug\" -f \$format -o $rec.\$format &&
				cmp \"\$FIXTURES/expected/$rec.\$format\" $rec.\$format || { echo \"\$pass \$format\"; return 1; }
			done &&
			test -n \"\$(ls cc/symbols)\" || return 1
		done
	"
done

test_expect_success 'convert --no-cache writes no symbol cache' '
	rm -rf cc && mkdir cc &&
	stackrec convert "$FIXTURES/inline.rec" --symfs "$FIXTURES/sysroot" --cache-dir cc --no-cache \
		--debug-dir "$FIXTURES/debug" -f folded -o inline.folded &&
	test_must_fail test -e cc/symbols
'

test_done
