/*
 * recording.h — the stackrec recording file format. This header is the specification;
 * docs/format.md says the same for people writing their own readers. Change both together.
 *
 * A recording is written once, front to back, by `stackrec record` and read any number of times,
 * on any machine, by `stackrec convert` and `stackrec info`. It is made to survive being cut short
 * (the recorder killed, the disk full, a file copied half-way) and to be extended without breaking
 * old readers. In the spirit of pcapng:
 *
 *   file   := file_header frame*
 *   frame  := frame_header zstd_frame          (independently decodable; a damaged frame loses only itself)
 *   zstd_frame decompresses to  block*
 *   block  := block_header body padding        (padding: zeros up to the next multiple of 8 bytes)
 *
 * Byte order: every integer is in the recording machine's byte order, announced by file_header.byte_order.
 * Readers today accept only their own byte order and say so clearly otherwise.
 *
 * Growing the format:
 *   - New block types may be added at any time; readers skip types they do not know.
 *   - A fixed-size block body may grow at its end. Readers zero-fill fields missing from a shorter body and
 *     ignore bytes past the fields they know. This needs no version bump.
 *   - Bump SREC_VERSION_MAJOR only when an old reader would misread a new file (a field changes meaning);
 *     bump SREC_VERSION_MINOR when a block type or field is added. Readers refuse a newer major version.
 *   - When adding a block type: add it to enum srec_block_type with a comment, describe it in
 *     docs/format.md, teach formats/recording_reader.c to validate it and `stackrec info` to count it.
 *
 * Frames: the writer closes a frame when its blocks reach SREC_FRAME_TARGET bytes or when it is flushed
 * (about once a second while recording), so a recorder killed with SIGKILL loses at most its last second.
 * A frame header carries a magic so that a reader can find the next frame after damage, and the CRC-32 of
 * the compressed bytes so that damage is found before decompression. Before 1.4 the zstd frame also carried
 * a content checksum (the decompressor verifies it where it is); since, the CRC alone.
 *
 * Frame numbers (1.2): a CRC finds a damaged frame, but not one that is missing, duplicated or moved as a
 * whole, each of which is intact by itself. So the first block of every frame is a FRAME block with the
 * frame's number and the count of blocks before it, and END counts every block; readers report gaps,
 * duplicates (only the first of a number is used) and frames out of order. The frame header stays 16 bytes:
 * old readers skip FRAME as an unknown type, and a file without FRAME blocks (1.1) is read as before, with
 * only END's count to check it by.
 */
#ifndef STACKREC_FORMATS_RECORDING_H
#define STACKREC_FORMATS_RECORDING_H

#include <stddef.h>
#include <stdint.h>

#define SREC_FILE_MAGIC "STACKREC" /* 8 bytes, no terminating NUL in the file */
#define SREC_VERSION_MAJOR 1
#define SREC_VERSION_MINOR 8 /* 1.1: SAMPLE flags USER_REGS and USER_UNWIND, HOST call_graph;
				* 1.2: PROBE, PROBE_HIT, PROCESS_METRICS blocks, SAMPLE kind EVENT, STATS grown;
				*      FRAME blocks: frame numbers;
				* 1.3: SAMPLE_TIME_DELTA blocks: samples timed from the one before;
				* 1.4: SAMPLE_TIMED_BY_FRAME and SAMPLE_TIMES blocks: the deltas in a column;
				* 1.5: user_regs flags STACK_HOLES: pages of a stack copy not read;
				* 1.6: PROBE_HIT: a string not read has length SREC_PROBE_STRING_UNREAD, 0 is "";
				*      values extended from the argument's size;
				* 1.7: PROBE_HIT: SREC_PROBE_STRING_CUT marks a string cut at the most bytes kept;
				* 1.8: SAMPLE flag UPROBE_STEP: a pc in a uprobe's slot given as the probed one's */
#define SREC_BYTE_ORDER_MARK 0x01020304u /* written natively; reads back as 0x04030201 on the other order */

