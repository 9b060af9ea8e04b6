#!/usr/bin/env bash
test_description='frame numbers find frames removed, copied and moved; a short damage campaign over the fixtures'
# tests/fuzz/damage.c (built by `make fuzz-damage-build`, as the unit tests are, with this build's flags)
# rewrites fixtures/*.rec with numbered frames and makes damaged variants of them; tests/fuzz/damage-campaign.sh
# runs info and convert on every variant. `make fuzz` runs the full campaign (DAMAGE_VARIANTS a recording) on
# the plain and the sanitizer build; here a few hundred variants run on $STACKREC (under SANITIZE=1 the
# sanitizer build, with fewer variants). DAMAGE_VARIANTS overrides the count.
. "$(dirname "$0")/test-lib.sh"

BUILD_DIR=$(cd "$UNIT_DIR/.." 2>/dev/null && pwd || echo "$SRC_DIR/build")
DAMAGE=$BUILD_DIR/fuzz/damage
SAN_FLAGS=
[ "${SANITIZE:-}" = 1 ] && SAN_FLAGS=SANITIZE=1

test_expect_success 'the variant maker builds' '
	make -s -C "$SRC_DIR" $SAN_FLAGS OUT="$BUILD_DIR" "$DAMAGE" &&
	test -x "$DAMAGE"
'

# chain.rec, 150 samples in one frame, rewritten 8 blocks a frame: 20 frames, numbered 0 to 19.
test_expect_success 'a recording rewritten with numbered frames reads whole' '
	"$DAMAGE" reframe "$FIXTURES/chain.rec" chain.rec 8 &&
	stackrec info chain.rec >out &&
	grep "^  samples  *150$" out &&
	grep "^  format version  *1\.8$" out &&
	grep "^  size  *[0-9]* bytes in 20 frames$" out &&
	grep "^  frame numbers  *yes$" out &&
	stackrec convert chain.rec --symfs "$FIXTURES/sysroot" --no-cache --debug-dir "$FIXTURES/debug" >whole.folded
'

