/*
 * symbolizer.c — names the locations of a profile with libdwfl and the kallsyms snapshot (see
 * symbolizer.h). The libdwfl use follows elfutils' src/addr2line.c: dwfl_report_elf, then per address
 * dwfl_module_addrdie + dwarf_getscopes for the innermost scope, dwarf_getscopes_die for the chain of
 * scopes that physically contain it, DW_AT_call_file/DW_AT_call_line of each inlined_subroutine for the
 * position in its caller, elf_symbols.c (libdwfl's dwfl_module_addrinfo rule, binary-searched) for the ELF symbol.
 * dwarf_getscopes is answered from each unit's scope tree walked once (scope_index.h), and answers are kept
 * between runs in the symbol cache (symbol_cache.h).
 *
 * One Dwfl per module file, reported at base 0: every file then keeps its own link-time addresses. One
 * Dwfl with each file at a distinct base would work for shared objects but not for two ET_EXEC
 * executables (both want 0x400000 and cannot move), and per-module Dwfls let us close each module's
 * debug information as soon as its locations are done, so memory does not grow with module count.
 */
#include "symbolizer.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <pthread.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../cache_dir.h"
#include "../util.h"
#include "call_site.h"
#include "demangle.h"
#include "die_attributes.h"

int symbolizer_options_add_debug_dir(struct symbolizer_options *options, const char *dir)
{
	char *real = realpath(dir, NULL);

	if (!real)
		return error("cannot use --debug-dir '%s': %s", dir, strerror(errno));
	options->search.dirs = xrealloc(options->search.dirs, (options->search.dir_count + 1) * sizeof(char *));
	options->search.dirs[options->search.dir_count++] = real;
	return 0;
}

void symbolizer_options_release(struct symbolizer_options *options)
{
	for (size_t i = 0; i < options->search.dir_count; i++)
		free((char *)options->search.dirs[i]);
	free((void *)options->search.dirs);
	options->search.dirs = NULL;
	options->search.dir_count = 0;
}

void symbolizer_module_open(struct symbolizer_module *st, const struct profile_module *m,
			    const struct symbolizer_options *options, const struct module_file_callbacks *callbacks)
{
	memset(st, 0, sizeof(*st));
	st->module = m;
	st->options = options;
	module_file_open_lazy(&st->file, m, &options->search, callbacks);
	if (st->file.reason)
		return;
	debug("'%s': symbolizing from %s", m->path, st->file.path);
	/* Without a GNU build ID, a Go binary is known by its Go build ID, read from the file found. */
	char *go_build_id = options->symbol_cache_dir && !m->build_id ? module_file_go_build_id(st->file.elf) : NULL;
	if (options->symbol_cache_dir && (m->build_id || go_build_id)) {
		char *identity = module_file_identity(&st->file, m->build_id, &options->search);
		/* Demangling changes the names: its answers are another entry. */
		char *rules = xasprintf("%d-%s%s", SYMBOL_ANSWERS_REVISION,
					options->cache_rules ? options->cache_rules : "profile", options->demangle ? "-C" : "");
		struct symbol_cache_key key = { .build_id = m->build_id ? m->build_id : go_build_id,
						.rules = rules,
						.identity = identity };

		if (identity)
			symbol_cache_open(&st->cache, options->symbol_cache_dir, &key);
		free(identity);
		free(rules);
		if (st->cache.valid) {
			st->has_symtab = symbol_cache_has_symtab(&st->cache);
			/* The reason outlives the entry (it names unnamed locations): asked again, in the rare case
			 * there is one, rather than pointing into the mapped file. */
			if (symbol_cache_debug_reason(&st->cache))
				st->debug_reason = debug_file_rejected_debuginfo(&options->search, m->build_id, m->path,
										 st->file.elf);
		}
	}
	free(go_build_id);
}

/* Reads the module's symbol table and DWARF, for the first address not in the cache. */
static void symbolizer_module_load(struct symbolizer_module *st)
{
	const struct profile_module *m = st->module;
	Dwarf_Addr dbias;
	Dwarf *dw;

	if (st->loaded || st->file.reason)
		return;
	st->loaded = true;
	module_file_copy_sections(&st->file); /* the first time the symbol table or DWARF is read */
	st->has_symtab = dwfl_module_getsymtab(st->file.mod) > 0;
	st->debug_reason = NULL;
	if ((dw = dwfl_module_getdwarf(st->file.mod, &dbias)) && !module_file_dwarf_files_ok(&st->file, dw))
		st->no_dwarf = true;
	else if (dw)
		st->has_symtab = true;
	else
		st->debug_reason =
			debug_file_rejected_debuginfo(&st->options->search, m->build_id, m->path, st->file.elf);
}

