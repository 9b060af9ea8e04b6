/*
 * recorder.h — the state of one `stackrec record` run, shared by the files of record/:
 *
 *   record.c     options, the main loop, stop conditions, the summary line
 *   target.c     what is recorded: a spawned command, -p PIDs, or everything (-a)
 *   sampler.c    the BPF programs: load, per-CPU perf events, the ring buffer of samples
 *   probes.c     --probe uprobes and their PROBE/PROBE_HIT blocks; --signals and --exceptions events
 *   probe_spec.c a --probe checked against the binary's symbols and DWARF
 *   metrics.c    PROCESS_METRICS blocks: /proc every --metrics-interval, and at each event
 *   side_band.c  the kernel's mmap2/comm/fork/exit records: mappings and thread names as they happen
 *   proc_scan.c  processes already running at start: their threads and mappings from /proc
 *   build_id.c   build IDs read from files, when the kernel could not give them
 *   build_id_cache.c  copies of the mapped executables in the build-ID cache, named by build ID
 *   embedded_files.c  FILE blocks: the vDSO image and JIT perf maps
 *   work_queue.c a worker thread fed by the drain thread: build-ID cache copies, perf-map reads
 *   kallsyms.c   the kernel symbols the recording needs
 *   host.c       the HOST block
 */
#ifndef STACKREC_RECORD_RECORDER_H
#define STACKREC_RECORD_RECORDER_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../formats/recording_writer.h"
#include "probes.h"
#include "u64_set.h"

struct profile_bpf;
struct ring_buffer;
struct perf_buffer;
struct bpf_link;
struct bpf_map;

enum record_target {
	TARGET_COMMAND, /* -- CMD ARGS: spawn it and follow its children */
	TARGET_PIDS,	/* -p PID[,PID...] */
	TARGET_THREADS, /* -t TID[,TID...]: these threads only, as perf record -t (no children followed) */
	TARGET_ALL	/* -a, with a command (-a -- CMD ARGS) or without */
};

/* How user stacks are taken (--call-graph, perf's spelling). */
enum call_graph {
	CALL_GRAPH_DWARF, /* registers and the top of the stack, unwound offline with CFI: complete stacks */
	CALL_GRAPH_FP	  /* frame-pointer walks in the kernel: cheap, short or wrong without frame pointers */
};

#define DEFAULT_STACK_SIZE 32768 /* --call-graph dwarf: bytes of user stack per sample (perf: 8192; docs/recording.md says why more) */
#define FP_LEAF_STACK_BYTES 128 /* --call-graph fp: the top words, to repair the walk past a frameless leaf */

/* What the thread that drains the buffers does, timed (-v): while it does one of these it reads no samples,
 * so the longest of each is the longest the ring buffer went unread because of it. */
enum drain_work {
	DRAIN_SAMPLE,	 /* one ring-buffer record into a block (and the frame that block completes) */
	DRAIN_SIDE_BAND, /* one read through the side-band buffers: mappings, tasks and what they cause */
	DRAIN_FLUSH,	 /* the once-a-second frame flush */
	DRAIN_METRICS,	 /* one --metrics-interval tick */
	DRAIN_WORK_KINDS
};

/* How often a stack read failed with one errno. */
struct stack_error_count {
	int error; /* negative errno */
	bool kernel;
	uint64_t count;
};

struct recorder {
	/* Options. */
	enum record_target target;
	unsigned int frequency;
	double duration_s; /* 0: no limit */
	const char *output;
	bool archive;	      /* --archive: bundle the files it needs into OUTPUT.archive after recording */
	bool on_cpu;		  /* sample running threads at `frequency` (the default, or --on-cpu) */
	bool off_cpu;		  /* --off-cpu: blocked time, from sched_switch */
	uint64_t min_block_us, max_block_us; /* --off-cpu: record intervals off the CPU within these */
	int off_cpu_state;	  /* OFF_CPU_STATE_* (bpf/profile.h): --state */
	enum call_graph call_graph;
	unsigned int stack_size; /* CALL_GRAPH_DWARF: bytes of user stack copied per sample */
	char **command; /* TARGET_COMMAND, and TARGET_ALL with a command: argv of the command */
	pid_t *pids;	/* TARGET_PIDS; TARGET_THREADS: the threads' processes (their mappings are scanned) */
	size_t pid_count;
	pid_t *tids;	/* TARGET_THREADS: the threads, the keys of the BPF targets map */
	size_t tid_count;
	char *command_line; /* the record command line, for the HOST block */
	char *cache_dir;    /* the build-ID cache; NULL with --no-cache */
	uint64_t cache_size_mb;
	struct probe probes[PROBES_MAX]; /* --probe */
	size_t probe_count;
	bool signals;	       /* --signals (default with a --probe): fatal signals as event samples */
	bool exceptions;       /* --exceptions: C++ throws as event samples */
	unsigned int metrics_interval_ms; /* --metrics-interval: PROCESS_METRICS of every target; 0: off */

