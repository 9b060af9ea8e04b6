// SPDX-License-Identifier: GPL-2.0
/*
 * profile.bpf.c — the on-CPU sampler. Attached to one perf event per CPU (cycles or cpu-clock at -F Hz),
 * it sends each sample of a target process raw through a ring buffer: time, pid, tid, CPU, comm, the
 * kernel stack (bpf_get_stack), and the user stack in the recording's call-graph mode:
 *   - fp: a frame-pointer walk (bpf_get_stack), plus the user registers and the top few words of the stack,
 *     so that convert can find the caller of a leaf function that has no frame of its own at the sampled pc;
 *   - dwarf: no walk here; the user registers and up to stack_copy bytes of the live user stack, unwound
 *     offline with the binaries' CFI (convert/unwind.c), as perf's --call-graph dwarf does.
 * and the error of a walk or copy that failed.
 *
 * Targets are filtered here, in the kernel, so that unrelated processes cost one hash lookup: a process is
 * a target when its tgid is in `targets` with TARGET_FOLLOWED. The recorder puts the spawned command (as
 * TARGET_BEFORE_EXEC until it execs: before that it is a copy of the recorder, not the user's program) or
 * the -p PIDs there; on_fork adds the children of targets as they are created (threads share the tgid),
 * on_exit marks a process whose last thread exited. With -t (match_tid) the keys are thread ids instead, as
 * perf record -t: those threads only, no child followed, each marked when it exits.
 * With -a (record_all) every process except the idle task is sampled.
 *
 * Events (record --signals, --exceptions) and probes (--probe) go through the same ring buffer, so that the
 * file keeps them in the order they happened:
 *   - on_signal: a fatal signal delivered to a target thread becomes an event sample, built by take_sample as
 *     an on-CPU sample is, followed by a struct event_info (the signal, and the process's counters read
 *     here, since the process may be gone before the recorder reads the ring buffer);
 *   - on_throw: the same at the entry of libstdc++'s __cxa_throw, with the thrown type's name;
 *   - probe_hit: one uprobe program for every --probe, told apart by the attach cookie; the argument
 *     registers, the CFA and the strings asked for, raw.
 * None of them waits: a full ring buffer drops the record and counts it.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "profile.h"

const volatile bool record_all = false;
const volatile bool match_tid = false;	   /* -t: `targets` holds thread ids, and no child is followed */
const volatile __u64 period_ns = 0;
const volatile bool dwarf_mode = false;	   /* --call-graph dwarf: copy the stack, do not walk it */
const volatile bool check_fp_walk = false; /* record with STACKREC_CHECK_FP_WALK=1: the kernel's walk too */
const volatile __u64 mmap_min_addr = 4096; /* vm.mmap_min_addr: no user mapping below it (the recorder sets it) */
const volatile __u32 fp_max_depth = MAX_STACK_DEPTH; /* kernel.perf_event_max_stack, if lower: bpf_get_stack's limit */
const volatile __u32 stack_copy = 0;	   /* bytes of user stack to copy (dwarf: SIZE; fp: a few words) */
const volatile __u64 wakeup_bytes = 1 << 20; /* wake the reader once this much is waiting, not per sample */
const volatile __u64 min_block_ns = 1000;    /* off-CPU: shorter intervals are not recorded */
const volatile __u64 max_block_ns = ~0ull;   /* off-CPU: nor longer ones */
const volatile int off_cpu_state = OFF_CPU_STATE_ALL;
const volatile __u64 page_size = 4096; /* for the metrics of an event: set by the recorder */

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20); /* the recorder sets the size before loading */
} samples SEC(".maps");

/* One sample_event per CPU to build the next sample in; sized to the CPUs by the recorder before loading. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sample_event);
} scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u8);
} targets SEC(".maps");

/* A blocked target thread's off-CPU sample, from its switch-out until it runs again. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct off_cpu_event);
} blocked SEC(".maps");

/* Children of targets that could not be put in `targets` (it was full), per CPU: processes not followed. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} lost_targets SEC(".maps");

/* Samples lost, per CPU: [LOST_DROPPED] dropped because the ring buffer was full (or a slot could not be
 * had); [LOST_UNENDED] off-CPU intervals whose switch-in the kernel did not report (on_switch). */
#define LOST_DROPPED 0
#define LOST_UNENDED 1
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} lost_samples SEC(".maps");

/* Probe hits [0] and event samples [1] dropped because the ring buffer was full, per CPU. */
#define LOST_PROBE_HITS 0
#define LOST_EVENT_SAMPLES 1
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} lost_probe SEC(".maps");

/* Event samples are built apart from on-CPU samples: a sampling interrupt (NMI) may come while one is. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sample_event);
} event_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct event_info);
} event_infos SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct probe_hit_event);
} hit_scratch SEC(".maps");

/*
 * Whether this CPU's hit slot [SLOT_HIT] or event slots [SLOT_EVENT] are being filled. A uprobe or tracepoint
 * program runs with migration disabled but may be preempted on a preemptible kernel, and another task on
 * this CPU may then run the same program: it finds the slot taken and counts its record as lost rather than
 * write over one half built.
 */
#define SLOT_HIT 0
#define SLOT_EVENT 1
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u32);
} slot_busy SEC(".maps");

static __always_inline void count_lost_probe(__u32 which);

/* The slot, marked busy; NULL (and the record counted lost in lost_probe[lost]) when it is taken. */
static __always_inline __u32 *claim_slot(__u32 which, __u32 lost)
{
	__u32 *busy = bpf_map_lookup_elem(&slot_busy, &which);

	if (!busy || *busy) {
		count_lost_probe(lost);
		return NULL;
	}
	*busy = 1;
	return busy;
}

/* Holds the side-band perf events (mmap, comm, fork, exit records) for libbpf's perf_buffer. */
struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} side_band SEC(".maps");

