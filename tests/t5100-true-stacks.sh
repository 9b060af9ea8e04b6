#!/usr/bin/env bash
test_description='true user stacks: DWARF unwinding (record --call-graph dwarf, the default) and frame-pointer
walks (--call-graph fp) that do not skip the caller of a frameless leaf, checked on real processes against
call edges read from the binaries themselves'
. "$(dirname "$0")/test-lib.sh"

# The programs are built at test time from fixtures/ with the exact gcc commands of the first test
# (fixtures/README.md lists them); each recording lasts 1-2 s at 999 Hz.

if command -v gcc >/dev/null; then test_set_prereq GCC; else test_unset_prereq GCC "gcc is not installed (apt-get install gcc)"; fi
if command -v objdump >/dev/null && command -v readelf >/dev/null; then
	test_set_prereq OBJDUMP
else
	test_unset_prereq OBJDUMP "objdump/readelf are not installed (apt-get install binutils)"
fi
# Debian's own python3, not whatever python3 comes first in PATH (pyenv and the like).
if [ -x /usr/bin/python3 ]; then test_set_prereq PYTHON3; else test_unset_prereq PYTHON3 "/usr/bin/python3 is not installed (apt-get install python3)"; fi
# `make check` installs liburing-dev (TEST_PACKAGES): on CI a missing one fails its test instead of skipping it.
if [ -e /usr/include/liburing.h ]; then test_set_prereq LIBURING; else test_unset_prereq LIBURING "no liburing (apt-get install liburing-dev)"; fi
# libc's internal functions (__libc_start_call_main, msort_with_tmp) are named only from its debug file.
libc_so=$(gcc -print-file-name=libc.so.6 2>/dev/null)
libc_id=$(readelf -n "$libc_so" 2>/dev/null | awk '/Build ID/ { print $3 }')
if [ -n "$libc_id" ] && [ -e "/usr/lib/debug/.build-id/${libc_id:0:2}/${libc_id:2}.debug" ]; then
	test_set_prereq LIBC_DBG
else
	test_unset_prereq LIBC_DBG "no debug file for libc ('$libc_so', build ID ${libc_id:-unknown}) in /usr/lib/debug (apt-get install libc6-dbg)"
fi

# --call-graph is not a prerequisite that may skip: a build without it fails the tests that need it.
stackrec record --help >record-help.txt 2>&1
need_call_graph() {
	grep -q -e "--call-graph" "$TEST_DIR/record-help.txt" && return 0
	echo "stackrec record --help does not mention --call-graph: this build cannot record with --call-graph $1"
	return 1
}

# first_insn BINARY FUNCTION: the first instruction of FUNCTION, as objdump prints it ("push   %rbp").
first_insn() {
	objdump -d --no-show-raw-insn "$1" >"$1.dis" &&
	awk -v fn="<$2>:" '$2 == fn { getline; sub(/^[^\t]*\t/, ""); print; exit }' "$1.dis"
}

# record_and_fold NAME [RECORD OPTIONS...] -- COMMAND [ARGS...]: records COMMAND at 999 Hz into NAME.rec, then
# converts it to NAME.folded (--annotate: inlined frames end in _[i], which check-call-edges.sh skips) and
# NAME.addrs (the same with --addrs: unnamed frames as [module <0xOFFSET>]).
record_and_fold() {
	local name=$1
	shift
	stackrec record -F 999 -o "$name.rec" "$@" 2>"$name.record.err"
	local rc=$?
	cat "$name.record.err"
	[ $rc -eq 0 ] &&
	stackrec convert "$name.rec" -f folded --annotate -o "$name.folded" &&
	stackrec convert "$name.rec" -f folded --annotate --addrs -o "$name.addrs"
}

# user_stacks FOLDED COMM: "COUNT ;outermost;...;leaf" for each line of COMM in FOLDED: the user part of the
# stack only (kernel frames NAME_[k] dropped, the _[i] of inlined frames removed), each frame after a ";" so
# that a pattern can anchor whole names (";main;top").
user_stacks() {
	awk -v comm="$2" '{
		n = $NF; line = $0; sub(/ [0-9]+$/, "", line)
		k = split(line, f, ";")
		if (f[1] != comm) next
		s = ""
		for (i = 2; i <= k; i++) {
			if (f[i] ~ /_\[k\]$/) continue
			sub(/_\[i\]$/, "", f[i])
			s = s ";" f[i]
		}
		print n, s
	}' "$1"
}

