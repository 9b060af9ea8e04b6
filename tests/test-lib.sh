# test-lib.sh — the shared library of stackrec's shell tests, after git's t/test-lib.sh.
#
# A test script sources this file, then declares tests:
#
#   test_description='what this script covers'
#   . "$(dirname "$0")/test-lib.sh"
#   test_expect_success 'title' '
#       stackrec convert "$FIXTURES/inline.rec" -f folded >actual &&
#       test_cmp "$FIXTURES/inline.folded" actual
#   '
#   test_done
#
# Output is TAP. Each script runs in its own scratch directory ($TEST_DIR, the current directory while
# tests run). Prerequisites skip a test with a printed reason: test_expect_success BPF 'title' '...'.
# Do not pipe the program under test into another command: a crash would be hidden by the pipe.
#
# Environment: STACKREC (the binary, default ../stackrec), UNIT_DIR (unit test binaries), SANITIZE.

set -u
TEST_NAME=$(basename "$0" .sh)
SRC_DIR=$(cd "$(dirname "$0")/.." && pwd)
TESTS=$SRC_DIR/tests
FIXTURES=$SRC_DIR/fixtures
STACKREC=${STACKREC:-$SRC_DIR/stackrec}
UNIT_DIR=${UNIT_DIR:-$SRC_DIR/build/tests}
TEST_DIR=${TMPDIR:-/tmp}/stackrec-test.$TEST_NAME.$$
rm -rf "$TEST_DIR" && mkdir -p "$TEST_DIR" && cd "$TEST_DIR" || exit 1
# record fills a build-ID cache: never the real one in $HOME (a test may point it elsewhere).
export STACKREC_CACHE_DIR=$TEST_DIR/cache
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

test_count=0
test_failed=0
test_skipped=0
declare -A test_prereq_ok=()
declare -A test_prereq_why=()

stackrec() { "$STACKREC" "$@"; }

# test_set_prereq NAME: NAME is satisfied. test_lazy_prereq NAME 'script' would be overkill here.
test_set_prereq() { test_prereq_ok[$1]=1; }
test_unset_prereq() { test_prereq_why[$1]=$2; }

say() { printf '%s\n' "$*"; }

# test_cmp EXPECTED ACTUAL: identical files, or a diff and failure.
test_cmp() { diff -u "$@"; }

# pprof_cmp EXPECTED ACTUAL: the same profile.proto bytes inside the two gzip files. The gzip layer is zlib's,
# whose output may change with the zlib build; stackrec's own encoding of the profile must not.
pprof_cmp() {
	gzip -dc <"$1" >"$2.expected-proto" && gzip -dc <"$2" >"$2.proto" && cmp "$2.expected-proto" "$2.proto"
}

# test_must_fail CMD...: CMD exits non-zero without being killed by a signal (a crash is a failure).
test_must_fail() {
	"$@"
	local rc=$?
	if [ $rc -eq 0 ]; then
		echo "test_must_fail: command succeeded: $*" >&2
		return 1
	elif [ $rc -gt 128 ] && [ $rc -le 192 ]; then
		echo "test_must_fail: command died of signal $((rc - 128)): $*" >&2
		return 1
	fi
	return 0
}

# wait_until SECONDS CMD...: runs CMD every 0.1 s until it succeeds, or fails after SECONDS (said on stderr).
# For a test to wait for the condition it needs, never for a guessed time: a loaded machine (other jobs on two
# cores) can make any step seconds slower. SECONDS bounds a hang only: it is no timing check.
wait_until() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		if [ $SECONDS -ge $end ]; then
			echo "wait_until: still false after the bound: $*" >&2
			return 1
		fi
		sleep 0.1
	done
}

# samples_in N FILE: FILE, a recording being written, holds at least N samples already (what the recorder has
# flushed so far). Tests act on a running recording (signal the recorder, end its target) once it has something
# to keep, rather than after a guessed time: on a loaded machine the BPF load alone took longer than their sleeps.
samples_in() {
	stackrec info "$2" 2>/dev/null | awk -v n="$1" '$1 == "samples" { s = $2 } END { exit !(s >= n) }'
}

# test_line_count FILE OP N: wc -l FILE satisfies OP N (e.g. = 3, -gt 0).
test_line_count() {
	local n
	n=$(wc -l <"$1")
	if ! [ "$n" "$2" "$3" ]; then
		echo "test_line_count: $1 has $n lines, expected $2 $3" >&2
		return 1
	fi
}

