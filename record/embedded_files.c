/*
 * embedded_files.c — FILE blocks: files whose bytes the offline step cannot get any other way.
 *
 *   vDSO       the recorder's own [vdso] image, read from memory; every 64-bit process of this kernel maps
 *              the same one. Its build ID comes from the in-memory ELF image. With --call-graph dwarf it is
 *              written at start. With frame pointers only once a sample has a user IP in a [vdso] mapping
 *              (below): most fp recordings never do, and its ~3 KB compressed were most of a short one.
 *   perf maps  a JIT's /tmp/perf-PID.map ("START SIZE name" lines), read once per process at the latest
 *              point — its EXIT record, or the end of recording for processes still alive — because the JIT
 *              appends to it while it runs. Opened by the drain thread, read by a worker (see below). Read through /proc/PID/root while possible (another mount
 *              namespace's /tmp), else from /tmp. Only regular files, never through a symlink (anyone can
 *              create /tmp/perf-PID.map).
 *
 * A file larger than FILE_CHUNK goes into several blocks with increasing data_offset (recording.h).
 */
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <pthread.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../formats/recording.h"
#include "../util.h"
#include "recorder.h"
#include "work_queue.h"

#define FILE_CHUNK (32u << 20)
/* A perf map stops being read here: a runaway JIT, or a huge file made to look like one, must not fill the disk. */
#define PERF_MAP_MAX (1024u << 20)
/* All perf maps of a recording, at most (the read_perf_map worker's count): with -a or -p, another user can run
 * any number of processes, each with a map of a gigabyte. convert keeps no more than this either. */
#define PERF_MAPS_TOTAL_MAX (1024ull << 20)
static uint64_t perf_maps_embedded; /* PERF_MAPS_TOTAL_MAX at most */
static bool perf_maps_full;

static struct u64_set perf_map_read; /* pids whose perf map was looked for */
static struct u64_set process_users; /* pid << 32 | uid: the real and effective uids each process had */

#define UID_KNOWN 0xffffffffu /* pid << 32 | UID_KNOWN: the process's uids were read (-1 is no uid) */

static int write_file_block(struct recorder *rec, uint32_t kind, pid_t pid, const char *path, uint64_t data_offset,
			    const void *data, size_t size, const uint8_t *build_id, uint8_t build_id_size)
{
	struct srec_file f = {
		.kind = kind,
		.pid = (uint32_t)pid,
		.time_ns = monotonic_ns(),
		.data_offset = data_offset,
		.data_size = size,
		.path_size = (uint32_t)strlen(path) + 1,
		.build_id_size = build_id_size,
	};
	char *tail = xmalloc(f.path_size + size);
	int ret;

	if (build_id_size)
		memcpy(f.build_id, build_id, build_id_size);
	memcpy(tail, path, f.path_size);
	memcpy(tail + f.path_size, data, size);
	ret = recording_writer_add(&rec->writer, SREC_BLOCK_FILE, &f, sizeof(f), tail, f.path_size + size);
	free(tail);
	return ret;
}

/* The [vdso] range of this process, from /proc/self/maps. */
static size_t vdso_size(uintptr_t base)
{
	char *line = NULL;
	size_t cap = 0, size = 0;
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f)
		return 0;
	while (getline(&line, &cap, f) > 0) {
		uint64_t start, end;

		if (strstr(line, "[vdso]") && sscanf(line, "%" SCNx64 "-%" SCNx64, &start, &end) == 2 && start == base) {
			size = (size_t)(end - start);
			break;
		}
	}
	free(line);
	fclose(f);
	return size;
}

/*
 * The vDSO of an fp recording, written at the first need. A sample may be read before the MAPPING of its
 * process's [vdso] (the ring buffer is drained before the side band), so both are remembered: the pages of
 * every [vdso] mapping recorded, and the pages of every user IP sampled while the image is not written; the
 * one of the two that comes second writes it. Pages of any process: a forked child has its parent's [vdso]
 * and no MAPPING of its own. Both sets grow with distinct pages of code, never with samples.
 */