void symbolizer_module_prepare(struct symbolizer_module *st, const struct profile_module *m,
			       const struct symbolizer_options *options, const struct module_file_callbacks *callbacks)
{
	symbolizer_module_open(st, m, options, callbacks);
	if (!st->cache.valid)
		symbolizer_module_load(st);
}

bool symbolizer_cached(struct symbolizer_module *st, Dwarf_Addr addr, struct profile_frame **frames, uint32_t *count)
{
	return symbol_cache_lookup(&st->cache, addr, frames, count);
}

void symbolizer_cache_answer(struct symbolizer_module *st, Dwarf_Addr addr, const struct profile_frame *frames,
			     uint32_t count)
{
	if (st->borrow_names)
		symbol_cache_add_stable(&st->cache, addr, frames, count);
	else
		symbol_cache_add(&st->cache, addr, frames, count);
}

void symbolizer_module_close(struct symbolizer_module *st)
{
	if (st->cache.pending_count)
		symbolizer_module_load(st); /* the entry records what the module has */
	/* The module's DWARF and the caches over it go before the entry is written (its answers hold copies of
	 * their strings): building the entry then reuses their memory. Written first, it touched new memory on
	 * top of theirs, a cold `stackrec symbolize`'s peak on C++. */
	cu_index_release(&st->cu);
	scope_index_release(&st->scopes);
	elf_symbols_release(&st->symbols);
	for (size_t i = 0; i < st->name_dies.count; i++) {
		if (st->names[i].function_owned)
			free((char *)st->names[i].function);
		free(st->names[i].symbol_function);
	}
	pointer_table_release(&st->name_dies);
	free(st->names);
	for (size_t i = 0; i < st->relative_files.count; i++)
		free(st->joined_files[i]);
	pointer_table_release(&st->relative_files);
	free(st->joined_files);
	for (size_t i = 0; i < st->symbol_names.count; i++)
		free(st->symbol_functions[i]);
	pointer_table_release(&st->symbol_names);
	free(st->symbol_functions);
	for (size_t i = 0; i < st->plt_name_count; i++)
		free(st->plt_names[i]);
	free(st->plt_names);
	pointer_table_release(&st->language_units);
	free(st->mangles);
	module_file_close(&st->file);
	symbol_cache_close(&st->cache, st->has_symtab, st->debug_reason); /* debug_reason: a static string */
	memset(st, 0, sizeof(*st));
}

/* A string for a frame: the module's own (borrow_names), or a copy. */
static char *frame_string(const struct symbolizer_module *st, const char *s)
{
	return st->borrow_names || !s ? (char *)s : xstrdup(s);
}

static void frame_string_free(const struct symbolizer_module *st, char *s)
{
	if (!st->borrow_names)
		free(s);
}

/* The function name of a frame named by ELF symbol name (libelf's string): demangled with -C, made once per
 * symbol and kept by the module. */
static const char *symbol_function(struct symbolizer_module *st, const char *name,
				   const struct symbolizer_options *options)
{
	bool added;
	size_t n = pointer_table_add(&st->symbol_names, name, &added);

	if (added) {
		GROW(st->symbol_functions, st->symbol_function_capacity, n + 1);
		st->symbol_functions[n] = demangle_name(name, options->demangle);
	}
	return st->symbol_functions[n];
}

static const char *die_string(Dwarf_Die *die, unsigned int name)
{
	Dwarf_Attribute attr;

	return dwarf_formstring(dwarf_attr_integrate(die, name, &attr));
}

static uint32_t die_udata(Dwarf_Die *die, unsigned int name, bool integrate)
{
	Dwarf_Attribute attr, *a;
	Dwarf_Word value;

	a = integrate ? dwarf_attr_integrate(die, name, &attr) : dwarf_attr(die, name, &attr);
	if (!a || dwarf_formudata(a, &value) != 0)
		return 0;
	return value > UINT32_MAX ? 0 : (uint32_t)value;
}

static void read_call_site(struct symbolizer_module *st, struct symbolizer_die_name *e, Dwarf_Die *die,
			   bool has_call_file, uint32_t call_file);

