#!/usr/bin/env bash
test_description='the profile cache: a second conversion reads the samples'"'"' profile a first one kept; the same bytes in every format as without it; a changed module file, a damaged entry or recording and the options that bypass it'
. "$(dirname "$0")/test-lib.sh"

# test-lib.sh points STACKREC_CACHE_DIR at this test's directory: the user's cache is never touched.
unset DEBUGINFOD_URLS
CACHE=$STACKREC_CACHE_DIR
# The fixture programs from a copy of fixtures/debug, which the tests below change; nothing of this machine's.
cp -rL "$FIXTURES/debug" dbg
convert() { stackrec convert "$1" --symfs "$FIXTURES/sysroot" --debug-dir "$PWD/dbg" "${@:2}"; }
entries() { ls "$CACHE/profiles" 2>/dev/null | grep -v '^\.'; }

test_expect_success 'every fixture in every format: the first run keeps an entry, the second reads it, both as --no-cache' '
	for rec in inline short chain unwind deep offcpu crash; do
		for format in folded pprof speedscope d3 trace report; do
			rm -rf "$CACHE" &&
			convert "$FIXTURES/$rec.rec" --no-cache -f $format -o expect &&
			test_must_fail test -e "$CACHE/profiles" &&
			convert "$FIXTURES/$rec.rec" -f $format -o first -v 2>first.err &&
			grep -q "profile cache entry .* written" first.err &&
			convert "$FIXTURES/$rec.rec" -f $format -o second -v 2>second.err &&
			grep -q "profile cache entry .*: [0-9]* stacks" second.err &&
			! grep -q "CFI look-ups" second.err &&
			cmp expect first && cmp expect second || { echo "$rec $format"; cat first.err second.err; return 1; }
		done
	done
'

test_expect_success 'formats without each sample'"'"'s time share one entry; speedscope and trace keep another' '
	rm -rf "$CACHE" &&
	convert "$FIXTURES/unwind.rec" -f folded -o /dev/null &&
	convert "$FIXTURES/unwind.rec" -f pprof -o /dev/null &&
	convert "$FIXTURES/unwind.rec" -f report -o /dev/null &&
	test "$(entries | wc -l)" = 1 &&
	convert "$FIXTURES/unwind.rec" -f speedscope -o /dev/null &&
	convert "$FIXTURES/unwind.rec" -f trace -o /dev/null &&
	test "$(entries | wc -l)" = 2
'

test_expect_success 'entries are private files; a copy of the recording elsewhere is the same recording' '
	rm -rf "$CACHE" &&
	convert "$FIXTURES/short.rec" -f folded -o expect &&
	e=$(entries) &&
	test "$(stat -c %a "$CACHE/profiles/$e")" = 600 &&
	test "$(stat -c %a "$CACHE/profiles")" = 700 &&
	cp "$FIXTURES/short.rec" copy.rec &&
	convert copy.rec -f folded -o actual -v 2>err &&
	grep -q "profile cache entry .*/$e.: " err &&
	test_cmp expect actual
'

test_expect_success 'a module file the unwinder read that changed since: converted from scratch, the entry replaced' '
	rm -rf "$CACHE" &&
	convert "$FIXTURES/unwind.rec" --no-cache -f folded -o expect &&
	convert "$FIXTURES/unwind.rec" -f folded -o /dev/null &&
	e=$(entries) && cp "$CACHE/profiles/$e" before &&
	for f in $(find dbg -type f); do touch -d "2001-02-03 04:05:06" "$f" || return 1; done &&
	convert "$FIXTURES/unwind.rec" -f folded -o actual -v 2>err &&
	grep -q "profile cache: .* has changed since" err &&
	grep -q "CFI look-ups" err &&
	test_cmp expect actual &&
	! cmp -s before "$CACHE/profiles/$e" &&
	convert "$FIXTURES/unwind.rec" -f folded -o again -v 2>err &&
	! grep -q "CFI look-ups" err &&
	test_cmp expect again
'

test_expect_success 'a module file that turns up later: converted from scratch' '
	rm -rf "$CACHE" dbg2 && mkdir dbg2 &&
	stackrec convert "$FIXTURES/unwind.rec" --symfs "$FIXTURES/sysroot" --debug-dir "$PWD/dbg2" -f folded -o without &&
	cp -rL dbg/. dbg2/ &&
	stackrec convert "$FIXTURES/unwind.rec" --symfs "$FIXTURES/sysroot" --debug-dir "$PWD/dbg2" -f folded -o with -v 2>err &&
	grep -q "has changed since" err &&
	convert "$FIXTURES/unwind.rec" --no-cache -f folded -o expect &&
	test_cmp expect with &&
	! cmp -s without with
