#!/usr/bin/env bash
# damage-campaign.sh — damages the checked-in recordings in thousands of ways and runs `stackrec info` and
# `stackrec convert` on every variant, counting crashes, hangs, exit statuses and salvaged samples.
#
#   damage-campaign.sh [options] DAMAGE STACKREC [STACKREC...]
#
#   DAMAGE     the variant maker, tests/fuzz/damage.c built (`make fuzz-damage-build`)
#   STACKREC   one or more builds to run on every variant: the plain one and build-sanitize/stackrec
#   -n N       variants per recording (default 400): the systematic ones (cuts at every boundary, each
#              frame removed, duplicated and swapped) and random ones (cuts, bit flips, frames removed,
#              duplicated anywhere and swapped, oversized block sizes and counts) up to N
#   -b N       blocks per frame of the numbered copies (default 8; more gives fewer frames, fewer variants)
#   -s SEED    random seed (default 1)
#   -j JOBS    runs in parallel (default: the number of CPUs)
#   -f LIST    convert formats, comma-separated (default every one: folded,pprof,speedscope,d3,trace,report)
#   -r LIST    recordings (default fixtures/*.rec)
#   -w DIR     work directory (default a new one under $TMPDIR, removed unless something failed)
#
# Each recording is used twice: as checked in (format 1.1, no frame numbers) and rewritten with numbered
# frames (`damage reframe`, N blocks a frame). For every variant `damage` says how many samples the frames it
# left intact hold; `info` must report at least those (every intact frame salvaged) and no more than the file
# holds once (nothing counted twice), and must exit 3 (partial) when the damage must be found: anything but a
# swap of frames without numbers, or a bit flipped in the file header, where no promise holds. A run that
# dies of a signal or prints a sanitizer report is a crash; one that outlives its timeout (10 s, 60 s under
# a sanitizer) a hang. Exits 1 when any of that went wrong, with the variants kept in DIR/failed/.
set -u
n=400 blocks=8 seed=1 jobs=$(nproc 2>/dev/null || echo 2) formats=folded,pprof,speedscope,d3,trace,report recs= work=
src=$(cd "$(dirname "$0")/../.." && pwd)
while getopts n:b:s:j:f:r:w: opt; do
	case $opt in
	n) n=$OPTARG ;; b) blocks=$OPTARG ;; s) seed=$OPTARG ;; j) jobs=$OPTARG ;; f) formats=$OPTARG ;;
	r) recs=$OPTARG ;; w) work=$OPTARG ;;
	*) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