/* fp: where take_user_regs puts the stack the walk reads (past the top words and the IPs), and how much */
#define FP_WINDOW_AT 8192
#define FP_WINDOW_MAX 4096
#define FP_WALK_BY_KERNEL (-1)
#define USER_CS_64 0x33 /* x86-64 __USER_CS: a 64-bit task */
#define PF_EXITING_FLAG 0x00000004	/* task->flags; set before the exit tracepoint */
#define PF_IO_WORKER_FLAG 0x00000010
#define PF_USER_WORKER_FLAG 0x00004000
#define PF_KTHREAD_FLAG 0x00200000

struct vma_range {
	__u64 start, end;
};

static long vma_range_of(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	((struct vma_range *)data)->start = BPF_CORE_READ(vma, vm_start);
	((struct vma_range *)data)->end = BPF_CORE_READ(vma, vm_end);
	return 0;
}

/*
 * A thread's stack mapping as bpf_find_vma last found it, and the version of its process's mappings then.
 * Why: called with interrupts off, as in a sampling interrupt or sched_switch, bpf_find_vma cannot release
 * the mmap lock itself and hands that to an irq_work, an interrupt of its own after every call. On a 2-core
 * VM that made a 4999 Hz recording (fp) of a program working in a second thread 1.221x slower against perf's
 * 1.142x (1.167x with the ranges kept; docs/recording.md). A thread's stack
 * does not move, so it is looked up again only when the mappings changed or sp left it (a signal stack, a
 * coroutine's). Kept per thread id, checked against the task's start time and mm, deleted at thread exit;
 * when full, the threads beyond it are looked up at every sample, as before.
 */
struct stack_mapping {
	__u64 start, end;
	__u64 mm;
	__u64 task_start_ns;
	__u32 mappings_version;
	__u32 reserved;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct stack_mapping);
} stack_mappings SEC(".maps");

/* mm_struct's mm_lock_seq: an int from Linux 6.4 (kernels with per-VMA locks), a seqcount since 6.13 or 6.14. */
struct seqcount___stackrec {
	unsigned int sequence;
} __attribute__((preserve_access_index));

struct mm_struct___seqcount {
	struct seqcount___stackrec mm_lock_seq;
} __attribute__((preserve_access_index));

struct mm_struct___int_seq {
	int mm_lock_seq;
	struct rw_semaphore mmap_lock;
} __attribute__((preserve_access_index));

/*
 * The version of mm's mappings into *version: mm_lock_seq, which the kernel changes each time a writer
 * (mmap, munmap, mprotect, brk, stack growth) releases the mmap lock. false when the kernel has none
 * (before 6.4, or built without per-VMA locks) or a writer holds the lock now: then no cached range is
 * trusted or stored.
 */
static __always_inline bool mappings_version(struct mm_struct *mm, __u32 *version)
{
	if (bpf_core_field_exists(((struct mm_struct___seqcount *)0)->mm_lock_seq)) {
		/* the seqcount: odd while a writer holds the lock */
		*version = BPF_CORE_READ((struct mm_struct___seqcount *)mm, mm_lock_seq.sequence);
		return !(*version & 1);
	}
	if (bpf_core_field_exists(((struct mm_struct___int_seq *)0)->mm_lock_seq) &&
	    bpf_core_field_exists(((struct mm_struct___int_seq *)0)->mmap_lock.count)) {
		/* the int: changed when a writer unlocks; a writer holds the lock while its count's bit 0 is set */
		if (BPF_CORE_READ((struct mm_struct___int_seq *)mm, mmap_lock.count.counter) & 1)
			return false;
		*version = (__u32)BPF_CORE_READ((struct mm_struct___int_seq *)mm, mm_lock_seq);
		return true;
	}
	return false;
}

/*
 * Where the stack that sp points into ends: the main thread's at its initial stack pointer (above it are
 * only the arguments and environment: a stack pointer there is the entry code's, with no frame above it),
 * any other stack at the end of its mapping. 0 when unknown.
 */
static __always_inline __u64 stack_end(struct task_struct *task, __u64 sp, bool main_thread)
{
	struct mm_struct *mm = BPF_CORE_READ(task, mm);
	__u64 start_stack = BPF_CORE_READ(mm, start_stack), task_start_ns;
	struct vma_range found = { 0 };
	struct stack_mapping *known;
	__u32 tid, version = 0;
	bool versioned;

	if (main_thread && sp <= start_stack && start_stack - sp < (1ull << 30))
		return start_stack;
	if (main_thread && sp > start_stack && sp - start_stack < 4096)
		return sp;
	tid = BPF_CORE_READ(task, pid);
	task_start_ns = BPF_CORE_READ(task, start_time);
	/* read before the lookup: a change between the two then makes the stored range a stale one's miss */
	versioned = mappings_version(mm, &version);
	known = versioned ? bpf_map_lookup_elem(&stack_mappings, &tid) : NULL;
	if (known) {
		/* a copy: a uprobe program may be preempted, and the element reused for another thread meanwhile */
		struct stack_mapping k = *known;

		if (k.mm == (__u64)mm && k.task_start_ns == task_start_ns && k.mappings_version == version &&
		    k.start <= sp && sp < k.end)
			return k.end;
	}
	if (bpf_find_vma(task, sp, vma_range_of, &found, 0) != 0)
		return 0;
	/* Not for an exiting thread: its exit (on_exit deletes its entry) may have come already. */
	if (versioned && !(BPF_CORE_READ(task, flags) & PF_EXITING_FLAG)) {
		struct stack_mapping m = {
			.start = found.start,
			.end = found.end,
			.mm = (__u64)mm,
			.task_start_ns = task_start_ns,
			.mappings_version = version,
		};

		bpf_map_update_elem(&stack_mappings, &tid, &m, BPF_ANY);
	}
	return found.end;
}

