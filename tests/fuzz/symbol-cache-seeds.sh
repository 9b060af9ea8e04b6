#!/usr/bin/env bash
# symbol-cache-seeds.sh STACKREC OUTDIR — the symbol cache fuzzer's seeds (make fuzz-symbol-cache-seeds): entries
# of every shape stackrec writes, from the fixtures' programs and recordings, each a few kilobytes:
#   NAME.REV-addr2line(-C)     symbolize -f -i (and -C) of 120 addresses spread over the program's .text, its
#                              DWARF from fixtures/debug (inline chains, files, lines, columns); REV: the
#                              answers' revision (SYMBOL_ANSWERS_REVISION)
#   inline-symtab.REV-addr2line the same without the debug file: names from the symbol table, no lines
#   stripped.REV-addr2line     a program without a symbol table: nothing named, the reason kept
#   RECORDING-BUILDID.profile  convert's entries ("profile" rules) for each fixture recording
# Run from the top of the source tree.
set -euo pipefail
stackrec=$1 out=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# addresses BINARY N: N addresses spread evenly over BINARY's .text, one a line
addresses() {
	readelf -SW "$1" | sed -n 's/.*\] \.text  *PROGBITS  *\([0-9a-f]*\) [0-9a-f]* \([0-9a-f]*\) .*/\1 \2/p' |
		while read -r start size; do
			for ((i = 0; i < $2; i++)); do printf '0x%x\n' $((0x$start + i * 0x$size / $2)); done
		done
}

# symbolize NAME BINARY N FLAGS...: symbolize N addresses of BINARY in a new cache, its entry to OUTDIR/NAME.RULES
symbolize() {
	local name=$1 binary=$2 n=$3 entry
	shift 3
	rm -rf "$tmp/cache"
	addresses "$binary" "$n" | STACKREC_CACHE_DIR=$tmp/cache "$stackrec" symbolize -e "$binary" "$@" >/dev/null
	for entry in "$tmp"/cache/symbols/*; do cp "$entry" "$out/$name.${entry##*.}"; done
}

for binary in fixtures/bin/*; do
	symbolize "$(basename "$binary")" "$binary" 120 --debug-dir fixtures/debug -f -i
	symbolize "$(basename "$binary")" "$binary" 120 --debug-dir fixtures/debug -f -i -C
done
symbolize inline-symtab fixtures/bin/inline 60 -f
strip -s -o "$tmp/stripped" fixtures/bin/chain
symbolize stripped "$tmp/stripped" 20 -f

for recording in fixtures/*.rec; do
	rm -rf "$tmp/cache"
	STACKREC_CACHE_DIR=$tmp/cache "$stackrec" convert "$recording" --symfs fixtures/sysroot \
		--debug-dir fixtures/debug -o /dev/null
	for entry in "$tmp"/cache/symbols/*; do
		[ -e "$entry" ] || continue # no module of it named from a file
		cp "$entry" "$out/$(basename "$recording" .rec)-$(basename "$entry" | cut -c1-8).profile"
	done
done
