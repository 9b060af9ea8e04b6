// work.js SECONDS — a JIT-compiled workload for `make bench` B (node --perf-basic-prof): recursion, JSON and
// string building, so that stacks mix JIT frames (named from /tmp/perf-PID.map), node's own C++ and libc.
'use strict';
const seconds = Number(process.argv[2] || 8);
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
function roundTrip(text) { return JSON.parse(text).items.length; }
function build(n) { let s = ''; for (let i = 0; i < n; i++) s += String.fromCharCode(97 + (i % 26)); return s; }
const text = JSON.stringify({ items: Array.from({ length: 50 }, (_, i) => ({ id: i, name: build(20) })) });
const end = Date.now() + seconds * 1000;
let acc = 0;
while (Date.now() < end) {
	acc += fib(18);
	for (let i = 0; i < 20; i++) acc += roundTrip(text);
	acc += build(500).length;
}
console.log(acc);
