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

# The -p targets run until the test ends them, once the recording holds samples (as in t2000): on a loaded
# machine, or in a sanitizer build, loading the BPF programs alone can take seconds. Their perf maps are read
# when they exit. A map left by an earlier process with the same pid (pids wrap at 32768 here) is removed
# first: the user could not write over root's.
test_expect_success BPF 'a perf map owned by the process user is embedded' '
	$as_nobody ./busy 600000 & pid=$! &&
	wait_until 120 grep -qx busy /proc/$pid/comm &&
	rm -f /tmp/perf-$pid.map &&
	$as_nobody sh -c "echo \"1000 10 jitted\" >/tmp/perf-$pid.map" &&
	{ "$STACKREC" record -F 499 -o own.rec -p $pid 2>err & rec=$!; } &&
	wait_until 120 samples_in 1 own.rec &&
	kill $pid && wait $rec &&
	rm -f /tmp/perf-$pid.map &&
	! grep "not embedding" err &&
	stackrec info --files own.rec >files && cat err files &&
	grep "^file perf-map pid $pid .*/tmp/perf-$pid.map$" files
'

test_expect_success BPF 'a perf map owned by another user than the process is not embedded' '
	$as_nobody ./busy 600000 & pid=$! &&
	wait_until 120 grep -qx busy /proc/$pid/comm &&
	rm -f /tmp/perf-$pid.map &&
	cp shadow /tmp/perf-$pid.map &&
	{ "$STACKREC" record -F 499 -o other.rec -p $pid 2>err & rec=$!; } &&
	wait_until 120 samples_in 1 other.rec &&
	kill $pid && wait $rec &&
	rm -f /tmp/perf-$pid.map &&
	cat err &&
	grep "warning: not embedding the perf map .*/tmp/perf-$pid.map.* of pid $pid: owned by another user" err &&
	stackrec info --files other.rec >files &&
	! grep "^file perf-map" files &&
	! grep -a SECRET-HASH other.rec
'

test_expect_success BPF 'a perf map that is a symbolic link is not embedded' '
	$as_nobody ./busy 600000 & pid=$! &&
	wait_until 120 grep -qx busy /proc/$pid/comm &&
	rm -f /tmp/perf-$pid.map &&
	ln -s "$TEST_DIR/shadow" /tmp/perf-$pid.map &&
	{ "$STACKREC" record -F 499 -o link.rec -p $pid 2>err & rec=$!; } &&
	wait_until 120 samples_in 1 link.rec &&
	kill $pid && wait $rec &&
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

# cache_path DIR ID: where cache DIR keeps the file with that build ID.
cache_path() {
	echo "$1/.build-id/${2:0:2}/${2:2}"
}

test_expect_success BPF 'trimming does not follow a symlinked .build-id/xx directory out of the cache' '
	mkdir -p outside trimlink/.build-id &&
	head -c 4000000 /dev/zero >outside/precious &&
	touch -a -m -d "2001-01-01" outside/precious &&
	ln -s "$TEST_DIR/outside" trimlink/.build-id/00 &&
	stackrec record --build-id-cache trimlink --cache-size 1 -o trimlink.rec -- ./busy 200 &&
	test -f outside/precious &&
	test -L trimlink/.build-id/00
'

test_expect_success BPF 'a symlinked .build-id is neither filled nor trimmed: a warning, and recording goes on' '
	mkdir -p outside2/00 idslink &&
	head -c 4000000 /dev/zero >outside2/00/precious &&
	touch -a -m -d "2001-01-01" outside2/00/precious &&
	ln -s "$TEST_DIR/outside2" idslink/.build-id &&
	stackrec record --build-id-cache idslink --cache-size 1 -o idslink.rec -- ./busy 200 2>err &&
	grep "warning: not using the build-ID cache .*idslink.*: .build-id is not a directory" err &&
	test -f outside2/00/precious &&
	test "$(ls outside2)" = 00 &&
	stackrec info idslink.rec >/dev/null
'

test_expect_success BPF 'a cache directory of another user is not used: a warning, and recording goes on' '
	mkdir foreign &&
	chown 12345 foreign &&
	stackrec record --build-id-cache foreign -o foreign.rec -- ./busy 200 2>err &&
	grep "warning: not using the build-ID cache .*foreign.*: owned by uid 12345, not by uid 0" err &&
	test ! -e foreign/.build-id &&
	SUDO_UID=65534 SUDO_GID=65534 stackrec record --build-id-cache foreign -o foreign.rec -- ./busy 200 2>err &&
	grep "owned by uid 12345, not by uid 65534" err &&
	test ! -e foreign/.build-id
'

test_expect_success BPF 'cache entries are 0600 in 0700 directories, also of a 0700 binary' '
	cp busy private && chmod 700 private &&
	stackrec record --build-id-cache modes -o modes.rec -- ./private 200 &&
	cached=$(cache_path modes "$(build_id private)") &&
	cmp private "$cached" &&
	test "$(stat -c %a "$cached")" = 600 &&
	test "$(stat -c %a "$(dirname "$cached")")" = 700 &&
	test "$(stat -c %a modes/.build-id)" = 700 &&
	test "$(stat -c %a modes)" = 700
'