'

test_expect_success 'a damaged entry is not used, the run converts from scratch and writes it anew' '
	rm -rf "$CACHE" &&
	convert "$FIXTURES/chain.rec" --no-cache -f pprof -o expect &&
	convert "$FIXTURES/chain.rec" -f pprof -o /dev/null &&
	e=$(entries) && cp "$CACHE/profiles/$e" good &&
	size=$(stat -c %s good) &&
	for at in 0 12 40 $((size / 2)) $((size - 1)); do
		cp good "$CACHE/profiles/$e" &&
		printf "\\377" | dd of="$CACHE/profiles/$e" bs=1 seek=$at conv=notrunc 2>/dev/null &&
		convert "$FIXTURES/chain.rec" -f pprof -o actual -v 2>err &&
		grep -q "profile cache entry .* not used: " err &&
		cmp expect actual &&
		cmp good "$CACHE/profiles/$e" || { cat err; return 1; }
	done &&
	head -c $((size / 3)) good >"$CACHE/profiles/$e" &&
	convert "$FIXTURES/chain.rec" -f pprof -o actual -v 2>err &&
	grep -q "not used: cut short or grown" err &&
	cmp expect actual
'

# A run without -v takes its modules' build IDs from the entry alone, and a build ID names files (the symbol
# cache's entries, the debug files looked for): one that is not hex, its checksum made right, is a damaged entry.
test_expect_success 'an entry whose module build ID is not hex is not used, even with its checksum right' '
	rm -rf "$CACHE" &&
	convert "$FIXTURES/unwind.rec" -f folded -o expect &&
	e=$(entries) &&
	python3 - "$CACHE/profiles/$e" <<-\PY &&
	import re, struct, sys, zlib
	path = sys.argv[1]
	b = bytearray(open(path, "rb").read())
	ids = [m.start() for m in re.finditer(rb"[0-9a-f]{40}", bytes(b[32:]))]
	assert len(ids) >= 3, ids
	at = 32 + ids[-1]  # the first is stackrec'"'"'s own, in the key, then the [vdso] image'"'"'s; the last a module'"'"'s
	b[at:at + 6] = b"../../"
	struct.pack_into("<I", b, 24, zlib.crc32(bytes(b[32:])) & 0xffffffff)
	open(path, "wb").write(b)
	PY
	convert "$FIXTURES/unwind.rec" -f folded -o actual -v 2>err &&
	grep -q "profile cache entry .* not used: damaged" err &&
	test_cmp expect actual &&
	test -z "$(find "$CACHE" -newer expect -name "*.*-profile*" ! -path "$CACHE/symbols/*")"
'

test_expect_success 'an entry that is a symbolic link or a FIFO is not followed or read' '
	rm -rf "$CACHE" &&
	convert "$FIXTURES/short.rec" -f folded -o expect &&
	e=$(entries) && mv "$CACHE/profiles/$e" target &&
	ln -s "$PWD/target" "$CACHE/profiles/$e" &&
	convert "$FIXTURES/short.rec" -f folded -o actual -v 2>err &&
	! grep -q "profile cache entry .*: [0-9]* stacks" err &&
	test_cmp expect actual &&
	rm -f "$CACHE/profiles/$e" && mkfifo "$CACHE/profiles/$e" &&
	timeout 20 "$STACKREC" convert "$FIXTURES/short.rec" --symfs "$FIXTURES/sysroot" --debug-dir "$PWD/dbg" -f folded -o actual &&
	test_cmp expect actual
'

test_expect_success 'a damaged recording keeps no entry (its messages are said again each run)' '
	rm -rf "$CACHE" &&
	size=$(stat -c %s "$FIXTURES/offcpu.rec") &&
	head -c $((size - 100)) "$FIXTURES/offcpu.rec" >cut.rec &&
	{ convert cut.rec -f folded -o /dev/null 2>err; test $? = 3; } &&
	{ convert cut.rec -f folded -o /dev/null -v 2>err; test $? = 3; } &&
	grep -q "not kept: this run was not clean" err &&
	test -z "$(entries)"
'

test_expect_success '--no-cache and --explain neither read nor write an entry' '
	rm -rf "$CACHE" &&
	convert "$FIXTURES/unwind.rec" --explain -f folded -o /dev/null 2>/dev/null &&
	test -z "$(entries)" &&
	convert "$FIXTURES/unwind.rec" -f folded -o /dev/null &&
	test -n "$(entries)" &&
	convert "$FIXTURES/unwind.rec" --no-cache -f folded -o /dev/null -v 2>err &&
	! grep -q "profile cache" err &&
	convert "$FIXTURES/unwind.rec" --explain -f folded -o /dev/null -v 2>err &&
	! grep -q "profile cache" err &&
	grep -q "CFI look-ups" err
'

# The running kernel's vDSO stands for a recorded one without a build ID when the recording's kernel release is
# this one's: the release the debug-file search compares is the recording's, which a run that reads an entry
# must still have (it once pointed into the profile the entry replaced: freed, caught by SANITIZE=1).
test_expect_success 'a second conversion names [vdso] frames from the running kernel'"'"'s vDSO as the first did' '
	rm -rf "$CACHE" &&
	vdso_script 2 >script.vdso &&
	write_rec vdso.rec <script.vdso >/dev/null &&
	echo "t;__vdso_clock_gettime 2" >expect &&
	stackrec convert vdso.rec -j 1 >first &&
	stackrec convert vdso.rec -j 1 -v >second 2>err &&
	grep -q "profile cache entry .*: 1 stacks" err &&
	test_cmp expect first &&
	test_cmp expect second
'

# Without -v a second conversion reads the entry alone, not the recording again: the kernel's names and the
# recording's [vdso] image must come from the entry. Here the recording is of another kernel (the running vDSO
# does not name its [vdso] frames: the image in it does), with kallsyms of the kernel image and of a module, and a
# kernel address no symbol covers.
test_expect_success 'without -v a second conversion reads the entry alone: kernel names and the recorded [vdso] as the first' '
	rm -rf "$CACHE" &&
	"$UNIT_DIR/test-convert" dump-vdso running-vdso.so &&
	# another build ID than the running vDSO'"'"'s, which would name the frames by it: only the image can
	python3 - running-vdso.so vdso.so <<-\PY &&
	import subprocess, sys
	data = bytearray(open(sys.argv[1], "rb").read())
	old = bytes.fromhex(subprocess.check_output(["readelf", "-n", sys.argv[1]]).decode().split("Build ID:")[1].split()[0])
	at = data.find(old)
	data[at + len(old) - 1] ^= 0xff
	open(sys.argv[2], "wb").write(data)
	PY
	sym=$(nm -D vdso.so | awk "{ sub(/@.*/, \"\", \$3) } \$3 == \"__vdso_clock_gettime\" { print \$1 }") &&
	test -n "$sym" && id=$(build_id vdso.so) && test -n "$id" && test "$id" != "$(build_id running-vdso.so)" &&
	printf "%s\n" "ffffffff81000000 T first_fn" "ffffffff81000100 T second_fn" "ffffffffc0000000 t mod_fn [ext4]" \
		"ffffffffc0000100 t mod_other [ext4]" >ksyms &&
	{
		echo "host kernel_release=0.0-other" &&
		echo "kallsyms ksyms" &&
		echo "file 1 $id 0 [vdso] vdso.so" &&
		echo "mapping 500 7f0000000000 7f0000002000 0 [vdso] - 1" &&
		printf "sample 500 500 t 10 %x ffffffffc0000010,ffffffff81000110\n" $((0x7f0000000000 + 0x$sym + 4)) &&
		printf "sample 500 500 t 20 %x ffffffff80000000\n" $((0x7f0000000000 + 0x$sym + 4)) &&
		echo end
	} >script.k &&
	write_rec k.rec <script.k >/dev/null &&
	for format in folded pprof speedscope d3 trace report; do
		stackrec convert k.rec --no-cache -f $format -o expect 2>expect.err &&
		stackrec convert k.rec -f $format -o first 2>first.err &&
		stackrec convert k.rec -f $format -o second 2>second.err &&
		test ! -s first.err && test ! -s second.err &&
		cmp expect first && cmp expect second || { echo "$format"; cat expect.err second.err; return 1; }
	done &&
	stackrec convert k.rec -o second.folded &&
	grep -q "^t;__vdso_clock_gettime;second_fn_\[k\];mod_fn_\[k\] 1$" second.folded &&
	grep -q "^t;__vdso_clock_gettime;\[kernel.kallsyms\]_\[k\] 1$" second.folded &&
	test "$(entries | wc -l)" = 2
'

test_expect_success 'another --debug-dir or --symfs is another entry' '
	rm -rf "$CACHE" &&
	convert "$FIXTURES/unwind.rec" -f folded -o /dev/null &&
	stackrec convert "$FIXTURES/unwind.rec" --symfs "$FIXTURES/sysroot" --debug-dir "$FIXTURES/debug" -f folded -o /dev/null &&
	stackrec convert "$FIXTURES/unwind.rec" --debug-dir "$PWD/dbg" -f folded -o /dev/null &&
	test "$(entries | wc -l)" = 3
'

test_done
