# symbolize-agree.py — the correctness columns of the symbolize benchmark (bench/run.sh, F).
#
# Usage: python3 symbolize-agree.py BINARY LIST LLVM_OUT EU_OUT TOOL_OUT [DETAILS]
#   LIST      the address list the tools were asked (one hex address a line; repeats weigh as often as they occur)
#   *_OUT     each tool's answers to the distinct addresses of LIST, asked with -a -f -i (llvm-symbolizer:
#             --output-style=GNU -a --functions --inlines --no-demangle); '-' for a tool that did not run
#   DETAILS   where to append the addresses on which TOOL disagrees (optional)
# Prints one line: named% lines% lines-in-functions% agree-llvm% alias-llvm% clone-llvm% agree-eu% ('-' where there is no reference).
#
# Only the innermost frame of each answer is compared (the function the address is in, inlined or not, and its
# file:line). named: a function name other than '??'; lines: a file and a line number other than 0 or '?';
# lines-in-functions: lines among the addresses inside a function symbol (FUNC or IFUNC, from its value to its
# value + size, of BINARY or its debug file): the addresses a profile can hold, not the padding between functions.
# agree-X: among the addresses X names, the share where TOOL prints the same name; alias-X: the share where the
# two names differ but are ELF symbols at one address (of BINARY or its debug file: __memcpy_avx_unaligned_erms
# and memcpy, __GI___libc_malloc and __libc_malloc), counted apart from agreement; clone-X: the share where
# one name is the other with the suffix the compiler gives a part or clone of a function in the symbol table
# (main and main.cold, f and f.isra.0 or f.lto_priv.0, Go's runtime.f and runtime.f.abi0: llvm-symbolizer
# prints the ELF symbol of the code, addr2line and stackrec the DWARF name of the function). agree-eu counts
# exact names only.
import bisect
import collections
import os
import re
import subprocess
import sys


def parse(path):
    """address -> (function, file, line) of the innermost frame, from addr2line-style -a -f -i output."""
    answers = {}
    if path == "-":
        return None
    with open(path, errors="replace") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        if not lines[i].startswith("0x"):
            i += 1
            continue
        addr = int(lines[i], 16)
        func = lines[i + 1] if i + 1 < len(lines) else "??"
        loc = lines[i + 2] if i + 2 < len(lines) else "??:0"
        # eu-addr2line: 'INNER inlined at FILE:LINE:COL in OUTER'; and FILE:LINE:COL, llvm/addr2line FILE:LINE
        func = func.split(" inlined at ")[0]
        loc = re.sub(r" \(discriminator \d+\)$", "", loc)
        m = re.match(r"^(.*?):(\?|\d+)(?::\d+)?$", loc)
        file, line = (m.group(1), m.group(2)) if m else (loc, "?")
        answers.setdefault(addr, (func, file, line))
        i += 3
    return answers


CLONE_SUFFIX = re.compile(r"^(\.(cold|isra|part|constprop|lto_priv|abi0|localalias|\d+))+$")


def clone(a, b):
    """Whether one name is the other with clone suffixes."""
    if len(a) > len(b):
        a, b = b, a
    return b.startswith(a + ".") and CLONE_SUFFIX.match(b[len(a):]) is not None


def debug_file(binary):
    note = subprocess.run(["readelf", "-nW", binary], capture_output=True, text=True).stdout
    m = re.search(r"Build ID: ([0-9a-f]+)", note)
    if m:
        path = "/usr/lib/debug/.build-id/%s/%s.debug" % (m.group(1)[:2], m.group(1)[2:])
        if os.path.exists(path):
            return path
    return None


def symbol_addresses(paths):
    """name -> set of addresses of the code symbols of these files (versions stripped)."""
    syms = collections.defaultdict(set)
    for path in paths:
        out = subprocess.run(["readelf", "-sW", path], capture_output=True, text=True).stdout
        for line in out.splitlines():
            f = line.split()
            if len(f) >= 8 and f[3] in ("FUNC", "IFUNC", "NOTYPE") and f[6] != "UND":
                syms[f[7].split("@")[0]].add(int(f[1], 16))
    return syms


def function_ranges(paths):
    """The union of the address ranges of the function symbols (FUNC, IFUNC, with a size) of these files, as
    sorted, disjoint (start, end) pairs: where a sampled pc or a return address can be. Padding between
    functions is in none."""
    ranges = []
    for path in paths:
        out = subprocess.run(["readelf", "-sW", path], capture_output=True, text=True).stdout
        for line in out.splitlines():
            f = line.split()
            if len(f) >= 8 and f[3] in ("FUNC", "IFUNC") and f[6] != "UND":
                start, size = int(f[1], 16), int(f[2], 0)
                if size:
                    ranges.append((start, start + size))
    ranges.sort()
    merged = []
    for start, end in ranges:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def in_ranges(ranges, starts, a):
    i = bisect.bisect_right(starts, a) - 1
    return i >= 0 and a < ranges[i][1]


def main():
    binary, listfile, llvm_out, eu_out, tool_out = sys.argv[1:6]
    details = sys.argv[6] if len(sys.argv) > 6 else None
    weights = collections.Counter(int(l, 16) for l in open(listfile) if l.strip())
    tool, llvm, eu = parse(tool_out), parse(llvm_out), parse(eu_out)
    syms = symbol_addresses([p for p in (binary, debug_file(binary)) if p])
    total = sum(weights.values())
    named = sum(w for a, w in weights.items() if tool.get(a, ("??",))[0] != "??")
    lines = sum(w for a, w in weights.items() if a in tool and tool[a][1] != "??" and tool[a][2] not in ("0", "?"))
    ranges = function_ranges([p for p in (binary, debug_file(binary)) if p])
    starts = [r[0] for r in ranges]
    inside = {a: w for a, w in weights.items() if in_ranges(ranges, starts, a)}
    lines_in = sum(w for a, w in inside.items() if a in tool and tool[a][1] != "??" and tool[a][2] not in ("0", "?"))
    cols = ["%.2f" % (100.0 * named / total), "%.2f" % (100.0 * lines / total),
            "%.2f" % (100.0 * lines_in / sum(inside.values())) if inside else "-"]
    out = open(details, "a") if details else None
    for name, path, ref in (("llvm-symbolizer", llvm_out, llvm), ("eu-addr2line", eu_out, eu)):
        exact_only = name == "eu-addr2line"
        if ref is None or path == tool_out:
            cols += ["-"] if exact_only else ["-", "-", "-"]
            continue
        asked = agree = alias = cloned = 0
        for a, w in weights.items():
            theirs = ref.get(a, ("??",))[0]
            if theirs == "??":
                continue
            asked += w
            ours = tool.get(a, ("??",))[0]
            if ours == theirs:
                agree += w
            elif exact_only:
                pass
            elif syms.get(ours, set()) & syms.get(theirs, set()):
                alias += w
            elif clone(ours, theirs):
                cloned += w
            if ours != theirs and out:
                out.write("%x %s: %s, %s: %s\n" % (a, tool_out, ours, name, theirs))
        shares = [agree] if exact_only else [agree, alias, cloned]
        cols += ["%.2f" % (100.0 * x / asked) if asked else "-" for x in shares]
    print(" ".join(cols))


main()