# A build ID is a file's word: another user can make a file with the build ID of a binary root records (libc's)
# and more symbols, run it, and have it named in root's cache. Such a file fills a missing entry only, 0400, and
# gives way to the first file of root's with that build ID, though that one has fewer symbols.
test_expect_success BPF 'another user'"'"'s file fills a missing entry only (0400), and gives way to root'"'"'s' '
	cp busy fake &&
	objcopy --add-symbol mallory_was_here=.text:0,global,function fake &&
	chown 65534:65534 fake && chmod 755 fake &&
	test "$(build_id fake)" = "$(build_id busy)" &&
	stackrec record --build-id-cache trusted-first -o first.rec -- ./busy 200 &&
	cached=$(cache_path trusted-first "$(build_id busy)") &&
	cmp busy "$cached" &&
	{ $as_nobody ./fake 600000 & pid=$!; } &&
	wait_until 120 grep -qx fake /proc/$pid/comm &&
	stackrec record --build-id-cache trusted-first -o fake1.rec -p $pid --duration 1 2>err1 &&
	stackrec record --build-id-cache foreign-first -o fake2.rec -p $pid --duration 1 2>err2 &&
	{ kill $pid; wait $pid; true; } &&
	cmp busy "$cached" &&
	test "$(stat -c %a "$cached")" = 600 &&
	cached=$(cache_path foreign-first "$(build_id busy)") &&
	cmp fake "$cached" &&
	test "$(stat -c %a "$cached")" = 400 &&
	stackrec record --build-id-cache foreign-first -o after.rec -- ./busy 200 &&
	cmp busy "$cached" &&
	test "$(stat -c %a "$cached")" = 600
'

test_expect_success BPF 'under sudo the cache is made for the invoking user, none of it left to root' '
	mkdir home && chown 65534:65534 home &&
	SUDO_UID=65534 SUDO_GID=65534 stackrec record --build-id-cache home/.cache/stackrec -o sudo.rec -- ./busy 200 &&
	cached=$(cache_path home/.cache/stackrec "$(build_id busy)") &&
	cmp busy "$cached" &&
	test "$(stat -c %u:%g:%a "$cached")" = 65534:65534:600 &&
	test "$(stat -c %u:%g:%a home/.cache/stackrec/.build-id)" = 65534:65534:700 &&
	test "$(stat -c %u:%g:%a home/.cache/stackrec)" = 65534:65534:700 &&
	test "$(stat -c %u:%g:%a home/.cache)" = 65534:65534:700 &&
	find home -uid 0 >root-owned &&
	test_line_count root-owned = 0
'

test_expect_success BPF 'under sudo a cache made in a directory of root stays root'"'"'s' '
	mkdir rootdir &&
	SUDO_UID=65534 SUDO_GID=65534 stackrec record --build-id-cache rootdir/stackrec -o sudo-root.rec -- ./busy 200 &&
	cached=$(cache_path rootdir/stackrec "$(build_id busy)") &&
	cmp busy "$cached" &&
	test "$(stat -c %u:%a "$cached")" = 0:600 &&
	test "$(stat -c %u:%a rootdir/stackrec)" = 0:700 &&
	# The same through a symlink of the user: ~/.cache pointing to a directory of root.
	mkdir home2 rootdir2 && ln -s "$TEST_DIR/rootdir2" home2/.cache && chown -h 65534:65534 home2 home2/.cache &&
	SUDO_UID=65534 SUDO_GID=65534 stackrec record --build-id-cache home2/.cache/stackrec -o sudo-link.rec -- ./busy 200 &&
	test "$(stat -c %u:%a rootdir2/stackrec)" = 0:700
'

test_expect_success 'build an unstripped binary and a stripped copy with the same build ID' '
	# A build ID of its own: earlier tests must not have cached it.
	rich_id=$(echo "rich $$ $RANDOM" | sha1sum | cut -c1-40) &&
	clang -O2 -g -fno-omit-frame-pointer -Wl,--build-id=0x$rich_id -o rich "$FIXTURES/inline.c" &&
	strip -o stripped rich &&
	test "$(build_id stripped)" = "$rich_id" &&
	echo "$rich_id" >rich.id
'

test_expect_success BPF 'an unstripped binary replaces the stripped copy of its build ID in the cache' '
	cached=$(cache_path rich-cache "$(cat rich.id)") &&
	stackrec record --build-id-cache rich-cache -o stripped.rec -- ./stripped 200 &&
	cmp stripped "$cached" &&
	stackrec record --build-id-cache rich-cache -o rich.rec -- ./rich 200 &&
	cmp rich "$cached" &&
	test "$(stat -c %a "$cached")" = 600
'

test_expect_success BPF 'and the stripped copy does not replace it back' '
	cached=$(cache_path rich-cache "$(cat rich.id)") &&
	stackrec record --build-id-cache rich-cache -o stripped2.rec -- ./stripped 200 &&
	cmp rich "$cached" &&
	mv stripped stripped.away &&
	STACKREC_CACHE_DIR=rich-cache stackrec convert stripped2.rec -f folded >stripped2.folded &&
	mv stripped.away stripped &&
	grep -q "^stripped;.*main;top;mid" stripped2.folded
'

# HOME=/nonexistent is Debian's home of nobody, which must not exist: the cache under it made it.
test_expect_success BPF 'a HOME that does not exist is not made: no cache, a warning' '
	home=$TEST_DIR/no-such-home &&
	env -u STACKREC_CACHE_DIR -u XDG_CACHE_HOME HOME=$home "$STACKREC" record -o nohome.rec -- true 2>err &&
	cat err &&
	grep -F "warning: no build-ID cache" err &&
	! test -e "$home"
'

test_done
