#!/usr/bin/env bash
test_description='convert and archive on hostile input: FIFOs, devices, absurd compressed sizes, ".." paths, damaged archives'
# A recording and the binaries it names may come from another machine: whatever they hold, convert must end
# (each command runs under `timeout 20`), stay small, and say in one line which file it refused and why.
# Recordings are written by tests/unit/test-convert.c ("test-convert write OUT <script"); no root, no BPF.
. "$(dirname "$0")/test-lib.sh"

unset DEBUGINFOD_URLS
write_rec() { "$UNIT_DIR/test-convert" write "$@"; }
build_id() { readelf -n "$1" | awk '/Build ID/ { print $3 }'; }
# in_time CMD ARGS...: CMD (stackrec: the one under test) under `timeout 20`; a hang is a failure of its own.
in_time() {
	[ "$1" = stackrec ] && set -- "$STACKREC" "${@:2}"
	timeout 20 "$@"
	local rc=$?
	if [ $rc -eq 124 ]; then
		echo "in_time: still running after 20 s: $*" >&2
		return 124
	fi
	return $rc
}
# rec_of OUT PATH BUILD_ID: a recording of one sample in PATH (BUILD_ID or -), at file offset 0x1010: the text
# of a small program, so that its DWARF is read.
rec_of() {
	printf '%s\n' "host hostname=test" "mapping 100 400000 401000 1000 $2 $3 1" "sample 100 100 prog 10 400010 -" \
		end | write_rec "$1"
}

test_expect_success 'build a program, stripped, with a .gnu_debuglink' '
	printf "%s\n" "int main(void) { return 0; }" >prog.c &&
	cc -O1 -g -o prog prog.c &&
	objcopy --only-keep-debug prog prog.debug &&
	objcopy --strip-debug --add-gnu-debuglink=prog.debug prog stripped &&
	test -n "$(build_id prog)"
'

test_expect_success 'a FIFO at a recorded path is refused in one line, not opened' '
	mkfifo fifo &&
	rec_of fifo.rec "$PWD/fifo" - &&
	in_time stackrec convert fifo.rec --no-cache >fifo.folded 2>err &&
	cat err &&
	test_line_count err = 1 &&
	grep "^stackrec: warning: .$PWD/fifo. is not a regular file (a FIFO): not read$" err &&
	echo "prog;[fifo] 1" >expect &&
	test_cmp expect fifo.folded
'

# The recording itself, or the archive, a FIFO (another user's, in a shared directory): opened blocking, each
# command waited for a writer forever.
test_expect_success 'a FIFO given as the recording or the archive is refused in one line, not waited on' '
	mkfifo given &&
	for command in "info given" "convert given" "archive given -o given.archive"; do
		in_time stackrec $command 2>err;
		test $? = 1 &&
		test_line_count err = 1 &&
		grep -x "stackrec: error: cannot read .given.: not a regular file" err || return 1
	done &&
	in_time stackrec convert fifo.rec --no-cache --archive given -o given.folded 2>err;
	test $? = 3 &&
	grep -x "stackrec: error: cannot read .given.: not a regular file" err &&
	test_cmp expect given.folded
'

# A forged recording's [vdso] image of 60 MiB zeros (a vDSO is 8 KB): kept whole, copied, and put in the profile
# cache, the more such blocks the more memory. Images past 1 MiB are not used.
test_expect_success 'a [vdso] image past 1 MiB is not used, with a warning, in little memory' '
	head -c $((60 << 20)) /dev/zero >zeros &&
	{ echo "host hostname=test" &&
	  for i in 0 1 2 3; do echo "file 1 0102030405060708090a0b0c0d0e0f1011121314 $((i * (60 << 20))) [vdso] zeros" flush; done &&
	  echo "sample 100 100 prog 10 400010 -" && echo end; } | write_rec big-vdso.rec >/dev/null &&
	rm zeros &&
	# (SANITIZE=1: ASan would keep the freed 60 MiB frames in its quarantine)
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=1" \
		in_time /usr/bin/time -f %M -o big-vdso.rss "$STACKREC" convert big-vdso.rec --no-cache >/dev/null 2>err &&
	cat err big-vdso.rss &&
	test $(cat big-vdso.rss) -lt 250000 &&
	grep -x "stackrec: warning: the recording.s \[vdso\] image is larger than 1048576 bytes: not used (its frames stay unnamed)" err
