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

test_done
