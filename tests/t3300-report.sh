#!/usr/bin/env bash
test_description='stackrec convert -f report: fatal signals and exceptions, with their stacks, probe context and metrics'
# The first part needs no root and no BPF: recordings are written by tests/unit/test-convert.c ("test-convert
# write OUT <script") for a program compiled here, with instruction pointers from nm and objdump. The second
# part converts the checked-in recording fixtures/crash.rec of fixtures/crash.c (`record --probe` of
# parse_record(id, str(name)), made by `make -C fixtures regenerate`) and compares the report and the trace
# exactly with fixtures/expected/crash.report and crash.trace.
. "$(dirname "$0")/test-lib.sh"

BASE=0x555555554000 # where text_mapping (test-lib.sh) maps the program

test_expect_success 'build the program: main → work → fault' '
	cat >prog.c <<-\EOF &&
	volatile int *volatile where;

	__attribute__((noinline)) int fault(int x)
	{
		return *where + x;
	}

	__attribute__((noinline)) int work(int x)
	{
		return fault(x) * 3;
	}

	int main(void)
	{
		return work(1);
	}
	EOF
	cc -O1 -g -fno-omit-frame-pointer -o prog prog.c &&
	test -n "$(ret_after_call work fault prog)" && test -n "$(ret_after_call main work prog)"
'

# The stack main → work → fault, leaf first.
user_stack() {
	echo "$(runtime $(printf "%x" $((0x$(vaddr fault prog) + 4)))),$(runtime $(ret_after_call work fault prog)),$(runtime $(ret_after_call main work prog))"
}

test_expect_success 'a recording with no events: the report says so' '
	{
		echo "host start_monotonic_ns=1000000000" &&
		text_mapping 100 prog $(build_id prog) 1 &&
		echo "repeat 3 sample 100 100 prog 1500000000 $(user_stack) -" &&
		echo "stats 3" &&
		echo "end"
	} >script &&
	write_rec quiet.rec <script &&
	stackrec convert quiet.rec -f report >actual &&
	cat >expect <<-\EOF &&
	stackrec report: 0 fatal signals or exceptions

	no fatal signals or exceptions recorded
	EOF
	test_cmp expect actual
'

test_expect_success 'write a recording with a SIGSEGV, an exception and metrics' '
	{
		echo "host start_monotonic_ns=1000000000" &&
		echo "host start_realtime_ns=1764068400000000000" &&
		echo "host command_line=record -- ./prog" &&
		text_mapping 100 prog $(build_id prog) 1 &&
		echo "existing 100 1" &&
		echo "repeat 2 sample 100 100 prog 1200000000 $(user_stack) -" &&
		echo "metrics 100 0 1100000000 interval 1 1048576" &&
		echo "metrics 100 0 1300000000 interval 1 2097152" &&
		echo "event 100 100 prog 1250000000 $(user_stack) - exception N3app10ParseErrorE 7f0000001000" &&
		echo "event 100 101 worker 1500000000 $(user_stack) - signal 11/1 dead" &&
		echo "metrics 100 101 1500000000 event 2 4194304" &&
		echo "probe 1 $(build_id prog) $(vaddr work prog) $PWD/prog work x:s64 p:ptr s:str" &&
		echo "hit 100 101 1400000000 1 7ffc0100 fffffffffffffffd,7f00,7f10 hello" &&
		echo "stats 2 0 3" &&
		echo "end"
	} >script &&
	write_rec events.rec <script
'