'

# A module file cut short: its frames were "no symbols", which advised installing a debug package.
test_expect_success 'a recorded binary cut short: its frames say so, and --explain names the file' '
	head -c 3000 prog >cut-prog &&
	rec_of cut.rec "$PWD/cut-prog" - &&
	in_time stackrec convert cut.rec --no-cache --explain -v >cut.folded 2>err &&
	cat err &&
	echo "prog;[cut-prog] 1" >expect &&
	test_cmp expect cut.folded &&
	grep "cut-prog.: its section headers lie past its end: cut short, or a damaged header" err &&
	grep "^ *100.0%  cut-prog  damaged ELF file: the file found is cut short" err
'

test_expect_success 'a FIFO at a recorded path under --symfs is refused, and so is a symbolic link to a device' '
	mkdir -p root/usr/bin &&
	mkfifo root/usr/bin/app &&
	ln -s /dev/zero root/usr/bin/zero &&
	rec_of symfs.rec /usr/bin/app - &&
	in_time stackrec convert symfs.rec --symfs root --no-cache >/dev/null 2>err &&
	grep "^stackrec: warning: .$PWD/root/usr/bin/app. is not a regular file (a FIFO): not read$" err &&
	rec_of zero.rec /usr/bin/zero - &&
	in_time stackrec convert zero.rec --symfs root --no-cache >/dev/null 2>err &&
	grep "^stackrec: warning: .$PWD/root/usr/bin/zero. is a symbolic link under --symfs: not followed$" err
'

test_expect_success 'a FIFO in --debug-dir/.build-id is refused, by the lookup and by libdwfl'"'"'s own' '
	id=$(build_id prog) &&
	mkdir -p dbg/.build-id/${id:0:2} &&
	mkfifo dbg/.build-id/${id:0:2}/${id:2}.debug &&
	rec_of gone.rec "$PWD/no-such-prog" $id &&
	in_time stackrec convert gone.rec --no-cache --debug-dir dbg >/dev/null 2>err &&
	cat err &&
	test_line_count err = 1 &&
	grep "^stackrec: warning: .$PWD/dbg/.build-id/${id:0:2}/${id:2}.debug. is not a regular file (a FIFO): not read$" err &&
	rec_of stripped.rec "$PWD/stripped" $id &&
	in_time stackrec convert stripped.rec --no-cache --debug-dir dbg >/dev/null 2>err &&
	cat err &&
	test_line_count err = 1 &&
	grep "^stackrec: warning: .$PWD/dbg/.build-id/${id:0:2}/${id:2}.debug. is not a regular file (a FIFO): not read$" err
'

test_expect_success 'a FIFO in a debug dir is not archived, and archive ends' '
	id=$(build_id prog) &&
	in_time stackrec archive stripped.rec --no-cache --debug-dir "$PWD/dbg" -o fifo.archive 2>err &&
	cat err &&
	grep "^stackrec: warning: .$PWD/dbg/.build-id/${id:0:2}/${id:2}.debug. is not a regular file (a FIFO): not read$" err &&
	grep "^stackrec: archived 1 files" err
'

test_expect_success 'a .gnu_debuglink naming /dev/zero (through a symbolic link) ends, without a build ID to check, in one line' '
	mkdir -p zlink &&
	cc -O1 -g -Wl,--build-id=none -o noid prog.c &&
	objcopy --only-keep-debug noid zlink/prog.debug &&
	objcopy --strip-debug --add-gnu-debuglink=zlink/prog.debug noid zlink/prog &&
	rm zlink/prog.debug && ln -s /dev/zero zlink/prog.debug &&
	printf "%s\n" "host hostname=test" "mapping 100 400000 401000 0 $PWD/zlink/prog - 1" \
		"sample 100 100 prog 10 400010 -" end | write_rec zlink.rec &&
	in_time stackrec convert zlink.rec --no-cache >/dev/null 2>err &&
	cat err &&
	test_line_count err = 1 &&
	grep "^stackrec: warning: .$PWD/zlink/prog.debug. is not a regular file (a character device): not read$" err
