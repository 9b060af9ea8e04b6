#!/usr/bin/env bash
test_description='outputs written as root: no symbolic link followed, 0600, owned by the sudo user, FILE.old, -o -, a full disk'
. "$(dirname "$0")/test-lib.sh"

# Every output a root stackrec writes: record's recording, convert -o, archive -o. A directory that another user
# (nobody, 65534) owns is where that user can plant symbolic links; it is not sticky, so the kernel's
# fs.protected_symlinks does not stop root from following them: only stackrec can.
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

test_expect_success ROOT 'a directory that nobody owns, with symbolic links planted by nobody' '
	mkdir shared && chown 65534:65534 shared &&
	echo precious >victim && chmod 644 victim &&
	cp victim victim.orig &&
	for name in rec.rec rec.rec.tmp out.folded out.folded.tmp out.archive out.archive.tmp; do
		as_nobody ln -s "$TEST_DIR/victim" shared/$name || return 1
	done &&
	test "$(stat -c %u shared/rec.rec.tmp)" = 65534
'

test_expect_success ROOT 'convert -o: a planted OUT.tmp is not followed, a planted OUT is refused' '
	stackrec convert "$FIXTURES/short.rec" -o shared/new.folded 2>err &&
	as_nobody ln -s "$TEST_DIR/victim" shared/new.folded.tmp &&
	stackrec convert "$FIXTURES/short.rec" -o shared/new.folded 2>err &&
	cmp victim.orig victim &&
	test_must_fail stackrec convert "$FIXTURES/short.rec" -o shared/out.folded 2>err &&
	cmp victim.orig victim &&
	test -L shared/out.folded &&
	grep "^stackrec: error: refusing to write through .shared/out.folded.: a symbolic link owned by uid 65534" err
'

test_expect_success ROOT 'archive -o: a planted OUT.tmp is not followed, a planted OUT is refused' '
	as_nobody ln -s "$TEST_DIR/victim" shared/new.archive.tmp &&
	stackrec archive "$FIXTURES/short.rec" --no-cache -o shared/new.archive 2>err &&
	cmp victim.orig victim &&
	stackrec info shared/new.archive >/dev/null &&
	test_must_fail stackrec archive "$FIXTURES/short.rec" --no-cache -o shared/out.archive 2>err &&
	cmp victim.orig victim &&
	grep "refusing to write through .shared/out.archive." err
'

test_expect_success BPF 'record: a planted OUT.tmp is not followed, a planted OUT is refused' '
	as_nobody ln -s "$TEST_DIR/victim" shared/new.rec.tmp &&
	stackrec record -o shared/new.rec -- true 2>err &&
	cmp victim.orig victim &&
	stackrec info shared/new.rec >/dev/null &&
	test_must_fail stackrec record -o shared/rec.rec -- true 2>err &&
	cmp victim.orig victim &&
	grep "refusing to write through .shared/rec.rec." err &&
	ls -A shared >names &&
	! grep -v -e "^rec\.rec" -e "^new\." -e "^out\." names
'

# A link of our own to a link another user may repoint, or to a path through another user's link to a directory,
# is that user's to aim: every link on the way is checked, and the last name is opened where the walk found it.
test_expect_success ROOT 'a link of our own that leads through a link nobody planted is refused; links of our own are followed' '
	as_nobody ln -s "$TEST_DIR/victim" shared/relay &&
	ln -s shared/relay own-link-to-relay &&
	ln -s own-link-to-relay own-link-to-link &&
	test_must_fail stackrec convert "$FIXTURES/short.rec" -o own-link-to-link 2>err &&
	cmp victim.orig victim &&
	grep -x "stackrec: error: refusing to write through .own-link-to-link.: it leads through .relay., a symbolic link owned by uid 65534" err &&
	test_must_fail stackrec archive "$FIXTURES/short.rec" --no-cache -o own-link-to-relay 2>err &&
	cmp victim.orig victim &&
	mkdir elsewhere && as_nobody ln -s "$TEST_DIR/elsewhere" shared/dir &&
	ln -s shared/dir/out own-link-through-dir &&
	test_must_fail stackrec convert "$FIXTURES/short.rec" -o own-link-through-dir 2>err &&
	grep -x "stackrec: error: refusing to write through .own-link-through-dir.: it leads through .dir., a symbolic link owned by uid 65534" err &&
	! test -e elsewhere/out &&
	ln -s chain-end chain-2 && ln -s chain-2 chain-1 &&
	stackrec convert "$FIXTURES/short.rec" -o chain-1 &&
	test -L chain-1 && test -L chain-2 && test -s chain-end &&
	mkdir mine mine-sub && ln -s mine mine-link && ln -s ../mine-link/./out mine-sub/link &&
	stackrec convert "$FIXTURES/short.rec" -o mine-sub/link &&
	test_cmp chain-end mine/out
