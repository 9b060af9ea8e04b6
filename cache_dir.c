/* cache_dir.c — the build-ID cache's location and layout, see cache_dir.h. */
#include "cache_dir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

char *cache_dir_default(void)
{
	const char *dir = getenv("STACKREC_CACHE_DIR");
	struct stat st;

	if (dir && *dir)
		return xstrdup(dir);
	dir = getenv("XDG_CACHE_HOME");
	if (dir && *dir)
		return xasprintf("%s/stackrec", dir);
	/* Below a home that exists: HOME=/nonexistent (Debian's nobody) made us create /nonexistent/.cache */
	dir = getenv("HOME");
	if (dir && *dir && stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
		return xasprintf("%s/.cache/stackrec", dir);
	return NULL;
}

char *build_id_rel_path(const uint8_t *id, size_t n, const char *suffix)
{
	char hex[2 * 64 + 1];

	if (n < 2 || n > 64)
		return NULL;
	hex_encode(hex, id, n);
	return build_id_hex_rel_path(hex, suffix);
}

char *build_id_hex_rel_path(const char *hex, const char *suffix)
{
	if (!hex || strlen(hex) < 4)
		return NULL;
	return xasprintf(".build-id/%.2s/%s%s", hex, hex + 2, suffix);
}

/* Who the cache is for: the invoking user under sudo (-1: no such group), else us. */
void cache_dir_invoking_user(uid_t *uid, gid_t *gid)
{
	if (sudo_invoker(uid, gid))
		return;
	*uid = geteuid();
	*gid = getegid();
}

/* Gives a directory we just made to uid, if its parent is theirs: their home, their ~/.cache, their cache.
 * Opened without following a symlink, and its parent found through "..", where it really is: a symlink
 * earlier in the path (~/.cache -> /etc) must not get root to make a directory of theirs elsewhere. */
void cache_dir_own_new_dir(int dirfd, const char *name, uid_t uid, gid_t gid)
{
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int parent = fd >= 0 ? openat(fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	struct stat st;

	if (parent >= 0 && fstat(parent, &st) == 0 && st.st_uid == uid && fchown(fd, uid, gid) < 0)
		debug("cannot give '%s' to uid %u: %s", name, (unsigned int)uid, strerror(errno));
	if (parent >= 0)
		close(parent);
	if (fd >= 0)
		close(fd);
}

/* Creates the missing directories of path, 0700 and, when we are root for another user, theirs where their
 * parent is. */
int cache_dir_mkdir_p(const char *path, uid_t uid, gid_t gid)
{
	char *copy = xstrdup(path);
	bool give = geteuid() == 0 && uid != 0;
	int ret = 0;

	if (!*copy) {
		free(copy);
		errno = ENOENT;
		return -1;
	}
	for (char *p = copy + 1;; p++) {
		bool last = !*p;

		if (!last && *p != '/')
			continue;
		*p = '\0';
		if (mkdir(copy, 0700) == 0) {
			if (give)
				cache_dir_own_new_dir(AT_FDCWD, copy, uid, gid);
		} else if (errno != EEXIST) {
			ret = -1;
		}
		if (last)
			break;
		*p = '/';
	}
	free(copy);
	return ret;
}

int cache_dir_open_sub(const char *cache_dir, const char *sub, bool create, uid_t *owner, gid_t *group,
		       const char *what)
{
	struct stat st;
	uid_t uid;
	gid_t gid;
	int cache_fd, fd;

	cache_dir_invoking_user(&uid, &gid);
	if (create && cache_dir_mkdir_p(cache_dir, uid, gid) < 0)
		return -1;
	cache_fd = open(cache_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cache_fd < 0)
		return -1;
	if (fstat(cache_fd, &st) < 0 || (st.st_uid != uid && st.st_uid != geteuid())) {
		debug("not using the %s in '%s': owned by uid %u", what, cache_dir, (unsigned int)st.st_uid);
		close(cache_fd);
		return -1;
	}
	*owner = st.st_uid;
	*group = st.st_gid;
	if (create && mkdirat(cache_fd, sub, 0700) == 0 && geteuid() == 0 && st.st_uid != 0)
		cache_dir_own_new_dir(cache_fd, sub, st.st_uid, st.st_gid);
	fd = openat(cache_fd, sub, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	close(cache_fd);
	/* Made 0700 for CACHE's owner: one of another owner, or that others may write to, may hold entries
	 * anyone planted or be emptied under us (CACHE itself may be writable by others: /tmp/cache). */
	if (fd >= 0 && (fstat(fd, &st) < 0 || (st.st_uid != *owner && st.st_uid != geteuid()) ||
			(st.st_mode & (S_IWGRP | S_IWOTH)))) {
		debug("not using the %s in '%s/%s': owned by uid %u, mode %04o: not ours alone", what, cache_dir, sub,
		      (unsigned int)st.st_uid, (unsigned int)(st.st_mode & 07777));
		close(fd);
		return -1;
	}
	return fd;
}

bool cache_dir_install(int dir_fd, int fd, const char *tmp, const char *name, bool written)
{
	int saved;

	if (close(fd) == 0 && written && renameat(dir_fd, tmp, dir_fd, name) == 0) {
		cache_dir_temp_done(dir_fd, tmp, false);
		return true;
	}
	saved = errno;
	cache_dir_temp_done(dir_fd, tmp, true);
	errno = saved;
	return false;
}

const void *cache_dir_map(int dir_fd, const char *name, size_t max_size, bool populate, size_t *size, int *fd)
{
	struct stat st;
	void *map;

	*fd = openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (*fd < 0)
		return NULL;
	if (fstat(*fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 || (uint64_t)st.st_size > max_size)
		goto refuse;
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | (populate ? MAP_POPULATE : 0), *fd, 0);
	if (map == MAP_FAILED)
		goto refuse;
	*size = (size_t)st.st_size;
	return map;
refuse:
	close(*fd);
	*fd = -1;
	return NULL;
}

void cache_dir_touch(int fd)
{
	struct timespec times[2] = { { .tv_nsec = UTIME_NOW }, { .tv_nsec = UTIME_OMIT } };

	futimens(fd, times);
}

int cache_dir_temp_file(int dir_fd, uid_t owner, gid_t group, char tmp[static 12])
{
	/* mkostemp needs a path: the directory's, through /proc/self/fd, so no symlink above it is followed
	 * again after it was opened and checked. */
	char *path = xasprintf("/proc/self/fd/%d/.tmp.XXXXXX", dir_fd);
	sigset_t mask;
	int fd, saved;

	pending_create_begin(&mask);
	fd = mkostemp(path, O_CLOEXEC);
	saved = errno;
	if (fd >= 0)
		pending_output_add(path); /* a Ctrl-C or a file cut short leaves no .tmp behind (interrupt_cleanup.c) */
	pending_create_end(&mask);
	if (fd >= 0) {
		memcpy(tmp, path + strlen(path) - 11, 12);
		if (geteuid() == 0 && owner != 0 && fchown(fd, owner, group) < 0)
			debug("cannot give '%s' to uid %u: %s", tmp, (unsigned int)owner, strerror(errno));
	}
	free(path);
	errno = saved;
	return fd;
}

void cache_dir_temp_done(int dir_fd, const char *tmp, bool remove)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fd/%d/%s", dir_fd, tmp);
	if (remove)
		unlinkat(dir_fd, tmp, 0); /* then forgotten: a stop signal meanwhile finds it listed still */
	pending_output_remove(path);
}

struct dir_entry {
	char *name;
	off_t size;
	uint64_t used; /* ns: in whole seconds, two files made in one second were a coin toss */
};

static uint64_t ns(struct timespec t)
{
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int by_use(const void *a, const void *b)
{
	const struct dir_entry *x = a, *y = b;

	return (x->used > y->used) - (x->used < y->used);
}

void cache_dir_trim(int dir_fd, uint64_t cap, const char *what)
{
	struct dir_entry *entries = NULL;
	size_t count = 0, capacity = 0;
	uint64_t total = 0;
	/* a descriptor of its own: a dup would share dir_fd's position, and a second trim would read nothing */
	int fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	for (struct dirent *e; (e = readdir(d));) {
		struct stat st;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
		    fstatat(dir_fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
			continue;
		if (e->d_name[0] == '.') {
			if (st.st_mtime + 3600 < time(NULL))
				unlinkat(dir_fd, e->d_name, 0);
			continue;
		}
		GROW(entries, capacity, count + 1);
		entries[count++] = (struct dir_entry){ .name = xstrdup(e->d_name), .size = st.st_size,
						       .used = ns(st.st_atim) > ns(st.st_mtim) ? ns(st.st_atim)
												 : ns(st.st_mtim) };
		total += (uint64_t)st.st_size;
	}
	closedir(d);
	if (total > cap) {
		sort_array(entries, count, sizeof(*entries), by_use);
		for (size_t i = 0; i < count && total > cap; i++) {
			if (unlinkat(dir_fd, entries[i].name, 0) == 0)
				debug("evicted '%s' from the %s", entries[i].name, what);
			/* gone or not (another run's trim may have removed it first), it is not a reason to evict more */
			total -= (uint64_t)entries[i].size;
		}
	}
	for (size_t i = 0; i < count; i++)
		free(entries[i].name);
	free(entries);
}

uint64_t cache_dir_cap(const char *name, uint64_t default_mb)
{
	const char *value = getenv(name);

	return (value && *value ? strtoull(value, NULL, 10) : default_mb) << 20;
}

bool cache_dir_user_may_read(const char *path, uid_t uid, gid_t gid, const struct stat *same)
{
	int status;
	pid_t child;

	if (gid == (gid_t)-1)
		return false;
	child = fork();
	if (child < 0)
		return false;
	if (child == 0) { /* system calls only: the parent may have had other threads */
		struct stat st;
		int fd;

		if (syscall(SYS_setgroups, 1, &gid) != 0 || syscall(SYS_setresgid, gid, gid, gid) != 0 ||
		    syscall(SYS_setresuid, uid, uid, uid) != 0)
			_exit(1);
		fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		_exit(fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == same->st_dev && st.st_ino == same->st_ino ? 0 : 1);
	}
	while (waitpid(child, &status, 0) < 0)
		if (errno != EINTR)
			return false;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}
