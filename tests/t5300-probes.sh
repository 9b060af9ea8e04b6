#!/usr/bin/env bash
test_description='record --probe, --signals, --exceptions, --metrics-interval: uprobes that capture arguments
by DWARF name, fatal signals and C++ throws as event samples with their stacks, process metrics; what record
writes, block by block (PROBE, PROBE_HIT, SAMPLE of kind EVENT, PROCESS_METRICS, STATS)'
. "$(dirname "$0")/test-lib.sh"

# Programs from fixtures/, built at test time (fixtures/README.md).
if command -v gcc >/dev/null; then test_set_prereq GCC; else test_unset_prereq GCC "gcc is not installed (apt-get install gcc)"; fi
if command -v g++ >/dev/null; then test_set_prereq GXX; else test_unset_prereq GXX "g++ is not installed (apt-get install g++)"; fi

# dump FILE: the probe, event, metrics and stats blocks, one a line (tests/unit/dump-blocks.c)
dump() { "$UNIT_DIR/dump-blocks" "$1"; }

test_expect_success GCC 'build the test programs' '
	gcc -O1 -g -fno-omit-frame-pointer -o crash "$FIXTURES/crash.c" &&
	gcc -O1 -g -fno-omit-frame-pointer -o probe_hot "$FIXTURES/probe_hot.c" &&
	if command -v g++ >/dev/null; then g++ -O1 -g -fno-omit-frame-pointer -o throw "$FIXTURES/throw.cc"; fi
'

test_expect_success GCC 'a probe naming a parameter the function does not have is refused with those it has' '
	test_must_fail stackrec record --probe "./crash:parse_record(id, str(title))" -o no.rec -- ./crash 2>err &&
	cat err &&
	test_line_count err = 1 &&
	grep -F "parse_record has no parameter '"'"'title'"'"'; its parameters are: r, id, name" err &&
	test ! -e no.rec
'

test_expect_success GCC 'a function the binary does not have is refused, and so is bad syntax' '
	test_must_fail stackrec record --probe "./crash:parse_records(id)" -- ./crash 2>err &&
	grep -F "no function '"'"'parse_records'"'"' in" err &&
	test_must_fail stackrec record --probe "./crash:parse_record" -- ./crash 2>err &&
	grep -F "expected BINARY:FUNCTION(ARG, ...)" err &&
	test_must_fail stackrec record --probe "./crash:parse_record(arg6)" -- ./crash 2>err &&
	grep -F "parse_record has no parameter '"'"'arg6'"'"'" err &&
	test_must_fail stackrec record --probe "./crash:parse_record(str(id))" -- ./crash 2>err &&
	grep -F "str(id): parameter '"'"'id'"'"' of parse_record is not a pointer to char" err &&
	# a pointer to anything but characters has no string to read (perf probe'"'"'s string type: char * only)
	test_must_fail stackrec record --probe "./crash:parse_record(str(r))" -- ./crash 2>err &&
	grep -F "str(r): parameter '"'"'r'"'"' of parse_record is not a pointer to char" err &&
	test_must_fail stackrec record --metrics-interval -5 -- ./crash 2>err &&
	grep -F "metrics-interval takes milliseconds" err &&
	# an empty argument was dropped (strtok), and a repeated one taken twice
	test_must_fail stackrec record --probe "./crash:parse_record(id,,name)" -- ./crash 2>err &&
	grep -F "an empty argument (two commas, or one at the end)" err &&
	test_must_fail stackrec record --probe "./crash:parse_record(id, name,)" -- ./crash 2>err &&
	grep -F "an empty argument" err &&
	test_must_fail stackrec record --probe "./crash:parse_record(id, id)" -- ./crash 2>err &&
	grep -F "'"'"'id'"'"' is named twice" err
'

