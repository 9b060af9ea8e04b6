/*
 * sampler.c — the BPF side of recording: loads bpf/profile.bpf.c through its skeleton, opens one sampling
 * perf event per online CPU (cycles where the hardware has them, else cpu-clock) with the program attached,
 * follows forks of target processes, and turns ring-buffer events into SAMPLE blocks as they arrive.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../formats/recording.h"
#include "../util.h"
#include "profile.skel.h"
#include "recorder.h"

#include "../bpf/profile.h"

/* The event goes to the file as it came: its head must be a struct srec_sample. */
_Static_assert(offsetof(struct sample_event, user_regs) == sizeof(struct srec_sample), "sample head size");
_Static_assert(offsetof(struct sample_event, comm) == offsetof(struct srec_sample, comm), "sample comm");
_Static_assert(offsetof(struct sample_event, user_depth) == offsetof(struct srec_sample, user_depth), "depth");
_Static_assert(offsetof(struct sample_event, kernel_stack_error) ==
		       offsetof(struct srec_sample, kernel_stack_error), "kernel error");
_Static_assert(MAX_STACK_DEPTH == SREC_MAX_STACK_DEPTH, "stack depth");
/* user_regs goes to the file as a struct srec_user_regs followed by its registers. */
_Static_assert(offsetof(struct user_regs_event, regs) == sizeof(struct srec_user_regs), "user regs head");
_Static_assert(offsetof(struct user_regs_event, reg_mask) == offsetof(struct srec_user_regs, reg_mask), "mask");
_Static_assert(offsetof(struct user_regs_event, stack_wanted) == offsetof(struct srec_user_regs, stack_wanted),
	       "wanted");
_Static_assert(USER_STACK_MAX == SREC_USER_STACK_MAX && OFF_CPU_STACK_MAX == SREC_OFF_CPU_STACK_MAX && SAMPLE_USER_REGS == SREC_SAMPLE_USER_REGS &&
		       SAMPLE_USER_UNWIND == SREC_SAMPLE_USER_UNWIND && USER_STACK_CUT == SREC_USER_STACK_CUT &&
		       USER_STACK_END_UNKNOWN == SREC_USER_STACK_END_UNKNOWN &&
		       USER_STACK_HOLES_SHIFT == SREC_USER_STACK_HOLES_SHIFT &&
		       (1u << (USER_STACK_HOLES_SHIFT + USER_STACK_MAX / 4096) & SREC_USER_STACK_HOLES_MASK) &&
		       SAMPLE_EVENT_INFO == SREC_SAMPLE_EVENT_INFO && SAMPLE_KIND_EVENT == SREC_SAMPLE_EVENT &&
		       SAMPLE_UPROBE_STEP == SREC_SAMPLE_UPROBE_STEP,
	       "flags");
/* An event's info goes to the file as a struct srec_sample_event followed by its name. */
_Static_assert(offsetof(struct event_info, name) == sizeof(struct srec_sample_event) &&
		       offsetof(struct event_info, address) == offsetof(struct srec_sample_event, address) &&
		       offsetof(struct event_info, name_size) == offsetof(struct srec_sample_event, name_size) &&
		       EVENT_NAME_MAX == SREC_EVENT_NAME_MAX && EVENT_SIGNAL == SREC_EVENT_SIGNAL &&
		       EVENT_EXCEPTION == SREC_EVENT_EXCEPTION,
	       "event info");
/* Probe hits share the ring buffer: the reader tells them apart by the kind at a sample's kind offset. */
_Static_assert(offsetof(struct probe_hit_event, kind) == offsetof(struct sample_event, kind), "ring kind");

/* Ring buffer sizes: dwarf samples carry kilobytes of stack each. Powers of two, as the kernel wants. */
#define RING_BYTES_FP (16u << 20)
#define RING_BYTES_DWARF (64u << 20)

/* libbpf's warnings always (as bcc's tools show them), its debug log and info with -v. */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (level != LIBBPF_WARN && !verbose)
		return 0;
	return vfprintf(stderr, fmt, args);
}

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