if [ $# -lt 2 ]; then
	echo "usage: damage-campaign.sh [-n N] [-b N] [-s SEED] [-j JOBS] [-f LIST] [-r LIST] [-w DIR] DAMAGE STACKREC..." >&2
	exit 2
fi
damage=$(realpath "$1") && shift || exit 2
bins=()
for b in "$@"; do bins+=("$(realpath "$b")") || exit 2; done
[ -n "$recs" ] || recs=$(ls "$src"/fixtures/*.rec | tr '\n' ,)
if [ -z "$work" ]; then work=$(mktemp -d "${TMPDIR:-/tmp}/damage-campaign.XXXXXX") || exit 2; fi
mkdir -p "$work/variants" "$work/failed" || exit 2
# Convert offline, as the fixture tests do: nothing of this machine, no cache, no network.
unset DEBUGINFOD_URLS
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# 1. The variants, and what each promises: manifest lines "path kind min max must_detect".
: >"$work/manifest"
i=0
for rec in ${recs//,/ }; do
	name=$(basename "$rec" .rec)
	"$damage" reframe "$rec" "$work/$name-numbered.rec" "$blocks" || { echo "damage-campaign: cannot reframe '$rec'" >&2; exit 1; }
	for form in "$rec" "$work/$name-numbered.rec"; do
		i=$((i + 1))
		"$damage" variants "$form" "$work/variants/$(basename "$form" .rec)" "$n" $((seed * 1000 + i)) \
			>>"$work/manifest" || exit 1
	done
done

# 2. Every variant through every build: info, then convert to each format. One result line per run:
#    build variant command status sanitizer(0/1) samples(info; - otherwise) min max must_detect
run_variant() {
	local path=$1 kind=$2 min=$3 max=$4 must=$5 b=$6 bi=$7 t rc san samples out err f
	t=10
	case $b in *sanitize*) t=60 ;; esac
	out=$(mktemp) err=$(mktemp)
	timeout -k 5 $t "$b" info "$path" >"$out" 2>"$err"
	rc=$?
	san=0
	grep -qE "^(==[0-9]+==ERROR: |SUMMARY: (Address|Undefined|Leak)Sanitizer)|runtime error:" "$err" && san=1
	samples=$(sed -n 's/^  samples  *\([0-9][0-9]*\)$/\1/p' "$out")
	echo "$bi $path info $rc $san ${samples:-0} $min $max $must"
	for f in ${FORMATS//,/ }; do
		timeout -k 5 $((t * 3)) "$b" convert "$path" -f "$f" -o /dev/null --no-cache --symfs "$SRC/fixtures/sysroot" \
			--debug-dir "$SRC/fixtures/debug" >/dev/null 2>"$err"
		rc=$?
		san=0
		grep -qE "^(==[0-9]+==ERROR: |SUMMARY: (Address|Undefined|Leak)Sanitizer)|runtime error:" "$err" && san=1
		echo "$bi $path convert-$f $rc $san - $min $max $must"
	done
	rm -f "$out" "$err"
}
export -f run_variant
export FORMATS=$formats SRC=$src
for bi in "${!bins[@]}"; do
	awk -v b="${bins[$bi]}" -v bi="$bi" -F'\t' '{ print $1, $2, $3, $4, $5, b, bi }' "$work/manifest"
done | xargs -P "$jobs" -n 7 bash -c 'run_variant "$@"' _ >"$work/results"

# 3. The counts. A failure keeps its variant in failed/ and is listed in failed/why.
awk -v nb=${#bins[@]} -v recs="$(echo ${recs//,/ } | wc -w)" -v failed="$work/failed/why" '
	function fail(why) { print why ": " $3 " " $2 " (exit " $4 ")" >> failed; bad[$2] = 1; nfail++ }
	{
		runs++; variants[$2] = 1; st[$4]++
		if ($5 == 1) { crashes++; fail("sanitizer report") }
		else if ($4 == 124 || $4 == 137) { hangs++; fail("hang") }
		else if ($4 > 128) { crashes++; fail("signal " ($4 - 128)) }
		else if ($4 != 0 && $4 != 1 && $4 != 3) { fail("unexpected exit status") }
		else if ($9 == 1 && $4 == 0) { undetected++; fail("damage not reported") }
		if ($3 == "info" && $7 >= 0 && $4 <= 3) {
			salvaged += $6; intact += $7; if ($6 > $7) twice += $6 - $7
			if ($6 < $7) { lost++; fail("samples of intact frames lost: " $6 " < " $7) }
			if ($6 > $8) { doubled++; fail("samples counted twice: " $6 " > " $8) }
		}
	}
	END {
		nv = 0; for (v in variants) nv++
		printf "damage campaign: %d variants of %d recordings (as checked in and with numbered frames), %d runs of info and convert on %d builds\n", nv, recs * 2, runs, nb
		printf "  crashes (signals, sanitizer reports): %d\n  hangs (timeouts): %d\n", crashes, hangs
		printf "  damage not reported (exit 0): %d\n  intact samples lost: %d variants\n  samples counted twice: %d variants\n", undetected, lost, doubled
		printf "  exit statuses:"; for (s in st) printf " %s: %d", s, st[s]; printf "\n"
		printf "  salvaged samples (info): %d, of %d in the frames left intact (%d more: frames copied twice in files without frame numbers)\n", salvaged, intact, twice
		for (v in bad) print v > (failed ".variants")
		exit nfail > 0
	}' "$work/results"
status=$?
if [ $status -ne 0 ]; then
	while read -r v; do cp "$v" "$work/failed/"; done <"$work/failed/why.variants"
	echo "damage-campaign: failures in $work/failed/why; their variants in $work/failed/" >&2
else
	rm -rf "$work"
fi
exit $status
