/*
 * build_id_cache.c — keeps a copy of every executable file the recording maps, named by its build ID, in a
 * cache directory laid out like a debug directory (CACHE/.build-id/xx/rest; see cache_dir.h), so that
 * `convert` finds the exact bytes later: after a package upgrade, after the binary was deleted, on another
 * machine the cache was copied to. Like perf's ~/.debug.
 *
 * A file is cached eagerly, when its mapping is first seen, because short-lived processes and deleted
 * binaries are only reachable while they run: through /proc/PID/map_files (deleted files, other mount
 * namespaces), else /proc/PID/root/PATH, else PATH. A copy is kept only when its build ID equals the recorded
 * one, and it is a copy (a reflink where the filesystem can), never a hard link, which would change with its
 * original.
 *
 * The thread that drains the buffers only opens the file, the first of those three that opens: the open
 * descriptor keeps the bytes that were mapped, whatever becomes of the process or the path. Checking build
 * IDs, weighing a cached entry against the new file and copying megabytes are left to a worker thread, so
 * that the drain thread is back at the buffers at once (work_queue.c). The queue between them holds at most 256
 * files (open descriptors): past that the drain thread waits for the worker rather than drop a file. The
 * recording's end waits for the queue to empty (build_id_cache_wait) before --archive or the trim read
 * the cache. Each build ID is handled once per run (its note read again when it is already cached). After
 * recording the cache is trimmed to --cache-size, least recently used first (the newer of atime and mtime; a
 * hit refreshes atime). An entry is replaced by a richer file of the same build ID (a stripped copy by the
 * unstripped binary: more symbols, or DWARF), never by a poorer one.
 *
 * A build ID is only a file's word: any user can build a file with libc's, and run a process that maps it
 * before root records. So where a file came from counts too: one of root, of us or of the user the cache is
 * for is trusted; another user's file fills a missing entry only, made 0400 to say so (the mode is the only
 * mark an entry carries: readers do not care), never replaces an entry, and its entry gives way to the first
 * trusted file of that build ID, richer or not.
 *
 * The recorder runs as root, and the cache may be a user's (sudo -E keeps $HOME): whoever owns a directory
 * can put symlinks in it, so below the cache directory nothing is followed. Every file and directory is
 * reached relative to its parent's descriptor with O_NOFOLLOW / AT_SYMLINK_NOFOLLOW, and a cache directory
 * owned by anyone but us or the user it is for (SUDO_UID under sudo) is not used at all. Entries are 0600 in
 * 0700 directories (a copy of a 0700 binary must not become readable by all), owned by the owner of the cache
 * directory; one that does not exist yet is made for the invoking user, not left to root in their home.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../cache_dir.h"
#include "../formats/recording.h"
#include "../util.h"
#include "recorder.h"
#include "work_queue.h"

static struct u64_set seen_ids; /* a hash of each build ID handled in this run (drain thread) */
static atomic_bool cache_broken; /* the directory could not be used: warned once, nothing more is tried */
static unsigned int cached_files;
/* Bytes copied into the cache by this recording (the worker's): they stop at --cache-size (copy_budget_allows). */
static uint64_t copied_bytes;
static int cache_fd = -1; /* the cache directory, opened and checked once */
static int ids_fd = -1;	  /* its .build-id directory */
static bool chown_entries; /* we are root in a cache of another user: new entries are theirs */
static uid_t entry_uid;
static gid_t entry_gid;

static uint64_t hash_id(const uint8_t *id, size_t n)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ id[i]) * 1099511628211ull;
	return h;
}

static void cache_unusable(struct recorder *rec, const char *why)
{
	warning("not using the build-ID cache '%s': %s", rec->cache_dir, why);
	cache_broken = true;
}