struct uprobe_task___stackrec {
	void *return_instances;
	void *auprobe;
	unsigned long vaddr;	 /* the probed instruction's address (in an anonymous union of the kernel's) */
	unsigned long xol_vaddr; /* the task's slot in the [uprobes] page, where its copy runs */
} __attribute__((preserve_access_index));

struct task_struct___stackrec {
	struct uprobe_task___stackrec *utask;
} __attribute__((preserve_access_index));

/*
 * Whether walk_frame_pointers gives what the kernel's walk (bpf_get_stack) would; where the kernel does more
 * than follow the frame pointers, it walks. Not for: a 32-bit task (8-byte frames); a kernel thread, io_uring
 * or vhost worker (PF_KTHREAD, PF_IO_WORKER, PF_USER_WORKER: their user registers are a copy of their
 * creator's, and recent kernels give them no user stack); a task with a uretprobe pending (the kernel puts the
 * return addresses the uprobes trampoline replaced back) or stopped in a uprobe (at a function's entry the
 * kernel adds the return address at sp, which the frame pointers do not have yet).
 */
static __always_inline bool fp_walk_here(struct task_struct *task, struct pt_regs *regs)
{
	struct uprobe_task___stackrec *utask;

	if ((__u16)BPF_CORE_READ(regs, cs) != USER_CS_64)
		return false;
	if (BPF_CORE_READ(task, flags) & (PF_KTHREAD_FLAG | PF_IO_WORKER_FLAG | PF_USER_WORKER_FLAG))
		return false;
	if (!bpf_core_field_exists(((struct task_struct___stackrec *)0)->utask))
		return true;
	utask = BPF_CORE_READ((struct task_struct___stackrec *)task, utask);
	if (!utask)
		return true;
	if (bpf_core_field_exists(utask->return_instances) && BPF_CORE_READ(utask, return_instances))
		return false;
	if (bpf_core_field_exists(utask->auprobe) && BPF_CORE_READ(utask, auprobe))
		return false;
	return true;
}

/*
 * pc as the task's code has it. A uprobe runs a copy of the instruction it replaced in the task's slot of the
 * kernel's [uprobes] page, one step with the trap flag set, then moves the pc back by the slot's distance from
 * the probed instruction (default_post_xol_op). A sample in between (the step's debug trap, the way back to
 * user space: most of a hot probed function's samples) has its pc in the slot, in no module, and a frame
 * pointer that is not yet the function's own (the probed instruction is usually its first): its stack was
 * [uprobes] and a caller that never called it. The same distance taken here gives the pc the step stands for,
 * with the registers and stack as they are at that pc; e's flags say so. (The flag is set in e, not returned: a
 * local flag live across take_user_regs' copy doubled the states the verifier walks, past its limit.)
 */
static __always_inline __u64 unstepped_pc(struct sample_event *e, struct task_struct *task, __u64 pc)
{
	struct uprobe_task___stackrec *utask;
	__u64 slot;

	if (!bpf_core_field_exists(((struct task_struct___stackrec *)0)->utask) ||
	    !bpf_core_field_exists(utask->xol_vaddr) || !bpf_core_field_exists(utask->vaddr))
		return pc;
	/* Direct loads (task is the current task's BTF pointer), not a helper call each: with this check the
	 * sampler's time per sample stayed within its noise (kernel.bpf_stats_enabled, bench/workloads/cpu.c at
	 * 4999 Hz, five runs each: 1,042 ns against 1,168 before in fp mode, 1,151 against 1,188 in dwarf mode). */
	utask = ((struct task_struct___stackrec *)task)->utask;
	if (!utask)
		return pc;
	slot = utask->xol_vaddr;
	/*
	 * A pc in the task's slot is in a step: the kernel moves it there (arch_uprobe_pre_xol) after setting vaddr
	 * and before it marks the step begun (active_uprobe), and out again before the slot is reused. The copy is
	 * at most MAX_UINSN_BYTES (16); after the step the pc is just past it.
	 */
	if (!slot || pc < slot || pc - slot > 16)
		return pc;
	e->flags |= SAMPLE_UPROBE_STEP;
	return utask->vaddr + (pc - slot);
}

/*
 * The user registers of task (the current one) and up to `want` bytes of its user stack into e, at the start
 * of its data buffer, which holds at least stack_max + USER_STACK_SLACK bytes (on- and off-CPU events share
 * the head of struct sample_event and differ only in their data buffer: stack_max, a constant, bounds every
 * access).
 */