# expect_share WHAT FOLDED COMM SELECT MATCH MIN: of the samples of COMM whose user stack (as user_stacks
# prints it) matches the extended regular expression SELECT, at least MIN percent match MATCH too. Prints the
# share, then the five most common user stacks of the selection with theirs.
expect_share() {
	local what=$1 folded=$2 comm=$3 min=$6 rc
	user_stacks "$folded" "$comm" >"$folded.user" || return 1
	rm -f "$folded.top"
	SELECT=$4 MATCH=$5 awk -v what="$what" -v comm="$comm" -v min="$min" -v top="$folded.top" '{
		n = $1; s = substr($0, length($1) + 2)
		if (s !~ ENVIRON["SELECT"]) next
		total += n; by[s] += n
		if (s ~ ENVIRON["MATCH"]) hit += n
	} END {
		if (total == 0) { printf "%s: no sample of %s has a user stack matching %s\n", what, comm, ENVIRON["SELECT"]; exit 1 }
		printf "%s: %.1f%% of %d samples (at least %s%% needed)\n", what, 100 * hit / total, total, min
		for (s in by) printf "%d %5.1f%% %s\n", by[s], 100 * by[s] / total, s >top
		exit !(100 * hit >= min * total)
	}' "$folded.user"
	rc=$?
	if [ -f "$folded.top" ]; then
		sort -k1,1nr "$folded.top" | head -n 5 | cut -d" " -f2- | sed "s/^/    /"
	fi
	return $rc
}

# in_both_modes NAME FP_MATCH DWARF_MATCH SELECT COMMAND...: records COMMAND (its name NAME) in fp and in dwarf mode;
# every sample whose user stack matches SELECT matches that mode's MATCH (expect_share at 100%).
in_both_modes() {
	local name=$1 fp=$2 dwarf=$3 select=$4
	shift 4
	stackrec record --call-graph fp -F 999 -o "$name-fp.rec" -- "$@" 2>/dev/null &&
	stackrec convert "$name-fp.rec" -o "$name-fp.folded" &&
	expect_share "$name, fp" "$name-fp.folded" "$name" "$select" "$fp" 100 &&
	stackrec record --call-graph dwarf -F 999 -o "$name-dwarf.rec" -- "$@" 2>/dev/null &&
	stackrec convert "$name-dwarf.rec" -o "$name-dwarf.folded" &&
	expect_share "$name, dwarf" "$name-dwarf.folded" "$name" "$select" "$dwarf" 100
}

# check_chain NAME BINARY [RECORD OPTIONS...]: records ./BINARY (built from chain.c) for 1.5 s; the true path
# main;top;mid;leaf_a must be the user stack of at least 99% of leaf_a's samples, and no stack may show a call
# that BINARY does not make (tests/check-call-edges.sh). Both are checked and printed before failing.
check_chain() {
	local name=$1 bin=$2 rc=0
	shift 2
	record_and_fold "$name" "$@" -- "./$bin" 1500 || return 1
	expect_share "$name: main;top;mid;leaf_a" "$name.folded" "$bin" ';leaf_a$' ';main;top;mid;leaf_a$' 99 || rc=1
	"$TESTS/check-call-edges.sh" "$bin" "$bin" "$name.folded" || rc=1
	return $rc
}

test_expect_success GCC,OBJDUMP 'build the test programs: a frameless leaf under framed callers, no frames, qsort, recursion' '
	gcc -O2 -g -fno-omit-frame-pointer -o chain "$FIXTURES/chain.c" &&
	gcc -O2 -g -fomit-frame-pointer -o chain-nofp "$FIXTURES/chain.c" &&
	gcc -O2 -g -o qsort_cb "$FIXTURES/qsort_cb.c" &&
	gcc -O2 -g -o recurse "$FIXTURES/recurse.c" &&
	gcc -O2 -g -pthread -o big_frame "$FIXTURES/big_frame.c" &&
	gcc -O2 -g -fno-omit-frame-pointer -o nocfi_leaf "$FIXTURES/nocfi_leaf.c" &&
	gcc -O2 -g -fno-omit-frame-pointer -o signal_nocfi "$FIXTURES/signal_nocfi.c" &&
	gcc -O2 -g -o jit_stub "$FIXTURES/jit_stub.c" &&
	leaf=$(first_insn chain leaf_a) && caller=$(first_insn chain mid) &&
	echo "chain: leaf_a starts with \"$leaf\", mid with \"$caller\"" &&
	case "$leaf/$caller" in
	push*%rbp/*) echo "leaf_a has a frame: this gcc does not build the frameless leaf these tests are about"; false ;;
	*/push*%rbp) true ;;
	*) echo "mid has no frame: -fno-omit-frame-pointer did not give the callers frames"; false ;;
	esac
'

