#!/bin/bash
# stress.sh — `make stress`: one system-wide recording under stress, written down.
#
# `record -a -F 4999 --duration 60` while stress-spawn starts hundreds of short processes a second (each
# stress-short spins about 1 ms in short_work and exits) and stress-threads runs 64 spinning threads in one
# process (bench/workloads/stress.c), under nice 10: at nice 0 its 64 threads take 64 shares of the CPUs
# against the spawner's one, and on a small machine the spawner then starts tens of processes a second, not
# hundreds. They still take every cycle left. Then `info` and `convert -f folded`. It reports:
#   - samples, lost samples and lost side-band records (the recorder's own counts);
#   - the recorder's peak memory (maximum resident set, /usr/bin/time; the BPF ring buffers are kernel memory
#     and not in it) and the recording's size;
#   - convert's time and peak memory for the whole recording;
#   - whether every process that produced samples is named (has a comm), the samples with a frame in no
#     recorded mapping ([unknown]), and the short processes' and the threads' shares of samples whose stack
#     holds their own functions, named (main → spin_until, thread_work → spin_until).
# A benchmark, not a test: it never fails on a number, only when a step fails. It writes its table between
# the stress markers of docs/performance.md.
#
# Usage (as root): bench/stress.sh
#   STACKREC=PATH      the stackrec to measure (default: ./stackrec beside bench/)
#   STRESS_SECONDS=N   recording length (default 60)
#   STRESS_RATE=N      short processes started a second (default 300)
#   STRESS_THREADS=N   threads of the multi-threaded process (default 64)
#   STRESS_FREQ=HZ     sampling frequency (default 4999)
#   STRESS_NICE=N      run the recorder under nice -n N (default: as it is)
#   STRESS_DOC=FILE    write the table there instead of docs/performance.md ('-': nowhere)
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
stackrec=${STACKREC:-$root/stackrec}
seconds=${STRESS_SECONDS:-60}
rate=${STRESS_RATE:-300}
nthreads=${STRESS_THREADS:-64}
freq=${STRESS_FREQ:-4999}
nice=${STRESS_NICE:+nice -n $STRESS_NICE}
doc=${STRESS_DOC:-$root/docs/performance.md}

die() {
	echo "stress: error: $*" >&2
	exit 1
}
note() { echo "stress: $*" >&2; }