/*
 * -F above kernel.perf_event_max_sample_rate: the kernel refuses the event (EINVAL, which said nothing of the
 * limit). The kernel lowers that limit itself when sampling interrupts take too long, so a -F that worked
 * yesterday may not today: as perf does, sample at the limit and say so.
 */
static void clamp_frequency(struct recorder *rec)
{
	long max = sysctl_value("/proc/sys/kernel/perf_event_max_sample_rate", 0);

	if (max > 0 && rec->frequency > (unsigned long)max) {
		warning("-F %u is above the kernel's limit of %ld Hz: sampling at %ld Hz (the limit is "
			"/proc/sys/kernel/perf_event_max_sample_rate, which the kernel lowers when sampling takes too long)",
			rec->frequency, max, max);
		rec->frequency = (unsigned int)max;
	}
}

/* The effective capability set, from /proc/self/status (CapEff), or 0 when unreadable. */
static uint64_t effective_capabilities(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	uint64_t caps = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %" SCNx64, &caps) == 1)
			break;
	fclose(f);
	return caps;
}

/* Before loading: what would make the load fail with a message that says less. */
static int check_prerequisites(void)
{
	const uint64_t sys_admin = 1ull << 21, perfmon = 1ull << 38, bpf = 1ull << 39;
	uint64_t caps = effective_capabilities();

	if (!(caps & sys_admin) && (caps & (perfmon | bpf)) != (perfmon | bpf))
		return error("recording needs root, or the capabilities CAP_BPF and CAP_PERFMON (this process has %s): "
			     "run it with sudo",
			     caps & bpf ? "CAP_BPF only" : caps & perfmon ? "CAP_PERFMON only" : "neither");
	if (access("/sys/kernel/btf/vmlinux", R_OK) != 0)
		return error("this kernel has no BTF (/sys/kernel/btf/vmlinux): recording needs a kernel built with "
			     "CONFIG_DEBUG_INFO_BTF=y");
	return 0;
}

int sampler_load(struct recorder *rec)
{
	int err;

	libbpf_set_print(libbpf_print);
	if (check_prerequisites() < 0)
		return -1;
	rec->skel = profile_bpf__open();
	if (!rec->skel)
		return error("cannot open the BPF programs: %s", strerror(errno));
	rec->skel->rodata->record_all = rec->target == TARGET_ALL;
	rec->skel->rodata->match_tid = rec->target == TARGET_THREADS;
	clamp_frequency(rec);
	rec->skel->rodata->period_ns = 1000000000ull / rec->frequency;
	rec->skel->rodata->dwarf_mode = rec->call_graph == CALL_GRAPH_DWARF;
	/* Saturated, not wrapped: a huge --min-block-us keeps nothing rather than everything. */
	rec->skel->rodata->min_block_ns = rec->min_block_us > UINT64_MAX / 1000 ? UINT64_MAX : rec->min_block_us * 1000;
	rec->skel->rodata->max_block_ns = rec->max_block_us > UINT64_MAX / 1000 ? UINT64_MAX : rec->max_block_us * 1000;
	rec->skel->rodata->off_cpu_state = rec->off_cpu_state;
	bpf_program__set_autoload(rec->skel->progs.on_switch, rec->off_cpu);
	bpf_program__set_autoload(rec->skel->progs.sample, rec->on_cpu);
	bpf_program__set_autoload(rec->skel->progs.on_signal, rec->signals);
	bpf_program__set_autoload(rec->skel->progs.on_throw, rec->exceptions);
	bpf_program__set_autoload(rec->skel->progs.probe_hit, rec->probe_count > 0);
	rec->skel->rodata->page_size = (__u64)sysconf(_SC_PAGESIZE);
	rec->skel->rodata->stack_copy = rec->call_graph == CALL_GRAPH_DWARF ? rec->stack_size : FP_LEAF_STACK_BYTES;
	rec->skel->rodata->mmap_min_addr = (uint64_t)sysctl_value("/proc/sys/vm/mmap_min_addr", 4096);
	/* bpf_get_stack's walk stops there too (the kernel refuses to change it while callchain buffers are in use) */
	rec->skel->rodata->fp_max_depth = (uint32_t)sysctl_value("/proc/sys/kernel/perf_event_max_stack", 127);
	rec->max_stack = rec->skel->rodata->fp_max_depth < MAX_STACK_DEPTH ? rec->skel->rodata->fp_max_depth
									   : MAX_STACK_DEPTH;
	rec->skel->rodata->check_fp_walk = getenv("STACKREC_CHECK_FP_WALK") && !strcmp(getenv("STACKREC_CHECK_FP_WALK"), "1");
	{
		int cpus = libbpf_num_possible_cpus();
		unsigned int ring = rec->call_graph == CALL_GRAPH_DWARF ? RING_BYTES_DWARF : RING_BYTES_FP;

		if (cpus <= 0)
			return error("cannot count the CPUs: %s", strerror(-cpus));
		/* The reader is woken when a quarter of the ring waits, not per sample: fewer wakeups of the
		 * recorder, which shares the CPUs with the target; it also polls every POLL_MS. */
		rec->skel->rodata->wakeup_bytes = ring / 4;
		rec->ring_size = ring;
		if (bpf_map__set_max_entries(rec->skel->maps.scratch, (__u32)cpus) ||
		    bpf_map__set_max_entries(rec->skel->maps.event_scratch, (__u32)cpus) ||
		    bpf_map__set_max_entries(rec->skel->maps.samples, ring))
			return error("cannot size the BPF maps: %s", strerror(errno));
	}
	err = profile_bpf__load(rec->skel);
	if (err) {
		if (err == -EPERM || err == -EACCES)
			return error("cannot load the BPF programs: %s (recording needs root, or CAP_BPF and "
				     "CAP_PERFMON)",
				     strerror(-err));
		return error("cannot load the BPF programs: %s (run with -v for the verifier's log)", strerror(-err));
	}
	return 0;
}