test_expect_success GCC,OBJDUMP 'check-call-edges.sh passes the calls chain makes and fails invented ones' '
	cat >true.folded <<-\EOF &&
	chain;__libc_start_call_main;main;top;mid;leaf_a 97
	chain;__libc_start_call_main;main;top;mid;leaf_a;asm_sysvec_apic_timer_interrupt_[k];irq_exit_[k] 2
	chain;__libc_start_call_main;main;clock_gettime@plt 1
	chain;__libc_start_call_main;__clock_gettime;__vdso_clock_gettime 1
	chain;__libc_start_call_main;main;qsort;leaf_a 1
	other;__libc_start_call_main;top;leaf_a 5
	EOF
	"$TESTS/check-call-edges.sh" chain chain true.folded &&
	for bad in "main;top;leaf_a" "main;mid;leaf_a" "top;mid;leaf_a" "main;top;mid;leaf_a;mid" "main;top;mid_inlined_[i];leaf_a"; do
		{ cat true.folded && echo "chain;__libc_start_call_main;$bad 3"; } >bad.folded &&
		test_must_fail "$TESTS/check-call-edges.sh" chain chain bad.folded >bad.out &&
		cat bad.out &&
		grep -q "^check-call-edges: 3 of 105 samples (2.9%) show a call that does not exist" bad.out || exit 1
	done &&
	test_must_fail "$TESTS/check-call-edges.sh" chain nosuchcomm true.folded &&
	echo "other;main;top 1" >other.folded &&
	test_must_fail "$TESTS/check-call-edges.sh" chain chain other.folded
'

test_expect_success BPF,GCC,OBJDUMP '-fno-omit-frame-pointer, default options: the true path in >= 99% of leaf_a samples, no invented call' '
	check_chain default chain
'

test_expect_success BPF,GCC,OBJDUMP '-fno-omit-frame-pointer, --call-graph fp: the true path in >= 99% of leaf_a samples, no invented call' '
	need_call_graph fp &&
	check_chain fp chain --call-graph fp
'