'

test_expect_success 'a .gnu_debuglink target that is a FIFO is not archived, and archive ends' '
	id=$(build_id prog) &&
	mkdir -p flink &&
	objcopy --only-keep-debug prog flink/prog.debug &&
	objcopy --strip-debug --add-gnu-debuglink=flink/prog.debug prog flink/prog &&
	rm flink/prog.debug && mkfifo flink/prog.debug &&
	rec_of flink.rec "$PWD/flink/prog" $id &&
	in_time stackrec archive flink.rec --no-cache -o flink.archive 2>err &&
	cat err &&
	grep "^stackrec: warning: .$PWD/flink/prog.debug. is not a regular file (a FIFO): not read$" err &&
	grep "^stackrec: archived 1 files" err
'

test_expect_success 'a .gnu_debuglink that is a path ("../p.debug") is not followed' '
	mkdir -p up/bin &&
	objcopy --strip-all --add-gnu-debuglink=prog.debug prog up/bin/prog &&
	python3 -c "import sys; p = sys.argv[1]; d = open(p, \"rb\").read(); assert d.count(b\"prog.debug\\0\") == 1; open(p, \"wb\").write(d.replace(b\"prog.debug\\0\", b\"../p.debug\\0\"))" up/bin/prog &&
	cp prog.debug up/p.debug &&
	rec_of up.rec "$PWD/up/bin/prog" $(build_id prog) &&
	in_time stackrec convert up.rec --no-cache >up.folded 2>err &&
	cat err up.folded &&
	test_line_count err = 1 &&
	grep "^stackrec: warning: .$PWD/up/bin/prog. has a .gnu_debuglink that is a path (.\.\./p\.debug.): not followed$" err &&
	echo "prog;[prog] 1" >expect &&
	test_cmp expect up.folded
'

# bomb ELF TYPE SIZE: replaces the first SHF_COMPRESSED section of ELF (64-bit little-endian) with SIZE zero
# bytes compressed with TYPE (zlib or zstd), appended at the end of the file, as a real compression bomb: SIZE
# is not only declared, it inflates to that much. zlib's stream is one flushed 1 MiB block repeated.
bomb() {
	python3 - "$@" <<-\EOF
	import struct, subprocess, sys, zlib
	path, kind, size = sys.argv[1], sys.argv[2], int(sys.argv[3])
	data = bytearray(open(path, "rb").read())
	chunk = bytes(1 << 20)
	if kind == "zlib":
	    c = zlib.compressobj(1)
	    first = c.compress(chunk) + c.flush(zlib.Z_FULL_FLUSH)
	    unit = c.compress(chunk) + c.flush(zlib.Z_FULL_FLUSH)
	    adler = 1
	    for i in range(size >> 20):
	        adler = zlib.adler32(chunk, adler)
	    body = first + unit * ((size >> 20) - 1) + b"\x03\x00" + struct.pack(">I", adler)
	    ch_type = 1
	else:
	    body = subprocess.run("head -c %d /dev/zero | zstd -q -c" % size, shell=True, check=True,
	                          stdout=subprocess.PIPE).stdout
	    ch_type = 2
	shoff, = struct.unpack_from("<Q", data, 0x28)
	shentsize, shnum = struct.unpack_from("<HH", data, 0x3a)
	for i in range(shnum):
	    sh = shoff + i * shentsize
	    flags, = struct.unpack_from("<Q", data, sh + 8)
	    if flags & 0x800:
	        data += bytes(-len(data) % 8)
	        struct.pack_into("<QQ", data, sh + 24, len(data), 24 + len(body))
	        data += struct.pack("<IIQQ", ch_type, 0, size, 1) + body
	        break
	open(path, "wb").write(data)
	EOF
}