int sampler_add_target(struct recorder *rec, pid_t pid, bool before_exec)
{
	__u32 key = (__u32)pid;
	__u8 value = before_exec ? TARGET_BEFORE_EXEC : TARGET_FOLLOWED;

	if (bpf_map__update_elem(rec->skel->maps.targets, &key, sizeof(key), &value, sizeof(value), BPF_ANY))
		return error("cannot add process %d to the targets: %s", pid, strerror(errno));
	return 0;
}

bool sampler_is_target(struct recorder *rec, pid_t pid)
{
	__u32 key = (__u32)pid;
	__u8 value;

	if (rec->target == TARGET_ALL)
		return true;
	if (rec->target == TARGET_THREADS) { /* the map holds thread ids; side-band records name processes */
		for (size_t i = 0; i < rec->pid_count; i++)
			if (rec->pids[i] == pid)
				return true;
		return false;
	}
	return bpf_map__lookup_elem(rec->skel->maps.targets, &key, sizeof(key), &value, sizeof(value), 0) == 0;
}

/*
 * Deletes the processes that on_exit marked TARGET_EXITED one sweep ago. Not at once: until the side-band
 * buffers have been read through once more, they may hold the process's last mmap, comm and exit records,
 * which sampler_is_target must still accept. Before each delete the entry is read again: a child of a
 * target that reused the pid in between is TARGET_FOLLOWED and stays.
 */
void sampler_forget_exited(struct recorder *rec)
{
	const struct bpf_map *map = rec->skel->maps.targets;
	__u32 key, next, *keyp = NULL;
	__u8 value;
	size_t marked = 0;

	if (rec->target == TARGET_ALL)
		return;
	for (size_t i = 0; i < rec->exited_count; i++)
		if (bpf_map__lookup_elem(map, &rec->exited[i], sizeof(key), &value, sizeof(value), 0) == 0 &&
		    value == TARGET_EXITED)
			bpf_map__delete_elem(map, &rec->exited[i], sizeof(key), 0);
	while (bpf_map__get_next_key(map, keyp, &next, sizeof(next)) == 0) {
		key = next;
		keyp = &key;
		if (bpf_map__lookup_elem(map, &key, sizeof(key), &value, sizeof(value), 0) == 0 &&
		    value == TARGET_EXITED) {
			GROW(rec->exited, rec->exited_cap, marked + 1);
			rec->exited[marked++] = key;
		}
	}
	rec->exited_count = marked;
}

