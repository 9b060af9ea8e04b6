/*
 * scope_index.h — the chain of DWARF scopes at an address, from a tree of a unit's scopes, each walked once.
 *
 * dwarf_getscopes() and dwarf_getscopes_die() walk a unit's DIEs from its root for every address they are
 * asked: on libc that was four fifths of `stackrec symbolize`'s time. This index walks a unit's top level
 * the first time one of its addresses is asked, and a scope's children the first time an address's chain
 * goes through it (most are never on the way to an address asked), and keeps only the DIEs dwarf_getscopes could descend into (those with
 * address ranges, under units, functions, blocks, namespaces and classes, imported units read in place), with
 * their ranges, in the order libdw visits them. An address is then answered as dwarf_getscopes answers it (the
 * first DIE of each level that contains it, then the first of its children, and so on), without reading DWARF.
 * A unit libdw could not walk (a DWARF error, nesting deeper than any compiler emits) is not indexed from
 * there on, and the caller asks libdw itself.
 */
#ifndef STACKREC_CONVERT_SCOPE_INDEX_H
#define STACKREC_CONVERT_SCOPE_INDEX_H

#include <elfutils/libdw.h>
#include <stddef.h>

#include "../util.h"

struct scope_unit;

struct scope_index {
	struct scope_unit **units; /* open addressing on the unit DIE's address */
	size_t capacity, count;
	struct pointer_table abbrevs; /* the abbreviations seen, numbering may_have_ranges */
	bool *may_have_ranges;	      /* whether DIEs of that abbreviation may have addresses */
	size_t may_have_ranges_capacity;
	Dwarf_Die *chain;	      /* the last chain given (scope_index_chain) */
	size_t chain_capacity;
};

/*
 * The scopes containing DWARF address pc in the unit of cudie, innermost first, as dwarf_getscopes(cudie, pc)
 * then dwarf_getscopes_die() on its first scope give them (the unit itself last). Returns their number with
 * *chain set (the index's, valid until the next call: not to free), 0 when no scope contains pc, -1 when the
 * unit cannot be indexed (libdw may answer), or -2 when walking it takes more than SCOPE_VISITS_MAX steps (a
 * hostile file's imports: libdw's walk would take as long; no scope is known).
 */
int scope_index_chain(struct scope_index *index, Dwarf_Die *cudie, Dwarf_Addr pc, Dwarf_Die **chain);

void scope_index_release(struct scope_index *index);

#endif
