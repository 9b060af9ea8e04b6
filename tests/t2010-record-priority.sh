#!/usr/bin/env bash
test_description='stackrec record: the recorder keeps its priority until it falls behind'
. "$(dirname "$0")/test-lib.sh"

# The recorder is the parent of the command it runs: the command writes the nice value of the recorder's
# main thread, the drain thread, then those of its other threads (the frame writer, workers: field 19 of
# /proc/PID/task/TID/stat, the comm in field 2 has no blanks here), one line per distinct value, once it has
# been sampled.
test_expect_success 'build a busy program' '
	clang -O2 -g -fno-omit-frame-pointer -o busy "$FIXTURES/inline.c" &&
	cat >parent-nice <<-\EOF &&
	#!/bin/sh
	./busy 300 >/dev/null || exit 1
	awk "{ print \$19 }" /proc/$PPID/stat >nice.out
	for t in /proc/$PPID/task/*; do
		[ "${t##*/}" = $PPID ] || awk "{ print \$19 }" $t/stat
	done | sort -u >>nice.out
	EOF
	chmod +x parent-nice
'

# At -10 every wakeup of the recorder preempted the recorded program on its CPU (docs/recording.md).
test_expect_success BPF 'a recorder that keeps up keeps the priority it was given' '
	nice >nice.given && nice >>nice.given &&
	stackrec record -v -F 999 -o kept.rec -- ./parent-nice 2>err &&
	test_cmp nice.given nice.out &&
	! grep "raised the recorder" err
'

# STACKREC_TEST_BEHIND_BYTES=1: any read of a sample counts as falling behind, as a full ring buffer would.
# The drain thread goes to -10, the frame writer to -5, below it; workers started later inherit -10.
test_expect_success BPF 'a recorder that falls behind raises itself to nice -10 and says so' '
	STACKREC_TEST_BEHIND_BYTES=1 stackrec record -v -F 999 -o raised.rec -- ./parent-nice 2>err &&
	test "$(head -n 1 nice.out)" = -10 &&
	sed 1d nice.out | grep -qx -- -5 &&
	test -z "$(sed 1d nice.out | grep -vx -e -5 -e -10)" &&
	grep -E "^stackrec: raised the recorder.s priority from nice -?[0-9]+ to -10: the sample ring buffer was filling$" err
'

test_done