void sampler_add_link(struct recorder *rec, struct bpf_link *link)
{
	rec->links = xrealloc(rec->links, (rec->link_count + 1) * sizeof(*rec->links));
	rec->links[rec->link_count++] = link;
}

static void count_stack_error(struct recorder *rec, int err, bool kernel)
{
	for (size_t i = 0; i < rec->error_count; i++) {
		if (rec->errors[i].error == err && rec->errors[i].kernel == kernel) {
			rec->errors[i].count++;
			return;
		}
	}
	GROW(rec->errors, rec->error_cap, rec->error_count + 1);
	rec->errors[rec->error_count++] = (struct stack_error_count){ .error = err, .kernel = kernel, .count = 1 };
}

/*
 * The tail of a SAMPLE block: the user IPs and kernel IPs, then, when the sample has them, the user registers
 * and the stack bytes read. The ring buffer record holds the stack bytes first and each part at its used
 * length (bpf/profile.h); built here in the file's order in one buffer, so the block is written in one go.
 * *info_at: where an event's info starts in the record. Returns the tail's length, or -1 for a record too
 * short for what its head says.
 */
static size_t sample_tail(struct recorder *rec, const struct sample_event *e, size_t size, size_t *info_at)
{
	size_t user = e->user_depth * sizeof(uint64_t), kernel = e->kernel_depth * sizeof(uint64_t);
	size_t stack = e->user_regs.stack_size, ips = offsetof(struct sample_event, data) + stack, len = 0, need;

	if (stack > USER_STACK_MAX || size < ips + user + kernel)
		return (size_t)-1;
	need = user + kernel + sizeof(e->user_regs) + stack + sizeof(struct event_info);
	GROW(rec->tail, rec->tail_cap, need);
	memcpy(rec->tail, (const char *)e + ips, user + kernel);
	len += user + kernel;
	if (e->flags & SAMPLE_USER_REGS) {
		/* The registers the mask says, not the whole array: an fp sample keeps 3 of its 8 (bpf/profile.h). */
		size_t regs = offsetof(struct user_regs_event, regs) +
			      (e->user_regs.reg_count < USER_REGS_COUNT ? e->user_regs.reg_count : USER_REGS_COUNT) *
				      sizeof(e->user_regs.regs[0]);

		memcpy(rec->tail + len, &e->user_regs, regs);
		len += regs;
		memcpy(rec->tail + len, e->data, stack);
		len += stack;
		rec->stack_bytes += stack;
		if (e->user_regs.flags & USER_STACK_CUT && e->flags & SAMPLE_USER_UNWIND && !e->user_stack_error) {
			rec->cut_stacks++;
			rec->cut_off_cpu_stacks += e->kind == SAMPLE_KIND_OFF_CPU && stack >= OFF_CPU_STACK_MAX;
		}
	}
	*info_at = ips + user + kernel;
	return len;
}

/*
 * An event sample's info, sent after its IPs (at offset at of the record), becomes the struct
 * srec_sample_event and name that end the block (and, copied to *out, its counters a PROCESS_METRICS block).
 * Returns the tail's new length, or -1.
 */
static size_t event_tail(struct recorder *rec, const struct sample_event *e, size_t size, size_t at, size_t len,
			 struct event_info *out)
{
	struct event_info info;
	struct srec_sample_event head = { 0 };
	const char *name;
	size_t name_len;

	if (size < at + sizeof(info))
		return (size_t)-1;
	memcpy(&info, (const char *)e + at, sizeof(info));
	info.name[sizeof(info.name) - 1] = 0;
	name = info.name;
	/* std::type_info::name() skips the '*' that marks a type local to its object file */
	if (info.type == EVENT_EXCEPTION && name[0] == '*')
		name++;
	name_len = info.name_size ? strlen(name) : 0;
	head.type = info.type;
	head.signo = info.signo;
	head.code = info.code;
	head.address = info.address;
	head.name_size = name_len ? (uint32_t)name_len + 1 : 0;
	memcpy(rec->tail + len, &head, sizeof(head));
	len += sizeof(head);
	memcpy(rec->tail + len, name, head.name_size);
	len += head.name_size;
	*out = info;
	return len;
}