/* What is known of function DIE die, its names read the first time (struct symbolizer_die_name): its index
 * in st->names (a pointer would not outlive the table's growth). An inlined subroutine's call site is read
 * then too, in the same pass over its attributes (die_attributes.h): the chain goes on to its caller. */
static size_t die_entry(struct symbolizer_module *st, Dwarf_Die *die)
{
	struct symbolizer_die_name *e;
	struct die_attributes attrs;
	bool added;
	size_t n = pointer_table_add(&st->name_dies, die->addr, &added); /* a DIE's place in the DWARF data */

	if (!added)
		return n;
	GROW(st->names, st->name_capacity, n + 1);
	e = &st->names[n];
	*e = (struct symbolizer_die_name){ 0 };
	if (die_attributes_read(die, &attrs)) {
		e->linkage = attrs.linkage;
		e->name = attrs.name;
		e->decl_line = attrs.decl_line;
		if (dwarf_tag(die) == DW_TAG_inlined_subroutine) {
			e->call_line = attrs.call_line;
			e->call_column = attrs.call_column;
			read_call_site(st, e, die, attrs.has_call_file, attrs.call_file);
		}
		return n;
	}
	e->linkage = die_string(die, DW_AT_linkage_name);
	if (!e->linkage)
		e->linkage = die_string(die, DW_AT_MIPS_linkage_name);
	e->name = die_string(die, DW_AT_name);
	e->decl_line = die_udata(die, DW_AT_decl_line, true);
	return n;
}

/* A frame's function and system names from a DIE's: once per DIE (the module is always asked with the
 * options it was opened with). */
static void read_frame_names(struct symbolizer_die_name *e, const struct symbolizer_options *options)
{
	const char *linkage = e->linkage, *name = e->name;

	e->frame_names_read = true;
	if (!linkage && !name)
		return;
	e->system_name = linkage ? linkage : name;
	if (linkage && options->demangle) {
		char *demangled = demangle_name(linkage, true);

		if (strcmp(demangled, linkage)) {
			e->function = demangled;
			e->function_owned = true;
			return;
		}
		free(demangled);
		if (name) { /* not mangled after all: the plain name reads better */
			e->function = name;
			return;
		}
	}
	/* --no-demangle shows what the symbol table would: the linkage name */
	e->function = linkage && !options->demangle ? linkage : name ? name : linkage;
}

/* Fills a frame's names from a function DIE's, st->names[n]; false when it has none. */
static bool frame_from_die(struct symbolizer_module *st, struct profile_frame *f, size_t n,
			   const struct symbolizer_options *options)
{
	struct symbolizer_die_name *names = &st->names[n];

	if (!names->frame_names_read)
		read_frame_names(names, options);
	if (!names->system_name)
		return false;
	f->system_name = frame_string(st, names->system_name);
	f->function = frame_string(st, names->function);
	f->start_line = names->decl_line;
	return true;
}

#ifndef DW_LANG_C17
#define DW_LANG_C17 0x2c /* DWARF 5's, newer than elfutils 0.188's dwarf.h */
#endif

/*
 * Whether the unit's language may name a function otherwise than its symbol does: binutils trusts a plain
 * DW_AT_name only in C and the languages it lists with it (dwarf2.c's non_mangled), and names a function of any
 * other by the symbol starting where it does, as llvm-symbolizer does too: C++'s std::function handlers, Go's
 * assembly functions (runtime.rt0_go.abi0) and a Fortran main program (MAIN__). C's names stay DWARF's: gcc's
 * clones keep their function's name there (foo, not foo.constprop.0). Read once per unit.
 */
static bool mangling_language(struct symbolizer_module *st, Dwarf_Die *cudie)
{
	bool added;
	size_t n = pointer_table_add(&st->language_units, cudie->addr, &added);

	if (!added)
		return st->mangles[n];
	GROW(st->mangles, st->mangles_capacity, n + 1);
	switch (dwarf_srclang(cudie)) {
	case DW_LANG_C89:
	case DW_LANG_C:
	case DW_LANG_C99:
	case DW_LANG_C11:
	case DW_LANG_C17:
	case DW_LANG_UPC:
	case DW_LANG_Ada83:
	case DW_LANG_Ada95:
	case DW_LANG_Cobol74:
	case DW_LANG_Cobol85:
	case DW_LANG_Fortran77:
	case DW_LANG_Pascal83:
	case DW_LANG_PLI:
	case DW_LANG_Mips_Assembler:
	case -1: /* no DW_AT_language: nothing says its names differ */
		return st->mangles[n] = false;
	default:
		return st->mangles[n] = true;
	}
}