'

# A directory on OUT's own path that is another user's link (shared/dir -> elsewhere, which nobody could point
# at /etc) is theirs to aim: refused as a link at OUT is, before anything is created. Under sudo the invoking
# user's own links are followed: they could name the target with -o as well.
test_expect_success ROOT 'a directory on OUT'"'"'s path that is another user'"'"'s link is refused; the sudo user'"'"'s is followed' '
	test -L shared/dir &&
	test_must_fail stackrec convert "$FIXTURES/short.rec" -o shared/dir/out.folded 2>err &&
	grep -x "stackrec: error: refusing to write through .shared/dir/out.folded.: it leads through .dir., a symbolic link owned by uid 65534" err &&
	test_must_fail stackrec archive "$FIXTURES/short.rec" --no-cache -o "$TEST_DIR/shared/dir/out.archive" 2>err &&
	grep -x "stackrec: error: refusing to write through .$TEST_DIR/shared/dir/out.archive.: it leads through .dir., a symbolic link owned by uid 65534" err &&
	ls -A elsewhere >names && test ! -s names &&
	SUDO_UID=65534 SUDO_GID=65534 stackrec convert "$FIXTURES/short.rec" -o shared/dir/out.folded &&
	stackrec convert "$FIXTURES/short.rec" >expect && test_cmp expect elsewhere/out.folded &&
	stat -c %u elsewhere/out.folded >actual && echo 65534 >expect && test_cmp expect actual &&
	test_must_fail stackrec convert "$FIXTURES/short.rec" -o "" 2>err &&
	grep -x "stackrec: error: cannot create ..: No such file or directory" err
'

test_expect_success ROOT,BPF 'record: a directory on OUT'"'"'s path that is another user'"'"'s link is refused' '
	test_must_fail stackrec record -o shared/dir/out.rec -- true 2>err &&
	grep -x "stackrec: error: refusing to write through .shared/dir/out.rec.: it leads through .dir., a symbolic link owned by uid 65534" err &&
	! test -e elsewhere/out.rec
'

# The walk to OUT needs no search permission in the current directory for an absolute OUT, and a link's text
# with what follows it may be longer than one path.
test_expect_success ROOT 'an absolute OUT from a directory we cannot search, and through a long link' '
	mkdir locked out-dir && chmod 000 locked &&
	(cd locked && setpriv --bounding-set=-dac_override,-dac_read_search --inh-caps=-all \
		"$STACKREC" convert "$FIXTURES/short.rec" -o "$TEST_DIR/out-dir/from-locked") &&
	stackrec convert "$FIXTURES/short.rec" >expect &&
	test_cmp expect out-dir/from-locked &&
	long=$(printf "%0250d" 0) && target=$TEST_DIR/long && rest= &&
	for i in 1 2 3 4 5 6 7; do target=$target/$long; done &&
	for i in 1 2 3 4 5 6 7 8 9; do rest=$rest/$long; done &&
	mkdir -p "$target$rest" && ln -s "$target" long-link &&
	stackrec convert "$FIXTURES/short.rec" -o "long-link$rest/out" &&
	test_cmp expect "$target$rest/out" &&
	ls -A out-dir "$target$rest" >names && ! grep "^\." names
'

# Nor does it need /proc: the temporary file is made in the directory the walk holds. Not in a SANITIZE=1
# build, whose runtime reads its options from /proc/self/environ and runs LeakSanitizer through /proc.
test_expect_success ROOT,NO_SANITIZE 'OUT is written without /proc mounted' '
	unshare -m sh -c "umount -l /proc && \"\$0\" convert \"\$1\" -o \"\$2\"" \
		"$STACKREC" "$FIXTURES/short.rec" "$TEST_DIR/no-proc" &&
	grep -q "^short;" no-proc &&
	ls -A >names && ! grep "^\.no-proc" names
'

# Through a link, an existing file is written in place: another user's (made readable to all in a shared
# directory) would hand that user the output, as their FIFO would. A name with a trailing slash is a directory.
test_expect_success ROOT 'a link of our own to another user'"'"'s file, or to a name with a trailing slash, is not written' '
	as_nobody sh -c "umask 0; : >shared/grab" &&
	ln -s shared/grab own-link-to-grab &&
	test_must_fail stackrec convert "$FIXTURES/short.rec" -o own-link-to-grab 2>err &&
	grep -x "stackrec: error: refusing to write to .own-link-to-grab.: a file owned by uid 65534" err &&
	test ! -s shared/grab &&
	echo precious >plain-file && ln -s plain-file/ own-link-slash && ln -s new-name/ own-link-new-slash &&
	test_must_fail stackrec convert "$FIXTURES/short.rec" -o own-link-slash 2>err &&
	grep -x "stackrec: error: cannot create .own-link-slash.: Not a directory" err &&
	echo precious >expect && test_cmp expect plain-file &&
	test_must_fail stackrec convert "$FIXTURES/short.rec" -o own-link-new-slash 2>err &&
	grep -x "stackrec: error: cannot create .own-link-new-slash.: Is a directory" err &&
	test ! -e new-name
