#!/usr/bin/env bash
test_description='stackrec record: symbols anywhere — the build-ID cache, the vDSO image, JIT perf maps'
. "$(dirname "$0")/test-lib.sh"

# Backgrounded recorders and workloads run "$STACKREC" / programs directly (see t2000).
# Nothing here may touch the real cache in $HOME.
export STACKREC_CACHE_DIR=$TEST_DIR/cache

# build_id FILE: the GNU build ID of an ELF file, in hex.
build_id() {
	readelf -n "$1" | sed -n 's/^ *Build ID: *//p'
}

# cache_path ID: where the cache keeps the file with that build ID.
cache_path() {
	echo "$STACKREC_CACHE_DIR/.build-id/${1:0:2}/${1:2}"
}

test_expect_success 'build a busy program' '
	clang -O2 -g -fno-omit-frame-pointer -o busy "$FIXTURES/inline.c" &&
	id=$(build_id busy) && test -n "$id" && echo "$id" >busy.id
'

test_expect_success BPF 'the cache gets the recorded binary under .build-id, with the same build ID' '
	stackrec record -o cache.rec -- ./busy 300 2>err &&
	! grep warning err &&
	cached=$(cache_path "$(cat busy.id)") &&
	test -f "$cached" &&
	test "$(build_id "$cached")" = "$(cat busy.id)" &&
	cmp busy "$cached"
'

