#!/usr/bin/env bash
test_description='stackrec record: targets, stop conditions, and a complete file every time'
. "$(dirname "$0")/test-lib.sh"

# Backgrounded recorders run "$STACKREC" directly: the stackrec function would put a subshell in between.
# complete_recording FILE: info reads it with no damage and an end marker, samples > 0.
complete_recording() {
	stackrec info "$1" >"$1.info" &&
	grep -q "complete .*yes (end marker)" "$1.info" &&
	grep -E -q "^  samples +[1-9]" "$1.info"
}

test_expect_success 'build a busy program' '
	clang -O2 -g -fno-omit-frame-pointer -o busy "$FIXTURES/inline.c" &&
	clang -O2 -g -fno-omit-frame-pointer -o short "$FIXTURES/short.c"
'

test_expect_success 'usage errors exit 2 with a message' '
	test_expect_code() { "$@"; test $? -eq 2; } &&
	test_expect_code stackrec record -o x.rec 2>err && grep "nothing to record" err &&
	test_expect_code stackrec record -a -p 1 2>err && grep "only one of" err &&
	test_expect_code stackrec record -F 0 -a 2>err && grep "frequency" err &&
	test_expect_code stackrec record -p notapid 2>err && grep "not a process id" err &&
	# getopt names the program by argv[0]: it said "record: unrecognized option"
	test_expect_code stackrec record --no-such-option 2>err &&
	grep -x "stackrec record: unrecognized option .--no-such-option." err &&
	# inf ran no time at all (its nanoseconds overflowed), and nan was taken
	for d in inf nan 1e11 -1 ""; do
		test_expect_code stackrec record -a --duration "$d" 2>err && grep -F "duration takes" err || return 1
	done
'

# The kernel refuses a frequency above kernel.perf_event_max_sample_rate (EINVAL, which said nothing of the
# limit), and lowers that limit itself when sampling takes too long: as perf, sample at the limit and say so.
test_expect_success BPF '-F above perf_event_max_sample_rate: a warning, then sampling at the limit' '
	max=/proc/sys/kernel/perf_event_max_sample_rate &&
	old=$(cat $max) &&
	echo 20000 >$max &&
	stackrec record -F 30000 -o limit.rec -- ./busy 200 2>err;
	rc=$? &&
	echo $old >$max &&
	cat err &&
	test $rc -eq 0 &&
	grep -F "warning: -F 30000 is above the kernel'"'"'s limit of 20000 Hz: sampling at 20000 Hz" err &&
	stackrec info limit.rec | grep -E "frequency_hz +20000$"
'

test_expect_success BPF 'a command that cannot be run is a clear error' '
	test_must_fail stackrec record -o bad.rec -- ./no-such-program 2>err &&
	grep "cannot run .\./no-such-program.: No such file or directory" err
'

# The command's exit status is passed on, as perf does: `stackrec record -- make test` fails when the tests do.
# It was always 0. A command the recorder ends (--duration) is not a failure.
test_expect_success BPF 'the exit status is the command'"'"'s: its own, 128 + N for signal N, 0 when the recorder ended it' '
	{ stackrec record -o status.rec -- sh -c "exit 3"; test $? -eq 3; } &&
	stackrec info status.rec | grep -q "complete .*yes (end marker)" &&
	{ stackrec record -o status.rec -- sh -c "kill -SEGV \$\$"; test $? -eq 139; } &&
	stackrec info status.rec | grep -q "complete .*yes (end marker)" &&
	stackrec record -o status.rec --duration 0.3 -- sleep 5
'

test_expect_success BPF '-- CMD: samples, the process with its name, mappings with build IDs, summary' '
	stackrec record -F 499 -o cmd.rec -- ./busy 500 2>err &&
	grep -E "^stackrec: recorded [1-9][0-9]* samples from 1 processes in [0-9.]+ s to .cmd\.rec. \(0 lost" err &&
	! ls -A | grep "^\.cmd\.rec\." &&
	complete_recording cmd.rec &&
	grep -E "^  [0-9]+ +busy +[1-9]" cmd.rec.info &&
	stackrec info --mappings cmd.rec >maps &&
	grep -E "build-id [0-9a-f]{40} .*/busy$" maps
'

test_expect_success BPF 'a run that fails to start leaves an existing recording as it was' '
	cp cmd.rec before.rec &&
	test_must_fail stackrec record -o cmd.rec -- ./no-such-program 2>err &&
	cmp before.rec cmd.rec &&
	! ls -A | grep "^\.cmd\.rec\." &&
	chmod 777 . && chmod 666 cmd.rec &&
	test_must_fail setpriv --reuid=65534 --regid=65534 --clear-groups "$STACKREC" record -o cmd.rec -- true 2>err &&
	cmp before.rec cmd.rec &&
	test_line_count err = 1 &&
	grep "recording needs root, or the capabilities CAP_BPF and CAP_PERFMON (this process has neither)" err
