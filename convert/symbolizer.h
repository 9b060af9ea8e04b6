/*
 * symbolizer.h — names every location of a profile, offline, with libdwfl.
 *
 * User locations are (module, file offset): the module's file is found by build ID (debug_file.h), the
 * offset becomes an ELF address through the PT_LOAD program headers, and DWARF gives the chain of
 * inlined functions at that address, innermost first, with source lines. Kernel locations are named
 * from the recording's kallsyms snapshot. Each distinct location is symbolized once, module by module,
 * so each thread has one module's debug information open at a time; only the modules convert prepared while
 * unwinding (symbolizer_module_prepare) stay open until their turn.
 *
 * Names, best first: DWARF function + file:line, ELF symbol (+ line when DWARF has lines), unnamed.
 * Every unnamed location gets a reason (profile_location.unnamed_reason).
 *
 * symbolizer_name_address() names one address of one open module; convert calls it for each location and
 * `stackrec symbolize` (symbolize.c) for each address it is asked, so both name code the same way.
 */
#ifndef STACKREC_CONVERT_SYMBOLIZER_H
#define STACKREC_CONVERT_SYMBOLIZER_H

#include <stdbool.h>
#include <stdint.h>

#include <elfutils/libdwfl.h>
#include <gelf.h>

#include "cu_index.h"
#include "debug_file.h"
#include "elf_symbols.h"
#include "kernel_symbols.h"
#include "module_file.h"
#include "profile.h"
#include "scope_index.h"
#include "symbol_cache.h"

struct symbolizer_options {
	bool demangle;			  /* C++ and Rust names through libiberty (--no-demangle turns off) */
	struct debug_file_search search; /* where module files are looked for */
	const char *symbol_cache_dir;	  /* the symbol cache (symbol_cache.h) is in CACHE/symbols; NULL: off */
	const char *cache_rules;	  /* the naming rules of the answers cached: "profile", "addr2line" */
	unsigned int jobs;		  /* modules symbolized at once, by as many threads (convert -j); 0 or 1: one */
};

/* Adds a --debug-dir (made absolute). -1 with a message when it cannot be used: a usage error. */
int symbolizer_options_add_debug_dir(struct symbolizer_options *options, const char *dir);
/* Frees the --debug-dir list. */
void symbolizer_options_release(struct symbolizer_options *options);

/* A function DIE's names as frame_from_die reads them (strings in the DWARF data), kept per DIE: the
 * functions of a profile are asked for again and again, and following DW_AT_abstract_origin for each was a
 * tenth of a cold `stackrec symbolize`. */
struct symbolizer_die_name {
	const char *linkage, *name;
	/* What frame_from_die makes of them, once per DIE rather than once per frame (a C++ function is on the
	 * chain of hundreds of addresses, and demangling its name each time was a tenth of a cold symbolize).
	 * NULL: an anonymous function. libdw's strings (valid while the module is open), but for a function
	 * name demangled here (function_owned): a copy of every name was 175 KiB of a cold `stackrec
	 * symbolize`'s 6.8 MiB on C++. */
	const char *function, *system_name;
	/* name_from_symbol's answer for a subprogram: the ELF symbol starting where it does (NULL: none). */
	const char *symbol_system; /* owned by libelf */
	char *symbol_function;
	/* An inlined subroutine's call site: DW_AT_call_file (libdw's string, NULL: none), line, column. Four
	 * attribute scans an inlined frame (dwarf_attr walks the DIE's attributes each time) were a sixth of
	 * a cold `stackrec symbolize` on C++. */
	const char *call_file;
	uint32_t call_line, call_column;
	uint32_t decl_line;
	/* Which of the above were read; the flags last, together: 72 bytes a DIE, not 88. */
	bool frame_names_read, function_owned, symbol_read, call_read;
};

/* One module's open file and debug information, for naming its addresses. */
struct symbolizer_module {
	struct module_file file;
	struct cu_index cu;
	struct scope_index scopes; /* each unit's scope tree, walked once */
	struct elf_symbols symbols; /* built when DWARF first leaves an address unnamed */
	struct pointer_table name_dies;	   /* the function DIEs whose names were read, numbering names */
	struct symbolizer_die_name *names; /* their names */
	size_t name_capacity;
	struct pointer_table symbol_names; /* ELF symbol names (libelf's strings) that named frames, numbering */
	char **symbol_functions;	   /* their function names (demangled with -C), each made once */
	size_t symbol_function_capacity;
	char **plt_names; /* "function@plt" names of PLT entries (symbolize_user), freed with the module */
	size_t plt_name_count, plt_name_capacity;
	struct pointer_table relative_files; /* line-table file names (libdw's) under a compilation directory */
	char **joined_files;		     /* their paths joined to it (full_path), each made once */
	size_t joined_file_capacity;
	struct pointer_table language_units; /* the units whose language was read, numbering mangles */
	bool *mangles;			     /* whether that unit's language mangles names (mangling_language) */
	size_t mangles_capacity;
	bool has_symtab;	  /* the file has a symbol table or DWARF at all */
	bool no_dwarf;		  /* its DWARF names files that are unsafe to open: not read (module_file.h) */
	const char *debug_reason; /* why it has no DWARF although a debug file was there, or NULL */
	bool loaded;		  /* has_symtab and debug_reason were found (DWARF is read then) */
	/* Set by the caller after opening: symbolizer_name_address's frames borrow their strings from the
	 * module (valid until it is closed; free only the array), and the symbol cache pools them by pointer.
	 * `stackrec symbolize` prints each answer at once: copying every name of every frame, freeing it and
	 * hashing it again for the cache was a third of its cold run on C++. */
	bool borrow_names;
	const struct profile_module *module;
	const struct symbolizer_options *options;
	struct symbol_cache cache; /* this module's answers from earlier runs, and those to add */
};