test_expect_success BPF 'every cached file has the build ID of its name' '
	for f in "$STACKREC_CACHE_DIR"/.build-id/*/*; do
		name=$(basename "$(dirname "$f")")$(basename "$f") &&
		test "$(build_id "$f")" = "$name" || return 1
	done
'

test_expect_success BPF '--no-cache leaves the cache empty' '
	STACKREC_CACHE_DIR=$TEST_DIR/nocache stackrec record --no-cache -o nocache.rec -- ./busy 200 &&
	test ! -e nocache
'

test_expect_success BPF '--build-id-cache DIR overrides the environment' '
	stackrec record --build-id-cache other -o other.rec -- ./busy 200 &&
	id=$(cat busy.id) &&
	test -f "other/.build-id/${id:0:2}/${id:2}"
'

test_expect_success BPF '--cache-size evicts the least recently used entries after recording' '
	mkdir -p evict/.build-id/00 &&
	# 8 MB unused since 2001; what the run caches (busy, libc, libm, ld.so) is well under 6 MB.
	head -c 8000000 /dev/zero >evict/.build-id/00/old &&
	touch -a -m -d "2001-01-01" evict/.build-id/00/old &&
	stackrec record --build-id-cache evict --cache-size 6 -o evict.rec -- ./busy 200 &&
	test ! -e evict/.build-id/00/old &&
	id=$(cat busy.id) &&
	test -f "evict/.build-id/${id:0:2}/${id:2}"
'

# A file's sizes are its owner's word, and `record -a` as root reads the files other users' processes map. Two
# small libraries (two builds: two build IDs) made 1.1 GiB sparse files (no disk blocks), mapped executable by a
# process: libhuge-notes.so, whose note segment and note section say they are 1 GiB long, and libhuge-size.so,
# as built but for its size.
# The recorder reads build IDs with read, not a mapping (a file cut short under a mapping is a SIGBUS), and a
# note area is read whole into memory: one that long is not read at all. The copies into the build-ID cache
# stop at --cache-size. Unbounded, the recorder took 1.2 GB of memory for the first and wrote 1.1 GB of zeros
# into the cache for the second.
test_expect_success BPF 'sparse files of 1.1 GiB, notes declared 1 GiB long: not read whole, not copied into the cache' '
	echo "int f(int x) { return x * 3; }" >huge.c &&
	cc -shared -fPIC -Wl,--build-id -o libhuge-notes.so huge.c &&
	echo "int g(int x) { return x * 5; }" >huge-size.c &&
	cc -shared -fPIC -Wl,--build-id -o libhuge-size.so huge-size.c &&
	/usr/bin/python3 - <<-\PY &&
	import struct
	b = bytearray(open("libhuge-notes.so", "rb").read())
	phoff, shoff = struct.unpack_from("<QQ", b, 0x20)
	phentsize, phnum, shentsize, shnum = struct.unpack_from("<HHHH", b, 0x36)
	for i in range(phnum):
	    if struct.unpack_from("<I", b, phoff + i * phentsize)[0] == 4:  # PT_NOTE: p_filesz
	        struct.pack_into("<Q", b, phoff + i * phentsize + 32, 1 << 30)
	for i in range(shnum):
	    if struct.unpack_from("<I", b, shoff + i * shentsize + 4)[0] == 7:  # SHT_NOTE: sh_size
	        struct.pack_into("<Q", b, shoff + i * shentsize + 32, 1 << 30)
	open("libhuge-notes.so", "wb").write(b)
	PY
	truncate -s 1100M libhuge-notes.so libhuge-size.so &&
	cat >map-huge.py <<-\PY &&
	import mmap, os, sys, time
	maps = []
	for path in sys.argv[1:]:
	    fd = os.open(path, os.O_RDONLY)
	    maps.append(mmap.mmap(fd, 65536, prot=mmap.PROT_READ | mmap.PROT_EXEC, flags=mmap.MAP_PRIVATE))
	end = time.time() + 1
	while time.time() < end:
	    pass
	PY
	/usr/bin/time -f %M -o huge.rss "$STACKREC" record -v --build-id-cache huge-cache --cache-size 512 -F 99 \
		-o huge.rec -- /usr/bin/python3 map-huge.py libhuge-notes.so libhuge-size.so 2>err &&
	cat huge.rss &&
	test "$(cat huge.rss)" -lt 600000 &&
	grep "no file with build ID of .$PWD/libhuge-notes.so. (pid [0-9]*) to cache" err &&
	grep "^stackrec: .$PWD/libhuge-size.so. (1153433600 bytes) not cached: this recording.s copies would exceed --cache-size (512 MB)" err &&
	! find huge-cache -size +100M | grep . &&
	stackrec info --mappings huge.rec >maps &&
	grep -F "$PWD/libhuge-notes.so" maps && grep -F "$PWD/libhuge-size.so" maps
'

# build_own_id NAME SOURCE: builds NAME with a build ID of its own, written to NAME.id, so that the cache
# gets it in the test that follows, not from an earlier one.
build_own_id() {
	local id
	id=$(echo "$1 $$ $RANDOM" | sha1sum | cut -c1-40) &&
	clang -O2 -g -fno-omit-frame-pointer -Wl,--build-id=0x$id -o "$1" "$2" &&
	build_id "$1" >"$1.id" &&
	test "$(cat "$1.id")" = "$id"
}

test_expect_success 'build a binary with a build ID of its own' '
	build_own_id doomed "$FIXTURES/inline.c"
'

test_expect_success BPF 'a binary deleted while running is cached from map_files' '
	./doomed 5000 & pid=$! &&
	sleep 0.3 &&
	rm doomed &&
	grep -q "doomed (deleted)" /proc/$pid/maps &&
	stackrec record -F 499 -o doomed.rec -p $pid 2>err &&
	wait $pid &&
	cat err &&
	cached=$(cache_path "$(cat doomed.id)") &&
	test "$(build_id "$cached")" = "$(cat doomed.id)"
'

test_expect_success BPF 'and converts by name with the binary gone' '
	test ! -e doomed &&
	stackrec convert doomed.rec -f folded >doomed.folded &&
	grep -q "^doomed;.*main;top;mid" doomed.folded
'

# The drain thread only opens a mapped file; a worker thread checks and copies it, maybe much later. Slowed
# down here (STACKREC_TEST_CACHE_DELAY_MS before each file), the worker gets to a 30 ms process's binary
# long after the process has exited and the binary was deleted: only the descriptor the drain thread
# opened still reaches it.
test_expect_success 'build a short-lived binary with a build ID of its own' '
	build_own_id ephemeral "$FIXTURES/short.c"
'

test_expect_success BPF 'a 30 ms process whose binary is deleted right after is cached from what was opened' '
	STACKREC_TEST_CACHE_DELAY_MS=500 stackrec record -v -F 499 -o ephemeral.rec -- \
		sh -c "./ephemeral 30; sleep 0.3; rm ephemeral; sleep 0.2" 2>err &&
	test ! -e ephemeral &&
	cached=$(cache_path "$(cat ephemeral.id)") &&
	test "$(build_id "$cached")" = "$(cat ephemeral.id)" &&
	grep "cached .*/ephemeral. as .build-id/" err
'

test_expect_success BPF 'the vDSO image is embedded with a build ID' '
	stackrec info --files cache.rec >files &&
	grep -E "^file vdso pid 0 offset 0 size [1-9][0-9]* build-id [0-9a-f]{40} \[vdso\]$" files &&
	grep -E "^  vdso images +1$" files
'