/*
 * A C++ function whose DWARF gives only DW_AT_name (gcc's std::function handlers of a lambda: _M_manager,
 * _M_invoke) is named, as binutils names it, by the ELF symbol that starts where the function does: its
 * mangled name says which instance it is. Nothing changes where no symbol starts there.
 */
static void name_from_symbol(struct symbolizer_module *st, Dwarf_Die *die, size_t n, Dwarf_Addr dbias,
			     const struct symbolizer_options *options, struct profile_frame *f)
{
	struct symbolizer_die_name *e = &st->names[n];

	if (!e->symbol_read) { /* once per DIE: the answer is the DIE's, not the address's */
		Dwarf_Attribute attr;
		Dwarf_Addr base, low, high;
		GElf_Sym sym;
		const char *name;

		e->symbol_read = true;
		if (dwarf_attr_integrate(die, DW_AT_linkage_name, &attr) ||
		    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr) ||
		    dwarf_ranges(die, 0, &base, &low, &high) <= 0)
			return;
		name = elf_symbols_lookup(&st->symbols, st->file.mod, low + dbias, &sym);
		e = &st->names[n]; /* the lookup did not add DIEs, but stay safe from the table growing */
		if (!name || sym.st_value + st->file.bias != low + dbias || !strcmp(name, f->system_name))
			return;
		e->symbol_system = name;
		e->symbol_function = demangle_name(name, options->demangle);
	}
	if (!e->symbol_system)
		return;
	frame_string_free(st, f->function);
	frame_string_free(st, f->system_name);
	f->system_name = frame_string(st, e->symbol_system);
	f->function = frame_string(st, e->symbol_function);
}

/* The call site's file: DW_AT_call_file's entry call_file in the files of die's unit. Index 0 is the CU's
 * primary source file in DWARF 5 (clang's default), and libdw's "???" placeholder in DWARF 2-4, where it means
 * no file. */
/*
 * File name file (libdw's string) of unit cudie's line table as binutils, eu-addr2line and llvm-symbolizer print
 * it: a relative one under the unit's compilation directory. libdw joins a file's name to its directory entry
 * only, which is relative in a build with relative paths (`gcc -Iinclude src/main.c` gives `src/main.c`), and
 * a bare name in DWARF 4's directory 0. DWARF 5's directory 0 is the compilation directory itself, which libdw
 * joined already: not twice (binutils 2.40 prints Debian libc's `./nptl/./nptl/...`; llvm-symbolizer does not).
 */
static const char *full_path(struct symbolizer_module *st, Dwarf_Die *cudie, const char *file)
{
	Dwarf_Attribute attr;
	const char *dir;
	size_t n, dir_length;
	bool added;

	if (!file || file[0] == '/' || !cudie)
		return file;
	dir = dwarf_formstring(dwarf_attr(cudie, DW_AT_comp_dir, &attr));
	if (!dir || !*dir)
		return file;
	dir_length = strlen(dir);
	if (!strncmp(file, dir, dir_length) && file[dir_length] == '/')
		return file;
	n = pointer_table_add(&st->relative_files, file, &added); /* libdw keeps one string per file of a table */
	if (added) {
		GROW(st->joined_files, st->joined_file_capacity, n + 1);
		st->joined_files[n] = xasprintf("%s%s%s", dir, dir[dir_length - 1] == '/' ? "" : "/", file);
	}
	return st->joined_files[n];
}

static void read_call_site(struct symbolizer_module *st, struct symbolizer_die_name *e, Dwarf_Die *die,
			   bool has_call_file, uint32_t call_file)
{
	Dwarf_Die cu;
	Dwarf_Files *files;
	size_t nfiles;

	e->call_read = true;
	if (has_call_file && dwarf_diecu(die, &cu, NULL, NULL) && dwarf_getsrcfiles(&cu, &files, &nfiles) == 0 &&
	    call_file < nfiles) {
		const char *file = dwarf_filesrc(files, call_file, NULL, NULL);

		if (file && strcmp(file, "???") != 0)
			e->call_file = full_path(st, &cu, file);
	}
}

/* Where inlined subroutine die (st->names[n]) was called: its DW_AT_call_file, call_line and call_column,
 * read once per DIE (die_entry reads them with its names). */
