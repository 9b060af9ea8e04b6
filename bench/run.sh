#!/bin/bash
# run.sh — `make bench`: measures stackrec against perf, side by side in one run, and prints one table:
#
#   A. record cost: slowdown of a CPU-bound C workload under each profiler and mode, samples, lost samples,
#      bytes per sample;
#   B. convert speed: samples per second of `stackrec convert -f folded` against perf's own ways to fold;
#   C. stack completeness: how often stacks of Debian's programs built without frame pointers (python3, xz,
#      sqlite3) and of a gcc -O2 C program reach their root, mean depth, share with an [unknown] frame;
#   D. off-CPU cost: slowdown of a context-switch-heavy target under record --off-cpu, samples, lost.
#   E. probe cost: slowdown of a target whose function is called about a million times a second under
#      record --probe on that function, hits per second, lost hits;
#   F. symbolize speed and correctness: addresses/s and peak memory of `stackrec symbolize` (symbol cache
#      cold, warm, off) against addr2line, llvm-symbolizer and eu-addr2line on libc (libc6-dbg), libbfd
#      (libbinutils-dbg), the assembler (binutils-x86-64-linux-gnu-dbg, dwz), a Go and a C++ program; the
#      share of addresses named and with lines, agreement with llvm-symbolizer and eu-addr2line.
#
# A benchmark, not a test: it never fails on a number. It writes the table, with the machine it ran on,
# between the bench markers of docs/performance.md (which explains every column).
#
# Usage (as root): bench/run.sh
#   STACKREC=PATH     the stackrec to measure (default: ./stackrec beside bench/)
#   BENCH_QUICK=1     about 2 minutes instead of 11 to 13: 999 Hz only, shorter workloads
#   BENCH_DOC=FILE    write the table there instead of docs/performance.md ('-': nowhere)
#   PYTHON=PATH       the python3 to profile in C (default /usr/bin/python3, Debian's, not a pyenv shim)
#   BENCH_SECTIONS="A B C D E F"  run only these sections (default all); the table then has only those
# Modes that this stackrec cannot record (`record --call-graph` missing from its --help) are reported as
# "n/a (not supported by this build)"; the current default is measured as "fp".
set -eu
set -o pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
stackrec=${STACKREC:-$root/stackrec}
quick=${BENCH_QUICK:-0}
doc=${BENCH_DOC:-$root/docs/performance.md}
python=${PYTHON:-/usr/bin/python3}
sections=${BENCH_SECTIONS:-A B C D E F}
want() { case " $sections " in *" $1 "*) return 0 ;; esac; return 1; }
NA="n/a (not supported by this build)"

die() {
	echo "bench: error: $*" >&2
	exit 1
}
note() { echo "bench: $*" >&2; }

# --- what is needed -------------------------------------------------------------------------------------

[ "$(id -u)" -eq 0 ] || die "recording with eBPF and perf needs root: run 'sudo make bench'"
# absolute paths: the run happens in its temporary directory
case $stackrec in /*) ;; *) stackrec=$PWD/$stackrec ;; esac
case $doc in - | /*) ;; *) doc=$PWD/$doc ;; esac
case $python in /*) ;; */*) python=$PWD/$python ;; *) python=$(command -v "$python" || echo "$python") ;; esac
[ -x "$stackrec" ] || die "no stackrec at '$stackrec' (build it with 'make', or set STACKREC=PATH)"
need() {
	command -v "$1" >/dev/null 2>&1 || die "'$1' not found: install the Debian package $2 (make bench installs it)"
}
need perf linux-perf
need gcc gcc
need xz xz-utils
need sqlite3 sqlite3
need timeout coreutils
need awk mawk
need readelf binutils
[ -x /usr/bin/time ] || die "'/usr/bin/time' not found: install the Debian package time (make bench installs it)"
node=$(command -v node || command -v nodejs || true) # optional: B's JIT workload
[ -x "$python" ] || die "no python3 at '$python': install the Debian package python3 (or set PYTHON=PATH)"
# Without libc's symbol table neither profiler can name __libc_start_call_main (a local symbol).
dpkg-query -W -f='${Status}' libc6-dbg 2>/dev/null | grep -q 'ok installed' ||
	die "libc6-dbg is not installed: without it __libc_start_call_main has no name (make bench installs it)"
# F symbolizes libbfd and the assembler with their debug files (dwz-compressed, with an alternate file), and
# programs of its own in Go and C++.
if want F; then
	need g++ g++
	need go golang-go
	for p in libbinutils-dbg binutils-x86-64-linux-gnu-dbg; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
			die "$p is not installed: F symbolizes with its debug file (make bench installs it)"
	done
fi

# The table goes between these two lines of the doc; checked now rather than after the run.
doc_markers() {
	if ! grep -q '^<!-- bench:begin -->$' "$doc" || ! grep -q '^<!-- bench:end -->$' "$doc"; then
		die "'$doc' has no '<!-- bench:begin -->' and '<!-- bench:end -->' lines to write the table between"
	fi
}
if [ "$doc" != - ] && [ -e "$doc" ]; then
	doc_markers
fi

if "$stackrec" record --help 2>&1 | grep -q -- --call-graph; then
	sr_dwarf=1
	sr_fp_opts=(--call-graph fp)
else
	sr_dwarf=0
	sr_fp_opts=()
fi

if [ "$quick" = 1 ]; then
	freqs="999"
	a_thread_freqs="999" # A again with the work in a second thread
	reps=3
	a_seconds=0.5 # the workload's unprofiled run time in A
	b_seconds=3   # ... in B: long enough that the conversion's start-up (opening libc's debug file) is not all
	c_seconds=3   # how long each workload in C is recorded
	node_seconds=3 # B's node workload
	text_mb=10
else
	freqs="99 999 4999"
	a_thread_freqs="999 4999"
	reps=5
	a_seconds=1
	b_seconds=10  # about 50,000 samples: a profile, not a start-up time
	c_seconds=8
	node_seconds=8 # about 8,000 samples at node_hz; perf's dwarf recording of it is about 70 MB
	text_mb=50
fi
b_hz=4999
node_hz=999
c_hz=999