struct srec_file_header {
	char magic[8];		 /* SREC_FILE_MAGIC */
	uint16_t version_major;	 /* SREC_VERSION_MAJOR */
	uint16_t version_minor;	 /* SREC_VERSION_MINOR */
	uint32_t byte_order;	 /* SREC_BYTE_ORDER_MARK */
	uint32_t header_size;	 /* sizeof(struct srec_file_header); frames start at this offset */
	uint32_t flags;		 /* none defined yet; must be 0 */
	uint64_t reserved;	 /* 0 */
};
_Static_assert(sizeof(struct srec_file_header) == 32, "file header is 32 bytes");

#define SREC_FRAME_MAGIC 0x52465253u /* "SRFR" in little-endian byte order */
#define SREC_FRAME_TARGET (256u * 1024)	       /* writer closes a frame at about this many block bytes */
#define SREC_FRAME_MAX_UNCOMPRESSED (64u << 20) /* readers refuse larger frames (decompression bombs) */

struct srec_frame_header {
	uint32_t magic;		    /* SREC_FRAME_MAGIC */
	uint32_t compressed_size;   /* bytes of zstd frame that follow this header */
	uint32_t uncompressed_size; /* bytes of blocks the zstd frame decompresses to */
	uint32_t crc32;		    /* CRC-32 (zlib's crc32) of the compressed bytes */
};
_Static_assert(sizeof(struct srec_frame_header) == 16, "frame header is 16 bytes");

struct srec_block_header {
	uint32_t type; /* enum srec_block_type */
	uint32_t size; /* bytes of body, not counting this header or the padding after the body */
};
_Static_assert(sizeof(struct srec_block_header) == 8, "block header is 8 bytes");

#define SREC_BLOCK_ALIGN 8

enum srec_block_type {
	SREC_BLOCK_HOST = 1,	 /* facts about the recording machine and run: "key=value\0" strings, see SREC_HOST_* */
	SREC_BLOCK_SAMPLE = 2,	 /* one stack sample: struct srec_sample followed by its instruction pointers */
	SREC_BLOCK_TASK = 3,	 /* a thread's name, exec, fork or exit: struct srec_task */
	SREC_BLOCK_MAPPING = 4,	 /* an executable mapping of a process: struct srec_mapping followed by its path */
	SREC_BLOCK_KALLSYMS = 5, /* kernel text symbols: the text of /proc/kallsyms, function symbols only */
	SREC_BLOCK_STATS = 6,	 /* counters known only to the recorder: struct srec_stats */
	SREC_BLOCK_END = 7,	 /* the recording ended cleanly: struct srec_end; always the last block */

	/* Reserved, never written: skipped by readers. */
	SREC_BLOCK_USER_REGS_STACK = 8, /* not used: a sample's registers and stack bytes follow its IPs instead
					   (SREC_SAMPLE_USER_REGS), see struct srec_user_regs */
	SREC_BLOCK_SIGNAL = 9,		/* not used: a fatal signal is a SAMPLE of kind SREC_SAMPLE_EVENT */

	SREC_BLOCK_PROBE_HIT = 10,	 /* one entry into a probed function, with its arguments: struct srec_probe_hit */
	SREC_BLOCK_FILE = 11,		 /* an embedded file: vDSO image, JIT perf map (struct srec_file) */
	SREC_BLOCK_PROCESS_METRICS = 12, /* a process's CPU time, RSS and threads at one moment: struct
					    srec_process_metrics */
	SREC_BLOCK_PROBE = 13,		 /* a probe the recorder attached (--probe): struct srec_probe; written before
					    any PROBE_HIT that names it */
	SREC_BLOCK_FRAME = 14,		 /* the frame's number: struct srec_frame; the first block of every frame */
	SREC_BLOCK_SAMPLE_TIME_DELTA = 15, /* a SAMPLE whose time_ns is a delta (1.3): see "Sample times" below */
	SREC_BLOCK_SAMPLE_TIMED_BY_FRAME = 16, /* a SAMPLE whose time is in the frame's SAMPLE_TIMES (1.4), below */
	SREC_BLOCK_SAMPLE_TIMES = 17	       /* the time deltas of the frame's SAMPLE_TIMED_BY_FRAME blocks (1.4):
						  struct srec_sample_times, then 8 byte planes; after FRAME */
};

