/*
 * cache_dir.h — where stackrec keeps copies of the binaries a recording needs (the build-ID cache), and
 * how a build ID names a file in it. `record` fills the cache, `convert` reads it: one rule for both.
 *
 * Layout, the same as perf's ~/.debug and as debug directories: CACHE/.build-id/xx/rest, where xx is the
 * build ID's first byte in hex and rest the remaining bytes in hex.
 */
#ifndef STACKREC_CACHE_DIR_H
#define STACKREC_CACHE_DIR_H

#include <stddef.h>
#include <stdint.h>

/* $STACKREC_CACHE_DIR, else $XDG_CACHE_HOME/stackrec, else $HOME/.cache/stackrec; NULL without a home that exists. */
char *cache_dir_default(void);

/* ".build-id/xx/rest" followed by suffix (e.g. "" or ".debug"), for a build ID given as bytes. */
char *build_id_rel_path(const uint8_t *id, size_t n, const char *suffix);

/* The same for a build ID given in lowercase hex; NULL when it is too short. */
char *build_id_hex_rel_path(const char *hex, const char *suffix);

/*
 * Making the cache safely when root works for a user (sudo -E keeps $HOME): see record/build_id_cache.c.
 * cache_dir_invoking_user: who the cache is for, the invoking user under sudo (gid -1: no such group), else us.
 * cache_dir_own_new_dir: gives directory NAME (in dirfd), just made, to uid where its parent is theirs; opened
 * without following a symlink, its parent found through "..", where it really is.
 * cache_dir_mkdir_p: creates the missing directories of path, 0700 and, when we are root for another user,
 * theirs where their parent is. 0, or -1 with errno.
 */
#include <stdbool.h>
#include <sys/types.h>
void cache_dir_invoking_user(uid_t *uid, gid_t *gid);
void cache_dir_own_new_dir(int dirfd, const char *name, uid_t uid, gid_t gid);
/*
 * Whether user uid (group gid) may open the file at path, every directory on the way searched as that user, and
 * finds there the file root read (same: its fstat): what root working for a user may copy into that user's cache.
 * Asked of a child process that becomes the user (its groups gid alone: a file the user reaches only through a
 * supplementary group counts as unreadable), so root's own groups and capabilities play no part, and a path
 * changed since root opened it is no grant. False on any failure.
 */
struct stat;
bool cache_dir_user_may_read(const char *path, uid_t uid, gid_t gid, const struct stat *same);
int cache_dir_mkdir_p(const char *path, uid_t uid, gid_t gid);

/*
 * The caches convert and symbolize keep under CACHE (symbols/, decompressed/), one rule for each:
 * cache_dir_open_sub opens CACHE/sub, made first when create (0700, given to the user root works for, as the
 * build-ID cache's directories are), checked: CACHE must belong to us or to the user it is for, and sub is
 * opened without following a symlink and must belong to CACHE's owner or to us, writable by no one else. Returns its descriptor or -1; *owner and *group receive CACHE's owner.
 * what names the cache in the -v message that says why it is not used.
 */
int cache_dir_open_sub(const char *cache_dir, const char *sub, bool create, uid_t *owner, gid_t *group,
		       const char *what);

/*
 * Puts the temporary file tmp (open at fd, which this closes) in place as name in dir_fd when written says its bytes
 * are all there and closing it worked; else removes it. false, with errno, when it is not in place.
 */
bool cache_dir_install(int dir_fd, int fd, const char *tmp, const char *name, bool written);

/*
 * An entry of a cache (name in the directory dir_fd) mapped read-only, all of it (populate: its pages mapped in at
 * once, for an entry read whole): opened without following a symbolic link or blocking on a FIFO, and only when
 * it is a regular file of 1 to max_size bytes. Returns the map with *size and *fd (open, for cache_dir_touch; the
 * caller closes it and unmaps), or NULL with *fd -1. The bytes are the caller's to check: a cache is hostile input.
 */
const void *cache_dir_map(int dir_fd, const char *name, size_t max_size, bool populate, size_t *size, int *fd);

/* Marks the entry open at fd used now (its access time), so that cache_dir_trim keeps it longest. */
void cache_dir_touch(int fd);

/*
 * A new temporary file in the directory dir_fd, ".tmp.XXXXXX" (an unpredictable name, made with O_EXCL, 0600),
 * given to owner when root makes it for another user: its fd, its name in tmp. -1 with errno when it could not
 * be made. The caller puts it in place (cache_dir_install, or renameat and cache_dir_temp_done) or removes it
 * (cache_dir_temp_done); until then a Ctrl-C removes it (outputs_discard_pending), and cache_dir_trim removes
 * those a killed run left.
 */
int cache_dir_temp_file(int dir_fd, uid_t owner, gid_t group, char tmp[static 12]);
/* tmp of cache_dir_temp_file is in place (renamed) or, with remove, removed now: not to discard at a Ctrl-C. */
void cache_dir_temp_done(int dir_fd, const char *tmp, bool remove);

/*
 * Removes the least recently used regular files of dir_fd (the newer of atime and mtime: a reader touches
 * what it uses) while their sizes add up to more than cap bytes, and temporary files (".tmp.*") an hour old.
 * what names the cache in -v messages.
 */
void cache_dir_trim(int dir_fd, uint64_t cap, const char *what);

/* A cap in bytes from environment variable name (a number of MiB), default_mb when it is unset or empty. */
uint64_t cache_dir_cap(const char *name, uint64_t default_mb);

#endif
