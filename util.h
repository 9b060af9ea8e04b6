/*
 * util.h — the few helpers every part of stackrec shares: messages, allocation, hex, output files.
 *
 * Messages follow git's conventions: lowercase, no full stop, file names in quotes, one line each,
 * on stderr (primary output goes to stdout or -o), prefixed "stackrec: error: " or "stackrec: warning: ".
 * Allocation failures are not recoverable in a command-line tool: the x* allocators print and exit.
 */
#ifndef STACKREC_UTIL_H
#define STACKREC_UTIL_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "arena.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

extern bool verbose; /* -v: diagnostics on stderr */
/* The error() and warning() lines printed so far: a run that printed none was clean (the profile cache keeps
 * only what such a run made, so that a run that uses it has nothing left unsaid). */
extern unsigned long problems_reported;

/* Prints "stackrec: error: <message>" and returns -1, so that `return error(...)` reads naturally. */
int error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints "stackrec: <message>" only with -v. */
void debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

void *xmalloc(size_t size);
void *xcalloc(size_t count, size_t size);
void *xrealloc(void *ptr, size_t size);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Output files (record's recording, convert -o, archive -o), written safely by root in directories that other
 * users may write to:
 *
 * - OUT is found name by name, and every symbolic link on the way, in a directory of OUT's path or at its end,
 *   is followed only when it belongs to root, to us or under sudo to the invoking user (fs.protected_symlinks,
 *   when it is on, does that only in sticky directories): another user's link, planted at OUT or as a
 *   directory above it (shared/dir -> /etc), is refused. The directory found is held from then on.
 * - A new or regular file is written as a temporary file in that directory, created under an unpredictable
 *   name (.OUT.XXXXXX) with O_EXCL, so never through a symbolic link someone planted, and renamed over OUT
 *   by output_replace: a failed run never leaves half a file.
 * - What a link of ours leads to (/dev/stdout too) is written in place, as is a device or FIFO (/dev/null): a
 *   rename would replace the link or the device. Another user's file or FIFO there is refused.
 * - What is created is 0600, and under sudo (root, SUDO_UID and SUDO_GID set) it belongs to the invoking
 *   user, as perf does with perf.data, so that they can read their own recording.
 */

/* An output file being written (output_create). */
struct output_file {
	char *tmp;  /* the temporary file renamed over OUT by output_replace: OUT's directory as given, then
		     * .OUT.XXXXXX; NULL when written in place, and once replaced or discarded */
	int dir;    /* the directory OUT is in, held while tmp is */
	char *name; /* OUT's name in dir */
};

/*
 * Opens path for writing as above. Returns the descriptor with *o set for output_replace (o->tmp NULL when
 * written in place), or returns -1 with an error naming path.
 */
int output_create(const char *path, struct output_file *o);
/* Writes the n bytes at p to fd, again after a short write or EINTR; false when that failed (errno set). */
bool fd_write_all(int fd, const void *p, size_t n);
/* pwrite of all n bytes at offset (retried on short writes and EINTR); false with errno when it failed. */
bool fd_pwrite_all(int fd, const void *p, size_t n, uint64_t offset);

/*
 * Renames o's temporary file over OUT (path, as given to output_create, for messages); with keep_old, a regular
 * file at OUT is first kept as OUT.old. Nothing to do when written in place. Returns 0, or -1 with an error
 * naming path (the temporary file is then still there, for output_discard).
 */
int output_replace(struct output_file *o, const char *path, bool keep_old);
/* Removes o's temporary file, which will not be renamed into place (nothing when written in place). */
void output_discard(struct output_file *o);
/*
 * Removes every temporary file output_create or a cache made that is not in place yet, and the temporary
 * directory pending_dir_set named: for a process that stops at once (file_cut_guard.c, interrupt_cleanup.c),
 * so that it leaves no half-written .OUT.XXXXXX, cache .tmp.XXXXXX or /tmp/stackrec-archive.XXXXXX behind.
 * Only in the process that listed them: a child forked since (record's command before its exec) removes
 * nothing. Async-signal-safe.
 */
void outputs_discard_pending(void);
/* The signals that stop stackrec, and remove what it had not finished (interrupt_cleanup.c); record ends a
 * recording on them. An initializer's list: { STOP_SIGNALS }. */
#define STOP_SIGNALS SIGINT, SIGTERM, SIGHUP

/*
 * Making a temporary file or directory and listing it for outputs_discard_pending go between these two: the
 * thread's STOP_SIGNALS wait, and a handler on another thread waits for the listing, so that no temporary is
 * made unlisted. saved: the thread's signal mask, put back by pending_create_end.
 */
void pending_create_begin(sigset_t *saved);
void pending_create_end(const sigset_t *saved);
/* A temporary file for outputs_discard_pending to remove (tmp: a path it can unlink as it is), and no longer
 * (pending_output_remove: after it is renamed into place, or after it was removed, not before). */
void pending_output_add(const char *tmp);
void pending_output_remove(const char *tmp);
/* The one temporary directory for outputs_discard_pending to remove (remove_tree), and no longer
 * (pending_dir_clear: after removing it, so that a stop signal meanwhile finishes the removal). */
void pending_dir_set(const char *dir);
void pending_dir_clear(const char *dir);
/* Removes path and, when it is a directory, what is in it, eight levels down at most, following no symbolic
 * link. Async-signal-safe. */
void remove_tree(const char *path);

/*
 * Under sudo (we are root and SUDO_UID is set): the invoking user's uid and gid (SUDO_GID, else (gid_t)-1),
 * to whom root gives the files it makes for them (recordings, outputs, the build-ID cache), as perf does.
 * false otherwise, or when SUDO_UID is no user id (with a warning).
 */
#include <sys/types.h>
bool sudo_invoker(uid_t *uid, gid_t *gid);

/* Writes n bytes as 2n lowercase hex digits and a NUL into out (build IDs). */
/* Length of the valid UTF-8 sequence at s (at most n bytes), or 0 if it is not one. */
size_t utf8_sequence_length(const unsigned char *s, size_t n);
/*
 * NULL when s is valid UTF-8; else a copy (to free) with each byte that begins no valid sequence replaced by
 * replacement (U+FFFD's "\xef\xbf\xbd" for the pprof writer; folded.c replaces such bytes with '?' in place,
 * in its own buffer). A thread name the kernel cut at 15 bytes in the middle of a character, a perf map's or a
 * symbol's bytes.
 */
char *utf8_replace_invalid(const char *s, const char *replacement);
/*
 * s as it may be printed to a terminal, or in a line of `info`: a name or path from a recording (a thread
 * name, a mapped file's path: another user's to choose) could otherwise move the cursor, retitle the window or
 * forge a line. C0 and C1 controls, DEL and bytes of no valid UTF-8 sequence become \xNN, a backslash \\;
 * the rest, UTF-8 included, stays. Newly allocated.
 */
char *terminal_text(const char *s);
/* terminal_text into out, which has room for 4 * strlen(s) + 1 bytes; async-signal-safe. */
void terminal_text_into(char *out, const char *s);
void hex_encode(char *out, const unsigned char *bytes, size_t n);
/* Whether every character of s is a lowercase hex digit, as hex_encode writes them (true for ""): what a build ID
 * must be before it becomes part of a path. */
bool hex_lowercase(const char *s);

/*
 * The symbolic name of an errno given as -EFAULT or EFAULT: "EFAULT"; NULL when it is none. Any int is safe,
 * INT_MIN included: stack errors come from recordings, which are hostile input.
 */
const char *errno_name(int err);

/* qsort for arrays that may be empty, and then NULL: qsort(NULL, 0, ...) is undefined behaviour. */
void sort_array(void *base, size_t count, size_t size, int (*compare)(const void *, const void *));

/*
 * The number of leading elements of array[0..count) whose member `field` is at most key, for an array sorted
 * by that member: a binary search for the first element above key (the symbol, range or entry at or before
 * an address is then array[result - 1]).
 */
#define UPPER_BOUND(array, count, field, key)                    \
	({                                                       \
		size_t lo_ = 0, hi_ = (count);                   \
		while (lo_ < hi_) {                              \
			size_t mid_ = lo_ + (hi_ - lo_) / 2;     \
			if ((array)[mid_].field <= (key))        \
				lo_ = mid_ + 1;                  \
			else                                     \
				hi_ = mid_;                      \
		}                                                \
		lo_;                                             \
	})

/* A hash of an address or pointer for open-addressing tables (the low bits are well mixed): the keys are
 * aligned, so their own low bits would crowd a few slots. */
static inline size_t address_hash(uint64_t key)
{
	key ^= key >> 17;
	key *= 0x9e3779b97f4a7c15ull;
	return (size_t)(key >> 7);
}

/*
 * A hash of the size bytes at data, a word at a time, for open-addressing tables (every byte reaches the low
 * bits); h is a seed, or the hash of what came before for a key in several parts. Byte-at-a-time FNV was a
 * fifth of a cold `stackrec symbolize` on C++ names, and a good part of hashing stacks in convert.
 */
static inline uint64_t hash_words(uint64_t h, const void *data, size_t size)
{
	const uint64_t k = 0x9e3779b97f4a7c15ull;
	const unsigned char *p = data;
	uint64_t w;

	for (; size >= sizeof(w); p += sizeof(w), size -= sizeof(w)) {
		memcpy(&w, p, sizeof(w));
		h = (h ^ w) * k;
		h ^= h >> 29;
	}
	if (size) {
		w = 0;
		memcpy(&w, p, size);
		h = (h ^ w) * k;
	}
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 32);
}

