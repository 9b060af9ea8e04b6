/*
 * debug_file.h — finds the bytes of a module on the converting machine: an ELF file whose build ID is
 * the one recorded.
 *
 * The lookup is one function with an ordered list of places so that new ones (a build-ID cache,
 * debuginfod) slot in without touching the symbolizer. Today it tries, in order:
 *   1. the path recorded at record time (" (deleted)" stripped), under --symfs DIR when given;
 *   2. the build-ID cache that `record` fills (cache_dir.h): CACHE/.build-id/xx/rest, unless --no-cache;
 *   3. for each --debug-dir DIR, then /usr/lib/debug (under --symfs): DIR/.build-id/xx/rest, then in
 *      the same order DIR/.build-id/xx/rest.debug (a debug file alone: module_file.h places it by the
 *      recorded mapping);
 *   4. debuginfod servers (DEBUGINFOD_URLS; convert --debuginfod URL sets it): the executable, else its
 *      debug file;
 *   5. for "[vdso]": the image embedded in the recording, else (without --symfs) the running kernel's vDSO.
 * A file is used only when its build ID equals the recorded one; a file with another build ID is never
 * used. A module recorded without a build ID is looked up at its path alone and used unverified (the vDSO
 * only when the recording was made under the kernel release running now).
 * Separate debug information for the file found (.gnu_debuglink, /usr/lib/debug) is libdwfl's job.
 * Every candidate is opened through input_file.h: FIFOs, devices, symbolic links under --symfs, recorded
 * paths with "..", and ELF files whose compressed sections declare absurd sizes are refused with a reason.
 */
#ifndef STACKREC_CONVERT_DEBUG_FILE_H
#define STACKREC_CONVERT_DEBUG_FILE_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct debug_file_search {
	const char **dirs; /* --debug-dir values, in order */
	size_t dir_count;
	const char *kernel_release; /* of the recording machine (HOST block), or NULL */
	const char *cache_dir;	    /* the build-ID cache, or NULL for none (--no-cache) */
	const char *symfs;	    /* --symfs: the recording machine's files are under this root, or NULL */
	const void *vdso_image;	    /* the recording's [vdso] (a FILE block), or NULL */
	size_t vdso_size;
	/* --archive: the directory its files were extracted to (also in dirs), and the archive file's identity
	 * ("archive PATH SIZE MTIME"), which stands for that directory in the caches' keys: the directory is a new
	 * one, with new files, at every run */
	const char *archive_dir;
	const char *archive_identity;
};

struct debug_file {
	char *path; /* the file found */
	int fd;	    /* open on it, read-only */
};

/*
 * Finds the file for a module recorded at path with build_id (lowercase hex, or NULL when unknown).
 * Returns 0 with *out filled, or -1 with *reason set to a static string saying why nothing was usable
 * ("no file with that build ID", "build ID mismatch", ...).
 */
int debug_file_find(const struct debug_file_search *search, const char *path, const char *build_id,
		    struct debug_file *out, const char **reason);

void debug_file_release(struct debug_file *f);

/* Whether a recorded path names anonymous memory ("//anon", "[anon:NAME]"): a JIT's code, which no file backs. */
bool debug_file_anonymous(const char *path);

/*
 * For a module whose file was found but for which libdwfl found no DWARF: whether a separate debug file was
 * there and passed over because it belongs to another build — DIR/.build-id/xx/rest.debug with another build
 * ID, or a .gnu_debuglink target (beside the recorded path, in its .debug/, or under a debug directory) whose
 * CRC is not the linked one. Says which with -v and returns "debug file of another build", else NULL.
 */
typedef struct Elf Elf;
const char *debug_file_rejected_debuginfo(const struct debug_file_search *search, const char *build_id,
					  const char *recorded_path, Elf *elf);

/*
 * The directories searched for debug files by build ID, in order: each --debug-dir, then /usr/lib/debug
 * (under --symfs). There are dir_count + 1; debug_file_dir returns the Ith, to be freed.
 */
char *debug_file_dir(const struct debug_file_search *search, size_t i);