# With frame pointers the image is written only once a sample has a user IP in a [vdso] mapping: a program
# that never calls into the vDSO gets none (3 KB of a short recording), one that does gets it and its names.
test_expect_success BPF '--call-graph fp: the vDSO image only when a sample is in the [vdso], then named' '
	cat >spin.c <<-\EOF &&
	#include <stdlib.h>
	int main(int argc, char **argv)
	{
		volatile unsigned long x = 0;
		for (unsigned long i = 0, n = strtoul(argv[1], NULL, 0); i < n; i++)
			x += i * i;
		return 0;
	}
	EOF
	clang -O2 -fno-omit-frame-pointer -o spin spin.c &&
	clang -O2 -fno-omit-frame-pointer -o clock "$FIXTURES/clock.c" &&
	stackrec record --call-graph fp -F 999 -o spin.rec -- ./spin 300000000 &&
	stackrec info --files spin.rec >spin.files &&
	grep -E "^  samples +[1-9]" spin.files &&
	grep -E "^  vdso images +0$" spin.files &&
	stackrec record --call-graph fp -F 999 -o clock.rec -- ./clock 300 &&
	stackrec info --files clock.rec >clock.files &&
	grep -E "^file vdso pid 0 offset 0 size [1-9][0-9]* build-id [0-9a-f]{40} \[vdso\]$" clock.files &&
	stackrec convert -v clock.rec >clock.folded 2>clock.err &&
	grep "symbolizing from \[vdso\] embedded in the recording" clock.err &&
	grep -q "__vdso_clock_gettime [0-9]*$" clock.folded
'

# Above, the samples of the new process come before its [vdso] MAPPING (the ring buffer is drained first), and
# the MAPPING writes the image. A process found running (-p) has its MAPPING first: there the sample does.
test_expect_success BPF '--call-graph fp -p: the [vdso] of a running process, mapped before its samples' '
	./clock 4000 & pid=$! &&
	sleep 0.2 &&
	stackrec record --call-graph fp -F 999 --duration 0.5 -p $pid -o clockp.rec &&
	kill $pid && wait $pid;
	stackrec info --files clockp.rec >clockp.files &&
	grep -E "^  vdso images +1$" clockp.files &&
	stackrec convert clockp.rec >clockp.folded &&
	grep -q "__vdso_clock_gettime [0-9]*$" clockp.folded
'

if command -v node >/dev/null; then
	test_set_prereq NODE
else
	test_unset_prereq NODE "node is not installed"
fi

test_expect_success BPF,NODE 'a node --perf-basic-prof process has its perf map captured' '
	cat >jit.js <<-\JS &&
	function spin(n) { let s = 0; for (let i = 0; i < n; i++) s += Math.sqrt(i); return s; }
	const t = Date.now();
	while (Date.now() - t < 1000) spin(10000);
	JS
	stackrec record -o node.rec -- node --perf-basic-prof jit.js &&
	stackrec info --files node.rec >files &&
	grep -E "^file perf-map pid [1-9][0-9]* offset 0 size [1-9][0-9]* build-id - /tmp/perf-[0-9]+\.map$" files &&
	# node leaves its map behind: remove it once it is in the recording.
	rm -f $(sed -n "s|^file perf-map .* \(/tmp/perf-[0-9]*\.map\)$|\1|p" files)
'

# jitmap.sh SECONDS: writes a perf map of its own, as a JIT does (root's, as the process is), notes its pid
# in jit.pids, and lives SECONDS more as sleep (exec: the same pid).
test_expect_success 'a script that writes a perf map and exits' '
	cat >jitmap.sh <<-\EOF
	echo "1000 10 jitted_$$" >/tmp/perf-$$.map
	echo $$ >>jit.pids
	exec sleep "$1"
	EOF
'

# remove_maps: the maps of jit.pids, once they are in the recording (they stay in /tmp after exit).
remove_maps() {
	for p in $(cat jit.pids); do rm -f "/tmp/perf-$p.map"; done
}