# --call-graph fp walks the frame pointers in the sampler itself, over a copy of the stack, rather than with
# bpf_get_stack (docs/recording.md says why); with STACKREC_CHECK_FP_WALK=1 the sampler does the kernel's walk
# as well and counts the samples where the two differ in an IP or in depth: none may, whether the frame pointers
# are real (chain), absent (chain-nofp, Debian's python3: the walk follows whatever rbp holds), a thread's, or
# taken at a switch off the CPU (--off-cpu). The endless commands stop by --duration, which counts from the
# command's start: under a `timeout 1` of the whole recorder, an ASan build spent the second loading its BPF
# programs and python3 ran for 0.01 s (1 sample).
test_expect_success BPF,GCC,OBJDUMP,PYTHON3 '--call-graph fp: the sampler'"'"'s walk gives the kernel'"'"'s IPs, with and without frame pointers, in threads' '
	need_call_graph fp &&
	cat >fp-threads.c <<-\EOF &&
	#include <pthread.h>
	__attribute__((noinline)) void fp_leaf(volatile long *x) { for (int i = 0; i < 1000; i++) (*x)++; }
	__attribute__((noinline)) void *fp_worker(void *arg) { volatile long x = 0; for (long i = 0; i < 300000; i++) fp_leaf(&x); return arg; }
	int main(void) { pthread_t a, b; pthread_create(&a, 0, fp_worker, 0); pthread_create(&b, 0, fp_worker, 0); pthread_join(a, 0); pthread_join(b, 0); return 0; }
	EOF
	gcc -O2 -g -fno-omit-frame-pointer -pthread -o fp-threads fp-threads.c &&
	rc=0 &&
	for cmd in "./chain 1000" "./chain-nofp 1000" "./qsort_cb" "./fp-threads" "/usr/bin/python3 -c \"while 1: pass\"" \
		"--off-cpu /usr/bin/python3 -c \"import itertools, time; [time.sleep(0.0005) for _ in itertools.count()]\""; do
		opts= && case $cmd in --off-cpu*) opts=--off-cpu cmd=${cmd#--off-cpu } ;; esac &&
		STACKREC_CHECK_FP_WALK=1 timeout -s INT 60 "$STACKREC" record $opts --call-graph fp -F 999 --duration 1 \
			-o walk.rec -- sh -c "exec $cmd" 2>walk.err
		cat walk.err &&
		sed -n "s/^stackrec: fp walk check: \([0-9]*\) of \([0-9]*\) walks differ.*/\1 \2/p" walk.err >walk.count &&
		read differ walked <walk.count &&
		echo "$cmd: $differ of $walked walks differ" &&
		test "$walked" -ge 100 && test "$differ" -eq 0 || rc=1
	done &&
	test $rc -eq 0
'

test_expect_success BPF,GCC,OBJDUMP '-fomit-frame-pointer, default options: >= 99% of samples reach main, no invented call' '
	record_and_fold nofp -- ./chain-nofp 1500 || exit 1
	rc=0
	expect_share "nofp: reaching main" nofp.folded chain-nofp "" ";main(;|$)" 99 || rc=1
	"$TESTS/check-call-edges.sh" chain-nofp chain-nofp nofp.folded || rc=1
	exit $rc
'

test_expect_success BPF,GCC,LIBC_DBG 'a qsort callback, default options: >= 95% of its samples run through libc qsort to main' '
	record_and_fold qsort -- ./qsort_cb 1500 &&
	expect_share "qsort: compare_keys under main;qsort internals" qsort.folded qsort_cb \
		";compare_keys$" ";main;([^;]*(qsort|msort)[^;]*;)+compare_keys$" 95
'

test_expect_success BPF,PYTHON3,LIBC_DBG 'Debian python3 in a pure-Python loop: >= 90% reach __libc_start_call_main, no frame at 0' '
	record_and_fold python -- /usr/bin/python3 "$FIXTURES/busy_loop.py" 2 &&
	expect_share "python3: reaching __libc_start_call_main" python.folded python3 "" \
		";__libc_start_call_main(;|$)" 90 >python.share
	rc=$?
	cat python.share
	if grep "<0x0>" python.addrs >zero.addrs; then
		echo "frames at address 0 in $(awk "{ n += \$NF } END { print n }" zero.addrs) samples:"
		head -n 5 zero.addrs | cut -c1-300
		rc=1
	fi
	exit $rc
'

# Information only, never a test: perf's own DWARF unwinding of the same workload, for comparison.
# --no-bpf-event: Debian 12's perf 6.1 aborts (assertion in util/build-id.c) on the BPF program events of
# newer kernels when BPF programs are loaded.
if [ -n "${test_prereq_ok[BPF]:-}" ] && [ -n "${test_prereq_ok[PYTHON3]:-}" ] && command -v perf >/dev/null; then
	[ -f python.share ] && say "# stackrec, default options: $(head -n 1 python.share)"
	if perf record -q --no-bpf-event --call-graph dwarf -F 999 -o perf.data -- /usr/bin/python3 "$FIXTURES/busy_loop.py" 2 \
			>perf.out 2>&1 && perf script -i perf.data -F comm,ip,sym >perf.script 2>perf.err; then
		awk 'BEGIN { RS = "" } $1 == "python3" { t++; if (/__libc_start_call_main/) h++ }
			END { printf "# perf record --call-graph dwarf, same workload (information only): %.1f%% of %d samples reach __libc_start_call_main\n", t ? 100 * h / t : 0, t }' perf.script
	else
		say "# perf record --call-graph dwarf failed (information only): $(tail -n 1 perf.err perf.out 2>/dev/null | tr '\n' ' ')"
	fi
fi

# The sampler keeps each thread's stack range (where its copy of the stack ends) and looks it up again when the
# process's mappings change: here the main thread maps, protects and unmaps memory without pause, so that the
# worker's range is looked up again and again, now and then while a writer holds the mmap lock.
test_expect_success BPF,GCC,LIBC_DBG 'default options: a thread'"'"'s stacks stay whole while another thread keeps changing the mappings' '
	cat >churn.c <<-\EOF &&
	#define _GNU_SOURCE
	#include <pthread.h>
	#include <stdlib.h>
	#include <sys/mman.h>
	#include <time.h>
	static volatile int stop;
	__attribute__((noinline)) void churn_leaf(void) { for (volatile int i = 0; i < 1000; i++); }
	__attribute__((noinline)) void churn_mid(void) { churn_leaf(); __asm__ volatile(""); }
	__attribute__((noinline)) void *churn_worker(void *arg) { while (!stop) churn_mid(); return arg; }
	int main(int argc, char **argv)
	{
		long ms = atol(argv[1]);
		struct timespec t0, t;
		pthread_t th;

		pthread_create(&th, 0, churn_worker, 0);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		do {
			char *p = mmap(0, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (p != MAP_FAILED) {
				p[0] = 1;
				mprotect(p, 4096, PROT_NONE);
				munmap(p, 1 << 16);
			}
			clock_gettime(CLOCK_MONOTONIC, &t);
		} while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
		stop = 1;
		pthread_join(th, 0);
		return 0;
	}
	EOF
	gcc -O2 -g -pthread -o churn churn.c &&
	record_and_fold churn -- ./churn 1500 &&
	expect_share "churn: the worker from __clone3" churn.folded churn ";churn_worker(;|\$)" \
		"^;__clone3;start_thread;churn_worker(;churn_mid(;churn_leaf)?)?\$" 99 &&
	# A copy taken while the range of the stack could not be looked up is maybe whole, maybe not: not counted
	# as cut (8-9% of the samples were, in a recording whose stacks were all whole).
	stackrec info churn.rec >churn.info &&
	grep "cut stack copies" churn.info &&
	awk "/cut stack copies/ { gsub(/[(%)]/, \"\", \$5); exit !(\$5 + 0 < 1) }" churn.info
'

# The pages of a large local array between its first bytes and the frame above are never touched, so not in
# memory: the copy went on past them (as holes) where it used to stop there, "cut", with every stack truncated.
test_expect_success BPF,GCC 'default options: a frame whose middle pages were never touched does not cut its stacks' '
	record_and_fold big_frame -- ./big_frame 1000 &&
	expect_share "big_frame: spin under start_thread;worker;with_buffer" big_frame.folded big_frame \
		";spin$" ";start_thread;worker;with_buffer;spin$" 99 &&
	! grep "stack copies cut" big_frame.record.err &&
	stackrec info big_frame.rec >info.out &&
	cat info.out &&
	grep -E "^  cut stack copies +0 " info.out &&
	grep -E "^  copies with holes +[1-9]" info.out
'

# Where no CFI covers the interrupted pc, a frame-pointer step skips the caller of a function that made no frame
# (rbp is still the caller's): main;spin_nocfi, caller gone. The word on top of the stack follows caller's call
# of spin_nocfi, and the frame pointer's return address main's call of caller: the first is the return address.
test_expect_success BPF,GCC,OBJDUMP 'a leaf without CFI or a frame, default options: its caller is not skipped' '
	record_and_fold nocfi_leaf -- ./nocfi_leaf 3000 &&
	expect_share "nocfi_leaf: spin_nocfi under main;caller" nocfi_leaf.folded nocfi_leaf \
		";spin_nocfi$" ";__libc_start_call_main;main;caller;spin_nocfi$" 99 &&
	"$TESTS/check-call-edges.sh" nocfi_leaf nocfi_leaf nocfi_leaf.folded &&
	stackrec convert nocfi_leaf.rec -f trace -o nocfi_leaf.trace &&
	grep -q frame_pointer_leaf_fix nocfi_leaf.trace
'

# The same step checks the frame pointer's return address; where the kernel has a signal handler return, no call
# comes before it, but it is one: the walk goes on through the signal frame into raise and main.
test_expect_success BPF,GCC 'a signal handler without CFI, default options: its stacks go on through the signal frame' '
	record_and_fold signal_nocfi -- ./signal_nocfi 3000 &&
	expect_share "signal_nocfi: handler_nocfi under main;interrupted;raise" signal_nocfi.folded signal_nocfi \
		";handler_nocfi$" ";__libc_start_call_main;main;interrupted;raise;.*;handler_nocfi$" 95
'

# Code in anonymous executable memory (a JIT's) has no file and no CFI: the walk takes a frame-pointer step there,
# as docs/convert.md says. It took "//anon" for a module whose file was not found, and ended every stack at its
# first JIT frame: [incomplete];jitted_trampoline;spin (94.9% of a node --perf-basic-prof recording's samples).
test_expect_success BPF,GCC 'code in anonymous executable memory (a JIT'"'"'s), default options: stacks go on through it to main' '
	record_and_fold jit_stub -- ./jit_stub 1500 &&
	pid=$(stackrec convert jit_stub.rec --pid | sed -n "s/^jit_stub-\([0-9]*\);.*/\1/p" | head -n 1) &&
	rm -f "/tmp/perf-$pid.map" &&
	expect_share "jit_stub: spin under main;run_jitted;jitted_trampoline" jit_stub.folded jit_stub \
		";spin$" ";__libc_start_call_main;main;run_jitted;jitted_trampoline_\[j\];spin$" 95
'

# makecontext has a context's function return to glibc's __start_context, which nothing called: the byte before it
# is another function's padding, so the frame was unnamed ([libc.so.6]), and the walk went on through the
# context's data: fp mode named __libc_start_call_main its caller, dwarf mode ended [incomplete].
test_expect_success BPF,GCC 'a makecontext coroutine: its stacks end at __start_context, named, fp and dwarf' '
	cat >coroutine.c <<-\EOF &&
	#include <stdlib.h>
	#include <time.h>
	#include <ucontext.h>
	static ucontext_t main_ctx, co_ctx;
	volatile unsigned long sink;
	static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }
	__attribute__((noinline)) void co_work(void) { double end = now() + 0.002; while (now() < end) sink++; }
	__attribute__((noinline)) void coroutine(void) { for (;;) { co_work(); swapcontext(&co_ctx, &main_ctx); } }
	__attribute__((noinline)) void main_work(void) { double end = now() + 0.002; while (now() < end) sink++; }
	int main(int argc, char **argv)
	{
		static char stack[65536];
		int n = argc > 1 ? atoi(argv[1]) : 300;
		getcontext(&co_ctx);
		co_ctx.uc_stack.ss_sp = stack;
		co_ctx.uc_stack.ss_size = sizeof(stack);
		co_ctx.uc_link = &main_ctx;
		makecontext(&co_ctx, coroutine, 0);
		for (int i = 0; i < n; i++) {
			main_work();
			swapcontext(&main_ctx, &co_ctx);
		}
		return 0;
	}
	EOF
	gcc -O1 -g -fno-omit-frame-pointer -o coroutine coroutine.c &&
	# every sample in the coroutine: __start_context its outermost frame
	in_both_modes coroutine "^;__start_context;coroutine(;|\$)" "^;__start_context;coroutine(;|\$)" \
		";coroutine(;|\$)" ./coroutine 300
'

# A signal handler returns to glibc's __restore_rt, which no call put there: the byte before it, where a return
# address is looked up, is a nop that no symbol covers, and the frame was [libc.so.6] in both modes.
test_expect_success BPF,GCC 'a signal handler'"'"'s frame of delivery is named __restore_rt, fp and dwarf' '
	cat >alarm.c <<-\EOF &&
	#include <signal.h>
	#include <stdlib.h>
	#include <sys/time.h>
	#include <time.h>
	volatile unsigned long sink;
	static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }
	__attribute__((noinline)) void in_handler(void) { double end = now() + 0.003; while (now() < end) sink++; }
	static void handler(int sig) { (void)sig; in_handler(); sink++; }
	__attribute__((noinline)) void interrupted(double s) { double end = now() + s; while (now() < end) sink++; }
	int main(int argc, char **argv)
	{
		struct sigaction sa = { .sa_handler = handler };
		struct itimerval it = { { 0, 10000 }, { 0, 10000 } };
		sigaction(SIGALRM, &sa, 0);
		setitimer(ITIMER_REAL, &it, 0);
		interrupted(argc > 1 ? atof(argv[1]) : 1.0);
		return 0;
	}
	EOF
	gcc -O1 -g -fno-omit-frame-pointer -o alarm alarm.c &&
	# fp mode: the interrupted function itself may be missing below __restore_rt (docs/convert.md)
	in_both_modes alarm ";main;.*__restore_rt;handler;in_handler" ";main;interrupted;.*__restore_rt;handler;in_handler" \
		";handler;in_handler" ./alarm 2