static bool vdso_deferred, vdso_written;
static struct u64_set vdso_pages, ip_pages;

#define VDSO_PAGE_SHIFT 12
#define VDSO_PAGES_MAX 256 /* a [vdso] is two pages; a larger range is taken by its first pages only */

static int write_vdso(struct recorder *rec)
{
	uintptr_t base = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
	uint8_t id[SREC_BUILD_ID_MAX];
	uint8_t id_size = 0;
	size_t size;
	Elf *elf;

	if (!base || !(size = vdso_size(base))) {
		debug("no vDSO in this process");
		return 0;
	}
	elf_version(EV_CURRENT);
	elf = elf_memory((char *)base, size);
	if (elf) {
		const void *bits;
		ssize_t n = dwelf_elf_gnu_build_id(elf, &bits);

		if (n > 0 && n <= SREC_BUILD_ID_MAX) {
			memcpy(id, bits, (size_t)n);
			id_size = (uint8_t)n;
		}
		elf_end(elf);
	}
	return write_file_block(rec, SREC_FILE_VDSO, 0, "[vdso]", 0, (const void *)base, size, id, id_size);
}

int embedded_write_vdso(struct recorder *rec)
{
	if (rec->call_graph == CALL_GRAPH_FP) {
		vdso_deferred = true;
		return 0;
	}
	vdso_written = true;
	return write_vdso(rec);
}

static int write_vdso_now(struct recorder *rec)
{
	vdso_written = true;
	u64_set_release(&ip_pages);
	debug("a sample is in the [vdso]: its image goes into the recording");
	return write_vdso(rec);
}

int embedded_note_vdso_mapping(struct recorder *rec, uint64_t start, uint64_t end)
{
	uint64_t first = start >> VDSO_PAGE_SHIFT, last = (end - 1) >> VDSO_PAGE_SHIFT;

	if (!vdso_deferred || vdso_written || end <= start)
		return 0;
	if (last - first >= VDSO_PAGES_MAX)
		last = first + VDSO_PAGES_MAX - 1;
	for (uint64_t page = first; page <= last; page++) {
		u64_set_add(&vdso_pages, page);
		if (u64_set_has(&ip_pages, page))
			return write_vdso_now(rec);
	}
	return 0;
}

int embedded_note_user_ips(struct recorder *rec, const void *ips, unsigned int count)
{
	if (!vdso_deferred || vdso_written)
		return 0;
	for (unsigned int i = 0; i < count; i++) {
		uint64_t ip;

		memcpy(&ip, (const char *)ips + i * sizeof(ip), sizeof(ip));
		if (u64_set_has(&vdso_pages, ip >> VDSO_PAGE_SHIFT))
			return write_vdso_now(rec);
		u64_set_add(&ip_pages, ip >> VDSO_PAGE_SHIFT);
	}
	return 0;
}

void embedded_release_vdso(void)
{
	u64_set_release(&vdso_pages);
	u64_set_release(&ip_pages);
	vdso_deferred = vdso_written = false;
}

/*
 * Adds the uids process pid has now to process_users. /proc/PID belongs to the process's effective uid while
 * it is dumpable: one stat, where /proc/PID/status costs the kernel the whole text (65 us against 8 on a
 * busy machine, for every process a fork storm starts). Where it belongs to root — root's processes, and
 * those that are not dumpable (set-user-ID programs, prctl), whose owner says nothing — status gives the
 * real and effective uids. (A dumpable process whose real uid differs from its effective one is taken at
 * its effective uid only: the uid its files are created with.)
 */