static __always_inline long take_user_regs(struct sample_event *e, struct task_struct *task, bool main_thread,
					   __u64 want, const __u32 stack_max)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	struct user_regs_event *u = &e->user_regs;
	__u64 sp, end, done = 0, window = 0;
	__u32 flags = 0, unknown_end;
	bool walk_here;
	long err = 0;

	/* A kernel thread has no user space; an io_uring or vhost worker's user registers are not its own (its ip is
	 * 0: an unwind would start from a frame that never ran), and the kernel gives it no user stack either. */
	if (!regs || !BPF_CORE_READ(task, mm) ||
	    (BPF_CORE_READ(task, flags) & (PF_IO_WORKER_FLAG | PF_USER_WORKER_FLAG)))
		return FP_WALK_BY_KERNEL;
	sp = BPF_CORE_READ(regs, sp);
	u->machine = USER_REGS_MACHINE_X86_64;
	u->stack_wanted = (__u32)want;
	if (dwarf_mode) {
		u->reg_count = USER_REGS_COUNT;
		u->reg_mask = USER_REGS_MASK_X86_64;
		u->regs[0] = BPF_CORE_READ(regs, bx);
		u->regs[1] = BPF_CORE_READ(regs, di);
		u->regs[2] = BPF_CORE_READ(regs, bp);
		u->regs[3] = sp;
		u->regs[4] = BPF_CORE_READ(regs, r12);
		u->regs[5] = BPF_CORE_READ(regs, r13);
		u->regs[6] = BPF_CORE_READ(regs, r14);
		u->regs[7] = BPF_CORE_READ(regs, r15);
		u->regs[8] = unstepped_pc(e, task, BPF_CORE_READ(regs, ip));
	} else {
		u->reg_count = USER_REGS_COUNT_FP;
		u->reg_mask = USER_REGS_MASK_FP_X86_64;
		u->regs[0] = BPF_CORE_READ(regs, bp);
		u->regs[1] = sp;
		u->regs[2] = unstepped_pc(e, task, BPF_CORE_READ(regs, ip));
		/*
		 * A leaf without a frame of its own saved its return address below the frame pointer, which is
		 * still its caller's (or an older frame's): the words from there up are the frames the walk reads
		 * itself, and the caller's locals, bytes that only cost room.
		 */
		if (u->regs[0] > sp && u->regs[0] - sp < want)
			want = u->regs[0] - sp;
	}

	end = stack_end(task, sp, main_thread);
	/*
	 * Its end unknown (0: the mapping could not be looked up now), the copy is SIZE bytes or up to a page that
	 * could not be read, most likely the one past the stack: maybe whole, maybe not, and not said to be cut.
	 * Kept in u->flags at once, and without a branch (end - sp wraps, its top bit set, exactly when end < sp:
	 * user addresses are below 2^47): a third value of flags through the copy, a branch, or end kept live
	 * to the end made the verifier's work for the fp sampler longer, or too long with STACKREC_CHECK_FP_WALK.
	 */
	u->flags = (__u32)((end - sp) >> 63) * USER_STACK_END_UNKNOWN;
	if (end >= sp && end - sp < want)
		want = end - sp;
	else
		flags |= USER_STACK_CUT;
	/* The stack goes on past what this kind of sample keeps (off-CPU: OFF_CPU_STACK_MAX, below the largest
	 * SIZE): cut, like a copy cut at SIZE, so that its unwound stack ends in [truncated], not [incomplete]. */
	if (want > stack_max) {
		want = stack_max;
		flags |= USER_STACK_CUT;
	}
	/* fp: the walk's window, the stack from sp up to its end, FP_WINDOW_MAX bytes at most; the top words are
	 * its first bytes. Not where the kernel walks (fp_walk_here). */
	walk_here = !dwarf_mode && fp_walk_here(task, regs);
	if (walk_here && end > sp) {
		window = end - sp < FP_WINDOW_MAX ? end - sp : FP_WINDOW_MAX;
		if (bpf_probe_read_user(e->data + FP_WINDOW_AT, window & (FP_WINDOW_MAX * 2 - 1), (void *)sp))
			window = 0;
	}
	/*
	 * Usually one read; page by page when one page of the range cannot be read: not present, which in a stack
	 * whose end is known is a page never touched (the middle of a large local array) or swapped out, and no
	 * read here can fault it in. In dwarf mode the copy goes on past it: the callers' frames above it are
	 * there, and the unwinder, told which pages are zeros (bits USER_STACK_HOLES_SHIFT on), stops only if it
	 * needs one. Without a known end the page is most likely the one past the stack: the copy ends there.
	 */
	if (want && want <= window) {
		bpf_probe_read_kernel(e->data, want & (FP_WINDOW_MAX * 2 - 1), e->data + FP_WINDOW_AT);
		done = want;
	} else if (want && bpf_probe_read_user(e->data, want, (void *)sp) == 0) {
		done = want;
	} else {
		__u32 end_at_hole = !dwarf_mode || (u->flags & USER_STACK_END_UNKNOWN), holes = 0;

		for (int i = 0; i < USER_STACK_MAX / 4096 + 1 && done < want; i++) {
			__u64 chunk = 4096 - ((sp + done) & 4095);
			__u32 failed;

			if (chunk > want - done)
				chunk = want - done;
			chunk &= 8191;
			/* on failure the helper leaves zeros in its place */
			err = bpf_probe_read_user(e->data + (done & (stack_max - 1)), chunk, (void *)(sp + done));
			/* No branch on err but the one that ends the copy: a page read and one not, as two states
			 * each to verify, made the sampler too large to load (E2BIG). */
			failed = (__u32)((__u64)err >> 63); /* a negative errno */
			if (failed & end_at_hole)
				break;
			holes |= (failed & ~end_at_hole) << (USER_STACK_HOLES_SHIFT + i);
			done += chunk;
		}
		u->flags |= holes;
		if (done < want)
			flags |= USER_STACK_CUT;
	}
	/* Not a byte of the stack could be read: an error of the stack, not a short one. */
	if (want && !done && err && !e->user_stack_error)
		e->user_stack_error = (__s32)err;
	u->stack_size = (__u32)done;
	/* An unknown end replaces the cut: in memory, read back as a number the verifier does not follow (with the
	 * holes, set in memory too). */
	unknown_end = u->flags & USER_STACK_END_UNKNOWN;
	u->flags = (flags & ((unknown_end >> 1) - 1)) | (u->flags & ~USER_STACK_CUT);
	e->flags |= SAMPLE_USER_REGS;
	return walk_here ? (long)window : FP_WALK_BY_KERNEL;
}

/*
 * The frame-pointer walk of the kernel's perf_callchain_user, which bpf_get_stack does: the pc, then each frame
 * record's return address, following its saved frame pointer until a read fails or MAX_STACK_DEPTH. Done here
 * over the window of the stack take_user_regs copied (at e->data + FP_WINDOW_AT), in one read, rather than
 * two reads of user memory a frame; and a frame pointer below vm.mmap_min_addr, where nothing can be mapped, is
 * not read but ends the walk, as the read would: glibc enters main with rbp = 1, so the kernel's walk of
 * every stack of a main thread ended in a page fault. Measured on a 2-core VM (kernel.bpf_stats_enabled): the
 * sampler took 3.3 us a sample of bench/workloads/cpu.c with bpf_get_stack, 0.9-1.4 us so. Frames outside
 * the window are read one by one, as the kernel reads them. The same IPs as the kernel's walk: record with
 * STACKREC_CHECK_FP_WALK=1 compares the two (tests/t5100). Writes the IPs at e->data + at; returns how many.
 */