for type in zlib zstd; do
	test_expect_success "a binary whose $type-compressed section declares 1 GiB is refused, in little memory" '
		for i in $(seq 200); do echo "int f$i(int x) { return x * $i + $i; }"; done >big.c &&
		echo "int main(void) { return f1(0); }" >>big.c &&
		cc -O1 -g -gz=none -o big-$type big.c &&
		objcopy --compress-debug-sections='$type' big-$type &&
		bomb big-$type '$type' $((1 << 30)) &&
		rec_of big-$type.rec "$PWD/big-$type" $(build_id big-$type) &&
		in_time /usr/bin/time -f %M -o big-$type.rss "$STACKREC" convert big-$type.rec --no-cache >/dev/null 2>err &&
		cat err big-$type.rss &&
		test $(cat big-$type.rss) -lt 100000 &&
		test_line_count err = 1 &&
		grep "^stackrec: warning: .$PWD/big-$type. declares 1073741824 bytes of compressed sections, more than 64 times its size ([0-9]* bytes): not read$" err
	'
done

test_expect_success 'a recorded path with ".." does not climb out of --symfs' '
	mkdir -p jail/usr/lib &&
	cp prog secret &&
	rec_of dotdot.rec /usr/lib/../../../secret $(build_id prog) &&
	in_time stackrec convert dotdot.rec --symfs jail --no-cache --explain >dotdot.folded 2>err &&
	cat err &&
	! grep main dotdot.folded &&
	grep "^stackrec: warning: ./usr/lib/../../../secret. has a .\.\.. component: not looked up$" err &&
	grep "recorded path with .\.\..: " err
'

test_expect_success 'an archive block at an absurd offset makes convert --archive exit 1 and say why' '
	id=$(build_id prog) &&
	{
		echo "host archive_of=x.rec" &&
		echo "file 3 $id 0 /bin/prog prog" &&
		echo "file 3 $id 1099511627776 /bin/prog prog" &&
		echo end
	} | write_rec forged.archive &&
	rec_of forged.rec /bin/prog $id &&
	test_must_fail in_time stackrec convert forged.rec --no-cache --archive forged.archive >forged.folded 2>err &&
	cat err &&
	grep "^stackrec: error: .forged.archive.: a block of ./bin/prog. is at offset 1099511627776, not where the file.s bytes so far end ([0-9]*): damaged archive$" err
'

# A repeated byte compresses a thousand times and more: what an archive's blocks may fill the disk with is
# bounded (zeros are written as holes, which take no disk: they do not count).
# A recording given for its archive (--archive app.rec, the wrong file of the two) gave nothing and said nothing.
test_expect_success 'a recording given as --archive: one line naming it, the conversion done without it, exit 3' '
	rec_of plain.rec /nonexistent/prog - &&
	test_expect_code() { want=$1; shift; "$@"; test $? = $want; } &&
	test_expect_code 3 stackrec convert plain.rec --no-cache --archive plain.rec -o plain.folded 2>err &&
	cat err &&
	grep -x "stackrec: error: .plain.rec. is not an archive made by .stackrec archive. (no archive_of): not used" err &&
	echo "prog;[prog] 1" >expect &&
	test_cmp expect plain.folded
'

# The other way round: an archive (a file of the same format, of files and no samples) converted as the
# recording gave an empty output and exit 0.
test_expect_success 'an archive given as the recording: one line naming both, no output, exit 1; --symfs of a file: 2' '
	rec_of plain2.rec /nonexistent/prog - &&
	stackrec archive plain2.rec -o plain2.archive 2>/dev/null &&
	test_expect_code() { want=$1; shift; "$@"; test $? = $want; } &&
	test_expect_code 1 stackrec convert plain2.archive -o swapped.folded 2>err &&
	cat err &&
	grep -x "stackrec: error: .plain2.archive. is an archive (stackrec archive of .*plain2.rec.), not a recording: convert the recording with --archive .plain2.archive." err &&
	! test -e swapped.folded &&
	test_expect_code 2 stackrec convert plain2.rec --symfs plain2.rec -o symfs.folded 2>err &&
	grep -x "stackrec: error: cannot use --symfs .plain2.rec.: Not a directory" err &&
	! test -e symfs.folded
