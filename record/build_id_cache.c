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
 * original. Each build ID is handled once per run (its note read again when it is already cached). After
 * recording the cache is trimmed to --cache-size, least recently used first (the newer of atime and mtime; a
 * hit refreshes atime).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
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

static struct u64_set seen_ids; /* a hash of each build ID handled in this run */
static bool cache_broken;	 /* the directory could not be written: warned once, nothing more is tried */
static unsigned int cached_files;

static uint64_t hash_id(const uint8_t *id, size_t n)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ id[i]) * 1099511628211ull;
	return h;
}

static int mkdir_p(const char *path)
{
	char *copy = xstrdup(path);
	int ret = 0;

	for (char *p = copy + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(copy, 0755) < 0 && errno != EEXIST)
			ret = -1;
		*p = '/';
	}
	if (mkdir(copy, 0755) < 0 && errno != EEXIST)
		ret = -1;
	free(copy);
	return ret;
}

static bool id_matches(const char *path, const uint8_t *id, uint8_t n)
{
	uint8_t got[SREC_BUILD_ID_MAX];
	uint8_t got_size = 0;

	return build_id_read(path, got, &got_size) == 0 && got_size == n && memcmp(got, id, n) == 0;
}

/* Refreshes atime for the LRU trim; mtime stays the time the entry was made. */
static void mark_used(const char *path)
{
	struct timespec times[2] = { { .tv_nsec = UTIME_NOW }, { .tv_nsec = UTIME_OMIT } };

	utimensat(AT_FDCWD, path, times, 0);
}

/* Copies FROM to a new file TO: a reflink where the filesystem shares blocks (btrfs, XFS), else bytes. Never
 * a hard link: a binary overwritten in place (`cp new old` keeps the inode) would change its cache entry too,
 * and the bytes of the recorded build would be lost. */
static int copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in, out, ret = 0;
	ssize_t n;

	in = open(from, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -1;
	out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (out < 0) {
		close(in);
		return -1;
	}
	if (ioctl(out, FICLONE, in) == 0)
		goto out;
	while ((n = read(in, buf, sizeof(buf))) > 0) {
		for (ssize_t done = 0; done < n;) {
			ssize_t w = write(out, buf + done, (size_t)(n - done));

			if (w < 0) {
				ret = -1;
				goto out;
			}
			done += w;
		}
	}
	if (n < 0)
		ret = -1;
out:
	if (close(out) < 0)
		ret = -1;
	close(in);
	return ret;
}

void build_id_cache_add(struct recorder *rec, pid_t pid, uint64_t start, uint64_t end, const char *path,
			const uint8_t *id, uint8_t n)
{
	char map_files[128], *root_path = NULL, *rel = NULL, *dest = NULL, *tmp = NULL, *dir = NULL;
	const char *source = NULL;
	struct stat st;

	if (!rec->cache_dir || cache_broken || !n || path[0] != '/')
		return;
	if (!u64_set_add(&seen_ids, hash_id(id, n)))
		return;
	rel = build_id_rel_path(id, n, "");
	if (!rel)
		goto out;
	dest = xasprintf("%s/%s", rec->cache_dir, rel);
	if (stat(dest, &st) == 0) {
		/* An entry that lost its build ID (a hard link of an older stackrec whose original was overwritten in
		 * place, a damaged copy) would hide the recorded build: replace it. */
		if (id_matches(dest, id, n)) {
			mark_used(dest);
			goto out;
		}
		debug("cache entry %s no longer has its build ID (overwritten in place?): replacing it", rel);
		unlink(dest);
	}

	/* The bytes that were mapped: through map_files while the process lives (deleted files, other mount
	 * namespaces), else through its root, else the path; whichever still has the recorded build ID. */
	snprintf(map_files, sizeof(map_files), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, pid, start, end);
	root_path = xasprintf("/proc/%d/root%s", pid, path);
	if (id_matches(map_files, id, n))
		source = map_files;
	else if (id_matches(root_path, id, n))
		source = root_path;
	else if (id_matches(path, id, n))
		source = path;
	if (!source) {
		debug("no file with build ID of '%s' (pid %d) to cache", path, pid);
		goto out;
	}

	dir = xstrdup(dest);
	*strrchr(dir, '/') = '\0';
	if (mkdir_p(dir) < 0) {
		warning("cannot write the build-ID cache '%s': %s", rec->cache_dir, strerror(errno));
		cache_broken = true;
		goto out;
	}
	tmp = xasprintf("%s.tmp-%d", dest, (int)getpid());
	unlink(tmp);
	if (copy_file(source, tmp) < 0) {
		if (errno == ENOSPC || errno == EACCES || errno == EROFS || errno == EDQUOT) {
			warning("cannot write the build-ID cache '%s': %s", rec->cache_dir, strerror(errno));
			cache_broken = true;
		}
		unlink(tmp);
		goto out;
	}
	/* Never keep a copy whose build ID is not the recorded one (the file changed under us). */
	if (!id_matches(tmp, id, n) || rename(tmp, dest) < 0) {
		unlink(tmp);
		goto out;
	}
	mark_used(dest);
	cached_files++;
	debug("cached '%s' as %s", path, rel);
out:
	free(root_path);
	free(rel);
	free(dest);
	free(tmp);
	free(dir);
}

struct cache_entry {
	char *path;
	off_t size;
	time_t used;
};

static int by_use(const void *a, const void *b)
{
	const struct cache_entry *x = a, *y = b;

	return (x->used > y->used) - (x->used < y->used);
}

void build_id_cache_trim(struct recorder *rec)
{
	struct cache_entry *entries = NULL;
	size_t count = 0, cap = 0;
	uint64_t total = 0, limit = rec->cache_size_mb << 20;
	char *top;
	DIR *d;

	if (!rec->cache_dir || cache_broken)
		return;
	top = xasprintf("%s/.build-id", rec->cache_dir);
	d = opendir(top);
	if (!d) {
		free(top);
		return;
	}
	for (struct dirent *e; (e = readdir(d));) {
		char *sub;
		DIR *s;

		if (e->d_name[0] == '.')
			continue;
		sub = xasprintf("%s/%s", top, e->d_name);
		s = opendir(sub);
		for (struct dirent *f; s && (f = readdir(s));) {
			char *file;
			struct stat st;

			if (f->d_name[0] == '.')
				continue;
			file = xasprintf("%s/%s", sub, f->d_name);
			if (lstat(file, &st) < 0 || !S_ISREG(st.st_mode)) {
				free(file);
				continue;
			}
			grow_array((void **)&entries, &cap, count + 1, sizeof(*entries));
			entries[count].path = file;
			entries[count].size = st.st_size;
			entries[count].used = st.st_atime > st.st_mtime ? st.st_atime : st.st_mtime;
			total += (uint64_t)st.st_size;
			count++;
		}
		if (s)
			closedir(s);
		free(sub);
	}
	closedir(d);

	if (total > limit) {
		qsort(entries, count, sizeof(*entries), by_use);
		for (size_t i = 0; i < count && total > limit; i++) {
			if (unlink(entries[i].path) == 0) {
				char *slash = strrchr(entries[i].path, '/');

				total -= (uint64_t)entries[i].size;
				debug("evicted '%s' from the build-ID cache", entries[i].path);
				*slash = '\0';
				rmdir(entries[i].path); /* fails while other entries share the directory */
			}
		}
	}
	for (size_t i = 0; i < count; i++)
		free(entries[i].path);
	free(entries);
	free(top);
}

void build_id_cache_report(void)
{
	debug("%u files added to the build-ID cache", cached_files);
	u64_set_release(&seen_ids);
}