/*
 * Sample times (1.3): samples come about evenly spaced, so their absolute times (8 bytes whose low half is
 * new at every sample) were a quarter of what an fp sample compresses to. A SAMPLE_TIME_DELTA block is a
 * SAMPLE block in every byte but time_ns, which holds the sample's time minus that of the SAMPLE or
 * SAMPLE_TIME_DELTA block before it in the same frame (0 for the first in the frame), modulo 2^64 (an
 * off-CPU sample may be older than the one before it). The width stays 8 bytes: its high bytes are zeros that
 * compress to nothing, and the layout stays the same, so a reader turns the block back into a SAMPLE in
 * place when it decodes the frame. Within a frame only, so that a frame still decodes by itself. Old readers
 * skip the type they do not know: they see the file's other blocks and no samples, never a wrong time.
 *
 * Sample times in a column (1.4): a delta between samples is still 2-3 bytes of timer jitter, and amid a
 * sample's other bytes zstd codes each as a literal run of its own: 3 bytes a sample of what fp samples
 * compress to at 99 Hz. So since 1.4 the writer puts samples in SAMPLE_TIMED_BY_FRAME blocks, a SAMPLE's
 * body whose time_ns is written as 0, and their deltas (as 1.3 defines them: from the sample before, in the
 * frame, of any of the three sample types) in one SAMPLE_TIMES block right after the frame's FRAME block,
 * added when the frame is closed: struct srec_sample_times, then the deltas as 8 planes of `count` bytes,
 * plane k holding byte k (k = 0 the least significant) of every delta in order. The high planes are zeros and
 * the middle ones nearly constant, which zstd codes in a few bits: about 1 (99 Hz) to 2 (999-4999 Hz) bytes a
 * sample less. A SAMPLE_TIMED_BY_FRAME block takes the next delta of the frame's first SAMPLE_TIMES block
 * before it; one without (no such block, or its count used up) is damage: a reader drops it, never guesses a
 * time. Before the samples, so that a block that breaks later in the frame costs the samples before it
 * nothing. Old readers skip both types, as they skip SAMPLE_TIME_DELTA.
 */
struct srec_sample_times {
	uint32_t count;	   /* deltas that follow, as 8 planes of count bytes: the body is 8 + 8 * count bytes */
	uint32_t reserved; /* 0 */
};
_Static_assert(sizeof(struct srec_sample_times) == 8, "sample times header is 8 bytes");

/*
 * HOST: a sequence of NUL-terminated "key=value" strings. Unknown keys are kept and shown by `info`.
 * The first frame of a file starts with the HOST block (after its FRAME block, and SAMPLE_TIMES if it has samples).
 */
#define SREC_HOST_KERNEL_RELEASE "kernel_release"   /* uname -r */
#define SREC_HOST_HOSTNAME "hostname"		    /* uname -n */
#define SREC_HOST_MACHINE "machine"		    /* uname -m, e.g. x86_64 */
#define SREC_HOST_PAGE_SIZE "page_size"		    /* bytes */
#define SREC_HOST_CPU_COUNT "cpu_count"		    /* possible CPUs */
#define SREC_HOST_CLOCK "clock"			    /* the clock of every time_ns field: "monotonic" */
#define SREC_HOST_START_MONOTONIC "start_monotonic_ns" /* recording start on that clock */
#define SREC_HOST_START_REALTIME "start_realtime_ns"   /* the same instant as nanoseconds since the Unix epoch */
#define SREC_HOST_FREQUENCY "frequency_hz"	    /* requested on-CPU sampling frequency */
#define SREC_HOST_EVENT "event"			    /* the sampling event: "cpu-clock" or "cycles" */
#define SREC_HOST_COMMAND_LINE "command_line"	    /* the stackrec record command line, arguments joined by spaces */
#define SREC_HOST_TARGET "target"		    /* "command", "pids", "threads" (-t) or "all" */
#define SREC_HOST_KPTR_RESTRICTED "kptr_restricted" /* "1" when kallsyms showed no addresses (kernel.kptr_restrict) */
#define SREC_HOST_STACKREC_VERSION "stackrec_version"
#define SREC_HOST_CALL_GRAPH "call_graph"	    /* how user stacks were taken: "fp" or "dwarf,SIZE" (perf's spelling) */
#define SREC_HOST_MAX_STACK "max_stack"		    /* the most IPs a stack walk gives (kernel.perf_event_max_stack) */
#define SREC_HOST_ARCHIVE_OF "archive_of" /* an archive's (stackrec archive): the recording it was made for */