test_expect_success 'report: the exception demangled, the signal and si_code by name, frames with file:line, metrics' '
	cat >expect <<-EOF &&
	stackrec report: 2 fatal signals or exceptions in the recording of '"'"'record -- ./prog'"'"'
	warning: 3 events were lost while recording (ring buffer full)
	probes: work (1 hit); 0 hits lost while recording
	warning: no frame shows probe values: no frame of a probed function has a known stack address (CFA) to tell which call it is in (a --call-graph fp recording has none): record with --call-graph dwarf

	== 1: C++ exception thrown: app::ParseError (N3app10ParseErrorE), object at 0x7f0000001000
	  thread:  prog (tid 100) of process 100 (?)
	  time:    0.250000 s after the recording started (2025-11-25 11:00:00.250000 UTC)
	  stack, innermost first:
	    #0   fault at prog.c:5 [prog]
	    #1   work at prog.c:10 [prog]
	    #2   main at prog.c:15 [prog]
	  metrics: the last reading before it: CPU 1.500 s user, 0.250 s system; RSS 1024 KiB, VM 2048 KiB; 1 thread

	== 2: fatal signal SIGSEGV (signal 11, SEGV_MAPERR) at address 0xdead
	  thread:  worker (tid 101) of process 100 (?)
	  time:    0.500000 s after the recording started (2025-11-25 11:00:00.500000 UTC)
	  stack, innermost first:
	    #0   fault at prog.c:5 [prog]
	    #1   work at prog.c:10 [prog]
	    #2   main at prog.c:15 [prog]
	  metrics: at the event: CPU 1.500 s user, 0.250 s system; RSS 4096 KiB, VM 8192 KiB; 2 threads
	EOF
	stackrec convert events.rec -f report >actual &&
	test_cmp expect actual
'

test_expect_success '--all-events with another format than report: one warning, the output unchanged' '
	stackrec convert events.rec -o plain.folded 2>/dev/null &&
	stackrec convert events.rec --all-events -o all.folded 2>err &&
	grep -x "stackrec: warning: --all-events is for -f report; it changes nothing in -f folded" err &&
	test_cmp plain.folded all.folded
'

test_expect_success 'events are no samples: folded, pprof and speedscope count only the two samples' '
	echo "prog;main;work;fault 2" >expect &&
	stackrec convert events.rec >actual &&
	test_cmp expect actual &&
	stackrec convert events.rec -f pprof -o p.pb.gz &&
	stackrec convert events.rec -f speedscope -o s.json &&
	/usr/bin/python3 -c "