'

# The -p targets run until the test ends them, once the recording holds samples: on a loaded machine (or a
# sanitizer build) loading the BPF programs alone can take seconds, and a target gone by then leaves an empty
# recording. The recorder must then stop by itself.
# OUT.old a directory (or another user'"'"'s file in a sticky /tmp): keeping the last recording failed once the
# command had started, and record ended the command and threw its recording away.
test_expect_success BPF 'an OUT.old that cannot be replaced: the command runs to its end, the last recording kept beside it' '
	stackrec record -o kept.rec -- true 2>/dev/null &&
	cp kept.rec first.rec &&
	mkdir kept.rec.old &&
	stackrec record -F 99 -o kept.rec -- sh -c "sleep 0.3; echo finished >marker" 2>err &&
	cat err &&
	grep -x finished marker &&
	grep "^stackrec: warning: cannot keep .kept.rec. as .kept.rec.old. (Is a directory): kept it as .\.kept\.rec\.old\.[A-Za-z0-9]\{6\}.$" err &&
	cmp first.rec .kept.rec.old.* &&
	stackrec info kept.rec | grep -q "complete .*yes (end marker)"
'

test_expect_success BPF '-p PID records a running process and stops when it exits' '
	./busy 60000 & pid=$! &&
	wait_until 120 grep -qx busy /proc/$pid/comm &&
	{ "$STACKREC" record -F 499 -o pid.rec -p $pid 2>err & rec=$!; } &&
	wait_until 120 samples_in 1 pid.rec &&
	kill $pid && wait $rec &&
	complete_recording pid.rec &&
	grep -E "^  $pid +busy" pid.rec.info &&
	stackrec info --mappings pid.rec >maps &&
	grep -E "busy \(from /proc\)$" maps
'

# A -p process that ended while the recorder loaded (a second or so) left an empty recording and no word why.
# A zombie stands for it: kill(pid, 0) finds it, as it found the process at start, but it runs no more.
test_expect_success BPF '-p PID of a process that ended while the recorder loaded: a warning names it' '
	sh -c "sleep 0 & echo \$! >zombie.pid; exec sleep 30" & parent=$! &&
	wait_until 60 test -s zombie.pid &&
	zombie=$(cat zombie.pid) &&
	wait_until 60 grep -q "^State:.*zombie" /proc/$zombie/status &&
	"$STACKREC" record -o zombie.rec -p $zombie 2>err &&
	cat err &&
	grep -x "stackrec: warning: process $zombie exited before recording started: nothing of it is recorded" err &&
	kill $parent
'