/* SAMPLE: what the BPF program saw at one sampling interrupt, or over one interval off the CPU. */
enum srec_sample_kind {
	SREC_SAMPLE_ON_CPU = 1, /* timer/cycles sample; weight is the sampling period in ns */
	SREC_SAMPLE_OFF_CPU = 2, /* record --off-cpu: a thread off the CPU from time_ns on, for weight ns; its stacks
				   as they were when it left the CPU */
	SREC_SAMPLE_EVENT = 3	 /* something happened to the thread at time_ns (a fatal signal, a C++ exception
				   thrown): its stacks at that moment; weight 0; the flag SREC_SAMPLE_EVENT_INFO is
				   set and a struct srec_sample_event ends the block, saying what happened */
};

#define SREC_MAX_STACK_DEPTH 127 /* bpf_get_stack's default perf_event_max_stack */
#define SREC_COMM_LEN 16	 /* TASK_COMM_LEN */

struct srec_sample {
	uint64_t time_ns;	    /* when, on the host's clock (SREC_HOST_CLOCK) */
	uint64_t weight;	    /* see enum srec_sample_kind */
	uint32_t pid;		    /* process (thread group) id */
	uint32_t tid;		    /* thread id */
	uint32_t cpu;		    /* CPU the sample was taken on */
	uint16_t kind;		    /* enum srec_sample_kind */
	uint16_t flags;		    /* enum srec_sample_flags */
	int32_t user_stack_error;   /* 0, or the negative errno bpf_get_stack returned for the user stack */
	int32_t kernel_stack_error; /* 0, or the negative errno bpf_get_stack returned for the kernel stack */
	uint16_t user_depth;	    /* number of user instruction pointers in ips[] */
	uint16_t kernel_depth;	    /* number of kernel instruction pointers in ips[], after the user ones */
	uint32_t reserved;	    /* 0 */
	char comm[SREC_COMM_LEN];   /* thread name at sample time, NUL-padded */
	uint64_t ips[];		    /* user IPs leaf first, then kernel IPs leaf first; the leaf is the
				       interrupted pc, every other entry a return address */
};
_Static_assert(sizeof(struct srec_sample) == 64, "sample header is 64 bytes");

enum srec_sample_flags {
	/* A struct srec_user_regs, its registers and the copied top of the user stack follow ips[]. */
	SREC_SAMPLE_USER_REGS = 1u << 0,
	/* The user stack was not walked while recording (user_depth is 0): the offline step unwinds it from the
	 * registers and stack bytes with the binaries' CFI (`record --call-graph dwarf`). Without this flag the
	 * user IPs are a frame-pointer walk, and the registers (if any) serve only to repair its first step. */
	SREC_SAMPLE_USER_UNWIND = 1u << 1,
	/* A struct srec_sample_event and its name end the block: after the IPs, and after the registers and
	 * stack bytes when SREC_SAMPLE_USER_REGS is set too. Set exactly when kind is SREC_SAMPLE_EVENT. */
	SREC_SAMPLE_EVENT_INFO = 1u << 2,
	/* The user pc was in the kernel's [uprobes] page, in a uprobe's copy of the instruction it replaced, which
	 * the kernel was stepping out of line (from 1.8): the pc given (the leaf IP, or the pc register) is the
	 * probed instruction's own, moved as the kernel moves it after the step. Before 1.8 such a pc was the
	 * slot's, in no module. */
	SREC_SAMPLE_UPROBE_STEP = 1u << 3
};

/*
 * What happened at an event sample (SREC_SAMPLE_EVENT). It is the last thing in the SAMPLE block, so that
 * readers that do not know it still find the registers and stack where 1.1 put them.
 */