/*
 * A set of non-NULL pointers (DIEs, abbreviations), each numbered in the order it was added: the caller keeps
 * what it knows of each in an array indexed by that number. Zero-initialized is empty.
 */
struct pointer_table {
	const void **keys; /* open addressing; NULL is an empty slot */
	uint32_t *numbers; /* each key's number */
	size_t capacity, count;
};

/* pointer_table_add for a key not in t. */
size_t pointer_table_insert(struct pointer_table *t, const void *key, bool *added);

/* key's number; when key is new it is added with the next number (the count before) and *added is set. Inline
 * for a key already there, the common case (the symbolizer asks for each DIE of each chain: a call each was a
 * twentieth of a cold `stackrec symbolize` on C++). */
static inline size_t pointer_table_add(struct pointer_table *t, const void *key, bool *added)
{
	size_t mask = t->capacity - 1;

	*added = false;
	if (t->capacity) {
		for (size_t i = address_hash((uintptr_t)key) & mask; t->keys[i]; i = (i + 1) & mask)
			if (t->keys[i] == key)
				return t->numbers[i];
	}
	return pointer_table_insert(t, key, added);
}
void pointer_table_release(struct pointer_table *t);

/* Grows *array (of *capacity elements of elem_size bytes) to hold at least `needed` elements. */
/*
 * Starts fn(arg) on a new thread that takes no signals: SIGINT, SIGTERM and the rest are for the thread that
 * reads and stops (record's drain thread). SIGBUS stays unblocked: it is the thread's own fault, and a
 * blocked one would kill the process without file_cut_guard.c's line. Returns pthread_create's result (0, or
 * an errno).
 */
int thread_start_without_signals(pthread_t *thread, void *(*fn)(void *), void *arg);

void grow_array(void **array, size_t *capacity, size_t needed, size_t elem_size);
/* The test inline: most calls find the room there (a cold `stackrec symbolize` made 100,000 calls for it). */
#define GROW(array, capacity, needed)                                                          \
	do {                                                                                   \
		if ((size_t)(needed) > (capacity))                                             \
			grow_array((void **)&(array), &(capacity), (needed), sizeof(*(array))); \
	} while (0)

/* a + b, or UINT64_MAX where that overflows (sums of numbers a file gives: hostile ones must not wrap) */
static inline uint64_t add_saturating(uint64_t a, uint64_t b)
{
	uint64_t sum;

	return __builtin_add_overflow(a, b, &sum) ? UINT64_MAX : sum;
}

#endif
