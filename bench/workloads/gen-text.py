# gen-text.py — writes about SIZE_MB megabytes of semi-random text to stdout for the xz workload: lines of
# words drawn from a fixed random vocabulary plus a random number, so that xz finds matches but no long
# repeats. Seeded: the same bytes on every run. Usage: python3 gen-text.py SIZE_MB
import random
import sys

rng = random.Random(42)
words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 9)))
         for _ in range(5000)]
target = int(sys.argv[1]) * 1024 * 1024 if len(sys.argv) > 1 else 50 * 1024 * 1024
out = sys.stdout.buffer
written = 0
while written < target:
    line = (" ".join(rng.choices(words, k=12)) + " %d\n" % rng.getrandbits(32)).encode()
    out.write(line)
    written += len(line)