# A process whose main thread called pthread_exit runs on in its other threads, though its own /proc/PID/stat
# says Z and its /proc/PID/maps is empty: it was "exited before recording started", the recording stopped when
# its main thread exited, and -a named none of its frames.
test_expect_success BPF 'a process whose main thread has exited is recorded while its other threads run, its frames named' '
	cat >leader_exits.c <<-\EOF &&
	#define _GNU_SOURCE
	#include <pthread.h>
	#include <stdlib.h>
	#include <time.h>
	#include <unistd.h>
	static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }
	volatile unsigned long sink;
	__attribute__((noinline)) void orphan_spin(double s) { double end = now() + s; while (now() < end) sink++; }
	/* until the file named exists: the test makes it once the recording is under way */
	__attribute__((noinline)) void main_spin(const char *file) { while (access(file, F_OK) != 0) sink++; }
	static void *orphan(void *a) { pthread_setname_np(pthread_self(), "orphan"); orphan_spin(atof(a)); return 0; }
	int main(int argc, char **argv)
	{
		pthread_t t;
		pthread_create(&t, 0, orphan, argv[1]);
		if (argc > 2)
			main_spin(argv[2]);
		pthread_exit(0);
	}
	EOF
	gcc -O2 -g -pthread -fno-omit-frame-pointer -o leader_exits leader_exits.c &&
	# the main thread is gone before the recording starts
	./leader_exits 6 & pid=$! &&
	wait_until 60 grep -q "^State:.*zombie" /proc/$pid/status &&
	"$STACKREC" record -F 499 --duration 1 -p $pid -o gone-leader.rec 2>err &&
	cat err &&
	! grep "exited before recording started" err &&
	stackrec convert gone-leader.rec -o gone-leader.folded &&
	cat gone-leader.folded &&
	! grep -F "[unknown]" gone-leader.folded &&
	awk "{ all += \$NF } /;orphan_spin/ { spin += \$NF } END { exit !(all > 100 && spin == all) }" gone-leader.folded &&
	# ... and while it is recorded: the recording goes on to its --duration, the metrics read through a live
	# thread (the main thread'"'"'s own status has no VmRSS then)
	./leader_exits 6 go & pid2=$! &&
	wait_until 60 grep -qx orphan /proc/$pid2/task/*/comm &&
	{ "$STACKREC" record -F 499 --duration 3 --metrics-interval 100 -p $pid2 -o exits-leader.rec 2>err & rec=$!; } &&
	wait_until 120 samples_in 50 exits-leader.rec &&
	touch go &&
	wait $rec &&
	cat err &&
	grep -E "recorded [0-9]+ samples from 1 processes in 3\.[0-9]+ s" err &&
	stackrec convert exits-leader.rec -o exits-leader.folded &&
	grep ";main_spin " exits-leader.folded &&
	stackrec convert exits-leader.rec -f trace -o exits-leader.trace &&
	grep "\"metrics\"" exits-leader.trace | tail -n 3 >last-metrics &&
	test_line_count last-metrics = 3 &&
	! grep "\"rss_bytes\":0," last-metrics &&
	kill $pid $pid2 2>/dev/null; true
'

test_expect_success 'build a program with a second thread, both spinning' '
	cat >threads.c <<-\EOF &&
	#define _GNU_SOURCE
	#include <pthread.h>
	#include <time.h>
	static void spin(void)
	{
		volatile unsigned long x = 0;
		time_t end = time(NULL) + 60; /* the tests end it sooner */
		while (time(NULL) < end)
			x++;
	}
	static void *worker(void *arg)
	{
		pthread_setname_np(pthread_self(), "spin-worker");
		spin();
		return arg;
	}
	int main(void)
	{
		pthread_t t;
		pthread_create(&t, NULL, worker, NULL);
		spin();
		pthread_join(t, NULL);
		return 0;
	}
	EOF
	clang -O1 -g -pthread -o threads threads.c
'

# two_threads PID: the process has started its second thread; worker_named PID: that thread has named itself.
two_threads() { test "$(ls /proc/$1/task | wc -l)" -ge 2; }
worker_named() { grep -qx spin-worker /proc/$1/task/*/comm; }

test_expect_success BPF '-p TID of a thread records its process, and says so' '
	./threads & pid=$! &&
	wait_until 120 two_threads $pid &&
	tid=$(ls /proc/$pid/task | grep -v "^$pid\$" | head -n 1) &&
	test -n "$tid" &&
	{ "$STACKREC" record -F 499 -o tid.rec -p $tid 2>err & rec=$!; } &&
	wait_until 120 samples_in 1 tid.rec &&
	kill $pid && wait $rec &&
	grep "^stackrec: $tid is a thread of process $pid: recording the process\$" err &&
	complete_recording tid.rec &&
	grep -E "^  $pid +threads +[1-9]" tid.rec.info
'

# -p: a thread and a child the process starts once the recording is under way (its file is renamed into place
# once the sampling events are attached) are sampled. Guards any sampling by events the threads inherit, as
# perf record -p opens them (docs/recording.md says why stackrec keeps per-CPU events).
test_expect_success 'build a program that starts a thread and a child when told' '
	cat >late.c <<-\EOF &&
	#define _GNU_SOURCE
	#include <pthread.h>
	#include <sys/prctl.h>
	#include <time.h>
	#include <unistd.h>
	static void spin(int seconds)
	{
		volatile unsigned long x = 0;
		time_t end = time(NULL) + seconds;
		while (time(NULL) < end)
			x++;
	}
	static void *worker(void *arg)
	{
		pthread_setname_np(pthread_self(), "late-worker");
		spin(2);
		return arg;
	}
	int main(int argc, char **argv)
	{
		pthread_t t;
		while (access(argv[1], F_OK) != 0) /* until the test says the recording is under way */
			usleep(10000);
		if (fork() == 0) {
			prctl(PR_SET_NAME, "late-child");
			spin(2);
			return 0;
		}
		pthread_create(&t, NULL, worker, NULL);
		pthread_join(t, NULL);
		return argc > 2;
	}
	EOF
	clang -O1 -g -pthread -o late late.c
'