static __always_inline __u16 walk_frame_pointers(struct sample_event *e, __u32 at, __u64 window, __u64 *differ)
{
	__u64 fp = e->user_regs.regs[0], sp = e->user_regs.regs[1];
	/* STACKREC_CHECK_FP_WALK: the kernel's IPs, which bpf_get_stack put in the room past the window */
	__u64 *kernel_ips = (__u64 *)(e->data + FP_WINDOW_AT + FP_WINDOW_MAX);
	struct frame_record {
		__u64 next, ret;
	} fr;
	__u16 depth = 1;

	*(__u64 *)(e->data + at) = e->user_regs.regs[2];
	if (check_fp_walk)
		*differ |= unstepped_pc(e, bpf_get_current_task_btf(), kernel_ips[0]) ^ e->user_regs.regs[2];
	for (int i = 1; i < MAX_STACK_DEPTH && i < fp_max_depth; i++) {
		__u64 off = fp - sp;

		if (fp >= sp && off + sizeof(fr) <= window)
			__builtin_memcpy(&fr, e->data + FP_WINDOW_AT + (off & (FP_WINDOW_MAX - 1)), sizeof(fr));
		else if (fp < mmap_min_addr || bpf_probe_read_user(&fr, sizeof(fr), (void *)fp))
			break;
		*(__u64 *)(e->data + at + (i & 127) * 8) = fr.ret;
		if (check_fp_walk)
			*differ |= kernel_ips[i & 127] ^ fr.ret;
		depth = i + 1;
		fp = fr.next;
	}
	return depth;
}

/* STACKREC_CHECK_FP_WALK: [0] samples walked, [1] those whose IPs differ from bpf_get_stack's, per CPU */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} fp_walk_check SEC(".maps");

/* STACKREC_CHECK_FP_WALK: counts a walk, and one whose IPs (or their number) differ from the kernel's. */
static __always_inline void count_fp_walk(bool differ)
{
	__u32 walked = 0, differed = 1;
	__u64 *count = bpf_map_lookup_elem(&fp_walk_check, &walked);

	if (count)
		(*count)++;
	count = differ ? bpf_map_lookup_elem(&fp_walk_check, &differed) : NULL;
	if (count)
		(*count)++;
}

static __always_inline void count_lost_as(__u32 why)
{
	__u64 *lost = bpf_map_lookup_elem(&lost_samples, &why);

	if (lost)
		(*lost)++;
}

static __always_inline void count_lost(void)
{
	count_lost_as(LOST_DROPPED);
}

static __always_inline bool followed(__u32 pid)
{
	__u8 *target;

	if (pid == 0)
		return false;
	if (record_all)
		return true;
	target = bpf_map_lookup_elem(&targets, &pid);
	return target && *target == TARGET_FOLLOWED;
}

/* n (a byte count from bpf_get_stack, or its negative errno) as a count of IPs, for the verifier at most
 * MAX_STACK_DEPTH. */
static __always_inline __u16 ip_count(long n)
{
	if (n <= 0)
		return 0;
	if (n > STACK_IPS_BYTES)
		n = STACK_IPS_BYTES;
	return (__u16)(n / sizeof(__u64));
}

/* Where in e->data the IPs start: after the stack bytes, at most stack_max of them. */
static __always_inline __u32 ips_offset(struct sample_event *e, const __u32 stack_max)
{
	__u32 at = e->user_regs.stack_size;

	return at < stack_max ? at : stack_max;
}

/*
 * Fills e with the current task's identity and stacks in the recording's call-graph mode; e's data buffer
 * holds stack_max + USER_STACK_SLACK bytes: the stack bytes, then the user IPs and the kernel IPs right
 * after them, so that a sample takes only what it holds. ctx is the program's context, for bpf_get_stack,
 * which skips the kernel_skip innermost kernel frames.
 */
static __always_inline void take_sample(void *ctx, struct sample_event *e, __u16 kind, const __u32 stack_max,
					const __u64 kernel_skip)
{
	__u64 id = bpf_get_current_pid_tgid();
	long n, window = FP_WALK_BY_KERNEL;
	__u32 at;

	e->time_ns = bpf_ktime_get_ns();
	e->weight = period_ns;
	e->pid = id >> 32;
	e->tid = (__u32)id;
	e->cpu = bpf_get_smp_processor_id();
	e->kind = kind;
	e->flags = dwarf_mode ? SAMPLE_USER_UNWIND : 0;
	e->reserved = 0;
	e->user_stack_error = 0;
	e->user_depth = 0;
	e->user_regs.stack_size = 0;
	bpf_get_current_comm(e->comm, sizeof(e->comm));

	/* The stack bytes first: the IPs go after them. */
	if (stack_copy)
		window = take_user_regs(e, bpf_get_current_task_btf(), e->pid == e->tid, stack_copy, stack_max);
	at = ips_offset(e, stack_max);
	if (!dwarf_mode && window != FP_WALK_BY_KERNEL) {
		__u64 differ = 0;
		long kernel_n = 0;
		__u16 depth;

		if (check_fp_walk)
			kernel_n = bpf_get_stack(ctx, e->data + FP_WINDOW_AT + FP_WINDOW_MAX, STACK_IPS_BYTES,
						 BPF_F_USER_STACK);
		depth = walk_frame_pointers(e, at, (__u64)window, &differ);
		if (check_fp_walk)
			count_fp_walk(differ || kernel_n != depth * 8);
		e->user_depth = depth;
		at += (depth < MAX_STACK_DEPTH ? depth : MAX_STACK_DEPTH) * sizeof(__u64);
	} else if (!dwarf_mode) {
		__u16 depth;

		n = bpf_get_stack(ctx, e->data + at, STACK_IPS_BYTES, BPF_F_USER_STACK);
		/* A failed walk is the error to report, before a failed copy of the top words. */
		if (n < 0)
			e->user_stack_error = n;
		depth = ip_count(n);
		e->user_depth = depth;
		/* the kernel's walk starts at the pc in a uprobe's slot too (unstepped_pc) */
		if (depth) {
			__u64 *pc = (__u64 *)(e->data + at);

			*pc = unstepped_pc(e, bpf_get_current_task_btf(), *pc);
		}
		at += depth * sizeof(__u64);
	}
	n = bpf_get_stack(ctx, e->data + at, STACK_IPS_BYTES, kernel_skip & BPF_F_SKIP_FIELD_MASK);
	e->kernel_stack_error = n < 0 ? n : 0;
	e->kernel_depth = ip_count(n);
}

