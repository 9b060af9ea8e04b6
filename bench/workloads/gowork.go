// gowork.go — the Go binary of the symbolize benchmark (bench/run.sh, F): a small program that pulls in a
// fair part of Go's runtime and standard library (maps, sorting, JSON, regular expressions, goroutines and
// channels), so that its .text is mostly code the Go toolchain wrote. Built with plain `go build`, which keeps
// DWARF (in Go 1.19, zlib-compressed .zdebug_* sections). Run, it prints a checksum of its work.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
)

type record struct {
	Name  string            `json:"name"`
	Count int               `json:"count"`
	Tags  map[string]string `json:"tags"`
}

func words(n int) []string {
	out := make([]string, 0, n)
	for i := 0; i < n; i++ {
		out = append(out, "w"+strconv.Itoa(i*7919%1000))
	}
	return out
}

func tally(ws []string) map[string]int {
	m := make(map[string]int)
	for _, w := range ws {
		m[w]++
	}
	return m
}

func encode(m map[string]int) ([]byte, error) {
	recs := make([]record, 0, len(m))
	for k, v := range m {
		recs = append(recs, record{Name: k, Count: v, Tags: map[string]string{"len": strconv.Itoa(len(k))}})
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].Name < recs[j].Name })
	return json.Marshal(recs)
}

func matches(data []byte) int {
	re := regexp.MustCompile(`"name":"w(\d+)"`)
	return len(re.FindAll(data, -1))
}

func parallel(ws []string) int {
	var wg sync.WaitGroup
	results := make(chan int, 4)
	for p := 0; p < 4; p++ {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			s := 0
			for i := p; i < len(ws); i += 4 {
				s += len(strings.ToUpper(ws[i]))
			}
			results <- s
		}(p)
	}
	wg.Wait()
	close(results)
	total := 0
	for s := range results {
		total += s
	}
	return total
}

func main() {
	ws := words(20000)
	data, err := encode(tally(ws))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(matches(data), parallel(ws), len(data))
}