test_expect_success BPF '-p PID: threads and children the process starts while recorded are sampled' '
	./late go & pid=$! &&
	{ "$STACKREC" record -F 499 -o late.rec -p $pid 2>err & rec=$!; } &&
	wait_until 120 test -e late.rec &&
	touch go &&
	wait $rec &&
	wait $pid &&
	complete_recording late.rec &&
	stackrec convert late.rec -f folded --thread-names -o late.folded &&
	cut -d";" -f1,2 late.folded | sort | uniq -c >comms &&
	cat comms &&
	grep -q "late-worker" comms &&
	grep -q "late-child" comms
'

test_expect_success BPF '-t TID records that thread only, as perf record -t' '
	./threads & pid=$! &&
	wait_until 120 worker_named $pid &&
	tid=$(grep -l "^spin-worker\$" /proc/$pid/task/*/comm | cut -d/ -f5) &&
	test -n "$tid" && test "$tid" != "$pid" &&
	stackrec record -F 499 --duration 1 -o thread.rec -t $tid 2>err
	rc=$?
	kill $pid; wait $pid
	cat err &&
	test $rc -eq 0 &&
	complete_recording thread.rec &&
	grep -E "target +threads" thread.rec.info &&
	stackrec convert thread.rec -f folded -o thread.folded &&
	cut -d";" -f1 thread.folded | sort | uniq -c >comms &&
	cat comms &&
	grep -q "spin-worker" comms &&
	! grep -v "spin-worker" comms
'

# irq_work_interrupts: the irq_work interrupts taken so far, all CPUs (x86's IWI line of /proc/interrupts).
irq_work_interrupts() {
	awk '$1 == "IWI:" { n = 0; for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) n += $i; print n }' /proc/interrupts
}
# The stack ranges the sampler keeps per thread are trusted only where the kernel versions a process's
# mappings (mm_lock_seq: 6.4 on, with per-VMA locks); elsewhere each sample still costs an irq_work.
if [ -n "$(irq_work_interrupts)" ] && grep -qa mm_lock_seq /sys/kernel/btf/vmlinux 2>/dev/null; then
	test_set_prereq IRQ_WORK_COUNTED
else
	test_unset_prereq IRQ_WORK_COUNTED "no IWI line in /proc/interrupts, or a kernel without mm_lock_seq (before 6.4)"
fi

# The sampler finds where a thread's stack ends with bpf_find_vma, which, with interrupts off as in the
# sampling interrupt, leaves the mmap lock to an irq_work: one more interrupt of the target per sample, until
# the sampler kept each thread's stack range. A second thread's samples (the main thread's stack end is known
# without it) then cost no interrupt of their own: far fewer irq_work interrupts than samples.
test_expect_success BPF,IRQ_WORK_COUNTED 'samples of a thread other than the main one cost no irq_work each, fp and dwarf' '
	./threads & pid=$! &&
	wait_until 120 worker_named $pid &&
	tid=$(grep -l "^spin-worker\$" /proc/$pid/task/*/comm | cut -d/ -f5) &&
	test -n "$tid" && test "$tid" != "$pid" &&
	rc=0 &&
	for mode in fp dwarf; do
		before=$(irq_work_interrupts) &&
		stackrec record --call-graph $mode -F 999 --duration 1 -o iwi-$mode.rec -t $tid 2>err-$mode &&
		after=$(irq_work_interrupts) &&
		samples=$(sed -n "s/^stackrec: recorded \([0-9]*\) samples .*/\1/p" err-$mode) &&
		echo "$mode: $samples samples, $((after - before)) irq_work interrupts" &&
		test "$samples" -ge 300 &&
		test $((after - before)) -lt $((samples / 10)) || rc=1
	done
	kill $pid; wait $pid
	test $rc -eq 0
'

# -- CMD: a second thread, a grandchild and its own thread are all sampled, a busy process beside the command is
# not (filtered by the BPF program's targets, or, were the command sampled by events it and its children
# inherit, by those).
test_expect_success BPF '-- CMD: the command'"'"'s threads and descendants are sampled, a process beside it is not' '
	cp busy beside-$$ &&
	./beside-$$ 60000 & pid=$! &&
	stackrec record -F 499 -o tree.rec -- sh -c "timeout 2 ./threads & sh -c \"timeout 2 ./threads\"; wait" 2>err
	rc=$?
	kill $pid; wait $pid
	cat err &&
	test $rc -eq 0 &&
	complete_recording tree.rec &&
	test "$(grep -cE "^  [0-9]+ +threads +[1-9]" tree.rec.info)" = 2 &&
	! grep -E "beside-$$" tree.rec.info &&
	stackrec convert tree.rec -f folded -o tree.folded &&
	cut -d";" -f1 tree.folded | sort | uniq -c >comms &&
	cat comms &&
	grep -q "spin-worker" comms &&
	grep -qE " threads$" comms &&
	! grep beside comms