work=$(mktemp -d "${TMPDIR:-/tmp}/stackrec-bench.XXXXXX")
cleanup() { rm -rf "$work"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
cd "$work"
# stackrec's build-ID cache and perf's build-ID directory are private to this run: nothing in ~ changes.
export STACKREC_CACHE_DIR=$work/stackrec-cache
perf_top=(--buildid-dir "$work/perf-buildid")
sr_event=""
perf_event=""
started=$(date +%s)

# --- helpers --------------------------------------------------------------------------------------------

now_ns() { date +%s%N; }

# median of the numbers on stdin (one a line); '-' when there are none
median() {
	sort -g | awk '{ v[NR] = $1 } END {
		if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# perf record, retried when perf aborts after recording. perf 6.1 can fail with
# `assertion failed at util/build-id.c:1010` and then `stack smashing detected` (SIGABRT): on a stale
# build-ID cache, and on a shared VM intermittently, about every other run, with a fresh --buildid-dir and
# with -N too (an oversized build ID somewhere; not pinned down). The target has run to its end by then (its
# own timing stands), but perf.data is unusable. Retried
# up to 12 times: from the 2nd attempt with a fresh --buildid-dir, from the 3rd also with -N (no build-ID
# cache). Not -B (no build IDs at all): perf script then reads the build notes of the binaries itself and
# aborts every time on node's and libc's (annobin's .gnu.build.attributes). Every abort is counted and
# reported with the table.
# Usage: perf_record DATA LOG RECORD-ARGS... -- COMMAND...
perf_aborts=0
perf_aborts_n=0
perf_record() {
	local data=$1 log=$2 rc attempt topopts recopts
	shift 2
	topopts=("${perf_top[@]}")
	recopts=()
	for attempt in 1 2 3 4 5 6 7 8 9 10 11 12; do
		rm -f "$data"
		rc=0
		# in a subshell, so that the shell's "Aborted" line goes to the log too
		(perf "${topopts[@]}" record "${recopts[@]}" -o "$data" "$@" || exit) >/dev/null 2>"$log" || rc=$?
		if grep -q 'assertion failed' "$log" || [ "$rc" -eq 134 ]; then
			perf_aborts=$((perf_aborts + 1))
			[ "${#recopts[@]}" -eq 0 ] || perf_aborts_n=$((perf_aborts_n + 1))
			note "perf record aborted ($(grep -m1 'assertion failed' "$log" || echo "exit $rc")), attempt $attempt; retrying"
			topopts=(--buildid-dir "$work/perf-buildid.$perf_aborts")
			[ "$attempt" -lt 2 ] || recopts=(-N)
			continue
		fi
		[ -s "$data" ] || die "perf record wrote no '$data' (exit $rc): $(tail -n 3 "$log")"
		return 0
	done
	die "perf record aborted 12 times in a row: $(tail -n 3 "$log")"
}

# perf_tool LOG OUT PERF-ARGS...: perf "${perf_top[@]}" PERF-ARGS > OUT, retried like perf_record when it
# aborts; sets T_NS to the wall time of the attempt that succeeded. With PERF_SOFT=1 it returns 1 after the
# last abort instead of ending the bench (B's node rows then say perf failed).
perf_tool() {
	local log=$1 outf=$2 attempt rc t0
	shift 2
	for attempt in 1 2 3 4 5; do
		rc=0
		t0=$(now_ns)
		(perf "${perf_top[@]}" "$@" || exit) >"$outf" 2>>"$log" || rc=$?
		T_NS=$(($(now_ns) - t0))
		if [ "$rc" -eq 134 ] || tail -n 5 "$log" | grep -q 'assertion failed'; then
			perf_aborts=$((perf_aborts + 1))
			note "perf $1 aborted, attempt $attempt; retrying"
			continue
		fi
		[ "$rc" -eq 0 ] || die "perf $* failed (exit $rc): $(tail -n 3 "$log")"
		return 0
	done
	[ "${PERF_SOFT:-0}" = 1 ] && return 1
	die "perf $1 aborted 5 times in a row: $(tail -n 3 "$log")"
}

# Samples and lost samples of a perf.data: from the per-event block of `perf report --stats`
# (SAMPLE events; LOST_SAMPLES events there are the samples the kernel dropped, summed over the
# PERF_RECORD_LOST records).
perf_counts() {
	perf_tool "$1.log" "$1.stats" report -i "$1" --stats
	awk '
		/stats:$/ && !/^Aggregated/ { per_event = 1; next }
		per_event && $1 == "SAMPLE" { s += $3 }
		per_event && $1 == "LOST_SAMPLES" { l += $3 }
		END { print s + 0, l + 0 }' "$1.stats"
}

# Samples and lost samples of a stackrec recording: from record's summary line
# "stackrec: recorded N samples ... (L lost, ...)", else from `stackrec info`.
stackrec_counts() {
	local rec=$1 log=$2 line
	line=$(sed -n 's/^stackrec: recorded \([0-9][0-9]*\) samples.*(\([0-9][0-9]*\) lost.*/\1 \2/p' "$log" | tail -n 1)
	if [ -z "$line" ]; then
		line=$("$stackrec" info "$rec" 2>/dev/null | awk '
			$1 == "samples" && $2 ~ /^[0-9]+$/ { s = $2 }
			$1 == "lost" && $2 == "samples" { l = $3 }
			END { print s + 0, l + 0 }')
	fi
	echo "$line"
}

mode_label() {
	case $1 in
	sr-fp) echo "stackrec fp" ;;
	sr-dwarf) echo "stackrec dwarf" ;;
	perf-fp) echo "perf -g" ;;
	perf-dwarf) echo "perf dwarf" ;;
	esac
}

mode_supported() { [ "$1" != sr-dwarf ] || [ "$sr_dwarf" = 1 ]; }

# Records COMMAND in MODE at HZ into OUT; sets R_SAMPLES, R_LOST, R_BYTES.
# Usage: record_mode MODE HZ OUT -- COMMAND...
record_mode() {
	local mode=$1 hz=$2 out=$3 counts
	shift 4
	case $mode in
	sr-fp | sr-dwarf)
		local opts=("${sr_fp_opts[@]}")
		[ "$mode" = sr-fp ] || opts=(--call-graph dwarf)
		"$stackrec" record "${opts[@]}" -F "$hz" -o "$out" -- "$@" >/dev/null 2>"$out.log" ||
			die "stackrec record failed: $(tail -n 3 "$out.log")"
		counts=$(stackrec_counts "$out" "$out.log")
		[ -n "$sr_event" ] || sr_event=$("$stackrec" info "$out" 2>/dev/null | awk '$1 == "event" { print $2 }')
		;;
	perf-fp)
		perf_record "$out" "$out.log" -F "$hz" -g -- "$@"
		counts=$(perf_counts "$out")
		if [ -z "$perf_event" ]; then
			perf_tool "$out.log" "$out.evlist" evlist -i "$out"
			perf_event=$(head -n 1 "$out.evlist")
		fi
		;;
	perf-dwarf)
		perf_record "$out" "$out.log" -F "$hz" --call-graph dwarf -- "$@"
		counts=$(perf_counts "$out")
		;;
	esac
	R_SAMPLES=${counts% *}
	R_LOST=${counts#* }
	R_BYTES=$(stat -c %s "$out")
}