static const struct symbolizer_die_name *call_site(struct symbolizer_module *st, Dwarf_Die *die, size_t n)
{
	struct symbolizer_die_name *e = &st->names[n];

	if (e->call_read)
		return e;
	e->call_line = die_udata(die, DW_AT_call_line, false);
	e->call_column = die_udata(die, DW_AT_call_column, false);
	read_call_site(st, e, die, dwarf_hasattr(die, DW_AT_call_file), die_udata(die, DW_AT_call_file, false));
	return e;
}

/* The source position of addr from the line table of its CU. */
static void line_of(struct symbolizer_module *st, Dwarf_Die *cudie, Dwarf_Addr dwarf_addr,
		    struct profile_frame *f)
{
	Dwarf_Line *line = dwarf_getsrc_die(cudie, dwarf_addr);
	const char *file;
	int lineno = 0, col = 0;
	unsigned int discriminator = 0;

	if (!line)
		return;
	file = dwarf_linesrc(line, NULL, NULL);
	dwarf_lineno(line, &lineno);
	dwarf_linecol(line, &col);
	dwarf_linediscriminator(line, &discriminator);
	if (file)
		f->file = frame_string(st, full_path(st, cudie, file));
	f->line = lineno > 0 ? (uint32_t)lineno : 0;
	f->column = col > 0 ? (uint32_t)col : 0;
	f->discriminator = discriminator;
}

/*
 * Whether unit cudie's ranges hold dwarf_addr (or it has none to say). libdwfl finds the unit of an address
 * between units by its aranges, filled up to the next unit's start: code no unit describes (_start, crt's
 * functions) then gets the preceding unit's last line row, and gcc ends a sequence with a row at the end
 * address itself, which libdw's line search does not take for the end of the sequence. binutils checks the
 * address against each sequence's range; the unit's ranges are the union of them.
 */
static bool unit_holds(Dwarf_Die *cudie, Dwarf_Addr dwarf_addr)
{
	if (!dwarf_hasattr(cudie, DW_AT_ranges) && !dwarf_hasattr(cudie, DW_AT_high_pc))
		return true;
	return dwarf_haspc(cudie, dwarf_addr) == 1;
}

bool symbolizer_line_position(struct symbolizer_module *st, Dwarf_Addr addr, struct profile_frame *f)
{
	Dwarf_Die cudie_mem, *cudie;
	Dwarf_Addr bias;

	if (st->no_dwarf)
		return false;
	cudie = cu_index_addrdie(&st->cu, st->file.mod, addr, &cudie_mem, &bias);
	if (!cudie || !unit_holds(cudie, addr - bias))
		return false;
	line_of(st, cudie, addr - bias, f);
	return f->file || f->line;
}

/*
 * The inline chain at Dwfl address addr, innermost first, into *frames. Returns the frame count, 0 when
 * DWARF does not cover addr. *cu_out receives the CU (for line lookups by the caller) when found.
 */
static uint32_t dwarf_frames(struct symbolizer_module *st, Dwarf_Addr addr, const struct symbolizer_options *options,
			     struct profile_frame **frames, Dwarf_Die *cu_out, Dwarf_Addr *cu_bias, bool *have_cu)
{
	Dwarf_Die cudie_mem, *cudie, *scopes = NULL, *chain = NULL, *libdw_chain = NULL;
	struct profile_frame *out = NULL;
	uint32_t count = 0;
	Dwarf_Addr dbias;
	int nscopes, nchain;
	int prev = -1; /* index in chain of the previous (inner) function scope */
	size_t prev_entry = 0; /* its st->names entry */