	/* Running state. */
	struct recording_writer writer;
	struct profile_bpf *skel;
	struct ring_buffer *samples;
	unsigned char *tail; /* a SAMPLE block's variable part, built here (sampler.c) */
	size_t tail_cap;
	struct perf_buffer *side_band;
	struct bpf_link **links;
	size_t link_count;
	const char *event_name; /* "cycles" or "cpu-clock" */
	uint32_t *exited;	/* pids marked TARGET_EXITED at the last sampler_forget_exited() */
	size_t exited_count, exited_cap;
	pid_t child;		/* TARGET_COMMAND: the spawned command, 0 once reaped */
	sigset_t ignored_at_start; /* of SIGINT, SIGTERM, SIGHUP, SIGPIPE: those ignored when stackrec started */
	int child_status;
	uint32_t max_stack;   /* the most IPs a stack walk gives: kernel.perf_event_max_stack, MAX_STACK_DEPTH at most */
	bool child_stopped;   /* target_stop or target_reap ended the command: its status is then not its own */
	uint64_t start_ns; /* CLOCK_MONOTONIC */

	/* What was seen, for STATS, the kallsyms selection and the summary. */
	uint64_t sample_count;
	uint64_t off_cpu_count; /* of which off-CPU samples */
	uint64_t user_stack_errors, kernel_stack_errors;
	uint64_t lost_events;
	uint64_t lost_targets; /* children of targets not followed: the BPF targets map was full */
	uint64_t stack_bytes; /* user stack bytes written */
	uint64_t ring_bytes;  /* bytes of the records read from the sample ring buffer (-v reports them) */
	uint64_t ring_records;
	uint32_t ring_batch;  /* records read in this sampler_poll or sampler_drain pass (RING_BATCH_MAX) */
	uint64_t ring_size;   /* the sample ring buffer's bytes */
	bool priority_raised; /* the recorder has raised its threads to RECORDER_NICE (record.c) */
	uint64_t side_band_ns; /* time spent handling side-band records */
	uint64_t drain_max_ns[DRAIN_WORK_KINDS]; /* the longest stretch of each kind of work (-v) */
	uint64_t drain_long_pauses;		 /* stretches of 1 ms or more, of any kind */
	uint64_t wakeups;			 /* times round the main loop */
	uint64_t last_new_process_ns;		 /* the last fork of a new process, or exec, or the start */
	uint64_t cut_stacks;  /* dwarf samples whose stack copy stopped before the stack's end */
	uint64_t cut_off_cpu_stacks; /* ... of them, off-CPU ones cut at OFF_CPU_STACK_MAX, below SIZE */
	uint64_t probe_hits;  /* PROBE_HIT blocks written */
	uint64_t event_count; /* event samples written (signals, exceptions) */
	uint64_t metrics_count; /* PROCESS_METRICS blocks written */
	uint64_t last_metrics_ns;
	char *libstdcxx;      /* --exceptions: the libstdc++ whose __cxa_throw is probed */
	struct u64_set sampled_pids;
	struct u64_set hit_pids; /* processes with probe hits: the summary counts those without samples too */
	struct u64_set mapped_pids; /* processes with a MAPPING block: their perf maps are captured */
	struct u64_set kernel_ips;
	struct stack_error_count *errors;
	size_t error_count, error_cap;
};

/* record/target.c */
int target_parse_pids(struct recorder *rec, const char *list);
int target_parse_tids(struct recorder *rec, const char *list);
/* Notes which of the signals the recorder takes for itself were ignored when it started: the command gets them
 * as they were (target_spawn). Before the recorder installs its own handling. */