# A 50 ms process is gone long before a drain thread that reads side-band records every 100 ms sees it: its
# uids were then unknown and its perf map refused. Side-band records now wake the drain thread.
test_expect_success BPF 'ten 50 ms processes that write perf maps: every map and every binary is recorded' '
	rm -f jit.pids &&
	stackrec record -F 499 -o shortmaps.rec -- sh -c "for i in 1 2 3 4 5 6 7 8 9 10; do sh jitmap.sh 0.05; done" 2>err;
	status=$? && remove_maps && test $status = 0 &&
	cat err &&
	! grep warning err &&
	test_line_count jit.pids = 10 &&
	stackrec info --files shortmaps.rec >files &&
	stackrec info --mappings shortmaps.rec >maps &&
	sleep_id=$(build_id "$(readlink -f "$(command -v sleep)")") &&
	for p in $(cat jit.pids); do
		grep -q "^file perf-map pid $p offset 0 size [1-9][0-9]* build-id - /tmp/perf-$p.map$" files &&
		grep -q -E "^mapping pid $p [0-9a-f]+-[0-9a-f]+ offset [0-9a-f]+ .*build-id $sleep_id .*/sleep$" maps ||
		return 1
	done &&
	test -f "$(cache_path "$sleep_id")"
'

# The drain thread only opens a perf map; a worker thread reads it. Slowed down here
# (STACKREC_TEST_PERF_MAP_DELAY_MS before each map), the worker reads a map 2 s after its process exited,
# while a busy process goes on: the samples it took a second and more after that exit are written before
# the map is, so the drain thread went on reading samples meanwhile (a read on the drain thread writes the
# map first, at the exit).
test_expect_success BPF 'a slow perf-map read does not stop the samples: they are written while it is read' '
	rm -f jit.pids &&
	STACKREC_TEST_PERF_MAP_DELAY_MS=2000 stackrec record -F 499 -o slowmap.rec -- \
		sh -c "sh jitmap.sh 0.05; ./busy 2000" 2>err;
	status=$? && remove_maps && test $status = 0 &&
	pid=$(cat jit.pids) &&
	"$UNIT_DIR/dump-blocks" --order slowmap.rec >order &&
	grep -q "^file 2 $pid " order &&
	exit_ns=$(awk -v p=$pid "\$1 == \"task\" && \$2 == 5 && \$3 == p && \$4 == p { print \$5 }" order) &&
	test -n "$exit_ns" &&
	awk -v p=$pid -v x=$exit_ns "\$1 == \"file\" && \$3 == p { exit } \$1 == \"sample\" && \$4 >= x + 1e9 { n++ }
		END { print n + 0 }" order >late &&
	cat late &&
	test "$(cat late)" -gt 0
'

# A kernel address with several names (a syscall: __do_sys_getpid, __x64_sys_getpid, __ia32_sys_getpid) kept
# only the one sorted last, the local __do_sys_getpid, where perf names the global __x64_sys_getpid.
test_expect_success BPF 'a kernel address with several names keeps them all: convert names it as perf does' '
	cat >getpid.c <<-\EOF &&
	#include <unistd.h>
	#include <sys/syscall.h>
	int main(void) { for (long i = 0; i < 2000000; i++) syscall(SYS_getpid); return 0; }
	EOF
	gcc -O1 -o getpid getpid.c &&
	stackrec record -F 999 -o getpid.rec -- ./getpid &&
	stackrec convert getpid.rec -o getpid.folded &&
	addr=$(awk "\$3 == \"__x64_sys_getpid\" { print \$1 }" /proc/kallsyms) &&
	if [ -n "$addr" ] && [ $(awk -v a=$addr "\$1 == a" /proc/kallsyms | wc -l) -gt 1 ]; then
		grep -F ";__x64_sys_getpid_[k]" getpid.folded
	fi
'

# A BPF program (another tool's uprobe) loaded while a recording runs sits past the snapshot's last [bpf]
# symbol: its frames were named after that one (the recorder's own on_exec program, which never runs there).
test_expect_success BPF 'a BPF program loaded during a recording is named, not taken for an older one' '
	cat >hot.c <<-\EOF &&
	__attribute__((noinline)) long hot_call(long x) { return x * 3 + 1; }
	int main(void) { long s = 0; for (long i = 0; i < 3000000; i++) s += hot_call(i); return (int)(s & 1); }
	EOF
	gcc -O2 -g -o hot hot.c &&
	{ stackrec record -a -F 999 --duration 5 -o all.rec 2>all.err & } &&
	sleep 1 &&
	stackrec record --probe "./hot:hot_call(x)" -o hot.rec -- ./hot &&
	wait &&
	stackrec convert all.rec --thread-names -o all.folded &&
	grep "^hot;" all.folded | grep -F "_probe_hit_[k]" &&
	# (on_exec itself is there, under the exec of hot: the recorder'"'"'s own tracepoint program ran then)
	! grep "^hot;" all.folded | grep -E "__uprobe_perf_func_\[k\];bpf_prog_[0-9a-f]+_on_exec_\[k\]"
'

test_done
