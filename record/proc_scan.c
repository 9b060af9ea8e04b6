/*
 * proc_scan.c — processes that were running before recording started (-p, -a): their threads from
 * /proc/PID/task and their executable mappings from /proc/PID/maps. The kernel's side-band records only
 * tell what happens from now on. Also the writers of TASK and MAPPING blocks, shared with side_band.c.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "../formats/recording.h"
#include "../util.h"
#include "recorder.h"

int write_task(struct recorder *rec, uint64_t time_ns, pid_t pid, pid_t tid, pid_t parent, uint32_t event,
	       const char *comm)
{
	struct srec_task t = {
		.time_ns = time_ns,
		.pid = (uint32_t)pid,
		.tid = (uint32_t)tid,
		.parent_pid = (uint32_t)parent,
		.event = event,
	};

	memcpy(t.comm, comm, strnlen(comm, sizeof(t.comm) - 1));
	return recording_writer_add(&rec->writer, SREC_BLOCK_TASK, &t, sizeof(t), NULL, 0);
}

/* Reads the build ID of a mapped file: through map_files (deleted files, other mount namespaces) while the
 * process lives, else through its root, else by path. */
static void read_mapping_build_id(pid_t pid, uint64_t start, uint64_t end, const char *path, struct srec_mapping *m)
{
	char proc_path[4200];

	if (path[0] != '/')
		return;
	snprintf(proc_path, sizeof(proc_path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, pid, start, end);
	if (build_id_read(proc_path, m->build_id, &m->build_id_size) == 0)
		goto found;
	snprintf(proc_path, sizeof(proc_path), "/proc/%d/root%s", pid, path);
	if (build_id_read(proc_path, m->build_id, &m->build_id_size) == 0)
		goto found;
	if (build_id_read(path, m->build_id, &m->build_id_size) == 0)
		goto found;
	return;
found:
	m->flags |= SREC_MAPPING_BUILD_ID_FROM_FILE;
}

/* mmap2 records that carry a build ID carry no device and inode: take them from the file. */
static void fill_file_identity(pid_t pid, uint64_t start, uint64_t end, const char *path, struct srec_mapping *m)
{
	char proc_path[128];
	struct stat st;

	if (path[0] != '/')
		return;
	snprintf(proc_path, sizeof(proc_path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, pid, start, end);
	if (stat(proc_path, &st) < 0 && stat(path, &st) < 0)
		return;
	m->inode = st.st_ino;
	m->dev_major = major(st.st_dev);
	m->dev_minor = minor(st.st_dev);
}

int write_mapping(struct recorder *rec, uint64_t time_ns, pid_t pid, pid_t view, uint64_t start, uint64_t end,
		  uint64_t offset, uint32_t prot, uint32_t flags, uint32_t major, uint32_t minor, uint64_t inode,
		  const uint8_t *build_id, uint8_t build_id_size, const char *path)
{
	struct srec_mapping m = {
		.time_ns = time_ns,
		.start = start,
		.end = end,
		.file_offset = offset,
		.inode = inode,
		.pid = (uint32_t)pid,
		.flags = flags,
		.dev_major = major,
		.dev_minor = minor,
		.prot = prot,
	};

	if (build_id && build_id_size) {
		m.build_id_size = build_id_size;
		memcpy(m.build_id, build_id, build_id_size);
	} else {
		read_mapping_build_id(view, start, end, path, &m);
	}
	if (!inode)
		fill_file_identity(view, start, end, path, &m);
	if (u64_set_add(&rec->mapped_pids, (uint64_t)pid))
		embedded_note_process(pid);
	if (m.build_id_size && strncmp(path, "/memfd:", 7) != 0)
		build_id_cache_add(rec, view, start, end, path, m.build_id, m.build_id_size);
	m.path_size = (uint32_t)strlen(path) + 1;
	if (!strcmp(path, "[vdso]") && embedded_note_vdso_mapping(rec, start, end) < 0)
		return -1;
	return recording_writer_add(&rec->writer, SREC_BLOCK_MAPPING, &m, sizeof(m), path, m.path_size);
}

static void read_comm(const char *file, char comm[SREC_COMM_LEN])
{
	FILE *f = fopen(file, "re");

	comm[0] = '\0';
	if (!f)
		return;
	if (fgets(comm, SREC_COMM_LEN, f))
		comm[strcspn(comm, "\n")] = '\0';
	fclose(f);
}

char proc_task_state(pid_t id)
{
	char buf[512], *paren;

	if (proc_read((uint32_t)id, "stat", buf, sizeof(buf)) < 0)
		return 0; /* errno says why: ENOENT, or ESRCH when it was reaped since it was opened */
	paren = strrchr(buf, ')'); /* the state follows the comm, which may itself contain ')' */
	return paren && paren[1] == ' ' && paren[2] ? paren[2] : '?';
}

pid_t process_live_task(pid_t pid)
{
	char dir_path[64];
	struct dirent *d;
	pid_t live = 0;
	DIR *dir;
	char state = proc_task_state(pid);

	if (state && state != 'Z' && state != 'X')
		return pid;
	if (!state) /* gone, or unreadable for another reason (EMFILE): alive, as kill() found it */
		return errno == ENOENT || errno == ESRCH ? 0 : pid;
	snprintf(dir_path, sizeof(dir_path), "/proc/%d/task", pid);
	if (!(dir = opendir(dir_path)))
		return 0;
	while (!live && (d = readdir(dir))) {
		pid_t tid = (pid_t)atoi(d->d_name);

		state = tid > 0 && tid != pid ? proc_task_state(tid) : 0;
		if (state && state != 'Z' && state != 'X')
			live = tid;
	}
	closedir(dir);
	return live;
}

static void scan_threads(struct recorder *rec, pid_t pid)
{
	char dir_path[64], file[128], comm[SREC_COMM_LEN];
	struct dirent *d;
	DIR *dir;

	snprintf(dir_path, sizeof(dir_path), "/proc/%d/task", pid);
	dir = opendir(dir_path);
	if (!dir)
		return;
	while ((d = readdir(dir))) {
		pid_t tid = (pid_t)atoi(d->d_name);

		if (tid <= 0)
			continue;
		snprintf(file, sizeof(file), "%s/%d/comm", dir_path, tid);
		read_comm(file, comm);
		write_task(rec, rec->start_ns, pid, tid, 0, SREC_TASK_EXISTING, comm);
	}
	closedir(dir);
}

static void scan_maps(struct recorder *rec, pid_t pid)
{
	char file[64], *line = NULL;
	size_t cap = 0;
	pid_t view = process_live_task(pid);
	FILE *f;

	if (!view)
		return;
	snprintf(file, sizeof(file), "/proc/%d/maps", view);
	f = fopen(file, "re");
	if (!f)
		return;
	while (getline(&line, &cap, f) > 0) {
		uint64_t start, end, offset, inode;
		unsigned int major, minor;
		char perms[8];
		int path_at = 0;
		uint32_t prot = 0;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %x:%x %" SCNu64 " %n", &start, &end, perms,
			   &offset, &major, &minor, &inode, &path_at) < 7 || perms[2] != 'x')
			continue;
		line[strcspn(line, "\n")] = '\0';
		prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) | PROT_EXEC;
		write_mapping(rec, rec->start_ns, pid, view, start, end, offset, prot, SREC_MAPPING_FROM_PROC, major,
			      minor, inode, NULL, 0, path_at ? line + path_at : "");
	}
	free(line);
	fclose(f);
}

int proc_scan_process(struct recorder *rec, pid_t pid)
{
	scan_threads(rec, pid);
	scan_maps(rec, pid);
	return 0;
}

int proc_scan_all(struct recorder *rec)
{
	DIR *dir = opendir("/proc");
	struct dirent *d;

	if (!dir)
		return error("cannot read '/proc': %m");
	while ((d = readdir(dir))) {
		pid_t pid = (pid_t)atoi(d->d_name);

		if (pid > 0) /* the recorder too: -a samples it, and its frames should be named like any other */
			proc_scan_process(rec, pid);
	}
	closedir(dir);
	return 0;
}