# Folded stacks of a recording, to stdout.
fold() {
	case $1 in
	sr-*) "$stackrec" convert "$2" -f folded 2>>"$2.log" ;;
	perf-*)
		perf_tool "$2.log" "$2.script" script -i "$2" -F comm,tid,ip,sym,dso
		awk -f "$here/fold-perf.awk" "$2.script"
		;;
	esac
}

# --- workloads ------------------------------------------------------------------------------------------

note "workloads in $work"
gcc -O2 -g -fno-omit-frame-pointer -pthread -o "$work/cpu-fp" "$here/workloads/cpu.c"
gcc -O2 -g -pthread -o "$work/cpu" "$here/workloads/cpu.c"

# Calibrate A's fixed amount of work to about a_seconds of unprofiled run time.
"$work/cpu-fp" 50000 "$work/calib" >/dev/null
a_iter=$(awk -v s="$a_seconds" '{ n = int(50000 * s * 1e9 / $1); print (n < 1000 ? 1000 : n) }' "$work/calib")
b_iter=$(awk -v a="$a_iter" -v as="$a_seconds" -v bs="$b_seconds" 'BEGIN { print int(a * bs / as) }')

modes="sr-fp sr-dwarf perf-fp perf-dwarf"
table=$work/table.txt
: >"$table"
# out FORMAT ARGS...: append to the table (FORMAT is always a literal at the call site)
# shellcheck disable=SC2059
out() { printf "$@" >>"$table"; }

# --- A. record cost -------------------------------------------------------------------------------------
if want A; then

