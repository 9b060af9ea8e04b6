#!/usr/bin/env bash
test_description='record --off-cpu: where threads wait, for how long, under their own names, with complete
stacks from their start routine down to the kernel'"'"'s schedule; stack errors as frames and counts'
. "$(dirname "$0")/test-lib.sh"

# Programs from fixtures/, built at test time (fixtures/README.md).
if command -v gcc >/dev/null; then test_set_prereq GCC; else test_unset_prereq GCC "gcc is not installed (apt-get install gcc)"; fi

# The real pprof, built from Debian's source by the project's script (tests/t4000-formats.sh builds it first).
PPROF=$SRC_DIR/../shared/tools/pprof.sh
if [ -x "$PPROF" ]; then test_set_prereq PPROF; else test_unset_prereq PPROF "no $PPROF"; fi

# thread_totals TRACE: "TID COMM MILLISECONDS" per thread: the off-CPU time of its stacks in the trace.
thread_totals() {
	python3 - "$1" <<-\PY
	import json, sys, collections
	total = collections.Counter()
	for line in open(sys.argv[1]):
	    r = json.loads(line)
	    if r.get("type") != "stack" or r.get("kind", "off_cpu") != "off_cpu":
	        continue
	    total[(r["tid"], r["comm"])] += r.get("off_cpu_ns", r["weight_ns"])
	for (tid, comm), ns in sorted(total.items()):
	    print(tid, comm, round(ns / 1e6, 1))
	PY
}

test_expect_success GCC 'build the test programs' '
	gcc -O1 -g -pthread -o offcpu "$FIXTURES/offcpu.c" &&
	gcc -O1 -g -pthread -o wall "$FIXTURES/wall.c" &&
	gcc -O1 -o bad_stack "$FIXTURES/bad_stack.c"
'

test_expect_success GCC,BPF '--off-cpu: each named thread'"'"'s blocked time is within 5% of the truth' '
	stackrec record --off-cpu -o off.rec -- ./offcpu 2>err &&
	cat err &&
	grep -E "^stackrec: recorded [0-9]+ samples \(0 on-CPU, [1-9][0-9]* off-CPU\)" err &&
	stackrec convert off.rec -f trace -o off.trace &&
	thread_totals off.trace >totals &&
	cat totals &&
	for thread in sleeper reader waiter; do
		awk -v t=$thread "\$2 == t { ms = \$3 } END { print t, ms; exit !(ms >= 950 && ms <= 1050) }" totals ||
		return 1
	done
'

test_expect_success GCC,BPF 'each blocking stack runs from the start routine through the program into libc and schedule' '
	stackrec convert off.rec --tid --thread-names -o off.folded &&
	grep -E ";sleeper;__clone3;start_thread;sleeper;sleep_ms;(__)?nanosleep;.*;schedule_\[k\]" off.folded &&
	grep -E ";reader;__clone3;start_thread;reader;read_one;.*read;.*;schedule_\[k\]" off.folded &&
	grep -E ";waiter;__clone3;start_thread;waiter;wait_for_signal;.*pthread_cond_wait.*;schedule_\[k\]" off.folded &&
	! grep -E "bpf_prog|bpf_trace_run" off.folded
'

test_expect_success GCC,BPF '--min-block-us drops shorter intervals' '
	stackrec record --off-cpu --min-block-us 80000 -o long.rec -- ./offcpu 2>err &&
	stackrec convert long.rec --thread-names -o long.folded &&
	cat long.folded &&
	! grep -q ";sleeper;" long.folded &&
	grep -q ";reader;" long.folded
'

test_expect_success GCC,BPF '--off-cpu --on-cpu: both kinds in one recording' '
	stackrec record --off-cpu --on-cpu -F 999 -o both.rec -- ./offcpu 2>err &&
	cat err &&
	grep -E "^stackrec: recorded [0-9]+ samples \([1-9][0-9]* on-CPU, [1-9][0-9]* off-CPU\)" err
'

test_expect_success GCC,BPF 'convert --kind off: folded microseconds per thread, as offcputime -f' '
	stackrec convert off.rec --kind off --thread-names -o off-us.folded &&
	awk "/;sleeper;/ { us += \$NF } END { print us; exit !(us >= 950000 && us <= 1050000) }" off-us.folded
'

test_expect_success GCC,BPF '--kind wall: a thread computing and sleeping 100 ms each is half on, half off the CPU' '
	stackrec record --off-cpu --on-cpu -F 999 -o wall.rec -- ./wall 2>err &&
	cat err &&
	stackrec convert wall.rec --kind wall --thread-names -o wall.folded &&
	awk "/;alternate;/ { if (/;compute/) on += \$NF; else if (/;rest;/) off += \$NF }
		END { share = on / (on + off); print on, off, share; exit !(share >= 0.45 && share <= 0.55) }" wall.folded
'

test_expect_success GCC,BPF,PPROF 'pprof of both kinds: cpu and off_cpu totals as recorded' '
	stackrec convert wall.rec -f pprof -o wall.pb.gz &&
	"$PPROF" -raw wall.pb.gz >wall.raw 2>wall.pprof-err &&
	grep -E -q "samples/count cpu/nanoseconds(\[dflt\])? off_cpu/nanoseconds" wall.raw &&
	"$PPROF" -top -sample_index=off_cpu -unit=ms wall.pb.gz >wall.top 2>>wall.pprof-err &&
	grep "Total samples" wall.top &&
	# at least the main thread 2 s in pthread_join and the other 1 s in rest(); preemption adds some, more
	# on a loaded machine: the total is the folded --kind off total, and no less than those 3 s
	stackrec convert wall.rec --kind off -o wall-off.folded &&
	folded_ms=$(awk "{ us += \$NF } END { printf \"%.0f\", us / 1000 }" wall-off.folded) &&
	sed -n "s/.*Total samples = \([0-9.]*\)ms.*/\1/p" wall.top |
		awk -v f="$folded_ms" "{ print \$1, f; d = \$1 - f; exit !(\$1 >= 2900 && d * d <= 4) }"
'

test_expect_success GCC,BPF 'an unreadable user stack is a frame and a count, not a missing sample' '
	stackrec record --duration 0.5 -F 999 -o bad.rec -- ./bad_stack 2>err &&
	cat err &&
	grep -E "failed stacks: [1-9][0-9]* user -EFAULT" err &&
	stackrec convert bad.rec -o bad.folded &&
	grep -E "^bad_stack;\[user stack error -EFAULT\];main [1-9][0-9]*$" bad.folded &&
	! grep -E "429496|\[truncated\]" bad.folded &&
	stackrec info bad.rec >info &&
	grep -E "failed stacks +[1-9][0-9]* user -EFAULT" info
'

test_expect_success 'usage errors of the off-CPU options' '
	test_must_fail stackrec record --off-cpu --state sometimes -- true 2>err &&
	grep "state takes all, interruptible or uninterruptible" err &&
	test_must_fail stackrec record --off-cpu --min-block-us 10 --max-block-us 5 -- true 2>err &&
	grep "min-block-us is above --max-block-us" err
'

test_done
