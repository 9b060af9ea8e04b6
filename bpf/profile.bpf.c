// SPDX-License-Identifier: GPL-2.0
/*
 * profile.bpf.c — the on-CPU sampler. Attached to one perf event per CPU (cpu-clock or cycles at -F Hz),
 * it sends each sample of a target process raw through a ring buffer: time, pid, tid, CPU, comm, the user
 * stack and the kernel stack (frame-pointer walks by bpf_get_stack), and the error of a walk that failed.
 *
 * Targets are filtered here, in the kernel, so that unrelated processes cost one hash lookup: a process is
 * a target when its tgid is in `targets`. The recorder puts the spawned command or the -p PIDs there;
 * on_fork adds the children of targets as they are created (threads share the tgid). With -a
 * (record_all) every process except the idle task is sampled.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "profile.h"

const volatile bool record_all = false;
const volatile __u64 period_ns = 0;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);
} samples SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u8);
} targets SEC(".maps");

/* Samples dropped because the ring buffer was full, per CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} lost_samples SEC(".maps");

/* Holds the side-band perf events (mmap, comm, fork, exit records) for libbpf's perf_buffer. */
struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} side_band SEC(".maps");

SEC("perf_event")
int sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = id >> 32;
	struct sample_event *e;
	long n;

	if (pid == 0)
		return 0;
	if (!record_all && !bpf_map_lookup_elem(&targets, &pid))
		return 0;
	e = bpf_ringbuf_reserve(&samples, sizeof(*e), 0);
	if (!e) {
		__u32 zero = 0;
		__u64 *lost = bpf_map_lookup_elem(&lost_samples, &zero);

		if (lost)
			(*lost)++;
		return 0;
	}
	e->time_ns = bpf_ktime_get_ns();
	e->weight = period_ns;
	e->pid = pid;
	e->tid = (__u32)id;
	e->cpu = bpf_get_smp_processor_id();
	e->kind = SAMPLE_KIND_ON_CPU;
	e->flags = 0;
	e->reserved = 0;
	bpf_get_current_comm(e->comm, sizeof(e->comm));

	n = bpf_get_stack(ctx, e->user_ips, sizeof(e->user_ips), BPF_F_USER_STACK);
	e->user_stack_error = n < 0 ? n : 0;
	e->user_depth = n < 0 ? 0 : n / sizeof(__u64);
	n = bpf_get_stack(ctx, e->kernel_ips, sizeof(e->kernel_ips), 0);
	e->kernel_stack_error = n < 0 ? n : 0;
	e->kernel_depth = n < 0 ? 0 : n / sizeof(__u64);
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 parent_pid = parent->tgid, child_pid = child->tgid;
	__u8 one = 1;

	if (record_all || parent_pid == child_pid)
		return 0;
	if (bpf_map_lookup_elem(&targets, &parent_pid))
		bpf_map_update_elem(&targets, &child_pid, &one, BPF_ANY);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
