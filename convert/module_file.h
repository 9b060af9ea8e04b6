/*
 * module_file.h — one module's file opened for offline work: found by build ID (debug_file.h), its
 * zstd-compressed sections made readable (zstd_sections.h), and reported to its own libdwfl session at
 * base 0, so that every file keeps its link-time addresses (two ET_EXEC executables could not share one
 * session). The symbolizer reads its DWARF and symbol table; the unwinder reads its CFI.
 *
 * Separate debug files (.gnu_debuglink, .build-id trees) are found by libdwfl's standard search when a
 * user first asks for DWARF or .debug_frame, not when the module is opened: the unwinder needs only
 * .eh_frame for most code, and loading libc's debug file for it would be wasted. That search opens files
 * itself, so the find_debuginfo callback checks every file it may open first (input_file.h).
 */
#ifndef STACKREC_CONVERT_MODULE_FILE_H
#define STACKREC_CONVERT_MODULE_FILE_H

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stdint.h>

#include "debug_file.h"
#include "profile.h"

/* The libdwfl callbacks every module session uses; owns the debuginfo path they point to. */
struct module_file_callbacks {
	Dwfl_Callbacks callbacks;
	char *debuginfo_path;
	char *symfs; /* --symfs, or NULL: the files libdwfl opens below it must not lead out of it */
	/* The unwinder's: of a file's compressed debug sections only .debug_frame is decompressed, and no dwz
	 * file is looked for (zstd_sections_decompress). */
	bool cfi_only;
};

void module_file_callbacks_init(struct module_file_callbacks *cb, const struct debug_file_search *search);
void module_file_callbacks_release(struct module_file_callbacks *cb);

struct module_file {
	Dwfl *dwfl;
	Dwfl_Module *mod;
	Elf *elf;	    /* the main file, for its program headers */
	GElf_Addr bias;	    /* Dwfl address = ELF address + bias */
	const char *reason; /* why the module cannot be used (static string), or NULL when it can */
	char *path;	    /* the file found */
	const char *symfs;  /* the search's --symfs, or NULL */
	/*
	 * The file found is a separate debug file alone (objcopy --only-keep-debug, Debian's -dbg packages): its
	 * program headers keep the addresses but its loadable segments hold no bytes, and their file offsets are
	 * gone. File offsets are then placed through the recorded mapping: the mapping at file offset map_offset
	 * is the executable segment, loaded from map_vaddr (its page-aligned address) for map_size bytes.
	 */
	bool debug_only;
	uint64_t map_offset, map_size;
	GElf_Addr map_vaddr;
	/* The PT_LOAD program headers, read once at open: module_file_address runs for every frame. */
	struct module_segment {
		uint64_t offset, size; /* p_offset, p_filesz */
		GElf_Addr vaddr;
		bool executable;
	} *segments;
	size_t segment_count;
	GElf_Addr entry; /* the ELF entry point (e_entry) as a Dwfl address, or 0 when the file has none */
	const struct module_file_callbacks *callbacks;
	/* module_file_open_lazy: the file has compressed sections, and copy_fd is open on it for
	 * module_file_copy_sections. */
	bool copy_pending;
	int copy_fd;
};

/*
 * Opens module m's file. On failure mf->reason says why; mf is then still safe to close. A debug file found
 * alone is used for symbols, lines and .debug_frame, placed by m's recorded mapping (m->start, m->end,
 * m->file_offset): see debug_only above.
 */
void module_file_open(struct module_file *mf, const struct profile_module *m, const struct debug_file_search *search,
		      const struct module_file_callbacks *cb);
/*
 * The same, but the file's own compressed sections (a Go binary's DWARF, a zstd-compressed binary) are copied
 * decompressed only by module_file_copy_sections, which the caller calls before it first reads the file's
 * symbol table, DWARF or .debug_frame: a module the symbol cache answers for needs none of them, and the copy
 * was a Go binary's whole DWARF inflated for nothing on every warm run. That call may change mf->dwfl, mod
 * and elf (a new session on the copy): nothing taken from the old ones may be kept across it.
 */
void module_file_open_lazy(struct module_file *mf, const struct profile_module *m,
			   const struct debug_file_search *search, const struct module_file_callbacks *cb);
void module_file_copy_sections(struct module_file *mf);
void module_file_close(struct module_file *mf);
/*
 * Why elf, of a file of size bytes, cannot be read as a whole ELF file, or NULL: its program and section header
 * tables must lie inside the file, its section count and name index make sense (libelf takes a table past the
 * end for no sections at all, and names nothing).
 */
const char *module_file_elf_damage(Elf *elf, uint64_t size);

/*
 * The Go build ID of elf (the .note.go.buildid note, owner "Go", type 4: "actionID/.../contentID", the last
 * part a hash of the binary's content) as "go-" and its bytes in lowercase hex, for the symbol cache of a
 * binary without a GNU build ID (Go's linker writes none by default). The note is hostile: NULL unless it is
 * 1 to GO_BUILD_ID_MAX printable bytes, no space (Go writes 83; the entry's name must stay under NAME_MAX).
 * The prefix keeps it apart from any GNU build ID (hex alone); the hex keeps it a safe file name. Allocated.
 */
#define GO_BUILD_ID_MAX 100
char *module_file_go_build_id(Elf *elf);

/*
 * Whether the files libdw opens by itself, with a plain open(), while reading dw (the DWARF of mf) are safe:
 * the .gnu_debugaltlink (dwz) file where libdw looks for it when libdwfl did not find it, split DWARF .dwo
 * files of skeleton units and the .dwp package. Each that exists must be a regular file (an ELF one with sane
 * compressed sizes): a FIFO would block libdw for good. When false (one warning said which file), dw must not
 * be read beyond its unit headers.
 */
bool module_file_dwarf_files_ok(const struct module_file *mf, Dwarf *dw);

/*
 * What the answers read from mf come from, as one string: the file found, and every file libdwfl's search could
 * take its DWARF or .debug_frame from (DIR/.build-id/xx/rest.debug in each debug directory; every candidate of
 * the walk checked_find_debuginfo makes before libdwfl's search: the .gnu_debuglink target, or BASENAME.debug,
 * beside the file, in its .debug/, under each debug directory after each tail of the file's directory, in the
 * .dwz directories), each that is a file as path, size and modification time. A debug file that turns up, changes or goes makes another identity: the symbol cache (keyed by it) and
 * the profile cache (which keeps the identity of every module the unwinder opened) are then rebuilt. The files
 * are looked at, not asked libdwfl for: its find_debuginfo keeps what it opens in the module, as if DWARF were
 * being read. build_id is the module's (lowercase hex) or NULL. NULL when the file found is no regular file (a
 * vDSO image) or none was found.
 */
char *module_file_identity(const struct module_file *mf, const char *build_id, const struct debug_file_search *search);

/* The Dwfl address of file offset off: through the PT_LOAD program headers, executable ones first (for a
 * debug file alone, through the recorded mapping). */
bool module_file_address(const struct module_file *mf, uint64_t off, Dwarf_Addr *addr);

#endif
