/*
 * elf_symbols.h — a module's ELF symbol table sorted by address, for naming code that DWARF does not name.
 *
 * libdwfl's dwfl_module_addrinfo answers the same question by scanning the whole symbol table for every
 * address: with node's 185,000 symbols that was 94% of a conversion's time. This table is built once per
 * module (only when some address needs it) and answers each address by binary search, with libdwfl's rule:
 *
 *   - candidates are named symbols that are not undefined, section, file or TLS symbols, at or below addr;
 *   - a symbol with a size names the addresses it covers; among those covering addr, global and weak
 *     symbols are preferred to local ones (libdwfl searches the globals first and the locals only when no
 *     global covers addr), then the higher binding (global over weak), then the nearer start, then the
 *     smaller size, then the earlier table entry;
 *   - where no sized symbol covers addr, a sizeless one (a hand-written assembly label) names it when it is
 *     the nearest at or below addr, lies in addr's section, and no symbol below addr extends past it.
 */
#ifndef STACKREC_CONVERT_ELF_SYMBOLS_H
#define STACKREC_CONVERT_ELF_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>

#include <elfutils/libdwfl.h>
#include <gelf.h>

struct elf_symbol;
struct elf_section_range;

struct elf_symbols {
	bool built;
	struct elf_symbol *symbols; /* sorted by value, then table index */
	size_t count;
	GElf_Addr *max_end; /* max_end[i]: the highest value + size among symbols[0..i] */
	struct elf_section_range *sections; /* allocated sections by address, for the sizeless rule */
	size_t section_count;
};

/* The symbol naming Dwfl address addr of mod (see above), its name (owned by libelf, valid while mod is
 * open) and *symbol; NULL with *symbol zeroed when none does. Builds the table on first use. */
const char *elf_symbols_lookup(struct elf_symbols *table, Dwfl_Module *mod, GElf_Addr addr, GElf_Sym *symbol);

void elf_symbols_release(struct elf_symbols *table);

#endif