/* Opens and checks the cache directory and its .build-id once; create: make them when missing. */
static int cache_open(struct recorder *rec, bool create)
{
	struct stat st;
	uid_t uid;
	gid_t gid;
	int fd;

	if (ids_fd >= 0)
		return 0;
	if (cache_broken)
		return -1;
	cache_dir_invoking_user(&uid, &gid);
	if (create && cache_dir_mkdir_p(rec->cache_dir, uid, gid) < 0) {
		cache_unusable(rec, strerror(errno));
		return -1;
	}
	/* The cache directory itself may be a symlink (~/.cache elsewhere): its owner is what counts. */
	if (cache_fd < 0) {
		cache_fd = open(rec->cache_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (cache_fd < 0) {
			if (create)
				cache_unusable(rec, strerror(errno));
			return -1;
		}
		if (fstat(cache_fd, &st) < 0 || (st.st_uid != uid && st.st_uid != geteuid())) {
			char why[96];

			snprintf(why, sizeof(why), "owned by uid %u, not by uid %u it is for", (unsigned int)st.st_uid,
				 (unsigned int)uid);
			cache_unusable(rec, why);
			return -1;
		}
		entry_uid = st.st_uid;
		entry_gid = st.st_gid;
		chown_entries = geteuid() == 0 && st.st_uid != 0;
	}
	if (create && mkdirat(cache_fd, ".build-id", 0700) == 0 && chown_entries)
		cache_dir_own_new_dir(cache_fd, ".build-id", entry_uid, entry_gid);
	fd = openat(cache_fd, ".build-id", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno != ENOENT || create)
			cache_unusable(rec, errno == ELOOP || errno == ENOTDIR ? ".build-id is not a directory (a symlink?)"
									: strerror(errno));
		return -1;
	}
	ids_fd = fd;
	return 0;
}