void target_note_signals(struct recorder *rec);
int target_spawn(struct recorder *rec); /* forks the command, held until target_start() */
int target_start(struct recorder *rec); /* lets the command exec; -1 if it could not */
bool target_gone(struct recorder *rec); /* the command exited, or every -p PID (-t TID) is gone */
/* -p, -t: says which of the ids ended while the recorder loaded (the recording then holds nothing of them). */
void target_warn_gone_at_start(const struct recorder *rec);
void target_stop(struct recorder *rec); /* sends a still-running command SIGTERM (target_reap waits for it) */
/* Waits for the command to exit; kills it if *signals changes meanwhile (another Ctrl-C). */
void target_reap(struct recorder *rec, const volatile sig_atomic_t *signals);
/* The exit status a run that recorded whole passes on, as perf does: the command's own (128 + N when signal N
 * ended it), 0 when there was none or the recorder ended it (--duration, Ctrl-C). */
int target_exit_status(const struct recorder *rec);

/* record/sampler.c */
int sampler_load(struct recorder *rec);	  /* open, configure and load the BPF programs */
/* before_exec: the recorder's own child, sampled only once it has exec'd the command */
int sampler_add_target(struct recorder *rec, pid_t pid, bool before_exec);
bool sampler_is_target(struct recorder *rec, pid_t pid);
int sampler_attach(struct recorder *rec); /* perf events on every CPU, fork tracking, ring buffer */
void sampler_add_link(struct recorder *rec, struct bpf_link *link); /* destroyed by sampler_close */
/* Detaches every program (sampling events, tracepoints, probes): nothing is added to the ring after it. */
void sampler_stop(struct recorder *rec);
int sampler_poll(struct recorder *rec, int timeout_ms);
void sampler_drain(struct recorder *rec);
uint64_t sampler_lost_samples(struct recorder *rec); /* every sample lost, for the summary and STATS */
/* ... of those, the ones the recorder could have kept by keeping up (a full ring buffer): not the off-CPU
 * intervals whose end the kernel did not report */
uint64_t sampler_dropped_samples(struct recorder *rec);
void sampler_report_fp_walk_check(struct recorder *rec);
uint64_t sampler_lost_targets(struct recorder *rec); /* processes not followed: `targets` was full */
uint64_t sampler_percpu_sum(struct recorder *rec, const struct bpf_map *map, uint32_t key);
/* Frees the `targets` entries of processes that exited before the last call (call it after reading the
 * side-band buffers) */
void sampler_forget_exited(struct recorder *rec);
void sampler_close(struct recorder *rec);

/* record/probes.c */
int probes_attach(struct recorder *rec);	   /* uprobes of --probe and --exceptions, the signal tracepoint */
int probes_write_blocks(struct recorder *rec);	   /* a PROBE block per --probe, before any hit */
void probes_handle_hit(struct recorder *rec, const void *data, size_t size); /* a probe_hit_event */
uint64_t probes_lost_hits(struct recorder *rec);
uint64_t probes_lost_events(struct recorder *rec);
void probes_release(struct recorder *rec);

/* record/metrics.c */
struct event_info;
/* Every --metrics-interval: a PROCESS_METRICS block for each target process, read from /proc. */
void metrics_tick(struct recorder *rec, uint64_t now_ns);
/* /proc/PID/NAME into buf (NUL-terminated, at most size - 1 bytes: a bounded read, never through a symbolic
 * link); the byte count, or -1. */
ssize_t proc_read(uint32_t pid, const char *name, char *buf, size_t size);
/* With an event sample: the counters the BPF program read at the event. */
void metrics_write_event(struct recorder *rec, uint64_t time_ns, uint32_t pid, uint32_t tid,
			 const struct event_info *info);

/* record/side_band.c */
int side_band_open(struct recorder *rec);
void side_band_consume(struct recorder *rec);
void side_band_close(struct recorder *rec);

/* record/proc_scan.c: TASK (existing) and MAPPING blocks for a running process. */
int proc_scan_process(struct recorder *rec, pid_t pid);
int proc_scan_all(struct recorder *rec);
/* The state letter of task id ('R', 'S', 'Z', ...) from /proc/ID/stat (a thread's too, read by proc_read): 0
 * when it cannot be read (errno says why: ENOENT, ESRCH when reaped meanwhile, ...), '?' when it does not parse. */
