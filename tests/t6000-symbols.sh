#!/usr/bin/env bash
test_description='symbols anywhere: stripped binaries with debug dirs, the build-ID cache, libc6-dbg, demangling, split and compressed DWARF, --explain'
. "$(dirname "$0")/test-lib.sh"

# Nothing here may touch the user's own cache.
export STACKREC_CACHE_DIR="$TEST_DIR/cache"
unset DEBUGINFOD_URLS

build_id() { readelf -n "$1" | awk '/Build ID/ { print $3; exit }'; }

# A busy loop whose hot path sits in functions of its own, so they carry most samples.
cat >spin.c <<'SRC'
#include <stdlib.h>
#include <time.h>
static volatile unsigned long sink;
__attribute__((noinline)) static void spin_leaf(void) { for (int i = 0; i < 1000; i++) sink += i; }
__attribute__((noinline)) static void spin_mid(void) { spin_leaf(); }
int main(int argc, char **argv)
{
	struct timespec t0, t;
	long ms = argc > 1 ? atol(argv[1]) : 300;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		spin_mid();
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
	return 0;
}
SRC

test_expect_success 'build a stripped binary and put its debug file under a .build-id tree' '
	gcc -O1 -g -fno-omit-frame-pointer -o spin spin.c &&
	objcopy --only-keep-debug spin spin.dbg &&
	strip spin &&
	id=$(build_id spin) && test -n "$id" &&
	mkdir -p debug/.build-id/${id:0:2} &&
	mv spin.dbg debug/.build-id/${id:0:2}/${id:2}.debug
'

test_expect_success BPF 'record the stripped binary' '
	stackrec record -F 999 -o spin.rec -- ./spin 400 2>record.err &&
	grep "^stackrec: recorded [1-9]" record.err
'

test_expect_success BPF 'without its debug file its frames stay unnamed and --explain says why' '
	stackrec convert spin.rec --no-cache --explain >plain.folded 2>explain.err &&
	cat explain.err &&
	! grep spin_leaf plain.folded &&
	grep "%  spin (build ID [0-9a-f]*\.\.\.)  no symbol.*: .*debug package" explain.err
'

test_expect_success BPF 'with --debug-dir: names and file:line for its frames' '
	stackrec convert spin.rec --no-cache --debug-dir debug -f folded >dbg.folded &&
	grep "main;\(spin_mid;\)\?spin_leaf" dbg.folded &&
	stackrec convert spin.rec --no-cache --debug-dir debug -f trace >dbg.trace &&
	grep -q "\"function\":\"spin_leaf\"[^}]*\"file\":\"[^\"]*spin.c\",\"line\":[1-9]" dbg.trace
'

test_expect_success BPF 'a debug file of another build is passed over, named by -v, and explained' '
	sed "s/1000/1001/" spin.c >other.c &&
	gcc -O1 -g -fno-omit-frame-pointer -o other other.c &&
	objcopy --only-keep-debug other other.dbg &&
	id=$(build_id spin) &&
	mkdir -p wrong/.build-id/${id:0:2} &&
	cp other.dbg wrong/.build-id/${id:0:2}/${id:2}.debug &&
	stackrec convert spin.rec --no-cache --debug-dir wrong -v >wrong.folded 2>wrong.err &&
	! grep spin_leaf wrong.folded &&
	grep "wrong/.build-id/${id:0:2}/${id:2}.debug. has build ID $(build_id other), not the recorded $id: not used" wrong.err &&
	grep "%  spin (build ID [0-9a-f]*\.\.\.)  debug file of another build: " wrong.err
'