'

# Processes shorter than a sampling period (4 ms against 99 Hz's 10 ms) get their share of the samples: about
# 99 a second of the CPU time they used, as the shell's `times` reports it for its children (a third at least: that
# time includes forks and execs before the program runs). Events that each process
# inherits, as perf record -- CMD opens them, start every process with a whole period to run before its first
# sample and give these almost none (1 where 80 were due); per-CPU events do not.
test_expect_success BPF 'processes shorter than a sampling period get their share of the samples' '
	stackrec record -F 99 -o shorts.rec -- sh -c "for i in \$(seq 200); do ./short 4; done; times >shorts.times" &&
	stackrec convert shorts.rec -f folded -o shorts.folded &&
	samples=$(awk "/^short;/ { n += \$NF } END { print n + 0 }" shorts.folded) &&
	due=$(awk "NR == 2 { gsub(/[ms]/, \" \"); print int(99 * (\$1 * 60 + \$2 + \$3 * 60 + \$4)) }" shorts.times) &&
	echo "short: $samples samples, $due due" &&
	test "$due" -ge 20 && test $((samples * 3)) -ge "$due"
'

# A setuid program the command runs as another user is sampled, and once: busy spins 1 s of wall time, so 499 Hz
# gives it at most about 500 samples, twice that if it were sampled twice. An event the command's processes
# inherit, as perf record opens them, is taken away by the kernel at such an exec (begin_new_exec:
# perf_event_exit_task), silently: perf record -- CMD has no samples of it. The program lives under /var/tmp,
# where nobody can reach it.
suid_dir=$(mktemp -d /var/tmp/stackrec-suid.XXXXXX) && chmod 755 "$suid_dir" &&
	cp busy "$suid_dir/suid-busy-$$" && chmod 4755 "$suid_dir/suid-busy-$$"
if [ "$(id -u)" -ne 0 ]; then
	test_unset_prereq SETUID "not running as root"
elif setpriv --reuid=65534 --regid=65534 --clear-groups -- sh -c 'test "$(stat -c %u "$1")" = 0 && "$1" 1 >/dev/null' \
	sh "$suid_dir/suid-busy-$$" && findmnt -no OPTIONS -T "$suid_dir" | grep -qv nosuid; then
	test_set_prereq SETUID
else
	test_unset_prereq SETUID "cannot run a setuid program as nobody from $suid_dir (a nosuid mount?)"
fi
test_expect_success BPF,SETUID '-- CMD: a setuid program the command runs as another user is sampled, and once' '
	stackrec record -F 499 -o suid.rec -- \
		setpriv --reuid=65534 --regid=65534 --clear-groups -- "$suid_dir/suid-busy-$$" 1000 2>err &&
	complete_recording suid.rec &&
	n=$(awk -v c="suid-busy-$$" "\$2 == c { print \$3 }" suid.rec.info) &&
	echo "suid-busy: $n samples" &&
	test "$n" -ge 100 && test "$n" -le 650
'
rm -rf "$suid_dir"

# The other busy process lives 60 s, killed by the test once the recording is done: under load the BPF load alone
# can take seconds, and a process that ends on its own after a few (as it did) could be gone before sampling began.
test_expect_success BPF '-a --duration records everything for that long' '
	./busy 60000 & pid=$! &&
	stackrec record -a -F 99 --duration 1 -o all.rec 2>err &&
	kill $pid; wait $pid;
	complete_recording all.rec &&
	grep -E "^  $pid +busy" all.rec.info &&
	grep -E "target +all" all.rec.info
'

# -a records the whole machine, other test runs' busy processes too: the two counted here have names of this run's.
test_expect_success BPF '-a -- COMMAND records everything until the command exits, as perf record -a -- CMD' '
	cp busy allbg-$$ && cp busy allcmd-$$
	./allbg-$$ 60000 & pid=$! &&
	stackrec record -a -F 99 -o allcmd.rec -- ./allcmd-$$ 1000 2>err &&
	kill -0 $pid &&
	kill $pid; wait $pid;
	complete_recording allcmd.rec &&
	grep -E "^  $pid +allbg-$$ " allcmd.rec.info &&
	test "$(grep -cE "^  [0-9]+ +(allbg|allcmd)-$$ " allcmd.rec.info)" = 2 &&
	grep -E "target +all" allcmd.rec.info
'

