/*
 * pingpong.c — the bench's context-switch-heavy workload for record --off-cpu: two threads bounce one byte
 * through two pipes ROUNDS times, so each round trip is two blocking reads and two switches per thread.
 *
 * Usage: pingpong ROUNDS [TIMEFILE]
 * Writes "WALL_NS CPU_NS" of the bouncing to TIMEFILE, as cpu.c does.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int ping[2], pong[2];
static long rounds;

static unsigned long long ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

__attribute__((noinline)) static void bounce(int in, int out)
{
	char c;

	if (read(in, &c, 1) != 1 || write(out, &c, 1) != 1)
		exit(1);
}

static void *ponger(void *arg)
{
	for (long i = 0; i < rounds; i++)
		bounce(ping[0], pong[1]);
	return arg;
}

int main(int argc, char **argv)
{
	unsigned long long wall0, cpu0, wall, cpu;
	pthread_t thread;
	char c = 'x';

	rounds = argc > 1 ? atol(argv[1]) : 100000;
	if (rounds <= 0 || pipe(ping) || pipe(pong)) {
		fprintf(stderr, "usage: pingpong ROUNDS [TIMEFILE]\n");
		return 2;
	}
	pthread_create(&thread, NULL, ponger, NULL);
	wall0 = ns(CLOCK_MONOTONIC), cpu0 = ns(CLOCK_PROCESS_CPUTIME_ID);
	for (long i = 0; i < rounds; i++) {
		if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1)
			return 1;
	}
	wall = ns(CLOCK_MONOTONIC) - wall0, cpu = ns(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
	pthread_join(thread, NULL);
	if (argc > 2) {
		FILE *f = fopen(argv[2], "w");

		if (!f || fprintf(f, "%llu %llu\n", wall, cpu) < 0 || fclose(f) != 0) {
			perror(argv[2]);
			return 1;
		}
	}
	return 0;
}
