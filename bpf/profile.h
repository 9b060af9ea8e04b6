/*
 * profile.h — the sample event shared by the BPF program (profile.bpf.c) and the recorder (record/).
 *
 * One event per sampling interrupt, sent raw through a BPF ring buffer: no aggregation in the kernel, so
 * that every sample keeps its time, thread and both stacks. Fixed-width types, no pointers. The fields
 * before user_ips have the layout of struct srec_sample in formats/recording.h, and user_regs that of struct
 * srec_user_regs followed by its registers (checked by static asserts in record/sampler.c), so a sample
 * goes to the file as it came, its IP arrays and stack bytes cut to their used length.
 *
 * The event is built in a per-CPU slot of a BPF array and copied into the ring buffer with only as many
 * stack bytes as were read (bpf_ringbuf_output takes a variable size; bpf_ringbuf_reserve would not), so
 * a shallow stack costs little even though a slot holds up to USER_STACK_MAX bytes.
 */
#ifndef STACKREC_BPF_PROFILE_H
#define STACKREC_BPF_PROFILE_H

#define MAX_STACK_DEPTH 127 /* the kernel's default perf_event_max_stack */
#define TASK_COMM_LEN 16

#define SAMPLE_KIND_ON_CPU 1
#define SAMPLE_KIND_OFF_CPU 2 /* SREC_SAMPLE_OFF_CPU */

/* sample_event.flags, as enum srec_sample_flags */
#define SAMPLE_USER_REGS (1u << 0)	/* user_regs and stack[] are valid */
#define SAMPLE_USER_UNWIND (1u << 1) /* user_ips were not walked: unwind offline from user_regs and stack[] */

/* user_regs.flags, as enum srec_user_regs_flags */
#define USER_STACK_CUT (1u << 0)

#define USER_STACK_MAX (64 * 1024) /* SREC_USER_STACK_MAX */
#define USER_STACK_SLACK 8192	     /* room past USER_STACK_MAX so the verifier can bound a page-wise copy */

/* The registers an unwinder needs, in ascending DWARF register number (x86-64: the callee-saved set, SP,
 * BP and the return address column, which holds IP). */
#define USER_REGS_COUNT 8
#define USER_REGS_MACHINE_X86_64 62 /* EM_X86_64 */
#define USER_REGS_MASK_X86_64                                                                            \
	((1ull << 3) | (1ull << 6) | (1ull << 7) | (1ull << 12) | (1ull << 13) | (1ull << 14) | (1ull << 15) | \
	 (1ull << 16)) /* rbx rbp rsp r12 r13 r14 r15 rip */

struct user_regs_event {
	__u16 machine;	   /* USER_REGS_MACHINE_*, 0 when no registers could be taken */
	__u16 reg_count;   /* USER_REGS_COUNT */
	__u32 stack_size;  /* bytes valid in sample_event.stack */
	__u64 reg_mask;	   /* USER_REGS_MASK_* */
	__u32 flags;	   /* USER_STACK_* */
	__u32 stack_wanted; /* the most bytes this recording copies */
	__u64 regs[USER_REGS_COUNT];
};

/* The fields every event starts with; they have the layout of struct srec_sample and its tail. */
#define SAMPLE_EVENT_HEAD                                                                                      \
	__u64 time_ns;		  /* bpf_ktime_get_ns(): CLOCK_MONOTONIC */                                    \
	__u64 weight;		  /* on-CPU: the sampling period in ns; off-CPU: ns off the CPU */             \
	__u32 pid;		  /* process (tgid) */                                                         \
	__u32 tid;		  /* thread */                                                                 \
	__u32 cpu;                                                                                             \
	__u16 kind;		  /* SAMPLE_KIND_* */                                                          \
	__u16 flags;		  /* SAMPLE_USER_* */                                                          \
	__s32 user_stack_error;	  /* 0, or the negative errno of the user stack's walk or copy */              \
	__s32 kernel_stack_error; /* 0, or bpf_get_stack's negative errno */                                   \
	__u16 user_depth;	  /* valid entries in user_ips */                                              \
	__u16 kernel_depth;	  /* valid entries in kernel_ips */                                            \
	__u32 reserved;                                                                                        \
	char comm[TASK_COMM_LEN];                                                                              \
	__u64 user_ips[MAX_STACK_DEPTH];   /* leaf first */                                                    \
	__u64 kernel_ips[MAX_STACK_DEPTH]; /* leaf first */                                                    \
	struct user_regs_event user_regs

/* An on-CPU sample, built in a per-CPU slot. */
struct sample_event {
	SAMPLE_EVENT_HEAD;
	__u8 stack[USER_STACK_MAX + USER_STACK_SLACK]; /* the user stack from its stack pointer upward */
};

/*
 * An off-CPU sample, kept in the blocked thread's task storage from switch-out to switch-in: the same head,
 * a smaller stack, because task storage values are limited to 64 KiB.
 */
#define OFF_CPU_STACK_MAX (32 * 1024)
struct off_cpu_event {
	SAMPLE_EVENT_HEAD;
	__u8 stack[OFF_CPU_STACK_MAX + USER_STACK_SLACK];
};

/* off_cpu_state: which threads leaving the CPU count as blocked (offcputime's --state). */
#define OFF_CPU_STATE_ALL 0		/* every switch-out, preemption included: time off the CPU */
#define OFF_CPU_STATE_INTERRUPTIBLE 1	/* TASK_INTERRUPTIBLE: sleeping, waiting for an event */
#define OFF_CPU_STATE_UNINTERRUPTIBLE 2 /* TASK_UNINTERRUPTIBLE: mostly disk I/O */

/* Values of the targets map. */
#define TARGET_FOLLOWED 1   /* sampled, and its children are followed */
#define TARGET_BEFORE_EXEC 2 /* the recorder's own child, not sampled until it execs the user's command */
#define TARGET_EXITED 3	    /* its last thread exited: not sampled; the recorder deletes it once it has read
			     * the process's side-band records (record/sampler.c), so the pid may be reused */

#endif