test_expect_success BPF 'a .gnu_debuglink target whose CRC is not the linked one is passed over and explained' '
	gcc -O1 -g -fno-omit-frame-pointer -o linked spin.c &&
	objcopy --only-keep-debug linked linked.debug &&
	strip linked && objcopy --add-gnu-debuglink=linked.debug linked &&
	stackrec record -F 999 --no-cache -o linked.rec -- ./linked 300 &&
	stackrec convert linked.rec --no-cache >linked.folded &&
	grep "main;\(spin_mid;\)\?spin_leaf" linked.folded &&
	cp other.dbg linked.debug &&
	stackrec convert linked.rec --no-cache -v >linked-bad.folded 2>linked-bad.err &&
	! grep spin_leaf linked-bad.folded &&
	grep "linked.debug. is the .gnu_debuglink target but its CRC [0-9a-f]* is not the linked [0-9a-f]*: not used" linked-bad.err &&
	grep "%  linked (build ID [0-9a-f]*\.\.\.)  debug file of another build: " linked-bad.err
'

test_expect_success BPF 'a binary deleted after recording still converts on the same machine (build-ID cache)' '
	cp spin.c spin2.c &&
	gcc -O1 -g -fno-omit-frame-pointer -o spin2 spin2.c &&
	stackrec record -F 999 -o deleted.rec -- ./spin2 300 &&
	id=$(build_id spin2) &&
	test -f "$STACKREC_CACHE_DIR/.build-id/${id:0:2}/${id:2}" &&
	rm spin2 &&
	stackrec convert deleted.rec -f folded >deleted.folded &&
	grep "main;\(spin_mid;\)\?spin_leaf" deleted.folded &&
	stackrec convert deleted.rec --no-cache --explain >nocache.folded 2>nocache.err &&
	! grep spin_leaf nocache.folded
'

test_expect_success BPF 'a binary rebuilt and copied over in place (same inode) still converts: the cache holds a copy' '
	sed "s/spin_leaf/spin_old/" spin.c >old.c &&
	gcc -O1 -g -fno-omit-frame-pointer -o inplace old.c &&
	stackrec record -F 999 -o inplace.rec -- ./inplace 300 &&
	sed "s/spin_leaf/spin_new/" spin.c >new.c &&
	gcc -O1 -g -fno-omit-frame-pointer -o new new.c &&
	inode=$(stat -c %i inplace) &&
	cp new inplace &&
	test "$(stat -c %i inplace)" = "$inode" &&
	stackrec convert inplace.rec -v -f folded >inplace.folded 2>inplace.err &&
	grep "main;\(spin_mid;\)\?spin_old" inplace.folded &&
	grep "build ID .*not the recorded" inplace.err
'

cat >sort.c <<'SRC'
#include <stdlib.h>
static volatile double sink;
static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	for (int i = 0; i < 20; i++)
		sink += x * i;
	return x < y ? -1 : x > y;
}
int main(void)
{
	size_t n = 200000;
	double *v = malloc(n * sizeof(*v));
	for (int round = 0; round < 4; round++) {
		for (size_t i = 0; i < n; i++)
			v[i] = (double)((i * 2654435761u) % 1000003);
		qsort(v, n, sizeof(*v), cmp);
	}
	return 0;
}
SRC

test_expect_success BPF 'time spent in libc qsort: libc frames have file:line from libc6-dbg' '
	gcc -O1 -g -fno-omit-frame-pointer -o sort sort.c &&
	stackrec record -F 999 -o sort.rec -- ./sort &&
	stackrec convert sort.rec -f trace >sort.trace &&
	grep -o "\"module\":\"[^\"]*libc.so.6\"[^}]*\"file\":\"[^\"]*\\(msort\\|qsort\\).c\",\"line\":[1-9][0-9]*" sort.trace | head -3 >libc-lines &&
	cat libc-lines &&
	test -s libc-lines
'

cat >tmpl.cc <<'SRC'
#include <cstdlib>
#include <ctime>
template <typename T> struct Box {
	T v;
	__attribute__((noinline)) T work(int n) { for (int i = 0; i < n; i++) v = v * 3 + i; return v; }
};
static volatile long sink;
int main(int argc, char **argv)
{
	Box<long> b{1};
	time_t end = time(nullptr) + 1;
	while (time(nullptr) <= end)
		sink += b.work(100000);
	(void)argc; (void)argv;
	return 0;
}
SRC

