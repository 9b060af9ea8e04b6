#!/usr/bin/env bash
test_description='the symbol cache of a binary without a GNU build ID: keyed by its Go build ID note, bounded and printable, else not cached'
. "$(dirname "$0")/test-lib.sh"

# test-lib.sh points STACKREC_CACHE_DIR at this test's directory: the user's cache is never touched.
unset DEBUGINFOD_URLS
CACHE=$STACKREC_CACHE_DIR
# `make check` installs golang-go (TEST_PACKAGES): on CI a missing go fails the test instead of skipping it.
if command -v go >/dev/null; then test_set_prereq GO; else test_unset_prereq GO "no go (apt-get install golang-go)"; fi
if command -v nm >/dev/null && command -v objcopy >/dev/null && command -v readelf >/dev/null; then
	test_set_prereq BINUTILS
else
	test_unset_prereq BINUTILS "no nm/objcopy/readelf (apt-get install binutils)"
fi

entries() { ls "$CACHE/symbols" 2>/dev/null | grep -v '^\.' ; }
# The answers revision in entry names (convert/symbol_cache.h): it changes with every fix of an answer.
REVISION=$(sed -n "s/^#define SYMBOL_ANSWERS_REVISION \([0-9]*\).*/\1/p" "$SRC_DIR/convert/symbol_cache.h")

# The text symbols of $1 and addresses inside its first functions, in hex with 0x as bench F asks.
addresses() {
	nm --defined-only "$1" | awk '$2 ~ /^[tT]$/ { print "0x" $1 }' >syms &&
	head -300 syms && head -300 syms | while read -r a; do printf "0x%x\n" $((a + 5)); done && echo 0x10
}

cat >prog.go <<'SRC'
package main

import "fmt"

//go:noinline
func work(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += i * 3
	}
	return s
}

func main() { fmt.Println(work(1000)) }
SRC

test_expect_success GO,BINUTILS 'a Go binary (Go build ID, no GNU one) is cached: cold and warm give the same bytes' '
	rm -rf "$CACHE" &&
	GOCACHE=$PWD/gocache GOPATH=$PWD/gopath GO111MODULE=off go build -o goprog prog.go &&
	readelf -n goprog >notes && grep -F "GO BUILDID" notes && ! grep -F NT_GNU_BUILD_ID notes &&
	addresses goprog >addrs && test_line_count addrs -gt 100 &&
	for flags in "-f -i" "-a -f -i -C" --json; do
		rm -rf "$CACHE" &&
		stackrec symbolize --no-cache -e goprog $flags <addrs >expect &&
		stackrec symbolize -e goprog $flags <addrs >cold &&
		entries | grep -E "^go-[0-9a-f]+\.[0-9]+-addr2line" &&
		stackrec symbolize -v -e goprog $flags <addrs >warm 2>err &&
		test_cmp expect cold && test_cmp expect warm &&
		n=$(sort -u addrs | wc -l) && grep -F ": $n addresses" err || return 1
	done
'

test_expect_success GO,BINUTILS 'the key is "go-" and the note in hex; a rebuilt Go binary gets another entry' '
	id=$(GOCACHE=$PWD/gocache go tool buildid goprog) && test -n "$id" &&
	hex=$(printf %s "$id" | od -An -v -tx1 | tr -d " \n") &&
	rm -rf "$CACHE" &&
	stackrec symbolize -e goprog -f <addrs >/dev/null &&
	test "$(entries)" = "go-$hex.$REVISION-addr2line" &&
	sed -i s/1000/2000/ prog.go &&
	GOCACHE=$PWD/gocache GOPATH=$PWD/gopath GO111MODULE=off go build -o goprog prog.go &&
	stackrec symbolize -e goprog -f <addrs >/dev/null &&
	test "$(entries | wc -l)" = 2
'

test_expect_success BPF,GO 'convert: a recorded Go program is cached by its Go build ID, the same bytes cold and warm' '
	rm -rf "$CACHE" &&
	cat >busy.go <<-\SRC &&
	package main

	import "time"

	//go:noinline
	func spin(n int) int {
		s := 0
		for i := 0; i < n; i++ {
			s += i ^ s
		}
		return s
	}

	func main() {
		for start := time.Now(); time.Since(start) < 300*time.Millisecond; {
			spin(100000)
		}
	}
	SRC
	GOCACHE=$PWD/gocache GOPATH=$PWD/gopath GO111MODULE=off go build -o gobusy busy.go &&
	stackrec record -F 999 -o go.rec -- ./gobusy >/dev/null &&
	stackrec convert --no-cache go.rec -f folded -o expect.folded &&
	grep -F main.spin expect.folded &&
	stackrec convert go.rec -f folded -o cold.folded &&
	entries | grep -E "^go-[0-9a-f]+\.[0-9]+-profile-C$" &&
	stackrec convert -v go.rec -f folded -o warm.folded 2>err &&
	grep -E "symbol cache entry .*/go-[0-9a-f]+\.[0-9]+-profile-C.: [0-9]+ addresses" err &&
	cmp expect.folded cold.folded && cmp expect.folded warm.folded
'

# A Go note made by hand on a C binary linked without a GNU build ID: owner "Go\0\0", type 4, DESC.
go_note() {
	/usr/bin/python3 - "$1" "$2" <<-\PY
	import struct, sys
	desc = sys.argv[1].encode("latin-1").decode("unicode_escape").encode("latin-1")
	pad = b"\0" * (-len(desc) % 4)
	open(sys.argv[2], "wb").write(struct.pack("<III", 4, len(desc), 4) + b"Go\0\0" + desc + pad)
	PY
}

test_expect_success BINUTILS 'a hand-made Go note: printable and bounded is a key; else, or none, nothing is cached' '
	printf "int main(void) { return 0; }\n" >c.c &&
	gcc -O2 -g -Wl,--build-id=none -o nobid c.c &&
	! readelf -n nobid | grep -F NT_GNU_BUILD_ID &&
	rm -rf "$CACHE" &&
	stackrec symbolize -e nobid -f 0x10 >/dev/null && test -z "$(entries)" &&
	for desc in "a/b/c/d" "x/../../etc" "bad\\nbyte" "sp ace" "" "$(printf "%0101d" 0)" "$(printf "%0100d" 0)"; do
		rm -rf "$CACHE" &&
		go_note "$desc" note &&
		objcopy --add-section .note.go.buildid=note --set-section-alignment .note.go.buildid=4 nobid withnote &&
		readelf -n withnote | grep -F "GO BUILDID" &&
		stackrec symbolize -e withnote -f 0x10 >/dev/null &&
		case $desc in
		a/b/c/d) test "$(entries)" = "go-612f622f632f64.$REVISION-addr2line" ;;
		x/*) test "$(entries)" = "go-782f2e2e2f2e2e2f657463.$REVISION-addr2line" ;;
		0000*) if [ ${#desc} = 100 ]; then test "$(entries | cut -c1-3)" = go-; else test -z "$(entries)"; fi ;;
		*) test -z "$(entries)" ;;
		esac || { echo "note \"$desc\": $(entries)"; return 1; }
	done
'

test_done