'

test_expect_success 'an archive whose files would extract to more than 64 times its size is refused, nothing left' '
	id=$(build_id prog) &&
	head -c 4194304 /dev/zero | tr "\000" A >repeated &&
	{
		echo "host archive_of=x.rec" &&
		echo "file 3 $id 0 /bin/prog.debug repeated" &&
		echo end
	} | write_rec bomb.archive &&
	test "$(stat -c %s bomb.archive)" -lt 65536 &&
	rec_of bomb.rec /bin/prog $id &&
	mkdir bomb-tmp &&
	test_must_fail env TMPDIR="$PWD/bomb-tmp" "$STACKREC" convert bomb.rec --no-cache --archive bomb.archive \
		>bomb.folded 2>err &&
	cat err &&
	grep "^stackrec: error: .bomb.archive.: its files would take more than 64 times its size once extracted: damaged or forged archive$" err &&
	test -z "$(ls -A bomb-tmp)"
'

# A file made mostly of holes costs its owner nothing; archiving it would read and write gigabytes of zeros.
test_expect_success 'archive leaves out a file that is mostly holes, with a warning' '
	cp prog sparse-prog &&
	truncate -s 1G sparse-prog &&
	rec_of sparse.rec "$PWD/sparse-prog" $(build_id prog) &&
	in_time stackrec archive sparse.rec --no-cache -o sparse.archive 2>err &&
	cat err &&
	grep "^stackrec: warning: .$PWD/sparse-prog. is mostly holes (1073741824 bytes, [0-9]* of data): not archived$" err &&
	grep "^stackrec: archived 0 files .*(some missing: see the warnings)$" err &&
	test "$(stat -c %s sparse.archive)" -lt 65536
'

# ld leaves the padding between segments aligned to 2 MiB as holes: a small program made so is mostly holes, and
# is archived all the same (it was left out). The test first checks that this file system keeps those holes.
test_expect_success 'archive keeps a small program whose segment padding is holes' '
	cc -O1 -g -Wl,-z,max-page-size=0x200000 -Wl,-z,common-page-size=0x200000 -Wl,-z,separate-code \
		-o aligned-prog prog.c &&
	test $(($(stat -c "%b * %B" aligned-prog) * 2)) -lt $(stat -c %s aligned-prog) &&
	main=$(nm aligned-prog | awk "/ T main\$/ { print \$1 }") &&
	printf "%s\n" "host hostname=test" \
		"mapping 100 400000 401000 200000 $PWD/aligned-prog $(build_id aligned-prog) 1" \
		"sample 100 100 prog 10 $(printf %x $((0x400000 + 0x$main - 0x200000))) -" end | write_rec aligned.rec &&
	stackrec archive aligned.rec --no-cache -o aligned.archive 2>err &&
	cat err &&
	! grep "holes" err &&
	grep "^stackrec: archived 1 file" err &&
	stackrec info --files aligned.archive >files &&
	grep -F "$PWD/aligned-prog" files &&
	mv aligned-prog aligned-prog.moved &&
	stackrec convert aligned.rec --no-cache --archive aligned.archive -o aligned.folded 2>err &&
	cat err &&
	! grep "error" err &&
	mv aligned-prog.moved aligned-prog &&
	stackrec convert aligned.rec --no-cache -o direct.folded &&
	test_cmp direct.folded aligned.folded &&
	echo "prog;main 1" >expect &&
	test_cmp expect aligned.folded
'