	*have_cu = false;
	if (st->no_dwarf)
		return 0;
	cudie = cu_index_addrdie(&st->cu, st->file.mod, addr, &cudie_mem, &dbias);
	if (!cudie)
		return 0;
	*cu_out = *cudie;
	*cu_bias = dbias;
	*have_cu = true;
	nchain = scope_index_chain(&st->scopes, cudie, addr - dbias, &chain);
	if (nchain == -1) { /* a unit the index could not walk: libdw's own answer, read from the unit's root */
		chain = NULL;
		nscopes = dwarf_getscopes(cudie, addr - dbias, &scopes);
		if (nscopes <= 0)
			goto out;
		nchain = dwarf_getscopes_die(&scopes[0], &libdw_chain);
		chain = libdw_chain; /* ours to free, unlike the index's */
	}
	if (nchain <= 0)
		goto out;
	/* malloc and memset, not calloc: glibc's calloc takes no block from the thread cache, where the answer
	 * freed before this one went, and on a cold `stackrec symbolize` on C++ cost four times as much. */
	out = xmalloc((size_t)nchain * sizeof(*out));
	memset(out, 0, (size_t)nchain * sizeof(*out));
	for (int i = 0; i < nchain; i++) {
		struct profile_frame *f;
		size_t entry;
		int tag = dwarf_tag(&chain[i]);

		if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine && tag != DW_TAG_entry_point)
			continue; /* not a function's scope */
		f = &out[count];
		entry = die_entry(st, &chain[i]);
		if (!frame_from_die(st, f, entry, options)) {
			/* An anonymous function scope: keep the chain, name it as addr2line does. */
			f->function = frame_string(st, "??");
			f->system_name = frame_string(st, "??");
		} else if (tag == DW_TAG_subprogram && mangling_language(st, cudie)) {
			name_from_symbol(st, &chain[i], entry, dbias, options, f);
		}
		if (prev < 0) {
			line_of(st, cudie, addr - dbias, f);
		} else {
			/* Positioned where the inner scope was inlined into this one. */
			const struct symbolizer_die_name *call = call_site(st, &chain[prev], prev_entry);

			f->line = call->call_line;
			f->column = call->call_column;
			f->file = frame_string(st, call->call_file);
		}
		count++;
		if (tag != DW_TAG_inlined_subroutine)
			break; /* the physical function: the chain ends here */
		prev = i;
		prev_entry = entry;
	}
	for (uint32_t j = 0; j + 1 < count; j++)
		out[j].inlined = true;
out:
	free(scopes);
	free(libdw_chain);
	if (!count) {
		free(out);
		return 0;
	}
	*frames = out;
	return count;
}

static void set_unnamed(struct profile *p, struct profile_location *loc, const char *reason)
{
	loc->frames = PROFILE_UNNAMED_FRAMES;
	loc->frame_count = 1;
	loc->unnamed_reason = reason;
	__atomic_fetch_add(&p->unnamed_locations, 1, __ATOMIC_RELAXED); /* symbolize_profile's threads share it */
}

uint32_t symbolizer_name_address(struct symbolizer_module *st, Dwarf_Addr addr,
				 const struct symbolizer_options *options, struct profile_frame **frames_out,
				 GElf_Sym *symbol)
{
	struct profile_frame *frames = NULL;
	const char *name;
	Dwarf_Die cudie;
	Dwarf_Addr cu_bias = 0;
	uint32_t count;
	bool have_cu;

	symbolizer_module_load(st);
	memset(symbol, 0, sizeof(*symbol));
	count = dwarf_frames(st, addr, options, &frames, &cudie, &cu_bias, &have_cu);
	/* The ELF symbol only when DWARF did not name the function. */
	name = !count || !strcmp(frames[count - 1].function, "??")
		       ? elf_symbols_lookup(&st->symbols, st->file.mod, addr, symbol)
		       : NULL;
	if (!count && name) {
		frames = xcalloc(1, sizeof(*frames));
		frames[0].system_name = frame_string(st, name);
		frames[0].function = frame_string(st, symbol_function(st, name, options));
		if (have_cu && unit_holds(&cudie, addr - cu_bias))
			line_of(st, &cudie, addr - cu_bias, &frames[0]);
		count = 1;
	} else if (count && !strcmp(frames[count - 1].function, "??") && name) {
		frame_string_free(st, frames[count - 1].function);
		frame_string_free(st, frames[count - 1].system_name);
		frames[count - 1].system_name = frame_string(st, name);
		frames[count - 1].function = frame_string(st, symbol_function(st, name, options));
	} else if (!name) {
		memset(symbol, 0, sizeof(*symbol));
	}
	*frames_out = frames;
	return count;
}

/* A string the module keeps until it is closed: "NAME@plt". */
static const char *plt_string(struct symbolizer_module *st, const char *name)
{
	GROW(st->plt_names, st->plt_name_capacity, st->plt_name_count + 1);
	return st->plt_names[st->plt_name_count++] = xasprintf("%s@plt", name);
}

/*
 * The frame of a PLT entry, which no symbol covers: named for the function its GOT slot's relocation names,
 * "clock_gettime@plt", as perf names them (synthesized from .rela.plt). 0 where the entry is none of those (the
 * lazy-binding entry 0, an IFUNC's). Not in the symbol cache, which holds symbolize's answers: addr2line, whose
 * output symbolize keeps, names no PLT entry.
 */