'

# /proc/PID/root leads into what the process sees (another mount namespace): the kernel follows it, its text
# would name this namespace's path.
test_expect_success ROOT 'a link of our own through /proc/PID/root writes where the process sees the path' '
	mkdir ns-mnt &&
	{ unshare -m --propagation private sh -c "mount -t tmpfs none ns-mnt && : >ns-mnt/ready && exec sleep 60" & } &&
	ns_pid=$! &&
	for i in $(seq 100); do test -e /proc/$ns_pid/root$PWD/ns-mnt/ready && break; sleep 0.1; done &&
	ln -s /proc/$ns_pid/root$PWD/ns-mnt/out ns-link &&
	stackrec convert "$FIXTURES/short.rec" -o ns-link &&
	test -s /proc/$ns_pid/root$PWD/ns-mnt/out &&
	! test -e ns-mnt/out &&
	kill $ns_pid && wait
'

# A FIFO another user made at OUT would hand that user everything written: the recording (stack bytes of every
# process), an archive of root's binaries. Nothing is written to it, it is not even opened (no reader is woken);
# under sudo the invoking user's own FIFO is written.
test_expect_success ROOT,BPF 'a FIFO another user owns at OUT is refused by record, convert and archive; the sudo user'"'"'s is written' '
	as_nobody mkfifo shared/fifo.rec shared/fifo.folded shared/fifo.archive &&
	ln -s shared/fifo.folded own-link-to-fifo &&
	test_must_fail timeout 20 "$STACKREC" record -o shared/fifo.rec -- true 2>err &&
	grep -x "stackrec: error: refusing to write to .shared/fifo.rec.: a FIFO owned by uid 65534" err &&
	test_must_fail timeout 20 "$STACKREC" convert "$FIXTURES/short.rec" -o shared/fifo.folded 2>err &&
	grep -x "stackrec: error: refusing to write to .shared/fifo.folded.: a FIFO owned by uid 65534" err &&
	test_must_fail timeout 20 "$STACKREC" convert "$FIXTURES/short.rec" -o own-link-to-fifo 2>err &&
	grep -x "stackrec: error: refusing to write to .own-link-to-fifo.: a FIFO owned by uid 65534" err &&
	test_must_fail timeout 20 "$STACKREC" archive "$FIXTURES/short.rec" --no-cache -o shared/fifo.archive 2>err &&
	grep -x "stackrec: error: refusing to write to .shared/fifo.archive.: a FIFO owned by uid 65534" err &&
	{ timeout 20 cat shared/fifo.folded >from-fifo & } &&
	SUDO_UID=65534 SUDO_GID=65534 timeout 20 "$STACKREC" convert "$FIXTURES/short.rec" -o shared/fifo.folded &&
	wait &&
	stackrec convert "$FIXTURES/short.rec" >expect &&
	test_cmp expect from-fifo
'

test_expect_success '-o through a symbolic link of our own, and to /dev/null, /dev/stdout and /dev/fd/1, writes in place' '
	ln -s own-target own-link &&
	stackrec convert "$FIXTURES/short.rec" -o own-link &&
	test -L own-link && test -s own-target &&
	mkdir sub && ln -s relative sub/link &&
	stackrec convert "$FIXTURES/short.rec" -o sub/link &&
	test -L sub/link && test_cmp own-target sub/relative &&
	stackrec convert "$FIXTURES/short.rec" -o /dev/null &&
	test -c /dev/null &&
	stackrec convert "$FIXTURES/short.rec" -o /dev/stdout >via-stdout &&
	test_cmp own-target via-stdout &&
	stackrec convert "$FIXTURES/short.rec" -o /dev/fd/1 | cat >via-pipe &&
	test_cmp own-target via-pipe &&
	stackrec convert "$FIXTURES/short.rec" -o /proc/self/fd/1 | cat >via-pipe &&
	test_cmp own-target via-pipe
'

