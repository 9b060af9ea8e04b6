/*
 * symbol_table.h — dwfl_module_addrinfo's answer without reading the whole symbol table for each address.
 *
 * libdwfl looks for the symbol at an address by going through every symbol of the module (twice: globals,
 * then locals); on a binary whose DWARF leaves many addresses unnamed (libc's assembly, node's 185k symbols)
 * that was most of the time. This index sorts the symbols once and answers the common case — a symbol with a
 * size covers the address — by the same rules in the same table order, so the answer is libdwfl's own. The
 * other cases (only size-less symbols nearby, whose choice depends on the order of the whole table, a global
 * size-less symbol exactly at the address, function descriptors) are passed to dwfl_module_addrinfo.
 */
#ifndef STACKREC_CONVERT_SYMBOL_TABLE_H
#define STACKREC_CONVERT_SYMBOL_TABLE_H

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stddef.h>

struct symbol_table_entry;

struct symbol_table {
	bool built, usable;
	struct symbol_table_entry *globals, *locals; /* each sorted by address */
	size_t global_count, local_count;
	GElf_Addr *global_ends, *local_ends; /* the largest end of a symbol up to each position */
	GElf_Addr *sizeless_globals;	     /* addresses of the global symbols without a size, sorted */
	size_t sizeless_global_count;
};

/* What dwfl_module_addrinfo(mod, addr, &offset, sym, NULL, NULL, NULL) returns, the same name and *sym. */
const char *symbol_table_addrinfo(struct symbol_table *t, Dwfl_Module *mod, GElf_Addr addr, GElf_Sym *sym);

void symbol_table_release(struct symbol_table *t);

#endif