_test_run() {
	local prereqs= title body
	if [ $# -eq 3 ]; then prereqs=$1; shift; fi
	title=$1 body=$2
	test_count=$((test_count + 1))
	local p
	for p in ${prereqs//,/ }; do
		if [ -z "${test_prereq_ok[$p]:-}" ]; then
			# On CI every tool a test needs is installed by `make check`: a missing one is a failure there,
			# never a skip. (Mode switches such as SANITIZE are never unset with a reason: they still skip.)
			if [ "${CI:-}" = true ] && [ -n "${test_prereq_why[$p]:-}" ]; then
				test_failed=$((test_failed + 1))
				say "not ok $test_count - $title (missing $p on CI: ${test_prereq_why[$p]})"
				return
			fi
			test_skipped=$((test_skipped + 1))
			say "ok $test_count # skip $title (missing $p: ${test_prereq_why[$p]:-not available})"
			return
		fi
	done
	if (eval "$body") >"$TEST_DIR/.log" 2>&1 </dev/null; then
		say "ok $test_count - $title"
		[ -n "${TEST_VERBOSE:-}" ] && sed 's/^/#   /' "$TEST_DIR/.log"
	else
		test_failed=$((test_failed + 1))
		say "not ok $test_count - $title"
		sed 's/^/#   /' "$TEST_DIR/.log"
	fi
	return 0
}

test_expect_success() { _test_run "$@"; }

# test_unit_tap BINARY [ARGS...]: runs a unit test binary that prints TAP (tests/unit/*.c) and reports each of
# its tests as one of this script's, renumbered; its own plan line is dropped and its comments kept. A binary
# that is missing, dies of a signal, exits non-zero without a failed test, or prints fewer tests than its plan
# adds one failed test. Its stderr is shown only when something failed (or with TEST_VERBOSE).
test_unit_tap() {
	local bin=$1 name rc line plan= seen=0 failed=0
	shift
	name=$(basename "$bin")
	if [ ! -x "$bin" ]; then
		test_count=$((test_count + 1)) test_failed=$((test_failed + 1))
		say "not ok $test_count - $name (no such unit test binary: $bin; run make unit-tests)"
		return 0
	fi
	"$bin" "$@" >"$TEST_DIR/.unit.out" 2>"$TEST_DIR/.unit.err" </dev/null
	rc=$?
	while IFS= read -r line; do
		if [[ $line =~ ^(ok|not\ ok)\ [0-9]+(.*)$ ]]; then
			test_count=$((test_count + 1)) seen=$((seen + 1))
			say "${BASH_REMATCH[1]} $test_count${BASH_REMATCH[2]}"
			if [ "${BASH_REMATCH[1]}" = "not ok" ]; then
				test_failed=$((test_failed + 1)) failed=$((failed + 1))
			elif [[ ${BASH_REMATCH[2]} =~ ^\ *#\ *[Ss][Kk][Ii][Pp] ]]; then
				test_skipped=$((test_skipped + 1))
			fi
		elif [[ $line =~ ^1\.\.([0-9]+) ]]; then
			plan=${BASH_REMATCH[1]}
		elif [[ $line == \#* ]]; then
			say "$line"
		else
			say "# $line"
		fi
	done <"$TEST_DIR/.unit.out"
	if [ $rc -ne 0 ] && [ $failed -eq 0 ] || [ "$plan" != "$seen" ]; then
		test_count=$((test_count + 1)) test_failed=$((test_failed + 1))
		if [ $rc -gt 128 ]; then
			say "not ok $test_count - $name died of signal $((rc - 128)) after $seen tests"
		else
			say "not ok $test_count - $name exited $rc after $seen of ${plan:-?} planned tests"
		fi
		failed=$((failed + 1))
	fi
	if [ $failed -ne 0 ] || [ -n "${TEST_VERBOSE:-}" ]; then
		sed 's/^/#   /' "$TEST_DIR/.unit.err"
	fi
	return 0
}

test_done() {
	say "1..$test_count"
	say "# $TEST_NAME: $((test_count - test_failed - test_skipped)) passed, $test_failed failed, $test_skipped skipped"
	cd / && [ $test_failed -eq 0 ] && rm -rf "$TEST_DIR"
	[ $test_failed -eq 0 ]
	exit $?
}

# Prerequisites every script may use.
if [ "$(id -u)" -eq 0 ]; then test_set_prereq ROOT; else test_unset_prereq ROOT "not running as root"; fi
# BPF: root, and the kernel lets us load a BPF program. On CI (CI=true) BPF must work: no skipping.
if [ "$(id -u)" -ne 0 ]; then
	test_unset_prereq BPF "recording needs root (CAP_BPF and CAP_PERFMON)"
elif [ ! -r /sys/kernel/btf/vmlinux ]; then
	test_unset_prereq BPF "kernel has no BTF (/sys/kernel/btf/vmlinux)"
else
	test_set_prereq BPF
fi
if [ "${CI:-}" = true ] && [ -z "${test_prereq_ok[BPF]:-}" ]; then
	echo "Bail out! CI must be able to run BPF tests: ${test_prereq_why[BPF]}"
	exit 1
fi
if [ "${SANITIZE:-}" = 1 ]; then test_set_prereq SANITIZE; else test_set_prereq NO_SANITIZE; fi

# fuzz_prereq: for the libFuzzer tests. Sets CLANG, FUZZ_SECONDS (default 20) and BUILD_DIR (where make puts
# fuzz targets: the directory above $UNIT_DIR), and the prerequisite FUZZER when clang can link
# -fsanitize=fuzzer (clang's libFuzzer runtime, Debian's libclang-rt-14-dev).
# Synthetic recordings of programs compiled by a test (tests/unit/test-convert.c "write OUT <script"), with
# instruction pointers from nm and objdump, at load address $BASE (the test sets it).
write_rec() { "$UNIT_DIR/test-convert" write "$@"; }
# The script (for write_rec) of a recording made under this kernel's release with $1 samples in a [vdso] mapping
# without a build ID, at __vdso_clock_gettime + 4 of the running kernel's vDSO (left in vdso.so; its offset of
# the function in $sym).
vdso_script() {
	"$UNIT_DIR/test-convert" dump-vdso vdso.so &&
	sym=$(nm -D vdso.so | awk '{ sub(/@.*/, "", $3) } $3 == "__vdso_clock_gettime" { print $1 }') &&
	test -n "$sym" &&
	echo "host kernel_release=$(uname -r)" &&
	echo "mapping 500 7f0000000000 7f0000002000 0 [vdso] - 1" &&
	for _ in $(seq 1 "$1"); do printf "sample 500 500 t 10 %x -\n" $((0x7f0000000000 + 0x$sym + 4)); done &&
	echo end
}

# vaddr SYMBOL [PROGRAM]: link-time address of SYMBOL as hex without 0x.
vaddr() { nm "${2:-prog}" | awk -v s="$1" '$3 == s { print $1 }'; }
# ret_after_call CALLER CALLEE [PROGRAM]: the return address of CALLER's call to CALLEE.
ret_after_call() {
	objdump -d --no-show-raw-insn "${3:-prog}" | awk -v caller="<$1>:" -v callee="<$2>" '
		$2 == caller { inside = 1; next }
		inside && /^$/ { inside = 0 }
		inside && want { sub(":", "", $1); print $1; exit }
		inside && $2 == "call" && $4 == callee { want = 1 }'
}
# runtime ADDR: hex address in the process, for the mapping written by text_mapping.
runtime() { printf '%x' $((BASE + 0x$1)); }
# text_mapping PID PROGRAM BUILD_ID TIME: the MAPPING line of PROGRAM's executable segment at BASE.
text_mapping() {
	local type off va pa filesz memsz flags rest
	readelf -lW "$2" | while read -r type off va pa filesz memsz flags rest; do
		[ "$type" = LOAD ] && [[ "$flags $rest" == *E* ]] || continue
		printf "mapping %s %x %x %x %s %s %s\n" "$1" $((BASE + va - va % 4096)) $((BASE + va + filesz)) \
			$((off - off % 4096)) "$PWD/$2" "$3" "$4"
	done
}
build_id() { readelf -n "$1" | awk '/Build ID/ { print $3 }'; }

# keep_debug_only FILE DIR: DIR/.build-id/xx/rest.debug, the debug file of FILE alone (objcopy
# --only-keep-debug: program headers kept, loadable segments without bytes), as libc6-dbg ships them.
keep_debug_only() {
	local id
	id=$(build_id "$1") && [ -n "$id" ] &&
	mkdir -p "$2/.build-id/${id:0:2}" &&
	objcopy --only-keep-debug "$1" "$2/.build-id/${id:0:2}/${id:2}.debug"
}

fuzz_prereq() {
	CLANG=${CLANG:-clang}
	FUZZ_SECONDS=${FUZZ_SECONDS:-20}
	BUILD_DIR=$(cd "$UNIT_DIR/.." 2>/dev/null && pwd || echo "$SRC_DIR/build")
	printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
		'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }' >probe.c
	if ! command -v "$CLANG" >/dev/null; then
		test_unset_prereq FUZZER "no $CLANG"
	elif "$CLANG" -fsanitize=fuzzer,address,undefined probe.c -o probe 2>probe.err; then
		test_set_prereq FUZZER
	else
		test_unset_prereq FUZZER "$CLANG cannot link -fsanitize=fuzzer: clang's libFuzzer runtime is not installed (apt-get install libclang-rt-14-dev)"
	fi
}
