/*
 * debug_copies.h — decompressed copies of compressed debug files, kept on disk from one run to the next.
 *
 * Debian's debug files (libc6-dbg, the other -dbg packages, their dwz files) have zlib-compressed sections, and
 * libdw reads a section only whole: every run that read their DWARF inflated them into its memory first
 * (zstd_sections.c), 10 MB for libc's and 25 MB for binutils' dwz file, whatever it then asked of them, and
 * took the time to. The first run that needs a file's sections now writes that copy to
 * CACHE/decompressed/ (CACHE: the build-ID and symbol caches' directory, cache_dir.h), as a temporary file
 * renamed into place; later runs map the copy as it is: they inflate nothing, and its pages count in their
 * memory only where libdw reads them (`stackrec symbolize` of 20,000 addresses of the assembler: 38 -> 11 MiB).
 * The directory is trimmed to $STACKREC_DECOMPRESSED_CACHE_MB (default 1024), least recently used first;
 * a copy larger than that is not kept. --no-cache (no cache directory) keeps none and reads none.
 *
 * A copy is named by a hash of its source's identity: the path, size, modification time, inode and device of
 * the compressed file (a package update makes a new copy) and DEBUG_COPIES_LAYOUT. It ends with a trailer, the
 * identity then "STKDCPY1" and the identity's length (8 bytes), after the ELF copy, whose size the source's
 * headers determine: a kept copy is used only when its size is exactly that plus the trailer and the trailer
 * is the identity, so a copy cut short (a full disk, a run killed while writing) or of another file is made
 * again, never read.
 */
#ifndef STACKREC_CONVERT_DEBUG_COPIES_H
#define STACKREC_CONVERT_DEBUG_COPIES_H

#include <stdbool.h>
#include <stdint.h>

/* Bump when zstd_sections.c lays out a copy differently (which sections it leaves out, where bodies go). */
#define DEBUG_COPIES_LAYOUT 1
#define DEBUG_COPIES_DEFAULT_CAP_MB 1024

/* Where copies are kept: cache_dir (copied), or NULL for nowhere (--no-cache); nowhere until called. Waits for
 * the copies on their way to the directory set before (debug_copies_keep). */
void debug_copies_set_dir(const char *cache_dir);

/* A copy being looked for or made (debug_copies_find, debug_copies_keep). */
struct debug_copy {
	int dir_fd;	/* CACHE/decompressed, or -1 */
	int fd;		/* the temporary file to fill, or -1 */
	char tmp[12];	/* its name */
	char name[24];	/* the copy's name */
	char *identity; /* of the source, as the trailer holds it */
	uint64_t size;	/* of the ELF copy, without the trailer */
};

/*
 * For a copy of size bytes of the file open on source_fd (at path): returns an fd, read-only, on the kept copy
 * when there is a valid one (the caller closes it), else -1. Then, with make, c->fd is a new temporary file of
 * size bytes (ftruncated) for the caller to fill, or -1 when none can be kept (no cache directory, over the cap,
 * an error). Either way debug_copies_keep must follow.
 */
int debug_copies_find(struct debug_copy *c, int source_fd, const char *path, uint64_t size, bool make);

/*
 * After the caller filled c->fd with the copy (filled: whether it did): appends the trailer, and leaves the rest
 * to a thread of its own: fdatasync, the rename into place, the trim of the directory (debug_copies_set_dir and
 * exit wait for it). Returns c->fd (still to be closed by the caller) when it was filled, whether or not keeping
 * it works, else -1; releases the rest of c.
 */
int debug_copies_keep(struct debug_copy *c, bool filled);

#endif
