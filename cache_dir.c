/* cache_dir.c — the build-ID cache's location and layout, see cache_dir.h. */
#include "cache_dir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

char *cache_dir_default(void)
{
	const char *dir = getenv("STACKREC_CACHE_DIR");

	if (dir && *dir)
		return xstrdup(dir);
	dir = getenv("XDG_CACHE_HOME");
	if (dir && *dir)
		return xasprintf("%s/stackrec", dir);
	dir = getenv("HOME");
	if (dir && *dir)
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