# The spawned command gets a name of this run's own, so that pgrep and pkill see no other test run's. It runs
# 60 s, far longer than the tests need: the recorder must end it. Then, the file whole, the recorder dies of
# the signal, as perf does (a shell loop around it stops; it went on after an exit status of 0).
cp busy "busy-$$"
for sig in INT TERM HUP; do
	test_expect_success BPF "SIG$sig to the recorder ends with a complete file, then kills the recorder" "
		\"\$STACKREC\" record -F 499 -o sig$sig.rec -- ./busy-$$ 60000 2>err & rec=\$! &&
		wait_until 120 samples_in 1 sig$sig.rec &&
		kill -$sig \$rec &&
		{ wait \$rec; test \$? -eq \$((128 + \$(kill -l $sig))); } &&
		complete_recording sig$sig.rec &&
		grep '^stackrec: recorded' err &&
		! pgrep -f 'busy-$$ 60000'
	"
done

# --duration ends a command with SIGTERM; one that ignores it ran on while the recorder waited for it, saying
# nothing, with the file not yet written. Now the file is whole first, the wait is said, and a Ctrl-C to the
# recorder then kills the command (the recorder does not itself: a command may be saving its work).
test_expect_success BPF '--duration, a command that ignores SIGTERM: the file is whole, the wait said, Ctrl-C kills it' '
	{ "$STACKREC" record -F 499 --duration 1 -o ignored.rec -- sh -c "trap \"\" TERM; exec ./busy-$$ 60001" 2>err & } &&
	rec=$! &&
	wait_until 60 grep -q "has not exited 1 s after SIGTERM; waiting for it (Ctrl-C kills it)" err &&
	complete_recording ignored.rec &&
	grep "^stackrec: recorded" err &&
	pgrep -x "busy-$$" &&
	kill -INT $rec &&
	{ wait $rec; test $? -eq 130; } &&
	! pgrep -x "busy-$$"
'

# Ctrl-C or SIGTERM while the BPF programs load (a second or two): the command still ran, and the existing
# recording was moved to FILE.old for an empty one. (SIGTERM: a background job of a script ignores SIGINT.)
test_expect_success BPF 'SIGTERM while starting: the command does not run, an existing recording stays as it was' '
	echo keep >early.rec &&
	{ "$STACKREC" record -o early.rec -- sh -c "echo ran >started" 2>err & } &&
	rec=$! &&
	sleep 0.05 &&
	kill -TERM $rec &&
	{ wait $rec; test $? -ne 0; } &&
	cat err &&
	! test -e started &&
	test "$(cat early.rec)" = keep &&
	! test -e early.rec.old
'