enum srec_event_type {
	SREC_EVENT_SIGNAL = 1,	  /* a fatal signal was delivered to the thread (SIGSEGV, SIGBUS, SIGFPE, SIGILL,
				     SIGABRT, SIGTRAP): signo, code, address; name empty */
	SREC_EVENT_EXCEPTION = 2 /* a C++ exception was thrown (__cxa_throw): name is the thrown type's mangled name
				     as std::type_info::name() gives it (e.g. "St13runtime_error"); address is the
				     thrown object's address */
};

#define SREC_EVENT_NAME_MAX 256 /* the most bytes of name (including its NUL) an event carries */

struct srec_sample_event {
	uint32_t type;	    /* enum srec_event_type */
	int32_t signo;	    /* SREC_EVENT_SIGNAL: the signal number; otherwise 0 */
	int32_t code;	    /* SREC_EVENT_SIGNAL: si_code (e.g. SEGV_MAPERR); otherwise 0 */
	uint32_t name_size; /* bytes of name that follow, including its NUL; 0 when there is none */
	uint64_t address;   /* SREC_EVENT_SIGNAL: the faulting address (si_addr) for SIGSEGV, SIGBUS, SIGFPE, SIGILL,
			       SIGTRAP, else 0; SREC_EVENT_EXCEPTION: the thrown object */
	uint64_t reserved;  /* 0 */
	char name[];	    /* at offset 32 */
};
_Static_assert(sizeof(struct srec_sample_event) == 32, "sample event is 32 bytes");

/*
 * The user-mode registers of a sample and the live top of its user stack, after the sample's IPs (at offset
 * 64 + 8 * (user_depth + kernel_depth)), when the sample has SREC_SAMPLE_USER_REGS:
 *
 *   struct srec_user_regs  uint64_t regs[reg_count]  uint8_t stack[stack_size]
 *
 * With --call-graph dwarf the stack is copied from the stack pointer up to SIZE bytes or to the end of the
 * stack, whichever is nearer (the main thread's stack ends at its initial stack pointer, another thread's at
 * the end of its stack mapping), so a shallow stack costs little. In frame-pointer mode only a few words are
 * kept, enough to find the return address of a leaf function that has no frame of its own at the sampled pc.
 *
 * Why after the IPs and not a block of its own (SREC_BLOCK_USER_REGS_STACK): a sample stays one block that
 * damage cannot cut in half, nothing needs pairing, and readers that do not know the flag ignore bytes past
 * the IPs, as recording_parse_sample always has.
 */
enum srec_user_regs_flags {
	/* The copy stopped before the end of the stack (SIZE reached, or a page could not be read): an unwinder
	 * that needs bytes past stack_size ends the stack as truncated, not as complete. */
	SREC_USER_STACK_CUT = 1u << 0,
	/* Where the stack ends was not known when it was copied (its mapping could not be looked up: another
	 * thread held the process's mappings locked), so SIZE bytes were copied, or up to a page that could not be
	 * read: maybe the whole stack, maybe not. An unwinder treats it as STACK_CUT (the copy may end before the
	 * stack); a count of cut copies does not count it. */
	SREC_USER_STACK_END_UNKNOWN = 1u << 1
};
/*
 * flags bits SREC_USER_STACK_HOLES_SHIFT to +16: bit SHIFT + i set, page i of the copy could not be read (page 0
 * is the one the stack pointer is in, page i the i-th after it) and its bytes in the copy are zeros, not the
 * stack's. The page was not in memory (never touched: the middle of a large local array; or swapped out) and
 * the copy went on past it, to the frames above. Set only where the stack's end was known.
 */
#define SREC_USER_STACK_HOLES_SHIFT 8
#define SREC_USER_STACK_HOLES_MASK (0x1ffffu << SREC_USER_STACK_HOLES_SHIFT)

#define SREC_USER_STACK_MAX (64u * 1024) /* the most stack bytes one sample may carry */
#define SREC_OFF_CPU_STACK_MAX (32u * 1024) /* ... an off-CPU one, whatever --call-graph dwarf,SIZE asked */
#define SREC_USER_REGS_MAX 64		  /* reg_mask has a bit per DWARF register number below this */

