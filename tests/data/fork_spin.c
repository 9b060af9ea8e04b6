/*
 * fork_spin.c — a process that forks without exec, for tests/t5000-record-convert.sh: the child renames
 * itself "forked-child" and burns CPU in child_spin() for MS milliseconds (default 600) while the parent
 * waits. The kernel reports no mappings for such a child, only the fork, so its frames are named only if
 * convert looks them up in the parent's mappings.
 *
 * Build: gcc -O2 -g -fno-omit-frame-pointer -o fork_spin fork_spin.c
 */
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

volatile unsigned long sink;

static long elapsed_ms(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

__attribute__((noinline)) void child_spin(long ms)
{
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 100000; i++)
			sink += i;
	} while (elapsed_ms(&t0) < ms);
}

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 600;
	pid_t child = fork();
	int status;

	if (child < 0)
		return 1;
	if (child == 0) {
		prctl(PR_SET_NAME, "forked-child");
		child_spin(ms);
		_exit(0);
	}
	return waitpid(child, &status, 0) == child && WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
