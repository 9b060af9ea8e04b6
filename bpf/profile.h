/*
 * profile.h — the sample event shared by the BPF program (profile.bpf.c) and the recorder (record/).
 *
 * One event per sampling interrupt, sent raw through a BPF ring buffer: no aggregation in the kernel, so
 * that every sample keeps its time, thread and both stacks. Fixed-width types, no pointers. The fields
 * before user_regs have the layout of struct srec_sample in formats/recording.h, and user_regs that of struct
 * srec_user_regs followed by its registers (checked by static asserts in record/sampler.c).
 *
 * The event is built in a per-CPU slot of a BPF array and copied into the ring buffer with only what it
 * holds (bpf_ringbuf_output takes a variable size; bpf_ringbuf_reserve would not): the fixed head, then in
 * data[] the stack bytes read, the user IPs, the kernel IPs, each at its used length one after the other,
 * and for an event sample its struct event_info. A sample thus costs the ring buffer what its stacks hold
 * (about 350 bytes for a frame-pointer sample 6 frames deep), not the 2 KiB of two full-depth IP arrays.
 * The recorder (record/sampler.c) puts the parts in the file's order: IPs, registers, stack bytes.
 */
#ifndef STACKREC_BPF_PROFILE_H
#define STACKREC_BPF_PROFILE_H

#define MAX_STACK_DEPTH 127 /* the kernel's default perf_event_max_stack */
#define TASK_COMM_LEN 16

#define SAMPLE_KIND_ON_CPU 1
#define SAMPLE_KIND_OFF_CPU 2 /* SREC_SAMPLE_OFF_CPU */
#define SAMPLE_KIND_EVENT 3   /* SREC_SAMPLE_EVENT: a fatal signal or a C++ throw; a struct event_info follows the
			       * IPs */
#define RING_KIND_PROBE_HIT 100 /* not a sample: a struct probe_hit_event (same ring buffer, same kind offset) */

/* sample_event.flags, as enum srec_sample_flags */
#define SAMPLE_USER_REGS (1u << 0)	/* user_regs and the stack bytes are valid */
#define SAMPLE_USER_UNWIND (1u << 1) /* user IPs were not walked: unwind offline from user_regs and the stack */
#define SAMPLE_EVENT_INFO (1u << 2)  /* kind SAMPLE_KIND_EVENT: a struct event_info follows the IPs */
#define SAMPLE_UPROBE_STEP (1u << 3) /* the user pc was in a uprobe's slot: given as the probed instruction's */

/* user_regs.flags, as enum srec_user_regs_flags */
#define USER_STACK_CUT (1u << 0)
#define USER_STACK_END_UNKNOWN (1u << 1)
/* bits 8 to 24: page i of the copy (0: the page sp is in) could not be read, its bytes are zeros */
#define USER_STACK_HOLES_SHIFT 8

#define USER_STACK_MAX (64 * 1024) /* SREC_USER_STACK_MAX */
#define USER_STACK_SLACK 8192	     /* room past USER_STACK_MAX so the verifier can bound a page-wise copy, and
				      * for the IPs and event info that follow the stack bytes */
#define STACK_IPS_BYTES (MAX_STACK_DEPTH * 8) /* one stack's IPs at most */

/* The registers an unwinder needs, in ascending DWARF register number (x86-64: the callee-saved set, SP,
 * BP and the return address column, which holds IP; and rdi, where glibc's __vfork keeps its return address
 * during the system call, which its CFI says: a parent blocked in vfork is a common off-CPU stack of shells). */
#define USER_REGS_COUNT 9
#define USER_REGS_MACHINE_X86_64 62 /* EM_X86_64 */
#define USER_REGS_MASK_X86_64                                                                                \
	((1ull << 3) | (1ull << 5) | (1ull << 6) | (1ull << 7) | (1ull << 12) | (1ull << 13) | (1ull << 14) | \
	 (1ull << 15) | (1ull << 16)) /* rbx rdi rbp rsp r12 r13 r14 r15 rip */
/*
 * --call-graph fp: the registers the leaf fix reads (a frameless leaf's CFA is SP plus an offset, or an
 * expression of SP and IP in a PLT entry; with BP it has a frame and the walk found its caller). The other
 * callee-saved registers would only add bytes that change from sample to sample: 40 of the 64.
 */
#define USER_REGS_COUNT_FP 3
#define USER_REGS_MASK_FP_X86_64 ((1ull << 6) | (1ull << 7) | (1ull << 16)) /* rbp rsp rip */

