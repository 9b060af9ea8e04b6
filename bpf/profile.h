/*
 * profile.h — the sample event shared by the BPF program (profile.bpf.c) and the recorder (record/).
 *
 * One event per sampling interrupt, sent raw through a BPF ring buffer: no aggregation in the kernel, so
 * that every sample keeps its time, thread and both stacks. Fixed-width types, no pointers. The fields
 * before user_ips have the layout of struct srec_sample in formats/recording.h (checked by static asserts
 * in record/sampler.c), so a sample is written to the file as it came.
 */
#ifndef STACKREC_BPF_PROFILE_H
#define STACKREC_BPF_PROFILE_H

#define MAX_STACK_DEPTH 127 /* the kernel's default perf_event_max_stack */
#define TASK_COMM_LEN 16

#define SAMPLE_KIND_ON_CPU 1

struct sample_event {
	__u64 time_ns;		  /* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u64 weight;		  /* sampling period in ns */
	__u32 pid;		  /* process (tgid) */
	__u32 tid;		  /* thread */
	__u32 cpu;
	__u16 kind;		  /* SAMPLE_KIND_* */
	__u16 flags;
	__s32 user_stack_error;	  /* 0, or bpf_get_stack's negative errno */
	__s32 kernel_stack_error; /* 0, or bpf_get_stack's negative errno */
	__u16 user_depth;	  /* valid entries in user_ips */
	__u16 kernel_depth;	  /* valid entries in kernel_ips */
	__u32 reserved;
	char comm[TASK_COMM_LEN];
	__u64 user_ips[MAX_STACK_DEPTH];   /* leaf first */
	__u64 kernel_ips[MAX_STACK_DEPTH]; /* leaf first */
};

#endif