test_expect_success BPF 'a C++ template method appears demangled; --no-demangle keeps the raw name' '
	g++ -O1 -g -fno-omit-frame-pointer -o tmpl tmpl.cc &&
	stackrec record -F 999 -o tmpl.rec -- ./tmpl &&
	stackrec convert tmpl.rec >tmpl.folded &&
	grep -F "main;Box<long>::work(int)" tmpl.folded &&
	stackrec convert tmpl.rec --no-demangle >tmpl-raw.folded &&
	grep -F "main;_ZN3BoxIlE4workEi" tmpl-raw.folded
'

cat >trait.rs <<'SRC'
trait Work { fn work(&self, n: u64) -> u64; }
struct Spinner(u64);
impl Work for Spinner {
	#[inline(never)]
	fn work(&self, n: u64) -> u64 { let mut v = self.0; for i in 0..n { v = v.wrapping_mul(3).wrapping_add(i); } v }
}
fn main() {
	let spinner = Spinner(std::env::args().count() as u64);
	let s: &dyn Work = std::hint::black_box(&spinner);
	let end = std::time::Instant::now() + std::time::Duration::from_millis(800);
	let mut acc = 0u64;
	while std::time::Instant::now() < end { acc = acc.wrapping_add(s.work(1000000)); }
	println!("{}", acc);
}
SRC

if command -v rustc >/dev/null; then test_set_prereq RUSTC; else test_unset_prereq RUSTC "rustc not installed"; fi

test_expect_success BPF,RUSTC 'a Rust trait method appears demangled, legacy and v0 mangling' '
	rustc -C force-frame-pointers=yes -C opt-level=1 -g -o trait trait.rs &&
	rustc -C force-frame-pointers=yes -C opt-level=1 -g -C symbol-mangling-version=v0 -o trait_v0 trait.rs &&
	stackrec record -F 999 -o trait.rec -- ./trait &&
	stackrec convert trait.rec >trait.folded &&
	grep -F "<trait::Spinner as trait::Work>::work" trait.folded &&
	stackrec record -F 999 -o trait_v0.rec -- ./trait_v0 &&
	stackrec convert trait_v0.rec >trait_v0.folded &&
	grep -F "<trait::Spinner as trait::Work>::work" trait_v0.folded &&
	stackrec convert trait_v0.rec --no-demangle >trait_v0-raw.folded &&
	grep "_RNv" trait_v0-raw.folded
'

test_expect_success BPF 'split DWARF (.dwo beside the binary) and zlib-compressed debug sections give lines' '
	gcc -O1 -g -gsplit-dwarf -fno-omit-frame-pointer -o spin_split spin.c &&
	ls *.dwo &&
	gcc -O1 -g -gz=zlib -fno-omit-frame-pointer -o spin_gz spin.c &&
	readelf -S spin_gz | grep -A1 debug_info | grep -q C &&
	stackrec record -F 999 -o split.rec -- ./spin_split 300 &&
	stackrec convert split.rec -f trace >split.trace &&
	grep -q "\"function\":\"spin_leaf\"[^}]*\"file\":\"[^\"]*spin.c\",\"line\":[1-9]" split.trace &&
	stackrec record -F 999 -o gz.rec -- ./spin_gz 300 &&
	stackrec convert gz.rec -f trace >gz.trace &&
	grep -q "\"function\":\"spin_leaf\"[^}]*\"file\":\"[^\"]*spin.c\",\"line\":[1-9]" gz.trace
'

