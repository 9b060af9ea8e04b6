#!/usr/bin/env bash
test_description='pprof, speedscope, d3 and trace outputs: read back by their real consumers, and golden files'
. "$(dirname "$0")/test-lib.sh"

# The unit binary (tests/unit/test-formats.c) writes every format of a hand-built profile into the current
# directory; tests/data/formats/ holds the golden copies. Every output, golden files and the fixtures'
# expected outputs included, is also checked by its real consumer: Google's pprof (built from Debian's
# source by ../shared/tools/pprof.sh), speedscope's JSON schema (tests/data/README.md) with Debian's
# python3-jsonschema.

PPROF=$SRC_DIR/../shared/tools/pprof.sh
GOLDEN=$TESTS/data/formats
SCHEMA=$TESTS/data/speedscope-file-format-schema.json
PYTHON=/usr/bin/python3
OUTPUTS="pprof.pb.gz speedscope.json speedscope-wall.json speedscope-off.json d3.json d3-annotated.json d3-off.json
	trace.jsonl"

# The first call of pprof.sh installs Go and builds pprof (apt and go print to stderr): do it here, before
# any test looks at pprof's stderr. A failed build is a failed test below, not a skip.
if [ -x "$PPROF" ]; then
	test_set_prereq PPROF
	"$PPROF" -help >pprof-build.log 2>&1 || { echo "# building pprof failed:"; sed 's/^/#   /' pprof-build.log; }
else
	test_unset_prereq PPROF "no $PPROF"