test_expect_success GCC,BPF 'probe on parse_record(id, str(name)): a PROBE block, then one hit per call in order' '
	{ stackrec record --probe "./crash:parse_record(id, str(name))" -o crash.rec -- ./crash 2>err; test $? -eq 139; } &&
	cat err &&
	grep -E "^stackrec: recorded 7 probe hits \(0 lost\), 1 events \(0 lost\)" err &&
	# the crash is an event, on the line below, not a sample; the process counts with its hits alone
	# (at 99 Hz it seldom lives long enough for a sample: it was "from 0 processes")
	grep -E "^stackrec: recorded [0-9]+ samples from 1 processes " err &&
	dump crash.rec >blocks &&
	cat blocks &&
	grep -E "^probe 1 0x[0-9a-f]+ $PWD/crash parse_record id:s64 name:str$" blocks &&
	addr=$(nm crash | awk "\$3 == \"parse_record\" { print \$1 }" | sed "s/^0*//") &&
	grep -E "^probe 1 0x$addr " blocks &&
	awk "\$1 == \"hit\" { print \$6, \$9 }" blocks >hits &&
	printf "%s\n" "1 rec-1" "2 rec-2" "3 rec-3" "4 rec-4" "5 rec-5" "6 rec-6" "7 <unreadable>" >expect &&
	test_cmp expect hits &&
	# every call is made from the same frame of load_all: one CFA
	awk "\$1 == \"hit\" { print \$5 }" blocks | sort -u >cfas &&
	test_line_count cfas = 1
'

# An int fills the low half of its register; the caller may leave anything in the upper half (here pass()'s
# `mov %edi, %esi` keeps the long's upper bits). The values were the raw registers: -2 as 4294967294, (int)
# 0x300000007 as 12884901895. And "" was written as a string that could not be read.
# clang writes no .debug_aranges by default, and libdw 0.188 finds a unit by them only: every --probe of a
# parameter of a clang binary said "no DWARF for ...; use arg0..arg5".
test_expect_success BPF 'a clang binary (no .debug_aranges): its parameters are found by name' '
	clang -O1 -g -fno-omit-frame-pointer -fno-inline -o crash-clang "$FIXTURES/crash.c" &&
	! readelf -S crash-clang | grep -F .debug_aranges &&
	{ stackrec record --probe "./crash-clang:parse_record(id, str(name))" -o clang.rec -- ./crash-clang 2>err; test $? -eq 139; } &&
	cat err &&
	grep -E "^stackrec: recorded 7 probe hits \(0 lost\)" err &&
	dump clang.rec >clang-blocks &&
	awk "\$1 == \"hit\" { print \$6, \$9 }" clang-blocks >clang-hits &&
	printf "%s\n" "1 rec-1" "2 rec-2" "3 rec-3" "4 rec-4" "5 rec-5" "6 rec-6" "7 <unreadable>" >expect &&
	test_cmp expect clang-hits
'

# Two ways the ABI's position of a parameter is not where it is: a function returning a struct in memory takes
# the return slot's address in rdi, ahead of its parameters (DWARF lists none of it: id was read from the slot's
# register); clang takes an unused parameter out of a static function's signature, and the next moves into its
# register (handle(unused) read id). DWARF's location at the entry says where, or the probe is refused.
test_expect_success BPF 'a struct returned in memory, a parameter taken out of a static function: the right registers' '
	cat >abi.c <<-\EOF &&
	#include <stdio.h>
	struct big { long a[4]; };
	__attribute__((noinline)) struct big make(int id, const char *tag)
	{
		struct big b = { { id, 0, 0, 0 } };

		puts(tag);
		return b;
	}
	__attribute__((noinline)) static int handle(int unused, int id) { return id * 2 + 1; }
	int main(int argc, char **argv)
	{
		long s = 0;

		for (int i = 0; i < 3; i++) {
			struct big b = make(i + 5, argv[0]);

			s += b.a[0] + handle(argc * 100, i);
		}
		return s == 0;
	}
	EOF
	clang -O2 -g -o abi abi.c &&
	test_must_fail stackrec record --probe "./abi:handle(unused)" -- ./abi 2>err &&
	grep -F "parameter '"'"'unused'"'"' of handle cannot be read at its entry: it has no location" err &&
	stackrec record --probe "./abi:make(id)" --probe "./abi:handle(id)" -o abi.rec -- ./abi >/dev/null 2>err &&
	cat err &&
	dump abi.rec >abi-blocks &&
	awk "\$1 == \"hit\" { print \$2, \$6 }" abi-blocks >abi-hits &&
	printf "%s\n" "1 5" "2 0" "1 6" "2 1" "1 7" "2 2" >expect &&
	test_cmp expect abi-hits &&
	# clang leaves std::string'"'"'s definition to libstdc++'"'"'s debug info: returned by a method, whether it
	# takes rdi is unknown, and at -O0 no register location says where the parameters are
	printf "%s\n" "#include <string>" "struct Obj { int k; std::string name(int id); };" \
		"std::string Obj::name(int id) { return std::to_string(id + k); }" \
		"int main() { Obj o{3}; return (int)o.name(1).size() - 1; }" >declared.cc &&
	clang++ -O0 -g -o declared declared.cc &&
	test_must_fail stackrec record --probe "./declared:_ZN3Obj4nameB5cxx11Ei(id)" -- ./declared 2>err &&
	grep -F "returns a class the DWARF only declares" err