test_expect_success BPF 'DWARF 4 and a .dwp package (split DWARF gathered by llvm-dwp) give lines' '
	gcc -O1 -gdwarf-4 -fno-omit-frame-pointer -o spin_dw4 spin.c &&
	stackrec record -F 999 -o dw4.rec -- ./spin_dw4 300 &&
	stackrec convert dw4.rec -f trace >dw4.trace &&
	grep -q "\"function\":\"spin_leaf\"[^}]*\"file\":\"[^\"]*spin.c\",\"line\":[1-9]" dw4.trace &&
	mkdir -p dwp && cp spin.c dwp/ && (
		cd dwp &&
		clang -O1 -g -gsplit-dwarf -fno-omit-frame-pointer -o spin_dwp spin.c &&
		llvm-dwp -e spin_dwp -o spin_dwp.dwp &&
		rm -f *.dwo
	) &&
	ls dwp/spin_dwp.dwp &&
	stackrec record -F 999 -o dwp.rec -- ./dwp/spin_dwp 300 &&
	stackrec convert dwp.rec -f trace >dwp.trace &&
	grep -q "\"function\":\"spin_leaf\"[^}]*\"file\":\"[^\"]*spin.c\",\"line\":[1-9]" dwp.trace
'

test_expect_success BPF '[vdso] frames are named from the vDSO image embedded in the recording' '
	clang -O2 -fno-omit-frame-pointer -o clock "$FIXTURES/clock.c" &&
	stackrec record -F 999 -o clock.rec -- ./clock &&
	stackrec convert -v clock.rec >clock.folded 2>clock.err &&
	grep "symbolizing from \[vdso\] embedded in the recording" clock.err &&
	grep -q "__vdso_clock_gettime [0-9]*$" clock.folded
'

test_expect_success BPF 'a binary with only .symtab, and one with only .dynsym, still name their functions' '
	gcc -O1 -fno-omit-frame-pointer -o spin_symtab spin.c &&
	! readelf -S spin_symtab | grep -q debug_info &&
	stackrec record -F 999 -o symtab.rec -- ./spin_symtab 300 &&
	stackrec convert symtab.rec >symtab.folded &&
	grep -q ";spin_leaf [0-9]*$" symtab.folded &&
	cat >exported.c <<-\EOF &&
	#include <time.h>
	volatile unsigned long sink;
	__attribute__((noinline)) void exported_spin(void) { for (int i = 0; i < 1000; i++) sink += i; }
	int main(void)
	{
		struct timespec t0, t;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		do { exported_spin(); clock_gettime(CLOCK_MONOTONIC, &t); }
		while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < 300);
		return 0;
	}
	EOF
	gcc -O1 -fno-omit-frame-pointer -rdynamic -o exported exported.c &&
	strip --strip-all exported &&
	! readelf -S exported | grep -q "\.symtab" &&
	stackrec record -F 999 -o dynsym.rec -- ./exported &&
	stackrec convert dynsym.rec >dynsym.folded &&
	grep -q ";exported_spin [0-9]*$" dynsym.folded
'

test_expect_success BPF 'a binary that only exists in another mount namespace is named (map_files, then the cache)' '
	# The directory is named after this shell: a machine-wide pgrep must not find the program of another run.
	nsdir=nsdir-$$ &&
	mkdir -p $nsdir &&
	cp spin_symtab nsprog_src &&
	# It runs until the recording holds samples, then the test ends it: under load the BPF load alone outlasted
	# a program of 3 s (0 samples).
	{ unshare -m --propagation private sh -c "mount -t tmpfs none \"$PWD/$nsdir\" && cp nsprog_src $nsdir/nsprog && exec ./$nsdir/nsprog 60000" & } &&
	# Anchored: before its exec the sh -c has the same words in its command line, and so has a child it forks
	# for mount or cp until that child execs (seen: two pids, and record -p "PID PID" refused).
	nsprog_pid() { pid=$(pgrep -f "^\./$nsdir/nsprog 60000\$"); } &&
	wait_until 120 nsprog_pid &&
	test ! -e $nsdir/nsprog &&
	{ "$STACKREC" record -F 499 -o ns.rec -p $pid & rec=$!; } &&
	wait_until 120 samples_in 1 ns.rec &&
	kill $pid && wait $rec &&
	stackrec convert ns.rec >ns.folded &&
	grep -q "^nsprog;.*;spin_leaf [0-9]*$" ns.folded
