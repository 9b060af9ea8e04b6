#!/usr/bin/env bash
test_description='stackrec record as root: files of other users are neither embedded nor deleted'
. "$(dirname "$0")/test-lib.sh"

# The recorder runs as root and reads files that users control: their processes' perf maps, the build-ID
# cache under their home (sudo -E). Nothing here may touch the real cache in $HOME.
export STACKREC_CACHE_DIR=$TEST_DIR/cache

# build_id FILE: the GNU build ID of an ELF file, in hex.
build_id() {
	readelf -n "$1" | sed -n 's/^ *Build ID: *//p'
}

# $as_nobody CMD...: runs CMD as uid and gid 65534, the way a user's process would run. A command, not a
# function: `$as_nobody ./busy &` must make $! the pid of busy, not of a subshell.
as_nobody="setpriv --reuid=65534 --regid=65534 --clear-groups"

test_expect_success 'build a busy program anyone can run' '
	chmod 755 . &&
	clang -O2 -g -fno-omit-frame-pointer -o busy "$FIXTURES/inline.c" &&
	echo "root:SECRET-HASH:19000:0:99999:7:::" >shadow &&
	chmod 600 shadow
'

test_expect_success BPF 'a perf map owned by the process user is embedded' '
	$as_nobody ./busy 1000 & pid=$! &&
	$as_nobody sh -c "echo \"1000 10 jitted\" >/tmp/perf-$pid.map" &&
	stackrec record -F 499 -o own.rec -p $pid 2>err &&
	wait $pid &&
	rm -f /tmp/perf-$pid.map &&
	! grep "not embedding" err &&
	stackrec info --files own.rec >files &&
	grep "^file perf-map pid $pid .*/tmp/perf-$pid.map$" files
'

test_expect_success BPF 'a perf map owned by another user than the process is not embedded' '
	$as_nobody ./busy 1000 & pid=$! &&
	cp shadow /tmp/perf-$pid.map &&
	stackrec record -F 499 -o other.rec -p $pid 2>err &&
	wait $pid &&
	rm -f /tmp/perf-$pid.map &&
	cat err &&
	grep "warning: not embedding the perf map .*/tmp/perf-$pid.map.* of pid $pid: owned by another user" err &&
	stackrec info --files other.rec >files &&
	! grep "^file perf-map" files &&
	! grep -a SECRET-HASH other.rec
'

test_expect_success BPF 'a perf map that is a symbolic link is not embedded' '
	$as_nobody ./busy 1000 & pid=$! &&
	ln -s "$TEST_DIR/shadow" /tmp/perf-$pid.map &&
	stackrec record -F 499 -o link.rec -p $pid 2>err &&
	wait $pid &&
	rm -f /tmp/perf-$pid.map &&
	grep "not embedding the perf map .* of pid $pid: a symbolic link" err &&
	! grep -a SECRET-HASH link.rec
'

test_expect_success BPF 'a file bind-mounted over the perf map in the process mount namespace is not embedded' '
	# What a user can do in a namespace of their own: here root sets it up and then drops to uid 65534. The
	# recording stops while the process runs, so that its map is read through /proc/PID/root.
	unshare -m --propagation private sh -c "
		touch /tmp/perf-\$\$.map && chown 65534:65534 /tmp/perf-\$\$.map &&
		mount --bind \"$TEST_DIR/shadow\" /tmp/perf-\$\$.map &&
		exec $as_nobody ./busy 5000" & pid=$! &&
	sleep 0.3 &&
	grep -q SECRET-HASH /proc/$pid/root/tmp/perf-$pid.map &&
	stackrec record -F 499 --duration 0.5 -o bind.rec -p $pid 2>err &&
	kill $pid && wait $pid; rm -f /tmp/perf-$pid.map &&
	cat err &&
	grep "not embedding the perf map .* of pid $pid: owned by another user" err &&
	! grep -a SECRET-HASH bind.rec
'

test_done
