# loop.py — the bench's pure-Python CPU-bound workload: an interpreter loop with a few calls per step,
# no C extension doing the work. Usage: python3 loop.py ITERATIONS
import sys


def step(i):
    return (i * i + 7) % 13


def work(n):
    s = 0
    for i in range(n):
        s += step(i)
    return s


if __name__ == "__main__":
    print(work(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000_000))
