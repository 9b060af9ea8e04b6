/*
 * stress.c — the workloads of bench/stress.sh, one binary run under three names (its comm tells them apart):
 *
 *   stress-threads N SECONDS   N threads (named stress-tNN) that each spin in thread_work for SECONDS;
 *   stress-spawn RATE SECONDS PATH
 *                              starts RATE short processes a second for SECONDS, each PATH (stress-short)
 *                              exec'd anew, and reaps them; prints how many it started;
 *   stress-short               spins about a millisecond in short_work, then exits.
 *
 * Every function that burns CPU is noinline, so that the stacks it shows are main → *_work.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void spin_until(double end)
{
	unsigned long x = 1;

	while (now_s() < end)
		for (int i = 0; i < 1000; i++)
			sink = x = x * 6364136223846793005ul + 1442695040888963407ul;
}

static double seconds;

__attribute__((noinline)) static void *thread_work(void *arg)
{
	char name[16];

	snprintf(name, sizeof(name), "stress-t%02d", (int)(long)arg);
	pthread_setname_np(pthread_self(), name);
	spin_until(now_s() + seconds);
	return NULL;
}

__attribute__((noinline)) static void short_work(void)
{
	spin_until(now_s() + 0.001);
}

static int threads(int n)
{
	pthread_t *t = calloc((size_t)n, sizeof(*t));

	for (long i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, thread_work, (void *)i))
			return 1;
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	free(t);
	return 0;
}

static int spawn(double rate, const char *path)
{
	double start = now_s(), next = start;
	unsigned long started = 0;

	signal(SIGCHLD, SIG_DFL);
	while (now_s() < start + seconds) {
		pid_t pid = fork();

		if (pid == 0) {
			execl(path, "stress-short", (char *)NULL);
			_exit(127);
		}
		if (pid > 0)
			started++;
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		next += 1 / rate;
		while (now_s() < next)
			usleep(200);
	}
	while (wait(NULL) > 0)
		;
	printf("%lu\n", started);
	return 0;
}

int main(int argc, char **argv)
{
	const char *self = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];

	if (!strcmp(self, "stress-short")) {
		short_work();
		return 0;
	}
	if (!strcmp(self, "stress-threads") && argc == 3) {
		seconds = atof(argv[2]);
		return threads(atoi(argv[1]));
	}
	if (!strcmp(self, "stress-spawn") && argc == 4) {
		seconds = atof(argv[2]);
		return spawn(atof(argv[1]), argv[3]);
	}
	fprintf(stderr, "usage: stress-threads N SECONDS | stress-spawn RATE SECONDS PATH | stress-short\n");
	return 2;
}
