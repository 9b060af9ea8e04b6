/*
 * host.c — the HOST block: what a reader on another machine needs to know about this one and this run
 * (kernel, CPUs, page size, clock, sampling event and frequency, the command line).
 */
#include <bpf/libbpf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "../commands.h"
#include "../formats/recording.h"
#include "../util.h"
#include "recorder.h"

struct host_text {
	char *s;
	size_t len, cap;
};

static void add(struct host_text *t, const char *key, const char *value)
{
	size_t n = strlen(key) + 1 + strlen(value) + 1;

	GROW(t->s, t->cap, t->len + n);
	t->len += (size_t)sprintf(t->s + t->len, "%s=%s", key, value) + 1;
}

static void add_u64(struct host_text *t, const char *key, uint64_t value)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRIu64, value);
	add(t, key, buf);
}

uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int host_write(struct recorder *rec, bool kptr_restricted)
{
	static const char *const target_names[] = { "command", "pids", "threads", "all" };
	struct host_text t = { 0 };
	struct utsname u;
	struct timespec real;
	int ret;

	if (uname(&u) == 0) {
		add(&t, SREC_HOST_KERNEL_RELEASE, u.release);
		add(&t, SREC_HOST_HOSTNAME, u.nodename);
		add(&t, SREC_HOST_MACHINE, u.machine);
	}
	add_u64(&t, SREC_HOST_PAGE_SIZE, (uint64_t)sysconf(_SC_PAGESIZE));
	add_u64(&t, SREC_HOST_CPU_COUNT, (uint64_t)libbpf_num_possible_cpus());
	add(&t, SREC_HOST_CLOCK, "monotonic");
	clock_gettime(CLOCK_REALTIME, &real);
	rec->start_ns = monotonic_ns();
	add_u64(&t, SREC_HOST_START_MONOTONIC, rec->start_ns);
	add_u64(&t, SREC_HOST_START_REALTIME, (uint64_t)real.tv_sec * 1000000000ull + (uint64_t)real.tv_nsec);
	/* Only when on-CPU samples were taken: an --off-cpu recording opened no sampling event, and pprof's period
	 * and the trace's frequency would name one it never had. */
	if (rec->on_cpu) {
		add_u64(&t, SREC_HOST_FREQUENCY, rec->frequency);
		add(&t, SREC_HOST_EVENT, rec->event_name ? rec->event_name : "cpu-clock");
	}
	add(&t, SREC_HOST_COMMAND_LINE, rec->command_line);
	add(&t, SREC_HOST_TARGET, target_names[rec->target]);
	add(&t, SREC_HOST_KPTR_RESTRICTED, kptr_restricted ? "1" : "0");
	add(&t, SREC_HOST_STACKREC_VERSION, STACKREC_VERSION);
	if (rec->call_graph == CALL_GRAPH_DWARF) {
		char mode[32];

		snprintf(mode, sizeof(mode), "dwarf,%u", rec->stack_size);
		add(&t, SREC_HOST_CALL_GRAPH, mode);
	} else {
		add(&t, SREC_HOST_CALL_GRAPH, "fp");
	}
	/* the fp walk's and the kernel's stop there: a stack of that many IPs may go on (convert's [truncated]) */
	add_u64(&t, SREC_HOST_MAX_STACK, rec->max_stack);
	ret = recording_writer_add(&rec->writer, SREC_BLOCK_HOST, t.s, t.len, NULL, 0);
	free(t.s);
	return ret;
}