'

# kernel.kptr_restrict=2 makes /proc/kallsyms show every address as 0, to root too: the recorder sees only that.
# The test shows it so in a mount namespace of its own (a copy with the addresses zeroed, bound over
# /proc/kallsyms) rather than by setting the sysctl: that is the machine's, and while it was 2 every other
# recording on the machine (another run's t5000 and t5200, which name kernel frames) lost its kernel names.
test_expect_success BPF 'kernel.kptr_restrict=2 (addresses hidden): record warns once, kernel frames stay unnamed with that reason' '
	sed "s/^[0-9a-f]*/0000000000000000/" /proc/kallsyms >hidden-kallsyms &&
	grep -q "^0000000000000000 [tT] " hidden-kallsyms &&
	unshare -m --propagation private sh -c "mount --bind hidden-kallsyms /proc/kallsyms &&
		exec \"$STACKREC\" record -F 999 -o kptr.rec -- dd if=/dev/zero of=/dev/null bs=64k count=50000" 2>kptr.err &&
	test "$(grep -c "kernel symbol addresses are hidden (kernel.kptr_restrict)" kptr.err)" = 1 &&
	stackrec info kptr.rec >kptr.info &&
	grep -E "kptr_restricted +1" kptr.info &&
	stackrec convert --explain kptr.rec >kptr.folded 2>kptr.explain &&
	cat kptr.explain &&
	grep -q "kptr_restrict" kptr.explain &&
	! grep -q "read_zero_\[k\]" kptr.folded
'

test_expect_success BPF 'zstd-compressed debug sections (objcopy) give lines and inline frames' '
	clang -O2 -g -fno-omit-frame-pointer -o inline_plain "$FIXTURES/inline.c" &&
	objcopy --compress-debug-sections=zstd inline_plain inline_zstd &&
	readelf -t inline_zstd | grep -q ZSTD &&
	stackrec record -F 499 -o zstd.rec -- ./inline_zstd 300 &&
	stackrec convert zstd.rec >zstd.folded &&
	grep -q "main;top;mid;hot_inline;leaf [0-9]*$" zstd.folded &&
	stackrec convert zstd.rec -f trace >zstd.trace &&
	grep -q "\"function\":\"leaf\"[^}]*\"file\":\"[^\"]*inline.c\",\"line\":[1-9]" zstd.trace
'

if command -v node >/dev/null 2>&1; then test_set_prereq NODE; else test_unset_prereq NODE "node is not installed"; fi

# A fixed amount of work (about 2 s), not a fixed time: on a loaded machine node's start-up and compiler
# threads would otherwise take a larger share of the samples than the JIT code. Its start-up takes about 70
# samples at 499 Hz (page faults, V8's compiler, node::Start): with half this work the JIT leaf frames were
# 83% of the samples on an idle 2-core VM and 77-79% on a loaded one, against the 80% asked.
test_expect_success BPF,NODE 'node --perf-basic-prof: JIT frames, the hot JavaScript function among them, named from the perf map' '
	cat >hot.js <<-\EOF &&
	function hotJavaScriptFunction(n) { let s = 0; for (let i = 0; i < n; i++) s += Math.sqrt(i) * (i % 7); return s; }
	let t = 0;
	for (let k = 0; k < 6000; k++) t += hotJavaScriptFunction(100000);
	EOF
	stackrec record -F 499 -o node.rec -- node --perf-basic-prof hot.js &&
	stackrec info node.rec >node.info &&
	pid=$(awk "/^processes/ { getline; print \$1 }" node.info) &&
	rm -f "/tmp/perf-$pid.map" &&
	stackrec convert node.rec --annotate >node.folded &&
	pct=$(awk "{ t += \$NF; if (\$0 ~ /_\\[j\\] [0-9]+\$/) h += \$NF } END { print int(100 * h / t) }" node.folded) &&
	echo "JIT leaf frames named in $pct% of samples" &&
	test "$pct" -ge 80 &&
	grep -q "JS:\*hotJavaScriptFunction [^;]*hot.js:[0-9:]*_\[j\]" node.folded
