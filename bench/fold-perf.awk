# fold-perf.awk — folds `perf script -F comm,tid,ip,sym,dso` output into folded stacks, the step that
# stackcollapse-perf.pl does (Debian 12 packages no stackcollapse, and nothing may be downloaded):
#   comm;outermost;...;leaf COUNT
# as `stackrec convert -f folded` writes them: kernel frames end in _[k], a frame without a module (perf
# prints `0 [unknown] ([unknown])`) is [unknown], a frame in a module but without a symbol is
# module+0xADDR, inlined frames are frames of their own, `;` in names becomes `:`. Lines are not sorted.

function emit() {
	if (have)
		count[comm (stack == "" ? "" : ";" stack)]++
	have = 0
	stack = ""
}

/^[^\t]/ {
	emit()
	comm = $0
	sub(/[ \t]+[0-9]+[ \t]*$/, "", comm)	# the tid
	sub(/^[ \t]+/, "", comm)
	gsub(/ /, "_", comm)
	if (comm == "")
		comm = "[unknown]"
	have = 1
	next
}

/^\t/ {
	line = $0
	sub(/^[ \t]+/, "", line)
	addr = line
	sub(/ .*/, "", addr)
	rest = substr(line, length(addr) + 2)
	dso = ""
	# the module is the last parenthesized group; names may hold spaces and parentheses
	if (match(rest, / \([^()]*\)$/)) {
		dso = substr(rest, RSTART + 2, RLENGTH - 3)
		rest = substr(rest, 1, RSTART - 1)
	}
	if (dso ~ /^\[kernel\./ || dso ~ /^\[guest\.kernel/)
		name = rest "_[k]"
	else if (rest == "[unknown]" || rest == "")
		name = (dso == "" || dso == "[unknown]") ? "[unknown]" : dso_base(dso) "+0x" addr
	else
		name = rest
	gsub(/;/, ":", name)
	stack = (stack == "") ? name : name ";" stack
	next
}

/^$/ { emit() }

function dso_base(path) {
	sub(/.*\//, "", path)
	return path
}

END {
	emit()
	for (k in count)
		print k, count[k]
}
