/*
 * side_band.c — mappings and thread names as they happen, from the kernel's own records.
 *
 * A process that lives 30 ms is long gone when its samples are read, so /proc cannot tell where its code
 * was. perf solves this with side-band records, and so do we: one PERF_COUNT_SW_DUMMY event per CPU that
 * samples nothing but asks for mmap2 records (executable mappings only, with the file's build ID read by
 * the kernel at mmap time), comm records (thread names, exec), and fork/exit records, all stamped on
 * CLOCK_MONOTONIC like the BPF samples. libbpf's perf_buffer reads them; each one for a target process
 * becomes a MAPPING or TASK block. See docs/recording.md for why this and not BPF_F_USER_BUILD_ID.
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "../formats/recording.h"
#include "../util.h"
#include "profile.skel.h"
#include "recorder.h"

/*
 * Per-CPU buffer pages for side-band records: SIDE_BAND_BYTES shared out among the CPUs, as a power of two
 * between SIDE_BAND_MIN_PAGES and SIDE_BAND_MAX_PAGES a CPU. Losing an mmap record leaves that process's
 * frames unnamed: bench/stress.sh (hundreds of execs a second, each a dozen mmap records, while 64 threads
 * starve the recorder of CPU) lost 10,000 of them with 64 pages (256 KiB) a CPU on 2 CPUs.
 */
#define SIDE_BAND_BYTES (32u << 20)
#define SIDE_BAND_MIN_PAGES 64
#define SIDE_BAND_MAX_PAGES 1024

static size_t side_band_pages(void)
{
	long page = sysconf(_SC_PAGESIZE);
	int cpus = libbpf_num_possible_cpus();
	size_t pages = SIDE_BAND_MIN_PAGES;

	if (page <= 0 || cpus <= 0)
		return pages;
	while (pages < SIDE_BAND_MAX_PAGES && pages * 2 * (size_t)page * (size_t)cpus <= SIDE_BAND_BYTES)
		pages *= 2;
	return pages;
}

/* Every record ends with this (sample_id_all with PERF_SAMPLE_TID | PERF_SAMPLE_TIME). */
struct sample_id {
	__u32 pid, tid;
	__u64 time;
};

struct mmap2_record {
	struct perf_event_header header;
	__u32 pid, tid;
	__u64 addr, len, pgoff;
	union {
		struct {
			__u32 maj, min;
			__u64 ino, ino_generation;
		};
		struct {
			__u8 build_id_size;
			__u8 reserved1;
			__u16 reserved2;
			__u8 build_id[20];
		};
	};
	__u32 prot, flags;
	char filename[];
};

struct comm_record {
	struct perf_event_header header;
	__u32 pid, tid;
	char comm[];
};

struct task_record { /* PERF_RECORD_FORK and PERF_RECORD_EXIT */
	struct perf_event_header header;
	__u32 pid, ppid, tid, ptid;
	__u64 time;
};

struct lost_record {
	struct perf_event_header header;
	__u64 id, lost;
};

static uint64_t record_time(const struct perf_event_header *h)
{
	struct sample_id id;

	if (h->size < sizeof(*h) + sizeof(id))
		return 0;
	memcpy(&id, (const char *)h + h->size - sizeof(id), sizeof(id));
	return id.time;
}

static void handle_mmap2(struct recorder *rec, const struct perf_event_header *h)
{
	const struct mmap2_record *m = (const void *)h;
	size_t max_name = h->size - sizeof(*m) - sizeof(struct sample_id);
	char path[4096];
	size_t len;

	if (h->size < sizeof(*m) + sizeof(struct sample_id) || !(m->prot & PROT_EXEC))
		return;
	if (!sampler_is_target(rec, (pid_t)m->pid))
		return;
	len = strnlen(m->filename, max_name < sizeof(path) - 1 ? max_name : sizeof(path) - 1);
	memcpy(path, m->filename, len);
	path[len] = '\0';
	/* Read through /proc/PID, as before the main thread may have exited (process_live_task): then its file is
	 * read by path. Not through /proc/TID of the thread that mapped it: that thread may be gone by the time the
	 * record is read, and its id used again by another process. */
	if (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID)
		write_mapping(rec, record_time(h), (pid_t)m->pid, (pid_t)m->pid, m->addr, m->addr + m->len, m->pgoff, m->prot, 0, 0,
			      0, 0, m->build_id, m->build_id_size > SREC_BUILD_ID_MAX ? 0 : m->build_id_size, path);
	else
		write_mapping(rec, record_time(h), (pid_t)m->pid, (pid_t)m->pid, m->addr, m->addr + m->len, m->pgoff, m->prot, 0,
			      m->maj, m->min, m->ino, NULL, 0, path);
}