'

if command -v debuginfod >/dev/null 2>&1 && command -v curl >/dev/null 2>&1; then
	test_set_prereq DEBUGINFOD
else
	test_unset_prereq DEBUGINFOD "Debian's debuginfod and curl are not installed"
fi

test_expect_success BPF,DEBUGINFOD 'a binary served by a debuginfod server on loopback: named with no debug dir, and after a cache entry made without the server' '
	mkdir -p served &&
	cat >served.c <<-\EOF &&
	#include <time.h>
	volatile unsigned long sink;
	__attribute__((noinline)) void served_spin(void)
	{
		struct timespec t0, t;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		do { for (int i = 0; i < 100000; i++) sink += i; clock_gettime(CLOCK_MONOTONIC, &t); }
		while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < 400);
	}
	int main(void) { served_spin(); return 0; }
	EOF
	clang -O2 -g -fno-omit-frame-pointer -o served_prog served.c &&
	stackrec record -F 499 --no-cache -o served.rec -- ./served_prog &&
	mv served_prog served/ &&
	stackrec convert --no-cache served.rec >unserved.folded &&
	! grep -q served_spin unserved.folded &&
	port=$(/usr/bin/python3 -c "import socket; s = socket.socket(); s.bind((\"127.0.0.1\", 0)); print(s.getsockname()[1])") &&
	id=$(readelf -n served/served_prog | awk "/Build ID/ { print \$3 }") &&
	{ debuginfod -F served -p "$port" -d "$PWD/debuginfod.sqlite" >debuginfod.log 2>&1 & dpid=$!; } &&
	for i in $(seq 120); do
		curl -sf -o /dev/null "http://127.0.0.1:$port/buildid/$id/executable" && break
		sleep 0.5
	done &&
	DEBUGINFOD_CACHE_PATH=$PWD/dcache stackrec convert --no-cache --debuginfod "http://127.0.0.1:$port" served.rec >served.folded &&
	# A stripped copy where the program ran: a conversion without a server keeps a symbol cache entry made
	# from its symbol table alone, which kept a later one with the server from ever asking it
	strip -o served_prog served/served_prog &&
	stackrec convert served.rec >stripped.folded &&
	! grep -q served_spin stripped.folded &&
	DEBUGINFOD_CACHE_PATH=$PWD/dcache2 stackrec convert --debuginfod "http://127.0.0.1:$port" served.rec >cached.folded &&
	# the archive carries the debug file only the server has, as convert here used it (it was left out)
	DEBUGINFOD_CACHE_PATH=$PWD/dcache3 stackrec archive --no-cache --debuginfod "http://127.0.0.1:$port" -o served.arc served.rec
	rc=$?
	kill $dpid 2>/dev/null; wait $dpid 2>/dev/null
	test $rc -eq 0 &&
	mkdir -p empty-root &&
	stackrec convert --no-cache --symfs empty-root --archive served.arc served.rec >archived.folded &&
	cat served.folded cached.folded archived.folded &&
	grep -q "main;served_spin [0-9]*$" served.folded &&
	grep -q "main;served_spin [0-9]*$" cached.folded &&
	grep -q "main;served_spin [0-9]*$" archived.folded
'

