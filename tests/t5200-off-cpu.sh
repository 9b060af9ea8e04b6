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

# The truth of a thread's time off the CPU, measured by the thread itself: from when it names itself (each
# fixture thread does so first) to its exit, its wall time less its CPU time (CLOCK_THREAD_CPUTIME_ID), written
# as "TID NAME MILLISECONDS" to $OFFCPU_TRUTH. The nominal 1 s of sleeps grows on a loaded machine (a woken
# thread waits for a CPU, preemption counts too: --state all), and the recorder must see that time as well.
# LD_PRELOADed: it adds no frame to the stacks the tests below check.
cat >truth.c <<'SRC'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static pthread_key_t key;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static __thread double start_wall, start_cpu;

static double ms(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void at_exit(void *name)
{
	double off = ms(CLOCK_MONOTONIC) - start_wall - (ms(CLOCK_THREAD_CPUTIME_ID) - start_cpu);
	FILE *f = fopen(getenv("OFFCPU_TRUTH"), "a");

	if (f) {
		fprintf(f, "%ld %s %.1f\n", (long)syscall(SYS_gettid), (char *)name, off);
		fclose(f);
	}
	free(name);
}

static void make_key(void)
{
	pthread_key_create(&key, at_exit);
}

int pthread_setname_np(pthread_t thread, const char *name)
{
	int (*real)(pthread_t, const char *) = (int (*)(pthread_t, const char *))dlsym(RTLD_NEXT, "pthread_setname_np");
	char *copy = malloc(16);

	if (thread == pthread_self() && getenv("OFFCPU_TRUTH") && copy) {
		snprintf(copy, 16, "%s", name);
		pthread_once(&once, make_key);
		pthread_setspecific(key, copy);
		start_wall = ms(CLOCK_MONOTONIC);
		start_cpu = ms(CLOCK_THREAD_CPUTIME_ID);
	} else {
		free(copy);
	}
	return real(thread, name);
}
SRC

test_expect_success GCC 'build the test programs' '
	gcc -O1 -g -pthread -o offcpu "$FIXTURES/offcpu.c" &&
	gcc -O1 -g -pthread -o wall "$FIXTURES/wall.c" &&
	gcc -O1 -o bad_stack "$FIXTURES/bad_stack.c" &&
	gcc -O1 -shared -fPIC -o truth.so truth.c -ldl
'

# within THREAD: the thread's recorded milliseconds (totals) are within 5% of its truth (truth).
within() {
	awk -v t=$1 "FILENAME == \"totals\" && \$2 == t { ms = \$3 } FILENAME == \"truth\" && \$2 == t { truth = \$3 }
		END { print t, ms, \"truth\", truth; exit !(truth >= 950 && ms >= 0.95 * truth && ms <= 1.05 * truth) }" totals truth
}

test_expect_success GCC,BPF '--off-cpu: each named thread'"'"'s blocked time is within 5% of the truth' '
	stackrec record --off-cpu -o off.rec -- env OFFCPU_TRUTH="$PWD/truth" LD_PRELOAD="$PWD/truth.so" ./offcpu 2>err &&
	cat err truth &&
	grep -E "^stackrec: recorded [0-9]+ samples \(0 on-CPU, [1-9][0-9]* off-CPU\)" err &&
	stackrec convert off.rec -f trace -o off.trace &&
	thread_totals off.trace >totals &&
	cat totals &&
	for thread in sleeper reader waiter; do
		within $thread || return 1
	done
'

test_expect_success GCC,BPF 'each blocking stack runs from the start routine through the program into libc and schedule' '
	stackrec convert off.rec --tid --thread-names -o off.folded &&
	grep -E ";sleeper;__clone3;start_thread;sleeper;sleep_ms;(__)?nanosleep;.*;schedule_\[k\]" off.folded &&
	grep -E ";reader;__clone3;start_thread;reader;read_one;.*read;.*;schedule_\[k\]" off.folded &&
	grep -E ";waiter;__clone3;start_thread;waiter;wait_for_signal;.*pthread_cond_wait.*;schedule_\[k\]" off.folded &&
	! grep -E "bpf_prog|bpf_trace_run" off.folded
'

# Each interval kept is at least 80 ms long, and the reader'"'"'s (100 ms and more) are kept. The sleeper'"'"'s 50 ms
# sleeps are dropped, but not every one on a loaded machine, where waiting for a CPU after a sleep makes its
# interval longer: so the check is on every interval'"'"'s length, not on the sleeper'"'"'s absence.
test_expect_success GCC,BPF '--min-block-us drops shorter intervals' '
	stackrec record --off-cpu --min-block-us 80000 -o long.rec -- ./offcpu 2>err &&
	stackrec convert long.rec --thread-names -o long.folded &&
	cat long.folded &&
	stackrec convert long.rec -f trace -o long.trace &&
	python3 - long.trace <<-\PY &&
	import json, sys
	weights = [r["weight_ns"] for r in map(json.loads, open(sys.argv[1])) if r.get("type") == "sample"]
	print(len(weights), "intervals, the shortest", min(weights, default=None), "ns")
	sys.exit(not weights or min(weights) < 80000000)
	PY
	grep -q ";reader;" long.folded
'

# ./wall, not ./offcpu: offcpu runs on a CPU for a millisecond or two in all, so at 999 Hz it may get no on-CPU
# sample at all (seen: 0 or 1 of them in a run); wall computes for about 1 s of its 2.
test_expect_success GCC,BPF '--off-cpu --on-cpu: both kinds in one recording' '
	stackrec record --off-cpu --on-cpu -F 999 -o wall.rec -- ./wall 2>err &&
	cat err &&
	grep -E "^stackrec: recorded [0-9]+ samples \([1-9][0-9]* on-CPU, [1-9][0-9]* off-CPU\)" err
'

test_expect_success GCC,BPF 'convert --kind off: folded microseconds per thread, as offcputime -f' '
	stackrec convert off.rec --kind off --thread-names -o off-us.folded &&
	awk "/;sleeper;/ { us += \$NF } END { printf \"0 sleeper %.1f\\n\", us / 1000 }" off-us.folded >totals &&
	within sleeper
'

test_expect_success GCC,BPF '--kind wall: a thread computing and sleeping 100 ms each is half on, half off the CPU' '
	stackrec convert wall.rec --kind wall --thread-names -o wall.folded &&
	awk "/;alternate;/ { if (/;compute/) on += \$NF; else if (/;rest;/) off += \$NF }
		END { share = on / (on + off); print on, off, share; exit !(share >= 0.45 && share <= 0.55) }" wall.folded
'

# speedscope --kind wall: every interval off the CPU whole. An on-CPU sample covers the period its tick ends; placed
# from its tick on, the period before a sleep overlapped the sleep, and the sleep lost up to a period each time.
# An on-CPU tick can land in rest() itself (entering nanosleep, or just woken from it): its period, less what
# overlaps the sleep, is rest() time too, at most one period (1001 us at 999 Hz) each.
test_expect_success GCC,BPF 'speedscope --kind wall: the time in rest() is the time off the CPU there, to the microsecond' '
	stackrec convert wall.rec --kind wall -f speedscope -o wall.speedscope &&
	stackrec convert wall.rec --kind off -o wall-off.folded &&
	folded_us=$(awk "/;rest;/ { us += \$NF } END { print us }" wall-off.folded) &&
	stackrec convert wall.rec --kind on -o wall-on.folded &&
	on_ticks=$(awk "/;rest(;|\$| )/ { n += \$NF } END { print n + 0 }" wall-on.folded) &&
	python3 - wall.speedscope "$folded_us" "$on_ticks" <<-\PY
	import json, sys
	d = json.load(open(sys.argv[1]))
	names = [f["name"] for f in d["shared"]["frames"]]
	ns = 0
	for p in d["profiles"]:
	    if not p["name"].startswith("alternate "):
	        continue
	    opened = None
	    for e in p["events"]:
	        if names[e["frame"]] != "rest":
	            continue
	        if e["type"] == "O":
	            opened = e["at"]
	        else:
	            ns += e["at"] - opened
	folded_us, on_ticks = float(sys.argv[2]), int(sys.argv[3])
	print("speedscope", ns / 1000, "us in rest(), folded --kind off", folded_us, "; on-CPU ticks in rest():", on_ticks)
	sys.exit(not (folded_us > 900000 and folded_us - 50 <= ns / 1000 <= folded_us + on_ticks * 1001 + 50))
	PY
'

test_expect_success GCC,BPF,PPROF 'pprof of both kinds: cpu and off_cpu totals as recorded' '
	# what the recording holds, shown when the test fails: its kinds, time off the CPU and losses
	stackrec info wall.rec | grep -E "^  (kinds|lost samples) " &&
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

# A shell waiting for each command it runs sits in glibc's __vfork, whose return address is in rdi during the
# system call (CFI: CFA = rsp, return address = rdi): the unwinder needs rdi and a step whose stack pointer stays.
test_expect_success BPF 'a shell blocked in vfork: its stacks go on past __vfork to the shell (Debian dash)' '
	stackrec record --off-cpu -o vfork.rec -- sh -c "i=0; while [ \$i -lt 300 ]; do /bin/true; i=\$((i + 1)); done" &&
	stackrec convert vfork.rec -o vfork.folded &&
	grep -E "^sh;.*;__vfork;.*_\[k\] [0-9]+$" vfork.folded >vfork.stacks &&
	grep -E "^sh;.*__libc_start_call_main;.*;__vfork;" vfork.stacks &&
	! grep -F "[incomplete]" vfork.stacks
'

# A parent waiting for its posix_spawn child to exec sits in glibc's __clone3, whose CFI ends before the system
# call (the child's unwind information would be wrong there). glibc keeps no frame pointer: every such wait was
# [incomplete];[unknown];__clone3. The word on top of the stack follows a call of __clone3, the return address.
test_expect_success BPF,GCC 'a process blocked in posix_spawn: its stacks go on past __clone3 to main (Debian glibc)' '
	cat >spawn.c <<-\EOF &&
	#include <spawn.h>
	#include <sys/wait.h>
	extern char **environ;
	int main(void)
	{
		for (int i = 0; i < 300; i++) {
			char *argv[] = { "/bin/true", 0 };
			pid_t pid;

			if (posix_spawn(&pid, "/bin/true", 0, 0, argv, environ) == 0)
				waitpid(pid, 0, 0);
		}
		return 0;
	}
	EOF
	gcc -O1 -g -o spawn spawn.c &&
	stackrec record --off-cpu -o spawn.rec -- ./spawn &&
	stackrec convert spawn.rec -o spawn.folded &&
	grep -E "^spawn;.*;__clone3;.*wait_for_completion.*_\[k\] [0-9]+$" spawn.folded >spawn.stacks &&
	cat spawn.stacks &&
	grep -E "^spawn;.*__libc_start_call_main;main;__posix_spawn;.*;__clone3;" spawn.stacks &&
	! grep -F "[incomplete]" spawn.stacks
'

test_expect_success 'usage errors of the off-CPU options' '
	test_must_fail stackrec record --off-cpu --state sometimes -- true 2>err &&
	grep "state takes all, interruptible or uninterruptible" err &&
	test_must_fail stackrec record --off-cpu --min-block-us 10 --max-block-us 5 -- true 2>err &&
	grep "min-block-us (10) is above --max-block-us (5)" err &&
	for option in "--state interruptible" "--min-block-us 5" "--max-block-us 5"; do
		test_must_fail stackrec record $option -o never.rec -- true 2>err &&
		grep "error: ${option%% *} chooses off-CPU samples: it needs --off-cpu" err &&
		test ! -e never.rec || exit 1
	done
'

# A huge --min-block-us keeps nothing: 18446744073709552 us times 1000 wrapped to 384 ns, which kept everything.
test_expect_success BPF 'a --min-block-us beyond any wait keeps no interval' '
	stackrec record --off-cpu --min-block-us 18446744073709552 -o huge.rec -- sleep 0.1 2>err &&
	cat err &&
	grep "recorded 0 samples (0 on-CPU, 0 off-CPU)" err
'

# An --off-cpu recording opens no sampling event: none is written as if it had (pprof's period, the trace's
# frequency and event, info's host table).
test_expect_success BPF 'an off-CPU recording names no sampling event and no frequency' '
	stackrec record --off-cpu -o sleep.rec -- sleep 0.1 &&
	stackrec info sleep.rec >info &&
	! grep -E "frequency_hz|^  event |cpu-clock" info &&
	stackrec convert sleep.rec -f trace -o sleep.trace &&
	head -n 1 sleep.trace | grep -F "\"event\":null,\"frequency_hz\":null," &&
	stackrec record --off-cpu --on-cpu -F 99 -o both.rec -- sleep 0.1 &&
	stackrec info both.rec >info &&
	grep -E "^  frequency_hz +99$" info
'

# Off-CPU samples keep at most 32 KiB of stack (task storage), whatever SIZE asks: a deeper stack is cut there,
# and said to be, as a copy cut at SIZE is. The copy was not marked cut: convert ended those stacks in
# [incomplete], blaming the CFI, and the summary counted none (or counted them at SIZE).
cat >deep_sleep.c <<'SRC'
#include <string.h>
#include <stdlib.h>
#include <time.h>

/* Each level keeps 400 bytes on the stack: 120 levels are about 50 KiB. */
__attribute__((noinline)) static int down(int n)
{
	volatile char buf[400];

	memset((char *)buf, n, sizeof(buf));
	if (n == 0) {
		struct timespec ts = { 0, 5000000 };

		for (int i = 0; i < 20; i++)
			nanosleep(&ts, NULL);
		return buf[3];
	}
	return down(n - 1) + buf[5];
}

int main(int argc, char **argv)
{
	return down(argc > 1 ? atoi(argv[1]) : 120) & 1;
}
SRC
test_expect_success GCC,BPF 'an off-CPU stack deeper than an off-CPU copy keeps ends in [truncated], and says why' '
	gcc -O2 -g -o deep_sleep deep_sleep.c &&
	stackrec record --off-cpu --call-graph dwarf,65536 -o deep.rec -- ./deep_sleep 120 2>err &&
	cat err &&
	grep "warning: off-CPU samples keep at most 32768 bytes of stack, whatever --call-graph dwarf,65536 asks" err &&
	grep -E "[1-9][0-9]* off-CPU stack copies cut at 32768 bytes \(their most\)\)" err &&
	! grep -E "[0-9] stack copies cut at" err &&
	stackrec convert deep.rec --kind off --explain -o deep.folded 2>explain &&
	cat explain &&
	grep -E "^deep_sleep;\[truncated\];down;down;.*;__clock_nanosleep;.*_\[k\] [0-9]+$" deep.folded &&
	! grep -F "[incomplete]" deep.folded &&
	# (a sleep before the recursion, if sampled, is not deep)
	grep -E "(9[0-9]|100)\.[0-9]% of samples end in \[truncated\]: off-CPU stack copy at its most" explain &&
	stackrec info deep.rec >info &&
	grep -E "cut stack copies +[0-9]+ \((9[0-9]|100)\.[0-9]%\): [0-9]+ off-CPU copies at the most one keeps, 32768 bytes" info &&
	# the default SIZE is that most: the summary counts them apart too, and does not advise a larger SIZE
	stackrec record --off-cpu -o deep-default.rec -- ./deep_sleep 120 2>err &&
	cat err &&
	grep -E "[1-9][0-9]* off-CPU stack copies cut at 32768 bytes \(their most\)\)" err &&
	! grep -E "[0-9] stack copies cut at|warning" err
'

# The kernel now and then runs a blocked thread again without a switch-in the program sees (0.1-0.7% of a
# thread's 3 ms sleeps on an idle CPU, bcc's offcputime loses them too): that interval was dropped and the summary
# said 0 lost. Every sleep is now a sample or a lost one (a test that shows the loss only when the kernel skips).
test_expect_success GCC,BPF 'every sleep is an off-CPU sample of its length or counted lost' '
	cat >sleeps.c <<-\EOF &&
	#include <unistd.h>
	int main(void)
	{
		for (int i = 0; i < 600; i++)
			usleep(3000);
		return 0;
	}
	EOF
	gcc -O1 -g -o sleeps sleeps.c &&
	stackrec record --off-cpu -o sleeps.rec -- ./sleeps 2>err &&
	cat err &&
	lost=$(sed -n "s/.*(\([0-9]*\) lost, .*/\1/p" err) &&
	stackrec convert sleeps.rec -f trace -o - | grep "\"type\":\"sample\"" >samples &&
	slept=$(grep -c "\"weight_ns\":[0-9]\{7,\}" samples) &&
	echo "600 sleeps: $slept samples of 1 ms or more, $lost lost" &&
	test $((slept + lost)) -ge 600
'

# --state uninterruptible took in TASK_IDLE (TASK_UNINTERRUPTIBLE | TASK_NOLOAD), the wait of idle kernel threads
# that ps shows as I: rcu_preempt, idle kworkers and kdamond were most of an -a recording. A vfork parent waits
# uninterruptibly (ps: D), and stays.
test_expect_success BPF '-a --state uninterruptible: waits ps shows as D, not idle kernel threads (I)' '
	# the shell runs /bin/true until the recording is over (loading the BPF programs takes a second or so)
	rm -f unint.stop &&
	{ sh -c "while [ ! -e unint.stop ]; do /bin/true; done" & } &&
	shell=$! &&
	stackrec record -a --off-cpu --state uninterruptible --duration 1 -o unint.rec 2>err;
	rc=$? &&
	touch unint.stop && wait $shell && test $rc -eq 0 &&
	stackrec convert unint.rec -o unint.folded &&
	cut -d";" -f1-6 unint.folded | sort | uniq -c | sort -rn | head -20 &&
	grep -E "^sh;.*;__vfork;" unint.folded &&
	# the idle waits of kernel threads (schedule_timeout_idle and the like, straight from their loops); a
	# kernel thread waiting for a completion (synchronize_rcu) is uninterruptible, and stays
	! grep -E "(kdamond_fn|rcu_gp_fqs_loop|rcu_gp_kthread|rcu_tasks_kthread)_\[k\];schedule_timeout_\[k\]|worker_thread_\[k\];schedule_\[k\]" unint.folded
'

test_done