static uint32_t plt_frame(struct symbolizer_module *st, Dwarf_Addr addr, const struct symbolizer_options *options,
			  struct profile_frame **frames)
{
	const char *target = call_site_plt_function(&st->file, addr - st->file.bias);

	if (!target || !*target)
		return 0;
	*frames = xcalloc(1, sizeof(**frames));
	(*frames)[0].system_name = frame_string(st, plt_string(st, target));
	(*frames)[0].function = frame_string(st, plt_string(st, symbol_function(st, target, options)));
	return 1;
}

static void symbolize_user(struct profile *p, struct profile_location *loc, struct symbolizer_module *st,
			   const struct symbolizer_options *options)
{
	struct profile_module *m = &p->modules[loc->module];
	struct profile_frame *frames = NULL;
	GElf_Addr addr;
	GElf_Sym sym;
	uint32_t count;

	if (st->file.reason)
		return set_unnamed(p, loc, st->file.reason);
	if (!module_file_address(&st->file, loc->file_offset, &addr))
		return set_unnamed(p, loc, "address outside the file's loadable segments");
	if (loc->is_return_address && addr)
		addr--; /* the call instruction, not the one after it */

	if (!symbolizer_cached(st, addr, &frames, &count)) {
		count = symbolizer_name_address(st, addr, options, &frames, &sym);
		symbolizer_cache_answer(st, addr, frames, count);
	}
	if (!count)
		count = plt_frame(st, addr, options, &frames);
	if (!count)
		return set_unnamed(p, loc, st->debug_reason		? st->debug_reason
					   : st->has_symtab ? "no symbol covers the address"
							    : "no symbols");
	loc->frames = frames;
	loc->frame_count = count;
	m->has_functions = true;
	for (uint32_t i = 0; i < count; i++) {
		if (frames[i].file)
			m->has_filenames = true;
		if (frames[i].line)
			m->has_line_numbers = true;
		if (frames[i].inlined)
			m->has_inline_frames = true;
	}
}

static void symbolize_kernel(struct profile *p, struct profile_location *loc, const struct kernel_symbols *ks)
{
	uint64_t addr = loc->address - (loc->is_return_address && loc->address ? 1 : 0);
	const struct kernel_symbol *sym;
	uint32_t module;

	if (ks->hidden)
		return set_unnamed(p, loc, PROFILE_UNNAMED_KERNEL_HIDDEN);
	if (!ks->count)
		return set_unnamed(p, loc, ks->cut ? PROFILE_UNNAMED_KALLSYMS_CUT : PROFILE_UNNAMED_NO_KALLSYMS);
	sym = kernel_symbols_find(ks, addr);
	if (!sym)
		return set_unnamed(p, loc, PROFILE_UNNAMED_NO_KERNEL_SYMBOL);
	if (sym->module) {
		char *path = xasprintf("[%s]", sym->module);

		module = profile_intern_module(p, path, NULL, 0, 0, 0, true);
		free(path);
		loc->module = module;
	}
	loc->frames = xcalloc(1, sizeof(*loc->frames));
	loc->frame_count = 1;
	loc->frames[0].function = xstrdup(sym->name);
	loc->frames[0].system_name = xstrdup(sym->name);
	if (loc->module != PROFILE_NO_MODULE)
		p->modules[loc->module].has_functions = true;
}

