/*
 * zstd_sections.h — makes zstd-compressed debug sections readable to elfutils 0.188 (Debian 12), which
 * knows only zlib (zstd came in 0.189): binutils' objcopy --compress-debug-sections=zstd, and newer
 * toolchains by default, would otherwise leave frames without lines or inline frames, silently. zlib-compressed
 * sections (Debian's debug packages) of separate debug files are decompressed here too, on all cores at once and
 * with ISA-L (about three times zlib's speed): libelf inflates them one after the other with zlib, and that was a
 * fifth of the instructions of a cold `stackrec symbolize` on libc. Sections nothing
 * here reads (location lists, macros, name indexes) are left out, empty, rather than inflated.
 */
#ifndef STACKREC_CONVERT_ZSTD_SECTIONS_H
#define STACKREC_CONVERT_ZSTD_SECTIONS_H

#include <stdbool.h>

/*
 * When the ELF file open on fd has zstd-compressed sections, or zlib-compressed ones with zlib, returns an fd
 * on a copy of it with those sections decompressed (the caller closes both): with zlib, the copy kept on disk
 * by an earlier run or made now and kept (debug_copies.h), else a memory copy. Returns -1 when it has
 * none, or when the copy failed (libelf then reads the file as it is). The copy has no directory: libdw finds
 * no file by a path relative to it (split DWARF's .dwo files without an absolute DW_AT_comp_dir).
 * With cfi_only, every compressed section but .debug_frame is left out: for the unwinder, which reads nothing
 * else of a debug file (its symbol table is not compressed), and asks for it whenever .eh_frame does not cover
 * a pc, in warm conversions too, where the symbolizer reads no DWARF at all.
 */
int zstd_sections_decompress(int fd, const char *path, bool zlib, bool cfi_only);

#endif