static void handle_comm(struct recorder *rec, const struct perf_event_header *h)
{
	const struct comm_record *c = (const void *)h;
	char comm[SREC_COMM_LEN] = "";
	size_t max = h->size - sizeof(*c) - sizeof(struct sample_id);

	if (h->size < sizeof(*c) + sizeof(struct sample_id) || !sampler_is_target(rec, (pid_t)c->pid))
		return;
	memcpy(comm, c->comm, max < sizeof(comm) - 1 ? max : sizeof(comm) - 1);
	if (h->misc & PERF_RECORD_MISC_COMM_EXEC)
		rec->last_new_process_ns = monotonic_ns(); /* as a fork: processes are being started */
	write_task(rec, record_time(h), (pid_t)c->pid, (pid_t)c->tid, 0,
		   (h->misc & PERF_RECORD_MISC_COMM_EXEC) ? SREC_TASK_EXEC : SREC_TASK_COMM, comm);
}

static void handle_task(struct recorder *rec, const struct perf_event_header *h)
{
	const struct task_record *t = (const void *)h;

	if (h->size < sizeof(*t) || !sampler_is_target(rec, (pid_t)t->pid))
		return;
	if (h->type == PERF_RECORD_FORK && t->pid != t->ppid)
		rec->last_new_process_ns = monotonic_ns(); /* record.c reads side-band records more often for a while */
	if (h->type == PERF_RECORD_FORK)
		write_task(rec, t->time, (pid_t)t->pid, (pid_t)t->tid, (pid_t)t->ppid, SREC_TASK_FORK, "");
	else
		write_task(rec, t->time, (pid_t)t->pid, (pid_t)t->tid, 0, SREC_TASK_EXIT, "");
	/* The whole process is gone: its JIT perf map is complete now. */
	if (h->type == PERF_RECORD_EXIT && t->pid == t->tid)
		embedded_capture_perf_map(rec, (pid_t)t->pid);
}

static enum bpf_perf_event_ret handle_record(void *ctx, int cpu, struct perf_event_header *h)
{
	struct recorder *rec = ctx;

	(void)cpu;
	switch (h->type) {
	case PERF_RECORD_MMAP2:
		handle_mmap2(rec, h);
		break;
	case PERF_RECORD_COMM:
		handle_comm(rec, h);
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		handle_task(rec, h);
		break;
	case PERF_RECORD_LOST:
		if (h->size >= sizeof(struct lost_record))
			rec->lost_events += ((const struct lost_record *)h)->lost;
		break;
	default:
		break;
	}
	return LIBBPF_PERF_EVENT_CONT;
}

int side_band_open(struct recorder *rec)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_DUMMY,
		.size = sizeof(attr),
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME,
		.mmap = 1,
		.mmap2 = 1,
		.comm = 1,
		.comm_exec = 1,
		.task = 1,
		.sample_id_all = 1,
		.build_id = 1,
		.use_clockid = 1,
		.clockid = CLOCK_MONOTONIC,
		.wakeup_events = 1,
	};

	size_t pages = side_band_pages();

	rec->side_band = perf_buffer__new_raw(bpf_map__fd(rec->skel->maps.side_band), pages, &attr, handle_record,
					      rec, NULL);
	if (!rec->side_band && (errno == EINVAL || errno == EOPNOTSUPP)) {
		/* Kernels before 5.12 know no build_id bit: fall back to dev/inode, IDs read from files. */
		attr.build_id = 0;
		rec->side_band = perf_buffer__new_raw(bpf_map__fd(rec->skel->maps.side_band), pages, &attr,
						      handle_record, rec, NULL);
	}
	if (!rec->side_band)
		return error("cannot open the mmap/comm side-band events: %s", strerror(errno));
	return 0;
}

void side_band_consume(struct recorder *rec)
{
	uint64_t start = monotonic_ns(), took;

	if (rec->side_band)
		perf_buffer__consume(rec->side_band);
	/* The drain thread reads no samples meanwhile: -v says how long it was away (mappings and what they
	 * cause: build IDs, cache copies, perf maps). */
	took = monotonic_ns() - start;
	rec->side_band_ns += took;
	drain_timed(rec, DRAIN_SIDE_BAND, start);
}

void side_band_close(struct recorder *rec)
{
	if (rec->side_band)
		debug("side-band records handled in %.1f ms, at most %.1f ms at a time", (double)rec->side_band_ns / 1e6,
		      (double)rec->drain_max_ns[DRAIN_SIDE_BAND] / 1e6);
	perf_buffer__free(rec->side_band);
	rec->side_band = NULL;
}