[ "$(id -u)" -eq 0 ] || die "recording with eBPF needs root: run 'sudo make stress'"
case $stackrec in /*) ;; *) stackrec=$PWD/$stackrec ;; esac
case $doc in - | /*) ;; *) doc=$PWD/$doc ;; esac
[ -x "$stackrec" ] || die "no stackrec at '$stackrec' (build it with 'make', or set STACKREC=PATH)"
[ -x /usr/bin/time ] || die "/usr/bin/time not found: install the Debian package time"
command -v gcc >/dev/null || die "gcc not found: install the Debian package gcc"
if [ "$doc" != - ]; then
	grep -q '^<!-- stress:begin -->$' "$doc" && grep -q '^<!-- stress:end -->$' "$doc" ||
		die "'$doc' has no <!-- stress:begin --> / <!-- stress:end --> lines to write the table between"
fi

work=$(mktemp -d /tmp/stackrec-stress.XXXXXX)
pids=
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
[ -n "${STRESS_KEEP:-}" ] && trap "echo stress: kept $work >&2" EXIT
trap 'exit 130' INT TERM
cd "$work"

gcc -O2 -g -pthread -o stress-threads "$here/workloads/stress.c"
cp stress-threads stress-spawn
cp stress-threads stress-short

# The recorder first; the workloads once it is under way (its output file appears then).
/usr/bin/time -f "%M %e %U %S" -o record.time $nice "$stackrec" record -a -F "$freq" --duration "$seconds" -o stress.rec \
	2>record.err &
recorder=$!
pids="$recorder"
for _ in $(seq 1 600); do
	[ -e stress.rec ] && break
	kill -0 "$recorder" 2>/dev/null || break
	sleep 0.1
done
[ -e stress.rec ] || { cat record.err >&2; die "the recorder did not start"; }
started=$(date +%s.%N)
load=$((seconds > 10 ? seconds - 5 : seconds))
nice -n 10 ./stress-threads "$nthreads" "$load" &
pids="$pids $!"
./stress-spawn "$rate" "$load" "$work/stress-short" >spawned.txt &
pids="$pids $!"
note "recording for ${seconds} s: ${nthreads} threads, ${rate} short processes a second for ${load} s"
rc=0
wait "$recorder" || rc=$?
cat record.err >&2
[ $rc -eq 0 ] || die "record exited $rc"
wait
pids=
spawned=$(cat spawned.txt)

"$stackrec" info stress.rec >info.txt || die "info failed"
/usr/bin/time -f "%M %e" -o convert.time "$stackrec" convert stress.rec -f folded -o stress.folded 2>convert.err ||
	{ cat convert.err >&2; die "convert failed"; }

field() { awk -v k="$1" '$1 == k { print $2; exit }' info.txt; }
samples=$(awk '$1 == "samples" && $2 == "written" { print $3 }' info.txt)
lost=$(awk '$1 == "lost" && $2 == "samples" { print $3 }' info.txt)
lost_sb=$(awk '$1 == "lost" && $2 == "side-band" { print $3 }' info.txt)
size=$(stat -c %s stress.rec)
read -r rec_kb rec_s rec_user rec_sys <record.time
read -r conv_kb conv_s <convert.time

# Processes with samples, and those of them without a name (no comm: "?"); samples with a frame in no
# recorded mapping ([unknown]: the process's mappings were lost or never recorded), by command.
awk '/^processes \(by samples\):/ { on = 1; next } /^[a-z]/ { on = 0 } on && $3 > 0 {
	n++
	if ($2 == "?") { bad++; print "stress: process without a name:", $0 > "/dev/stderr" }
	if ($2 == "stress-short") short++
} END { printf "%d %d %d\n", n, bad + 0, short + 0 }' info.txt >procs.txt
read -r sampled unnamed short_procs <procs.txt
unknown=$(awk '{ n = $NF; total += n; if ($0 ~ /;\[unknown\]/) { hit += n; split($0, f, ";"); by[f[1]] += n } }
	END { s = ""; for (c in by) s = s sprintf("%s %d, ", c, by[c]); sub(/, $/, "", s)
	      printf "%.2f%% (%d of %d)%s", total ? 100 * hit / total : 0, hit, total, s == "" ? "" : ": " s }' stress.folded)

# share COMM PATH: of the samples of COMM (the first frame of a folded line), the percentage whose stack
# holds the frames PATH (";main;spin_until").
share() {
	awk -v comm="$1" -v path="$2" '{
		n = $NF; split($0, f, ";"); if (f[1] !~ "^" comm) next
		total += n; if (index($0, path ";") || index($0, path " ")) hit += n
	} END { printf "%.1f%% of %d", total ? 100 * hit / total : 0, total }' stress.folded
}
short_share=$(share stress-short ";main;spin_until") # short_work ends in a tail call to spin_until
thread_share=$(share stress-t ";thread_work;spin_until")

table=$(cat <<EOF
Stress run of $(date -u +%Y-%m-%d) on $(nproc) CPUs, kernel $(uname -r) (shared machine: other work ran at the same time;
load average $(cut -d" " -f1-3 /proc/loadavg) at the end): \`record -a -F $freq --duration $seconds\`, $nthreads spinning
threads (nice 10) in one process, $spawned short processes started ($rate a second for $load s)${nice:+; recorder under \`$nice\`}.

| measure | value |
|---|---|
| samples written | $samples |
| lost samples (ring buffer full) | $lost |
| lost side-band records | $lost_sb |
| recording size | $((size / 1024 / 1024)) MiB ($((samples ? size / samples : 0)) bytes a sample) |
| recorder peak memory (max RSS) | $((rec_kb / 1024)) MiB |
| recorder wall time, CPU time (user + system) | $rec_s s, $rec_user + $rec_sys s |
| convert -f folded: time | $conv_s s ($(awk -v n="$samples" -v s="$conv_s" 'BEGIN { printf "%.0f", (s > 0 ? n / s : 0) }') samples/s) |
| convert peak memory (max RSS) | $((conv_kb / 1024)) MiB |
| processes with samples | $sampled, of them stress-short: $short_procs |
| processes with samples without a name | $unnamed |
| samples with a frame in no recorded mapping (\`[unknown]\`) | $unknown |
| stress-short samples in main → spin_until | $short_share |
| stress-tNN samples in thread_work → spin_until | $thread_share |
EOF
)
echo "$table"
if [ "$doc" != - ]; then
	awk -v table="$table" '
		/^<!-- stress:begin -->$/ { print; print table; skip = 1; next }
		/^<!-- stress:end -->$/ { skip = 0 }
		!skip { print }' "$doc" >"$doc.tmp" && mv "$doc.tmp" "$doc"
	note "table written to $doc"
fi
