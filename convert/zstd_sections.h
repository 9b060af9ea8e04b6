/*
 * zstd_sections.h — makes zstd-compressed debug sections readable to elfutils 0.188 (Debian 12), which
 * knows only zlib (zstd came in 0.189): binutils' objcopy --compress-debug-sections=zstd, and newer
 * toolchains by default, would otherwise leave frames without lines or inline frames, silently.
 */
#ifndef STACKREC_CONVERT_ZSTD_SECTIONS_H
#define STACKREC_CONVERT_ZSTD_SECTIONS_H

/*
 * When the ELF file open on fd has zstd-compressed sections, returns an fd on a memory copy of it with those
 * sections decompressed (the caller closes both). Returns -1 when it has none, or when the copy failed.
 */
int zstd_sections_decompress(int fd, const char *path);

#endif