static __always_inline __u64 wakeup_flags(void)
{
	return bpf_ringbuf_query(&samples, BPF_RB_AVAIL_DATA) >= wakeup_bytes ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
}

static __always_inline void count_lost_probe(__u32 which)
{
	__u64 *lost = bpf_map_lookup_elem(&lost_probe, &which);

	if (lost)
		(*lost)++;
}

/*
 * Sends e's head and the used part of its data (stack bytes, IPs) and, for an event sample, info after
 * them (the slack past stack_max leaves room for it); a full ring buffer counts a lost sample or event.
 */
static __always_inline void send(struct sample_event *e, const __u32 stack_max, struct event_info *info)
{
	__u64 size = ips_offset(e, stack_max);
	__u16 user = e->user_depth, kernel = e->kernel_depth;

	/* bounded again for the verifier: e may have waited in task storage since take_sample */
	size += (__u64)(user < MAX_STACK_DEPTH ? user : MAX_STACK_DEPTH) * sizeof(__u64);
	size += (__u64)(kernel < MAX_STACK_DEPTH ? kernel : MAX_STACK_DEPTH) * sizeof(__u64);
	if (info) {
		if (bpf_probe_read_kernel(e->data + size, sizeof(*info), info))
			return;
		e->flags |= SAMPLE_EVENT_INFO;
		size += sizeof(*info);
	}
	size += __builtin_offsetof(struct sample_event, data);
	if (bpf_ringbuf_output(&samples, e, size, wakeup_flags())) {
		if (info)
			count_lost_probe(LOST_EVENT_SAMPLES);
		else
			count_lost();
	}
}

SEC("perf_event")
int sample(struct bpf_perf_event_data *ctx)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct sample_event *e;

	__u64 id = bpf_get_current_pid_tgid();

	if (!followed(match_tid ? (__u32)id : id >> 32))
		return 0;
	e = bpf_map_lookup_elem(&scratch, &cpu);
	if (!e)
		return 0;
	take_sample(ctx, e, SAMPLE_KIND_ON_CPU, USER_STACK_MAX, 0);
	send(e, USER_STACK_MAX, NULL);
	return 0;
}

static __always_inline bool blocking_state(struct task_struct *task)
{
	unsigned int state = BPF_CORE_READ(task, __state);

	if (off_cpu_state == OFF_CPU_STATE_INTERRUPTIBLE)
		return state & 1; /* TASK_INTERRUPTIBLE */
	/* TASK_UNINTERRUPTIBLE, but not TASK_IDLE (with TASK_NOLOAD, 0x400): an idle kernel thread's wait, which ps
	 * shows as I, not D, and the load average leaves out; those were most of an -a recording's time */
	if (off_cpu_state == OFF_CPU_STATE_UNINTERRUPTIBLE)
		return (state & 2) && !(state & 0x400);
	return true;
}

/*
 * Off-CPU time, paired in the kernel as bcc's offcputime does: at switch-out a target thread's sample (its
 * stacks as they are when it stops running) goes into its task storage; at switch-in, if it stayed off the
 * CPU between min_block_ns and max_block_ns, it is sent with that time as its weight. Only what is recorded
 * crosses to user space; a blocked thread holds one slot, freed with the thread.
 */
SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	struct off_cpu_event *e;
	__u64 now, delta;

	/* prev is the current task: its stacks are readable here, as the sampler reads them. */
	if (followed(match_tid ? prev->pid : prev->tgid)) {
		bool blocking = blocking_state(prev);

		e = blocking ? bpf_task_storage_get(&blocked, prev, 0, BPF_LOCAL_STORAGE_GET_F_CREATE)
			     : bpf_task_storage_get(&blocked, prev, 0, 0);
		/* An interval still open: the thread ran again, and no switch-in said so. The kernel skips one now
		 * and then (0.1-0.7% of a thread's 3 ms sleeps on an idle CPU; bcc's offcputime loses them too): that
		 * interval is lost, counted so, and not ended later at a time that includes the thread's run. */
		if (e && e->time_ns && !e->weight) {
			count_lost_as(LOST_UNENDED);
			e->time_ns = 0;
		}
		if (blocking && e) {
			/* The two innermost kernel frames are this program and bpf_trace_run4, not the thread's. */
			take_sample(ctx, (struct sample_event *)e, SAMPLE_KIND_OFF_CPU, OFF_CPU_STACK_MAX, 2);
			e->weight = 0; /* still off the CPU */
		} else if (blocking) {
			count_lost();
		}
	}
	e = bpf_task_storage_get(&blocked, next, 0, 0);
	if (!e || !e->time_ns || e->weight)
		return 0;
	now = bpf_ktime_get_ns();
	delta = now - e->time_ns;
	if (delta >= min_block_ns && delta <= max_block_ns) {
		e->weight = delta;
		send((struct sample_event *)e, OFF_CPU_STACK_MAX, NULL);
	}
	e->time_ns = 0; /* sent or dropped: the slot is free */
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 parent_pid = parent->tgid, child_pid = child->tgid;
	__u8 followed = TARGET_FOLLOWED, *target;

	if (record_all || match_tid || parent_pid == child_pid)
		return 0;
	target = bpf_map_lookup_elem(&targets, &parent_pid);
	if (target && *target == TARGET_FOLLOWED && bpf_map_update_elem(&targets, &child_pid, &followed, BPF_ANY)) {
		/* A child we cannot follow is lost to the recording: counted, for the summary and STATS. */
		__u32 zero = 0;
		__u64 *lost = bpf_map_lookup_elem(&lost_targets, &zero);

		if (lost)
			(*lost)++;
	}
	return 0;
}