# split_dwo_fifo DIR COMPILER FLAGS...: builds a split-DWARF program in DIR, puts a FIFO at its .dwo file, and
# converts a sample in f: the FIFO is refused with one warning and f is named from the symbol table.
split_dwo_fifo() {
	dir=$1 &&
	shift &&
	mkdir -p $dir &&
	printf "%s\n" "int f(int x) { return x * 3; }" "int main(void) { return f(1); }" >$dir/prog.c &&
	(cd $dir && "$@" -o prog prog.c) &&
	test -f $dir/prog.dwo &&
	rm $dir/prog.dwo && mkfifo $dir/prog.dwo &&
	f=$(nm $dir/prog | awk "\$3 == \"f\" { print \$1 }") &&
	printf "%s\n" "host hostname=test" "mapping 100 400000 401000 1000 $PWD/$dir/prog $(build_id $dir/prog) 1" \
		"sample 100 100 prog 10 $(printf %x $((0x400000 + 0x$f - 0x1000))) -" end | write_rec $dir.rec &&
	in_time stackrec convert $dir.rec --no-cache >$dir.folded 2>err &&
	cat err $dir.folded &&
	test_line_count err = 1 &&
	grep "^stackrec: warning: .$PWD/$dir/prog.dwo. is not a regular file (a FIFO): not read$" err &&
	echo "prog;f 1" >expect &&
	test_cmp expect $dir.folded
}

test_expect_success 'a FIFO at the .dwo file of split DWARF is refused, not opened by libdw' '
	split_dwo_fifo split clang -O1 -g -gsplit-dwarf
'

# DWARF 4 has no skeleton unit type: gcc marks the unit with the GNU extension's DW_AT_GNU_dwo_id and
# DW_AT_GNU_dwo_name, and libdw takes such a unit for a skeleton. module_file_dwarf_files_ok reads the
# attributes of skeleton units only, so this one must be one to libdw too.
test_expect_success 'a FIFO at the .dwo file of gcc DWARF 4 split DWARF (GNU extension) is refused too' '
	split_dwo_fifo split4 gcc -O1 -g -gdwarf-4 -gsplit-dwarf
'

test_expect_success 'a FIFO at the .gnu_debugaltlink (dwz) file is refused, by convert and by archive' '
	mkdir -p alt &&
	{ printf "alt.debug\0" && head -c 20 /dev/urandom; } >altlink.bin &&
	objcopy --add-section .gnu_debugaltlink=altlink.bin prog alt/prog &&
	mkfifo alt/alt.debug &&
	rec_of alt.rec "$PWD/alt/prog" $(build_id alt/prog) &&
	in_time stackrec convert alt.rec --no-cache >alt.folded 2>err &&
	cat err alt.folded &&
	test_line_count err = 1 &&
	grep "^stackrec: warning: .$PWD/alt/alt.debug. is not a regular file (a FIFO): not read$" err &&
	echo "prog;_init 1" >expect &&
	test_cmp expect alt.folded &&
	in_time stackrec archive alt.rec --no-cache -o alt.archive 2>err &&
	cat err &&
	grep "^stackrec: warning: .$PWD/alt/alt.debug. is not a regular file (a FIFO): not read$" err &&
	grep "^stackrec: warning: .$PWD/alt/prog.: its dwz file .alt.debug. (build ID [0-9a-f]*) was not found; not archived$" err &&
	grep "^stackrec: archived 1 files" err
'

