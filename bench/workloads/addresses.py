# addresses.py — writes the address lists of the symbolize benchmark (bench/run.sh, E) for one binary:
# DISTINCT random addresses of its .text, one per line in hex with 0x (llvm-symbolizer reads a number without
# it as decimal, or as a symbol name), to OUT.distinct, and COUNT addresses drawn from
# them with a Zipf-like skew (the i-th address weighs 1/i: a few hot addresses and a long tail, as in a
# profile) to OUT.skewed. Seeded: the same lists on every run. Usage: python3 addresses.py BINARY DISTINCT COUNT OUT
import random
import subprocess
import sys

binary, distinct, count, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
start = size = None
for line in subprocess.check_output(["readelf", "-SW", binary]).decode().splitlines():
    if " .text " in line:
        fields = line.split("]")[1].split()
        start, size = int(fields[2], 16), int(fields[4], 16)
if start is None:
    sys.exit("addresses.py: '%s' has no .text" % binary)
rng = random.Random(1)
chosen = set()
while len(chosen) < min(distinct, size):
    chosen.add(start + rng.randrange(size))
addresses = sorted(chosen)
rng.shuffle(addresses)
with open(out + ".distinct", "w") as f:
    f.write("".join("0x%x\n" % a for a in addresses))
weights = [1.0 / (i + 1) for i in range(len(addresses))]
with open(out + ".skewed", "w") as f:
    f.write("".join("0x%x\n" % a for a in rng.choices(addresses, weights=weights, k=count)))
