/*
 * input_file.h — opening the files that convert and archive read because hostile input named them: a path
 * in a recording (perhaps under --symfs), a .gnu_debuglink, a file under a debug directory or in an archive.
 * Recordings and binaries come from other machines, so such a path may name a FIFO (open blocks until a
 * writer comes, forever), a device (/dev/zero never ends), a symbolic link out of --symfs, or an ELF file
 * whose compressed sections declare gigabytes (libelf allocates what they declare before inflating them).
 * Each is refused with one warning naming the file and the reason, and the lookup goes on without it.
 *
 * Files libdw and libdwfl open by themselves with a plain open() are checked before they can be opened:
 * input_file_candidate_ok for each file libdwfl's debuginfo search may open (module_file.c), and
 * module_file_dwarf_files_ok for those libdw opens while reading DWARF (split DWARF .dwo/.dwp files named by
 * DW_AT_dwo_name, the .gnu_debugaltlink file where libdw looks for it): a module whose DWARF names an unsafe
 * one is named from its symbol table only.
 */
#ifndef STACKREC_CONVERT_INPUT_FILE_H
#define STACKREC_CONVERT_INPUT_FILE_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Compressed sections (SHF_COMPRESSED, zlib or zstd) may declare at most this many times the size of their
 * file, all together, once decompressed. Debug sections compress 3 to 10 times; zlib cannot do better
 * than about 1000 to 1 even on zeros, and no real file is all zeros. 64 leaves a wide margin and keeps a
 * hostile file to 64 times its own size in memory.
 */
#define INPUT_FILE_MAX_INFLATION 64

/*
 * Opens path read-only without blocking (O_NONBLOCK: a FIFO opens at once) and keeps it only when it is a
 * regular file. With follow_links false a symbolic link as the last component is refused too (paths under
 * --symfs: an absolute link there points into this machine). Returns the fd, or -1: silently when there is
 * no file, with one warning when something else stands there; *reason (may be NULL) says why.
 */
int input_file_open(const char *path, bool follow_links, const char **reason);

/*
 * input_file_open for a path that may lie under root (--symfs, or NULL): the part of path below root is
 * resolved inside root (openat2 RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS), so that a symbolic link anywhere
 * in it — absolute, or climbing with "..", or through /proc magic links — stays in the tree, as it would on the
 * machine the tree comes from. A path not under root is opened as input_file_open does.
 */
int input_file_open_under(const char *root, const char *path, bool follow_links, const char **reason);

/*
 * input_file_candidate_ok for a file libdwfl opens by itself (with plain open(), following links) under root
 * (or NULL): also false, with one warning, when its links resolve out of root.
 */
bool input_file_candidate_ok_under(const char *root, const char *candidate);

/*
 * Whether the ELF file open on fd (file_size bytes) is safe to hand to libelf and libdw: the decompressed
 * sizes its SHF_COMPRESSED sections declare stay within INPUT_FILE_MAX_INFLATION times file_size. If not,
 * warns once naming path and returns false with *reason set.
 */
typedef struct Elf Elf;
bool input_file_elf_ok(Elf *elf, const char *path, size_t file_size, const char **reason);

/*
 * Whether a recorded path stays where it is joined: false when one of its components is "..", which under
 * --symfs would climb out of the tree (paths the kernel reports never have such components).
 */
bool input_file_path_ok(const char *path);

/*
 * Checks candidate, a file libdwfl is about to open by itself with a plain open(): true when nothing is
 * there, or a regular file (an ELF one with sane compressed sizes); false, with one warning, otherwise.
 */
bool input_file_candidate_ok(const char *candidate);

/* Prints "stackrec: warning: '<path>' <what>" once per path, however often it is refused. */
void input_file_refused(const char *path, const char *what);

#endif
