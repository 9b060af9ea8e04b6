/*
 * symbolizer.h — names every location of a profile, offline, with libdwfl.
 *
 * User locations are (module, file offset): the module's file is found by build ID (debug_file.h), the
 * offset becomes an ELF address through the PT_LOAD program headers, and DWARF gives the chain of
 * inlined functions at that address, innermost first, with source lines. Kernel locations are named
 * from the recording's kallsyms snapshot. Each distinct location is symbolized once, module by module,
 * so only one module's debug information is open at a time.
 *
 * Names, best first: DWARF function + file:line, ELF symbol (+ line when DWARF has lines), unnamed.
 * Every unnamed location gets a reason (profile_location.unnamed_reason).
 */
#ifndef STACKREC_CONVERT_SYMBOLIZER_H
#define STACKREC_CONVERT_SYMBOLIZER_H

#include <stdbool.h>
#include <stdint.h>

#include "debug_file.h"
#include "kernel_symbols.h"
#include "profile.h"

struct symbolizer_options {
	bool demangle;			  /* C++ and Rust names through libiberty (--no-demangle turns off) */
	struct debug_file_search search; /* where module files are looked for */
};

/* Symbolizes every location that has no frames yet, and sets the modules' has_* flags. */
void symbolize_profile(struct profile *profile, const struct kernel_symbols *kernel,
		       const struct symbolizer_options *options);

#endif
