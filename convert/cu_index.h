/*
 * cu_index.h — finds the compilation unit that covers an address, also in files without .debug_aranges.
 *
 * elfutils 0.188 (Debian 12) answers dwfl_module_addrdie() and dwfl_module_getsrc() only through
 * .debug_aranges, and clang emits that section only with -gdwarf-aranges. Without this index every
 * clang-built binary would lose its source lines and inline frames. The index walks a module's units
 * once, keeps their address ranges sorted, and answers by binary search.
 */
#ifndef STACKREC_CONVERT_CU_INDEX_H
#define STACKREC_CONVERT_CU_INDEX_H

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stddef.h>

struct cu_index {
	Dwarf *dwarf;	 /* the module's DWARF, or NULL when it has none */
	Dwarf_Addr bias; /* module address = DWARF address + bias */
	struct cu_range *ranges;
	size_t count;
	bool built;
};

/* Builds the index of mod's units (once; later calls return at once). Returns 0, or -1 with no DWARF. */
int cu_index_build(struct cu_index *index, Dwfl_Module *mod);

/*
 * The CU DIE covering module address addr: first through libdw (aranges), then through the index.
 * Returns result, or NULL. *bias receives the module's DWARF bias.
 */
Dwarf_Die *cu_index_addrdie(struct cu_index *index, Dwfl_Module *mod, Dwarf_Addr addr, Dwarf_Die *result,
			    Dwarf_Addr *bias);

void cu_index_release(struct cu_index *index);

#endif
