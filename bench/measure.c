/*
 * measure.c — `measure -o FILE COMMAND [ARGS...]`: runs COMMAND (stdin, stdout and stderr inherited) and writes
 * "WALL USER SYSTEM MAXRSS" to FILE, seconds with microseconds and KiB: what `/usr/bin/time -f '%e %U %S %M'`
 * writes, but /usr/bin/time prints hundredths of a second, and a warm `stackrec symbolize` of 20,000
 * addresses takes a few of them: its rate came out as 0 or as a multiple of 10 ms. The exit status is
 * COMMAND's (128 + the signal when it was killed), so that callers can tell a failed run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double seconds(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

int main(int argc, char **argv)
{
	struct timespec start, end;
	struct rusage usage;
	FILE *out;
	pid_t pid;
	int status;

	if (argc < 4 || strcmp(argv[1], "-o") != 0) {
		fprintf(stderr, "usage: measure -o FILE COMMAND [ARGS...]\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &start);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "measure: fork: %s\n", strerror(errno));
		return 2;
	}
	if (pid == 0) {
		execvp(argv[3], argv + 3);
		fprintf(stderr, "measure: cannot run '%s': %s\n", argv[3], strerror(errno));
		_exit(127);
	}
	while (wait4(pid, &status, 0, &usage) < 0)
		if (errno != EINTR) {
			fprintf(stderr, "measure: wait4: %s\n", strerror(errno));
			return 2;
		}
	clock_gettime(CLOCK_MONOTONIC, &end);
	out = fopen(argv[2], "w");
	if (!out) {
		fprintf(stderr, "measure: cannot write '%s': %s\n", argv[2], strerror(errno));
		return 2;
	}
	fprintf(out, "%.6f %.6f %.6f %ld\n",
		(double)(end.tv_sec - start.tv_sec) + (double)(end.tv_nsec - start.tv_nsec) / 1e9,
		seconds(usage.ru_utime), seconds(usage.ru_stime), usage.ru_maxrss);
	if (fclose(out) != 0)
		return 2;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