char proc_task_state(pid_t id);
/*
 * The task whose /proc entry shows process pid's memory: pid, or, once its main thread has exited while other
 * threads run on (pthread_exit leaves it a zombie, with an empty /proc/PID/maps), a live thread of it (its
 * /proc/TID, which is there for every thread); 0 when no task of it is alive; pid itself when its state cannot be
 * read (kill() found it).
 */
pid_t process_live_task(pid_t pid);
/* Writes a MAPPING block of pid; reads the build ID from the file, through /proc/VIEW (a task of pid whose
 * entry shows its memory: process_live_task), when build_id_size is 0. */
int write_mapping(struct recorder *rec, uint64_t time_ns, pid_t pid, pid_t view, uint64_t start, uint64_t end,
		  uint64_t offset, uint32_t prot, uint32_t flags, uint32_t major, uint32_t minor, uint64_t inode,
		  const uint8_t *build_id, uint8_t build_id_size, const char *path);
int write_task(struct recorder *rec, uint64_t time_ns, pid_t pid, pid_t tid, pid_t parent, uint32_t event,
	       const char *comm);

/* record/build_id.c: 0 with the ID in out (size in *size), or -1. Cached by file identity: the drain
 * thread's only. */
int build_id_read(const char *path, uint8_t out[20], uint8_t *size);
int build_id_read_fd(int fd, uint8_t out[20], uint8_t *size); /* uncached: any thread */
/* elf_begin(ELF_C_READ) of a target's file, or NULL unless what libelf copies into memory from it stays small:
 * its section and program headers, section names and note areas (build_id.c). */
struct Elf;
struct Elf *elf_begin_bounded(int fd);
void build_id_cache_release(void);

/* record/build_id_cache.c */
/* Makes sure the cache holds the file mapped at start-end with this build ID (once per ID per run): opens
 * the file now, while the process may still map it, and leaves the checks and the copy to a worker thread. */
void build_id_cache_add(struct recorder *rec, pid_t pid, uint64_t start, uint64_t end, const char *path,
			const uint8_t *id, uint8_t n);
void build_id_cache_wait(void);	/* every file handed to the worker is in the cache (or given up on) */
void build_id_cache_trim(struct recorder *rec); /* after recording: evict LRU entries above --cache-size */
void build_id_cache_report(void);		 /* debug count; frees the run's state */

/* record/embedded_files.c */
/* The vDSO image: at start with --call-graph dwarf; with fp, at the first sample in a [vdso] (the two below). */
int embedded_write_vdso(struct recorder *rec);
/* A [vdso] mapping is recorded: writes the image if a sample was in it already. */
int embedded_note_vdso_mapping(struct recorder *rec, uint64_t start, uint64_t end);
/* A sample's count user IPs (unaligned u64s): writes the image if one is in a [vdso] mapping recorded. */
int embedded_note_user_ips(struct recorder *rec, const void *ips, unsigned int count);
void embedded_release_vdso(void);
/* Remembers the uids of a process while it lives: its perf map is trusted only when one of them owns it. Call
 * it when a process is first seen. */
void embedded_note_process(pid_t pid);
/* Once per pid: opens its perf map now and has a worker thread read it; 0 when there is none. */
int embedded_capture_perf_map(struct recorder *rec, pid_t pid);
int embedded_write_perf_maps(struct recorder *rec); /* FILE blocks of what the worker has read so far */
/* At stop: every pid not yet captured, and waits until every map is read and written. */
int embedded_capture_remaining_perf_maps(struct recorder *rec);
void embedded_release(void);

/* record/kallsyms.c */
int kallsyms_snapshot(void); /* at start: read /proc/kallsyms; 1 if addresses are hidden */
int kallsyms_write_used(struct recorder *rec); /* at stop: the symbols covering rec->kernel_ips */
void kallsyms_release(void);

/* record/host.c */
int host_write(struct recorder *rec, bool kptr_restricted);

uint64_t monotonic_ns(void);
/* record.c: counts work of this kind that started at start_ns and ends now, for -v */
void drain_timed(struct recorder *rec, enum drain_work what, uint64_t start_ns);

#endif