struct srec_user_regs {
	uint16_t machine;    /* ELF e_machine whose DWARF register numbers reg_mask uses: 62 (EM_X86_64) */
	uint16_t reg_count;  /* registers that follow: the number of bits set in reg_mask */
	uint32_t stack_size; /* bytes of stack after the registers, starting at the stack pointer's address */
	uint64_t reg_mask;   /* bit N set: DWARF register N is present; regs[] in ascending register number */
	uint32_t flags;	     /* enum srec_user_regs_flags */
	uint32_t stack_wanted; /* SIZE: the most bytes the recorder would have copied */
};
_Static_assert(sizeof(struct srec_user_regs) == 24, "user regs header is 24 bytes");

/* TASK: the life of a thread, from the kernel's fork/comm/exit records or the /proc scan at start. */
enum srec_task_event {
	SREC_TASK_EXISTING = 1, /* found running when recording started */
	SREC_TASK_FORK = 2,	/* created (process or thread); parent_pid is the creator's process */
	SREC_TASK_COMM = 3,	/* renamed (prctl PR_SET_NAME, pthread_setname_np) */
	SREC_TASK_EXEC = 4,	/* the process replaced its image: mappings before time_ns no longer apply */
	SREC_TASK_EXIT = 5	/* exited */
};

struct srec_task {
	uint64_t time_ns;
	uint32_t pid;		  /* process id */
	uint32_t tid;		  /* thread id; equal to pid for the main thread */
	uint32_t parent_pid;	  /* with SREC_TASK_FORK: the parent process; otherwise 0 */
	uint32_t event;		  /* enum srec_task_event */
	char comm[SREC_COMM_LEN]; /* the thread's name after the event, NUL-padded */
};
_Static_assert(sizeof(struct srec_task) == 40, "task block is 40 bytes");

/* MAPPING: an executable mapping (PROT_EXEC) of a process, from the kernel's mmap2 records or /proc/PID/maps. */
#define SREC_BUILD_ID_MAX 20

enum srec_mapping_flags {
	SREC_MAPPING_FROM_PROC = 1u << 0,      /* read from /proc/PID/maps at start, not seen being mapped */
	SREC_MAPPING_BUILD_ID_FROM_FILE = 1u << 1 /* the kernel gave no build ID; the recorder read it from the file */
};

struct srec_mapping {
	uint64_t time_ns;		       /* when it was mapped (recording start for SREC_MAPPING_FROM_PROC) */
	uint64_t start;			       /* first address */
	uint64_t end;			       /* one past the last address */
	uint64_t file_offset;		       /* file offset mapped at start */
	uint64_t inode;			       /* 0 when unknown */
	uint32_t pid;			       /* process id */
	uint32_t flags;			       /* enum srec_mapping_flags */
	uint32_t dev_major, dev_minor;	       /* 0 when unknown */
	uint32_t prot;			       /* PROT_* bits */
	uint8_t build_id_size;		       /* 0: no build ID known */
	uint8_t reserved[3];		       /* 0 */
	uint8_t build_id[SREC_BUILD_ID_MAX];   /* first build_id_size bytes are valid */
	uint32_t path_size;		       /* bytes of path that follow, including its NUL */
	char path[];			       /* e.g. "/usr/lib/x86_64-linux-gnu/libc.so.6", "[vdso]" */
};
_Static_assert(sizeof(struct srec_mapping) == 88, "mapping header is 88 bytes");

/*
 * FILE: a file's bytes embedded in the recording, because the offline step cannot get them any other way:
 * the vDSO image of the recording kernel, a JIT's /tmp/perf-PID.map (its process may be gone, the file
 * with it). Followed by path_size bytes of path (NUL-terminated) and then data_size bytes of content.
 * A file larger than a frame (SREC_FRAME_MAX_UNCOMPRESSED) is split into several FILE blocks with the same
 * kind, pid and path and increasing data_offset.
 */