'

# A perf map line "START SIZE " names nothing: folded wrote [unknown], d3 and speedscope [perf-PID.map], the
# trace a function "" with no reason.
test_expect_success BPF,GCC 'a JIT frame whose perf map line names nothing is unnamed, alike in folded, d3 and trace' '
	stackrec record -F 999 -o jit_empty.rec -- ./jit_stub 400 "" &&
	pid=$(stackrec convert jit_empty.rec --pid | sed -n "s/^jit_stub-\([0-9]*\);.*/\1/p" | head -n 1) &&
	rm -f "/tmp/perf-$pid.map" &&
	stackrec convert jit_empty.rec -o jit_empty.folded &&
	grep ";main;run_jitted;\[perf-$pid.map\];spin " jit_empty.folded &&
	! grep -F "[unknown]" jit_empty.folded &&
	stackrec convert jit_empty.rec -f d3 -o jit_empty.d3 &&
	grep -F "\"name\":\"[perf-$pid.map]\"" jit_empty.d3 &&
	stackrec convert jit_empty.rec -f trace -o jit_empty.trace &&
	grep -F "\"function\":null" jit_empty.trace | grep -F "\"unnamed_reason\":\"its perf map entry has an empty name\"" &&
	! grep -F "\"function\":\"\"" jit_empty.trace