static void read_process_users(pid_t pid)
{
	char path[64], status[1024]; /* the Uid line is the ninth, a few hundred bytes in */
	const char *uid;
	unsigned int real, effective;
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d", pid);
	if (stat(path, &st) < 0)
		return;
	if (st.st_uid != 0) {
		u64_set_add(&process_users, (uint64_t)pid << 32 | st.st_uid);
		u64_set_add(&process_users, (uint64_t)pid << 32 | UID_KNOWN);
		return;
	}
	/* read(2), not stdio: 20 us where fopen, getline and sscanf took 40 */
	if (proc_read((uint32_t)pid, "status", status, sizeof(status)) <= 0)
		return;
	uid = strstr(status, "\nUid:");
	if (uid && sscanf(uid + 5, "%u %u", &real, &effective) == 2) {
		u64_set_add(&process_users, (uint64_t)pid << 32 | real);
		u64_set_add(&process_users, (uint64_t)pid << 32 | effective);
		u64_set_add(&process_users, (uint64_t)pid << 32 | UID_KNOWN);
	}
}

/* Once per process, seen mapped or sampled (whichever comes first): a map is checked against these uids
 * and those it has at its exit, if it is still there. */
void embedded_note_process(pid_t pid)
{
	if (!u64_set_has(&process_users, (uint64_t)pid << 32 | UID_KNOWN))
		read_process_users(pid);
}

/*
 * Whether the file open as fd may go into the recording. The recorder is root and the recording is read by
 * whoever ran it, so a file the target's user could not read must never be embedded: in a mount namespace of
 * its own a user can bind-mount /etc/shadow onto /tmp/perf-PID.map, and /proc/PID/root shows it to us. Like
 * perf, trust a map only when it is a regular file owned by the process's (real or effective) uid and
 * readable by that owner. The uids are those the process had when it was first seen or now: a map is read
 * at the process's exit, mostly when /proc/PID is gone. Returns NULL, or why not.
 */
static const char *perf_map_refused(pid_t pid, const struct stat *st)
{
	read_process_users(pid);
	if (!S_ISREG(st->st_mode))
		return "not a regular file";
	if (!u64_set_has(&process_users, (uint64_t)pid << 32 | UID_KNOWN))
		return "the process's user is unknown (it was gone when first seen)";
	if (!u64_set_has(&process_users, (uint64_t)pid << 32 | st->st_uid))
		return "owned by another user than the process";
	if (!(st->st_mode & S_IRUSR))
		return "not readable by its owner";
	return NULL;
}