test_expect_success 'outputs are 0600 whatever the umask, and nothing temporary stays' '
	mkdir modes && umask 022 &&
	stackrec convert "$FIXTURES/short.rec" -o modes/out.folded &&
	stackrec archive "$FIXTURES/short.rec" --no-cache -o modes/out.archive 2>err &&
	echo 600 >expect &&
	stat -c %a modes/out.folded >actual && test_cmp expect actual &&
	stat -c %a modes/out.archive >actual && test_cmp expect actual &&
	ls -A modes >names && printf "out.archive\nout.folded\n" >expect && test_cmp expect names
'

test_expect_success BPF 'a recording is 0600' '
	umask 022 &&
	stackrec record -o mode.rec -- true 2>err &&
	stat -c %a mode.rec >actual && echo 600 >expect && test_cmp expect actual
'

test_expect_success ROOT 'under sudo, outputs belong to the invoking user' '
	mkdir sudo &&
	SUDO_UID=65534 SUDO_GID=65534 stackrec convert "$FIXTURES/short.rec" -o sudo/out.folded &&
	SUDO_UID=65534 SUDO_GID=65534 stackrec archive "$FIXTURES/short.rec" --no-cache -o sudo/out.archive 2>err &&
	echo 65534:65534 >expect &&
	stat -c %u:%g sudo/out.folded >actual && test_cmp expect actual &&
	stat -c %u:%g sudo/out.archive >actual && test_cmp expect actual &&
	stackrec convert "$FIXTURES/short.rec" -o sudo/mine.folded &&
	echo 0:0 >expect && stat -c %u:%g sudo/mine.folded >actual && test_cmp expect actual
'

test_expect_success BPF 'under sudo, a recording belongs to the invoking user' '
	SUDO_UID=65534 SUDO_GID=65534 stackrec record -o sudo.rec -- true 2>err &&
	stat -c %u:%g sudo.rec >actual && echo 65534:65534 >expect && test_cmp expect actual
'

test_expect_success BPF 'recording over a recording keeps the old one as FILE.old' '
	stackrec record -o again.rec -- true 2>err &&
	cp again.rec first.rec &&
	stackrec record -o again.rec -- true 2>err &&
	cmp first.rec again.rec.old &&
	! cmp -s first.rec again.rec &&
	stackrec info again.rec >/dev/null &&
	cp again.rec second.rec &&
	stackrec record -o again.rec -- true 2>err &&
	cmp second.rec again.rec.old
'

test_expect_success BPF 'a run that fails to start keeps FILE as it was and makes no FILE.old' '
	stackrec record -o once.rec -- true 2>err &&
	cp once.rec before.rec &&
	test_must_fail stackrec record -o once.rec -- ./no-such-program 2>err &&
	cmp before.rec once.rec &&
	test ! -e once.rec.old
'

test_expect_success 'convert -o over a file keeps no FILE.old' '
	stackrec convert "$FIXTURES/short.rec" -o twice.folded &&
	stackrec convert "$FIXTURES/short.rec" -o twice.folded &&
	test ! -e twice.folded.old
'

test_expect_success 'record -o - is refused, says so in --help, and creates no file' '
	test_expect_code() { "$@"; test $? -eq 2; } &&
	test_expect_code stackrec record -o - -- true 2>err &&
	grep "^stackrec: error: record cannot write to standard output (-o -): give a file name" err &&
	test ! -e ./- &&
	stackrec record --help >help &&
	grep -- "-o -.*refused" help
'

# A full file system: a small tmpfs filled to the last byte. Unmounted by the test itself, and again at the end.
test_expect_success ROOT 'on a full disk, errors name OUT and nothing temporary stays' '
	mkdir full && mount -t tmpfs -o size=64k tmpfs full &&
	{
		dd if=/dev/zero of=full/filler bs=4k 2>/dev/null
		test_must_fail stackrec convert "$FIXTURES/short.rec" -o full/out.folded 2>err &&
		grep "^stackrec: error: cannot write .full/out.folded.: No space left on device" err &&
		test_must_fail stackrec archive "$FIXTURES/short.rec" --no-cache -o full/out.archive 2>err &&
		grep "^stackrec: error: cannot write .full/out.archive.: No space left on device" err &&
		ls -A full >names && echo filler >expect && test_cmp expect names
	}
	rc=$?
	umount full
	exit $rc
'

test_expect_success BPF 'record on a full disk: the error names OUT and nothing temporary stays' '
	mkdir full2 && mount -t tmpfs -o size=64k tmpfs full2 &&
	{
		dd if=/dev/zero of=full2/filler bs=4k 2>/dev/null
		test_must_fail stackrec record -o full2/x.rec -- true 2>err &&
		grep "^stackrec: error: cannot write .full2/x.rec.: No space left on device" err &&
		! grep "tmp" err &&
		ls -A full2 >names && echo filler >expect && test_cmp expect names
	}
	rc=$?
	umount full2
	exit $rc
'

umount full full2 2>/dev/null
test_done