'

# An io_uring worker thread (iou-wrk) runs only in the kernel; its user registers are a copy of its creator's
# with ip 0. The dwarf copy took them: every worker stack began with a user frame at 0x0, [unknown].
test_expect_success BPF,GCC,LIBURING 'an io_uring worker, default options: kernel frames only, no user frame it never ran' '
	cat >uring.c <<-\EOF &&
	#include <fcntl.h>
	#include <liburing.h>
	#include <stdlib.h>
	int main(int argc, char **argv)
	{
		struct io_uring ring;
		int fd = open(argv[1], O_RDONLY);
		char *buf = malloc(1 << 20);

		io_uring_queue_init(8, &ring, 0);
		for (long i = 0; i < 3000; i++) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
			struct io_uring_cqe *cqe;

			io_uring_prep_read(sqe, fd, buf, 1 << 20, (i % 16) << 20);
			sqe->flags |= IOSQE_ASYNC; /* to a worker thread */
			io_uring_submit(&ring);
			io_uring_wait_cqe(&ring, &cqe);
			io_uring_cqe_seen(&ring, cqe);
		}
		return 0;
	}
	EOF
	gcc -O2 -o uring uring.c -luring &&
	head -c 16M /dev/zero >uring.data &&
	stackrec record -F 999 -o uring.rec -- ./uring uring.data &&
	stackrec convert uring.rec --thread-names -o uring.folded &&
	grep -E "^uring;iou-wrk-[0-9]+;" uring.folded >workers &&
	test_line_count workers -gt 0 &&
	! grep -vE "^uring;iou-wrk-[0-9]+;([^;]*_\[k\];)*[^;]*_\[k\] [0-9]+$" workers
