/*
 * util.h — the few helpers every part of stackrec shares: messages, allocation, hex, output files.
 *
 * Messages follow git's conventions: lowercase, no full stop, file names in quotes, one line each,
 * on stderr (primary output goes to stdout or -o), prefixed "stackrec: error: " or "stackrec: warning: ".
 * Allocation failures are not recoverable in a command-line tool: the x* allocators print and exit.
 */
#ifndef STACKREC_UTIL_H
#define STACKREC_UTIL_H

#include <stdbool.h>
#include <stddef.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

extern bool verbose; /* -v: diagnostics on stderr */

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
 * Whether an output at path may be written as PATH.tmp and renamed over it: when it does not exist yet or is
 * a regular file. A device, FIFO or symbolic link (/dev/null, /dev/stdout) must be written in place: a rename
 * would replace it with a regular file.
 */
bool output_replaceable(const char *path);

/* Writes n bytes as 2n lowercase hex digits and a NUL into out (build IDs). */
void hex_encode(char *out, const unsigned char *bytes, size_t n);

/* Grows *array (of *capacity elements of elem_size bytes) to hold at least `needed` elements. */
void grow_array(void **array, size_t *capacity, size_t needed, size_t elem_size);
#define GROW(array, capacity, needed) \
	grow_array((void **)&(array), &(capacity), (needed), sizeof(*(array)))

#endif