/*
 * The separate debug file libdwfl's build-ID search takes for build_id (lowercase hex): DIR/.build-id/xx/
 * rest.debug in the first absolute DIR of path_list (a Dwfl_Callbacks debuginfo path) that has one, opened
 * as input_file.h allows, links resolved under root (--symfs, or NULL). Its compressed sections are
 * decompressed on all cores (zstd_sections.h). Returns an fd with the file's real path in *path (to free), or
 * -1 when there is none, or the first there is refused or of another build: libdwfl's search then decides.
 * cfi_only: only its .debug_frame is decompressed (zstd_sections_decompress).
 */
int debug_file_debuginfo_by_build_id(const char *root, const char *path_list, const char *build_id, bool cfi_only,
				     char **path);

/*
 * The dwz file (.gnu_debugaltlink: alt_name, with alt_build_id in lowercase hex) of the debug file debug_name,
 * which libdwfl asks its find_debuginfo callback for: by build ID as debug_file_debuginfo_by_build_id finds it,
 * else at alt_name, under root when absolute, else beside debug_name, when its build ID is alt_build_id. Its
 * compressed sections are decompressed on all cores (zstd_sections.h). Returns an fd with the file's real path
 * in *path (to free), or -1: libdw then looks for the file itself (libdw/dwarf_getalt.c).
 */
int debug_file_debuginfo_alt(const char *root, const char *path_list, const char *debug_name, const char *alt_name,
			     const char *alt_build_id, char **path);

/*
 * The separate debug file libdwfl's path search takes for a binary at file_name whose .gnu_debuglink names link
 * (a file name, no '/') with crc: in the order of elfutils' find_debuginfo_in_path, for each entry of
 * path_list, link in the binary's directory (""), in a subdirectory of it (a relative entry), or under an
 * absolute entry followed by each tail of the binary's directory; the first there is the one, when its build ID
 * is build_id (lowercase hex), or without one, when its CRC is crc. Returns an fd on a copy of it with its
 * compressed sections decompressed on all cores (zstd_sections.h), with its path in *path (to free), or -1:
 * when it has no compressed section, or the search meets anything unusual, libdwfl's own search decides (and
 * reads the file with libelf, which inflates zlib sections on one core and cannot read zstd ones).
 * cfi_only: only its .debug_frame is decompressed (zstd_sections_decompress).
 */
int debug_file_debuginfo_by_link(const char *root, const char *path_list, const char *file_name, const char *link,
				 uint32_t crc, const char *build_id, bool cfi_only, char **path);

/*
 * For `stackrec archive`, which bundles files as they are: the dwz file and the .gnu_debuglink target that
 * debug_file_debuginfo_alt and debug_file_debuginfo_by_link find, by the same search, open on the file itself
 * (checked as they check it, nothing decompressed). Each returns an fd with the file's path in *path (to free),
 * or -1.
 */
int debug_file_find_alt(const char *root, const char *path_list, const char *debug_name, const char *alt_name,
			const char *alt_build_id, char **path);
int debug_file_find_by_link(const char *root, const char *path_list, const char *file_name, const char *link,
			    uint32_t crc, const char *build_id, char **path);

/* The ":"-separated debuginfo path for libdwfl's Dwfl_Callbacks: its defaults, then the --debug-dirs. */
char *debug_file_dwfl_path(const struct debug_file_search *search);

#endif
/* Section NAME of elf and its header, or NULL. */
Elf_Scn *debug_file_section(Elf *elf, const char *name, GElf_Shdr *shdr);
/* Whether elf has DWARF of its own: a .debug_info with bytes (a stripped binary, or a file with only a build-ID
 * note, has none). Only such a file refers to a dwz file, or can stand for one. */
bool debug_file_has_debug_info(Elf *elf);

/* debug_file.path of a vDSO found as no file (step 5): the recording's image, or the running kernel's. */
#define DEBUG_FILE_RECORDED_VDSO "[vdso] embedded in the recording"
#define DEBUG_FILE_RUNNING_VDSO "[vdso] of the running kernel"