# frame_range FILE FIRST LAST: the bytes of frames FIRST..LAST (0-based) of a recording, by its frame headers.
frame_range() {
	/usr/bin/python3 - "$@" <<-\PY
	import struct, sys
	data = open(sys.argv[1], "rb").read()
	off, frames = struct.unpack_from("<I", data, 16)[0], []
	while off + 16 <= len(data):
	    size = struct.unpack_from("<I", data, off + 4)[0]
	    frames.append((off, off + 16 + size))
	    off += 16 + size
	first, last = int(sys.argv[2]), int(sys.argv[3])
	sys.stdout.buffer.write(data[frames[first][0]:frames[last][1]] if first <= last else b"")
	PY
}
# splice OUT FIRST LAST [FIRST LAST ...]: chain.rec's file header, then those frame ranges in that order.
splice() {
	local out=$1
	shift
	head -c 32 chain.rec >"$out" &&
	while [ $# -gt 0 ]; do frame_range chain.rec "$1" "$2" >>"$out" || return 1; shift 2; done
}
exits_3() { "$@"; test $? -eq 3; }
SQ="'"

test_expect_success 'a removed frame: info and convert say it, exit 3, and convert writes the rest' '
	splice removed.rec 0 4 6 19 &&
	exits_3 stackrec info removed.rec >out 2>err &&
	grep "^stackrec: warning: ${SQ}removed.rec${SQ}: 1 frame missing (numbers skipped before the frame at offset [0-9]*)$" err &&
	grep "^stackrec: error: ${SQ}removed.rec${SQ} is damaged: 0 of 19 frames unreadable, 0 frames ending in a broken block, 0 bytes skipped, 1 frame missing; every intact block was read$" err &&
	exits_3 stackrec convert removed.rec --symfs "$FIXTURES/sysroot" --no-cache --debug-dir "$FIXTURES/debug" >removed.folded 2>err &&
	test_line_count err = 1 &&
	test -s removed.folded
'

test_expect_success 'archive of a recording with a frame missing: the archive, the damage said, exit 3' '
	exits_3 stackrec archive removed.rec -o removed.archive --no-cache --debug-dir "$FIXTURES/debug" 2>err &&
	grep "1 frame missing" err &&
	grep "^stackrec: archived [0-9]* files" err &&
	stackrec info removed.archive >/dev/null
'

test_expect_success 'convert --archive of an archive that cannot be read: the output, exit 3' '
	exits_3 stackrec convert chain.rec --archive no-such.archive --symfs "$FIXTURES/sysroot" --no-cache \
		--debug-dir "$FIXTURES/debug" >out 2>err &&
	test_cmp whole.folded out &&
	grep "cannot open .no-such.archive." err
'

test_expect_success 'a duplicated frame is read once: the same samples as the whole file; exit 3' '
	splice twice.rec 0 7 7 19 &&
	exits_3 stackrec info twice.rec >out 2>err &&
	grep "^  samples  *150$" out &&
	grep "1 frame read twice, the copy skipped (at offset [0-9]*)$" err &&
	exits_3 stackrec convert twice.rec --symfs "$FIXTURES/sysroot" --no-cache --debug-dir "$FIXTURES/debug" >twice.folded 2>err &&
	test_cmp whole.folded twice.folded &&
	grep "is damaged: .*1 frame read twice, the copy skipped; every intact block was read$" err
'

test_expect_success 'frames out of order: every sample, said; exit 3' '
	splice moved.rec 0 2 4 9 3 3 10 19 &&
	exits_3 stackrec info moved.rec >out 2>err &&
	grep "^  samples  *150$" out &&
	grep "1 frame out of order (at offset [0-9]*)$" err &&
	! grep "missing" err &&
	exits_3 stackrec convert moved.rec --symfs "$FIXTURES/sysroot" --no-cache --debug-dir "$FIXTURES/debug" >moved.folded &&
	test_cmp whole.folded moved.folded
'

test_expect_success 'the first frame removed; -v says where the numbers jump' '
	splice first.rec 1 19 &&
	exits_3 stackrec info -v first.rec >out 2>err &&
	grep "the frame at offset 32 is number 1, expected 0: 1 missing$" err
'

test_expect_success 'the last frame removed: no end marker, cut short' '
	splice last.rec 0 18 &&
	exits_3 stackrec info last.rec >out 2>err &&
	grep "is cut short" err
'

test_expect_success 'a frame damaged and another removed: both said, neither hides the other' '
	splice both.rec 0 4 6 19 &&
	second=$(($(frame_range chain.rec 0 0 | wc -c) + 32 + 20)) &&
	printf "\377\377\377\377" | dd of=both.rec bs=1 seek=$second conv=notrunc 2>/dev/null &&
	exits_3 stackrec info both.rec >out 2>err &&
	grep "1 frame with a bad CRC" err &&
	grep "1 frame missing" err
'

test_expect_success 'format 1.1 (no frame numbers): a removed or doubled frame is found by the end marker' '
	head -c 32 "$FIXTURES/offcpu.rec" >old-removed.rec &&
	(cd "$FIXTURES" && frame_range offcpu.rec 1 1) >>old-removed.rec &&
	exits_3 stackrec info old-removed.rec >out 2>err &&
	grep "the end marker counts 78 blocks before it, 2 were read before it and 0 after it" err &&
	cp "$FIXTURES/offcpu.rec" old-twice.rec &&
	(cd "$FIXTURES" && frame_range offcpu.rec 0 0) >>old-twice.rec &&
	exits_3 stackrec info old-twice.rec >out 2>err &&
	grep "the end marker counts 78 blocks before it, 78 were read before it and [0-9]* after it" err
'

test_expect_success 'format 1.1 fixtures still read whole, exit 0' '
	for f in "$FIXTURES"/*.rec; do
		stackrec info "$f" >out 2>err && test ! -s err &&
		grep "^  frame numbers  *no (written before format 1.2)$" out || return 1
	done
'

# The short campaign: every fixture, as checked in and numbered, 32 blocks a frame.
if [ "${SANITIZE:-}" = 1 ]; then n=${DAMAGE_VARIANTS:-12} recs=$FIXTURES/chain.rec,$FIXTURES/offcpu.rec,$FIXTURES/unwind.rec
else n=${DAMAGE_VARIANTS:-30} recs=$FIXTURES/chain.rec,$FIXTURES/offcpu.rec,$FIXTURES/unwind.rec,$FIXTURES/short.rec
fi
test_expect_success "a short damage campaign: no crash, no hang, every intact frame salvaged, all damage said" '
	"$TESTS/fuzz/damage-campaign.sh" -n $n -b 32 -f folded,pprof,trace -r "$recs" -w "$TEST_DIR/campaign" \
		"$DAMAGE" "$STACKREC" >summary 2>&1 ||
	{ cat summary; cat "$TEST_DIR/campaign/failed/why"; false; } &&
	cat summary &&
	grep "crashes (signals, sanitizer reports): 0$" summary &&
	grep "hangs (timeouts): 0$" summary &&
	grep "damage not reported (exit 0): 0$" summary
'

test_done