# libdebuginfod is loaded with dlopen only when a server is to be asked (convert/debuginfod_client.h): a run
# where it cannot be loaded says so once and names everything else as before. A fixture recording under an
# empty --symfs has no module file, so debuginfod is asked for each module.
test_expect_success 'an unusable libdebuginfod.so.1: one warning naming it, the conversion goes on' '
	stackrec convert "$FIXTURES/inline.rec" --symfs "$PWD" --no-cache -f folded >nodinfod.folded &&
	mkdir -p notelf nofuncs &&
	echo "not an ELF file" >notelf/libdebuginfod.so.1 &&
	echo "int unrelated;" >nofuncs.c &&
	cc -shared -o nofuncs/libdebuginfod.so.1 nofuncs.c &&
	for lib in notelf nofuncs; do
		LD_LIBRARY_PATH=$PWD/$lib DEBUGINFOD_URLS=http://127.0.0.1:9 \
			stackrec convert "$FIXTURES/inline.rec" --symfs "$PWD" --no-cache -f folded >$lib.folded 2>$lib.err &&
		cat $lib.err &&
		test_line_count $lib.err = 1 &&
		grep "^stackrec: warning: not asking debuginfod servers: .*libdebuginfod.so.1" $lib.err &&
		test_cmp nodinfod.folded $lib.folded || return 1
	done
'

# Without DEBUGINFOD_URLS nothing loads libdebuginfod (libcurl and some thirty libraries, 8 MiB): not us, and
# not libdwfl, whose debug-file search loads it when it finds nothing (convert/module_file.c). glibc's
# LD_DEBUG=files lists every object loaded, by dlopen too. A binary with no debug file anywhere, and one whose
# debug file has a dwz alternate file (Debian's binutils, when its -dbg package is there).
test_expect_success 'no DEBUGINFOD_URLS: libdebuginfod is never loaded, the binary named all the same' '
	printf "int main(void) { return 0; }\n" >nodebug.c &&
	cc -O1 -o nodebug nodebug.c &&
	main=$(nm nodebug | awk "\$3 == \"main\" { print \$1 }") &&
	(unset DEBUGINFOD_URLS; LD_DEBUG=files stackrec symbolize --no-cache -f -e nodebug "0x$main" >nodebug.out 2>nodebug.ld) &&
	grep -q "^main$" nodebug.out &&
	grep -q "calling init: .*libdw" nodebug.ld &&
	! grep libdebuginfod nodebug.ld &&
	as=/usr/bin/x86_64-linux-gnu-as &&
	if test -f "$as" && readelf -n "$as" | grep -q "Build ID" &&
		id=$(readelf -n "$as" | sed -n "s/.*Build ID: //p") &&
		test -f "/usr/lib/debug/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug"; then
		md=$(nm -D "$as" 2>/dev/null | awk "\$3 == \"_start\" { print \$1 }") &&
		(unset DEBUGINFOD_URLS; DEBUGINFOD_URLS= LD_DEBUG=files stackrec symbolize --no-cache -f -e "$as" 0x$(readelf -h "$as" | sed -n "s/.*Entry point address: *0x//p") >as.out 2>as.ld) &&
		cat as.out &&
		! grep libdebuginfod as.ld
	fi
'

test_expect_success BPF 'stackrec archive bundles the files; convert --archive names frames with the binary and cache gone' '
	clang -O2 -g -fno-omit-frame-pointer -o archived "$FIXTURES/inline.c" &&
	stackrec record -F 499 -o archived.rec -- ./archived 300 &&
	stackrec archive archived.rec -o archived.archive 2>archive.err &&
	grep "^stackrec: archived [1-9][0-9]* files" archive.err &&
	rm -rf archived "$STACKREC_CACHE_DIR" &&
	stackrec convert archived.rec >without.folded &&
	! grep -q "hot_inline" without.folded &&
	stackrec convert archived.rec --archive archived.archive >with.folded &&
	grep -q "main;top;mid;hot_inline;leaf [0-9]*$" with.folded &&
	test_must_fail stackrec convert archived.rec --archive no-such.archive >/dev/null 2>err &&
	grep "cannot open .no-such.archive." err