'

test_expect_success BPF,GCC '--call-graph dwarf,512 on a 200-deep recursion: stacks end in [truncated], info counts them' '
	need_call_graph dwarf,512 &&
	record_and_fold recurse --call-graph dwarf,512 -- ./recurse 1000 200 &&
	expect_share "recurse: [truncated] then descend frames" recurse.folded recurse \
		";bottom$" "^;\[truncated\](;descend)+;bottom$" 95 &&
	stackrec info recurse.rec >info.out &&
	cat info.out &&
	grep -i "truncated" info.out | grep -i "stack" | grep -q "[1-9]"
'

# --call-graph fp keeps at most 127 IPs a stack: a deeper one was cut there without a mark, as if complete.
test_expect_success BPF,GCC '--call-graph fp on a 300-deep recursion: stacks end in [truncated], --explain says why' '
	gcc -O2 -g -fno-omit-frame-pointer -o recurse_fp "$FIXTURES/recurse.c" &&
	record_and_fold recurse_fp --call-graph fp -- ./recurse_fp 1000 300 &&
	expect_share "recurse_fp: [truncated] then descend frames" recurse_fp.folded recurse_fp \
		";bottom$" "^;\[truncated\](;descend)+;bottom$" 95 &&
	stackrec convert recurse_fp.rec --explain -o /dev/null 2>explain.out &&
	cat explain.out &&
	grep -E "of samples end in \[truncated\]: too deep" explain.out
'

# ... and at kernel.perf_event_max_stack, where the walk stops when that is lower (the HOST block's max_stack).
test_expect_success BPF,GCC '--call-graph fp with kernel.perf_event_max_stack 64: a 300-deep stack ends in [truncated] at 64' '
	max=/proc/sys/kernel/perf_event_max_stack &&
	old=$(cat $max) &&
	echo 64 >$max &&
	stackrec record -F 999 --call-graph fp -o recurse64.rec -- ./recurse_fp 500 300 2>err;
	rc=$?
	for try in 1 2 3 4 5; do echo $old >$max 2>/dev/null && break; sleep 1; done
	test $rc -eq 0 &&
	test "$(cat $max)" = "$old" &&
	stackrec info recurse64.rec | grep -E "max_stack +64$" &&
	stackrec convert recurse64.rec -o recurse64.folded &&
	cat recurse64.folded | cut -c1-100 &&
	grep -E "^recurse_fp;\[truncated\];(descend;)+bottom [0-9]+$" recurse64.folded
'

# ld.so calls a library's _init and _fini (no CFI) through a register. A sample at their first instruction
# (page faults of the fresh mapping) took the frame-pointer guess: ld.so keeps no frame pointers, and the
# stack skipped two callers (_dl_close;[libz]) or ended [incomplete]. At a function's first byte, [rsp] is the
# return address, however the call was made.
test_expect_success BPF,GCC,LIBC_DBG 'a library'"'"'s _init and _fini, default options: the callers ld.so has, none skipped' '
	cat >dl_loop.c <<-\EOF &&
	#include <dlfcn.h>
	#include <time.h>
	int main(void)
	{
		time_t t0 = time(0);

		while (time(0) - t0 < 2) {
			void *h = dlopen("libz.so.1", RTLD_NOW);

			if (h)
				dlclose(h);
		}
		return 0;
	}
	EOF
	gcc -O2 -g -o dl_loop dl_loop.c -ldl &&
	record_and_fold dl_loop -F 1999 -- ./dl_loop &&
	expect_share "dl_loop: the _init or _fini of libz under their true callers" dl_loop.folded dl_loop \
		";\[libz[^;]*\]$" "(;_dl_close_worker;_dl_catch_exception|;_dl_init;call_init(;call_init)?);\[libz[^;]*\]$" 90