# The recorder ignores SIGPIPE and handles SIGINT, SIGTERM and SIGHUP for itself; the command gets them as they
# were given to stackrec: `yes | head -1` under record must die of SIGPIPE as without it, not report EPIPE.
test_expect_success BPF 'the command gets the signal dispositions stackrec was given, not the recorder'"'"'s' '
	stackrec record -o pipe.rec -- sh -c "yes | head -1; grep ^SigIgn: /proc/self/status" >pipe.out 2>pipe.err &&
	cat pipe.out pipe.err &&
	! grep -i "broken pipe" pipe.err &&
	test "$(head -n 1 pipe.out)" = y &&
	(trap "" INT HUP && stackrec record -o pipe.rec -- grep ^SigIgn: /proc/self/status) >ign.out &&
	cat ign.out &&
	# SigIgn in hex, bit N-1 for signal N: HUP 0x1, INT 0x2, PIPE 0x1000, TERM 0x4000 (the others are not ours:
	# an ASan build ignores glibc'"'"'s internal 32 and 33)
	test $((16#$(sed -n "s/^SigIgn:\t//p" pipe.out) & 0x5003)) = 0 &&
	test $((16#$(sed -n "s/^SigIgn:\t//p" ign.out) & 0x5003)) = 3
'

# Under nohup a hang-up is ignored, by the recorder too: the recording goes on until something else ends it.
test_expect_success BPF 'under nohup, SIGHUP does not end the recording' '
	nohup "$STACKREC" record -F 499 -o nohup.rec -- ./busy-$$ 60000 >/dev/null 2>err & rec=$! &&
	wait_until 120 samples_in 1 nohup.rec &&
	kill -HUP $rec &&
	sleep 1 &&
	kill -0 $rec &&
	pgrep -x "busy-$$" &&
	kill -TERM $rec &&
	{ wait $rec; test $? -eq 143; } &&
	complete_recording nohup.rec &&
	grep "^stackrec: recorded" err
'

test_expect_success BPF 'SIGKILL loses at most the last second: the rest still reads' '
	"$STACKREC" record -F 499 -o killed.rec -- ./busy-$$ 60000 2>err & rec=$! &&
	wait_until 120 samples_in 100 killed.rec &&
	kill -KILL $rec; wait $rec;
	pkill -f "busy-$$ 60000";
	test_must_fail stackrec info killed.rec >killed.info 2>err &&
	grep "cut short" err &&
	grep -E "^  samples +[1-9][0-9]{2,}" killed.info
'

# kallsyms is written at the end: a killed recorder leaves none, and --explain advised recording as root.
test_expect_success BPF 'SIGKILL: --explain says the kernel symbols were never written, not to record as root' '
	"$STACKREC" record -F 499 -o killed-k.rec -- dd if=/dev/zero of=/dev/null bs=64k count=100000000 2>err &
	rec=$! &&
	wait_until 120 samples_in 100 killed-k.rec &&
	kill -KILL $rec; wait $rec;
	pkill -f "of=/dev/null bs=64k count=100000000";
	{ stackrec convert killed-k.rec --explain -o /dev/null 2>explain; test $? -eq 3; } &&
	cat explain &&
	grep -F "[kernel.kallsyms]  the recording ended before its kernel symbols were written" explain &&
	! grep -F "record as root" explain
'

# PR_SET_PDEATHSIG: the spawned command dies with the recorder, even one killed by SIGKILL (a unique
# argument finds this run's sleep and no other's).
test_expect_success BPF 'SIGKILL of the recorder kills the command it spawned' '
	"$STACKREC" record -o orphan.rec -- sleep 61.$$ 2>err & rec=$! &&
	sleep 1 &&
	pgrep -f "^sleep 61\.$$\$" &&
	kill -KILL $rec; wait $rec;
	for i in $(seq 20); do pgrep -f "^sleep 61\.$$\$" || break; sleep 0.1; done;
	! pgrep -f "^sleep 61\.$$\$" ||
	{ pkill -f "^sleep 61\.$$\$"; false; }
'

test_expect_success BPF 'twenty 30 ms processes: every one has its executable mappings recorded' '
	stackrec record -F 999 -o short.rec -- sh -c "for i in \$(seq 20); do ./short 30; done" &&
	stackrec info --mappings short.rec >maps &&
	awk "/\\/short\$/ { print \$3 }" maps | sort -u >pids &&
	test_line_count pids = 20 &&
	complete_recording short.rec &&
	test $(grep -c -E "^  [0-9]+ +short +[1-9]" short.rec.info) -ge 18
'

# Exited processes leave the BPF targets map: it holds live ones only, so a fork-heavy run never fills it
# and a reused pid is not sampled. The recorder's own map is found through its fds (fdinfo names the map
# id), not by name: other recorders may run on this machine.
# few_targets ID: the targets map ID holds 5 entries or fewer (into targets). The recorder deletes the entries of
# exited processes in a periodic sweep, so the test waits for it (bounded: a recorder that never deletes them fails).
few_targets() {
	bpftool map dump id $1 >targets && test "$(grep -c "\"key\"" targets || :)" -le 5
}
# recorder_map PID NAME: the id of the hash map NAME of the recorder PID (its fds name their maps' ids).
recorder_map() {
	local ids i
	ids=$(cat /proc/$1/fdinfo/* 2>/dev/null | sed -n "s/^map_id:[[:space:]]*//p")
	for i in $ids; do bpftool map show id $i; done | sed -n "s/^\([0-9]*\): hash  name $2 .*/\1/p"
}

# The command runs its 300 processes, says so (ran), and waits on a FIFO that the test writes once it has read the
# map: however slow a loaded machine makes the BPF load and the 300 execs, the map is read after them and while
# the recording runs. The test holds the FIFO open for writing, so that the command's read never blocks its open
# and the test never blocks on its write.
test_expect_success BPF 'exited processes leave the targets map' '
	mkfifo gate && exec 9<>gate
	"$STACKREC" record -F 99 -o exits.rec -- sh -c "for i in \$(seq 300); do /bin/true; done; : >ran; read x <gate" 2>err &
	rec=$! &&
	wait_until 120 test -e ran &&
	id=$(recorder_map $rec targets) &&
	test -n "$id" &&
	wait_until 120 few_targets $id
	rc=$?
	echo go >&9 && exec 9>&- &&
	wait $rec &&
	cat targets &&
	test $rc -eq 0 &&
	grep -E "\(0 lost" err
'

# The sampler's per-thread stack ranges (stack_mappings) are deleted when a thread exits. Since 6.16 the exit
# tracepoint comes before the thread lets go of its mm, so a sample in the rest of its exit must not store its
# range again: 3,000 short threads at 4999 Hz left 82 to 92 entries behind that way (threads long gone,
# which in a long run would fill the map). The command starts and joins them one at a time, says so (ran), and
# waits on a FIFO until the test has read the map.
test_expect_success BPF 'exited threads leave the stack_mappings map' '
	cat >thread-churn.c <<-\EOF &&
	#include <pthread.h>
	#include <stdio.h>
	#include <stdlib.h>
	static void *spin(void *arg)
	{
		for (volatile int i = 0; i < 200000; i++)
			;
		return arg;
	}
	int main(int argc, char **argv)
	{
		int n = atoi(argv[1]);
		for (int i = 0; i < n; i++) {
			pthread_t t;
			if (pthread_create(&t, 0, spin, 0) == 0)
				pthread_join(t, 0);
		}
		fclose(fopen("churned", "w"));
		return getchar() == EOF;
	}
	EOF
	clang -O1 -pthread -o thread-churn thread-churn.c &&
	mkfifo churn-gate && exec 9<>churn-gate
	"$STACKREC" record -F 4999 -o churn.rec -- sh -c "./thread-churn 3000 <churn-gate" 2>err &
	rec=$! &&
	wait_until 120 test -e churned &&
	id=$(recorder_map $rec stack_mappings) &&
	test -n "$id" &&
	bpftool map dump id $id >stack-mappings
	rc=$?
	echo go >&9 && exec 9>&- &&
	wait $rec &&
	cat err &&
	test $rc -eq 0 &&
	echo "$(grep -c "\"key\"" stack-mappings) entries left" &&
	test "$(grep -c "\"key\"" stack-mappings || :)" -le 1
'

test_expect_success BPF 'a fork-heavy run is followed to its end, with no unreported loss' '
	stackrec record -F 99 -o forks.rec -- sh -c "i=0; while [ \$i -lt 3000 ]; do /bin/true; i=\$((i + 1)); done" 2>err &&
	grep -E "^stackrec: recorded [0-9]+ samples from [0-9]+ processes in [0-9.]+ s to .forks\.rec. \(0 lost" err &&
	! grep "not followed" err &&
	stackrec info --mappings forks.rec >maps &&
	test $(grep -c " /usr/bin/true$" maps) -ge 3000
'

test_expect_success BPF 'code loaded later with dlopen is mapped too' '
	cat >plugin.c <<-\EOF &&
	__attribute__((noinline)) unsigned long plugin_spin(unsigned long n)
	{ volatile unsigned long x = 0; for (unsigned long i = 0; i < n; i++) x += i * i; return x; }
	EOF
	cat >loader.c <<-\EOF &&
	#include <dlfcn.h>
	#include <stdio.h>
	int main(int argc, char **argv)
	{
		void *h = dlopen(argv[1], RTLD_NOW);
		unsigned long (*spin)(unsigned long);
		if (!h) { fprintf(stderr, "%s\n", dlerror()); return 1; }
		spin = (unsigned long (*)(unsigned long))dlsym(h, "plugin_spin");
		return spin(400000000ul) == 1;
	}
	EOF
	clang -O2 -g -fno-omit-frame-pointer -shared -fPIC -o libplugin.so plugin.c &&
	clang -O2 -g -fno-omit-frame-pointer -o loader loader.c -ldl &&
	stackrec record -F 499 -o dl.rec -- ./loader ./libplugin.so &&
	stackrec info --mappings dl.rec >maps &&
	grep -q "libplugin.so$" maps &&
	stackrec convert dl.rec >dl.folded &&
	grep -q "main;plugin_spin" dl.folded
'

# Between fork and exec the spawned child is a copy of stackrec (named stackrec-exec), not the user's program:
# it is not sampled. A PATH of 3000 missing directories makes its execvp search long enough (about 20
# samples at 4999 Hz before the fix) that a sampled pre-exec child cannot go unseen.
test_expect_success BPF 'the recorder'"'"'s pre-exec child is never sampled, the command from its exec on is' '
	long_path=$(for i in $(seq 1 3000); do printf "/nonexistent/%d:" $i; done)$PATH &&
	PATH=$long_path "$STACKREC" record -F 4999 -o preexec.rec -- true 2>err &&
	stackrec convert --thread-names preexec.rec >preexec.folded &&
	cat preexec.folded &&
	! grep "stackrec-exec" preexec.folded &&
	grep -q "^true;true;" preexec.folded
'

test_done