/*
 * A target process is gone once its last thread exits (not its leader: a leader that calls pthread_exit
 * leaves the others running). It is marked, not deleted: its mmap/comm/exit records may still wait in the
 * side-band buffers, and the recorder keeps them only for targets. The recorder deletes marked entries
 * after reading those buffers through, so that `targets` holds live processes only (a fork-heavy run does
 * not fill it) and a reused pid is not sampled.
 */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *task)
{
	__u32 pid = match_tid ? task->pid : task->tgid, tid = task->pid;
	__u8 *target;

	bpf_map_delete_elem(&stack_mappings, &tid);
	/* With -t a target is a thread: gone when it exits. */
	if (record_all || (!match_tid && task->signal->live.counter != 0))
		return 0;
	target = bpf_map_lookup_elem(&targets, &pid);
	if (target)
		*target = TARGET_EXITED;
	return 0;
}

/* The recorder's child becomes the user's command: sample it from here on. */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *task, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 pid = task->tgid, tid = task->pid, old_tid = old_pid;
	__u8 *target = bpf_map_lookup_elem(&targets, &pid);

	/* A new address space: its mm may reuse the old one's address. A thread that exec'd took the leader's
	 * id, and its own is gone without an exit. */
	bpf_map_delete_elem(&stack_mappings, &tid);
	bpf_map_delete_elem(&stack_mappings, &old_tid);
	if (target && *target == TARGET_BEFORE_EXEC)
		*target = TARGET_FOLLOWED;
	return 0;
}

/* --- events and probes ------------------------------------------------------------------------------ */

struct thread_sum {
	struct list_head *head, *pos;
	__u64 user, system;
};

/* One step of the walk over a process's threads (signal->thread_head, task->thread_node) for bpf_loop. */
static long add_thread_time(__u32 i, void *data)
{
	struct thread_sum *s = data;
	struct list_head *next = NULL;
	struct task_struct *t;

	if (bpf_probe_read_kernel(&next, sizeof(next), &s->pos->next) || !next || next == s->head)
		return 1;
	t = (void *)next - bpf_core_field_offset(struct task_struct, thread_node);
	s->user += BPF_CORE_READ(t, utime);
	s->system += BPF_CORE_READ(t, stime);
	s->pos = next;
	return 0;
}

static __always_inline __u64 rss_pages(struct mm_struct *mm, int counter)
{
	__s64 n = BPF_CORE_READ(mm, rss_stat[counter].count); /* percpu_counter_read: per-CPU deltas not folded */

	return n > 0 ? n : 0;
}

/*
 * The counters of task's process, as /proc/PID/stat would give them at this moment: threads, CPU time (the
 * exited threads' in signal->utime/stime plus every live thread's), RSS (file, anon and shmem pages) and
 * virtual size. Read here because after a fatal signal the process may be gone when user space looks.
 */
static __always_inline void take_metrics(struct event_info *info, struct task_struct *task)
{
	struct signal_struct *sig = BPF_CORE_READ(task, signal);
	struct mm_struct *mm = BPF_CORE_READ(task, mm);
	struct thread_sum s = { 0 };
	__u32 threads;

	info->metrics_ok = 0;
	if (!sig || !mm)
		return;
	threads = BPF_CORE_READ(sig, nr_threads);
	s.head = &sig->thread_head;
	s.pos = s.head;
	s.user = BPF_CORE_READ(sig, utime);
	s.system = BPF_CORE_READ(sig, stime);
	/* a thread more than counted: one may have been created since nr_threads was read */
	if (bpf_loop(threads + 1 < 65536 ? threads + 1 : 65536, add_thread_time, &s, 0) < 0)
		return;
	info->threads = threads;
	info->user_time_ns = s.user;
	info->system_time_ns = s.system;
	info->rss_bytes = (rss_pages(mm, 0) + rss_pages(mm, 1) + rss_pages(mm, 3)) * page_size; /* MM_FILEPAGES,
												 MM_ANONPAGES, MM_SHMEMPAGES */
	info->vm_bytes = BPF_CORE_READ(mm, total_vm) * page_size;
	info->metrics_ok = 1;
}

static __always_inline struct event_info *new_event_info(__u32 type)
{
	__u32 zero = 0;
	struct event_info *info = bpf_map_lookup_elem(&event_infos, &zero);

	if (!info)
		return NULL;
	info->type = type;
	info->signo = 0;
	info->code = 0;
	info->name_size = 0;
	info->address = 0;
	info->reserved = 0;
	info->name[0] = 0;
	return info;
}

/* Builds the event sample of the current thread (its stacks as the recording's on-CPU samples are taken)
 * and sends it with info. kernel_skip: frames of the BPF machinery at the top of the kernel stack. */
static __always_inline void send_event(void *ctx, struct event_info *info, const __u64 kernel_skip)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct sample_event *e = bpf_map_lookup_elem(&event_scratch, &cpu);

	if (!e)
		return;
	take_sample(ctx, e, SAMPLE_KIND_EVENT, USER_STACK_MAX, kernel_skip);
	e->weight = 0;
	take_metrics(info, bpf_get_current_task_btf());
	send(e, USER_STACK_MAX, info);
}