'

# gcc -O2 moves a function's unlikely paths (error handling, throws) into FUNCTION.cold, which runs in the
# function's frame: a crash or throw there showed the function with no values (only a frame whose symbol starts
# at the probe was matched).
test_expect_success GCC,BPF 'a crash in FUNCTION.cold (gcc -O2): the frame shows the probe'"'"'s values' '
	cat >cold.c <<-\EOF &&
	#include <stdio.h>
	__attribute__((cold, noinline)) void report_bad(int id) { fprintf(stderr, "bad %d\n", id); }
	volatile int *volatile bad_ptr = (int *)0x77;
	__attribute__((noinline)) int check(int id, const char *name)
	{
		int s = 0;

		for (int i = 0; i < id; i++)
			s += name[i % 3] * i;
		if (id > 5) {
			report_bad(id);
			s += *bad_ptr;
			report_bad(s);
		}
		return s;
	}
	int main(int argc, char **argv)
	{
		int s = 0;

		for (int i = 0; i < 8; i++)
			s += check(i, argv[0]);
		return s;
	}
	EOF
	gcc -O2 -g -o cold cold.c &&
	nm cold | grep -E " check\.cold(\.[0-9]+)?$" &&
	{ stackrec record --probe "./cold:check(id)" -o cold.rec -- ./cold 2>err; test $? -eq 139; } &&
	stackrec convert cold.rec -f report -o cold.report &&
	cat cold.report &&
	grep -A1 -E "^    #[0-9]+ +check at cold.c" cold.report | grep -x "        id = 6"
'