import json, sys
s = json.load(open(\"s.json\"))
p = s[\"profiles\"]
sys.exit(0 if len(p) == 1 and p[0][\"endValue\"] - p[0][\"startValue\"] == 2000000 else 1)" &&
	! grep -q "kind.*event" p.pb.gz && gzip -dc p.pb.gz >p.pb && ! grep -aq "event" p.pb
'

test_expect_success 'trace: event stacks and event records, metrics records' '
	stackrec convert events.rec -f trace >trace &&
	/usr/bin/python3 - trace <<-\EOF
	import json, sys
	recs = [json.loads(l) for l in open(sys.argv[1])]
	h = recs[0]
	assert h["event_records"] == 2 and h["lost_events"] == 3 and h["total_samples"] == 2, h
	stacks = {r["id"]: r for r in recs if r["type"] == "stack"}
	events = [r for r in recs if r["type"] == "event"]
	assert [e["event"] for e in events] == ["exception", "signal"], events
	assert events[0]["exception_type"] == "N3app10ParseErrorE" and events[0]["signal"] is None
	assert events[1]["signal"] == {"number": 11, "name": "SIGSEGV", "code": 1} and events[1]["address"] == "0xdead"
	for e in events:
	    s = stacks[e["stack"]]
	    assert s["kind"] == "event" and s["on_cpu_ns"] == 0 and s["tid"] == e["tid"], s
	    assert [f["function"] for f in s["frames"]] == ["fault", "work", "main"]
	assert sum(1 for r in recs if r["type"] == "sample") == 2
	assert [m["reason"] for m in recs if m["type"] == "metrics"] == ["interval", "interval", "event"]
	EOF
'

test_expect_success 'frames of an fp recording have no CFA: no context, and --explain says why' '
	stackrec convert events.rec -f report --explain >actual 2>explain &&
	! grep -q " = " actual &&
	grep -q "^probes: work (1 hit); 0 hits lost while recording$" actual &&
	grep -q "frames of probed functions show no values: their canonical frame address is unknown" explain
'

test_expect_success 'a second conversion, from the profile cache, reports and explains the same' '
	rm -rf pcache &&
	stackrec convert events.rec --cache-dir pcache -f report -v >first 2>first.err &&
	stackrec convert events.rec --cache-dir pcache -f report -v >second 2>second.err &&
	grep -q "profile cache entry .*: [0-9]* stacks" second.err &&
	test_cmp first second &&
	grep "^explain:" first.err >first.explain &&
	grep "^explain:" second.err >second.explain &&
	test_cmp first.explain second.explain &&
	grep -q "frames of probed functions show no values" second.explain
'

test_expect_success 'info counts events by type, metrics, probes and the new statistics' '
	stackrec info events.rec >info &&
	grep -q "^  probes  *$PWD/prog:work(x:s64, p:ptr, s:str): 1 hit$" info &&
	grep -q "^  probe hits  *1$" info &&
	grep -q "^  events  *2$" info &&
	grep -q "1 SIGSEGV (signal 11)" info &&
	grep -q "1 exception N3app10ParseErrorE" info &&
	grep -q "^  lost events  *3$" info &&
	grep -q "process metrics  *2 at intervals, 1 at events" info
'

# The checked-in recording of fixtures/crash.c (bin/crash is linked statically, so libc's strlen and its CFI
# are in the fixture and nothing of this machine is used: fixtures/Makefile).
convert_fixture() { stackrec convert "$FIXTURES/$1.rec" --symfs "$FIXTURES/sysroot" --no-cache --debug-dir "$FIXTURES/debug" "${@:2}"; }

test_expect_success 'crash.rec: report and trace equal the expected ones exactly' '
	convert_fixture crash -f report -o crash.report &&
	test_cmp "$FIXTURES/expected/crash.report" crash.report &&
	convert_fixture crash -f trace -o crash.trace &&
	test_cmp "$FIXTURES/expected/crash.trace" crash.trace
'

# What the issue asks of it, checked apart from the golden file: the signal, the stack main → load_all →
# parse_record → strlen with file:line, and on parse_record the id of the call that crashed (7: the 7th record
# has the bad name; calls 1 to 6 were made from the same frame of load_all, at the same CFA).
test_expect_success 'crash.rec: SIGSEGV at 0xdead, strlen → parse_record (id = 7) → load_all → main with file:line' '
	grep -q "^== 1: fatal signal SIGSEGV (signal 11, SEGV_MAPERR) at address 0xdead$" crash.report &&
	sed -n "/^  stack, innermost first:/,/^  metrics/p" crash.report | grep -v "\[kernel\]" >frames &&
	sed -n 2,7p frames >actual &&
	cat >expect <<-\EOF &&
	    #4   __strlen_avx2 [crash]
	    #5   parse_record at crash.c:25 [crash]
	        id = 7
	        name = (not read; pointer 0xdead)
	    #6   load_all at crash.c:36 [crash]
	    #7   main at crash.c:61 [crash]
	EOF
	test_cmp expect actual &&
	test $(grep -c " = " crash.report) = 2 &&
	grep -q "^probes: parse_record (7 hits); 0 hits lost while recording$" crash.report
'

test_expect_success 'crash.rec: the trace carries the context on parse_record only, and the event record' '
	/usr/bin/python3 - crash.trace <<-\EOF
	import json, sys
	recs = [json.loads(l) for l in open(sys.argv[1])]
	assert recs[0]["probes"][0]["function"] == "parse_record" and recs[0]["probes"][0]["hits"] == 7
	assert [a["name"] for a in recs[0]["probes"][0]["args"]] == ["id", "name"]
	(event,) = [r for r in recs if r["type"] == "event"]
	assert event["signal"]["name"] == "SIGSEGV" and event["address"] == "0xdead"
	stack = [r for r in recs if r["type"] == "stack" and r["id"] == event["stack"]][0]
	ctx = [(f["function"], f["context"]) for f in stack["frames"] if "context" in f]
	assert ctx == [("parse_record", ctx[0][1])], ctx
	assert ctx[0][1]["values"] == {"id": 7, "name": None}, ctx
	EOF
'

test_expect_success 'crash.rec: info shows the probe, its hits, the event and the metrics' '
	stackrec info "$FIXTURES/crash.rec" >info &&
	grep -q "/crash:parse_record(id:s64, name:str): 7 hits$" info &&
	grep -q "^  lost probe hits  *0$" info &&
	grep -q "1 SIGSEGV (signal 11)" info &&
	grep -q "process metrics  *0 at intervals, 1 at events" info
'

# Live, as a new user would: the program built here with gcc -O1 (dynamically linked: the strlen of this
# machine's libc, file:line where libc6-dbg is installed), recorded with a probe, then reported.
if command -v gcc >/dev/null; then test_set_prereq GCC; else test_unset_prereq GCC "gcc is not installed"; fi
if command -v g++ >/dev/null; then test_set_prereq GXX; else test_unset_prereq GXX "g++ is not installed"; fi

test_expect_success GCC,BPF 'live: record --probe of crash, the report shows the crashing call of parse_record' '
	gcc -O1 -g -fno-omit-frame-pointer -o crash "$FIXTURES/crash.c" &&
	{ stackrec record --probe "./crash:parse_record(id, str(name))" -o live.rec -- ./crash 2>err; test $? -eq 139; } &&
	stackrec convert live.rec -f report >report &&
	cat report &&
	grep -q "^== 1: fatal signal SIGSEGV (signal 11, SEGV_MAPERR) at address 0xdead$" report &&
	grep -v "\[kernel\]" report | grep -A6 "^  stack, innermost first:" | sed 1d >frames &&
	sed -n 1p frames | grep -q "strlen.*\[libc.so.6\]" &&
	sed -n 2,6p frames | sed "s/^ *#[0-9]* *//; s/^ *//; s/ *\[crash\]$//" >actual &&
	printf "%s\n" "parse_record at crash.c:25" "id = 7" "name = (not read; pointer 0xdead)" \
		"load_all at crash.c:36" "main at crash.c:61" >expect &&
	test_cmp expect actual
'

test_expect_success GCC,BPF 'live: recursion: each frame of rec shows its own call, innermost first, not the calls that returned' '
	cat >rec.c <<-\EOF &&
	#include <string.h>
	volatile int sink, crash_now;
	__attribute__((noinline)) int rec(int depth, const char *name)
	{
		int r;
		if (depth == 5)
			return crash_now ? (int)strlen((const char *)(long)crash_now) : 0;
		r = rec(depth + 1, name);
		sink += r;
		return r + 1;
	}
	int main(void)
	{
		sink += rec(1, "warm");
		sink += rec(2, "warm");
		crash_now = 16;
		return rec(1, "top");
	}
	EOF
	gcc -O1 -g -fno-omit-frame-pointer -o rec rec.c &&
	{ stackrec record --probe "./rec:rec(depth)" -o rec.rec -- ./rec 2>err; test $? -eq 139; } &&
	grep -q "recorded 14 probe hits (0 lost)" err &&
	stackrec convert rec.rec -f report >report &&
	cat report &&
	grep -E "^    #[0-9]+ +rec at |depth = " report | sed "s/^ *#[0-9]* *//; s/^ *//; s/ at rec.c:[0-9]* \[rec\]//" >actual &&
	printf "rec\ndepth = %s\n" 5 4 3 2 1 >expect &&
	test_cmp expect actual
'

test_expect_success GXX,BPF 'live: record --exceptions of throw, the report names the type and the stack at the throw' '
	g++ -O1 -g -fno-omit-frame-pointer -o throw "$FIXTURES/throw.cc" &&
	stackrec record --exceptions -o throw.rec -- ./throw 2>err &&
	stackrec convert throw.rec -f report >report &&
	cat report &&
	grep -q "^== 1: C++ exception thrown: parse_error (11parse_error), object at 0x" report &&
	grep -v "\[kernel\]" report | grep -A5 "^  stack, innermost first:" | sed 1d | sed "s/^ *#[0-9]* *//" >actual &&
	cat >expect <<-\EOF &&
	__cxa_throw [libstdc++.so.6.0.30]
	level3(int) at throw.cc:18 [throw]
	level2(int) at throw.cc:24 [throw]
	level1(int) at throw.cc:29 [throw]
	main at throw.cc:37 [throw]
	EOF
	sed "s/libstdc++.so.6[.0-9]*/libstdc++.so.6/" expect >e && sed "s/libstdc++.so.6[.0-9]*/libstdc++.so.6/" actual >a &&
	test_cmp e a
'

test_done