/*
 * A signal about to be acted on by a target thread (get_signal: handler, default action, or ignored). The
 * fatal kinds are recorded whether or not the program handles them (docs/recording.md says why); ignored
 * ones are not (a fault the kernel forces is never ignored). The thread is the current task: its user
 * registers are those of the faulting instruction.
 */
SEC("tp_btf/signal_deliver")
int BPF_PROG(on_signal, int sig, struct kernel_siginfo *info, struct k_sigaction *ka)
{
	struct event_info *ev;
	__u32 *busy;

	if (sig != 11 && sig != 7 && sig != 8 && sig != 4 && sig != 6 && sig != 5) /* SEGV BUS FPE ILL ABRT TRAP */
		return 0;
	if (!followed(bpf_get_current_pid_tgid() >> 32))
		return 0;
	if (ka && (unsigned long)ka->sa.sa_handler == 1) /* SIG_IGN */
		return 0;
	busy = claim_slot(SLOT_EVENT, LOST_EVENT_SAMPLES);
	if (!busy)
		return 0;
	ev = new_event_info(EVENT_SIGNAL);
	if (!ev)
		goto out;
	ev->signo = sig;
	/* Read through bpf_probe_read_kernel, not dereferenced: newer verifiers (6.1x) type this argument as a
	 * scalar, since a tracepoint's pointer may encode an error, and refuse a direct load. A pointer that
	 * cannot be read leaves code and address 0. */
	if (info) {
		ev->code = BPF_CORE_READ(info, si_code);
		/* A faulting address only for a signal the kernel raised (si_code > 0); one sent by kill() or
		 * tgkill() (SI_USER, SI_TKILL, ...) holds the sender's pid and uid there, and SIGABRT has none. */
		if (sig != 6 && ev->code > 0)
			ev->address = (__u64)BPF_CORE_READ(info, _sifields._sigfault._addr);
	}
	/* The two innermost kernel frames are this program and bpf_trace_run3, not the thread's. */
	send_event(ctx, ev, 2);
out:
	*busy = 0;
	return 0;
}

/* __cxa_throw(void *obj, std::type_info *tinfo, void (*dest)(void *)): the stack at the throw, and the type's
 * name, which the Itanium C++ ABI keeps at offset 8 of the type_info object. */
SEC("uprobe")
int on_throw(struct pt_regs *ctx)
{
	struct event_info *ev;
	__u64 tinfo, name = 0;
	__u32 *busy;
	long n;

	if (!followed(bpf_get_current_pid_tgid() >> 32))
		return 0;
	busy = claim_slot(SLOT_EVENT, LOST_EVENT_SAMPLES);
	if (!busy)
		return 0;
	ev = new_event_info(EVENT_EXCEPTION);
	if (!ev)
		goto out;
	ev->address = PT_REGS_PARM1(ctx);
	tinfo = PT_REGS_PARM2(ctx);
	if (tinfo && bpf_probe_read_user(&name, sizeof(name), (void *)(tinfo + 8)) == 0 && name) {
		n = bpf_probe_read_user_str(ev->name, sizeof(ev->name), (void *)name);
		ev->name_size = n > 0 ? n : 0;
	}
	send_event(ctx, ev, 0);
out:
	*busy = 0;
	return 0;
}

/* Any --probe: the cookie says which, how many argument registers it keeps, and which point to strings. */
SEC("uprobe")
int probe_hit(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), cookie;
	struct probe_hit_event *e;
	__u32 zero = 0, mask, n = 0, *busy;
	char more;
	long len;

	if (!followed(id >> 32))
		return 0;
	busy = claim_slot(SLOT_HIT, LOST_PROBE_HITS);
	if (!busy)
		return 0;
	e = bpf_map_lookup_elem(&hit_scratch, &zero);
	if (!e)
		goto out;
	cookie = bpf_get_attach_cookie(ctx);
	e->time_ns = bpf_ktime_get_ns();
	e->cfa = PT_REGS_SP(ctx) + 8; /* the call pushed the return address */
	e->pid = id >> 32;
	e->tid = (__u32)id;
	e->probe_id = PROBE_COOKIE_ID(cookie);
	e->value_count = PROBE_COOKIE_ARGS(cookie);
	e->cpu = bpf_get_smp_processor_id();
	e->kind = RING_KIND_PROBE_HIT;
	e->reserved = 0;
	e->reserved2 = 0;
	e->values[0] = PT_REGS_PARM1(ctx);
	e->values[1] = PT_REGS_PARM2(ctx);
	e->values[2] = PT_REGS_PARM3(ctx);
	e->values[3] = PT_REGS_PARM4(ctx);
	e->values[4] = PT_REGS_PARM5(ctx);
	e->values[5] = ctx->r9; /* libbpf 1.1 has no PT_REGS_PARM6 */
	mask = PROBE_COOKIE_STRINGS(cookie);
	for (int i = 0; i < PROBE_ARGS_MAX; i++) {
		if (!(mask & (1u << i)) || n >= PROBE_ARGS_MAX)
			continue;
		len = bpf_probe_read_user_str(e->strings[n], PROBE_STRING_MAX, (void *)e->values[i]);
		/* A full buffer holds a string of exactly PROBE_STRING_MAX - 1 bytes, or the start of a longer one:
		 * the byte the NUL took the place of tells. */
		if (len == PROBE_STRING_MAX &&
		    !bpf_probe_read_user(&more, 1, (const char *)e->values[i] + PROBE_STRING_MAX - 1) && more)
			len = PROBE_STRING_CUT;
		e->string_len[n] = len > 0 ? len : 0;
		n++;
	}
	e->string_count = n;
	if (bpf_ringbuf_output(&samples, e, __builtin_offsetof(struct probe_hit_event, strings) +
					     (__u64)(n < PROBE_ARGS_MAX ? n : PROBE_ARGS_MAX) * PROBE_STRING_MAX,
				wakeup_flags()))
		count_lost_probe(LOST_PROBE_HITS);
out:
	*busy = 0;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