'

# convert --archive extracts the archive into $TMPDIR (here the test's own): killed meanwhile, it removes that
# directory before it dies of the signal. -o is a FIFO no one reads: convert waits in its open, after the
# extraction, for as long as the test likes; the kill comes once an extracted file is there.
test_expect_success BPF 'convert --archive killed: the extracted files are removed, the exit is the signal' '
	mkdir archive-tmp && mkfifo archive.fifo &&
	{ TMPDIR=$PWD/archive-tmp "$STACKREC" convert archived.rec --archive archived.archive -o archive.fifo 2>killed.err &
	  pid=$!; } &&
	for i in $(seq 600); do
		test -n "$(find archive-tmp -type f)" && break
		sleep 0.1
	done
	ls -A archive-tmp >made
	kill -TERM $pid
	wait $pid; rc=$?
	cat killed.err &&
	test_line_count made = 1 &&
	grep "^stackrec-archive\.......$" made &&
	test "$rc" = 143 &&
	ls -A archive-tmp >left &&
	test_line_count left = 0 &&
	test ! -s killed.err
'

test_expect_success BPF 'record --archive writes REC.archive; convert --archive names frames with the binary and cache gone' '
	clang -O2 -g -fno-omit-frame-pointer -o archived2 "$FIXTURES/inline.c" &&
	stackrec record -F 499 --archive --build-id-cache own-cache -o archived2.rec -- ./archived2 300 2>record.err &&
	grep "^stackrec: recorded" record.err &&
	grep "^stackrec: archived [1-9][0-9]* files .* to .archived2\.rec\.archive." record.err &&
	rm -rf archived2 own-cache &&
	stackrec convert archived2.rec --archive archived2.rec.archive >with2.folded &&
	grep -q "main;top;mid;hot_inline;leaf [0-9]*$" with2.folded
'

# Once the recording is whole, SIGTERM (or Ctrl-C) stops record --archive's archive instead of being taken for a
# request to end a recording long over. FILE.archive is a FIFO no one reads: the archive waits in its open.
test_expect_success BPF 'record --archive: SIGTERM during the archive stops it, the recording stays whole' '
	mkfifo stopped.rec.archive &&
	{ "$STACKREC" record -F 499 --archive --no-cache -o stopped.rec -- sleep 0.2 2>stopped.err & pid=$!; } &&
	for i in $(seq 600); do grep -q "^stackrec: recorded" stopped.err && break; sleep 0.1; done
	sleep 0.5
	kill -TERM $pid
	for i in $(seq 100); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
	kill -KILL $pid 2>/dev/null
	wait $pid; rc=$?
	cat stopped.err &&
	test "$rc" = 143 &&
	stackrec info stopped.rec >/dev/null
'

test_expect_success BPF 'anonymous executable memory without a perf map: --explain says the JIT map is missing' '
	cat >anonjit.c <<-\EOF &&
	#include <string.h>
	#include <sys/mman.h>
	int main(void)
	{
		/* x86-64: inc %rdi; cmp $0x40000000,%rdi; jne back; ret  (a loop run from anonymous memory) */
		unsigned char code[] = { 0x48, 0xff, 0xc7, 0x48, 0x81, 0xff, 0x00, 0x00, 0x00, 0x40, 0x75, 0xf4, 0xc3 };
		void *p = mmap(0, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		memcpy(p, code, sizeof(code));
		for (int i = 0; i < 2; i++)
			((void (*)(long))p)(0);
		return 0;
	}
	EOF
	clang -O2 -fno-omit-frame-pointer -o anonjit anonjit.c &&
	stackrec record -F 499 -o anonjit.rec -- ./anonjit &&
	stackrec convert --explain anonjit.rec >anonjit.folded 2>explain.txt &&
	cat explain.txt &&
	grep -E "^ +[0-9.]+%  anon  JIT map missing: .*perf-basic-prof" explain.txt
'

test_done
