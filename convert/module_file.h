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
};

/* Opens module m's file. On failure mf->reason says why; mf is then still safe to close. */
void module_file_open(struct module_file *mf, const struct profile_module *m, const struct debug_file_search *search,
		      const struct module_file_callbacks *cb);
void module_file_close(struct module_file *mf);

/* The Dwfl address of file offset off: through the PT_LOAD program headers, executable ones first. */
bool module_file_address(const struct module_file *mf, uint64_t off, Dwarf_Addr *addr);

#endif
