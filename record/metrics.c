/*
 * metrics.c — PROCESS_METRICS blocks: a process's CPU time, RSS, virtual size and threads, without
 * touching it.
 *
 *   - every --metrics-interval, for each target process, from /proc/PID/stat (CPU times) and
 *     /proc/PID/status (RSS, virtual size, threads): numbers only, bounded reads of files the kernel makes,
 *     opened without following a symbolic link;
 *   - with each event sample, the counters the BPF program read from the task at that moment (a process
 *     killed by its fatal signal is gone from /proc by the time the recorder reads the ring buffer).
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../formats/recording.h"
#include "../util.h"
#include "profile.skel.h"
#include "recorder.h"

#include "../bpf/profile.h"

#define PROC_FILE_MAX 8192 /* /proc/PID/stat is a line; status about 1.5 KiB */

ssize_t proc_read(uint32_t pid, const char *name, char *buf, size_t size)
{
	char path[64];
	ssize_t n, total = 0;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/%s", pid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -1;
	while ((size_t)total < size - 1 && (n = read(fd, buf + total, size - 1 - (size_t)total)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			close(fd);
			return -1;
		}
		total += n;
	}
	close(fd);
	buf[total] = 0;
	return total;
}

/* The value of a "Key:\tN kB" or "Key:\tN" line of /proc/PID/status, or -1. */
static long long status_value(const char *status, const char *key)
{
	size_t len = strlen(key);

	for (const char *line = status; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
		if (!strncmp(line, key, len) && line[len] == ':')
			return strtoll(line + len + 1, NULL, 10);
	return -1;
}

/*
 * Fills m from /proc; false when the process is gone or its files do not parse. Read through a live thread's
 * /proc/TID once the main thread has exited (process_live_task): the main thread's own status then has no
 * VmRSS, and the process's memory read 0.
 */
static bool read_metrics(uint32_t pid, struct srec_process_metrics *m)
{
	char stat[PROC_FILE_MAX], status[PROC_FILE_MAX];
	unsigned long long utime, stime;
	long long rss_kb, vm_kb, threads;
	long ticks = sysconf(_SC_CLK_TCK);
	pid_t view = process_live_task((pid_t)pid);
	const char *p;

	if (!view || proc_read((uint32_t)view, "stat", stat, sizeof(stat)) <= 0 ||
	    proc_read((uint32_t)view, "status", status, sizeof(status)) <= 0)
		return false;
	/* comm may hold spaces and parentheses: the fields start after the last ')' */
	p = strrchr(stat, ')');
	if (!p || ticks <= 0 ||
	    sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime, &stime) != 2)
		return false;
	rss_kb = status_value(status, "VmRSS");
	vm_kb = status_value(status, "VmSize");
	threads = status_value(status, "Threads");
	if (threads < 0)
		return false;
	m->pid = pid;
	m->threads = (uint32_t)threads;
	m->user_time_ns = utime * (1000000000ull / (unsigned long)ticks);
	m->system_time_ns = stime * (1000000000ull / (unsigned long)ticks);
	m->rss_bytes = rss_kb > 0 ? (uint64_t)rss_kb * 1024 : 0; /* a zombie has no VmRSS line */
	m->vm_bytes = vm_kb > 0 ? (uint64_t)vm_kb * 1024 : 0;
	return true;
}

static void write_interval(struct recorder *rec, uint32_t pid)
{
	struct srec_process_metrics m = { .time_ns = monotonic_ns(), .reason = SREC_METRICS_INTERVAL };

	if (!read_metrics(pid, &m))
		return;
	if (recording_writer_add(&rec->writer, SREC_BLOCK_PROCESS_METRICS, &m, sizeof(m), NULL, 0) == 0)
		rec->metrics_count++;
}

static void write_interval_cb(void *ctx, uint64_t pid)
{
	write_interval(ctx, (uint32_t)pid);
}

void metrics_tick(struct recorder *rec, uint64_t now_ns)
{
	const struct bpf_map *map;
	__u32 key, next, *keyp = NULL;
	__u8 value;

	if (!rec->metrics_interval_ms || now_ns - rec->last_metrics_ns < rec->metrics_interval_ms * 1000000ull)
		return;
	rec->last_metrics_ns = now_ns;
	/* -a: every process that had a sample; otherwise the processes being recorded */
	if (rec->target == TARGET_ALL) {
		u64_set_for_each(&rec->sampled_pids, write_interval_cb, rec);
		return;
	}
	map = rec->skel->maps.targets;
	while (bpf_map__get_next_key(map, keyp, &next, sizeof(next)) == 0) {
		key = next;
		keyp = &key;
		if (bpf_map__lookup_elem(map, &key, sizeof(key), &value, sizeof(value), 0) == 0 &&
		    value == TARGET_FOLLOWED)
			write_interval(rec, key);
	}
}

void metrics_write_event(struct recorder *rec, uint64_t time_ns, uint32_t pid, uint32_t tid,
			 const struct event_info *info)
{
	struct srec_process_metrics m = {
		.time_ns = time_ns,
		.pid = pid,
		.tid = tid,
		.reason = SREC_METRICS_EVENT,
		.threads = info->threads,
		.user_time_ns = info->user_time_ns,
		.system_time_ns = info->system_time_ns,
		.rss_bytes = info->rss_bytes,
		.vm_bytes = info->vm_bytes,
	};

	if (recording_writer_add(&rec->writer, SREC_BLOCK_PROCESS_METRICS, &m, sizeof(m), NULL, 0) == 0)
		rec->metrics_count++;
}