struct user_regs_event {
	__u16 machine;	   /* USER_REGS_MACHINE_*, 0 when no registers could be taken */
	__u16 reg_count;   /* USER_REGS_COUNT */
	__u32 stack_size;  /* stack bytes at the start of sample_event.data; 0 without registers */
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
	__u16 user_depth;	  /* user IPs in data[], after the stack bytes, leaf first */                  \
	__u16 kernel_depth;	  /* kernel IPs in data[], after the user IPs, leaf first */                   \
	__u32 reserved;                                                                                        \
	char comm[TASK_COMM_LEN];                                                                              \
	struct user_regs_event user_regs

/*
 * An on-CPU sample, built in a per-CPU slot. data[]: user_regs.stack_size bytes of the user stack from its
 * stack pointer upward, user_depth user IPs, kernel_depth kernel IPs, then for an event sample its struct
 * event_info (unaligned). The slack past USER_STACK_MAX holds the IPs and the info.
 */
struct sample_event {
	SAMPLE_EVENT_HEAD;
	__u8 data[USER_STACK_MAX + USER_STACK_SLACK];
};

/*
 * An off-CPU sample, kept in the blocked thread's task storage from switch-out to switch-in: the same head,
 * a smaller stack, because task storage values are limited to 64 KiB.
 */
#define OFF_CPU_STACK_MAX (32 * 1024)
struct off_cpu_event {
	SAMPLE_EVENT_HEAD;
	__u8 data[OFF_CPU_STACK_MAX + USER_STACK_SLACK];
};

/* off_cpu_state: which threads leaving the CPU count as blocked (offcputime's --state). */
#define OFF_CPU_STATE_ALL 0		/* every switch-out, preemption included: time off the CPU */
#define OFF_CPU_STATE_INTERRUPTIBLE 1	/* TASK_INTERRUPTIBLE: sleeping, waiting for an event */
#define OFF_CPU_STATE_UNINTERRUPTIBLE 2 /* TASK_UNINTERRUPTIBLE: mostly disk I/O */

/*
 * What an event sample says happened, and the process's counters at that moment (taken in the kernel: after a
 * fatal signal the process may be gone before the recorder reads the ring buffer). Sent after the sample's
 * IPs; its head has the layout of struct srec_sample_event (record/sampler.c checks).
 */
#define EVENT_SIGNAL 1	  /* SREC_EVENT_SIGNAL */
#define EVENT_EXCEPTION 2 /* SREC_EVENT_EXCEPTION */
#define EVENT_NAME_MAX 256 /* SREC_EVENT_NAME_MAX */

struct event_info {
	__u32 type;	  /* EVENT_* */
	__s32 signo;
	__s32 code;	  /* si_code */
	__u32 name_size;  /* bytes of name including its NUL; 0: none */
	__u64 address;	  /* si_addr, or the thrown object */
	__u64 reserved;
	char name[EVENT_NAME_MAX];
	/* The process at the event (struct srec_process_metrics without its identity). metrics_ok is 0 when
	 * the task had no mm (a kernel thread) or its counters could not be read. */
	__u32 metrics_ok;
	__u32 threads;
	__u64 user_time_ns;
	__u64 system_time_ns;
	__u64 rss_bytes;
	__u64 vm_bytes;
};

/*
 * A probe hit (--probe): sent raw through the samples ring buffer. kind sits where a sample's kind does
 * (offset 28), so that the reader tells the two apart by one field. A uprobe's bpf_cookie carries the probe:
 * PROBE_COOKIE(id, args, string mask) — no map lookup per hit.
 */
#define PROBE_MAX 16
#define PROBE_ARGS_MAX 6	 /* SREC_PROBE_ARGS_MAX: rdi rsi rdx rcx r8 r9 */
#define PROBE_STRING_MAX 128 /* SREC_PROBE_STRING_MAX */
#define PROBE_STRING_CUT (PROBE_STRING_MAX + 1) /* a string_len: the buffer is full and the string goes on */
#define PROBE_COOKIE(id, args, str_mask) ((__u64)(id) | (__u64)(args) << 16 | (__u64)(str_mask) << 24)
#define PROBE_COOKIE_ID(c) ((__u32)((c)&0xffff))
#define PROBE_COOKIE_ARGS(c) ((__u32)(((c) >> 16) & 0xff))
#define PROBE_COOKIE_STRINGS(c) ((__u32)(((c) >> 24) & 0x3f))

struct probe_hit_event {
	__u64 time_ns;
	__u64 cfa;	    /* stack pointer at entry + 8 */
	__u32 pid;
	__u32 tid;
	__u32 probe_id;
	__u16 kind;	    /* RING_KIND_PROBE_HIT, at the offset of sample_event.kind */
	__u16 value_count;  /* values[] used: the probe's argument count */
	__u16 string_count; /* strings[] used, in argument order */
	__u16 reserved;
	__u32 cpu;
	__u64 values[PROBE_ARGS_MAX];
	__u16 string_len[PROBE_ARGS_MAX]; /* bytes read, NUL included; 0: unreadable; PROBE_STRING_CUT */
	__u32 reserved2;
	char strings[PROBE_ARGS_MAX][PROBE_STRING_MAX];
};

/* Values of the targets map. */
#define TARGET_FOLLOWED 1   /* sampled, and its children are followed */
#define TARGET_BEFORE_EXEC 2 /* the recorder's own child, not sampled until it execs the user's command */
#define TARGET_EXITED 3	    /* its last thread exited: not sampled; the recorder deletes it once it has read
			     * the process's side-band records (record/sampler.c), so the pid may be reused */

#endif