# A thread sampled at the probed function's first byte is in the uprobe's trap, before the BPF program stamps its
# call's hit: the latest hit at that CFA was the previous call's (i one less than the sample's own rdi in 153 of
# 349 such samples of a hot loop). Such a frame shows no values.
test_expect_success GCC,BPF 'a sample at the probed function'"'"'s first byte (in the uprobe trap) shows no values' '
	cat >entry.c <<-\EOF &&
	volatile long sink;
	__attribute__((noinline)) long hot(long i) { sink += i; return i; }
	int main(void)
	{
		for (long i = 0; i < 400000; i++)
			hot(i);
		return 0;
	}
	EOF
	gcc -O1 -g -o entry entry.c &&
	stackrec record -F 999 --probe "./entry:hot(i)" -o entry.rec -- ./entry 2>err &&
	cat err &&
	stackrec convert entry.rec -f trace -o entry.trace &&
	offset=$(nm entry | awk "\$3 == \"hot\" { print \$1 }") &&
	python3 - entry.trace "$offset" <<-\PY
	import json, sys
	records = [json.loads(line) for line in open(sys.argv[1])]
	stacks = {r["id"]: r for r in records if r["type"] == "stack"}
	entry, shown, other = 0, 0, 0
	for r in records:
	    if r["type"] != "sample":
	        continue
	    for f in stacks[r["stack"]]["frames"]:
	        if f.get("function") != "hot" or f["kind"] != "user":
	            continue
	        if int(f["file_offset"], 16) == int(sys.argv[2], 16) and not f["return_address"]:
	            entry += 1
	            shown += "context" in f
	        else:
	            other += "context" in f
	print("samples at hot'"'"'s first byte:", entry, "with values:", shown, "; elsewhere in hot with values:", other)
	sys.exit(not (entry > 0 and shown == 0 and other > 0))
	PY
'

test_expect_success GCC,BPF 'probe values: an int, a short and an unsigned from their own bytes, signed as typed; "" is read' '
	cat >sized.c <<-\EOF &&
	#include <stdlib.h>
	volatile long sink;
	__attribute__((noinline)) void take(int v, unsigned u, short s, unsigned char c, const char *name)
	{
		sink += v + u + s + c + (name[0] != 0);
	}
	__attribute__((noinline)) void pass(long x, const char *name)
	{
		take((int)x, (unsigned)x, (short)x, (unsigned char)x, name);
	}
	int main(int argc, char **argv)
	{
		char empty[1] = "", x[2] = "x"; /* on the stack: in memory (a literal'"'"'s page may not be yet) */
		pass(strtol(argv[1], 0, 0), empty);
		pass(strtol(argv[2], 0, 0), x);
		return 0;
	}
	EOF
	gcc -O2 -g -o sized sized.c &&
	stackrec record --probe "./sized:take(v, u, s, c, str(name))" -o sized.rec -- ./sized 0x3fffffffe 0x300000007 &&
	dump sized.rec >sized.blocks &&
	cat sized.blocks &&
	awk "\$1 == \"hit\" { \$2 = \$3 = \$4 = \$5 = \$10 = \"\"; print }" sized.blocks >hits &&
	printf "%s\n" "hit     -2 4294967294 -2 254  | \"\"" "hit     7 7 7 7  | x" >expect &&
	test_cmp expect hits
'

# A string is kept up to 127 bytes. A longer one looked whole: 128 or 200 bytes showed as 127, unmarked.
test_expect_success GCC,BPF 'a probe string longer than the 127 bytes kept is marked cut, one of 127 is not' '
	cat >long.c <<-\EOF &&
	#include <string.h>
	volatile long sink;
	__attribute__((noinline)) void take(int crash, const char *name)
	{
		sink += strlen(name);
		if (crash) {
			for (long i = 0; i < 300000000; i++) /* samples in this call, for pprof */
				sink += i;
			*(volatile int *)0 = 0;
		}
	}
	int main(void)
	{
		static const int sizes[] = { 126, 127, 128, 200 };
		char name[201];

		for (int i = 0; i < 4; i++) {
			memset(name, '"'"'a'"'"' + i, sizes[i]);
			name[sizes[i]] = 0;
			take(i == 3, name);
		}
		return 0;
	}
	EOF
	gcc -O1 -g -fno-omit-frame-pointer -o long long.c &&
	{ stackrec record -F 999 --probe "./long:take(str(name))" -o long.rec -- ./long 2>err; test $? -eq 139; } &&
	cat err &&
	dump long.rec >long.blocks &&
	awk "\$1 == \"hit\" { print length(\$8), \$8 ~ /<cut>$/ }" long.blocks >hits &&
	printf "%s\n" "126 0" "127 0" "132 1" "132 1" >expect &&
	test_cmp expect hits &&
	stackrec convert long.rec -f report >report &&
	cat report &&
	grep -E "^ +name = \"d{127}\"\.\.\.$" report &&
	stackrec convert long.rec -f trace >trace &&
	grep -F "\"cut\":[\"name\"]" trace &&
	stackrec convert long.rec -f pprof -o long.pb.gz &&
	gzip -dc long.pb.gz | grep -a -F "$(printf "%0127d" 0 | tr 0 d)…"
'

test_expect_success GCC,BPF 'the SIGSEGV is an event sample: signal 11, SEGV_MAPERR, the bad address, registers and stack' '
	grep -E "^event 1 11 1 0xdead - user=0 kernel=[0-9]+ regs=1 " blocks &&
	pid=$(awk "\$1 == \"hit\" { print \$3; exit }" blocks) &&
	grep -E "^event .* pid=$pid tid=$pid$" blocks &&
	# the event comes after the last hit, as it happened
	tail -n 3 blocks | head -n 1 | grep "^event " &&
	# and the process at that moment, read in the kernel: one thread, some RSS
	grep -E "^metrics 2 $pid $pid 1 [0-9]+ [0-9]+ [1-9][0-9]* [1-9][0-9]*$" blocks &&
	grep -E "^stats [0-9]+ 7 0 1 0$" blocks
'

test_expect_success GCC,BPF 'two probes: ids in command-line order, load_all'"'"'s hit before those of the calls it makes' '
	stackrec record --probe "./crash:parse_record(id)" --probe "./crash:load_all(n)" -o two.rec -- ./crash 5 2>err &&
	cat err &&
	dump two.rec >two.blocks &&
	cat two.blocks &&
	grep -E "^probe 1 0x[0-9a-f]+ $PWD/crash parse_record id:s64$" two.blocks &&
	grep -E "^probe 2 0x[0-9a-f]+ $PWD/crash load_all n:s64$" two.blocks &&
	awk "\$1 == \"hit\" { print \$2, \$6 }" two.blocks >hits &&
	printf "%s\n" "2 5" "1 1" "1 2" "1 3" "1 4" "1 5" >expect &&
	test_cmp expect hits &&
	# parse_record is called by load_all: its frame is deeper, at a lower CFA
	cfa1=$(awk "\$1 == \"hit\" && \$2 == 1 { print \$5; exit }" two.blocks) &&
	cfa2=$(awk "\$1 == \"hit\" && \$2 == 2 { print \$5; exit }" two.blocks) &&
	test $((cfa1)) -lt $((cfa2)) &&
	! grep "^event " two.blocks
'

test_expect_success GCC,BPF 'a SIGSEGV sent with kill(): recorded, with SI_USER and no faulting address' '
	./probe_hot 100000000 >/dev/null &
	pid=$!
	# once the recording is under way (its file is renamed into place then)
	(while [ ! -e killed.rec ]; do sleep 0.05; done; sleep 0.3; kill -SEGV $pid) &
	stackrec record --signals -p $pid -o killed.rec 2>err;
	rc=$?;
	wait $pid;
	cat err && test $rc = 0 &&
	dump killed.rec >killed.blocks &&
	cat killed.blocks &&
	grep -E "^event 1 11 0 0x0 - user=0 kernel=[0-9]+ regs=1 pid=$pid tid=$pid$" killed.blocks
'

test_expect_success GCC,BPF '--call-graph fp: the event has the frame-pointer walk of the user stack' '
	{ stackrec record --call-graph fp --probe "./crash:parse_record(id, r, arg1)" -o fp.rec -- ./crash 2>err; test $? -eq 139; } &&
	dump fp.rec >fp.blocks &&
	cat fp.blocks &&
	grep -E "^probe 1 0x[0-9a-f]+ $PWD/crash parse_record id:s64 r:ptr arg1:s64$" fp.blocks &&
	# id and arg1 are the same register
	awk "\$1 == \"hit\" { if (\$6 != \$8) bad = 1; n++ } END { exit bad || n != 7 }" fp.blocks &&
	grep -E "^event 1 11 1 0xdead - user=([3-9]|[1-9][0-9]+) kernel=[0-9]+ regs=1 " fp.blocks
'

# An fp walk gives no stack addresses: no frame can be told which call it is in, and so none shows values. That
# was said under --explain only; docs/convert.md promises a warning and the report's top too, cold and warm.
test_expect_success GCC,BPF '--call-graph fp: no probe values, and the warning and the report say why' '
	for run in cold warm; do
		stackrec convert fp.rec -f report -o fp.report 2>err &&
		grep -x "stackrec: warning: .fp.rec.: no probe context shown: no frame of a probed function has a known stack address (CFA) to tell which call it is in (a --call-graph fp recording has none): record with --call-graph dwarf" err &&
		grep -x "warning: no frame shows probe values: no frame of a probed function has a known stack address (CFA) to tell which call it is in (a --call-graph fp recording has none): record with --call-graph dwarf" fp.report || return 1
	done &&
	! grep -F "id = " fp.report
'

test_expect_success GCC,BPF '--no-signals: hits, no event' '
	{ stackrec record --no-signals --probe "./crash:parse_record(id)" -o nosig.rec -- ./crash 2>err; test $? -eq 139; } &&
	dump nosig.rec >nosig.blocks &&
	test $(grep -c "^hit " nosig.blocks) = 7 &&
	! grep "^event " nosig.blocks
'

test_expect_success GCC,BPF '--signals alone: the crash without probes' '
	{ stackrec record --signals -o sig.rec -- ./crash 2>err; test $? -eq 139; } &&
	cat err &&
	dump sig.rec >sig.blocks &&
	grep -E "^event 1 11 1 0xdead " sig.blocks &&
	! grep "^hit " sig.blocks
'

test_expect_success GCC,BPF 'a SIGSEGV the program handles and survives is recorded; an ignored SIGABRT is not' '
	cat >survive.c <<-\EOF &&
	#include <setjmp.h>
	#include <signal.h>
	#include <stdio.h>
	static sigjmp_buf back;
	static void on_segv(int sig) { (void)sig; siglongjmp(back, 1); }
	int main(void)
	{
		volatile int *bad = (int *)0x10;
		signal(SIGSEGV, on_segv);
		if (!sigsetjmp(back, 1))
			printf("%d\n", *bad);
		signal(SIGABRT, SIG_IGN);
		raise(SIGABRT);
		puts("survived");
		return 0;
	}
	EOF
	gcc -O1 -g -o survive survive.c &&
	stackrec record --signals -o survive.rec -- ./survive >out 2>err &&
	cat err out &&
	grep survived out &&
	dump survive.rec >survive.blocks &&
	cat survive.blocks &&
	grep "^event " survive.blocks >events &&
	test_line_count events = 1 &&
	grep -E "^event 1 11 1 0x10 " events
'

test_expect_success GXX,BPF '--exceptions: the thrown type'"'"'s mangled name and the stack at the throw' '
	stackrec record --exceptions -o throw.rec -- ./throw 2>err &&
	cat err &&
	dump throw.rec >throw.blocks &&
	cat throw.blocks &&
	grep -E "^event 2 0 0 0x[0-9a-f]+ 11parse_error user=0 kernel=0 regs=1 " throw.blocks &&
	test $(grep -c "^event " throw.blocks) = 1 &&
	grep -E "^metrics 2 " throw.blocks
'

test_expect_success GXX,BPF '--exceptions --signals, uncaught: the throw, then SIGABRT from std::terminate' '
	{ stackrec record --exceptions --signals --call-graph fp -o uncaught.rec -- ./throw uncaught 2>err; test $? -eq 134; } &&
	cat err &&
	dump uncaught.rec >uncaught.blocks &&
	cat uncaught.blocks &&
	grep "^event " uncaught.blocks >events &&
	test_line_count events = 2 &&
	head -n 1 events | grep -E "^event 2 0 0 0x[0-9a-f]+ 11parse_error user=([4-9]|[1-9][0-9]+) " &&
	tail -n 1 events | grep -E "^event 1 6 -6 0x0 - " # SI_TKILL: raise() in abort()
'

test_expect_success GCC,BPF '--metrics-interval: CPU time, RSS and threads of a running target from /proc' '
	stackrec record --metrics-interval 200 -o metrics.rec -- ./probe_hot 2000000 2>err &&
	cat err &&
	dump metrics.rec >metrics.blocks &&
	grep "^metrics 1 " metrics.blocks >interval &&
	cat interval &&
	test_line_count interval -ge 2 &&
	awk "{ if (\$4 != 0 || \$5 != 1) bad = 1; if (\$6 > 0) cpu = 1; if (\$8 <= 0 || \$9 <= 0) bad = 1 }
		END { exit bad || !cpu }" interval
'

test_expect_success GCC,BPF 'a probe on a process already running (-p), with lost hits counted in STATS as in the summary' '
	./probe_hot 100000000 >/dev/null &
	pid=$! &&
	sleep 0.2 &&
	stackrec record -p $pid --duration 1 --probe "./probe_hot:hot_call(n, str(tag))" -o running.rec 2>err;
	rc=$?;
	kill $pid; wait $pid;
	cat err && test $rc = 0 &&
	dump running.rec >running.blocks &&
	grep -E "^hit 1 $pid $pid 0x[0-9a-f]+ [0-9]+ [0-9]+ \| hot$" running.blocks >hot &&
	test_line_count hot -ge 1000 &&
	lost=$(sed -n "s/^stackrec: recorded \([0-9]*\) probe hits (\([0-9]*\) lost).*/\1 \2/p" err) &&
	grep -E "^stats [0-9]+ $lost 0 0$" running.blocks
'

test_expect_success GCC,BPF 'a recorder that cannot keep up: the target goes on, the hits lost are counted in the summary and STATS' '
	# The recorder is stopped for 5 s while every call of probe_hot is a hit of 240 bytes in the ring buffer
	# (16 MiB with --call-graph fp): it fills up, and the hits after that are dropped and counted.
	# "$STACKREC", not the shell function: $! must be the recorder itself
	"$STACKREC" record --call-graph fp --duration 8 --probe "./probe_hot:hot_call(n, str(tag))" -o lost.rec -- \
		./probe_hot 1000000000 >/dev/null 2>err &
	rec=$!
	(while [ ! -e lost.rec ]; do sleep 0.05; done; sleep 0.5; kill -STOP $rec; sleep 5; kill -CONT $rec) &
	wait $rec &&
	cat err &&
	set -- $(sed -n "s/^stackrec: recorded \([0-9]*\) probe hits (\([0-9]*\) lost).*/\1 \2/p" err) &&
	test "$2" -gt 0 &&
	dump lost.rec >lost.blocks &&
	grep -E "^stats [0-9]+ $1 $2 0 0$" lost.blocks &&
	test $(grep -c "^hit 1 " lost.blocks) = $1
'

test_expect_success GCC,BPF 'a sample in the uprobe step out of line unwinds from the probed function (fp, dwarf)' '
	# Most samples of a hot probed function come while the kernel steps its copy of the probed instruction in
	# the [uprobes] page: perf shows [uprobes] called by main'"'"'s caller. The sampler gives the probed pc.
	for mode in fp dwarf; do
		stackrec record --call-graph $mode -F 999 --probe "./probe_hot:hot_call(n)" -o step-$mode.rec -- \
			./probe_hot 300000 >/dev/null 2>err-$mode || return 1
		stackrec info step-$mode.rec >info-$mode &&
		grep -E "in a uprobe.s step +[1-9][0-9]* samples" info-$mode &&
		stackrec convert step-$mode.rec -o step-$mode.folded || return 1
		! grep -F "[uprobes]" step-$mode.folded || return 1
		# every sample in hot_call has main (and the rest) as its callers
		awk "/;hot_call/ { all += \$NF; if (\$0 ~ /__libc_start_call_main;main;hot_call/) good += \$NF }
		     END { print all, good; exit !(all > 100 && good == all) }" step-$mode.folded || return 1
	done
'

test_expect_success GCC,BPF 'a probe hit packed in less than four bytes of file: its context is shown, not taken as hostile' '
	# 300,000 hits of a probe without arguments take 2.4 bytes each; convert allowed a hit per 4 bytes
	stackrec record -F 49 --probe "./probe_hot:hot_call()" -o packed.rec -- ./probe_hot 300000 >/dev/null 2>err &&
	test $(stat -c %s packed.rec) -lt 1200000 &&
	stackrec convert -f report --all-events packed.rec -o packed.report 2>err &&
	cat err &&
	! grep -F "no probe context" err &&
	grep "sample with probe context" packed.report
'

test_expect_success GCC 'a second probe on a probed function is refused: a frame shows one probe'"'"'s values' '
	test_must_fail stackrec record --probe "./crash:parse_record(id)" --probe "./crash:parse_record(str(name))" \
		-o twice.rec -- ./crash 2>err &&
	cat err &&
	test_line_count err = 1 &&
	grep -F "parse_record in '"'"'$PWD/crash'"'"' has a probe already (--probe '"'"'./crash:parse_record(id)'"'"')" err &&
	test ! -e twice.rec
'

test_expect_success GCC,BPF 'a probe on a function also inlined into its callers says that those calls are no hits' '
	cat >inlined.c <<-\EOF &&
	#include <stdio.h>
	#include <stdlib.h>
	int step(int x) { return x * 3 + 1; }
	int main(int argc, char **argv)
	{
		long n = argc > 1 ? atol(argv[1]) : 1000, s = 0;
		for (long i = 0; i < n; i++)
			s += step((int)i);
		printf("%ld\n", s);
		return 0;
	}
	EOF
	gcc -O2 -g -o inlined inlined.c &&
	gcc -O0 -g -o not-inlined inlined.c &&
	stackrec record --probe "./inlined:step(x)" -o inlined.rec -- ./inlined 1000 >/dev/null 2>err &&
	cat err &&
	grep -F "step is also inlined into callers in '"'"'$PWD/inlined'"'"' (DWARF: DW_AT_inline): the calls made there do not reach its entry" err &&
	grep -F "recorded 0 probe hits" err &&
	stackrec record --probe "./not-inlined:step(x)" -o not-inlined.rec -- ./not-inlined 1000 >/dev/null 2>err &&
	cat err &&
	! grep -F "inlined into" err &&
	grep -F "recorded 1000 probe hits" err &&
	# a function gcc cloned (its constant argument folded in) but inlined nowhere: the clone is named
	cat >cloned.c <<-\EOF &&
	#include <stdio.h>
	#include <stdlib.h>
	__attribute__((noinline)) int work(int x, int mode) { int s = 0; for (int i = 0; i < x; i++) s += mode ? i * 3 : i; return s; }
	int main(int argc, char **argv) { long n = atol(argv[1]), s = 0; for (long i = 0; i < n; i++) s += work((int)i, 1); printf("%ld\n", s); return 0; }
	EOF
	gcc -O3 -g -o cloned cloned.c &&
	clone=$(nm cloned | awk "\$3 ~ /^work[.]/ { print \$3; exit }") &&
	test -n "$clone" &&
	stackrec record --probe "./cloned:work(x)" -o cloned.rec -- ./cloned 100 >/dev/null 2>err &&
	cat err &&
	grep -F "work has copies in '"'"'$PWD/cloned'"'"' (DWARF: DW_AT_inline): inlined into callers or compiled as clones ($clone)" err
'

test_expect_success GCC,BPF 'info counts samples as record does, events apart' '
	{ stackrec record -F 999 --signals -o counted.rec -- ./crash 2>err; test $? -eq 139; } &&
	cat err &&
	summary=$(sed -n "s/^stackrec: recorded \([0-9]*\) samples .*/\1/p" err) &&
	events=$(sed -n "s/.* probe hits (0 lost), \([0-9]*\) events .*/\1/p" err) &&
	test "$events" -ge 1 &&
	stackrec info counted.rec >counted.info &&
	awk -v n="$summary" "\$1 == \"samples\" && \$2 == n { found = 1 } END { exit !found }" counted.info &&
	awk -v n="$events" "\$1 == \"events\" && \$2 == n { found = 1 } END { exit !found }" counted.info
'

test_done