static void handle_record(struct recorder *rec, void *data, size_t size);

/*
 * Records read in one pass at most. libbpf reads on while the BPF side adds records, which a recorder that
 * falls behind never catches up with: the loop that checks for Ctrl-C, SIGTERM, --duration and the command's
 * exit was not reached again (a 4999 Hz recording of 2000 busy threads stopped 7.5 s after Ctrl-C, and ran
 * its command to the end). A negative return from the callback ends the pass, the record read.
 */
#define RING_BATCH_MAX 16384
#define RING_BATCH_FULL (-EAGAIN)

/* A ring-buffer record, timed: a frame it completes is compressed and written meanwhile. */
static int handle_sample(void *ctx, void *data, size_t size)
{
	struct recorder *rec = ctx;
	uint64_t start = monotonic_ns();

	handle_record(rec, data, size);
	drain_timed(rec, DRAIN_SAMPLE, start);
	return ++rec->ring_batch >= RING_BATCH_MAX ? RING_BATCH_FULL : 0;
}

static void handle_record(struct recorder *rec, void *data, size_t size)
{
	const struct sample_event *e = data;
	unsigned int user = e->user_depth, kernel = e->kernel_depth;
	struct event_info info = { 0 };
	size_t tail, info_at = 0;

	rec->ring_bytes += size;
	rec->ring_records++;
	if (size >= offsetof(struct sample_event, kind) + sizeof(e->kind) && e->kind == RING_KIND_PROBE_HIT) {
		probes_handle_hit(rec, data, size);
		return;
	}
	if (size < offsetof(struct sample_event, data) || user > MAX_STACK_DEPTH || kernel > MAX_STACK_DEPTH)
		return;
	tail = sample_tail(rec, e, size, &info_at);
	if (tail != (size_t)-1 && e->kind == SAMPLE_KIND_EVENT) {
		if (!(e->flags & SAMPLE_EVENT_INFO))
			return;
		tail = event_tail(rec, e, size, info_at, tail, &info);
	}
	if (tail == (size_t)-1)
		return;
	rec->sample_count++;
	if (e->kind == SAMPLE_KIND_OFF_CPU)
		rec->off_cpu_count++;
	if (e->kind == SAMPLE_KIND_EVENT)
		rec->event_count++;
	if (u64_set_add(&rec->sampled_pids, e->pid))
		embedded_note_process((pid_t)e->pid);
	/* the kernel IPs, as the tail holds them after the user ones */
	for (unsigned int i = 0; i < kernel; i++) {
		uint64_t ip;

		memcpy(&ip, rec->tail + (user + i) * sizeof(ip), sizeof(ip));
		u64_set_add(&rec->kernel_ips, ip);
	}
	if (e->user_stack_error) {
		rec->user_stack_errors++;
		count_stack_error(rec, e->user_stack_error, false);
	}
	if (e->kernel_stack_error) {
		rec->kernel_stack_errors++;
		count_stack_error(rec, e->kernel_stack_error, true);
	}
	embedded_note_user_ips(rec, rec->tail, user); /* the tail starts with the user IPs */
	recording_writer_add(&rec->writer, SREC_BLOCK_SAMPLE, e, sizeof(struct srec_sample), rec->tail, tail);
	/* the process at the event, as the BPF program read it, right after its sample */
	if (info.metrics_ok)
		metrics_write_event(rec, e->time_ns, e->pid, e->tid, &info);
}

