/*
 * sampling_events.c — the perf events that carry the on-CPU sampler (bpf/profile.bpf.c: sample).
 *
 * The command (record -- CMD) and the -p processes are sampled as perf record samples them: by events of their
 * own, inherited by every thread and child they create, that count only while those run. One event per CPU for
 * every task, left to the BPF program to filter, interrupted every CPU whatever ran there and slowed a CPU-bound
 * command more: at 4999 Hz 1.137x against 1.106x (fp) and 1.200x against 1.135x (dwarf), where perf -g was
 * 1.128x and perf dwarf 1.163x (bench/workloads/cpu.c, 2-core VM, medians of 11-15 interleaved runs).
 * -a samples everything, on per-CPU events; -t too (those threads only, filtered in BPF).
 *
 * The kernel takes an inherited event away from a process that execs a setuid or setgid program as another user
 * (or one it may not read): fs/exec.c, begin_new_exec, perf_event_exit_task. on_exec marks such a process
 * TARGET_UNEVENTED, as on_fork marks a child forked while the -p threads are given their events (by a thread
 * that may have none yet), and at the first sampling_events_poll attaches sample_unevented, which samples those
 * and nothing else, to per-CPU events; sample leaves them out. perf record loses these processes.
 */
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../util.h"
#include "profile.skel.h"
#include "recorder.h"
#include "u64_set.h"

/* Listings of a -p process's threads before giving up on one that finds none new (see attach_to_threads). */
#define THREAD_LISTINGS_MAX 1000

/* The value of a sysctl file such as /proc/sys/kernel/perf_event_paranoid, or fallback when unreadable. */
static long sysctl_value(const char *path, long fallback)
{
	FILE *f = fopen(path, "re");
	long value;

	if (!f)
		return fallback;
	if (fscanf(f, "%ld", &value) != 1)
		value = fallback;
	fclose(f);
	return value;
}

static int perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu)
{
	return (int)syscall(__NR_perf_event_open, attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/*
 * Opens the sampling event, cycles if the CPU has a PMU, else cpu-clock: on cpu for every task (pid -1), or on
 * every CPU for thread pid and, inherited, for every thread and child it creates from now on. -errno when
 * impossible.
 */
static int open_sampling_event(struct recorder *rec, pid_t pid, int cpu)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.freq = 1,
		.sample_freq = rec->frequency,
		.inherit = pid > 0,
	};
	int fd;

	if (!rec->event_name || !strcmp(rec->event_name, "cycles")) {
		attr.type = PERF_TYPE_HARDWARE;
		attr.config = PERF_COUNT_HW_CPU_CYCLES;
		fd = perf_event_open(&attr, pid, cpu);
		if (fd >= 0) {
			rec->event_name = "cycles";
			return fd;
		}
		if (errno == ENODEV && rec->event_name)
			return -ENODEV;
		if (rec->event_name)
			return -errno;
	}
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	fd = perf_event_open(&attr, pid, cpu);
	if (fd < 0)
		return -errno;
	rec->event_name = "cpu-clock";
	return fd;
}

/* An event and a BPF link per thread of a -p process: raises the soft limit on open files to the hard one, once,
 * as perf record does. */
static bool raise_open_files_limit(void)
{
	static bool raised;
	struct rlimit limit;

	if (raised || getrlimit(RLIMIT_NOFILE, &limit) < 0 || limit.rlim_cur >= limit.rlim_max)
		return false;
	raised = true;
	limit.rlim_cur = limit.rlim_max;
	return setrlimit(RLIMIT_NOFILE, &limit) == 0;
}

/*
 * Opens the sampling event (open_sampling_event) and attaches prog to it. 1 when there is nothing to sample
 * there: cpu is offline, or thread pid has exited.
 */
static int attach_sampler(struct recorder *rec, struct bpf_program *prog, pid_t pid, int cpu)
{
	char where[48];
	struct bpf_link *link;
	int fd = open_sampling_event(rec, pid, cpu);

	if (fd == -EMFILE && raise_open_files_limit())
		fd = open_sampling_event(rec, pid, cpu);
	if (pid > 0)
		snprintf(where, sizeof(where), "for thread %d", (int)pid);
	else
		snprintf(where, sizeof(where), "on CPU %d", cpu);
	if ((fd == -ENODEV && pid <= 0) || (fd == -ESRCH && pid > 0))
		return 1;
	if (fd == -EACCES || fd == -EPERM)
		return error("cannot open a sampling event %s: %s (kernel.perf_event_paranoid is %ld: record as root or "
			     "with CAP_PERFMON, or lower it with sysctl kernel.perf_event_paranoid=1)",
			     where, strerror(-fd), sysctl_value("/proc/sys/kernel/perf_event_paranoid", -1));
	if (fd == -EMFILE)
		return error("cannot open a sampling event %s: %s (an event and a BPF link per thread: raise the limit "
			     "with ulimit -n)",
			     where, strerror(-fd));
	if (fd < 0)
		return error("cannot open a %s sampling event %s: %s", rec->event_name ? rec->event_name : "cpu-clock",
			     where, strerror(-fd));
	link = bpf_program__attach_perf_event(prog, fd);
	if (!link) {
		int err = errno;

		close(fd);
		return error("cannot attach the sampler %s: %s", where, strerror(err));
	}
	sampler_add_link(rec, link);
	return 0;
}