# Debian's stripped binaries keep the .gnu_debugaltlink of the DWARF that went to their debug files (perl, seq,
# rm): with no DWARF of their own they need no dwz file, and archive warned that one was missing.
# Under --symfs, a file with the dwz file'"'"'s build ID but no DWARF (its build-ID note alone) was taken for found:
# libdwfl cannot make it the alternate, so libdw looked for one itself, at the link'"'"'s absolute path on this
# machine: a FIFO there blocked convert for good.
test_expect_success 'under --symfs, a dwz file without DWARF in the tree: no look on this machine, no hang' '
	mkdir -p alt2 &&
	printf "%s\n" "int other(void) { return 1; }" "int main(void) { return other(); }" >other.c &&
	cc -O1 -g -o other other.c &&
	other_id=$(build_id other) &&
	{ printf "%s\0" "$PWD/alt2/common.debug" && printf "$(printf %s "$other_id" | sed "s/../\\\\x&/g")"; } >altlink2.bin &&
	test "$(readelf -n other | grep -c "$other_id")" = 1 &&
	objcopy --add-section .gnu_debugaltlink=altlink2.bin prog alt2/prog &&
	mkfifo alt2/common.debug &&
	mkdir -p "tree2$PWD/alt2" "tree2/usr/lib/debug/.build-id/${other_id:0:2}" &&
	cp alt2/prog "tree2$PWD/alt2/prog" &&
	objcopy --only-section=.note.gnu.build-id other "tree2/usr/lib/debug/.build-id/${other_id:0:2}/${other_id:2}.debug" &&
	rec_of alt2.rec "$PWD/alt2/prog" $(build_id alt2/prog) &&
	in_time stackrec convert alt2.rec --no-cache --symfs tree2 >alt2.folded 2>err &&
	cat err alt2.folded &&
	grep "its dwz file .$PWD/alt2/common.debug. (build ID $other_id) is not under --symfs: its DWARF is not read" err &&
	echo "prog;_init 1" >expect &&
	test_cmp expect alt2.folded
'

test_expect_success 'a binary with a .gnu_debugaltlink and no DWARF of its own: archive looks for no dwz file' '
	objcopy --add-section .gnu_debugaltlink=altlink.bin stripped alt/stripped &&
	! readelf -S alt/stripped | grep -F .debug_info &&
	rec_of alt-stripped.rec "$PWD/alt/stripped" $(build_id alt/stripped) &&
	in_time stackrec archive alt-stripped.rec --no-cache -o alt-stripped.archive 2>err &&
	cat err &&
	! grep -e warning -e "some missing" err &&
	grep "^stackrec: archived 1 files" err
'

test_expect_success 'symbolic links inside --symfs resolve inside it: an absolute one and a "../.." one do not escape' '
	mkdir -p outside jail2/usr jail2/opt/lib &&
	cp prog outside/prog && cp prog jail2/opt/lib/prog &&
	ln -s "$PWD/outside" jail2/usr/bin &&
	ln -s ../../outside jail2/usr/lib &&
	ln -s /etc jail2/usr/share &&
	ln -s /opt/lib jail2/usr/lib64 &&
	id=$(build_id prog) &&
	for p in bin lib; do
		rec_of escape-$p.rec /usr/$p/prog $id &&
		in_time stackrec convert escape-$p.rec --symfs jail2 --no-cache >escape-$p.folded 2>err &&
		cat err escape-$p.folded &&
		echo "prog;[prog] 1" >expect &&
		test_cmp expect escape-$p.folded || return 1
	done &&
	rec_of etc.rec /usr/share/passwd - &&
	in_time stackrec convert etc.rec --symfs jail2 --no-cache -v >etc.folded 2>err &&
	cat err &&
	! grep "not an ELF file" err &&
	grep "no file at the recorded path" err &&
	rec_of inside.rec /usr/lib64/prog $id &&
	in_time stackrec convert inside.rec --symfs jail2 --no-cache >inside.folded 2>err &&
	cat err inside.folded &&
	echo "prog;_init 1" >expect &&
	test_cmp expect inside.folded
'

