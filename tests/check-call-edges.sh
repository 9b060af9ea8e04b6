#!/usr/bin/env bash
# check-call-edges.sh BINARY COMM FOLDED — fails when a stack of COMM in FOLDED shows BINARY's function A
# directly above its function B although A contains no call to B: a caller→callee pair that cannot happen,
# the mark of an unwinder that skipped or invented a frame (a frame-pointer walk that starts in a frameless
# leaf skips the leaf's caller: main;top;leaf_a for main → top → mid → leaf_a).
#
# The truth comes from the machine code, independently of stackrec: `objdump -d --no-show-raw-insn BINARY`
# lists BINARY's functions and, inside each, its direct calls (`call ADDR <callee>`, calls through the PLT
# as `callee@plt`). Those are the edges, plus one from libc's __libc_start_call_main to main. Clone suffixes
# (.part.0, .constprop.0, .isra.0, .cold) are dropped on both sides, as DWARF names the clone by its source
# name.
#
# FOLDED is `stackrec convert -f folded [--annotate]` output: "comm;outermost;...;leaf COUNT". Only lines of
# COMM are read. Kernel frames (NAME_[k]) are dropped. Inlined frames (NAME_[i], with --annotate) are skipped:
# the call to the next frame is made by the function they were inlined into. Every adjacent pair of frames
# that are both BINARY's functions (or __libc_start_call_main then one of them) must be an edge; frames of
# other modules break the chain (libc's qsort calling back into BINARY is no pair of BINARY's).
# Limits: a frame of another module that bears the name of one of BINARY's functions counts as BINARY's;
# tail calls (jmp) are not edges, so BINARY must make none on the paths sampled (the fixtures make none);
# indirect calls are not edges either.
#
# Prints what it checked and, for each impossible pair, its samples and one stack showing it; exits 1 if
# there is one, or if nothing could be checked (no sample of COMM, no adjacent pair of BINARY's functions),
# 2 on bad usage or when objdump fails.
set -u
if [ $# -ne 3 ]; then
	echo "usage: check-call-edges.sh BINARY COMM FOLDED" >&2
	exit 2
fi
bin=$1 comm=$2 folded=$3
dis=$(mktemp) || exit 2
trap 'rm -f "$dis"' EXIT
if ! objdump -d --no-show-raw-insn "$bin" >"$dis"; then
	echo "check-call-edges: objdump -d '$bin' failed" >&2
	exit 2
fi
[ -r "$folded" ] || { echo "check-call-edges: cannot read '$folded'" >&2; exit 2; }

awk -v comm="$comm" -v bin="$bin" '
BEGIN { edge["__libc_start_call_main" SUBSEP "main"] = 1 }
function base(name) {
	sub(/\+0x[0-9a-f]+$/, "", name)	# a call into the middle of a function calls that function
	if (name !~ /@/)
		while (match(name, /\.(part|constprop|isra|cold|lto_priv)(\.[0-9]+)?$/))
			name = substr(name, 1, RSTART - 1)
	return name
}
# Pass 1: the disassembly. "0000000000001189 <main>:" opens a function; "  11a4:\tcall   1040 <foo@plt>"
# is a direct call from it.
FNR == NR {
	if ($0 ~ /^[0-9a-f]+ <.*>:$/) {
		fn = $0; sub(/^[0-9a-f]+ </, "", fn); sub(/>:$/, "", fn)
		fn = base(fn); own[fn] = 1
		next
	}
	if (fn != "" && $0 ~ /^ *[0-9a-f]+:\t(call|callq) +[0-9a-f]+ <[^>]+>/) {
		callee = $0; sub(/^[^<]*</, "", callee); sub(/>.*$/, "", callee)
		edge[fn SUBSEP base(callee)] = 1
		calls++
	}
	next
}
# Pass 2: the folded stacks, root first.
{
	n = $NF; line = $0; sub(/ [0-9]+$/, "", line)
	k = split(line, f, ";")
	if (f[1] != comm) next
	samples += n
	prev = ""; bad = ""
	for (i = 2; i <= k; i++) {
		if (f[i] ~ /_\[k\]$/) continue
		if (f[i] ~ /_\[i\]$/) continue
		cur = base(f[i])
		if ((cur in own) && prev != "" && ((prev in own) || prev == "__libc_start_call_main")) {
			pairs += n
			if (!((prev SUBSEP cur) in edge)) {
				pair = prev " -> " cur
				if (!(pair in bad_n)) { order[++npairs] = pair; example[pair] = line }
				bad_n[pair] += n
				bad = 1
			}
		}
		prev = cur
	}
	if (bad != "") bad_samples += n
}
END {
	if (calls == 0) { print "check-call-edges: no direct calls found in " bin > "/dev/stderr"; exit 1 }
	printf "check-call-edges: %d direct calls in %s; %d samples of %s, %d adjacent pairs of its functions checked\n", \
		calls, bin, samples, comm, pairs
	if (samples == 0) { print "check-call-edges: no samples of " comm; exit 1 }
	if (pairs == 0) { print "check-call-edges: nothing to check: no stack of " comm " has two of its functions next to each other"; exit 1 }
	if (npairs == 0) { print "check-call-edges: every pair is a call that exists"; exit 0 }
	printf "check-call-edges: %d of %d samples (%.1f%%) show a call that does not exist in %s:\n", \
		bad_samples, samples, 100 * bad_samples / samples, bin
	for (j = 1; j <= npairs; j++)
		printf "  %s: %d samples, e.g. %s\n", order[j], bad_n[order[j]], example[order[j]]
	exit 1
}' "$dis" "$folded"