enum srec_file_kind {
	SREC_FILE_VDSO = 1,	/* the [vdso] image; build_id set; pid 0 (same for every process of the ABI). Only in
				   recordings that need it: fp ones get it (anywhere in the file) once a sample has a
				   user IP in a [vdso] mapping; dwarf ones at start */
	SREC_FILE_PERF_MAP = 2, /* a JIT symbol map, "START SIZE name" lines (perf's /tmp/perf-PID.map); pid set */
	SREC_FILE_DEBUG = 3	/* an ELF file with build_id, a binary or its separate debug file (a path ending in
				   ".debug"), bundled by `stackrec archive`; pid 0 */
};

struct srec_file {
	uint32_t kind;			     /* enum srec_file_kind */
	uint32_t pid;			     /* the process it belongs to, or 0 */
	uint64_t time_ns;		     /* when it was read */
	uint64_t data_offset;		     /* where this block's content starts within the whole file */
	uint64_t data_size;		     /* bytes of content in this block, after the path */
	uint32_t path_size;		     /* bytes of path that follow, including its NUL */
	uint8_t build_id_size;		     /* 0: none */
	uint8_t reserved[3];		     /* 0 */
	uint8_t build_id[SREC_BUILD_ID_MAX]; /* of the file, when it is an ELF file */
	uint32_t reserved2;		     /* 0 */
	char path[];			     /* at offset 64: the file's path on the recording machine, or "[vdso]" */
};
_Static_assert(sizeof(struct srec_file) == 64 && offsetof(struct srec_file, path) == 64, "file block header");

/*
 * PROBE: a user-defined probe (`record --probe 'BINARY:FUNCTION(ARG, ...)'`), a uprobe at the function's entry.
 * Followed by strings_size bytes of NUL-terminated strings: the binary's path as recorded, the function's
 * name, then one "NAME:TYPE" string per argument, in the order the PROBE_HIT values come, where TYPE is "s64"
 * (an integer argument register, shown signed), "u64", "ptr" or "str" (a NUL-terminated string the argument
 * points to, captured up to SREC_PROBE_STRING_MAX bytes).
 */
#define SREC_PROBE_ARGS_MAX 6	   /* the integer argument registers of the x86-64 System V ABI */
#define SREC_PROBE_STRING_MAX 128  /* the most bytes of one captured string, including its NUL */
#define SREC_PROBE_STRING_UNREAD 0xffffu /* a PROBE_HIT string's length when it could not be read (from 1.6) */
#define SREC_PROBE_STRING_CUT 0x8000u	 /* or'ed into a PROBE_HIT string's length: the string went on (from 1.7) */

struct srec_probe {
	uint32_t probe_id;		     /* names this probe in PROBE_HIT blocks; unique in the file */
	uint32_t arg_count;		     /* at most SREC_PROBE_ARGS_MAX */
	uint64_t address;		     /* the function's entry as an ELF virtual address of the binary (st_value) */
	uint8_t build_id_size;		     /* 0: none known */
	uint8_t reserved[3];		     /* 0 */
	uint8_t build_id[SREC_BUILD_ID_MAX]; /* of the binary */
	uint32_t strings_size;		     /* bytes of strings that follow, from offset 48 */
	uint32_t reserved2;		     /* 0 */
	/* no flexible array member for the strings: struct recording_probe holds this header as a member */
};
_Static_assert(sizeof(struct srec_probe) == 48, "probe block header is 48 bytes");

/*
 * PROBE_HIT: a thread entered a probed function. cfa is the call's canonical frame address (the stack pointer
 * before the call instruction, which is the stack pointer at entry plus 8 on x86-64): the same number an
 * unwinder computes for that function's frame while the call is active, which is how convert tells this
 * call from an earlier or later one at another depth (see docs/convert.md, enrichment).
 * values[] has arg_count entries: the arguments, each extended to 64 bits from its size ("s64" sign-extended,
 * from 1.6; before, the raw registers, whose bytes above an int's are the caller's leftovers); for "str" the
 * pointer. Then, for each "str" argument in order: uint16_t length (bytes of string, no NUL;
 * SREC_PROBE_STRING_UNREAD when it could not be read, and no bytes; before 1.6, 0 said that, and an empty
 * string looked the same; with SREC_PROBE_STRING_CUT set, the bytes are the start of a longer string, from
 * 1.7; before, such a string looked whole) and the bytes, packed without padding. strings_size is the total of those.
 */