/* Opens module m's file the way convert does (by build ID, debug_file.h), and its symbol cache entry
 * (symbol_cache.h) when options->symbol_cache_dir is set; DWARF is read only when an address is not in the
 * cache. On failure st->file.reason says why; st is then still safe to close. m and options must outlive st. */
void symbolizer_module_open(struct symbolizer_module *st, const struct profile_module *m,
			    const struct symbolizer_options *options, const struct module_file_callbacks *callbacks);
/* Writes the answers added to the symbol cache, and closes everything. */
void symbolizer_module_close(struct symbolizer_module *st);

/* The answer cached for Dwfl address addr: true with *frames allocated (NULL when *count is 0). */
bool symbolizer_cached(struct symbolizer_module *st, Dwarf_Addr addr, struct profile_frame **frames, uint32_t *count);
/* Keeps the answer for addr in the symbol cache (a copy; with borrow_names, of frames symbolizer_name_address
 * gave). */
void symbolizer_cache_answer(struct symbolizer_module *st, Dwarf_Addr addr, const struct profile_frame *frames,
			     uint32_t count);

/*
 * Names Dwfl address addr of an open module (convert's locations and `stackrec symbolize` both come here):
 * the chain of functions at addr, innermost first, each with its file:line (the innermost at addr, the
 * others where the inner one was inlined), every frame but the last marked inlined; names demangled when
 * options->demangle. Where DWARF names no function, the ELF symbol covering addr does (with the line of
 * addr when DWARF has one), and *symbol receives it (else its st_info and st_value are 0). Returns the frame
 * count with *frames allocated (free with profile_frames_free; with st->borrow_names, free(*frames): the
 * strings are the module's), or 0 when nothing names addr.
 */
uint32_t symbolizer_name_address(struct symbolizer_module *st, Dwarf_Addr addr,
				 const struct symbolizer_options *options, struct profile_frame **frames,
				 GElf_Sym *symbol);

/*
 * The source position of Dwfl address addr from its unit's line table alone (for an address no DWARF function
 * covers: padding, code of a function without DWARF inside a unit's ranges) into f's file, line, column and
 * discriminator; false, f untouched, when no unit's ranges hold addr or its line table has no row for it.
 */
bool symbolizer_line_position(struct symbolizer_module *st, Dwarf_Addr addr, struct profile_frame *f);

/* Symbolizes every location that has no frames yet, and sets the modules' has_* flags: options->jobs modules
 * at a time, each by one thread; the result does not depend on the number. */
void symbolize_profile(struct profile *profile, const struct kernel_symbols *kernel,
		       const struct symbolizer_options *options);

/*
 * Opens module m as symbolizer_module_open does and, when the symbol cache has no entry for it (every address
 * will need them), reads its symbol table and DWARF now rather than at its first address: convert prepares
 * the modules on another thread while it is still unwinding (see convert.c), so that a second core hides
 * the cost of opening a large debug file. m must stay valid until st is closed.
 */
void symbolizer_module_prepare(struct symbolizer_module *st, const struct profile_module *m,
			       const struct symbolizer_options *options, const struct module_file_callbacks *callbacks);

/*
 * The module of index module opened by symbolizer_module_prepare on another thread, once it is (waiting for
 * it if it is being prepared), or NULL when it was not and will not be. Called from symbolize_profile's
 * threads at once.
 */
typedef struct symbolizer_module *(*symbolizer_prepared_fn)(void *ctx, uint32_t module);

/*
 * Names p's kernel locations not named yet from kernel (the recording's kallsyms), in the order of the locations,
 * interning a module for each kernel module named ("[ext4]"): what symbolize_profile does first. Apart, for
 * convert to name them before it keeps the profile (profile_cache.h): their names come from the recording alone.
 */
void symbolize_kernel_locations(struct profile *p, const struct kernel_symbols *kernel);

/* symbolize_profile, with the modules prepared(ctx, i) gives used and closed there instead of opening them
 * again. A module still being prepared is waited for only by the thread that takes its locations: the others
 * open and name the other modules meanwhile. */
void symbolize_profile_prepared(struct profile *profile, const struct kernel_symbols *kernel,
				const struct symbolizer_options *options, symbolizer_prepared_fn prepared, void *ctx);

#endif