static int perf_event_open(struct perf_event_attr *attr, int cpu)
{
	return (int)syscall(__NR_perf_event_open, attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* Opens the sampling event on cpu: cycles if the CPU has a PMU, else cpu-clock. -errno when impossible. */
static int open_sampling_event(struct recorder *rec, int cpu)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.freq = 1,
		.sample_freq = rec->frequency,
	};
	int fd;

	if (!rec->event_name || !strcmp(rec->event_name, "cycles")) {
		attr.type = PERF_TYPE_HARDWARE;
		attr.config = PERF_COUNT_HW_CPU_CYCLES;
		fd = perf_event_open(&attr, cpu);
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
	fd = perf_event_open(&attr, cpu);
	if (fd < 0)
		return -errno;
	rec->event_name = "cpu-clock";
	return fd;
}

int sampler_attach(struct recorder *rec)
{
	int cpus = libbpf_num_possible_cpus();
	struct bpf_link *link;
	int attached = 0;

	if (cpus <= 0)
		return error("cannot count the CPUs: %s", strerror(-cpus));
	link = bpf_program__attach(rec->skel->progs.on_fork);
	if (!link)
		return error("cannot follow forks (tp_btf/sched_process_fork): %s", strerror(errno));
	sampler_add_link(rec, link);
	link = bpf_program__attach(rec->skel->progs.on_exec);
	if (!link)
		return error("cannot follow execs (tp_btf/sched_process_exec): %s", strerror(errno));
	sampler_add_link(rec, link);
	link = bpf_program__attach(rec->skel->progs.on_exit);
	if (!link)
		return error("cannot follow exits (tp_btf/sched_process_exit): %s", strerror(errno));
	sampler_add_link(rec, link);
	if (rec->off_cpu) {
		link = bpf_program__attach(rec->skel->progs.on_switch);
		if (!link)
			return error("cannot follow context switches (tp_btf/sched_switch): %s", strerror(errno));
		sampler_add_link(rec, link);
		attached++;
	}
	for (int cpu = 0; rec->on_cpu && cpu < cpus; cpu++) {
		int fd = open_sampling_event(rec, cpu);

		if (fd == -ENODEV) /* offline CPU */
			continue;
		if (fd == -EACCES || fd == -EPERM)
			return error("cannot open a sampling event on CPU %d: %s (kernel.perf_event_paranoid is %ld: record "
				     "as root or with CAP_PERFMON, or lower it with sysctl kernel.perf_event_paranoid=1)",
				     cpu, strerror(-fd), sysctl_value("/proc/sys/kernel/perf_event_paranoid", -1));
		if (fd < 0)
			return error("cannot open a %s sampling event on CPU %d: %s", rec->event_name ? rec->event_name : "cpu-clock", cpu,
				     strerror(-fd));
		link = bpf_program__attach_perf_event(rec->skel->progs.sample, fd);
		if (!link) {
			int err = errno;

			close(fd);
			return error("cannot attach the sampler on CPU %d: %s", cpu, strerror(err));
		}
		sampler_add_link(rec, link);
		attached++;
	}
	if (!attached)
		return error("no online CPU could be sampled");
	/* The offline step reads OFF_CPU samples as struct srec_sample's kind 2. */
	_Static_assert(SAMPLE_KIND_OFF_CPU == SREC_SAMPLE_OFF_CPU, "off-CPU kind");
	rec->samples = ring_buffer__new(bpf_map__fd(rec->skel->maps.samples), handle_sample, rec, NULL);
	if (!rec->samples)
		return error("cannot open the sample ring buffer: %s", strerror(errno));
	return 0;
}

int sampler_poll(struct recorder *rec, int timeout_ms)
{
	int n;

	rec->ring_batch = 0;
	n = ring_buffer__poll(rec->samples, timeout_ms);
	/* The BPF side wakes us only when much is waiting; what came since is read after every poll. */
	if (n >= 0 || n == -EINTR)
		n = ring_buffer__consume(rec->samples);
	if (n < 0 && n != -EINTR && n != RING_BATCH_FULL)
		return error("cannot read samples: %s", strerror(-n));
	return 0;
}

void sampler_stop(struct recorder *rec)
{
	for (size_t i = 0; i < rec->link_count; i++)
		bpf_link__destroy(rec->links[i]);
	free(rec->links);
	rec->links = NULL;
	rec->link_count = 0;
}

/* Most time the last reading of the ring may take: a bound, should a program still be adding records. */
#define DRAIN_MAX_NS 2000000000ull

void sampler_drain(struct recorder *rec)
{
	uint64_t start = monotonic_ns();

	if (!rec->samples)
		return;
	do
		rec->ring_batch = 0;
	while (ring_buffer__consume(rec->samples) == RING_BATCH_FULL && monotonic_ns() - start < DRAIN_MAX_NS);
}

/* The sum over the CPUs of a per-CPU counter of the BPF side (the key-th of its array). */
uint64_t sampler_percpu_sum(struct recorder *rec, const struct bpf_map *map, uint32_t key)
{
	int cpus = libbpf_num_possible_cpus();
	__u64 *values;
	uint64_t sum = 0;

	if (!rec->skel || cpus <= 0)
		return 0;
	values = xcalloc((size_t)cpus, sizeof(*values));
	if (bpf_map__lookup_elem(map, &key, sizeof(key), values, (size_t)cpus * sizeof(*values), 0) == 0)
		for (int i = 0; i < cpus; i++)
			sum += values[i];
	free(values);
	return sum;
}

uint64_t sampler_lost_samples(struct recorder *rec)
{
	return sampler_dropped_samples(rec) + (rec->skel ? sampler_percpu_sum(rec, rec->skel->maps.lost_samples, 1) : 0);
}

uint64_t sampler_dropped_samples(struct recorder *rec)
{
	return rec->skel ? sampler_percpu_sum(rec, rec->skel->maps.lost_samples, 0) : 0;
}

/* STACKREC_CHECK_FP_WALK=1: says how many fp walks were compared with the kernel's, and how many differed. */
void sampler_report_fp_walk_check(struct recorder *rec)
{
	if (!rec->skel || !rec->skel->rodata->check_fp_walk)
		return;
	fprintf(stderr, "stackrec: fp walk check: %llu of %llu walks differ from the kernel's\n",
		(unsigned long long)sampler_percpu_sum(rec, rec->skel->maps.fp_walk_check, 1),
		(unsigned long long)sampler_percpu_sum(rec, rec->skel->maps.fp_walk_check, 0));
}

uint64_t sampler_lost_targets(struct recorder *rec)
{
	return rec->skel ? sampler_percpu_sum(rec, rec->skel->maps.lost_targets, 0) : 0;
}

/*
 * -v: what each BPF program cost in the kernel, in the context of whatever it interrupted (the recorded
 * processes' time, mostly), when the kernel counts it (sysctl kernel.bpf_stats_enabled=1, off by default
 * since the counting has a cost of its own). The sampler runs at every tick of every CPU, for targets or
 * not: its time per ring-buffer record is what a sample costs the target, with the filtering spread over it.
 */
static void report_program_costs(struct recorder *rec)
{
	struct bpf_program *prog;

	if (!verbose || !rec->skel)
		return;
	bpf_object__for_each_program(prog, rec->skel->obj) {
		struct bpf_prog_info info = { 0 };
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(prog);

		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len) < 0 || !info.run_cnt || !info.run_time_ns)
			continue;
		debug("BPF program %s: %llu runs, %.0f ns each, %.0f ns per ring-buffer record", bpf_program__name(prog),
		      (unsigned long long)info.run_cnt, (double)info.run_time_ns / (double)info.run_cnt,
		      rec->ring_records ? (double)info.run_time_ns / (double)rec->ring_records : 0.0);
	}
}

void sampler_close(struct recorder *rec)
{
	if (rec->ring_records)
		debug("sample ring buffer: %" PRIu64 " records, %" PRIu64 " bytes (%" PRIu64 " a record)", rec->ring_records,
		      rec->ring_bytes, rec->ring_bytes / rec->ring_records);
	report_program_costs(rec);
	ring_buffer__free(rec->samples);
	rec->samples = NULL;
	free(rec->tail);
	rec->tail = NULL;
	free(rec->exited);
	rec->exited = NULL;
	rec->exited_count = rec->exited_cap = 0;
	sampler_stop(rec);
	profile_bpf__destroy(rec->skel);
	rec->skel = NULL;
}