fi
# Debian's python3-jsonschema (CI is a fresh Debian 12: install it when missing, as root).
if ! "$PYTHON" -c 'import jsonschema' 2>/dev/null && [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-jsonschema >/dev/null 2>&1 ||
		{ apt-get update -qq >/dev/null 2>&1 &&
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-jsonschema >/dev/null 2>&1; }
fi
if "$PYTHON" -c 'import jsonschema' 2>/dev/null; then
	test_set_prereq JSONSCHEMA
else
	test_unset_prereq JSONSCHEMA "python3-jsonschema is not installed"
fi
if [ -s "$FIXTURES/expected/inline.pprof" ]; then
	test_set_prereq FIXTURE_OUTPUTS
else
	test_unset_prereq FIXTURE_OUTPUTS "no fixtures/expected/ (make fixtures)"
fi

# pprof_loads FILE: pprof reads FILE with nothing on stderr. -symbolize=none: the profile is symbolized
# already; without it pprof would also try to symbolize modules convert could not name and say that their
# binaries are missing (expected, not an error of the file). Plain -raw must still succeed.
pprof_loads() {
	"$PPROF" -symbolize=none -raw "$1" >"$1.raw" 2>"$1.err" &&
	if [ -s "$1.err" ]; then cat "$1.err" >&2; return 1; fi &&
	grep -q "^Mappings" "$1.raw" &&
	"$PPROF" -raw "$1" >/dev/null 2>"$1.symbolize-err"
}

# pprof_flat FILE [PPROF_OPTIONS...]: "function value" per function with a flat value, from pprof -top
# (-sample_index=samples unless told), sorted; a unit pprof prints after the number (-unit=us: 7000us) is dropped.
pprof_flat() {
	local file=$1
	shift
	"$PPROF" -symbolize=none -top -nodecount=1000000 -nodefraction=0 -edgefraction=0 \
		"${@:--sample_index=samples}" "$file" >"$file.top" &&
	awk '/^ *flat  *flat%/ { table = 1; next }
		table { value = $1; sub(/[a-z]+$/, "", value) }
		table && value ~ /^[0-9]+$/ && value > 0 {
			name = $0; sub(/^ *[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +/, "", name); sub(/ \(inline\)$/, "", name)
			flat[name] += value
		}
		END { for (n in flat) print n, flat[n] }' "$file.top" | LC_ALL=C sort
}

# folded_flat FILE: the same from folded stacks: the leaf's name without _[k]/_[j]/_[i]; an unnamed
# leaf is "[module]" in both (pprof names an address without a function by its mapping), and "[unknown]"
# (no module) is pprof's "<unknown>".
folded_flat() {
	awk '{ n = $NF; stack = $0; sub(/ [0-9]+$/, "", stack); k = split(stack, f, ";"); leaf = f[k]
		sub(/_\[[kij]\]$/, "", leaf)
		if (leaf == "[unknown]") leaf = "<unknown>"
		flat[leaf] += n }
		END { for (l in flat) print l, flat[l] }' "$1" | LC_ALL=C sort
}

folded_total() { awk '{ t += $NF } END { print t + 0 }' "$1"; }

# pprof_matches_folded PPROF FOLDED [PPROF_OPTIONS...]: the same flat value per function (samples unless the
# options choose another sample index and unit), so the same -top percentages and total.
pprof_matches_folded() {
	local file=$1 folded=$2
	shift 2
	pprof_flat "$file" "$@" >"$file.flat" &&
	folded_flat "$folded" >"$file.folded-flat" &&
	test_cmp "$file.folded-flat" "$file.flat" &&
	total=$(folded_total "$folded") &&
	grep -E "^Showing nodes accounting for $total[a-z]*, 100% of $total[a-z]* total" "$file.top"
}

# speedscope_valid FILE: FILE is valid against speedscope's file format schema, and what speedscope needs
# beyond it holds: an evented profile's events are in time order within [startValue, endValue] and every C
# closes the frame the last unclosed O opened (speedscope refuses a file otherwise), none left open.
speedscope_valid() {
	"$PYTHON" - "$SCHEMA" "$1" <<-'EOF'
	import json, sys, jsonschema
	schema = json.load(open(sys.argv[1]))
	doc = json.load(open(sys.argv[2], encoding="utf-8"))
	jsonschema.validate(doc, schema)
	frames = len(doc["shared"]["frames"])
	assert doc["activeProfileIndex"] < max(1, len(doc["profiles"])), "activeProfileIndex out of range"
	for p in doc["profiles"]:
	    if p["type"] == "sampled":
	        assert len(p["samples"]) == len(p["weights"]), "samples and weights differ in length"
	        assert all(0 <= i < frames for s in p["samples"] for i in s), "frame index out of range"
	        assert p["endValue"] == sum(p["weights"]), "endValue is not the sum of the weights"
	        continue
	    assert p["type"] == "evented" and p["unit"] == "nanoseconds", (p["type"], p["unit"])
	    at, open_frames = p["startValue"], []
	    for e in p["events"]:
	        assert 0 <= e["frame"] < frames, "frame index out of range"
	        assert e["at"] >= at, "events out of time order in " + p["name"]
	        at = e["at"]
	        if e["type"] == "O":
	            open_frames.append(e["frame"])
	        else:
	            assert open_frames and open_frames.pop() == e["frame"], "C does not match the last O in " + p["name"]
	    assert not open_frames, "frames left open in " + p["name"]
	    assert at <= p["endValue"], "an event after endValue in " + p["name"]
	EOF
}

# d3_root_is TOTAL FILE: valid JSON, root "root" with value TOTAL, every node at least its children.
d3_root_is() {
	"$PYTHON" - "$1" "$2" <<-'EOF'
	import json, sys
	root = json.load(open(sys.argv[2], encoding="utf-8"))
	assert root["name"] == "root", root["name"]
	assert root["value"] == int(sys.argv[1]), "root value %d, expected %s" % (root["value"], sys.argv[1])
	def walk(n):
	    assert n["value"] >= sum(c["value"] for c in n["children"]), n["name"]
	    assert n.get("libtype", "kernel") in ("kernel", "jit", "inlined"), n["libtype"]
	    names = [(c["name"], c.get("libtype", "")) for c in n["children"]]
	    assert names == sorted(set(names)), "children not sorted and distinct under " + n["name"]
	    for c in n["children"]:
	        walk(c)
	walk(root)
	EOF
}

# trace_valid FILE: JSON Lines, a version-1 header first, then stack records whose counts and times sum to the
# totals, then one sample record per sample in time order, each of its stack's thread and kind; the sample
# records of a stack are as many as its count and their weights sum to its time.
trace_valid() {
	"$PYTHON" - "$1" <<-'EOF'
	import json, sys
	lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
	header = json.loads(lines[0])
	assert header["type"] == "header" and header["format"] == "stackrec-trace" and header["version"] == 1
	keys = None
	stacks, samples = [], []
	for line in lines[1:]:
	    r = json.loads(line)
	    if r["type"] == "stack":
	        assert not samples, "a stack record after a sample record"
	        assert r["id"] == len(stacks) and r["kind"] in ("on_cpu", "off_cpu")
	        assert r["weight_ns"] == r["on_cpu_ns"] + r["off_cpu_ns"]
	        assert r["off_cpu_ns" if r["kind"] == "on_cpu" else "on_cpu_ns"] == 0, "a stack of one kind has the other time"
	        stacks.append(r)
	        for f in r["frames"]:
	            assert keys is None or set(f) == keys, "frames do not all have the same members"
	            keys = set(f)
	    else:
	        assert r["type"] == "sample", r["type"]
	        s = stacks[r["stack"]]
	        assert (r["pid"], r["tid"], r["kind"]) == (s["pid"], s["tid"], s["kind"]), r
	        assert not samples or samples[-1]["time_ns"] <= r["time_ns"], "samples out of time order"
	        samples.append(r)
	assert sum(s["count"] for s in stacks) == header["total_samples"]
	assert sum(s["on_cpu_ns"] for s in stacks) == header["total_on_cpu_ns"]
	assert sum(s["off_cpu_ns"] for s in stacks) == header["total_off_cpu_ns"]
	assert header["on_cpu_samples"] + header["off_cpu_samples"] == header["total_samples"]
	assert len(samples) == header["sample_records"] == header["total_samples"], (len(samples), header["sample_records"])
	for i, s in enumerate(stacks):
	    mine = [r for r in samples if r["stack"] == i]
	    assert len(mine) == s["count"] and sum(r["weight_ns"] for r in mine) == s["weight_ns"], s["id"]
	EOF
}

test_expect_success 'the formats unit tests pass and write every format' '
	"$UNIT_DIR/test-formats" . >unit.tap &&
	cat unit.tap &&
	! grep "^not ok" unit.tap &&
	for f in $OUTPUTS; do test -s $f || return 1; done
'

test_expect_success 'every output equals its golden file in tests/data/formats/' '
	for f in $OUTPUTS; do cmp "$GOLDEN/$f" $f || return 1; done
'

test_expect_success PPROF 'pprof reads the pprof output with no error' '
	pprof_loads pprof.pb.gz
'

test_expect_success PPROF 'pprof -raw: sample types, mappings, labels, comments' '
	grep "^samples/count cpu/nanoseconds\[dflt\] off_cpu/nanoseconds$" pprof.pb.gz.raw &&
	grep "^ *5 *5000000 *0: 1 2 3 4 $" pprof.pb.gz.raw &&
	grep "^ *2 *0 *7000000: 1 2 3 4 $" pprof.pb.gz.raw &&
	grep "comm:\[app\] kind:\[off_cpu\] thread_name:\[app\]" pprof.pb.gz.raw &&
	grep "^1: 0x401000/0x402000/0x1000 /usr/bin/app 0123456789abcdef0123456789abcdef01234567 \[FN\]\[FL\]\[LN\]\[IN\]$" pprof.pb.gz.raw &&
	grep " \[kernel.kallsyms\] " pprof.pb.gz.raw &&
	grep "thread_name:\[wörker \"1\"\]" pprof.pb.gz.raw &&
	grep "pid:\[100\] tid:\[101\]" pprof.pb.gz.raw &&
	grep "^Comment: command: stackrec record -F 1000" pprof.pb.gz.raw &&
	grep "^Comment: host: testhost" pprof.pb.gz.raw
'

test_expect_success PPROF 'pprof keeps probe context of the value 0 and the empty string, and -tagfocus finds 0' '
	# pprof drops a label whose fields are all 0 (encode.go): top.id 0 and top.s "" were not there
	"$PPROF" -symbolize=none -tags context-zero.pb.gz >zero.tags 2>zero.err &&
	cat zero.tags &&
	grep -A1 "^ *top.id: Total 5.0ms" zero.tags | grep -E "5.0ms \( *100%\): 0$" &&
	grep -A1 "^ *top.s: Total 5.0ms" zero.tags | grep -F "(  100%): \"\"" &&
	"$PPROF" -symbolize=none -top -tagfocus=top.id=0 context-zero.pb.gz >zero.top 2>/dev/null &&
	grep "^Showing nodes accounting for 5ms, 29.41% of 17ms total" zero.top
'

# The hand-built profile samples at 1000 Hz: its on-CPU milliseconds are folded's on-CPU sample counts.
test_expect_success PPROF 'pprof -top -sample_index=cpu flat per function equals folded --kind on' '
	test -s folded.txt &&
	pprof_matches_folded pprof.pb.gz folded.txt -sample_index=cpu -unit=ms &&
	grep "leaf 5" pprof.pb.gz.flat &&
	grep "clear_user 3" pprof.pb.gz.flat
'

test_expect_success PPROF 'pprof -top -sample_index=off_cpu flat per function equals folded --kind off' '
	pprof_matches_folded pprof.pb.gz folded-off.txt -sample_index=off_cpu -unit=us &&
	echo "leaf 7000" >expect &&
	test_cmp expect pprof.pb.gz.flat
'

test_expect_success PPROF 'pprof -top totals: every sample, on-CPU and off-CPU time' '
	pprof_flat pprof.pb.gz -sample_index=samples >/dev/null &&
	grep "^Showing nodes accounting for 19, 100% of 19 total" pprof.pb.gz.top &&
	grep "^Type: samples$" pprof.pb.gz.top &&
	"$PPROF" -symbolize=none -top pprof.pb.gz >default.top &&
	grep "^Type: cpu$" default.top &&
	grep "^Showing nodes accounting for 17ms, 100% of 17ms total" default.top &&
	"$PPROF" -symbolize=none -top -sample_index=off_cpu pprof.pb.gz >off.top &&
	grep "^Showing nodes accounting for 7ms, 100% of 7ms total" off.top
'

test_expect_success PPROF 'pprof -traces marks inlined frames (inline)' '
	"$PPROF" -symbolize=none -traces pprof.pb.gz >traces &&
	grep "^ *5ms *leaf (inline)$" traces &&
	grep "^ *hot_inline (inline)$" traces &&
	grep "^ *mid$" traces
'

test_expect_success JSONSCHEMA 'speedscope outputs pass speedscope'"'"'s file format schema' '
	speedscope_valid speedscope.json &&
	speedscope_valid speedscope-wall.json &&
	speedscope_valid speedscope-off.json
'

# speedscope's own importers make one frame per function (its pprof importer keys frames by name, file and
# start line); the fixture's leaf() is sampled at two lines and must still be one frame.
test_expect_success FIXTURE_OUTPUTS 'speedscope: a function sampled at several lines is one frame' '
	"$PYTHON" - "$FIXTURES/expected/inline.trace" "$FIXTURES/expected/inline.speedscope" <<-\EOF
	import json, sys
	lines = {f["line"] for l in open(sys.argv[1]) for f in json.loads(l).get("frames", []) if f["function"] == "leaf"}
	assert len(lines) >= 2, ("the fixture should sample leaf at several lines", lines)
	frames = json.load(open(sys.argv[2]))["shared"]["frames"]
	leafs = [f for f in frames if f["name"] == "leaf"]
	assert len(leafs) == 1, leafs
	names = [(f["name"], f.get("file")) for f in frames]
	assert len(names) == len(set(names)), names
	EOF
'

test_expect_success JSONSCHEMA 'd3 root value equals the total of folded with the same --kind' '
	d3_root_is $(folded_total folded.txt) d3.json &&
	d3_root_is 17 d3-annotated.json &&
	d3_root_is $(folded_total folded-off.txt) d3-off.json &&
	d3_root_is 7000 d3-off.json
'

test_expect_success JSONSCHEMA 'trace is JSON Lines with a version-1 header, stacks, then samples in time' '
	trace_valid trace.jsonl
'

test_expect_success PPROF,JSONSCHEMA 'the golden files themselves pass the same consumers' '
	cp "$GOLDEN/pprof.pb.gz" golden.pb.gz &&
	pprof_loads golden.pb.gz &&
	pprof_matches_folded golden.pb.gz folded.txt -sample_index=cpu -unit=ms &&
	speedscope_valid "$GOLDEN/speedscope.json" &&
	speedscope_valid "$GOLDEN/speedscope-wall.json" &&
	speedscope_valid "$GOLDEN/speedscope-off.json" &&
	d3_root_is 17 "$GOLDEN/d3.json" &&
	trace_valid "$GOLDEN/trace.jsonl"
'

test_expect_success PPROF,JSONSCHEMA 'a profile without samples gives output the consumers accept' '
	pprof_loads empty.pb.gz &&
	speedscope_valid empty-speedscope.json &&
	d3_root_is 0 empty-d3.json &&
	trace_valid empty-trace.jsonl
'

# A recording with on- and off-CPU samples of the same stacks (tests/data/on-off-cpu.script, written by
# test-convert as in t3000), converted by stackrec and read back by the consumers.
test_expect_success 'write a recording with on- and off-CPU samples' '
	cp "$TESTS/data/on-off-cpu.kallsyms" . &&
	"$UNIT_DIR/test-convert" write on-off.rec <"$TESTS/data/on-off-cpu.script" &&
	stackrec convert on-off.rec -f pprof -o on-off.pb.gz &&
	stackrec convert on-off.rec -f speedscope -o on-off.speedscope &&
	stackrec convert on-off.rec -f speedscope --kind wall -o on-off-wall.speedscope &&
	stackrec convert on-off.rec -f speedscope --kind off -o on-off-off.speedscope &&
	stackrec convert on-off.rec -f trace -o on-off.trace &&
	stackrec convert on-off.rec -f d3 --kind wall -o on-off-wall.d3 &&
	stackrec convert on-off.rec --kind off -o on-off-off.folded &&
	stackrec convert on-off.rec --kind wall -o on-off-wall.folded
'

test_expect_success PPROF 'on- and off-CPU: pprof has the three sample types, -top totals for each index' '
	pprof_loads on-off.pb.gz &&
	grep "^samples/count cpu/nanoseconds\[dflt\] off_cpu/nanoseconds$" on-off.pb.gz.raw &&
	grep "^ *3 *3000000 *0: 1 2 $" on-off.pb.gz.raw &&
	grep "^ *1 *0 *5000000: 1 2 $" on-off.pb.gz.raw &&
	pprof_flat on-off.pb.gz -sample_index=samples >/dev/null &&
	grep "^Showing nodes accounting for 13, 100% of 13 total" on-off.pb.gz.top &&
	pprof_flat on-off.pb.gz -sample_index=cpu >/dev/null &&
	grep "^Showing nodes accounting for 11ms, 100% of 11ms total" on-off.pb.gz.top &&
	pprof_matches_folded on-off.pb.gz on-off-off.folded -sample_index=off_cpu -unit=us &&
	grep "^Showing nodes accounting for 7500us, 100% of 7500us total" on-off.pb.gz.top &&
	"$PPROF" -symbolize=none -top -sample_index=off_cpu -tagfocus=kind=off_cpu on-off.pb.gz >tagged.top &&
	grep "^Showing nodes accounting for 7.50ms, 100% of 7.50ms total" tagged.top
'

test_expect_success JSONSCHEMA 'on- and off-CPU: speedscope timelines pass the schema, in time, O and C paired' '
	speedscope_valid on-off.speedscope &&
	speedscope_valid on-off-wall.speedscope &&
	speedscope_valid on-off-off.speedscope
'

# Thread 100 ran read_zero 0-3 ms (the periods its ticks at 1, 2 and 3 ms end), waited in it 4-9 ms, then in
# schedule 9-11.5 ms (from the start of the first period); process 200 ran most, so the file opens on it
# (profile 2), not on the lowest pid.
test_expect_success JSONSCHEMA 'on- and off-CPU: speedscope shows each thread'"'"'s intervals of the --kind' '
	"$PYTHON" - on-off.speedscope on-off-wall.speedscope on-off-off.speedscope <<-\EOF
	import json, sys
	on, wall, off = (json.load(open(f)) for f in sys.argv[1:])
	names = [f["name"] for f in wall["shared"]["frames"]]
	def events(doc, i):
	    return [(e["type"], names[e["frame"]], e["at"]) for e in doc["profiles"][i]["events"]]
	assert [p["name"] for p in wall["profiles"]] == ["app (pid 100, tid 100)", "worker (pid 100, tid 101)",
	                                                 "other (pid 200, tid 200)"], wall["profiles"]
	assert on["activeProfileIndex"] == 2 and wall["activeProfileIndex"] == 2, "not on the busiest thread"
	assert events(wall, 0) == [("O", "do_syscall_64_[k]", 0), ("O", "read_zero_[k]", 0),
	                           ("C", "read_zero_[k]", 3000000), ("C", "do_syscall_64_[k]", 3000000),
	                           ("O", "do_syscall_64_[k]", 4000000), ("O", "read_zero_[k]", 4000000),
	                           ("C", "read_zero_[k]", 9000000), ("O", "schedule_[k]", 9000000),
	                           ("C", "schedule_[k]", 11500000), ("C", "do_syscall_64_[k]", 11500000)], events(wall, 0)
	assert events(on, 0) == [("O", "do_syscall_64_[k]", 0), ("O", "read_zero_[k]", 0),
	                         ("C", "read_zero_[k]", 3000000), ("C", "do_syscall_64_[k]", 3000000)], events(on, 0)
	assert len(off["profiles"]) == 1 and off["activeProfileIndex"] == 0
	assert off["profiles"][0]["startValue"] == 4000000 and off["profiles"][0]["endValue"] == 11500000
	EOF
'

test_expect_success JSONSCHEMA 'on- and off-CPU: the trace has both kinds of stacks and every sample'"'"'s time' '
	trace_valid on-off.trace &&
	grep -c "\"type\":\"sample\"" on-off.trace >count &&
	echo 13 >expect && test_cmp expect count &&
	grep -q "^{\"type\":\"sample\",\"time_ns\":4000000,\"pid\":100,\"tid\":100,\"kind\":\"off_cpu\",\"weight_ns\":5000000,\"stack\":1}$" on-off.trace &&
	grep -q "\"sample_kind\":\"mixed\"" on-off.trace &&
	d3_root_is $(folded_total on-off-wall.folded) on-off-wall.d3 &&
	d3_root_is 18500 on-off-wall.d3
'

# The fixtures' expected outputs (fixtures/expected/, compared exactly by t3100) checked by the consumers.
for rec in inline short; do
	test_expect_success PPROF,FIXTURE_OUTPUTS "fixture $rec: pprof reads it, -top equals folded, inline marked" "
		cp \"\$FIXTURES/expected/$rec.pprof\" $rec.pb.gz &&
		pprof_loads $rec.pb.gz &&
		pprof_matches_folded $rec.pb.gz \"\$FIXTURES/expected/$rec.folded\" &&
		if [ $rec = inline ]; then
			\"\$PPROF\" -symbolize=none -traces $rec.pb.gz >$rec.traces &&
			grep -E '^ +(leaf|hot_inline) \\(inline\\)\$' $rec.traces
		fi
	"
	test_expect_success JSONSCHEMA,FIXTURE_OUTPUTS "fixture $rec: speedscope schema, d3 total, trace" "
		speedscope_valid \"\$FIXTURES/expected/$rec.speedscope\" &&
		d3_root_is \$(folded_total \"\$FIXTURES/expected/$rec.folded\") \"\$FIXTURES/expected/$rec.d3\" &&
		trace_valid \"\$FIXTURES/expected/$rec.trace\"
	"
done

test_done
