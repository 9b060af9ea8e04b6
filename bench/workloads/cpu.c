/*
 * cpu.c — the bench's C workload: a fixed amount of CPU-bound work along one call chain,
 * main -> top -> mid (recursing DEPTH times) -> leaf, every function noinline.
 *
 * bench/run.sh builds it twice: with -fno-omit-frame-pointer for the record-cost and convert-speed
 * sections (so that frame-pointer walks give whole stacks there), and with plain -O2, as Debian builds
 * its programs, for the stack-completeness section.
 *
 * Usage: cpu ITERATIONS [TIMEFILE]
 * Writes "WALL_NS CPU_NS" of the work loop to TIMEFILE (the target measures itself, so that the
 * profiler's start-up and shutdown do not count), the checksum to stdout. With CPU_IN_THREAD=1 in the
 * environment the loop runs in a second thread while the main one waits in pthread_join: most programs do
 * their work in threads, and a profiler may treat a thread's stack otherwise than the main thread's.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEPTH 4
#define LEAF_STEPS 2000

static unsigned long long ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

__attribute__((noinline)) static unsigned long leaf(unsigned long x)
{
	for (int i = 0; i < LEAF_STEPS; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}

/* The result is squared: no tail call and no accumulator loop, each level keeps a frame of its own. */
__attribute__((noinline)) static unsigned long mid(unsigned long x, int depth)
{
	if (depth > 0) {
		unsigned long r = mid(x ^ (unsigned long)depth, depth - 1);

		return r * r + (unsigned long)depth;
	}
	return leaf(x);
}

__attribute__((noinline)) static unsigned long top(unsigned long x, long i)
{
	return mid(x, (int)(i % DEPTH)) + 1;
}

struct work {
	long iterations;
	unsigned long x;
};

/* A macro, not a function: main's stacks stay main -> top -> mid -> leaf, without an inlined frame. */
#define LOOP(w)                                                    \
	do {                                                       \
		for (long i_ = 0; i_ < (w)->iterations; i_++)      \
			(w)->x = top((w)->x, i_);                  \
	} while (0)

static void *thread_main(void *arg)
{
	struct work *w = arg;

	LOOP(w);
	return NULL;
}

int main(int argc, char **argv)
{
	struct work w = { .iterations = argc > 1 ? atol(argv[1]) : 100000, .x = 1 };
	const char *in_thread = getenv("CPU_IN_THREAD");
	unsigned long long wall0 = ns(CLOCK_MONOTONIC), cpu0 = ns(CLOCK_PROCESS_CPUTIME_ID);
	unsigned long x;

	if (w.iterations <= 0) {
		fprintf(stderr, "usage: cpu ITERATIONS [TIMEFILE]\n");
		return 2;
	}
	if (in_thread && !strcmp(in_thread, "1")) {
		pthread_t t;

		if (pthread_create(&t, NULL, thread_main, &w) != 0 || pthread_join(t, NULL) != 0) {
			fprintf(stderr, "cpu: cannot run the loop in a thread\n");
			return 1;
		}
	} else {
		struct work *p = &w;

		LOOP(p);
	}
	x = w.x;
	unsigned long long wall = ns(CLOCK_MONOTONIC) - wall0, cpu = ns(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
	if (argc > 2) {
		FILE *f = fopen(argv[2], "w");

		if (!f || fprintf(f, "%llu %llu\n", wall, cpu) < 0 || fclose(f) != 0) {
			perror(argv[2]);
			return 1;
		}
	}
	printf("%lu\n", x);
	return 0;
}