static int open_perf_map(pid_t pid, char *path, size_t path_size)
{
	char via_root[128];
	const char *why;
	struct stat st;
	pid_t view = process_live_task(pid); /* its main thread's /proc/PID/root is gone once it has exited */
	int fd;

	snprintf(path, path_size, "/tmp/perf-%d.map", pid);
	snprintf(via_root, sizeof(via_root), "/proc/%d/root/tmp/perf-%d.map", view ? view : pid, pid);
	/* O_NOFOLLOW: anyone can create /tmp/perf-PID.map, as a symlink too; O_NONBLOCK: or as a FIFO. */
	fd = open(via_root, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 && errno == ELOOP)
		why = "a symbolic link";
	else if (fd < 0 && (fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)) < 0)
		why = errno == ELOOP ? "a symbolic link" : NULL;
	else if (fstat(fd, &st) < 0)
		why = strerror(errno);
	else
		why = perf_map_refused(pid, &st);
	if (why) {
		warning("not embedding the perf map '%s' of pid %d: %s", path, pid, why);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/*
 * Reading a map is the worker's (work_queue.c): a node --perf-basic-prof map is 100 KB and more, a JVM's can be
 * tens of MB, and the drain thread must not stop reading samples meanwhile. The drain thread opens the file
 * (every check above is made there, on what it opened) and queues the descriptor; the worker reads it in
 * chunks of at most FILE_CHUNK, each with the path in front of it as a FILE block's tail wants it, and puts
 * them on a list that the drain thread writes out every time round its loop (embedded_write_perf_maps). Read
 * but unwritten chunks are bounded by READ_AHEAD_MAX: past that the worker waits for the drain thread.
 */
struct perf_map_job {
	struct work_item item; /* first */
	pid_t pid;
	int fd;
	char path[64];
};

struct perf_map_chunk {
	struct perf_map_chunk *next;
	pid_t pid;
	uint64_t offset, time_ns;
	uint32_t path_size;
	size_t size;  /* of content, after the path */
	char *tail;   /* the path, then the content */
};

#define READ_AHEAD_MAX (64u << 20)

static pthread_mutex_t chunks_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t chunks_changed = PTHREAD_COND_INITIALIZER; /* a chunk came, room was made, a map is done */
static struct perf_map_chunk *chunks, **chunks_tail = &chunks;
static size_t chunk_bytes; /* read, not yet taken by the drain thread */
static size_t maps_pending; /* queued or being read */
static bool discarding;	    /* the recording is abandoned: chunks are dropped, never waited for */

/* Worker: hands a chunk to the drain thread, waiting while too much waits unwritten. */
static void hand_over(struct perf_map_chunk *c)
{
	pthread_mutex_lock(&chunks_lock);
	while (!discarding && chunk_bytes && chunk_bytes + c->size > READ_AHEAD_MAX)
		pthread_cond_wait(&chunks_changed, &chunks_lock);
	if (discarding) {
		free(c->tail);
		free(c);
	} else {
		c->next = NULL;
		*chunks_tail = c;
		chunks_tail = &c->next;
		chunk_bytes += c->size;
		pthread_cond_broadcast(&chunks_changed);
	}
	pthread_mutex_unlock(&chunks_lock);
}

/* Worker: reads the map open as job->fd, a chunk at a time; bounded by FILE_CHUNK and PERF_MAP_MAX. */
static void read_perf_map(struct work_item *item, void *ctx)
{
	struct perf_map_job *job = (struct perf_map_job *)item;
	uint32_t path_size = (uint32_t)strlen(job->path) + 1;
	uint64_t offset = 0;

	(void)ctx;
	for (;;) {
		struct perf_map_chunk *c = xcalloc(1, sizeof(*c));
		size_t cap = 65536, have = 0;
		ssize_t n = 0;

		c->tail = xmalloc(path_size + cap);
		memcpy(c->tail, job->path, path_size);
		while (have < FILE_CHUNK) {
			if (have == cap) {
				cap = cap * 2 < FILE_CHUNK ? cap * 2 : FILE_CHUNK;
				c->tail = xrealloc(c->tail, path_size + cap);
			}
			n = read(job->fd, c->tail + path_size + have, cap - have);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			have += (size_t)n;
		}
		if (have > PERF_MAPS_TOTAL_MAX - perf_maps_embedded) {
			if (!perf_maps_full) /* once: the maps after it are left out too */
				warning("perf maps of more than %llu MB in all: '%s' of pid %d and the maps after it "
					"embedded only up to there",
					PERF_MAPS_TOTAL_MAX >> 20, job->path, job->pid);
			perf_maps_full = true;
			have = 0;
		}
		if (!have) {
			free(c->tail);
			free(c);
			break;
		}
		perf_maps_embedded += have;
		c->pid = job->pid;
		c->offset = offset;
		c->time_ns = monotonic_ns();
		c->path_size = path_size;
		c->size = have;
		hand_over(c);
		offset += have;
		if (have < FILE_CHUNK)
			break;
		if (offset >= PERF_MAP_MAX) {
			warning("perf map '%s' of pid %d is larger than %u MB: embedded only its start", job->path, job->pid,
				PERF_MAP_MAX >> 20);
			break;
		}
	}
	if (offset)
		debug("embedded '%s' (%" PRIu64 " bytes)", job->path, offset);
	close(job->fd);
	free(job);
	pthread_mutex_lock(&chunks_lock);
	maps_pending--;
	pthread_cond_broadcast(&chunks_changed);
	pthread_mutex_unlock(&chunks_lock);
}

/* Maps queued or being read, at most: each holds a descriptor. */
#define MAPS_MAX 64

/* STACKREC_TEST_PERF_MAP_DELAY_MS, for tests: the worker waits this long before each map. One more job than
 * MAPS_MAX: a job counts until its read_perf_map returns, just after it leaves maps_pending. */
static struct work_queue perf_map_queue =
	WORK_QUEUE_INIT(read_perf_map, MAPS_MAX + 1, "STACKREC_TEST_PERF_MAP_DELAY_MS");

static int write_chunks(struct recorder *rec, bool wait);

int embedded_capture_perf_map(struct recorder *rec, pid_t pid)
{
	struct perf_map_job *job;
	int fd;

	if (pid <= 0 || !u64_set_add(&perf_map_read, (uint64_t)pid))
		return 0;
	job = xcalloc(1, sizeof(*job));
	/* Opened now, at the process's exit: the worker reads what this process wrote, by the descriptor. */
	fd = open_perf_map(pid, job->path, sizeof(job->path));
	if (fd < 0) {
		free(job);
		return 0;
	}
	job->pid = pid;
	job->fd = fd;
	/* Room for it: the worker may itself wait for chunks to be taken, so they are written meanwhile. */
	pthread_mutex_lock(&chunks_lock);
	while (maps_pending >= MAPS_MAX) {
		if (chunks) {
			pthread_mutex_unlock(&chunks_lock);
			write_chunks(rec, false);
			pthread_mutex_lock(&chunks_lock);
		} else {
			pthread_cond_wait(&chunks_changed, &chunks_lock);
		}
	}
	maps_pending++;
	pthread_mutex_unlock(&chunks_lock);
	work_queue_push(&perf_map_queue, &job->item);
	return 0;
}

/* Writes the chunks read so far as FILE blocks; wait: until every map queued is read and written. */
static int write_chunks(struct recorder *rec, bool wait)
{
	int ret = 0;

	for (;;) {
		struct perf_map_chunk *c;

		pthread_mutex_lock(&chunks_lock);
		while (wait && !chunks && maps_pending)
			pthread_cond_wait(&chunks_changed, &chunks_lock);
		c = chunks;
		chunks = NULL;
		chunks_tail = &chunks;
		chunk_bytes = 0;
		pthread_cond_broadcast(&chunks_changed);
		pthread_mutex_unlock(&chunks_lock);
		if (!c)
			break;
		while (c) {
			struct perf_map_chunk *next = c->next;
			struct srec_file f = {
				.kind = SREC_FILE_PERF_MAP,
				.pid = (uint32_t)c->pid,
				.time_ns = c->time_ns,
				.data_offset = c->offset,
				.data_size = c->size,
				.path_size = c->path_size,
			};

			if (recording_writer_add(&rec->writer, SREC_BLOCK_FILE, &f, sizeof(f), c->tail, c->path_size + c->size) < 0)
				ret = -1;
			free(c->tail);
			free(c);
			c = next;
		}
		if (!wait)
			break;
	}
	return ret;
}

int embedded_write_perf_maps(struct recorder *rec)
{
	return write_chunks(rec, false);
}

static void capture_one(void *ctx, uint64_t pid)
{
	embedded_capture_perf_map(ctx, (pid_t)pid);
}

int embedded_capture_remaining_perf_maps(struct recorder *rec)
{
	u64_set_for_each(&rec->sampled_pids, capture_one, rec);
	u64_set_for_each(&rec->mapped_pids, capture_one, rec);
	write_chunks(rec, true);
	work_queue_finish(&perf_map_queue);
	return rec->writer.failed ? -1 : 0;
}

void embedded_release(void)
{
	/* A run that failed: whatever the worker still reads is dropped. */
	pthread_mutex_lock(&chunks_lock);
	discarding = true;
	pthread_cond_broadcast(&chunks_changed);
	pthread_mutex_unlock(&chunks_lock);
	work_queue_finish(&perf_map_queue);
	while (chunks) {
		struct perf_map_chunk *next = chunks->next;

		free(chunks->tail);
		free(chunks);
		chunks = next;
	}
	chunks_tail = &chunks;
	chunk_bytes = 0;
	discarding = false;
	u64_set_release(&perf_map_read);
	u64_set_release(&process_users);
}