# A recording cut short by another program while convert reads it (`: >` on it, a copy over it in place): its
# mapping loses the pages past the new end, and reading one is a SIGBUS. test-convert read-cut maps the recording
# as convert does, with an output made as convert's -o, cuts the file to 64 bytes and reads on: the process is to
# stop with one line naming the recording, exit 1, and leave no temporary output behind.
# A name of 3 MB (a kernel symbol here; a recorded path or a C++ name alike) is written in time linear in
# its length: the JSON writer counted the bytes left of the name for every character, quadratic: 1 MB took 9.6 s,
# 3 MB would take a minute and a half. in_time is no measure of speed, only of an end (now 0.1 s).
test_expect_success 'a name of 3 MB: trace and d3 end, the name whole' '
	name=$(head -c 3000000 /dev/zero | tr "\\0" x) &&
	printf "ffffffff81000000 T %s\nffffffff81000400 t read_zero\n" "$name" >long.kallsyms &&
	printf "%s\n" "host hostname=test" "kallsyms long.kallsyms" \
		"sample 100 100 app 1000000 - ffffffff81000010" "end" >long.script &&
	"$UNIT_DIR/test-convert" write long.rec <long.script &&
	in_time stackrec convert long.rec -f trace -o long.trace &&
	in_time stackrec convert long.rec -f d3 -o long.d3 &&
	printf "\"%s\"" "$name" >long.pattern &&
	grep -c -F -f long.pattern long.trace &&
	printf "\"%s_[k]\"" "$name" >long.pattern &&
	grep -q -F -f long.pattern long.d3
'

test_expect_success 'a recording cut short while it is read: one line naming it, exit 1, no output left' '
	cp "$FIXTURES/chain.rec" cut.rec &&
	mkdir cut-out &&
	{ "$UNIT_DIR/test-convert" read-cut cut.rec cut-out/out.folded >cut.out 2>cut.err; rc=$?; } ;
	cat cut.out cut.err &&
	test "$rc" = 1 &&
	test_line_count cut.err = 1 &&
	grep -x "stackrec: error: .$PWD/cut.rec. was cut short by another program while it was read" cut.err &&
	ls -A cut-out >left &&
	test_line_count left = 0
'

# Stopped by Ctrl-C, kill or a hang-up, convert removes what it had not finished: test-convert interrupted makes
# an output as convert's -o, a temporary entry in a cache directory as the caches do, and has a directory pending
# as convert --archive's extracted files (with a symbolic link to a file outside, not to be followed), then
# sends itself SIGTERM. The process must die of it, and leave none of the three.
test_expect_success 'killed while converting: no temporary output, cache entry or extracted directory left' '
	mkdir -p int-out int-cache int-dir/.build-id/ab int-dir/sub &&
	echo kept >int-kept &&
	echo x >int-dir/.build-id/ab/cdef.debug &&
	for i in $(seq 300); do echo $i >int-dir/.build-id/ab/f$i || return 1; done &&
	ln -s ../../../int-kept int-dir/.build-id/ab/link &&
	ln -s ../.. int-dir/sub/up &&
	{ "$UNIT_DIR/test-convert" interrupted int-out/out.folded int-cache int-dir >int.out 2>int.err; rc=$?; } ;
	cat int.out int.err &&
	test "$rc" = 143 &&
	test ! -s int.out &&
	ls -A int-out int-cache >left &&
	test_cmp - left <<-\EOF &&
	int-cache:

	int-out:
	EOF
	test ! -e int-dir &&
	echo kept >expect &&
	test_cmp expect int-kept
'

# The vDSO has no path: libdwfl took its name ("[vdso] of the running kernel", or "... embedded in the
# recording") for a file of the current directory, and read NAME.debug, ./.debug/NAME.debug and the like there:
# a file planted in the directory convert runs in named the vDSO's frames.
test_expect_success 'the vDSO'"'"'s debug file is not looked for in the current directory' '
	vdso_script 1 >script.vdso &&
	write_rec vdso.rec <script.vdso >/dev/null &&
	text=$(readelf -SW vdso.so | awk "\$2 == \".text\" { print \$4 }") &&
	at=$(printf "0x%x" $((0x$sym - 0x$text))) &&
	objcopy --add-symbol PLANTED=.text:$at,global,function vdso.so "[vdso] of the running kernel.debug" &&
	mkdir -p .debug &&
	cp "[vdso] of the running kernel.debug" .debug/ &&
	in_time stackrec convert vdso.rec >actual &&
	echo "t;__vdso_clock_gettime 1" >expect &&
	test_cmp expect actual
'

test_done