/* Attaches prog to a sampling event on every online CPU; the events attached, or -1. */
static int attach_per_cpu(struct recorder *rec, struct bpf_program *prog)
{
	int cpus = libbpf_num_possible_cpus(), attached = 0;

	if (cpus <= 0)
		return error("cannot count the CPUs: %s", strerror(-cpus));
	for (int cpu = 0; cpu < cpus; cpu++) {
		int r = attach_sampler(rec, prog, -1, cpu);

		if (r < 0)
			return -1;
		attached += r == 0;
	}
	return attached;
}

/*
 * -p PID: an event on each thread of the process, inherited by the threads and children they start. Its threads
 * are listed again until a listing finds none without an event: a thread started between two listings by one
 * that had none yet is in the next, and one started after the last by any thread inherits its creator's event.
 * A thread started in the moment between its creator's event being opened and the sampler being attached to it
 * inherits the event without the sampler; that costs it interrupts, not samples: the next listing gives it an
 * event of its own. The events attached (0 when the process is gone), or -1.
 */
static int attach_to_threads(struct recorder *rec, pid_t pid, struct u64_set *done)
{
	char dir_path[64];
	int attached = 0;

	snprintf(dir_path, sizeof(dir_path), "/proc/%d/task", (int)pid);
	for (int listing = 0; listing < THREAD_LISTINGS_MAX; listing++) {
		DIR *dir = opendir(dir_path);
		struct dirent *d;
		int found = 0;

		if (!dir)
			return attached; /* gone: the recording ends as for any -p process that exits */
		while ((d = readdir(dir))) {
			char *end;
			long tid = strtol(d->d_name, &end, 10);
			int r;

			if (*end || tid <= 0 || !u64_set_add(done, (uint64_t)tid))
				continue;
			r = attach_sampler(rec, rec->skel->progs.sample, (pid_t)tid, -1);
			if (r < 0) {
				closedir(dir);
				return -1;
			}
			found += r == 0;
		}
		closedir(dir);
		if (!found)
			return attached;
		attached += found;
	}
	return error("process %d starts threads faster than they can be given sampling events: record it with -a", pid);
}

int sampling_events_attach(struct recorder *rec)
{
	struct u64_set done = { 0 };
	int attached = 0;

	if (rec->target == TARGET_COMMAND) {
		/* the command waits to exec, and forks nothing before */
		__atomic_store_n(&rec->skel->bss->events_ready, true, __ATOMIC_RELEASE);
		return attach_sampler(rec, rec->skel->progs.sample, rec->child, -1) < 0 ? -1 : 1;
	}
	if (rec->target != TARGET_PIDS)
		return attach_per_cpu(rec, rec->skel->progs.sample);
	for (size_t i = 0; i < rec->pid_count; i++) {
		int n = attach_to_threads(rec, rec->pids[i], &done);

		if (n < 0) {
			u64_set_release(&done);
			return -1;
		}
		attached += n;
	}
	u64_set_release(&done);
	/* Children forked until now were marked TARGET_UNEVENTED (on_fork): sampled by per-CPU events. */
	__atomic_store_n(&rec->skel->bss->events_ready, true, __ATOMIC_RELEASE);
	debug("sampling events on %d threads", attached);
	return attached;
}

/*
 * A process lost its inherited sampling event at a setuid exec, or was forked by a -p process while its threads
 * got theirs (TARGET_UNEVENTED: on_exec, on_fork): per-CPU events sample such processes from now on, and only
 * them. The poll after a new process comes within SIDE_BAND_MS, so only the few milliseconds the process ran
 * before it are not sampled.
 */
int sampling_events_poll(struct recorder *rec)
{
	if (!rec->skel->rodata->per_task_events || rec->unevented_sampled ||
	    !__atomic_load_n(&rec->skel->bss->unevented, __ATOMIC_RELAXED))
		return 0;
	rec->unevented_sampled = true;
	if (attach_per_cpu(rec, rec->skel->progs.sample_unevented) < 0)
		return -1;
	debug("a process exec'd a setuid program, or was forked while the sampling events were attached, and has no "
	      "inherited sampling event: such processes are sampled by per-CPU events from now on");
	return 0;
}
