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

/* $STACKREC_CACHE_DIR, else $XDG_CACHE_HOME/stackrec, else $HOME/.cache/stackrec; NULL without a home. */
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
#include <sys/types.h>
void cache_dir_invoking_user(uid_t *uid, gid_t *gid);
void cache_dir_own_new_dir(int dirfd, const char *name, uid_t uid, gid_t gid);
int cache_dir_mkdir_p(const char *path, uid_t uid, gid_t gid);

#endif