'

# A thread in rt_sigreturn is at the byte after its trampoline'"'"'s syscall, one past the signal frame'"'"'s FDE: no
# CFI covered it, and the frame-pointer guess named main;outer;__restore_rt, skipping middle;interrupted_leaf.
test_expect_success BPF,GCC,LIBC_DBG 'a sample inside rt_sigreturn, default options: the interrupted function and its callers' '
	cat >sigreturn.c <<-\EOF &&
	#include <signal.h>
	#include <sys/time.h>
	#include <time.h>
	volatile unsigned long sink;
	static void handler(int s, siginfo_t *si, void *uc) { sink++; }
	__attribute__((noinline)) void interrupted_leaf(void) { for (unsigned long i = 0; i < 1000000; i++) sink += i; }
	__attribute__((noinline)) void middle(void) { interrupted_leaf(); sink++; }
	__attribute__((noinline)) void outer(void) { middle(); sink++; }
	int main(void)
	{
		struct sigaction sa = { 0 };
		struct itimerval it = { { 0, 50 }, { 0, 50 } };
		time_t t0 = time(0);

		sa.sa_sigaction = handler;
		sa.sa_flags = SA_SIGINFO | SA_RESTART;
		sigaction(SIGALRM, &sa, 0);
		setitimer(ITIMER_REAL, &it, 0);
		while (time(0) - t0 < 3)
			outer();
		return 0;
	}
	EOF
	gcc -O2 -g -fno-omit-frame-pointer -o sigreturn sigreturn.c &&
	record_and_fold sigreturn -F 1999 -- ./sigreturn &&
	expect_share "sigreturn: rt_sigreturn under the interrupted function and its callers" sigreturn.folded sigreturn \
		";__restore_rt$" ";main;outer;middle;interrupted_leaf;__restore_rt$" 90
'

# A handler on an alternate signal stack (sigaltstack, SA_ONSTACK) interrupted a stack in another mapping, which
# the copy of the handler's stack does not reach: the walk goes through the signal frame to the interrupted
# function and stops there. It was said to be "stack copy too small", with the advice of a larger SIZE.
test_expect_success BPF,GCC 'a handler on a sigaltstack, default options: the interrupted function, then [truncated] and why' '
	cat >altstack.c <<-\EOF &&
	#include <signal.h>
	#include <stdlib.h>
	#include <sys/time.h>
	#include <time.h>
	volatile unsigned long sink;
	static double now_ms(void)
	{
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
	}
	__attribute__((noinline)) static void handler_work(void)
	{
		double end = now_ms() + 5;

		while (now_ms() < end)
			for (int i = 0; i < 1000; i++)
				sink = sink * 6364136223846793005ul + 1;
	}
	static void on_alarm(int s) { handler_work(); }
	__attribute__((noinline)) void interrupted(void) { for (unsigned long i = 0; i < 1000000; i++) sink += i; }
	__attribute__((noinline)) void outer(void) { interrupted(); sink++; }
	int main(void)
	{
		stack_t ss = { .ss_sp = malloc(65536), .ss_size = 65536 };
		struct sigaction sa = { 0 };
		struct itimerval it = { { 0, 10000 }, { 0, 10000 } };
		time_t t0 = time(0);

		sigaltstack(&ss, 0);
		sa.sa_handler = on_alarm;
		sa.sa_flags = SA_ONSTACK | SA_RESTART;
		sigaction(SIGALRM, &sa, 0);
		setitimer(ITIMER_REAL, &it, 0);
		while (time(0) - t0 < 2)
			outer();
		return 0;
	}
	EOF
	gcc -O1 -g -o altstack altstack.c &&
	record_and_fold altstack -- ./altstack &&
	expect_share "altstack: handler_work through the signal frame to interrupted, then [truncated]" altstack.folded \
		altstack ";handler_work$" "^;\[truncated\];interrupted;[^;]*;on_alarm;handler_work$" 90 &&
	stackrec convert altstack.rec --explain -o /dev/null 2>explain &&
	grep "end in \[truncated\]: the interrupted stack, off the signal stack, was not copied: a signal handler ran on its own stack" explain &&
	! grep "larger --call-graph dwarf,SIZE" explain
'

test_done
