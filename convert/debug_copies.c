/*
 * debug_copies.c — decompressed debug files kept in CACHE/decompressed/ (see debug_copies.h).
 */
#include "debug_copies.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../cache_dir.h"
#include "../util.h"

#define TRAILER_MAGIC "STKDCPY1"
#define TRAILER_FIXED 16 /* the magic and the identity's length */
#define MAX_IDENTITY 8192

static char *kept_in; /* the cache directory, or NULL */

/*
 * A filled copy on its way to its name, on a thread of its own: it must be on disk first (fdatasync: else a
 * crash, or a write-back error nobody hears of, could leave a copy of the right size and trailer whose blocks
 * were never written, used from then on), and the run need not wait for the disk meanwhile: it already has
 * the copy open. 15 ms for libc's 12 MB here, which a cold conversion would otherwise spend doing nothing.
 */
struct keeper {
	pthread_t thread;
	int fd, dir_fd;
	char tmp[12], name[24];
	struct keeper *next;
};
static struct keeper *keepers; /* started, not yet joined */
static pthread_mutex_t keepers_lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t cap(void);

static void *keep_on_disk(void *arg)
{
	struct keeper *k = arg;

	if (fdatasync(k->fd) < 0 || renameat(k->dir_fd, k->tmp, k->dir_fd, k->name) < 0) {
		debug("cannot keep the decompressed copy '%s' in '%s': %s", k->name, kept_in, strerror(errno));
		cache_dir_temp_done(k->dir_fd, k->tmp, true);
	} else {
		cache_dir_temp_done(k->dir_fd, k->tmp, false);
		debug("decompressed copy '%s/decompressed/%s' kept", kept_in, k->name);
		cache_dir_trim(k->dir_fd, cap(), "decompressed debug files");
	}
	close(k->fd);
	close(k->dir_fd);
	return NULL;
}

/* Waits for the copies on their way (at the end of the run, and at exit whatever the way out). */
static void keepers_wait(void)
{
	struct keeper *k;

	pthread_mutex_lock(&keepers_lock);
	k = keepers;
	keepers = NULL;
	pthread_mutex_unlock(&keepers_lock);
	while (k) {
		struct keeper *next = k->next;

		pthread_join(k->thread, NULL);
		free(k);
		k = next;
	}
}

void debug_copies_set_dir(const char *cache_dir)
{
	static bool registered;

	keepers_wait();
	if (!registered && cache_dir)
		registered = atexit(keepers_wait) == 0;
	free(kept_in);
	kept_in = cache_dir ? xstrdup(cache_dir) : NULL;
}

static uint64_t cap(void)
{
	return cache_dir_cap("STACKREC_DECOMPRESSED_CACHE_MB", DEBUG_COPIES_DEFAULT_CAP_MB);
}

/* Whether the file open on fd is a copy of exactly c->size bytes whose trailer is c->identity. */
static bool kept_copy_ok(const struct debug_copy *c, int fd)
{
	size_t len = strlen(c->identity);
	char fixed[TRAILER_FIXED], *identity;
	struct stat st;
	uint64_t stored_len;
	bool ok;

	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size != c->size + len + TRAILER_FIXED ||
	    pread(fd, fixed, sizeof(fixed), (off_t)(c->size + len)) != (ssize_t)sizeof(fixed))
		return false;
	memcpy(&stored_len, fixed + 8, sizeof(stored_len));
	if (memcmp(fixed, TRAILER_MAGIC, 8) || stored_len != len)
		return false;
	identity = xmalloc(len);
	ok = pread(fd, identity, len, (off_t)c->size) == (ssize_t)len && !memcmp(identity, c->identity, len);
	free(identity);
	return ok;
}