static int compare_by_module(const void *a, const void *b, void *ctx)
{
	const struct profile *p = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	uint32_t mx = p->locations[x].module, my = p->locations[y].module;

	if (mx != my)
		return mx < my ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* The work of symbolize_profile's threads: the user locations in order[], grouped by module; each group is
 * taken by one thread, which opens that module once and names all its locations. */
struct module_groups {
	struct profile *profile;
	const struct symbolizer_options *options;
	const struct module_file_callbacks *callbacks;
	symbolizer_prepared_fn prepared; /* NULL: every module opened here */
	void *prepared_ctx;
	const uint32_t *order;
	size_t *starts;	  /* group g is order[starts[g] .. starts[g + 1]) */
	size_t *schedule; /* the groups in the order they are taken: larger first, so that the longest is not
			     the last one started */
	size_t count;
	size_t next; /* the next entry of schedule[] to take, shared by the threads */
};

static void *symbolize_groups(void *arg)
{
	struct module_groups *w = arg;
	size_t k;

	while ((k = __atomic_fetch_add(&w->next, 1, __ATOMIC_RELAXED)) < w->count) {
		size_t g = w->schedule[k];
		uint32_t module = w->profile->locations[w->order[w->starts[g]]].module;
		struct symbolizer_module own, *st = w->prepared ? w->prepared(w->prepared_ctx, module) : NULL;

		if (!st) {
			st = &own;
			symbolizer_module_open(&own, &w->profile->modules[module], w->options, w->callbacks);
		}
		for (size_t i = w->starts[g]; i < w->starts[g + 1]; i++)
			symbolize_user(w->profile, &w->profile->locations[w->order[i]], st, w->options);
		symbolizer_module_close(st);
	}
	return NULL;
}

static int compare_by_group_size(const void *a, const void *b, void *ctx)
{
	const size_t *starts = ctx;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	size_t sx = starts[x + 1] - starts[x], sy = starts[y + 1] - starts[y];

	if (sx != sy)
		return sx > sy ? -1 : 1;
	return x < y ? -1 : x > y;
}

/*
 * Modules are independent: each has its own Dwfl, and a thread writes only the locations and the module of
 * the group it took, so the profile comes out the same for any number of threads. Only what they share is
 * guarded: unnamed_locations (atomic) and the list of refused files (input_file.c).
 */
static void run_groups(struct module_groups *w, unsigned int jobs)
{
	pthread_t *threads;
	unsigned int started = 0;

	w->schedule = xcalloc(w->count, sizeof(*w->schedule));
	for (size_t g = 0; g < w->count; g++)
		w->schedule[g] = g;
	qsort_r(w->schedule, w->count, sizeof(*w->schedule), compare_by_group_size, w->starts);
	if (jobs > w->count)
		jobs = (unsigned int)w->count;
	threads = xcalloc(jobs, sizeof(*threads));
	for (; started + 1 < jobs; started++)
		if (thread_start_without_signals(&threads[started], symbolize_groups, w) != 0)
			break; /* fewer threads: the ones there are (this one at least) do all the work */
	symbolize_groups(w);
	for (unsigned int t = 0; t < started; t++)
		pthread_join(threads[t], NULL);
	free(threads);
	free(w->schedule);
}

void symbolize_kernel_locations(struct profile *p, const struct kernel_symbols *kernel)
{
	for (size_t i = 0; i < p->location_count; i++)
		if (!p->locations[i].frame_count && p->locations[i].kind == PROFILE_LOCATION_KERNEL)
			symbolize_kernel(p, &p->locations[i], kernel);
}

void symbolize_profile(struct profile *p, const struct kernel_symbols *kernel, const struct symbolizer_options *options)
{
	symbolize_profile_prepared(p, kernel, options, NULL, NULL);
}

void symbolize_profile_prepared(struct profile *p, const struct kernel_symbols *kernel,
				const struct symbolizer_options *options, symbolizer_prepared_fn prepared, void *ctx)
{
	uint32_t *order = xmalloc((p->location_count ? p->location_count : 1) * sizeof(*order));
	struct module_file_callbacks callbacks;
	struct module_groups work = { .profile = p, .options = options, .callbacks = &callbacks,
				      .prepared = prepared, .prepared_ctx = ctx };
	size_t n = 0, cap = 0;

	module_file_callbacks_init(&callbacks, &options->search);
	for (size_t i = 0; i < p->location_count; i++) {
		struct profile_location *loc = &p->locations[i];

		if (loc->frame_count)
			continue;
		if (loc->kind == PROFILE_LOCATION_KERNEL)
			symbolize_kernel(p, loc, kernel);
		else if (loc->module == PROFILE_NO_MODULE)
			set_unnamed(p, loc, PROFILE_UNNAMED_NO_MAPPING);
		else
			order[n++] = (uint32_t)i;
	}
	qsort_r(order, n, sizeof(*order), compare_by_module, p);
	for (size_t i = 0; i < n; i++) {
		if (i && p->locations[order[i]].module == p->locations[order[i - 1]].module)
			continue;
		GROW(work.starts, cap, work.count + 2);
		work.starts[work.count++] = i;
	}
	if (work.count) {
		work.starts[work.count] = n;
		work.order = order;
		run_groups(&work, options->jobs ? options->jobs : 1);
	}
	free(work.starts);
	free(order);
	module_file_callbacks_release(&callbacks);
}