/* Opens .build-id/NAME, never through a symlink; create: make it (0700, the entries' owner's) when missing. */
static int open_subdir(const char *name, bool create)
{
	if (create && mkdirat(ids_fd, name, 0700) == 0 && chown_entries)
		cache_dir_own_new_dir(ids_fd, name, entry_uid, entry_gid);
	return openat(ids_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* Whether the file open as fd has this build ID (read through /proc/self/fd, a description of its own, so
 * that fd's offset does not move; not build_id_read's cache, which is the drain thread's). */
static bool fd_id_matches(int fd, const uint8_t *id, uint8_t n)
{
	uint8_t got[SREC_BUILD_ID_MAX];
	uint8_t got_size = 0;
	char path[48];
	int own;
	bool same;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	own = open(path, O_RDONLY | O_CLOEXEC);
	if (own < 0)
		return false;
	same = build_id_read_fd(own, got, &got_size) == 0 && got_size == n && memcmp(got, id, n) == 0;
	close(own);
	return same;
}

/* path opened for reading if it is a regular file (O_NONBLOCK: a FIFO put there must not hang us), or -1. */
static int open_regular(const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* How much a file of a build ID has to name frames with: DWARF counts above any number of symbols, then
 * the entries of .symtab (a stripped file has none; .dynsym is the same in every copy). */
static uint64_t richness_fd(int fd)
{
	uint64_t score = 0;
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	Elf *elf;

	elf_version(EV_CURRENT);
	elf = elf_begin_bounded(fd); /* read, not mapped: see build_id_read_fd */
	if (!elf)
		return 0;
	if (elf_getshdrstrndx(elf, &shstrndx) == 0) {
		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr shdr;
			const char *name;

			if (!gelf_getshdr(scn, &shdr) || !(name = elf_strptr(elf, shstrndx, shdr.sh_name)))
				continue;
			if (shdr.sh_type == SHT_SYMTAB && shdr.sh_entsize)
				score += shdr.sh_size / shdr.sh_entsize;
			else if (!strcmp(name, ".debug_info") || !strcmp(name, ".zdebug_info"))
				score += 1ull << 40;
		}
	}
	elf_end(elf);
	return score;
}

/* Refreshes atime for the LRU trim; mtime stays the time the entry was made. */
static void mark_used(int fd)
{
	struct timespec times[2] = { { .tv_nsec = UTIME_NOW }, { .tv_nsec = UTIME_OMIT } };

	futimens(fd, times);
}

/* Copies the file open as in into the new file open as out: a reflink where the filesystem shares blocks
 * (btrfs, XFS), else bytes (pread: in's offset is not ours to move). Never a hard link: a binary overwritten
 * in place (`cp new old` keeps the inode) would change its cache entry too, and the bytes of the recorded
 * build would be lost. */
static int copy_file(int in, int out, uint64_t size, uint64_t *written)
{
	char buf[65536];
	off_t at = 0;
	ssize_t n;

	if (ioctl(out, FICLONE, in) == 0)
		return 0;
	/* size bytes at most, those fstat gave the budget: a file grown meanwhile is not followed to its new end */
	while ((uint64_t)at < size &&
	       (n = pread(in, buf, size - (uint64_t)at < sizeof(buf) ? size - (uint64_t)at : sizeof(buf), at)) > 0) {
		for (ssize_t done = 0; done < n;) {
			ssize_t w = write(out, buf + done, (size_t)(n - done));

			if (w < 0)
				return -1;
			done += w;
			*written += (uint64_t)w;
		}
		at += n;
	}
	if ((uint64_t)at < size && n == 0)
		errno = ENODATA; /* cut short meanwhile: not a write error of the cache */
	return (uint64_t)at < size ? -1 : 0;
}

/* The three places the mapped bytes may be reached, in order: map_files while the process lives (deleted
 * files, other mount namespaces), else through its root, else the path. */
static void source_paths(pid_t pid, uint64_t start, uint64_t end, const char *path, char *paths[3])
{
	paths[0] = xasprintf("/proc/%d/map_files/%" PRIx64 "-%" PRIx64, pid, start, end);
	paths[1] = xasprintf("/proc/%d/root%s", pid, path);
	paths[2] = xstrdup(path);
}

/* The bytes that were mapped, open: pinned (opened by the drain thread, or -1) if it still has the recorded
 * build ID, else the first of the three places that has it now; -1 when none does. Takes pinned. */
static int open_source(int pinned, char *const paths[3], const uint8_t *id, uint8_t n)
{
	if (pinned >= 0 && fd_id_matches(pinned, id, n))
		return pinned;
	if (pinned >= 0)
		close(pinned);
	for (int i = 0; i < 3; i++) {
		int fd = open_regular(paths[i]);

		if (fd >= 0 && fd_id_matches(fd, id, n))
			return fd;
		if (fd >= 0)
			close(fd);
	}
	return -1;
}

static bool write_error(int error)
{
	return error == ENOSPC || error == EACCES || error == EROFS || error == EDQUOT;
}

/* One file for the worker: where it was mapped, and the descriptor the drain thread opened (-1: none). */
struct cache_job {
	struct work_item item; /* first */
	pid_t pid;
	uint64_t start, end;
	char *path;
	int fd;
	uint8_t n;
	uint8_t id[SREC_BUILD_ID_MAX];
};

static struct recorder *worker_rec;

/*
 * Whether the file open as source may be copied: the copies of one recording add up to --cache-size at most
 * (its fstat is left in *st; copy_file counts what it writes, and copies no further than that size, so a file
 * growing meanwhile is not followed, and a copy thrown away still counts). The size is the file's own word,
 * and the file may be another user's: a sparse file of a hundred gigabytes mapped by a process that
 * `record -a` sees would have the recorder write a hundred gigabytes of zeros into the cache, filling the disk
 * the recording is on, before the trim at the end. A file the cache could not keep anyway is not worth the
 * copy.
 */
static bool copy_budget_allows(struct recorder *rec, int source, const char *path, struct stat *st)
{
	uint64_t budget = rec->cache_size_mb << 20; /* at most 2^63: record.c bounds --cache-size */

	if (fstat(source, st) < 0 || st->st_size < 0)
		return false;
	if ((uint64_t)st->st_size <= budget && copied_bytes <= budget - (uint64_t)st->st_size)
		return true;
	debug("'%s' (%" PRIu64 " bytes) not cached: this recording's copies would exceed --cache-size (%" PRIu64
	      " MB)", path, (uint64_t)st->st_size, rec->cache_size_mb);
	return false;
}

#define ENTRY_MODE 0600	     /* an entry copied from a trusted file */
#define ENTRY_MODE_UNTRUSTED 0400 /* one copied from another user's file */

/* Whether the file of st may be trusted for its build ID: root's, ours, or the cache owner's. */
static bool source_trusted(const struct stat *st)
{
	return st->st_uid == 0 || st->st_uid == geteuid() || st->st_uid == entry_uid;
}

/* The worker's part: put job's file in the cache unless an entry as rich (and as trusted) is there already. */
static void cache_file(struct recorder *rec, struct cache_job *job)
{
	char hex[2 * SREC_BUILD_ID_MAX + 1], sub[3], *paths[3], *tmp = NULL;
	const char *rest = hex + 2, *path = job->path;
	const uint8_t *id = job->id;
	uint8_t n = job->n;
	struct stat st, source_st;
	int sub_fd = -1, out = -1, source;
	bool over_budget;

	if (cache_broken || cache_open(rec, true) < 0) {
		if (job->fd >= 0)
			close(job->fd);
		return;
	}
	hex_encode(hex, id, n);
	memcpy(sub, hex, 2);
	sub[2] = '\0';
	source_paths(job->pid, job->start, job->end, path, paths);
	source = open_source(job->fd, paths, id, n);
	/* Before weighing an entry: a file over the budget replaces none, and the entry there stays, used. */
	over_budget = source >= 0 && !copy_budget_allows(rec, source, path, &source_st);
	if (over_budget) {
		close(source);
		source = -1;
	}

	sub_fd = open_subdir(sub, true);
	if (sub_fd < 0) {
		if (write_error(errno))
			cache_unusable(rec, strerror(errno));
		else
			debug("cache directory .build-id/%s: %s", sub, strerror(errno));
		goto out;
	}
	if (fstatat(sub_fd, rest, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		int fd = S_ISREG(st.st_mode) ? openat(sub_fd, rest, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) : -1;
		bool keep = false;

		if (S_ISDIR(st.st_mode)) {
			debug("cache entry .build-id/%s/%s is a directory: left alone", sub, rest);
			goto out;
		}
		/* An entry that lost its build ID (a hard link of an older stackrec whose original was overwritten in
		 * place, a damaged copy, a symlink) would hide the recorded build: replace it. A stripped copy is
		 * replaced by the unstripped file, which names more frames. */
		if (fd < 0 || !fd_id_matches(fd, id, n))
			debug("cache entry .build-id/%s/%s no longer has its build ID: replacing it", sub, rest);
		else if (source < 0 || !source_trusted(&source_st))
			keep = true;
		else if ((st.st_mode & 07777) == ENTRY_MODE_UNTRUSTED)
			debug("cache entry .build-id/%s/%s came from another user's file: replacing it with '%s'", sub,
			      rest, path);
		else if (richness_fd(source) <= richness_fd(fd))
			keep = true;
		else
			debug("cache entry .build-id/%s/%s: '%s' has more symbols, replacing it", sub, rest, path);
		if (keep)
			mark_used(fd);
		if (fd >= 0)
			close(fd);
		if (keep)
			goto out;
	}
	if (source < 0) {
		if (!over_budget)
			debug("no file with build ID of '%s' (pid %d) to cache", path, job->pid);
		goto out;
	}
	tmp = xasprintf("%s.tmp-%d", rest, (int)getpid());
	unlinkat(sub_fd, tmp, 0);
	out = openat(sub_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		     source_trusted(&source_st) ? ENTRY_MODE : ENTRY_MODE_UNTRUSTED);
	if (out < 0 || (chown_entries && fchown(out, entry_uid, entry_gid) < 0) ||
	    copy_file(source, out, (uint64_t)source_st.st_size, &copied_bytes) < 0) {
		if (write_error(errno))
			cache_unusable(rec, strerror(errno));
		unlinkat(sub_fd, tmp, 0);
		goto out;
	}
	/* Never keep a copy whose build ID is not the recorded one (the file changed under us). */
	if (!fd_id_matches(out, id, n) || renameat(sub_fd, tmp, sub_fd, rest) < 0) {
		unlinkat(sub_fd, tmp, 0);
		goto out;
	}
	mark_used(out);
	cached_files++;
	debug("cached '%s' as .build-id/%s/%s", path, sub, rest);
out:
	if (out >= 0)
		close(out);
	if (source >= 0)
		close(source);
	if (sub_fd >= 0)
		close(sub_fd);
	for (int i = 0; i < 3; i++)
		free(paths[i]);
	free(tmp);
}

static void run_job(struct work_item *item, void *ctx)
{
	struct cache_job *job = (struct cache_job *)item;

	(void)ctx;
	cache_file(worker_rec, job);
	free(job->path);
	free(job);
}

/* Each file waiting holds an open descriptor: bounded, so that a burst of new binaries (-a scanning every
 * process at start) cannot take the recorder to its limit of open files. STACKREC_TEST_CACHE_DELAY_MS, for
 * tests, slows the worker down before each file: the file must be copied from what the drain thread opened,
 * even when the process and the path are gone by the time the worker gets to it. */
static struct work_queue queue = WORK_QUEUE_INIT(run_job, 256, "STACKREC_TEST_CACHE_DELAY_MS");

void build_id_cache_add(struct recorder *rec, pid_t pid, uint64_t start, uint64_t end, const char *path,
			const uint8_t *id, uint8_t n)
{
	struct cache_job *job;
	char *paths[3];

	if (!rec->cache_dir || cache_broken || n < 2 || n > SREC_BUILD_ID_MAX || path[0] != '/')
		return;
	if (!u64_set_add(&seen_ids, hash_id(id, n)))
		return;
	job = xcalloc(1, sizeof(*job));
	job->pid = pid;
	job->start = start;
	job->end = end;
	job->path = xstrdup(path);
	job->n = n;
	memcpy(job->id, id, n);
	/* Now, while the process may still map it: the bytes stay reachable through the descriptor. */
	source_paths(pid, start, end, path, paths);
	job->fd = -1;
	for (int i = 0; i < 3 && job->fd < 0; i++)
		job->fd = open_regular(paths[i]);
	for (int i = 0; i < 3; i++)
		free(paths[i]);
	if (!worker_rec) {
		elf_version(EV_CURRENT); /* libelf's one global setting, made before two threads use it */
		worker_rec = rec;
	}
	work_queue_push(&queue, &job->item);
}

void build_id_cache_wait(void)
{
	work_queue_finish(&queue);
}

struct cache_entry {
	char *sub, *name; /* .build-id/SUB/NAME */
	off_t size;
	time_t used;
};

static int by_use(const void *a, const void *b)
{
	const struct cache_entry *x = a, *y = b;

	return (x->used > y->used) - (x->used < y->used);
}

/* Adds the regular files of .build-id/SUB to entries; a symlink, to a directory or a file, is not followed. */
static uint64_t scan_subdir(const char *sub, struct cache_entry **entries, size_t *count, size_t *cap)
{
	uint64_t total = 0;
	int fd = open_subdir(sub, false);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	for (struct dirent *f; (f = readdir(d));) {
		struct stat st;

		if (f->d_name[0] == '.' || fstatat(dirfd(d), f->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		grow_array((void **)entries, cap, *count + 1, sizeof(**entries));
		(*entries)[*count] = (struct cache_entry){
			.sub = xstrdup(sub),
			.name = xstrdup(f->d_name),
			.size = st.st_size,
			.used = st.st_atime > st.st_mtime ? st.st_atime : st.st_mtime,
		};
		(*count)++;
		total += (uint64_t)st.st_size;
	}
	closedir(d);
	return total;
}

/* Removes .build-id/SUB/NAME, and SUB once empty: only within the cache, whatever was swapped in since. */
static bool evict(const struct cache_entry *e)
{
	int fd = open_subdir(e->sub, false);
	bool done;

	if (fd < 0)
		return false;
	done = unlinkat(fd, e->name, 0) == 0;
	close(fd);
	if (done) {
		debug("evicted .build-id/%s/%s from the build-ID cache", e->sub, e->name);
		unlinkat(ids_fd, e->sub, AT_REMOVEDIR); /* fails while other entries share the directory */
	}
	return done;
}

void build_id_cache_trim(struct recorder *rec)
{
	struct cache_entry *entries = NULL;
	size_t count = 0, cap = 0;
	uint64_t total = 0, limit = rec->cache_size_mb << 20;
	int fd;
	DIR *d;

	build_id_cache_wait();
	if (!rec->cache_dir || cache_open(rec, false) < 0)
		return;
	fd = dup(ids_fd);
	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	for (struct dirent *e; (e = readdir(d));)
		if (e->d_name[0] != '.')
			total += scan_subdir(e->d_name, &entries, &count, &cap);
	closedir(d);

	if (total > limit) {
		sort_array(entries, count, sizeof(*entries), by_use);
		for (size_t i = 0; i < count && total > limit; i++)
			if (evict(&entries[i]))
				total -= (uint64_t)entries[i].size;
	}
	for (size_t i = 0; i < count; i++) {
		free(entries[i].sub);
		free(entries[i].name);
	}
	free(entries);
}

void build_id_cache_report(void)
{
	build_id_cache_wait();
	debug("%u files added to the build-ID cache", cached_files);
	u64_set_release(&seen_ids);
	if (ids_fd >= 0)
		close(ids_fd);
	if (cache_fd >= 0)
		close(cache_fd);
	ids_fd = cache_fd = -1;
}