int debug_copies_find(struct debug_copy *c, int source_fd, const char *path, uint64_t size, bool make)
{
	struct stat st;
	uid_t owner;
	gid_t group;
	int fd;

	memset(c, 0, sizeof(*c));
	c->dir_fd = c->fd = -1;
	c->size = size;
	if (!kept_in || fstat(source_fd, &st) < 0)
		return -1;
	/* ctime too: a file rewritten in place with its size and modification time kept (cp -p, rsync --inplace -t)
	 * still gets a new one, which nothing can set back */
	c->identity = xasprintf("%s\n%" PRIu64 " %lld.%09ld %lld.%09ld %" PRIu64 " %" PRIu64 " layout %d", path,
				(uint64_t)st.st_size, (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
				(long long)st.st_ctim.tv_sec, st.st_ctim.tv_nsec, (uint64_t)st.st_ino,
				(uint64_t)st.st_dev, DEBUG_COPIES_LAYOUT);
	if (strlen(c->identity) > MAX_IDENTITY)
		return -1;
	snprintf(c->name, sizeof(c->name), "%016" PRIx64 ".debug",
		 hash_words(0x5354b4dc0b1e5ull, c->identity, strlen(c->identity)));
	c->dir_fd = cache_dir_open_sub(kept_in, "decompressed", make, &owner, &group, "decompressed debug files");
	if (c->dir_fd < 0)
		return -1;
	fd = openat(c->dir_fd, c->name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd >= 0 && kept_copy_ok(c, fd)) {
		struct timespec times[2] = { { .tv_nsec = UTIME_NOW }, { .tv_nsec = UTIME_OMIT } };

		futimens(fd, times); /* used now: the trim keeps it longest */
		debug("'%s': its decompressed copy '%s/decompressed/%s' is used", path, kept_in, c->name);
		return fd;
	}
	if (fd >= 0) {
		debug("'%s': the decompressed copy '%s/decompressed/%s' is not of it, or cut short: made again", path,
		      kept_in, c->name);
		close(fd);
	}
	/* Root working for a user (sudo) keeps copies in the user's cache, theirs: not of a file they may not read,
	 * by its mode or by a directory on its way (a world-readable file in another user's 0700 home was copied) */
	if (!make || size + strlen(c->identity) + TRAILER_FIXED > cap() ||
	    (owner != geteuid() && !cache_dir_user_may_read(path, owner, group, &st)))
		return -1;
	c->fd = cache_dir_temp_file(c->dir_fd, owner, group, c->tmp);
	if (c->fd >= 0 && ftruncate(c->fd, (off_t)size) < 0) {
		debug("cannot make room for a decompressed copy of '%s' in '%s': %s", path, kept_in, strerror(errno));
		close(c->fd);
		cache_dir_temp_done(c->dir_fd, c->tmp, true);
		c->fd = -1;
	}
	return -1;
}

int debug_copies_keep(struct debug_copy *c, bool filled)
{
	int fd = c->fd;

	if (fd >= 0) {
		size_t len = strlen(c->identity);
		uint64_t stored_len = len;
		char fixed[TRAILER_FIXED];

		memcpy(fixed, TRAILER_MAGIC, 8);
		memcpy(fixed + 8, &stored_len, sizeof(stored_len));
		int kept_fd = -1; /* the keeper's own descriptor of the copy */

		if (!filled || pwrite(fd, c->identity, len, (off_t)c->size) != (ssize_t)len ||
		    pwrite(fd, fixed, sizeof(fixed), (off_t)(c->size + len)) != (ssize_t)sizeof(fixed) ||
		    (kept_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0)) < 0) {
			if (filled)
				debug("cannot keep the decompressed copy '%s' in '%s': %s", c->name, kept_in,
				      strerror(errno));
			cache_dir_temp_done(c->dir_fd, c->tmp, true);
		} else {
			struct keeper *k = xcalloc(1, sizeof(*k));

			k->fd = kept_fd;
			k->dir_fd = c->dir_fd; /* the keeper's now */
			c->dir_fd = -1;
			memcpy(k->tmp, c->tmp, sizeof(k->tmp));
			memcpy(k->name, c->name, sizeof(k->name));
			if (thread_start_without_signals(&k->thread, keep_on_disk, k) != 0) {
				keep_on_disk(k);
				free(k);
			} else {
				pthread_mutex_lock(&keepers_lock);
				k->next = keepers;
				keepers = k;
				pthread_mutex_unlock(&keepers_lock);
			}
		}
		if (!filled) {
			close(fd);
			fd = -1;
		}
	}
	if (c->dir_fd >= 0)
		close(c->dir_fd);
	free(c->identity);
	memset(c, 0, sizeof(*c));
	c->dir_fd = c->fd = -1;
	return fd;
}