# a_measure TAG: A's runs, into $work/a/TAG-HZ-MODE.*; with TAG thread the work loop runs in a second thread.
a_measure() {
	local tag=$1 hz round k mode
	if [ "$tag" = thread ]; then export CPU_IN_THREAD=1; else unset CPU_IN_THREAD; fi
	for hz in $a_freqs; do
		for round in $(seq 1 "$reps"); do
			for k in $(seq 0 $((${#a_order[@]} - 1))); do
				mode=${a_order[$(((k + round - 1) % ${#a_order[@]}))]}
				if [ "$mode" = base ]; then
					"$work/cpu-fp" "$a_iter" "$work/a/time" >/dev/null
				else
					record_mode "$mode" "$hz" "$work/a/rec" -- "$work/cpu-fp" "$a_iter" "$work/a/time"
					echo "$R_SAMPLES $R_LOST $R_BYTES" >>"$work/a/$tag-$hz-$mode.counts"
					rm -f "$work/a/rec" "$work/a/rec".*
				fi
				cut -d' ' -f1 "$work/a/time" >>"$work/a/$tag-$hz-$mode.wall"
				cut -d' ' -f2 "$work/a/time" >>"$work/a/$tag-$hz-$mode.cpu"
			done
		done
	done
	unset CPU_IN_THREAD
}

# a_table TAG: A's rows of the runs a_measure TAG made.
a_table() {
	local tag=$1 hz mode base base_cpu slow slow_cpu samples lost bps vs other
	out '  %5s  %-15s %9s %9s %8s %6s %12s %13s\n' Hz profiler slowdown "(cpu)" samples lost bytes/sample "size vs perf"
	for hz in $a_freqs; do
		base=$(median <"$work/a/$tag-$hz-base.wall")
		base_cpu=$(median <"$work/a/$tag-$hz-base.cpu")
		for mode in $modes; do
			mode_supported "$mode" || continue
			{
				median <"$work/a/$tag-$hz-$mode.wall" | awk -v b="$base" '{ printf "%.3fx ", $1 / b }'
				median <"$work/a/$tag-$hz-$mode.cpu" | awk -v b="$base_cpu" '{ printf "%.3fx ", $1 / b }'
				cut -d' ' -f1 "$work/a/$tag-$hz-$mode.counts" | median | tr '\n' ' '
				awk '{ l += $2; b += $3; s += $1 } END { printf "%d %.1f\n", l, s ? b / s : 0 }' "$work/a/$tag-$hz-$mode.counts"
			} >"$work/a/$tag-$hz-$mode.sum"
		done
		for mode in $modes; do
			if ! mode_supported "$mode"; then
				out '  %5s  %-15s %s\n' "$hz" "$(mode_label "$mode")" "$NA"
				continue
			fi
			read -r slow slow_cpu samples lost bps <"$work/a/$tag-$hz-$mode.sum"
			vs=-
			case $mode in sr-*) other=$work/a/$tag-$hz-perf-${mode#sr-}.sum ;; *) other= ;; esac
			if [ -n "$other" ] && [ -f "$other" ]; then
				vs=$(awk -v a="$bps" '{ r = $5 ? a / $5 : 0; printf(r >= 0.01 ? "%.2fx" : "%.2gx", r) }' "$other")
			fi
			out '  %5s  %-15s %9s %9s %8s %6s %12s %13s\n' "$hz" "$(mode_label "$mode")" "$slow" "$slow_cpu" "$samples" "$lost" "$bps" "$vs"
		done
	done
}

note "A. record cost: $a_iter iterations of cpu-fp, $reps runs per mode at $freqs Hz, then in a thread at $a_thread_freqs Hz"
mkdir -p "$work/a"
# Round r starts at the r-th entry of (unprofiled, the profilers): in a fixed order each profiler ran after
# the same one every round (stackrec fp right after the unprofiled run, perf -g after stackrec dwarf), and
# whatever one run leaves behind (perf's build-ID pass, a dirty page cache, a cooled CPU) weighed on the
# next one alike every time; rotated, every entry takes every place once in as many rounds as there are.
a_order=(base)
for mode in $modes; do
	if mode_supported "$mode"; then a_order+=("$mode"); fi
done
a_freqs=$freqs a_measure main
a_freqs=$a_thread_freqs a_measure thread

base_all=$(cat "$work"/a/main-*-base.wall | median)
out 'A. Record cost: cpu-fp (gcc -O2 -fno-omit-frame-pointer), %s iterations, unprofiled %.2f s (median)\n' \
	"$a_iter" "$(awk -v n="$base_all" 'BEGIN { print n / 1e9 }')"
out '   slowdown = median wall time of the work loop profiled / unprofiled, %s runs each, interleaved, each round\n' "$reps"
out '   starting at the next (cpu: the same with the process CPU time); samples = median; lost = sum over the runs;\n'
out '   bytes/sample = file bytes / samples over the runs; size vs perf = bytes/sample / perf'"'"'s, same mode\n\n'
a_freqs=$freqs a_table main
out '\n   the same work in a second thread (CPU_IN_THREAD=1; the main thread waits in pthread_join):\n\n'
a_freqs=$a_thread_freqs a_table thread
out '\n'

fi

# --- B. convert speed -----------------------------------------------------------------------------------
if want B; then

note "B. convert speed: $b_iter iterations of cpu-fp recorded at $b_hz Hz; node for ${node_seconds} s"
mkdir -p "$work/b"
out 'B. Convert speed: samples/s = samples / median wall time of %s conversions to folded stacks, to /dev/null;\n' "$reps"
out '   each workload recorded once by each tool and mode:\n'
out '   cpu-fp: %s iterations at %s Hz; node: bench/workloads/work.js (JIT, --perf-basic-prof) for %s s at %s Hz,\n' \
	"$b_iter" "$b_hz" "$node_seconds" "$node_hz"
out '   perf script and report --no-inline for node (docs/performance.md);\n'
out '   stackrec first: its symbol and profile caches and decompressed debug files emptied (a first conversion on\n'
out '   the machine);\n'
out '   cold: the symbol and profile caches emptied (a new recording of binaries converted before); warm: the same\n'
out '   again (the samples read from the profile cache the run before kept, the names from the symbol cache);\n'
out '   read = stackrec info of the recording (every block decompressed and every sample parsed), warm/read =\n'
out '   median warm time / median read time; stackrec vs perf script = first / perf script + fold\n\n'
out '  %-14s %9s %17s %12s %12s %12s %9s   %9s %17s %15s %15s\n' "" "stackrec" "stackrec convert" "" "" "" "" "perf" "perf script" "perf report" "stackrec vs"
out '  %-14s %9s %17s %12s %12s %12s %9s   %9s %17s %15s %15s\n' "workload mode" samples "-f folded first" "cold" "warm" "read" "warm/read" samples "+ fold" "-g folded" "perf script"
# rate SAMPLES FILE-OF-NS: samples per second at the median time
rate() { median <"$2" | awk -v s="$1" '{ printf "%.0f/s", s / ($1 / 1e9) }'; }
# b_workload LABEL HZ PERF-OPTS -- COMMAND...: one row per call-graph mode; PERF-OPTS go to perf script and
# perf report
b_workload() {
	local label=$1 hz=$2 perf_opts=$3 cg tool mode rec ps ss script_rate report_rate convert_rate warm_rate ratio
	local read_rate warm_vs_read cold_rate
	shift 4
	for cg in fp dwarf; do
		for tool in sr perf; do
			mode=$tool-$cg
			mode_supported "$mode" || continue
			rec=$work/b/$label-$mode.data
			record_mode "$mode" "$hz" "$rec" -- "$@"
			echo "$R_SAMPLES" >"$work/b/$label-$mode.samples"
			for _ in $(seq 1 "$reps"); do
				if [ "$tool" = sr ]; then
					# first: the symbol cache, the profile cache and the decompressed debug files emptied, as a
					# first conversion on this machine; cold: the symbol and profile caches emptied, as a new
					# recording of the same binaries (the decompressed copies kept, as F's cold); warm: the
					# same conversion again (the profile cache has what the one before made of the samples)
					rm -rf "$STACKREC_CACHE_DIR/decompressed"
					for pass in convert cold warm; do
						[ "$pass" = warm ] || rm -rf "$STACKREC_CACHE_DIR/symbols" "$STACKREC_CACHE_DIR/profiles"
						t0=$(now_ns)
						"$stackrec" convert "$rec" -f folded -o /dev/null 2>>"$rec.log" ||
							die "stackrec convert failed: $(tail -n 3 "$rec.log")"
						echo $(($(now_ns) - t0)) >>"$work/b/$label-$mode.$pass"
					done
					# read: what reading the recording alone costs, the floor a warm conversion is held to
					t0=$(now_ns)
					"$stackrec" info "$rec" >/dev/null 2>>"$rec.log" ||
						die "stackrec info failed: $(tail -n 3 "$rec.log")"
					echo $(($(now_ns) - t0)) >>"$work/b/$label-$mode.read"
				else
					# perf script into a file, then the folding step; the two times summed
					# shellcheck disable=SC2086 # perf_opts: words
					if PERF_SOFT=1 perf_tool "$rec.log" "$rec.script" script -i "$rec" -F comm,tid,ip,sym,dso $perf_opts; then
						t0=$(now_ns)
						awk -f "$here/fold-perf.awk" "$rec.script" >/dev/null
						echo $((T_NS + $(now_ns) - t0)) >>"$work/b/$label-$mode.script"
					fi
					rm -f "$rec.script"
					# shellcheck disable=SC2086 # perf_opts: words
					PERF_SOFT=1 perf_tool "$rec.log" /dev/null report -i "$rec" --stdio --no-children -g folded,0,caller,count $perf_opts &&
						echo "$T_NS" >>"$work/b/$label-$mode.report"
				fi
			done
			rm -f "$rec" "$rec".*
		done
		ps=$(cat "$work/b/$label-perf-$cg.samples")
		script_rate=aborted report_rate=aborted
		[ ! -s "$work/b/$label-perf-$cg.script" ] || script_rate=$(rate "$ps" "$work/b/$label-perf-$cg.script")
		[ ! -s "$work/b/$label-perf-$cg.report" ] || report_rate=$(rate "$ps" "$work/b/$label-perf-$cg.report")
		if mode_supported "sr-$cg"; then
			ss=$(cat "$work/b/$label-sr-$cg.samples")
			convert_rate=$(rate "$ss" "$work/b/$label-sr-$cg.convert")
			cold_rate=$(rate "$ss" "$work/b/$label-sr-$cg.cold")
			warm_rate=$(rate "$ss" "$work/b/$label-sr-$cg.warm")
			read_rate=$(rate "$ss" "$work/b/$label-sr-$cg.read")
			warm_vs_read=$(awk -v w="$(median <"$work/b/$label-sr-$cg.warm")" -v r="$(median <"$work/b/$label-sr-$cg.read")" \
				'BEGIN { printf "%.2fx", r ? w / r : 0 }')
			ratio=-
			[ "$script_rate" = aborted ] ||
				ratio=$(awk -v a="${convert_rate%/s}" -v b="${script_rate%/s}" 'BEGIN { printf "%.2fx", b ? a / b : 0 }')
		else
			ss=n/a convert_rate="n/a" cold_rate=n/a warm_rate=n/a read_rate=n/a warm_vs_read=n/a ratio=n/a
		fi
		out '  %-14s %9s %17s %12s %12s %12s %9s   %9s %17s %15s %15s\n' "$label $cg" "$ss" "$convert_rate" "$cold_rate" \
			"$warm_rate" "$read_rate" "$warm_vs_read" "$ps" "$script_rate" "$report_rate" "$ratio"
	done
}
b_workload cpu-fp "$b_hz" "" -- "$work/cpu-fp" "$b_iter"
if [ -n "$node" ]; then
	# node writes /tmp/perf-PID.map for its JIT code (both tools read it); the maps of this run are removed.
	touch "$work/b/node-start"
	# --no-inline: with dwarf call chains perf script and report otherwise ask addr2line about every address of
	# node's 98 MB binary, which has no DWARF to find inlined frames in: over ten minutes for 3,000 samples.
	b_workload node "$node_hz" --no-inline -- "$node" --perf-basic-prof "$here/workloads/work.js" "$node_seconds"
	find /tmp -maxdepth 1 -name 'perf-*.map' -type f -newer "$work/b/node-start" -delete
else
	out '  %-14s node not installed (Debian package nodejs)\n' node
fi
[ "$sr_dwarf" = 1 ] || out '  dwarf: stackrec %s\n' "$NA"
out '\n'

fi

# --- C. stack completeness ------------------------------------------------------------------------------
if want C; then

note "C. stack completeness: python3, xz -9, sqlite3, cpu; ${c_seconds} s each at $c_hz Hz"
mkdir -p "$work/c"
"$python" "$here/workloads/gen-text.py" "$text_mb" >"$work/c/text"
out 'C. Stack completeness: each workload recorded for %s s at %s Hz (timeout %s), its own samples only;\n' "$c_seconds" "$c_hz" "$c_seconds"
out '   root = __libc_start_call_main (main for cpu); depth = user frames; [unknown] = a user frame in no mapping\n\n'
out '  %-8s  %-15s %9s %9s %9s %10s\n' workload profiler samples "reach root" "mean depth" "[unknown]"
c_workload() { # c_workload LABEL COMM ROOT -- COMMAND...
	local label=$1 comm=$2 rootf=$3 mode stats
	shift 4
	note "  $label"
	for mode in sr-fp sr-dwarf perf-dwarf; do
		if ! mode_supported "$mode"; then
			out '  %-8s  %-15s %s\n' "$label" "$(mode_label "$mode")" "$NA"
			continue
		fi
		record_mode "$mode" "$c_hz" "$work/c/rec" -- timeout "$c_seconds" "$@"
		fold "$mode" "$work/c/rec" >"$work/c/folded" || die "folding '$mode' failed: $(tail -n 3 "$work/c/rec.log")"
		stats=$(awk -v comm="$comm" -v root="$rootf" -f "$here/stack-stats.awk" "$work/c/folded")
		read -r s pct depth unk <<<"$stats"
		out '  %-8s  %-15s %9s %9s%% %10s %9s%%\n' "$label" "$(mode_label "$mode")" "$s" "$pct" "$depth" "$unk"
		rm -f "$work/c/rec" "$work/c/rec".* "$work/c/text.xz"
	done
}
c_workload python3 python3 __libc_start_call_main -- "$python" "$here/workloads/loop.py" 4000000000
c_workload xz xz __libc_start_call_main -- xz -9 -T1 -k -f "$work/c/text"
c_workload sqlite3 sqlite3 __libc_start_call_main -- sqlite3 :memory: ".read $here/workloads/join.sql"
c_workload cpu cpu main -- "$work/cpu" 1000000000000
out '\n'

fi

# --- D. off-CPU cost ------------------------------------------------------------------------------------
if want D; then

# A context-switch-heavy target under record --off-cpu: two threads bouncing a byte through pipes switch
# about 200,000 times a second here, and every switch-out is kept (--min-block-us 1, the default), so
# this is the worst case: each switch costs the stacks taken at switch-out, the ring buffer and the
# recorder (which shares the two cores with the target). perf 6.1 from Debian has no --off-cpu (built
# without BPF skeletons), so there is no perf row.
d_rounds=$([ "$quick" = 1 ] && echo 30000 || echo 100000)
note "D. off-CPU cost: pingpong, $d_rounds round trips, $reps runs per mode"
mkdir -p "$work/d"
gcc -O2 -g -pthread -o "$work/pingpong" "$here/workloads/pingpong.c"
d_modes="none"
[ "$sr_dwarf" = 1 ] && d_modes="none dwarf fp"
for _ in $(seq 1 "$reps"); do
	for mode in $d_modes; do
		if [ "$mode" = none ]; then
			"$work/pingpong" "$d_rounds" "$work/d/time"
		else
			"$stackrec" record --off-cpu --call-graph "$mode" -o "$work/d/rec" -- "$work/pingpong" "$d_rounds" \
				"$work/d/time" >/dev/null 2>"$work/d/rec.log" || die "stackrec record --off-cpu failed: $(tail -n 3 "$work/d/rec.log")"
			counts=$(stackrec_counts "$work/d/rec" "$work/d/rec.log")
			echo "$counts $(stat -c %s "$work/d/rec")" >>"$work/d/$mode.counts"
		fi
		cut -d' ' -f1 "$work/d/time" >>"$work/d/$mode.wall"
		cut -d' ' -f2 "$work/d/time" >>"$work/d/$mode.cpu"
	done
done
# The unprofiled time is printed: a round trip's cost is mostly waking the other thread's CPU, which
# differs between machines by several times (1.0 s on one 2-core VM, 4 to 4.7 s on another), and a profiler that
# keeps the other CPU busy can make the target faster (a slowdown below 1).
d_base=$(median <"$work/d/none.wall")
d_base_cpu=$(median <"$work/d/none.cpu")
out 'D. Off-CPU cost: pingpong (two threads, a byte through two pipes), %s round trips, %s runs each;
' "$d_rounds" "$reps"
out '   unprofiled %.2f s (median); slowdown as in A; samples = median off-CPU samples (every switch-out); lost = sum over the runs

' "$(awk -v n="$d_base" 'BEGIN { print n / 1e9 }')"
out '  %-26s %9s %9s %9s %6s %12s
' profiler slowdown "(cpu)" samples lost bytes/sample
if [ "$sr_dwarf" = 1 ]; then
	for mode in dwarf fp; do
		slow=$(median <"$work/d/$mode.wall" | awk -v b="$d_base" '{ printf "%.3fx", $1 / b }')
		slow_cpu=$(median <"$work/d/$mode.cpu" | awk -v b="$d_base_cpu" '{ printf "%.3fx", $1 / b }')
		samples=$(cut -d' ' -f1 "$work/d/$mode.counts" | median)
		read -r lost bps < <(awk '{ l += $2; b += $3; s += $1 } END { printf "%d %.1f\n", l, s ? b / s : 0 }' "$work/d/$mode.counts")
		out '  %-26s %9s %9s %9s %6s %12s
' "stackrec --off-cpu $mode" "$slow" "$slow_cpu" "$samples" "$lost" "$bps"
	done
else
	out '  stackrec --off-cpu      %s
' "$NA"
fi
out '
'

fi

# --- E. probe cost --------------------------------------------------------------------------------------

# fixtures/probe_hot.c calls hot_call(n, tag) about a million times a second (about 1 µs of work a call).
# Recorded as a user would (on-CPU sampling at the default 99 Hz too), --no-signals and --metrics-interval 0
# so that only the probe differs: "probe" captures n and the string tag (str(tag)), "probe, no args" only
# the hit itself. Every call is a uprobe trap; the slowdown is the cost of a hit times a million.
if want E && "$stackrec" record --help 2>&1 | grep -q -- --probe; then
e_calls=$([ "$quick" = 1 ] && echo 300000 || echo 1000000)
note "E. probe cost: probe_hot, $e_calls calls, $reps runs per mode"
mkdir -p "$work/e"
gcc -O1 -g -fno-omit-frame-pointer -o "$work/probe_hot" "$root/fixtures/probe_hot.c"
for _ in $(seq 1 "$reps"); do
	for mode in none args noargs; do
		case $mode in
		none) "$work/probe_hot" "$e_calls" "$work/e/time" >/dev/null ;;
		*)
			spec="$work/probe_hot:hot_call(n, str(tag))"
			[ "$mode" = args ] || spec="$work/probe_hot:hot_call()"
			"$stackrec" record --no-signals --metrics-interval 0 --probe "$spec" -o "$work/e/rec" -- \
				"$work/probe_hot" "$e_calls" "$work/e/time" >/dev/null 2>"$work/e/rec.log" ||
				die "stackrec record --probe failed: $(tail -n 3 "$work/e/rec.log")"
			sed -n 's/^stackrec: recorded \([0-9]*\) probe hits (\([0-9]*\) lost).*/\1 \2/p' "$work/e/rec.log" \
				>>"$work/e/$mode.counts"
			rm -f "$work/e/rec" "$work/e/rec".*
			;;
		esac
		cut -d' ' -f1 "$work/e/time" >>"$work/e/$mode.wall"
		cut -d' ' -f2 "$work/e/time" >>"$work/e/$mode.cpu"
	done
done
e_base=$(median <"$work/e/none.wall")
e_base_cpu=$(median <"$work/e/none.cpu")
out 'E. Probe cost: probe_hot, %s calls of hot_call (%s calls/s unprofiled, median), %s runs each;\n' "$e_calls" \
	"$(awk -v n="$e_calls" -v w="$e_base" 'BEGIN { printf "%.0f", n / (w / 1e9) }')" "$reps"
out '   slowdown as in A; hits/s = hits / median profiled wall time of the loop; hits = median; lost = sum\n\n'
out '  %-28s %9s %9s %11s %9s %6s\n' profiler slowdown "(cpu)" hits/s hits lost
for mode in args noargs; do
	slow=$(median <"$work/e/$mode.wall" | awk -v b="$e_base" '{ printf "%.3fx", $1 / b }')
	slow_cpu=$(median <"$work/e/$mode.cpu" | awk -v b="$e_base_cpu" '{ printf "%.3fx", $1 / b }')
	hits=$(cut -d' ' -f1 "$work/e/$mode.counts" | median)
	lost=$(awk '{ l += $2 } END { print l + 0 }' "$work/e/$mode.counts")
	per_s=$(median <"$work/e/$mode.wall" | awk -v h="$hits" '{ printf "%.0f", h / ($1 / 1e9) }')
	label="stackrec --probe (n, str)"
	[ "$mode" = args ] || label="stackrec --probe ()"
	out '  %-28s %9s %9s %11s %9s %6s\n' "$label" "$slow" "$slow_cpu" "$per_s" "$hits" "$lost"
done
out '\n'
elif want E; then
	out 'E. Probe cost: stackrec %s\n\n' "$NA"
fi

# --- F. symbolize speed and correctness -----------------------------------------------------------------

# Five binaries: libc (libc6-dbg), libbfd (libbinutils-dbg) and the assembler (binutils-x86-64-linux-gnu-dbg),
# whose debug files Debian compresses with dwz (a .gnu_debugaltlink alternate file), a Go program (Go 1.19
# keeps DWARF, in compressed sections) and a C++ program (g++ -O2 -g), both built here from bench/workloads.
# The same address lists for every tool, each run reading them from a file and writing to /dev/null; the
# stackrec rows differ only in what they keep between runs: first (the symbol cache and the decompressed debug
# files emptied before each run), cold (the symbol cache emptied; the first run of the round kept the
# decompressed copies), warm (the entry the cold run wrote), off (--no-cache: neither). Then each tool answers the distinct list once more with -a, and
# bench/symbolize-agree.py compares the innermost frames: names, lines, agreement with llvm-symbolizer and
# eu-addr2line.
if want F; then
	f_distinct=$([ "$quick" = 1 ] && echo 5000 || echo 20000)
	f_skewed=$([ "$quick" = 1 ] && echo 50000 || echo 200000)
	f_eu_count=$([ "$quick" = 1 ] && echo 500 || echo 2000)
	mkdir -p "$work/f"
	# Times to the microsecond (/usr/bin/time prints hundredths: a warm run of 20,000 addresses is a few).
	gcc -O2 -o "$work/measure" "$here/measure.c"
	f_targets=""
	f_bin() { # f_bin NAME PATH: a target when PATH is there
		[ -f "$2" ] && { f_targets="$f_targets $1"; eval "f_path_$1=\$2"; }
		return 0
	}
	f_bin libc "$(readlink -f /lib/x86_64-linux-gnu/libc.so.6 2>/dev/null || true)"
	f_bin libbfd /usr/lib/x86_64-linux-gnu/libbfd-2.40-system.so
	f_bin as /usr/bin/x86_64-linux-gnu-as
	if GOCACHE=$work/f/gocache GOPATH=$work/f/gopath GO111MODULE=off go build -o "$work/f/gowork" \
		"$here/workloads/gowork.go" 2>"$work/f/go.log"; then
		f_bin go "$work/f/gowork"
	else
		note "  the Go workload did not build: $(tail -n 2 "$work/f/go.log")"
	fi
	g++ -O2 -g -o "$work/f/cxxwork" "$here/workloads/cxxwork.cc" && f_bin cxx "$work/f/cxxwork"
	note "F. symbolize:$f_targets; $f_distinct distinct and $f_skewed skewed addresses, $reps runs per tool"
	out 'F. Symbolize speed and correctness: %s distinct random .text addresses of each binary and %s drawn from\n' \
		"$f_distinct" "$f_skewed"
	out '   them skewed (weight 1/rank); addresses/s at the median wall time of %s rounds, each tool once a round,\n' "$reps"
	out '   each round starting at the next tool\n'
	out '   (eu-addr2line: one run, the first %s distinct addresses only; cpu: user+system time), peak RSS (largest);\n' \
		"$f_eu_count"
	out '   flags -f -i (llvm-symbolizer: --functions --inlines); stackrec first = symbol cache and decompressed debug\n'
	out '   files emptied before each run (the first run on a machine), cold = the symbol cache alone emptied. Innermost\n'
	out '   frame of each answer: %% named, %% with file:line (lines; in fn: among the addresses inside a function\n'
	out '   symbol, not padding between functions), %% agreeing with llvm-symbolizer where it names one\n'
	out '   (=llvm), and besides: an ELF alias at the same address (alias) or the symbol of a part or clone of the\n'
	out '   same function (clone: main.cold, f.isra.0, runtime.f.abi0); =eu: the same with eu-addr2line (exact names\n'
	out '   only, on its addresses)\n\n'
	for t in $f_targets; do
		eval "f_b=\$f_path_$t"
		out '  %s: %s\n' "$t" "$f_b"
	done
	out '\n  %-6s %-9s %-20s %11s %11s %9s %7s %7s %7s %7s %6s %6s %7s\n' target list tool addresses/s "(cpu)" "peak RSS" \
		named lines "in fn" =llvm alias clone =eu
	# The tools of one list are timed round by round (f_tool adds one, f_time_tools runs them: in each of $reps
	# rounds every tool once, in order), as A interleaves its profilers: a burst of other work on a shared
	# machine then slows every tool of a round alike, not the $reps runs of one tool. f_tool LABEL SETUP ANSWERS --
	# COMMAND...: COMMAND <LIST >/dev/null after SETUP (first, cold: caches emptied; the run before a warm one in
	# each round leaves the entry it reads); ANSWERS: a file of -a answers to the distinct list, or "-a":
	# COMMAND's own with -a, after SETUP.
	f_tool() {
		local i=$f_tools
		f_tools=$((f_tools + 1))
		eval "f_label_$i=\$1 f_setup_$i=\$2 f_answers_$i=\$3"
		shift 4
		eval "f_cmd_$i=(\"\$@\")"
		: >"$work/f/times.$i"
	}
	# f_time_tools LIST: the rounds, then a row per tool, compared with llvm-symbolizer's and eu-addr2line's
	# answers (eu-addr2line: its one run with -a, above, the time of which is its row's).
	f_time_tools() {
		local list=$1 i label setup answers n wall cpu rss cols cmd
		# One untimed run first, so that every tool of the first round finds what the ones before it leave
		# (the decompressed copies, a symbol cache entry); then round r starts at the r-th tool: the first run
		# of a round, after the slowest tools of the one before, came out up to a quarter slower (the cold rows
		# of earlier tables, which always ran first; the same cold run of cxx, 379k against 473k addresses/s).
		eval "$f_setup_0"
		eval "cmd=(\"\${f_cmd_0[@]}\")"
		"${cmd[@]}" <"$list" >/dev/null 2>&1 || true
		for round in $(seq 0 $((reps - 1))); do
			for k in $(seq 0 $((f_tools - 1))); do
				i=$(((k + round) % f_tools))
				eval "label=\$f_label_$i setup=\$f_setup_$i"
				eval "cmd=(\"\${f_cmd_$i[@]}\")"
				[ "$label" != eu-addr2line ] || continue
				eval "$setup"
				if ! "$work/measure" -o "$work/f/time" "${cmd[@]}" <"$list" >/dev/null 2>"$work/f/err"; then
					note "  $label failed: $(tail -n 2 "$work/f/err")"
					echo failed >"$work/f/times.$i"
					continue
				fi
				grep -qx failed "$work/f/times.$i" || cat "$work/f/time" >>"$work/f/times.$i"
			done
		done
		for i in $(seq 0 $((f_tools - 1))); do
			eval "label=\$f_label_$i setup=\$f_setup_$i answers=\$f_answers_$i"
			eval "cmd=(\"\${f_cmd_$i[@]}\")"
			! grep -qx failed "$work/f/times.$i" || continue
			if [ "$label" = eu-addr2line ]; then
				tail -n 1 "$work/f/$t.eu.time" >"$work/f/times.$i"
				list=$work/f/$t.distinct-$f_eu_count
			fi
			if [ "$answers" = -a ]; then
				eval "$setup"
				answers=$work/f/answers
				"${cmd[@]}" -a <"$work/f/$t.distinct" >"$answers" 2>/dev/null || true
			fi
			cols=$("$python" "$here/symbolize-agree.py" "$f_b" "$list" "$f_llvm" "$f_eu" "$answers" \
				"$work/f/$t.differences")
			n=$(wc -l <"$list")
			wall=$(awk '{ print $1 }' "$work/f/times.$i" | median)
			cpu=$(awk '{ print $2 + $3 }' "$work/f/times.$i" | median)
			rss=$(awk '{ if ($4 > m) m = $4 } END { printf "%.0f MiB", m / 1024 }' "$work/f/times.$i")
			# shellcheck disable=SC2086 # cols: seven words
			out '  %-6s %-9s %-20s %11s %11s %9s %7s %7s %7s %7s %6s %6s %7s\n' "$t" "$(basename "$list" | sed 's/.*\.//')" \
				"$label" "$(awk -v n="$n" -v t="$wall" 'BEGIN { printf "%.0f", (t > 0 ? n / t : 0) }')" \
				"$(awk -v n="$n" -v t="$cpu" 'BEGIN { printf "%.0f", (t > 0 ? n / t : 0) }')" "$rss" $cols
		done
	}
	for t in $f_targets; do
		eval "f_b=\$f_path_$t"
		"$python" "$here/workloads/addresses.py" "$f_b" "$f_distinct" "$f_skewed" "$work/f/$t"
		# The references, answered once: llvm-symbolizer in addr2line's layout and without demangling (the
		# others print linkage names too).
		# eu-addr2line exits 1 when it could not name some address: its answers count all the same.
		f_llvm=-
		f_eu=-
		if command -v llvm-symbolizer >/dev/null; then
			llvm-symbolizer --obj="$f_b" --output-style=GNU -a --functions --inlines --no-demangle \
				<"$work/f/$t.distinct" >"$work/f/$t.llvm" 2>/dev/null || true
			[ -s "$work/f/$t.llvm" ] && f_llvm=$work/f/$t.llvm
		fi
		# eu-addr2line, 30 to 1000 times slower than the others (44 addresses/s on the C++ program: 20,000
		# addresses would take 8 minutes), is timed on this one run only, of the first $f_eu_count addresses of
		# the distinct list; =eu compares with its answers there.
		if command -v eu-addr2line >/dev/null; then
			head -n "$f_eu_count" "$work/f/$t.distinct" >"$work/f/$t.distinct-$f_eu_count"
			"$work/measure" -o "$work/f/$t.eu.time" eu-addr2line -e "$f_b" -a -f -i \
				<"$work/f/$t.distinct-$f_eu_count" >"$work/f/$t.eu" 2>/dev/null || true
			[ -s "$work/f/$t.eu" ] && f_eu=$work/f/$t.eu
		fi
		for list in "$work/f/$t.distinct" "$work/f/$t.skewed"; do
			f_tools=0
			f_tool "stackrec first" 'rm -rf "$STACKREC_CACHE_DIR/symbols" "$STACKREC_CACHE_DIR/decompressed"' -a -- \
				"$stackrec" symbolize -e "$f_b" -f -i
			f_tool "stackrec cold" 'rm -rf "$STACKREC_CACHE_DIR/symbols"' -a -- "$stackrec" symbolize -e "$f_b" -f -i
			f_tool "stackrec warm" : -a -- "$stackrec" symbolize -e "$f_b" -f -i
			f_tool "stackrec --no-cache" : -a -- "$stackrec" symbolize --no-cache -e "$f_b" -f -i
			f_tool "addr2line" : -a -- addr2line -e "$f_b" -f -i
			[ "$f_llvm" = - ] ||
				f_tool "llvm-symbolizer" : "$f_llvm" -- llvm-symbolizer --obj="$f_b" --functions --inlines
			[ "$f_eu" = - ] || [ "$list" != "$work/f/$t.distinct" ] ||
				f_tool "eu-addr2line" : "$f_eu" -- eu-addr2line -e "$f_b" -f -i
			f_time_tools "$list"
		done
	done
	[ -n "$f_targets" ] || out '  none of the binaries is on this machine\n'
	out '\n'
fi

# --- report ---------------------------------------------------------------------------------------------

elapsed=$(($(date +%s) - started))
cpu_model=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo)
kconfig=$({ zcat /proc/config.gz 2>/dev/null || cat "/boot/config-$(uname -r)" 2>/dev/null || true; } |
	awk '/^CONFIG_IRQ_TIME_ACCOUNTING=y/ { on = 1 } /IRQ_TIME_ACCOUNTING/ { seen = 1 }
		END { print seen ? (on ? "on (interrupt time not in the target'"'"'s CPU time)" : "off (interrupt time in the target'"'"'s CPU time)") : "unknown" }')
{
	echo "Machine: Linux $(uname -r), ${cpu_model:-unknown CPU}, $(nproc) cores; $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "Tools: $("$stackrec" --version 2>/dev/null | head -n 1) ($stackrec), $(perf --version), $("$python" --version 2>&1), xz $(xz --version | awk 'NR == 1 { print $NF }'), sqlite3 $(sqlite3 --version | awk '{ print $1 }')"
	echo "Sampling event: stackrec ${sr_event:-?}, perf ${perf_event:-?}; IRQ time accounting $kconfig"
	echo "Run: $([ "$quick" = 1 ] && echo "BENCH_QUICK=1" || echo full)$([ "$sections" = "A B C D E F" ] || echo ", sections $sections only"), $elapsed s"
	if [ "$perf_aborts" -gt 0 ]; then
		echo "perf aborted $perf_aborts times (assertion failed at util/build-id.c:1010, then stack smashing);"
		echo "  each time retried: fresh --buildid-dir, from the 3rd attempt also -N ($perf_aborts_n aborts with -N too)"
	fi
	[ "$sr_dwarf" = 1 ] || echo "This stackrec has no 'record --call-graph': its default is measured as fp, dwarf rows are n/a."
	echo
	cat "$table"
} >"$table.final"
cat "$table.final"

if [ "$doc" != - ]; then
	[ -f "$doc" ] || printf '# Performance\n\n<!-- bench:begin -->\n<!-- bench:end -->\n' >"$doc"
	doc_markers
	awk -v table="$table.final" '
		/^<!-- bench:begin -->$/ { print; print "```"; while ((getline l < table) > 0) print l; print "```"; skip = 1; next }
		/^<!-- bench:end -->$/ { skip = 0 }
		!skip { print }' "$doc" >"$work/doc" && cat "$work/doc" >"$doc"
	note "table written to $doc"
fi