struct srec_probe_hit {
	uint64_t time_ns;      /* on the host's clock */
	uint32_t pid;	       /* process */
	uint32_t tid;	       /* thread */
	uint32_t probe_id;     /* a PROBE block's probe_id */
	uint16_t value_count;  /* entries in values[]: the probe's arg_count */
	uint16_t strings_size; /* bytes of captured strings after values[] */
	uint64_t cfa;	       /* the call's canonical frame address */
	uint64_t values[];     /* at offset 32 */
};
_Static_assert(sizeof(struct srec_probe_hit) == 32, "probe hit header is 32 bytes");

/* PROCESS_METRICS: a process's counters at one moment, read without stopping it. */
enum srec_metrics_reason {
	SREC_METRICS_INTERVAL = 1, /* every --metrics-interval */
	SREC_METRICS_EVENT = 2	   /* taken with an event sample (fatal signal, exception) of thread tid at time_ns */
};

struct srec_process_metrics {
	uint64_t time_ns;	 /* on the host's clock */
	uint32_t pid;		 /* process */
	uint32_t tid;		 /* SREC_METRICS_EVENT: the thread of the event; otherwise 0 */
	uint32_t reason;	 /* enum srec_metrics_reason */
	uint32_t threads;	 /* threads in the process */
	uint64_t user_time_ns;	 /* CPU time in user mode, all threads, since the process started */
	uint64_t system_time_ns; /* CPU time in the kernel, all threads */
	uint64_t rss_bytes;	 /* resident set size */
	uint64_t vm_bytes;	 /* virtual memory size */
};
_Static_assert(sizeof(struct srec_process_metrics) == 56, "process metrics block is 56 bytes");

/* STATS: what the recorder alone knows. Written once, just before END. */
struct srec_stats {
	uint64_t samples;	      /* samples written */
	uint64_t lost_samples;	      /* samples dropped because the BPF ring buffer was full */
	uint64_t lost_events;	      /* mmap/task records the kernel dropped (PERF_RECORD_LOST), plus processes
				       * not followed because the BPF targets map was full */
	uint64_t user_stack_errors;   /* samples whose user stack could not be read */
	uint64_t kernel_stack_errors; /* samples whose kernel stack could not be read */
	uint64_t processes;	      /* distinct processes with samples */
	uint64_t duration_ns;	      /* from recording start to stop */
	/* 1.2; zero in older files (a shorter body) */
	uint64_t probe_hits;	      /* PROBE_HIT blocks written */
	uint64_t lost_probe_hits;     /* probe hits dropped (ring buffer full): context values may be missing */
	uint64_t events;	      /* event samples (signals, exceptions) written */
	uint64_t lost_event_samples;  /* event samples dropped (ring buffer full) */
};
_Static_assert(sizeof(struct srec_stats) == 88, "stats block is 88 bytes");

/*
 * FRAME: the first block of every frame (1.2), numbering frames so that a reader can tell a frame that is
 * missing, duplicated or out of place, which the CRC cannot (see "Frame numbers" above). Readers take it out
 * of the block stream; it counts in blocks_before and in END's blocks like any other block.
 */
struct srec_frame {
	uint64_t sequence;	/* frames the writer wrote before this one: 0, 1, 2, ... */
	uint64_t blocks_before; /* blocks the writer wrote before this one, FRAME blocks included */
};
_Static_assert(sizeof(struct srec_frame) == 16, "frame block is 16 bytes");

/* END: the writer finished cleanly. A file without it was cut short; its intact frames still read. */
struct srec_end {
	uint64_t time_ns; /* when the recording stopped */
	uint64_t blocks;  /* blocks written before this one (FRAME blocks included): a reader that read fewer or
			     more lost frames or read some twice */
};
_Static_assert(sizeof(struct srec_end) == 16, "end block is 16 bytes");

#endif
